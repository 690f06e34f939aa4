"""The public API's contract (issues 15 and 25), checked over every public name of every module.

**What is swept.** Every module of the package whose dotted path has no part starting with ``_``
is imported, and every callable it defines whose name has no leading ``_`` — function, class,
cached function — is called, whether or not ``__all__`` lists it (a second test checks that
``__all__`` does list it). The object a good call returns is swept too: every public method of
its class (and of the first item of a returned tuple), once per class. Nothing is sampled: the
sweep is a deterministic table, so a failure reproduces exactly and the run time is bounded.

**How.** Each callable gets one *good* call: the arguments its docstring promises work
(:data:`GOOD_ARGS` by parameter name, :data:`GOOD_CALLS` per callable, a real instance's fields
for a result class). It must return a sane result. Then each parameter in turn is replaced by
the bad values of its *kind* — the kind comes from the annotation (``int``, ``float``, ``bool``,
``str``, a sequence, a mapping, a tensor, a figure size, a matplotlib axes, a callable …) or, for
a few well-known names, from the name. Each kind has two lists:

* **refused**: wrong by type or by value — ``True`` for a number, ``"4"``, ``1j``, ``nan``,
  ``inf``, ``None`` where ``None`` is not allowed, a ragged or empty list, a tensor of the wrong
  dtype, shape or device. The call must raise; answering is a SILENT failure.
* **edge**: values that may be valid for some parameters — ``0``, ``-1``, ``10**400``, ``2**64``,
  an integral float. The call must raise or return a sane result.

A raised error must be ``ValueError``, ``TypeError`` or ``KeyError`` (or an exception class
gpuperf defines, such as ``NoGPUError``), raised by gpuperf's own code — the innermost frame in
the package, not in numpy, matplotlib or torch — with a message naming the argument or showing
its value (else UNCLEAR; another exception type is a CRASH). A sane result has every number
finite and ≥ 0 (signed quantities are listed in :data:`SIGNED`), every property of a result
object computable, every tensor finite. Each call runs under a time limit (:data:`CALL_LIMIT_S`),
so a hang fails (SLOW) instead of stalling CI. Optimisation variants of one kernel
(:data:`VARIANTS`) must also refuse and accept the same bad tensors.

Callables that are slow by nature (compiling, profiling, building the book) get only the
refused values, which must fail before any work starts (:data:`REFUSED_ONLY`). Callables owned
by another engineer and known to fail are listed in :data:`KNOWN_FAILURES` with the reason; that
list is strict — an entry that no longer fails is reported, so it is removed when fixed.

**It can fail**: :func:`test_the_sweep_catches_planted_bugs` runs the same machinery over a module
of planted bugs (a crash, a silent answer, an error from inside numpy, a hang, a NaN result, a
mutable default taken for a good value) and checks that each is reported.

The calculators' answers are further checked against independent computations with hypothesis
at the end of this file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import math
import numbers
import pkgutil
import re
import signal
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gpuperf

pytestmark = pytest.mark.slow  # fuzzes every public callable: a minute of CPU

PACKAGE_DIR = Path(gpuperf.__file__).resolve().parent
#: CPU seconds one call may take before it counts as a hang (figure builders take < 2 s).
CALL_LIMIT_S = 5.0
#: The clock may run this many times longer (a loaded machine) before a wait counts as a hang.
WALL_FACTOR = 12
NAN, INF = math.nan, math.inf


# --- what is public ------------------------------------------------------------------------------


def public_module_names() -> list[str]:
    """Every module of the package whose dotted path has no part starting with ``_``."""
    names = ["gpuperf"]
    for found in pkgutil.walk_packages(gpuperf.__path__, "gpuperf."):
        if not any(part.startswith("_") for part in found.name.split(".")):
            names.append(found.name)
    return sorted(names)


def public_callables(module: types.ModuleType) -> list[tuple[str, Any]]:
    """Callables ``module`` defines (not imports) whose names have no leading ``_``."""
    found = []
    for name, obj in vars(module).items():
        if name.startswith("_") or inspect.ismodule(obj) or not callable(obj):
            continue
        if getattr(obj, "__module__", None) == module.__name__:
            found.append((name, obj))
    return sorted(found, key=lambda item: item[0])


def public_methods(cls: type) -> list[tuple[str, Any]]:
    """Public methods a gpuperf class defines or inherits from another gpuperf class."""
    found: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        if not base.__module__.startswith("gpuperf"):
            continue
        for name, member in vars(base).items():
            if name.startswith("_"):
                continue
            if isinstance(member, staticmethod | classmethod) or inspect.isfunction(member):
                found[name] = member
    return sorted(found.items())


# --- kinds of parameter and their bad values -----------------------------------------------------


class Unprintable:
    """An object of no expected type whose ``repr`` is distinctive (it must appear in errors)."""

    def __repr__(self) -> str:
        return "<Unprintable object>"


ODD = Unprintable()


@dataclasses.dataclass(frozen=True)
class Kind:
    """A kind of parameter: values it must refuse, and edge values it may accept (sanely)."""

    name: str
    refused: tuple[Any, ...]
    edge: tuple[Any, ...] = ()


INT = Kind(
    "int",
    refused=(True, "4", 2.5, NAN, INF, 1j, [4], ODD),
    edge=(0, -1, 10**400, 2**64, 4096.0, np.int64(7)),
)
FLOAT = Kind(
    "float",
    refused=(True, "1.5", NAN, INF, -INF, 1j, [1.0], ODD),
    edge=(0, -1.0, 10**400, 1e308, 1e-320),
)
FLAG = Kind("bool", refused=("no", 1, 0, 1.0, [True], ODD))
TEXT = Kind("str", refused=(1, True, b"x", ["x"], ODD), edge=("", " ", "x"))
CHIP = Kind("chip", refused=(3, True, ["H100-SXM"], ODD), edge=("", "T5", "tpu"))
PRECISION = Kind("precision", refused=(16, True, ["fp16"], ODD), edge=("", "fp12", "FP16"))
SEQUENCE = Kind(
    "sequence",
    refused=(1, True, 2.5, "ab", ODD),
    edge=([], (), [True, False], [1, [2]], [NAN], [-1], [10**400], ["x"], [1j]),
)
MAPPING = Kind("mapping", refused=(1, "x", [1], ODD), edge=({}, {"a": NAN}, {"a": -1}, {1: 2}))
FIGSIZE = Kind(
    "figure size",
    refused=("abc", [True, False], (1,), (NAN, 2), (-1, 2), (0, 3), (1e9, 1e9), (1, 2, 3), ODD),
    edge=((2, 2.5),),
)
RANGE = Kind(
    "range",
    refused=("abc", [True, False], (1,), (NAN, 2), (2, 1), (3, 3), (1, 2, 3), ODD),
    edge=((0, 10), (-1, 10), (1e-300, 1e300)),
)
AXES = Kind("axes", refused=(1, "ax", ODD))
FUNCTION = Kind("callable", refused=(1, "f", ODD))
PATH = Kind("path", refused=(1, True, ODD), edge=("", "/nonexistent/gpuperf"))
DTYPE = Kind("dtype", refused=("float16", 16, ODD))
OBJECT = Kind("gpuperf object", refused=(0, 1, "x", {}, ODD))
TENSOR = Kind("tensor", refused=(np.ones(4), 1.5, "x", [1.0], ODD))
ARRAY = Kind(
    "number or array",
    refused=(True, "1.5", NAN, INF, 1j, [1j], [True, False], [1, [2]], [NAN], "ab", ODD),
    edge=(0, -1.0, [], [-1.0], 10**400, [1.0, 2.0], np.ones((2, 2))),
)
ANYTHING = Kind("any", refused=(), edge=(None, True, "x", NAN, -1, [], {}, 10**400))

#: Parameters whose name says what they are, whatever the annotation.
KIND_BY_NAME = {
    "chip": CHIP,
    "chip_name": CHIP,
    "the_chip": CHIP,
    "figsize": FIGSIZE,
    "ax": AXES,
}
_CLASS_NAME = re.compile(r"^[A-Z][A-Za-z0-9]+$")


def kind_of(name: str, annotation: Any) -> tuple[Kind, bool]:
    """(the parameter's kind, whether ``None`` is allowed), from its name and annotation."""
    text = str(annotation).replace("ForwardRef(", "").strip("')\"")
    optional = "None" in text.split("|") or "None" in [t.strip() for t in text.split("|")]
    core = " | ".join(t.strip() for t in text.split("|") if t.strip() != "None")
    if name in KIND_BY_NAME:
        return KIND_BY_NAME[name], optional
    if name.endswith("precision") and core.startswith("str"):
        return PRECISION, optional
    if name.endswith("_range"):
        return RANGE, optional
    if core in ("Any", "object", ""):
        return ANYTHING, optional
    if "torch.Tensor" in core:
        return TENSOR, optional
    if "np.ndarray" in core:
        return ARRAY, optional
    if "torch.dtype" in core:
        return DTYPE, optional
    if "Callable" in core:
        return FUNCTION, optional
    if core.startswith(("Sequence", "tuple[", "list[", "Iterable")):
        return SEQUENCE, optional
    if core.startswith(("Mapping", "dict")):
        return MAPPING, optional
    if "Path" in core:
        return PATH, optional
    if core == "bool":
        return FLAG, optional
    if core == "int":
        return INT, optional
    if core.startswith("float"):
        return FLOAT, optional
    if core == "str" or core.startswith("str |"):
        return TEXT, optional
    if _CLASS_NAME.match(core):
        return OBJECT, optional
    return ANYTHING, optional


def tensor_edges(good: Any) -> list[tuple[str, Any]]:
    """Tensors like ``good`` that are wrong in one way: dtype, device, shape, layout."""
    import torch

    edges = [
        ("int32", good.to(torch.int32)),
        ("bool", good > 0),
        ("complex64", good.to(torch.complex64)),
        ("float64", good.to(torch.float64)),
        ("meta", torch.empty(good.shape, dtype=good.dtype, device="meta")),
        ("0-d", good.reshape(-1)[0].clone()),
        ("extra dim", good.unsqueeze(0).contiguous()),
        ("empty", good.reshape(-1)[:0].reshape(0, *good.shape[1:])),
    ]
    if good.ndim >= 1:  # same shape, every other element of a wider tensor: not contiguous
        wide = torch.repeat_interleave(good, 2, dim=-1)
        edges.append(("strided", wide[..., ::2]))
    return edges


# --- the contract --------------------------------------------------------------------------------


class CallTimeoutError(Exception):
    """A call ran past :data:`CALL_LIMIT_S`."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Stop a call after ``seconds`` of CPU time (a loop that never ends), or after
    :data:`WALL_FACTOR` times that on the clock (a wait that never ends). CPU time, not the
    clock, is the measure, so a busy machine does not turn a slow call into a "hang"."""
    if not hasattr(signal, "setitimer"):  # no SIGALRM (Windows): measure instead
        start = time.process_time()
        yield
        if time.process_time() - start > seconds:
            raise CallTimeoutError(f"took more than {seconds} s of CPU")
        return

    def on_cpu(signum: int, frame: Any) -> None:
        raise CallTimeoutError(f"took more than {seconds} s of CPU (a hang?)")

    def on_clock(signum: int, frame: Any) -> None:
        raise CallTimeoutError(f"waited more than {WALL_FACTOR * seconds} s (a hang?)")

    previous = signal.signal(signal.SIGPROF, on_cpu), signal.signal(signal.SIGALRM, on_clock)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, WALL_FACTOR * seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])


def _gpuperf_exception(error: BaseException) -> bool:
    """An exception class gpuperf defines (``NoGPUError``, a grading check's failure)."""
    return type(error).__module__.startswith("gpuperf")


def _snippets(value: Any) -> list[str]:
    """Ways a message may show a value: its repr, str, or their first 20 characters."""
    if isinstance(value, gpuperf.hardware.Chip):
        return [value.name]
    texts = []
    for text in (repr(value), str(value)):
        if text:
            texts += [text, text[:20]]
    return [t for t in texts if len(t) >= 2]


def unclear(error: BaseException, shown: Mapping[str, Any], parameters: tuple[str, ...]) -> str:
    """Why ``error`` is not a clear error for these arguments ('' if it is one)."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return "raised outside any frame"
    origin = Path(frames[-1].filename).resolve()
    if PACKAGE_DIR not in origin.parents:
        return f"raised from {origin.name}:{frames[-1].lineno}, not by gpuperf's checks"
    message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    if not message.strip():
        return "empty message"
    spellings = {form for name in (*shown, *parameters) for form in (name, name.replace("_", " "))}
    named = any(re.search(rf"(?<![\w.]){re.escape(form)}(?!\w)", message) for form in spellings)
    values = (v for v in shown.values() if not isinstance(v, bool | type(None)))
    if named or any(snippet in message for v in values for snippet in _snippets(v)):
        return ""
    return "the message names no argument and shows no value"


#: Results whose numbers may be negative (scores, values of v, rounded values) or −inf (a mask).
SIGNED = {"naive_attention", "OnlineSoftmaxStep", "online_softmax_steps", "round_to", "quantize"}
#: Values stored in a scaled format, and sums of signed terms, keep their sign.
SIGNED |= {"quantize_mx", "quantize_nvfp4", "block_quantize", "round_to_format", "running_sum",
           "blocked_sum", "pairwise_sum", "hadamard_matrix",
           "random_hadamard_transform"}  # fmt: skip
#: Documented to return ``math.inf`` as an answer ("never compute-bound", γ_n past n·u ≥ 1, a
#: worst-case bound past e^700).
INFINITE_OK = {"critical_batch_size", "summation_bound", "error_bound"}
#: Return their argument unchanged (``x = glue("x", compute())``): the result is the caller's.
PASSTHROUGH = {"notebook.glue", "SavedTensors.output", "Control.values"}
#: ... and so do the grading checks that hand a student's answer back once it is there.
PASSTHROUGH |= {"grading.answers.answered", "grading.answers.answer"}
#: Result fields documented to hold ``math.inf`` entries (the same γ_n, one per length).
INFINITE_FIELDS = {"DotErrors.bound", "SummationErrors.bound"}
#: Fields that are signed by definition (an unbiased exponent: 1 − bias < 0).
SIGNED_FIELDS = {"FloatFormat.min_exponent", "ElementFormat.emax"}


def insane(value: Any, where: str, signed: bool = False, depth: int = 0) -> str:
    """Why ``value`` is not a sane result ('' if it is): numbers finite and ≥ 0 unless
    ``signed``, tensors finite and holding values, every property computable."""
    if depth > 5 or value is None or isinstance(value, bool | np.bool_ | str | bytes):
        return ""
    if isinstance(value, numbers.Real):
        try:
            number = float(value)
        except OverflowError:  # an int beyond float range is no answer either
            return f"{where} = {_short(value)} is beyond float range"
        if math.isnan(number) or (not signed and (math.isinf(number) or number < 0)):
            return f"{where} = {value!r}"
        return ""
    if isinstance(value, numbers.Complex):
        return f"{where} = {value!r} is complex"
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return next((w for i, v in enumerate(value.ravel()[:64])
                         if (w := insane(v, f"{where}[{i}]", signed, depth + 1))), "")  # fmt: skip
        if np.issubdtype(value.dtype, np.complexfloating):
            return f"{where} is complex"
        if np.issubdtype(value.dtype, np.number):
            as_float = value.astype(float)
            if np.isnan(as_float).any():
                return f"{where} holds NaN"
            if not signed and (not np.isfinite(as_float).all() or (as_float < 0).any()):
                return f"{where} holds a negative or infinite value"
        return ""
    if type(value).__module__.startswith("torch") and hasattr(value, "is_floating_point"):
        if value.device.type == "meta":
            return f"{where} is a meta tensor: it holds no values"
        if value.is_complex():
            return f"{where} is a complex tensor"
        if value.is_floating_point() and not bool(value.isfinite().all()):
            return f"{where} holds NaN or inf"
        return ""
    if isinstance(value, Mapping):
        return next((w for k, v in value.items()
                     if (w := insane(v, f"{where}[{k!r}]", signed, depth + 1))), "")  # fmt: skip
    if isinstance(value, tuple | list):
        return next((w for i, v in enumerate(value[:64])
                     if (w := insane(v, f"{where}[{i}]", signed, depth + 1))), "")  # fmt: skip
    if not type(value).__module__.startswith("gpuperf"):
        return ""
    kind = type(value).__name__
    signed = signed or kind in SIGNED
    if dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            key = f"{kind}.{field.name}"
            if key in PASSTHROUGH:
                continue
            if key in INFINITE_FIELDS and isinstance(item, tuple):
                item = tuple(v for v in item if v != math.inf)
            if why := insane(item, f"{where}.{field.name}", signed or key in SIGNED_FIELDS,
                             depth + 1):  # fmt: skip
                return why
    for name, member in inspect.getmembers(type(value)):
        if isinstance(member, property) and not name.startswith("_"):
            try:
                item = getattr(value, name)
            except Exception as error:  # a property must always be computable
                return f"{where}.{name} raised {type(error).__name__}: {error}"
            key = f"{kind}.{name}"
            if why := insane(item, f"{where}.{name}", signed or key in SIGNED_FIELDS, depth + 1):
                return why
    return ""


@dataclasses.dataclass
class Outcome:
    """What one call did: returned ``result``, or raised ``error``; ``problem`` if it broke the
    contract (CRASH / UNCLEAR / SILENT / SLOW, with the reason)."""

    result: Any = None
    error: BaseException | None = None
    problem: str = ""


def call(
    fn: Callable[..., Any],
    kwargs: Mapping[str, Any],
    *,
    parameters: tuple[str, ...],
    shown: Mapping[str, Any],
    must_refuse: bool,
    label: str,
) -> Outcome:
    """Call ``fn(**kwargs)`` and judge it: a clear error, or (unless ``must_refuse``) a sane
    result. ``shown`` are the arguments a message may name or show; ``kwargs["*args"]``, if
    present, is passed positionally (to a ``*args`` parameter)."""
    try:
        return _judge(fn, kwargs, parameters=parameters, shown=shown, must_refuse=must_refuse,
                      label=label)  # fmt: skip
    finally:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            plt.close("all")  # a figure a call drew is judged already; keep memory flat


def _judge(
    fn: Callable[..., Any],
    kwargs: Mapping[str, Any],
    *,
    parameters: tuple[str, ...],
    shown: Mapping[str, Any],
    must_refuse: bool,
    label: str,
) -> Outcome:
    kwargs = dict(kwargs)
    args = kwargs.pop("*args", ())
    if args:  # the parameters before *args must go by position too
        args = (*(kwargs.pop(name) for name in parameters[: parameters.index("*")]), *args)
    try:
        with time_limit(CALL_LIMIT_S):
            result = fn(*args, **kwargs)
    except CallTimeoutError as error:
        return Outcome(error=error, problem=f"SLOW: {error}")
    except SystemExit as error:  # a command line's argparse: usage and status 2 are its answer
        if label.endswith(".main") and error.code == 2:
            return Outcome(error=error)
        return Outcome(error=error, problem=f"CRASH: SystemExit({error.code}) outside a CLI")
    except (ValueError, TypeError, KeyError, FileNotFoundError, ImportError) as error:
        why = unclear(error, shown, parameters)
        problem = f"UNCLEAR: {type(error).__name__}({error}): {why}" if why else ""
        return Outcome(error=error, problem=problem)
    except Exception as error:
        if _gpuperf_exception(error) and not unclear(error, shown, parameters):
            return Outcome(error=error)
        if _verdict(error, kwargs, shown, must_refuse):
            return Outcome(error=error)
        where = traceback.extract_tb(error.__traceback__)[-1]
        return Outcome(
            error=error,
            problem=f"CRASH: {type(error).__name__}({str(error)[:160]}) at "
            f"{Path(where.filename).name}:{where.lineno}",
        )
    if must_refuse:
        return Outcome(result=result, problem=f"SILENT: accepted, returned {_short(result)}")
    name = label.rsplit(".", 1)[-1]
    if label in PASSTHROUGH:
        return Outcome(result=result)
    why = insane(result, label, signed=name in SIGNED)
    if why and not (name in INFINITE_OK and result == math.inf):
        return Outcome(result=result, problem=f"SILENT: insane result: {why}")
    return Outcome(result=result)


#: Parameters of gpuperf.grading's checks that hold the student's answer. Any value there is a
#: possible submission, and the check's right reply to a wrong one is a failed check.
ANSWER_PARAMETERS = {"value", "actual", "lse", "fn", "condition"}


def _verdict(
    error: BaseException, kwargs: Mapping[str, Any], shown: Mapping[str, Any], must_refuse: bool
) -> bool:
    """A grading check's verdict on the answer, not a crash: a ``CheckError`` that names the
    answer (the check's ``name`` in backticks, or ``check_true``'s own message), raised for a
    value of an answer parameter or for an edge value (a reference of -1 makes the good answer
    wrong). A refused value of the instructor's (``rtol="1"``) must still be a ValueError or
    TypeError naming it."""
    kind = type(error)
    if kind.__name__ != "CheckError" or not kind.__module__.startswith("gpuperf.grading"):
        return False
    if must_refuse and not set(shown) <= ANSWER_PARAMETERS:
        return False
    text, name, message = str(error), kwargs.get("name"), kwargs.get("message")
    return (isinstance(name, str) and f"`{name}" in text) or (
        isinstance(message, str) and bool(message) and message in text
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


# --- good arguments ------------------------------------------------------------------------------


def _device() -> str:
    from gpuperf.runtime import default_device

    return default_device()


def _randn(*shape: int, dtype: str = "float32") -> Any:
    import torch

    generator = torch.Generator().manual_seed(0)
    values = torch.randn(*shape, generator=generator, dtype=getattr(torch, dtype))
    return values.to(_device())


def _figure() -> Any:
    import matplotlib.pyplot as plt

    return plt.figure(figsize=(2, 2))


def _axes() -> Any:
    return _figure().subplots()


#: Values for parameters without a default, by name (a callable is called for a fresh value).
GOOD_ARGS: dict[str, Any] = {
    "chip_name": "H100-SXM", "chip": "H100-SXM", "the_chip": "H100-SXM", "name": "H100-SXM",
    "precision": "fp16", "n": 64, "m": 48, "k": 32, "batch": 2, "heads": 4, "seq_len": 256,
    "head_dim": 64, "sram_bytes": 65536, "sram_elements": 32768, "block_size": 4,
    "block_m": 64, "block_n": 64, "block_k": 32, "rows": 8, "cols": 64, "n_params": 7e9,
    "n_tokens": 1e12, "model_flops_per_s": 4e14, "tokens_per_s": 3000.0, "n_threads": 256,
    "period": 3, "iters": 4, "paths": 2, "generation": 5, "device_name": "NVIDIA H100 80GB HBM3",
    "n_heads": 32, "n_kv_heads": 8, "n_layers": 32, "tokens": 4096, "context_len": 4096,
    "prompt_len": 512, "collective": "all-reduce", "ranks": 8, "bus_bandwidth": 4e11,
    "algorithm_bandwidth": 2e11, "latency_s": 1e-6, "message_bytes": 1e6,
    "link_bandwidth": 4.5e11, "step_latency_s": 1e-6, "communication_s": 2e-3,
    "overlappable_compute_s": 1e-3, "gradient_bytes": 1e9, "bucket_bytes": 2.5e7,
    "backward_s": 0.1, "bandwidth": 1e12, "n_bytes": 1e6, "sizes": [1024, 2048, 4096],
    "times_s": [1.1e-6, 2e-6, 1.1e-5], "flops_per_s": 1e15, "bytes_per_s": 1e12, "seconds": 1e-3,
    "intensity": 100.0, "op": lambda: gpuperf.cost.matmul(64, 64, 64), "d": 4096, "f": 16384,
    "b": 128, "tiles": 132, "threads_per_block": 128, "registers_per_thread": 64,
    "shared_memory_per_block_bytes": 32768, "sm_count": 132, "flop_per_clock_per_sm": 1024,
    "clock_hz": 1.755e9, "warps_per_sm": 16, "n_elements": 1 << 20, "flops_per_element": 4.0,
    "activation_bytes_per_layer": 1e8, "input_bytes_per_layer": 1e7,
    "forward_flops_per_layer": 1e12, "micro_batch": 1, "hidden": 1024, "budget_bytes": 4e10,
    "x": lambda: np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -3.0]]), "values": [0.1, 1.5, 300.0],
    "format": "fp16", "largest_value": 1e3, "key": "tma", "family": "tma", "count": 3,
    "trials": 4, "input_format": "fp16", "opcode": "cp.async.bulk.tensor.2d",
    "prefix": "fma", "l2_bandwidth": 1.2e13, "element_size": 2, "n_out": 64, "reference": 3e12,
    "products": lambda: np.ones((2, 8)), "accumulator": "fp32", "lengths": [16, 64],
    "row": [0.5, -1.2, 1.1, 0.3], "q": lambda: np.ones((3, 4)), "v": lambda: np.ones((3, 4)),
    "ptx_instructions": [("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4)],
    "instruction": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "kernel": "matmul",
    "target": "sm_80", "peak_flops_per_s": 1e15, "bandwidth_bytes_per_s": 3e12,
    "quantity": "HBM copy, read + write", "case": "vector_add fp32 2^26", "host_s": 1e-3,
    "device_s": 2e-3, "path_of_thread": lambda: np.arange(64) % 2, "repository_url":
    "https://github.com/gpuperf/gpuperf", "headers": ["a", "b"], "value": 1.0,
    "torch_version": "2.13.0", "module": "math", "figure": _figure, "ax": _axes,
    "stage": 1, "parameter_bytes": 1e9, "gpus_per_node": 8, "nodes": 4,
    "intra_bandwidth": 4.5e11, "inter_bandwidth": 5e10, "d_model": 4096, "copies_per_token": 8,
    "kv_lora_rank": 512, "rope_head_dim": 64, "bits": 4, "new_tokens": 4, "compute_s": 1e-3,
    "protocol": "LL", "faster_small": "LL", "faster_large": "Simple", "channels": 16,
    "acceptance": 0.7, "draft_tokens": 4, "gpu_s": 1e-3, "kernels": 100,
    "cpu_s_per_kernel": 5e-6, "context_lens": [100, 2000], "max_len": 4096, "block_tokens": 16,
    "bytes_per_token": 1e5, "output_lengths": [10, 200], "terms": lambda: np.full(64, 0.1),
    "block": 32, "tensors": lambda: [np.linspace(-2, 2, 64) * s for s in (1, 3, 0.5)],
    "ptx": ".reqntid 128\n{\n ret;\n}", "svg": lambda: _svg(),
}  # fmt: skip

#: Kernel modules' tensors: small, on the course's device, shapes the launcher accepts.
KERNEL_TENSORS: dict[str, Callable[[], Any]] = {
    "x": lambda: _randn(300),
    "y": lambda: _randn(300),
    "a": lambda: _randn(40, 24),
    "b": lambda: _randn(24, 40),
    "q": lambda: _randn(1, 2, 32, 16),
    "k": lambda: _randn(1, 2, 32, 16),
    "v": lambda: _randn(1, 2, 32, 16),
}
#: Per module: parameters whose good value differs from :data:`GOOD_ARGS`.
GOOD_BY_MODULE: dict[str, dict[str, Any]] = {
    "gpuperf.kernels.softmax": {"x": lambda: _randn(6, 40)},
    "gpuperf.kernels.transpose": {"x": lambda: _randn(24, 40)},
    "gpuperf.kernels.decode_attention": {
        "q": lambda: _randn(2, 4, 16),
        "k_cache": lambda: _randn(2, 2, 40, 16),
        "v_cache": lambda: _randn(2, 2, 40, 16),
        "head_dim": 16,
    },
    "gpuperf.kernels.flash_attention_hopper": {"head_dim": 64},
}
#: Keyword arguments of one good call, per callable (for what the tables above cannot guess).
GOOD_CALLS: dict[str, Callable[[], dict[str, Any]]] = {
    "attention.naive_attention": lambda: {"q": np.ones((3, 4)), "k": np.ones((3, 4)),
                                          "v": np.ones((3, 4))},
    "bench.evaluate_targets": lambda: {"records": [{"case": "vector_add fp32 2^26", "us": 9.0,
                                                    "frac_copy_bw": 0.97}]},
    "bench.format_targets": lambda: {"results": gpuperf.bench.evaluate_targets([])},
    "bench.format_table": lambda: {"measurements": []},
    "bench.ThisGPU.report": lambda: {"name": "matmul", "op": gpuperf.cost.matmul(64, 64, 64),
                                     "precision": "fp16", "measured_s": 1e-5},
    "bench.measure_seconds": lambda: {"fn": lambda: None},
    "bench.relative_error": lambda: {"out": _randn(4), "ref": _randn(4) * 1.001},
    "bench.Prepared": lambda: {"kernel": lambda: None},
    "bench.document": lambda: {"records": [dict(_RECORD)], "provenance_": dict(_PROVENANCE)},
    "bench.format_records": lambda: {"records": [dict(_RECORD)]},
    "bench.format_case_list": lambda: {"selected": gpuperf.bench.cases()[:2]},
    "bench.write_json": lambda: {"path": _tmp_dir() / "run.json", "doc": {"records": []}},
    "bench.measure_case": lambda: {"case": gpuperf.bench.cases()[0], "copy_bandwidth": None,
                                   "floor": gpuperf.bench.chip_floor(
                                       gpuperf.cost.matmul(64, 64, 64), "H100-SXM", "fp16")},
    "inference.verify_step": lambda: {"config": gpuperf.inference.ILLUSTRATIVE, "batch": 4,
                                      "new_tokens": 4, "context_len": 4096,
                                      "chip_name": "H100-SXM"},
    "measurements.stream_read_sweep": lambda: {"chip": "H200"},
    "parallelism.loaded_latency": lambda: {"chip_name": "H200"},
    "microscaling.element_format": lambda: {"name": "e4m3"},
    "microscaling.scaled_format": lambda: {"name": "mxfp8"},
    "microscaling.scaled_format_peak": lambda: {"chip_name": "GB200", "format": "nvfp4"},
    "microscaling.random_hadamard_transform": lambda: {"values": np.ones((32, 3))},
    "microscaling.gemm_quantization_error": lambda: {
        "a": np.arange(64.0).reshape(32, 2), "b": np.ones((32, 3))},
    "serving.speculative_decoding": lambda: {
        "config": gpuperf.inference.ILLUSTRATIVE, "draft": gpuperf.serving.ILLUSTRATIVE_DRAFT,
        "draft_tokens": 4, "acceptance": 0.7, "context_len": 4096, "chip_name": "H100-SXM"},
    "serving.speculative_max_batch": lambda: {
        "config": gpuperf.inference.ILLUSTRATIVE, "draft": gpuperf.serving.ILLUSTRATIVE_DRAFT,
        "context_len": 4096, "chip_name": "H100-SXM"},
    "serving.decode_kernels": lambda: {"config": gpuperf.inference.ILLUSTRATIVE},
    "serving.speculative_at_equal_memory": lambda: {
        "config": gpuperf.inference.ILLUSTRATIVE, "draft": gpuperf.serving.ILLUSTRATIVE_DRAFT,
        "draft_tokens": 4, "acceptance": 0.7, "context_len": 4096, "chip_name": "H100-SXM"},
    "serving.EqualMemory": lambda: {
        "speculative": gpuperf.serving.speculative_decoding(
            gpuperf.inference.ILLUSTRATIVE, gpuperf.serving.ILLUSTRATIVE_DRAFT, 4, 0.7, 4096,
            "H100-SXM"),
        "plain_batch": 4, "plain_step_s": 1e-3},
    "serving.self_speculative_decoding": lambda: {
        "config": gpuperf.inference.ILLUSTRATIVE, "draft_tokens": 1, "acceptance": 0.875,
        "context_len": 4096, "chip_name": "H100-SXM"},
    "serving.draft_head": lambda: {"config": gpuperf.inference.ILLUSTRATIVE},
    "serving.moe_decode": lambda: {"config": gpuperf.serving.DEEPSEEK_V3_MOE, "tokens": 64},
    "serving.MoEDecode": lambda: {"config": gpuperf.serving.DEEPSEEK_V3_MOE, "tokens": 64,
                                  "bytes_per_param": 1.0},
    "serving.expected_distinct_experts": lambda: {"n_experts": 256, "top_k": 8, "tokens": 64},
    "serving.chunked_prefill": lambda: {
        "config": gpuperf.inference.ILLUSTRATIVE, "batch": 8, "context_len": 4096,
        "chunk_tokens": 256, "chip_name": "H100-SXM"},
    "serving.free_chunk_tokens": lambda: {
        "config": gpuperf.inference.ILLUSTRATIVE, "batch": 8, "context_len": 4096,
        "chip_name": "H100-SXM"},
    "serving.MixedStep": lambda: {
        "decode": gpuperf.inference.decode_step(gpuperf.inference.ILLUSTRATIVE, 8, 4096,
                                                "H100-SXM"),
        "chunk": gpuperf.inference.prefill_step(gpuperf.inference.ILLUSTRATIVE, 1, 256,
                                                "H100-SXM")},
    "serving.kv_transfer": lambda: {"config": gpuperf.inference.ILLUSTRATIVE, "prompt_len": 4096,
                                    "link": "InfiniBand NDR 400G"},
    "serving.KVTransfer": lambda: {"prompt_len": 4096, "bytes_per_token": 131072.0,
                                   "link": "InfiniBand NDR 400G", "link_bytes_per_s": 50e9},
    "serving.prefix_cache": lambda: {"config": gpuperf.inference.ILLUSTRATIVE, "prompt_len": 4096,
                                     "prefix_len": 3072, "chip_name": "H100-SXM"},
    "serving.PrefixCache": lambda: {
        "prefix_len": 3072,
        "full": gpuperf.inference.prefill_step(gpuperf.inference.ILLUSTRATIVE, 1, 4096,
                                               "H100-SXM"),
        "cached": gpuperf.inference.prefill_step(gpuperf.inference.ILLUSTRATIVE, 1, 1024,
                                                 "H100-SXM", context_len=3072)},
    "warpspec.compiled": lambda: {"case": "matmul", "target": "sm_80"},
    "warpspec.CompiledFacts.registers": lambda: {"action": "inc"},
    "warpspec.ExpBalance.exp_time_s": lambda: {"fraction": 0.4},
    "warpspec.refused_on_plain_target": lambda: {
        "ptxas_log": "error : Instruction 'wgmma.fence' not supported on .target 'sm_90'"
    },
    "divergence.branch_cost": lambda: {"n": 1024, "iters": 4, "paths": 2.0},
    "banks.warp_access": lambda: {"words": list(range(0, 64, 2))},
    "hardware.chip": lambda: {"name": "H100-SXM"},
    "inference.decode_step": lambda: {"config": gpuperf.inference.ILLUSTRATIVE, "batch": 4,
                                      "context_len": 4096, "chip_name": "H100-SXM"},
    "inference.prefill_step": lambda: {"config": gpuperf.inference.ILLUSTRATIVE, "batch": 1,
                                       "prompt_len": 512, "chip_name": "H100-SXM"},
    "inference.max_batch": lambda: {"config": gpuperf.inference.ILLUSTRATIVE,
                                    "context_len": 4096, "chip_name": "H100-SXM"},
    "inspect.compile_kernel": lambda: {"kernel": "matmul", "target": "sm_80"},
    "inspect.compile_many": lambda: {"requests": [{"kernel": "vector_add", "target": "sm_80"}]},
    "inspect.table": lambda: {"reports": []},
    "kernels.copy.copy_strided": lambda: {"x": _randn(300), "stride": 3},
    "kernels.copy.copy_misaligned": lambda: {"x": _randn(300), "offset": 5},
    "kernels.divergence.divergence_ref": lambda: {"x": _randn(300), "period": 32},
    "kernels.flash_attention.default_configs": lambda: {"dtype": _torch().float16},
    "kernels.matmul.default_config": lambda: {"m": 256, "n": 256},
    "kernels.matmul.matmul_cost": lambda: {"m": 64, "n": 64, "k": 64},
    "measurements.load_kernels": lambda: {
        "source": {"schema": "gpuperf.bench/1", "provenance": _PROVENANCE,
                   "records": [{"case": "vector_add fp32 2^26", "us": 9.0, "GBps": 2900.0}]}},
    "measurements.course_kernel": lambda: {"case": "vector_add fp32 2^26"},
    "measurements.find": lambda: {"quantity": "HBM copy, read + write"},
    "memory.fit_transfer_model": lambda: {"n_bytes": [1e3, 1e5, 1e7],
                                          "times_s": [1.1e-6, 2e-6, 1.1e-4]},
    "notebook.show_source": lambda: {"obj": gpuperf.units.format_bytes},
    "notebook.table": lambda: {"headers": ["a", "b"], "rows": [[1, 2]]},
    "notebook.glue": lambda: {"name": "answer", "value": 42},
    "notebook.needs_triton": lambda: {"sources": ["import numpy"]},
    "notebook.repository_url_from_config": lambda: {"config_path": ROOT / "_config.yml"},
    "notebook.toc_files": lambda: {"toc_path": ROOT / "_toc.yml"},
    "numerics.float_format": lambda: {"name": "fp16"},
    "numerics.dot_errors": lambda: {"lengths": [16, 64], "trials": 4},
    "plots.roofline": lambda: {"chips": "H100-SXM"},
    "plots.roofline_bandwidths": lambda: {"the_chip": "H100-SXM", "precision": "bf16",
                                          "bandwidths": {"HBM": 3.35e12, "PCIe": 64e9}},
    "plots.batch_roofline": lambda: {"the_chip": "H100-SXM", "widths": [4096, 8192]},
    "plots.achieved_roofline": lambda: {"the_chip": "H100-SXM", "precision": "bf16",
                                        "points": {"matmul": (300.0, 5e14)}},
    "plots.coalescing_picture": lambda: {"results": [gpuperf.memory.coalescing(1),
                                                     gpuperf.memory.coalescing(2)]},
    "plots.sawtooth": lambda: {"chips": ["H100-SXM"], "block_m": 128, "block_n": 128,
                               "sizes": np.arange(1024, 4097, 512)},
    "plots.tile_picture": lambda: {"m": 300, "n": 200, "block_m": 64, "block_n": 64},
    "plots.smem_gauges": lambda: {"budgets": [gpuperf.tiling.shared_memory_budget(
        "H100-SXM", 128, 128, 64)]},
    "plots.traffic_bars": lambda: {"costs": {"matmul": gpuperf.cost.matmul(64, 64, 64)}},
    "plots.checkpoint_tradeoff": lambda: {"n_layers": 24, "activation_bytes_per_layer": 1e8,
                                          "input_bytes_per_layer": 1e7},
    "plots.memory_ladder": lambda: {"levels": gpuperf.memory.bandwidth_ladder("H100-SXM")},
    "plots.link_bandwidths": lambda: {"rows": [
        ("CPU → GPU", gpuperf.measurements.find("CPU → GPU copy"), 15.75e9)]},
    "plots.effective_bandwidth_curves": lambda: {"links": {"PCIe": (14e9, 1.4e-6)}},
    "profiling.profile": lambda: {"fn": lambda: _randn(8) * 2},
    "recompute.mode_in_words": lambda: {"mode": "selective"},
    "recompute.checkpoint_policy": lambda: {"seq_len": 2048, "micro_batch": 1, "hidden": 4096,
                                            "heads": 32, "policy": "recompute norms"},
    "recompute.up_projection_recompute": lambda: {"tokens": 4096, "rank": 512, "width": 16384},
    "recompute.recompute_or_store": lambda: {"n_elements": 1 << 20, "flops_per_element": 4.0,
                                             "chip": "H100-SXM"},
    "recompute.saved_tensor_bytes": lambda: {"fn": lambda t: (t * 2).sum(),
                                             "*args": (_randn(8).requires_grad_(),)},
    "recompute.transformer_layer": lambda: {"hidden": 64, "heads": 4},
    "roofline.matmul_flops_vs_batch": lambda: {"batch": np.array([1, 64, 4096]), "d": 4096,
                                               "f": 16384, "chip_name": "H100-SXM"},
    "runtime.require": lambda: {"module": "math"},
    "scrub.legible": lambda: {"figure": _figure()},
    "scrub.control": lambda: {"name": "n", "values": [1, 2, 4]},
    "scrub.Scrubber": lambda: {"render": lambda n: _figure(), "alt": "a line",
                               "controls": [gpuperf.scrub.control("n", [1, 2])]},
    "scrub.scrubber": lambda: {"render": lambda n: _figure(), "controls": {"n": [1, 2]},
                               "alt": "a line"},
    "profiling.Profile.row": lambda: {"name": "aten::mul"},
    "tiling.occupancy": lambda: {"chip": "H100-SXM", "threads_per_block": 128,
                                 "registers_per_thread": 64,
                                 "shared_memory_per_block_bytes": 32768},
    "tiling.waves": lambda: {"tiles": 300, "chip": "H100-SXM"},
    "tolerances.tolerance": lambda: {"precision": "fp16"},
    "vega.UnavailableFigure": lambda: {"name": "attention_static", "reason": "no Altair 5"},
    "vega.book_figure": lambda: {"build": lambda: None},
    "vega.write_bundle": lambda: {"static_dir": _tmp_dir()},
    "vega.StaticExplorer": lambda: {"controls": [gpuperf.scrub.control("n", [1, 2])],
                                    "alt": "a figure"},
    # refused values only (REFUSED_ONLY): the other arguments are placeholders
    "vega.StaticExplorer.chart": lambda: {"chart": None},
    "bookext.setup": lambda: {"app": None},
    "vega.StaticExplorer.table": lambda: {"name": "extra", "compute": lambda: {"y": 1.0}},
    "widgets.live.LiveFigure": lambda: _live_figure(),
    # the grading engineer's modules (issue 22): answers a student could give
    "grading.checks.check_true": lambda: {"condition": True, "message": "holds"},
    "grading.checks.check_close": lambda: {"name": "t", "value": 1.0, "expected": 1.0},
    "grading.checks.check_choice": lambda: {"name": "bound", "value": "memory",
                                            "expected": "memory",
                                            "choices": ["memory", "compute"]},
    "grading.checks.check_mapping": lambda: {"name": "m", "value": {"a": 1.0},
                                             "expected": {"a": 1.0}},
    "grading.tensors.check_tensor": lambda: {"name": "out", "actual": _randn(8),
                                             "expected": _randn(8)},
    "grading.tensors.check_attention": lambda: {"name": "o", "actual": _randn(2, 4, 8),
                                                "expected": _randn(2, 4, 8)},
    "grading.tensors.padded": lambda: {"tensor": _randn(8), "pad": 2},
    "grading.tensors.check_padding": lambda: {"name": "out",
                                      "tensor": gpuperf.grading.padded(_randn(8), 2)},
    "grading.answers.answer": lambda: {"env": {"x": 1.0}, "name": "x"},
    "grading.answers.answered": lambda: {"name": "x", "value": 1.0},
    "grading.running.call": lambda: {"name": "f", "fn": abs, "*args": (-1.0,)},
    "grading.hidden.run_hidden": lambda: {"question": "q1", "env": {}},
    "grading.grader.lab_grader": lambda: {"lab": "lab1_rooflines", "questions": ["q1"]},
    "release.parse_version": lambda: {"version": "2026.12.0"},
    "release.Pins.colab_url": lambda: {"notebook": "chapters/02_roofline.ipynb"},
    "release.Pins.tests_url": lambda: {"lab": "lab1_rooflines"},
    "widgets.live.Explorer": lambda: _explorer_parts(),
    "widgets.live.Explorer.for_view": lambda: {
        "view": types.SimpleNamespace(update=lambda n: f"n = {n}", **_live_figure()),
        "controls": {"n": _explorer_parts()["controls"]["n"]},
    },
    "bookaccess.accessible_page": lambda: {
        "page": '<html><body><summary aria-label="Toggle hidden content">x</summary></body>'
                "</html>"},
    "bookaccess.setup": lambda: {"app": None},
    "figures.plain_log_ticks": lambda: {"axis": _axes().xaxis},
    "widgets.static.colab_url": lambda: {"notebook": "chapters/02_roofline.ipynb",
                                         "start": ROOT},
    "widgets.tile_reports.tile_report": lambda: {"target": "sm_80", "block_m": 64,
                                                 "block_n": 64, "block_k": 32},
    "widgets.tile_reports.TileReport.from_report": lambda: {"report": _compile_report()},
    "widgets.tile_reports.ctas_per_sm": lambda: {"chip": "A100-80GB", "block_m": 64,
                                                 "block_n": 64, "block_k": 32},
}  # fmt: skip
ROOT = PACKAGE_DIR.parents[1]
_RECORD = {"case": "vector_add fp32 2^26", "us": 9.0, "GBps": 2900.0}
_PROVENANCE = {"chip": "H100-SXM", "device": "NVIDIA H100 80GB HBM3", "driver": "570",
               "cuda": "12.8", "torch": "2.13", "triton": "3.9.0", "numpy": "2.3",
               "date": "2026-01-01", "commit": "abc1234"}  # fmt: skip


def _torch() -> Any:
    import torch

    return torch


def _tmp_dir() -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="gpuperf-contract-"))


def _svg() -> str:
    """A small figure as the book's inline backend writes it: SVG with real text."""
    import io

    import matplotlib.pyplot as plt

    from gpuperf.figures import RC, SVG_METADATA

    with plt.rc_context(RC):
        figure = plt.figure(figsize=(2, 1.5))
        figure.subplots().set_title("a title")
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata=SVG_METADATA)
        plt.close(figure)
    return out.getvalue()


def _notebook_file() -> Path:
    """A student's notebook (nbformat v4) in a fresh folder."""
    import nbformat

    path = _tmp_dir() / "ada.ipynb"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    path.write_text(nbformat.writes(notebook), encoding="utf-8")
    return path


def _finished_pipe() -> Any:
    """The read end of a pipe whose writer wrote a line and closed (a sandbox's stderr)."""
    import os

    read, write = os.pipe()
    os.write(write, b"printed\n")
    os.close(write)
    return os.fdopen(read, "rb")


def _live_figure() -> dict[str, Any]:
    from gpuperf.widgets.live import _new_figure

    figure = _new_figure((2, 2))
    (line,) = figure.subplots().plot([0, 1], [0, 1])
    return {"figure": figure, "animated": [line]}


def _explorer_parts() -> dict[str, Any]:
    import ipywidgets

    parts = _live_figure()
    live = gpuperf.widgets.LiveFigure(**parts)
    slider = ipywidgets.IntSlider(value=1, min=0, max=4)
    return {"controls": {"n": slider}, "update": lambda n: f"n = {n}", "live": live}


def _compile_report() -> Any:
    """A CompileReport as gpuperf.inspect builds one (compiling takes seconds; not here)."""
    from gpuperf.inspect import CompileReport

    return CompileReport(
        kernel="vector_add", target="sm_80", chip_name="A100-80GB", dtype="fp32", num_warps=4,
        num_stages=3, constexprs={"BLOCK_SIZE": 1024}, triton_version="3.9.0", compiled=True,
        fits=True, shared_memory_bytes=0, registers_per_thread=26, spill_bytes=0,
        occupancy=1.0, limited_by="threads", tensor_core_instructions=(),
        ptx_instructions=(("ld.global.v4.b32", 2),), explanation="", modelled=False,
    )  # fmt: skip


def _profile() -> Any:
    from gpuperf.profiling import Profile, ProfileRow

    row = ProfileRow("aten::mul", 3, 1e-5, 2e-5, 0.0, 0.0)
    return Profile("cpu", 3, (row,), "table", 1e-5, 0.0)


#: Instances of result classes no function of their own module returns cheaply here.
INSTANCES: dict[str, Callable[[], Any]] = {
    "bench.Ceilings": lambda: gpuperf.bench.Ceilings(3e12, 8e14),
    "bench.Measurement": lambda: gpuperf.bench.Measurement(
        "matmul", gpuperf.cost.matmul(64, 64, 64),
        gpuperf.bench.chip_floor(gpuperf.cost.matmul(64, 64, 64), "H100-SXM", "fp16"), 1e-5),
    "inspect.CompileReport": _compile_report,
    "vega.StaticExplorer": lambda: importlib.import_module(
        "gpuperf.widgets.asynchrony"
    ).overlap_static(),
    "measurements.Provenance": lambda: gpuperf.measurements.course_kernels()[0].provenance,
    "profiling.Profile": _profile,
    "profiling.ProfileRow": lambda: _profile().rows[0],
    "recompute.SavedTensors": lambda: gpuperf.recompute.SavedTensors(64, 1, None, ((4, 4),)),
    "recompute.PolicyActivations": lambda: gpuperf.recompute.checkpoint_policy(2048, 1, 4096, 32),
    "recompute.UpProjectionRecompute": lambda: gpuperf.recompute.up_projection_recompute(
        4096, 512, 16384),
    "bench.Case": lambda: gpuperf.bench.cases()[0],
    "bench.Run": lambda: gpuperf.bench.Run([], [], {}, None, None, []),
    "parallelism.LoadedLatency": lambda: gpuperf.parallelism.loaded_latency("H200"),
    "microscaling.ScaledPeak": lambda: gpuperf.microscaling.scaled_format_peak("B200"),
    "microscaling.BlockScaling": lambda: gpuperf.microscaling.BLOCK_SCALINGS["MXFP8, any tensor"],
    "microscaling.ScalingOverSteps": lambda: gpuperf.microscaling.scaling_over_steps(
        [np.linspace(-2, 2, 64) * s for s in (1, 3, 0.5)]),
    "warpspec.CompiledFacts": lambda: gpuperf.warpspec.compiled("matmul", "sm_80"),
}  # fmt: skip

#: Slow by nature (compiles, profiles, renders the book, needs a GPU or Colab): only refused
#: values, which must fail before the work starts. The good call is their own tests' job.
REFUSED_ONLY: dict[str, str] = {
    "asynchrony.regenerate": "compiles every kernel for minutes (tests/test_asynchrony.py)",
    "widgets.tile_reports.regenerate": "compiles the tile grid for minutes (test_inspect.py)",
    "inspect.compile_kernel": "compiles with Triton, seconds cold (tests/test_inspect.py)",
    "inspect.compile_many": "compiles with Triton (tests/test_inspect.py)",
    "inspect.inspect_all": "compiles every kernel for three targets (tests/test_inspect.py)",
    "bench.main": "the command line: argparse answers bad arguments (tests/test_bench.py)",
    "bench.measure_seconds": "times on a GPU; raises NoGPUError here (tests/test_bench.py)",
    "bench.measure_ceilings": "times on a GPU; raises NoGPUError here (tests/test_bench.py)",
    "bench.measure_case": "times on a GPU; raises NoGPUError here (tests/test_bench.py)",
    "bench.collect": "times every case on a GPU; raises NoGPUError here (tests/test_bench.py)",
    "bench.run": "times every case on a GPU; raises NoGPUError here (tests/test_bench.py)",
    "bench.provenance": "reads the GPU's name and driver; raises NoGPUError here",
    "bench.write_json": "writes a file where it is told (tests/test_bench.py)",
    "warpspec.regenerate": "compiles every case for a minute (tests/test_warpspec.py)",
    "warpspec.compile_facts": "runs the compiler in a subprocess (tests/test_warpspec.py)",
    "warpspec.plain_target_facts": "compiles and assembles two kernels (tests/test_warpspec.py)",
    "bookext.setup": "a Sphinx extension: needs a Sphinx application (tests/test_book.py)",
    "bookaccess.setup": "a Sphinx extension: needs a Sphinx application (test_bookaccess.py)",
    "colab.install_triton": "installs Triton inside Colab only (tests/test_colab.py)",
    "kernels.flash_attention_hopper.flash_attention_hopper": "needs an sm_90 GPU",
    "kernels.flash_attention_hopper.FlashAttentionHopper": "needs an sm_90 GPU",
    "profiling.profile": "runs the torch profiler, a second a call (tests/test_profiling.py)",
    "recompute.transformer_layer": "builds a torch module: seconds at hidden=4096",
    "vega.write_bundle": "writes the Vega runtime, megabytes (tests/test_vega.py)",
    "vega.javascript_bundle": "reads the Vega runtime from the vl-convert wheel",
    "vega.StaticExplorer.table": "adds a table to a built figure (tests/test_vega.py)",
    "vega.StaticExplorer.chart": "sets an Altair chart (tests/test_vega.py)",
}
#: Values of the refused lists that a parameter accepts by design, with the reason.
ACCEPTED: dict[tuple[str, str], tuple[tuple[Any, ...], str]] = {
    **{
        (f"units.{fn}", param): ((NAN, INF, -INF), "formats what a calculator returned: inf s")
        for fn, param in (("format_flops", "flops_per_s"), ("format_bandwidth", "bytes_per_s"),
                          ("format_bytes", "n_bytes"), ("format_seconds", "seconds"))
    },
    ("serving.PagedKV", "context_lens"): ((1,), "one sequence's length: a list of one"),
    ("grading.tensors.padded", "fill"): ((NAN, INF, -INF), "the padding: NaN by default"),
    **{
        ("attention.OnlineSoftmaxStep", field): ((-INF,), "a fully masked block's max is -inf")
        for field in ("block_max", "max_before", "max_after")
    },
}  # fmt: skip
#: The grading engineer's modules (issue 22): what a good call would start — a sandboxed
#: notebook, a class's grading, a download, pip — gets refused values only.
REFUSED_ONLY |= {
    "grading.grader.lab_grader": "builds otter's grader, installing it in Colab",
    "grading.hidden.run_hidden": "runs a lab's hidden tests",
    "grading.running.call": "runs a student's function under a time limit",
}
#: Not called at all, with the reason.
NOT_CALLED: dict[str, str] = {
    "runtime.configure_triton": "sets TRITON_INTERPRET for the whole process",
    "grading.grader.install_otter_for_colab": "runs pip",
    "grading.integrity.integrity_check": "checks the checks were not replaced (test_grading)",
    **{
        f"grading.plugin.CellTimeLimit.{hook}": "an otter plugin hook: otter passes its objects"
        for hook in (
            "before_execution",
            "during_assign",
            "during_generate",
            "before_grading",
            "after_grading",
        )
    },
}
#: Failures in the grading engineer's modules (issue 22: grading.py and classroom/ are being
#: reworked there), found by this sweep on 2026-11-26 and left to that work: the kinds of
#: failure seen. Strict: an entry whose callable no longer fails is reported as stale, so each
#: is removed as it is fixed. Some UNCLEAR/CRASH entries of the ``check_*`` functions are a
#: CheckError that names the student's answer (`t`) rather than the argument: that is the
#: grader's message by design, and the grading work decides whether the contract differs there.
KNOWN_FAILURES: dict[str, str] = {}

# --- the class grader (gpuperf.classroom, issue 39) ---------------------------------------------
# Every public entry point of the class grader is swept like the calculators. What would start a
# sandbox, a grading process or a class, make cgroups or move this process is refused-only: its
# bad arguments must be refused before any of that starts.

import io  # noqa: E402
import os  # noqa: E402

_NOWHERE = {"memory": "/nonexistent/gpuperf-memory", "pids": "/nonexistent/gpuperf-pids"}


#: A notebook of one cell holding a small Triton kernel ``k`` (classroom.kernel_source).
_KERNEL_CELLS = [
    "@triton.jit\ndef k(x_ptr, N: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, N), 1.0)\n"
]


def _notebook_handle() -> Any:
    """A sandboxed notebook's handle, not started (nothing runs until it is asked something)."""
    from gpuperf.classroom.sandbox import Limits
    from gpuperf.classroom.student import Notebook

    return Notebook(None, Limits(), deadline=1e9, cell_limit_s=10.0, kind="bwrap")


GOOD_CALLS |= {
    "classroom.canary.origin": lambda: {"function": abs},
    "classroom.canary.differences": lambda: {"expected": {"a": "1"}, "observed": {"a": "1"}},
    "classroom.wire.encode": lambda: {"value": [1.0, "x"]},
    "classroom.wire.decode": lambda: {"data": gpuperf.classroom.wire.encode([1.0, "x"])},
    "classroom.wire.dumps": lambda: {"message": {"op": "get", "name": "x"}},
    "classroom.wire.loads": lambda: {"line": b'{"op": "get", "name": "x"}\n'},
    "classroom.wire.Handle": lambda: {"id": 1, "type_name": "float", "is_callable": False},
    "classroom.submissions.find_submissions": lambda: {"folder": _tmp_dir(),
                                                       "lab": "lab1_rooflines"},
    "classroom.submissions.read_submission": lambda: {"path": _notebook_file()},
    "classroom.submissions.code_digest": lambda: {"cells": ["x = 1", "print(x)"]},
    "classroom.submissions.row_names": lambda: {"stems": ["ada", "x y"],
                                                "entries": ["ada.ipynb", "x y.ipynb"]},
    "classroom.submissions.Submission": lambda: {"student": "ada", "entry": "ada.ipynb",
                                                 "notebook": None},
    "classroom.submissions.SubmittedNotebook": lambda: {"assignment": "lab1_rooflines",
                                                        "code_cells": ("x = 1",)},
    "classroom.grade.flag_identical": lambda: {
        "rows": [{"student": "ada"}, {"student": "bob"}, {"student": "cy"}],
        "digests": ["a1", "a1", None], "handout": "h0"},
    "classroom.grade.spreadsheet_safe": lambda: {"text": "=1+1"},
    "classroom.grade.write_csv": lambda: {"path": _tmp_dir() / "grades.csv",
                                          "questions": ["q1"], "rows": [{"student": "ada"}]},
    "classroom.grade.write_csv_to": lambda: {"handle": io.StringIO(), "questions": ["q1"],
                                             "rows": [{"student": "ada", "notes": "\x1b[2K"}]},
    "classroom.grade.Settings": lambda: {"timeout_s": 60.0, "cell_timeout_s": 10.0,
                                         "memory_mb": 1024, "disk_mb": 64, "processes": 64,
                                         "cpus": 1.0},
    "classroom.grade.grade_one": lambda: {
        "lab_dir": _tmp_dir(), "submission": gpuperf.classroom.submissions.Submission(
            "ada", "ada.ipynb", None, "not a notebook"),
        "out_dir": _tmp_dir(), "settings": gpuperf.classroom.grade.Settings()},
    "classroom.student.OutputLog.follow": lambda: {"stream": _finished_pipe(), "heading": b">"},
    "classroom.student.Notebook": lambda: {"scratch": None,
                                           "limits": gpuperf.classroom.sandbox.Limits(),
                                           "deadline": 1e9, "cell_limit_s": 10.0},
    "classroom.student.Remote": lambda: {"notebook": _notebook_handle(),
                                         "handle": gpuperf.classroom.wire.Handle(1, "f", True),
                                         "generation": 0},
    "classroom.student.RemoteFunction": lambda: {
        "notebook": _notebook_handle(), "handle": gpuperf.classroom.wire.Handle(1, "f", True),
        "generation": 0},
    "classroom.student.CanaryAnswer": lambda: {"challenge": 7},
    "classroom.tester.load_tests": lambda: {"tests_dir": _tmp_dir()},
    "classroom.tester.reference_namespace": lambda: {"template": _notebook_file()},
    "classroom.tester.run_case": lambda: {"name": "q1", "code": ">>> 1 + 1\n2\n", "globs": {}},
    "classroom.tester.Case": lambda: {"code": ">>> 1\n1\n", "hidden": False, "points": 1.0},
    "classroom.kernel_source.kernel_names": lambda: {"cells": _KERNEL_CELLS},
    "classroom.kernel_source.kernel_source": lambda: {"cells": _KERNEL_CELLS, "kernel": "k"},
    "classroom.kernel_source.KernelSource": lambda: {
        "kernel": "k", "functions": (("k", 0, 1),), "cells": ((0, _KERNEL_CELLS[0]),),
        "modules": (("tl", "triton.language"),), "constants": (("N", 4),)},
    "classroom.kernel_source.KernelSource.from_data": lambda: {
        "data": gpuperf.classroom.kernel_source.kernel_source(_KERNEL_CELLS, "k").as_data()},
    "classroom.recount.CountingSandbox": lambda: {"start": lambda: None},
    "classroom.recount.CountedKernel": lambda: {
        "name": "k", "source": gpuperf.classroom.kernel_source.kernel_source(_KERNEL_CELLS, "k"),
        "sandbox": gpuperf.classroom.recount.CountingSandbox(lambda: None)},
    "classroom.tester.AnswerNamespace": lambda: {"references": {},
                                                 "notebook": _notebook_handle()},
    "classroom.tester.Grader": lambda: {
        "lab_dir": _tmp_dir(), "submission": _notebook_file(), "student": "ada",
        "report": io.BytesIO(), "timeout_s": 60.0, "cell_timeout_s": 10.0,
        "limits": gpuperf.classroom.sandbox.Limits()},
    "classroom.sandbox.Limits": lambda: {"memory_mb": 1024, "cpu_s": 60, "file_mb": 64,
                                         "disk_mb": 64},
    "classroom.sandbox.runner_process": lambda: {"scratch": None,
                                                 "limits": gpuperf.classroom.sandbox.Limits(),
                                                 "kind": "bwrap"},
    "classroom.sandbox.kill": lambda: {"process": None},
    "classroom.box.Box": lambda: {"folders": dict(_NOWHERE), "version": 1},
    "classroom.box.Box.create": lambda: {
        "where": gpuperf.classroom.box.Hierarchy(1, tuple(_NOWHERE.items())), "name": "x",
        "share": gpuperf.classroom.box.Share()},
    "classroom.box.Box.attach": lambda: {
        "spec": gpuperf.classroom.box.Box(dict(_NOWHERE), 1).spec()},
    "classroom.box.Hierarchy": lambda: {"version": 1, "parents": tuple(_NOWHERE.items())},
    "classroom.box.Share": lambda: {"memory_mb": 1024, "processes": 64, "cpus": 1.0},
    "classroom.box.remove_class_groups": lambda: {
        "where": gpuperf.classroom.box.Hierarchy(1, tuple(_NOWHERE.items()))},
    "classroom.box.tree_cpu_seconds": lambda: {"pid": os.getpid()},
    "classroom.text.printable": lambda: {"text": "caf\udce9 \x1b[2K"},
    "classroom.text.quoted": lambda: {"text": 'say "hi" | bye'},
    "classroom.trees.walk": lambda: {"folder": _tmp_dir()},
    "classroom.trees.remove_tree": lambda: {"path": _tmp_dir()},
    "classroom.trees.Entry": lambda: {"path": Path("a/b.ipynb"), "kind": "file", "depth": 2},
}  # fmt: skip

# Issue 37 (NVLink domains): an all-to-all over 4 domains of 8 GPUs.
GOOD_CALLS |= {
    "collectives.domain_all_to_all": lambda: {
        "message_bytes": 1e8, "gpus_per_domain": 8, "domains": 4, "intra_bandwidth": 9e11,
        "inter_bandwidth": 5e10,
    },
    "collectives.DomainAllToAll": lambda: {
        "message_bytes": 1e8, "gpus_per_domain": 8, "domains": 4, "intra_bandwidth": 9e11,
        "inter_bandwidth": 5e10,
    },
}  # fmt: skip
REFUSED_ONLY |= {
    "classroom.main": "the class-grading command line",
    "classroom.grade.main": "the class-grading command line",
    "classroom.grade.grade_one": "grades a submission in a sandbox (tests/test_classroom.py)",
    "classroom.tester.Grader": "grades a submission in a sandbox (tests/test_classroom.py)",
    "classroom.tester.AnswerNamespace": "fetches answers from a running sandbox",
    "classroom.student.Notebook": "starts sandboxed notebook processes",
    "classroom.student.Remote": "a handle on an object in a running sandbox",
    "classroom.student.RemoteFunction": "a handle on a function in a running sandbox",
    "classroom.sandbox.runner_process": "starts a sandboxed process",
    "classroom.sandbox.kill": "kills a process group",
    "classroom.box.Box.create": "makes cgroups (tests/test_classroom_hostile.py)",
    "classroom.tester.reference_namespace": "runs a handout's statements (test_classroom.py)",
}


def _counted_launch() -> Any:
    """A real gpuperf.counting.LaunchCount: a 64-element vector add counted in the interpreter."""
    from gpuperf.counting import count
    from gpuperf.kernels import vector_add

    return count(vector_add, _randn(64), _randn(64)).launch


def _traced_launch() -> Any:
    from gpuperf.counting import counting
    from gpuperf.kernels import vector_add

    with counting(trace=True) as launches:
        vector_add(_randn(64), _randn(64))
    return launches[0]


def _fields(make: Callable[[], Any]) -> Callable[[], dict[str, Any]]:
    return lambda: {
        f.name: getattr(obj, f.name) for obj in [make()] for f in dataclasses.fields(obj)
    }


GOOD_CALLS |= {
    "counting.count": lambda: {"fn": lambda: gpuperf.kernels.vector_add(_randn(64), _randn(64))},
    "counting.measure_if_gpu": lambda: {"fn": lambda: None},
    "counting.roofline_place": lambda: {"counted": _counted_launch(), "chip": "H100"},
    "counting.total": lambda: {"launches": [_counted_launch()]},
    "counting.received": lambda: {"launch": _counted_launch()},
    "counting.cell_file": lambda: {"index": 4},
    "counting.cell_number": lambda: {"file": "<cell 4>"},
    "counting.LaunchCount.from_data": lambda: {"data": _counted_launch().as_data()},
    "counting.Counted": lambda: {"result": None, "launches": (_counted_launch(),)},
    "counting.LaunchCount": _fields(_counted_launch),
    "counting.SiteCount": _fields(lambda: _counted_launch().sites[0]),
    "counting.RooflinePlacement": _fields(
        lambda: gpuperf.counting.roofline_place(_counted_launch(), "H100")),
    "counting.LaunchCount.site": lambda: {"line": _counted_launch().sites[0].line},
    "counting.l2_model": lambda: {"launch": _traced_launch(), "l2_bytes": 4096, "wave": 2},
    "counting.L2Model": lambda: {"l2_bytes": 4096, "wave": 2, "dram_bytes_read": 512,
                                 "requested_bytes_read": 512, "unique_bytes_read": 512},
    "widgets.counting.counted": lambda: {"kernel": "vector add", "n": 32, "tile": 16},
    "grading.efficiency.check_sector_efficiency": lambda: {
        "name": "vector_add",
        "launch": lambda: gpuperf.kernels.vector_add(_randn(64), _randn(64))},
    "grading.efficiency.check_traffic": lambda: {
        "name": "vector_add", "expected_bytes": 1024.0,
        "launch": lambda: gpuperf.kernels.vector_add(_randn(64), _randn(64))},
}  # fmt: skip
#: Counted.result is whatever the counted launcher returned: any value is an answer.
PASSTHROUGH |= {"counting.Counted"}

#: Data in, the same data out (encoded or decoded): NaN, -1 and a 400-digit int are answers.
PASSTHROUGH |= {"classroom.wire.encode", "classroom.wire.decode", "classroom.runner.Runner.encode",
                "CanaryAnswer.fingerprint"}  # fmt: skip
NOT_CALLED |= {
    "classroom.box.Box.join": "moves this very process into the box's cgroups",
    "classroom.recount.launch": "positional-only (spec, grid, then the kernel's own arguments); "
    "its checks are tested in test_classroom_efficiency",
    "classroom.recount.CountingSandbox.start": "starts a sandbox (a Notebook)",
    "classroom.recount.CountingSandbox.launch": "talks to a started counting sandbox",
    "classroom.runner.Runner.serve": "reads requests until its pipe closes",
    "classroom.runner.Runner.decode": "resolves handles of a running sandbox",
    "classroom.sandbox.Limits.apply": "sets this process's rlimits (memory, CPU time)",
    **{
        f"classroom.runner.Runner.op_{op}": "runs a student's code inside the sandbox"
        for op in ("exec", "get", "call", "getattr", "getitem", "unary", "canary")
    },
    "classroom.runner.main": "the sandbox's entry point: takes over stdin and stdout",
    "classroom.tester.main": "the grading process's entry point: takes over stdin and stdout",
}

#: Optimisation variants that must refuse and accept the same bad tensors.
VARIANTS: tuple[tuple[str, ...], ...] = (
    ("kernels.fusion.sin2cos2_fused", "kernels.fusion.sin2cos2_unfused"),
    ("kernels.copy.copy_coalesced", "kernels.copy.copy_strided"),
    ("kernels.transpose.transpose_naive", "kernels.transpose.transpose_tiled"),
    ("kernels.softmax.softmax", "kernels.softmax.softmax_online"),
    ("kernels.matmul.matmul", "kernels.matmul.matmul_naive"),
    ("kernels.divergence.divergence_uniform", "kernels.divergence.divergence_split"),
    ("kernels.decode_attention.decode_attention_plain",
     "kernels.decode_attention.decode_attention_split"),
    ("kernels.elementwise.relu", "kernels.elementwise.gelu"),
)  # fmt: skip


# --- the sweep -----------------------------------------------------------------------------------


def _label(module_name: str, name: str) -> str:
    return f"{module_name.removeprefix('gpuperf.')}.{name}".lstrip(".")


def _is_autograd_function(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return bool(torch) and inspect.isclass(obj) and issubclass(obj, torch.autograd.Function)


def _is_torch_module(cls: type) -> bool:
    torch = sys.modules.get("torch")
    return bool(torch) and issubclass(cls, torch.nn.Module)


def _fresh(value: Any) -> Any:
    return value() if callable(value) and not inspect.isclass(value) else value


def _init_fields(instance: Any) -> dict[str, Any] | None:
    if dataclasses.is_dataclass(instance):
        return {f.name: getattr(instance, f.name) for f in dataclasses.fields(instance) if f.init}
    if isinstance(instance, tuple) and hasattr(instance, "_asdict"):  # a NamedTuple
        return dict(instance._asdict())
    return None


def _instance_in(module: types.ModuleType, cls: type) -> Any:
    """An instance of ``cls`` among the module's constants (or their items), else None."""
    for value in vars(module).values():
        items = value.values() if isinstance(value, Mapping) else value
        for item in (value, *(items if isinstance(items, tuple | list) else ())):
            if type(item) is cls:
                return item
        if isinstance(value, Mapping):
            for item in value.values():
                if type(item) is cls:
                    return item
    return None


class Sweep:
    """Runs the contract over callables and the methods of what they return; collects problems."""

    def __init__(self, module_name: str) -> None:
        self.module_name = module_name
        self.problems: list[str] = []
        self.outcomes: dict[tuple[str, str, str], str] = {}
        self.instances: dict[type, Any] = {}
        self.known_seen: set[str] = set()
        self.calls = 0

    # -- arguments ---------------------------------------------------------------------------
    def good_kwargs(self, label: str, parameters: list[inspect.Parameter]) -> dict[str, Any]:
        if label in GOOD_CALLS:
            return GOOD_CALLS[label]()
        module = GOOD_BY_MODULE.get(self.module_name, {})
        kernels = self.module_name.startswith("gpuperf.kernels")
        kwargs: dict[str, Any] = {}
        for p in parameters:
            if p.default is not p.empty:
                continue
            if p.name in module:
                kwargs[p.name] = _fresh(module[p.name])
            elif kernels and p.name in KERNEL_TENSORS:
                kwargs[p.name] = KERNEL_TENSORS[p.name]()
            elif p.name in GOOD_ARGS:
                kwargs[p.name] = _fresh(GOOD_ARGS[p.name])
            else:
                raise LookupError(f"no good value for parameter {p.name!r}: add it to GOOD_CALLS")
        return kwargs

    # -- one callable ------------------------------------------------------------------------
    def record(self, label: str, outcome: Outcome, what: str) -> None:
        self.calls += 1
        if outcome.problem:
            if label in KNOWN_FAILURES:
                self.known_seen.add(label)
            else:
                self.problems.append(f"{label}({what}): {outcome.problem}")

    def sweep(self, label: str, fn: Callable[..., Any], signature_of: Any = None) -> Any:
        """The good call, then every parameter's bad values; returns the good call's result."""
        if label in NOT_CALLED:
            return None
        try:
            signature = inspect.signature(signature_of or fn)
        except (TypeError, ValueError):
            self.problems.append(f"{label}: no signature to sweep")
            return None
        every = [p for p in signature.parameters.values() if p.name not in ("self", "cls", "ctx")]
        positional = [p.name for p in every if p.kind is p.POSITIONAL_OR_KEYWORD]
        parameters = [p for p in every if p.kind is not p.VAR_POSITIONAL]
        keywords = [p for p in parameters if p.kind is p.VAR_KEYWORD]
        parameters = [p for p in parameters if p.kind is not p.VAR_KEYWORD]
        names = tuple(p.name for p in parameters)
        if any(p.kind is p.VAR_POSITIONAL for p in every):  # call() passes these by position
            names = (*positional, "*", *(n for n in names if n not in positional))
        try:
            good = self.good_kwargs(label, parameters)
        except LookupError as error:
            self.problems.append(f"{label}: {error}")
            return None
        refused_only = label in REFUSED_ONLY
        result = None
        if not refused_only:
            outcome = call(fn, good, parameters=names, shown={}, must_refuse=False, label=label)
            if outcome.error is not None and not outcome.problem:
                outcome.problem = (
                    f"the good call raised {type(outcome.error).__name__}: "
                    + str(outcome.error)[:160]
                )
            self.record(label, outcome, "good arguments")
            result = outcome.result
        for p in parameters:
            kind, optional = kind_of(p.name, p.annotation)
            allowed = ACCEPTED.get((label, p.name), ((), ""))[0]
            values: list[tuple[str, Any, bool]] = [
                (_short(v), v, not any(v is a or v == a for a in allowed)) for v in kind.refused
            ]
            if not optional and p.default is not None and kind is not ANYTHING:
                values.append(("None", None, True))
            if not refused_only:
                values += [(_short(v), v, False) for v in kind.edge]
                if kind is TENSOR and hasattr(good.get(p.name), "dtype"):
                    values += [(n, t, False) for n, t in tensor_edges(good[p.name])]
            for value_label, value, must_refuse in values:
                kwargs = {**good, p.name: value}
                outcome = call(fn, kwargs, parameters=names, shown={p.name: value},
                               must_refuse=must_refuse, label=label)  # fmt: skip
                if kind is TENSOR:  # the variants' contract: the same tensors, the same answer
                    self.outcomes[(label, p.name, value_label)] = (
                        "refused" if outcome.error is not None else "accepted"
                    )
                self.record(label, outcome, f"{p.name}={value_label}")
        if keywords and not refused_only:
            outcome = call(fn, {**good, "bogus_keyword": 1}, parameters=names,
                           shown={"bogus_keyword": 1}, must_refuse=True, label=label)  # fmt: skip
            self.record(label, outcome, "bogus_keyword=1")
        return result

    # -- what a good call returns ------------------------------------------------------------
    def note_result(self, result: Any) -> None:
        """Remember gpuperf objects a good call returned (and the first item of a tuple)."""
        items = [result]
        if isinstance(result, tuple | list) and result:
            items.append(result[0])
        if isinstance(result, Mapping) and result:
            items.append(next(iter(result.values())))
        for item in items:
            if type(item).__module__.startswith("gpuperf") and not inspect.isclass(item):
                self.instances.setdefault(type(item), item)

    def sweep_methods(self) -> None:
        """Every public method of every gpuperf class seen in a result, once per class."""
        done: set[type] = set()
        while True:
            pending = [c for c in self.instances if c not in done]
            if not pending:
                return
            for cls in pending:
                done.add(cls)
                instance = self.instances[cls]
                for name, _member in public_methods(cls):
                    label = f"{_label(cls.__module__, cls.__qualname__)}.{name}"
                    if _is_autograd_function(cls) or _is_torch_module(cls):
                        continue  # autograd's hooks (apply is swept), a torch module's forward
                    bound = getattr(instance, name)
                    if label in VAR_KEYWORD_HOOKS:
                        VAR_KEYWORD_HOOKS[label](self, label, instance)
                        continue
                    self.note_result(self.sweep(label, bound))

    # -- a whole module ----------------------------------------------------------------------
    def run(self) -> None:
        module = importlib.import_module(self.module_name)
        found = public_callables(module)
        functions = [(n, o) for n, o in found if not inspect.isclass(o)]
        classes = [(n, o) for n, o in found if inspect.isclass(o)]
        for name, fn in functions:
            self.note_result(self.sweep(_label(self.module_name, name), fn))
        for name, cls in classes:
            label = _label(self.module_name, name)
            if issubclass(cls, BaseException):
                continue  # an exception class: constructing one takes any message
            if _is_autograd_function(cls):
                self.note_result(self.sweep(label, cls.apply, signature_of=cls.forward))
                continue
            instance = self.instances.get(cls)
            if instance is None and label in INSTANCES:
                instance = INSTANCES[label]()
            if instance is None:  # a constant of the module: FAMILIES, TARGETS, ILLUSTRATIVE …
                instance = _instance_in(module, cls)
            fields = None if instance is None else _init_fields(instance)
            if fields is not None and label not in GOOD_CALLS:
                GOOD_CALLS[label] = lambda fields=fields: dict(fields)
            result = self.sweep(label, cls)
            # methods are swept on the realistic instance when there is one (a built figure)
            self.note_result(instance if label in INSTANCES or result is None else result)
        self.sweep_methods()
        self.check_variants()
        prefix, names = _label(self.module_name, ""), {n for n, _ in found}
        for label in KNOWN_FAILURES:  # strict: a fixed callable must leave the list
            mine = label.startswith(prefix) and label[len(prefix) :].split(".")[0] in names
            if mine and label not in self.known_seen:
                self.problems.append(f"{label}: in KNOWN_FAILURES but honours the contract now")

    def check_variants(self) -> None:
        for group in VARIANTS:
            if not all(g.startswith(self.module_name.removeprefix("gpuperf.")) for g in group):
                continue
            keys = {(p, v) for (label, p, v) in self.outcomes if label == group[0]}
            for param, value in sorted(keys):
                seen = {g: self.outcomes.get((g, param, value)) for g in group}
                if None not in seen.values() and len(set(seen.values())) > 1:
                    self.problems.append(
                        f"variants disagree on {param}={value}: "
                        + ", ".join(f"{g.rsplit('.', 1)[1]} {o} it" for g, o in seen.items())
                    )


# --- methods taking **values ---------------------------------------------------------------------

#: Values outside any control's options (a value equal to an option is skipped).
BAD_CONTROL_VALUES = (None, "x", 10**400, NAN, -1, 12345.5, (1, 2), True)


def _sweep_step(sweep: Sweep, label: str, explorer: Any) -> None:
    """``Explorer.step(name=value)``: a value outside the control's options names the control
    and its options, and leaves every control as it was."""
    for name, control in explorer.controls.items():
        for value in BAD_CONTROL_VALUES:
            if _valid_control_value(control, value):
                continue
            before = explorer.values()
            outcome = call(explorer.step, {name: value}, parameters=(name,), shown={name: value},
                           must_refuse=True, label=label)  # fmt: skip
            sweep.record(label, outcome, f"{name}={_short(value)}")
            if explorer.values() != before:
                sweep.problems.append(f"{label}({name}={_short(value)}) changed the controls")
    outcome = call(explorer.step, {"bogus_control": 1}, parameters=(), shown={"bogus_control": 1},
                   must_refuse=True, label=label)  # fmt: skip
    sweep.record(label, outcome, "bogus_control=1")


def _valid_control_value(control: Any, value: Any) -> bool:
    """Whether a control accepts ``value``, judged from the widget itself (not from gpuperf's
    check under test): one of its options, or a number inside a slider's range."""
    options = getattr(control, "options", None)
    if options is not None:
        values = [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in options]
        return any(type(o) is type(value) and o == value for o in values)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        value = float(value)
    except OverflowError:  # an int beyond float range
        return False
    low, high = control.min, control.max
    if getattr(control, "base", None) is not None:  # a log slider: min and max are exponents
        low, high = control.base**low, control.base**high
    return math.isfinite(value) and low <= value <= high


def _sweep_values(sweep: Sweep, label: str, explorer: Any) -> None:
    """``StaticExplorer.rows(table, **values)`` and ``.note(**values)``: good values answer,
    values outside a control's values are refused."""
    method = getattr(explorer, label.rsplit(".", 1)[1])
    values = {c.name: c.values[c.initial] for c in explorer.controls}
    extra = {"table": next(iter(explorer._tables))} if label.endswith("rows") else {}
    outcome = call(method, {**extra, **values}, parameters=tuple(values), shown={},
                   must_refuse=False, label=label)  # fmt: skip
    sweep.record(label, outcome, "good arguments")
    for name in values:
        for value in BAD_CONTROL_VALUES:
            if any(type(v) is type(value) and v == value for v in explorer._by_name[name].values):
                continue
            outcome = call(method, {**extra, **values, name: value}, parameters=tuple(values),
                           shown={name: value}, must_refuse=True, label=label)  # fmt: skip
            sweep.record(label, outcome, f"{name}={_short(value)}")
    if extra:
        for table in (None, 1, "no such table"):
            outcome = call(method, {**values, "table": table}, parameters=("table",),
                           shown={"table": table}, must_refuse=True, label=label)  # fmt: skip
            sweep.record(label, outcome, f"table={table!r}")


def _sweep_replace(sweep: Sweep, label: str, chip: Any) -> None:
    """``Chip.replace(**changes)``: every field's bad values are refused like the constructor's."""
    fields = {f.name: f for f in dataclasses.fields(chip)}
    for name, field in fields.items():
        kind, optional = kind_of(name, field.type)
        for value in (*kind.refused, *([] if optional else [None])):
            outcome = call(chip.replace, {name: value}, parameters=tuple(fields),
                           shown={name: value}, must_refuse=True, label=label)  # fmt: skip
            sweep.record(label, outcome, f"{name}={_short(value)}")
    outcome = call(chip.replace, {"bogus_field": 1}, parameters=tuple(fields),
                   shown={"bogus_field": 1}, must_refuse=True, label=label)  # fmt: skip
    sweep.record(label, outcome, "bogus_field=1")


VAR_KEYWORD_HOOKS: dict[str, Callable[[Sweep, str, Any], None]] = {
    "widgets.live.Explorer.step": _sweep_step,
    "vega.StaticExplorer.rows": _sweep_values,
    "vega.StaticExplorer.note": _sweep_values,
    "hardware.Chip.replace": _sweep_replace,
}


# --- the tests -----------------------------------------------------------------------------------

MODULE_NAMES = public_module_names()


#: Public callables missing from their module's ``__all__`` in a module another engineer owns
#: (the entry fails the test once it is fixed, so that it gets removed).
KNOWN_UNEXPORTED: dict[str, str] = {}


def test_every_public_callable_is_exported():
    """``__all__`` lists every public function and class of every module (STYLE §16)."""
    missing = set()
    for name in MODULE_NAMES:
        module = importlib.import_module(name)
        exported = set(getattr(module, "__all__", ()))
        missing |= {f"{name}.{n}" for n, _ in public_callables(module) if n not in exported}
    assert not missing - set(KNOWN_UNEXPORTED), f"public but not in __all__: {sorted(missing)}"
    fixed = set(KNOWN_UNEXPORTED) - missing
    assert not fixed, f"exported now, remove from KNOWN_UNEXPORTED: {sorted(fixed)}"


def test_the_tables_name_only_what_exists():
    """A stale entry would silently stop covering a callable."""
    labels = {
        _label(name, n)
        for name in MODULE_NAMES
        for n, _ in public_callables(importlib.import_module(name))
    }
    for table in (GOOD_CALLS, INSTANCES, REFUSED_ONLY, NOT_CALLED, KNOWN_FAILURES):
        stale = {key for key in table if key.rsplit(".", 1)[0] not in labels and key not in labels}
        assert not stale, f"stale entries: {sorted(stale)}"


@pytest.mark.parametrize("module_name", MODULE_NAMES)
def test_every_public_name_honours_the_contract(module_name):
    sweep = Sweep(module_name)
    try:
        sweep.run()
    finally:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            plt.close("all")
    assert not sweep.problems, (
        f"{len(sweep.problems)} of {sweep.calls} calls broke the contract:\n"
        + "\n".join(sweep.problems[:60])
    )


# --- the sweep can fail --------------------------------------------------------------------------


def _planted_module() -> types.ModuleType:
    """A module of planted bugs, each of a kind the sweep must report, and one correct function."""
    from gpuperf._validate import positive_float, positive_int
    from gpuperf.kernels.flash_attention import FlashConfig

    def correct(n: int) -> float:
        return 1.0 / positive_int("n", n)

    def crash(n: int) -> float:
        return 1.0 / positive_int("n", n, minimum=0)  # n = 0: ZeroDivisionError

    def silent(n: int) -> float:
        return abs(float(n))  # True and "4" answer

    def unclear(x: float) -> float:  # x = 0: numpy's LinAlgError, not gpuperf's
        return float(np.linalg.inv(np.array([[positive_float("x", x, allow_zero=True)]]))[0, 0])

    def hang(n: int) -> int:
        n = positive_int("n", n, minimum=0)
        while n == 0:
            pass
        return n

    def nan_result(x: float) -> float:
        return math.nan if positive_float("x", x, allow_zero=True) == 0 else 1.0

    def falsy_default(config: FlashConfig | None = None) -> int:
        return (config or FlashConfig()).BLOCK_M  # config=0 is taken for "the default"

    module = types.ModuleType("gpuperf.planted_bugs")
    for fn in (correct, crash, silent, unclear, hang, nan_result, falsy_default):
        fn.__module__ = module.__name__
        setattr(module, fn.__name__, fn)
    return module


def test_the_sweep_catches_planted_bugs(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "CALL_LIMIT_S", 0.5)
    monkeypatch.setitem(sys.modules, "gpuperf.planted_bugs", _planted_module())
    sweep = Sweep("gpuperf.planted_bugs")
    sweep.run()
    report = "\n".join(sweep.problems)
    expected = {
        "planted_bugs.crash(n=0): CRASH: ZeroDivisionError",
        "planted_bugs.silent(n=True): SILENT",
        "planted_bugs.silent(n='4'): SILENT",
        "planted_bugs.unclear(x=0): UNCLEAR: LinAlgError",
        "planted_bugs.hang(n=0): SLOW",
        "planted_bugs.nan_result(x=0): SILENT: insane result",
        "planted_bugs.falsy_default(config=0): SILENT",
    }
    for problem in expected:
        assert problem in report, f"the sweep missed {problem!r}:\n{report}"
    assert "planted_bugs.correct" not in report, report


# --- answers checked against an independent computation (hypothesis) -------------------------
# The sweep checks that answers are sane; these check that they are right, on random inputs,
# against a slower or differently derived computation. Few examples each: seconds in all.

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gpuperf import divergence, hardware, memory, recompute, roofline, tiling, units  # noqa: E402

PROPERTY = settings(
    max_examples=40, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
BLOCKS = st.sampled_from([16, 32, 64, 128, 256])
CHIP_NAMES = st.sampled_from([*hardware.chip_names(), "h100", "a100", "v5e", "rtx4090"])
PRECISION_NAMES = st.sampled_from(units.PRECISIONS)
POSITIVE_FLOATS = st.one_of(st.floats(1e-6, 1e15), st.integers(1, 10**6))
BIG_SIZES = st.one_of(st.integers(1, 5000), st.integers(1, 2**53))
SMALL_COUNTS = st.integers(1, 64)


def _op_costs() -> st.SearchStrategy:
    finite = st.one_of(st.just(0.0), st.floats(1e-6, 1e18))  # (below 1e-100 is refused)
    return st.one_of(
        st.builds(gpuperf.cost.matmul, SMALL_COUNTS, SMALL_COUNTS, SMALL_COUNTS, PRECISION_NAMES),
        st.builds(gpuperf.cost.elementwise, st.integers(1, 2**40)),
        st.builds(gpuperf.cost.OpCost, finite, POSITIVE_FLOATS, finite),
    )


@PROPERTY
@given(sizes=st.lists(BIG_SIZES, min_size=1, max_size=5), bm=BLOCKS, bn=BLOCKS, chip=CHIP_NAMES)
def test_curves_equal_the_scalar_versions_at_every_size(sizes, bm, bn, chip):
    tile = tiling.tile_efficiency_curve(sizes, bm, bn)
    assert tile.tolist() == [tiling.tile_efficiency(s, s, bm, bn) for s in sizes]
    if hardware.chip(chip).is_gpu:
        wave = tiling.wave_efficiency_curve(np.array(sizes), bm, bn, chip)
        assert wave.tolist() == [tiling.wave_efficiency(s, s, bm, bn, chip) for s in sizes]
        for s in sizes:
            q = tiling.wave_quantization(s, s, bm, bn, chip)
            assert 0 < q.tail_tiles <= q.slots_per_wave


@PROPERTY
@given(warps=st.integers(1, 64), period=st.integers(1, 100), warp_size=st.sampled_from([8, 32]))
def test_periodic_branch_equals_the_per_thread_count(warps, period, warp_size):
    n = warps * warp_size
    fast = divergence.periodic_branch(n, period, warp_size).paths_per_warp
    slow = divergence.warp_divergence((np.arange(n) // period) % 2, warp_size).paths_per_warp
    assert fast.tolist() == slow.tolist()


@PROPERTY
@given(n_layers=st.integers(1, 120), activation=st.floats(0.5, 20), ratio=st.floats(0.01, 1))
def test_best_checkpoint_every_equals_brute_force(n_layers, activation, ratio):
    boundary = activation * ratio
    peaks = {
        k: recompute.checkpointing(n_layers, activation, boundary, 0, k).peak_bytes
        for k in range(1, n_layers + 1)
    }
    lowest = min(peaks.values())
    expected = max(k for k, peak in peaks.items() if peak == lowest)
    assert recompute.best_checkpoint_every(n_layers, activation, boundary) == expected


@PROPERTY
@given(op=_op_costs(), chip=CHIP_NAMES, precision=PRECISION_NAMES)
def test_time_bounds_are_ordered(op, chip, precision):
    the_chip = hardware.chip(chip)
    if precision not in the_chip.precisions:
        with pytest.raises(ValueError, match=f"no {precision} support"):
            roofline.time_bounds(op, the_chip, precision)
        return
    b = roofline.time_bounds(op, the_chip, precision)
    assert b.lower_s <= b.upper_s <= 2 * b.lower_s * (1 + 1e-12)
    assert b.attainable_flops_per_s <= the_chip.peak_flops(precision) * (1 + 1e-12)


@PROPERTY
@given(
    sizes=st.lists(st.floats(0, 1e12), min_size=2, max_size=6),
    bandwidth=POSITIVE_FLOATS,
    latency=st.one_of(st.just(0.0), st.floats(1e-12, 1e-3)),
)
def test_effective_bandwidth_is_below_the_peak_and_monotone(sizes, bandwidth, latency):
    sizes = np.sort(np.array(sizes))
    achieved = memory.effective_bandwidth(sizes, bandwidth, latency)
    assert np.all(achieved <= bandwidth * (1 + 1e-12))
    assert np.all(np.diff(achieved) >= 0)


@PROPERTY
@given(
    chip=CHIP_NAMES,
    precision=PRECISION_NAMES,
    bandwidth=st.one_of(POSITIVE_FLOATS, st.sampled_from([0, -1, NAN, INF, True, "1", None])),
)
def test_ridge_point_bandwidth_is_explicit(chip, precision, bandwidth):
    the_chip = hardware.chip(chip)
    if precision not in the_chip.precisions:
        return
    peak = the_chip.peak_flops(precision)
    assert the_chip.ridge_point(precision) == peak / the_chip.hbm_bandwidth
    if bandwidth is None:
        return
    valid = isinstance(bandwidth, int | float) and not isinstance(bandwidth, bool)
    if valid and math.isfinite(bandwidth) and bandwidth > 0:
        assert the_chip.ridge_point(precision, bandwidth) == peak / bandwidth
    else:  # 0, -1, nan, True and "1" are errors, never a silent fall-back to HBM
        with pytest.raises((ValueError, TypeError), match="bandwidth="):
            the_chip.ridge_point(precision, bandwidth)
