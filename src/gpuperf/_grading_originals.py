"""The checking functions as they were when grading began (private: ``grading.integrity_check``).

A lab's tests run inside the student's own Python process, after the student's code. A
submission could therefore replace ``math.isclose``, ``numpy.allclose``,
``torch.testing.assert_close``, otter's ``run_doctest`` or ``gpuperf.grading.check_close`` with a
function that always agrees, and every later comparison would pass. This module records, when it
is first imported (that is, when a lab's grader cell imports :mod:`gpuperf.grading`, before any
answer cell runs), each of those functions together with its code object, its defaults and its
module. :func:`gpuperf.grading.integrity_check` compares the live functions with this record and
also probes them with inputs whose answer is known.

This is a canary, not a sandbox: code that runs before this module is imported, or that rewrites
this record too, is not caught. Grading each submission in its own sandbox (read-only sources,
a fresh process) is what makes tampering impossible; the canary makes it visible.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

#: name → (object, code object or None, defaults, kwdefaults, module name)
RECORD: dict[str, tuple[Any, Any, Any, Any, str | None]] = {}


def _code_of(fn: Any) -> Any:
    """The code object a callable runs (numpy dispatchers keep it on ``_implementation``)."""
    target = getattr(fn, "_implementation", fn)
    return getattr(target, "__code__", None)


def _defaults_of(fn: Any) -> tuple[Any, Any]:
    target = getattr(fn, "_implementation", fn)
    return getattr(target, "__defaults__", None), getattr(target, "__kwdefaults__", None)


def remember(name: str, fn: Any) -> None:
    """Record ``fn`` under ``name`` unless a function is already recorded there."""
    if name in RECORD:
        return
    defaults, kwdefaults = _defaults_of(fn)
    kwdefaults = dict(kwdefaults) if kwdefaults else kwdefaults
    RECORD[name] = (fn, _code_of(fn), defaults, kwdefaults, getattr(fn, "__module__", None))


def remember_torch() -> None:
    """Record ``torch.testing.assert_close`` once torch has been imported (never imports it)."""
    torch = sys.modules.get("torch")
    testing = getattr(torch, "testing", None) if torch is not None else None
    if testing is not None and hasattr(testing, "assert_close"):
        remember("torch.testing.assert_close", testing.assert_close)


def remember_otter() -> None:
    """Record otter's doctest runner once otter has been imported (never imports it)."""
    ok_test = sys.modules.get("otter.test_files.ok_test")
    if ok_test is not None and hasattr(ok_test, "run_doctest"):
        remember("otter.test_files.ok_test.run_doctest", ok_test.run_doctest)


remember("math.isclose", math.isclose)
remember("numpy.isclose", np.isclose)
remember("numpy.allclose", np.allclose)
remember_torch()
remember_otter()
