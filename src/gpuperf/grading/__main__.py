"""``python -m gpuperf.grading grade LAB_DIR SUBMISSIONS_DIR ...``: the instructor's class command.

The command lives in :mod:`gpuperf.classroom` (``python -m gpuperf.classroom`` is the same
command). This file only hands over to it, so imports flow one way: the class grader imports the
student-facing checks of :mod:`gpuperf.grading`, never the other way round.
"""

from gpuperf.classroom.grade import main

if __name__ == "__main__":
    raise SystemExit(main())
