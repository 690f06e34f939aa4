"""Did the notebook replace the functions that checking relies on? A fingerprint to compare.

Grading never runs a test inside the student's process (see :mod:`gpuperf.classroom.tester`),
so a notebook that patches ``math.isclose`` or ``gpuperf.grading.check_close`` cannot change a
grade. It is still cheating, and an instructor wants to see it rather than have it pass
silently. After the notebook has run, the sandbox computes :func:`fingerprint` on the objects
its modules hold *then*, and the trusted grader computes it on pristine ones; any difference
marks the submission "tampering detected".

Each probe either calls a checking function on a case that must fail (``math.isclose(1, 2)``
must be False, ``check_close('x', 1.0, 2.0)`` must raise) or records where a function comes
from: its module, name, file, and a hash of its bytecode. The gpuperf source files are hashed
too (in the fallback sandbox a notebook could append to them), and compared with what the
same sandbox saw before the notebook's first cell.

The grader also sends a fresh random *challenge* each time: it picks a few dozen comparisons,
half of which must pass and half fail, known only once the challenge is known. So a fingerprint
copied before the functions were patched and replayed later (the runner's reply replaced) does
not match. What the canary cannot catch is code that, inside the sandbox, answers every probe
by calling originals it kept aside: the sandbox is the student's, so a notebook determined to
lie about itself can. It still gains nothing: the report is informational, the grade never
depends on the sandbox's honesty.
"""

from __future__ import annotations

import hashlib
import math
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import flag, positive_int, show


def origin(function: Any) -> str:
    """Where ``function`` comes from: module, qualified name, file name and bytecode hash."""
    code = getattr(function, "__code__", None)
    parts = [
        type(function).__name__,
        str(getattr(function, "__module__", None)),
        str(getattr(function, "__qualname__", None)),
    ]
    if code is not None:
        parts += [Path(code.co_filename).name, hashlib.sha256(code.co_code).hexdigest()[:16]]
    return ":".join(parts)


def _outcome(probe: Callable[[], Any]) -> str:
    try:
        return f"returns {probe()!r}"
    except BaseException as error:  # a probe that must fail raises; which exception matters
        return f"raises {type(error).__name__}"


def source_hashes() -> dict[str, str]:
    """sha256 of every Python file of the installed gpuperf package (as this process sees it)."""
    import gpuperf

    root = Path(gpuperf.__file__).parent
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*.py"))
    }


#: Comparisons drawn from each challenge, per checking function.
CHALLENGE_CASES = 8


def _challenge_probes(
    challenge: int, grading: Any, numpy: Any, math_module: Any, torch: Any
) -> dict[str, str]:
    """Outcomes of comparisons drawn from ``challenge``: for each case, two numbers that are
    either equal to 12 digits or far apart (a coin flip), put to every checking function."""
    rng = random.Random(challenge)
    result = {}
    for case in range(CHALLENGE_CASES):
        a = rng.uniform(1.0, 1000.0)
        b = a * (1 + 1e-12) if rng.random() < 0.5 else a * rng.uniform(1.5, 3.0)
        word = "memory" if rng.random() < 0.5 else "compute"
        probes = {
            "math.isclose": lambda a=a, b=b: math_module.isclose(a, b),
            "np.isclose": lambda a=a, b=b: bool(numpy.isclose(a, b)),
            "np.allclose": lambda a=a, b=b: bool(numpy.allclose([a, a], [a, b])),
            "check_close": lambda a=a, b=b: grading.check_close("x", a, b),
            "check_mapping": lambda a=a, b=b: grading.check_mapping("x", {"k": a}, {"k": b}),
            "check_tensor": lambda a=a, b=b: grading.check_tensor(
                "x", numpy.full(3, a), numpy.full(3, b), rtol=1e-9, atol=0.0
            ),
            "check_choice": lambda word=word: grading.check_choice(
                "x", word, "memory", ["memory", "compute"]
            ),
            "check_true": lambda a=a, b=b: grading.check_true(abs(a - b) < 1e-6, "m"),
        }
        for name, probe in probes.items():
            result[f"challenge {case}: {name}"] = _outcome(probe)
        if torch is not None:
            result[f"challenge {case}: torch.testing.assert_close"] = _outcome(
                lambda a=a, b=b: torch.testing.assert_close(
                    torch.tensor([a], dtype=torch.float64), torch.tensor([b], dtype=torch.float64)
                )
            )
    return result


def fingerprint(include_torch: bool | None = None, challenge: int = 0) -> dict[str, str]:
    """Probe outcomes and origins of the checking functions as this process holds them now,
    and the outcomes of the comparisons drawn from ``challenge``.

    ``include_torch=None`` probes torch only if it is already imported (the sandbox);
    the trusted side passes what the sandbox reported. ``challenge`` is an int from 0 to 2**64.
    """
    if include_torch is not None:
        include_torch = flag("include_torch", include_torch)
    challenge = positive_int("challenge", challenge, minimum=0, maximum=2**64)
    grading = sys.modules.get("gpuperf.grading")
    if grading is None:
        import gpuperf.grading as grading
    numpy = sys.modules.get("numpy", np)
    math_module = sys.modules.get("math", math)
    result = {
        "math.isclose(1, 2)": _outcome(lambda: math_module.isclose(1.0, 2.0)),
        "math.isclose origin": origin(math_module.isclose),
        "np.isclose(1, 2)": _outcome(lambda: bool(numpy.isclose(1.0, 2.0))),
        "np.isclose origin": origin(numpy.isclose),
        "np.allclose([1], [2])": _outcome(lambda: bool(numpy.allclose([1.0], [2.0]))),
        "np.allclose origin": origin(numpy.allclose),
        "np.testing.assert_allclose(1, 2)": _outcome(
            lambda: numpy.testing.assert_allclose(1.0, 2.0)
        ),
        "check_close('x', 1.0, 2.0)": _outcome(lambda: grading.check_close("x", 1.0, 2.0)),
        "check_true(False)": _outcome(lambda: grading.check_true(False, "m")),
        "check_choice('x', 'a', 'b')": _outcome(
            lambda: grading.check_choice("x", "a", "b", ["a", "b"])
        ),
        "check_mapping('x', {a: 1}, {a: 2})": _outcome(
            lambda: grading.check_mapping("x", {"a": 1.0}, {"a": 2.0})
        ),
        "check_tensor('x', ones, zeros)": _outcome(
            lambda: grading.check_tensor("x", np.ones(3), np.zeros(3))
        ),
        "check_attention('o', ones, zeros)": _outcome(
            lambda: grading.check_attention("o", np.ones((1, 4, 2)), np.zeros((1, 4, 2)))
        ),
        "answered('x', ...)": _outcome(lambda: grading.answered("x", Ellipsis)),
        "call('f', 1/0)": _outcome(lambda: grading.call("f", lambda: 1 / 0)),
    }
    # The list gpuperf.grading's own integrity check guards. A notebook that shortens it is caught
    # all the same: differences() walks the clean process's keys, so a missing one differs.
    for name in grading._CHECKS:
        result[f"gpuperf.grading.{name} origin"] = origin(getattr(grading, name, None))
    if include_torch is None:
        include_torch = "torch" in sys.modules
    if include_torch:
        import torch

        result["torch.testing.assert_close(1, 2)"] = _outcome(
            lambda: torch.testing.assert_close(torch.tensor(1.0), torch.tensor(2.0))
        )
        result["torch.testing.assert_close origin"] = origin(torch.testing.assert_close)
        result["torch.allclose origin"] = origin(torch.allclose)
    ok_test = sys.modules.get("otter.test_files.ok_test")
    result["otter run_doctest origin"] = (
        origin(ok_test.run_doctest) if ok_test is not None else _otter_run_doctest_origin()
    )
    torch = sys.modules.get("torch") if include_torch else None
    result |= _challenge_probes(challenge, grading, numpy, math_module, torch)
    for path, digest in source_hashes().items():
        result[f"gpuperf/{path} sha256"] = digest
    return result


def _otter_run_doctest_origin() -> str:
    """origin() of otter's pristine run_doctest, from its source file (without importing otter)."""
    import importlib.util

    spec = importlib.util.find_spec("otter")
    if spec is None or not spec.submodule_search_locations:
        return "otter not installed"
    path = Path(next(iter(spec.submodule_search_locations))) / "test_files" / "ok_test.py"
    module_code = compile(path.read_text(), str(path), "exec")
    for const in module_code.co_consts:
        if getattr(const, "co_name", None) == "run_doctest":
            digest = hashlib.sha256(const.co_code).hexdigest()[:16]
            return f"function:otter.test_files.ok_test:run_doctest:{path.name}:{digest}"
    return "otter run_doctest not found"


def differences(expected: dict[str, str], observed: Any) -> list[str]:
    """Human-readable list of the probes whose outcome differs (empty: nothing replaced).
    ``expected`` is this process's fingerprint (names to outcomes, strings); ``observed`` what
    the sandbox sent, anything."""
    if not isinstance(expected, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in expected.items()
    ):
        raise TypeError(f"expected={show(expected)} must be a fingerprint (a dict of strings)")
    if type(observed) is not dict or not all(
        type(k) is str and type(v) is str for k, v in observed.items()
    ):
        return ["the sandbox's reply to the canary is not a fingerprint"]
    changed = []
    for key, want in expected.items():
        got = observed.get(key)
        if got != want:
            changed.append(f"{key}: expected {want!r}, found {str(got)[:120]!r}")
    return changed


__all__ = ["differences", "fingerprint", "origin", "source_hashes"]
