"""Hidden tests, run from the autograder's own file and reported in one student-safe sentence.

A lab's hidden checks do not live in the notebook students could read: each ``# HIDDEN`` cell of
a master only calls :func:`run_hidden`, and the checks are ``qN(env)`` functions in the lab's
``hidden_tests.py``, an ``autograder_files`` entry that only the autograder zip carries.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._validate import show
from .feedback import CheckError, IntegrityError, _error_text, safe_repr
from .integrity import integrity_check

__all__ = ["run_hidden"]

#: File, next to the lab's tests in the autograder, that holds its hidden checks.
HIDDEN_TESTS_FILE = "hidden_tests.py"


def _hidden_tests_path() -> Path:
    for folder in (Path.cwd(), Path.cwd() / "tests", Path.cwd().parent):
        candidate = folder / HIDDEN_TESTS_FILE
        if candidate.is_file():
            return candidate
    raise IntegrityError(
        f"{HIDDEN_TESTS_FILE} was not found next to the notebook or in tests/ (cwd {Path.cwd()}): "
        "grade with the lab's autograder zip"
    )


def run_hidden(question: str, env: Mapping[str, Any]) -> None:
    """Run a lab's hidden checks for ``question``: ``hidden_tests.<question>(env)``.

    The hidden checks live in ``hidden_tests.py``, an autograder-only file next to the tests
    (the master's ``# HIDDEN`` cells call this function, nothing else), loaded afresh from disk on
    every call rather than imported, so the notebook cannot substitute its own module. First
    runs :func:`integrity_check`. A failure is re-raised as one :class:`CheckError` sentence
    without the traceback, so otter's output names the failed quantity but never echoes the
    hidden test's code. ``env`` is the notebook's namespace (``globals()``): the checks take only
    the student's answers from it, never references or helpers.
    """
    if not isinstance(question, str) or not question.isidentifier() or question.startswith("_"):
        raise ValueError(
            f"question={show(question)} must be a question's name, such as 'q1' (a Python name)"
        )
    if not isinstance(env, Mapping):
        raise TypeError(f"env={show(env)} must be the notebook's namespace (a dict: globals())")
    integrity_check()
    path = _hidden_tests_path()
    spec = importlib.util.spec_from_file_location(f"_gpuperf_hidden_{question}", path)
    module = importlib.util.module_from_spec(spec)
    error_message = None
    try:
        spec.loader.exec_module(module)
        check = getattr(module, question, None)
        if not callable(check):
            raise IntegrityError(f"{path.name} has no hidden checks {question}(env)")
        check(env)
    except CheckError as error:
        error_message = str(error)
    except IntegrityError:
        raise
    except AssertionError as error:
        error_message = f"a hidden check failed: {_error_text(error)}"
    except SystemExit as error:
        error_message = f"your code called exit() (SystemExit {safe_repr(error.code)})"
    except Exception as error:
        error_message = f"a hidden check could not run on your answer: {_error_text(error)}"
    if error_message is not None:
        raise CheckError(f"hidden test of {question}: {error_message}") from None
