"""One command grades a whole class: ``python -m gpuperf.grading grade LAB_DIR SUBMISSIONS_DIR``.

::

    python -m gpuperf.grading grade labs/lab1_rooflines submissions/lab1 --out results --jobs 4

grades every submission in ``SUBMISSIONS_DIR`` (one ``.ipynb`` per student, named after the
student, or one folder per student holding the notebook: :mod:`gpuperf.classroom.submissions`)
for the lab in ``LAB_DIR``, each in a fresh grading process (:mod:`gpuperf.classroom.tester`)
with its own sandbox (:mod:`gpuperf.classroom.sandbox`) in its own share of the machine (a
cgroup, where one can be made: :mod:`gpuperf.classroom.box`), ``--jobs`` at a time. It writes

* ``OUT/<lab>/grades.csv``: one row per entry of ``SUBMISSIONS_DIR``, always (one that could
  not be graded is ``UNGRADED`` with the reason: a link, not a notebook, notebook unreadable
  or damaged, wrong lab, missing otter metadata, tampering detected, grader exit code, no
  results), under a unique name (``student``) next to the entry's own name (``submission``),
  fixed question columns taken from the lab's tests, the total, the other rows whose code is
  identical (``identical_to``: flagged, not penalised), the sandbox used and notes (cells that
  timed out, ...). Every text cell is escaped (:mod:`gpuperf.classroom.text`: no control
  character, whatever a name or a message held) and none can run as a spreadsheet formula
  (:func:`spreadsheet_safe`). It is written last, from rows kept in memory, through a temporary
  file; if even that fails (a full disk), the rows go to the console;
* ``OUT/<lab>/<student>/``: ``results.json`` (every test case, for the instructor),
  ``feedback.txt`` (to hand back: public tests' messages, hidden tests' verdicts only),
  ``grading.log`` and ``output.log`` (what the notebook printed), written by this process
  from what the grading process reported through a pipe.

Re-running regrades: a student's folder is replaced, the CSV rewritten. The command uses the
Python environment it runs in (``sys.executable``), never a Jupyter kernelspec.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import (
    file_path,
    instance,
    optional,
    positive_float,
    positive_int,
    sequence,
    show,
)
from . import box, sandbox
from .box import Box, Hierarchy, Share
from .submissions import (
    Submission,
    SubmissionError,
    code_digest,
    find_submissions,
    read_submission,
)
from .tester import load_tests
from .text import SEPARATOR, printable
from .trees import remove_tree

#: Seconds the outer limit waits past ``--timeout`` before it kills a grading process.
KILL_GRACE_S = 20.0
#: Longest report line a grading process may send (results, feedback, log and output).
MAX_REPORT_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Settings:
    """How every submission of a class is graded: time limits (s), the sandbox's limits (MiB of
    memory, MiB of each tmpfs folder) and its box's share (processes, CPU cores)."""

    timeout_s: float = 600.0
    cell_timeout_s: float = 120.0
    memory_mb: int = 4096
    disk_mb: int = 512
    processes: int = 256
    cpus: float = 1.0

    def __post_init__(self) -> None:
        for name in ("timeout_s", "cell_timeout_s"):
            value = positive_float(name, getattr(self, name))
            if value > 10**6:
                raise ValueError(f"{name}={show(getattr(self, name))} must be at most 10**6 s")
            object.__setattr__(self, name, value)
        if self.cell_timeout_s > self.timeout_s:
            raise ValueError(
                f"cell_timeout_s={self.cell_timeout_s:g} must be ≤ timeout_s={self.timeout_s:g}"
            )
        object.__setattr__(self, "disk_mb", positive_int("disk_mb", self.disk_mb, 1, 2**30))
        share = self.share()  # checks memory_mb, processes and cpus
        object.__setattr__(self, "memory_mb", share.memory_mb)
        object.__setattr__(self, "processes", share.processes)
        object.__setattr__(self, "cpus", share.cpus)

    def share(self) -> Share:
        return Share(self.memory_mb, self.processes, self.cpus)


def grade_one(
    lab_dir: Path,
    submission: Submission,
    out_dir: Path,
    settings: Settings,
    *,
    where: Hierarchy | None = None,
    scratch_root: Path | None = None,
) -> dict:
    """Grade one submission in a fresh process, its sandboxes in a box of their own where
    ``where`` allows (:mod:`.box`); write its folder; return its results (never raises once
    its arguments are checked).

    The box and the fallback's scratch folder (under ``scratch_root``) are removed when the
    grading process ends, even if it was killed; its results come through a pipe, so a full
    disk costs at most the files of its folder, never the row."""
    lab_dir = file_path("lab_dir", lab_dir)
    instance("submission", submission, Submission)
    out_dir = file_path("out_dir", out_dir)
    instance("settings", settings, Settings)
    optional("where", where, instance, Hierarchy)
    scratch_root = optional("scratch_root", scratch_root, file_path)
    target = out_dir / submission.student
    notes: list[str] = []
    try:
        remove_tree(target)  # a re-run regrades from scratch
    except OSError as error:
        notes.append(f"the old results folder could not be removed: {error}")
    if submission.notebook is None:
        return {"status": "UNGRADED", "reason": submission.problem}
    box = None
    if where is not None:
        try:
            # "box-" first: a row named like a control file ("cgroup.procs") cannot take its place
            box = Box.create(where, f"box-{submission.student}", settings.share())
        except OSError as error:
            notes.append(f"no cgroup for this submission ({error.strerror}): per-process limits")
    scratch = None if scratch_root is None else scratch_root / submission.student
    command = [
        sys.executable, "-m", "gpuperf.classroom.tester", str(lab_dir),
        os.fsdecode(submission.notebook), submission.student,
        "--timeout", str(settings.timeout_s), "--cell-timeout", str(settings.cell_timeout_s),
        "--memory", str(settings.memory_mb), "--disk", str(settings.disk_mb),
        "--sandbox", sandbox.mechanism(),
    ]  # fmt: skip
    if box is not None:
        command += ["--box", box.spec()]
    if scratch is not None:
        command += ["--scratch", str(scratch / "home")]
    try:
        report, code, killed = _run_tester(command, target, settings.timeout_s + KILL_GRACE_S)
    finally:
        if box is not None and not box.remove():
            notes.append("its cgroup could not be removed (a process would not die)")
        if scratch is not None:
            try:
                remove_tree(scratch)
            except OSError as error:
                notes.append(f"its scratch folder could not be removed: {error}")
    if report is None:
        why = "killed at the time limit" if killed else f"grader exit code {code}"
        return {"status": "UNGRADED", "reason": f"no results ({why})", "notes": notes}
    results = report["results"]
    if killed or not results.get("complete"):
        notes.append(
            "grading stopped at the time limit; questions not reached score 0"
            if killed
            else f"grading ended early (grader exit code {code}); questions not reached score 0"
        )
    results.setdefault("notes", []).extend(notes)
    try:
        _write_folder(target, report)
    except OSError as error:
        results["notes"].append(f"its results folder could not be written: {error.strerror}")
    return results


def _run_tester(command: list[str], target: Path, limit_s: float) -> tuple[dict | None, int, bool]:
    """Run a grading process; (its last complete report, exit code, killed at ``limit_s``)."""
    try:
        target.mkdir(parents=True, exist_ok=True)
        log = open(target / "grader-process.log", "wb")  # noqa: SIM115
    except OSError:  # a full disk: the report still comes through the pipe
        log = open(os.devnull, "wb")  # noqa: SIM115
    with log:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=log, start_new_session=True,
            env=os.environ | {"CUDA_VISIBLE_DEVICES": ""},
        )  # fmt: skip
        last, killed = _last_line(process, time.monotonic() + limit_s)
        code = process.wait()
    try:
        report = json.loads(last) if last else None
    except ValueError:
        report = None
    if not isinstance(report, dict) or not isinstance(report.get("results"), dict):
        report = None
    return report, code, killed


def _last_line(process: subprocess.Popen, deadline: float) -> tuple[bytes, bool]:
    """The last complete line ``process`` writes to its stdout (each at most
    :data:`MAX_REPORT_BYTES`), reading until it closes or ``deadline`` passes (then the
    process group is killed)."""
    fd = process.stdout.fileno()
    last, partial, skipping = b"", bytearray(), False
    with process.stdout, selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                return last, True
            if not selector.select(left):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return last, False
            partial += chunk
            while b"\n" in partial:
                line, _, rest = bytes(partial).partition(b"\n")
                if line and not skipping:
                    last = line
                skipping, partial = False, bytearray(rest)
            if len(partial) > MAX_REPORT_BYTES:
                partial, skipping = bytearray(), True


def _write_folder(target: Path, report: dict) -> None:
    """The submission's files, from its grading process's report (text already escaped)."""
    target.mkdir(parents=True, exist_ok=True)
    (target / "results.json").write_text(json.dumps(report["results"], indent=1))
    for name, key in (
        ("feedback.txt", "feedback"),
        ("grading.log", "log"),
        ("output.log", "output"),
    ):
        text = str(report.get(key, ""))
        if text or name != "output.log":
            (target / name).write_text(text, encoding="utf-8", errors="backslashreplace")


#: Text columns of ``grades.csv`` (the others are numbers the grader formats itself).
TEXT_COLUMNS = ("student", "submission", "status", "reason", "identical_to", "sandbox", "notes")
#: A spreadsheet runs a cell starting with one of these as a formula (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: Longest text a cell of ``grades.csv`` holds.
MAX_CELL_CHARS = 2000


def spreadsheet_safe(text: str) -> str:
    """``text`` as a spreadsheet shows it but never runs it: a leading ``'`` before a formula
    character (OWASP's advice for CSV files)."""
    if not isinstance(text, str):
        raise TypeError(f"text={show(text)} must be a string (a cell of grades.csv)")
    return "'" + text if text.startswith(FORMULA_START) else text


def write_csv(path: Path, questions: Sequence[str], rows: list[dict]) -> None:
    """``grades.csv`` at ``path``: one row per dict of ``rows`` (missing keys blank), the text
    columns readable and escaped (:func:`~gpuperf.classroom.text.printable`) and safe in a
    spreadsheet; written to a temporary file first, then renamed, so a failure never leaves half
    a CSV behind."""
    path = file_path("path", path)
    questions = list(sequence("questions", questions, _question, minimum=0))
    rows = list(sequence("rows", rows, _any_row, minimum=0))
    if not path.parent.is_dir():
        raise FileNotFoundError(f"path={str(path)!r}: its folder does not exist")
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        with temporary.open("w", newline="", encoding="utf-8") as handle:
            write_csv_to(handle, questions, rows)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def write_csv_to(handle: Any, questions: Sequence[str], rows: list[dict]) -> None:
    """The rows of ``grades.csv`` (see :func:`write_csv`) written to ``handle``, a text file."""
    if not callable(getattr(handle, "write", None)):
        raise TypeError(f"handle={show(handle)} must be a text file open for writing")
    questions = list(sequence("questions", questions, _question, minimum=0))
    rows = list(sequence("rows", rows, _any_row, minimum=0))
    fields = ["student", "submission", "status", "reason", *questions, "total", "max_total",
              "identical_to", "sandbox", "notes"]  # fmt: skip
    writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        cells = {k: printable(str(row.get(k, "")), MAX_CELL_CHARS) for k in fields}
        cells |= {k: spreadsheet_safe(cells[k]) for k in TEXT_COLUMNS}
        writer.writerow(cells)


def _argument(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}={show(value)} must be a command-line argument (a string)")
    return value


def _question(name: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name}={show(value)} must be a question's name (a non-empty string)")
    return value


def _any_row(name: str, value: object) -> dict:
    if not isinstance(value, dict):
        raise TypeError(f"{name}={show(value)} must be a row of grades.csv (a dict)")
    return value


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


def _handout_digest(template: Path) -> str:
    """:func:`~gpuperf.classroom.submissions.code_digest` of the handed-out notebook."""
    try:
        notebook = read_submission(template)
    except SubmissionError:
        return ""
    return code_digest(list(notebook.code_cells))


def _row(submission: Submission, questions: Sequence[str], results: dict, kind: str) -> dict:
    scores = results.get("questions", {})
    row = {
        "student": submission.student,
        "submission": submission.entry,
        "status": results.get("status", "UNGRADED"),
        "reason": results.get("reason", ""),
        "sandbox": results.get("sandbox", kind),
        "notes": SEPARATOR.join(str(note) for note in results.get("notes", [])),
    }
    # questions whose tests never ran (a refused notebook) are blank, not 0
    tested = any(case for entry in scores.values() for case in entry.get("cases") or ())
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
                       help="memory of each sandbox in MiB: all its processes and its files "
                       "together where a cgroup can be made, else each process's address "
                       "space (default 4096)")  # fmt: skip
    grade.add_argument("--disk", type=_positive(int, "--disk"), default=512,
                       help="MiB each sandbox may write to its home and to its /tmp, each "
                       "(default 512)")  # fmt: skip
    grade.add_argument("--processes", type=_positive(int, "--processes"), default=256,
                       help="processes and threads each sandbox may have at once (needs a "
                       "cgroup; default 256)")  # fmt: skip
    grade.add_argument("--cpus", type=_positive(float, "--cpus"), default=1.0,
                       help="cores' worth of CPU time each sandbox may use (needs a cgroup; "
                       "default 1)")  # fmt: skip
    return main_parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m gpuperf.grading``; returns the exit status. ``argv``: the
    command's arguments (strings), ``None`` for the command line's."""
    if argv is not None:
        argv = list(sequence("argv", argv, _argument, minimum=0))
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
    try:
        settings = Settings(args.timeout, cell_timeout, args.memory, args.disk, args.processes,
                            args.cpus)  # fmt: skip
    except ValueError as error:  # named as on the command line
        message = str(error)
        for field, option in (("cell_timeout_s", "--cell-timeout"), ("timeout_s", "--timeout"),
                              ("memory_mb", "--memory"), ("disk_mb", "--disk"),
                              ("processes", "--processes"), ("cpus", "--cpus")):  # fmt: skip
            message = message.replace(f"{field}=", f"{option}=")
        cli.error(message)
    questions = list(load_tests(tests_dir))
    try:
        submissions = find_submissions(args.submissions, lab)
    except OSError as error:
        cli.error(f"SUBMISSIONS_DIR {args.submissions} cannot be read: {error.strerror}")
    if not submissions:
        cli.error(f"no submissions in {args.submissions} (expected <student>.ipynb files)")
    out_dir.mkdir(parents=True, exist_ok=True)
    kind = sandbox.mechanism()
    where = box.hierarchy()
    print(f"grading {len(submissions)} submissions of {lab} ({len(questions)} questions), "
          f"{args.jobs} at a time, sandbox: {kind}", flush=True)  # fmt: skip
    if kind != "bwrap":
        print(f"  the fallback sandbox is used: {printable(sandbox.why_fallback())}", flush=True)
    if isinstance(where, box.Hierarchy):
        print(f"  each sandbox's share: {where.describe()}: {settings.share().describe()}",
              flush=True)  # fmt: skip
    else:
        print(f"  no cgroup: {printable(where)}. Each sandbox has per-process limits only: "
              "memory per process (its files in /tmp and home aside), no limit on its number "
              "of processes or its share of the CPU (see the instructor guide)",
              flush=True)  # fmt: skip
    hierarchy = where if isinstance(where, box.Hierarchy) else None
    started = time.monotonic()
    scratch_root = None
    if kind == "fallback":
        scratch_root = Path(tempfile.mkdtemp(prefix="gpuperf-grade-"))

    def work(submission: Submission) -> tuple[dict, str | None]:
        try:
            results = grade_one(lab_dir, submission, out_dir, settings, where=hierarchy,
                                scratch_root=scratch_root)  # fmt: skip
        except Exception as error:  # one broken submission never loses the class's CSV
            results = {"status": "UNGRADED", "reason": f"grader error: {error}"}
        row = _row(submission, questions, results, kind)
        outcome = printable(row["total"] or row["reason"], 200)
        print(f"  {submission.student}: {row['status']} {outcome}", flush=True)
        digest = results.get("code_sha256")
        return row, digest if isinstance(digest, str) else None

    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            rows, digests = zip(*pool.map(work, submissions), strict=True)
    finally:
        if hierarchy is not None:
            box.remove_class_groups(hierarchy)
        if scratch_root is not None:
            with contextlib.suppress(OSError):
                remove_tree(scratch_root)
    rows = list(rows)
    flag_identical(rows, list(digests), _handout_digest(template))
    csv_path = out_dir / "grades.csv"
    try:
        write_csv(csv_path, questions, rows)
    except OSError as error:  # the disk is full, or the path is taken: never lose the grades
        print(f"could not write {csv_path} ({error}); the class's grades follow as CSV:")
        write_csv_to(sys.stdout, questions, rows)
        return 1
    ungraded = sum(r["status"] != "GRADED" for r in rows)
    identical = sum(bool(r["identical_to"]) for r in rows)
    print(f"wrote {csv_path}: {len(rows)} rows, {ungraded} UNGRADED, {identical} with code "
          f"identical to another's ({time.monotonic() - started:.0f} s)")  # fmt: skip
    return 0


__all__ = [
    "Settings",
    "Submission",
    "find_submissions",
    "flag_identical",
    "grade_one",
    "main",
    "parser",
    "spreadsheet_safe",
    "write_csv",
    "write_csv_to",
]
