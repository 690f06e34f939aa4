"""Tiled matmul: how tile sizes set HBM traffic, shared memory, occupancy and wave quantization.

A GPU computes C[M, N] = A[M, K] · B[K, N] one output tile of BLOCK_M × BLOCK_N at a time. Each
tile walks the K dimension in steps of BLOCK_K, staging an A panel (BM × BK) and a B panel
(BK × BN) in shared memory and reusing every staged element BN (resp. BM) times. Without tiles
every element of A is fetched from HBM N times and every element of B M times; with T × T tiles
only N/T resp. M/T times (seed 002, p. 28). Counting FLOPs and bytes per tile step,

    intensity = 2·BM·BN·BK / ((BM·BK + BK·BN)·bytes) = 2·BM·BN / ((BM + BN)·bytes),

which is BM·BN / (BM + BN) for 2-byte inputs: the syllabus's "≈ BM·BN/(BM+BN)", and the footnote
of seed 004 (the scaling book's roofline chapter), whose byte count 2·tm·tn·(tk·(bm·bk + bk·bn)
+ 2·bm·bn) is the one :func:`tiled_matmul` uses (minus the C read: we write C once).

Tiles are whole, so sizes that are not multiples of the tile waste work (*tile quantization*:
257 × 256 needs 6 tiles of 128 × 128 where 256 × 256 needs 4), and tiles run in *waves* of
SMs × CTAs-per-SM, so a 109th tile on a 108-SM A100 costs a whole extra wave (*wave
quantization*; NVIDIA's "Matrix Multiplication Background" guide, §3.1–3.2).

Limits: this is a teaching model. It assumes one output tile per CTA, no split-K or stream-K, and
no L2 reuse between tiles (real kernels re-read panels from L2, not HBM, so the byte count is an
upper bound on HBM traffic and a fair count of L2 traffic; :func:`l2_levels` makes L2 a level of
its own, with the kernel's GROUP_M launch order). Masked edge loads are counted as whole
tiles. Occupancy follows the CUDA occupancy calculator's rules approximately (see
:func:`occupancy`). Hardware numbers come from :mod:`gpuperf.hardware`; none are typed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import hardware
from ._validate import (
    MAX_COUNT,
    MAX_PRODUCT,
    name_string,
    positive_float,
    positive_int,
    power_of_two,
    show,
)
from .cost import OpCost
from .hardware import MAX_REGISTERS_PER_THREAD, MAX_THREADS_PER_BLOCK, WARP_SIZE, Chip
from .units import bytes_per_element, check_precision

#: Smallest tile side ``tl.dot`` accepts (Triton requires each dot dimension ≥ 16).
MIN_BLOCK = 16

#: Most programs :func:`program_tiles` (and so :func:`l2_levels`) enumerates, one by one.
MAX_PROGRAMS = 2**20

#: Registers are allocated per warp in units of 256 (CUDA occupancy calculator, cc 5.0–10.0).
REGISTER_ALLOCATION_UNIT = 256


def _check_fields(
    obj: object,
    ints: tuple[str, ...] = (),
    floats: tuple[str, ...] = (),
    names: tuple[str, ...] = (),
    precisions: tuple[str, ...] = (),
) -> None:
    """Validate a result dataclass's fields: counts ≥ 0, finite non-negative floats, names."""
    for label in ints:
        object.__setattr__(
            obj, label, positive_int(label, getattr(obj, label), minimum=0, maximum=MAX_PRODUCT)
        )
    for label in floats:
        object.__setattr__(obj, label, positive_float(label, getattr(obj, label), True))
    for label in names:
        name_string(label, getattr(obj, label))
    for label in precisions:
        check_precision(getattr(obj, label), label)


def _block(name: str, value: object) -> int:
    return power_of_two(name, value, minimum=MIN_BLOCK)


def _ceil_div(a: int, b: int) -> int:
    """⌈a / b⌉ in exact integer arithmetic (``math.ceil(a / b)`` rounds through a float)."""
    return -(-a // b)


def _gpu(chip: str | Chip, what: str) -> Chip:
    return hardware.chip(chip).require_sm_model(what)


def tile_count(m: int, n: int, block_m: int, block_n: int) -> int:
    """Output tiles of a C[m, n]: ⌈m/BM⌉·⌈n/BN⌉ (256² with 128² tiles → 4; 257×256 → 6)."""
    m, n = positive_int("m", m), positive_int("n", n)
    block_m, block_n = _block("block_m", block_m), _block("block_n", block_n)
    return _ceil_div(m, block_m) * _ceil_div(n, block_n)


def tile_efficiency(m: int, n: int, block_m: int, block_n: int) -> float:
    """Tile quantization: useful outputs over computed outputs, m·n / (⌈m/BM⌉BM · ⌈n/BN⌉BN)."""
    m, n = positive_int("m", m), positive_int("n", n)
    block_m, block_n = _block("block_m", block_m), _block("block_n", block_n)
    return (m * n) / (_ceil_div(m, block_m) * block_m * _ceil_div(n, block_n) * block_n)


@dataclass(frozen=True)
class TiledMatmul:
    """FLOPs and HBM bytes of a tiled C[m, n] = A[m, k] · B[k, n].

    ``hbm_bytes_read`` = (m·k·tiles_n + k·n·tiles_m)·bytes: every output tile streams its A
    row-panel and B column-panel once; edge tiles are masked, so the padding past m, n or k is
    never requested (tiles_m·tiles_n·tiles_k·(BM·BK + BK·BN)·bytes when the tiles divide the
    sizes). Counting the course's kernel in the interpreter (``tests/test_counting.py``) gives
    exactly this number; the whole-tile count overstated the reads of awkward shapes.
    ``hbm_bytes_written`` = m·n·out_bytes: C is written once. ``useful_flops`` = 2·m·n·k;
    ``executed_flops`` counts the padded tiles, 2·(tiles_m·BM)·(tiles_n·BN)·(tiles_k·BK).
    """

    m: int
    n: int
    k: int
    block_m: int
    block_n: int
    block_k: int
    precision: str
    out_precision: str
    tiles_m: int
    tiles_n: int
    tiles_k: int
    useful_flops: float
    executed_flops: float
    hbm_bytes_read: float
    hbm_bytes_written: float
    naive_hbm_bytes: float

    def __post_init__(self) -> None:
        _check_fields(
            self,
            ints=("m", "n", "k", "block_m", "block_n", "block_k", "tiles_m", "tiles_n", "tiles_k"),
            floats=("useful_flops", "executed_flops", "hbm_bytes_read", "hbm_bytes_written",
                    "naive_hbm_bytes"),
            precisions=("precision", "out_precision"),
        )  # fmt: skip
        sizes = ("m", "n", "k", "block_m", "block_n", "block_k", "tiles_m", "tiles_n", "tiles_k")
        for name in sizes:
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} must be ≥ 1")
        if self.hbm_bytes_read + self.hbm_bytes_written <= 0:
            raise ValueError("a tiled matmul moves at least one byte")

    @property
    def tiles(self) -> int:
        """Output tiles (CTAs when each CTA computes one tile)."""
        return self.tiles_m * self.tiles_n

    @property
    def hbm_bytes(self) -> float:
        return self.hbm_bytes_read + self.hbm_bytes_written

    @property
    def intensity(self) -> float:
        """Useful FLOPs per HBM byte (FLOP/byte) of the whole tiled matmul."""
        return self.useful_flops / self.hbm_bytes

    @property
    def tile_intensity(self) -> float:
        """Asymptotic per-tile intensity 2·BM·BN/((BM + BN)·bytes); BM·BN/(BM+BN) for fp16."""
        size = bytes_per_element(self.precision)
        return 2 * self.block_m * self.block_n / ((self.block_m + self.block_n) * size)

    @property
    def tile_efficiency(self) -> float:
        """Tile quantization: m·n / (tiles_m·BM · tiles_n·BN)."""
        return (self.m * self.n) / (self.tiles_m * self.block_m * self.tiles_n * self.block_n)

    @property
    def a_reads_per_element(self) -> int:
        """How many times each A element comes from HBM: once per tile column, ⌈n/BN⌉."""
        return self.tiles_n

    @property
    def b_reads_per_element(self) -> int:
        """How many times each B element comes from HBM: once per tile row, ⌈m/BM⌉."""
        return self.tiles_m

    @property
    def traffic_saving(self) -> float:
        """Naive HBM bytes over tiled HBM bytes (≈ T for T × T tiles on large matrices)."""
        return self.naive_hbm_bytes / self.hbm_bytes

    def cost(self) -> OpCost:
        """The tiled matmul as an :class:`~gpuperf.cost.OpCost` (useful FLOPs, tiled bytes)."""
        return OpCost(
            self.useful_flops,
            self.hbm_bytes_read,
            self.hbm_bytes_written,
            f"tiled matmul {self.block_m}×{self.block_n}×{self.block_k}",
        )


def naive_matmul_hbm_bytes(
    m: int, n: int, k: int, precision: str = "fp16", out_precision: str | None = None
) -> float:
    """HBM bytes of an untiled matmul where each output element fetches its A row and B column.

    Each A element is read n times and each B element m times (seed 002, p. 28), C written once:
    (m·k·n + k·n·m)·bytes + m·n·out_bytes = 2·m·n·k·bytes + m·n·out_bytes.
    """
    m, n, k = positive_int("m", m), positive_int("n", n), positive_int("k", k)
    size = bytes_per_element(precision)
    out = bytes_per_element(out_precision if out_precision is not None else precision)
    return 2.0 * m * n * k * size + m * n * out


def tiled_matmul(
    m: int,
    n: int,
    k: int,
    block_m: int,
    block_n: int,
    block_k: int,
    precision: str = "fp16",
    out_precision: str | None = None,
) -> TiledMatmul:
    """HBM traffic and intensity of C[m, n] = A[m, k] · B[k, n] with (BM, BN, BK) tiles.

    2048³ fp16 with 128 × 128 × 32 tiles reads each A and B element 16 times instead of 2048, and
    its intensity is ≈ 64 FLOP/byte = 128·128/(128 + 128). Tile sizes must be powers of two ≥ 16.
    """
    m, n, k = positive_int("m", m), positive_int("n", n), positive_int("k", k)
    block_m, block_n = _block("block_m", block_m), _block("block_n", block_n)
    block_k = _block("block_k", block_k)
    precision = check_precision(precision)
    out_precision = check_precision(out_precision if out_precision is not None else precision)
    size, out = bytes_per_element(precision), bytes_per_element(out_precision)
    tiles_m, tiles_n, tiles_k = (
        _ceil_div(m, block_m),
        _ceil_div(n, block_n),
        _ceil_div(k, block_k),
    )
    # A is read once per column of tiles, B once per row of tiles; masked edges move nothing
    read = (m * k * tiles_n + k * n * tiles_m) * size
    return TiledMatmul(
        m=m,
        n=n,
        k=k,
        block_m=block_m,
        block_n=block_n,
        block_k=block_k,
        precision=precision,
        out_precision=out_precision,
        tiles_m=tiles_m,
        tiles_n=tiles_n,
        tiles_k=tiles_k,
        useful_flops=2.0 * m * n * k,
        executed_flops=2.0 * tiles_m * block_m * tiles_n * block_n * tiles_k * block_k,
        hbm_bytes_read=float(read),
        hbm_bytes_written=float(m * n * out),
        naive_hbm_bytes=naive_matmul_hbm_bytes(m, n, k, precision, out_precision),
    )


def shared_memory_bytes(
    block_m: int, block_n: int, block_k: int, precision: str = "fp16", num_stages: int = 1
) -> int:
    """Shared memory for ``num_stages`` full A and B panels: stages·(BM·BK + BK·BN)·bytes.

    Rounded up to whole bytes (fp4). This is the course's upper-bound model, not what Triton
    allocates. Asked for ``num_stages`` = S, Triton 3.9 keeps S − 1 buffers where ``cp.async``
    feeds ``mma`` (sm_80, where one tile takes a little more, and sm_90 tiles of 32 rows), S
    where it feeds ``wgmma`` (sm_90, tiles of 64 rows or more), and on sm_75, which pipelines
    nothing (``tl.dot`` becomes FMA instructions there), one stage's panels or up to twice that
    where it rearranges them. Every tile of the stored compiler table
    (:mod:`gpuperf.widgets.tile_reports`, S = 3) is within this count, so a tile the model says
    fits does fit, and a tile it rejects may still compile (``tests/test_tiling.py``).
    """
    block_m, block_n = _block("block_m", block_m), _block("block_n", block_n)
    block_k = _block("block_k", block_k)
    num_stages = positive_int("num_stages", num_stages)
    size = bytes_per_element(precision)
    return math.ceil(num_stages * (block_m * block_k + block_k * block_n) * size)


@dataclass(frozen=True)
class SharedMemoryBudget:
    """Shared memory a tile configuration needs against one block's limit on a chip."""

    chip_name: str
    block_m: int
    block_n: int
    block_k: int
    precision: str
    num_stages: int
    shared_memory_bytes: int
    limit_bytes: int

    def __post_init__(self) -> None:
        _check_fields(
            self,
            ints=("block_m", "block_n", "block_k", "num_stages", "shared_memory_bytes"),
            names=("chip_name",),
            precisions=("precision",),
        )
        object.__setattr__(self, "limit_bytes", positive_int("limit_bytes", self.limit_bytes))

    @property
    def fits(self) -> bool:
        return self.shared_memory_bytes <= self.limit_bytes

    @property
    def fraction_used(self) -> float:
        """Needed over available (> 1 when it does not fit): the gauge's fill level."""
        return self.shared_memory_bytes / self.limit_bytes


def shared_memory_budget(
    chip: str | Chip,
    block_m: int,
    block_n: int,
    block_k: int,
    precision: str = "fp16",
    num_stages: int = 1,
) -> SharedMemoryBudget:
    """Like :func:`check_shared_memory` but never raises on overflow (for gauges and tables)."""
    found = _gpu(chip, "shared memory per block")
    needed = shared_memory_bytes(block_m, block_n, block_k, precision, num_stages)
    assert found.shared_memory_per_block_bytes is not None  # every GPU row has it
    return SharedMemoryBudget(
        chip_name=found.name,
        block_m=int(block_m),
        block_n=int(block_n),
        block_k=int(block_k),
        precision=precision,
        num_stages=int(num_stages),
        shared_memory_bytes=needed,
        limit_bytes=found.shared_memory_per_block_bytes,
    )


def check_shared_memory(
    chip: str | Chip,
    block_m: int,
    block_n: int,
    block_k: int,
    precision: str = "fp16",
    num_stages: int = 1,
) -> SharedMemoryBudget:
    """The budget if the staged tiles fit in one block's shared memory, else ``ValueError``.

    256 × 256 × 64 fp16 with 4 stages needs 256 KiB: far over a T4's 64 KiB per block.
    """
    budget = shared_memory_budget(chip, block_m, block_n, block_k, precision, num_stages)
    if not budget.fits:
        raise ValueError(
            f"tile {budget.block_m}×{budget.block_n}×{budget.block_k} {precision} with "
            f"num_stages={budget.num_stages} needs {budget.shared_memory_bytes} bytes "
            f"({budget.shared_memory_bytes / 1024:g} KiB) of shared memory; {budget.chip_name} "
            f"allows at most {budget.limit_bytes} bytes ({budget.limit_bytes / 1024:g} KiB) "
            "per block"
        )
    return budget


#: Below this compute capability Triton lowers ``tl.dot`` to FMA instructions (PR #5066).
TENSOR_CORE_DOT_MIN_CC = (8, 0)


def dot_roof_precision(chip: str | Chip, precision: str = "fp16") -> str:
    """The precision whose peak is the roof of a Triton ``tl.dot`` kernel on ``chip``.

    A verdict (compute- or memory-bound) needs the roof of the unit the compiled kernel runs on.
    Below compute capability 8.0 (a T4 is sm_75) Triton ≥ 3.4 lowers a 16-bit ``tl.dot`` to
    FMA instructions (PR #5066, first released in 3.3; 3.2 still emitted ``mma``): the panels
    are converted to fp32 and multiplied with ``fma.rn.f32``, so the roof is the chip's fp32
    peak, not its tensor cores'. From 8.0 a 16-bit ``tl.dot`` runs on tensor cores (``mma``,
    ``wgmma``) and the roof is the peak at ``precision``. fp32 inputs stay ``"fp32"`` on every
    chip: the course's kernels multiply them in IEEE fp32 (ask for ``"tf32"`` to get TF32).
    Sources: Triton PR #5066 (``TRITON-5066`` in references.bib) and the released wheels
    (``reference/frontier-2026.md`` §9); the stored sm_75 compiles
    (:mod:`gpuperf.widgets.tile_reports`) carry no tensor-core instruction, and
    ``tests/test_tiling_l2.py`` checks this rule against them.
    """
    precision = check_precision(precision)
    found = hardware.chip(chip)
    if found.vendor != "NVIDIA" or found.compute_capability is None:
        raise ValueError(
            f"chip={found.name!r} ({found.vendor}): dot_roof_precision knows Triton's rule for "
            "NVIDIA GPUs (compute capability) only"
        )
    if precision == "fp32" or found.compute_capability < TENSOR_CORE_DOT_MIN_CC:
        return "fp32"
    found.peak_flops(precision)  # the chip must have this tensor-core rate: ValueError if not
    return precision


def waves(tiles: int, chip: str | Chip, ctas_per_sm: int = 1) -> int:
    """Waves of CTAs: ⌈tiles / (SMs·ctas_per_sm)⌉ (A100, 256 tiles → 3 waves)."""
    tiles = positive_int("tiles", tiles, maximum=MAX_PRODUCT)  # a product of two counts
    ctas_per_sm = positive_int("ctas_per_sm", ctas_per_sm)
    found = _gpu(chip, "a wave of CTAs")
    return _ceil_div(tiles, found.sm_count * ctas_per_sm)


@dataclass(frozen=True)
class WaveQuantization:
    """Tile and wave quantization of an m × n output on one chip (one tile per CTA)."""

    m: int
    n: int
    block_m: int
    block_n: int
    chip_name: str
    sm_count: int
    ctas_per_sm: int
    tiles: int
    waves: int
    wave_efficiency: float
    tile_efficiency: float

    def __post_init__(self) -> None:
        _check_fields(
            self,
            ints=("m", "n", "block_m", "block_n", "tiles", "waves"),
            names=("chip_name",),
        )
        for label in ("sm_count", "ctas_per_sm", "tiles", "waves"):
            positive_int(label, getattr(self, label), maximum=MAX_PRODUCT)
        for label in ("wave_efficiency", "tile_efficiency"):
            value = positive_float(label, getattr(self, label))
            if value > 1:
                raise ValueError(f"{label}={value!r} must be in (0, 1]")
        if not 0 < self.tiles - (self.waves - 1) * self.slots_per_wave <= self.slots_per_wave:
            raise ValueError(
                f"tiles={self.tiles} do not fill {self.waves} waves of {self.slots_per_wave}"
            )

    @property
    def slots_per_wave(self) -> int:
        return self.sm_count * self.ctas_per_sm

    @property
    def tail_tiles(self) -> int:
        """Tiles in the last wave (a full wave when tiles divide evenly)."""
        return self.tiles - (self.waves - 1) * self.slots_per_wave

    @property
    def efficiency(self) -> float:
        """Useful fraction of the math the waves pay for: wave × tile efficiency."""
        return self.wave_efficiency * self.tile_efficiency


def wave_efficiency(
    m: int, n: int, block_m: int, block_n: int, chip: str | Chip, ctas_per_sm: int = 1
) -> float:
    """Busy fraction of the SM slots over all waves: tiles / (waves·SMs·ctas_per_sm).

    2048² with 128 × 128 tiles: 256 tiles on an A100's 108 SMs → 3 waves, 79%.
    """
    return wave_quantization(m, n, block_m, block_n, chip, ctas_per_sm).wave_efficiency


def wave_quantization(
    m: int, n: int, block_m: int, block_n: int, chip: str | Chip, ctas_per_sm: int = 1
) -> WaveQuantization:
    """Tiles, waves, wave efficiency and tile efficiency of an m × n output.

    2049² with 256 × 128 tiles on an H100 (132 SMs): 153 tiles → 2 waves, 58% busy, for 0.15%
    more FLOPs than 2048² (1 wave, 97%).
    """
    tiles = tile_count(m, n, block_m, block_n)
    found = _gpu(chip, "wave quantization")
    ctas_per_sm = positive_int("ctas_per_sm", ctas_per_sm)
    n_waves = waves(tiles, found, ctas_per_sm)
    return WaveQuantization(
        m=int(m),
        n=int(n),
        block_m=int(block_m),
        block_n=int(block_n),
        chip_name=found.name,
        sm_count=found.sm_count,
        ctas_per_sm=ctas_per_sm,
        tiles=tiles,
        waves=n_waves,
        wave_efficiency=tiles / (n_waves * found.sm_count * ctas_per_sm),
        tile_efficiency=tile_efficiency(m, n, block_m, block_n),
    )


def _sizes(name: str, values: object) -> np.ndarray:
    """Sizes as an int64 array, each checked exactly as the scalar functions check one size."""
    array = np.asarray(values, dtype=object) if isinstance(values, list | tuple) else values
    array = np.asarray(array)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name}={show(values)} must be a non-empty 1-D array of integers ≥ 1")
    if array.dtype != object and (
        array.dtype == bool or not np.issubdtype(array.dtype, np.number)
    ):
        raise ValueError(f"{name}={show(values)} must be integers ≥ 1 and ≤ {MAX_COUNT}")
    if array.dtype == object:  # a list or tuple: check each element as the scalar version does
        return np.array(
            [positive_int(f"{name}[{i}]", v) for i, v in enumerate(array.tolist())],
            dtype=np.int64,
        )
    # A numeric array: the same rule, vectorised (integral, finite, in [1, MAX_COUNT]).
    if np.issubdtype(array.dtype, np.complexfloating):
        raise ValueError(f"{name}={show(values)} must be integers ≥ 1 and ≤ {MAX_COUNT}")
    if np.issubdtype(array.dtype, np.integer):
        bad = (array < 1) | (array > MAX_COUNT)
    else:
        as_float = array.astype(float)
        with np.errstate(invalid="ignore"):
            bad = (
                ~np.isfinite(as_float)
                | (as_float < 1)
                | (as_float > MAX_COUNT)
                | (as_float != np.round(as_float))
            )
    if np.any(bad):
        i = int(np.argmax(bad))
        raise ValueError(
            f"{name}[{i}]={show(array[i].item())} must be an integer ≥ 1 and ≤ {MAX_COUNT}"
        )
    return array.astype(np.int64)


#: Below this, sizes and blocks are small enough that every product the curves form fits int64
#: (sizes·blocks < 2**62); above it the curves switch to exact Python integers (object arrays).
_INT64_SAFE = 2**30


def _curve_tiles(sizes: object, block_m: int, block_n: int, m: int | None):
    n_arr = _sizes("sizes", sizes)
    block_m, block_n = _block("block_m", block_m), _block("block_n", block_n)
    m_arr = n_arr if m is None else np.full_like(n_arr, positive_int("m", m))
    largest = max(int(n_arr.max()), int(m_arr.max()), block_m, block_n)
    if largest >= _INT64_SAFE:
        n_arr, m_arr = n_arr.astype(object), m_arr.astype(object)
    tiles_m = -(-m_arr // block_m)  # exact ceil division
    tiles_n = -(-n_arr // block_n)
    return m_arr, n_arr, tiles_m, tiles_n, block_m, block_n


def wave_efficiency_curve(
    sizes: object,
    block_m: int,
    block_n: int,
    chip: str | Chip,
    ctas_per_sm: int = 1,
    *,
    m: int | None = None,
) -> np.ndarray:
    """:func:`wave_efficiency` over an array of sizes (the sawtooth plot); array in, array out.

    Square outputs (size × size) by default; with ``m`` given, ``sizes`` sweeps N at fixed M as
    in NVIDIA's guide (M = 2304, N = 1536 → 1.0; N = 1544 → 117 tiles on 216 slots). Sizes are
    checked like the scalar version's (integers in [1, 2⁵³]) and the result equals it exactly:
    int64 arithmetic for ordinary sizes, exact Python integers where int64 could overflow.
    """
    _, _, tiles_m, tiles_n, _, _ = _curve_tiles(sizes, block_m, block_n, m)
    found = _gpu(chip, "wave quantization")
    slots = found.sm_count * positive_int("ctas_per_sm", ctas_per_sm)
    tiles = tiles_m * tiles_n
    if tiles.dtype != object and int(tiles.max()) >= 2**62 // max(slots, 1):
        tiles = tiles.astype(object)
    return np.asarray(tiles / (-(-tiles // slots) * slots), dtype=float)


def tile_efficiency_curve(
    sizes: object, block_m: int, block_n: int, *, m: int | None = None
) -> np.ndarray:
    """:func:`tile_efficiency` over an array of sizes (square, or N at fixed ``m``).

    Equal to the scalar version at every size it accepts (exact integer products, no int64
    wrap-around: 3,037,000,449² used to come out as −1).
    """
    m_arr, n_arr, tiles_m, tiles_n, block_m, block_n = _curve_tiles(sizes, block_m, block_n, m)
    return np.asarray((m_arr * n_arr) / (tiles_m * block_m * tiles_n * block_n), dtype=float)


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks and warps per SM for one kernel configuration.

    ``blocks_limit_*`` are the blocks per SM each resource alone would allow; ``blocks_per_sm``
    is their minimum and ``limited_by`` names the resource that sets it (0 blocks: the kernel
    cannot launch with this configuration).
    """

    chip_name: str
    threads_per_block: int
    registers_per_thread: int
    shared_memory_per_block_bytes: int
    warps_per_block: int
    blocks_limit_threads: int
    blocks_limit_registers: int
    blocks_limit_shared_memory: int
    blocks_limit_hardware: int
    blocks_per_sm: int
    limited_by: str
    active_warps_per_sm: int
    max_warps_per_sm: int

    def __post_init__(self) -> None:
        _check_fields(
            self,
            ints=("registers_per_thread", "shared_memory_per_block_bytes",
                  "blocks_limit_threads", "blocks_limit_registers", "blocks_limit_shared_memory",
                  "blocks_limit_hardware", "blocks_per_sm", "active_warps_per_sm"),
            names=("chip_name", "limited_by"),
        )  # fmt: skip
        for label in ("threads_per_block", "warps_per_block", "max_warps_per_sm"):
            positive_int(label, getattr(self, label), maximum=MAX_PRODUCT)
        if self.active_warps_per_sm > self.max_warps_per_sm:
            raise ValueError(
                f"active_warps_per_sm={self.active_warps_per_sm} must be ≤ max_warps_per_sm="
                f"{self.max_warps_per_sm}"
            )

    @property
    def occupancy(self) -> float:
        """Active warps over the SM's maximum warps, in [0, 1]."""
        return self.active_warps_per_sm / self.max_warps_per_sm

    @property
    def active_threads_per_sm(self) -> int:
        return self.blocks_per_sm * self.threads_per_block


def occupancy(
    chip: str | Chip,
    threads_per_block: int,
    registers_per_thread: int,
    shared_memory_per_block_bytes: int,
) -> Occupancy:
    """Blocks per SM limited by threads, registers, shared memory and the hardware block cap.

    * threads: ⌊max_threads_per_sm / (warps_per_block·32)⌋;
    * registers: each warp takes ⌈registers_per_thread·32 / 256⌉·256 registers (the 256-register
      allocation unit), blocks = ⌊⌊registers_per_sm / per_warp⌋ / warps_per_block⌋. This is an
      approximation: real hardware also splits registers across the SM's four sub-partitions;
    * shared memory: ⌊shared_memory_per_sm / per_block⌋, or 0 above the per-block limit. The
      ~1 KiB the driver reserves per block on cc ≥ 8.0 is not modelled;
    * the chip's maximum resident blocks per SM.

    A100, 256 threads, 64 registers, 48 KiB → 3 blocks (shared memory), 24 of 64 warps, 37.5%.
    """
    found = _gpu(chip, "occupancy")
    threads_per_block = positive_int("threads_per_block", threads_per_block)
    if threads_per_block > MAX_THREADS_PER_BLOCK:
        raise ValueError(
            f"threads_per_block={threads_per_block} must be ≤ {MAX_THREADS_PER_BLOCK}"
        )
    registers_per_thread = positive_int("registers_per_thread", registers_per_thread, minimum=0)
    if registers_per_thread > MAX_REGISTERS_PER_THREAD:
        raise ValueError(
            f"registers_per_thread={registers_per_thread} must be ≤ {MAX_REGISTERS_PER_THREAD}"
        )
    smem = positive_int("shared_memory_per_block_bytes", shared_memory_per_block_bytes, 0)
    # Every GPU row carries these per-SM limits (hardware.py's compute-capability tables).
    assert found.max_threads_per_sm and found.registers_per_sm and found.max_blocks_per_sm
    assert found.shared_memory_per_sm_bytes and found.shared_memory_per_block_bytes

    warps_per_block = math.ceil(threads_per_block / WARP_SIZE)
    max_warps = found.max_threads_per_sm // WARP_SIZE
    by_threads = max_warps // warps_per_block
    if registers_per_thread == 0:
        by_registers = found.max_blocks_per_sm
    else:
        unit = REGISTER_ALLOCATION_UNIT
        per_warp = math.ceil(registers_per_thread * WARP_SIZE / unit) * unit
        by_registers = (found.registers_per_sm // per_warp) // warps_per_block
    if smem == 0:
        by_smem = found.max_blocks_per_sm
    elif smem > found.shared_memory_per_block_bytes:
        by_smem = 0
    else:
        by_smem = found.shared_memory_per_sm_bytes // smem
    # A resource the kernel does not use (0 registers, 0 bytes) never names the limit.
    limits = {
        "shared_memory": by_smem if smem else None,
        "registers": by_registers if registers_per_thread else None,
        "threads": by_threads,
        "max_blocks_per_sm": found.max_blocks_per_sm,
    }
    blocks = min(value for value in limits.values() if value is not None)
    limited_by = next(name for name, value in limits.items() if value == blocks)
    return Occupancy(
        chip_name=found.name,
        threads_per_block=threads_per_block,
        registers_per_thread=registers_per_thread,
        shared_memory_per_block_bytes=smem,
        warps_per_block=warps_per_block,
        blocks_limit_threads=by_threads,
        blocks_limit_registers=by_registers,
        blocks_limit_shared_memory=by_smem,
        blocks_limit_hardware=found.max_blocks_per_sm,
        blocks_per_sm=blocks,
        limited_by=limited_by,
        active_warps_per_sm=blocks * warps_per_block,
        max_warps_per_sm=max_warps,
    )


# --------------------------------------------------------------------------------------------
# L2: the level between the SMs and HBM.


def program_tiles(
    m: int, n: int, block_m: int, block_n: int, group_m: int = 8
) -> tuple[np.ndarray, np.ndarray]:
    """``(pid_m, pid_n)`` of every program in launch order, with the course matmul's GROUP_M order.

    Program ``pid`` of :func:`gpuperf.kernels.matmul` computes tile ``(pid_m[pid], pid_n[pid])``:
    ``group_m`` tile-rows are swept column by column, so consecutive programs share A row-panels
    and, across a group, B column-panels. ``group_m = 1`` is plain row-major order.
    """
    m, n = positive_int("m", m), positive_int("n", n)
    block_m, block_n = _block("block_m", block_m), _block("block_n", block_n)
    group_m = positive_int("group_m", group_m)
    tiles_m, tiles_n = _ceil_div(m, block_m), _ceil_div(n, block_n)
    if tiles_m * tiles_n > MAX_PROGRAMS:
        # Two int64 entries per program follow: bound them before allocating.
        raise ValueError(
            f"m={m}, n={n} with {block_m}×{block_n} tiles give {tiles_m * tiles_n} programs; "
            f"program_tiles lists at most {MAX_PROGRAMS} (2**20)"
        )
    pid = np.arange(tiles_m * tiles_n, dtype=np.int64)
    in_group = group_m * tiles_n
    first_m = (pid // in_group) * group_m
    size_m = np.minimum(tiles_m - first_m, group_m)
    return first_m + (pid % in_group) % size_m, (pid % in_group) // size_m


@dataclass(frozen=True)
class TilingLevels:
    """A tiled matmul at two levels: panels streamed L2 → SMs, and HBM → L2 traffic.

    ``l2_bytes`` is the per-tile count of :func:`tiled_matmul` (every program streams its A and
    B panels; C is written once): the traffic between L2 and the SMs, whose intensity is the
    tile intensity BM·BN/(BM + BN) in fp16. ``hbm_bytes`` assumes L2 serves every re-read inside
    one wave of concurrently running programs, and nothing across waves: each wave fetches from
    HBM each distinct A row-panel and B column-panel its programs use, once. ``compulsory_bytes``
    reads A and B once and writes C once (the whole-matrix count of :func:`gpuperf.cost.matmul`).

    That HBM count holds only if L2 keeps what a wave's programs share while they use it. It
    assumes they walk K in step: then L2 must hold one K step of the wave's distinct panels,
    ``wave_step_bytes`` (the largest over the waves), against ``l2_capacity_bytes`` (the
    chip's L2). If they drift a whole K loop apart, L2 would need the wave's whole panels,
    ``wave_panel_bytes``. ``roof_precision`` names the peak used as the math roof.
    """

    tiled: TiledMatmul
    chip_name: str
    group_m: int
    concurrent_tiles: int
    waves: int
    l2_bytes: float
    hbm_bytes: float
    compulsory_bytes: float
    peak_flops_per_s: float
    hbm_bandwidth: float
    roof_precision: str
    wave_step_bytes: float
    wave_panel_bytes: float
    l2_capacity_bytes: float

    def __post_init__(self) -> None:
        if not isinstance(self.tiled, TiledMatmul):
            raise TypeError(f"tiled={show(self.tiled)} must be a TiledMatmul (see tiled_matmul)")
        _check_fields(
            self,
            ints=("group_m", "concurrent_tiles", "waves"),
            floats=("l2_bytes", "hbm_bytes", "compulsory_bytes", "peak_flops_per_s",
                    "hbm_bandwidth", "wave_step_bytes", "wave_panel_bytes", "l2_capacity_bytes"),
            names=("chip_name",),
            precisions=("roof_precision",),
        )  # fmt: skip
        # Every byte count and rate divides something below: all must be > 0.
        for label in ("l2_bytes", "hbm_bytes", "compulsory_bytes", "peak_flops_per_s",
                      "hbm_bandwidth", "wave_step_bytes", "wave_panel_bytes",
                      "l2_capacity_bytes"):  # fmt: skip
            positive_float(label, getattr(self, label))

    @property
    def l2_intensity(self) -> float:
        """Useful FLOPs per byte the SMs pull from L2 (≈ the tile intensity)."""
        return self.tiled.useful_flops / self.l2_bytes

    @property
    def hbm_intensity(self) -> float:
        """Useful FLOPs per HBM byte when L2 serves the re-reads within a wave."""
        return self.tiled.useful_flops / self.hbm_bytes

    @property
    def compulsory_intensity(self) -> float:
        """Useful FLOPs per byte if every input came from HBM exactly once."""
        return self.tiled.useful_flops / self.compulsory_bytes

    @property
    def hbm_ridge_point(self) -> float:
        return self.peak_flops_per_s / self.hbm_bandwidth

    @property
    def hbm_bound(self) -> str:
        """``"compute"`` or ``"memory"``: the whole matmul against HBM, with L2 reuse."""
        return "compute" if self.hbm_intensity >= self.hbm_ridge_point else "memory"

    @property
    def l2_bandwidth_needed(self) -> float:
        """L2 → SM bandwidth (B/s) the tiles need to run at the math peak: peak / L2 intensity."""
        return self.peak_flops_per_s / self.l2_intensity

    @property
    def step_fits_l2(self) -> bool:
        """Whether one K step of every wave's panels fits in L2: the lockstep assumption's need."""
        return self.wave_step_bytes <= self.l2_capacity_bytes

    @property
    def panels_fit_l2(self) -> bool:
        """Whether every wave's whole panels fit in L2 (then no lockstep is needed)."""
        return self.wave_panel_bytes <= self.l2_capacity_bytes

    def l2_bound(self, l2_bandwidth: float) -> str:
        """``"compute"`` or ``"L2"`` for a given L2 bandwidth (bytes/s, e.g. a sourced one)."""
        l2_bandwidth = positive_float("l2_bandwidth", l2_bandwidth)
        return "compute" if l2_bandwidth >= self.l2_bandwidth_needed else "L2"


def l2_levels(
    m: int,
    n: int,
    k: int,
    block_m: int,
    block_n: int,
    block_k: int,
    chip: str | Chip,
    precision: str = "fp16",
    *,
    group_m: int = 8,
    ctas_per_sm: int = 1,
    roof_precision: str | None = None,
) -> TilingLevels:
    """The tiling roofline with L2 as a level: per-tile intensity against L2, whole matrix
    against HBM.

    A 4096³ fp16 matmul with 128 × 128 tiles has a tile intensity of 64 FLOP/B, below every
    chip's HBM ridge point — yet it is compute-bound, because the re-reads behind that count
    come from L2, not HBM. Programs run in waves of ``SMs × ctas_per_sm``; with the kernel's
    ``GROUP_M`` order a wave of an H100 (132 programs) touches 8 A row-panels and 17 B
    column-panels, so HBM sees each of them once per wave. ``ctas_per_sm`` is how many programs
    the *compiled* kernel keeps resident per SM — ``occupancy(...).blocks_per_sm`` from its
    registers and shared memory, or :func:`gpuperf.widgets.tile_reports.ctas_per_sm` for the
    stored compiler table; the default of 1 gives the narrowest wave, which can misjudge the
    launch order (a wider wave may already span whole tile-rows). ``roof_precision`` is the
    precision whose peak bounds the kernel (default ``precision``, the tensor cores): pass
    :func:`dot_roof_precision` for a Triton kernel, whose ``tl.dot`` is FMA on a T4.

    Limits: the programs of a wave are assumed to walk K in step, so L2 only needs their current
    K-slices (:attr:`TilingLevels.wave_step_bytes`, against the chip's L2); real programs drift
    apart, which costs HBM traffic this count leaves out. Nothing is reused across waves, which
    real L2s partly do (traffic this count adds). The L2 bandwidth is not in the chip table:
    compare :attr:`TilingLevels.l2_bandwidth_needed` with a sourced figure.
    """
    t = tiled_matmul(m, n, k, block_m, block_n, block_k, precision)
    found = _gpu(chip, "the L2 level of a tiled matmul")
    group_m = positive_int("group_m", group_m)
    ctas_per_sm = positive_int("ctas_per_sm", ctas_per_sm)
    slots = found.sm_count * ctas_per_sm
    pid_m, pid_n = program_tiles(t.m, t.n, t.block_m, t.block_n, group_m)
    size = bytes_per_element(t.precision)
    k_padded = t.tiles_k * t.block_k
    roof = (
        t.precision
        if roof_precision is None
        else check_precision(roof_precision, "roof_precision")
    )
    assert found.l2_bytes is not None  # every GPU row has its L2 size
    panels_read = 0.0
    widest = 0  # panel rows and columns of the widest wave (A rows + B columns)
    n_waves = math.ceil(pid_m.size / slots)
    for w in range(n_waves):
        rows = np.unique(pid_m[w * slots : (w + 1) * slots]).size
        cols = np.unique(pid_n[w * slots : (w + 1) * slots]).size
        widest = max(widest, rows * t.block_m + cols * t.block_n)
        panels_read += (rows * t.block_m + cols * t.block_n) * k_padded * size
    compulsory = (t.m * t.k + t.k * t.n) * size + t.hbm_bytes_written
    return TilingLevels(
        tiled=t,
        chip_name=found.name,
        group_m=group_m,
        concurrent_tiles=slots,
        waves=n_waves,
        l2_bytes=float(t.hbm_bytes),
        hbm_bytes=float(panels_read + t.hbm_bytes_written),
        compulsory_bytes=float(compulsory),
        peak_flops_per_s=found.peak_flops(roof),
        hbm_bandwidth=found.hbm_bandwidth,
        roof_precision=roof,
        wave_step_bytes=float(widest * t.block_k * size),
        wave_panel_bytes=float(widest * k_padded * size),
        l2_capacity_bytes=float(found.l2_bytes),
    )


__all__ = [
    "MAX_PROGRAMS",
    "MIN_BLOCK",
    "REGISTER_ALLOCATION_UNIT",
    "TENSOR_CORE_DOT_MIN_CC",
    "Occupancy",
    "SharedMemoryBudget",
    "TiledMatmul",
    "TilingLevels",
    "WaveQuantization",
    "check_shared_memory",
    "dot_roof_precision",
    "l2_levels",
    "naive_matmul_hbm_bytes",
    "occupancy",
    "program_tiles",
    "shared_memory_budget",
    "shared_memory_bytes",
    "tile_count",
    "tile_efficiency",
    "tile_efficiency_curve",
    "tiled_matmul",
    "wave_efficiency",
    "wave_efficiency_curve",
    "wave_quantization",
    "waves",
]
