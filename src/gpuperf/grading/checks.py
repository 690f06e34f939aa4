"""Checks of numbers, choices and dicts: say which quantity is off, by how much, and the slip.

A failing check reads like feedback a teaching assistant would give: ``add_intensity = 0.125
FLOP/B, expected about 0.083 FLOP/B (yours is about 1.5× the reference): count the bytes of the
output z too``. Each raises :class:`~gpuperf.grading.feedback.CheckError` on a wrong answer and
returns ``None`` on a right one; the reference is never printed beyond two significant figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._validate import show
from .answers import answered
from .feedback import (
    CheckError,
    _fmt,
    _fmt_reference,
    _is_tensor,
    _mapping,
    _name,
    _reference_number,
    _text,
    _tolerance,
    _type_name,
    safe_repr,
)

__all__ = ["check_choice", "check_close", "check_mapping", "check_true"]

#: Most choices a categorical check lists (a message names them all).
MAX_CHOICES = 1000


def check_true(condition: object, message: str) -> None:
    """Fail with ``message`` unless ``condition`` is truthy (for checks no helper covers).

    ``condition`` must have one truth value (a bool, a number, a one-element array): an array of
    several booleans is a ``TypeError`` (use ``.all()`` or ``.any()``)."""
    message = _text("message", message, empty=False)
    try:
        holds = bool(condition)
    except Exception:  # numpy's "truth value of an array is ambiguous", torch's likewise
        raise TypeError(
            f"condition={safe_repr(condition)} has no single truth value: pass True or False "
            "(for an array, .all() or .any())"
        ) from None
    if not holds:
        raise CheckError(message)


def _as_float(name: str, value: Any) -> float:
    answered(name, value)
    if type(value) is np.ndarray and value.size == 1:  # a one-element array is a number
        value = value.reshape(()).item()
    elif _is_tensor(value) and value.numel() == 1:
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


def _hints(hints: object) -> dict[float, str]:
    """``hints`` as ratio → explanation: ratios finite and > 0, explanations strings."""
    if hints is None:
        return {}
    checked = {}
    for ratio, hint in _mapping("hints", hints, empty=True).items():
        label = f"hints[{show(ratio)}]"
        if isinstance(ratio, bool) or not isinstance(ratio, int | float | np.number):
            raise TypeError(f"{label}: a key must be a ratio value/expected, a number > 0")
        if not (math.isfinite(float(ratio)) and float(ratio) > 0):
            raise ValueError(f"{label}: a key must be a finite ratio > 0")
        checked[float(ratio)] = _text(label, hint, empty=False)
    return checked


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

    ``expected`` is a real number (``±inf`` when only an infinite answer is right, never NaN);
    ``rtol`` is in [0, 1] and ``atol`` ≥ 0, both finite. ``hints`` maps a ratio value/expected
    that betrays a common slip to an explanation, e.g. ``{2.0: "count the FLOPs of a
    multiply-add as 2"}``; when the answer is off by one of those ratios (within 2 %), the hint
    is part of the message.
    """
    name = _name("name", name)
    expected = _reference_number("expected", expected)
    rtol, atol = _tolerance("rtol", rtol), _tolerance("atol", atol)
    unit = _text("unit", unit)
    slips = _hints(hints)
    number = _as_float(name, value)
    if math.isinf(expected):  # the only case where an infinite answer is right
        want = (
            "infinity (math.inf): it never becomes compute-bound at this size"
            if expected > 0
            else "minus infinity (-math.inf)"
        )
        if number != expected:
            raise CheckError(f"`{name}` = {_fmt(number)}; expected {want}.")
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
        for slip_ratio, hint in slips.items():
            if abs(ratio - slip_ratio) <= 0.02 * abs(slip_ratio):
                message += f": {hint}"
                break
    else:
        message += f", expected about {_fmt_reference(expected)}{suffix}"
    raise CheckError(message + ".")


def _norm_choice(item: Any) -> Any:
    return item.strip().lower() if type(item) is str else item


def _same(a: Any, b: Any) -> bool:
    """``a == b`` as one bool; False where equality has no single answer (an array)."""
    try:
        return bool(a == b)
    except Exception:
        return False


def _choices(choices: object) -> tuple[Any, ...]:
    if isinstance(choices, str | bytes | Mapping) or not isinstance(choices, Sequence):
        raise TypeError(f"choices={show(choices)} must be a list or tuple of the valid answers")
    if not 1 <= len(choices) <= MAX_CHOICES:
        raise ValueError(
            f"choices={show(choices)} must list between 1 and {MAX_CHOICES} valid answers"
        )
    return tuple(choices)


def check_choice(name: str, value: Any, expected: Any, choices: Sequence[Any]) -> None:
    """Check a categorical answer (``"memory"`` / ``"compute"``, a chip name, ...).

    Strings compare without regard to case or surrounding spaces, on every side: the answer, the
    expected choice and the list of choices (``"h100-sxm"`` matches ``"H100-SXM"``).
    ``choices`` is a non-empty list or tuple, and ``expected`` one of them.
    """
    name = _name("name", name)
    options = _choices(choices)
    normalized = [_norm_choice(c) for c in options]
    want = _norm_choice(expected)
    if not any(_same(want, option) for option in normalized):
        raise ValueError(
            f"expected={show(expected)} is not one of choices={show(list(options))}: the right "
            "answer must be a valid one"
        )
    answered(name, value)
    got = _norm_choice(value)
    if not any(_same(got, option) for option in normalized):
        raise CheckError(
            f"`{name}` = {safe_repr(value)} is not one of {safe_repr(list(options))}."
        )
    if not _same(got, want):
        raise CheckError(f"`{name}` = {safe_repr(value)} is not right; look again at the numbers.")


def check_mapping(
    name: str,
    value: Any,
    expected: Mapping[Any, Any],
    *,
    rtol: float = 1e-3,
    unit: str = "",
) -> None:
    """Check a dict answer key by key (numbers within ``rtol``, other values equal).

    ``expected`` is a non-empty dict of the right answers; ``rtol`` is in [0, 1].
    """
    name = _name("name", name)
    expected = _mapping("expected", expected)
    rtol = _tolerance("rtol", rtol)
    unit = _text("unit", unit)
    for key, want in expected.items():
        if _is_number(want):
            _reference_number(f"expected[{show(key)}]", want)
    answered(name, value)
    if not isinstance(value, Mapping):
        raise CheckError(f"`{name}` should be a dict, not {_type_name(value)}.")
    if not value:
        raise CheckError(
            f"`{name}` is empty: fill in one entry per key, e.g. "
            f"{safe_repr(next(iter(expected)))}."
        )
    missing = [k for k in expected if k not in value]
    if missing:
        raise CheckError(f"`{name}` has no entry for {safe_repr(missing)}.")
    for key, want in expected.items():
        label = f"{name}[{safe_repr(key)}]"
        if _is_number(want):
            check_close(label, value[key], want, rtol=rtol, unit=unit)
        else:
            got = value[key]
            answered(label, got)
            if not _same(_norm_choice(got), _norm_choice(want)):
                raise CheckError(
                    f"`{label}` = {safe_repr(got)} is not right; look again at the numbers."
                )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )
