"""How a failed check speaks to a student: the exceptions, and values shown without running them.

Every check raises :class:`CheckError` (an ``AssertionError``, which otter reports as a failed
test with the message shown to the student). Messages never give the answer away: a reference
value is printed to two significant figures at most (with the direction and rough size of the
error), and a student's own objects are described by their type unless they are plain numbers,
strings or small containers of them (:func:`safe_repr`), so a value whose ``__repr__`` does
something clever runs no code in a check.

Bad *instructor* arguments (a tolerance of ``"1"``, a reference of ``[]``) are not the student's
fault: they raise ``ValueError``/``TypeError`` naming the argument and its valid range, through
the helpers at the end of this module, before any comparison starts.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validate import positive_int, show

__all__ = ["CheckError", "IntegrityError", "safe_repr"]

#: Longest ``limit`` :func:`safe_repr` accepts (characters of one string; the whole text may be
#: four times longer): a message is read by a person.
MAX_REPR_LIMIT = 10_000


class CheckError(AssertionError):
    """A check failed; the message tells the student what to fix."""


class IntegrityError(AssertionError):
    """A checking function is not the original: the submission tampered with the grader."""


def _type_name(value: Any) -> str:
    # type.__name__ read through type's own descriptor: a metaclass cannot intercept it
    return type.__dict__["__name__"].__get__(type(value), type)


def safe_repr(value: Any, limit: int = 80) -> str:
    """``repr`` of plain data (numbers, strings, small tuples/lists/dicts of them), else
    ``<TypeName object>``: formatting a student's object must not run the student's code.

    ``limit`` (an int in 1 … 10,000) is the longest string shown whole; the whole text stops at
    four times that."""
    limit = positive_int("limit", limit, maximum=MAX_REPR_LIMIT)

    def render(item: Any, depth: int) -> str:
        kind = type(item)
        if kind in (bool, float, complex, type(None)) or kind is type(Ellipsis):
            return repr(item)
        if kind is int:  # Python refuses to print an int of more than 4,300 digits
            return (
                repr(item)
                if item.bit_length() < 14_000
                else f"<an int of {item.bit_length()} bits>"
            )
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


# --------------------------------------------------------------------- the instructor's arguments


def _name(name: str, value: object) -> str:
    """The name a check calls the student's answer by: a non-empty string (what the student
    sees in backticks)."""
    if not isinstance(value, str):
        raise TypeError(f"{name}={show(value)} must be a string: the answer's name, e.g. 'x'")
    if not value.strip() or len(value) > 1000:
        raise ValueError(
            f"{name}={show(value)} must be a non-empty name of at most 1000 characters"
        )
    return value


def _text(name: str, value: object, *, empty: bool = True) -> str:
    """A string argument (a unit, a message, a description)."""
    if not isinstance(value, str):
        raise TypeError(f"{name}={show(value)} must be a string")
    if not empty and not value.strip():
        raise ValueError(f"{name}={show(value)} must be a non-empty string")
    return value


def _tolerance(name: str, value: object) -> float:
    """A tolerance: a finite real number ≥ 0 (``rtol`` at most 1: 100 %)."""
    message = f"{name}={show(value)} must be a finite number ≥ 0"
    if name.startswith("rtol"):
        message += " and ≤ 1 (a fraction of the reference)"
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(message)
    try:
        result = float(value)
    except (OverflowError, ValueError):
        raise ValueError(message) from None
    if not math.isfinite(result) or result < 0 or (name.startswith("rtol") and result > 1):
        raise ValueError(message)
    return result


def _reference_number(name: str, value: object) -> float:
    """A reference a number is compared with: a real number within float range, ±inf allowed
    (an answer that is right only when infinite), NaN not."""
    message = f"{name}={show(value)} must be a real number (±inf allowed, NaN not)"
    if isinstance(value, bool | np.bool_ | str | bytes):
        raise TypeError(message)
    if type(value) is np.ndarray and value.size == 1:
        value = value.reshape(()).item()
    elif _is_tensor(value) and value.numel() == 1:
        value = value.detach().cpu().reshape(()).item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(message)
    try:
        result = float(value)
    except (OverflowError, ValueError):
        raise ValueError(f"{message}; {show(value)} is beyond float range") from None
    if math.isnan(result):
        raise ValueError(message)
    return result


def _is_tensor(value: object) -> bool:
    kind = type(value)
    return kind.__module__ == "torch" and kind.__name__ in ("Tensor", "Parameter")


def _mapping(name: str, value: object, *, empty: bool = False) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name}={show(value)} must be a dict")
    if not empty and not value:
        raise ValueError(f"{name}={show(value)} must hold at least one entry")
    return value
