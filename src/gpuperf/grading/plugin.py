"""An otter-grader plugin that gives every notebook cell a time limit while ``otter run`` grades.

Under ``otter run`` (and Gradescope, which runs it) the student's notebook executes top to
bottom in one kernel; a top-level ``while True: pass`` would hang the grader and cost every
question. :class:`CellTimeLimit` stops such a cell so that only its question loses points.
(The class command, ``python -m gpuperf.grading grade``, stops cells from outside the sandbox
instead and does not need this plugin.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .._validate import show
from .running import _positive_seconds

__all__ = ["CellTimeLimit"]

#: Default limit for one notebook cell while grading (seconds); ``GPUPERF_CELL_TIME_LIMIT_S``
#: overrides it (the CI tests use a short one).
DEFAULT_CELL_TIME_LIMIT_S = 300.0


class CellTimeLimit:
    """otter-grader plugin: every notebook cell gets a time limit while ``otter run`` grades it.

    Listed in a lab's ``ASSIGNMENT CONFIG`` as ``plugins: [gpuperf.grading.CellTimeLimit]``. Its
    ``before_execution`` event puts a cell at the top of the submission that registers IPython
    hooks: each cell arms a ``SIGALRM`` timer and disarms it when done. A cell that loops forever
    then raises ``TimeoutError``; otter runs with errors allowed, so grading goes on and only the
    question whose cell timed out loses points. The limit is ``GPUPERF_CELL_TIME_LIMIT_S`` from
    the grader's environment, else :data:`DEFAULT_CELL_TIME_LIMIT_S`.

    (Not a subclass of otter's ``AbstractOtterPlugin`` so that ``import gpuperf.grading`` does not
    need otter; otter only calls the methods below.)
    """

    IMPORTABLE_NAME = "gpuperf.grading.CellTimeLimit"

    def __init__(
        self,
        submission_path: str | os.PathLike[str] | None = None,
        submission_metadata: Mapping[str, Any] | None = None,
        plugin_config: Mapping[str, Any] | None = None,
    ) -> None:
        # otter passes the submission's path and two dicts; anything else is a misuse
        if submission_path is not None and not isinstance(submission_path, str | os.PathLike):
            raise TypeError(f"submission_path={show(submission_path)} must be a path or None")
        for name, value in (
            ("submission_metadata", submission_metadata),
            ("plugin_config", plugin_config),
        ):
            if value is not None and not isinstance(value, Mapping):
                raise TypeError(f"{name}={show(value)} must be a dict or None")
        self.submission_path = submission_path
        self.submission_metadata = dict(submission_metadata or {})
        self.plugin_config = dict(plugin_config or {})

    @staticmethod
    def limit_s() -> float:
        """The limit in seconds: ``GPUPERF_CELL_TIME_LIMIT_S`` if it is a valid one, else
        :data:`DEFAULT_CELL_TIME_LIMIT_S`."""
        raw = os.environ.get("GPUPERF_CELL_TIME_LIMIT_S", "")
        try:
            return _positive_seconds(float(raw)) if raw else DEFAULT_CELL_TIME_LIMIT_S
        except ValueError:
            return DEFAULT_CELL_TIME_LIMIT_S

    @classmethod
    def cell_source(cls, seconds: float | None = None) -> str:
        """The code of the cell the plugin puts first: IPython hooks that arm a ``SIGALRM``
        timer of ``seconds`` (``None``: :meth:`limit_s`; else finite, > 0, at most a week)
        before each cell and disarm it after."""
        seconds = cls.limit_s() if seconds is None else _positive_seconds(seconds)
        return (
            "import signal as _gp_signal\n"
            "def _gp_expired(signum, frame):\n"
            f"    raise TimeoutError('this cell ran for more than {seconds:g} s and was stopped "
            "by the grader')\n"
            "def _gp_arm(*args):\n"
            "    _gp_signal.signal(_gp_signal.SIGALRM, _gp_expired)\n"
            f"    _gp_signal.setitimer(_gp_signal.ITIMER_REAL, {seconds!r})\n"
            "def _gp_disarm(*args):\n"
            "    _gp_signal.setitimer(_gp_signal.ITIMER_REAL, 0)\n"
            "get_ipython().events.register('pre_run_cell', _gp_arm)\n"
            "get_ipython().events.register('post_run_cell', _gp_disarm)\n"
        )

    def before_execution(self, submission):
        import nbformat

        if isinstance(submission, str):  # a Python script submission: nothing to hook
            return submission
        submission.cells.insert(0, nbformat.v4.new_code_cell(self.cell_source()))
        return submission

    # the other otter events are no-ops
    def during_assign(self, assignment):
        return None

    def during_generate(self, otter_config, assignment):
        return None

    def before_grading(self, config):
        return None

    def after_grading(self, results):
        return None

    def generate_report(self):
        return ""
