"""Count what a Triton kernel moves and computes, by running it in Triton's CPU interpreter.

Why: the roofline needs two numbers, the bytes a kernel moves and the FLOPs it does. Without a
GPU nothing can be timed, but both are countable: the interpreter (``TRITON_INTERPRET=1``, set by
:mod:`gpuperf.runtime` when no GPU is present) executes every ``tl.load``, ``tl.store``,
``tl.atomic_*`` and ``tl.dot`` with concrete addresses, masks and shapes. :func:`counting` hooks
those operations for the duration of a ``with`` block and returns one :class:`LaunchCount` per
kernel launch inside it::

    with counting() as launches:
        out = vector_add(x, y)
    print(launches[0].table())

What is counted, per load/store site (``file:line`` of the kernel source) and per launch:

- **requested bytes**: elements whose mask lane is on × element size, summed over every
  program — what the program instances ask global memory for (masked-off lanes move nothing);
- **sectors and lines**: the distinct 32-byte sectors and 128-byte lines each executed access
  touches, summed over executions. Sector efficiency = requested bytes / (32 × sectors), the
  coalescing chapter's measure. One access here is one program's whole ``tl.load``; a GPU issues
  it warp by warp, which can only split sectors further, so this efficiency is an upper bound on
  the hardware's. Offsets are taken from the start of each tensor's storage, assumed aligned to
  256 bytes as ``cudaMalloc`` aligns (the CPU allocator's own alignment does not leak in);
- **unique bytes**: the distinct bytes the whole launch touches. Real DRAM traffic lies between
  the unique bytes (a perfect cache: each byte fetched once) and the requested bytes (no reuse);
- **FLOPs**: ``2·M·N·K`` for every ``tl.dot`` of an (M, K) by (K, N) tile — the tile executed,
  padding included, which is the work the tensor cores do. Elementwise float arithmetic (add,
  sub, mul, div; fma as 2) and transcendental calls are counted separately, per element of the
  block, masked lanes included (the interpreter computes them; so does a GPU); reductions
  (``tl.sum``, ``tl.max``) are not counted;
- **atomics**: elements and bytes of every atomic read-modify-write or compare-and-swap;
- **grid**: the launch's program count.

Label what is shown honestly (:data:`LABEL`): these are bytes the kernel *requests from global
memory*, counted on the CPU — not DRAM traffic, which caches reduce — and no count here is a
time. Time is only measured, on a GPU, by :mod:`gpuperf.bench`; :func:`roofline_place` sets the
two side by side (``measured_s=measure_if_gpu(lambda: ...)``, ``None`` without a GPU). On a GPU
session the kernels are compiled, so counting refuses to run there: count a launch with explicit
tiles on a CPU session (the counts do not depend on the machine) and pass its
:class:`LaunchCount` with the GPU's measured time. :func:`l2_model` replays a traced launch
(``counting(trace=True)``) through a simple LRU cache to show why launch order (``GROUP_M``)
matters; its assumptions are written next to it. ``counting(strict=True)`` also refuses, before
it happens, any access outside the kernel's tensor arguments (:class:`OutOfBoundsError`): the
class grader counts a student's kernel that way, in a sandbox of its own, and brings the counts
back as plain data (:meth:`LaunchCount.as_data`, :meth:`LaunchCount.from_data`,
:func:`received`; :mod:`gpuperf.classroom.recount`).

Cost of counting (measured for issue 35 on the project's shared 2-core build machine, load
average ≈ 5.5, median of 7 runs; :data:`MEASURED_OVERHEAD`): counting a lab-size launch took
1.0–1.5× the plain interpreter's own time — vector add of 2¹⁸ fp32 (256 programs) 267 → 356 ms
(1.33×), a 256³ fp32 tiled matmul with 32³ tiles (64 programs) 1637 → 2521 ms (1.54×),
a FlashAttention forward of 2 × 256 × 64 fp32 381 → 382 ms (1.00×) on Triton 3.9.0; 1.22×,
1.09× and 0.83× on Triton 3.6.0 (numpy 2.3): within the machine's noise for the kernels whose
time is in ``tl.dot``. A first version that called ``np.unique`` per access cost 3.95× on the
vector add; sorted run-length counting and a bitmap per tensor brought it down.

Foundation (issue 35, item 7; :data:`TRITON_VIZ_EVALUATION`). triton-viz 3.0 (PyPI, SIGCSE 2025)
wraps the same interpreter and its profiler counts load/store bytes and masked lanes. Measured
here: its wheel is 137 kB but it requires z3-solver (38.6 MB wheel), pre-commit (with
virtualenv, nodeenv, identify, cfgv), cairocffi, anytree, flask_cloudflared, pyarrow, flask and
tqdm — 31 wheels, 99 MB downloaded, 292 MB installed (122 MB without pyarrow, which Colab ships),
13.8 s to install from local wheels with no network. On Triton 3.9.0 (this repository's CI)
``triton_viz.trace`` fails at the first launch: ``'InterpreterBuilder' object has no attribute
'create_make_block_ptr'`` (removed in 3.9). On Triton 3.6.0 it runs, but by default its profiler
samples blocks and skips loads and stores, so the kernel's output is not computed (0 of 262,144
outputs written) — unusable for a lab that grades the result; with both switched off
(``PROFILER_ENABLE_BLOCK_SAMPLING=0``, ``PROFILER_ENABLE_LOAD_STORE_SKIPPING=0``) the vector add
above took 1168 ms against 682 ms plain (1.71×). It reports no sectors, unique bytes or
``tl.dot`` FLOPs, which this module needs. Hooking the interpreter directly costs ~600 lines,
no dependency, and works on 3.6 and 3.9; its sanitizer (out-of-bounds checks with z3) is worth
offering to students as an optional ``pip install triton-viz`` on Triton 3.6 only — not a
dependency of the course. The hooks here replace methods of the
interpreter's one builder object (``create_masked_load``, ``create_masked_store``,
``create_dot``, ``create_atomic_rmw``, ``create_atomic_cas``, elementwise float ops) and wrap
``GridExecutor`` for the grid and argument names; their positional arguments are the same in
Triton 3.6 (Colab's CPU runtime) and 3.9 (this repository), and both are tested.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import choice, flag, name_string, positive_float, positive_int, show
from .cost import OpCost

SECTOR_BYTES = 32
LINE_BYTES = 128
KINDS = ("load", "store", "atomic")

#: Counting's cost, measured once for issue 35 (seconds, median of 7, shared 2-core CPU):
#: (plain interpreter, counted) per Triton release and launch. Measured, not re-derived.
MEASURED_OVERHEAD: dict[str, dict[str, tuple[float, float]]] = {
    "3.9.0": {
        "vector_add 2^18 fp32": (0.267, 0.356),
        "matmul 256^3 fp32, 32^3 tiles": (1.637, 2.521),
        "flash forward 2x256x64 fp32": (0.381, 0.382),
    },
    "3.6.0": {
        "vector_add 2^18 fp32": (0.405, 0.493),
        "matmul 256^3 fp32, 32^3 tiles": (2.428, 2.635),
        "flash forward 2x256x64 fp32": (0.314, 0.260),
    },
}

#: triton-viz 3.0 measured as a foundation for this module (issue 35, item 7).
TRITON_VIZ_EVALUATION: dict[str, Any] = {
    "version": "3.0",
    "wheel_bytes": 137_160,
    "dependency_wheels": 31,
    "download_mb": 99,
    "installed_mb": 292,
    "installed_mb_without_pyarrow": 122,
    "install_seconds_local_wheels": 13.8,
    "works_on_triton_3_9": False,  # AttributeError: create_make_block_ptr
    "works_on_triton_3_6": True,
    "default_profiler_computes_outputs": False,  # block sampling + load/store skipping
    "full_profile_seconds_vs_plain_3_6": (1.168, 0.682),
    "counts_sectors_unique_bytes_dot_flops": False,
    "decision": "hook the interpreter directly; offer triton-viz's sanitizer as optional",
}


def _ints(obj: object, *labels: str, minimum: int = 0) -> None:
    for label in labels:
        object.__setattr__(obj, label, positive_int(label, getattr(obj, label), minimum))


def _text(obj: object, *labels: str) -> None:
    for label in labels:
        if not isinstance(getattr(obj, label), str):
            raise TypeError(f"{label}={show(getattr(obj, label))} must be a string")


def cell_file(index: int) -> str:
    """The file name a notebook's code cell ``index`` gets where its kernel is compiled on its
    own (the class grader's counting sandbox): ``<cell 4>``; :func:`cell_number` reads it."""
    return f"<cell {positive_int('index', index, 0)}>"


def cell_number(file: str) -> int | None:
    """The code cell a :func:`cell_file` name stands for, or None for any other file."""
    if not isinstance(file, str):
        raise TypeError(f"file={show(file)} must be a file name (a string)")
    found = re.fullmatch(r"<cell (\d+)>", file)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class SiteCount:
    """One global load, store or atomic site of a kernel, summed over a launch."""

    kind: str  # "load", "store" or "atomic"
    file: str
    line: int
    code: str  # the source line, stripped
    tensor: str  # the kernel argument whose memory it touches ("x_ptr"), or "?"
    element_bytes: int
    executions: int
    elements: int
    bytes: int
    sectors: int  # Σ over executions of distinct 32-byte sectors touched
    lines: int  # Σ over executions of distinct 128-byte lines touched
    unique_bytes: int  # distinct bytes this site touches in the launch

    def __post_init__(self) -> None:
        choice("kind", self.kind, KINDS)
        _text(self, "file", "code", "tensor")
        _ints(self, "line", "executions", "elements", "bytes", "sectors", "lines", "unique_bytes")
        _ints(self, "element_bytes", minimum=1)

    @property
    def where(self) -> str:
        """``vector_add.py:45``; ``cell line 9`` for a kernel defined in a notebook cell
        (``cell 4 line 9`` where the class grader recounted it: ``<cell 4>``)."""
        if cell_number(self.file) is not None:
            return f"cell {cell_number(self.file)} line {self.line}"
        if "ipykernel" in self.file or not self.file.endswith(".py"):
            return f"cell line {self.line}"
        return f"{os.path.basename(self.file)}:{self.line}"

    @property
    def sector_bytes(self) -> int:
        """Bytes the touched sectors hold: what the memory system must move for this site."""
        return self.sectors * SECTOR_BYTES

    @property
    def sector_efficiency(self) -> float:
        """Requested bytes / sector bytes (1.0: every fetched byte used; 1/8: fp32 stride ≥ 8)."""
        return self.bytes / self.sector_bytes if self.sectors else 1.0


@dataclass(frozen=True)
class LaunchCount:
    """Everything counted for one kernel launch (one ``kernel[grid](...)`` call)."""

    kernel: str
    grid: tuple[int, int, int]
    sites: tuple[SiteCount, ...]
    dot_flops: int
    dots: int
    elementwise_flops: int
    special_ops: int
    unique_bytes_read: int
    unique_bytes_written: int

    def __post_init__(self) -> None:
        name_string("kernel", self.kernel)
        grid = self.grid
        if not isinstance(grid, tuple) or len(grid) != 3:
            raise TypeError(f"grid={show(grid)} must be a tuple of three program counts")
        object.__setattr__(self, "grid", tuple(positive_int("grid", g, 1) for g in grid))
        if not isinstance(self.sites, tuple) or not all(
            isinstance(x, SiteCount) for x in self.sites
        ):
            raise TypeError(f"sites={show(self.sites)} must be a tuple of SiteCount")
        _ints(
            self,
            "dot_flops",
            "dots",
            "elementwise_flops",
            "special_ops",
            "unique_bytes_read",
            "unique_bytes_written",
        )

    @property
    def programs(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    def _sum(self, attr: str, *kinds: str) -> int:
        return sum(getattr(s, attr) for s in self.sites if s.kind in kinds)

    @property
    def bytes_read(self) -> int:
        """Requested bytes of loads and atomics (an atomic reads and writes its element)."""
        return self._sum("bytes", "load", "atomic")

    @property
    def bytes_written(self) -> int:
        return self._sum("bytes", "store", "atomic")

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def unique_bytes(self) -> int:
        return self.unique_bytes_read + self.unique_bytes_written

    @property
    def sector_bytes(self) -> int:
        return self._sum("sector_bytes", *KINDS)

    @property
    def sector_efficiency(self) -> float:
        moved = self._sum("bytes", *KINDS)
        return moved / self.sector_bytes if self.sector_bytes else 1.0

    @property
    def atomic_elements(self) -> int:
        return self._sum("elements", "atomic")

    @property
    def flops(self) -> int:
        """``tl.dot`` FLOPs plus elementwise float arithmetic (transcendentals not included)."""
        return self.dot_flops + self.elementwise_flops

    def op_cost(self, *, unique: bool = False, flops: str = "all") -> OpCost:
        """The launch as an :class:`~gpuperf.cost.OpCost`: requested bytes (or unique ones).

        ``flops``: ``"all"`` (dot + elementwise), ``"dot"`` or ``"elementwise"``.
        """
        choice("flops", flops, ("all", "dot", "elementwise"))
        unique = flag("unique", unique)
        f = {"all": self.flops, "dot": self.dot_flops, "elementwise": self.elementwise_flops}
        if unique:
            r, w = self.unique_bytes_read, self.unique_bytes_written
        else:
            r, w = self.bytes_read, self.bytes_written
        what = "unique" if unique else "requested"
        return OpCost(f[flops], r, w, f"{self.kernel} ({what} bytes, counted)")

    def as_data(self) -> dict[str, Any]:
        """The launch as plain data (numbers, strings, lists): what crosses a process boundary
        (:meth:`from_data` rebuilds it, checking every field)."""
        fields = {f: getattr(self, f) for f in self.__dataclass_fields__ if f != "sites"}
        fields["grid"] = list(self.grid)
        sites = [[getattr(x, f) for f in SiteCount.__dataclass_fields__] for x in self.sites]
        return {**fields, "sites": sites}

    @classmethod
    def from_data(cls, data: Any) -> LaunchCount:
        """Rebuild a launch from :meth:`as_data`'s plain data; ``TypeError``/``ValueError``
        naming the field for anything else (it may come from an untrusted process)."""
        names = [f for f in cls.__dataclass_fields__]
        if not isinstance(data, dict) or sorted(data) != sorted(names):
            raise TypeError(f"data={show(data)} must be a dict with exactly the fields {names}")
        sites = data["sites"]
        width = len(SiteCount.__dataclass_fields__)
        if not isinstance(sites, list | tuple) or not all(
            isinstance(x, list | tuple) and len(x) == width for x in sites
        ):
            raise TypeError(f"sites={show(sites)} must be a list of {width}-field rows")
        grid = data["grid"]
        if not isinstance(grid, list | tuple):
            raise TypeError(f"grid={show(grid)} must be a list of three program counts")
        fields = {k: v for k, v in data.items() if k not in ("sites", "grid")}
        return cls(grid=tuple(grid), sites=tuple(SiteCount(*x) for x in sites), **fields)

    def site(self, line: int, kind: str | None = None) -> SiteCount:
        """The site at source ``line`` (and ``kind``); ``KeyError`` listing the sites if none."""
        found = [s for s in self.sites if s.line == line and (kind is None or s.kind == kind)]
        if len(found) != 1:
            have = ", ".join(f"{s.kind}@{s.where}" for s in self.sites)
            raise KeyError(f"no single {kind or 'site'} at line {line}; sites: {have}")
        return found[0]

    def table(self) -> str:
        """A plain-text table, one row per site, then the launch's totals."""
        rows = [
            f"{self.kernel}: grid {self.grid} = {self.programs} programs — bytes requested from "
            "global memory, counted on the CPU (not DRAM traffic; not a time)",
            f"{'site':<22}{'kind':<7}{'tensor':<10}{'execs':>7}{'bytes':>12}"
            f"{'sectors':>9}{'eff.':>7}{'unique B':>11}",
        ]
        for s in self.sites:
            rows.append(
                f"{s.where:<22}{s.kind:<7}{s.tensor[:9]:<10}{s.executions:>7}{s.bytes:>12,}"
                f"{s.sectors:>9,}{s.sector_efficiency:>7.0%}{s.unique_bytes:>11,}"
            )
        rows.append(
            f"total: read {self.bytes_read:,} B, written {self.bytes_written:,} B requested; "
            f"unique {self.unique_bytes:,} B; sector efficiency {self.sector_efficiency:.0%}; "
            f"tl.dot {self.dot_flops:,} FLOPs in {self.dots} dots; elementwise "
            f"{self.elementwise_flops:,} FLOPs"
        )
        return "\n".join(rows)


def total(launches: list[LaunchCount] | tuple[LaunchCount, ...]) -> OpCost:
    """Requested bytes and counted FLOPs of several launches (a multi-kernel op) as one cost."""
    if (
        not isinstance(launches, list | tuple)
        or not launches
        or not all(isinstance(x, LaunchCount) for x in launches)
    ):
        raise TypeError(f"launches={show(launches)} must be a non-empty list of LaunchCount")
    return OpCost(
        sum(x.flops for x in launches),
        sum(x.bytes_read for x in launches),
        sum(x.bytes_written for x in launches),
        " + ".join(x.kernel for x in launches),
    )


# --------------------------------------------------------------------------- the hooks


class _Site:
    __slots__ = (
        "elems",
        "esize",
        "execs",
        "file",
        "kind",
        "line",
        "lines",
        "sec",
        "seen",
        "tensor",
    )

    def __init__(self, kind, file, line, tensor, esize):
        self.kind, self.file, self.line, self.tensor, self.esize = kind, file, line, tensor, esize
        self.execs = self.elems = self.sec = self.lines = 0
        self.seen: Any = None

    def mark(self, off: np.ndarray, nbytes: int | None) -> None:
        """Remember which elements were touched: a bitmap over the tensor, else a list."""
        if nbytes is not None:
            if self.seen is None:
                self.seen = np.zeros(nbytes // self.esize + 1, dtype=bool)
            self.seen[off // self.esize] = True
        else:
            if self.seen is None:
                self.seen = []
            self.seen.append(off // self.esize)

    def touched(self) -> np.ndarray:
        """Sorted distinct element indices this site touched."""
        if self.seen is None:
            return np.zeros(0, dtype=np.int64)
        if isinstance(self.seen, np.ndarray):
            return np.flatnonzero(self.seen)
        return np.unique(np.concatenate(self.seen))


class _Launch:
    def __init__(self, kernel: str, grid: tuple[int, int, int], buffers):
        self.kernel, self.grid = kernel, grid
        # sorted (start, end, name) of every tensor argument's storage
        self.buffers = sorted(buffers)
        self.starts = np.array([b[0] for b in self.buffers], dtype=np.uint64)
        self.sites: dict[tuple, _Site] = {}
        self.dot_flops = self.dots = self.ew = self.special = 0
        self.trace: dict[int, list] | None = None
        self.strict = False

    def buffer_bytes(self, tensor: str) -> int | None:
        for start, end, name in self.buffers:
            if name == tensor:
                return end - start
        return None


_STATE = threading.local()
_TRITON_DIR: str | None = None
_HERE = os.path.abspath(__file__)


def _caller() -> tuple[str, int]:
    """File and line of the kernel statement being interpreted (the first frame outside Triton)."""
    frame = sys._getframe(2)
    while frame is not None:
        fname = frame.f_code.co_filename
        if not fname.startswith(_TRITON_DIR) and fname != _HERE:  # type: ignore[arg-type]
            return fname, frame.f_lineno
        frame = frame.f_back
    return "?", 0


def _record(kind: str, ptrs, mask) -> None:
    launch: _Launch | None = getattr(_STATE, "launch", None)
    if launch is None:
        return
    addr = np.asarray(ptrs.data).reshape(-1)
    if mask is not None:
        m = np.broadcast_to(np.asarray(mask.data), np.shape(ptrs.data)).reshape(-1)
        addr = addr[m]
    ety = ptrs.get_element_ty()
    esize = max(1, ety.primitive_bitwidth // 8)
    if launch.strict:
        _check_bounds(launch, kind, addr, esize)
    tensor, base = "?", 0
    if addr.size and launch.buffers:
        i = int(np.searchsorted(launch.starts, addr.min(), side="right")) - 1
        if i >= 0 and addr.max() < launch.buffers[i][1]:
            base, _, tensor = launch.buffers[i]
    file, line = _caller()
    key = (kind, file, line, tensor)
    site = launch.sites.get(key)
    if site is None:
        site = launch.sites[key] = _Site(kind, file, line, tensor, esize)
    site.execs += 1
    if addr.size:
        off = (addr - np.uint64(base)).astype(np.int64)
        sec = off // SECTOR_BYTES
        if sec.size > 1 and not (sec[1:] >= sec[:-1]).all():
            sec = np.sort(sec)
        site.elems += off.size
        site.sec += _distinct_sorted(sec)
        site.lines += _distinct_sorted(sec // (LINE_BYTES // SECTOR_BYTES))
        site.mark(off, launch.buffer_bytes(tensor))
        if launch.trace is not None:
            idx = _program(launch)
            lines = np.unique(sec // (LINE_BYTES // SECTOR_BYTES))
            launch.trace.setdefault(idx, []).append((tensor, kind != "store", lines))


class OutOfBoundsError(IndexError):
    """A kernel counted with ``counting(strict=True)`` touched memory outside its tensors."""


def _check_bounds(launch: _Launch, kind: str, addr: np.ndarray, esize: int) -> None:
    """Refuse, before it happens, an access that reaches outside every tensor argument's storage
    (strict counting: the class grader runs a student's kernel this way, so that the kernel
    cannot read or write anything of the process but its own arguments)."""
    if not addr.size:
        return
    ends = np.array([b[1] for b in launch.buffers], dtype=np.uint64)
    i = np.searchsorted(launch.starts, addr, side="right").astype(np.int64) - 1
    inside = i >= 0
    inside[inside] = addr[inside] + np.uint64(esize) <= ends[i[inside]]
    if inside.all():
        return
    file, line = _caller()
    bad = int(np.count_nonzero(~inside))
    cell = cell_number(file)
    where = f"line {line}" + (f" of cell {cell}" if cell is not None else "")
    raise OutOfBoundsError(
        f"{where}: a {kind} touches {bad} element(s) outside every tensor passed to the kernel "
        f"(a mask that lets a lane past the end, or an offset computed wrongly); in strict "
        f"counting nothing outside the kernel's arguments may be read or written"
    )


def _program(launch: _Launch) -> int:
    """The running program's linear id in a GPU's launch order (axis 0 fastest)."""
    from triton.runtime import interpreter as interp

    x, y, z = interp.interpreter_builder.grid_idx
    gx, gy, _ = launch.grid_dims
    return int(x + gx * (y + gy * z))


def _distinct_sorted(a: np.ndarray) -> int:
    """Distinct values of a sorted array (np.unique's hashing is ~10x slower here)."""
    return int(np.count_nonzero(a[1:] != a[:-1])) + 1 if a.size else 0


def _finish(launch: _Launch) -> LaunchCount:
    import linecache

    sites = []
    union: dict[tuple[str, str, int], np.ndarray] = {}
    for s in launch.sites.values():
        code = linecache.getline(s.file, s.line).strip() if s.line else ""
        touched = s.touched()
        sites.append(
            SiteCount(
                s.kind,
                s.file,
                s.line,
                code,
                s.tensor,
                s.esize,
                s.execs,
                s.elems,
                s.elems * s.esize,
                s.sec,
                s.lines,
                touched.size * s.esize,
            )
        )
        tensor = s.tensor if s.tensor != "?" else f"?{id(s)}"  # unknown: its own buffer
        sides = {"load": ("r",), "store": ("w",), "atomic": ("r", "w")}[s.kind]
        for rw in sides:
            key = (rw, tensor, s.esize)
            union[key] = np.union1d(union[key], touched) if key in union else touched
    unique = {"r": 0, "w": 0}
    for (rw, _, esize), idx in union.items():
        unique[rw] += idx.size * esize
    sites.sort(key=lambda s: (s.file, s.line, KINDS.index(s.kind)))
    return LaunchCount(
        launch.kernel,
        launch.grid,
        tuple(sites),
        launch.dot_flops,
        launch.dots,
        launch.ew,
        launch.special,
        unique["r"],
        unique["w"],
    )


_EW_FLOPS = {
    "create_fadd": 1,
    "create_fsub": 1,
    "create_fmul": 1,
    "create_fdiv": 1,
    "create_precise_divf": 1,
    "create_fma": 2,
}
_SPECIAL = (
    "create_exp",
    "create_exp2",
    "create_log",
    "create_log2",
    "create_sin",
    "create_cos",
    "create_sqrt",
    "create_precise_sqrt",
    "create_rsqrt",
    "create_erf",
)


def _patches(interp) -> dict[str, Any]:
    """Replacement methods for the interpreter's builder (same positional arguments in 3.6–3.9)."""
    b = interp.interpreter_builder
    orig = {name: getattr(b, name) for name in ("create_masked_load", "create_masked_store")}
    new: dict[str, Any] = {}

    def masked_load(ptrs, mask, other, *args, **kwargs):
        _record("load", ptrs, mask)
        return orig["create_masked_load"](ptrs, mask, other, *args, **kwargs)

    def masked_store(ptrs, value, mask, *args, **kwargs):
        _record("store", ptrs, mask)
        return orig["create_masked_store"](ptrs, value, mask, *args, **kwargs)

    new["create_masked_load"] = masked_load
    new["create_masked_store"] = masked_store

    dot = b.create_dot

    def create_dot(a, b_, d, *args, **kwargs):
        launch = getattr(_STATE, "launch", None)
        if launch is not None:
            sa, sb = np.shape(a.data), np.shape(b_.data)
            batch = int(np.prod(sa[:-2])) if len(sa) > 2 else 1
            launch.dot_flops += 2 * batch * sa[-2] * sa[-1] * sb[-1]
            launch.dots += 1
        return dot(a, b_, d, *args, **kwargs)

    new["create_dot"] = create_dot

    rmw = b.create_atomic_rmw

    def atomic_rmw(op, ptr, val, mask, *args, **kwargs):
        _record("atomic", ptr, mask)
        return rmw(op, ptr, val, mask, *args, **kwargs)

    cas = b.create_atomic_cas

    def atomic_cas(ptr, cmp, val, *args, **kwargs):
        _record("atomic", ptr, None)
        return cas(ptr, cmp, val, *args, **kwargs)

    new["create_atomic_rmw"] = atomic_rmw
    new["create_atomic_cas"] = atomic_cas

    def counted(name, fn, per):
        def op(*args, **kwargs):
            out = fn(*args, **kwargs)
            launch = getattr(_STATE, "launch", None)
            if launch is not None:
                if per:
                    launch.ew += per * np.size(out.data)
                else:
                    launch.special += np.size(out.data)
            return out

        return op

    for name, per in _EW_FLOPS.items():
        if hasattr(b, name):
            new[name] = counted(name, getattr(b, name), per)
    for name in _SPECIAL:
        if hasattr(b, name):
            new[name] = counted(name, getattr(b, name), 0)
    return new


def _buffers(executor, args_hst, kwargs_hst) -> list[tuple[int, int, str]]:
    names = list(getattr(executor, "arg_names", []))
    found = []
    pairs = list(zip(names, args_hst, strict=False)) + list(kwargs_hst.items())
    for name, arg in pairs:
        t = getattr(arg, "base", arg)  # TensorDescriptor → its base tensor
        storage = getattr(t, "untyped_storage", None)
        if storage is None:
            continue
        st = storage()
        found.append((int(st.data_ptr()), int(st.data_ptr()) + int(st.nbytes()), str(name)))
    return found


def _check_interpreter():
    from .runtime import configure_triton, interpreting

    configure_triton()
    if not interpreting():
        raise RuntimeError(
            "counting runs kernels in Triton's CPU interpreter, which is off here "
            "(TRITON_INTERPRET is not 1: a GPU compiles kernels instead). Count in a CPU "
            "session, or set TRITON_INTERPRET=1 before Triton is imported"
        )
    import triton
    from triton.runtime import interpreter as interp

    major_minor = tuple(int(p) for p in triton.__version__.split(".")[:2])
    if major_minor < (3, 6):
        raise RuntimeError(
            f"counting needs Triton 3.6 or newer (its interpreter's hooks were checked on 3.6 "
            f"and 3.9); this is Triton {triton.__version__}"
        )
    needed = ("GridExecutor", "interpreter_builder")
    missing = [n for n in needed if not hasattr(interp, n)]
    if missing or not hasattr(interp.GridExecutor, "_init_args_hst"):
        raise RuntimeError(
            f"Triton {triton.__version__}'s interpreter lacks {missing or '_init_args_hst'}: "
            "gpuperf.counting was written for Triton 3.6–3.9"
        )
    return interp


_LOCK = threading.Lock()


def counting(
    *, trace: bool = False, strict: bool = False
) -> contextlib.AbstractContextManager[list[LaunchCount]]:
    """Count every interpreted kernel launch inside the ``with`` block.

    Yields a list that fills with one :class:`LaunchCount` per launch, in launch order. Kernel
    results are unchanged: the hooks only observe the interpreter's operations. Raises
    ``RuntimeError`` where kernels are compiled for a GPU instead of interpreted.
    ``trace=True`` also keeps, per program, the 128-byte lines each access touched, which
    :func:`l2_model` replays (more memory; keep the launch small). ``strict=True`` checks every
    access before it happens and raises :class:`OutOfBoundsError` for one outside the storage of
    every tensor argument (the class grader counts students' kernels this way).
    """
    return _counting(flag("trace", trace), flag("strict", strict))


def received(launch: LaunchCount) -> bool:
    """Add a launch counted in another process (the class grader's counting sandbox,
    :mod:`gpuperf.classroom.recount`) to the ``counting()`` block open here, if one is; say
    whether it was added (a launch outside any block is not counted, as here)."""
    if not isinstance(launch, LaunchCount):
        raise TypeError(f"launch={show(launch)} must be a LaunchCount")
    if _OPEN is None:
        return False
    _OPEN.append(launch)
    return True


_OPEN: list[LaunchCount] | None = None


@contextlib.contextmanager
def _counting(trace: bool, strict: bool) -> Iterator[list[LaunchCount]]:
    global _TRITON_DIR, _OPEN
    interp = _check_interpreter()
    import triton

    _TRITON_DIR = os.path.dirname(os.path.abspath(triton.__file__))
    launches: list[LaunchCount] = []
    if not _LOCK.acquire(blocking=False):
        raise RuntimeError("counting() blocks cannot be nested or run in two threads at once")
    b = interp.interpreter_builder
    ge = interp.GridExecutor
    orig_init, orig_call = ge._init_args_hst, ge.__call__
    new = _patches(interp)
    saved = {name: b.__dict__.get(name, _MISSING) for name in new}

    def init_args_hst(self, args_dev, kwargs):
        args_hst, kwargs_hst = orig_init(self, args_dev, kwargs)
        launch = getattr(_STATE, "launch", None)
        if launch is not None:
            launch.buffers = sorted(_buffers(self, args_hst, kwargs_hst))
            launch.starts = np.array([x[0] for x in launch.buffers], dtype=np.uint64)
        return args_hst, kwargs_hst

    def call(self, *args, **kwargs):
        outer = getattr(_STATE, "launch", None)
        name = getattr(self.fn, "__name__", "kernel")
        grid_seen: list[tuple[int, int, int]] = []
        set_dim = b.set_grid_dim

        def set_grid_dim(*dims):
            grid_seen.append(tuple(int(d) for d in dims))
            launch.grid_dims = grid_seen[-1]
            return set_dim(*dims)

        launch = _Launch(name, (1, 1, 1), [])
        launch.grid_dims = (1, 1, 1)
        if trace:
            launch.trace = {}
        launch.strict = strict
        _STATE.launch = launch
        b.set_grid_dim = set_grid_dim
        try:
            result = orig_call(self, *args, **kwargs)
        finally:
            _STATE.launch = outer
            del b.set_grid_dim
        if grid_seen:
            launch.grid = grid_seen[-1]  # type: ignore[assignment]
        counted = _finish(launch)
        if launch.trace is not None:
            object.__setattr__(counted, "_trace", launch.trace)
        launches.append(counted)
        return result

    try:
        for name, fn in new.items():
            setattr(b, name, fn)
        ge._init_args_hst = init_args_hst
        ge.__call__ = call
        _OPEN = launches
        yield launches
    finally:
        _OPEN = None
        ge._init_args_hst = orig_init
        ge.__call__ = orig_call
        for name, old in saved.items():
            if old is _MISSING:
                b.__dict__.pop(name, None)
            else:
                setattr(b, name, old)
        _STATE.launch = None
        _LOCK.release()


_MISSING = object()


@dataclass(frozen=True)
class Counted:
    """What :func:`count` returns: the call's result and the launches it made."""

    result: Any
    launches: tuple[LaunchCount, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.launches, tuple) or not all(
            isinstance(x, LaunchCount) for x in self.launches
        ):
            raise TypeError(f"launches={show(self.launches)} must be a tuple of LaunchCount")
        if not self.launches:
            raise ValueError("launches=() must hold at least one launch: count() found none")

    @property
    def launch(self) -> LaunchCount:
        """The one launch (``ValueError`` if the call launched several or none)."""
        if len(self.launches) != 1:
            names = [x.kernel for x in self.launches]
            raise ValueError(
                f"the call made {len(self.launches)} launches ({names}); use .launches"
            )
        return self.launches[0]

    @property
    def op_cost(self) -> OpCost:
        return total(self.launches)


def count(fn: Any, *args: Any, **kwargs: Any) -> Counted:
    """Call ``fn(*args, **kwargs)`` (a launcher such as ``vector_add``) and count its launches."""
    if not callable(fn):
        raise TypeError(f"fn={show(fn)} must be callable (a kernel launcher such as vector_add)")
    with counting() as launches:
        result = fn(*args, **kwargs)
    if not launches:
        raise ValueError(
            f"fn={getattr(fn, '__name__', fn)!r} launched no Triton kernel: nothing to count"
        )
    return Counted(result, tuple(launches))


# --------------------------------------------------------------------------- an L2 model


@dataclass(frozen=True)
class L2Model:
    """Bytes a simple L2 would fetch from DRAM for a traced launch (:func:`l2_model`)."""

    l2_bytes: int
    wave: int  # programs resident at once
    dram_bytes_read: int  # line misses of loads × 128 B
    requested_bytes_read: int
    unique_bytes_read: int

    def __post_init__(self) -> None:
        _ints(self, "dram_bytes_read", "requested_bytes_read", "unique_bytes_read")
        _ints(self, "l2_bytes", "wave", minimum=1)


def l2_model(launch: LaunchCount, l2_bytes: int, wave: int) -> L2Model:
    """Replay a traced launch (``counting(trace=True)``) through a least-recently-used cache.

    Assumptions, all stated because each matters: the cache is fully associative, ``l2_bytes``
    large, in 128-byte lines, holds only this launch's data and starts empty; programs run in a
    GPU's launch order (axis 0 fastest), ``wave`` at a time (e.g. SMs × programs per SM); the
    programs of a wave advance in lockstep, their i-th accesses interleaved; a store allocates
    its line (write-back, never counted as a read). Real L2s are set-associative, split in two
    partitions on an A100/H100 and shared with other work, so this is a model of *why* launch
    order matters (``GROUP_M``), not a prediction of a measured DRAM count. No first-party
    measurement of DRAM bytes exists in this repository to compare it with (``ncu`` needs a GPU).
    Returns the modeled DRAM bytes of the loads next to the requested and unique bytes.
    """
    from collections import OrderedDict

    if not isinstance(launch, LaunchCount):
        raise TypeError(f"launch={show(launch)} must be a LaunchCount")
    trace = getattr(launch, "_trace", None)
    if trace is None:
        raise ValueError("launch has no trace: count it inside counting(trace=True)")
    l2_bytes = positive_int("l2_bytes", l2_bytes, LINE_BYTES)
    wave = positive_int("wave", wave, 1)
    capacity = l2_bytes // LINE_BYTES
    cache: OrderedDict[tuple[str, int], None] = OrderedDict()
    misses = 0
    order = sorted(trace)
    for start in range(0, len(order), wave):
        programs = [trace[p] for p in order[start : start + wave]]
        for step in range(max(len(t) for t in programs)):
            for accesses in programs:
                if step >= len(accesses):
                    continue
                tensor, is_read, lines = accesses[step]
                for line in lines.tolist():
                    key = (tensor, line)
                    if key in cache:
                        cache.move_to_end(key)
                        continue
                    if is_read:
                        misses += 1
                    cache[key] = None
                    if len(cache) > capacity:
                        cache.popitem(last=False)
    return L2Model(
        l2_bytes, wave, misses * LINE_BYTES, launch.bytes_read, launch.unique_bytes_read
    )


# --------------------------------------------------------------------------- the roofline

#: How every counted number is labelled where it is shown.
LABEL = (
    "bytes requested from global memory, counted on the CPU — not DRAM traffic (caches reduce "
    "it); time only measured on a GPU"
)


@dataclass(frozen=True)
class RooflinePlacement:
    """A counted launch on one chip's roofline, and the measured time where a GPU measured one."""

    name: str
    chip: str
    precision: str
    flops: float
    bytes: float
    intensity: float  # FLOP per requested byte
    ridge: float  # FLOP/byte where the chip turns compute-bound
    floor_s: float  # max(FLOPs / peak, bytes / bandwidth)
    t_math_s: float
    t_memory_s: float
    bound: str  # "memory" or "compute"
    roof: str  # where the peak and bandwidth come from
    measured_s: float | None = None  # gpuperf.bench's median on a GPU; None: not measured

    def __post_init__(self) -> None:
        from .units import check_precision

        for label in ("name", "chip", "roof"):
            name_string(label, getattr(self, label))
        check_precision(self.precision)
        for label in ("flops", "bytes", "intensity", "floor_s", "t_math_s", "t_memory_s"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label), True))
        object.__setattr__(self, "ridge", positive_float("ridge", self.ridge))
        choice("bound", self.bound, ("memory", "compute"))
        if self.measured_s is not None:
            object.__setattr__(self, "measured_s", positive_float("measured_s", self.measured_s))

    @property
    def fraction_of_floor(self) -> float | None:
        """floor / measured: 1.0 would be at the roofline; None when nothing was measured."""
        return None if self.measured_s is None else self.floor_s / self.measured_s

    def format(self) -> str:
        from .units import format_seconds

        lines = [
            f"{self.name} on {self.chip} ({self.precision}): {self.flops:,.0f} FLOPs, "
            f"{self.bytes:,.0f} bytes → {self.intensity:.3g} FLOP/byte (ridge "
            f"{self.ridge:.3g}): {self.bound}-bound, floor {format_seconds(self.floor_s)}",
            f"  ({LABEL}; roof: {self.roof})",
        ]
        if self.measured_s is None:
            lines.append("  measured: not measured here (no GPU; gpuperf.bench times on a GPU)")
        else:
            lines.append(
                f"  measured by gpuperf.bench: {format_seconds(self.measured_s)} = "
                f"{self.fraction_of_floor:.0%} of the roofline floor"
            )
        return "\n".join(lines)


def roofline_place(
    counted: LaunchCount | Counted | OpCost,
    chip: Any,
    precision: str = "fp32",
    *,
    tensor_cores: bool | None = None,
    unique: bool = False,
    measured_s: float | None = None,
) -> RooflinePlacement:
    """Place a counted launch (or several: a :class:`Counted`) on ``chip``'s roofline.

    Intensity is counted FLOPs over requested bytes (``unique=True``: over unique bytes, the
    perfect-cache end of the band). ``tensor_cores`` picks the math roof: by default the
    tensor-core peak when the launch did ``tl.dot`` work in a precision tensor cores take
    (fp16, bf16, fp8, tf32), else the CUDA-core peak. ``measured_s`` is a time measured by
    :mod:`gpuperf.bench` on a GPU (``None``: nothing measured — never invent one).
    """
    from .bench import chip_floor
    from .hardware import chip as get_chip

    if isinstance(counted, Counted):
        launches = counted.launches
        op = (
            total(launches)
            if not unique
            else OpCost(
                sum(x.flops for x in launches),
                sum(x.unique_bytes_read for x in launches),
                sum(x.unique_bytes_written for x in launches),
                " + ".join(x.kernel for x in launches),
            )
        )
        dots = sum(x.dot_flops for x in launches)
    elif isinstance(counted, LaunchCount):
        op, dots = counted.op_cost(unique=unique), counted.dot_flops
    elif isinstance(counted, OpCost):
        op, dots = counted, counted.flops
    else:
        raise TypeError(
            f"counted={show(counted)} must be a LaunchCount, a Counted (from count()) or an OpCost"
        )
    unique = flag("unique", unique)
    c = get_chip(chip)
    if tensor_cores is None:
        tensor_cores = bool(dots) and precision in ("fp16", "bf16", "fp8", "tf32", "int8", "fp4")
    if measured_s is not None:
        measured_s = positive_float("measured_s", measured_s)
    if op.bytes <= 0:
        raise ValueError(f"{op.name or 'the launch'} requested no bytes: it has no intensity")
    floor = chip_floor(op, c, precision, tensor_cores)
    peak = c.peak_flops(precision, tensor_cores)
    intensity = op.flops / op.bytes
    return RooflinePlacement(
        name=op.name or "kernel",
        chip=c.name,
        precision=precision,
        flops=float(op.flops),
        bytes=float(op.bytes),
        intensity=intensity,
        ridge=peak / c.hbm_bandwidth,
        floor_s=floor.time_s,
        t_math_s=floor.t_math_s,
        t_memory_s=floor.t_memory_s,
        bound="compute" if floor.bound == "compute" else "memory",
        roof=floor.source,
        measured_s=measured_s,
    )


def measure_if_gpu(fn: Any) -> float | None:
    """``gpuperf.bench.measure_seconds(fn)`` on a GPU; ``None`` without one.

    ``fn`` takes no arguments (``lambda: my_kernel(x, y)``). The CPU path returns ``None`` — no
    number is made up where nothing was measured.
    """
    if not callable(fn):
        raise TypeError(f"fn={show(fn)} must be callable")
    from .runtime import has_cuda_gpu, interpreting

    if not has_cuda_gpu() or interpreting():
        return None
    from .bench import measure_seconds

    return measure_seconds(fn)


__all__ = [
    "LABEL",
    "LINE_BYTES",
    "MEASURED_OVERHEAD",
    "SECTOR_BYTES",
    "TRITON_VIZ_EVALUATION",
    "Counted",
    "L2Model",
    "LaunchCount",
    "OutOfBoundsError",
    "RooflinePlacement",
    "SiteCount",
    "cell_file",
    "cell_number",
    "count",
    "counting",
    "l2_model",
    "measure_if_gpu",
    "received",
    "roofline_place",
    "total",
]
