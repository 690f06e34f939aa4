"""The public API's contract, fuzzed with hypothesis (issue 15).

Every public calculator and result class — found by introspection, so a function is covered
the day it is added — is called with arguments drawn from sensible values and from nonsense
(``True`` as a size, ``"no"`` as a flag, ``nan``, ``10**400``, ``""`` as a precision, ...).
Each call must end in one of two ways, within a bounded time:

* a **clear error**: ``ValueError``, ``TypeError`` or ``KeyError`` raised by gpuperf's own code
  (not from inside numpy), whose message names the argument or shows its value; or
* a **correct answer**: every number in the result (fields, properties, arrays) finite and
  non-negative, every property of a result object computable.

Widget constructors and :meth:`Explorer.step` must name the control and its options. A few
properties check answers against an independent computation (vector vs scalar curves, the
closed-form divergence count vs the per-thread one, the checkpoint search vs brute force).

Deterministic in CI: ``derandomize=True`` and no example database; each call runs under a
``SIGALRM`` time limit, so a hang fails the test instead of stalling CI.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import math
import numbers
import re
import signal
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuperf
from gpuperf import (
    asynchrony,
    attention,
    collectives,
    cost,
    divergence,
    hardware,
    inference,
    memory,
    microscaling,
    nccl,
    numerics,
    parallelism,
    profiling,
    recompute,
    roofline,
    scrub,
    serving,
    summation,
    tiling,
    units,
    warpspec,
)
from gpuperf._validate import MAX_COUNT

pytestmark = pytest.mark.slow  # fuzzes every public callable: a minute of CPU

MODULES = (hardware, units, cost, roofline, tiling, memory, attention, recompute, divergence,
           profiling, scrub, parallelism, collectives, inference, asynchrony,
           numerics, nccl, serving, warpspec, microscaling, summation)  # fmt: skip
PACKAGE_DIR = Path(gpuperf.__file__).resolve().parent

#: Public callables left to their own tests, with the reason.
NOT_FUZZED = {
    "gpuperf.asynchrony.regenerate": "compiles every kernel for minutes: test_asynchrony.py",
    "gpuperf.warpspec.regenerate": "compiles every case for a minute: test_warpspec.py",
    "gpuperf.warpspec.compile_facts": "runs the compiler in a subprocess: test_warpspec.py",
    "gpuperf.profiling.profile": "runs the torch profiler (seconds a call): test_profiling.py",
    "gpuperf.recompute.saved_tensor_bytes": "runs autograd on a callable: test_recompute.py",
    "gpuperf.recompute.transformer_layer": "builds a torch module: test_recompute.py",
    "gpuperf.scrub.Scrubber": "renders matplotlib frames: test_scrub.py",
    "gpuperf.scrub.scrubber": "renders matplotlib frames: test_scrub.py",
}

#: Seconds one call may take before it counts as a hang.
CALL_LIMIT_S = 5.0
EXAMPLES = 80

FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def public_callables(module: Any) -> list[tuple[str, Any]]:
    """Functions and classes a module defines whose names do not start with ``_``."""
    found = []
    for name, obj in vars(module).items():
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if getattr(obj, "__module__", None) == module.__name__:
            found.append((name, obj))
    return sorted(found)


FUZZED = [
    pytest.param(obj, id=f"{module.__name__.split('.')[-1]}.{name}")
    for module in MODULES
    for name, obj in public_callables(module)
    if f"{module.__name__}.{name}" not in NOT_FUZZED
]


# --- the contract ---------------------------------------------------------------------------


class CallTimeoutError(AssertionError):
    """A call ran past :data:`CALL_LIMIT_S` (an AssertionError, so hypothesis shrinks it)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    if not hasattr(signal, "setitimer"):  # no SIGALRM (Windows): measure instead
        start = time.perf_counter()
        yield
        if time.perf_counter() - start > seconds:
            raise CallTimeoutError(f"call took more than {seconds} s")
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise CallTimeoutError(f"call took more than {seconds} s (a hang?)")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _snippets(value: Any) -> list[str]:
    """Ways a message may show a value: its repr, str, or their first 20 characters."""
    if isinstance(value, hardware.Chip):
        return [value.name]
    texts = []
    for text in (repr(value), str(value)):
        if text:
            texts += [text, text[:20]]
    return texts


def assert_clear_error(
    error: BaseException, kwargs: Mapping[str, Any], parameters: tuple[str, ...] = ()
) -> None:
    """Raised by gpuperf (innermost frame in the package) and naming an argument or value.

    ``parameters`` are the function's other parameter names: a message may name one left at
    its default (``precision='bf16': T4 has no bf16 support``).
    """
    frames = traceback.extract_tb(error.__traceback__)
    assert frames, f"{type(error).__name__} raised outside any frame: {error!r}"
    origin = Path(frames[-1].filename).resolve()
    assert PACKAGE_DIR in origin.parents, (
        f"{type(error).__name__}({error}) came from {origin}, not from gpuperf's checks"
    )
    message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    assert message.strip(), f"{type(error).__name__} with an empty message"
    spellings = {
        form for name in (*kwargs, *parameters) for form in (name, name.replace("_", " "))
    }
    named = any(re.search(rf"(?<![\w.]){re.escape(form)}(?!\w)", message) for form in spellings)
    shown = any(
        snippet in message
        for value in kwargs.values()
        if not isinstance(value, bool | type(None))
        for snippet in _snippets(value)
        if len(snippet) >= 2
    )
    assert named or shown, f"message names no argument {sorted(kwargs)}: {message!r}"


#: Results whose numbers may legitimately be negative (scores, values of v) or -inf (a mask).
SIGNED = {"naive_attention", "OnlineSoftmaxStep", "online_softmax_steps"}
#: Functions documented to return ``math.inf`` as an answer ("never compute-bound").
INFINITE_OK = {"critical_batch_size"}
#: Rounded values keep their sign and overflow to ±inf as the cast does (fp16: 70000 → inf).
SIGNED |= {"round_to", "quantize"}
#: Values stored in a scaled format, and sums of signed terms, keep their sign.
SIGNED |= {"quantize_mx", "quantize_nvfp4", "block_quantize", "round_to_format", "running_sum",
           "blocked_sum", "pairwise_sum"}  # fmt: skip
#: A worst-case bound past e^700 is documented as inf (no bound), like γ_n.
INFINITE_OK |= {"error_bound"}
#: γ_n = n·u / (1 − n·u) is documented as ``inf`` once n·u ≥ 1: no bound exists there.
INFINITE_OK |= {"summation_bound"}
#: Result fields documented to hold ``math.inf`` entries (the same γ_n, one per length); the
#: other entries are still checked.
INFINITE_FIELDS = {"DotErrors.bound", "SummationErrors.bound"}
#: Fields and properties that are signed by definition (an unbiased exponent: 1 − bias < 0).
SIGNED_FIELDS = {"FloatFormat.min_exponent", "ElementFormat.emax"}


def _finite_part(value: Any) -> Any:
    """``value`` without its ``math.inf`` entries (for :data:`INFINITE_FIELDS`)."""
    if isinstance(value, tuple):
        return tuple(v for v in value if not (isinstance(v, float) and v == math.inf))
    return value


def assert_sane(value: Any, where: str, signed: bool = False, depth: int = 0) -> None:
    """Every number finite and ≥ 0 (or just not NaN when ``signed``); properties evaluate."""
    assert depth < 6, f"{where}: result nested too deeply"
    if value is None or isinstance(value, bool | np.bool_ | str | bytes):
        return
    if isinstance(value, numbers.Real):
        number = float(value)
        if signed:
            assert not math.isnan(number), f"{where} is NaN"
        else:
            assert math.isfinite(number) and number >= 0, f"{where}={value!r}"
        return
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            for i, item in enumerate(value.ravel()[:64]):
                assert_sane(item, f"{where}[{i}]", signed, depth + 1)
        elif np.issubdtype(value.dtype, np.number):
            as_float = value.astype(float)
            assert not np.any(np.isnan(as_float)), f"{where} holds NaN"
            if not signed:
                assert np.all(np.isfinite(as_float)) and np.all(as_float >= 0), f"{where}={value}"
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            assert_sane(item, f"{where}[{key!r}]", signed, depth + 1)
        return
    if isinstance(value, tuple | list):
        for i, item in enumerate(value[:64]):
            assert_sane(item, f"{where}[{i}]", signed, depth + 1)
        return
    if dataclasses.is_dataclass(value):
        signed = signed or type(value).__name__ in SIGNED
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            key = f"{type(value).__name__}.{f.name}"
            if key in INFINITE_FIELDS:
                item = _finite_part(item)
            assert_sane(item, f"{where}.{f.name}", signed or key in SIGNED_FIELDS, depth + 1)
        for name, member in inspect.getmembers(type(value)):
            if isinstance(member, property):
                key = f"{type(value).__name__}.{name}"
                item = getattr(value, name)
                assert_sane(item, f"{where}.{name}", signed or key in SIGNED_FIELDS, depth + 1)


def honour_contract(fn: Any, kwargs: dict[str, Any]) -> Any:
    """Call ``fn(**kwargs)``: a clear error (returns None) or a sane result (returned)."""
    name = getattr(fn, "__name__", repr(fn))
    with time_limit(CALL_LIMIT_S):
        try:
            result = fn(**kwargs)
        except (ValueError, TypeError, KeyError) as error:
            assert_clear_error(error, kwargs, tuple(inspect.signature(fn).parameters))
            return None
        if not (name in INFINITE_OK and result == math.inf):
            assert_sane(result, name, signed=name in SIGNED)
    return result


# --- strategies ------------------------------------------------------------------------------

NAN, INF = math.nan, math.inf
#: Values that are wrong for almost every argument.
NONSENSE = st.sampled_from(
    [None, True, False, "64", "", "no", -1, 0, -2.5, 3.5, NAN, INF, -INF, 10**400, MAX_COUNT + 1,
     [4], (2, 3), {"a": 1}, np.array([1, 2]), b"x", 1e308]
)  # fmt: skip


def usually(good: st.SearchStrategy, bad: st.SearchStrategy = NONSENSE) -> st.SearchStrategy:
    """Mostly ``good`` values (so answers get checked), sometimes ``bad`` ones."""
    return st.one_of(good, good, good, good, bad)


COUNTS = st.one_of(
    st.integers(1, 64),
    st.integers(1, 10**6),
    st.sampled_from([2**k for k in range(4, 14)]),
    st.integers(1, 10**6).map(np.int64),
    st.integers(1, 4096).map(float),
    st.integers(2**31, MAX_COUNT),
)
SMALL_COUNTS = st.one_of(st.integers(1, 64), st.integers(1, 64).map(np.int32))
BLOCKS = st.sampled_from([16, 32, 64, 128, 256])
FLOATS = st.one_of(
    st.floats(1e-9, 1e18, allow_nan=False, allow_infinity=False),
    st.integers(1, 10**6),
    st.just(0.0),
)
POSITIVE_FLOATS = st.one_of(st.floats(1e-6, 1e15), st.integers(1, 10**6))
PRECISION_NAMES = st.sampled_from(units.PRECISIONS)
CHIP_NAMES = st.sampled_from([*hardware.chip_names(), "h100", "a100", "v5e", "rtx4090"])
CHIPS = st.one_of(CHIP_NAMES, st.sampled_from(hardware.chips()))
FLAGS = st.booleans()
TEXT = st.text(max_size=12)


def arrays(elements: st.SearchStrategy, min_size: int = 1, max_size: int = 6) -> Any:
    lists = st.lists(elements, min_size=min_size, max_size=max_size)
    return st.one_of(lists, lists.map(np.array), lists.map(tuple))


def matrices(rows: int = 4, cols: int = 4) -> st.SearchStrategy:
    shape = st.tuples(st.integers(1, rows), st.integers(1, cols))
    return shape.flatmap(
        lambda s: st.lists(st.floats(-20, 20), min_size=s[0] * s[1], max_size=s[0] * s[1]).map(
            lambda v: np.array(v).reshape(s)
        )
    )


def matrices_of(elements: st.SearchStrategy, rows: int, cols: int) -> st.SearchStrategy:
    """2-D float arrays of 1..rows × 1..cols ``elements``."""
    shape = st.tuples(st.integers(1, rows), st.integers(1, cols))
    return shape.flatmap(
        lambda s: st.lists(elements, min_size=s[0] * s[1], max_size=s[0] * s[1]).map(
            lambda v: np.array(v, dtype=float).reshape(s)
        )
    )


#: Format names and formats of gpuperf.numerics (spellings it accepts), and near misses.
FORMAT_NAMES = st.one_of(
    st.sampled_from([*numerics.FORMATS, "FP16", "fp8-e4m3"]),
    st.sampled_from(list(numerics.FORMATS.values())),
)
BAD_FORMAT_NAMES = st.sampled_from(["fp12", "", None, 16, "int8", "e3m4", True])


#: Every opcode of the stored compiles (the tensor-core ones name an .mMnNkK. shape).
OPCODES = sorted(
    {name for row in asynchrony.COUNTS.values() for name in (*row[3], *row[5])}
    | {"fma.rn.f32", "cp.async.commit_group", "mma.sync.aligned.m8n8k4.row.col.f16"}
)
BAD_OPCODES = ["", "mma.sync.aligned.m0n8k16.f16", "wgmma.mma_async.m64n" + "9" * 30 + "k16.f16",
               "mma.sync.m16n8k16", "tcgen05.mma.cta_group::1.kind::f16"]  # fmt: skip
PTX_PAIRS = st.one_of(
    st.lists(st.tuples(st.sampled_from(OPCODES), st.integers(0, 1000)), max_size=8),
    st.dictionaries(st.sampled_from(OPCODES), st.integers(0, 1000), max_size=8),
)
BAD_PTX_PAIRS = [[("mbarrier.init", -1)], [("x.shared::cluster", 10**30)], [("mma", 2.5)],
                 [(3, 1)], [("mbarrier.init", True)], [("wgmma", "7")], "mbarrier"]  # fmt: skip
FAMILY_COUNTS = st.fixed_dictionaries({key: st.integers(0, 100) for key in asynchrony.FAMILY_KEYS})


def fake_reports() -> st.SearchStrategy:
    """Objects shaped like :class:`gpuperf.inspect.CompileReport` (what ``entry`` reads)."""
    from types import SimpleNamespace

    return st.builds(
        SimpleNamespace,
        compiled=st.booleans(),
        fits=st.booleans(),
        explanation=st.just("fuzzed"),
        ptx_instructions=usually(PTX_PAIRS.map(lambda p: tuple(dict(p).items()))),
        shared_memory_bytes=usually(st.integers(0, 1 << 20)),
        registers_per_thread=usually(st.integers(1, 255)),
        tensor_core_instructions=usually(st.lists(st.sampled_from(OPCODES)).map(tuple)),
    )


def op_costs() -> st.SearchStrategy:
    return st.one_of(
        st.builds(cost.matmul, SMALL_COUNTS, SMALL_COUNTS, SMALL_COUNTS, PRECISION_NAMES),
        st.builds(cost.elementwise, COUNTS),
        st.builds(cost.OpCost, FLOATS, POSITIVE_FLOATS, FLOATS),
    )


def chip_kwargs() -> st.SearchStrategy:
    """A real chip's fields, with one field sometimes replaced by nonsense (Chip.replace)."""
    fields = [f.name for f in dataclasses.fields(hardware.Chip)]

    def build(the_chip: hardware.Chip, field: str, value: Any, mutate: bool) -> dict:
        kwargs = {f: getattr(the_chip, f) for f in fields}
        kwargs["peak_flops_per_s"] = dict(the_chip.peak_flops_per_s)
        if mutate:
            kwargs[field] = value
        return kwargs

    return st.builds(
        build, st.sampled_from(hardware.chips()), st.sampled_from(fields), NONSENSE, st.booleans()
    )


def by_name(name: str) -> st.SearchStrategy | None:
    """Strategy for a parameter, chosen by its name (the API's naming is consistent)."""
    if name.endswith("precision"):
        return usually(PRECISION_NAMES, st.sampled_from(["", "FP16", "fp12", None, 16, "fp16 "]))
    if name in ("chip", "chip_name"):
        return usually(CHIPS, st.sampled_from(["T5", "", None, 3, "tpu"]))
    if name in ("causal", "fused", "affine", "shared_b", "binary", "latency_clipped"):
        return usually(FLAGS, st.sampled_from(["no", "yes", None, 1, 0, "False"]))
    if name in ("block_m", "block_n", "block_k"):
        return usually(BLOCKS, st.sampled_from([48, 8, 0, 2**60 + 1, 12.0, "64"]))
    if name == "sizes":
        return usually(arrays(COUNTS))
    if name == "intensity":
        return usually(st.one_of(POSITIVE_FLOATS, arrays(POSITIVE_FLOATS)))
    if name in ("times_s",):
        return usually(arrays(FLOATS, min_size=2))
    if name in ("x", "row"):
        return usually(st.one_of(arrays(st.floats(-50, 50)), matrices()))
    if name in ("q", "k", "v"):
        return usually(matrices())
    if name in ("path_of_thread",):
        return usually(st.integers(1, 4).flatmap(
            lambda w: arrays(st.integers(0, 3), 32 * w, 32 * w)))  # fmt: skip
    if name == "paths_per_warp":
        return usually(arrays(st.integers(1, 32)).map(np.asarray))
    if name == "protocol":
        return usually(st.sampled_from(list(nccl.PROTOCOLS)), st.sampled_from(["LL64", ""]))
    if name in ("faster_small", "faster_large"):
        return usually(st.sampled_from(list(nccl.PROTOCOLS)))
    if name == "hardware":
        return usually(st.sampled_from(nccl.HARDWARE), st.sampled_from(["ib", 1]))
    if name == "stage":
        return usually(st.sampled_from(collectives.ZERO_STAGES), st.sampled_from([4, -1, "3"]))
    if name == "draft":
        return usually(st.sampled_from([serving.ILLUSTRATIVE_DRAFT, inference.ILLUSTRATIVE]))
    if name in ("acceptance",):
        return usually(st.floats(0, 1), st.sampled_from([1.5, -0.1, NAN]))
    if name in ("case",):
        return usually(st.sampled_from(list(warpspec.CASES)), st.sampled_from(["mm", ""]))
    if name == "ptx":
        return usually(st.sampled_from(["", ".reqntid 128\n{\n ret;\n}"]), NONSENSE)
    if name == "collective":
        return usually(st.sampled_from(collectives.COLLECTIVES), st.sampled_from(["ring", ""]))
    if name == "algorithm":
        return usually(st.sampled_from(collectives.ALGORITHMS), st.sampled_from(["butterfly", 1]))
    if name == "config":
        configs = [inference.ILLUSTRATIVE, inference.ILLUSTRATIVE.with_kv_heads(1)]
        return usually(st.sampled_from(configs))
    if name == "op":
        return usually(op_costs())
    if name == "tiled":
        return usually(st.builds(tiling.tiled_matmul, SMALL_COUNTS, SMALL_COUNTS, SMALL_COUNTS,
                                 BLOCKS, BLOCKS, BLOCKS))  # fmt: skip
    if name == "implementation":
        return usually(st.sampled_from(attention.IMPLEMENTATIONS), st.sampled_from(["paged", 1]))
    if name == "generation":
        return usually(st.integers(1, 7), st.sampled_from([0, 8, True, "4", 4.5]))
    if name == "lanes":
        return usually(st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([3, 32, True, "16"]))
    if name == "version":
        return usually(st.sampled_from([1, 2]))
    if name == "element_bytes":
        return usually(st.sampled_from(memory.ELEMENT_BYTES), st.sampled_from([3, 32, True]))
    if name in ("warp_size",):
        return usually(st.sampled_from([32, 64, 16]), st.sampled_from([10**8, 0, 3.5, True]))
    if name in ("sector_bytes", "line_bytes"):
        return usually(st.sampled_from([32, 64, 128]))
    if name == "digits":
        return usually(st.integers(1, 17), st.sampled_from([0, 10**6, True]))
    if name in ("device_name",):
        return usually(st.sampled_from(["NVIDIA H100 80GB HBM3", "Tesla T4", "cpu"]), NONSENSE)
    if name == "device":
        return usually(st.sampled_from(["cpu", "cuda"]))
    if name in ("paths",):
        return usually(st.floats(1, 32))
    if name in ("offset", "every", "n_inputs", "registers_per_thread", "index", "start",
                "shared_memory_per_block_bytes"):  # fmt: skip
        return usually(st.one_of(st.just(0), SMALL_COUNTS))
    if name in ("n_layers",):
        return usually(st.one_of(SMALL_COUNTS, st.integers(1, 10**9)), st.sampled_from([1e30]))
    if name in ("n_threads",):
        return usually(st.integers(1, 2**12).map(lambda w: 32 * w), st.sampled_from([10**10]))
    if name in ("threads_per_block",):
        return usually(st.sampled_from([32, 64, 128, 256, 1024]))
    if name in ("peak_flops_per_s",):
        return usually(POSITIVE_FLOATS)
    if name in ("values", "addresses", "sectors"):
        return usually(arrays(st.integers(0, 64)).map(tuple))
    if name in ("labels", "sources"):
        return usually(arrays(TEXT).map(tuple))
    if name == "shapes":
        return usually(st.just(((2, 3),)))
    if name in ("output",):
        return st.none()
    if name in ("compute_capability",):
        return usually(st.sampled_from([(8, 0), (9, 0), (7, 5)]))
    if name in ("format",):  # scrub.control's formatter (a callable), numerics' format names
        return usually(st.one_of(st.just(str), FORMAT_NAMES), BAD_FORMAT_NAMES)
    if name in ("input_format", "accumulator"):
        return usually(FORMAT_NAMES, BAD_FORMAT_NAMES)
    if name == "exponent_bits":
        return usually(st.integers(2, 11), st.sampled_from([1, 12, 0, True, 5.5]))
    if name == "mantissa_bits":
        return usually(st.integers(1, 52), st.sampled_from([0, 53, True, 2.5]))
    if name == "lengths":
        return usually(
            st.one_of(st.integers(1, 4096), arrays(st.integers(1, 4096), max_size=4)),
            st.sampled_from([0, [0], [2**16 + 1], "64", 2.5, [], [True]]),
        )
    if name == "trials":
        return usually(st.integers(1, 64), st.sampled_from([0, 2000, 2**22, True, 1.5]))
    if name == "products":  # fp16 numbers: exact in fp32, as the emulation requires
        return usually(
            matrices_of(st.floats(0, 1000, width=16), rows=4, cols=64),
            st.sampled_from([np.full((1, 4), 60000.0), np.array([[1 + 2**-30]]), np.ones(0)]),
        )
    if name == "ptx_instructions":
        return usually(PTX_PAIRS, st.sampled_from(BAD_PTX_PAIRS))
    if name == "instruction":
        return usually(st.sampled_from(OPCODES), st.sampled_from(BAD_OPCODES))
    if name == "kernel":
        return usually(st.sampled_from(list(asynchrony.CASES)), st.sampled_from(["mm", ""]))
    if name == "target":
        return usually(st.sampled_from(asynchrony.TARGETS), st.sampled_from(["sm_70", "90"]))
    if name == "counts":
        return usually(FAMILY_COUNTS, st.sampled_from([{"mma_sync": 1}, {}]))
    if name == "report":
        return usually(fake_reports())
    return None


def by_annotation(annotation: str) -> st.SearchStrategy:
    text = str(annotation)
    optional = "None" in text
    if "tuple[ProfileRow" in text:
        good: st.SearchStrategy = st.just(())
    elif "Mapping" in text:
        good = st.dictionaries(PRECISION_NAMES, POSITIVE_FLOATS, min_size=1, max_size=3)
    elif "float" in text and "ndarray" in text:
        good = st.one_of(FLOATS, arrays(FLOATS))
    elif "ndarray" in text or text == "object":
        good = arrays(COUNTS)
    elif text.startswith("int") or text.startswith("'int") or "int |" in text:
        good = COUNTS
    elif "float" in text:
        good = FLOATS
    elif "bool" in text:
        good = FLAGS
    elif "str" in text:
        good = TEXT.filter(lambda s: s.strip())
    else:
        good = NONSENSE
    if optional:
        good = st.one_of(st.none(), good)
    return usually(good)


def kwargs_for(fn: Any) -> st.SearchStrategy:
    """Keyword arguments for ``fn``; parameters with a default are sometimes left out."""
    if fn is hardware.Chip:
        return chip_kwargs()
    parameters = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    required, optional = {}, {}
    for p in parameters:
        strategy = by_name(p.name)  # a strategy is always truthy: test for None, not `or`
        if strategy is None:
            strategy = by_annotation(p.annotation)
        (required if p.default is p.empty else optional)[p.name] = strategy
    return st.fixed_dictionaries(required, optional=optional)


# --- the properties --------------------------------------------------------------------------


def test_every_public_callable_is_exported():
    """``__all__`` lists every public function and class, so introspection sees them all."""
    for module in MODULES:
        exported = set(getattr(module, "__all__", ()))
        missing = {name for name, _ in public_callables(module)} - exported
        assert not missing, f"{module.__name__}.__all__ lacks {sorted(missing)}"


def test_the_fuzzed_set_is_the_whole_calculator_api():
    assert len(FUZZED) >= 90  # every calculator, result class and helper (a sanity floor)
    for key in NOT_FUZZED:
        module_name, _, name = key.rpartition(".")
        assert hasattr(__import__(module_name, fromlist=[name]), name), f"stale entry {key}"


@pytest.mark.parametrize("fn", FUZZED)
@FUZZ
@given(data=st.data())
def test_public_callable_honours_the_contract(fn, data):
    honour_contract(fn, data.draw(kwargs_for(fn), label="kwargs"))


# --- answers checked against an independent computation --------------------------------------

BIG_SIZES = st.one_of(st.integers(1, 5000), st.integers(1, MAX_COUNT))


@FUZZ
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


@FUZZ
@given(warps=st.integers(1, 64), period=st.integers(1, 100), warp_size=st.sampled_from([8, 32]))
def test_periodic_branch_equals_the_per_thread_count(warps, period, warp_size):
    n = warps * warp_size
    fast = divergence.periodic_branch(n, period, warp_size).paths_per_warp
    slow = divergence.warp_divergence((np.arange(n) // period) % 2, warp_size).paths_per_warp
    assert fast.tolist() == slow.tolist()


@FUZZ
@given(
    n_layers=st.integers(1, 120),
    activation=st.floats(0.5, 20),
    ratio=st.floats(0.01, 1),
)
def test_best_checkpoint_every_equals_brute_force(n_layers, activation, ratio):
    boundary = activation * ratio
    peaks = {
        k: recompute.checkpointing(n_layers, activation, boundary, 0, k).peak_bytes
        for k in range(1, n_layers + 1)
    }
    lowest = min(peaks.values())
    expected = max(k for k, peak in peaks.items() if peak == lowest)
    assert recompute.best_checkpoint_every(n_layers, activation, boundary) == expected


@FUZZ
@given(op=op_costs(), chip=CHIPS, precision=PRECISION_NAMES)
def test_time_bounds_are_ordered(op, chip, precision):
    the_chip = hardware.chip(chip)
    if precision not in the_chip.precisions:
        with pytest.raises(ValueError, match=f"no {precision} support"):
            roofline.time_bounds(op, the_chip, precision)
        return
    b = roofline.time_bounds(op, the_chip, precision)
    assert b.lower_s <= b.upper_s <= 2 * b.lower_s * (1 + 1e-12)
    assert b.attainable_flops_per_s <= the_chip.peak_flops(precision) * (1 + 1e-12)


@FUZZ
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


FLAGGED = [
    (cost.attention, dict(batch=1, heads=2, seq_len=64, head_dim=16), "causal"),
    (cost.attention_flops, dict(batch=1, heads=2, seq_len=64, head_dim=16), "causal"),
    (cost.softmax, dict(rows=4, cols=8), "fused"),
    (cost.layernorm, dict(rows=4, cols=8), "affine"),
    (cost.batched_matmul, dict(batch=2, m=4, n=4, k=4), "shared_b"),
    (attention.naive_attention, dict(q=np.ones((2, 2)), k=np.ones((2, 2)), v=np.ones((2, 2))),
     "causal"),
    (units.format_bytes, dict(n_bytes=1024), "binary"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fn", "kwargs", "flag"), FLAGGED, ids=lambda x: getattr(x, "__name__", "")
)
@FUZZ
@given(value=st.one_of(st.text(max_size=4), st.integers(), st.none(), st.floats()))
def test_flags_accept_only_booleans(fn, kwargs, flag, value):
    with pytest.raises(TypeError, match=rf"{flag}=.* must be True or False"):
        fn(**kwargs, **{flag: value})


@FUZZ
@given(chip=CHIPS, precision=PRECISION_NAMES, bandwidth=st.one_of(POSITIVE_FLOATS, NONSENSE))
def test_ridge_point_bandwidth_is_explicit(chip, precision, bandwidth):
    the_chip = hardware.chip(chip)
    if precision not in the_chip.precisions:
        return
    peak = the_chip.peak_flops(precision)
    assert the_chip.ridge_point(precision) == peak / the_chip.hbm_bandwidth
    if bandwidth is None:
        return
    try:
        value = float(bandwidth)
    except (TypeError, ValueError, OverflowError):
        value = math.nan
    valid = (
        not isinstance(bandwidth, bool | str | bytes)
        and isinstance(bandwidth, numbers.Real)
        and math.isfinite(value)
        and value > 0
    )
    if valid:
        assert the_chip.ridge_point(precision, bandwidth) == peak / value
    else:  # 0, -1 and nan are errors, never a silent fall-back to HBM
        with pytest.raises(ValueError, match="bandwidth="):
            the_chip.ridge_point(precision, bandwidth)


# --- widgets ---------------------------------------------------------------------------------

#: Values outside every control's options (or range), and a few near misses.
BAD_CONTROL_VALUES = st.sampled_from(
    [100, 48, 3, "FP16", "conv", "T5", True, None, -1, 1e30, NAN, "", (1, 2), 12345.5]
)


def _constructors() -> list[Any]:
    widgets = pytest.importorskip("gpuperf.widgets")
    pytest.importorskip("ipywidgets")
    from gpuperf.widgets import attention as wa
    from gpuperf.widgets import collectives as wco
    from gpuperf.widgets import inference as winf
    from gpuperf.widgets import memory as wm
    from gpuperf.widgets import parallelism as wp
    from gpuperf.widgets import recompute as wrc
    from gpuperf.widgets import tiles as wt
    from gpuperf.widgets import tricks as wr

    found = []
    for module in (widgets.roofline, wa, wm, wt, wr, wp, wrc, wco, winf):
        for name, obj in public_callables(module):
            if inspect.isfunction(obj) and name.endswith(("_explorer", "_calculator")):
                found.append(obj)
    return found


WIDGET_SETTINGS = settings(
    max_examples=20,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_widget_constructors_reject_bad_values():
    constructors = _constructors()
    assert len(constructors) >= 9

    @WIDGET_SETTINGS
    @given(data=st.data())
    def check(data):
        fn = data.draw(st.sampled_from(constructors), label="constructor")
        params = list(inspect.signature(fn).parameters)
        param = data.draw(st.sampled_from(params), label="argument")
        value = data.draw(BAD_CONTROL_VALUES, label="value")
        with time_limit(30):
            try:
                fn(**{param: value})
            except (ValueError, TypeError, KeyError) as error:
                assert_clear_error(error, {param: value})
                if "control" in str(error):
                    assert f"'{param}' control" in str(error)
                    assert "options:" in str(error) or "must be" in str(error)

    check()


@pytest.fixture(scope="module")
def explorer():
    pytest.importorskip("ipywidgets")
    from gpuperf.widgets import roofline_explorer

    return roofline_explorer()


def test_explorer_step_rejects_bad_values_and_keeps_state(explorer):
    @WIDGET_SETTINGS
    @given(
        name=st.sampled_from(["chip_name", "precision", "op", "tokens", "width"]),
        value=BAD_CONTROL_VALUES,
    )
    def check(name, value):
        before = explorer.values()
        options = [v for _, v in explorer.controls[name].options]
        if any(type(v) is type(value) and v == value for v in options):
            return
        with pytest.raises(
            ValueError, match=rf"{name}=.* is not an option of the '{name}' control; options: "
        ):
            explorer.step(**{name: value})
        assert explorer.values() == before

    check()
    # Good values still work, and the error lists what would have.
    assert "T4" in explorer.step(chip_name="T4", precision="fp16")
    with pytest.raises(ValueError, match=r"tokens=100 .* options: 1, 2, 4, 8"):
        explorer.step(tokens=100)
