"""Checks for the graded labs: compare a student's answer with a reference and say what to fix.

The labs are otter-grader notebooks (``labs/``). Their tests call the helpers here instead of bare
``assert`` statements, so that a failing check reads like feedback a teaching assistant would
give: which quantity is off, by how much, and the likely slip ("your kernel wrote nothing past
element 1024: check the mask"). Every check raises :class:`CheckError` (an ``AssertionError``),
which otter reports as a failed test with the message shown to the student; a bad argument of
the instructor's (a tolerance of ``"1"``, a reference of ``[]``) raises ``ValueError`` or
``TypeError`` naming it and its valid range instead.

One module per concept; every public name is importable from here, as labs and hidden tests do:

* :mod:`~gpuperf.grading.feedback` — :class:`CheckError`, :class:`IntegrityError`,
  :func:`safe_repr` (a student's value shown without running its code);
* :mod:`~gpuperf.grading.answers` — :func:`answered`, :func:`answer`, :func:`all_answered`
  (an untouched ``...`` is "not answered yet", never a crash);
* :mod:`~gpuperf.grading.checks` — :func:`check_close`, :func:`check_choice`,
  :func:`check_mapping`, :func:`check_true`;
* :mod:`~gpuperf.grading.tensors` — :func:`check_tensor`, :func:`check_attention`,
  :func:`padded`, :func:`check_padding` (kernel outputs: where they are wrong, and why);
* :mod:`~gpuperf.grading.efficiency` — :func:`check_traffic` (a correct but wasteful kernel:
  the bytes it requests, counted in Triton's interpreter, against what the algorithm needs) and
  :func:`check_sector_efficiency` (the share of each touched 32-byte sector it uses);
* :mod:`~gpuperf.grading.running` — :func:`call`, :func:`time_limit` (a student's function
  under a time limit, every failure a readable message);
* :mod:`~gpuperf.grading.plugin` — :class:`CellTimeLimit`, the otter plugin that stops a cell
  that never ends under ``otter run``;
* :mod:`~gpuperf.grading.integrity` — :func:`integrity_check`, the canary against a submission
  that patched a comparison; :mod:`~gpuperf.grading.hidden` — :func:`run_hidden`, the hidden
  tests from the autograder's own file;
* :mod:`~gpuperf.grading.grader` — :func:`lab_grader`, :func:`install_otter_for_colab` (the
  notebook's ``grader``, and otter inside Colab; the public tests come from the installed
  release, :mod:`gpuperf.release`).

``python -m gpuperf.grading grade …`` grades a whole class in sandboxes (:mod:`gpuperf.classroom`,
which imports these checks; they never import it). Nothing here imports torch at module level.
"""

from __future__ import annotations

from .answers import all_answered, answer, answered
from .checks import check_choice, check_close, check_mapping, check_true
from .efficiency import check_sector_efficiency, check_traffic
from .feedback import CheckError, IntegrityError, safe_repr
from .grader import (
    COLAB_NO_DEPS_PACKAGES,
    COLAB_OTTER_PACKAGES,
    COLAB_WITH_DEPS_PACKAGES,
    OTTER_IMPORTS,
    OTTER_VERSION,
    PINNED_IN_COLAB,
    TESTS_URL_ENV,
    install_otter_for_colab,
    lab_grader,
)
from .hidden import HIDDEN_TESTS_FILE, run_hidden
from .integrity import _CHECKS, _remember_checks, integrity_check
from .plugin import DEFAULT_CELL_TIME_LIMIT_S, CellTimeLimit
from .running import call, time_limit
from .tensors import check_attention, check_padding, check_tensor, padded

__all__ = [
    "COLAB_NO_DEPS_PACKAGES",
    "COLAB_OTTER_PACKAGES",
    "COLAB_WITH_DEPS_PACKAGES",
    "DEFAULT_CELL_TIME_LIMIT_S",
    "HIDDEN_TESTS_FILE",
    "OTTER_IMPORTS",
    "OTTER_VERSION",
    "PINNED_IN_COLAB",
    "TESTS_URL_ENV",
    "CellTimeLimit",
    "CheckError",
    "IntegrityError",
    "all_answered",
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
    "install_otter_for_colab",
    "integrity_check",
    "lab_grader",
    "padded",
    "run_hidden",
    "safe_repr",
    "time_limit",
]
assert set(_CHECKS) <= set(__all__)  # the canary guards public checks only

# Record the checks as they are now, before any student code can run (the canary).
_remember_checks()
