"""Run the whole course on a CUDA GPU and print one table: does everything a GPU user meets work?

On a GPU machine (``.ci/gpu-check``, which installs the carried wheelhouse first) this

* executes every chapter notebook top to bottom in a fresh kernel, as a Colab user would (the
  committed outputs are not compared: timings and device names differ on a GPU; nbval does that
  comparison on the CPU in CI);
* grades every lab with its own otter autograder: the solutions (generated from the lab's master
  notebook) must score full marks, the untouched student notebook must score zero;
* runs the test suite minus what needs no GPU or cannot run there (:data:`EXCLUDED_TESTS`: the
  book build, the browser, the lab-grading tests this script replaces, the Colab test that
  downloads packages); CPU-only cases skip themselves when a GPU is present;

several at a time, and prints ``what → seconds → OK or the error`` for each, then the tests'
passed/failed counts. The exit status is 0 only if everything passed.

``--cpu`` allows a run without a GPU (Triton's interpreter): the fast test of this script
(``tests/test_gpu_check.py``) uses it on one small notebook. Nothing here writes to the
repository: notebooks are executed in memory, labs are graded in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Test files this run leaves out, and why (the table says so too).
EXCLUDED_TESTS = {
    "tests/test_book.py": "builds the book (no GPU involved)",
    "tests/test_browser.py": "drives Chromium over the book (no GPU involved)",
    "tests/test_labs.py": "grades labs: done above with the same autograders",
    "tests/test_ci.py": "tests this script and .ci/run on the CPU",
    "tests/test_colab_replica.py": "builds Colab's CPU runtime from PyPI (no network here)",
}
#: Per-cell limit while executing a notebook (seconds).
CELL_TIMEOUT_S = 300


@dataclass
class Row:
    what: str
    seconds: float
    ok: bool
    detail: str


# ------------------------------------------------------------------------------ notebooks


def _error_of(exc: BaseException) -> str:
    """One line: the exception type and message a reader can act on."""
    ename = getattr(exc, "ename", None)
    evalue = getattr(exc, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(exc).__name__}: {exc}"
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return " ".join(text.split())[:160]


def execute_notebook(path: str, timeout: int = CELL_TIMEOUT_S) -> tuple[float, str | None]:
    """Execute a notebook (in memory) in a fresh kernel; (seconds, None or the error)."""
    import nbclient
    import nbformat

    start = time.perf_counter()
    try:
        nb = nbformat.read(path, as_version=4)
        client = nbclient.NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(Path(path).parent)}},
        )
        client.execute()
    except Exception as exc:
        return time.perf_counter() - start, _error_of(exc)
    return time.perf_counter() - start, None


# ------------------------------------------------------------------------------ labs


def grade(lab: str, kind: str, workdir: str) -> tuple[float, dict[str, tuple[float, float]]]:
    """Grade one lab notebook (``kind``: "solution" or "student") with the lab's autograder
    like ``otter run -a labN-autograder.zip``; (seconds, question → (score, possible))."""
    import contextlib
    import io

    from otter.run import main as otter_run

    lab_dir = ROOT / "labs" / lab
    source = lab_dir / ("autograder" if kind == "solution" else "student") / f"{lab}.ipynb"
    work = Path(workdir) / lab / kind
    (work / "out").mkdir(parents=True)
    notebook = work / source.name
    shutil.copy(source, notebook)
    log = io.StringIO()
    start = time.perf_counter()
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            otter_run(
                str(notebook),
                autograder=str(lab_dir / "autograder" / f"{lab}-autograder.zip"),
                output_dir=str(work / "out"),
                no_logo=True,
            )
    except Exception as exc:
        raise RuntimeError(f"otter run failed: {_error_of(exc)}") from None
    finally:
        os.chdir(cwd)
    results = work / "out" / "results.json"
    if not results.is_file():
        tail = " ".join(log.getvalue()[-300:].split())
        raise RuntimeError(f"otter run wrote no results: {tail}")
    tests = json.loads(results.read_text())["tests"]
    scores = {
        t["name"]: (float(t["score"]), float(t["max_score"]))
        for t in tests
        if t.get("max_score") is not None
    }
    return time.perf_counter() - start, scores


def lab_row(lab: str, kind: str, future: Future) -> Row:
    label = f"labs/{lab} " + ("solutions: full marks" if kind == "solution" else "student: zero")
    try:
        seconds, scores = future.result()
    except Exception as exc:
        return Row(label, 0.0, False, _error_of(exc))
    earned = sum(s for s, _ in scores.values())
    possible = sum(p for _, p in scores.values())
    if not scores:
        return Row(label, seconds, False, "no question was graded")
    if kind == "solution":
        lost = sorted(q for q, (s, p) in scores.items() if s != p)
        ok = not lost
        detail = f"{earned:g}/{possible:g}" + ("" if ok else f"; lost: {', '.join(lost)}")
    else:
        scored = sorted(q for q, (s, _) in scores.items() if s != 0)
        ok = not scored
        detail = f"{earned:g}/{possible:g}" + ("" if ok else f"; earned: {', '.join(scored)}")
    return Row(label, seconds, ok, ("OK " if ok else "") + detail)


# ------------------------------------------------------------------------------ tests


def parse_pytest_summary(output: str) -> dict[str, int]:
    """Counts from pytest's last summary line ("3 failed, 188 passed, 2 skipped in 9.1s")."""
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    if not lines:
        return {}
    counts = {}
    for number, word in re.findall(
        r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)", lines[-1]
    ):
        counts["error" if word.startswith("error") else word] = int(number)
    return counts


def run_tests(extra: list[str], workers: int) -> tuple[float, dict[str, int], str]:
    """The suite in one pytest process, spread over ``workers`` with pytest-xdist if present
    (Triton compiles each kernel configuration: serially that alone takes minutes)."""
    import importlib.util

    if workers > 1 and importlib.util.find_spec("xdist") is not None:
        extra = ["-n", str(workers), *extra]
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:nbval", "-p", "no:cacheprovider",
        "-o", "addopts=", "-m", "not book and not browser and not network", "tests",
        *(f"--ignore={path}" for path in EXCLUDED_TESTS), *extra,
    ]  # fmt: skip
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    return time.perf_counter() - start, parse_pytest_summary(result.stdout), result.stdout


# ------------------------------------------------------------------------------ the table


def format_table(rows: list[Row]) -> str:
    width = max([len(r.what) for r in rows] + [len("what")])
    lines = [f"{'what':<{width}}  {'seconds':>8}  result", "-" * (width + 30)]
    for r in rows:
        result = r.detail if r.ok and r.detail.startswith("OK") else ("OK" if r.ok else "")
        if not r.ok:
            result = f"FAILED {r.detail}"
        lines.append(f"{r.what:<{width}}  {r.seconds:>8.1f}  {result}")
    return "\n".join(lines)


def chapter_notebooks() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "chapters").glob("*.ipynb"))


def lab_names() -> list[str]:
    return sorted(
        p.name for p in (ROOT / "labs").glob("lab[0-9]*_*") if (p / f"{p.name}.ipynb").is_file()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="run without a GPU (Triton's interpreter); default: only chapters/05_outside_the_gpu",
    )
    parser.add_argument("--notebooks", nargs="*", help="chapter notebooks (default: all)")
    parser.add_argument("--labs", nargs="*", help="labs to grade (default: all; none with --cpu)")
    parser.add_argument("--no-tests", action="store_true", help="skip the test suite")
    parser.add_argument("--jobs", type=int, default=4, help="notebooks executed at once")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments (one string)")
    parser.add_argument(
        "--test-workers", type=int, default=4, help="pytest-xdist workers for the suite"
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs={args.jobs} must be ≥ 1")

    import torch

    if not args.cpu and not torch.cuda.is_available():
        print("gpu-check: no CUDA GPU here (torch.cuda.is_available() is False); "
              "use --cpu to check the script itself on the CPU", file=sys.stderr)  # fmt: skip
        return 2
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU (interpreter)"
    notebooks = args.notebooks
    if notebooks is None:
        notebooks = ["chapters/05_outside_the_gpu.ipynb"] if args.cpu else chapter_notebooks()
    labs = args.labs if args.labs is not None else ([] if args.cpu else lab_names())
    run_suite = not args.no_tests and not args.cpu
    for name in notebooks:
        if not (ROOT / name).is_file():
            parser.error(f"notebook {name!r} not found under {ROOT}")
    for lab in labs:
        if lab not in lab_names():
            parser.error(f"lab {lab!r} unknown; valid: {', '.join(lab_names())}")

    start = time.perf_counter()
    print(f"gpu-check on {device}: {len(notebooks)} notebooks, {len(labs)} labs, "
          f"tests: {'yes' if run_suite else 'no'}", flush=True)  # fmt: skip
    workdir = tempfile.mkdtemp(prefix="gpuperf-gpu-check-")
    context = multiprocessing.get_context("spawn")
    with (
        ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool,
        ThreadPoolExecutor(max_workers=1) as tests_pool,
    ):
        # the suite runs beside the notebooks (its own process); labs and notebooks share a pool
        tests = (
            tests_pool.submit(run_tests, args.pytest_args.split(), args.test_workers)
            if run_suite
            else None
        )
        graded = {
            (lab, kind): pool.submit(grade, lab, kind, workdir)
            for lab in labs
            for kind in ("solution", "student")
        }
        executed = {name: pool.submit(execute_notebook, str(ROOT / name)) for name in notebooks}
        rows = []
        for name, future in executed.items():
            seconds, error = future.result()
            rows.append(Row(name, seconds, error is None, error or "OK"))
        rows += [lab_row(lab, kind, future) for (lab, kind), future in graded.items()]
        if tests is not None:
            seconds, counts, output = tests.result()
            ok = (
                bool(counts)
                and counts.get("passed", 0) > 0
                and not (counts.get("failed") or counts.get("error"))
            )
            summary = ", ".join(f"{n} {w}" for w, n in counts.items()) or "no summary"
            if not ok:
                failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", output, flags=re.M)
                summary += ("; " + " ".join(failed[:8])) if failed else ""
                summary += "" if counts else " " + " ".join(output[-300:].split())
            rows.append(Row("tests (pytest, this device)", seconds, ok, ("OK " if ok else "")
                            + summary))  # fmt: skip
    shutil.rmtree(workdir, ignore_errors=True)
    print()
    print(format_table(rows))
    failed = [r for r in rows if not r.ok]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} OK in {time.perf_counter() - start:.0f} s "
          f"on {device}" + ("" if run_suite else "; test suite not run"))  # fmt: skip
    if run_suite:
        print("tests left out: " + "; ".join(f"{k} ({v})" for k, v in EXCLUDED_TESTS.items()))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
