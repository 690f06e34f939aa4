"""Did the submission replace a function that checking relies on? A canary inside the notebook.

A lab's tests run inside the student's own Python process under ``otter run`` (and Gradescope),
after the student's code. A submission could therefore replace ``math.isclose``,
``numpy.allclose``, ``torch.testing.assert_close``, otter's ``run_doctest`` or one of this
package's checks with a function that always agrees. :func:`integrity_check` compares each with
what :mod:`gpuperf._grading_originals` recorded when ``gpuperf.grading`` was first imported (the
same object, code, defaults and module, under its ``gpuperf.grading`` name and in the module
that defines it), then probes each with inputs whose answer is known. Hidden tests call it first,
so a submission that patched a comparison earns nothing from them and the instructor sees why.

This is a canary, not a sandbox: the class command (``python -m gpuperf.grading grade``) never
runs a test in the student's process at all.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .feedback import IntegrityError, _type_name

__all__ = ["integrity_check"]

#: The checks the canary guards (recorded when ``gpuperf.grading`` is imported).
_CHECKS = (
    "answer",
    "answered",
    "call",
    "check_attention",
    "check_choice",
    "check_close",
    "check_mapping",
    "check_padding",
    "check_sector_efficiency",
    "check_tensor",
    "check_traffic",
    "check_true",
    "integrity_check",
    "padded",
    "run_hidden",
    "time_limit",
)


def _package() -> Any:
    """``gpuperf.grading`` as the notebook holds it now (imported by the time a check runs)."""
    return sys.modules["gpuperf.grading"]


def _probe_failures() -> list[str]:
    """Run each checking function on inputs whose answer is known; list the ones that lie."""
    import math as math_module

    import numpy as numpy_module

    this = _package()
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
    this = _package()
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
        # and where it is defined: a check that calls another finds it there
        recorded = originals.RECORD.get(f"gpuperf.grading.{name}")
        if recorded is not None and recorded[4] in sys.modules:
            live[f"{recorded[4]}.{name}"] = getattr(sys.modules[recorded[4]], name, None)
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


def _remember_checks() -> None:
    """Record the checks as they are now, before any student code can run (``gpuperf.grading``
    calls this once, at the end of its import): under their package name, and under the module
    that defines each."""
    from gpuperf import _grading_originals

    this = _package()
    for name in _CHECKS:
        function = getattr(this, name)
        _grading_originals.remember(f"gpuperf.grading.{name}", function)
        _grading_originals.remember(f"{function.__module__}.{name}", function)
