"""Grading a class: every submission in its own sandbox, tests in a process it cannot reach.

``python -m gpuperf.grading grade LAB_DIR SUBMISSIONS_DIR --out OUT_DIR [--jobs N]
[--timeout S] [--cell-timeout S] [--memory MB] [--disk MB] [--processes N] [--cpus N]``
(or ``python -m gpuperf.classroom grade ...``) grades one lab for a whole class and writes
``OUT_DIR/<lab>/grades.csv``. Imports flow one way: this package uses the
checks of :mod:`gpuperf.grading`, which never imports it. How it works, one module per step:

* :mod:`.grade`: the command; runs the submissions in parallel, writes the CSV;
* :mod:`.submissions`: one row per entry of the submissions folder, notebooks read safely;
* :mod:`.tester`: grades one submission in a fresh, trusted process: the instructor's tests
  and references, the student's answers fetched as data;
* :mod:`.student`: that process's handle on the sandboxed notebook (time limits, restarts);
* :mod:`.runner`: what runs inside the sandbox: the notebook, cell by cell;
* :mod:`.sandbox`: bubblewrap (or a documented fallback) and resource limits;
* :mod:`.box`: each submission's share of the machine, a cgroup (memory with its tmpfs files,
  processes, CPU), where the grader can make one;
* :mod:`.kernel_source`: a student's ``@triton.jit`` kernel as source, checked to be Triton and
  nothing else;
* :mod:`.recount`: efficiency cases count that source in a second sandbox of the submission's,
  strictly (nothing outside the kernel's arguments read or written), never in the student's;
* :mod:`.wire`: the data-only encoding of answers;
* :mod:`.canary`: notices a notebook that replaced checking functions;
* :mod:`.text`: what a student's text becomes in a report (escaped, quoted);
* :mod:`.trees`: folders a student made, walked and removed without following links.

The student's code never shares a process with the tests, so patching ``isclose``, otter,
``gpuperf.grading`` or the tests on disk cannot change a grade; the canary still reports it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gpuperf.classroom grade ...`` (see :mod:`gpuperf.classroom.grade`)."""
    from .grade import main as grade_main  # imported here: ``-m gpuperf.classroom.tester``

    return grade_main(argv)
