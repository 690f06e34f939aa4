"""Checks for the graded labs: compare a student's answer with a reference and say what to fix.

The labs are otter-grader notebooks (``labs/``). Their tests call the helpers here instead of bare
``assert`` statements, so that a failing check reads like feedback a teaching assistant would
give: which quantity is off, by how much, and the likely slip ("your kernel wrote nothing past
element 1024: check the mask"). Every helper raises :class:`CheckError` (an ``AssertionError``),
which otter reports as a failed test with the message shown to the student.

Grading must survive bad submissions. A student answer that is still ``...``, raises, returns
garbage or never returns must cost that question's points and nothing else:

* :func:`answered` turns an untouched ``...`` placeholder into a clear message;
* :func:`call` runs a student function under a time limit (:func:`time_limit`) and turns any
  exception into a failed check that names the function;
* :class:`CellTimeLimit` is an otter plugin that limits every notebook cell during ``otter run``,
  so a top-level infinite loop fails its own cell instead of hanging the grader;
* :func:`padded` puts a kernel's tensors inside larger buffers filled with NaN, so an unmasked
  load or store lands in the padding instead of crashing the process, and
  :func:`check_padding` turns a write into the padding into "check the mask on your store".

Messages never give the answer away: a reference value is printed to two significant figures at
most (with the direction and rough size of the error), and a student's own objects are described
by their type unless they are plain numbers, strings or small containers of them (so a value whose
``__repr__`` does something clever runs no code in a check).

Hidden tests must not trust the notebook either. They import what they compare against from
``gpuperf`` inside the test, call :func:`integrity_check` (which fails visibly when
``math.isclose``, ``numpy.isclose``/``allclose``, ``torch.testing.assert_close``, otter's doctest
runner or this module's checks are not the originals recorded when grading began), and run their
body through :func:`run_hidden`, which loads the lab's ``hidden_tests.py`` from the autograder's
files and reports a failure in one student-safe sentence instead of otter's echo of the test code.

:func:`lab_grader` creates the ``grader`` object of a lab notebook. Inside Google Colab it also
installs otter-grader (without touching Colab's ipywidgets, numpy or torch) and downloads the
lab's public tests from the course repository, because otter cannot fetch tests by URL in Colab.

Nothing here imports torch at module level: the tensor helpers import it when called.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CellTimeLimit",
    "CheckError",
    "IntegrityError",
    "all_answered",
    "answer",
    "answered",
    "call",
    "check_attention",
    "check_choice",
    "check_close",
    "check_mapping",
    "check_padding",
    "check_tensor",
    "check_true",
    "install_otter_for_colab",
    "integrity_check",
    "lab_grader",
    "padded",
    "run_hidden",
    "safe_repr",
    "time_limit",
]

#: Where Colab fetches a lab's public tests from (``{url}/raw/{branch}/labs/{lab}/student/tests``).
REPOSITORY_URL = "https://github.com/gpuperf/gpuperf"
BRANCH = "main"
#: otter-grader version the labs were generated with; Colab installs the same one.
OTTER_VERSION = "7.0.0"
#: Installed in Colab with ``--no-deps``: otter-grader 7 declares ``ipywidgets>=8.1.5`` (upgrading
#: Colab's ipywidgets 7.7.1 breaks its widgets) and fica declares Sphinx (needed only for its
#: Sphinx extension). Neither needs anything else from its dependency list to check answers.
COLAB_NO_DEPS_PACKAGES = (f"otter-grader=={OTTER_VERSION}", "fica>=0.4.1")
#: What ``import otter`` and ``grader.check`` import besides Colab's own packages (found by
#: tracing otter 7.0.0's imports: ``otter.check.utils`` imports ipylab and wrapt,
#: ``otter.utils`` python-frontmatter, ``otter.check.logs`` dill, ``otter.execute`` nbconvert).
#: Installed *with* their dependencies, under a pip constraint that pins the versions of
#: ipywidgets, numpy, torch and matplotlib already installed, so nothing of Colab's is upgraded.
#: wrapt has no upper bound although otter 7.0.0 declares ``wrapt<2``: Colab ships wrapt 2.3.0,
#: whose ``wrapt.decorator`` (all otter uses) is unchanged, and a downgrade would change a
#: package Colab's own code imports (the Colab replica runs every check under 2.3.0).
COLAB_WITH_DEPS_PACKAGES = (
    "python-frontmatter>=1.3,<2",
    "ipylab>=1,<2",
    "dill>=0.3",
    "wrapt>=1.16",
    "nbconvert>=6",
)
#: Everything :func:`install_otter_for_colab` installs.
COLAB_OTTER_PACKAGES = COLAB_NO_DEPS_PACKAGES + COLAB_WITH_DEPS_PACKAGES
#: The modules those packages provide: if one is missing, the Colab grader installs them.
OTTER_IMPORTS = ("otter", "fica", "frontmatter", "ipylab", "dill", "wrapt", "nbconvert")
#: Installed packages Colab's pip must never upgrade while installing otter.
PINNED_IN_COLAB = ("ipywidgets", "numpy", "torch", "matplotlib")
#: A base URL (``{lab}`` is replaced by the lab's name) or a local folder from which the Colab
#: grader copies the public tests instead of downloading them from :data:`REPOSITORY_URL`.
TESTS_URL_ENV = "GPUPERF_LAB_TESTS_URL"
#: Default limit for one notebook cell while grading (seconds); ``GPUPERF_CELL_TIME_LIMIT_S``
#: overrides it (the CI tests use a short one).
DEFAULT_CELL_TIME_LIMIT_S = 300.0


class CheckError(AssertionError):
    """A check failed; the message tells the student what to fix."""


class IntegrityError(AssertionError):
    """A checking function is not the original: the submission tampered with the grader."""


_PLAIN = (bool, int, float, str, bytes, complex, type(None), type(Ellipsis), np.number, np.bool_)


def _type_name(value: Any) -> str:
    # type.__name__ read through type's own descriptor: a metaclass cannot intercept it
    return type.__dict__["__name__"].__get__(type(value), type)


def safe_repr(value: Any, limit: int = 80) -> str:
    """``repr`` of plain data (numbers, strings, small tuples/lists/dicts of them), else
    ``<TypeName object>``: formatting a student's object must not run the student's code."""

    def render(item: Any, depth: int) -> str:
        kind = type(item)
        if kind in (bool, int, float, complex, type(None)) or kind is type(Ellipsis):
            return repr(item)
        if isinstance(item, np.number | np.bool_) and type(item).__module__ == "numpy":
            return repr(item.item())
        if kind is str:
            return repr(item if len(item) <= limit else item[:limit] + "…")
        if kind in (tuple, list) and depth < 2 and len(item) <= 8:
            inner = ", ".join(render(x, depth + 1) for x in item)
            if kind is tuple:
                return f"({inner}{',' if len(item) == 1 else ''})"
            return f"[{inner}]"
        if kind is dict and depth < 2 and len(item) <= 8:
            return (
                "{"
                + ", ".join(
                    f"{render(k, depth + 1)}: {render(v, depth + 1)}" for k, v in item.items()
                )
                + "}"
            )
        return f"<{_type_name(item)} object>"

    text = render(value, 0)
    return text if len(text) <= 4 * limit else text[: 4 * limit] + "…"


def _fmt(value: Any) -> str:
    """A student's own value, for messages (numbers to 4 significant figures)."""
    if isinstance(value, float | np.floating):
        if value == 0 or math.isinf(value) or math.isnan(value):
            return str(float(value))
        return f"{float(value):.4g}"
    return safe_repr(value)


def _fmt_reference(value: float) -> str:
    """A reference value, for messages: two significant figures at most, never the answer."""
    value = float(value)
    if value == 0 or math.isinf(value) or math.isnan(value):
        return str(value)
    return f"{value:.2g}"


def _has_placeholder(value: Any) -> bool:
    if value is Ellipsis:
        return True
    if type(value) in (tuple, list):
        return any(item is Ellipsis for item in value)
    if type(value) is dict:
        return any(item is Ellipsis for item in value.values())
    return False


def answered(name: str, value: Any) -> Any:
    """Fail with "not answered yet" if ``value`` is still otter's ``...`` placeholder (or a
    tuple, list or dict with a ``...`` in it) or ``None``; else return it."""
    if _has_placeholder(value):
        raise CheckError(
            f"`{name}` is not answered yet (it is still `...`): replace the `...` with your "
            "answer."
        )
    if value is None:
        raise CheckError(f"`{name}` is None: did your function forget to `return` its result?")
    return value


def _is_stub(function: Any) -> bool:
    """Is ``function`` still the handed-out skeleton, with a bare ``...`` (or ``x = ...``)
    statement in its body? Read from its source; a function without readable source is not."""
    import ast
    import inspect

    target = getattr(function, "fn", function)  # a @triton.jit kernel wraps the function
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        placeholder = (
            isinstance(node, ast.Expr | ast.Assign | ast.AnnAssign)
            and isinstance(node.value, ast.Constant)
            and node.value.value is Ellipsis
        )
        if placeholder:
            return True
    return False


def all_answered(*answers: Any) -> bool:
    """True when none of ``answers`` is still a placeholder; else print that the question is not
    answered yet and return False.

    The labs' own print lines and figures use it, so that running an untouched notebook shows
    "not answered yet" instead of a traceback from code the student did not write. A value
    counts as unanswered when it is ``...``, ``None`` or a tuple, list or dict holding a
    ``...``; a function when its body still has a bare ``...`` statement.
    """
    for value in answers:
        if callable(value) and not isinstance(value, type):
            if _is_stub(value):
                break
        elif value is None or _has_placeholder(value):
            break
    else:
        return True
    print("Not answered yet: fill in the `...` of this question, then run this cell again.")
    return False


def answer(env: Mapping[str, Any], name: str) -> Any:
    """The student's answer ``name`` from the notebook's namespace ``env`` (hidden tests take
    answers, and only answers, this way); fails if it is undefined or not answered yet."""
    if name not in env:
        raise CheckError(f"`{name}` is not defined: run the cell that defines it (keep its name).")
    return answered(name, env[name])


def check_true(condition: object, message: str) -> None:
    """Fail with ``message`` unless ``condition`` is truthy (for checks no helper covers)."""
    if not condition:
        raise CheckError(message)


def _as_float(name: str, value: Any) -> float:
    answered(name, value)
    if type(value) is np.ndarray and value.size == 1:  # a one-element array is a number
        value = value.reshape(()).item()
    elif (
        type(value).__module__ == "torch"
        and type(value).__name__ == "Tensor"
        and (value.numel() == 1)
    ):
        value = value.detach().cpu().reshape(()).item()
    if not isinstance(value, int | float | np.number) or isinstance(value, bool | np.bool_):
        raise CheckError(
            f"`{name}` should be a number, not {_type_name(value)} {safe_repr(value)}."
        )
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise CheckError(f"`{name}` should be a number, got {safe_repr(value)}.") from None
    if math.isnan(number):
        raise CheckError(f"`{name}` is NaN: look for a 0/0 or a missing value.")
    return number


def check_close(
    name: str,
    value: Any,
    expected: float,
    *,
    rtol: float = 1e-3,
    atol: float = 0.0,
    unit: str = "",
    hints: Mapping[float, str] | None = None,
) -> None:
    """Check a number against the reference within ``rtol`` (relative) or ``atol``.

    ``hints`` maps a ratio value/expected that betrays a common slip to an explanation, e.g.
    ``{2.0: "count the FLOPs of a multiply-add as 2"}``; when the answer is off by one of those
    ratios (within 2 %), the hint is part of the message.
    """
    number = _as_float(name, value)
    expected = float(expected)
    if math.isnan(expected):
        raise ValueError(f"check_close({name!r}): the reference is NaN; a test needs a number")
    if math.isinf(expected):  # the only case where an infinite answer is right
        want = (
            "infinity (math.inf): it never becomes compute-bound at this size"
            if expected > 0
            else "minus infinity (-math.inf)"
        )
        check_true(number == expected, f"`{name}` = {_fmt(number)}; expected {want}.")
        return None
    if math.isinf(number):
        raise CheckError(
            f"`{name}` is infinite ({_fmt(number)}), expected a finite number: look for a "
            "division by zero or an overflow."
        )
    if abs(number - expected) <= max(rtol * max(abs(number), abs(expected)), atol):
        return None
    suffix = f" {unit}" if unit else ""
    message = f"`{name}` = {_fmt(number)}{suffix}"
    if expected != 0 and number != 0:
        ratio = number / expected
        if ratio < 0:
            reference = _fmt_reference(expected)
            message += f", but the reference has the opposite sign (about {reference}{suffix})"
        elif 0.95 <= ratio <= 1.05:
            direction = "large" if ratio > 1 else "small"
            message += f": close, but a little too {direction} (within 5 % of the reference)"
        else:
            message += (
                f", expected about {_fmt_reference(expected)}{suffix} "
                f"(yours is about {_fmt_reference(ratio)}× the reference)"
            )
        for slip_ratio, hint in (hints or {}).items():
            if abs(ratio - slip_ratio) <= 0.02 * abs(slip_ratio):
                message += f": {hint}"
                break
    else:
        message += f", expected about {_fmt_reference(expected)}{suffix}"
    raise CheckError(message + ".")


def _norm_choice(item: Any) -> Any:
    return item.strip().lower() if type(item) is str else item


def check_choice(name: str, value: Any, expected: Any, choices: Sequence[Any]) -> None:
    """Check a categorical answer (``"memory"`` / ``"compute"``, a chip name, ...).

    Strings compare without regard to case or surrounding spaces, on every side: the answer, the
    expected choice and the list of choices (``"h100-sxm"`` matches ``"H100-SXM"``).
    """
    answered(name, value)
    normalized = [_norm_choice(c) for c in choices]
    got = _norm_choice(value)
    if got not in normalized:
        raise CheckError(
            f"`{name}` = {safe_repr(value)} is not one of {safe_repr(list(choices))}."
        )
    if got != _norm_choice(expected):
        raise CheckError(f"`{name}` = {safe_repr(value)} is not right; look again at the numbers.")


def check_mapping(
    name: str,
    value: Any,
    expected: Mapping[Any, Any],
    *,
    rtol: float = 1e-3,
    unit: str = "",
) -> None:
    """Check a dict answer key by key (numbers within ``rtol``, other values equal)."""
    answered(name, value)
    if not isinstance(value, Mapping):
        raise CheckError(f"`{name}` should be a dict, not {_type_name(value)}.")
    if not value and expected:
        raise CheckError(
            f"`{name}` is empty: fill in one entry per key, e.g. "
            f"{safe_repr(next(iter(expected)))}."
        )
    missing = [k for k in expected if k not in value]
    if missing:
        raise CheckError(f"`{name}` has no entry for {safe_repr(missing)}.")
    for key, want in expected.items():
        label = f"{name}[{safe_repr(key)}]"
        if isinstance(want, int | float | np.integer | np.floating) and not isinstance(
            want, bool | np.bool_
        ):
            check_close(label, value[key], want, rtol=rtol, unit=unit)
        else:
            got = value[key]
            answered(label, got)
            if _norm_choice(got) != _norm_choice(want):
                raise CheckError(
                    f"`{label}` = {safe_repr(got)} is not right; look again at the numbers."
                )


# --------------------------------------------------------------------------- running student code


@contextlib.contextmanager
def time_limit(seconds: float, what: str = "this code") -> Iterator[None]:
    """Raise :class:`CheckError` if the block runs longer than ``seconds`` (main thread, POSIX).

    Elsewhere (Windows, a worker thread) the block runs without a limit. ``seconds`` must be a
    positive, finite number: 0 does not mean "no limit" (``ValueError``).
    """
    seconds = _positive_seconds(seconds)
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def _expired(signum, frame):
        raise CheckError(
            f"{what} ran for more than {seconds:g} s and was stopped: look for a loop that "
            "never ends (a `while` whose condition never changes, a range that is far too big)."
        )

    previous = signal.signal(signal.SIGALRM, _expired)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay:  # an enclosing limit (e.g. the cell's) keeps running
            signal.setitimer(signal.ITIMER_REAL, old_delay, old_interval)


def _positive_seconds(seconds: Any) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float | np.number):
        raise ValueError(f"seconds={seconds!r} must be a number of seconds > 0")
    value = float(seconds)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"seconds={seconds!r} must be a finite number of seconds > 0")
    return value


def _error_text(error: BaseException) -> str:
    """``type: message`` of an exception a student's code raised, without running its code:
    the message only when every argument is a plain string or number."""
    kind = _type_name(error)
    args = getattr(error, "args", ())
    plain = type(args) is tuple and all(type(a) in (str, int, float, bool) for a in args)
    if plain and type(error).__str__ in (BaseException.__str__, Exception.__str__):
        text = str(error).strip()
    elif type(error).__module__.split(".")[0] in ("triton", "torch"):
        text = str(error).strip()  # compiler and runtime errors: the student needs them
    elif plain and args and type(error).__module__ != "__main__":
        text = " ".join(str(a) for a in args)  # other library errors with plain arguments
    else:
        text = ""
    text = text if len(text) <= 1500 else text[:1500] + "…"
    return f"{kind}: {text}" if text else kind


def call(name: str, fn: Any, *args: Any, seconds: float = 60.0, **kwargs: Any) -> Any:
    """Call the student's function ``fn`` (called ``name`` in messages) under a time limit.

    A placeholder, a non-callable, an exception or a call to ``exit()``/``sys.exit()`` becomes a
    :class:`CheckError` naming the function and the error, so the test fails with a readable
    message. ``seconds`` must be positive and finite (``ValueError`` otherwise).
    """
    seconds = _positive_seconds(seconds)
    answered(name, fn)
    if not callable(fn):
        raise CheckError(f"`{name}` should be a function, not {_type_name(fn)}.")
    try:
        with time_limit(seconds, f"`{name}`"):
            result = fn(*args, **kwargs)
    except CheckError:
        raise
    except NotImplementedError:
        raise CheckError(f"`{name}` is not written yet (it raises NotImplementedError).") from None
    except SystemExit as error:
        raise CheckError(
            f"`{name}` called exit() (SystemExit {safe_repr(error.code)}): return a value "
            "instead of ending the program."
        ) from None
    except Exception as error:
        raise CheckError(f"`{name}` raised {_error_text(error)}") from None
    if result is Ellipsis:
        raise CheckError(f"`{name}` still returns `...`: replace the `...` with your code.")
    return result


def _shape_of(value: Any) -> tuple[int, ...] | None:
    """The shape of a numpy array or torch tensor, read without converting it (else None)."""
    kind = type(value)
    if kind is np.ndarray:
        return value.shape
    if kind.__module__ == "torch" and kind.__name__ in ("Tensor", "Parameter"):
        return tuple(value.shape)
    return None


def _to_numpy(name: str, value: Any, shape: tuple[int, ...] | None = None) -> np.ndarray | None:
    """``value`` as a float64 array; ``None`` if ``shape`` is given and the value's differs.

    Shapes are compared *before* converting: converting a stride-0 view
    (``torch.zeros(1).expand(2**28)``: one number in memory, 2**28 as seen) to float64 would
    allocate all of it, so an answer of the wrong size is never expanded.
    """
    answered(name, value)
    if shape is not None and _shape_of(value) not in (None, tuple(shape)):
        return None
    if hasattr(value, "detach"):  # a torch tensor, possibly on a GPU or requiring grad
        try:
            value = value.detach().float().cpu().numpy()
        except Exception as error:
            raise CheckError(
                f"`{name}` could not be read as numbers ({_error_text(error)})."
            ) from None
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise CheckError(
            f"`{name}` should be an array or tensor, not {_type_name(value)}."
        ) from None
    return None if shape is not None and array.shape != tuple(shape) else array


def _shape_text(value: Any) -> str:
    shape = _shape_of(value)
    if shape is None:
        shape = np.shape(np.asarray(value, dtype=float))  # small: a list of the student's
    return str(tuple(int(n) for n in shape))


def _runs(indices: np.ndarray) -> str:
    """'3, 7..9' style summary of sorted integer indices (first few runs only)."""
    runs, start = [], indices[0]
    prev = start
    for i in indices[1:]:
        if i != prev + 1:
            runs.append((start, prev))
            start = i
        prev = i
    runs.append((start, prev))
    text = ", ".join(f"{a}" if a == b else f"{a}..{b}" for a, b in runs[:3])
    return text + (", ..." if len(runs) > 3 else "")


def check_tensor(
    name: str,
    actual: Any,
    expected: Any,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-5,
    block: int | Sequence[int] | None = None,
) -> None:
    """Compare a kernel output with the reference and say *where* it is wrong.

    ``block`` is the kernel's block size (``BLOCK`` for 1-D, ``(BLOCK_M, BLOCK_N)`` for 2-D): when
    everything inside the first full blocks is right and only the ragged edge is wrong, the
    message points at the mask.
    """
    want = _to_numpy("reference", expected)
    blocks = _blocks(block, want.ndim)
    got = _to_numpy(name, actual, want.shape)
    if got is None:
        raise CheckError(
            f"`{name}` has shape {_shape_text(actual)}; expected {tuple(want.shape)}: check how "
            "you allocate the output and the grid."
        )
    if not np.all(np.isfinite(got[np.isfinite(want)])):
        bad = np.argwhere(~np.isfinite(got) & np.isfinite(want))
        first = tuple(int(i) for i in bad[0])
        where = (
            "" if not first else f", the first at index {first if len(first) > 1 else first[0]}"
        )
        raise CheckError(
            f"`{name}` has NaN or infinite values ({len(bad)} of them{where}): a load past the "
            "end of a tensor without a mask reads the NaN padding the check puts there, so check "
            "the masks on your loads (and `other=`); else look for a division by zero, an "
            "exponential of a large number (subtract the maximum first) or a masked load "
            "without `other=`."
        )
    wrong = ~np.isclose(got, want, atol=atol, rtol=rtol)
    if not wrong.any():
        return
    n_wrong = int(wrong.sum())
    worst = float(np.max(np.abs(got - want)))
    summary = (
        f"{n_wrong} of {want.size} values of `{name}` are wrong (largest error about {worst:.1g})"
    )
    if got.ndim == 1:
        idx = np.flatnonzero(wrong)
        message = f"{summary}, at indices {_runs(idx)}"
        edge = _edge(blocks[0] if blocks else None, 0, want.shape[0])
        if edge is not None and idx.min() >= edge:
            message += (
                f": everything before index {edge} is right, so the last, partial block is "
                "wrong: check the mask on your loads and stores."
            )
        elif not np.any(got[idx]):
            message += ": your kernel wrote nothing there; check the grid and the offsets."
        raise CheckError(message + ".")
    if got.ndim == 2:
        rows = np.flatnonzero(wrong.any(axis=1))
        cols = np.flatnonzero(wrong.any(axis=0))
        message = f"{summary}, in rows {_runs(rows)} and columns {_runs(cols)}"
        if blocks is not None:
            edge_m = _edge(blocks[0], 0, want.shape[0])
            edge_n = _edge(blocks[1], 0, want.shape[1])
            if (edge_n is not None and cols.min() >= edge_n) or (
                edge_m is not None and rows.min() >= edge_m
            ):
                where = (
                    f"column {edge_n}"
                    if edge_n is not None and cols.min() >= edge_n
                    else (f"row {edge_m}")
                )
                zero = not np.any(got[wrong])
                what = "wrote nothing" if zero else "is wrong only"
                message += (
                    f": your kernel {what} past {where}, in the last, partial tile: check the "
                    "masks on the loads and the store."
                )
        raise CheckError(message + ".")
    raise CheckError(summary + ".")


def _blocks(block: Any, ndim: int) -> tuple[int, ...] | None:
    """``block`` as one positive int per axis (an int applies to every axis), or None."""
    if block is None:
        return None
    items = [block] * max(ndim, 1) if isinstance(block, int | np.integer) else block
    if isinstance(items, str) or not isinstance(items, Sequence):
        raise ValueError(f"block={block!r} must be a positive int or one per axis")
    if any(isinstance(b, bool) or not isinstance(b, int | np.integer) or b < 1 for b in items):
        raise ValueError(f"block={block!r}: every block size must be an int ≥ 1")
    if ndim in (1, 2) and len(items) != ndim:
        raise ValueError(
            f"block={block!r} has {len(items)} sizes for a {ndim}-D tensor: give {ndim}"
        )
    return tuple(int(b) for b in items)


def _edge(block: Any, axis_start: int, size: int) -> int | None:
    """Start of the last partial block along an axis, or None if the size is a multiple."""
    if block is None:
        return None
    block = int(block)
    if size % block == 0:
        return None
    return axis_start + (size // block) * block


def check_attention(
    name: str,
    actual: Any,
    expected: Any,
    *,
    block_m: int | None = None,
    lse: Any = None,
    lse_expected: Any = None,
    max_scores: Any = None,
    atol: float = 1e-4,
    rtol: float = 1e-4,
    rows: str = "query",
    slips: Mapping[str, Any] | None = None,
) -> None:
    """Compare an attention output (or gradient) of shape (..., seq, d) with the reference and
    say which rows and which blocks of ``block_m`` rows are wrong, and the likely slip.

    ``lse``/``lse_expected`` (shape (..., seq)) check the saved logsumexp L = m + log ℓ too;
    ``max_scores`` (the row maxima of the scaled scores) lets the message tell "you stored m,
    not m + log ℓ" apart from other mistakes. ``rows`` names what a row is ("query", "key").
    ``slips`` maps an explanation to the output a known mistake produces (for instance attention
    computed with the padding keys left unmasked); an answer equal to one of them gets that
    explanation instead of a guess.
    """
    if block_m is not None and (
        isinstance(block_m, bool) or not isinstance(block_m, int | np.integer) or block_m < 1
    ):
        raise ValueError(f"block_m={block_m!r} must be an int ≥ 1 (or None)")
    want = _to_numpy("reference", expected)
    if want.ndim < 2 or want.size == 0:
        raise ValueError(
            f"the reference has shape {tuple(want.shape)}; check_attention needs a non-empty "
            "(..., seq, d) array"
        )
    got = _to_numpy(name, actual, want.shape)
    if got is None:
        raise CheckError(
            f"`{name}` has shape {_shape_text(actual)}; expected {tuple(want.shape)} "
            "(batch, heads, seq, d): allocate the output like q."
        )
    seq = want.shape[-2]
    flat_got = got.reshape(-1, seq, want.shape[-1])
    flat_want = want.reshape(-1, seq, want.shape[-1])
    lead = want.shape[:-2]

    def where(row_mask: np.ndarray) -> str:
        heads = np.flatnonzero(row_mask.any(axis=1))
        positions = np.flatnonzero(row_mask.any(axis=0))
        first = tuple(int(i) for i in np.unravel_index(heads[0], lead)) if lead else ()
        text = f"{rows} rows {_runs(positions)}"
        if block_m:
            text += f" (row blocks {_runs(np.unique(positions // int(block_m)))} of {block_m})"
        if lead:
            text += f", in {len(heads)} of {flat_want.shape[0]} (batch, head) slices, the first "
            text += f"{first}"
        return text

    bad = ~np.isfinite(flat_got) & np.isfinite(flat_want)
    if bad.any():
        raise CheckError(
            f"`{name}` has NaN or infinite values in {where(bad.any(axis=2))}: subtract the "
            "running max before exp, divide by ℓ only once at the end, and mask keys past the "
            "end of the sequence with -inf (not the query rows' padding with NaN)."
        )
    wrong = ~np.isclose(flat_got, flat_want, atol=atol, rtol=rtol)
    if wrong.any() and not np.any(flat_got):
        raise CheckError(
            f"`{name}` is all zeros: nothing was computed or stored; write the loop over the "
            "blocks and store (or return) the result."
        )
    if wrong.any():
        for explanation, slip_output in (slips or {}).items():
            slip = _to_numpy("slip", slip_output).reshape(flat_want.shape)
            if np.allclose(flat_got, slip, atol=atol, rtol=rtol):
                raise CheckError(
                    f"`{name}` is wrong ({int(wrong.any(axis=2).sum())} of "
                    f"{wrong.shape[0] * wrong.shape[1]} rows): {explanation}"
                )
        wrong_rows = wrong.any(axis=2)
        worst = float(np.max(np.abs(flat_got - flat_want)))
        message = (
            f"{int(wrong_rows.sum())} of {wrong_rows.size} rows of `{name}` are wrong (largest "
            f"error about {worst:.1g}), {where(wrong_rows)}"
        )
        positions = np.flatnonzero(wrong_rows.any(axis=0))
        edge = _edge(block_m, 0, seq)
        # each wrong row a constant multiple of the right one? (and one constant for all?)
        scaled, factors = True, []
        for h, r in zip(*np.nonzero(wrong_rows), strict=True):
            g, w = flat_got[h, r], flat_want[h, r]
            big = np.abs(w) > 1e-3 * (np.abs(w).max() + 1e-30)
            ratio = g[big] / w[big]
            constant = ratio.size >= 2 and np.allclose(ratio, ratio[0], rtol=1e-3)
            if not constant or abs(ratio[0]) < 1e-6:
                scaled = False
                break
            factors.append(float(ratio[0]))
        one_factor = scaled and np.allclose(factors, factors[0], rtol=1e-3)
        if edge is not None and positions.min() >= edge:
            message += (
                f": only the last, partial block of rows (from row {edge}) is wrong: check the "
                "masks on the loads and the store."
            )
        elif one_factor and wrong_rows.all():
            message += (
                f": everything is {_fmt(factors[0])}× the reference, a constant factor: look for "
                f"a missing or extra scale (1/√d = {_fmt(1 / math.sqrt(want.shape[-1]))} here)."
            )
        elif scaled:
            message += (
                ": each wrong row is the right row times a constant, so the weights do not sum "
                "to 1: rescale the accumulator by exp(m_old − m_new) whenever the max grows, "
                "and divide by ℓ once at the end."
            )
        else:
            message += (
                ": check the running max and sum updates, that every key block is visited, "
                "and that keys past the end of the sequence (and, causal, above the diagonal) "
                "get -inf scores."
            )
        raise CheckError(message)
    if lse_expected is None:
        return None
    lse_want = _to_numpy("reference L", lse_expected)
    if lse is None:
        raise CheckError(
            f"`{name}` is right but the logsumexp L is missing: return (or save) "
            "L = m + log ℓ, one float32 per query row, shaped like q without its last dim."
        )
    lse_got = _to_numpy("L", lse, lse_want.shape)
    if lse_got is None:
        raise CheckError(
            f"`{name}` is right, but L has shape {_shape_text(lse)}; expected "
            f"{tuple(lse_want.shape)} (q's shape without its last dim)."
        )
    if np.all(np.isnan(lse_got)):
        raise CheckError(
            f"`{name}` is right, but L was never written (it is still NaN): store "
            "m_i + log(l_i) for every query row, the backward pass needs it."
        )
    lse_wrong = ~np.isclose(lse_got, lse_want, atol=atol, rtol=rtol)
    if lse_wrong.any():
        message = f"`{name}` is right, but {int(lse_wrong.sum())} of {lse_want.size} values of L "
        message += "are wrong"
        if max_scores is not None:
            m = _to_numpy("max_scores", max_scores)
            if np.allclose(lse_got, m, atol=atol, rtol=rtol):
                raise CheckError(message + ": L is the running max m; add log ℓ (L = m + log ℓ).")
            if np.allclose(lse_got, lse_want - m, atol=atol, rtol=rtol):
                raise CheckError(message + ": L is log ℓ; add the running max m (L = m + log ℓ).")
        raise CheckError(
            message + ": L = m + log ℓ with the final running max m and sum ℓ of each row "
            "(natural log, scores already multiplied by 1/√d)."
        )
    return None


# --------------------------------------------------------------------------- guarded kernel inputs


def padded(tensor: Any, pad: int, *, fill: float = float("nan")) -> Any:
    """A copy of ``tensor`` that lives in the middle of a larger buffer filled with ``fill``.

    Hand these to a student's kernel instead of bare tensors: a load or store up to ``pad``
    elements past either end of the tensor (a missing mask) stays inside the buffer, so it reads
    NaN (which :func:`check_tensor` reports as a mask problem) or writes into the padding (which
    :func:`check_padding` reports), instead of corrupting memory and killing the process. The copy
    is contiguous, on the same device and of the same dtype (floating point only).
    """
    import torch

    if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
        raise ValueError(f"padded() needs a floating-point torch tensor, not {tensor!r:.60}")
    if isinstance(pad, bool) or not isinstance(pad, int) or pad < 0:
        raise ValueError(f"pad={pad!r} must be an int ≥ 0 (elements on each side)")
    n = tensor.numel()
    buffer = torch.full((n + 2 * pad,), fill, dtype=tensor.dtype, device=tensor.device)
    buffer[pad : pad + n] = tensor.detach().reshape(-1)
    view = buffer[pad : pad + n].view(tensor.shape)
    view._gpuperf_padding = (buffer, pad, fill)
    return view


def check_padding(name: str, tensor: Any) -> None:
    """Fail if a kernel wrote into the padding around ``tensor`` (made by :func:`padded`)."""
    import torch

    buffer, pad, fill = getattr(tensor, "_gpuperf_padding", (None, 0, None))
    if buffer is None:
        raise ValueError(f"`{name}` was not made by padded(): nothing to check")
    n = tensor.numel()
    before, after = buffer[:pad], buffer[pad + n :]
    if math.isnan(fill):
        changed_before = int((~torch.isnan(before)).sum())
        changed_after = int((~torch.isnan(after)).sum())
    else:
        changed_before = int((before != fill).sum())
        changed_after = int((after != fill).sum())
    if changed_after or changed_before:
        where = "past the end" if changed_after else "before the start"
        raise CheckError(
            f"your kernel wrote {changed_after + changed_before} values {where} of `{name}`: "
            "check the mask on your store (offsets must stay below the number of elements)."
        )


# --------------------------------------------------------------------------- grading integrity


def _probe_failures() -> list[str]:
    """Run each checking function on inputs whose answer is known; list the ones that lie."""
    import math as math_module

    import numpy as numpy_module

    this = sys.modules[__name__]
    failures = []

    def expect_raise(label: str, fn: Any, *args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except AssertionError:
            return
        except Exception as error:
            failures.append(f"{label} raised {_type_name(error)} instead of failing")
            return
        failures.append(f"{label} accepts a wrong answer")

    if math_module.isclose(1.0, 1.1) is not False or math_module.isclose(2.0, 2.0) is not True:
        failures.append("math.isclose gives wrong answers")
    if [bool(x) for x in numpy_module.isclose([1.0, 1.0], [1.0, 2.0])] != [True, False]:
        failures.append("numpy.isclose gives wrong answers")
    if bool(numpy_module.allclose([1.0], [2.0])) or not bool(numpy_module.allclose([3.0], [3.0])):
        failures.append("numpy.allclose gives wrong answers")
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "testing"):
        expect_raise(
            "torch.testing.assert_close",
            torch.testing.assert_close,
            torch.tensor([1.0]),
            torch.tensor([2.0]),
        )
    ok_test = sys.modules.get("otter.test_files.ok_test")
    if ok_test is not None:
        try:
            passed, _ = ok_test.run_doctest("integrity probe", ">>> assert 1 == 2\n", {})
        except Exception:
            passed = True
        if passed is not False:
            failures.append("otter's run_doctest passes a failing test")
    expect_raise("check_close", this.check_close, "x", 1.0, 2.0)
    expect_raise("check_choice", this.check_choice, "x", "a", "b", ["a", "b"])
    expect_raise("check_mapping", this.check_mapping, "x", {"a": 1.0}, {"a": 2.0})
    expect_raise("check_true", this.check_true, False, "probe")
    expect_raise("check_tensor", this.check_tensor, "x", [1.0, 1.0], [1.0, 2.0])
    expect_raise("check_attention", this.check_attention, "x", np.ones((2, 2)), np.eye(2))
    expect_raise("answered", this.answered, "x", ...)
    return failures


def integrity_check() -> None:
    """Fail visibly (:class:`IntegrityError`) if a checking function is not the original.

    Compares ``math.isclose``, ``numpy.isclose``/``allclose``, ``torch.testing.assert_close``
    (once torch is imported), otter's ``run_doctest`` (once otter is imported) and this module's
    ``check_*``/``answered``/``call``/``run_hidden`` with what :mod:`gpuperf._grading_originals`
    recorded when grading began: the same object, code object, defaults and module. Then probes
    each with inputs whose answer is known. Hidden tests call it first, so a submission that
    patched a comparison earns nothing from it and the instructor sees why.
    """
    import math as math_module

    import numpy as numpy_module

    from gpuperf import _grading_originals as originals

    originals.remember_torch()
    originals.remember_otter()
    this = sys.modules.get(__name__)
    live: dict[str, Any] = {
        "math.isclose": math_module.isclose,
        "numpy.isclose": numpy_module.isclose,
        "numpy.allclose": numpy_module.allclose,
    }
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "testing"):
        live["torch.testing.assert_close"] = torch.testing.assert_close
    ok_test = sys.modules.get("otter.test_files.ok_test")
    if ok_test is not None:
        live["otter.test_files.ok_test.run_doctest"] = getattr(ok_test, "run_doctest", None)
    for name in _CHECKS:
        live[f"gpuperf.grading.{name}"] = getattr(this, name, None)
    problems = []
    for name, fn in live.items():
        if name not in originals.RECORD:
            continue
        obj, code, defaults, kwdefaults, module = originals.RECORD[name]
        now_defaults, now_kwdefaults = originals._defaults_of(fn)
        if fn is not obj:
            problems.append(f"{name} has been replaced")
        elif originals._code_of(fn) is not code:
            problems.append(f"{name} has had its code replaced")
        elif now_defaults != defaults or (dict(now_kwdefaults) if now_kwdefaults else None) != (
            kwdefaults or None
        ):
            problems.append(f"{name} has had its default arguments changed")
        elif getattr(fn, "__module__", None) != module:
            problems.append(f"{name} claims another module")
    problems += _probe_failures()
    if problems:
        raise IntegrityError(
            "grading integrity check failed: "
            + "; ".join(problems)
            + ". The submission changed a function the grader relies on, so its tests cannot "
            "be trusted: this submission needs a human look."
        )


#: This module's functions the canary guards (recorded at import, see the end of the module).
_CHECKS = (
    "answer",
    "answered",
    "call",
    "check_attention",
    "check_choice",
    "check_close",
    "check_mapping",
    "check_padding",
    "check_tensor",
    "check_true",
    "integrity_check",
    "padded",
    "run_hidden",
    "time_limit",
)

#: File, next to the lab's tests in the autograder, that holds its hidden checks.
HIDDEN_TESTS_FILE = "hidden_tests.py"


def _hidden_tests_path() -> Path:
    for folder in (Path.cwd(), Path.cwd() / "tests", Path.cwd().parent):
        candidate = folder / HIDDEN_TESTS_FILE
        if candidate.is_file():
            return candidate
    raise IntegrityError(
        f"{HIDDEN_TESTS_FILE} was not found next to the notebook or in tests/ (cwd {Path.cwd()}): "
        "grade with the lab's autograder zip"
    )


def run_hidden(question: str, env: Mapping[str, Any]) -> None:
    """Run a lab's hidden checks for ``question``: ``hidden_tests.<question>(env)``.

    The hidden checks live in ``hidden_tests.py``, an autograder-only file next to the tests
    (the master's ``# HIDDEN`` cells call this function, nothing else), loaded afresh from disk on
    every call rather than imported, so the notebook cannot substitute its own module. First
    runs :func:`integrity_check`. A failure is re-raised as one :class:`CheckError` sentence
    without the traceback, so otter's output names the failed quantity but never echoes the
    hidden test's code. ``env`` is the notebook's namespace (``globals()``): the checks take only
    the student's answers from it, never references or helpers.
    """
    integrity_check()
    import importlib.util

    path = _hidden_tests_path()
    spec = importlib.util.spec_from_file_location(f"_gpuperf_hidden_{question}", path)
    module = importlib.util.module_from_spec(spec)
    error_message = None
    try:
        spec.loader.exec_module(module)
        check = getattr(module, question)
        check(env)
    except CheckError as error:
        error_message = str(error)
    except IntegrityError:
        raise
    except AssertionError as error:
        error_message = f"a hidden check failed: {_error_text(error)}"
    except SystemExit as error:
        error_message = f"your code called exit() (SystemExit {safe_repr(error.code)})"
    except Exception as error:
        error_message = f"a hidden check could not run on your answer: {_error_text(error)}"
    if error_message is not None:
        raise CheckError(f"hidden test of {question}: {error_message}") from None


# --------------------------------------------------------------------------- otter integration


class CellTimeLimit:
    """otter-grader plugin: every notebook cell gets a time limit while ``otter run`` grades it.

    Listed in a lab's ``ASSIGNMENT CONFIG`` as ``plugins: [gpuperf.grading.CellTimeLimit]``. Its
    ``before_execution`` event puts a cell at the top of the submission that registers IPython
    hooks: each cell arms a ``SIGALRM`` timer and disarms it when done. A cell that loops forever
    then raises ``TimeoutError``; otter runs with errors allowed, so grading goes on and only the
    question whose cell timed out loses points. The limit is ``GPUPERF_CELL_TIME_LIMIT_S`` from
    the grader's environment, else :data:`DEFAULT_CELL_TIME_LIMIT_S`.

    (Not a subclass of otter's ``AbstractOtterPlugin`` so that ``import gpuperf.grading`` does not
    need otter; otter only calls the methods below.)
    """

    IMPORTABLE_NAME = "gpuperf.grading.CellTimeLimit"

    def __init__(self, submission_path=None, submission_metadata=None, plugin_config=None):
        self.submission_path = submission_path
        self.submission_metadata = submission_metadata or {}
        self.plugin_config = plugin_config or {}

    @staticmethod
    def limit_s() -> float:
        raw = os.environ.get("GPUPERF_CELL_TIME_LIMIT_S", "")
        try:
            value = float(raw) if raw else DEFAULT_CELL_TIME_LIMIT_S
        except ValueError:
            value = DEFAULT_CELL_TIME_LIMIT_S
        return value if value > 0 else DEFAULT_CELL_TIME_LIMIT_S

    @classmethod
    def cell_source(cls, seconds: float | None = None) -> str:
        seconds = cls.limit_s() if seconds is None else float(seconds)
        return (
            "import signal as _gp_signal\n"
            "def _gp_expired(signum, frame):\n"
            f"    raise TimeoutError('this cell ran for more than {seconds:g} s and was stopped "
            "by the grader')\n"
            "def _gp_arm(*args):\n"
            "    _gp_signal.signal(_gp_signal.SIGALRM, _gp_expired)\n"
            f"    _gp_signal.setitimer(_gp_signal.ITIMER_REAL, {seconds!r})\n"
            "def _gp_disarm(*args):\n"
            "    _gp_signal.setitimer(_gp_signal.ITIMER_REAL, 0)\n"
            "get_ipython().events.register('pre_run_cell', _gp_arm)\n"
            "get_ipython().events.register('post_run_cell', _gp_disarm)\n"
        )

    def before_execution(self, submission):
        import nbformat

        if isinstance(submission, str):  # a Python script submission: nothing to hook
            return submission
        submission.cells.insert(0, nbformat.v4.new_code_cell(self.cell_source()))
        return submission

    # the other otter events are no-ops
    def during_assign(self, assignment):
        return None

    def during_generate(self, otter_config, assignment):
        return None

    def before_grading(self, config):
        return None

    def after_grading(self, results):
        return None

    def generate_report(self):
        return ""


def _in_colab() -> bool:
    return "google.colab" in sys.modules


def _missing_modules(names: Sequence[str] = OTTER_IMPORTS) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


def install_otter_for_colab(python: str | None = None) -> list[list[str]]:
    """Install what ``import otter`` and ``grader.check`` need on top of Colab's packages.

    Two pip commands, returned as the argument lists that ran: :data:`COLAB_WITH_DEPS_PACKAGES`
    with their dependencies under a constraint file that pins the installed versions of
    :data:`PINNED_IN_COLAB` (so ipywidgets 7.7.1 stays), then :data:`COLAB_NO_DEPS_PACKAGES` with
    ``--no-deps``. ``python`` is the interpreter whose environment receives them (this one by
    default). The tests build a Colab-like environment and call exactly this function.
    """
    import importlib.metadata
    import tempfile

    python = python or sys.executable
    pins = []
    for package in PINNED_IN_COLAB:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            pins.append(f"{package}=={importlib.metadata.version(package)}")
    commands = []
    with tempfile.TemporaryDirectory() as tmp:
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("\n".join(pins) + "\n")
        commands.append(
            [
                python,
                "-m",
                "pip",
                "install",
                "-q",
                "-c",
                str(constraints),
                *COLAB_WITH_DEPS_PACKAGES,
            ]
        )
        commands.append(
            [python, "-m", "pip", "install", "-q", "--no-deps", *COLAB_NO_DEPS_PACKAGES]
        )
        for command in commands:
            subprocess.run(command, check=True)
    importlib.invalidate_caches()
    return commands


def _tests_source(lab: str, base_url: str | None) -> str:
    base = base_url or os.environ.get(TESTS_URL_ENV) or ""
    if not base:
        return f"{REPOSITORY_URL}/raw/{BRANCH}/labs/{lab}/student/tests"
    base = base.replace("{lab}", lab)
    if "://" not in base:  # a local folder
        return Path(base).resolve().as_uri()
    return base


def _fetch_tests(
    lab: str,
    questions: Sequence[str],
    tests_dir: str | Path = "tests",
    *,
    base_url: str | None = None,
) -> Path:
    """Download a lab's public test files (``q1.py``, ...) into ``tests_dir``; return it.

    They come from ``base_url`` if given, else from the folder or URL in the environment
    variable ``GPUPERF_LAB_TESTS_URL`` (``{lab}`` replaced by the lab's name), else from the
    course repository's ``labs/<lab>/student/tests``. Files already present are kept.
    """
    base = _tests_source(lab, base_url)
    target = Path(tests_dir)
    target.mkdir(parents=True, exist_ok=True)
    for question in questions:
        path = target / f"{question}.py"
        if not path.exists():
            with urllib.request.urlopen(f"{base}/{question}.py", timeout=30) as response:
                path.write_bytes(response.read())
    return target


def lab_grader(
    lab: str, questions: Sequence[str], tests_dir: str = "tests", *, tests_url: str | None = None
) -> Any:
    """The ``grader`` of a lab notebook: an ``otter.Notebook`` whose tests are on disk.

    Locally (and under ``otter run``) this is ``otter.Notebook(tests_dir=tests_dir)``. In Colab
    it first installs what otter needs if any of it is missing (:func:`install_otter_for_colab`,
    which never upgrades Colab's ipywidgets) and fetches the lab's public tests that are not in
    ``tests_dir`` yet: from ``tests_url`` (a folder or URL) if given, else from the one in the
    environment variable ``GPUPERF_LAB_TESTS_URL`` (``{lab}`` replaced by the lab's name), else
    from the course repository's ``labs/<lab>/student/tests``.
    If otter cannot be imported, the error names the module that is really missing.
    """
    if _in_colab():
        if _missing_modules():
            install_otter_for_colab()
        _fetch_tests(lab, questions, tests_dir, base_url=tests_url)
    try:
        import otter
    except ModuleNotFoundError as error:
        missing = error.name or str(error)
        raise ModuleNotFoundError(
            f"the lab checks use otter-grader, and importing it failed because the module "
            f"{missing!r} is not installed. Install it (pip install {missing}) — or, in Colab, "
            "call gpuperf.grading.install_otter_for_colab() — then run this cell again. "
            f"Locally, pip install -r requirements.txt installs everything.",
            name=missing,
        ) from error
    from gpuperf import _grading_originals

    _grading_originals.remember_otter()
    return otter.Notebook(tests_dir=tests_dir)


# Record this module's checks as they are now, before any student code can run (the canary).
def _remember_checks() -> None:
    from gpuperf import _grading_originals

    for name in _CHECKS:
        _grading_originals.remember(f"gpuperf.grading.{name}", globals()[name])


_remember_checks()
