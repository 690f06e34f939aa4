"""The one table of accelerators every number in the course comes from.

Each row is a frozen :class:`Chip` holding what the calculators need: dense peak FLOP/s per
precision, memory size and bandwidth, L2, SM count and clock, the per-SM limits that decide
occupancy (shared memory, registers, threads, blocks), compute capability, and the links to the
host and to other chips. Every row names its sources (keys of the book's ``references.bib``).

Conventions, stated once:

* **Dense peaks.** Datasheets headline 2:4 *sparse* tensor-core numbers (H100 "1979 TFLOPS" BF16);
  this table stores the dense half. ``fp32`` is the CUDA-core (non-tensor) rate, ``tf32``/``fp16``/
  ``bf16``/``fp8``/``int8``/``fp4`` are tensor-core rates, and ``fp64`` is the highest dense FP64
  rate (the FP64 tensor core where one exists, as on A100/H100). GeForce/A10G parts list the rate
  with FP32 accumulation, the one training uses.
* **Bandwidth** is decimal bytes per second; link bandwidths are *per direction* (NVIDIA quotes
  NVLink and PCIe as the sum of both directions).
* **Derived values are methods**, not columns: :meth:`Chip.ridge_point`,
  :meth:`Chip.shared_memory_bandwidth`, :meth:`Chip.pairwise_link_bandwidth`.
* **Shared memory has two sizes.** ``shared_memory_per_sm_bytes`` is the largest carve-out a
  program can ask for; ``l1_shared_memory_per_sm_bytes`` is the whole unified L1/shared-memory
  SRAM of one SM (CUDA C Programming Guide, compute-capability tables), which L1 always keeps a
  share of: 164 of 192 KB on an A100, 228 of 256 KB on an H100.
* **TPU links.** A TPU's ICI row stores the number of links and the bandwidth of one link per
  direction (``interconnect_links`` × ``interconnect_link_bandwidth`` = ``interconnect_bandwidth``,
  checked). Two chips exchanging data use the one link between them; a GPU reaches any GPU of its
  node through the NVSwitches with all its NVLink bandwidth, so its per-link fields are ``None``.

A precision a chip lacks (bf16 on a T4, fp8 on an A100) is absent from its row, and asking for it
raises ``ValueError``. Unknown names raise ``KeyError`` listing the known ones.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ._validate import choice, name_string, optional, positive_float, positive_int, show
from .units import GB, TB, KiB, MiB, check_precision

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
TENSOR_MEMORY_PER_SM: Mapping[tuple[int, int], tuple[int, int, str]] = MappingProxyType(
    {(10, 0): (128, 512, "PTX-ISA")}
)

#: Special-function (MUFU: exp2, log2, rcp, sin, …) throughput, the rate softmax's exponentials
#: run at, where a source states it: FlashAttention-3 §3.1 gives the H100 SXM5 "3.9 TFLOPS of
#: special functions" against 989 TFLOPS of FP16 matmul (16 per clock per SM at the 1.83 GHz
#: of the tensor peak). (operations/s, source).
SPECIAL_FUNCTION_OPS_PER_S: Mapping[str, tuple[float, str]] = MappingProxyType(
    {"H100-SXM": (3.9e12, "FA3")}
)

_T, _G = 1e12, 1e9


@dataclass(frozen=True)
class Chip:
    """One accelerator. All sizes in bytes, rates in FLOP/s or bytes/s, clocks in Hz.

    GPU-only fields (SMs, shared memory, registers, compute capability) are ``None`` for TPUs;
    the per-link ICI fields are ``None`` for GPUs.
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

    def __post_init__(self) -> None:
        # Every field is checked here, so Chip.replace(hbm_bandwidth=0) fails at once rather
        # than as a ZeroDivisionError three calls later.
        for label in ("name", "vendor", "architecture", "memory_type", "host_link"):
            name_string(label, getattr(self, label))
        optional("interconnect", self.interconnect, name_string)
        if not isinstance(self.notes, str):
            raise TypeError(f"notes={show(self.notes)} must be a string")
        if not isinstance(self.peak_flops_per_s, Mapping) or not self.peak_flops_per_s:
            raise ValueError(
                f"peak_flops_per_s={show(self.peak_flops_per_s)} must be a non-empty mapping "
                "of precision → FLOP/s"
            )
        # Freeze the peak table so a Chip cannot be edited through it.
        peaks = {
            check_precision(p, "peak_flops_per_s key"): positive_float(
                f"peak_flops_per_s[{p!r}]", v
            )
            for p, v in dict(self.peak_flops_per_s).items()
        }
        object.__setattr__(self, "peak_flops_per_s", MappingProxyType(peaks))
        object.__setattr__(self, "hbm_bytes", positive_float("hbm_bytes", self.hbm_bytes))
        object.__setattr__(
            self, "hbm_bandwidth", positive_float("hbm_bandwidth", self.hbm_bandwidth)
        )
        for label in ("l2_bytes", "host_link_bandwidth", "interconnect_bandwidth"):
            object.__setattr__(self, label, optional(label, getattr(self, label), positive_float))
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
        gpu_fields = (
            "sm_count",
            "boost_clock_hz",
            "shared_memory_per_sm_bytes",
            "shared_memory_per_block_bytes",
            "registers_per_sm",
            "max_threads_per_sm",
            "max_blocks_per_sm",
            "compute_capability",
            "l1_shared_memory_per_sm_bytes",
        )
        missing = [label for label in gpu_fields if getattr(self, label) is None]
        if missing and len(missing) < len(gpu_fields):
            raise ValueError(
                f"{self.name}: a GPU needs all of {', '.join(gpu_fields)} (a TPU none of them); "
                f"missing: {', '.join(missing)}"
            )
        if missing:
            return
        for label in (*gpu_fields[2:7], "l1_shared_memory_per_sm_bytes"):
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
        cc = self.compute_capability
        if not isinstance(cc, tuple) or len(cc) != 2:
            raise ValueError(f"compute_capability={show(cc)} must be a (major, minor) tuple")
        object.__setattr__(
            self,
            "compute_capability",
            (positive_int("compute capability major", cc[0]),
             positive_int("compute capability minor", cc[1], minimum=0)),
        )  # fmt: skip

    @property
    def precisions(self) -> tuple[str, ...]:
        """Precisions this chip has a dense peak for, widest first."""
        return tuple(self.peak_flops_per_s)

    @property
    def is_gpu(self) -> bool:
        return self.sm_count is not None

    @property
    def sm_arch(self) -> str | None:
        """``'sm_90'`` for compute capability 9.0; ``None`` for a TPU."""
        if self.compute_capability is None:
            return None
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"

    def peak_flops(self, precision: str) -> float:
        """Dense peak FLOP/s at ``precision``; ``ValueError`` if the chip has no such rate."""
        check_precision(precision)
        try:
            return self.peak_flops_per_s[precision]
        except KeyError:
            raise ValueError(
                f"precision={precision!r}: {self.name} has no {precision} support in this table "
                f"(it lists: {', '.join(self.precisions)})"
            ) from None

    def ridge_point(self, precision: str, bandwidth: float | None = None) -> float:
        """Machine balance in FLOP/byte: peak FLOP/s over a bandwidth in bytes/s.

        ``bandwidth`` is the link the bytes cross: ``None`` (the default) means this chip's HBM;
        pass another level's bytes/s (L2, PCIe, NVLink) for that level's ridge. It must be a
        finite number > 0: 0 is an error, never a silent fall-back to HBM.
        """
        peak = self.peak_flops(precision)
        if bandwidth is None:
            return peak / self.hbm_bandwidth
        return peak / positive_float("bandwidth", bandwidth)

    def shared_memory_bandwidth(self) -> float:
        """Aggregate shared-memory bandwidth: SMs × 128 B/clock × boost clock (bytes/s)."""
        if self.sm_count is None or self.boost_clock_hz is None:
            raise ValueError(f"{self.name} has no SMs; shared-memory bandwidth is a GPU quantity")
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
# A10G 128, L4/RTX 4090 128, H100/H200/B200 256).
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

_CHIPS: tuple[Chip, ...] = (
    Chip(
        name="T4",
        vendor="NVIDIA",
        architecture="Turing",
        peak_flops_per_s={"fp64": 0.254 * _T, "fp32": 8.1 * _T, "fp16": 65 * _T, "int8": 130 * _T},
        memory_type="GDDR6",
        hbm_bytes=16 * GB,
        hbm_bandwidth=320 * _G,
        l2_bytes=4 * MiB,
        host_link="PCIe Gen3 x16",
        host_link_bandwidth=pcie_bandwidth(3),
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=40,
        boost_clock_hz=1590e6,
        compute_capability=(7, 5),
        sources=("T4-DS", "SYSRQ-T4", "CUDAPG", "CUTLASS"),
        notes="No bf16, tf32 or fp8. fp64 derived: 40 SMs × 2 FP64 units × 2 × 1.59 GHz. "
        "Clocks fall to ~900 MHz under sustained tensor load at the 70 W cap.",
        **_CC75,
    ),
    Chip(
        name="V100",
        vendor="NVIDIA",
        architecture="Volta",
        peak_flops_per_s={"fp64": 7.8 * _T, "fp32": 15.7 * _T, "fp16": 125 * _T},
        memory_type="HBM2",
        hbm_bytes=32 * GB,
        hbm_bandwidth=900 * _G,
        l2_bytes=6 * MiB,
        host_link="PCIe Gen3 x16",
        host_link_bandwidth=pcie_bandwidth(3),
        interconnect="NVLink 2 (6 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 2"] / 2,
        sm_count=80,
        boost_clock_hz=1530e6,
        compute_capability=(7, 0),
        sources=("V100-DS", "V100-WP", "CUDAPG", "CUTLASS"),
        notes="SXM2. Tensor cores run fp16 only: no bf16, tf32 or int8 tensor-core rate.",
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
        memory_type="GDDR6",
        hbm_bytes=24 * GB,
        hbm_bandwidth=600 * _G,
        l2_bytes=6 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=80,
        boost_clock_hz=1710e6,
        compute_capability=(8, 6),
        sources=("A10G-AWS", "BASETEN", "A10-DQ", "CUDAPG"),
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
        memory_type="GDDR6",
        hbm_bytes=24 * GB,
        hbm_bandwidth=300 * _G,
        l2_bytes=48 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=58,
        boost_clock_hz=2040e6,
        compute_capability=(8, 9),
        sources=("L4-DS", "GPUSPECS", "CUDAPG", "CUTLASS"),
        notes="fp64 derived as SMs × 2 × 2 × clock.",
        **_CC89,
    ),
    Chip(
        name="A100-40GB",
        vendor="NVIDIA",
        architecture="Ampere (GA100)",
        peak_flops_per_s={
            "fp64": 19.5 * _T,
            "fp32": 19.5 * _T,
            "tf32": 156 * _T,
            "fp16": 312 * _T,
            "bf16": 312 * _T,
            "int8": 624 * _T,
        },
        memory_type="HBM2",
        hbm_bytes=40 * GB,
        hbm_bandwidth=1555 * _G,
        l2_bytes=40 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect="NVLink 3 (12 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 3"] / 2,
        sm_count=108,
        boost_clock_hz=1410e6,
        compute_capability=(8, 0),
        sources=("A100-DS", "GPU-BG", "CUDAPG", "STAS"),
        notes="SXM4. 108 of the full GA100's 128 SMs are enabled. fp64 is the FP64 tensor core "
        "(9.7 TFLOP/s on CUDA cores). No fp8.",
        **_CC80,
    ),
    Chip(
        name="A100-80GB",
        vendor="NVIDIA",
        architecture="Ampere (GA100)",
        peak_flops_per_s={
            "fp64": 19.5 * _T,
            "fp32": 19.5 * _T,
            "tf32": 156 * _T,
            "fp16": 312 * _T,
            "bf16": 312 * _T,
            "int8": 624 * _T,
        },
        memory_type="HBM2e",
        hbm_bytes=80 * GB,
        hbm_bandwidth=2039 * _G,
        l2_bytes=40 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect="NVLink 3 (12 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 3"] / 2,
        sm_count=108,
        boost_clock_hz=1410e6,
        compute_capability=(8, 0),
        sources=("A100-DS", "GPU-BG", "CUDAPG", "STAS"),
        notes="SXM4 (the PCIe card has 1935 GB/s). fp64 is the FP64 tensor core. No fp8.",
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
        memory_type="HBM3",
        hbm_bytes=80 * GB,
        hbm_bandwidth=3.35 * TB,
        l2_bytes=50 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink 4 (18 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 4"] / 2,
        sm_count=132,
        boost_clock_hz=1980e6,
        compute_capability=(9, 0),
        sources=("H100-DS", "GLENN-H100", "STAS", "CUDAPG", "PLAYBOOK"),
        notes="SXM5; 132 of the full GH100's 144 SMs. Tensor peaks assume a 1.83 GHz clock, "
        "fp32/fp64 the 1.98 GHz boost. fp64 is the FP64 tensor core (34 TFLOP/s on CUDA cores).",
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
        hbm_bytes=80 * GB,
        hbm_bandwidth=2.0 * TB,
        l2_bytes=50 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink bridge",
        interconnect_bandwidth=600 * _G / 2,
        sm_count=114,
        boost_clock_hz=1755e6,
        compute_capability=(9, 0),
        sources=("H100-DS", "GPUBENCH", "CUDAPG"),
        notes="The datasheet lists HBM2e for the PCIe card.",
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
        hbm_bytes=141 * GB,
        hbm_bandwidth=4.8 * TB,
        l2_bytes=50 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink 4 (18 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 4"] / 2,
        sm_count=132,
        boost_clock_hz=1980e6,
        compute_capability=(9, 0),
        sources=("H200", "STAS", "GLENN-H100", "CUDAPG"),
        notes="SXM. The H100's GH100 die with more and faster memory.",
        **_CC90,
    ),
    Chip(
        name="B200",
        vendor="NVIDIA",
        architecture="Blackwell",
        peak_flops_per_s={
            "fp64": 40 * _T,
            "fp32": 75 * _T,
            "tf32": 1100 * _T,
            "fp16": 2250 * _T,
            "bf16": 2250 * _T,
            "fp8": 4500 * _T,
            "int8": 4500 * _T,
            "fp4": 9000 * _T,
        },
        memory_type="HBM3e",
        hbm_bytes=180 * GB,
        hbm_bandwidth=8 * TB,
        l2_bytes=126 * MiB,
        host_link="PCIe Gen5 x16",
        host_link_bandwidth=pcie_bandwidth(5),
        interconnect="NVLink 5 (18 links)",
        interconnect_bandwidth=NVLINK_BIDIRECTIONAL["NVLink 5"] / 2,
        sm_count=148,
        boost_clock_hz=1965e6,
        compute_capability=(10, 0),
        sources=("GLENN-B200", "STAS", "SCALING", "VULTR", "CUTLASS", "PLAYBOOK", "CUDAPG"),
        notes="HGX B200, per GPU. 180 GB usable of 192 GB. fp32 75 from DGX B200 (600/8); other "
        "sources say 80. sm_100, not sm_120.",
        **_CC100,
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
        memory_type="GDDR6X",
        hbm_bytes=24 * GB,
        hbm_bandwidth=1008 * _G,
        l2_bytes=72 * MiB,
        host_link="PCIe Gen4 x16",
        host_link_bandwidth=pcie_bandwidth(4),
        interconnect=None,
        interconnect_bandwidth=None,
        sm_count=128,
        boost_clock_hz=2520e6,
        compute_capability=(8, 9),
        sources=("ADA-WP", "CUDAPG"),
        notes="GeForce: fp16/bf16/fp8 tensor rates with FP32 accumulation are half the FP16-"
        "accumulate rates (330.3 TFLOP/s fp16).",
        **_CC89,
    ),
    Chip(
        name="TPU-v5e",
        vendor="Google",
        architecture="TPU v5e",
        peak_flops_per_s={"bf16": 197 * _T, "int8": 394 * _T},
        memory_type="HBM2",
        hbm_bytes=16 * GB,
        hbm_bandwidth=819 * _G,
        l2_bytes=None,
        host_link="PCIe",
        host_link_bandwidth=None,
        interconnect="ICI, 2D torus (4 links × 50 GB/s per direction)",
        interconnect_bandwidth=4 * 50 * _G,
        interconnect_links=4,
        interconnect_link_bandwidth=50 * _G,
        sources=("TPU-V5E", "SCALING"),
        notes="One TensorCore. MXU rates; no fp32/fp16/fp8 matmul rate is published.",
    ),
    Chip(
        name="TPU-v5p",
        vendor="Google",
        architecture="TPU v5p",
        peak_flops_per_s={"bf16": 459 * _T, "int8": 918 * _T},
        memory_type="HBM2e",
        hbm_bytes=95 * GB,
        hbm_bandwidth=2765 * _G,
        l2_bytes=None,
        host_link="PCIe",
        host_link_bandwidth=None,
        interconnect="ICI, 3D torus (6 links × 100 GB/s per direction)",
        interconnect_bandwidth=6 * 100 * _G,
        interconnect_links=6,
        interconnect_link_bandwidth=100 * _G,
        sources=("TPU-V5P", "SCALING", "STAS"),
        notes="Two TensorCores (megacore).",
    ),
    Chip(
        name="TPU-v6e",
        vendor="Google",
        architecture="TPU v6e (Trillium)",
        peak_flops_per_s={"bf16": 918 * _T, "int8": 1836 * _T},
        memory_type="HBM",
        hbm_bytes=32 * GB,
        hbm_bandwidth=1638 * _G,
        l2_bytes=None,
        host_link="PCIe Gen5",
        host_link_bandwidth=None,
        interconnect="ICI, 2D torus (4 links × 100 GB/s per direction)",
        interconnect_bandwidth=4 * 100 * _G,
        interconnect_links=4,
        interconnect_link_bandwidth=100 * _G,
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
    "teslav100": "V100",
    "a10g": "A10G",
    "l4": "L4",
    "a100": "A100-80GB",
    "a10080gb": "A100-80GB",
    "a100sxm": "A100-80GB",
    "a10040gb": "A100-40GB",
    "h100": "H100-SXM",
    "h100sxm": "H100-SXM",
    "h100sxm5": "H100-SXM",
    "h100pcie": "H100-PCIe",
    "h200": "H200",
    "b200": "B200",
    "rtx4090": "RTX-4090",
    "4090": "RTX-4090",
    "geforcertx4090": "RTX-4090",
    "tpuv5e": "TPU-v5e",
    "v5e": "TPU-v5e",
    "tpuv5p": "TPU-v5p",
    "v5p": "TPU-v5p",
    "tpuv6e": "TPU-v6e",
    "v6e": "TPU-v6e",
    "trillium": "TPU-v6e",
}


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


#: Canonical names by :func:`_key`, so :func:`chip` finds a name with one lookup (calculators
#: and the book's figures call it tens of thousands of times).
_BY_KEY: dict[str, Chip] = {_key(c.name): c for c in _CHIPS}


def chips() -> tuple[Chip, ...]:
    """Every chip in the table, in table order (older and smaller first, TPUs last)."""
    return _CHIPS


def chip_names() -> tuple[str, ...]:
    return tuple(_BY_NAME)


def chip(name: str | Chip) -> Chip:
    """Look a chip up by name or alias, case-insensitively (``"h100"`` → H100-SXM).

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
    raise KeyError(f"unknown chip {name!r}; known chips: {', '.join(_BY_NAME)}")


def chip_from_device_name(device_name: str) -> Chip | None:
    """Best match for a name like ``torch.cuda.get_device_name()`` gives, or ``None``.

    ``"NVIDIA H100 80GB HBM3"`` → H100-SXM, ``"Tesla T4"`` → T4. Returns ``None`` rather than
    guessing when nothing matches, so a measurement is never compared with the wrong roof.
    """
    if not isinstance(device_name, str):
        raise TypeError(
            f"device_name={show(device_name)} must be a string such as "
            "torch.cuda.get_device_name() returns"
        )
    text = device_name.lower()
    patterns = (
        ("h100 pcie", "H100-PCIe"),
        ("h100", "H100-SXM"),
        ("h200", "H200"),
        ("b200", "B200"),
        ("a100", "A100-80GB" if "80gb" in text.replace(" ", "") else "A100-40GB"),
        ("a10g", "A10G"),
        ("l4", "L4"),
        ("v100", "V100"),
        ("t4", "T4"),
        ("4090", "RTX-4090"),
    )
    for pattern, canonical in patterns:
        if re.search(rf"(^|[^a-z0-9]){re.escape(pattern)}($|[^a-z0-9])", text):
            return _BY_NAME[canonical]
    return None


__all__ = [
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
