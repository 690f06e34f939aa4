"""One command grades a whole class: ``python -m gpuperf.grading grade LAB_DIR SUBMISSIONS_DIR``.

::

    python -m gpuperf.grading grade labs/lab1_rooflines submissions/lab1 --out results --jobs 4

grades every submission in ``SUBMISSIONS_DIR`` (one ``.ipynb`` per student, named after the
student, or one folder per student holding the notebook: :mod:`gpuperf.classroom.submissions`)
for the lab in ``LAB_DIR``, each in a fresh grading process (:mod:`gpuperf.classroom.tester`)
with its own sandbox (:mod:`gpuperf.classroom.sandbox`), ``--jobs`` at a time. It writes

* ``OUT/<lab>/grades.csv``: one row per entry of ``SUBMISSIONS_DIR``, always (one that could
  not be graded is ``UNGRADED`` with the reason: a link, not a notebook, notebook unreadable
  or damaged, wrong lab, missing otter metadata, tampering detected, grader exit code, no
  results), under a unique name (``student``) next to the entry's own name (``submission``),
  fixed question columns taken from the lab's tests, the total, the other rows whose code is
  identical (``identical_to``: flagged, not penalised), the sandbox used and notes (cells that
  timed out, ...). No text cell can run as a spreadsheet formula (:func:`spreadsheet_safe`);
* ``OUT/<lab>/<student>/``: ``results.json`` (every test case, for the instructor),
  ``feedback.txt`` (to hand back: public tests' messages, hidden tests' verdicts only),
  ``grading.log`` and ``output.log`` (what the notebook printed).

Re-running regrades: a student's folder is replaced, the CSV rewritten. The command uses the
Python environment it runs in (``sys.executable``), never a Jupyter kernelspec.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .._validate import sequence, show
from . import sandbox
from .submissions import (
    Submission,
    SubmissionError,
    code_digest,
    find_submissions,
    read_submission,
)
from .tester import load_tests

#: Seconds the outer limit waits past ``--timeout`` before it kills a grading process.
KILL_GRACE_S = 20.0


def grade_one(
    lab_dir: Path,
    submission: Submission,
    out_dir: Path,
    timeout_s: float,
    cell_timeout_s: float,
    memory_mb: int,
) -> dict:
    """Grade one submission in a fresh process; return its results (never raises)."""
    target = out_dir / submission.student
    shutil.rmtree(target, ignore_errors=True)  # a re-run regrades from scratch
    if submission.notebook is None:
        return {"status": "UNGRADED", "reason": submission.problem}
    command = [
        sys.executable, "-m", "gpuperf.classroom.tester", str(lab_dir),
        str(submission.notebook), submission.student, str(target),
        "--timeout", str(timeout_s), "--cell-timeout", str(cell_timeout_s),
        "--memory", str(memory_mb), "--sandbox", sandbox.mechanism(),
    ]  # fmt: skip
    target.mkdir(parents=True)
    with open(target / "grader-process.log", "wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env=os.environ | {"CUDA_VISIBLE_DEVICES": ""},
        )  # fmt: skip
        try:
            code = process.wait(timeout=timeout_s + KILL_GRACE_S)
            killed = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            code, killed = process.wait(), True
    results_file = target / "results.json"
    if not results_file.is_file():
        why = "killed at the time limit" if killed else f"grader exit code {code}"
        return {"status": "UNGRADED", "reason": f"no results ({why})"}
    try:
        results = json.loads(results_file.read_text())
    except ValueError as error:
        return {"status": "UNGRADED", "reason": f"unreadable results.json: {error}"}
    if killed or not results.get("complete"):
        results.setdefault("notes", []).append(
            "grading stopped at the time limit; questions not reached score 0"
            if killed
            else f"grading ended early (grader exit code {code}); questions not reached score 0"
        )
    return results


#: Text columns of ``grades.csv`` (the others are numbers the grader formats itself).
TEXT_COLUMNS = ("student", "submission", "status", "reason", "identical_to", "sandbox", "notes")
#: A spreadsheet runs a cell starting with one of these as a formula (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """``text`` as a spreadsheet shows it but never runs it: a leading ``'`` before a formula
    character (OWASP's advice for CSV files)."""
    if not isinstance(text, str):
        raise TypeError(f"text={show(text)} must be a string (a cell of grades.csv)")
    return "'" + text if text.startswith(FORMULA_START) else text


def write_csv(path: Path, questions: Sequence[str], rows: list[dict]) -> None:
    fields = ["student", "submission", "status", "reason", *questions, "total", "max_total",
              "identical_to", "sandbox", "notes"]  # fmt: skip
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            safe = {k: spreadsheet_safe(str(row.get(k, ""))) for k in TEXT_COLUMNS}
            writer.writerow(row | safe)


def flag_identical(rows: list[dict], digests: list[str | None], handout: str) -> None:
    """Fill ``identical_to`` of every row whose code cells are the same as another row's (not
    penalised: a human decides). Copies of the untouched handout are not flagged.

    ``rows`` are dicts with a ``"student"`` name; ``digests`` holds one code digest (a string,
    or ``None`` where the code is unknown) per row; ``handout`` is the handout's digest."""
    rows = list(sequence("rows", rows, _student_row, minimum=0))
    digests = list(sequence("digests", digests, _digest, minimum=0))
    if len(digests) != len(rows):
        raise ValueError(f"digests={show(digests)} must hold one digest per row ({len(rows)})")
    if not isinstance(handout, str):
        raise TypeError(f"handout={show(handout)} must be the handout's digest (a string)")
    groups: dict[str, list[str]] = defaultdict(list)
    for row, digest in zip(rows, digests, strict=True):
        if digest and digest != handout:
            groups[digest].append(row["student"])
    for row, digest in zip(rows, digests, strict=True):
        others = [name for name in groups.get(digest or "", []) if name != row["student"]]
        row["identical_to"] = " ".join(others)


def _student_row(name: str, value: object) -> dict:
    """A row of ``grades.csv``: a dict (changed in place) whose ``"student"`` is a string."""
    if not isinstance(value, dict):
        raise TypeError(f"{name}={show(value)} must be a row of grades.csv (a dict)")
    if not isinstance(value.get("student"), str):
        raise ValueError(f"{name}={show(value)} must have a 'student' name (a string)")
    return value


def _digest(name: str, value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name}={show(value)} must be a code digest (a string) or None")
    return value


def _printable(text: str) -> str:
    """``text`` without control characters (a file name could hold terminal escape codes)."""
    return "".join(c if c.isprintable() else "?" for c in text)


def _handout_digest(template: Path) -> str:
    """:func:`~gpuperf.classroom.submissions.code_digest` of the handed-out notebook."""
    try:
        notebook = read_submission(template)
    except SubmissionError:
        return ""
    return code_digest([c.source for c in notebook.cells if c.cell_type == "code"])


def _row(submission: Submission, questions: Sequence[str], results: dict, kind: str) -> dict:
    scores = results.get("questions", {})
    row = {
        "student": submission.student,
        "submission": submission.entry,
        "status": results.get("status", "UNGRADED"),
        "reason": results.get("reason", ""),
        "sandbox": results.get("sandbox", kind),
        "notes": " | ".join(results.get("notes", []))[:1000],
    }
    # questions whose tests never ran (a refused notebook) are blank, not 0
    tested = any(entry.get("cases") for entry in scores.values())
    for question in questions:
        entry = scores.get(question)
        row[question] = f"{entry['score']:g}" if entry and tested else ""
    graded = row["status"] == "GRADED"
    total = sum(float(scores[q]["score"]) for q in questions if q in scores)
    row["total"] = f"{total:g}" if graded else ""
    maximum = results.get("max_total")
    row["max_total"] = f"{maximum:g}" if isinstance(maximum, int | float) else ""
    return row


def _positive(kind: type, what: str):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{what} must be > 0, got {text}")
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    main_parser = argparse.ArgumentParser(
        prog="python -m gpuperf.grading",
        description="Grade a class's lab submissions, each in its own sandbox.",
    )
    commands = main_parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade every submission of one lab")
    grade.add_argument("lab_dir", type=Path, help="the lab folder, e.g. labs/lab1_rooflines")
    grade.add_argument("submissions", type=Path, help="one .ipynb or one folder per student")
    grade.add_argument("--out", type=Path, required=True, help="results go to OUT/<lab>/")
    grade.add_argument("--jobs", type=_positive(int, "--jobs"), default=os.cpu_count() or 1,
                       help="submissions graded at once (default: one per core)")  # fmt: skip
    grade.add_argument("--timeout", type=_positive(float, "--timeout"), default=600.0,
                       help="wall-clock seconds per submission, all included "
                       "(default 600)")  # fmt: skip
    grade.add_argument("--cell-timeout", type=_positive(float, "--cell-timeout"), default=None,
                       help="seconds per cell and per call of a student function "
                       "(default: a quarter of --timeout, at most 120)")  # fmt: skip
    grade.add_argument("--memory", type=_positive(int, "--memory"), default=4096,
                       help="address-space limit of each sandbox in MiB "
                       "(default 4096)")  # fmt: skip
    return main_parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m gpuperf.grading``; returns the exit status."""
    cli = parser()
    args = cli.parse_args(argv)
    lab_dir = args.lab_dir.resolve()
    lab = lab_dir.name
    tests_dir = lab_dir / "autograder" / "tests"
    template = lab_dir / "student" / f"{lab}.ipynb"
    if not tests_dir.is_dir() or not template.is_file():
        cli.error(
            f"{args.lab_dir} is not a lab folder: it needs autograder/tests/ and "
            f"student/{lab}.ipynb (labs are labs/lab1_rooflines ... labs/lab5_memory_hierarchy)"
        )
    if not args.submissions.is_dir():
        cli.error(f"SUBMISSIONS_DIR {args.submissions} is not a folder")
    out_dir = args.out.resolve() / lab
    if out_dir.is_relative_to(args.submissions.resolve()):
        cli.error(f"--out {args.out} must not be inside SUBMISSIONS_DIR {args.submissions}")
    cell_timeout = args.cell_timeout or min(120.0, args.timeout / 4)
    if cell_timeout > args.timeout:
        cli.error(f"--cell-timeout {cell_timeout:g} must be ≤ --timeout {args.timeout:g}")
    questions = list(load_tests(tests_dir))
    try:
        submissions = find_submissions(args.submissions, lab)
    except OSError as error:
        cli.error(f"SUBMISSIONS_DIR {args.submissions} cannot be read: {error.strerror}")
    if not submissions:
        cli.error(f"no submissions in {args.submissions} (expected <student>.ipynb files)")
    out_dir.mkdir(parents=True, exist_ok=True)
    kind = sandbox.mechanism()
    print(f"grading {len(submissions)} submissions of {lab} ({len(questions)} questions), "
          f"{args.jobs} at a time, sandbox: {kind}", flush=True)  # fmt: skip
    started = time.monotonic()

    def work(submission: Submission) -> tuple[dict, str | None]:
        try:
            results = grade_one(lab_dir, submission, out_dir, args.timeout, cell_timeout,
                                args.memory)  # fmt: skip
        except Exception as error:  # one broken submission never loses the class's CSV
            results = {"status": "UNGRADED", "reason": f"grader error: {error}"}
        row = _row(submission, questions, results, kind)
        outcome = _printable(row["total"] or row["reason"])
        print(f"  {submission.student}: {row['status']} {outcome}", flush=True)
        digest = results.get("code_sha256")
        return row, digest if isinstance(digest, str) else None

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows, digests = zip(*pool.map(work, submissions), strict=True)
    rows = list(rows)
    flag_identical(rows, list(digests), _handout_digest(template))
    csv_path = out_dir / "grades.csv"
    write_csv(csv_path, questions, rows)
    ungraded = sum(r["status"] != "GRADED" for r in rows)
    identical = sum(bool(r["identical_to"]) for r in rows)
    print(f"wrote {csv_path}: {len(rows)} rows, {ungraded} UNGRADED, {identical} with code "
          f"identical to another's ({time.monotonic() - started:.0f} s)")  # fmt: skip
    return 0


__all__ = [
    "Submission",
    "find_submissions",
    "flag_identical",
    "grade_one",
    "main",
    "parser",
    "spreadsheet_safe",
    "write_csv",
]
