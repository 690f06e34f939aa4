"""Compile a course kernel for a GPU you do not have, and read what the compiler decided.

Triton can compile with no GPU present: ``triton.compile(ASTSource(fn, signature, constexprs),
target=GPUTarget("cuda", cc, 32))`` produces PTX and a cubin for sm_75 (T4), sm_80 (A100) or sm_90
(H100), and on request (:data:`ARCH_TARGETS`) sm_100 (B200, ``tcgen05`` instructions).
From those we read the shared memory per block (compiler metadata), the registers per
thread (``cuobjdump -res-usage``, shipped in the triton wheel), whether ptxas spilled registers
to local memory because 255 per thread were not enough, and whether tensor-core instructions
appear (``mma.sync`` / ``wgmma`` in the PTX, ``HMMA`` / ``HGMMA`` in the SASS), and
turn them into the theoretical occupancy on that chip with :func:`gpuperf.tiling.occupancy`.

Compiled as the JIT compiles it: a kernel launched with ``kernel[grid](...)`` is specialised on
its arguments before compiling — an integer argument equal to 1 becomes the constant 1, and
pointers and integers divisible by 16 carry that divisibility to the compiler. For the matmuls
on contiguous tensors (unit inner strides, sizes a multiple of 16) that is what turns scalar
loads into 16-byte ``cp.async`` copies pipelined over shared-memory buffers (``num_stages - 1``
of them on sm_80; ``num_stages`` on sm_90 with ``wgmma``);
:data:`KERNELS` records that specialisation so the reports match what runs on a GPU. Only a
matmul tile whose *single* stage already exceeds the chip's shared memory is answered without
compiling, by the course's model, and the report says so (``modelled``).

Why a subprocess: Triton decides at decoration time whether ``@triton.jit`` interprets or
compiles, and the interpreter patches ``triton.language`` while it runs. The notebook process
interprets (no GPU), so compilation runs in a child process with ``TRITON_INTERPRET`` unset and
``GPUPERF_COMPILE_ONLY=1``. Results are cached on disk (keyed by the Triton version, the kernel
module's source and the request), so a test suite or a chapter recompiles nothing twice.

Stored records: the package ships the compiler's records of every compile its tests and chapters
make (``gpuperf/compiled/triton-<version>.json``), keyed exactly like the disk cache, so a fresh
machine answers them at once and a record answers only the very compile it came from — an edited
kernel or another Triton release compiles again. ``.ci/store-compiles`` rewrites the file (it
runs the tests with ``GPUPERF_COMPILE_LOG`` set and keeps the records they used);
``tests/test_inspect.py`` recompiles a sample of them and fails on a record whose kernel source
has changed since, so the file can neither lie nor go stale.

Spills: ptxas puts spilled registers in the per-thread *stack frame* (``STACK:`` in the
``-res-usage`` line, "bytes stack frame" in ``ptxas -v``), not in ``LOCAL:``, which counts only
local arrays and reads 0 for a kernel that spills heavily. A stack frame is not always a spill
(``sin2cos2_fused`` on sm_75 has one, and ptxas reports no spill stores for it), so for a kernel
with a stack frame ptxas is run again with ``-v`` on the same PTX, with Triton's options, and its
"bytes spill stores / loads" decide; ``spill_bytes`` is the stack frame of a kernel that spills,
0 otherwise.

What this is not: a timing. Nothing here runs a kernel.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ._validate import (
    choice,
    flag,
    instance,
    name_string,
    optional,
    positive_float,
    positive_int,
    power_of_two,
    sequence,
    show,
)

#: Targets the course compiles for: name → (chip in :mod:`gpuperf.hardware`, compute capability).
TARGETS: dict[str, tuple[str, int]] = {
    "sm_75": ("T4", 75),
    "sm_80": ("A100", 80),
    "sm_90": ("H100", 90),
}
#: Targets compiled on request only (not by :func:`inspect_all`): Blackwell B200 (tcgen05, TMEM).
ARCH_TARGETS: dict[str, tuple[str, int]] = {
    "sm_100": ("B200", 100),
}
_ALL_TARGETS = {**TARGETS, **ARCH_TARGETS}
DTYPES = ("fp32", "fp16", "bf16")


def target_of(chip_name: str) -> str:
    """The compile target (``"sm_80"``) of a chip of :data:`TARGETS` (``"A100"`` → sm_80).

    ``KeyError`` for a name the chip table does not know; ``ValueError`` listing the targets for a
    chip the course does not compile for (a V100, a TPU).
    """
    from .hardware import chip

    name = chip(chip_name).name
    for target, (target_chip, _) in TARGETS.items():
        if chip(target_chip).name == name:
            return target
    known = ", ".join(f"{chip(c).name} ({t})" for t, (c, _) in TARGETS.items())
    raise ValueError(f"chip_name={chip_name!r}: no compile target for {name}; known: {known}")


@dataclass(frozen=True)
class KernelSpec:
    """How to compile one course kernel: its module, ``@triton.jit`` name and meta-parameters."""

    module: str
    kernel: str
    constexprs: dict = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int = 3
    fp32_pointers: tuple[str, ...] = ()  # pointers whose dtype is fixed (logsumexp, delta)
    # Integer arguments the GPU JIT would see as multiples of 16 (it specialises on that), which
    # lets the compiler vectorise masked loads; off by default to stay conservative.
    divisible_by_16: tuple[str, ...] = ()
    # Integer arguments equal to 1 when the kernel is called on contiguous tensors (unit strides).
    # Triton's JIT turns an integer argument equal to 1 into the constant 1 before compiling, so
    # the compiler knows the innermost dimension is contiguous: vector loads and cp.async.
    unit_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        name_string("module", self.module)
        name_string("kernel", self.kernel)
        object.__setattr__(self, "constexprs", _constexprs("constexprs", self.constexprs))
        power_of_two("num_warps", self.num_warps, 1, 32)
        positive_int("num_stages", self.num_stages, 1, MAX_NUM_STAGES)
        for name in ("fp32_pointers", "divisible_by_16", "unit_args"):
            value = sequence(name, getattr(self, name), name_string, minimum=0)
            object.__setattr__(self, name, value)


#: Most pipeline stages a compile request may ask for (Triton's own bound for these kernels).
MAX_NUM_STAGES = 8


def _constexprs(name: str, value: object) -> dict:
    """Meta-parameters: a mapping from names to numbers, booleans or strings."""
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise TypeError(f"{name}={show(value)} must be a dict of meta-parameter names")
    for key, item in value.items():  # tiles, flags, strides, "ieee": never a float or negative
        if not isinstance(item, bool | str):
            positive_int(f"{name}[{key!r}]", item, minimum=0)
    return dict(value)


def _opcode_counts(name: str, value: object) -> tuple[tuple[str, int], ...]:
    """(opcode, count) pairs, as the PTX listing gives them."""

    def pair(label: str, item: object) -> tuple[str, int]:
        opcode, count = sequence(label, item, minimum=2, maximum=2)
        return name_string(label, opcode), positive_int(label, count, minimum=0)

    return sequence(name, value, pair, minimum=0)


_FA = {
    "IS_CAUSAL": False,
    "BLOCK_M": 64,
    "BLOCK_N": 64,
    "BLOCK_D": 64,
    "INPUT_PRECISION": "ieee",
}
_MATMUL_UNIT = ("stride_ak", "stride_bn", "stride_cn")
_MATMUL_DIVISIBLE = ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")

#: Every course kernel with the meta-parameters its chapter uses.
KERNELS: dict[str, KernelSpec] = {
    "vector_add": KernelSpec("vector_add", "_vector_add_kernel", {"BLOCK_SIZE": 1024}),
    "relu": KernelSpec("elementwise", "_relu_kernel", {"BLOCK_SIZE": 1024}),
    "gelu": KernelSpec("elementwise", "_gelu_kernel", {"BLOCK_SIZE": 1024}),
    "sin2cos2_fused": KernelSpec("fusion", "_sin2cos2_kernel", {"BLOCK_SIZE": 1024}),
    # Stride and offset as runtime values (the strided and misaligned copies), and fixed at 1 and
    # 0 as Triton's JIT specialises them for copy_coalesced on a GPU (integer args equal to 1).
    "copy": KernelSpec("copy", "_copy_kernel", {"BLOCK_SIZE": 1024}),
    "copy_coalesced": KernelSpec(
        "copy",
        "_copy_kernel",
        {"BLOCK_SIZE": 1024, "stride": 1, "offset": 0},
        divisible_by_16=("n_out",),
    ),
    "transpose_naive": KernelSpec("transpose", "_transpose_naive_kernel", {"BLOCK_N": 1024}),
    "transpose_tiled": KernelSpec(
        "transpose", "_transpose_tiled_kernel", {"BLOCK_M": 64, "BLOCK_N": 64}
    ),
    "divergence_uniform": KernelSpec(
        "divergence", "_divergence_uniform_kernel", {"ITERS": 8, "BLOCK_SIZE": 1024}
    ),
    "divergence_split": KernelSpec(
        "divergence", "_divergence_split_kernel", {"ITERS": 8, "BLOCK_SIZE": 1024}
    ),
    "softmax": KernelSpec("softmax", "_softmax_kernel", {"BLOCK_N": 1024}),
    "softmax_online": KernelSpec("softmax", "_softmax_online_kernel", {"BLOCK_N": 1024}),
    # The matmuls as the JIT compiles them for contiguous tensors whose sizes are multiples of 16
    # (4096³, say): unit inner strides become the constant 1, the other sizes and strides carry
    # the divisibility-by-16 hint, exactly the specialisation ``kernel[grid](...)`` applies.
    "matmul_naive": KernelSpec(
        "matmul",
        "_matmul_naive_kernel",
        {"BLOCK_N": 64, "BLOCK_K": 64},
        num_stages=1,
        divisible_by_16=_MATMUL_DIVISIBLE,
        unit_args=_MATMUL_UNIT,
    ),
    "matmul": KernelSpec(
        "matmul",
        "_matmul_kernel",
        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "INPUT_PRECISION": "ieee"},
        num_warps=8,
        num_stages=3,
        divisible_by_16=_MATMUL_DIVISIBLE,
        unit_args=_MATMUL_UNIT,
    ),
    "flash_attention_fwd": KernelSpec(
        "flash_attention", "_flash_fwd_kernel", dict(_FA), num_stages=2, fp32_pointers=("l_ptr",)
    ),
    "flash_attention_bwd_dkdv": KernelSpec(
        "flash_attention",
        "_flash_bwd_dkdv_kernel",
        dict(_FA),
        num_stages=2,
        fp32_pointers=("l_ptr", "delta_ptr"),
    ),
    "flash_attention_bwd_dq": KernelSpec(
        "flash_attention",
        "_flash_bwd_dq_kernel",
        dict(_FA),
        num_stages=2,
        fp32_pointers=("l_ptr", "delta_ptr"),
    ),
}

_MATMUL_TMA = {
    "BLOCK_M": 128,
    "BLOCK_N": 128,
    "BLOCK_K": 64,
    "WARP_SPECIALIZE": False,
    "INPUT_PRECISION": "ieee",
}

#: Variants written for one architecture, compiled on request (``compile_kernel``) but not by
#: :func:`inspect_all`: the Hopper FlashAttention forward's sm_90 tiles do not fit a T4.
ARCH_KERNELS: dict[str, KernelSpec] = {
    # The Hopper forward (tensor descriptors / TMA) with its sm_90 tiles for d = 64.
    "flash_attention_fwd_hopper": KernelSpec(
        "flash_attention_hopper",
        "_flash_fwd_tma_kernel",
        {
            "IS_CAUSAL": False,
            "BLOCK_M": 128,
            "BLOCK_N": 128,
            "BLOCK_D": 64,
            "INPUT_PRECISION": "ieee",
        },
        num_warps=8,
        num_stages=3,
        fp32_pointers=("l_ptr",),
        divisible_by_16=("seq_len",),
    ),
    # The TMA matmul of section 3.8 (tensor descriptors), as one loop of all warps and with
    # Triton's warp specialisation of the K loop (producer and consumer partitions).
    "matmul_tma": KernelSpec(
        "matmul_tma",
        "_matmul_tma_kernel",
        _MATMUL_TMA,
        num_warps=4,
        num_stages=3,
        divisible_by_16=("M", "N", "K"),
    ),
    "matmul_tma_ws": KernelSpec(
        "matmul_tma",
        "_matmul_tma_kernel",
        {**_MATMUL_TMA, "WARP_SPECIALIZE": True},
        num_warps=4,
        num_stages=3,
        divisible_by_16=("M", "N", "K"),
    ),
}

_FLOAT_SCALARS = ("scale",)
# sm_100 (Blackwell): tcgen05.mma in the PTX, UTCHMMA / UTCQMMA in the SASS.
_TC_PTX = re.compile(r"\b(wgmma\.mma_async[\w.]*|mma\.sync[\w.]*|tcgen05\.mma[\w.:]*)")
_TC_SASS = re.compile(r"\b(HGMMA|HMMA|IMMA|QGMMA|UTCHMMA|UTCQMMA)\b")
# Global-memory instructions in PTX: ld.global.v4.b32 moves 4 × 32 bits per thread (vectorised).
_GLOBAL_ACCESS = re.compile(r"\b((?:ld|st)\.global(?:\.[\w:]+)*)")
_VECTOR = re.compile(r"\.v(\d)\b")
# One PTX instruction per line: an optional predicate (@%p1 / @!%p1), then the opcode.
_PTX_OPCODE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)", re.MULTILINE)
# Local-memory stores and loads in SASS (STL, STL.64, LDL.LU.128, ...): how ptxas spills.
_SPILL_SASS = re.compile(r"\b(STL|LDL)((?:\.[A-Z0-9]+)*)")
#: Bumped when the raw compile record gains fields, so older cache entries are not reused.
#: 5: spills from ptxas's own report (schema 3 read LOCAL:, always 0; 4 counted STL/LDL, which
#: also counted libdevice's local arrays as spills).
_CACHE_SCHEMA = 5
# ptxas -v: "1024 bytes stack frame, 2200 bytes spill stores, 1688 bytes spill loads".
_PTXAS_SPILLS = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
)
_PTXAS_REGISTERS = re.compile(r"Used (\d+) registers")


@dataclass(frozen=True)
class CompileReport:
    """What the compiler produced for one kernel on one target (no timing: nothing ran)."""

    kernel: str
    target: str
    chip_name: str
    dtype: str
    num_warps: int
    num_stages: int
    constexprs: dict
    triton_version: str
    compiled: bool
    fits: bool
    shared_memory_bytes: int | None = None
    shared_memory_limit_bytes: int | None = None
    registers_per_thread: int | None = None
    #: Per-thread stack frame (local memory) that holds spilled registers; 0 when nothing spills.
    spill_bytes: int | None = None
    #: Bytes of the spill store / load instructions in the code, as ``ptxas -v`` counts them.
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    occupancy: float | None = None
    active_warps_per_sm: int | None = None
    limited_by: str | None = None
    tensor_core_instructions: tuple[str, ...] = ()
    global_accesses: tuple[tuple[str, int], ...] = ()
    ptx_instructions: tuple[tuple[str, int], ...] = ()
    explanation: str = ""
    #: True when ``fits`` comes from the course's shared-memory model, not from a compile.
    modelled: bool = False

    def __post_init__(self) -> None:
        name_string("kernel", self.kernel)
        choice("target", self.target, _ALL_TARGETS)
        name_string("chip_name", self.chip_name)
        choice("dtype", self.dtype, DTYPES)
        power_of_two("num_warps", self.num_warps, 1, 32)
        positive_int("num_stages", self.num_stages, 1, MAX_NUM_STAGES)
        object.__setattr__(self, "constexprs", _constexprs("constexprs", self.constexprs))
        name_string("triton_version", self.triton_version)
        for name in ("compiled", "fits", "modelled"):
            flag(name, getattr(self, name))
        for name in (
            "shared_memory_bytes", "shared_memory_limit_bytes", "registers_per_thread",
            "spill_bytes", "spill_store_bytes", "spill_load_bytes", "active_warps_per_sm",
        ):  # fmt: skip
            optional(name, getattr(self, name), positive_int, minimum=0)
        optional("occupancy", self.occupancy, positive_float, allow_zero=True, maximum=1.0)
        optional("limited_by", self.limited_by, name_string)
        value = sequence("tensor_core_instructions", self.tensor_core_instructions, name_string,
                         minimum=0)  # fmt: skip
        object.__setattr__(self, "tensor_core_instructions", value)
        for name in ("global_accesses", "ptx_instructions"):
            object.__setattr__(self, name, _opcode_counts(name, getattr(self, name)))
        if not isinstance(self.explanation, str):
            raise TypeError(f"explanation={show(self.explanation)} must be a string")

    @property
    def threads_per_block(self) -> int:
        return 32 * self.num_warps

    @property
    def tensor_cores(self) -> bool:
        """True when the PTX or SASS holds tensor-core (mma / wgmma / HMMA) instructions."""
        return bool(self.tensor_core_instructions)

    @property
    def load_vector_width(self) -> int:
        """Most elements one ``ld.global`` moves per thread (4 for ``ld.global.v4``), 0 if none."""
        widths = [
            int(m.group(1)) if (m := _VECTOR.search(name)) else 1
            for name, _count in self.global_accesses
            if name.startswith("ld.")
        ]
        return max(widths, default=0)

    def instruction_count(self, prefix: str) -> int:
        """How many PTX instructions start with ``prefix`` (``"fma"``, ``"sin.approx"``,
        ``"cp.async"``): static counts in the listing, not executions."""
        prefix = name_string("prefix", prefix)
        return sum(count for name, count in self.ptx_instructions if name.startswith(prefix))

    def summary(self) -> str:
        if not self.compiled or not self.fits:
            return f"{self.kernel} on {self.target} ({self.chip_name}): {self.explanation}"
        tc = ", ".join(self.tensor_core_instructions) if self.tensor_cores else "none (FMA)"
        return (
            f"{self.kernel} {self.dtype} on {self.target} ({self.chip_name}): "
            f"{self.shared_memory_bytes} B shared memory, {self.registers_per_thread} registers/"
            f"thread{f' ({self.spill_bytes} B/thread spilled)' if self.spill_bytes else ''}, "
            f"{self.num_warps} warps → occupancy {self.occupancy:.0%} "
            f"(limited by {self.limited_by}); tensor cores: {tc}"
        )


#: The compiler records shipped with the package, one file per Triton release.
STORE_DIR = Path(__file__).parent / "compiled"


def _cache_dir() -> Path:
    root = os.environ.get("GPUPERF_CACHE_DIR") or Path.home() / ".cache" / "gpuperf"
    path = Path(root) / "inspect"
    path.mkdir(parents=True, exist_ok=True)
    return path


@cache
def _triton_version() -> str:
    from importlib.metadata import version

    return version("triton")


@cache
def _module_source_hash(module: str) -> str:
    path = Path(__file__).parent / "kernels" / f"{module}.py"
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _job(kernel: str, target: str, dtype: str, num_warps, num_stages, overrides) -> dict:
    if not isinstance(kernel, str) or (kernel not in KERNELS and kernel not in ARCH_KERNELS):
        known = ", ".join(sorted({**KERNELS, **ARCH_KERNELS}))
        raise KeyError(f"unknown kernel {show(kernel)}; known: {known}")
    if not isinstance(target, str) or target not in _ALL_TARGETS:
        raise ValueError(f"target={show(target)} must be one of {', '.join(_ALL_TARGETS)}")
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ValueError(f"dtype={show(dtype)} must be one of {', '.join(DTYPES)}")
    spec = KERNELS[kernel] if kernel in KERNELS else ARCH_KERNELS[kernel]
    unknown = set(overrides) - set(spec.constexprs)
    if unknown:
        raise ValueError(
            f"{kernel} has no meta-parameter {', '.join(sorted(unknown))}; "
            f"it takes {', '.join(spec.constexprs)}"
        )
    # 0 is a bad value, not "the default": only None picks the spec's setting.
    num_warps = spec.num_warps if num_warps is None else num_warps
    num_stages = spec.num_stages if num_stages is None else num_stages
    overrides = {name: _meta_parameter(spec, name, value) for name, value in overrides.items()}
    return {
        "kernel": kernel,
        "module": spec.module,
        "fn": spec.kernel,
        "target": target,
        "cc": _ALL_TARGETS[target][1],
        "dtype": dtype,
        "num_warps": power_of_two("num_warps", num_warps, 1, 32),
        "num_stages": positive_int("num_stages", num_stages, 1, 8),
        # Unit strides first: the JIT's constant 1, never a meta-parameter a caller overrides.
        "constexprs": {**dict.fromkeys(spec.unit_args, 1), **spec.constexprs, **overrides},
        "fp32_pointers": list(spec.fp32_pointers),
        "divisible_by_16": list(spec.divisible_by_16),
    }


#: Largest tile edge a tl.dot kernel is compiled with here, and the smallest (tl.dot's minimum).
MAX_DOT_BLOCK = 256
MIN_DOT_BLOCK = 16
#: Largest block of a one-dimensional kernel (elements per program).
MAX_BLOCK = 16384


def _meta_parameter(spec: KernelSpec, name: str, value: object) -> object:
    """Check one meta-parameter override before anything is compiled (errors name the range)."""
    from ._validate import flag, positive_int, power_of_two

    if name in ("IS_CAUSAL", "WARP_SPECIALIZE"):
        return flag(name, value)
    if name == "INPUT_PRECISION":
        if value not in ("ieee", "tf32"):
            raise ValueError(f"INPUT_PRECISION={value!r} must be 'ieee' or 'tf32'")
        return value
    if name == "GROUP_M":
        return positive_int(name, value, 1, 64)
    if name == "ITERS":
        from .kernels.divergence import MAX_ITERS

        return positive_int(name, value, 0, MAX_ITERS)
    if name.startswith("BLOCK"):
        uses_dot = spec.module.startswith("flash_attention") or spec.kernel in (
            "_matmul_kernel",
            "_matmul_tma_kernel",
        )
        if uses_dot:
            return power_of_two(name, value, MIN_DOT_BLOCK, MAX_DOT_BLOCK)
        return power_of_two(name, value, 1, MAX_BLOCK)
    return positive_int(name, value, 0)  # fixed scalars such as stride=1, offset=0


def _precheck(job: dict, the_chip) -> str | None:
    """Explain, without compiling, a matmul tile that cannot fit on the chip whatever happens.

    Only a tile whose *single* A and B panel exceeds the per-block limit is answered this way:
    the compiler allocates at least one buffer for the operands of ``tl.dot`` (Triton's
    pipeliner keeps ``num_stages - 1`` of them on sm_80, ``num_stages`` on sm_90), so such a
    tile can never fit. Everything else is compiled and the compiler's own shared memory decides.
    """
    if job["kernel"] == "matmul_naive":
        return _precheck_naive(job)
    if job["module"].startswith("flash_attention"):
        return _precheck_flash(job)
    if job["kernel"] != "matmul":
        return None
    from . import tiling
    from .hardware import MAX_REGISTERS_PER_THREAD

    c = job["constexprs"]
    try:
        tiling.check_shared_memory(
            the_chip, c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"], job["dtype"], num_stages=1
        )
    except ValueError as exc:
        return (
            f"does not fit (course model, not compiled): a single stage of the A and B panels "
            f"already exceeds the limit ({exc}). Use smaller tiles; the launch would fail with "
            "'out of resource: shared memory'."
        )
    threads = 32 * job["num_warps"]
    accumulators = c["BLOCK_M"] * c["BLOCK_N"] // threads
    if job["cc"] < 80 and accumulators > MAX_REGISTERS_PER_THREAD:
        # sm_75 has no tensor-core dot in Triton ≥ 3.4: tl.dot becomes unrolled FMAs, and ptxas
        # takes many minutes on such tiles only to spill them.
        return (
            f"not compiled (course model): on {job['target']} Triton lowers tl.dot to FMA "
            f"instructions, and each of the {threads} threads would hold {accumulators} fp32 "
            f"accumulators, more than the {MAX_REGISTERS_PER_THREAD} registers a thread can "
            "have: the compiler would spill them to local memory. Use smaller tiles or more "
            "warps."
        )
    return None


def _precheck_naive(job: dict) -> str | None:
    """``matmul_naive`` holds a BLOCK_K×BLOCK_N tile of B in registers: refuse what the launcher
    refuses (the compiler would run for minutes unrolling it, only to spill)."""
    from .kernels.matmul import MAX_NAIVE_TILE

    c = job["constexprs"]
    elements = c["BLOCK_N"] * c["BLOCK_K"]
    if elements <= MAX_NAIVE_TILE:
        return None
    return (
        f"not compiled (course model): BLOCK_K×BLOCK_N = {c['BLOCK_K']}×{c['BLOCK_N']} = "
        f"{elements} elements held in registers; at most {MAX_NAIVE_TILE}. Use smaller blocks."
    )


def _precheck_flash(job: dict) -> str | None:
    """FlashAttention keeps Q, the accumulator and the scores in registers: a configuration the
    launcher refuses (too many live values per thread) is explained, not compiled — such tiles
    make ptxas run for minutes (d = 256 with 256×256 blocks on sm_75 took over 150 s)."""
    from .kernels.flash_attention import MAX_LIVE_PER_THREAD, FlashConfig

    c = job["constexprs"]
    config = FlashConfig(c["BLOCK_M"], c["BLOCK_N"], job["num_warps"], job["num_stages"])
    live = config.live_per_thread(c["BLOCK_D"])
    if live <= MAX_LIVE_PER_THREAD:
        return None
    return (
        f"not compiled (course model): BLOCK_M={c['BLOCK_M']}, BLOCK_N={c['BLOCK_N']}, "
        f"BLOCK_D={c['BLOCK_D']} over {job['num_warps']} warps keeps {live} fp32 values per "
        f"thread in registers; at most {MAX_LIVE_PER_THREAD} (a thread has 255 registers). "
        "Use smaller blocks or more warps."
    )


def _report(job: dict, raw: dict) -> CompileReport:
    from . import hardware, tiling

    the_chip = hardware.chip(_ALL_TARGETS[job["target"]][0])
    limit = the_chip.shared_memory_per_block_bytes
    base = dict(
        kernel=job["kernel"],
        target=job["target"],
        chip_name=the_chip.name,
        dtype=job["dtype"],
        num_warps=job["num_warps"],
        num_stages=job["num_stages"],
        constexprs=dict(job["constexprs"]),
        triton_version=raw.get("triton_version", _triton_version()),
        shared_memory_limit_bytes=limit,
    )
    if raw.get("error"):
        return CompileReport(
            **base,
            compiled=False,
            fits=False,
            explanation=raw["error"],
            modelled=bool(raw.get("modelled")),
        )
    smem, regs = raw["shared"], raw["registers"]
    fits = smem <= limit
    occ = None
    if fits and regs is not None:
        occ = tiling.occupancy(the_chip, 32 * job["num_warps"], regs, smem)
    explanation = (
        ""
        if fits
        else (
            f"does not fit: needs {smem} bytes ({smem / 1024:g} KiB) of shared memory per block; "
            f"{the_chip.name} allows {limit} bytes ({limit / 1024:g} KiB). Use smaller tiles or "
            "fewer num_stages."
        )
    )
    return CompileReport(
        **base,
        compiled=True,
        fits=fits,
        shared_memory_bytes=smem,
        registers_per_thread=regs,
        spill_bytes=raw.get("spill"),
        spill_store_bytes=raw.get("spill_stores"),
        spill_load_bytes=raw.get("spill_loads"),
        occupancy=None if occ is None else occ.occupancy,
        active_warps_per_sm=None if occ is None else occ.active_warps_per_sm,
        limited_by=None if occ is None else occ.limited_by,
        tensor_core_instructions=tuple(raw.get("tensor_cores", ())),
        global_accesses=tuple((name, count) for name, count in raw.get("global_accesses", ())),
        ptx_instructions=tuple((name, count) for name, count in raw.get("ptx_instructions", ())),
        explanation=explanation,
    )


def _key(job: dict, triton_version: str | None = None) -> str:
    """A compile's identity: record schema, Triton release (default: the installed one), the
    kernel module's source and the request."""
    version = triton_version or _triton_version()
    text = json.dumps(
        [_CACHE_SCHEMA, version, _module_source_hash(job["module"]), job], sort_keys=True
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


_MEMORY: dict[str, dict] = {}


def _store_path(triton_version: str | None = None) -> Path:
    """The stored records' file for a Triton release (default: the installed one)."""
    return STORE_DIR / f"triton-{triton_version or _triton_version()}.json"


def _request(name: str, value: object) -> Mapping:
    """One compile request: ``compile_kernel``'s arguments as a dict with a ``kernel``."""
    if not isinstance(value, Mapping) or "kernel" not in value:
        raise TypeError(f"{name}={show(value)} must be a dict of compile_kernel's arguments")
    unknown = [k for k in value if not isinstance(k, str)]
    if unknown:
        raise TypeError(f"{name}={show(value)}: argument names must be strings")
    return value


@cache
def _stored_records() -> dict[str, dict]:
    """The shipped records for the installed Triton: key → ``{"job": ..., "raw": ...}``."""
    path = _store_path()
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))["records"]


def _log(key: str, job: dict, raw: dict) -> None:
    """Append a compile record to ``GPUPERF_COMPILE_LOG`` (what ``.ci/store-compiles`` keeps)."""
    log = os.environ.get("GPUPERF_COMPILE_LOG")
    if not log or raw.get("modelled") or raw.get("transient"):
        return
    line = json.dumps({"key": key, "job": job, "raw": raw}, sort_keys=True) + "\n"
    # One write of one line in append mode: lines from parallel workers do not interleave.
    with open(log, "a", encoding="utf-8") as out:
        out.write(line)


def _write_store(log_paths: list[str | Path]) -> list[Path]:
    """Write the stored records from compile logs, one file per Triton release the logs name
    (the installed one, and Colab's from the replica's runs); returns the files written.

    Only records whose key still matches their request (same kernel source, same Triton, same
    record schema) are kept: a file holds exactly what the logged run compiled or looked up.
    """
    by_version: dict[str, dict[str, dict]] = {}
    for log_path in log_paths:
        for line in Path(log_path).read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            version = entry["raw"].get("triton_version") or _triton_version()
            if _key(entry["job"], version) == entry["key"]:
                raw = {k: v for k, v in entry["raw"].items() if k != "triton_version"}
                records = by_version.setdefault(version, {})
                records[entry["key"]] = {"job": entry["job"], "raw": raw}
    written = []
    for version, records in sorted(by_version.items()):
        path = _store_path(version)
        path.parent.mkdir(parents=True, exist_ok=True)
        # One record a line, sorted by key: a refresh shows in a diff as the records it changed.
        lines = [
            f"{json.dumps(key)}: {json.dumps(record, sort_keys=True, separators=(',', ':'))}"
            for key, record in sorted(records.items())
        ]
        head = {"schema": _CACHE_SCHEMA, "triton_version": version}
        body = json.dumps(head)[:-1] + ', "records": {\n' + ",\n".join(lines) + "\n}}\n"
        path.write_text(body, encoding="utf-8")
        written.append(path)
    _stored_records.cache_clear()
    return written


def compile_many(requests: list[dict], *, fresh: bool = False) -> list[CompileReport]:
    """Compile several kernels in child processes; a request holds ``compile_kernel``'s args.

    Answers come from memory, the shipped records, the disk cache or the compiler, in that
    order; ``fresh=True`` asks the compiler every time (and caches nothing), to check the
    others against it."""
    from . import hardware
    from ._validate import flag

    fresh = flag("fresh", fresh)
    jobs = []
    for r in sequence("requests", requests, _request):
        r = dict(r)
        jobs.append(
            _job(
                r.pop("kernel"),
                r.pop("target", "sm_80"),
                r.pop("dtype", "fp16"),
                r.pop("num_warps", None),
                r.pop("num_stages", None),
                r,
            )
        )
    raws: dict[str, dict] = {}
    todo = []
    for job in jobs:
        key = _key(job)
        reason = _precheck(job, hardware.chip(_ALL_TARGETS[job["target"]][0]))
        if reason:
            raws[key] = _MEMORY[key] = {"error": reason, "modelled": True}
            continue
        if fresh:
            todo.append((key, job))
            continue
        path = _cache_dir() / f"{key}.json"
        if key in _MEMORY:
            raws[key] = _MEMORY[key]
        elif key in _stored_records():
            raw = {**_stored_records()[key]["raw"], "triton_version": _triton_version()}
            raws[key] = _MEMORY[key] = raw
        elif path.exists():
            raws[key] = _MEMORY[key] = json.loads(path.read_text())
        else:
            todo.append((key, job))
            continue
        _log(key, job, raws[key])
    if todo:

        def child_job(key: str, job: dict) -> dict:
            # The child caches each result as soon as it has it, so an interrupted batch resumes.
            return job if fresh else {**job, "_cache_path": str(_cache_dir() / f"{key}.json")}

        # Split the work over two child processes (the course's CI machines have two cores).
        halves = [todo[0::2], todo[1::2]] if len(todo) > 1 else [todo]
        with ThreadPoolExecutor(len(halves)) as pool:
            results = list(
                pool.map(lambda part: _run_worker([child_job(k, j) for k, j in part]), halves)
            )
        done = [
            pair
            for part, res in zip(halves, results, strict=True)
            for pair in zip(part, res, strict=True)
        ]
        for (key, job), raw in done:
            raw["triton_version"] = _triton_version()
            raws[key] = raw
            if fresh:
                continue
            _MEMORY[key] = raw
            _log(key, job, raw)
            if not raw.get("transient"):
                (_cache_dir() / f"{key}.json").write_text(json.dumps(raw))
    return [_report(job, raws[_key(job)]) for job in jobs]


def compile_kernel(
    kernel: str,
    target: str = "sm_80",
    *,
    dtype: str = "fp16",
    num_warps: int | None = None,
    num_stages: int | None = None,
    **constexprs,
) -> CompileReport:
    """Compile one course kernel (a key of :data:`KERNELS`) for ``target`` with no GPU present.

    ``constexprs`` override the kernel's meta-parameters (``BLOCK_M=256``). A configuration that
    cannot fit on the chip comes back with ``fits=False`` and an ``explanation``, never a
    compiler traceback.
    """
    request = dict(
        kernel=kernel, target=target, dtype=dtype, num_warps=num_warps, num_stages=num_stages
    )
    return compile_many([{**request, **constexprs}])[0]


def inspect_all(
    targets: tuple[str, ...] = tuple(TARGETS), dtype: str = "fp16"
) -> list[CompileReport]:
    """Every course kernel on every target, compiled in one child process (cached)."""
    targets = sequence("targets", targets, lambda name, t: choice(name, t, _ALL_TARGETS))
    dtype = choice("dtype", dtype, DTYPES)
    return compile_many(
        [{"kernel": k, "target": t, "dtype": dtype} for k in KERNELS for t in targets]
    )


def table(reports: list[CompileReport]) -> str:
    """A plain-text table: kernel, target, shared memory, registers, occupancy, tensor cores."""
    head = (
        f"{'kernel':26} {'target':6} {'dtype':5} {'smem B':>7} {'regs':>4} {'occ':>5}  "
        "tensor cores"
    )
    lines = [head, "-" * len(head)]
    check = lambda name, r: instance(name, r, CompileReport)
    for r in sequence("reports", reports, check, minimum=0):
        if not (r.compiled and r.fits):
            lines.append(f"{r.kernel:26} {r.target:6} {r.dtype:5} {r.explanation}")
            continue
        occ = f"{r.occupancy:.0%}" if r.occupancy is not None else "?"
        tc = r.tensor_core_instructions[0] if r.tensor_cores else "no (FMA)"
        lines.append(
            f"{r.kernel:26} {r.target:6} {r.dtype:5} {r.shared_memory_bytes:>7} "
            f"{r.registers_per_thread!s:>4} {occ:>5}  {tc}"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The child process.


def _run_worker(jobs: list[dict]) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["GPUPERF_COMPILE_ONLY"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "gpuperf.inspect", "--worker"],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    marker = "@@GPUPERF-INSPECT@@"
    if proc.returncode != 0 or marker not in proc.stdout:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        error = "the compiler process failed: " + " | ".join(tail)
        return [{"error": error, "transient": True} for _ in jobs]
    return json.loads(proc.stdout.split(marker, 1)[1])


def _signature(fn, job: dict) -> dict:
    ptr = {"fp32": "*fp32", "fp16": "*fp16", "bf16": "*bf16"}[job["dtype"]]
    sig = {}
    for name in fn.arg_names:
        if name in job["constexprs"]:
            sig[name] = "constexpr"
        elif name.endswith("_ptr"):
            sig[name] = "*fp32" if name in job["fp32_pointers"] else ptr
        elif name in _FLOAT_SCALARS:
            sig[name] = "fp32"
        else:
            sig[name] = "i32"
    return sig


def _parse_resource_usage(text: str) -> dict[str, int | None]:
    """Registers and per-thread stack/local bytes from ``cuobjdump -res-usage`` output.

    The line looks like ``REG:255 STACK:1024 SHARED:1024 LOCAL:0 ...``. Spilled registers go to
    the *stack frame* (``STACK``, ptxas's "bytes stack frame"); ``LOCAL`` counts only
    statically sized local arrays, so a kernel that spills heavily still reads ``LOCAL:0``.
    """
    found: dict[str, int | None] = {}
    for name in ("REG", "STACK", "LOCAL"):
        m = re.search(rf"\b{name}:(\d+)", text)
        found[name.lower()] = int(m.group(1)) if m else None
    return found


def _spill_traffic(sass: str) -> tuple[int, int]:
    """Bytes of spill stores and spill loads in a SASS listing, counted as ``ptxas -v`` does.

    Each ``STL`` / ``LDL`` instruction moves 4 bytes per thread, ``.64`` 8 and ``.128`` 16
    (``.U8``/``.S8`` 1, ``.U16``/``.S16`` 2). These are static sizes of the instructions in the
    code, not bytes moved at run time (a spill inside a loop runs once per iteration).
    """
    widths = {"64": 8, "128": 16, "U8": 1, "S8": 1, "U16": 2, "S16": 2}
    totals = {"STL": 0, "LDL": 0}
    for op, suffixes in _SPILL_SASS.findall(sass):
        width = 4
        for suffix in suffixes.split(".")[1:]:
            width = widths.get(suffix, width)
        totals[op] += width
    return totals["STL"], totals["LDL"]


def _parse_ptxas_log(text: str) -> dict[str, int] | None:
    """Stack frame, spill stores / loads and registers from a ``ptxas -v`` log (one kernel).

    ``None`` when the log has no such lines (ptxas failed, or was not run with ``-v``).
    """
    spills, regs = _PTXAS_SPILLS.search(text), _PTXAS_REGISTERS.search(text)
    if not spills or not regs:
        return None
    frame, stores, loads = (int(x) for x in spills.groups())
    return {"registers": int(regs.group(1)), "stack": frame, "stores": stores, "loads": loads}


def _spills_from(usage: str, sass: str, ptxas_log: str | None = None) -> dict[str, int | None]:
    """Registers and spills of one cubin from its ``cuobjdump -res-usage`` and ``-sass`` text.

    ``spill`` is the per-thread stack frame of a kernel that spills registers into it (0 when it
    does not); ``spill_stores`` / ``spill_loads`` are the spill instruction bytes. A stack frame
    is not always a spill (it can hold a local array). ptxas tells the two apart, so when its
    ``-v`` log for the same compile is given (same register count) the spill figures are its
    own; without one, every ``STL`` / ``LDL`` in the SASS is counted, which matched ptxas for the
    course matmuls and over-counts kernels whose stack frame holds something else.
    """
    res = _parse_resource_usage(usage)
    frame = (res["stack"] or 0) + (res["local"] or 0)
    log = _parse_ptxas_log(ptxas_log) if ptxas_log else None
    if log is not None and log["registers"] == res["reg"]:
        stores, loads = log["stores"], log["loads"]
    else:
        stores, loads = _spill_traffic(sass)
    return {
        "registers": res["reg"],
        "spill": frame if stores else 0,
        "spill_stores": stores,
        "spill_loads": loads,
    }


def _ptxas_log(ptx: str, cc: int) -> str | None:
    """Run Triton's own ptxas with ``-v`` on the PTX, with the options Triton passes it, and
    return the log (``None`` if it cannot run). Only called for kernels with a stack frame."""
    try:
        from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability

        ptxas = get_ptxas(cc).path
        arch = sm_arch_from_capability(cc)
    except Exception:  # another Triton layout: fall back to counting the SASS
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        command = [ptxas, "-lineinfo", "-v", "--regAllocOptLevel=2", f"--gpu-name={arch}"]
        proc = subprocess.run(
            [*command, str(src), "-o", str(Path(tmp) / "k.o")], capture_output=True, text=True
        )
    return proc.stderr + proc.stdout if proc.returncode == 0 else None


def _bin_dir() -> Path:
    import triton

    return Path(triton.__file__).parent / "backends" / "nvidia" / "bin"


def _compile_one(job: dict) -> dict:
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    module = importlib.import_module(f"gpuperf.kernels.{job['module']}")
    fn = getattr(module, job["fn"])
    signature = _signature(fn, job)
    # Pointers 16-byte aligned, as torch allocates them: what the JIT would specialise on a GPU.
    attrs = {
        (i,): [["tt.divisibility", 16]]
        for i, name in enumerate(fn.arg_names)
        if signature[name].startswith("*") or name in job.get("divisible_by_16", ())
    }
    src = ASTSource(fn, signature, constexprs=dict(job["constexprs"]), attrs=attrs)
    options = {"num_warps": job["num_warps"], "num_stages": job["num_stages"]}
    try:
        compiled = triton.compile(src, target=GPUTarget("cuda", job["cc"], 32), options=options)
    except Exception as exc:  # the compiler's own error, shortened to what a reader can act on
        text = str(exc).strip().splitlines()
        useful = [line for line in text if "error" in line.lower() or "Feature" in line]
        reason = (useful or text or [type(exc).__name__])[-1].strip()
        return {"error": f"does not compile for {job['target']}: {reason}"}
    asm = compiled.asm
    ptx = asm.get("ptx", "")
    found = sorted(set(_TC_PTX.findall(ptx)))
    accesses = sorted(Counter(_GLOBAL_ACCESS.findall(ptx)).items())
    body = ptx.split("{", 1)[1] if "{" in ptx else ptx  # instructions live in the function body
    opcodes = sorted(Counter(_PTX_OPCODE.findall(body)).items())
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        cubin.write_bytes(asm["cubin"])
        tools = _bin_dir()
        usage = subprocess.run(
            [str(tools / "cuobjdump"), "-res-usage", str(cubin)], capture_output=True, text=True
        ).stdout
        sass = subprocess.run(
            [str(tools / "cuobjdump"), "-sass", str(cubin)], capture_output=True, text=True
        ).stdout
        found += sorted({f"SASS {name}" for name in _TC_SASS.findall(sass)})
    res = _parse_resource_usage(usage)
    # A stack frame may hold spills or a local array: ask ptxas which (a second, same compile).
    needs_log = (res["stack"] or 0) + (res["local"] or 0) > 0
    log = _ptxas_log(ptx, job["cc"]) if needs_log else None
    return {
        "shared": int(compiled.metadata.shared),
        **_spills_from(usage, sass, log),
        "tensor_cores": found,
        "global_accesses": accesses,
        "ptx_instructions": opcodes,
    }


def _worker() -> None:
    jobs = json.loads(sys.stdin.read())
    out = []
    for job in jobs:
        cache_path = job.pop("_cache_path", None)
        raw = _compile_one(job)
        if cache_path:
            Path(cache_path).write_text(json.dumps({**raw, "triton_version": _triton_version()}))
        out.append(raw)
    sys.stdout.write("@@GPUPERF-INSPECT@@" + json.dumps(out))


if __name__ == "__main__" and "--worker" in sys.argv:
    _worker()
elif __name__ == "__main__" and "--store" in sys.argv:
    # python -m gpuperf.inspect --store LOG [LOG ...]: what .ci/store-compiles runs
    for path in _write_store(sys.argv[sys.argv.index("--store") + 1 :]):
        count = len(json.loads(path.read_text(encoding="utf-8"))["records"])
        print(f"{count} compiler records → {path}")
elif __name__ == "__main__":
    print(table(inspect_all()))


__all__ = [
    "ARCH_KERNELS",
    "ARCH_TARGETS",
    "KERNELS",
    "TARGETS",
    "CompileReport",
    "KernelSpec",
    "compile_kernel",
    "compile_many",
    "inspect_all",
    "table",
    "target_of",
]
