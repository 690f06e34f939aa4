"""Measure course kernels on a real GPU against their roofline floor and their torch counterpart.

Every line prints the bound first, then the measurement: ``floor 41 µs (HBM), measured 47 µs,
87 % of roofline``. The floor is ``max(FLOPs / peak, bytes / bandwidth)`` from the kernel's cost
model, with peak and bandwidth from the chip table (:mod:`gpuperf.hardware`) or from ceilings
measured once on this GPU (a large device-to-device copy and a large ``torch.matmul``), which
are the roofs a kernel can actually reach. Timings are medians of ``triton.testing.do_bench``.

``python -m gpuperf.bench`` runs every case of :func:`cases` — each course kernel next to its
torch counterpart in the same run (cuBLAS for the matmuls; for FlashAttention both the FLASH
backend of ``scaled_dot_product_attention`` and its default backend, cuDNN on an H100). Before
timing, each case checks correctness on the very inputs it will time: the relative error
``‖out − ref‖ / ‖ref‖`` against an fp32/fp64 torch reference must be within the precision's
tolerance (:mod:`gpuperf.tolerances`), or the case is reported wrong and not timed. The table
gives the ratio to torch and the fraction of the roofline; then every target of issue 14's
table (:data:`TARGETS`) is reported as met, not met, or not measured. ``--json PATH`` writes the
run as a ``gpuperf.bench/1`` document (provenance: chip, device, driver, CUDA, torch, Triton,
numpy, Python, date, commit; one record per case), the format
:func:`gpuperf.measurements.load_kernels` reads. The file is rewritten (atomically) after every
case with ``"complete": false`` until the run ends, so a run stopped early — a GPU lent for a
few minutes — keeps every case it measured. :func:`evaluate_targets` applies the targets to any
such record set, e.g. the H100 run shipped with the package.

``--quick`` runs exactly the cases the targets name (plus :data:`QUICK_ALSO`): every number of
the targets table in one run — the copy ceiling, matmul against cuBLAS (fp16/bf16, 4096³ and
8192³, default and autotuned), FlashAttention against SDPA's FLASH and default backends
(B 4, H 16, N 4096, d 64 and 128, causal and not, forward and forward+backward), decode attention
against the copy bandwidth. ``--list`` prints the cases a run would measure, with their FLOPs
and bytes, and needs no GPU (it times nothing).

With no CUDA GPU nothing can be measured: :func:`main` says so and exits non-zero, and every
function that would time something raises :class:`NoGPUError`. Nothing here invents a number.

Every printed floor names its roof (``Measurement.format`` ends with ``roof: H100-SXM datasheet
…`` or ``roof: ceilings measured on this GPU``). A "measure it" cell resolves the GPU it runs on
with :func:`this_gpu`: the chip table's own row for that device name, or a sentence saying the GPU
is not in the table and no datasheet roof is used — never another chip's roof in its place.
:data:`NO_GPU_MESSAGE` and :data:`COLAB_GPUS` say what each Colab GPU gives: Triton's README
supports compute capability 8.0+, so a T4 (sm_75) runs Triton unsupported and its ``tl.dot`` gets
no tensor cores, while the L4, A100 and H100 are supported.

Run: ``python -m gpuperf.bench [--quick] [--json PATH] [--only REGEX] [--chip A100]
[--table-ceilings] [--list]``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ._validate import (
    choice,
    file_path,
    flag,
    function,
    instance,
    int_pair,
    mapping,
    name_string,
    optional,
    positive_float,
    positive_int,
    sequence,
    show,
)
from .cost import OpCost
from .runtime import has_cuda_gpu, require
from .units import format_bandwidth, format_flops, format_seconds

if TYPE_CHECKING:
    from .hardware import Chip

__all__ = [
    "CASE_DEVICE",
    "COLAB_GPUS",
    "COMMIT_ENV",
    "DECODE_CONTEXTS",
    "METHOD",
    "NO_GPU_MESSAGE",
    "QUICK_ALSO",
    "REP_MS",
    "SCHEMA",
    "TARGETS",
    "WARMUP_MS",
    "Case",
    "Ceilings",
    "Floor",
    "Measurement",
    "NoGPUError",
    "Prepared",
    "Run",
    "Target",
    "TargetResult",
    "ThisGPU",
    "cases",
    "chip_floor",
    "collect",
    "document",
    "error_threshold",
    "evaluate_targets",
    "format_case_list",
    "format_records",
    "format_table",
    "format_targets",
    "main",
    "measure_case",
    "measure_ceilings",
    "measure_seconds",
    "provenance",
    "relative_error",
    "resolve_gpu",
    "roofline_floor",
    "run",
    "this_gpu",
    "write_json",
]


#: What each of Colab's GPU runtimes gives the course, by the name Colab's menu uses. Triton's
#: README lists NVIDIA GPUs of compute capability 8.0+ as its supported hardware (TRITON-README);
#: on the T4 (7.5) PR #5066 turned ``tl.dot`` into FMA code, release by release as the released
#: wheels compile it for sm_75 (TRITON-5066; reference/frontier-2026.md §9).
COLAB_GPUS: Mapping[str, str] = MappingProxyType(
    {
        "T4": "sm_75: Triton runs but does not support it (its README lists compute capability "
        "8.0+), and from 3.3 its tl.dot gets no tensor cores — 3.2 still emits mma on sm_75, 3.3 "
        "falls back to FMA (fp16 dots crash in lowering), 3.4 and later compile them to FMA; "
        "torch.matmul still uses the T4's tensor cores, and there is no bf16",
        "L4": "sm_89: supported by Triton; tl.dot runs on the tensor cores",
        "A100": "sm_80: supported by Triton; tl.dot runs on the tensor cores",
        "H100": "sm_90: supported by Triton; tl.dot runs on the tensor cores",
    }
)

NO_GPU_MESSAGE = (
    "No CUDA GPU is present, so nothing can be measured here: gpuperf never simulates or "
    "invents a timing. To measure, switch to a GPU runtime (Colab: Runtime → Change runtime "
    "type). What each Colab GPU gives: "
    + "; ".join(f"{name} ({text})" for name, text in COLAB_GPUS.items())
    + ". Without a GPU the roofline floors come from gpuperf.roofline."
)
#: Schema name of the JSON document ``--json`` writes (read by gpuperf.measurements).
SCHEMA = "gpuperf.bench/1"
METHOD = (
    "median of triton.testing.do_bench (warm-up {warmup} ms, {rep} ms of repeats) on fresh "
    "random inputs; torch equivalents timed in the same run (cuBLAS; SDPA with the "
    "FLASH_ATTENTION backend forced for torch_us, and SDPA's default backend in the 'vs SDPA "
    "default' rows); rel_err = |out - ref| / |ref| against an fp32/fp64 torch reference, "
    "checked before timing; frac_copy_bw = achieved bandwidth / the copy bandwidth measured in "
    "the same run"
)


class NoGPUError(RuntimeError):
    """Raised instead of returning a number when there is no GPU to measure on."""


# --------------------------------------------------------------------------------------------
# Targets: issue 14's table, as data.


@dataclass(frozen=True)
class Target:
    """``metric`` ≥ ``threshold`` in every record matching each of ``cases`` (regexes).

    ``metric`` is a record key: ``frac_copy_bw`` (achieved / measured copy bandwidth) or
    ``speed_vs_torch`` (torch time / kernel time: 0.9 means 90 % of torch's speed).
    """

    name: str
    metric: str
    threshold: float
    cases: tuple[str, ...]
    today: str = ""  # the H100 measurement the target was set against

    def __post_init__(self) -> None:
        name_string("name", self.name)
        choice("metric", self.metric, METRICS)
        positive_float("threshold", self.threshold)
        object.__setattr__(self, "cases", sequence("cases", self.cases, _pattern))
        if not isinstance(self.today, str):
            raise TypeError(f"today={show(self.today)} must be a string")


#: The record keys a target can hold to a threshold.
METRICS = ("frac_copy_bw", "speed_vs_torch")
#: What evaluating a target can conclude.
STATUSES = ("met", "not met", "not measured")


def _pattern(name: str, value: object) -> str:
    """A regular expression naming benchmark cases."""
    name_string(name, value)
    try:
        re.compile(value)
    except re.error as error:
        raise ValueError(f"{name}={value!r} is not a regular expression: {error}") from None
    return value


def _strings(name: str, value: object) -> tuple[str, ...]:
    return sequence(name, value, name_string, minimum=0)


_MEM = r" fp32 2\^26$"
_SHAPES_ONLINE = ("4096, 4096", "8192, 8192", "16384, 1024", "1024, 32768")
_FA = "FA{v} fp16 B4 H16 N4096 d{d} causal={c}"
#: Decode attention as section 4.3 times it: batch 1, 32 query heads, 8 KV heads, d 128.
_DECODE = "decode {v} fp16 B1 H32 KVH8 T{t} d128"

TARGETS: tuple[Target, ...] = (
    Target(
        "memory-bound kernels ≥ 95 % of the measured copy bandwidth",
        "frac_copy_bw",
        0.95,
        (
            "^vector_add" + _MEM,
            "^relu" + _MEM,
            "^gelu" + _MEM,
            "^copy_coalesced" + _MEM,
            r"^sin2cos2 fused",
            r"^transpose_tiled fp32",
        ),
        "95–99 %",
    ),
    Target(
        "fused softmax fp32 keeps ≥ 85 % of copy bandwidth",
        "frac_copy_bw",
        0.85,
        tuple(rf"^softmax fp32 \({s}\)$" for s in _SHAPES_ONLINE[:3]),
        "89–98 %",
    ),
    Target(
        "softmax_online fp32 ≥ 85 % of copy bandwidth at every shape",
        "frac_copy_bw",
        0.85,
        tuple(rf"^softmax_online fp32 \({s}\)$" for s in _SHAPES_ONLINE),
        "59–86 %",
    ),
    Target(
        "matmul fp16/bf16 default ≥ 90 % of torch at 4096³ and 8192³",
        "speed_vs_torch",
        0.90,
        tuple(
            rf"^matmul torch\.{t} {n}³ default$"
            for t in ("float16", "bfloat16")
            for n in (4096, 8192)
        ),
        "35–41 %",
    ),
    Target(
        "matmul fp16/bf16 autotune ≥ 95 % of torch at 4096³ and 8192³",
        "speed_vs_torch",
        0.95,
        tuple(
            rf"^matmul torch\.{t} {n}³ autotune$"
            for t in ("float16", "bfloat16")
            for n in (4096, 8192)
        ),
        "84–93 %",
    ),
    Target(
        "matmul bf16 1024³ autotune ≥ 70 % of torch",
        "speed_vs_torch",
        0.70,
        (r"^matmul torch\.bfloat16 1024³ autotune$",),
        "9 %",
    ),
    Target(
        "FlashAttention fwd fp16 ≥ 1.0× SDPA's FLASH backend",
        "speed_vs_torch",
        1.0,
        tuple(
            "^" + re.escape(_FA.format(v=" fwd", d=d, c=c)) + "$"
            for d in (64, 128)
            for c in (False, True)
        ),
        "0.80–0.98×",
    ),
    Target(
        "Hopper FlashAttention fwd fp16 ≥ 0.85× the default SDPA",
        "speed_vs_torch",
        0.85,
        tuple(
            "^" + re.escape(_FA.format(v="-hopper fwd", d=d, c=c) + " vs SDPA default") + "$"
            for d in (64, 128)
            for c in (False, True)
        ),
        "0.65× (the portable kernel)",
    ),
    Target(
        "FlashAttention fwd+bwd fp16 ≥ 0.9× SDPA's FLASH backend",
        "speed_vs_torch",
        0.90,
        tuple(
            "^" + re.escape(_FA.format(v=" fwd+bwd", d=d, c=c)) + "$"
            for d in (64, 128)
            for c in (False, True)
        ),
        "0.72–0.95×",
    ),
    Target(
        "decode attention split-KV fp16 (batch 1, long context) ≥ 80 % of copy bandwidth",
        "frac_copy_bw",
        0.80,
        ("^" + re.escape(_DECODE.format(v="split-KV", t=32768)) + "$",),
        "not measured yet",
    ),
)

#: Where the cases allocate, and the KV-cache lengths of the decode cases: module constants so
#: that a CPU test can run a case's structure (setup, correctness check) at a tiny size.
CASE_DEVICE = "cuda"
DECODE_CONTEXTS: tuple[int, ...] = (32768, 131072)
#: Cases ``--quick`` runs besides those the targets name: the side-by-side a chapter shows.
QUICK_ALSO: tuple[str, ...] = ("^" + re.escape(_DECODE.format(v="plain", t=32768)) + "$",)


@dataclass(frozen=True)
class TargetResult:
    """One target evaluated on a record set: ``status`` is "met", "not met" or "not measured"."""

    target: Target
    status: str
    worst_case: str | None = None
    worst_value: float | None = None
    missing: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        instance("target", self.target, Target)
        choice("status", self.status, STATUSES)
        optional("worst_case", self.worst_case, name_string)
        optional("worst_value", self.worst_value, positive_float, allow_zero=True, bounded=False)
        object.__setattr__(self, "missing", _strings("missing", self.missing))
        object.__setattr__(self, "wrong", _strings("wrong", self.wrong))

    def format(self) -> str:
        t = self.target
        unit = "of copy bw" if t.metric == "frac_copy_bw" else "of torch's speed"
        head = f"[{self.status.upper()}] {t.name}"
        parts = []
        if self.worst_case is not None:
            parts.append(f"worst {self.worst_value:.0%} {unit} ({self.worst_case})")
        if self.wrong:
            parts.append(f"wrong result, not timed: {', '.join(self.wrong)}")
        if self.missing:
            parts.append(f"no record for {len(self.missing)} case(s): {', '.join(self.missing)}")
        return head + (": " + "; ".join(parts) if parts else "")


def evaluate_targets(
    records: Iterable[dict[str, Any]], targets: Iterable[Target] = TARGETS
) -> list[TargetResult]:
    """Each target as met / not met / not measured on ``records`` (dicts with ``case`` and the
    metric; a record timed as 0 µs means its correctness check failed, which fails the target).

    "not measured" means some case the target names has no record; the worst value among the
    cases that do is still reported. Works on a document's ``records`` or a bare list.
    """
    records = sequence("records", records, _record, minimum=0)
    targets = sequence("targets", targets, lambda name, t: instance(name, t, Target))
    out = []
    for t in targets:
        values: list[tuple[float, str]] = []
        missing, wrong = [], []
        for pattern in t.cases:
            found = [r for r in records if re.search(pattern, str(r.get("case", "")))]
            if not found:
                missing.append(pattern.strip("^$").replace("\\", ""))
            for r in found:
                value = r.get(t.metric)
                if not r.get("us") or value is None:
                    wrong.append(r["case"])
                else:
                    values.append((float(value), r["case"]))
        worst = min(values) if values else None
        if missing:
            status = "not measured"
        elif wrong or worst is None or worst[0] < t.threshold:
            status = "not met"
        else:
            status = "met"
        out.append(
            TargetResult(
                t,
                status,
                worst[1] if worst else None,
                worst[0] if worst else None,
                tuple(missing),
                tuple(wrong),
            )
        )
    return out


def format_targets(results: Iterable[TargetResult]) -> str:
    """One line per evaluated target: its status, the worst case, what is missing."""
    check = lambda name, r: instance(name, r, TargetResult)
    return "\n".join(r.format() for r in sequence("results", results, check, minimum=0))


def _record(name: str, value: object) -> Any:
    """A benchmark record: a mapping with a ``case`` name and numbers ≥ 0 (``us``, ``GBps``,
    ``rel_err`` …, as ``--json`` writes them; ``rel_err`` may be inf or NaN for a wrong
    result)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("case"), str):
        raise TypeError(f"{name}={show(value)} must be a record: a dict with a 'case' name")
    for key, number in value.items():
        if key == "case":
            continue
        if (
            not isinstance(key, str)
            or isinstance(number, bool)
            or not (isinstance(number, int | float) and not number < 0)
        ):
            raise ValueError(
                f"{name}[{key!r}]={show(number)} must be a number ≥ 0 (a record's measurement)"
            )
    return value


# --------------------------------------------------------------------------------------------
# Floors and measurements.


@dataclass(frozen=True)
class Floor:
    """The roofline lower bound on a kernel's time: max(FLOPs / peak, bytes / bandwidth)."""

    time_s: float
    bound: str  # "HBM" or "compute"
    t_math_s: float
    t_memory_s: float
    source: str  # the roof: "A100-80GB datasheet (gpuperf.hardware)", "ceilings measured …"

    def __post_init__(self) -> None:
        for name in ("time_s", "t_math_s", "t_memory_s"):
            positive_float(name, getattr(self, name), allow_zero=True, bounded=False)
        choice("bound", self.bound, ("HBM", "compute"))
        if not isinstance(self.source, str):
            raise TypeError(f"source={show(self.source)} must be a string")
        if not math.isclose(self.time_s, max(self.t_math_s, self.t_memory_s)):
            raise ValueError(
                f"time_s={self.time_s!r} must be max(t_math_s, t_memory_s) = "
                f"{max(self.t_math_s, self.t_memory_s)!r}: the floor is the larger of the two"
            )


def roofline_floor(
    op: OpCost,
    peak_flops_per_s: float,
    bandwidth_bytes_per_s: float,
    source: str = "",
) -> Floor:
    """Floor for ``op`` given a math peak and a memory bandwidth (both finite and > 0)."""
    instance("op", op, OpCost)
    peak_flops_per_s = positive_float("peak_flops_per_s", peak_flops_per_s)
    bandwidth_bytes_per_s = positive_float("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    if not isinstance(source, str):
        raise TypeError(f"source={show(source)} must be a string")
    t_math = op.flops / peak_flops_per_s
    t_mem = op.bytes / bandwidth_bytes_per_s
    bound = "compute" if t_math > t_mem else "HBM"
    return Floor(max(t_math, t_mem), bound, t_math, t_mem, source)


def chip_floor(
    op: OpCost, chip_name: str | Chip, precision: str, tensor_cores: bool = True
) -> Floor:
    """Floor from the chip table: ``precision``'s dense peak and the HBM bandwidth.

    ``tensor_cores=False`` takes the non-tensor (CUDA-core) peak instead — the roof of work that
    is not a matmul (softmax, an elementwise op); a chip with no sourced non-tensor rate at
    ``precision`` raises ``ValueError`` rather than borrowing the tensor-core one.
    """
    from .hardware import chip

    instance("op", op, OpCost)
    c = chip(chip_name)
    peak = c.peak_flops(precision, flag("tensor_cores", tensor_cores))
    unit = "" if tensor_cores else f", non-tensor {precision} peak"
    return roofline_floor(
        op, peak, c.hbm_bandwidth, f"{c.name} datasheet{unit} (gpuperf.hardware)"
    )


@dataclass(frozen=True)
class Measurement:
    """One kernel measured against its floor."""

    name: str
    op: OpCost
    floor: Floor
    measured_s: float

    def __post_init__(self) -> None:
        name_string("name", self.name)
        instance("op", self.op, OpCost)
        instance("floor", self.floor, Floor)
        positive_float("measured_s", self.measured_s)

    @property
    def fraction_of_roofline(self) -> float:
        return self.floor.time_s / self.measured_s

    @property
    def achieved_bandwidth(self) -> float:
        return self.op.bytes / self.measured_s

    @property
    def achieved_flops_per_s(self) -> float:
        return self.op.flops / self.measured_s

    def format(self) -> str:
        rate = (
            format_flops(self.achieved_flops_per_s)
            if self.floor.bound == "compute"
            else format_bandwidth(self.achieved_bandwidth)
        )
        return (
            f"{self.name}: floor {format_seconds(self.floor.time_s)} ({self.floor.bound}), "
            f"measured {format_seconds(self.measured_s)}, "
            f"{100 * self.fraction_of_roofline:.0f} % of roofline ({rate}); "
            f"roof: {self.floor.source or 'not named by the caller'}"
        )


# --------------------------------------------------------------------------------------------
# Which roof a "measure it" cell may use on the GPU it runs on.


def _triton_on(compute_capability: tuple[int, int] | None, triton_version: str | None) -> str:
    """What Triton gives on this compute capability (TRITON-README, TRITON-5066)."""
    if compute_capability is None:
        return ""
    major, minor = compute_capability
    if (major, minor) >= (8, 0):
        return (
            f"sm_{major}{minor} is in Triton's supported hardware (compute capability 8.0+): "
            "tl.dot runs on the tensor cores."
        )
    if (major, minor) != (7, 5):
        return (
            f"sm_{major}{minor} is below Triton's supported hardware (compute capability 8.0+); "
            "from Triton 3.3 its tl.dot falls back to FMA below 8.0 (PR #5066; each release's "
            "behaviour was checked on sm_75 only)."
        )
    text = (
        "sm_75 is below Triton's supported hardware (compute capability 8.0+): Triton runs, but "
        "from 3.3 its tl.dot gets no tensor cores — 3.2 still emits mma there, 3.3 falls back to "
        "FMA (fp16 dots crash in lowering), 3.4 and later compile them to FMA. torch.matmul "
        "still uses the tensor cores."
    )
    found = re.match(r"(\d+)\.(\d+)", triton_version or "")
    if found:
        version = (int(found[1]), int(found[2]))
        what = (
            "emits mma (tensor cores) for fp16 dots"
            if version <= (3, 2)
            else "falls back to FMA and crashes on fp16 dots"
            if version == (3, 3)
            else "compiles dots to FMA (no tensor cores)"
        )
        text += f" The installed Triton {found[0]} {what} here."
    return text


@dataclass(frozen=True)
class ThisGPU:
    """The GPU a measurement runs on and the roof it may be compared with.

    ``chip`` is the chip table's row for ``device_name`` (:func:`gpuperf.hardware.
    chip_from_device_name`: that device's own row, never a sibling's) or ``None``: then no
    datasheet roof is used and :meth:`floor` returns ``None``. ``message`` says which, in words,
    with what Triton gives on this compute capability.
    """

    device_name: str | None
    compute_capability: tuple[int, int] | None
    chip: Chip | None
    message: str

    def __post_init__(self) -> None:
        from .hardware import Chip

        optional("device_name", self.device_name, name_string)
        if self.compute_capability is not None:
            pair = int_pair("compute_capability", self.compute_capability, minimum=0)
            object.__setattr__(self, "compute_capability", pair)
        optional("chip", self.chip, instance, Chip)
        name_string("message", self.message)

    @property
    def has_roof(self) -> bool:
        return self.chip is not None

    def floor(self, op: OpCost, precision: str, tensor_cores: bool = True) -> Floor | None:
        """The datasheet floor of ``op`` on this GPU's own row, or ``None`` when it has none."""
        instance("op", op, OpCost)
        flag("tensor_cores", tensor_cores)
        if self.chip is None:
            return None
        return chip_floor(op, self.chip, precision, tensor_cores)

    def report(
        self, name: str, op: OpCost, precision: str, measured_s: float, tensor_cores: bool = True
    ) -> str:
        """One line for a "measure it" cell: the measurement against this GPU's own floor.

        On a GPU the table lacks, the line gives the time and the achieved rate and says no
        datasheet roof is used. Work placed against the non-tensor roof (``tensor_cores=False``)
        on a chip with no sourced non-tensor rate at ``precision`` is compared with its memory
        time alone — still a lower bound, and the line says the math is left out.
        """
        name_string("name", name)
        instance("op", op, OpCost)
        measured_s = positive_float("measured_s", measured_s)
        if self.chip is None:
            achieved = format_bandwidth(op.bytes / measured_s)
            return (
                f"{name}: measured {format_seconds(measured_s)} ({achieved}); no datasheet roof "
                f"for {self.device_name or 'this machine'} in gpuperf's chip table"
            )
        try:
            floor = chip_floor(op, self.chip, precision, tensor_cores)
        except ValueError:
            if tensor_cores or precision not in self.chip.precisions:
                raise
            t_memory = op.bytes / self.chip.hbm_bandwidth
            floor = Floor(
                t_memory,
                "HBM",
                0.0,
                t_memory,
                f"{self.chip.name} datasheet HBM bandwidth only (no sourced non-tensor "
                f"{precision} rate: the math is left out of this lower bound)",
            )
        return Measurement(name, op, floor, measured_s).format()

    def __str__(self) -> str:
        return self.message


def resolve_gpu(
    device_name: str | None,
    compute_capability: tuple[int, int] | None = None,
    triton_version: str | None = None,
) -> ThisGPU:
    """:class:`ThisGPU` for a device name as ``torch.cuda.get_device_name()`` gives it
    (``None``: no GPU). Pure: it reads no device, so it can be checked on any machine."""
    from .hardware import chip_from_device_name

    optional("triton_version", triton_version, name_string)
    if compute_capability is not None:
        compute_capability = int_pair("compute_capability", compute_capability, minimum=0)
    if device_name is None:
        return ThisGPU(None, None, None, NO_GPU_MESSAGE)
    if not isinstance(device_name, str):
        raise TypeError(
            f"device_name={show(device_name)} must be a string such as "
            "torch.cuda.get_device_name() returns, or None when there is no GPU"
        )
    found = chip_from_device_name(device_name)
    if found is not None and compute_capability is None:
        compute_capability = found.compute_capability
    if found is None:
        text = (
            f"GPU: {device_name} is not in gpuperf's chip table, so no datasheet roof is used "
            "and no other chip's roof stands in for it: timings print without a floor (measure "
            "this GPU's own ceilings with gpuperf.bench.measure_ceilings() to compare with)."
        )
    else:
        precision = next((p for p in ("bf16", "fp16") if p in found.precisions), None)
        precision = precision or found.precisions[0]
        text = (
            f"GPU: {device_name} → chip table row {found.name}: floors use its datasheet roof "
            f"({precision} {format_flops(found.peak_flops(precision))} dense, memory "
            f"{format_bandwidth(found.hbm_bandwidth)})."
        )
    if device_name.lower().startswith("amd"):
        advice = "Triton supports AMD GPUs through ROCm (its README)."
    else:
        advice = _triton_on(compute_capability, triton_version)
    return ThisGPU(device_name, compute_capability, found, f"{text} {advice}".strip())


def this_gpu() -> ThisGPU:
    """:func:`resolve_gpu` for the GPU this process sees (torch), or the no-GPU message.

    A "measure it" cell calls it once: ``gpu = this_gpu(); print(gpu)``, then
    ``gpu.floor(op, "fp16")`` for a floor (``None`` on a GPU the table lacks).
    """
    if not has_cuda_gpu():
        return resolve_gpu(None)
    import torch

    triton_version = None
    with contextlib.suppress(Exception):
        from importlib.metadata import version

        triton_version = version("triton")
    return resolve_gpu(
        torch.cuda.get_device_name(),
        tuple(torch.cuda.get_device_capability()),
        triton_version,
    )


def format_table(measurements: list[Measurement]) -> str:
    """One line per kernel, floor first."""
    check = lambda name, m: instance(name, m, Measurement)
    return "\n".join(m.format() for m in sequence("measurements", measurements, check, minimum=0))


def _require_gpu() -> None:
    if not has_cuda_gpu():
        raise NoGPUError(NO_GPU_MESSAGE)


WARMUP_MS = 25
REP_MS = 100
#: Longest warm-up or repetition time accepted (a minute: longer is a typo, not a benchmark).
MAX_BENCH_MS = 60_000


def measure_seconds(
    fn: Callable[[], object], *, warmup_ms: int = WARMUP_MS, rep_ms: int = REP_MS
) -> float:
    """Median time of ``fn()`` in seconds with ``triton.testing.do_bench`` (GPU only)."""
    function("fn", fn)
    warmup_ms = positive_int("warmup_ms", warmup_ms, maximum=MAX_BENCH_MS)
    rep_ms = positive_int("rep_ms", rep_ms, maximum=MAX_BENCH_MS)
    _require_gpu()
    testing = require("triton.testing", "pip install triton")
    ms = testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median")
    return float(ms) * 1e-3


@dataclass(frozen=True)
class Ceilings:
    """Roofs measured on this GPU: device copy bandwidth and torch.matmul fp16 FLOP/s."""

    copy_bandwidth: float
    matmul_flops_per_s: float

    def __post_init__(self) -> None:
        positive_float("copy_bandwidth", self.copy_bandwidth)
        positive_float("matmul_flops_per_s", self.matmul_flops_per_s)


def measure_ceilings(copy_bytes: int = 1 << 30, matmul_n: int = 8192) -> Ceilings:
    """A large device-to-device copy and a large fp16 ``torch.matmul``, timed once (GPU only)."""
    copy_bytes = positive_int("copy_bytes", copy_bytes, minimum=2, maximum=1 << 40)
    matmul_n = positive_int("matmul_n", matmul_n, maximum=1 << 16)
    _require_gpu()
    import torch

    src = torch.empty(copy_bytes // 2, dtype=torch.float16, device="cuda")
    dst = torch.empty_like(src)
    t_copy = measure_seconds(lambda: dst.copy_(src))
    a = torch.randn(matmul_n, matmul_n, dtype=torch.float16, device="cuda")
    b = torch.randn_like(a)
    t_mm = measure_seconds(lambda: a @ b)
    return Ceilings(2 * src.numel() * 2 / t_copy, 2 * matmul_n**3 / t_mm)


# --------------------------------------------------------------------------------------------
# Correctness on the inputs that are timed.


def relative_error(out: Any, ref: Any) -> float:
    """‖out − ref‖ / ‖ref‖ in float64 over one tensor or a tuple of them (NaN → inf)."""
    import torch

    outs = out if isinstance(out, tuple | list) else (out,)
    refs = ref if isinstance(ref, tuple | list) else (ref,)
    for name, tensors in (("out", outs), ("ref", refs)):
        for t in tensors:
            if not isinstance(t, torch.Tensor) or t.is_complex() or t.device.type == "meta":
                raise TypeError(
                    f"{name}={show(t)} must be a real torch.Tensor (or a tuple of them)"
                )
    if len(outs) != len(refs):
        raise ValueError(
            f"out={show(out)} holds {len(outs)} tensor(s) but ref={show(ref)} holds {len(refs)}"
        )
    num = den = 0.0
    for o, r in zip(outs, refs, strict=True):
        if o.shape != r.shape:
            raise ValueError(f"output shape {tuple(o.shape)} but reference {tuple(r.shape)}")
        d = o.double() - r.double()
        num += float(torch.linalg.vector_norm(d)) ** 2
        den += float(torch.linalg.vector_norm(r.double())) ** 2
    if not math.isfinite(num):
        return math.inf
    return math.sqrt(num) / math.sqrt(den) if den > 0 else math.sqrt(num)


def error_threshold(precision: str) -> float:
    """Largest relative error a case may show: the precision's ``rtol`` (gpuperf.tolerances)."""
    from .tolerances import tolerance

    return tolerance(precision).rtol


# --------------------------------------------------------------------------------------------
# The cases. Building the list allocates nothing; ``setup()`` allocates on the GPU.


@dataclass(frozen=True)
class Prepared:
    """A case ready to run: the kernel call, its output and reference for the correctness
    check, and the torch counterparts (the first is ``torch_us``; every further one gets its own
    record named ``<case> vs <label>``)."""

    kernel: Callable[[], object]
    output: Callable[[], Any] | None = None
    reference: Callable[[], Any] | None = None
    torch: dict[str, Callable[[], object]] = field(default_factory=dict)
    grad: bool = False  # the calls run a backward pass: keep grad mode on

    def __post_init__(self) -> None:
        function("kernel", self.kernel)
        optional("output", self.output, function)
        optional("reference", self.reference, function)
        mapping("torch", self.torch, function)
        for label in self.torch:
            name_string("torch label", label)
        flag("grad", self.grad)


@dataclass(frozen=True)
class Case:
    """One benchmark case: a name (the record's ``case``), its cost model, its precision."""

    name: str
    op: OpCost
    precision: str
    setup: Callable[[], Prepared]
    min_capability: tuple[int, int] = (7, 0)  # bf16 and TF32 need sm_80; TMA needs sm_90

    def __post_init__(self) -> None:
        name_string("name", self.name)
        instance("op", self.op, OpCost)
        error_threshold(self.precision)  # a precision with a tolerance, or a clear error
        function("setup", self.setup)
        object.__setattr__(
            self, "min_capability", int_pair("min_capability", self.min_capability, 0)
        )

    @property
    def memory_bound(self) -> bool:
        """Elementwise, copy, softmax: a few FLOPs per byte at most (matmul has thousands)."""
        return self.op.flops < 10 * self.op.bytes


def _sdpa(backend: str | None):
    """SDPA with ``backend`` forced (``"FLASH_ATTENTION"``), or its default choice (None)."""
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    def call(q, k, v, causal):
        if backend is None:
            return sdpa(q, k, v, is_causal=causal)
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(getattr(SDPBackend, backend)):
            return sdpa(q, k, v, is_causal=causal)

    return call


def _quick(name: str) -> bool:
    """Whether ``--quick`` runs the case: a target names it (FA cases also as their "vs SDPA
    default" row) or :data:`QUICK_ALSO` does."""
    patterns = [p for t in TARGETS for p in t.cases] + list(QUICK_ALSO)
    names = (name, f"{name} vs SDPA default")
    return any(re.search(p, n) for p in patterns for n in names)


def _sdpa_decode(q, k_cache, v_cache):
    """SDPA for one query per head with grouped KV heads: (B, H, D) against (B, KVH, T, D)."""
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    return sdpa(q.unsqueeze(2), k_cache, v_cache, enable_gqa=True).squeeze(2)


def cases(quick: bool = False) -> list[Case]:
    """Every benchmark case, in the order they run (``quick``: those the targets need, see
    :func:`_quick`). Building the list needs no GPU and allocates nothing."""
    quick = flag("quick", quick)
    out = _all_cases()
    return [c for c in out if _quick(c.name)] if quick else out


def _all_cases() -> list[Case]:
    import torch

    from . import cost, kernels
    from .kernels.decode_attention import decode_attention_cost, decode_attention_ref
    from .kernels.fusion import sin2cos2_cost, sin2cos2_unfused

    n = 1 << 26
    dev = CASE_DEVICE
    out: list[Case] = []

    def unary(fn, ref, dtype=torch.float32):
        def setup():
            x = torch.randn(n, device=dev, dtype=dtype)
            return Prepared(lambda: fn(x), lambda: fn(x), lambda: ref(x.double()), {})

        return setup

    def with_torch(setup_fn, torch_fn_of):
        def setup():
            p = setup_fn()
            return Prepared(p.kernel, p.output, p.reference, torch_fn_of(p))

        return setup

    # Memory-bound kernels: bytes moved over the measured copy bandwidth.
    def vec_add():
        x, y = (torch.randn(n, device=dev) for _ in range(2))
        f = lambda: kernels.vector_add(x, y)
        return Prepared(f, f, lambda: x.double() + y.double(), {"torch": lambda: x + y})

    out.append(
        Case("vector_add fp32 2^26", cost.elementwise(n, "fp32", n_inputs=2), "fp32", vec_add)
    )

    def copy():
        x = torch.randn(n, device=dev)
        f = lambda: kernels.copy_coalesced(x)
        return Prepared(f, f, lambda: x.double(), {"torch": lambda: x.clone()})

    out.append(Case("copy_coalesced fp32 2^26", OpCost(0, 4 * n, 4 * n), "fp32", copy))
    for name, fn, ref, flops in (
        ("relu", kernels.relu, torch.relu, 1),
        ("gelu", kernels.gelu, torch.nn.functional.gelu, 8),
    ):

        def act(fn=fn, ref=ref):
            x = torch.randn(n, device=dev)
            f = lambda: fn(x)
            return Prepared(f, f, lambda: ref(x.double()), {"torch": lambda: ref(x)})

        op = cost.elementwise(n, "fp32", flops_per_element=flops)
        out.append(Case(f"{name} fp32 2^26", op, "fp32", act))

    def fused():
        x = torch.randn(n, device=dev)
        f = lambda: kernels.sin2cos2_fused(x)
        ref = lambda: torch.sin(x.double()) ** 2 + torch.cos(x.double()) ** 2
        return Prepared(f, f, ref, {"unfused torch": lambda: sin2cos2_unfused(x)})

    out.append(Case("sin2cos2 fused vs unfused(torch)", sin2cos2_cost(n), "fp32", fused))

    def strided():
        x = torch.randn(4 * n, device=dev)
        f = lambda: kernels.copy_strided(x, 4)
        return Prepared(f, f, lambda: x[::4].double(), {})

    useful = OpCost(0, 4 * n, 4 * n, "copy_strided useful bytes")
    out.append(Case("copy_strided stride 4 (useful bytes)", useful, "fp32", strided))

    for rows, cols in ((4096, 4096), (8192, 8192), (16384, 1024), (1024, 32768)):
        for variant, fn in (
            ("softmax", kernels.softmax),
            ("softmax_online", kernels.softmax_online),
        ):

            def sm(rows=rows, cols=cols, fn=fn):
                x = torch.randn(rows, cols, device=dev)
                f = lambda: fn(x)
                ref = lambda: torch.softmax(x.double(), dim=-1)
                return Prepared(f, f, ref, {"torch": lambda: torch.softmax(x, dim=-1)})

            out.append(
                Case(
                    f"{variant} fp32 ({rows}, {cols})",
                    cost.softmax(rows, cols, "fp32"),
                    "fp32",
                    sm,
                )
            )

    side = 8192
    for variant, fn, torch_fn in (
        ("transpose_naive", kernels.transpose_naive, None),
        ("transpose_tiled", kernels.transpose_tiled, lambda x: x.t().contiguous()),
    ):

        def tr(fn=fn, torch_fn=torch_fn):
            x = torch.randn(side, side, device=dev)
            f = lambda: fn(x)
            ref = lambda: x.t().double()
            return Prepared(f, f, ref, {"torch": lambda: torch_fn(x)} if torch_fn else {})

        op = OpCost(0, 4 * side * side, 4 * side * side, "transpose")
        out.append(Case(f"{variant} fp32 {side}²", op, "fp32", tr))

    # Decode attention: one query per head against a long KV cache, bytes over the measured copy
    # bandwidth; SDPA (GQA, one query) is its torch counterpart.
    for context in DECODE_CONTEXTS:
        for variant, fn in (
            ("plain", kernels.decode_attention_plain),
            ("split-KV", kernels.decode_attention_split),
        ):

            def dec(context=context, fn=fn):
                q = torch.randn(1, 32, 128, device=dev, dtype=torch.float16)
                k, v = (
                    torch.randn(1, 8, context, 128, device=dev, dtype=torch.float16)
                    for _ in range(2)
                )
                f = lambda: fn(q, k, v)
                ref = lambda: decode_attention_ref(q.float(), k.float(), v.float())
                return Prepared(f, f, ref, {"SDPA": lambda: _sdpa_decode(q, k, v)})

            op = decode_attention_cost(1, 32, 8, context, 128, "fp16")
            name = _DECODE.format(v=variant, t=context)
            out.append(Case(name, op, "fp16", dec))

    # Matmul: FLOP/s over cuBLAS in the same run.
    for dtype in (torch.float16, torch.bfloat16):
        for size in (1024, 4096, 8192):
            for mode in ("default", "autotune"):

                def mm(size=size, dtype=dtype, mode=mode):
                    a = torch.randn(size, size, device=dev, dtype=dtype)
                    b = torch.randn(size, size, device=dev, dtype=dtype)
                    f = lambda: kernels.matmul(a, b, autotune=mode == "autotune")
                    ref = lambda: a.double() @ b.double()
                    return Prepared(f, f, ref, {"cuBLAS": lambda: a @ b})

                prec = "fp16" if dtype == torch.float16 else "bf16"
                op = cost.matmul(size, size, size, prec)
                cc = (7, 0) if prec == "fp16" else (8, 0)
                out.append(Case(f"matmul {dtype} {size}³ {mode}", op, prec, mm, cc))
    for tf32 in (False, True):

        def mm32(tf32=tf32):
            a, b = (torch.randn(4096, 4096, device=dev) for _ in range(2))
            f = lambda: kernels.matmul(a, b, tf32=tf32)

            def cublas():
                old = torch.backends.cuda.matmul.allow_tf32
                torch.backends.cuda.matmul.allow_tf32 = tf32
                try:
                    return a @ b
                finally:
                    torch.backends.cuda.matmul.allow_tf32 = old

            return Prepared(f, f, lambda: a.double() @ b.double(), {"cuBLAS": cublas})

        prec = "tf32" if tf32 else "fp32"
        op = cost.matmul(4096, 4096, 4096, "fp32")
        cc = (8, 0) if tf32 else (7, 0)
        out.append(Case(f"matmul fp32 4096³ tf32={tf32}", op, prec, mm32, cc))

    # FlashAttention: the FLASH backend of SDPA (torch_us) and SDPA's default backend.
    flash, default = _sdpa("FLASH_ATTENTION"), _sdpa(None)
    fa_shapes = [(4, 16, 4096, 64), (4, 16, 4096, 128)]
    variants = [(" fwd", kernels.flash_attention, (7, 0))]
    hopper = getattr(kernels, "flash_attention_hopper", None)
    if hopper is not None:
        variants.append(("-hopper fwd", hopper, (9, 0)))
    for b, h, s, d in fa_shapes:
        for causal in (False, True):
            for label, fn, cc in variants:

                def fa(b=b, h=h, s=s, d=d, causal=causal, fn=fn):
                    q, k, v = (
                        torch.randn(b, h, s, d, device=dev, dtype=torch.float16) for _ in range(3)
                    )

                    def run():
                        with torch.no_grad():
                            return fn(q, k, v, causal)

                    ref = lambda: default(q.float(), k.float(), v.float(), causal)
                    return Prepared(
                        run,
                        run,
                        ref,
                        {
                            "SDPA FLASH": lambda: flash(q, k, v, causal),
                            "SDPA default": lambda: default(q, k, v, causal),
                        },
                    )

                op = cost.attention(b, h, s, d, "fp16", causal=causal)
                name = f"FA{label} fp16 B{b} H{h} N{s} d{d} causal={causal}"
                out.append(Case(name, op, "fp16", fa, cc))

            def fab(b=b, h=h, s=s, d=d, causal=causal):
                q, k, v = (
                    torch.randn(b, h, s, d, device=dev, dtype=torch.float16, requires_grad=True)
                    for _ in range(3)
                )
                do = torch.randn_like(q)

                def step(attn):
                    def call():
                        q.grad = k.grad = v.grad = None
                        attn(q, k, v, causal).backward(do)
                        return q.grad

                    return call

                def ref():
                    qf, kf, vf = (t.detach().float().requires_grad_() for t in (q, k, v))
                    default(qf, kf, vf, causal).backward(do.float())
                    return qf.grad

                return Prepared(
                    step(kernels.flash_attention),
                    step(kernels.flash_attention),
                    ref,
                    {"SDPA FLASH": step(flash), "SDPA default": step(default)},
                    grad=True,
                )

            fwd = cost.attention(b, h, s, d, "fp16", causal=causal)
            op = OpCost(3.5 * fwd.flops, 2 * fwd.bytes_read, 2 * fwd.bytes_written, "attn fwd+bwd")
            out.append(
                Case(f"FA fwd+bwd fp16 B{b} H{h} N{s} d{d} causal={causal}", op, "fp16", fab)
            )
    return out


# --------------------------------------------------------------------------------------------
# Running.


@dataclass
class Run:
    """What one ``python -m gpuperf.bench`` run produced."""

    records: list[dict[str, Any]]
    measurements: list[Measurement]
    roofline: dict[str, dict[str, Any]]
    ceilings: Ceilings | None
    chip_name: str | None
    wrong: list[str]

    def __post_init__(self) -> None:
        # the lists grow while a run goes on (collect appends to them): checked, not copied
        sequence("records", instance("records", self.records, list), _record, minimum=0)
        measured = lambda name, m: instance(name, m, Measurement)
        sequence(
            "measurements", instance("measurements", self.measurements, list), measured, minimum=0
        )
        mapping("roofline", instance("roofline", self.roofline, dict), mapping)
        optional("ceilings", self.ceilings, instance, Ceilings)
        optional("chip_name", self.chip_name, name_string)
        sequence("wrong", instance("wrong", self.wrong, list), name_string, minimum=0)


def measure_case(case: Case, floor: Floor, copy_bandwidth: float | None) -> list[dict[str, Any]]:
    """Check ``case`` for correctness, then time it and its torch counterparts (GPU only).

    Returns the records: the case itself (``torch_us`` from the first counterpart), then one
    ``<case> vs <label>`` record per further counterpart. A wrong result is recorded with its
    ``rel_err`` and ``us = 0`` (not timed).
    """
    instance("case", case, Case)
    instance("floor", floor, Floor)
    optional("copy_bandwidth", copy_bandwidth, positive_float)
    _require_gpu()
    import torch

    p = case.setup()
    record: dict[str, Any] = {"case": case.name}
    if p.output is not None and p.reference is not None:
        with contextlib.nullcontext() if p.grad else torch.no_grad():
            got = p.output()
            want = p.reference()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        record["rel_err"] = relative_error(got, want)
        del got, want
        if not record["rel_err"] <= error_threshold(case.precision):
            record["us"] = 0.0
            return [record]
    t = measure_seconds(p.kernel)
    record["us"] = t * 1e6
    rates: dict[str, Any] = {}
    if case.op.flops and not case.memory_bound:
        rates["TFLOPs"] = case.op.flops / t / 1e12
    else:
        rates["GBps"] = case.op.bytes / t / 1e9
        if copy_bandwidth:
            rates["frac_copy_bw"] = case.op.bytes / t / copy_bandwidth
    records = []
    for i, (label, fn) in enumerate(p.torch.items()):
        t_torch = measure_seconds(fn)
        r = dict(record) if i == 0 else {"case": f"{case.name} vs {label}", "us": t * 1e6}
        r["torch_us"] = t_torch * 1e6
        r["speed_vs_torch"] = t_torch / t
        if "TFLOPs" in rates:
            r["torch_TFLOPs"] = case.op.flops / t_torch / 1e12
        r.update(rates)
        if i:
            r["rel_err"] = record.get("rel_err")
        records.append(r)
    if not records:
        records.append({**record, **rates})
    return [{k: v for k, v in r.items() if v is not None} for r in records]


def _progress(items, enabled: bool):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None
    if not enabled:
        yield from items
        return
    if tqdm is not None:
        yield from tqdm(items, desc="measuring", file=sys.stderr)
        return
    total = len(items)
    for i, item in enumerate(items, 1):
        bar = "#" * (20 * i // total)
        print(f"\r[{bar:<20}] {i}/{total} {item.name[:40]:<40}", end="", file=sys.stderr)
        yield item
    print(file=sys.stderr)


def collect(
    chip_name: str | None = None,
    *,
    measured_ceilings: bool = True,
    progress: bool = True,
    only: str | None = None,
    quick: bool = False,
    on_case: Callable[[Run], None] | None = None,
) -> Run:
    """Measure every case (or those whose name matches ``only``) on this GPU.

    ``on_case(run_so_far)`` is called after the ceilings and after each case, so a caller can
    save what was measured before a run is stopped early."""
    chip_name = optional("chip_name", chip_name, name_string)
    measured_ceilings = flag("measured_ceilings", measured_ceilings)
    progress, quick = flag("progress", progress), flag("quick", quick)
    only = optional("only", only, _pattern)
    on_case = optional("on_case", on_case, function)
    _require_gpu()
    import torch

    from .hardware import chip, chip_from_device_name

    the_chip = (
        chip(chip_name) if chip_name else chip_from_device_name(torch.cuda.get_device_name())
    )
    ceilings = measure_ceilings() if measured_ceilings else None
    if ceilings is None and the_chip is None:
        raise ValueError(
            f"GPU {torch.cuda.get_device_name()!r} is not in the chip table; pass chip_name "
            "or use measured_ceilings=True"
        )
    capability = torch.cuda.get_device_capability()
    selected = [c for c in cases(quick) if only is None or re.search(only, c.name)]
    for c in selected:
        if capability < c.min_capability:
            major, minor = c.min_capability
            print(f"skipped on this GPU (needs sm_{major}{minor}): {c.name}", file=sys.stderr)
    selected = [c for c in selected if capability >= c.min_capability]
    records, measurements, roofline, wrong = [], [], {}, []
    name = the_chip.name if the_chip else None
    so_far = Run(records, measurements, roofline, ceilings, name, wrong)
    if on_case is not None:
        on_case(so_far)
    for case in _progress(selected, progress):
        if ceilings is not None:
            peak = ceilings.matmul_flops_per_s
            roof = "ceilings measured on this GPU"
            if case.precision in ("fp32", "tf32") and the_chip is not None:
                # If the table lacks it (T4 has no TF32), keep the measured fp16 roof.
                with contextlib.suppress(KeyError, ValueError):
                    peak = the_chip.peak_flops(case.precision)
                    roof = (
                        f"copy bandwidth measured on this GPU, {the_chip.name} datasheet "
                        f"{case.precision} peak"
                    )
            floor = roofline_floor(case.op, peak, ceilings.copy_bandwidth, roof)
        else:
            floor = chip_floor(case.op, the_chip.name, case.precision)
        try:
            new = measure_case(case, floor, ceilings.copy_bandwidth if ceilings else None)
        except Exception as exc:  # one failing case must not lose the whole run
            print(f"{case.name}: FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
            new = [{"case": case.name, "us": 0.0}]
        records.extend(new)
        main = new[0]
        if not main.get("us"):
            wrong.append(case.name)
        else:
            m = Measurement(case.name, case.op, floor, main["us"] * 1e-6)
            measurements.append(m)
            roofline[case.name] = {
                "floor_us": floor.time_s * 1e6,
                "bound": floor.bound,
                "fraction": m.fraction_of_roofline,
            }
        torch.cuda.empty_cache()
        if on_case is not None:
            on_case(so_far)
    return so_far


def run(
    chip_name: str | None = None, *, measured_ceilings: bool = True, progress: bool = True
) -> list[Measurement]:
    """Measure every course kernel on this GPU (raises :class:`NoGPUError` without one)."""
    optional("chip_name", chip_name, name_string)
    flag("measured_ceilings", measured_ceilings)
    flag("progress", progress)
    return collect(chip_name, measured_ceilings=measured_ceilings, progress=progress).measurements


def format_records(records: Iterable[dict[str, Any]]) -> str:
    """One line per record: time, rate, fraction of copy bandwidth, ratio to torch, error."""
    lines = []
    for r in sequence("records", records, _record, minimum=0):
        if not r.get("us"):
            lines.append(f"{r['case']}: WRONG RESULT (rel_err {r.get('rel_err', math.nan):.1e})")
            continue
        parts = [format_seconds(r["us"] * 1e-6)]
        if "TFLOPs" in r:
            parts.append(format_flops(r["TFLOPs"] * 1e12))
        if "GBps" in r:
            parts.append(format_bandwidth(r["GBps"] * 1e9))
        if "frac_copy_bw" in r:
            parts.append(f"{r['frac_copy_bw']:.0%} of copy bw")
        if "speed_vs_torch" in r:
            parts.append(
                f"{r['speed_vs_torch']:.2f}× torch ({format_seconds(r['torch_us'] * 1e-6)})"
            )
        if "rel_err" in r:
            parts.append(f"rel_err {r['rel_err']:.1e}")
        lines.append(f"{r['case']}: " + ", ".join(parts))
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Provenance and the JSON document.


#: Set by ``.ci/gpu-check --commit`` where the checkout on a GPU machine has no ``.git``.
COMMIT_ENV = "GPUPERF_COMMIT"


def _git_commit() -> str:
    """gpuperf's commit: ``$GPUPERF_COMMIT`` if set, else ``git rev-parse`` (+ "-dirty")."""
    import os

    if os.environ.get(COMMIT_ENV, "").strip():
        return os.environ[COMMIT_ENV].strip()
    root = Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    if not sha:
        return "unknown (not a git checkout)"
    return f"{sha}-dirty" if dirty else sha


def _driver_version() -> str:
    try:
        text = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        text = ""
    return text.splitlines()[0].strip() if text else "unknown (nvidia-smi unavailable)"


def provenance(chip_name: str | None) -> dict[str, str]:
    """Device, driver, CUDA, torch, Triton, numpy, Python, date and gpuperf commit of this run."""
    optional("chip_name", chip_name, name_string)
    _require_gpu()
    import platform
    from importlib.metadata import version

    import numpy
    import torch

    device = torch.cuda.get_device_name()
    return {
        "chip": chip_name or device,
        "device": device,
        "driver": _driver_version(),
        "cuda": str(torch.version.cuda),
        "torch": torch.__version__,
        "triton": version("triton"),
        "numpy": numpy.__version__,
        "python": platform.python_version(),
        "date": _dt.datetime.now(_dt.timezone.utc).date().isoformat(),
        "commit": _git_commit(),
        "method": METHOD.format(warmup=WARMUP_MS, rep=REP_MS),
    }


def document(
    records: list[dict[str, Any]],
    provenance_: dict[str, str],
    *,
    ceilings: Ceilings | None = None,
    roofline: dict[str, dict[str, Any]] | None = None,
    complete: bool = True,
) -> dict[str, Any]:
    """The ``gpuperf.bench/1`` JSON document: provenance, records, and the targets' verdicts.
    ``complete`` is False while a run is under way (or was stopped before its last case)."""
    records = list(sequence("records", records, _record, minimum=0))
    text = lambda name, value: instance(name, value, str)
    provenance_ = mapping("provenance_", provenance_, text)
    for key in provenance_:
        text("provenance_ key", key)
    ceilings = optional("ceilings", ceilings, instance, Ceilings)
    roofline = optional("roofline", roofline, mapping, lambda name, row: mapping(name, row))
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "complete": flag("complete", complete),
        "provenance": provenance_,
        "records": records,
    }
    if ceilings is not None:
        doc["ceilings"] = {
            "copy_GBps": ceilings.copy_bandwidth / 1e9,
            "matmul_fp16_TFLOPs": ceilings.matmul_flops_per_s / 1e12,
        }
    if roofline:
        doc["roofline"] = roofline
    doc["targets"] = [
        {
            "target": r.target.name,
            "status": r.status,
            "metric": r.target.metric,
            "threshold": r.target.threshold,
            "worst_case": r.worst_case,
            "worst_value": r.worst_value,
            "missing": list(r.missing),
            "wrong": list(r.wrong),
        }
        for r in evaluate_targets(records)
    ]
    return doc


def write_json(path: str | Path, doc: dict[str, Any]) -> Path:
    """Write ``doc`` atomically: a reader (or a run killed mid-write) never sees half a file."""
    path = file_path("path", path)
    doc = mapping("doc", doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def format_case_list(selected: Iterable[Case]) -> str:
    """The cases a run would measure, one a line: name, precision, FLOPs, bytes, GPU needed.
    No timing: this is what ``--list`` prints, with or without a GPU."""
    lines = []
    for c in sequence("selected", selected, lambda name, c: instance(name, c, Case), minimum=0):
        major, minor = c.min_capability
        lines.append(
            f"{c.name}  [{c.precision}; {c.op.flops:.3g} FLOP, {c.op.bytes:.3g} B; "
            f"{'memory' if c.memory_bound else 'compute'}-bound; sm_{major}{minor}+]"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m gpuperf.bench``: the floor-first table, the comparison with torch, the
    targets — or, without a GPU, a clear message and exit status 1 (``--list`` works anywhere).
    Interrupted (Ctrl-C, or a time budget running out), it keeps the JSON of the cases done."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m gpuperf.bench", description=__doc__)
    parser.add_argument("--chip", help="chip table row to use (default: detected)")
    parser.add_argument(
        "--table-ceilings",
        action="store_true",
        help="use the chip table's peaks instead of ceilings measured on this GPU",
    )
    parser.add_argument(
        "--json", metavar="PATH", help="write the run as a gpuperf.bench/1 file (after each case)"
    )
    parser.add_argument("--only", metavar="REGEX", help="run only cases whose name matches")
    parser.add_argument(
        "--quick", action="store_true", help="only the cases the targets name (all in one run)"
    )
    parser.add_argument(
        "--list", action="store_true", help="print the cases a run would measure; time nothing"
    )
    parser.add_argument("--no-progress", action="store_true")
    if argv is not None:
        argv = list(sequence("argv", argv, name_string, minimum=0))
    args = parser.parse_args(argv)
    if args.only is not None:
        try:
            re.compile(args.only)
        except re.error as exc:
            parser.error(f"--only {args.only!r} is not a regular expression: {exc}")
    if args.list:
        selected = [c for c in cases(args.quick) if not args.only or re.search(args.only, c.name)]
        print(format_case_list(selected))
        print(f"{len(selected)} cases; nothing was timed (--list)")
        return 0
    if not has_cuda_gpu():
        print(NO_GPU_MESSAGE, file=sys.stderr)
        if args.json:
            print(f"Nothing was written to {args.json}.", file=sys.stderr)
        return 1
    print(this_gpu().message, file=sys.stderr)
    prov: dict[str, str] = {}

    def save(run_so_far: Run, complete: bool = False) -> None:
        if not args.json:
            return
        if not prov:
            prov.update(provenance(run_so_far.chip_name))
        doc = document(
            run_so_far.records,
            prov,
            ceilings=run_so_far.ceilings,
            roofline=run_so_far.roofline,
            complete=complete,
        )
        write_json(args.json, doc)

    try:
        result = collect(
            args.chip,
            measured_ceilings=not args.table_ceilings,
            progress=not args.no_progress,
            only=args.only,
            quick=args.quick,
            on_case=save,
        )
    except KeyboardInterrupt:
        kept = f"; {args.json} keeps the cases measured before it" if args.json else ""
        print(f"\ninterrupted{kept}", file=sys.stderr)
        return 130
    print(format_table(result.measurements))
    print("\nAgainst torch, same run:")
    print(format_records(result.records))
    print("\nTargets (issue 14):")
    print(format_targets(evaluate_targets(result.records)))
    if args.json:
        save(result, complete=True)
        print(f"\nwrote {args.json}")
    return 1 if result.wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
