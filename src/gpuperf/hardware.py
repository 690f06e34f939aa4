"""The one table of accelerators every number in the course comes from.

Each row is a frozen :class:`Chip` holding what the calculators need: dense peak FLOP/s per
precision, memory size and bandwidth, L2, SM count and clock, the per-SM limits that decide
occupancy (shared memory, registers, threads, blocks), compute capability, and the links to the
host and to other chips. Every row names its sources (keys of the book's ``references.bib``);
where a source is secondary or two sources disagree, the row's ``notes`` say so and name the
other value. Nothing is filled in by guessing: a field no source gives is ``None`` (or the
precision is absent), and the row says so.

Conventions, stated once:

* **Dense peaks.** Datasheets headline 2:4 *sparse* tensor-core numbers (H100 "1979 TFLOPS" BF16);
  this table stores the dense half. ``fp32`` is the CUDA-core (non-tensor) rate, ``tf32``/``fp16``/
  ``bf16``/``fp8``/``int8``/``fp6``/``fp4`` are tensor-core rates, and ``fp64`` is the highest
  dense FP64 rate (the FP64 tensor core where one exists, as on A100/H100). GeForce/A10G parts
  list the rate with FP32 accumulation, the one training uses (the RTX 5090 row is the exception
  its notes explain).
* **Non-tensor peaks.** Work that is not a matmul (a dot product, an elementwise op, softmax's
  arithmetic) runs on the CUDA cores (vector units), not the tensor cores.
  ``Chip.peak_flops(p, tensor_cores=False)`` and ``Chip.ridge_point(p, tensor_cores=False)``
  place it against that roof: ``vector_flops_per_s`` holds the sourced non-tensor rates (H100
  SXM fp16/bf16 133.8 TFLOP/s, A100 fp16 78 and bf16 39), and ``fp32`` there is the ``fp32``
  column, which is already the CUDA-core rate. A precision with no sourced non-tensor rate
  raises ``ValueError`` naming the ones the chip has; ``peak_flops(p)`` alone is unchanged.
* **Memory capacity** (``hbm_bytes``, the field every calculator reads) is what the device
  exposes, in bytes: **nvidia-smi's ``memory.total``** (MiB × 2²⁰), the driver's figure, which is
  the same for every driver and card of a model. It is not the marketed size
  (``hbm_marketed_bytes``: the "80 GB" on the box, as decimal bytes; vendors' "GB" is decimal on
  some parts and nearly GiB on others) and it is not what a CUDA program may allocate:
  ``cudaDeviceProp.totalGlobalMem`` (torch's ``total_memory``, stored as ``hbm_cuda_bytes``
  where recorded) is 470–717 MiB smaller on an H100, H200 or B200, varies with the driver, and a
  context and its workspaces take more. Budget a real run from ``torch.cuda.mem_get_info()``.
  Each row's ``hbm_provenance`` says which figure it holds and where it was read; a row whose
  nvidia-smi total was not found says so there and holds the figure it has.
* **Bandwidth** is decimal bytes per second; link bandwidths are *per direction* (NVIDIA quotes
  NVLink and PCIe as the sum of both directions).
* **Derived values are methods**, not columns: :meth:`Chip.ridge_point`,
  :meth:`Chip.shared_memory_bandwidth`, :meth:`Chip.pairwise_link_bandwidth`.
* **Shared memory has two sizes.** ``shared_memory_per_sm_bytes`` is the largest carve-out a
  program can ask for; ``l1_shared_memory_per_sm_bytes`` is the whole unified L1/shared-memory
  SRAM of one SM (CUDA C Programming Guide, compute-capability tables), which L1 always keeps a
  share of: 164 of 192 KB on an A100, 228 of 256 KB on an H100.
* **The SM model.** SM count, clock and the per-SM limits come together or not at all
  (``Chip.is_gpu`` is true when they are present). A TPU has none; an AMD Instinct GPU has
  compute units (CUs), not SMs, and its row keeps the CU count in ``notes``; a Blackwell Ultra
  row (B300, GB300) lacks a sourced clock and compute-capability-10.3 limits. Such rows leave
  the SM fields ``None`` and say why in ``no_sm_model``: a calculator that needs SMs raises
  ``ValueError`` with that reason (:meth:`Chip.require_sm_model`) instead of computing from
  another chip's numbers. ``compute_capability`` may be given without the SM model (B300: 10.3).
* **TPU links.** A TPU's ICI row stores the number of links and the bandwidth of one link per
  direction (``interconnect_links`` × ``interconnect_link_bandwidth`` = ``interconnect_bandwidth``,
  checked). Two chips exchanging data use the one link between them; a GPU reaches any GPU of its
  node through the NVSwitches with all its NVLink bandwidth, so its per-link fields are ``None``.
* **Names.** :func:`chip` takes a row's name or an alias, case-insensitively, or a driver's
  device name; :func:`chip_from_device_name` maps the exact strings drivers report
  (``torch.cuda.get_device_name()``) to their own row and returns ``None`` for any other
  string — a sibling (H100 NVL for H100 SXM, a MIG slice for the whole GPU) is never substituted.

A precision a chip lacks (bf16 on a T4, fp8 on an A100) is absent from its row, and asking for it
raises ``ValueError``. Unknown names raise ``KeyError`` listing the known ones.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ._validate import (
    choice,
    flag,
    name_string,
    optional,
    positive_float,
    positive_int,
    show,
)
from .units import GB, PRECISIONS, TB, GiB, KiB, MiB, check_precision

#: Shared memory delivers 32 banks × 4 B per clock per SM on every NVIDIA generation in the table
#: (measured 128 B/clk/SM on V100–H100 by te42kyfo/gpu-benches).
SHARED_MEMORY_BYTES_PER_CLOCK_PER_SM = 128
WARP_SIZE = 32
MAX_THREADS_PER_BLOCK = 1024
MAX_REGISTERS_PER_THREAD = 255

#: Dense 16-bit (fp16/bf16) tensor-core FLOP per clock per SM, by compute capability, for the SM
#: designs whose per-tensor-core rate is published on its own, not only worked back from a peak:
#: (FLOP/clk/SM, source key). Volta: 8 tensor cores × 64 FMA/clk (Volta whitepaper); Ampere
#: GA100: 4 × 256 FMA/clk (A100: 432 tensor cores × 256 FMA × 2 × 1.41 GHz = 312 TFLOP/s);
#: Hopper: 4 × 512 FMA/clk (H100 SXM: 528 × 512 × 2 × 1.83 GHz = 989.4 TFLOP/s), both in STAS.
#: Other parts (T4, A10G, L4, RTX 4090, B200) have no entry: their rate is only derived from the
#: peak and a clock, see :func:`gpuperf.parallelism.peak_decomposition`.
TENSOR_FLOP_PER_CLOCK_PER_SM: Mapping[tuple[int, int], tuple[int, str]] = MappingProxyType(
    {(7, 0): (1024, "V100-WP"), (8, 0): (2048, "STAS"), (9, 0): (4096, "STAS")}
)

#: Blackwell's tensor memory, per SM (one CTA's allocation space): lanes × columns of 32-bit
#: cells, by compute capability, with the source. PTX ISA, "Tensor Memory": 128 lanes and 512
#: columns per CTA on sm_100, allocated in whole columns (powers of two from 32): 256 KiB.
#: Compute capability 10.3 (B300, GB300) runs tcgen05 too (NV-FAM), so it has tensor memory, but
#: no source read gives its size: it is left out rather than assumed equal to 10.0's.
TENSOR_MEMORY_PER_SM: Mapping[tuple[int, int], tuple[int, int, str]] = MappingProxyType(
    {(10, 0): (128, 512, "PTX-ISA")}
)

#: Special-function (MUFU: exp2, log2, rcp, sin, …) throughput, the rate softmax's exponentials
#: run at, where a source states it: (operations/s, source).
#:
#: * H100-SXM: FlashAttention-3 §3.1 gives "3.9 TFLOPS of special functions" against 989 TFLOPS
#:   of FP16 matmul (16 per clock per SM at the 1.83 GHz of the tensor peak).
#: * GB200 and B200: 5 × 10¹² exponentials/s, and GB300 and B300: 10.7 × 10¹², from NVIDIA's
#:   GB300-vs-GB200 table ("Attention acceleration (SFU EX2)") as Verda reproduces it (VERDA,
#:   secondary); NVIDIA's softmax blog (NV-SMX) states the doubling on Blackwell Ultra. The HGX
#:   parts take their NVL72 sibling's figure (same SM design). Cross-check: the FA4 authors say
#:   Blackwell kept Hopper's SFU count, and 16/clk/SM × 152 SMs × 2.062 GHz (GB200) = 5.0 × 10¹²;
#:   on an HGX B200 (148 SMs, 1.965 GHz) the same count gives 4.65 × 10¹², 7 % under the table.
SPECIAL_FUNCTION_OPS_PER_S: Mapping[str, tuple[float, str]] = MappingProxyType(
    {
        "H100-SXM": (3.9e12, "FA3"),
        "B200": (5e12, "VERDA"),
        "GB200": (5e12, "VERDA"),
        "B300": (10.7e12, "VERDA"),
        "GB300": (10.7e12, "VERDA"),
    }
)

#: Thread-block clusters, by compute capability: (largest portable cluster, largest cluster a
#: kernel may opt in to with ``cudaFuncAttributeNonPortableClusterSizeAllowed``, source), in
#: CTAs. The CTAs of a cluster run on SMs of one GPC and read, write and do atomics on one
#: another's shared memory (distributed shared memory) over the SM-to-SM network. Both tuning
#: guides: "The maximum portable cluster size supported is 8; however, NVIDIA Hopper H100 [and
#: Blackwell B200] GPU allows for a nonportable cluster size of 16 by opting in".
#: Compute capability 10.3 (B300, GB300) is left out: no source read states its limits.
CLUSTER_SIZE_LIMITS: Mapping[tuple[int, int], tuple[int, int, str]] = MappingProxyType(
    {(9, 0): (8, 16, "HOPPER-TG"), (10, 0): (8, 16, "BLACKWELL-TG")}
)

#: The one figure NVIDIA gives for distributed shared memory's speed, a ratio and not a rate:
#: "Compared to using global memory, DSMEM accelerates data exchange between thread blocks by
#: about 7x" (H100-WP). NVIDIA publishes no DSMEM bandwidth or latency.
DSMEM_EXCHANGE_SPEEDUP = (7.0, "H100-WP")

_T, _G = 1e12, 1e9

#: The SM-model fields: all present (an NVIDIA GPU with a sourced SM model) or all ``None``.
_SM_FIELDS = (
    "sm_count",
    "boost_clock_hz",
    "shared_memory_per_sm_bytes",
    "shared_memory_per_block_bytes",
    "registers_per_sm",
    "max_threads_per_sm",
    "max_blocks_per_sm",
    "l1_shared_memory_per_sm_bytes",
)


def _frozen_rates(label: str, rates: object, *, empty_ok: bool) -> Mapping[str, float]:
    if not isinstance(rates, Mapping) or (not rates and not empty_ok):
        raise ValueError(
            f"{label}={show(rates)} must be a{'' if empty_ok else ' non-empty'} mapping of "
            "precision → FLOP/s"
        )
    return MappingProxyType(
        {
            check_precision(p, f"{label} key"): positive_float(f"{label}[{p!r}]", v)
            for p, v in dict(rates).items()
        }
    )


@dataclass(frozen=True)
class Chip:
    """One accelerator. All sizes in bytes, rates in FLOP/s or bytes/s, clocks in Hz.

    The SM fields are ``None`` where the row has no SM model (TPUs, AMD CUs, parts whose SM
    details are not sourced; ``no_sm_model`` says why); the per-link ICI fields are ``None`` for
    GPUs. ``hbm_bytes`` is the capacity the device reports (see the module docstring).
    """

    name: str
    vendor: str
    architecture: str
    peak_flops_per_s: Mapping[str, float] = field(hash=False)
    memory_type: str
    hbm_bytes: float
    hbm_bandwidth: float
    l2_bytes: float | None
    host_link: str
    host_link_bandwidth: float | None
    interconnect: str | None
    interconnect_bandwidth: float | None
    sources: tuple[str, ...]
    sm_count: int | None = None
    boost_clock_hz: float | None = None
    shared_memory_per_sm_bytes: int | None = None
    shared_memory_per_block_bytes: int | None = None
    registers_per_sm: int | None = None
    max_threads_per_sm: int | None = None
    max_blocks_per_sm: int | None = None
    compute_capability: tuple[int, int] | None = None
    l1_shared_memory_per_sm_bytes: int | None = None
    interconnect_links: int | None = None
    interconnect_link_bandwidth: float | None = None
    notes: str = ""
    hbm_marketed_bytes: float | None = None
    hbm_cuda_bytes: float | None = None
    hbm_provenance: str = ""
    vector_flops_per_s: Mapping[str, float] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )
    no_sm_model: str = ""

    def __post_init__(self) -> None:
        # Every field is checked here, so Chip.replace(hbm_bandwidth=0) fails at once rather
        # than as a ZeroDivisionError three calls later.
        for label in ("name", "vendor", "architecture", "memory_type", "host_link"):
            name_string(label, getattr(self, label))
        optional("interconnect", self.interconnect, name_string)
        for label in ("notes", "hbm_provenance", "no_sm_model"):
            if not isinstance(getattr(self, label), str):
                raise TypeError(f"{label}={show(getattr(self, label))} must be a string")
        # Freeze the peak tables so a Chip cannot be edited through them.
        peaks = _frozen_rates("peak_flops_per_s", self.peak_flops_per_s, empty_ok=False)
        object.__setattr__(self, "peak_flops_per_s", peaks)
        # (The table's rows also keep each non-tensor rate ≤ the peak at that precision, checked
        # in the tests, not here: a what-if copy with a measured peak may well go below it.)
        vector = _frozen_rates("vector_flops_per_s", self.vector_flops_per_s, empty_ok=True)
        object.__setattr__(self, "vector_flops_per_s", vector)
        object.__setattr__(self, "hbm_bytes", positive_float("hbm_bytes", self.hbm_bytes))
        object.__setattr__(
            self, "hbm_bandwidth", positive_float("hbm_bandwidth", self.hbm_bandwidth)
        )
        for label in (
            "l2_bytes",
            "host_link_bandwidth",
            "interconnect_bandwidth",
            "hbm_marketed_bytes",
            "hbm_cuda_bytes",
        ):
            object.__setattr__(self, label, optional(label, getattr(self, label), positive_float))
        if self.hbm_cuda_bytes is not None and self.hbm_cuda_bytes > self.hbm_bytes:
            raise ValueError(
                f"hbm_cuda_bytes={self.hbm_cuda_bytes:g} must be ≤ hbm_bytes={self.hbm_bytes:g}: "
                "CUDA never sees more memory than the driver reports"
            )
        if not isinstance(self.sources, tuple | list) or not all(
            isinstance(x, str) for x in self.sources
        ):
            raise TypeError(f"sources={show(self.sources)} must be a tuple of reference keys")
        object.__setattr__(self, "sources", tuple(self.sources))
        self._check_gpu_fields()
        self._check_links()

    def _check_links(self) -> None:
        links, per_link = self.interconnect_links, self.interconnect_link_bandwidth
        if (links is None) != (per_link is None):
            raise ValueError(
                f"{self.name}: interconnect_links={show(links)} and interconnect_link_bandwidth="
                f"{show(per_link)} must both be given or both be None"
            )
        if links is None:
            return
        links = positive_int("interconnect_links", links)
        per_link = positive_float("interconnect_link_bandwidth", per_link)
        object.__setattr__(self, "interconnect_links", links)
        object.__setattr__(self, "interconnect_link_bandwidth", per_link)
        total = self.interconnect_bandwidth
        if self.interconnect is None or total is None:
            raise ValueError(
                f"{self.name}: interconnect_links={links} needs an interconnect and its "
                f"interconnect_bandwidth (got {show(self.interconnect)}, {show(total)})"
            )
        if abs(links * per_link - total) > 1e-9 * total:
            raise ValueError(
                f"{self.name}: interconnect_links × interconnect_link_bandwidth = "
                f"{links} × {per_link:g} = {links * per_link:g} B/s must equal "
                f"interconnect_bandwidth={total:g} B/s"
            )

    def _check_gpu_fields(self) -> None:
        cc = self.compute_capability
        if cc is not None:
            if not isinstance(cc, tuple) or len(cc) != 2:
                raise ValueError(f"compute_capability={show(cc)} must be a (major, minor) tuple")
            object.__setattr__(
                self,
                "compute_capability",
                (positive_int("compute capability major", cc[0]),
                 positive_int("compute capability minor", cc[1], minimum=0)),
            )  # fmt: skip
        missing = [label for label in _SM_FIELDS if getattr(self, label) is None]
        if not missing and cc is None:
            missing = ["compute_capability"]
        if missing and (len(missing) < len(_SM_FIELDS) or missing == ["compute_capability"]):
            raise ValueError(
                f"{self.name}: a GPU's SM model needs all of {', '.join(_SM_FIELDS)} and "
                f"compute_capability (a row without one: none of the first eight); missing: "
                f"{', '.join(missing)}"
            )
        if missing:
            return
        for label in _SM_FIELDS[2:]:
            object.__setattr__(self, label, positive_int(label, getattr(self, label)))
        object.__setattr__(self, "sm_count", positive_int("sm_count", self.sm_count))
        object.__setattr__(
            self, "boost_clock_hz", positive_float("boost_clock_hz", self.boost_clock_hz)
        )
        if self.shared_memory_per_block_bytes > self.shared_memory_per_sm_bytes:
            raise ValueError(
                f"shared_memory_per_block_bytes={self.shared_memory_per_block_bytes} must be ≤ "
                f"shared_memory_per_sm_bytes={self.shared_memory_per_sm_bytes}"
            )
        if self.shared_memory_per_sm_bytes > self.l1_shared_memory_per_sm_bytes:
            raise ValueError(
                f"shared_memory_per_sm_bytes={self.shared_memory_per_sm_bytes} must be ≤ "
                f"l1_shared_memory_per_sm_bytes={self.l1_shared_memory_per_sm_bytes} (the "
                "carve-out is part of the unified L1/shared-memory SRAM)"
            )

    @property
    def precisions(self) -> tuple[str, ...]:
        """Precisions this chip has a dense peak for, widest first."""
        return tuple(self.peak_flops_per_s)

    @property
    def vector_precisions(self) -> tuple[str, ...]:
        """Precisions with a sourced non-tensor (CUDA-core / vector-unit) peak, widest first;
        ``fp32`` counts when the chip lists it (that column is the non-tensor rate)."""
        return tuple(
            p
            for p in PRECISIONS
            if p in self.vector_flops_per_s or (p == "fp32" and "fp32" in self.peak_flops_per_s)
        )

    @property
    def is_gpu(self) -> bool:
        """True when the row has the SM model (SM count, clock, per-SM limits) — every NVIDIA
        row whose SM details are sourced. TPUs, AMD CUs and B300/GB300 are False."""
        return self.sm_count is not None

    @property
    def sm_arch(self) -> str | None:
        """``'sm_90'`` for compute capability 9.0; ``None`` without a compute capability."""
        if self.compute_capability is None:
            return None
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"

    @property
    def hbm_mib(self) -> float:
        """``hbm_bytes`` in MiB, the unit nvidia-smi prints (81,559 for an H100 SXM)."""
        return self.hbm_bytes / MiB

    def require_sm_model(self, what: str = "this calculation") -> Chip:
        """This chip, or ``ValueError`` saying why the row has no SMs for ``what``."""
        name_string("what", what)
        if self.is_gpu:
            return self
        reason = self.no_sm_model or "the table gives it no SM count, clock or per-SM limits"
        raise ValueError(
            f"{self.name} has no SMs in the table ({reason}); {what} needs an SM count, clock "
            "and per-SM limits — choose an NVIDIA GPU whose row has them"
        )

    def peak_flops(self, precision: str, tensor_cores: bool = True) -> float:
        """Dense peak FLOP/s at ``precision``; ``ValueError`` if the chip has no such rate.

        ``tensor_cores=False`` gives the non-tensor (CUDA-core / vector-unit) rate, the roof of
        work that is not a matmul; ``fp32`` is the same either way (that column is the
        CUDA-core rate), other precisions need a sourced ``vector_flops_per_s`` entry.
        """
        check_precision(precision)
        if flag("tensor_cores", tensor_cores):
            try:
                return self.peak_flops_per_s[precision]
            except KeyError:
                raise ValueError(
                    f"precision={precision!r}: {self.name} has no {precision} support in this "
                    f"table (it lists: {', '.join(self.precisions)})"
                ) from None
        if precision in self.vector_flops_per_s:
            return self.vector_flops_per_s[precision]
        if precision == "fp32" and "fp32" in self.peak_flops_per_s:
            return self.peak_flops_per_s["fp32"]
        known = ", ".join(self.vector_precisions) or "none"
        raise ValueError(
            f"precision={precision!r}: {self.name} has no sourced non-tensor (CUDA-core) "
            f"{precision} rate in this table (non-tensor rates it has: {known})"
        )

    def ridge_point(
        self, precision: str, bandwidth: float | None = None, tensor_cores: bool = True
    ) -> float:
        """Machine balance in FLOP/byte: peak FLOP/s over a bandwidth in bytes/s.

        ``bandwidth`` is the link the bytes cross: ``None`` (the default) means this chip's HBM;
        pass another level's bytes/s (L2, PCIe, NVLink) for that level's ridge. It must be a
        finite number > 0: 0 is an error, never a silent fall-back to HBM. ``tensor_cores=False``
        uses the non-tensor peak (:meth:`peak_flops`), the ridge of non-matmul work.
        """
        peak = self.peak_flops(precision, tensor_cores)
        if bandwidth is None:
            return peak / self.hbm_bandwidth
        return peak / positive_float("bandwidth", bandwidth)

    def shared_memory_bandwidth(self) -> float:
        """Aggregate shared-memory bandwidth: SMs × 128 B/clock × boost clock (bytes/s)."""
        self.require_sm_model("shared-memory bandwidth")
        return self.sm_count * SHARED_MEMORY_BYTES_PER_CLOCK_PER_SM * self.boost_clock_hz

    def pairwise_link_bandwidth(self) -> float | None:
        """Bytes/s per direction between this chip and one peer; ``None`` without a link.

        A TPU reaches a torus neighbour over the single ICI link between them
        (``interconnect_link_bandwidth``: 50 GB/s on a v5e, not the 200 GB/s of all four links);
        a GPU reaches any GPU of its node through the NVSwitches with all of its NVLink
        bandwidth (``interconnect_bandwidth``).
        """
        if self.interconnect_link_bandwidth is not None:
            return self.interconnect_link_bandwidth
        return self.interconnect_bandwidth

    def replace(self, **changes: object) -> Chip:
        """A copy with some fields changed: ``chip("v5e").replace(hbm_bandwidth=8.1e11)``."""
        fields = [f.name for f in dataclasses.fields(self)]
        unknown = sorted(set(changes) - set(fields))
        if unknown:
            raise TypeError(
                f"{', '.join(unknown)}: not fields of Chip; fields: {', '.join(fields)}"
            )
        return dataclasses.replace(self, **changes)


def _ampere_like_limits(
    smem_kib: int, block_kib: int, threads: int, blocks: int, l1_smem_kib: int
) -> dict:
    return {
        "l1_shared_memory_per_sm_bytes": l1_smem_kib * KiB,
        "shared_memory_per_sm_bytes": smem_kib * KiB,
        "shared_memory_per_block_bytes": block_kib * KiB,
        "registers_per_sm": 65536,
        "max_threads_per_sm": threads,
        "max_blocks_per_sm": blocks,
    }


# Per-SM limits by compute capability (CUDA Programming Guide, compute-capabilities tables; CUDAPG
# in every GPU row's sources): largest shared-memory carve-out per SM and per block (KiB), threads
# and blocks per SM, and the unified L1/shared-memory SRAM per SM (KiB; V100 128, T4 96, A100 192,
# A10G 128, L4/RTX 4090 128, H100/H200/B200 256; 12.x, RTX 5090: 100/99 KB, 1536 threads, 24
# blocks, 128 KB).
_CC70 = _ampere_like_limits(96, 96, 2048, 32, 128)
_CC75 = _ampere_like_limits(64, 64, 1024, 16, 96)
_CC80 = _ampere_like_limits(164, 163, 2048, 32, 192)
_CC86 = _ampere_like_limits(100, 99, 1536, 16, 128)
_CC89 = _ampere_like_limits(100, 99, 1536, 24, 128)
_CC90 = _ampere_like_limits(228, 227, 2048, 32, 256)
_CC100 = _ampere_like_limits(228, 227, 2048, 32, 256)

# PCIe throughput per lane and direction after encoding, in GB/s (PCI-SIG via the PCIe article).
PCIE_GB_PER_S_PER_LANE: Mapping[int, float] = MappingProxyType(
    {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563, 7: 15.125}
)


def pcie_bandwidth(generation: int, lanes: int = 16) -> float:
    """Theoretical PCIe bandwidth per direction in bytes/s (Gen4 x8 → 15.75e9)."""
    generation = choice("generation", generation, tuple(PCIE_GB_PER_S_PER_LANE))
    lanes = choice("lanes", lanes, (1, 2, 4, 8, 16))
    return PCIE_GB_PER_S_PER_LANE[generation] * lanes * GB


#: NVLink per GPU, both directions summed, as NVIDIA quotes it (bytes/s).
NVLINK_BIDIRECTIONAL: Mapping[str, float] = MappingProxyType(
    {"NVLink 2": 300 * _G, "NVLink 3": 600 * _G, "NVLink 4": 900 * _G, "NVLink 5": 1800 * _G}
)

#: NVLink-C2C between the Grace CPU and the GPU of a Grace Hopper superchip (GH200), both
#: directions summed as NVIDIA quotes it: 900 GB/s, "7× PCIe Gen5" (GH200-DS).
NVLINK_C2C_BIDIRECTIONAL = 900 * _G

#: Node-to-node networks, per direction per port (bytes/s), from seed 001's comparison table.
NETWORK_BANDWIDTH: Mapping[str, float] = MappingProxyType(
    {
        "Ethernet 100G": 100e9 / 8,
        "Ethernet 400G": 400e9 / 8,
        "RoCE 100G": 100e9 / 8,
        "InfiniBand NDR 400G": 400e9 / 8,
        "AWS EFA 100G": 100e9 / 8,
    }
)
_CC120 = _ampere_like_limits(100, 99, 1536, 24, 128)

#: The A100 whitepaper's Table 1 (A100-WP) non-tensor rates, shared by the GA100 rows (same 108
#: SMs at 1.41 GHz): FP16 78 (the SM's special packed-FP16 path, 4× FP32), BF16 39, FP64 9.7.
_GA100_VECTOR = {"fp64": 9.7 * _T, "fp16": 78 * _T, "bf16": 39 * _T}
_GA100_PEAKS = {
    "fp64": 19.5 * _T,
    "fp32": 19.5 * _T,
    "tf32": 156 * _T,
    "fp16": 312 * _T,
    "bf16": 312 * _T,
    "int8": 624 * _T,
}
#: H100 NVL and H200 NVL (PCIe cards with NVLink bridges): NVIDIA's product-page table as third
#: parties reproduce it (NVL-REPRO, secondary), sparse figures halved.
_NVL_PEAKS = {
    "fp64": 60 * _T,
    "fp32": 60 * _T,
    "tf32": 417.5 * _T,
    "fp16": 835.5 * _T,
    "bf16": 835.5 * _T,
    "fp8": 1670.5 * _T,
    "int8": 1670.5 * _T,
}
_CDNA3_PEAKS = {
    "fp64": 163.4 * _T,
    "fp32": 163.4 * _T,
    "tf32": 653.7 * _T,
    "fp16": 1307.4 * _T,
    "bf16": 1307.4 * _T,
    "fp8": 2614.9 * _T,
    "int8": 2614.9 * _T,
}


def _smi(mib: int, where: str) -> dict:
    """The nvidia-smi ``memory.total`` convention: the capacity and where it was read."""
    return {
        "hbm_bytes": mib * MiB,
        "hbm_provenance": f"nvidia-smi memory.total {mib} MiB; {where}",
    }


_CHIPS: tuple[Chip, ...] = (
    Chip(
        name="T4",
        vendor="NVIDIA",
        architecture="Turing",
        peak_flops_per_s={"fp64": 0.254 * _T, "fp32": 8.1 * _T, "fp16": 65 * _T, "int8": 130 * _T},
        vector_flops_per_s={"fp64": 0.254 * _T},
        memory_type="GDDR6",
        hbm_marketed_bytes=16 * GB,
        **_smi(
            15360,
            "DEVICE-OBS (Colab/GCP T4s, code-index ids 39988450416, 8931283041, 575176250 and "
            "more, every driver seen). torch's total_memory varies with the driver, "
            "14930–15109 MiB in the same index (ids 12462193998, 65825155517), so none is stored",
        ),
        hbm_bandwidth=320 * _G,
        l2_bytes=4 * MiB,
        host_link="PCIe Gen3 x16",
        host_link_bandwidth=pcie_bandwidth(3),
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=40,
        boost_clock_hz=1590e6,
        compute_capability=(7, 5),
        sources=("T4-DS", "SYSRQ-T4", "CUDAPG", "CUTLASS", "DEVICE-OBS"),
        notes="No bf16, tf32 or fp8. fp64 derived: 40 SMs × 2 FP64 units × 2 × 1.59 GHz (no "
        "FP64 tensor core, so it is also the non-tensor rate). Clocks fall to ~900 MHz under "
        "sustained tensor load at the 70 W cap.",
        **_CC75,
    ),
    Chip(
        name="V100",
        vendor="NVIDIA",
        architecture="Volta",
        peak_flops_per_s={"fp64": 7.8 * _T, "fp32": 15.7 * _T, "fp16": 125 * _T},
        vector_flops_per_s={"fp64": 7.8 * _T, "fp16": 31.4 * _T},
        memory_type="HBM2",
        hbm_marketed_bytes=32 * GB,
        **_smi(
            32768,
            "DEVICE-OBS (Tesla V100-SXM2-32GB on driver 580.178.04, code-index ids 68680818775, "
            "70663680882; secondary)",
        ),
        hbm_bandwidth=900 * _G,
        l2_bytes=6 * MiB,
        host_link="PCIe Gen3 x16",
        host_link_bandwidth=pcie_bandwidth(3),
        interconnect="NVLink 2 (6 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 2"] / 2,
        sm_count=80,
        boost_clock_hz=1530e6,
        compute_capability=(7, 0),
        sources=("V100-DS", "V100-WP", "A100-WP", "CUDAPG", "CUTLASS", "DEVICE-OBS"),
        notes="SXM2, 32 GB. Tensor cores run fp16 only: no bf16, tf32 or int8 tensor-core rate. "
        "Non-tensor fp16 31.4 TFLOP/s from the A100 whitepaper's Table 1 (V100 column).",
        **_CC70,
    ),
    Chip(
        name="A10G",
        vendor="NVIDIA",
        architecture="Ampere (GA102)",
        peak_flops_per_s={
            "fp64": 0.547 * _T,
            "fp32": 35 * _T,
            "tf32": 35 * _T,
            "fp16": 70 * _T,
            "bf16": 70 * _T,
        },
        vector_flops_per_s={"fp64": 0.547 * _T},
        memory_type="GDDR6",
        hbm_marketed_bytes=24 * GB,
        **_smi(
            23028,
            "DEVICE-OBS (AWS A10G, code-index ids 71624822744, 51766064480, 62036504885; "
            "secondary)",
        ),
        hbm_bandwidth=600 * _G,
        l2_bytes=6 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=80,
        boost_clock_hz=1710e6,
        compute_capability=(8, 6),
        sources=("A10G-AWS", "BASETEN", "A10-DQ", "CUDAPG", "DEVICE-OBS"),
        notes="AWS-only part; fp32 35 and fp16 70 TFLOP/s (FP32 accumulate) are AWS's figures. "
        "bf16 = fp16 and tf32 = fp16/2 as on every GA102; fp64 derived as SMs × 2 × 2 × clock. "
        "SM count and clock are consistent with 35 TFLOP/s but not confirmed by NVIDIA.",
        **_CC86,
    ),
    Chip(
        name="L4",
        vendor="NVIDIA",
        architecture="Ada Lovelace",
        peak_flops_per_s={
            "fp64": 0.473 * _T,
            "fp32": 30.3 * _T,
            "tf32": 60 * _T,
            "fp16": 121 * _T,
            "bf16": 121 * _T,
            "fp8": 242 * _T,
            "int8": 242 * _T,
        },
        vector_flops_per_s={"fp64": 0.473 * _T},
        memory_type="GDDR6",
        hbm_marketed_bytes=24 * GB,
        **_smi(
            23034,
            "DEVICE-OBS (code-index ids 68896918544, 68745356292, 53818531888; secondary)",
        ),
        hbm_bandwidth=300 * _G,
        l2_bytes=48 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=58,
        boost_clock_hz=2040e6,
        compute_capability=(8, 9),
        sources=("L4-DS", "GPUSPECS", "CUDAPG", "CUTLASS", "DEVICE-OBS"),
        notes="fp64 derived as SMs × 2 × 2 × clock.",
        **_CC89,
    ),
    Chip(
        name="L40S",
        vendor="NVIDIA",
        architecture="Ada Lovelace",
        peak_flops_per_s={
            "fp32": 91.6 * _T,
            "tf32": 183 * _T,
            "fp16": 362.05 * _T,
            "bf16": 362.05 * _T,
            "fp8": 733 * _T,
            "int8": 733 * _T,
        },
        memory_type="GDDR6",
        hbm_marketed_bytes=48 * GB,
        **_smi(46068, "NVIDIA's aiconfigurator l40s.yaml (AIC)"),
        hbm_bandwidth=864 * _G,
        l2_bytes=48 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=142,
        boost_clock_hz=2520e6,
        compute_capability=(8, 9),
        sources=("AIC", "L40S-REPRO", "CUTLASS", "CUDAPG"),
        notes="FP16/BF16, FP8, INT8, memory and bandwidth from NVIDIA's aiconfigurator "
        "l40s.yaml; SMs, boost clock, FP32, TF32 and L2 from resellers' copies of NVIDIA's "
        "datasheet (secondary; 142 × 128 × 2 × 2.52 GHz = 91.6 TFLOP/s agrees). FP64 not found.",
        **_CC89,
    ),
    Chip(
        name="A100-40GB",
        vendor="NVIDIA",
        architecture="Ampere (GA100)",
        peak_flops_per_s=_GA100_PEAKS,
        vector_flops_per_s=_GA100_VECTOR,
        memory_type="HBM2",
        hbm_marketed_bytes=40 * GB,
        hbm_cuda_bytes=42_298_834_944,
        **_smi(
            40960,
            "DEVICE-OBS (NVIDIA A100-SXM4-40GB, code-index ids 55216552280, 58827476883; "
            "secondary). CUDA's totalGlobalMem: 40339 MiB = 42,298,834,944 B (deviceQuery, "
            "BR-3873)",
        ),
        hbm_bandwidth=1555 * _G,
        l2_bytes=40 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect="NVLink 3 (12 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 3"] / 2,
        sm_count=108,
        boost_clock_hz=1410e6,
        compute_capability=(8, 0),
        sources=("A100-DS", "A100-WP", "GPU-BG", "CUDAPG", "STAS", "BR-3873", "DEVICE-OBS"),
        notes="SXM4. 108 of the full GA100's 128 SMs are enabled. fp64 is the FP64 tensor core "
        "(9.7 TFLOP/s on CUDA cores). No fp8. Non-tensor fp16 78 / bf16 39 TFLOP/s from the A100 "
        "whitepaper's Table 1. The PCIe 40 GB card has no row (its datasheet was not read).",
        **_CC80,
    ),
    Chip(
        name="A100-80GB",
        vendor="NVIDIA",
        architecture="Ampere (GA100)",
        peak_flops_per_s=_GA100_PEAKS,
        vector_flops_per_s=_GA100_VECTOR,
        memory_type="HBM2e",
        hbm_marketed_bytes=80 * GB,
        **_smi(
            81920,
            "DEXBOTIC-41 (an A800-SXM4-80GB) and DEVICE-OBS (NVIDIA A100-SXM4-80GB, code-index "
            "ids 62462226790, 55042174505). CUDA's total for the SXM card was not found (the "
            "81049 MiB of MIXBENCH-47 is the PCIe card's)",
        ),
        hbm_bandwidth=2039 * _G,
        l2_bytes=40 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect="NVLink 3 (12 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 3"] / 2,
        sm_count=108,
        boost_clock_hz=1410e6,
        compute_capability=(8, 0),
        sources=("A100-DS", "A100-WP", "GPU-BG", "CUDAPG", "STAS", "DEXBOTIC-41", "DEVICE-OBS"),
        notes="SXM4 (the PCIe card, 1935 GB/s, is A100-80GB-PCIe). fp64 is the FP64 tensor core. "
        "No fp8. Non-tensor rates as the A100 whitepaper's Table 1 (same SMs and clock).",
        **_CC80,
    ),
    Chip(
        name="A100-80GB-PCIe",
        vendor="NVIDIA",
        architecture="Ampere (GA100)",
        peak_flops_per_s=_GA100_PEAKS,
        vector_flops_per_s=_GA100_VECTOR,
        memory_type="HBM2e",
        hbm_marketed_bytes=80 * GB,
        hbm_cuda_bytes=81049 * MiB,
        **_smi(
            81920,
            "DEVICE-OBS (NVIDIA A100 80GB PCIe, code-index ids 63418718311, 59801791696, "
            "68922542039; secondary). CUDA's total: 81049 MiB (mixbench, MIXBENCH-47)",
        ),
        hbm_bandwidth=1935 * _G,
        l2_bytes=40 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect="NVLink bridge (2 GPUs)",
        interconnect_bandwidth=600 * _G / 2,
        sm_count=108,
        boost_clock_hz=1410e6,
        compute_capability=(8, 0),
        sources=("A100-DS", "A100-WP", "GPU-BG", "CUDAPG", "MIXBENCH-47", "DEVICE-OBS"),
        notes="The A100 80GB datasheet gives the PCIe card the SXM card's peaks and 1,935 GB/s; "
        "108 SMs at 1.41 GHz reproduce them (GPU-BG). fp64 is the FP64 tensor core. No fp8.",
        **_CC80,
    ),
    Chip(
        name="H100-SXM",
        vendor="NVIDIA",
        architecture="Hopper",
        # Tensor peaks unrounded, as NVIDIA computes them (GLENN-H100's table: 528 tensor cores
        # × 1024 FLOP/clk × 1.83 GHz = 989.4 TFLOP/s; TF32 half, FP8/INT8 twice); the datasheet
        # rounds them to 495 / 989 / 1979. The H200 (same die and clocks) shares them.
        peak_flops_per_s={
            "fp64": 67 * _T,
            "fp32": 67 * _T,
            "tf32": 494.7 * _T,
            "fp16": 989.4 * _T,
            "bf16": 989.4 * _T,
            "fp8": 1978.9 * _T,
            "int8": 1978.9 * _T,
        },
        vector_flops_per_s={"fp64": 34 * _T, "fp16": 133.8 * _T, "bf16": 133.8 * _T},
        memory_type="HBM3",
        hbm_marketed_bytes=80 * GB,
        hbm_cuda_bytes=81089 * MiB,
        **_smi(
            81559,
            "driver 550.54.15 (NCCL-1264, GPUBURN-114). CUDA's total: 81089 MiB (torch 2.7.0, "
            "CUDA 12.8, H100-MEMGAP)",
        ),
        hbm_bandwidth=3.35 * TB,
        l2_bytes=50 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink 4 (18 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 4"] / 2,
        sm_count=132,
        boost_clock_hz=1980e6,
        compute_capability=(9, 0),
        sources=(
            "H100-DS",
            "GLENN-H100",
            "H100-WP",
            "STAS",
            "CUDAPG",
            "PLAYBOOK",
            "NCCL-1264",
            "GPUBURN-114",
            "H100-MEMGAP",
        ),
        notes="SXM5; 132 of the full GH100's 144 SMs. Tensor peaks assume a 1.83 GHz clock, "
        "fp32/fp64 the 1.98 GHz boost. fp64 is the FP64 tensor core (34 TFLOP/s on CUDA cores, "
        "datasheet). Non-tensor fp16/bf16 133.8 TFLOP/s = 132 × 256 × 1.98 GHz, as in "
        "GLENN-H100's VFMA column (from NVIDIA's H100 whitepaper table; NVIDIA's 2022 "
        "architecture blog, H100-WP, printed a preliminary 120).",
        **_CC90,
    ),
    Chip(
        name="H100-PCIe",
        vendor="NVIDIA",
        architecture="Hopper",
        peak_flops_per_s={
            "fp64": 51 * _T,
            "fp32": 51 * _T,
            "tf32": 378 * _T,
            "fp16": 756 * _T,
            "bf16": 756 * _T,
            "fp8": 1513 * _T,
            "int8": 1513 * _T,
        },
        memory_type="HBM2e",
        hbm_marketed_bytes=80 * GB,
        **_smi(
            81559,
            "DEVICE-OBS (NVIDIA H100 PCIe, code-index ids 38048315203, 56186888337, "
            "69525157115; secondary)",
        ),
        hbm_bandwidth=2.0 * TB,
        l2_bytes=50 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink bridge",
        interconnect_bandwidth=600 * _G / 2,
        sm_count=114,
        boost_clock_hz=1755e6,
        compute_capability=(9, 0),
        sources=("H100-DS", "GPUBENCH", "CUDAPG", "DEVICE-OBS"),
        notes="The datasheet lists HBM2e for the PCIe card. Its non-tensor fp16/bf16 and fp64 "
        "rates were not in the sources read.",
        **_CC90,
    ),
    Chip(
        name="H100-NVL",
        vendor="NVIDIA",
        architecture="Hopper",
        peak_flops_per_s=_NVL_PEAKS,
        vector_flops_per_s={"fp64": 30 * _T},
        memory_type="HBM3",
        hbm_marketed_bytes=94 * GB,
        **_smi(
            95830,
            "DEVICE-OBS (400 W cards, code-index ids 56777991392, 5717978066, 40662673970; "
            "secondary). CUDA's total (94850 MiB) was seen only in a test fixture, not stored",
        ),
        hbm_bandwidth=3.9 * TB,
        l2_bytes=50 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink bridge",
        interconnect_bandwidth=600 * _G / 2,
        sm_count=132,
        boost_clock_hz=1785e6,
        compute_capability=(9, 0),
        sources=("NVL-REPRO", "MIG-224", "STAS", "DEVICE-OBS", "CUTLASS", "CUDAPG"),
        notes="A PCIe card with NVLink bridges: 94 GB (MIG-224), 3.9 TB/s and dense bf16 835.5 "
        "TFLOP/s (1,671 sparse), not the SXM card's 80 GB, 3.35 TB/s and 989. Peaks from "
        "third-party copies of NVIDIA's H100 page (NVIDIA's own could not be opened); SMs, the "
        "device-reported 1785 MHz and the 50 MB L2 from benchmark notes (all secondary).",
        **_CC90,
    ),
    Chip(
        name="GH200",
        vendor="NVIDIA",
        architecture="Hopper",
        peak_flops_per_s={
            "fp64": 67 * _T,
            "fp32": 67 * _T,
            "tf32": 494 * _T,
            "fp16": 990 * _T,
            "bf16": 990 * _T,
            "fp8": 1979 * _T,
            "int8": 1979 * _T,
        },
        vector_flops_per_s={"fp64": 34 * _T},
        memory_type="HBM3",
        hbm_marketed_bytes=96 * GB,
        **_smi(97871, "DEVICE-OBS (NVIDIA GH200 480GB, code-index id 63088167599; secondary)"),
        hbm_bandwidth=4.0 * TB,
        l2_bytes=None,
        host_link="NVLink-C2C to the Grace CPU",
        host_link_bandwidth=NVLINK_C2C_BIDIRECTIONAL / 2,
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=132,
        boost_clock_hz=1980e6,
        compute_capability=(9, 0),
        sources=("GH-DS", "GH200-DS", "GH200-OCL", "STAS", "DEVICE-OBS", "CUTLASS", "CUDAPG"),
        notes="The GPU of a Grace Hopper superchip, 96 GB HBM3 module (device name 'NVIDIA GH200 "
        "480GB': 480 GB of LPDDR5X sit on the Grace side). The 144 GB HBM3e module (4.9 TB/s, "
        "'NVIDIA GH200 144G HBM3e') has no row. Peaks from the GH200 datasheet; SMs and clock "
        "from an OpenCL query (GH200-OCL, secondary). L2 and GPU-to-GPU NVLink not found.",
        **_CC90,
    ),
    Chip(
        name="H200",
        vendor="NVIDIA",
        architecture="Hopper",
        peak_flops_per_s={
            "fp64": 67 * _T,
            "fp32": 67 * _T,
            "tf32": 494.7 * _T,
            "fp16": 989.4 * _T,
            "bf16": 989.4 * _T,
            "fp8": 1978.9 * _T,
            "int8": 1978.9 * _T,
        },
        memory_type="HBM3e",
        hbm_marketed_bytes=141 * GB,
        hbm_cuda_bytes=143156 * MiB,
        **_smi(
            143771,
            "DEVICE-OBS (code-index id 71189052105; secondary). CUDA's total: 143156 MiB "
            "(torch, ACHAT)",
        ),
        hbm_bandwidth=4.8 * TB,
        l2_bytes=60 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink 4 (18 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 4"] / 2,
        sm_count=132,
        boost_clock_hz=1980e6,
        compute_capability=(9, 0),
        sources=("H200", "STAS", "GLENN-H100", "CUDAPG", "ACHAT", "DEVICE-OBS"),
        notes="SXM. The H100's GH100 die with more and faster memory. L2: torch reports "
        "L2_cache_size=60MB (ACHAT); this row used to assume the H100's 50 MB.",
        **_CC90,
    ),
    Chip(
        name="H200-NVL",
        vendor="NVIDIA",
        architecture="Hopper",
        peak_flops_per_s=_NVL_PEAKS,
        vector_flops_per_s={"fp64": 30 * _T},
        memory_type="HBM3e",
        hbm_marketed_bytes=141 * GB,
        **_smi(
            143771,
            "DEVICE-OBS (an H200 NVL lab README and nvidia-smi dumps, code-index id "
            "71189052105; the SXM card reports the same). CUDA's total not found for the NVL",
        ),
        hbm_bandwidth=4.8 * TB,
        l2_bytes=None,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink bridge (2- or 4-way)",
        interconnect_bandwidth=900 * _G / 2,
        sm_count=132,
        boost_clock_hz=1785e6,
        compute_capability=(9, 0),
        sources=("NVL-REPRO", "H200", "DEVICE-OBS", "CUTLASS", "CUDAPG"),
        notes="A 600 W PCIe card: the H200's 141 GB and 4.8 TB/s at the H100 NVL's clocks "
        "(dense bf16 835.5 TFLOP/s). Peaks from third-party copies of NVIDIA's H200 page; SMs "
        "and ~1785 MHz from an H200 NVL lab README (secondary). L2 not found for the NVL.",
        **_CC90,
    ),
    Chip(
        name="B200",
        vendor="NVIDIA",
        architecture="Blackwell",
        peak_flops_per_s={
            "fp64": 37 * _T,
            "fp32": 75 * _T,
            "tf32": 1100 * _T,
            "fp16": 2250 * _T,
            "bf16": 2250 * _T,
            "fp8": 4500 * _T,
            "int8": 4500 * _T,
            "fp6": 4500 * _T,
            "fp4": 9000 * _T,
        },
        memory_type="HBM3e",
        hbm_marketed_bytes=180 * GB,
        hbm_cuda_bytes=182642 * MiB,
        **_smi(
            183359,
            "drivers 570.133.20 and 580.95.05 (TRTLLM-10278). CUDA's total: 182642 MiB "
            "(torch, ACHAT)",
        ),
        hbm_bandwidth=8 * TB,
        l2_bytes=126 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink 5 (18 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 5"] / 2,
        sm_count=148,
        boost_clock_hz=1965e6,
        compute_capability=(10, 0),
        sources=(
            "BW-DS",
            "GLENN-B200",
            "STAS",
            "SCALING",
            "VULTR",
            "CUTLASS",
            "PLAYBOOK",
            "CUDAPG",
            "TRTLLM-10278",
            "ACHAT",
        ),
        notes="HGX B200, per GPU (1,000 W). Marketed '180 GB' ≈ the GiB the driver shows "
        "(183359 MiB = 179 GiB = 192.3 GB, the 192 GB physical). Conflicts: fp64 37 (Blackwell "
        "datasheet, used) vs 40 (Lockwood); fp32 75 (datasheet, used) vs 80; HBM 8 TB/s "
        "(Lockwood, Stas, NVIDIA's aiconfigurator; used) vs the datasheet's 7.7; PCIe Gen5 "
        "(datasheet) vs Gen6. fp6 runs at the fp8 rate. Clock: device-reported max SM clock "
        "(no NVIDIA boost clock found). sm_100, not sm_120.",
        **_CC100,
    ),
    Chip(
        name="GB200",
        vendor="NVIDIA",
        architecture="Blackwell",
        peak_flops_per_s={
            "fp64": 40 * _T,
            "fp32": 80 * _T,
            "tf32": 1250 * _T,
            "fp16": 2500 * _T,
            "bf16": 2500 * _T,
            "fp8": 5000 * _T,
            "int8": 5000 * _T,
            "fp6": 5000 * _T,
            "fp4": 10000 * _T,
        },
        memory_type="HBM3e",
        hbm_marketed_bytes=186 * GB,
        **_smi(
            189471,
            "DEVICE-OBS (drivers 580.105.08 and 590.48.01, code-index ids 66353498064, "
            "60167695339; secondary). CUDA's total not found",
        ),
        hbm_bandwidth=8 * TB,
        l2_bytes=None,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink 5 (18 links), 72-GPU NVL72 domain",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 5"] / 2,
        sm_count=152,
        boost_clock_hz=2062e6,
        compute_capability=(10, 0),
        sources=("BW-DS", "MLPERF-CRUSOE", "AIS-GB200", "STAS", "DEVICE-OBS", "CUDAPG"),
        notes="Per GPU of a GB200 NVL72 (1,200 W): peaks, 186 GB and 8 TB/s from the Blackwell "
        "datasheet. 152 SMs from torch device properties in the code index and the "
        "device-reported 2062 MHz (STAS), both secondary (152 × 128 × 2 × 2.06 GHz = 80 TFLOP/s "
        "fp32 agrees). L2 not found (the tuning guide's 126 MB is stated for B200). NVIDIA's "
        "aisimulate config sets mem_bw 13.4 TB/s, matching no datasheet: not used.",
        **_CC100,
    ),
    Chip(
        name="B300",
        vendor="NVIDIA",
        architecture="Blackwell Ultra",
        peak_flops_per_s={
            "fp64": 1.25 * _T,
            "fp32": 75 * _T,
            "tf32": 1100 * _T,
            "fp16": 2250 * _T,
            "bf16": 2250 * _T,
            "fp8": 4500 * _T,
            "int8": 153.5 * _T,
            "fp4": 14000 * _T,
        },
        memory_type="HBM3e",
        hbm_marketed_bytes=288 * GB,
        **_smi(
            275040,
            "B300 SXM6 AC at its 1,100 W cap, drivers 580.95.05–580.178.04 (AIC-B300). "
            "CUDA's total not found",
        ),
        hbm_bandwidth=7.75 * TB,
        l2_bytes=None,
        host_link="PCIe Gen6 x16",
        host_link_bandwidth=pcie_bandwidth(6),
        interconnect="NVLink 5 (18 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 5"] / 2,
        compute_capability=(10, 3),
        no_sm_model="148 SMs are enabled on the B300 SXM6 AC (benchmark notes, secondary), but "
        "no source gives its clock or the per-SM limits of compute capability 10.3",
        sources=(
            "AIC-B300",
            "COSMOS-114",
            "NV-BU",
            "GLENN-B300",
            "VERDA",
            "STAS",
            "CUTLASS",
            "DEVICE-OBS",
        ),
        notes="HGX B300 (Blackwell Ultra), per GPU, 1,100 W. bf16/fp8/int8/fp4, memory and "
        "bandwidth from NVIDIA's aiconfigurator b300_sxm.yaml. Dense fp4 conflicts: 14 PF "
        "(used), 13.125 (Lockwood), 15 (NVIDIA's Blackwell Ultra blog, the full chip: GB300). "
        "int8 is 153.5 TOPS, ~30× below B200's 4.5 POPS, and fp64 1.25 TFLOP/s (Lockwood): "
        "Blackwell Ultra cut both. fp32/tf32 from Verda (secondary); bandwidth 7.75 vs Verda's "
        "7.7 TB/s. fp6 not found. Special functions twice B200's (SPECIAL_FUNCTION_OPS_PER_S).",
    ),
    Chip(
        name="GB300",
        vendor="NVIDIA",
        architecture="Blackwell Ultra",
        peak_flops_per_s={
            "fp32": 80 * _T,
            "tf32": 1250 * _T,
            "fp16": 2500 * _T,
            "bf16": 2500 * _T,
            "fp8": 5000 * _T,
            "int8": 165 * _T,
            "fp4": 15000 * _T,
        },
        memory_type="HBM3e",
        hbm_marketed_bytes=288 * GB,
        **_smi(
            284208,
            "DEVICE-OBS (one dump at the 1,400 W cap, code-index id 52252791387; secondary). "
            "CUDA's total not found",
        ),
        hbm_bandwidth=8 * TB,
        l2_bytes=None,
        host_link="PCIe Gen6 (ConnectX-8)",
        host_link_bandwidth=pcie_bandwidth(6),
        interconnect="NVLink 5 (18 links), 72-GPU NVL72 domain",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 5"] / 2,
        compute_capability=(10, 3),
        no_sm_model="its enabled SM count, clock and the per-SM limits of compute capability "
        "10.3 were not found",
        sources=("NV-BU", "NV-SMX", "VERDA", "STAS", "GLENN-B300", "DEVICE-OBS", "CUTLASS"),
        notes="Per GPU of a GB300 NVL72 (1,400 W). Dense fp4 15 PF from NVIDIA's Blackwell Ultra "
        "blog; fp32, tf32, bf16, fp8, int8 (0.165 POPS) and 8 TB/s from Verda's table "
        "(secondary). fp64 and fp6 not found. Special functions 10.7 × 10¹² exp/s, twice "
        "GB200's (SPECIAL_FUNCTION_OPS_PER_S).",
    ),
    Chip(
        name="RTX-4090",
        vendor="NVIDIA",
        architecture="Ada Lovelace",
        peak_flops_per_s={
            "fp64": 1.29 * _T,
            "fp32": 82.6 * _T,
            "tf32": 82.6 * _T,
            "fp16": 165.2 * _T,
            "bf16": 165.2 * _T,
            "fp8": 330.3 * _T,
            "int8": 660.6 * _T,
        },
        vector_flops_per_s={"fp64": 1.29 * _T},
        memory_type="GDDR6X",
        hbm_marketed_bytes=24 * GB,
        **_smi(
            24564,
            "DEVICE-OBS (code-index ids 5729950373, 71567595114; secondary)",
        ),
        hbm_bandwidth=1008 * _G,
        l2_bytes=72 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=128,
        boost_clock_hz=2520e6,
        compute_capability=(8, 9),
        sources=("ADA-WP", "CUDAPG", "DEVICE-OBS"),
        notes="GeForce: fp16/bf16/fp8 tensor rates with FP32 accumulation are half the FP16-"
        "accumulate rates (330.3 TFLOP/s fp16).",
        **_CC89,
    ),
    Chip(
        name="RTX-5090",
        vendor="NVIDIA",
        architecture="Blackwell (GB202)",
        peak_flops_per_s={
            "fp32": 104.8 * _T,
            "fp16": 419 * _T,
            "bf16": 419 * _T,
            "fp8": 838 * _T,
            "fp4": 1676 * _T,
        },
        memory_type="GDDR7",
        hbm_marketed_bytes=32 * GB,
        hbm_cuda_bytes=33_677_180_928,
        **_smi(
            32607,
            "AIC (rtx_5090.yaml) and CLUB3090. CUDA's total: 32117 MiB = 33,677,180,928 B "
            "(deviceQuery, AIK-1)",
        ),
        hbm_bandwidth=1792 * _G,
        l2_bytes=96 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=170,
        boost_clock_hz=2407e6,
        compute_capability=(12, 0),
        sources=("AIC", "AIK-1", "CLUB3090", "ZZC-200", "CUTLASS", "CUDAPG"),
        notes="GeForce, sm_120 (no tcgen05/TMEM). Conflict: fp16/bf16 419, fp8 838 and fp4 1676 "
        "TFLOP/s are NVIDIA's aiconfigurator figures, which assume the full (FP16-accumulate) "
        "tensor rate, unlike the RTX-4090 row's FP32-accumulate rates; a torch bf16 matmul "
        "measured 178.9 TFLOP/s (ZZC-200), as a half-rate FP32 accumulate would allow. NVIDIA's "
        "RTX Blackwell whitepaper table was not read. fp32 = 170 SMs × 128 × 2 × 2.407 GHz "
        "(official boost, AIC). tf32, fp64 and int8 not found.",
        **_CC120,
    ),
    Chip(
        name="MI300X",
        vendor="AMD",
        architecture="CDNA 3 (gfx942)",
        peak_flops_per_s=_CDNA3_PEAKS,
        vector_flops_per_s={"fp64": 81.7 * _T, "fp32": 163.4 * _T},
        memory_type="HBM3",
        hbm_marketed_bytes=192 * GB,
        hbm_bytes=192 * GiB,
        hbm_provenance="192 GiB: ROCm's GPU-spec table gives VRAM in GiB (ROCM-SPECS); the total "
        "rocm-smi or torch reports was not found",
        hbm_bandwidth=5.3 * TB,
        l2_bytes=32 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="Infinity Fabric (7 links, fully connected 8-GPU node)",
        interconnect_bandwidth=None,
        no_sm_model="an AMD GPU: 304 compute units (CUs, 38 per XCD), not NVIDIA SMs, and the "
        "course's SM calculators model NVIDIA SMs",
        sources=("ROCM-MI300", "ROCM-SPECS", "MLPERF-AMD-300X", "STAS"),
        notes="750 W. Peaks from ROCm's MI300 page: 2048 FLOP/clk/CU × 304 CUs × 2.1 GHz = "
        "1307.4 TFLOP/s bf16; fp64 is the matrix rate (81.7 vector). 256 MiB Infinity Cache "
        "besides the 32 MiB L2 (4 per XCD); 64 KiB LDS per CU. Infinity Fabric bandwidth per "
        "link only from secondary pages (not stored).",
    ),
    Chip(
        name="MI325X",
        vendor="AMD",
        architecture="CDNA 3 (gfx942)",
        peak_flops_per_s=_CDNA3_PEAKS,
        vector_flops_per_s={"fp64": 81.7 * _T, "fp32": 163.4 * _T},
        memory_type="HBM3e",
        hbm_marketed_bytes=256 * GB,
        hbm_bytes=256 * GiB,
        hbm_provenance="256 GiB: ROCm's GPU-spec table (ROCM-SPECS); the device-reported total "
        "was not found",
        hbm_bandwidth=6.0 * TB,
        l2_bytes=32 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="Infinity Fabric",
        interconnect_bandwidth=None,
        no_sm_model="an AMD GPU: 304 compute units (CUs, 38 per XCD), not NVIDIA SMs",
        sources=("ROCM-SPECS", "ROCM-MI300", "STAS"),
        notes="The MI300X's compute (ROCm) with 256 GB HBM3e; 6.0 TB/s and 1,000 W from STAS "
        "(secondary). AMD's MI325X page was not read; Infinity Fabric bandwidth not found.",
    ),
    Chip(
        name="MI355X",
        vendor="AMD",
        architecture="CDNA 4 (gfx950)",
        peak_flops_per_s={
            "fp32": 157.3 * _T,
            "fp16": 2500 * _T,
            "bf16": 2500 * _T,
            "fp8": 5000 * _T,
            "fp6": 10100 * _T,
            "fp4": 10100 * _T,
        },
        memory_type="HBM3e",
        hbm_marketed_bytes=288 * GB,
        hbm_bytes=288 * GiB,
        hbm_provenance="288 GiB: ROCm's GPU-spec table (ROCM-SPECS); the device-reported total "
        "was not found",
        hbm_bandwidth=8.0 * TB,
        l2_bytes=32 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="Infinity Fabric",
        interconnect_bandwidth=None,
        no_sm_model="an AMD GPU: 256 compute units (CUs, 32 per XCD), not NVIDIA SMs",
        sources=("ROCM-SPECS", "MLPERF-AMD", "STAS"),
        notes="1,400 W. FLOP/s, fp32, the 2.4 GHz clock and 8 TB/s from STAS and press coverage "
        "(secondary): bf16 2.5 PF (1024 matrix cores × 512 FMA × 2 × 2.4 GHz = 2516.6), fp8 "
        "8192 FLOP/clk/CU × 256 × 2.4 GHz = 5.0 PF, MXFP6/MXFP4 10.1 PF. fp64, tf32 and int8 "
        "not found. 160 KiB LDS per CU.",
    ),
    Chip(
        name="TPU-v5e",
        vendor="Google",
        architecture="TPU v5e",
        peak_flops_per_s={"bf16": 197 * _T, "int8": 394 * _T},
        memory_type="HBM2",
        hbm_marketed_bytes=16 * GB,
        hbm_bytes=16 * GB,
        hbm_provenance="not found as the device reports it: the 16 GB of Google's v5e page, "
        "read as decimal",
        hbm_bandwidth=819 * _G,
        l2_bytes=None,
        host_link="PCIe",
        host_link_bandwidth=None,
        interconnect="ICI, 2D torus (4 links × 50 GB/s per direction)",
        interconnect_bandwidth=4 * 50 * _G,
        interconnect_links=4,
        interconnect_link_bandwidth=50 * _G,
        no_sm_model="a TPU: TensorCores with matrix units (MXUs), not SMs",
        sources=("TPU-V5E", "SCALING"),
        notes="One TensorCore. MXU rates; no fp32/fp16/fp8 matmul rate is published.",
    ),
    Chip(
        name="TPU-v5p",
        vendor="Google",
        architecture="TPU v5p",
        peak_flops_per_s={"bf16": 459 * _T, "int8": 918 * _T},
        memory_type="HBM2e",
        hbm_marketed_bytes=95 * GB,
        hbm_bytes=95 * GB,
        hbm_provenance="not found as the device reports it: the 95 GB of Google's v5p page, "
        "read as decimal",
        hbm_bandwidth=2765 * _G,
        l2_bytes=None,
        host_link="PCIe",
        host_link_bandwidth=None,
        interconnect="ICI, 3D torus (6 links × 100 GB/s per direction)",
        interconnect_bandwidth=6 * 100 * _G,
        interconnect_links=6,
        interconnect_link_bandwidth=100 * _G,
        no_sm_model="a TPU: TensorCores with matrix units (MXUs), not SMs",
        sources=("TPU-V5P", "SCALING", "STAS"),
        notes="Two TensorCores (megacore).",
    ),
    Chip(
        name="TPU-v6e",
        vendor="Google",
        architecture="TPU v6e (Trillium)",
        peak_flops_per_s={"bf16": 918 * _T, "int8": 1836 * _T},
        memory_type="HBM",
        hbm_marketed_bytes=32 * GB,
        hbm_bytes=32 * GB,
        hbm_provenance="not found as the device reports it: the 32 GB of Google's v6e page, "
        "read as decimal",
        hbm_bandwidth=1638 * _G,
        l2_bytes=None,
        host_link="PCIe Gen5",
        host_link_bandwidth=None,
        interconnect="ICI, 2D torus (4 links × 100 GB/s per direction)",
        interconnect_bandwidth=4 * 100 * _G,
        interconnect_links=4,
        interconnect_link_bandwidth=100 * _G,
        no_sm_model="a TPU: TensorCores with matrix units (MXUs), not SMs",
        sources=("TPU-V6E", "SCALING"),
        notes="One TensorCore with two 256×256 MXUs.",
    ),
)

_BY_NAME: dict[str, Chip] = {c.name: c for c in _CHIPS}

_ALIASES: dict[str, str] = {
    "t4": "T4",
    "teslat4": "T4",
    "v100": "V100",
    "v100sxm2": "V100",
    "v100sxm232gb": "V100",
    "teslav100": "V100",
    "a10g": "A10G",
    "l4": "L4",
    "l40s": "L40S",
    "a100": "A100-80GB",
    "a10080gb": "A100-80GB",
    "a100sxm": "A100-80GB",
    "a100sxm80gb": "A100-80GB",
    "a10040gb": "A100-40GB",
    "a100sxm40gb": "A100-40GB",
    "a100pcie": "A100-80GB-PCIe",
    "a100pcie80gb": "A100-80GB-PCIe",
    "a10080gbpcie": "A100-80GB-PCIe",
    "h100": "H100-SXM",
    "h100sxm": "H100-SXM",
    "h100sxm5": "H100-SXM",
    "h100pcie": "H100-PCIe",
    "h100nvl": "H100-NVL",
    "gh200": "GH200",
    "gh200480gb": "GH200",
    "h200": "H200",
    "h200sxm": "H200",
    "h200nvl": "H200-NVL",
    "b200": "B200",
    "hgxb200": "B200",
    "gb200": "GB200",
    "gb200nvl72": "GB200",
    "b300": "B300",
    "hgxb300": "B300",
    "b300sxm6ac": "B300",
    "gb300": "GB300",
    "gb300nvl72": "GB300",
    "rtx4090": "RTX-4090",
    "4090": "RTX-4090",
    "geforcertx4090": "RTX-4090",
    "rtx5090": "RTX-5090",
    "5090": "RTX-5090",
    "geforcertx5090": "RTX-5090",
    "mi300x": "MI300X",
    "instinctmi300x": "MI300X",
    "mi325x": "MI325X",
    "instinctmi325x": "MI325X",
    "mi355x": "MI355X",
    "instinctmi355x": "MI355X",
    "tpuv5e": "TPU-v5e",
    "v5e": "TPU-v5e",
    "tpuv5p": "TPU-v5p",
    "v5p": "TPU-v5p",
    "tpuv6e": "TPU-v6e",
    "v6e": "TPU-v6e",
    "trillium": "TPU-v6e",
}

#: Device names exactly as drivers report them (``torch.cuda.get_device_name()``, nvidia-smi's
#: ``name``), with the row each one is. Only these are recognised: a name not here (an H800, an
#: A100 PCIe 40 GB, a 16 GB V100, a GH200 144G, a MIG slice "… MIG 1g.10gb") has no row, and
#: :func:`chip_from_device_name` returns ``None`` for it rather than a sibling's row.
DEVICE_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "Tesla T4": "T4",
        "Tesla V100-SXM2-32GB": "V100",
        "NVIDIA A10G": "A10G",
        "NVIDIA L4": "L4",
        "NVIDIA L40S": "L40S",
        "NVIDIA A100-SXM4-40GB": "A100-40GB",
        "NVIDIA A100-SXM4-80GB": "A100-80GB",
        "NVIDIA A100 80GB PCIe": "A100-80GB-PCIe",
        "NVIDIA H100 80GB HBM3": "H100-SXM",
        "NVIDIA H100 PCIe": "H100-PCIe",
        "NVIDIA H100 NVL": "H100-NVL",
        "NVIDIA GH200 480GB": "GH200",
        "NVIDIA H200": "H200",
        "NVIDIA H200 NVL": "H200-NVL",
        "NVIDIA B200": "B200",
        "NVIDIA GB200": "GB200",
        "NVIDIA B300 SXM6 AC": "B300",
        "NVIDIA GB300": "GB300",
        "NVIDIA GeForce RTX 4090": "RTX-4090",
        "NVIDIA GeForce RTX 5090": "RTX-5090",
        "AMD Instinct MI300X": "MI300X",
        "AMD Instinct MI325X": "MI325X",
        "AMD Instinct MI355X": "MI355X",
    }
)


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


def _device_key(name: str) -> str:
    """Case and runs of spaces do not matter in a device name; everything else does."""
    return " ".join(name.lower().split())


#: Canonical names by :func:`_key`, so :func:`chip` finds a name with one lookup (calculators
#: and the book's figures call it tens of thousands of times).
_BY_KEY: dict[str, Chip] = {_key(c.name): c for c in _CHIPS}
_BY_DEVICE: dict[str, Chip] = {_device_key(k): _BY_NAME[v] for k, v in DEVICE_NAMES.items()}


def chips() -> tuple[Chip, ...]:
    """Every chip in the table, in table order (NVIDIA older and smaller first, then AMD,
    TPUs last)."""
    return _CHIPS


def chip_names() -> tuple[str, ...]:
    return tuple(_BY_NAME)


def chip(name: str | Chip) -> Chip:
    """Look a chip up by name, alias or driver device name, case-insensitively (``"h100"`` →
    H100-SXM, ``"NVIDIA H100 NVL"`` → H100-NVL).

    A :class:`Chip` passes through unchanged, so every function taking a chip takes either.
    """
    if isinstance(name, Chip):
        return name
    if not isinstance(name, str):
        raise KeyError(f"chip name must be a string, got {name!r}; known: {', '.join(_BY_NAME)}")
    key = _key(name)
    if key in _BY_KEY:
        return _BY_KEY[key]
    if key in _ALIASES:
        return _BY_NAME[_ALIASES[key]]
    found = _BY_DEVICE.get(_device_key(name))
    if found is not None:
        return found
    raise KeyError(f"unknown chip {name!r}; known chips: {', '.join(_BY_NAME)}")


def chip_from_device_name(device_name: str) -> Chip | None:
    """The row of a device name as ``torch.cuda.get_device_name()`` gives it, or ``None``.

    ``"NVIDIA H100 80GB HBM3"`` → H100-SXM, ``"NVIDIA H100 NVL"`` → H100-NVL, ``"Tesla T4"`` →
    T4. Only the exact names of :data:`DEVICE_NAMES` match (ignoring case and repeated
    spaces); any other name — a card with no row, a MIG slice — gives ``None``, so a
    measurement is never compared with a sibling's roof.
    """
    if not isinstance(device_name, str):
        raise TypeError(
            f"device_name={show(device_name)} must be a string such as "
            "torch.cuda.get_device_name() returns"
        )
    return _BY_DEVICE.get(_device_key(device_name))


__all__ = [
    "CLUSTER_SIZE_LIMITS",
    "DEVICE_NAMES",
    "DSMEM_EXCHANGE_SPEEDUP",
    "MAX_REGISTERS_PER_THREAD",
    "MAX_THREADS_PER_BLOCK",
    "NETWORK_BANDWIDTH",
    "NVLINK_BIDIRECTIONAL",
    "NVLINK_C2C_BIDIRECTIONAL",
    "PCIE_GB_PER_S_PER_LANE",
    "SHARED_MEMORY_BYTES_PER_CLOCK_PER_SM",
    "SPECIAL_FUNCTION_OPS_PER_S",
    "TENSOR_FLOP_PER_CLOCK_PER_SM",
    "TENSOR_MEMORY_PER_SM",
    "WARP_SIZE",
    "Chip",
    "chip",
    "chip_from_device_name",
    "chip_names",
    "chips",
    "pcie_bandwidth",
]
