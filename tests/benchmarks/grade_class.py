"""Grade a generated class with the class command and say where the time goes.

    python tests/benchmarks/grade_class.py                  # 200 lab-1 + 50 lab-3 submissions,
                                                            # --jobs 1, 2 and 4, on two cores
    python tests/benchmarks/grade_class.py --lab1 20 --lab3 5 --jobs 2     # a short trial
    python tests/benchmarks/grade_class.py --lab1 4 --lab3 0 --jobs 1 --profile   # one phase each

It writes a class of notebooks made from each lab's own files, a realistic mix drawn with a
fixed seed: *right* (the solutions, each with a comment of its own, as students' copies differ),
*partial* (the handout with some questions answered), *wrong* (the solutions with one or two
answers replaced by the wrong answers of ``tests/test_labs.py``) and *broken* (a cell that
raises, a syntax error, a file that is not a notebook, and now and then a cell that never ends,
which costs the cell time limit in wall time, not CPU). Then it grades each lab's class with the
command an instructor runs, ``python -m gpuperf.grading grade LAB SUBMISSIONS --out OUT --jobs
J``, once per ``--jobs`` value, pinned to ``--cpus`` cores (two by default, the CI machine's),
and prints for each: the wall time for the class, seconds per submission (wall ÷ submissions),
CPU seconds per submission (all the command's processes), and whether every *right* submission
got full marks and every row a grade. ``--profile`` adds where one submission's time goes, from
the grading logs (to the reference namespace, the sandboxed notebook's cells, the tests) and
from timing the pieces alone (a Python start, imports, a bubblewrap start).

It is a benchmark, not a test: wall times follow the machine's load, so run it on a quiet
machine (it prints the load average before and after) and quote the whole output. It needs
bubblewrap (``apt-get install -y bubblewrap``) for the sandbox the command uses by default.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from test_labs import LOOP_FOREVER, WRONG, _answer_cells  # noqa: E402

#: Shares of each kind of submission in a generated class (right, partial, wrong, broken).
MIX = {"right": 0.40, "partial": 0.25, "wrong": 0.25, "broken": 0.10}
#: Of the broken ones, the share whose cell never ends (the rest raise, do not parse or are not
#: notebooks at all).
LOOP_SHARE = 0.1


def _wrong_answer(lab: str, question: str, source: str) -> str | None:
    """The cell ``source`` with the wrong answer of ``tests/test_labs.py`` (None: that wrong
    answer is an endless loop, which the benchmark keeps for the broken kind)."""
    change = WRONG[lab][question]
    if isinstance(change, tuple):
        old, new = change
        return source.replace(old, new) if old in source else None
    return None if change == LOOP_FOREVER else change


def make_class(lab_dir: Path, count: int, folder: Path, rng: random.Random) -> dict[str, str]:
    """Write ``count`` submissions of the lab into ``folder``; student name → kind."""
    lab = lab_dir.name
    solution = nbformat.read(lab_dir / "autograder" / f"{lab}.ipynb", as_version=4)
    handout = nbformat.read(lab_dir / "student" / f"{lab}.ipynb", as_version=4)
    answers = _answer_cells(solution)
    blanks = _answer_cells(handout)
    questions = sorted(answers, key=lambda q: int(q[1:]))
    kinds: dict[str, str] = {}
    folder.mkdir(parents=True, exist_ok=True)
    names = list(MIX)
    for index in range(count):
        student = f"student{index:03d}"
        kind = rng.choices(names, weights=[MIX[n] for n in names])[0]
        nb = nbformat.from_dict(nbformat.from_dict(solution))  # a copy
        if kind == "partial":
            nb = nbformat.from_dict(handout)
            for question in rng.sample(questions, rng.randint(1, len(questions) - 1)):
                nb.cells[blanks[question]].source = solution.cells[answers[question]].source
        elif kind == "wrong":
            for question in rng.sample(questions, rng.randint(1, 2)):
                wrong = _wrong_answer(lab, question, nb.cells[answers[question]].source)
                if wrong is not None:
                    nb.cells[answers[question]].source = wrong
        elif kind == "broken":
            what = rng.random()
            question = rng.choice(questions)
            if what < LOOP_SHARE:
                nb.cells[answers[question]].source = LOOP_FOREVER
                kind = "broken (endless loop)"
            elif what < 0.5:
                nb.cells[answers[question]].source = "raise ValueError('not finished')\n"
            elif what < 0.85:
                nb.cells[answers[question]].source = "def oops(:\n    pass\n"
            else:
                (folder / f"{student}.ipynb").write_text("{ truncated upload")
                kinds[student] = "broken (not a notebook)"
                continue
        first = answers[questions[0]] if kind != "partial" else blanks[questions[0]]
        nb.cells[first].source = f"# {student}\n" + nb.cells[first].source
        nbformat.write(nb, folder / f"{student}.ipynb")
        kinds[student] = kind
    return kinds


class CpuMeter:
    """CPU seconds of a command and every process under it, sandboxed ones included.

    A cgroup (v1 ``cpuacct``, as root) counts them all. ``RUSAGE_CHILDREN`` alone does not: it
    counts only processes that were waited for, and the class command kills a finished sandbox
    without its runner being reaped by anyone who reports to us. Without the cgroup the meter
    falls back to it and says so."""

    ROOT = Path("/sys/fs/cgroup/cpuacct")

    def __init__(self) -> None:
        self.group = self.ROOT / f"gpuperf-bench-{os.getpid()}"
        try:
            self.group.mkdir()
            self.how = "cgroup cpuacct: every process"
        except OSError:
            self.group = None
            self.how = "RUSAGE_CHILDREN: waited-for processes only (an undercount)"

    def join(self) -> None:
        """Run in the child before exec (``preexec_fn``): put it in the cgroup."""
        if self.group is not None:
            (self.group / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float:
        if self.group is not None:
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def close(self) -> None:
        if self.group is not None:
            with contextlib.suppress(OSError):
                self.group.rmdir()


def grade(
    lab_dir: Path, submissions: Path, out: Path, jobs: int, extra: list[str], meter: CpuMeter
) -> dict:
    """Run the class command; its wall time, the CPU time of all its processes, its rows."""
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "gpuperf.grading", "grade", str(lab_dir), str(submissions),
               "--out", str(out), "--jobs", str(jobs), *extra]  # fmt: skip
    before = meter.seconds()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, preexec_fn=meter.join)
    wall = time.perf_counter() - start
    cpu = meter.seconds() - before
    if done.returncode != 0:
        sys.exit(f"the class command failed ({done.returncode}):\n{done.stderr[-3000:]}")
    with open(out / lab_dir.name / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return {"wall": wall, "cpu": cpu, "rows": rows}


def check(rows: dict, kinds: dict[str, str]) -> list[str]:
    """What looks wrong in the results: a right submission without full marks, a missing row,
    a notebook left ungraded."""
    found = []
    for student, kind in kinds.items():
        row = rows.get(student)
        if row is None:
            found.append(f"{student}: no row")
        elif kind == "right" and row["total"] != row["max_total"]:
            found.append(f"{student} (right): {row['total']}/{row['max_total']} {row['notes']}")
        elif kind != "broken (not a notebook)" and row["status"] != "GRADED":
            found.append(f"{student} ({kind}): {row['status']} {row['reason']}")
    return found


def phases(out: Path) -> dict[str, list[float]]:
    """Seconds of each phase of every submission, read from the grading logs' time stamps:
    to the reference namespace, the notebook's cells in the sandbox, the tests."""
    found: dict[str, list[float]] = {
        "to the reference namespace": [],
        "sandbox and cells": [],
        "tests and canary": [],
        "whole submission": [],
    }
    for log in out.glob("*/grading.log"):
        stamps = []
        for line in log.read_text().splitlines():
            if line.startswith("[") and " s] " in line:
                stamps.append((float(line[1:].split(" s]")[0]), line.split(" s] ", 1)[1]))
        answers = next((t for t, m in stamps if m.startswith("answers taken")), None)
        first_q = next((t for t, m in stamps if m[:1] == "q" and ": " in m), None)
        if answers is None or first_q is None:
            continue
        found["to the reference namespace"].append(answers)
        found["sandbox and cells"].append(first_q - answers)
        found["tests and canary"].append(stamps[-1][0] - first_q)
        found["whole submission"].append(stamps[-1][0])
    return found


def pieces() -> dict[str, float]:
    """Wall seconds of the pieces every submission pays for, each timed alone (best of 3)."""
    runs = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import numpy": [sys.executable, "-c", "import numpy"],
        "import gpuperf.grading": [sys.executable, "-c", "import gpuperf.grading"],
        "import matplotlib.pyplot": [sys.executable, "-c", "import matplotlib.pyplot"],
        "import torch": [sys.executable, "-c", "import torch"],
        "import triton": [sys.executable, "-c", "import triton"],
        "import gpuperf.classroom.tester": [
            sys.executable,
            "-c",
            "import gpuperf.classroom.tester",
        ],
    }
    if shutil.which("bwrap"):
        runs["bwrap start (true)"] = ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "true"]
    found = {}
    for name, command in runs.items():
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            if subprocess.run(command, capture_output=True).returncode != 0:
                best = float("nan")
                break
            best = min(best, time.perf_counter() - start)
        found[name] = best
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab1", type=int, default=200, help="lab-1 submissions (200)")
    parser.add_argument("--lab3", type=int, default=50, help="lab-3 submissions (50)")
    parser.add_argument("--jobs", default="1,2,4", help="--jobs values to time (1,2,4)")
    parser.add_argument("--cpus", type=int, default=2, help="cores to pin the command to (2)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--profile", action="store_true", help="where a submission's time goes")
    parser.add_argument("--keep", type=Path, help="keep the class and results in this folder")
    parser.add_argument(
        "grade_args",
        nargs="*",
        help="more options for the class command (after --), e.g. -- --cell-timeout 30",
    )
    args = parser.parse_args(argv)
    jobs = [int(j) for j in args.jobs.split(",")]
    available = sorted(os.sched_getaffinity(0))
    if args.cpus < len(available):
        os.sched_setaffinity(0, available[: args.cpus])  # the command's processes inherit it
    import torch

    print(
        f"machine: {len(os.sched_getaffinity(0))} of {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} before; Python "
        f"{sys.version.split()[0]}, torch {torch.__version__}, sandbox "
        f"{'bwrap' if shutil.which('bwrap') else 'fallback (no bwrap)'}"
    )
    meter = CpuMeter()
    print(f"CPU time measured with {meter.how}")
    work = args.keep or Path(tempfile.mkdtemp(prefix="gpuperf-class-"))
    rng = random.Random(args.seed)
    problems = []
    for lab, count in (("lab1_rooflines", args.lab1), ("lab3_tiled_matmul", args.lab3)):
        if count <= 0:
            continue
        lab_dir = ROOT / "labs" / lab
        kinds = make_class(lab_dir, count, work / "submissions" / lab, rng)
        mix = {k: sum(1 for v in kinds.values() if v == k) for k in sorted(set(kinds.values()))}
        print(f"\n{lab}: {count} submissions ({', '.join(f'{n} {k}' for k, n in mix.items())})")
        for j in jobs:
            result = grade(
                lab_dir,
                work / "submissions" / lab,
                work / f"out-{lab}-j{j}",
                j,
                args.grade_args,
                meter,
            )
            problems += [f"{lab} --jobs {j}: {p}" for p in check(result["rows"], kinds)]
            print(
                f"  --jobs {j}: wall {result['wall']:.0f} s for the class, "
                f"{result['wall'] / count:.2f} s per submission, "
                f"CPU {result['cpu'] / count:.2f} s per submission"
            )
        if args.profile:
            found = phases(work / f"out-{lab}-j{jobs[-1]}" / lab)
            print(
                f"  one submission's phases (median over {len(found['whole submission'])}, "
                f"--jobs {jobs[-1]}, from grading.log):"
            )
            for name, values in found.items():
                if values:
                    print(f"    {name:28} {statistics.median(values):6.2f} s")
    if args.profile:
        print("\npieces, each alone (best of 3, wall):")
        for name, seconds in pieces().items():
            print(f"  {name:34} {seconds:6.2f} s")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    meter.close()
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    for problem in problems:
        print(f"PROBLEM {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
