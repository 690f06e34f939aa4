"""Who does what inside a Hopper or Blackwell kernel: warp specialisation, clusters, tensor memory.

Section 3.8's second half, in two parts.

**What the compiler emits** (:data:`COMPILED`, read with :func:`compiled`). Kernels compiled
offline for sm_80 / sm_90 / sm_100 with the installed Triton, their PTX read for facts the
instruction-family counts of :mod:`gpuperf.asynchrony` do not show:

* the threads per CTA (``.reqntid``), the register cap (``.maxnreg``) and every ``setmaxnreg``
  (a warpgroup giving registers back to the CTA's pool, ``.dec``, or taking them, ``.inc``);
* the *partitions* of a warp-specialised kernel: for each ``setmaxnreg``, the TMA loads, MMAs,
  tensor-memory loads and TMA stores reachable from it in the control-flow graph without
  passing another ``setmaxnreg`` — so the producer (loads only) and the consumers (MMAs) can be
  told apart by the registers they run with;
* static ``cp.async`` copies inside and outside loops (the K loop versus the prologue that fills
  the pipeline);
* ``tcgen05.mma``: its ``cta_group`` (1, or 2 for a pair of CTAs computing one tile), the M×N
  shape decoded from its 32-bit instruction descriptor (N/8 in bits 17–22, M/16 in bits 24–28,
  PTX ISA), whether a single elected thread issues it (``elect.sync``), and the tensor-memory
  columns ``tcgen05.alloc`` takes;
* multicast TMA copies (``.multicast::cluster``) and cluster barriers.

The cases are the course matmul, the TMA matmul of :mod:`gpuperf.kernels.matmul_tma` with and
without warp specialisation (and in a cluster of two CTAs), and two Gluon probes for what
Triton's ``tl`` language does not emit (:mod:`gpuperf.kernels._gluon_probes`). Compiling takes
about a minute; :func:`regenerate` stores the facts with the Triton version, and
``tests/test_warpspec.py`` recompiles entries and compares.

**What the budgets allow** (calculators, no compiler):

* :func:`register_split` — one producer warpgroup and n consumers share an SM's 65,536
  registers: without ``setmaxnreg`` every thread gets the same cap, with it the producer keeps a
  few and the consumers get the rest, in multiples of 8 from 24 to 256 (PTX ISA);
* :func:`tensor_memory` — Blackwell's accumulator in tensor memory: 128 lanes × 512 columns of
  32 bits per SM (:data:`gpuperf.hardware.TENSOR_MEMORY_PER_SM`), allocated in powers of two of
  columns;
* :func:`cluster_operand_bytes` — how multicast (and the 2-CTA MMA) cut the operand bytes each
  CTA pulls from L2 per K step when the CTAs of a cluster share panels;
* :func:`softmax_pingpong` — FlashAttention-3's ping-pong: two consumer warpgroups alternate so
  one's softmax (special-function units) runs under the other's matmuls (tensor cores);
* :func:`exp_balance` — when tensor throughput doubles and the special-function units do not
  (Hopper → Blackwell), the share of exponentials to move to the FMA units, as
  FlashAttention-4 does with a polynomial exp2 (:func:`exp2_emulated`).

Limits: static counts and compiler structure, not timings; nothing here ran on a GPU. The
calculators are ceilings: they ignore latency, issue slots and the bandwidth of L2 and of
shared memory.
"""

# ruff: noqa: E501  (the generated table at the end has one long line per compile)
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._validate import (
    choice,
    file_path,
    name_string,
    positive_float,
    positive_int,
    power_of_two,
    real_array,
    sequence,
    show,
)
from .hardware import SPECIAL_FUNCTION_OPS_PER_S, TENSOR_MEMORY_PER_SM, Chip, chip
from .units import bytes_per_element, check_precision

# ---------------------------------------------------------------------------------------------
# Reading PTX

_OP = re.compile(r"^\s*(?:@(!?%\w+)\s+)?([a-z][\w.:]*)(.*)$")
_LABEL = re.compile(r"^(\$L__\w+):")
_BRA = re.compile(r"\bbra(?:\.uni)?\s+(\$L__\w+);")
_SETMAXNREG = re.compile(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+);")
_ELECT = re.compile(r"elect\.sync\s+%\w+\|(%\w+)")
_MOV_B32 = re.compile(r"mov\.b32\s+(%r\d+),\s*(-?\d+);")
_ALLOC = re.compile(r"tcgen05\.alloc\.[\w.:]+\s+\[[^\]]+\],\s*(\d+);")

#: What the partitions are told apart by: the opcode tests, keyed by the name the table uses.
PARTITION_KINDS: dict[str, tuple[str, ...]] = {
    "TMA load": ("cp.async.bulk.tensor", "shared::cta.global", "shared::cluster.global"),
    "TMA store": ("cp.async.bulk.tensor", "global.shared"),
    "MMA": ("wgmma.mma_async", "tcgen05.mma", "mma.sync"),
    "TMEM load": ("tcgen05.ld",),
}


def _kind(opcode: str) -> str | None:
    if opcode.startswith("cp.async.bulk.tensor"):
        if "global.shared" in opcode:
            return "TMA store"
        if ".global." in opcode or opcode.endswith(".global"):
            return "TMA load"
        return None
    if opcode.startswith(PARTITION_KINDS["MMA"]):
        return "MMA"
    if opcode.startswith("tcgen05.ld"):
        return "TMEM load"
    return None


def _lines(ptx: str) -> list[str]:
    if not isinstance(ptx, str):
        raise TypeError(f"ptx={show(ptx)} must be PTX text")
    return (ptx.split("{", 1)[1] if "{" in ptx else ptx).splitlines()


def _loops(lines: list[str]) -> list[tuple[int, int]]:
    """(label line, branch line) of every backward branch: the loops of the listing."""
    seen: dict[str, int] = {}
    spans = []
    for i, line in enumerate(lines):
        label = _LABEL.match(line.strip())
        if label:
            seen[label.group(1)] = i
        spans += [(seen[t], i) for t in _BRA.findall(line) if t in seen and seen[t] < i]
    return spans


def _cp_async_split(ptx: str) -> tuple[int, int]:
    """Static per-thread ``cp.async`` copies (``.ca``/``.cg``) inside loops, and outside."""
    lines = _lines(ptx)
    spans = _loops(lines)
    inside = outside = 0
    for i, line in enumerate(lines):
        op = _OP.match(line)
        if op and op.group(2).startswith(("cp.async.ca", "cp.async.cg")):
            if any(a <= i <= b for a, b in spans):
                inside += 1
            else:
                outside += 1
    return inside, outside


def _partitions(ptx: str) -> tuple[tuple[str, int, int, tuple[tuple[str, int], ...]], ...]:
    """(action, registers, how many such partitions, kind counts) for each ``setmaxnreg``.

    From each ``setmaxnreg`` the control-flow graph is walked (fall-through and ``bra`` targets)
    until another ``setmaxnreg``; the instructions reached are that partition's. Entries that
    reach the same code (a restore point before the dispatch loop) count once.
    """
    lines = _lines(ptx)
    starts = sorted({0} | {i for i, line in enumerate(lines) if _LABEL.match(line.strip())})
    ends = {
        s: (starts[k + 1] if k + 1 < len(starts) else len(lines)) for k, s in enumerate(starts)
    }
    label_at = {_LABEL.match(lines[s].strip()).group(1): s for s in starts if s}  # type: ignore[union-attr]
    block_of = {i: s for s in starts for i in range(s, ends[s])}

    def walk(first: int) -> frozenset[int]:
        reached: set[int] = set()
        todo, queued = [first], {first}
        while todo:
            i = todo.pop()
            block = block_of.get(i)
            if block is None:
                continue
            falls_through = True
            while i < ends[block]:
                line = lines[i]
                if _SETMAXNREG.search(line):
                    falls_through = False
                    break
                reached.add(i)
                for target in _BRA.findall(line):
                    if label_at[target] not in queued:
                        queued.add(label_at[target])
                        todo.append(label_at[target])
                op = _OP.match(line)
                if op and not op.group(1) and op.group(2).startswith(("bra", "ret", "exit")):
                    if op.group(2).startswith("bra") and "$L__" not in line:
                        i += 1  # a local label inside inline asm: not a block edge
                        continue
                    falls_through = False
                    break
                i += 1
            if falls_through and i < len(lines) and i not in queued:
                queued.add(i)
                todo.append(i)
        return frozenset(reached)

    found: dict[frozenset[int], tuple[str, int]] = {}
    for i, line in enumerate(lines):
        m = _SETMAXNREG.search(line)
        if m:
            found.setdefault(walk(i + 1), (m.group(1), int(m.group(2))))
    shapes: Counter = Counter()
    for reached, (action, registers) in found.items():
        kinds = Counter(
            k
            for j in reached
            if (op := _OP.match(lines[j])) and (k := _kind(op.group(2))) is not None
        )
        if kinds:
            shapes[(action, registers, tuple(sorted(kinds.items())))] += 1
    return tuple(
        sorted((a, r, n, k) for (a, r, k), n in shapes.items())  # type: ignore[misc]
    )


def _tcgen05_shapes(ptx: str) -> tuple[tuple[int, int, int, int], ...]:
    """(cta_group, M, N, count) of the ``tcgen05.mma`` instructions, decoded from the 32-bit
    instruction descriptor (its 4th operand) where a ``mov.b32`` sets it to a constant."""
    constants: dict[str, int] = {}
    shapes: Counter = Counter()
    for line in _lines(ptx):
        mov = _MOV_B32.search(line)
        if mov:
            constants[mov.group(1)] = int(mov.group(2)) & 0xFFFFFFFF
        op = _OP.match(line)
        if op and op.group(2).startswith("tcgen05.mma"):
            group = 2 if "cta_group::2" in op.group(2) else 1
            operands = [x.strip() for x in op.group(3).rstrip(";").split(",")]
            value = constants.get(operands[3]) if len(operands) > 3 else None
            if value is None:
                shapes[(group, 0, 0)] += 1
            else:
                shapes[(group, ((value >> 24) & 0x1F) << 4, ((value >> 17) & 0x3F) << 3)] += 1
    return tuple(sorted((g, m, n, c) for (g, m, n), c in shapes.items()))


def _elected(ptx: str, prefix: str) -> tuple[int, int]:
    """(issued under an ``elect.sync`` predicate, all) for the opcodes starting with prefix."""
    elected_predicates: set[str] = set()
    elected = total = 0
    for line in _lines(ptx):
        e = _ELECT.search(line)
        if e:
            elected_predicates.add(e.group(1))
        op = _OP.match(line)
        if op and op.group(2).startswith(prefix):
            total += 1
            elected += bool(op.group(1) and op.group(1) in elected_predicates)
    return elected, total


def _directive(ptx: str, name: str) -> int:
    m = re.search(rf"^\.{name}\s+(\d+)", ptx, re.M)
    return int(m.group(1)) if m else 0


def facts(ptx: str, shared_memory_bytes: int = 0) -> tuple:
    """The stored row of one compile (see :class:`CompiledFacts` for the fields)."""
    lines = _lines(ptx)
    shared_memory_bytes = positive_int("shared_memory_bytes", shared_memory_bytes, 0, 1 << 30)
    ops = [op.group(2) for line in lines if (op := _OP.match(line))]
    tc = sorted({o for o in ops if o.startswith(PARTITION_KINDS["MMA"])})
    inside, outside = _cp_async_split(ptx)
    return (
        _directive(ptx, "reqntid"),
        _directive(ptx, "maxnreg"),
        tuple(sorted(Counter((a, int(r)) for a, r in _SETMAXNREG.findall(ptx)).items())),
        _partitions(ptx),
        inside,
        outside,
        sum(1 for o in ops if _kind(o) == "TMA load"),
        sum(1 for o in ops if o.startswith("cp.async.bulk.tensor") and "multicast::cluster" in o),
        sum(1 for o in ops if o.startswith("barrier.cluster")),
        sum(1 for o in ops if "shared::cluster" in o),
        tc[0] if tc else "",
        _elected(ptx, "tcgen05.mma"),
        _tcgen05_shapes(ptx),
        tuple(int(c) for c in _ALLOC.findall(ptx)),
        int(shared_memory_bytes),
    )


@dataclass(frozen=True)
class CompiledFacts:
    """What one compile's PTX says (static, no timing)."""

    case: str
    target: str
    #: Threads per CTA (``.reqntid``; 0 if absent) and the register cap (``.maxnreg``).
    threads: int
    max_registers: int
    #: ((action, registers), how many ``setmaxnreg``) — action ``"inc"`` or ``"dec"``.
    setmaxnreg: tuple
    #: (action, registers, partitions like it, ((kind, static count), ...)) per partition.
    partitions: tuple
    cp_async_in_loop: int
    cp_async_outside_loop: int
    tma_loads: int
    multicast_loads: int
    cluster_barriers: int
    #: Opcodes that address the cluster's shared-memory window (``shared::cluster``): another
    #: CTA's shared memory or barrier (distributed shared memory).
    cluster_window: int
    mma_opcode: str
    #: (tcgen05.mma under an elect.sync predicate, all tcgen05.mma).
    elected_mma: tuple
    #: (cta_group, M, N, count) per tcgen05.mma shape.
    mma_shapes: tuple
    #: Tensor-memory columns of each tcgen05.alloc.
    tmem_columns: tuple
    shared_memory_bytes: int

    def __post_init__(self) -> None:
        name_string("case", self.case)
        name_string("target", self.target)
        for name in ("threads", "max_registers", "cp_async_in_loop", "cp_async_outside_loop",
                     "tma_loads", "multicast_loads", "cluster_barriers", "cluster_window",
                     "shared_memory_bytes"):  # fmt: skip
            positive_int(name, getattr(self, name), 0)
        for name in ("setmaxnreg", "partitions", "elected_mma", "mma_shapes", "tmem_columns"):
            if not isinstance(getattr(self, name), tuple):
                raise TypeError(f"{name}={show(getattr(self, name))} must be a tuple")
        if not isinstance(self.mma_opcode, str):
            raise TypeError(f"mma_opcode={show(self.mma_opcode)} must be a string")

    def registers(self, action: str) -> tuple[int, ...]:
        """The register counts ``setmaxnreg.<action>`` sets (``"inc"`` or ``"dec"``)."""
        action = choice("action", action, ("inc", "dec"))
        return tuple(sorted(int(r) for (a, r), _ in self.setmaxnreg if a == action))

    def partition_rows(self) -> list[list]:
        """Rows for a table: registers, how many, and what each partition issues."""
        rows = []
        for action, registers, count, kinds in self.partitions:
            what = ", ".join(f"{n} {k}" for k, n in kinds)
            rows.append([f"setmaxnreg.{action} {registers}", count, what])
        return rows


# ---------------------------------------------------------------------------------------------
# The compiled cases

#: Case → (how to build it, targets). "triton": a kernel of gpuperf.inspect with overrides;
#: "gluon": a probe of gpuperf.kernels._gluon_probes.
CASES: dict[str, dict] = {
    "matmul": {"kind": "triton", "kernel": "matmul", "targets": ("sm_80", "sm_100")},
    "matmul_tma": {"kind": "triton", "kernel": "matmul_tma", "targets": ("sm_90", "sm_100")},
    "matmul_tma_ws": {"kind": "triton", "kernel": "matmul_tma_ws", "targets": ("sm_90", "sm_100")},
    "matmul_tma_cluster": {
        "kind": "triton",
        "kernel": "matmul_tma",
        "num_ctas": 2,
        "targets": ("sm_90", "sm_100"),
    },
    "tma_multicast": {"kind": "gluon", "probe": "tma_multicast", "targets": ("sm_90", "sm_100")},
    "two_cta_mma": {"kind": "gluon", "probe": "two_cta_mma", "targets": ("sm_100",)},
}
_CC = {"sm_80": 80, "sm_90": 90, "sm_100": 100}


def compiled(case: str, target: str) -> CompiledFacts:
    """The stored facts of ``case`` (a key of :data:`CASES`) compiled for ``target``."""
    if not isinstance(case, str) or not isinstance(target, str) or (case, target) not in COMPILED:
        known = "; ".join(f"{c}: {', '.join(v['targets'])}" for c, v in CASES.items())
        raise KeyError(f"no stored compile for case={case!r}, target={target!r}; known: {known}")
    return CompiledFacts(case, target, *COMPILED[case, target])


def _compile_ptx(job: dict) -> tuple[str, int]:  # pragma: no cover - runs in the subprocess
    import triton
    from triton.backends.compiler import GPUTarget

    target = GPUTarget("cuda", job["cc"], 32)
    if job["kind"] == "gluon":
        from .kernels import _gluon_probes

        src, options = _gluon_probes.sources(job["probe"])
        options = {"num_warps": 4, **options}
    else:
        import importlib

        from triton.compiler import ASTSource

        from . import inspect as gi

        spec = gi._job(job["kernel"], job["target"], "fp16", None, None, {})
        module = importlib.import_module(f"gpuperf.kernels.{spec['module']}")
        fn = getattr(module, spec["fn"])
        signature = gi._signature(fn, spec)
        attrs = {
            (i,): [["tt.divisibility", 16]]
            for i, name in enumerate(fn.arg_names)
            if signature[name].startswith("*") or name in spec["divisible_by_16"]
        }
        src = ASTSource(fn, signature, constexprs=dict(spec["constexprs"]), attrs=attrs)
        options = {"num_warps": spec["num_warps"], "num_stages": spec["num_stages"]}
        if job.get("num_ctas"):
            options["num_ctas"] = job["num_ctas"]
    kernel = triton.compile(src, target=target, options=options)
    return kernel.asm["ptx"], int(kernel.metadata.shared)


def _jobs() -> list[dict]:
    return [
        {
            **{k: v for k, v in spec.items() if k != "targets"},
            "case": case,
            "target": t,
            "cc": _CC[t],
        }
        for case, spec in CASES.items()
        for t in spec["targets"]
    ]


def _case_target(name: str, value: object) -> tuple[str, str]:
    """One ``(case, target)`` pair of :data:`CASES`, or an error naming it and the options."""
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise TypeError(
            f"{name}={show(value)} must be a (case, target) pair, e.g. ('matmul', 'sm_80')"
        )
    if len(value) != 2:
        raise ValueError(
            f"{name}={show(value)} must be a (case, target) pair, got {len(value)} items"
        )
    case = name_string(f"{name}[0]", value[0])
    target = name_string(f"{name}[1]", value[1])
    if case not in CASES:
        raise ValueError(f"{name}[0]={case!r} is not a compiled case; cases: {', '.join(CASES)}")
    targets = CASES[case]["targets"]
    if target not in targets:
        raise ValueError(
            f"{name}[1]={target!r} is not a target of case {case!r}; its targets: "
            f"{', '.join(targets)}"
        )
    return case, target


def compile_facts(cases: list[tuple[str, str]] | None = None) -> dict[tuple[str, str], tuple]:
    """Compile (case, target) pairs (``None``: every pair of :data:`CASES`) in a child process;
    their fact rows, keyed by pair. Needs Triton; about a minute for all of them.

    ``cases`` is a non-empty list of ``(case, target)`` pairs, each a key of :data:`CASES` and
    one of its targets; anything else is refused before the compiler starts.
    """
    if cases is not None:
        cases = sequence("cases", cases, _case_target, maximum=len(_jobs()))
    return _compile_facts(cases)


def _compile_facts(cases: tuple[tuple[str, str], ...] | None) -> dict:  # pragma: no cover
    jobs = [j for j in _jobs() if cases is None or (j["case"], j["target"]) in cases]
    rows = _run_compiler_worker(jobs, timeout_s=1800)
    return {(j["case"], j["target"]): _tuples(row) for j, row in zip(jobs, rows, strict=True)}


def _run_compiler_worker(jobs: list[dict], timeout_s: float) -> list:  # pragma: no cover
    """Compile ``jobs`` in a child process (``--worker``: no interpreter, compile only) and return
    its rows, one per job."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["GPUPERF_COMPILE_ONLY"] = "1"
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    proc = subprocess.run(
        [sys.executable, "-m", "gpuperf.warpspec", "--worker"],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout_s,
    )
    marker = "@@GPUPERF-WARPSPEC@@"
    if proc.returncode != 0 or marker not in proc.stdout:
        raise RuntimeError("the compiler process failed: " + proc.stderr[-2000:])
    return json.loads(proc.stdout.split(marker, 1)[1])


def _tuples(value: object) -> object:
    """JSON lists back to the tuples the stored rows hold."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def _worker() -> None:  # pragma: no cover - runs in the subprocess
    jobs = json.loads(sys.stdin.read())
    out = []
    for job in jobs:
        ptx, shared = _compile_ptx(job)
        out.append(_plain_target_row(ptx, job["cc"]) if job.get("plain") else facts(ptx, shared))
    sys.stdout.write("@@GPUPERF-WARPSPEC@@" + json.dumps(out))


# ---------------------------------------------------------------------------------------------
# Arch-specific targets: what a plain sm_90 / sm_100 build cannot have

_TARGET_LINE = re.compile(r"^\.target\s+(\S+)", re.M)
_REFUSED = re.compile(r"(Instruction|Feature) '([^']+)' not supported on \.target '(sm_\d+)'")

#: The course's warp-specialised TMA matmul compiled by Triton for cc 9.0 and 10.0: the PTX's
#: ``.target`` line, then what ptxas (the one in the Triton wheel) says when the same PTX is
#: assembled for the *plain* target (``.target`` and ``--gpu-name`` without the ``a``): whether
#: it assembles, and every instruction and feature it refuses. Stored by
#: :func:`plain_target_facts` (two compiles, seconds each); ``tests/test_warpspec.py``
#: recompiles and compares. Triton 3.9.0.
PLAIN_TARGET: dict[str, tuple[str, bool, bool, tuple[str, ...], tuple[str, ...]]] = {
    "sm_90": (
        "sm_90a",
        True,
        False,
        ("setmaxnreg.dec", "setmaxnreg.inc", "tensormap.replace", "wgmma.commit_group",
         "wgmma.fence", "wgmma.mma_async with floating point types", "wgmma.wait_group"),
        (),
    ),
    "sm_100": (
        "sm_100a",
        True,
        False,
        ("setmaxnreg.dec", "setmaxnreg.inc", "tcgen05.alloc", "tcgen05.commit", "tcgen05.dealloc",
         "tcgen05.ld", "tcgen05.mma", "tcgen05.relinquish_alloc_permit", "tcgen05.st",
         "tcgen05.wait", "tensormap.replace"),
        (".32x32b", ".cta_group::1", ".kind::f16"),
    ),
}  # fmt: skip


def refused_on_plain_target(ptxas_log: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(instructions, features) a ptxas log says the target does not support, sorted, once each.

    ptxas writes ``error : Instruction 'wgmma.fence' not supported on .target 'sm_90'`` (or
    ``Feature '.kind::f16' …``) for every use; this keeps the names.
    """
    if not isinstance(ptxas_log, str):
        raise TypeError(f"ptxas_log={show(ptxas_log)} must be ptxas's output text")
    found: dict[str, set[str]] = {"Instruction": set(), "Feature": set()}
    for kind, name, _target in _REFUSED.findall(ptxas_log):
        found[kind].add(name)
    return tuple(sorted(found["Instruction"])), tuple(sorted(found["Feature"]))


def _ptxas(ptx: str, gpu_name: str, cc: int) -> tuple[int, str]:  # pragma: no cover - tool
    from triton.backends.nvidia.compiler import get_ptxas

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx, encoding="utf-8")
        proc = subprocess.run(
            [get_ptxas(cc).path, f"--gpu-name={gpu_name}", str(src), "-o", str(Path(tmp) / "k.o")],
            capture_output=True,
            text=True,
        )
    return proc.returncode, proc.stderr + proc.stdout


def _plain_target_row(ptx: str, cc: int) -> list:  # pragma: no cover - runs in the subprocess
    target = _TARGET_LINE.search(ptx).group(1)
    plain = f"sm_{cc}"
    as_compiled, _ = _ptxas(ptx, target, cc)
    as_plain, log = _ptxas(_TARGET_LINE.sub(f".target {plain}", ptx, count=1), plain, cc)
    instructions, features = refused_on_plain_target(log)
    return [target, as_compiled == 0, as_plain == 0, list(instructions), list(features)]


def plain_target_facts(targets: tuple[str, ...] = ("sm_90", "sm_100")) -> dict[str, tuple]:
    """Compile ``matmul_tma_ws`` for each target in a child process and assemble its PTX twice:
    as Triton wrote it (``sm_90a`` / ``sm_100a``) and for the plain target. Rows as in
    :data:`PLAIN_TARGET`. Needs Triton; seconds per target.
    """
    targets = sequence(
        "targets", targets, lambda name, t: choice(name, t, ("sm_90", "sm_100")), maximum=2
    )
    return _plain_target_facts(targets)


def _plain_target_facts(targets: tuple[str, ...]) -> dict[str, tuple]:  # pragma: no cover
    spec = {k: v for k, v in CASES["matmul_tma_ws"].items() if k != "targets"}
    jobs = [
        {**spec, "case": "matmul_tma_ws", "target": t, "cc": _CC[t], "plain": True}
        for t in targets
    ]
    rows = _run_compiler_worker(jobs, timeout_s=600)
    return {t: _tuples(row) for t, row in zip(targets, rows, strict=True)}


def regenerate(path: str | Path | None = None) -> int:  # pragma: no cover - offline tool
    """Compile every case (about a minute) and rewrite the stored table below."""
    import triton

    path = file_path("path", path, default=__file__)
    if not path.is_file():
        raise FileNotFoundError(f"path={str(path)!r} is not a file (this module's source)")
    text = path.read_text(encoding="utf-8")
    if _MARKER not in text:
        raise ValueError(f"path={str(path)!r} holds no stored table to rewrite")
    rows = compile_facts()
    head = text.split(_MARKER)[0]
    lines = [f"    {key!r}: {row!r}," for key, row in rows.items()]
    body = (
        f"{_MARKER} by regenerate() with triton {triton.__version__}; do not edit by hand ---\n"
        f'TRITON_VERSION = "{triton.__version__}"\n'
        "# fmt: off\n"
        "COMPILED: dict[tuple[str, str], tuple] = {\n" + "\n".join(lines) + "\n}\n"
        "# fmt: on\n"
    )
    path.write_text(head + body, encoding="utf-8")
    return len(lines)


# ---------------------------------------------------------------------------------------------
# Budgets: registers, tensor memory, cluster traffic, ping-pong

#: Registers per SM (64K 32-bit registers on every GPU of the course) and per warpgroup thread.
REGISTERS_PER_SM = 65536
WARPGROUP_THREADS = 128
#: ``setmaxnreg`` sets per-thread counts in multiples of 8 from 24 to 256 (PTX ISA).
SETMAXNREG_MIN, SETMAXNREG_MAX, SETMAXNREG_STEP = 24, 256, 8
#: Without ``setmaxnreg`` a thread has at most 255 registers (the ISA limit).
MAX_REGISTERS = 255


def _floor8(value: float) -> int:
    return int(value // SETMAXNREG_STEP) * SETMAXNREG_STEP


@dataclass(frozen=True)
class RegisterSplit:
    """Registers per thread for one producer and ``consumers`` consumer warpgroups in one CTA."""

    consumers: int
    producer_registers: int
    registers_per_sm: int

    def __post_init__(self) -> None:
        positive_int("consumers", self.consumers, 1, MAX_CONSUMERS)
        positive_int("producer_registers", self.producer_registers, SETMAXNREG_MIN, SETMAXNREG_MAX)
        if self.producer_registers % SETMAXNREG_STEP:
            raise ValueError(
                f"producer_registers={self.producer_registers} must be a multiple of "
                f"{SETMAXNREG_STEP} (setmaxnreg)"
            )
        positive_int("registers_per_sm", self.registers_per_sm, 1, 1 << 20)
        if self.consumer_registers < SETMAXNREG_MIN:
            raise ValueError(
                f"consumers={self.consumers} with producer_registers={self.producer_registers} "
                f"leave fewer than {SETMAXNREG_MIN} registers per consumer thread"
            )

    @property
    def threads(self) -> int:
        return WARPGROUP_THREADS * (1 + self.consumers)

    @property
    def uniform_registers(self) -> int:
        """Every thread the same: the file over all threads, in multiples of 8, at most 255."""
        return min(MAX_REGISTERS, _floor8(self.registers_per_sm / self.threads))

    @property
    def consumer_registers(self) -> int:
        """What each consumer thread can take once the producer has given its registers back."""
        per_lane = self.registers_per_sm / WARPGROUP_THREADS - self.producer_registers
        return min(SETMAXNREG_MAX, _floor8(per_lane / self.consumers))

    def accumulator_registers(self, block_m: int, block_n: int) -> float:
        """fp32 accumulator registers per consumer thread for a BM×BN tile shared by them."""
        block_m = positive_int("block_m", block_m, 1, 4096)
        block_n = positive_int("block_n", block_n, 1, 4096)
        return block_m * block_n / (WARPGROUP_THREADS * self.consumers)


#: Most consumer warpgroups in one CTA (1024 threads: 1 producer + 7 consumers).
MAX_CONSUMERS = 7


def register_split(
    consumers: int = 2, producer_registers: int = 40, registers_per_sm: int = REGISTERS_PER_SM
) -> RegisterSplit:
    """Register budgets of a warp-specialised CTA: 1 producer and ``consumers`` warpgroups.

    With 2 consumers: 384 threads share 65,536 registers, 168 each without ``setmaxnreg``;
    with the producer down to 40, each consumer thread can have (512 − 40)/2 → 232.
    """
    return RegisterSplit(
        consumers=positive_int("consumers", consumers, 1, MAX_CONSUMERS),
        producer_registers=positive_int(
            "producer_registers", producer_registers, SETMAXNREG_MIN, SETMAXNREG_MAX
        ),
        registers_per_sm=positive_int("registers_per_sm", registers_per_sm, 1, 1 << 20),
    )


@dataclass(frozen=True)
class TensorMemoryUse:
    """An fp32 (or other) accumulator of 128 rows × ``block_n`` in Blackwell tensor memory."""

    chip_name: str
    block_n: int
    accumulator_bytes: int
    buffers: int
    lanes: int
    columns_per_sm: int

    def __post_init__(self) -> None:
        name_string("chip_name", self.chip_name)
        checked = {
            "block_n": power_of_two("block_n", self.block_n, 8, 512),
            "accumulator_bytes": choice("accumulator_bytes", self.accumulator_bytes, (2, 4)),
            "buffers": positive_int("buffers", self.buffers, 1, 8),
            "lanes": positive_int("lanes", self.lanes),
            "columns_per_sm": positive_int("columns_per_sm", self.columns_per_sm),
        }
        for name, value in checked.items():  # plain ints (numpy's have no bit_length)
            object.__setattr__(self, name, value)
        if self.columns > self.columns_per_sm:
            raise ValueError(
                f"buffers={self.buffers} of a 128×{self.block_n} accumulator need "
                f"{self.columns} columns; tensor memory has {self.columns_per_sm} "
                "(columns_per_sm)"
            )

    @property
    def columns_needed(self) -> int:
        """32-bit columns the accumulators fill: block_n · bytes/4 per buffer."""
        return self.block_n * self.accumulator_bytes // 4 * self.buffers

    @property
    def columns(self) -> int:
        """Columns ``tcgen05.alloc`` takes: a power of two, at least 32."""
        return max(32, 1 << (self.columns_needed - 1).bit_length())

    @property
    def bytes(self) -> int:
        return self.lanes * self.columns * 4

    @property
    def fraction(self) -> float:
        """Share of the SM's tensor memory."""
        return self.columns / self.columns_per_sm

    @property
    def register_bytes(self) -> int:
        """The same accumulators in registers (Hopper's way): 128 · block_n · bytes · buffers."""
        return self.lanes * self.block_n * self.accumulator_bytes * self.buffers


def tensor_memory(
    block_n: int, accumulator_bytes: int = 4, buffers: int = 1, chip_name: str | Chip = "B200"
) -> TensorMemoryUse:
    """Tensor memory for ``buffers`` accumulators of 128 × ``block_n`` on a Blackwell chip.

    A 128×128 fp32 accumulator takes 128 of 512 columns (64 KiB of 256 KiB); two buffers let the
    epilogue read one while the MMAs fill the other.
    """
    the_chip = chip(chip_name)
    found = TENSOR_MEMORY_PER_SM.get(the_chip.compute_capability or (0, 0))
    if found is None:
        with_tmem = [c.name for c in _chips_with_tmem()]
        raise ValueError(
            f"chip_name={the_chip.name!r} has no tensor memory; chips that do: "
            f"{', '.join(with_tmem)}"
        )
    lanes, columns, _source = found
    return TensorMemoryUse(
        chip_name=the_chip.name,
        block_n=power_of_two("block_n", block_n, 8, 512),
        accumulator_bytes=choice("accumulator_bytes", accumulator_bytes, (2, 4)),
        buffers=positive_int("buffers", buffers, 1, 8),
        lanes=lanes,
        columns_per_sm=columns,
    )


def _chips_with_tmem() -> list[Chip]:
    from .hardware import chips

    return [c for c in chips() if c.compute_capability in TENSOR_MEMORY_PER_SM]


@dataclass(frozen=True)
class ClusterTraffic:
    """Operand bytes each CTA pulls from L2 per K step, alone and in a cluster that shares them.

    A cluster of ``cluster_m`` × ``cluster_n`` CTAs computing neighbouring tiles: the CTAs of a
    row need the same panel of A, those of a column the same panel of B. Multicast (or the pair
    of a 2-CTA MMA) fetches each shared panel once for them all.
    """

    block_m: int
    block_n: int
    block_k: int
    cluster_m: int
    cluster_n: int
    bytes_per_element: float

    def __post_init__(self) -> None:
        for name in ("block_m", "block_n", "block_k"):
            power_of_two(name, getattr(self, name), 16, 256)
        for name in ("cluster_m", "cluster_n"):
            power_of_two(name, getattr(self, name), 1, 16)
        if self.cluster_m * self.cluster_n > 16:
            raise ValueError(
                f"cluster_m={self.cluster_m} × cluster_n={self.cluster_n} must be ≤ 16 CTAs"
            )
        positive_float("bytes_per_element", self.bytes_per_element)

    @property
    def alone_bytes(self) -> float:
        """(BM + BN) · BK · bytes: each CTA fetches both panels itself."""
        return (self.block_m + self.block_n) * self.block_k * self.bytes_per_element

    @property
    def shared_bytes(self) -> float:
        """BM·BK·bytes / cluster_n + BN·BK·bytes / cluster_m: each CTA's share of the fetches."""
        a = self.block_m * self.block_k * self.bytes_per_element / self.cluster_n
        b = self.block_n * self.block_k * self.bytes_per_element / self.cluster_m
        return a + b

    @property
    def reduction(self) -> float:
        """alone / shared: the factor fewer bytes per CTA from L2."""
        return self.alone_bytes / self.shared_bytes

    @property
    def intensity(self) -> float:
        """FLOPs per byte fetched, in the cluster: 2·BM·BN·BK / shared bytes."""
        return 2 * self.block_m * self.block_n * self.block_k / self.shared_bytes


def cluster_operand_bytes(
    block_m: int,
    block_n: int,
    block_k: int,
    cluster_m: int = 1,
    cluster_n: int = 1,
    precision: str = "fp16",
) -> ClusterTraffic:
    """Per-CTA operand bytes per K step for (BM, BN, BK) tiles in a cluster_m × cluster_n cluster.

    A 2-CTA MMA is cluster_m = 2: the pair computes a 2·BM × BN tile, each CTA loading its BM
    rows of A and half of B.
    """
    return ClusterTraffic(
        block_m=power_of_two("block_m", block_m, 16, 256),
        block_n=power_of_two("block_n", block_n, 16, 256),
        block_k=power_of_two("block_k", block_k, 16, 256),
        cluster_m=power_of_two("cluster_m", cluster_m, 1, 16),
        cluster_n=power_of_two("cluster_n", cluster_n, 1, 16),
        bytes_per_element=bytes_per_element(check_precision(precision)),
    )


@dataclass(frozen=True)
class PingPong:
    """One attention tile's two matmuls and its exponentials on one SM: in turn, or ping-pong."""

    chip_name: str
    head_dim: int
    matmul_s: float
    exp_s: float

    def __post_init__(self) -> None:
        name_string("chip_name", self.chip_name)
        positive_int("head_dim", self.head_dim, 1, 1024)
        positive_float("matmul_s", self.matmul_s, bounded=False)
        positive_float("exp_s", self.exp_s, bounded=False)
        if not math.isfinite(self.exp_s / self.matmul_s):
            raise ValueError(
                f"exp_s={self.exp_s!r} over matmul_s={self.matmul_s!r} overflows: "
                "times this far apart are not one kernel's"
            )

    @property
    def ratio(self) -> float:
        """Exponential time over matmul time: peak / (4·d · special-function rate)."""
        return self.exp_s / self.matmul_s

    @property
    def serial_s(self) -> float:
        """One warpgroup: its matmuls, then its softmax, then its matmuls again."""
        return self.matmul_s + self.exp_s

    @property
    def pingpong_s(self) -> float:
        """Two warpgroups in turn: one's softmax under the other's matmuls, per tile."""
        return max(self.matmul_s, self.exp_s)

    @property
    def speedup(self) -> float:
        return self.serial_s / self.pingpong_s

    @property
    def tensor_busy_serial(self) -> float:
        return self.matmul_s / self.serial_s

    @property
    def tensor_busy_pingpong(self) -> float:
        return self.matmul_s / self.pingpong_s


def softmax_pingpong(chip_name: str | Chip, head_dim: int, precision: str = "bf16") -> PingPong:
    """FlashAttention's per-score work on one SM: 4·d matmul FLOPs (QKᵀ and PV) and one
    exponential, at the chip's tensor peak and special-function rate, per 128×128 tile.

    On an H100 at d = 128 the exponentials take about half as long as the matmuls
    (FlashAttention-3 §3.1); ping-pong hides them under the other warpgroup's matmuls.
    """
    the_chip = chip(chip_name)
    if the_chip.name not in SPECIAL_FUNCTION_OPS_PER_S:
        raise ValueError(
            f"chip_name={the_chip.name!r} has no sourced special-function rate; known: "
            f"{', '.join(SPECIAL_FUNCTION_OPS_PER_S)}"
        )
    the_chip = the_chip.require_sm_model("per-SM matmul and exponential times")
    head_dim = positive_int("head_dim", head_dim, 1, 1024)
    precision = check_precision(precision)
    scores = 128 * 128
    rate, _source = SPECIAL_FUNCTION_OPS_PER_S[the_chip.name]
    return PingPong(
        chip_name=the_chip.name,
        head_dim=head_dim,
        matmul_s=4 * head_dim * scores / the_chip.peak_flops(precision) * the_chip.sm_count,
        exp_s=scores / rate * the_chip.sm_count,
    )


#: FlashAttention-4's software exp2 (flash_attn/cute/utils.py, ``POLY_EX2[3]``): a degree-3
#: minimax polynomial for 2^f on [0, 1), lowest order first, from sollya's ``fpminimax``.
EX2_POLYNOMIAL = (1.0, 0.695146143436431884765625, 0.227564394474029541015625,
                  0.077119089663028717041015625)  # fmt: skip

#: FP32-pipe operations of one emulated exp2 in FlashAttention-4's ``ex2_emulation``: add
#: 2^23 + 2^22 rounding down, subtract it back, subtract to get the fraction (3 adds) and the
#: polynomial by Horner (3 FMAs). The clamp and the two integer ops that put the integer part in
#: the exponent bits run on the ALU and are not counted.
EX2_EMULATION_FP32_OPS = 6


def exp2_emulated(x: object) -> np.ndarray:
    """2^x as FlashAttention-4 computes it on the FMA units, in float32 (x ≤ 127, clamped at −127).

    floor(x) by the round trick goes into the exponent bits; 2^frac is :data:`EX2_POLYNOMIAL`.
    """
    values = np.asarray(real_array("x", x, allow_negative=True, max_size=1 << 24))
    if (values > 127).any():
        raise ValueError(f"x={show(x)} must be ≤ 127: 2^x beyond that overflows float32")
    values = values.astype(np.float32)
    clamped = np.maximum(values, np.float32(-127.0))
    whole = np.floor(clamped)  # the round-down add of 2^23 + 2^22, then the subtraction
    frac = (clamped - whole).astype(np.float32)
    poly = np.float32(EX2_POLYNOMIAL[3])
    for c in EX2_POLYNOMIAL[2::-1]:  # Horner: three FMAs
        poly = (poly * frac + np.float32(c)).astype(np.float32)
    with np.errstate(over="ignore"):
        return np.ldexp(poly, whole.astype(np.int32)).astype(np.float32)


@dataclass(frozen=True)
class ExpBalance:
    """One attention head's forward on a whole chip: matmuls, and exponentials two ways."""

    chip_name: str
    head_dim: int
    precision: str
    seq_len: int
    matmul_s: float
    exp_s: float
    emulated_s: float

    def __post_init__(self) -> None:
        name_string("chip_name", self.chip_name)
        positive_int("head_dim", self.head_dim, 1, 1024)
        check_precision(self.precision)
        positive_int("seq_len", self.seq_len)
        for label in ("matmul_s", "exp_s", "emulated_s"):
            positive_float(label, getattr(self, label), bounded=False)
        for label in ("exp_s", "emulated_s"):
            if not math.isfinite(getattr(self, label) / self.matmul_s):
                raise ValueError(
                    f"{label}={getattr(self, label)!r} over matmul_s={self.matmul_s!r} "
                    "overflows: times this far apart are not one kernel's"
                )

    @property
    def ratio(self) -> float:
        """Exponentials on the special-function units over matmuls on the tensor cores."""
        return self.exp_s / self.matmul_s

    @property
    def fraction_to_balance(self) -> float:
        """Least share of exponentials to emulate so the SFUs finish within the matmul time."""
        return max(0.0, 1.0 - self.matmul_s / self.exp_s)

    @property
    def balanced_fma_s(self) -> float:
        """FMA-unit time for that share: it must fit in the matmul time too."""
        return self.fraction_to_balance * self.emulated_s

    @property
    def best_fraction(self) -> float:
        """The share that makes the SFUs and the FMA units finish together."""
        return self.exp_s / (self.exp_s + self.emulated_s)

    @property
    def best_exp_s(self) -> float:
        """Exponential time at :attr:`best_fraction`, both units working."""
        return self.exp_s * self.emulated_s / (self.exp_s + self.emulated_s)

    def exp_time_s(self, fraction: float) -> float:
        """Exponential time with ``fraction`` emulated: the slower of the SFUs and FMA units."""
        fraction = positive_float("fraction", fraction, allow_zero=True, maximum=1.0)
        return max((1 - fraction) * self.exp_s, fraction * self.emulated_s)


def exp_balance(
    chip_name: str | Chip, head_dim: int, precision: str = "bf16", seq_len: int = 8192
) -> ExpBalance:
    """One head's seq_len² scores: 4·d tensor FLOPs each (QKᵀ and PV) against one exp2 each,
    on the special-function units or emulated (:data:`EX2_EMULATION_FP32_OPS` FP32 operations,
    at the chip's FP32 rate / 2), all at whole-chip peak rates.

    B200, bf16, d = 128: 512 / 2.25 PF = 0.228 ns of matmul per score against 1 / 5 T = 0.2 ns
    of exponential: 88 %, where an H100's is half. Limits: the FMA units' other softmax work
    (scaling, row sums, conversion) and every latency are left out.
    """
    the_chip = chip(chip_name)
    if the_chip.name not in SPECIAL_FUNCTION_OPS_PER_S:
        raise ValueError(
            f"chip_name={the_chip.name!r} has no sourced special-function rate; known: "
            f"{', '.join(SPECIAL_FUNCTION_OPS_PER_S)}"
        )
    head_dim = positive_int("head_dim", head_dim, 1, 1024)
    precision = check_precision(precision)
    seq_len = positive_int("seq_len", seq_len, maximum=1 << 24)
    scores = float(seq_len) ** 2
    rate, _source = SPECIAL_FUNCTION_OPS_PER_S[the_chip.name]
    fp32_ops_per_s = the_chip.peak_flops("fp32", tensor_cores=False) / 2  # an FMA is 2 FLOPs
    return ExpBalance(
        chip_name=the_chip.name,
        head_dim=head_dim,
        precision=precision,
        seq_len=seq_len,
        matmul_s=4 * head_dim * scores / the_chip.peak_flops(precision),
        exp_s=scores / rate,
        emulated_s=EX2_EMULATION_FP32_OPS * scores / fp32_ops_per_s,
    )


__all__ = [
    "CASES",
    "COMPILED",
    "EX2_EMULATION_FP32_OPS",
    "EX2_POLYNOMIAL",
    "MAX_CONSUMERS",
    "MAX_REGISTERS",
    "PARTITION_KINDS",
    "PLAIN_TARGET",
    "REGISTERS_PER_SM",
    "SETMAXNREG_MAX",
    "SETMAXNREG_MIN",
    "SETMAXNREG_STEP",
    "TRITON_VERSION",
    "WARPGROUP_THREADS",
    "ClusterTraffic",
    "CompiledFacts",
    "ExpBalance",
    "PingPong",
    "RegisterSplit",
    "TensorMemoryUse",
    "cluster_operand_bytes",
    "compile_facts",
    "compiled",
    "exp2_emulated",
    "exp_balance",
    "facts",
    "plain_target_facts",
    "refused_on_plain_target",
    "regenerate",
    "register_split",
    "softmax_pingpong",
    "tensor_memory",
]

if __name__ == "__main__" and "--worker" in sys.argv:  # pragma: no cover
    _worker()

_MARKER = "# --- " + "generated"  # split here (spelt in two so this line is not the marker)


# --- generated by regenerate() with triton 3.9.0; do not edit by hand ---
TRITON_VERSION = "3.9.0"
# fmt: off
COMPILED: dict[tuple[str, str], tuple] = {
    ('matmul', 'sm_80'): (256, 0, (), (), 4, 8, 0, 0, 0, 0, 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', (0, 0), (), (), 32768),
    ('matmul', 'sm_100'): (256, 0, (), (), 4, 12, 0, 0, 0, 2, 'tcgen05.mma.cta_group::1.kind::f16', (4, 4), ((1, 128, 128, 4),), (128,), 49168),
    ('matmul_tma', 'sm_90'): (128, 0, (), (), 0, 0, 6, 0, 0, 0, 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', (0, 0), (), (), 98328),
    ('matmul_tma', 'sm_100'): (128, 0, (), (), 0, 0, 8, 0, 0, 2, 'tcgen05.mma.cta_group::1.kind::f16', (8, 8), ((1, 128, 128, 8),), (128,), 98352),
    ('matmul_tma_ws', 'sm_90'): (384, 168, ((('dec', 40), 1), (('dec', 120), 3), (('inc', 232), 2), (('inc', 256), 2)), (('dec', 40, 1, (('TMA load', 3),)), ('inc', 232, 2, (('MMA', 4), ('TMA store', 1)))), 0, 0, 3, 0, 0, 0, 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', (0, 0), (), (), 131672),
    ('matmul_tma_ws', 'sm_100'): (256, 256, ((('dec', 24), 3), (('inc', 256), 7)), (('dec', 24, 1, (('MMA', 8),)), ('dec', 24, 1, (('TMA load', 2),)), ('inc', 256, 1, (('TMA store', 1), ('TMEM load', 1)))), 0, 0, 2, 0, 0, 3, 'tcgen05.mma.cta_group::1.kind::f16', (8, 8), ((1, 128, 128, 8),), (128,), 98524),
    ('matmul_tma_cluster', 'sm_90'): (128, 0, (), (), 0, 0, 6, 0, 2, 0, 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', (0, 0), (), (), 73752),
    ('matmul_tma_cluster', 'sm_100'): (128, 0, (), (), 0, 0, 8, 0, 2, 2, 'tcgen05.mma.cta_group::1.kind::f16', (8, 8), ((1, 128, 64, 8),), (64,), 73776),
    ('tma_multicast', 'sm_90'): (128, 0, (), (), 0, 0, 1, 1, 4, 1, '', (0, 0), (), (), 32776),
    ('tma_multicast', 'sm_100'): (128, 0, (), (), 0, 0, 1, 1, 4, 1, '', (0, 0), (), (), 32776),
    ('two_cta_mma', 'sm_100'): (128, 0, (), (), 0, 0, 2, 0, 8, 4, 'tcgen05.mma.cta_group::2.kind::f16', (4, 4), ((2, 256, 128, 4),), (128,), 32768),
}
# fmt: on
