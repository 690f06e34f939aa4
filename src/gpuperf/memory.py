"""Memory access: coalescing, the latency + bandwidth transfer model, the bandwidth ladder.

Three models of how bytes move, each small enough to check by hand.

**Coalescing.** DRAM works in bursts: ask for one byte and a whole aligned chunk comes back
(seed 002, pp. 23–25). NVIDIA GPUs move global memory in 32-byte *sectors* grouped into 128-byte
cache lines, and the 32 threads of a warp issue their loads together: when lane i reads element
``offset + i·stride``, the hardware fetches every sector those addresses touch. Consecutive,
aligned fp32 loads need 4 sectors for 128 useful bytes (efficiency 1); shift them by one element
and a fifth sector comes along (0.8, "one nice tile vs two bad tiles"); a stride of 8 or more
fetches one sector per lane (0.125).

**Transfers.** A copy of n bytes takes ``latency + n / bandwidth``, so small transfers are
latency-bound: the effective bandwidth n / time reaches half the peak at n = latency·bandwidth.
:func:`fit_transfer_model` recovers latency and bandwidth from timings. A source that says only
where a link's rate levels off gives less: nvbandwidth's device-local copies on an H100 node are
latency-bound below ~1 MB and "sustain ~1,500 GB/s" from 1 MB on (seed 001 and its translation,
seed 000). If a transfer of n bytes reaches at least a fraction f of the peak, then
t₀ ≤ n(1 − f)/(f·W) and n½ ≤ n(1 − f)/f (:func:`latency_upper_bound`): a plateau bounds n½
from above (n½ ≤ n at f = ½, n/9 at f = 0.9); reading it *as* n½ overstates the fixed cost.

**The ladder.** Registers → shared memory/L1 → L2 → HBM → links off the chip → network →
storage: each level bigger and slower. :func:`bandwidth_ladder` reads every number from the
:class:`~gpuperf.hardware.Chip`; what the chip table does not know (L2 or register bandwidth,
network, storage) the caller passes in, with its source, or it stays ``None``. Two rungs are
new since 2022 and appear when asked for (``cluster_and_tensor_memory=True``): Hopper's
*distributed shared memory* (the CTAs of a thread-block cluster reach one another's shared
memory over the SM-to-SM network; :func:`cluster_shared_memory` counts what one cluster can
address) and Blackwell's *tensor memory* (256 KiB per SM beside the tensor cores, where
``tcgen05`` MMAs keep their accumulators). NVIDIA publishes no bandwidth or latency for either,
so those stay ``None``; the one speed figure it gives for DSMEM is a ratio, "about 7x" faster
than exchanging data through global memory (:data:`gpuperf.hardware.DSMEM_EXCHANGE_SPEEDUP`).

Limits: coalescing ignores L1 caching across warps and the shared-memory bank model; the transfer
model has no pipelining or contention term.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import hardware
from ._validate import (
    MAX_PRODUCT,
    MAX_QUANTITY,
    flag,
    name_string,
    optional,
    positive_float,
    positive_int,
    power_of_two,
    real_array,
)
from .hardware import (
    CLUSTER_SIZE_LIMITS,
    DSMEM_EXCHANGE_SPEEDUP,
    MAX_THREADS_PER_BLOCK,
    TENSOR_MEMORY_PER_SM,
    WARP_SIZE,
    Chip,
)

#: Element sizes a single load instruction can move per thread (1-byte to 128-bit loads).
ELEMENT_BYTES = (1, 2, 4, 8, 16)
#: A 256-bit (32-byte) load per thread: global memory, compute capability 10.0 and later with
#: PTX ISA 8.8 (LLVM NVPTX, PR 139292; :data:`gpuperf.parallelism.WIDE_LOAD_BYTES`). One such
#: lane's access is exactly one 32-byte sector. Accepted by :func:`coalescing`; the explorer's
#: element sizes stay :data:`ELEMENT_BYTES`.
WIDE_ACCESS_BYTES = 32
#: Every per-lane access size :func:`coalescing` counts.
ACCESS_BYTES = (*ELEMENT_BYTES, WIDE_ACCESS_BYTES)


@dataclass(frozen=True)
class Coalescing:
    """The memory transactions of one warp-wide load of element ``offset + lane·stride``.

    ``addresses`` are byte addresses (from an aligned base), ``sectors`` the indices of the
    ``sector_bytes`` sectors touched; ``transactions`` counts those sectors.
    """

    stride: int
    offset: int
    element_bytes: int
    warp_size: int
    sector_bytes: int
    line_bytes: int
    addresses: tuple[int, ...]
    sectors: tuple[int, ...]
    cache_lines: int

    def __post_init__(self) -> None:
        for label in ("stride", "warp_size", "sector_bytes", "line_bytes", "cache_lines"):
            positive_int(label, getattr(self, label), maximum=MAX_PRODUCT)
        positive_int("offset", self.offset, minimum=0, maximum=MAX_PRODUCT)
        if self.element_bytes not in ACCESS_BYTES or isinstance(self.element_bytes, bool):
            raise ValueError(f"element_bytes={self.element_bytes!r} must be one of {ACCESS_BYTES}")
        for label in ("addresses", "sectors"):
            if not isinstance(getattr(self, label), tuple):
                raise TypeError(f"{label}={getattr(self, label)!r} must be a tuple of ints")
        if len(self.addresses) != self.warp_size or not self.sectors:
            raise ValueError(
                f"a warp of {self.warp_size} lanes has {len(self.addresses)} addresses and "
                f"{len(self.sectors)} sectors; need one address per lane and ≥ 1 sector"
            )

    @property
    def transactions(self) -> int:
        return len(self.sectors)

    @property
    def bytes_requested(self) -> int:
        """Bytes the threads asked for: warp_size·element_bytes."""
        return self.warp_size * self.element_bytes

    @property
    def bytes_moved(self) -> int:
        """Bytes the memory system delivers: sectors·sector_bytes."""
        return self.transactions * self.sector_bytes

    @property
    def efficiency(self) -> float:
        """Useful fraction of the bytes moved, in (0, 1]."""
        return self.bytes_requested / self.bytes_moved


def coalescing(
    stride: int = 1,
    offset: int = 0,
    element_bytes: int = 4,
    warp_size: int = WARP_SIZE,
    sector_bytes: int = 32,
    line_bytes: int = 128,
) -> Coalescing:
    """Sectors and cache lines one warp's load touches when lane i reads ``offset + i·stride``.

    ``stride`` and ``offset`` are in elements. fp32: stride 1 → 4 sectors (efficiency 1.0);
    offset 1 → 5 (0.8); stride 2 → 8 (0.5); stride ≥ 8 → 32 (0.125). ``element_bytes`` is what
    one lane loads: an element, or a vector of them — 16 for a 128-bit load, 32
    (:data:`WIDE_ACCESS_BYTES`) for a 256-bit one, which fills one sector per lane at any stride.

    ``stride`` must be ≥ 1: a stride of 0 (every lane reading one element) is a broadcast, served
    by one sector, whose "efficiency" would exceed 1 under this definition, so it is rejected.
    """
    stride = positive_int("stride", stride)
    offset = positive_int("offset", offset, minimum=0)
    if isinstance(element_bytes, bool) or element_bytes not in ACCESS_BYTES:
        raise ValueError(
            f"element_bytes={element_bytes!r} must be one of {', '.join(map(str, ACCESS_BYTES))}"
        )
    element_bytes = int(element_bytes)
    # One address per lane is built below: bound the warp so a typo cannot hang the call.
    warp_size = positive_int("warp_size", warp_size, maximum=MAX_THREADS_PER_BLOCK)
    sector_bytes = power_of_two("sector_bytes", sector_bytes, minimum=element_bytes)
    line_bytes = power_of_two("line_bytes", line_bytes, minimum=sector_bytes)

    addresses = tuple((offset + lane * stride) * element_bytes for lane in range(warp_size))
    # Elements are naturally aligned and element_bytes ≤ sector_bytes (both powers of two), so
    # an element never straddles two sectors: its first byte decides its sector.
    sectors = tuple(sorted({address // sector_bytes for address in addresses}))
    lines = {address // line_bytes for address in addresses}
    return Coalescing(
        stride=stride,
        offset=offset,
        element_bytes=element_bytes,
        warp_size=warp_size,
        sector_bytes=sector_bytes,
        line_bytes=line_bytes,
        addresses=addresses,
        sectors=sectors,
        cache_lines=len(lines),
    )


def _sizes_array(name: str, values: object) -> float | np.ndarray:
    """Non-negative finite byte counts: a scalar stays a float, anything else becomes an array."""
    return real_array(name, values)


def transfer_time(
    n_bytes: float | np.ndarray, bandwidth: float, latency_s: float
) -> float | np.ndarray:
    """Seconds to move ``n_bytes``: latency_s + n_bytes / bandwidth (arrays of sizes accepted)."""
    n_bytes = _sizes_array("n_bytes", n_bytes)
    bandwidth = positive_float("bandwidth", bandwidth)
    latency_s = positive_float("latency_s", latency_s, allow_zero=True)
    return latency_s + n_bytes / bandwidth


def effective_bandwidth(
    n_bytes: float | np.ndarray, bandwidth: float, latency_s: float
) -> float | np.ndarray:
    """Achieved bytes/s for a transfer of ``n_bytes``: n / (latency + n / bandwidth) < bandwidth.

    Zero bytes achieve 0 bytes/s. Computed as bandwidth / (1 + latency·bandwidth / n), which is
    monotone in n even in floating point.
    """
    n_bytes = _sizes_array("n_bytes", n_bytes)
    bandwidth = positive_float("bandwidth", bandwidth)
    latency_s = positive_float("latency_s", latency_s, allow_zero=True)
    with np.errstate(divide="ignore", over="ignore"):  # a few bytes: latency/n → inf → 0 B/s
        result = np.where(
            n_bytes > 0,
            bandwidth / (1 + latency_s * bandwidth / np.where(n_bytes > 0, n_bytes, 1)),
            0.0,
        )
    return float(result) if np.ndim(result) == 0 else result


def half_bandwidth_size(bandwidth: float, latency_s: float) -> float:
    """Bytes at which a transfer reaches half the peak bandwidth: latency_s·bandwidth.

    H2D on an H100 node, ~1.4 µs round trip at ~14 GB/s (seed 001): about 20 kB.
    """
    bandwidth = positive_float("bandwidth", bandwidth)
    latency_s = positive_float("latency_s", latency_s, allow_zero=True)
    return latency_s * bandwidth


def latency_upper_bound(n_bytes: float, bandwidth: float, fraction: float = 0.5) -> float:
    """The largest fixed cost t₀ under which ``n_bytes`` still reach ``fraction`` of ``bandwidth``.

    From n / (t₀ + n/W) ≥ f·W: t₀ ≤ n(1 − f) / (f·W), and so n½ = t₀·W ≤ n(1 − f)/f. Use it when
    a source reports where a rate levels off rather than a fitted latency: "full speed from 1 MB"
    at f = 0.9 bounds n½ by 111 kB, at f = ½ by 1 MB. An upper bound, never an estimate.
    """
    n_bytes = positive_float("n_bytes", n_bytes)
    bandwidth = positive_float("bandwidth", bandwidth)
    fraction = positive_float("fraction", fraction, maximum=1.0)
    return n_bytes * (1 - fraction) / (fraction * bandwidth)


def allreduce_algorithm_bandwidth(bus_bandwidth: float, ranks: int) -> float:
    """Algorithm bandwidth of an all-reduce from its bus bandwidth: busbw · p / (2(p − 1)).

    NCCL's tests report two rates for a collective of S bytes over p ranks that takes t seconds
    (nccl-tests, doc/PERFORMANCE.md): the *algorithm bandwidth* algbw = S / t, the rate at which
    the message itself moves, and the *bus bandwidth* busbw = algbw · 2(p − 1)/p, the rate each
    rank's link carries in a ring all-reduce (every rank sends and receives 2(p − 1)/p · S bytes).
    busbw is comparable with the link's speed; algbw is the one that gives the time, t = S / algbw,
    so the half-bandwidth size of an all-reduce is t₀ · algbw. For 8 ranks algbw = busbw · 4/7; as
    p grows it tends to busbw / 2. ``ranks`` must be an integer ≥ 2.
    """
    bus_bandwidth = positive_float("bus_bandwidth", bus_bandwidth)
    ranks = positive_int("ranks", ranks, minimum=2)
    return bus_bandwidth * ranks / (2 * (ranks - 1))


@dataclass(frozen=True)
class TransferModel:
    """time_s = latency_s + n_bytes / bandwidth, fitted to measurements.

    ``latency_clipped`` is True when the unconstrained least-squares intercept came out negative
    (noise on timings that are all bandwidth-bound) and the fit was redone through the origin.
    """

    latency_s: float
    bandwidth: float
    latency_clipped: bool = False

    def __post_init__(self) -> None:
        # Fitted values: checked for sign and finiteness, not for the arguments' magnitude range.
        latency = positive_float("latency_s", self.latency_s, True, MAX_QUANTITY, bounded=False)
        object.__setattr__(self, "latency_s", latency)
        bandwidth = positive_float("bandwidth", self.bandwidth, False, MAX_QUANTITY, bounded=False)
        object.__setattr__(self, "bandwidth", bandwidth)
        object.__setattr__(self, "latency_clipped", flag("latency_clipped", self.latency_clipped))

    @property
    def half_bandwidth_bytes(self) -> float:
        return self.latency_s * self.bandwidth

    def time_s(self, n_bytes: float | np.ndarray) -> float | np.ndarray:
        return transfer_time(n_bytes, self.bandwidth, self.latency_s)

    def effective_bandwidth(self, n_bytes: float | np.ndarray) -> float | np.ndarray:
        return effective_bandwidth(n_bytes, self.bandwidth, self.latency_s)


def fit_transfer_model(n_bytes: object, times_s: object) -> TransferModel:
    """Least-squares fit of t = latency + n / bandwidth to measured (size, time) pairs.

    Needs at least two distinct sizes. A negative fitted latency is clipped to 0 and the
    bandwidth refitted through the origin (``latency_clipped=True``); a slope ≤ 0 (time not
    growing with size) raises ``ValueError``.
    """
    sizes = np.atleast_1d(_sizes_array("n_bytes", n_bytes))
    times = np.atleast_1d(_sizes_array("times_s", times_s))
    if sizes.ndim != 1 or sizes.shape != times.shape:
        raise ValueError(
            f"n_bytes and times_s must be 1-D and the same length, got shapes "
            f"{sizes.shape} and {times.shape}"
        )
    if np.unique(sizes).size < 2:
        raise ValueError(
            f"n_bytes={sizes.tolist()!r} must hold at least 2 distinct sizes to fit "
            "latency and bandwidth"
        )
    design = np.column_stack([np.ones_like(sizes), sizes])
    (intercept, slope), *_ = np.linalg.lstsq(design, times, rcond=None)
    clipped = False
    if intercept < 0:
        clipped = True
        intercept = 0.0
        slope = float(sizes @ times / (sizes @ sizes))
    if not slope > 0:
        raise ValueError(
            f"fitted seconds per byte={slope!r} must be > 0: times_s do not grow with n_bytes"
        )
    return TransferModel(float(intercept), float(1 / slope), clipped)


@dataclass(frozen=True)
class Level:
    """One rung of the memory ladder. ``None`` means the chip table does not know the number."""

    name: str
    capacity_bytes: float | None
    bandwidth_bytes_per_s: float | None
    source: str

    def __post_init__(self) -> None:
        name_string("name", self.name)
        name_string("source", self.source)
        for label in ("capacity_bytes", "bandwidth_bytes_per_s"):
            object.__setattr__(self, label, optional(label, getattr(self, label), positive_float))

    @property
    def rung(self) -> str:
        """The level without the chip's part: ``"HBM"`` for ``"HBM (HBM2e)"``."""
        return self.name.split(" (", 1)[0]

    @property
    def part(self) -> str | None:
        """The chip's own part at this level (``"HBM2e"``, ``"NVLink 3 (12 links)"``), if named."""
        _, _, rest = self.name.partition(" (")
        return rest[:-1] if rest.endswith(")") else None


def _optional(name: str, value: float | None) -> float | None:
    return None if value is None else positive_float(name, value)


def bandwidth_ladder(
    chip: str | Chip,
    *,
    l2_bandwidth: float | None = None,
    register_bandwidth: float | None = None,
    host_bandwidth: float | None = None,
    network_bandwidth: float | None = None,
    storage_bandwidth: float | None = None,
    cluster_and_tensor_memory: bool = False,
) -> tuple[Level, ...]:
    """The memory ladder of ``chip``, closest to the math units first.

    Levels: registers, shared memory/L1, L2 (GPUs only), HBM, chip-to-chip (NVLink / ICI), host
    link (PCIe), network, storage. Capacities are aggregate over the chip (registers: 4 bytes ×
    registers_per_sm × SMs; shared memory / L1: the whole unified SRAM of each SM, 192 KiB on an
    A100 and 256 KiB on an H100, of which a kernel can claim at most the carve-out). Off-chip
    levels are ordered by typical speed; a 400 Gb/s NIC can outrun an old PCIe link, so the order
    is the usual one, not a sort. ``host_bandwidth``
    overrides the datasheet host link (e.g. a measured 14.2 GB/s). A TPU has no SM levels.

    ``cluster_and_tensor_memory=True`` adds two rungs on every GPU, with ``None`` where the chip
    lacks them: **tensor memory** after the registers (lanes × columns × 4 B per SM × SMs,
    :data:`gpuperf.hardware.TENSOR_MEMORY_PER_SM`), and **distributed shared memory** after
    shared memory, whose capacity is what *one cluster* addresses (largest portable cluster ×
    shared memory per block, :func:`cluster_shared_memory`): it is the same SRAM as the rung
    above, reached from another SM. Their bandwidths are ``None``: not published.
    """
    found = hardware.chip(chip)
    register_bandwidth = _optional("register_bandwidth", register_bandwidth)
    l2_bandwidth = _optional("l2_bandwidth", l2_bandwidth)
    host_bandwidth = _optional("host_bandwidth", host_bandwidth)
    network_bandwidth = _optional("network_bandwidth", network_bandwidth)
    storage_bandwidth = _optional("storage_bandwidth", storage_bandwidth)
    new_rungs = flag("cluster_and_tensor_memory", cluster_and_tensor_memory)
    given = "given by the caller"
    unknown = "not in the chip table"
    levels: list[Level] = []
    if found.is_gpu:
        assert found.registers_per_sm and found.l1_shared_memory_per_sm_bytes
        levels.append(
            Level(
                "registers",
                float(found.registers_per_sm * 4 * found.sm_count),
                register_bandwidth,
                "capacity: registers_per_sm × 4 B × SMs (hardware table); bandwidth "
                + (given if register_bandwidth is not None else unknown),
            )
        )
        if new_rungs:
            levels.append(_tensor_memory_level(found))
        levels.append(
            Level(
                "shared memory / L1",
                float(found.l1_shared_memory_per_sm_bytes * found.sm_count),
                found.shared_memory_bandwidth(),
                "capacity: unified L1/shared-memory SRAM per SM × SMs (hardware table, CUDA "
                "Programming Guide); bandwidth: SMs × 128 B/clock × boost clock "
                "(Chip.shared_memory_bandwidth)",
            )
        )
        if new_rungs:
            levels.append(_distributed_shared_memory_level(found))
    if found.l2_bytes is not None or l2_bandwidth is not None:
        levels.append(
            Level(
                "L2",
                None if found.l2_bytes is None else float(found.l2_bytes),
                l2_bandwidth,
                "capacity: hardware table; bandwidth "
                + (given if l2_bandwidth is not None else unknown),
            )
        )
    levels.append(
        Level(
            f"HBM ({found.memory_type})",
            found.hbm_bytes,
            found.hbm_bandwidth,
            "hardware table (datasheet)",
        )
    )
    levels.append(
        Level(
            f"chip-to-chip ({found.interconnect or 'none'})",
            None,
            found.interconnect_bandwidth,
            "hardware table, per direction" if found.interconnect_bandwidth else unknown,
        )
    )
    host = host_bandwidth if host_bandwidth is not None else found.host_link_bandwidth
    levels.append(
        Level(
            f"host link ({found.host_link})",
            None,
            host,
            given
            if host_bandwidth is not None
            else ("hardware table, per direction" if host is not None else unknown),
        )
    )
    levels.append(
        Level("network", None, network_bandwidth, given if network_bandwidth else unknown)
    )
    levels.append(
        Level("storage", None, storage_bandwidth, given if storage_bandwidth else unknown)
    )
    return tuple(levels)


_NOT_PUBLISHED = "bandwidth and latency: not published by NVIDIA"


def _tensor_memory_level(found: Chip) -> Level:
    cc = found.compute_capability
    if cc not in TENSOR_MEMORY_PER_SM:
        # Data-center Blackwell (10.x) has it; 10.3's size is not in the table. Others have none.
        if cc is not None and cc[0] == 10:
            return Level("tensor memory", None, None, f"not in the chip table for {found.name}")
        return Level("tensor memory (none)", None, None, f"no tensor memory on {found.name}")
    lanes, columns, source = TENSOR_MEMORY_PER_SM[cc]
    assert found.sm_count
    return Level(
        "tensor memory",
        float(lanes * columns * 4 * found.sm_count),
        None,
        f"capacity: {lanes} lanes × {columns} columns × 4 B per SM × SMs ({source}); "
        + _NOT_PUBLISHED,
    )


def _distributed_shared_memory_level(found: Chip) -> Level:
    cc = found.compute_capability
    if cc not in CLUSTER_SIZE_LIMITS:
        # Clusters exist from compute capability 9.0 on; limits are sourced for 9.0 and 10.0.
        if cc is not None and cc >= (9, 0):
            return Level(
                "distributed shared memory",
                None,
                None,
                f"cluster limits of compute capability {cc[0]}.{cc[1]} not in the chip table",
            )
        return Level(
            "distributed shared memory (none)",
            None,
            None,
            f"no thread-block clusters on {found.name} (compute capability below 9.0)",
        )
    cluster = cluster_shared_memory(found)
    speedup, speedup_source = DSMEM_EXCHANGE_SPEEDUP
    return Level(
        "distributed shared memory",
        float(cluster.total_bytes),
        None,
        f"capacity: what one cluster addresses, {cluster.cluster_size} CTAs (largest portable "
        f"cluster, {cluster.source}) × shared memory per block; {_NOT_PUBLISHED}, which reports "
        f"data exchange about {speedup:g}× faster than through global memory ({speedup_source})",
    )


@dataclass(frozen=True)
class ClusterSharedMemory:
    """Shared memory one thread-block cluster can address through distributed shared memory."""

    chip_name: str
    cluster_size: int
    per_cta_bytes: int
    portable_limit: int
    non_portable_limit: int
    source: str

    def __post_init__(self) -> None:
        name_string("chip_name", self.chip_name)
        name_string("source", self.source)
        positive_int("portable_limit", self.portable_limit)
        positive_int("non_portable_limit", self.non_portable_limit, self.portable_limit)
        positive_int("cluster_size", self.cluster_size, 1, self.non_portable_limit)
        positive_int("per_cta_bytes", self.per_cta_bytes)

    @property
    def total_bytes(self) -> int:
        """cluster_size × the largest shared memory one CTA (block) may allocate."""
        return self.cluster_size * self.per_cta_bytes

    @property
    def portable(self) -> bool:
        """Whether the cluster launches without opting in to a non-portable size."""
        return self.cluster_size <= self.portable_limit

    @property
    def remote_fraction(self) -> float:
        """Share of the cluster's shared memory that lives on other SMs: (n − 1)/n."""
        return (self.cluster_size - 1) / self.cluster_size


def cluster_shared_memory(
    chip: str | Chip, cluster_size: int | None = None
) -> ClusterSharedMemory:
    """Shared memory a cluster of ``cluster_size`` CTAs (one per SM) reaches on ``chip``.

    Default: the largest portable cluster (8 CTAs). Up to 16 needs the non-portable opt-in
    (Hopper and Blackwell tuning guides). A chip without sourced cluster limits (before compute
    capability 9.0 there are no clusters) raises ``ValueError`` naming the chips that have them.
    """
    found = hardware.chip(chip)
    limits = CLUSTER_SIZE_LIMITS.get(found.compute_capability or (0, 0))
    if limits is None:
        with_limits = [
            c.name for c in hardware.chips() if c.compute_capability in CLUSTER_SIZE_LIMITS
        ]
        raise ValueError(
            f"chip={found.name!r} (compute capability {found.compute_capability}) has no "
            f"sourced thread-block cluster limits; chips that do: {', '.join(with_limits)}"
        )
    portable, non_portable, source = limits
    size = (
        portable
        if cluster_size is None
        else positive_int("cluster_size", cluster_size, 1, non_portable)
    )
    assert found.shared_memory_per_block_bytes
    return ClusterSharedMemory(
        chip_name=found.name,
        cluster_size=size,
        per_cta_bytes=found.shared_memory_per_block_bytes,
        portable_limit=portable,
        non_portable_limit=non_portable,
        source=source,
    )


__all__ = [
    "ACCESS_BYTES",
    "ELEMENT_BYTES",
    "WIDE_ACCESS_BYTES",
    "ClusterSharedMemory",
    "Coalescing",
    "Level",
    "TransferModel",
    "allreduce_algorithm_bandwidth",
    "bandwidth_ladder",
    "cluster_shared_memory",
    "coalescing",
    "effective_bandwidth",
    "fit_transfer_model",
    "half_bandwidth_size",
    "latency_upper_bound",
    "transfer_time",
]
