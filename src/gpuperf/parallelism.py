"""Where peak comes from, and how much work must be in flight to reach it.

**Peak, decomposed.** A GPU's datasheet peak is a product of three numbers::

    peak FLOP/s = SMs × FLOP per clock per SM × clock

:func:`flop_per_clock_per_sm` divides a table peak by SMs × a clock (the boost clock unless
told otherwise). For the CUDA-core fp32 rate the result is a round number at the boost clock
(256 FLOP/clk/SM on an H100: 128 FMA lanes × 2), for the H100's bf16 tensor rate it is not:
the tensor figures are computed at a lower clock. :func:`peak_decomposition` makes that
explicit where the per-SM tensor rate is published on its own
(:data:`gpuperf.hardware.TENSOR_FLOP_PER_CLOCK_PER_SM`: V100, A100, H100/H200): the *implied*
clock = peak / (SMs × FLOP/clk/SM) is 1.41 GHz on the A100 (its boost clock) but about
1.83 GHz on the H100, not its 1.98 GHz boost. A table that stores one clock and multiplies is
therefore ~8 % off for one of the two rates. The same division of bandwidth gives bytes per
clock per SM from DRAM (:func:`dram_bytes_per_clock_per_sm`): about 13 B/clk/SM on an H100,
against 128 B/clk/SM from shared memory; FLOP/clk/SM ÷ B/clk/SM is the ridge point again.

**Little's law.** A pipe that delivers ``bandwidth`` bytes/s with a latency of ``latency_s``
holds bandwidth × latency bytes in flight (:func:`bytes_in_flight`); fewer, and it idles. On an
H100 (3.35 TB/s) with the ~375 ns DRAM latency measured by pointer chasing on an H100 PCIe
(:mod:`gpuperf.measurements`, gpu-benches), that is ~1.3 MB across the chip, ~9.5 KB per SM.
The only way an SM keeps bytes in flight is outstanding load instructions: a warp's load of
``bytes_per_load`` bytes per thread moves 32 × bytes_per_load bytes, and each thread may issue
``loads_in_flight`` independent loads before it needs the first (instruction-level
parallelism, ILP). :func:`memory_parallelism` turns the per-SM bytes into the warps each SM
must keep resident and compares them with the SM's limit (``max_threads_per_sm / 32``);
:func:`achievable_bandwidth` is the same law read the other way: with w warps per SM the chip
cannot move more than SMs × w × 32 × bytes_per_load × loads_in_flight / latency bytes/s.

Limits. Pointer-chase latency is the *unloaded* latency; under load queues lengthen it, so the
bytes in flight computed here are a lower bound on what a kernel needs. Loads that bypass
registers (``cp.async``, TMA) hold their bytes in shared memory instead, which changes where
they wait, not how many must be in flight. The FLOP-side twin (tensor-core operations in flight
= FLOP/clk × pipeline latency) is left out: no source in this course gives the tensor-core
pipeline latency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from ._validate import (
    MAX_QUANTITY,
    choice,
    name_string,
    positive_float,
    positive_int,
    real_array,
)
from .hardware import TENSOR_FLOP_PER_CLOCK_PER_SM, WARP_SIZE, Chip, chip
from .measurements import Measurement, find

__all__ = [
    "COPY_MECHANISMS",
    "CP_ASYNC_BYTES",
    "LOAD_WIDTHS_BYTES",
    "MAX_LOADS_IN_FLIGHT",
    "TENSOR_PRECISIONS",
    "WIDE_LOAD_BYTES",
    "WIDE_LOAD_MIN_CC",
    "CopyParallelism",
    "LoadedLatency",
    "MemoryParallelism",
    "PeakDecomposition",
    "achievable_bandwidth",
    "bytes_in_flight",
    "copy_parallelism",
    "dram_bytes_per_clock_per_sm",
    "dram_latency",
    "flop_per_clock_per_sm",
    "load_widths",
    "loaded_latency",
    "memory_parallelism",
    "peak_decomposition",
    "peak_flops_from_parts",
]

#: Widths one thread's global load instruction can move on every GPU: 1, 2, 4, 8 or 16 bytes
#: (CUDA Programming Guide, device memory accesses); 16 B is a 128-bit vector load (``float4``).
LOAD_WIDTHS_BYTES: tuple[int, ...] = (1, 2, 4, 8, 16)
#: A 256-bit load (``ld.global.v8.b32`` / ``.v4.b64``): global memory only, compute capability
#: ≥ 10.0 (sm_100 and later) with PTX ISA 8.8 (LLVM's NVPTX backend: ``has256BitVectorLoadStore``
#: is sm_100+ with PTX 8.8, global address space; PR 139292, 2025).
WIDE_LOAD_BYTES = 32
#: The first compute capability with :data:`WIDE_LOAD_BYTES` loads.
WIDE_LOAD_MIN_CC: tuple[int, int] = (10, 0)
#: Largest number of independent loads per thread the calculators accept (a sanity bound).
MAX_LOADS_IN_FLIGHT = 64
#: The tensor-core rates :data:`~gpuperf.hardware.TENSOR_FLOP_PER_CLOCK_PER_SM` describes.
TENSOR_PRECISIONS: tuple[str, ...] = ("fp16", "bf16")


def _gpu(chip_name: str | Chip) -> Chip:
    return chip(chip_name).require_sm_model("SMs, clocks and warps")


def peak_flops_from_parts(sm_count: int, flop_per_clock_per_sm: float, clock_hz: float) -> float:
    """peak FLOP/s = SMs × FLOP per clock per SM × clock (Hz)."""
    sm_count = positive_int("sm_count", sm_count, maximum=10**6)
    flop_per_clock_per_sm = positive_float("flop_per_clock_per_sm", flop_per_clock_per_sm)
    clock_hz = positive_float("clock_hz", clock_hz)
    return sm_count * flop_per_clock_per_sm * clock_hz


def flop_per_clock_per_sm(
    chip_name: str | Chip, precision: str, clock_hz: float | None = None
) -> float:
    """A GPU's table peak at ``precision`` divided by SMs × ``clock_hz`` (default: boost clock).

    At the clock the datasheet used, the answer is the hardware's per-SM rate (a round number);
    at another clock it is the rate the SM *would* need to reach the peak there.
    """
    the_chip = _gpu(chip_name)
    clock = the_chip.boost_clock_hz if clock_hz is None else positive_float("clock_hz", clock_hz)
    return the_chip.peak_flops(precision) / (the_chip.sm_count * clock)


def dram_bytes_per_clock_per_sm(chip_name: str | Chip, clock_hz: float | None = None) -> float:
    """DRAM bandwidth per SM per clock: bandwidth / (SMs × ``clock_hz``), boost clock by default.

    Compare with the 128 B/clk/SM shared memory delivers
    (:data:`~gpuperf.hardware.SHARED_MEMORY_BYTES_PER_CLOCK_PER_SM`).
    """
    the_chip = _gpu(chip_name)
    clock = the_chip.boost_clock_hz if clock_hz is None else positive_float("clock_hz", clock_hz)
    return the_chip.hbm_bandwidth / (the_chip.sm_count * clock)


def _check_fields(result: object) -> None:
    """Result objects check every field: names are strings, numbers finite and > 0 (a clock, a
    bandwidth or a latency of 1e-320 would make every derived ratio overflow); ``None`` only
    where the annotation allows it."""
    for f in fields(result):  # type: ignore[arg-type]
        value = getattr(result, f.name)
        if value is None and "None" in str(f.type):
            continue
        if f.name in ("chip_name", "precision", "source"):
            name_string(f.name, value)
        elif str(f.type).startswith("int"):
            object.__setattr__(result, f.name, positive_int(f.name, value))
        else:
            object.__setattr__(result, f.name, positive_float(f.name, value, False, MAX_QUANTITY))


@dataclass(frozen=True)
class PeakDecomposition:
    """One GPU's 16-bit tensor peak split into SMs × FLOP/clk/SM × clock.

    ``flop_per_clock_per_sm`` and ``source`` are the published per-SM rate and its reference
    key, or ``None`` where the course has no source for it (then the implied clock is ``None``
    too: dividing the peak by a rate derived from that same peak would prove nothing).
    """

    chip_name: str
    precision: str
    sm_count: int
    boost_clock_hz: float
    peak_flops_per_s: float
    flop_per_clock_per_sm: int | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        _check_fields(self)
        choice("precision", self.precision, TENSOR_PRECISIONS)
        if (self.flop_per_clock_per_sm is None) != (self.source is None):
            raise ValueError(
                f"flop_per_clock_per_sm={self.flop_per_clock_per_sm!r} and source="
                f"{self.source!r} must both be given or both be None"
            )

    @property
    def flop_per_clock_per_sm_at_boost(self) -> float:
        """peak / (SMs × boost clock): the per-SM rate the peak would need at the boost clock."""
        return self.peak_flops_per_s / (self.sm_count * self.boost_clock_hz)

    @property
    def implied_clock_hz(self) -> float | None:
        """peak / (SMs × published FLOP/clk/SM): the clock the datasheet peak assumes."""
        if self.flop_per_clock_per_sm is None:
            return None
        return self.peak_flops_per_s / (self.sm_count * self.flop_per_clock_per_sm)

    @property
    def clock_ratio(self) -> float | None:
        """implied clock / boost clock (1.0: the peak assumes the boost clock)."""
        implied = self.implied_clock_hz
        return None if implied is None else implied / self.boost_clock_hz

    @property
    def peak_at_boost_flops_per_s(self) -> float | None:
        """SMs × published FLOP/clk/SM × boost clock: the peak if the tensor cores ran at boost."""
        if self.flop_per_clock_per_sm is None:
            return None
        return self.sm_count * self.flop_per_clock_per_sm * self.boost_clock_hz


def peak_decomposition(chip_name: str | Chip, precision: str = "fp16") -> PeakDecomposition:
    """Decompose a GPU's dense 16-bit tensor peak (``precision`` ``"fp16"`` or ``"bf16"``).

    The published per-SM rate comes from :data:`~gpuperf.hardware.TENSOR_FLOP_PER_CLOCK_PER_SM`
    by compute capability; GPUs without an entry get ``None`` for it and for the implied clock.
    """
    the_chip = _gpu(chip_name)
    precision = choice("precision", precision, TENSOR_PRECISIONS)
    published = TENSOR_FLOP_PER_CLOCK_PER_SM.get(the_chip.compute_capability)
    rate, source = published if published is not None else (None, None)
    return PeakDecomposition(
        chip_name=the_chip.name,
        precision=precision,
        sm_count=the_chip.sm_count,
        boost_clock_hz=the_chip.boost_clock_hz,
        peak_flops_per_s=the_chip.peak_flops(precision),
        flop_per_clock_per_sm=rate,
        source=source,
    )


def bytes_in_flight(bandwidth: float, latency_s: float) -> float:
    """Little's law: bytes that must be in flight to sustain ``bandwidth`` (bytes/s) when each
    byte takes ``latency_s`` to arrive. The same product is the half-bandwidth size of one
    transfer (:func:`gpuperf.memory.half_bandwidth_size`)."""
    return positive_float("bandwidth", bandwidth) * positive_float("latency_s", latency_s)


def dram_latency(chip_name: str | Chip) -> Measurement:
    """The measured DRAM load latency (pointer chase) for ``chip_name``'s SM generation.

    Returns the :class:`~gpuperf.measurements.Measurement` itself, so its ``chip`` says which
    card it was measured on: an H100 SXM or H200 gets the H100 PCIe measurement (same compute
    capability, different memory: a stand-in, not a measurement of that card). Chips of other
    generations raise ``ValueError``: pass a latency of your own to the calculators.
    """
    the_chip = _gpu(chip_name)
    measured = {
        m.chip: m
        for m in (find("HBM load latency", "A100-80GB"), find("HBM load latency", "H100-PCIe"))
    }
    if the_chip.name in measured:
        return measured[the_chip.name]
    for name, measurement in measured.items():
        if chip(name).compute_capability == the_chip.compute_capability:
            return measurement
    raise ValueError(
        f"chip_name={the_chip.name!r}: no measured DRAM latency for compute capability "
        f"{the_chip.compute_capability} in gpuperf.measurements (measured on: "
        f"{', '.join(measured)}); pass latency_s yourself"
    )


def load_widths(chip_name: str | Chip) -> tuple[int, ...]:
    """The bytes one thread's global load can move on ``chip_name``: :data:`LOAD_WIDTHS_BYTES`,
    plus :data:`WIDE_LOAD_BYTES` (256-bit) from compute capability 10.0 (B200 and later)."""
    the_chip = _gpu(chip_name)
    if the_chip.compute_capability >= WIDE_LOAD_MIN_CC:
        return (*LOAD_WIDTHS_BYTES, WIDE_LOAD_BYTES)
    return LOAD_WIDTHS_BYTES


def _width(the_chip: Chip, name: str, bytes_per_load: object) -> int:
    widths = load_widths(the_chip)
    try:
        choice(name, bytes_per_load, (WIDE_LOAD_BYTES,))
    except ValueError:
        return choice(name, bytes_per_load, widths)
    if WIDE_LOAD_BYTES not in widths:
        major, minor = WIDE_LOAD_MIN_CC
        raise ValueError(
            f"{name}={WIDE_LOAD_BYTES}: 256-bit loads need compute capability {major}.{minor} "
            f"(sm_100+); {the_chip.name} has {the_chip.compute_capability[0]}."
            f"{the_chip.compute_capability[1]}, so one of {', '.join(map(str, widths))}"
        )
    return WIDE_LOAD_BYTES


def _load_shape(the_chip: Chip, bytes_per_load: int, loads_in_flight: int) -> tuple[int, int]:
    bytes_per_load = _width(the_chip, "bytes_per_load", bytes_per_load)
    loads = positive_int("loads_in_flight", loads_in_flight, maximum=MAX_LOADS_IN_FLIGHT)
    return bytes_per_load, loads


@dataclass(frozen=True)
class MemoryParallelism:
    """What Little's law asks of one GPU's SMs to keep DRAM busy.

    Inputs: the chip's SM count, boost clock, warps-per-SM limit and register file, the DRAM
    ``bandwidth`` (bytes/s) and ``latency_s``, and the load shape: ``bytes_per_load`` per thread
    per load instruction and ``loads_in_flight`` independent loads per thread (ILP).
    """

    chip_name: str
    bandwidth: float
    latency_s: float
    sm_count: int
    clock_hz: float
    max_warps_per_sm: int
    register_file_bytes: int
    bytes_per_load: int
    loads_in_flight: int

    def __post_init__(self) -> None:
        _check_fields(self)
        choice("bytes_per_load", self.bytes_per_load, (*LOAD_WIDTHS_BYTES, WIDE_LOAD_BYTES))

    @property
    def bytes_in_flight(self) -> float:
        """bandwidth × latency, over the whole chip."""
        return self.bandwidth * self.latency_s

    @property
    def bytes_in_flight_per_sm(self) -> float:
        return self.bytes_in_flight / self.sm_count

    @property
    def latency_cycles(self) -> float:
        """The latency in SM clock cycles (at ``clock_hz``)."""
        return self.latency_s * self.clock_hz

    @property
    def bytes_per_clock_per_sm(self) -> float:
        """DRAM bytes per clock per SM; × latency_cycles = bytes_in_flight_per_sm."""
        return self.bandwidth / (self.sm_count * self.clock_hz)

    @property
    def bytes_per_warp(self) -> int:
        """Bytes one warp keeps in flight: 32 threads × bytes_per_load × loads_in_flight."""
        return WARP_SIZE * self.bytes_per_load * self.loads_in_flight

    @property
    def warps_needed_per_sm(self) -> int:
        """Resident warps each SM needs: ⌈bytes in flight per SM / bytes per warp⌉."""
        return max(1, math.ceil(self.bytes_in_flight_per_sm / self.bytes_per_warp))

    @property
    def occupancy_needed(self) -> float:
        """warps_needed_per_sm / max_warps_per_sm; above 1 the load shape cannot do it."""
        return self.warps_needed_per_sm / self.max_warps_per_sm

    @property
    def feasible(self) -> bool:
        return self.warps_needed_per_sm <= self.max_warps_per_sm

    @property
    def loads_in_flight_needed_at_full_occupancy(self) -> int:
        """The ILP each thread needs when every warp slot of the SM is filled."""
        per_full_sm = self.max_warps_per_sm * WARP_SIZE * self.bytes_per_load
        return max(1, math.ceil(self.bytes_in_flight_per_sm / per_full_sm))

    @property
    def register_share(self) -> float:
        """Bytes in flight per SM as a fraction of its register file, where loads land."""
        return self.bytes_in_flight_per_sm / self.register_file_bytes

    @property
    def max_bandwidth_fraction(self) -> float:
        """The fraction of ``bandwidth`` reachable with every warp slot filled (≤ 1)."""
        provided = self.max_warps_per_sm * self.bytes_per_warp
        return min(1.0, provided / self.bytes_in_flight_per_sm)


def memory_parallelism(
    chip_name: str | Chip,
    latency_s: float | None = None,
    bytes_per_load: int = 16,
    loads_in_flight: int = 1,
    bandwidth: float | None = None,
) -> MemoryParallelism:
    """Little's law for one GPU: bytes in flight, warps per SM and ILP needed to fill DRAM.

    ``latency_s`` defaults to the measured DRAM latency of the chip's generation
    (:func:`dram_latency`; ``ValueError`` for a generation without one); ``bandwidth`` defaults
    to the chip's HBM bandwidth. Cycles are counted at the boost clock.
    """
    the_chip = _gpu(chip_name)
    latency = dram_latency(the_chip).value if latency_s is None else latency_s
    bytes_per_load, loads = _load_shape(the_chip, bytes_per_load, loads_in_flight)
    return MemoryParallelism(
        chip_name=the_chip.name,
        bandwidth=the_chip.hbm_bandwidth if bandwidth is None else bandwidth,
        latency_s=positive_float("latency_s", latency),
        sm_count=the_chip.sm_count,
        clock_hz=the_chip.boost_clock_hz,
        max_warps_per_sm=the_chip.max_threads_per_sm // WARP_SIZE,
        register_file_bytes=4 * the_chip.registers_per_sm,
        bytes_per_load=bytes_per_load,
        loads_in_flight=loads,
    )


def achievable_bandwidth(
    chip_name: str | Chip,
    latency_s: float,
    warps_per_sm: float | np.ndarray,
    bytes_per_load: int = 16,
    loads_in_flight: int = 1,
) -> float | np.ndarray:
    """Little's law read backwards: the most DRAM bandwidth (bytes/s) w warps per SM can draw.

    min(HBM bandwidth, SMs × w × 32 × bytes_per_load × loads_in_flight / latency_s). A bound:
    a kernel can do worse (uncoalesced loads, too few blocks), never better. ``warps_per_sm``
    may be an array (a curve); values above the SM's warp limit are an error.
    """
    the_chip = _gpu(chip_name)
    latency_s = positive_float("latency_s", latency_s)
    bytes_per_load, loads = _load_shape(the_chip, bytes_per_load, loads_in_flight)
    limit = the_chip.max_threads_per_sm // WARP_SIZE
    warps = np.asarray(real_array("warps_per_sm", warps_per_sm, ndim=(0, 1)))
    if np.any(warps > limit):
        raise ValueError(
            f"warps_per_sm={warps_per_sm!r} must be a number (or a 1-D array) in [0, {limit}], "
            f"the warp limit of one {the_chip.name} SM"
        )
    in_flight = the_chip.sm_count * warps * WARP_SIZE * bytes_per_load * loads
    result = np.minimum(the_chip.hbm_bandwidth, in_flight / latency_s)
    return float(result) if result.ndim == 0 else result


# --- latency under load, and copies that do not need a warp per load ---------------------------


@dataclass(frozen=True)
class LoadedLatency:
    """Little's law read off a measured occupancy sweep (:data:`gpuperf.measurements.
    STREAM_READ_SWEEPS`): at each point, the bytes in flight (resident threads × bytes each has
    outstanding) over the bandwidth measured is the time each load effectively took.

    That *effective* latency includes everything that keeps a load's slot busy — the DRAM round
    trip, queueing in the memory system, and the kernel's own turnaround (here a thread issues one
    load, then its block retires and a new block starts) — which is exactly the latency Little's
    law needs. ``unloaded_latency_s`` is the pointer-chase latency of the same SM generation.
    """

    chip_name: str
    source: str
    sm_count: int
    hbm_bandwidth: float
    bytes_per_thread: int
    unloaded_latency_s: float
    threads_per_sm: tuple[int, ...]
    bandwidth: tuple[float, ...]

    def __post_init__(self) -> None:
        name_string("chip_name", self.chip_name)
        name_string("source", self.source)
        positive_int("sm_count", self.sm_count, maximum=10**6)
        positive_float("hbm_bandwidth", self.hbm_bandwidth)
        positive_int("bytes_per_thread", self.bytes_per_thread, maximum=1024)
        positive_float("unloaded_latency_s", self.unloaded_latency_s)
        if (
            not isinstance(self.threads_per_sm, tuple)
            or not isinstance(self.bandwidth, tuple)
            or not self.threads_per_sm
            or len(self.threads_per_sm) != len(self.bandwidth)
        ):
            raise ValueError("threads_per_sm and bandwidth must be equally long, non-empty tuples")
        for threads in self.threads_per_sm:
            positive_int("threads_per_sm", threads, maximum=4096)
        for value in self.bandwidth:
            positive_float("bandwidth", value)

    @property
    def bytes_in_flight_per_sm(self) -> tuple[float, ...]:
        return tuple(float(t * self.bytes_per_thread) for t in self.threads_per_sm)

    @property
    def effective_latency_s(self) -> tuple[float, ...]:
        """SMs × bytes in flight per SM / bandwidth, at every point of the sweep."""
        return tuple(
            self.sm_count * b / w
            for b, w in zip(self.bytes_in_flight_per_sm, self.bandwidth, strict=True)
        )

    @property
    def bandwidth_fraction(self) -> tuple[float, ...]:
        """Measured bandwidth over the datasheet's, at every point."""
        return tuple(w / self.hbm_bandwidth for w in self.bandwidth)

    @property
    def latency_ratio(self) -> tuple[float, ...]:
        """Effective latency over the unloaded (pointer-chase) latency."""
        return tuple(t / self.unloaded_latency_s for t in self.effective_latency_s)


def loaded_latency(chip_name: str | Chip) -> LoadedLatency:
    """The effective load latency along the measured occupancy sweep of ``chip_name`` (an H100
    PCIe or an H200: the chips gpu-benches swept; others raise ``ValueError``)."""
    from .measurements import STREAM_READ_SWEEPS, stream_read_sweep

    the_chip = _gpu(chip_name)
    swept = [s.chip for s in STREAM_READ_SWEEPS]
    if the_chip.name not in swept:
        raise ValueError(
            f"chip_name={the_chip.name!r}: no occupancy sweep was measured on it; measured on: "
            f"{', '.join(swept)}"
        )
    sweep = stream_read_sweep(the_chip.name)
    return LoadedLatency(
        chip_name=the_chip.name,
        source=sweep.source,
        sm_count=the_chip.sm_count,
        hbm_bandwidth=the_chip.hbm_bandwidth,
        bytes_per_thread=sweep.bytes_per_thread,
        unloaded_latency_s=dram_latency(the_chip).value,
        threads_per_sm=sweep.threads_per_sm,
        bandwidth=sweep.bytes_per_s,
    )


#: How a kernel moves global memory toward the SM: a load into registers (``ldg``), an
#: asynchronous copy into shared memory per thread (``cp.async``, LDGSTS, compute capability
#: ≥ 8.0) or a bulk tensor copy issued by one thread (``tma``, ≥ 9.0).
COPY_MECHANISMS: tuple[str, ...] = ("ldg", "cp.async", "tma")
#: Bytes one cp.async (LDGSTS) copies per thread (CUDA Programming Guide, asynchronous copies).
CP_ASYNC_BYTES: tuple[int, ...] = (4, 8, 16)
_MIN_CC = {"ldg": (0, 0), "cp.async": (8, 0), "tma": (9, 0)}


@dataclass(frozen=True)
class CopyParallelism:
    """Warps an SM needs to keep ``bytes_in_flight_per_sm`` outstanding with one copy mechanism.

    ``ldg`` and ``cp.async``: each of a warp's 32 threads has ``copies_in_flight`` copies of
    ``bytes_per_copy`` outstanding. ``tma``: one thread of one warp issues ``copies_in_flight``
    tiles of ``bytes_per_copy`` each. ``landing_bytes_per_sm``: where the bytes wait — the
    register file for ``ldg``, shared memory for the asynchronous copies. The warps hold whole
    copies: ``warps_needed`` × ``bytes_per_warp`` (:attr:`bytes_held_per_sm`), at least the bytes
    Little's law asks for and more when a warp's copies overshoot it (one TMA tile holds what
    it holds).
    """

    chip_name: str
    mechanism: str
    bytes_in_flight_per_sm: float
    bytes_per_copy: int
    copies_in_flight: int
    max_warps_per_sm: int
    landing_bytes_per_sm: int

    def __post_init__(self) -> None:
        name_string("chip_name", self.chip_name)
        choice("mechanism", self.mechanism, COPY_MECHANISMS)
        positive_float("bytes_in_flight_per_sm", self.bytes_in_flight_per_sm)
        positive_int("bytes_per_copy", self.bytes_per_copy, maximum=2**20)
        positive_int("copies_in_flight", self.copies_in_flight, maximum=MAX_LOADS_IN_FLIGHT)
        positive_int("max_warps_per_sm", self.max_warps_per_sm, maximum=1024)
        positive_int("landing_bytes_per_sm", self.landing_bytes_per_sm, maximum=2**24)

    @property
    def issuing_threads_per_warp(self) -> int:
        return 1 if self.mechanism == "tma" else WARP_SIZE

    @property
    def bytes_per_warp(self) -> int:
        """Bytes one warp keeps outstanding."""
        return self.issuing_threads_per_warp * self.bytes_per_copy * self.copies_in_flight

    @property
    def warps_needed(self) -> int:
        return max(1, math.ceil(self.bytes_in_flight_per_sm / self.bytes_per_warp))

    @property
    def feasible(self) -> bool:
        """Enough warps fit on the SM, and the bytes fit where they land."""
        return self.warps_needed <= self.max_warps_per_sm and self.landing_share <= 1

    @property
    def bytes_held_per_sm(self) -> int:
        """Bytes the needed warps keep in flight: ``warps_needed`` × ``bytes_per_warp``."""
        return self.warps_needed * self.bytes_per_warp

    @property
    def landing_share(self) -> float:
        """Bytes the warps hold in flight per SM (:attr:`bytes_held_per_sm`, whole copies and
        tiles) over the capacity of the place they land in."""
        return self.bytes_held_per_sm / self.landing_bytes_per_sm


def copy_parallelism(
    chip_name: str | Chip,
    mechanism: str = "ldg",
    bytes_per_copy: int = 16,
    copies_in_flight: int = 1,
    latency_s: float | None = None,
    bandwidth: float | None = None,
) -> CopyParallelism:
    """Little's law for one copy mechanism: warps per SM to keep DRAM busy.

    The bytes in flight per SM are bandwidth × ``latency_s`` / SMs (defaults: the chip's HBM
    bandwidth and its generation's pointer-chase latency, :func:`dram_latency`; pass a latency
    under load from :func:`loaded_latency` for the realistic case). ``bytes_per_copy``: 1, 2, 4,
    8 or 16 for ``ldg`` (32 from compute capability 10.0, :func:`load_widths`); 4, 8 or 16 for
    ``cp.async``; the tile's bytes (a multiple of 16, at most
    the chip's shared memory per block) for ``tma``. ``copies_in_flight``: independent loads per
    thread (``ldg``), outstanding copies per thread (``cp.async``, e.g. pipeline stages × copies
    per stage) or tiles in flight (``tma``, the pipeline's stages). cp.async needs compute
    capability 8.0, TMA 9.0.
    """
    the_chip = _gpu(chip_name)
    mechanism = choice("mechanism", mechanism, COPY_MECHANISMS)
    if the_chip.compute_capability < _MIN_CC[mechanism]:
        major, minor = _MIN_CC[mechanism]
        raise ValueError(
            f"mechanism={mechanism!r} needs compute capability {major}.{minor}; "
            f"chip_name={the_chip.name!r} has {the_chip.compute_capability[0]}."
            f"{the_chip.compute_capability[1]}"
        )
    if mechanism == "ldg":
        bytes_per_copy = _width(the_chip, "bytes_per_copy", bytes_per_copy)
    elif mechanism == "cp.async":
        bytes_per_copy = choice("bytes_per_copy", bytes_per_copy, CP_ASYNC_BYTES)
    else:
        limit = the_chip.shared_memory_per_block_bytes
        bytes_per_copy = positive_int("bytes_per_copy", bytes_per_copy, maximum=limit)
        if bytes_per_copy % 16:
            raise ValueError(
                f"bytes_per_copy={bytes_per_copy} must be a multiple of 16 for a TMA tile "
                f"(and at most {limit}, the shared memory of one block)"
            )
    copies = positive_int("copies_in_flight", copies_in_flight, maximum=MAX_LOADS_IN_FLIGHT)
    latency = dram_latency(the_chip).value if latency_s is None else latency_s
    latency = positive_float("latency_s", latency)
    rate = the_chip.hbm_bandwidth if bandwidth is None else positive_float("bandwidth", bandwidth)
    landing = (
        4 * the_chip.registers_per_sm
        if mechanism == "ldg"
        else the_chip.shared_memory_per_sm_bytes
    )
    return CopyParallelism(
        chip_name=the_chip.name,
        mechanism=mechanism,
        bytes_in_flight_per_sm=rate * latency / the_chip.sm_count,
        bytes_per_copy=bytes_per_copy,
        copies_in_flight=copies,
        max_warps_per_sm=the_chip.max_threads_per_sm // WARP_SIZE,
        landing_bytes_per_sm=landing,
    )
