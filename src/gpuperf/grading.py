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
  so a top-level infinite loop fails its own cell instead of hanging the grader.

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
import threading
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CellTimeLimit",
    "CheckError",
    "answered",
    "call",
    "check_attention",
    "check_choice",
    "check_close",
    "check_mapping",
    "check_tensor",
    "check_true",
    "lab_grader",
    "time_limit",
]

#: Where Colab fetches a lab's public tests from (``{url}/raw/{branch}/labs/{lab}/student/tests``).
REPOSITORY_URL = "https://github.com/gpuperf/gpuperf"
BRANCH = "main"
#: otter-grader version the labs were generated with; Colab installs the same one.
OTTER_VERSION = "7.0.0"
#: What otter needs at run time to check answers inside Colab. Installed with ``--no-deps``:
#: otter-grader 7 declares ``ipywidgets>=8.1.5``, and upgrading Colab's ipywidgets 7.7 breaks its
#: widgets; none of these is needed for ``grader.check``.
COLAB_OTTER_PACKAGES = (f"otter-grader=={OTTER_VERSION}", "dill", "fica", "python-on-whales")
#: Default limit for one notebook cell while grading (seconds); ``GPUPERF_CELL_TIME_LIMIT_S``
#: overrides it (the CI tests use a short one).
DEFAULT_CELL_TIME_LIMIT_S = 300.0


class CheckError(AssertionError):
    """A check failed; the message tells the student what to fix."""


def _fmt(value: Any) -> str:
    if isinstance(value, float | np.floating):
        if value == 0 or math.isinf(value) or math.isnan(value):
            return str(float(value))
        return f"{float(value):.4g}"
    return repr(value)


def answered(name: str, value: Any) -> Any:
    """Fail if ``value`` is still otter's ``...`` placeholder (or ``None``); else return it."""
    if value is Ellipsis:
        raise CheckError(f"`{name}` is still `...`: replace the `...` with your answer.")
    if value is None:
        raise CheckError(f"`{name}` is None: did your function forget to `return` its result?")
    return value


def check_true(condition: object, message: str) -> None:
    """Fail with ``message`` unless ``condition`` is truthy (for checks no helper covers)."""
    if not condition:
        raise CheckError(message)


def _as_float(name: str, value: Any) -> float:
    answered(name, value)
    if isinstance(value, bool | str):
        raise CheckError(f"`{name}` should be a number, not {type(value).__name__} {value!r}.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise CheckError(
            f"`{name}` should be a number, got {type(value).__name__} {_fmt(value)}."
        ) from None
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
    if math.isinf(expected):
        check_true(
            math.isinf(number) and number > 0,
            f"`{name}` = {_fmt(number)}; expected infinity (math.inf): it never becomes "
            "compute-bound at this size.",
        )
        return None
    if math.isclose(number, expected, rel_tol=rtol, abs_tol=atol):
        return None
    suffix = f" {unit}" if unit else ""
    message = f"`{name}` = {_fmt(number)}{suffix}, expected {_fmt(expected)}{suffix}"
    if expected != 0 and number != 0:
        ratio = number / expected
        message += f" (yours is {_fmt(ratio)}× the reference)"
        for slip_ratio, hint in (hints or {}).items():
            if math.isclose(ratio, slip_ratio, rel_tol=0.02):
                message += f": {hint}"
                break
    raise CheckError(message + ".")


def check_choice(name: str, value: Any, expected: Any, choices: Sequence[Any]) -> None:
    """Check a categorical answer (``"memory"`` / ``"compute"``, a chip name, ...)."""
    answered(name, value)
    if isinstance(value, str):
        value = value.strip().lower() if all(isinstance(c, str) for c in choices) else value
    if value not in choices:
        raise CheckError(f"`{name}` = {value!r} is not one of {list(choices)!r}.")
    if value != expected:
        raise CheckError(f"`{name}` = {value!r} is not right; look again at the numbers.")


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
        raise CheckError(f"`{name}` should be a dict, not {type(value).__name__}.")
    if not value and expected:
        raise CheckError(
            f"`{name}` is empty: fill in one entry per key, e.g. {next(iter(expected))!r}."
        )
    missing = [k for k in expected if k not in value]
    if missing:
        raise CheckError(f"`{name}` has no entry for {missing!r}.")
    for key, want in expected.items():
        label = f"{name}[{key!r}]"
        if isinstance(want, int | float) and not isinstance(want, bool):
            check_close(label, value[key], want, rtol=rtol, unit=unit)
        else:
            got = value[key]
            if isinstance(got, str) and isinstance(want, str):
                got = got.strip().lower()
            if got != want:
                raise CheckError(f"`{label}` = {got!r} is not right; look again at the numbers.")


# --------------------------------------------------------------------------- running student code


@contextlib.contextmanager
def time_limit(seconds: float, what: str = "this code") -> Iterator[None]:
    """Raise :class:`CheckError` if the block runs longer than ``seconds`` (main thread, POSIX).

    Elsewhere (Windows, a worker thread) the block runs without a limit.
    """
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


def call(name: str, fn: Any, *args: Any, seconds: float = 60.0, **kwargs: Any) -> Any:
    """Call the student's function ``fn`` (called ``name`` in messages) under a time limit.

    A placeholder, a non-callable or an exception becomes a :class:`CheckError` naming the
    function and the error, so the test fails with a readable message.
    """
    answered(name, fn)
    if not callable(fn):
        raise CheckError(f"`{name}` should be a function, not {type(fn).__name__}.")
    try:
        with time_limit(seconds, f"`{name}`"):
            result = fn(*args, **kwargs)
    except CheckError:
        raise
    except NotImplementedError:
        raise CheckError(f"`{name}` is not written yet (it raises NotImplementedError).") from None
    except Exception as error:
        raise CheckError(f"`{name}` raised {type(error).__name__}: {error}".rstrip(": ")) from None
    if result is Ellipsis:
        raise CheckError(f"`{name}` still returns `...`: replace the `...` with your code.")
    return result


def _to_numpy(name: str, value: Any) -> np.ndarray:
    answered(name, value)
    if hasattr(value, "detach"):  # a torch tensor, possibly on a GPU or requiring grad
        value = value.detach().float().cpu().numpy()
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise CheckError(
            f"`{name}` should be an array or tensor, not {type(value).__name__}."
        ) from None


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
    got = _to_numpy(name, actual)
    want = _to_numpy("reference", expected)
    if got.shape != want.shape:
        raise CheckError(
            f"`{name}` has shape {tuple(got.shape)}; expected {tuple(want.shape)}: check how "
            "you allocate the output and the grid."
        )
    if not np.all(np.isfinite(got[np.isfinite(want)])):
        bad = np.argwhere(~np.isfinite(got) & np.isfinite(want))
        first = tuple(int(i) for i in bad[0])
        raise CheckError(
            f"`{name}` has NaN or infinite values ({len(bad)} of them, the first at index "
            f"{first if len(first) > 1 else first[0]}): look for a division by zero, an "
            "exponential of a large number (subtract the maximum first) or a masked load "
            "without `other=`."
        )
    wrong = ~np.isclose(got, want, atol=atol, rtol=rtol)
    if not wrong.any():
        return
    n_wrong = int(wrong.sum())
    worst = float(np.max(np.abs(got - want)))
    summary = f"{n_wrong} of {want.size} values of `{name}` are wrong (largest error {worst:.3g})"
    if got.ndim == 1:
        idx = np.flatnonzero(wrong)
        message = f"{summary}, at indices {_runs(idx)}"
        edge = _edge(block, 0, want.shape[0])
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
        blocks = (block, block) if isinstance(block, int) else block
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
) -> None:
    """Compare an attention output (or gradient) of shape (..., seq, d) with the reference and
    say which rows and which blocks of ``block_m`` rows are wrong, and the likely slip.

    ``lse``/``lse_expected`` (shape (..., seq)) check the saved logsumexp L = m + log ℓ too;
    ``max_scores`` (the row maxima of the scaled scores) lets the message tell "you stored m,
    not m + log ℓ" apart from other mistakes. ``rows`` names what a row is ("query", "key").
    """
    got = _to_numpy(name, actual)
    want = _to_numpy("reference", expected)
    if got.shape != want.shape:
        raise CheckError(
            f"`{name}` has shape {tuple(got.shape)}; expected {tuple(want.shape)} "
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
        wrong_rows = wrong.any(axis=2)
        worst = float(np.max(np.abs(flat_got - flat_want)))
        message = (
            f"{int(wrong_rows.sum())} of {wrong_rows.size} rows of `{name}` are wrong (largest "
            f"error {worst:.3g}), {where(wrong_rows)}"
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
    lse_got = _to_numpy("L", lse)
    if lse_got.shape != lse_want.shape:
        raise CheckError(
            f"`{name}` is right, but L has shape {tuple(lse_got.shape)}; expected "
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


def _pip_install(*packages: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", *packages], check=True
    )


def fetch_tests(
    lab: str,
    questions: Sequence[str],
    tests_dir: str | Path = "tests",
    *,
    base_url: str | None = None,
) -> Path:
    """Download a lab's public test files (``q1.py``, ...) into ``tests_dir``; return it."""
    base = base_url or f"{REPOSITORY_URL}/raw/{BRANCH}/labs/{lab}/student/tests"
    target = Path(tests_dir)
    target.mkdir(parents=True, exist_ok=True)
    for question in questions:
        path = target / f"{question}.py"
        if not path.exists():
            with urllib.request.urlopen(f"{base}/{question}.py", timeout=30) as response:
                path.write_bytes(response.read())
    return target


def lab_grader(lab: str, questions: Sequence[str], tests_dir: str = "tests") -> Any:
    """The ``grader`` of a lab notebook: an ``otter.Notebook`` whose tests are on disk.

    Locally (and under ``otter run``) this is ``otter.Notebook(tests_dir=tests_dir)``. In Colab
    it first installs otter-grader (``--no-deps``, see :data:`COLAB_OTTER_PACKAGES`) and fetches
    the lab's public tests from the course repository.
    """
    if _in_colab():
        if importlib.util.find_spec("otter") is None:
            _pip_install(*COLAB_OTTER_PACKAGES)
        fetch_tests(lab, questions, tests_dir)
    try:
        import otter
    except ImportError as error:
        raise ImportError(
            "the lab checks need otter-grader: pip install -r requirements.txt "
            f"(or pip install otter-grader=={OTTER_VERSION})"
        ) from error
    return otter.Notebook(tests_dir=tests_dir)
