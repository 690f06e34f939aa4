"""One command grades a whole class: ``python -m gpuperf.grading grade LAB_DIR SUBMISSIONS_DIR``.

::

    python -m gpuperf.grading grade labs/lab1_rooflines submissions/lab1 --out results --jobs 4

grades every submission in ``SUBMISSIONS_DIR`` (one ``.ipynb`` per student, named after the
student, or one folder per student holding the notebook) for the lab in ``LAB_DIR``, each in a
fresh grading process (:mod:`gpuperf.classroom.tester`) with its own sandbox
(:mod:`gpuperf.classroom.sandbox`), ``--jobs`` at a time. It writes

* ``OUT/<lab>/grades.csv``: one row per submission, always (a submission that could not be
  graded is ``UNGRADED`` with the reason: notebook unreadable, wrong lab, missing otter
  metadata, tampering detected, grader exit code, no results), fixed question columns taken
  from the lab's tests, the total, the sandbox used and notes (cells that timed out, ...);
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
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from . import sandbox
from .tester import load_tests

#: Seconds the outer limit waits past ``--timeout`` before it kills a grading process.
KILL_GRACE_S = 20.0


@dataclass(frozen=True)
class Submission:
    """One row of the class: a student's name and their notebook (or why there is none)."""

    student: str
    notebook: Path | None
    problem: str = ""


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._@+-]+", "_", name).strip("._") or "student"


def find_submissions(folder: Path, lab: str) -> list[Submission]:
    """Every student in ``folder``: ``name.ipynb`` files and ``name/`` folders (whose notebook
    is ``<lab>.ipynb`` or the only ``.ipynb`` in it)."""
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix == ".ipynb":
            found.append(Submission(_safe_name(entry.stem), entry))
        elif entry.is_dir():
            notebooks = sorted(
                p for p in entry.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts
            )
            preferred = [p for p in notebooks if p.name == f"{lab}.ipynb"]
            if len(preferred) == 1 or len(notebooks) == 1:
                found.append(Submission(_safe_name(entry.name), (preferred or notebooks)[0]))
            elif not notebooks:
                found.append(Submission(_safe_name(entry.name), None, "no .ipynb in the folder"))
            else:
                names = ", ".join(str(p.relative_to(entry)) for p in notebooks[:5])
                found.append(
                    Submission(_safe_name(entry.name), None, f"several notebooks: {names}")
                )
    return found


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
    if submission.notebook is None:
        return {"status": "UNGRADED", "reason": submission.problem}
    command = [
        sys.executable, "-m", "gpuperf.classroom.tester", str(lab_dir),
        str(submission.notebook), submission.student, str(target),
        "--timeout", str(timeout_s), "--cell-timeout", str(cell_timeout_s),
        "--memory", str(memory_mb),
    ]  # fmt: skip
    shutil.rmtree(target, ignore_errors=True)  # a re-run regrades from scratch
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


def write_csv(path: Path, questions: Sequence[str], rows: list[dict]) -> None:
    fields = ["student", "status", "reason", *questions, "total", "max_total", "sandbox", "notes"]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


def _row(student: str, questions: Sequence[str], results: dict, kind: str) -> dict:
    scores = results.get("questions", {})
    row = {
        "student": student,
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
    submissions = find_submissions(args.submissions, lab)
    if not submissions:
        cli.error(f"no submissions in {args.submissions} (expected <student>.ipynb files)")
    seen: dict[str, int] = {}
    for index, submission in enumerate(submissions):  # two names with the same safe form
        seen[submission.student] = seen.get(submission.student, 0) + 1
        if seen[submission.student] > 1:
            unique = f"{submission.student}-{seen[submission.student]}"
            submissions[index] = Submission(unique, submission.notebook, submission.problem)
    out_dir.mkdir(parents=True, exist_ok=True)
    kind = sandbox.mechanism()
    print(f"grading {len(submissions)} submissions of {lab} ({len(questions)} questions), "
          f"{args.jobs} at a time, sandbox: {kind}", flush=True)  # fmt: skip
    started = time.monotonic()

    def work(submission: Submission) -> dict:
        try:
            results = grade_one(lab_dir, submission, out_dir, args.timeout, cell_timeout,
                                args.memory)  # fmt: skip
        except Exception as error:  # one broken submission never loses the class's CSV
            results = {"status": "UNGRADED", "reason": f"grader error: {error}"}
        row = _row(submission.student, questions, results, kind)
        print(f"  {submission.student}: {row['status']} {row['total'] or row['reason']}",
              flush=True)  # fmt: skip
        return row

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(work, submissions))
    csv_path = out_dir / "grades.csv"
    write_csv(csv_path, questions, rows)
    ungraded = sum(r["status"] != "GRADED" for r in rows)
    print(f"wrote {csv_path}: {len(rows)} rows, {ungraded} UNGRADED "
          f"({time.monotonic() - started:.0f} s)")  # fmt: skip
    return 0


__all__ = ["Submission", "find_submissions", "grade_one", "main", "parser", "write_csv"]
