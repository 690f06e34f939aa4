"""Argument checks shared by every public function.

A calculator fed a bad size should fail at the door with a message naming the argument, the bad
value and the valid range, never deep inside numpy with a wrong answer. ``True`` is not a size
(``bool`` is an ``int`` subclass in Python), and neither is ``2.5`` or ``nan``.
"""

from __future__ import annotations

import math
import numbers


def positive_int(name: str, value: object, minimum: int = 1) -> int:
    """``value`` as an ``int`` ≥ ``minimum``; integral floats such as ``4096.0`` are accepted."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}={value!r} must be an integer ≥ {minimum}")
    if isinstance(value, numbers.Integral):
        result = int(value)
    else:
        as_float = float(value)
        if not math.isfinite(as_float) or not as_float.is_integer():
            raise ValueError(f"{name}={value!r} must be an integer ≥ {minimum}")
        result = int(as_float)
    if result < minimum:
        raise ValueError(f"{name}={value!r} must be an integer ≥ {minimum}")
    return result


def positive_float(name: str, value: object, allow_zero: bool = False) -> float:
    """``value`` as a finite ``float`` > 0 (or ≥ 0 with ``allow_zero``)."""
    bound = "≥ 0" if allow_zero else "> 0"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}={value!r} must be a finite number {bound}")
    result = float(value)
    if not math.isfinite(result) or result < 0 or (result == 0 and not allow_zero):
        raise ValueError(f"{name}={value!r} must be a finite number {bound}")
    return result


def fraction(name: str, value: object) -> float:
    """``value`` as a float in (0, 1]."""
    result = positive_float(name, value)
    if result > 1:
        raise ValueError(f"{name}={value!r} must be in (0, 1]")
    return result


def power_of_two(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an ``int`` that is a power of two in [minimum, maximum]."""
    upper = f" and ≤ {maximum}" if maximum is not None else ""
    message = f"{name}={value!r} must be a power of two ≥ {minimum}{upper}"
    try:
        result = positive_int(name, value)
    except ValueError:
        raise ValueError(message) from None
    if result & (result - 1) or result < minimum or (maximum is not None and result > maximum):
        raise ValueError(message)
    return result
