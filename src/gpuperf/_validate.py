"""Argument checks shared by every public function.

A calculator fed a bad argument should fail at the door with a message naming the argument, the
bad value and the valid range, never deep inside numpy with a wrong answer, and never by hanging
or trying to allocate a machine's worth of memory. The rules, stated once:

* ``True`` is not a size (``bool`` is an ``int`` subclass in Python), and neither is ``2.5``,
  ``"64"`` or ``nan``. numpy integer scalars are sizes; an integral float (``4096.0``) is too.
* Counts stop at :data:`MAX_COUNT` = 2⁵³, the largest range in which every integer is exactly a
  float64: every calculator multiplies counts as floats, and no tensor comes near it. Where a
  loop or an allocation follows, the function states its own, smaller bound.
* Real quantities (bytes/s, seconds, FLOPs) are finite and, unless zero, between 1e-100 and
  1e100, so a result never overflows to ``inf`` or collapses to 0 (a 1e308 B/s link would).
* Flags are real booleans: ``"no"``, ``None`` and ``1`` are rejected, because a truthy string
  silently switching on ``causal`` is a wrong answer, not a convenience.
* A choice among named options lists the options.

Type errors (a string where a number belongs, a number where a flag belongs) raise
``ValueError`` for sizes, as they always have here, and ``TypeError`` for flags and names.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

#: Largest count any calculator accepts: 2**53, the end of float64's exact integers.
MAX_COUNT = 2**53
#: Largest product of two counts (tiles = tiles_m·tiles_n, bytes of a result object): 2**106.
MAX_PRODUCT = MAX_COUNT**2
#: Magnitudes a real-valued quantity may have: products and quotients of a few of them stay far
#: inside float64's range (1e±308), so no calculator overflows to inf or underflows to 0. No
#: physical quantity in the course comes near (all the FLOPs ever spent on training: ~1e27).
MIN_QUANTITY, MAX_QUANTITY = 1e-100, 1e100

_T = TypeVar("_T")


def show(value: object, limit: int = 60) -> str:
    """``repr(value)``, shortened to ``limit`` characters (a 400-digit int stays readable)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 12]}…({len(text)} chars)"


def _is_real(value: object) -> bool:
    kind = type(value)
    if kind is int or kind is float:  # the common case, without the slow ABC check
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def positive_int(
    name: str, value: object, minimum: int = 1, maximum: int | None = MAX_COUNT
) -> int:
    """``value`` as an ``int`` in [minimum, maximum]; integral floats such as ``4096.0`` pass."""
    if type(value) is int and minimum <= value and (maximum is None or value <= maximum):
        return value  # the common case, checked before any message is formatted
    if not _is_real(value):
        raise ValueError(_int_message(name, value, minimum, maximum))
    if isinstance(value, numbers.Integral):
        result = int(value)
    else:
        try:
            as_float = float(value)
        except (OverflowError, ValueError):
            raise ValueError(_int_message(name, value, minimum, maximum)) from None
        if not math.isfinite(as_float) or not as_float.is_integer():
            raise ValueError(_int_message(name, value, minimum, maximum))
        result = int(as_float)
    if result < minimum or (maximum is not None and result > maximum):
        raise ValueError(_int_message(name, value, minimum, maximum))
    return result


def _int_message(name: str, value: object, minimum: int, maximum: int | None) -> str:
    upper = "" if maximum is None else f" and ≤ {maximum}"
    return f"{name}={show(value)} must be an integer ≥ {minimum}{upper}"


def positive_float(
    name: str,
    value: object,
    allow_zero: bool = False,
    maximum: float | None = None,
    *,
    bounded: bool = True,
) -> float:
    """``value`` as a finite ``float`` > 0 (or ≥ 0 with ``allow_zero``), ≤ ``maximum`` if given.

    A value is at most :data:`MAX_QUANTITY`, so products of a few never overflow to inf;
    ``bounded`` (the default, for arguments) also keeps a non-zero value ≥ :data:`MIN_QUANTITY`;
    result objects pass ``bounded=False`` for derived values that may legitimately be tiny (a
    rescale factor exp(−231)).
    """

    def message() -> str:
        bound = "≥ 0" if allow_zero else "> 0"
        if maximum is not None:
            bound += f" and ≤ {maximum:g}"
        return f"{name}={show(value)} must be a finite number {bound}"

    if not _is_real(value):
        raise ValueError(message())
    try:
        result = float(value)
    except (OverflowError, ValueError):  # an int beyond float range, an odd Real subclass
        raise ValueError(message()) from None
    if not math.isfinite(result) or result < 0 or (result == 0 and not allow_zero):
        raise ValueError(message())
    if maximum is not None and result > maximum:
        raise ValueError(message())
    if result > MAX_QUANTITY or (bounded and result and result < MIN_QUANTITY):
        low = f"{MIN_QUANTITY:g}" if bounded else "0"
        raise ValueError(f"{message()}, between {low} and {MAX_QUANTITY:g}")
    return result


def finite_float(name: str, value: object) -> float:
    """``value`` as a finite ``float`` of any sign (for quantities that may be negative)."""
    if _is_real(value):
        try:
            result = float(value)
        except (OverflowError, ValueError):
            result = math.nan
        if math.isfinite(result):
            return result
    raise ValueError(f"{name}={show(value)} must be a finite real number")


def real_number(name: str, value: object) -> float:
    """``value`` as a ``float`` (nan and ±inf allowed; ints beyond float range rejected)."""
    message = f"{name}={show(value)} must be a real number within float range (±1.8e308)"
    if isinstance(value, str | bytes | bool | np.bool_) or not (
        _is_real(value) or hasattr(value, "__float__")  # a 0-d numpy array or torch tensor
    ):
        raise ValueError(message)
    try:
        return float(value)
    except Exception:  # OverflowError; a multi-element array (ValueError, torch RuntimeError)
        raise ValueError(message) from None


def fraction(name: str, value: object) -> float:
    """``value`` as a float in (0, 1]."""
    result = positive_float(name, value)
    if result > 1:
        raise ValueError(f"{name}={show(value)} must be in (0, 1]")
    return result


def power_of_two(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an ``int`` that is a power of two in [minimum, maximum]."""
    upper = f" and ≤ {maximum}" if maximum is not None else ""
    message = f"{name}={show(value)} must be a power of two ≥ {minimum}{upper}"
    try:
        result = positive_int(name, value)
    except ValueError:
        raise ValueError(message) from None
    if result & (result - 1) or result < minimum or (maximum is not None and result > maximum):
        raise ValueError(message)
    return result


def flag(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False`` (numpy booleans too); ``TypeError`` otherwise.

    ``causal="no"`` is truthy in Python; accepting it would silently do the opposite of what the
    caller wrote, so only real booleans pass.
    """
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise TypeError(f"{name}={show(value)} must be True or False")


def name_string(name: str, value: object) -> str:
    """``value`` if it is a non-empty ``str``; ``TypeError``/``ValueError`` naming it otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name}={show(value)} must be a string")
    if not value.strip():
        raise ValueError(f"{name}={show(value)} must be a non-empty string")
    return value


def choice(name: str, value: object, options: Iterable[_T]) -> _T:
    """``value`` if it equals one of ``options`` (a bool never matches a number); else
    ``ValueError`` listing the options."""
    listed = tuple(options)
    for option in listed:
        same_kind = isinstance(value, bool | np.bool_) == isinstance(option, bool | np.bool_)
        try:
            equal = bool(value == option)
        except (TypeError, ValueError):  # an array compared elementwise
            equal = False
        if same_kind and equal:
            return option
    raise ValueError(f"{name}={show(value)} is not one of: {', '.join(map(repr, listed))}")


def optional(name: str, value: object, check: Any, *args: Any, **kwargs: Any) -> Any:
    """``None`` stays ``None``; anything else goes through ``check(name, value, ...)``."""
    return None if value is None else check(name, value, *args, **kwargs)


def sequence(
    name: str,
    value: object,
    check: Any = None,
    *,
    minimum: int = 1,
    maximum: int | None = None,
) -> tuple[Any, ...]:
    """``value`` as a tuple of at least ``minimum`` (and at most ``maximum``) items, each passed
    through ``check(f"{name}[{i}]", item)`` if given. A string, bytes or a mapping is not a
    sequence of items here (``"T4"`` would be two chips), nor is a number."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise TypeError(f"{name}={show(value)} must be a list or tuple")
    items = tuple(value)
    if len(items) < minimum or (maximum is not None and len(items) > maximum):
        upper = "" if maximum is None else f" and at most {maximum}"
        raise ValueError(
            f"{name}={show(value)} must hold at least {minimum} item(s){upper}, got {len(items)}"
        )
    if check is None:
        return items
    return tuple(check(f"{name}[{i}]", item) for i, item in enumerate(items))


def mapping(
    name: str, value: object, check: Any = None, *, keys: Iterable[object] | None = None
) -> dict[Any, Any]:
    """``value`` as a dict, each value passed through ``check(f"{name}[{key!r}]", item)`` if
    given; with ``keys``, it must hold exactly those keys."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{name}={show(value)} must be a mapping (a dict)")
    items = dict(value)
    if keys is not None and set(items) != set(keys):
        wanted = ", ".join(map(repr, keys))
        raise ValueError(f"{name}={show(value)} must have exactly the keys {wanted}")
    if check is None:
        return items
    return {key: check(f"{name}[{key!r}]", item) for key, item in items.items()}


def int_pair(name: str, value: object, minimum: int = 1) -> tuple[int, int]:
    """Two integers ≥ ``minimum``, such as a tile ``(BLOCK_M, BLOCK_N)``."""
    first, second = sequence(name, value, minimum=2, maximum=2)
    try:
        return positive_int(name, first, minimum), positive_int(name, second, minimum)
    except ValueError:
        raise ValueError(f"{name}={show(value)} must be two integers ≥ {minimum}") from None


#: A figure larger than this (inches) is a mistake, not a figure: 100 inches at 72 dpi is
#: already 7200 pixels across.
MAX_FIGURE_INCHES = 100.0


def figsize(name: str, value: object) -> tuple[float, float]:
    """A matplotlib figure size: (width, height) in inches, each in (0, 100]."""
    message = f"{name}={show(value)} must be (width, height) in inches, each > 0 and ≤ 100"
    try:
        width, height = sequence(name, value, minimum=2, maximum=2)
        return (
            positive_float(name, width, maximum=MAX_FIGURE_INCHES),
            positive_float(name, height, maximum=MAX_FIGURE_INCHES),
        )
    except (TypeError, ValueError):
        raise ValueError(message) from None


def value_range(name: str, value: object) -> tuple[float, float]:
    """A (low, high) axis range of positive finite numbers with low < high (log axes)."""
    message = f"{name}={show(value)} must be (low, high) with 0 < low < high, both finite"
    try:
        low, high = sequence(name, value, minimum=2, maximum=2)
        low, high = positive_float(name, low), positive_float(name, high)
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if not low < high:
        raise ValueError(message)
    return low, high


def function(name: str, value: object) -> Any:
    """``value`` if it is callable; ``TypeError`` naming it otherwise."""
    if not callable(value):
        raise TypeError(f"{name}={show(value)} must be callable (a function)")
    return value


def instance(name: str, value: object, kind: type[_T]) -> _T:
    """``value`` if it is a ``kind``; ``TypeError`` naming the type wanted otherwise (so a
    config of ``0`` or ``"x"`` is an error, never a silent fall-back to the defaults)."""
    if not isinstance(value, kind):
        raise TypeError(f"{name}={show(value)} must be a {kind.__name__}")
    return value


def real_array(
    name: str,
    value: object,
    *,
    allow_zero: bool = True,
    allow_negative: bool = False,
    ndim: int | tuple[int, ...] | None = None,
    finite: bool = True,
    maximum: float | None = MAX_QUANTITY,
    max_size: int = 2**26,
) -> float | np.ndarray:
    """A real number or an array of them, as a ``float`` (a scalar or a 0-d array) or a float64
    array. Refuses what numpy would silently convert: strings (``"1"`` → 1.0), booleans,
    complex numbers (the imaginary part dropped), ``None`` (→ NaN), ragged lists, object arrays;
    and by default NaN, ±inf and negative values. Empty arrays are refused too."""

    def message() -> str:  # formatted only on failure: repr of a large array is slow
        bound = (
            "real numbers" if allow_negative else "numbers ≥ 0" if allow_zero else "numbers > 0"
        )
        return f"{name}={show(value)} must be {'finite ' if finite else ''}{bound}"

    if value is None or isinstance(value, str | bytes | bool | np.bool_ | Mapping):
        raise ValueError(message())
    if _is_real(value):
        try:
            array = np.asarray(float(value))
        except (OverflowError, ValueError):
            raise ValueError(message()) from None
    else:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError, RuntimeError):  # ragged lists, tensors numpy cannot read
            raise ValueError(f"{message()} (a number or a rectangular array)") from None
        if array.dtype.kind not in "iuf":  # bool, str, object (ragged, None, huge ints), complex
            raise ValueError(message())
        if array.size == 0:
            raise ValueError(f"{name}={show(value)} must hold at least one number")
        if array.size > max_size:
            raise ValueError(f"{name} has {array.size} elements; at most {max_size} are accepted")
    if ndim is not None and array.ndim not in ((ndim,) if isinstance(ndim, int) else ndim):
        raise ValueError(f"{name}={show(value)} must have {ndim} dimension(s), got {array.ndim}")
    array = array.astype(np.float64)
    with np.errstate(invalid="ignore"):
        if np.isnan(array).any() or (finite and not np.isfinite(array).all()):
            raise ValueError(message())
        if (not allow_negative and (array < 0).any()) or (not allow_zero and (array == 0).any()):
            raise ValueError(message())
        if maximum is not None and finite and (np.abs(array) > maximum).any():
            raise ValueError(f"{message()}, each at most {maximum:g} in size")
    return float(array) if array.ndim == 0 else array


def file_path(name: str, value: object, *, default: object = None) -> Path:
    """``value`` as a ``Path`` (``None`` → ``default``); anything but a string or an
    ``os.PathLike`` is a ``TypeError`` naming it (``Path(1)`` fails inside pathlib)."""
    if value is None and default is not None:
        value = default
    if not isinstance(value, str | os.PathLike) or isinstance(value, bool):
        raise TypeError(f"{name}={show(value)} must be a path (a str or os.PathLike)")
    if isinstance(value, str) and not value.strip():
        raise ValueError(f"{name}={value!r} must be a non-empty path")
    return Path(value)
