"""GEMM schedules and their tail: data-parallel, persistent, stream-K and the hybrid.

Section 3.7 counts the waves of a *data-parallel* matmul, one CTA per output tile: when the tile
count is just over a multiple of the SMs, the last wave is nearly empty and costs a full one.
This module asks what the schedules that libraries use instead do to that tail. Work is counted
in *MAC-loop iterations*: one CTA's BM × BN × BK step of one tile (Osama et al., "Stream-K",
PPoPP '23, §3–5), ``iterations_per_tile = ⌈k/BK⌉``, ``total = tiles · iterations_per_tile``:

* **data-parallel** (their Algorithm 2): one CTA per tile, in ⌈tiles/SMs⌉ waves; the longest SM
  does ``waves · iterations_per_tile``.
* **persistent**: one CTA per SM loops over tiles (tile t on CTA t mod SMs; CUTLASS's Hopper
  persistent kernels). It saves the launch and prologue of every further CTA, which this count
  does not include, but the last round of tiles is exactly the last wave: *the same tail*.
* **stream-K** (Algorithm 5): one CTA per SM, each given ⌈total/SMs⌉ consecutive iterations,
  crossing tile boundaries: no tail. A tile shared by several CTAs needs a *fix-up*: the CTAs
  that did not start it write fp32 partial sums to global memory and the one that did adds them.
  (With fewer tiles than SMs the grid shrinks to the size that minimises iterations plus
  fix-up, the job of the paper's grid-size model, §5.1.)
* **hybrid**, the paper's "two-tile stream-K + data-parallel" (§5.2): with ``w = ⌊tiles/SMs⌋``
  full waves and ``r`` tiles left over, the ``r`` tiles *plus the last full wave* are shared out
  stream-K (each CTA gets between one and two tiles' worth, so no tile has more than two CTAs)
  and the other ``w − 1`` waves run data-parallel, tile-aligned. The switch follows the
  authors' reference implementation, CUTLASS's ``ThreadblockSwizzleStreamK::get_blocks`` with
  one CTA per SM: the stream-K wave is "the last full wave and the partial wave" whenever
  ``w ≥ 1`` (so at ``w = 1`` every tile is shared and the hybrid *is* stream-K); only below one
  full wave (``w = 0``) does it share just the ``r`` tiles ("data-parallel + one-tile
  stream-K"). With ``r = 0`` it is plain data-parallel. (CUTLASS also falls back to
  data-parallel when its score says stream-K does not pay; this count does not.)

The fix-up is charged as in the paper's grid-size model (Appendix A.1: a CTA's time is a fixed
cost, plus one per iteration, plus one per peer whose partials it accumulates): the longest SM
does its stream-K iterations plus ``fixup_iterations · (peers − 1)``, where ``peers`` is the most
CTAs that share one tile. The paper fits its constants by microbenchmark and does not print them;
the default here is a stated assumption, not a measurement: one partial tile costs what moving
its bytes would at the operand loads' pace, ``2 · BM·BN·4 / ((BM + BN)·BK·bytes)`` iterations
(written once in fp32, read once), 5.3 for 256 × 128 × 64 bf16 tiles.

Time is ``iterations · 2·BM·BN·BK / (peak / SMs)``: each SM at its share of the tensor peak.
Limits: a makespan count, one CTA per SM; no memory-bound iterations, no L2 effects of the
stream-K skew (the paper's reason for the hybrid), no launch or prologue cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import hardware
from ._validate import (
    MAX_PRODUCT,
    choice,
    name_string,
    positive_float,
    positive_int,
    power_of_two,
)
from .hardware import Chip
from .tiling import MIN_BLOCK, tile_count
from .units import bytes_per_element, check_precision

#: The schedules, in the order the chapter shows them.
SCHEDULES = ("data-parallel", "persistent", "stream-K", "hybrid")

#: Bytes of one fp32 accumulator: what a stream-K partial tile is stored in.
ACCUMULATOR_BYTES = 4

#: Most tiles whose sharing :func:`_most_peers` walks one by one (beyond, a bound is used).
_MAX_WALK = 2**20


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def default_fixup_iterations(
    block_m: int, block_n: int, block_k: int, precision: str = "bf16"
) -> float:
    """The assumed cost of one shared tile's fix-up, in MAC-loop iterations.

    A partial tile's fp32 bytes, written once and read once, over one iteration's operand bytes:
    2·BM·BN·4 / ((BM + BN)·BK·bytes). 128 × 128 × 64 in bf16: 131,072 / 32,768 = 4.
    """
    block_m = power_of_two("block_m", block_m, minimum=MIN_BLOCK)
    block_n = power_of_two("block_n", block_n, minimum=MIN_BLOCK)
    block_k = power_of_two("block_k", block_k)
    size = bytes_per_element(check_precision(precision))
    partial = 2 * block_m * block_n * ACCUMULATOR_BYTES
    return partial / ((block_m + block_n) * block_k * size)


def _most_peers(tiles: int, per_tile: int, per_cta: int) -> int:
    """Most CTAs covering one tile when CTA x does iterations [x·per_cta, (x+1)·per_cta)."""
    if tiles <= _MAX_WALK and tiles * per_tile < 2**62:  # int64 room for every tile's start
        start = np.arange(tiles, dtype=np.int64) * per_tile
        return int(((start + per_tile - 1) // per_cta - start // per_cta).max() + 1)
    # Tile starts modulo per_cta reach every multiple of gcd(per_tile, per_cta) once the tiles
    # outnumber a period; the latest start is then per_cta − gcd (an exact bound past a period).
    latest = per_cta - math.gcd(per_tile, per_cta)
    return (latest + per_tile - 1) // per_cta + 1


def _stream_k_grid(shared: int, per_tile: int, sms: int, fixup: float) -> tuple[int, int, int]:
    """(CTAs, iterations per CTA, most peers per tile) for ``shared`` tiles shared stream-K.

    With at least one tile per SM, every SM gets a CTA (a tile then meets at most two). With
    fewer tiles than SMs, splitting each tile many ways costs more fix-up than it saves, so the
    grid is the size that minimises iterations + fix-up, as the paper's grid-size model does.
    """
    if shared == 0:
        return 0, 0, 1
    best = None
    for ctas in range(sms, 0, -1) if shared < sms else (sms,):
        per_cta = _ceil_div(shared * per_tile, ctas)
        peers = _most_peers(shared, per_tile, per_cta)
        cost = per_cta + fixup * (peers - 1)
        if best is None or cost < best[0]:
            best = (cost, ctas, per_cta, peers)
    return best[1], best[2], best[3]


@dataclass(frozen=True)
class GemmSchedule:
    """One schedule of an m × n × k GEMM on one chip, counted in MAC-loop iterations."""

    schedule: str
    chip_name: str
    sm_count: int
    tiles: int
    iterations_per_tile: int
    data_parallel_tiles: int
    stream_k_tiles: int
    stream_k_ctas: int
    stream_k_iterations_per_cta: int
    peers: int
    fixup_iterations: float
    iteration_s: float

    def __post_init__(self) -> None:
        choice("schedule", self.schedule, SCHEDULES)
        name_string("chip_name", self.chip_name)
        for label in ("sm_count", "tiles", "peers"):
            positive_int(label, getattr(self, label), maximum=MAX_PRODUCT)
        positive_int("iterations_per_tile", self.iterations_per_tile)
        for label in (
            "data_parallel_tiles",
            "stream_k_tiles",
            "stream_k_ctas",
            "stream_k_iterations_per_cta",
        ):
            positive_int(label, getattr(self, label), minimum=0, maximum=MAX_PRODUCT)
        positive_float("fixup_iterations", self.fixup_iterations, allow_zero=True)
        positive_float("iteration_s", self.iteration_s, bounded=False)
        if self.data_parallel_tiles + self.stream_k_tiles != self.tiles:
            raise ValueError(
                f"data_parallel_tiles={self.data_parallel_tiles} + stream_k_tiles="
                f"{self.stream_k_tiles} must equal tiles={self.tiles}"
            )
        shared, ctas = self.stream_k_tiles, self.stream_k_ctas
        if (shared == 0) != (ctas == 0) or ctas > self.sm_count:
            raise ValueError(
                f"stream_k_ctas={ctas} must be 0 with no stream-K tiles, else 1 to "
                f"sm_count={self.sm_count} (stream_k_tiles={shared})"
            )
        per_cta = _ceil_div(shared * self.iterations_per_tile, ctas) if ctas else 0
        peers = _most_peers(shared, self.iterations_per_tile, per_cta) if ctas else 1
        if (self.stream_k_iterations_per_cta, self.peers) != (per_cta, peers):
            raise ValueError(
                f"stream_k_iterations_per_cta={self.stream_k_iterations_per_cta} and "
                f"peers={self.peers} must be {per_cta} and {peers} for {shared} stream-K tiles "
                f"of {self.iterations_per_tile} iterations on {ctas} CTAs"
            )

    @property
    def total_iterations(self) -> int:
        return self.tiles * self.iterations_per_tile

    @property
    def ideal_iterations(self) -> float:
        """The work spread perfectly over the SMs: total / SMs."""
        return self.total_iterations / self.sm_count

    @property
    def data_parallel_waves(self) -> int:
        return _ceil_div(self.data_parallel_tiles, self.sm_count)

    @property
    def fixup_cost_iterations(self) -> float:
        """The fix-up the longest SM adds: fixup_iterations · (peers − 1)."""
        return self.fixup_iterations * (self.peers - 1)

    @property
    def makespan_iterations(self) -> float:
        """The busiest SM's iterations: stream-K share and fix-up, then data-parallel waves."""
        stream_k = self.stream_k_iterations_per_cta + self.fixup_cost_iterations
        return stream_k + self.data_parallel_waves * self.iterations_per_tile

    @property
    def tail_iterations(self) -> float:
        """What the schedule costs over a perfect spread: the idle tail plus the fix-up."""
        return self.makespan_iterations - self.ideal_iterations

    @property
    def efficiency(self) -> float:
        """Busy fraction of the SMs: ideal / makespan (the wave efficiency for data-parallel)."""
        return self.ideal_iterations / self.makespan_iterations

    @property
    def time_s(self) -> float:
        return self.makespan_iterations * self.iteration_s


def gemm_schedule(
    m: int,
    n: int,
    k: int,
    block_m: int,
    block_n: int,
    block_k: int,
    chip: str | Chip,
    schedule: str = "stream-K",
    precision: str = "bf16",
    fixup_iterations: float | None = None,
) -> GemmSchedule:
    """One schedule's tiles, stream-K share, peers per tile and makespan (module docstring).

    The paper's Figure 1–2 GEMM, 384 × 384 × 128 in 128 × 128 × 4 tiles on four SMs: nine tiles,
    three data-parallel waves, 75 % busy; stream-K gives each CTA 288 / 4 = 72 iterations.
    """
    tiles = tile_count(m, n, block_m, block_n)
    block_k = power_of_two("block_k", block_k)
    k = positive_int("k", k)
    schedule = choice("schedule", schedule, SCHEDULES)
    precision = check_precision(precision)
    found = hardware.chip(chip).require_sm_model("a GEMM schedule")
    per_sm_flops = found.peak_flops(precision) / found.sm_count  # ValueError if no such roof
    if fixup_iterations is None:
        fixup_iterations = default_fixup_iterations(block_m, block_n, block_k, precision)
    fixup_iterations = positive_float("fixup_iterations", fixup_iterations, allow_zero=True)
    sms, per_tile = found.sm_count, _ceil_div(k, block_k)
    full_waves, left = divmod(tiles, sms)
    if schedule in ("data-parallel", "persistent"):
        shared = 0
    elif schedule == "stream-K":
        shared = tiles
    elif left == 0:
        shared = 0  # the hybrid: whole waves need no sharing
    else:
        shared = left + sms if full_waves >= 1 else left  # CUTLASS get_blocks, occupancy 1
    ctas, per_cta, peers = _stream_k_grid(shared, per_tile, sms, fixup_iterations)
    return GemmSchedule(
        schedule=schedule,
        chip_name=found.name,
        sm_count=sms,
        tiles=tiles,
        iterations_per_tile=per_tile,
        data_parallel_tiles=tiles - shared,
        stream_k_tiles=shared,
        stream_k_ctas=ctas,
        stream_k_iterations_per_cta=per_cta,
        peers=peers,
        fixup_iterations=fixup_iterations,
        iteration_s=2 * int(block_m) * int(block_n) * block_k / per_sm_flops,
    )


def gemm_schedules(
    m: int,
    n: int,
    k: int,
    block_m: int,
    block_n: int,
    block_k: int,
    chip: str | Chip,
    precision: str = "bf16",
    fixup_iterations: float | None = None,
) -> tuple[GemmSchedule, ...]:
    """All four schedules of :data:`SCHEDULES` for one GEMM, side by side."""
    found = hardware.chip(chip)
    return tuple(
        gemm_schedule(m, n, k, block_m, block_n, block_k, found, s, precision, fixup_iterations)
        for s in SCHEDULES
    )


__all__ = [
    "ACCUMULATOR_BYTES",
    "SCHEDULES",
    "GemmSchedule",
    "default_fixup_iterations",
    "gemm_schedule",
    "gemm_schedules",
]
