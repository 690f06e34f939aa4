"""What the compiler made of the course matmul for every tile on the tiling widget's sliders.

The tiling explorer moves BLOCK_M, BLOCK_N and BLOCK_K and reports, for the chosen chip, the
shared memory, registers per thread and theoretical occupancy of the *compiled* kernel. Compiling
on every slider step would take seconds, so the grid is compiled once, offline, with
:func:`gpuperf.inspect.compile_many` (no GPU needed), and stored below as plain data. It is
compiled as Triton's JIT compiles a call on contiguous fp16 tensors whose sizes are multiples of
16 (unit strides as the constant 1, the divisibility-by-16 hints; see :mod:`gpuperf.inspect`), so
the shared memory is what the pipeliner really allocates: ``num_stages - 1`` stages of panels on
sm_80, ``num_stages`` on sm_90, one on sm_75. Rows whose explanation says "course model" were not
compiled: one stage alone exceeds the chip's shared memory, or (sm_75, where ``tl.dot`` becomes
FMAs) the accumulators exceed 255 registers per thread.
:func:`regenerate` rebuilds this file (about 15 minutes on two busy cores; results are cached per
configuration, so an interrupted run resumes); ``tests/test_widgets_tricks.py`` and
``tests/test_inspect.py`` recompile entries and check them against the stored numbers, so the
table cannot silently drift from the kernel. Nothing here is a timing: nothing ran.

Spill bytes are the per-thread stack frame ptxas fills with spilled registers (0 when nothing
spills), read as :mod:`gpuperf.inspect` reads them: ``STACK:`` of ``cuobjdump -res-usage``,
confirmed by ptxas's own "bytes spill stores" (tables stored before that fix read ``LOCAL:`` and
showed 0 for every tile).

Each entry: ``(target, BLOCK_M, BLOCK_N, BLOCK_K) → (shared memory bytes, registers per thread,
spill bytes, occupancy, limited_by, tensor-core instruction or "", explanation)``; configurations
that do not fit have ``None`` numbers and an explanation.
"""

# ruff: noqa: E501  (the generated table below has one long line per tile)
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import file_path, name_string, optional, positive_float, positive_int, show
from ..hardware import chip as find_chip
from ..inspect import target_of
from ..tiling import occupancy

__all__ = [
    "BLOCKS_K",
    "BLOCKS_MN",
    "DTYPE",
    "NUM_STAGES",
    "NUM_WARPS",
    "REPORTS",
    "TARGETS",
    "TRITON_VERSION",
    "TileReport",
    "ctas_per_sm",
    "regenerate",
    "tile_report",
]

#: The slider values (powers of two ≥ 16, the smallest ``tl.dot`` tile).
BLOCKS_MN = (32, 64, 128, 256)
BLOCKS_K = (16, 32, 64)
TARGETS = ("sm_75", "sm_80", "sm_90")
DTYPE = "fp16"
NUM_WARPS = 4
NUM_STAGES = 3


@dataclass(frozen=True)
class TileReport:
    """One compiled tile configuration (``None`` fields: it did not fit or compile)."""

    shared_memory_bytes: int | None
    registers_per_thread: int | None
    spill_bytes: int | None
    occupancy: float | None
    limited_by: str | None
    tensor_core_instruction: str
    explanation: str

    def __post_init__(self) -> None:
        for name in ("shared_memory_bytes", "registers_per_thread", "spill_bytes"):
            optional(name, getattr(self, name), positive_int, minimum=0)
        optional("occupancy", self.occupancy, positive_float, allow_zero=True, maximum=1.0)
        optional("limited_by", self.limited_by, name_string)
        for name in ("tensor_core_instruction", "explanation"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name}={show(getattr(self, name))} must be a string")
        if self.shared_memory_bytes is None and not self.explanation:
            raise ValueError(
                "a tile that did not fit (shared_memory_bytes=None) needs an explanation"
            )

    @property
    def fits(self) -> bool:
        return self.shared_memory_bytes is not None

    @classmethod
    def from_report(cls, report: Any) -> TileReport:
        """A fresh :class:`~gpuperf.inspect.CompileReport` as the table stores it, to compare
        with :func:`tile_report` (the table is only as good as this equality)."""
        if not all(hasattr(report, name) for name in _REPORT_FIELDS):
            raise TypeError(
                f"report={report!r} must be a gpuperf.inspect.CompileReport (needs "
                f"{', '.join(_REPORT_FIELDS)})"
            )
        return cls(*_entry(report))


_BLOCKS = ("block_m", "block_n", "block_k")


def tile_report(target: str, block_m: int, block_n: int, block_k: int) -> TileReport:
    """The stored compile result for one slider position; ``KeyError`` names the valid grid."""
    sizes = (block_m, block_n, block_k)
    blocks = tuple(positive_int(n, b) for n, b in zip(_BLOCKS, sizes, strict=True))
    key = (target, *blocks)
    if not isinstance(target, str) or key not in REPORTS:
        raise KeyError(
            f"target={target!r}, block_m, block_n, block_k={blocks}: no stored compile; targets "
            f"{TARGETS}, BLOCK_M/BLOCK_N in {BLOCKS_MN}, BLOCK_K in {BLOCKS_K}; call "
            "gpuperf.inspect.compile_kernel for other tiles"
        )
    return TileReport(*REPORTS[key])


def ctas_per_sm(chip: str, block_m: int, block_n: int, block_k: int) -> int | None:
    """How many programs of this tile the compiled kernel keeps resident on one SM of ``chip``.

    The blocks-per-SM limit of :func:`gpuperf.tiling.occupancy` for the stored compiler output
    (registers per thread, shared memory per block, :data:`NUM_WARPS` warps) on the chip's
    target; ``None`` for a tile that was not compiled or does not fit. This is what
    :func:`gpuperf.tiling.l2_levels` takes as ``ctas_per_sm``: a wave is SMs × this many tiles.
    """
    found = find_chip(chip)
    report = tile_report(target_of(found.name), block_m, block_n, block_k)
    if not report.fits or report.registers_per_thread is None:
        return None
    threads = 32 * NUM_WARPS
    occ = occupancy(found, threads, report.registers_per_thread, report.shared_memory_bytes)
    return occ.blocks_per_sm


def _requests() -> list[dict]:
    """The :func:`gpuperf.inspect.compile_many` requests for the whole grid."""
    return [
        dict(
            kernel="matmul",
            target=target,
            dtype=DTYPE,
            num_warps=NUM_WARPS,
            num_stages=NUM_STAGES,
            BLOCK_M=bm,
            BLOCK_N=bn,
            BLOCK_K=bk,
        )
        for target in TARGETS
        for bm in BLOCKS_MN
        for bn in BLOCKS_MN
        for bk in BLOCKS_K
    ]


_REPORT_FIELDS = (
    "compiled",
    "fits",
    "tensor_cores",
    "tensor_core_instructions",
    "occupancy",
    "shared_memory_bytes",
    "registers_per_thread",
    "spill_bytes",
    "limited_by",
    "explanation",
)


def _entry(report: Any) -> tuple:
    """A :class:`~gpuperf.inspect.CompileReport` as a stored tuple."""
    ok = report.compiled and report.fits
    tc = report.tensor_core_instructions[0] if report.tensor_cores else ""
    occupancy = None if report.occupancy is None else round(report.occupancy, 4)
    return (
        report.shared_memory_bytes if ok else None,
        report.registers_per_thread if ok else None,
        report.spill_bytes if ok else None,
        occupancy if ok else None,
        report.limited_by if ok else None,
        tc if ok else "",
        "" if ok else report.explanation,
    )


def regenerate(path: str | Path | None = None) -> int:  # pragma: no cover - offline tool
    """Compile the grid (minutes, cached by gpuperf.inspect) and rewrite this module's table."""
    from .. import inspect as gi

    path = file_path("path", path, default=__file__)

    reports = gi.compile_many(_requests())
    lines = []
    for request, report in zip(_requests(), reports, strict=True):
        key = (request["target"], request["BLOCK_M"], request["BLOCK_N"], request["BLOCK_K"])
        lines.append(f"    {key!r}: {_entry(report)!r},")
    version = reports[0].triton_version
    text = path.read_text(encoding="utf-8")
    head = text.split(_MARKER)[0]
    body = (
        f"{_MARKER} by regenerate() with triton {version}; do not edit by hand ---\n"
        f'TRITON_VERSION = "{version}"\n'
        "# fmt: off\n"
        "REPORTS: dict[tuple[str, int, int, int], tuple] = {\n" + "\n".join(lines) + "\n}\n"
        "# fmt: on\n"
    )
    path.write_text(head + body, encoding="utf-8")
    return len(lines)


_MARKER = "# --- " + "generated"  # split here (spelt in two so this line is not the marker)


# --- generated by regenerate() with triton 3.9.0; do not edit by hand ---
TRITON_VERSION = "3.9.0"
# fmt: off
REPORTS: dict[tuple[str, int, int, int], tuple] = {
    ('sm_75', 32, 32, 16): (2048, 110, 0, 0.5, 'registers', '', ''),
    ('sm_75', 32, 32, 32): (4096, 166, 0, 0.375, 'registers', '', ''),
    ('sm_75', 32, 32, 64): (8192, 255, 184, 0.25, 'registers', '', ''),
    ('sm_75', 32, 64, 16): (4096, 124, 0, 0.5, 'registers', '', ''),
    ('sm_75', 32, 64, 32): (8192, 202, 0, 0.25, 'registers', '', ''),
    ('sm_75', 32, 64, 64): (16384, 255, 304, 0.25, 'registers', '', ''),
    ('sm_75', 32, 128, 16): (8192, 216, 0, 0.25, 'registers', '', ''),
    ('sm_75', 32, 128, 32): (16384, 255, 360, 0.25, 'registers', '', ''),
    ('sm_75', 32, 128, 64): (32768, 64, 2376, 0.25, 'shared_memory', '', ''),
    ('sm_75', 32, 256, 16): (16384, 64, 2136, 0.5, 'shared_memory', '', ''),
    ('sm_75', 32, 256, 32): (32768, 64, 4016, 0.25, 'shared_memory', '', ''),
    ('sm_75', 32, 256, 64): (65536, 64, 7560, 0.125, 'shared_memory', '', ''),
    ('sm_75', 64, 32, 16): (4096, 124, 0, 0.5, 'registers', '', ''),
    ('sm_75', 64, 32, 32): (8192, 194, 0, 0.25, 'registers', '', ''),
    ('sm_75', 64, 32, 64): (16384, 255, 280, 0.25, 'registers', '', ''),
    ('sm_75', 64, 64, 16): (8192, 202, 0, 0.25, 'registers', '', ''),
    ('sm_75', 64, 64, 32): (8192, 255, 384, 0.25, 'registers', '', ''),
    ('sm_75', 64, 64, 64): (16384, 64, 2416, 0.5, 'shared_memory', '', ''),
    ('sm_75', 64, 128, 16): (8192, 255, 576, 0.25, 'registers', '', ''),
    ('sm_75', 64, 128, 32): (16384, 64, 4120, 0.5, 'shared_memory', '', ''),
    ('sm_75', 64, 128, 64): (32768, 64, 7168, 0.25, 'shared_memory', '', ''),
    ('sm_75', 64, 256, 16): (16384, 64, 5576, 0.5, 'shared_memory', '', ''),
    ('sm_75', 64, 256, 32): (32768, 64, 11248, 0.25, 'shared_memory', '', ''),
    ('sm_75', 64, 256, 64): (65536, 64, 20336, 0.125, 'shared_memory', '', ''),
    ('sm_75', 128, 32, 16): (8192, 204, 0, 0.25, 'registers', '', ''),
    ('sm_75', 128, 32, 32): (16384, 255, 384, 0.25, 'registers', '', ''),
    ('sm_75', 128, 32, 64): (32768, 64, 2440, 0.25, 'shared_memory', '', ''),
    ('sm_75', 128, 64, 16): (8192, 255, 616, 0.25, 'registers', '', ''),
    ('sm_75', 128, 64, 32): (16384, 64, 3976, 0.5, 'shared_memory', '', ''),
    ('sm_75', 128, 64, 64): (32768, 64, 7248, 0.25, 'shared_memory', '', ''),
    ('sm_75', 128, 128, 16): (8192, 64, 5488, 1.0, 'shared_memory', '', ''),
    ('sm_75', 128, 128, 32): (16384, 64, 11384, 0.5, 'shared_memory', '', ''),
    ('sm_75', 128, 128, 64): (32768, 64, 19608, 0.25, 'shared_memory', '', ''),
    ('sm_75', 128, 256, 16): (None, None, None, None, None, '', 'not compiled (course model): on sm_75 Triton lowers tl.dot to FMA instructions, and each of the 128 threads would hold 256 fp32 accumulators, more than the 255 registers a thread can have: the compiler would spill them to local memory. Use smaller tiles or more warps.'),
    ('sm_75', 128, 256, 32): (None, None, None, None, None, '', 'not compiled (course model): on sm_75 Triton lowers tl.dot to FMA instructions, and each of the 128 threads would hold 256 fp32 accumulators, more than the 255 registers a thread can have: the compiler would spill them to local memory. Use smaller tiles or more warps.'),
    ('sm_75', 128, 256, 64): (None, None, None, None, None, '', 'not compiled (course model): on sm_75 Triton lowers tl.dot to FMA instructions, and each of the 128 threads would hold 256 fp32 accumulators, more than the 255 registers a thread can have: the compiler would spill them to local memory. Use smaller tiles or more warps.'),
    ('sm_75', 256, 32, 16): (16384, 255, 656, 0.25, 'registers', '', ''),
    ('sm_75', 256, 32, 32): (32768, 64, 4008, 0.25, 'shared_memory', '', ''),
    ('sm_75', 256, 32, 64): (65536, 64, 7536, 0.125, 'shared_memory', '', ''),
    ('sm_75', 256, 64, 16): (16384, 64, 5688, 0.5, 'shared_memory', '', ''),
    ('sm_75', 256, 64, 32): (32768, 64, 11416, 0.25, 'shared_memory', '', ''),
    ('sm_75', 256, 64, 64): (65536, 64, 20240, 0.125, 'shared_memory', '', ''),
    ('sm_75', 256, 128, 16): (None, None, None, None, None, '', 'not compiled (course model): on sm_75 Triton lowers tl.dot to FMA instructions, and each of the 128 threads would hold 256 fp32 accumulators, more than the 255 registers a thread can have: the compiler would spill them to local memory. Use smaller tiles or more warps.'),
    ('sm_75', 256, 128, 32): (None, None, None, None, None, '', 'not compiled (course model): on sm_75 Triton lowers tl.dot to FMA instructions, and each of the 128 threads would hold 256 fp32 accumulators, more than the 255 registers a thread can have: the compiler would spill them to local memory. Use smaller tiles or more warps.'),
    ('sm_75', 256, 128, 64): (None, None, None, None, None, '', 'not compiled (course model): on sm_75 Triton lowers tl.dot to FMA instructions, and each of the 128 threads would hold 256 fp32 accumulators, more than the 255 registers a thread can have: the compiler would spill them to local memory. Use smaller tiles or more warps.'),
    ('sm_75', 256, 256, 16): (None, None, None, None, None, '', 'not compiled (course model): on sm_75 Triton lowers tl.dot to FMA instructions, and each of the 128 threads would hold 512 fp32 accumulators, more than the 255 registers a thread can have: the compiler would spill them to local memory. Use smaller tiles or more warps.'),
    ('sm_75', 256, 256, 32): (None, None, None, None, None, '', 'not compiled (course model): on sm_75 Triton lowers tl.dot to FMA instructions, and each of the 128 threads would hold 512 fp32 accumulators, more than the 255 registers a thread can have: the compiler would spill them to local memory. Use smaller tiles or more warps.'),
    ('sm_75', 256, 256, 64): (None, None, None, None, None, '', 'not compiled (course model): on sm_75 Triton lowers tl.dot to FMA instructions, and each of the 128 threads would hold 512 fp32 accumulators, more than the 255 registers a thread can have: the compiler would spill them to local memory. Use smaller tiles or more warps.'),
    ('sm_80', 32, 32, 16): (4096, 45, 0, 0.625, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 32, 32): (8192, 48, 0, 0.625, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 32, 64): (16384, 55, 0, 0.5625, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 64, 16): (6144, 57, 0, 0.5, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 64, 32): (12288, 69, 0, 0.4375, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 64, 64): (24576, 76, 0, 0.375, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 128, 16): (10240, 93, 0, 0.3125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 128, 32): (20480, 96, 0, 0.3125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 128, 64): (40960, 125, 0, 0.25, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 256, 16): (18432, 127, 0, 0.25, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 256, 32): (36864, 153, 0, 0.1875, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 32, 256, 64): (73728, 206, 0, 0.125, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 32, 16): (6144, 57, 0, 0.5, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 32, 32): (12288, 72, 0, 0.4375, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 32, 64): (24576, 78, 0, 0.375, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 64, 16): (8192, 83, 0, 0.3125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 64, 32): (16384, 96, 0, 0.3125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 64, 64): (32768, 120, 0, 0.25, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 128, 16): (12288, 126, 0, 0.25, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 128, 32): (24576, 149, 0, 0.1875, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 128, 64): (49152, 168, 0, 0.1875, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 256, 16): (20480, 200, 0, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 256, 32): (40960, 236, 0, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 64, 256, 64): (81920, 255, 0, 0.125, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 32, 16): (10240, 90, 0, 0.3125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 32, 32): (20480, 118, 0, 0.25, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 32, 64): (40960, 123, 0, 0.25, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 64, 16): (16384, 123, 0, 0.25, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 64, 32): (24576, 150, 0, 0.1875, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 64, 64): (49152, 166, 0, 0.1875, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 128, 16): (16384, 202, 0, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 128, 32): (32768, 251, 0, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 128, 64): (65536, 241, 0, 0.125, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 256, 16): (24576, 255, 488, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 256, 32): (49152, 255, 1232, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 128, 256, 64): (98304, 255, 1512, 0.0625, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 32, 16): (18432, 133, 0, 0.1875, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 32, 32): (36864, 150, 0, 0.1875, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 32, 64): (73728, 158, 0, 0.125, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 64, 16): (20480, 203, 0, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 64, 32): (40960, 251, 0, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 64, 64): (81920, 242, 0, 0.125, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 128, 16): (24576, 255, 456, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 128, 32): (49152, 255, 1168, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 128, 64): (98304, 255, 1480, 0.0625, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 256, 16): (32768, 255, 2152, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 256, 32): (65536, 255, 4088, 0.125, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_80', 256, 256, 64): (131072, 255, 5096, 0.0625, 'shared_memory', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 32, 16): (4096, 40, 0, 0.75, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 32, 32): (8192, 46, 0, 0.625, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 32, 64): (16384, 54, 0, 0.5625, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 64, 16): (6144, 52, 0, 0.5625, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 64, 32): (12288, 64, 0, 0.5, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 64, 64): (24576, 70, 0, 0.4375, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 128, 16): (10240, 72, 0, 0.4375, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 128, 32): (20480, 94, 0, 0.3125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 128, 64): (40960, 128, 0, 0.25, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 256, 16): (18432, 126, 0, 0.25, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 256, 32): (36864, 166, 0, 0.1875, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 32, 256, 64): (73728, 176, 0, 0.125, 'registers', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32', ''),
    ('sm_90', 64, 32, 16): (9216, 46, 0, 0.625, 'registers', 'wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16', ''),
    ('sm_90', 64, 32, 32): (18432, 46, 0, 0.625, 'registers', 'wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16', ''),
    ('sm_90', 64, 32, 64): (36864, 53, 0, 0.375, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16', ''),
    ('sm_90', 64, 64, 16): (12288, 64, 0, 0.5, 'registers', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', ''),
    ('sm_90', 64, 64, 32): (24576, 64, 0, 0.5, 'registers', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', ''),
    ('sm_90', 64, 64, 64): (49152, 72, 0, 0.25, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', ''),
    ('sm_90', 64, 128, 16): (18432, 96, 0, 0.3125, 'registers', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', ''),
    ('sm_90', 64, 128, 32): (36864, 110, 0, 0.25, 'registers', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', ''),
    ('sm_90', 64, 128, 64): (73728, 116, 0, 0.1875, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', ''),
    ('sm_90', 64, 256, 16): (30720, 168, 0, 0.1875, 'registers', 'wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16', ''),
    ('sm_90', 64, 256, 32): (61440, 194, 0, 0.125, 'registers', 'wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16', ''),
    ('sm_90', 64, 256, 64): (122880, 219, 0, 0.0625, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16', ''),
    ('sm_90', 128, 32, 16): (15360, 62, 0, 0.5, 'registers', 'wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16', ''),
    ('sm_90', 128, 32, 32): (30720, 71, 0, 0.4375, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16', ''),
    ('sm_90', 128, 32, 64): (61440, 80, 0, 0.1875, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16', ''),
    ('sm_90', 128, 64, 16): (18432, 100, 0, 0.25, 'registers', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', ''),
    ('sm_90', 128, 64, 32): (36864, 114, 0, 0.25, 'registers', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', ''),
    ('sm_90', 128, 64, 64): (73728, 116, 0, 0.1875, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', ''),
    ('sm_90', 128, 128, 16): (24576, 176, 0, 0.125, 'registers', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', ''),
    ('sm_90', 128, 128, 32): (49152, 184, 0, 0.125, 'registers', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', ''),
    ('sm_90', 128, 128, 64): (98304, 197, 0, 0.125, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', ''),
    ('sm_90', 128, 256, 16): (36864, 255, 680, 0.125, 'registers', 'wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16', ''),
    ('sm_90', 128, 256, 32): (73728, 255, 1080, 0.125, 'registers', 'wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16', ''),
    ('sm_90', 128, 256, 64): (147456, 255, 1024, 0.0625, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16', ''),
    ('sm_90', 256, 32, 16): (27648, 108, 0, 0.25, 'registers', 'wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16', ''),
    ('sm_90', 256, 32, 32): (55296, 115, 0, 0.25, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16', ''),
    ('sm_90', 256, 32, 64): (110592, 127, 0, 0.125, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16', ''),
    ('sm_90', 256, 64, 16): (30720, 192, 0, 0.125, 'registers', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', ''),
    ('sm_90', 256, 64, 32): (61440, 197, 0, 0.125, 'registers', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', ''),
    ('sm_90', 256, 64, 64): (122880, 216, 0, 0.0625, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16', ''),
    ('sm_90', 256, 128, 16): (36864, 255, 544, 0.125, 'registers', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', ''),
    ('sm_90', 256, 128, 32): (73728, 255, 656, 0.125, 'registers', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', ''),
    ('sm_90', 256, 128, 64): (147456, 255, 672, 0.0625, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16', ''),
    ('sm_90', 256, 256, 16): (49152, 255, 3280, 0.125, 'registers', 'wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16', ''),
    ('sm_90', 256, 256, 32): (98304, 255, 3680, 0.125, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16', ''),
    ('sm_90', 256, 256, 64): (196608, 255, 3016, 0.0625, 'shared_memory', 'wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16', ''),
}
# fmt: on
