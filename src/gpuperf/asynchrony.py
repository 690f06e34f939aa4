"""Asynchrony on Hopper and Blackwell: what the compiler emits, and what overlap can buy.

Two questions, one module.

**What does the compiler use on each generation?** The same Triton source compiled for sm_80
(A100), sm_90 (H100) and sm_100 (B200) comes out as different instructions. This module sorts
the PTX opcodes of a :class:`gpuperf.inspect.CompileReport` into the families chapter 3.8
discusses (:data:`FAMILIES`): the warp-wide ``mma.sync`` of Ampere, the warpgroup
``wgmma.mma_async`` of Hopper and Blackwell's ``tcgen05.mma``; per-thread ``cp.async`` copies
against tensor-memory-accelerator copies (``cp.async.bulk.tensor``); the ``mbarrier`` objects
that asynchronous copies and MMAs signal; and the ``tcgen05`` allocation, load and store of
Blackwell's tensor memory. The counts are *static*: how many such instructions the listing
holds, not how many times they run. Compiling takes seconds per kernel, so the counts for the
course's kernels are compiled once with :func:`regenerate` and stored below with the Triton
version that produced them; ``tests/test_asynchrony.py`` recompiles entries and compares.

**What can overlapping loads with math buy?** :func:`tile_overlap` models one output tile of a
matmul stepping along K. Each step loads a BM×BK panel of A and a BK×BN panel of B and does
2·BM·BN·BK FLOPs. If every SM streams its own panels at an equal share of HBM bandwidth and
computes at an equal share of the tensor-core peak, a step takes ``load`` and ``math`` seconds
(``reuse`` divides the HBM bytes when neighbouring tiles share panels through L2).
Without asynchrony the warps wait for each load and then compute: ``steps·(load + math)``.
With asynchronous copies into a multi-stage buffer the next panel loads while this one
multiplies: ``load + (steps − 1)·max(load, math) + math`` (the first load and the last
multiply cannot hide). This is the roofline's two bounds — the sum and the max of T_comms and
T_math (:mod:`gpuperf.roofline`) — applied per tile. The ratio ``math / load`` equals the
tile's intensity 2·BM·BN / ((BM + BN)·bytes) over the chip's ridge point, so overlap hides the
smaller of the two and the tile shape decides which one is left.

Limits: no latency (a load is modelled as pure bandwidth; hiding latency is what the extra
pipeline stages are for); L2 reuse between tiles only as the ``reuse`` factor, with L2 assumed
to keep up; no epilogue; every SM busy. The serial baseline is one CTA per SM whose warps wait
for their own loads: with several CTAs (or more warps) resident per SM, occupancy hides part of
that wait without asynchronous copies (chapter 1.1), so real kernels gain less than the model's
ratio. It is a model of the ceiling, not a timing; nothing here ran.
"""

# ruff: noqa: E501  (the generated table at the end has one long line per compile)
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ._validate import file_path, name_string, positive_float, positive_int, power_of_two, show
from .hardware import Chip, chip
from .units import bytes_per_element, check_precision

# ---------------------------------------------------------------------------------------------
# Instruction families


@dataclass(frozen=True)
class Family:
    """A group of PTX opcodes: their name in the table, what they do, and how to match them."""

    key: str
    label: str
    prefixes: tuple[str, ...]
    meaning: str

    def __post_init__(self) -> None:
        for name in ("key", "label", "meaning"):
            name_string(name, getattr(self, name))
        if not isinstance(self.prefixes, tuple) or not self.prefixes:
            raise TypeError(f"prefixes={self.prefixes!r} must be a non-empty tuple")
        for prefix in self.prefixes:
            name_string("prefixes", prefix)

    def matches(self, opcode: str) -> bool:
        """True when the PTX ``opcode`` belongs to this family."""
        if not isinstance(opcode, str):
            raise TypeError(f"opcode={show(opcode)} must be a PTX opcode (a string)")
        return opcode.startswith(self.prefixes)


#: Largest static count of one family a stored compile may hold (a sanity bound).
MAX_INSTRUCTIONS = 1 << 20

#: The instruction families the chapter counts, in table order.
FAMILIES: tuple[Family, ...] = (
    Family(
        "mma_sync",
        "mma.sync",
        ("mma.sync",),
        "tensor-core MMA issued by a whole warp together (.sync); result in registers",
    ),
    Family("wgmma", "wgmma.mma_async", ("wgmma.mma_async",), "warpgroup MMA, asynchronous"),
    Family(
        "wgmma_sync",
        "wgmma fence/commit/wait",
        ("wgmma.fence", "wgmma.commit_group", "wgmma.wait_group"),
        "ordering and waiting for wgmma results",
    ),
    Family("tcgen05_mma", "tcgen05.mma", ("tcgen05.mma",), "Blackwell MMA into tensor memory"),
    Family(
        "tmem",
        "tcgen05 alloc/ld/st/wait",
        (
            "tcgen05.alloc",
            "tcgen05.dealloc",
            "tcgen05.relinquish",
            "tcgen05.ld",
            "tcgen05.st",
            "tcgen05.wait",
        ),
        "allocate, read and write tensor memory",
    ),
    Family(
        "tcgen05_commit",
        "tcgen05.commit",
        ("tcgen05.commit",),
        "tcgen05.mma completion arrives on an mbarrier",
    ),
    Family(
        "cp_async",
        "cp.async (per thread)",
        ("cp.async.ca", "cp.async.cg"),
        "each thread starts its own copy global → shared",
    ),
    Family(
        "tma",
        "cp.async.bulk.tensor (TMA)",
        ("cp.async.bulk.tensor",),
        "one instruction copies a whole tile (TMA)",
    ),
    Family("mbarrier", "mbarrier", ("mbarrier",), "shared-memory barriers async work signals"),
    Family(
        "tensormap",
        "tensormap (descriptor set-up)",
        ("tensormap.", "fence.proxy.tensormap"),
        "the kernel writes its TMA descriptors",
    ),
    Family("ldmatrix", "ldmatrix", ("ldmatrix",), "warp loads MMA fragments from shared memory"),
)
#: Opcodes that name the cluster-wide shared-memory window (``shared::cluster``); they also
#: belong to one of the families above, so they are reported separately (:func:`cluster_count`).
CLUSTER_MARK = "::cluster"
FAMILY_KEYS: tuple[str, ...] = tuple(f.key for f in FAMILIES)


def _pairs(ptx_instructions: object) -> list[tuple[str, int]]:
    """Checked ``(opcode, count)`` pairs from a report, a mapping or an iterable of pairs.

    An opcode is a non-empty string and a count an integer from 0 to :data:`MAX_INSTRUCTIONS`
    (``"7"``, ``2.5`` and ``True`` are refused, not converted).
    """
    pairs = getattr(ptx_instructions, "ptx_instructions", ptx_instructions)
    if isinstance(pairs, Mapping):
        pairs = pairs.items()
    wanted = (
        f"ptx_instructions={show(ptx_instructions)} must be a CompileReport, a mapping or an "
        "iterable of (opcode, count) pairs"
    )
    if isinstance(pairs, str | bytes):
        raise TypeError(wanted)
    try:
        items = [tuple(pair) for pair in pairs]  # type: ignore[union-attr]
    except TypeError:
        raise TypeError(wanted) from None
    checked = []
    for item in items:
        if len(item) != 2:
            raise TypeError(f"{wanted}; got {show(item)}")
        name, count = item
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"{wanted}; opcode {show(name)} is not a non-empty string")
        try:
            count = positive_int("count", count, 0, MAX_INSTRUCTIONS)
        except ValueError:
            raise ValueError(
                f"ptx_instructions: count={show(count)} for {name!r} must be an integer ≥ 0 "
                f"and ≤ {MAX_INSTRUCTIONS}"
            ) from None
        checked.append((name, count))
    return checked


def cluster_count(ptx_instructions: object) -> int:
    """Static count of opcodes that name the ``shared::cluster`` window, from ``(opcode, count)``
    pairs (or a report, or a mapping). A one-block cluster is still a cluster: Triton's
    default."""
    return sum(count for name, count in _pairs(ptx_instructions) if CLUSTER_MARK in name)


def family_counts(ptx_instructions: object) -> dict[str, int]:
    """Static instruction counts per family from ``(opcode, count)`` pairs.

    ``ptx_instructions`` is :attr:`gpuperf.inspect.CompileReport.ptx_instructions` (or any
    iterable of ``(opcode, count)``, a mapping opcode → count, or a report itself). Every family
    appears, with 0 if absent.
    """
    counts = dict.fromkeys(FAMILY_KEYS, 0)
    for name, count in _pairs(ptx_instructions):
        for family in FAMILIES:
            if family.matches(name):
                counts[family.key] += count
    return counts


_SHAPE = re.compile(r"\.m(\d+)n(\d+)k(\d+)\.")
#: Largest m, n or k of a PTX MMA shape (wgmma's n and the 1-bit mma.sync's k reach 256).
MAX_MMA_DIM = 256


def mma_shape(instruction: str) -> tuple[int, int, int]:
    """(m, n, k) of one tensor-core instruction from its PTX name.

    ``mma.sync.aligned.m16n8k16…`` → (16, 8, 16): one warp multiplies a 16×16 by a 16×8 tile.
    ``wgmma.mma_async.sync.aligned.m64n128k16…`` → (64, 128, 16): one warpgroup, 64 rows.
    ``tcgen05.mma`` names no shape in its opcode (it lives in an instruction descriptor), so it
    is an error here, as is any name without ``.mMnNkK.``.
    """
    if not isinstance(instruction, str):
        raise TypeError(f"instruction={instruction!r} must be a PTX opcode string")
    found = _SHAPE.search(instruction + ".")
    if not found:
        raise ValueError(
            f"instruction={instruction!r} names no .mMnNkK. shape (mma.sync and wgmma do; "
            "tcgen05.mma keeps its shape in a descriptor)"
        )
    m, n, k = (int(g) for g in found.groups())
    if not all(1 <= size <= MAX_MMA_DIM for size in (m, n, k)):
        raise ValueError(
            f"instruction={instruction!r} names the shape m{m}n{n}k{k}; PTX MMA shapes run "
            f"from 1 to {MAX_MMA_DIM} in each of m, n and k"
        )
    return m, n, k


def mma_flops(instruction: str) -> int:
    """FLOPs one tensor-core instruction performs: 2·m·n·k (a multiply and an add per term)."""
    m, n, k = mma_shape(instruction)
    return 2 * m * n * k


# ---------------------------------------------------------------------------------------------
# The compiled cases (stored below by regenerate())

#: Targets compared: Ampere, Hopper, Blackwell (sm_100 is compiled on request by gpuperf.inspect).
TARGETS: tuple[str, ...] = ("sm_80", "sm_90", "sm_100")
#: The PTX target Triton writes for each of :data:`TARGETS`. From compute capability 9.0 it adds
#: the suffix "a" (Triton's ``sm_arch_from_capability``): the architecture-specific targets,
#: the only ones with ``wgmma``, ``setmaxnreg`` and ``tcgen05`` (LLVM D155851; NVIDIA's CUDA 12.9
#: family-specific blog), whose code runs on that architecture alone. CUDA or PTX compiled for
#: plain ``sm_90`` has none of the Hopper instructions counted here.
PTX_TARGETS: dict[str, str] = {"sm_80": "sm_80", "sm_90": "sm_90a", "sm_100": "sm_100a"}
DTYPE = "fp16"
#: The Hopper FlashAttention forward at its d = 64 tiles (``hopper_config(64)``).
_HOPPER_D64 = dict(
    IS_CAUSAL=False, BLOCK_M=128, BLOCK_N=128, BLOCK_D=64, num_warps=8, num_stages=3
)
#: Kernel key in :mod:`gpuperf.inspect` → (label, meta-parameter overrides).
CASES: dict[str, tuple[str, dict]] = {
    "matmul": ("course matmul 128×128×32, 8 warps, 3 stages", {}),
    "flash_attention_fwd": ("FlashAttention forward (portable) d = 64", {}),
    "flash_attention_fwd_hopper": ("FlashAttention forward (Hopper, TMA) d = 64", _HOPPER_D64),
}


def _requests() -> list[dict]:
    """The :func:`gpuperf.inspect.compile_many` requests for every case on every target."""
    return [
        dict(kernel=kernel, target=target, dtype=DTYPE, **overrides)
        for kernel, (_label, overrides) in CASES.items()
        for target in TARGETS
    ]


def _entry(report: object) -> tuple:
    """A compile report as a stored row: family counts (in :data:`FAMILY_KEYS` order), shared
    memory bytes, registers per thread, the tensor-core instructions found, the count of
    opcodes naming ``shared::cluster`` and the family opcodes. The row is checked as
    :class:`StoredCounts` checks it, so :func:`regenerate` never writes one :func:`stored`
    would refuse."""
    ok = all(getattr(report, name, False) is True for name in ("compiled", "fits"))
    if not ok:
        why = getattr(report, "explanation", "not a CompileReport")
        raise ValueError(f"report={show(report)} is not a compiled, fitting CompileReport: {why}")
    try:
        pairs = _pairs(report)
        tensor_core = report.tensor_core_instructions  # type: ignore[attr-defined]
        row = StoredCounts(
            kernel="report",
            target="report",
            counts=family_counts(pairs),
            shared_memory_bytes=report.shared_memory_bytes,  # type: ignore[attr-defined]
            registers_per_thread=report.registers_per_thread,  # type: ignore[attr-defined]
            tensor_core_instructions=(
                tuple(tensor_core) if isinstance(tensor_core, list) else tensor_core
            ),
            cluster_instructions=cluster_count(pairs),
            opcodes=tuple(
                sorted(name for name, _ in pairs if any(f.matches(name) for f in FAMILIES))
            ),
        )
    except (TypeError, ValueError, AttributeError) as error:
        raise TypeError(f"report={show(report)} is not a usable CompileReport: {error}") from None
    return (
        tuple(row.counts[k] for k in FAMILY_KEYS),
        int(row.shared_memory_bytes),
        int(row.registers_per_thread),
        row.tensor_core_instructions,
        row.cluster_instructions,
        row.opcodes,
    )


@dataclass(frozen=True)
class StoredCounts:
    """One stored compile: instruction families, shared memory and registers (no timing)."""

    kernel: str
    target: str
    counts: dict[str, int]
    shared_memory_bytes: int
    registers_per_thread: int
    tensor_core_instructions: tuple[str, ...]
    #: Static count of opcodes naming ``shared::cluster`` (:data:`CLUSTER_MARK`).
    cluster_instructions: int = 0
    #: Every distinct opcode of the families, as the PTX spells it (sorted).
    opcodes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        name_string("kernel", self.kernel)
        name_string("target", self.target)
        if not isinstance(self.counts, dict) or set(self.counts) != set(FAMILY_KEYS):
            raise ValueError(
                f"counts={self.counts!r} must map every family "
                f"({', '.join(FAMILY_KEYS)}) to a count"
            )
        for key, value in self.counts.items():
            positive_int(f"counts[{key!r}]", value, 0, MAX_INSTRUCTIONS)
        positive_int("shared_memory_bytes", self.shared_memory_bytes, 0, 1 << 30)
        positive_int("registers_per_thread", self.registers_per_thread, 1, 255)
        if not isinstance(self.tensor_core_instructions, tuple):
            raise TypeError(
                f"tensor_core_instructions={self.tensor_core_instructions!r} "
                "must be a tuple of opcode strings"
            )
        for name in self.tensor_core_instructions:
            name_string("tensor_core_instructions", name)
        positive_int("cluster_instructions", self.cluster_instructions, 0, MAX_INSTRUCTIONS)
        if not isinstance(self.opcodes, tuple):
            raise TypeError(f"opcodes={self.opcodes!r} must be a tuple of opcode strings")
        for name in self.opcodes:
            name_string("opcodes", name)

    def opcodes_of(self, family: str) -> tuple[str, ...]:
        """The distinct opcodes of one family in this compile, as the PTX spells them."""
        self.count(family)  # unknown family: KeyError naming the known ones
        match = next(f for f in FAMILIES if f.key == family)
        return tuple(name for name in self.opcodes if match.matches(name))

    def count(self, family: str) -> int:
        if not isinstance(family, str) or family not in self.counts:
            raise KeyError(f"unknown family {show(family)}; known: {', '.join(FAMILY_KEYS)}")
        return self.counts[family]


def stored(kernel: str, target: str) -> StoredCounts:
    """The stored compile of ``kernel`` (a key of :data:`CASES`) for ``target``."""
    if (
        not isinstance(kernel, str)
        or not isinstance(target, str)
        or (kernel, target) not in COUNTS
    ):
        raise KeyError(
            f"no stored compile for kernel={kernel!r}, target={target!r}: kernels "
            f"{', '.join(CASES)}, targets {', '.join(TARGETS)}"
        )
    counts, smem, regs, tc, cluster, opcodes = COUNTS[kernel, target]
    return StoredCounts(
        kernel,
        target,
        dict(zip(FAMILY_KEYS, counts, strict=True)),
        smem,
        regs,
        tc,
        cluster,
        opcodes,
    )


def counts_table(kernel: str) -> str:
    """A Markdown table: one row per family, one column per target (headed by the PTX target
    Triton wrote, :data:`PTX_TARGETS`), for one stored kernel."""
    from .notebook import table

    rows = []
    columns = [stored(kernel, t) for t in TARGETS]
    for family in FAMILIES:
        rows.append([f"`{family.label}`", *(c.count(family.key) for c in columns)])
    rows.append(
        ["any opcode naming `shared::cluster`", *(c.cluster_instructions for c in columns)]
    )
    rows.append(["shared memory (KiB)", *(f"{c.shared_memory_bytes / 1024:.1f}" for c in columns)])
    rows.append(["registers / thread", *(c.registers_per_thread for c in columns)])
    return table(["instructions in the PTX", *(PTX_TARGETS[t] for t in TARGETS)], rows)


def regenerate(path: str | Path | None = None) -> int:  # pragma: no cover - offline tool
    """Compile every case (about a minute, cached by gpuperf.inspect) and rewrite the table."""
    from . import inspect as gi

    path = file_path("path", path, default=__file__)

    reports = gi.compile_many(_requests())
    lines = []
    for request, report in zip(_requests(), reports, strict=True):
        key = (request["kernel"], request["target"])
        lines.append(f"    {key!r}: {_entry(report)!r},")
    version = reports[0].triton_version
    text = path.read_text(encoding="utf-8")
    head = text.split(_MARKER)[0]
    body = (
        f"{_MARKER} by regenerate() with triton {version}; do not edit by hand ---\n"
        f'TRITON_VERSION = "{version}"\n'
        "# fmt: off\n"
        "COUNTS: dict[tuple[str, str], tuple] = {\n" + "\n".join(lines) + "\n}\n"
        "# fmt: on\n"
    )
    path.write_text(head + body, encoding="utf-8")
    return len(lines)


# ---------------------------------------------------------------------------------------------
# The overlap model


@dataclass(frozen=True)
class TileOverlap:
    """One output tile's K loop on one SM, with and without overlapping loads and math.

    ``load_s`` (HBM bytes of a step ÷ ``reuse`` ÷ the SM's share of HBM bandwidth) and
    ``math_s`` (FLOPs ÷ the SM's share of peak) are per K step; ``serial_s`` = steps·(load + math);
    ``overlapped_s`` = load + (steps − 1)·max(load, math) + math.
    """

    chip_name: str
    precision: str
    block_m: int
    block_n: int
    block_k: int
    steps: int
    bytes_per_step: int
    flops_per_step: int
    reuse: int
    load_s: float
    math_s: float

    def __post_init__(self) -> None:
        name_string("chip_name", self.chip_name)
        check_precision(self.precision, "precision")
        for name in ("block_m", "block_n", "block_k"):
            power_of_two(name, getattr(self, name), 16, 256)
        positive_int("steps", self.steps, 1, MAX_STEPS)
        positive_int("bytes_per_step", self.bytes_per_step, 1)
        positive_int("flops_per_step", self.flops_per_step, 1)
        positive_int("reuse", self.reuse, 1, MAX_REUSE)
        positive_float("load_s", self.load_s)
        positive_float("math_s", self.math_s)

    @property
    def serial_s(self) -> float:
        return self.steps * (self.load_s + self.math_s)

    @property
    def overlapped_s(self) -> float:
        return self.load_s + (self.steps - 1) * max(self.load_s, self.math_s) + self.math_s

    @property
    def speedup(self) -> float:
        """serial / overlapped: at most 2, reached when load = math and steps is large."""
        return self.serial_s / self.overlapped_s

    @property
    def bound(self) -> str:
        """What is left once the other is hidden: ``"memory"`` or ``"math"``."""
        return "memory" if self.load_s > self.math_s else "math"

    @property
    def intensity(self) -> float:
        """FLOPs per byte of one step: 2·BM·BN / ((BM + BN)·bytes per element), before reuse."""
        return self.flops_per_step / self.bytes_per_step

    @property
    def tensor_busy_serial(self) -> float:
        """Fraction of the time the tensor cores work without overlap."""
        return self.steps * self.math_s / self.serial_s

    @property
    def tensor_busy_overlapped(self) -> float:
        """Fraction of the time the tensor cores work with overlap."""
        return self.steps * self.math_s / self.overlapped_s


#: Largest K step count the model accepts (K up to 2²⁰ with BK = 16 is 65,536 steps).
MAX_STEPS = 1 << 16
#: Largest number of tiles assumed to share one HBM fetch of a panel.
MAX_REUSE = 64


def tile_overlap(
    chip_name: str | Chip,
    block_m: int,
    block_n: int,
    block_k: int,
    k: int,
    precision: str = "fp16",
    reuse: int = 1,
) -> TileOverlap:
    """Per-tile load and math time along K for (BM, BN, BK) tiles on ``chip_name``.

    Each SM gets 1/SMs of the HBM bandwidth and of the ``precision`` peak; a step moves
    (BM + BN)·BK elements of ``precision`` and does 2·BM·BN·BK FLOPs; ``k`` sets the number of
    steps, ⌈k / BK⌉. Tiles are powers of two from 16 to 256.

    ``reuse`` (1 to 64) is how many tiles share each panel byte fetched from HBM: neighbouring
    tiles read the same rows of A or columns of B, and with a grouped launch order
    (section 3.6) the later readers hit in L2. The model then charges HBM for
    1/``reuse`` of the bytes and assumes L2 keeps up — an assumption, not a sourced number; 1
    (every panel from HBM) is the pessimistic default.
    """
    the_chip = chip(chip_name).require_sm_model("a per-SM tile overlap")
    block_m = power_of_two("block_m", block_m, 16, 256)
    block_n = power_of_two("block_n", block_n, 16, 256)
    block_k = power_of_two("block_k", block_k, 16, 256)
    k = positive_int("k", k, 1, MAX_STEPS * block_k)
    precision = check_precision(precision)
    reuse = positive_int("reuse", reuse, 1, MAX_REUSE)
    size = bytes_per_element(precision)
    steps = math.ceil(k / block_k)
    n_bytes = round((block_m + block_n) * block_k * size)
    flops = 2 * block_m * block_n * block_k
    per_sm_bandwidth = the_chip.hbm_bandwidth / the_chip.sm_count
    per_sm_peak = the_chip.peak_flops(precision) / the_chip.sm_count
    return TileOverlap(
        chip_name=the_chip.name,
        precision=precision,
        block_m=block_m,
        block_n=block_n,
        block_k=block_k,
        steps=steps,
        bytes_per_step=n_bytes,
        flops_per_step=flops,
        reuse=reuse,
        load_s=n_bytes / reuse / per_sm_bandwidth,
        math_s=flops / per_sm_peak,
    )


__all__ = [
    "CASES",
    "CLUSTER_MARK",
    "COUNTS",
    "FAMILIES",
    "FAMILY_KEYS",
    "MAX_INSTRUCTIONS",
    "MAX_MMA_DIM",
    "MAX_REUSE",
    "MAX_STEPS",
    "PTX_TARGETS",
    "TARGETS",
    "TRITON_VERSION",
    "Family",
    "StoredCounts",
    "TileOverlap",
    "cluster_count",
    "counts_table",
    "family_counts",
    "mma_flops",
    "mma_shape",
    "regenerate",
    "stored",
    "tile_overlap",
]

_MARKER = "# --- " + "generated"  # split here (spelt in two so this line is not the marker)


# --- generated by regenerate() with triton 3.9.0; do not edit by hand ---
TRITON_VERSION = "3.9.0"
# fmt: off
COUNTS: dict[tuple[str, str], tuple] = {
    ('matmul', 'sm_80'): ((32, 0, 0, 0, 0, 0, 12, 0, 0, 0, 18), 32768, 175, ('mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', 'SASS HMMA'), 0, ('cp.async.cg.shared.global', 'ldmatrix.sync.aligned.m8n8.x4.shared.b16', 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32')),
    ('matmul', 'sm_90'): ((0, 2, 4, 0, 0, 0, 12, 0, 0, 0, 8), 49152, 108, ('wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', 'SASS HGMMA'), 0, ('cp.async.cg.shared.global', 'ldmatrix.sync.aligned.m8n8.x4.shared.b16', 'wgmma.commit_group.sync.aligned', 'wgmma.fence.sync.aligned', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', 'wgmma.wait_group.sync.aligned')),
    ('matmul', 'sm_100'): ((0, 0, 0, 4, 7, 2, 16, 0, 6, 0, 8), 49168, 106, ('tcgen05.mma.cta_group::1.kind::f16', 'SASS UTCHMMA'), 2, ('cp.async.cg.shared.global', 'ldmatrix.sync.aligned.m8n8.x4.shared.b16', 'mbarrier.init.shared::cta.b64', 'mbarrier.inval.shared::cta.b64', 'mbarrier.try_wait.parity.shared::cta.b64', 'tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32', 'tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64', 'tcgen05.dealloc.cta_group::1.sync.aligned.b32', 'tcgen05.ld.sync.aligned.32x32b.x64.b32', 'tcgen05.mma.cta_group::1.kind::f16', 'tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned', 'tcgen05.st.sync.aligned.32x32b.x64.b32', 'tcgen05.wait::ld.sync.aligned', 'tcgen05.wait::st.sync.aligned')),
    ('flash_attention_fwd', 'sm_80'): ((64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20), 16384, 255, ('mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', 'SASS HMMA'), 0, ('ldmatrix.sync.aligned.m8n8.x4.shared.b16', 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32')),
    ('flash_attention_fwd', 'sm_90'): ((0, 8, 6, 0, 0, 0, 0, 0, 0, 0, 0), 24576, 254, ('wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', 'SASS HGMMA'), 0, ('wgmma.commit_group.sync.aligned', 'wgmma.fence.sync.aligned', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', 'wgmma.wait_group.sync.aligned')),
    ('flash_attention_fwd', 'sm_100'): ((0, 0, 0, 16, 21, 4, 0, 0, 12, 0, 5), 32792, 180, ('tcgen05.mma.cta_group::1.kind::f16', 'SASS UTCHMMA'), 4, ('ldmatrix.sync.aligned.m8n8.x1.shared.b16', 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16', 'mbarrier.init.shared::cta.b64', 'mbarrier.inval.shared::cta.b64', 'mbarrier.try_wait.parity.shared::cta.b64', 'tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32', 'tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64', 'tcgen05.dealloc.cta_group::1.sync.aligned.b32', 'tcgen05.ld.sync.aligned.16x32bx2.x32.b32', 'tcgen05.mma.cta_group::1.kind::f16', 'tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned', 'tcgen05.st.sync.aligned.16x32bx2.x16.b32', 'tcgen05.st.sync.aligned.16x32bx2.x32.b32', 'tcgen05.wait::ld.sync.aligned', 'tcgen05.wait::st.sync.aligned')),
    ('flash_attention_fwd_hopper', 'sm_80'): ((256, 0, 0, 0, 0, 0, 24, 0, 0, 0, 140), 65536, 255, ('mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', 'SASS HMMA'), 0, ('cp.async.cg.shared.global', 'ldmatrix.sync.aligned.m8n8.x4.shared.b16', 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32')),
    ('flash_attention_fwd_hopper', 'sm_90'): ((0, 24, 12, 0, 0, 0, 0, 14, 44, 68, 0), 115712, 158, ('wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', 'SASS HGMMA'), 0, ('cp.async.bulk.tensor.3d.global.shared::cta.bulk_group', 'cp.async.bulk.tensor.3d.shared::cta.global.mbarrier::complete_tx::bytes', 'fence.proxy.tensormap::generic.acquire.gpu', 'mbarrier.arrive.expect_tx.shared::cta.b64', 'mbarrier.init.shared::cta.b64', 'mbarrier.inval.shared::cta.b64', 'mbarrier.try_wait.parity.shared::cta.b64', 'tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned', 'tensormap.replace.tile.box_dim.shared::cta.b1024.b32', 'tensormap.replace.tile.element_stride.shared::cta.b1024.b32', 'tensormap.replace.tile.elemtype.shared::cta.b1024.b32', 'tensormap.replace.tile.global_address.shared::cta.b1024.b64', 'tensormap.replace.tile.global_dim.shared::cta.b1024.b32', 'tensormap.replace.tile.global_stride.shared::cta.b1024.b64', 'tensormap.replace.tile.rank.shared::cta.b1024.b32', 'tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32', 'wgmma.commit_group.sync.aligned', 'wgmma.fence.sync.aligned', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', 'wgmma.wait_group.sync.aligned')),
    ('flash_attention_fwd_hopper', 'sm_100'): ((0, 0, 0, 56, 35, 10, 0, 20, 80, 68, 6), 115712, 151, ('tcgen05.mma.cta_group::1.kind::f16', 'SASS UTCHMMA'), 10, ('cp.async.bulk.tensor.3d.global.shared::cta.bulk_group', 'cp.async.bulk.tensor.3d.shared::cta.global.mbarrier::complete_tx::bytes', 'fence.proxy.tensormap::generic.acquire.gpu', 'ldmatrix.sync.aligned.m8n8.x1.shared.b16', 'mbarrier.arrive.expect_tx.shared::cta.b64', 'mbarrier.init.shared::cta.b64', 'mbarrier.inval.shared::cta.b64', 'mbarrier.try_wait.parity.shared::cta.b64', 'tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32', 'tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64', 'tcgen05.dealloc.cta_group::1.sync.aligned.b32', 'tcgen05.ld.sync.aligned.16x32bx2.x64.b32', 'tcgen05.ld.sync.aligned.32x32b.x32.b32', 'tcgen05.mma.cta_group::1.kind::f16', 'tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned', 'tcgen05.st.sync.aligned.16x32bx2.x32.b32', 'tcgen05.st.sync.aligned.32x32b.x32.b32', 'tcgen05.wait::ld.sync.aligned', 'tcgen05.wait::st.sync.aligned', 'tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned', 'tensormap.replace.tile.box_dim.shared::cta.b1024.b32', 'tensormap.replace.tile.element_stride.shared::cta.b1024.b32', 'tensormap.replace.tile.elemtype.shared::cta.b1024.b32', 'tensormap.replace.tile.global_address.shared::cta.b1024.b64', 'tensormap.replace.tile.global_dim.shared::cta.b1024.b32', 'tensormap.replace.tile.global_stride.shared::cta.b1024.b64', 'tensormap.replace.tile.rank.shared::cta.b1024.b32', 'tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32')),
}
# fmt: on
