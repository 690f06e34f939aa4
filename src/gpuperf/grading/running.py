"""Running a student's function: a time limit, and every failure turned into feedback.

Grading must survive bad submissions. A student function that is still ``...``, raises, calls
``exit()``, returns garbage or never returns must cost that question's points and nothing else:
:func:`call` runs it under :func:`time_limit` and turns each of those into a
:class:`~gpuperf.grading.feedback.CheckError` that names the function.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import signal
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

from .._validate import show
from .answers import answered
from .feedback import CheckError, _error_text, _name, _text, _type_name, safe_repr

__all__ = ["call", "time_limit"]

#: Longest limit accepted (seconds): a week. A longer one is a slip (milliseconds for seconds),
#: and ``setitimer`` overflows somewhere past 1e10 s.
MAX_SECONDS = 7 * 24 * 3600.0


def _positive_seconds(seconds: Any, name: str = "seconds") -> float:
    message = f"{name}={show(seconds)} must be a finite number of seconds > 0 and ≤ 604800"
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
        raise ValueError(message)
    try:
        value = float(seconds)
    except (OverflowError, ValueError):
        raise ValueError(message) from None
    if not (value > 0 and math.isfinite(value)) or value > MAX_SECONDS:
        raise ValueError(message)
    return value


def time_limit(seconds: float, what: str = "this code") -> AbstractContextManager[None]:
    """A ``with`` block that raises :class:`CheckError` if it runs longer than ``seconds``
    (main thread, POSIX).

    Elsewhere (Windows, a worker thread) the block runs without a limit. ``seconds`` must be a
    positive, finite number of at most a week: 0 does not mean "no limit" (``ValueError``).
    ``what`` names the code in the message. The arguments are checked here, before the block.
    """
    return _time_limit(_positive_seconds(seconds), _text("what", what, empty=False))


@contextlib.contextmanager
def _time_limit(seconds: float, what: str) -> Iterator[None]:
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

    A placeholder, a non-callable, an exception or a call to ``exit()``/``sys.exit()`` becomes a
    :class:`CheckError` naming the function and the error, so the test fails with a readable
    message. ``seconds`` must be positive and finite, at most a week (``ValueError`` otherwise).
    """
    name = _name("name", name)
    seconds = _positive_seconds(seconds)
    answered(name, fn)
    if not callable(fn):
        raise CheckError(f"`{name}` should be a function, not {_type_name(fn)}.")
    try:
        with _time_limit(seconds, f"`{name}`"):
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
