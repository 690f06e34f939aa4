"""Remembering what a pure calculator answered, for the figures that ask it thousands of times.

A static figure of the book evaluates its live view for every combination of the controls, and
each view asks the same calculators the same questions over and over: the attention figure asks
:func:`gpuperf.attention.hbm_traffic_flash` 119,016 times for 2,592 different arguments.
:func:`pure` keeps the answers of a function whose result depends on its arguments alone and is
immutable (a frozen dataclass, a number, a string), keyed by the arguments *and their types*
(``64``, ``64.0`` and ``True`` are three questions). An argument that cannot be a key (a list,
an array) skips the cache: the function runs and checks it as usual, so a bad argument is still
refused with the function's own message, never with "unhashable type". Errors are never cached.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

#: Answers kept per function (least recently used dropped first): far more than one figure asks.
MAX_ENTRIES = 1 << 14


def pure(fn: _F) -> _F:
    """``fn`` with its answers remembered; ``fn.cache_clear()`` forgets them."""
    cached = functools.lru_cache(maxsize=MAX_ENTRIES, typed=True)(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            hash((args, tuple(kwargs.items())))
        except TypeError:  # an unhashable argument: no cache, the function's checks decide
            return fn(*args, **kwargs)
        return cached(*args, **kwargs)

    wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
