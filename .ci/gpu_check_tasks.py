"""What each check of ``.ci/gpu_check.py`` does, one check per process.

    python .ci/gpu_check_tasks.py probe [--cpu]          the device and its software
    python .ci/gpu_check_tasks.py notebook PATH          execute a notebook top to bottom
    python .ci/gpu_check_tasks.py grade LAB solution     the lab's solutions: full marks
    python .ci/gpu_check_tasks.py grade LAB student      the untouched student notebook: zero
    python .ci/gpu_check_tasks.py pytest [--cpu] -- ARGS pytest, counted by a plugin
    python .ci/gpu_check_tasks.py bench --out DIR        benchmark quick run → DIR/bench.json
    python .ci/gpu_check_tasks.py bench --list           the benchmark's cases (times nothing)
    python .ci/gpu_check_tasks.py fail MESSAGE           a check that can only fail, and says why

Each prints what it does, then ends with one line the runner reads:
``RESULT {"status": "OK" | "WARN" | "FAIL", "detail": "..."}`` (the probe adds ``provenance``).
When the budget runs out the runner sends SIGINT to the task's process group: nbclient shuts
its kernel down (its own handler) and the notebook task says in which cell; pytest and its
xdist workers stop and print their summary; the benchmark keeps the JSON of the cases it
finished. Each still prints its RESULT line, which the runner shows beside "CUT".

Nothing here writes to the repository: notebooks are executed in memory, labs are graded in a
temporary folder.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Per-cell limit while executing a notebook (seconds): a hang guard, the budget is the limit.
CELL_TIMEOUT_S = 600


def result(status: str, detail: str, **extra: object) -> int:
    """Print the RESULT line the runner reads; the exit status follows the result."""
    print("RESULT " + json.dumps({"status": status, "detail": detail, **extra}), flush=True)
    return 0 if status in ("OK", "WARN") else 1


def error_line(exc: BaseException) -> str:
    """One line: the exception type and message a reader can act on."""
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(exc).__name__}: {exc}"
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return " ".join(text.split())[:200]


# ------------------------------------------------------------------------------ probe


def _driver() -> str:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out.splitlines()[0].strip() if out else "none (nvidia-smi unavailable)"


def probe(cpu: bool) -> int:
    """Device, driver, CUDA, torch, Triton, numpy, Python and commit; without a GPU (and without
    ``--cpu``) a failure that stops the run: nothing here would be a GPU check."""
    from importlib.metadata import version

    import numpy
    import torch

    gpu = torch.cuda.is_available()
    info = {
        "device": torch.cuda.get_device_name(0) if gpu else "CPU (Triton interpreter)",
        "capability": "sm_{}{}".format(*torch.cuda.get_device_capability(0)) if gpu else "",
        "sms": torch.cuda.get_device_properties(0).multi_processor_count if gpu else 0,
        "memory_GiB": round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
        if gpu
        else 0,
        "driver": _driver(),
        "cuda": str(torch.version.cuda),
        "torch": torch.__version__,
        "triton": version("triton"),
        "numpy": numpy.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "commit": os.environ.get("GPUPERF_COMMIT", "unknown"),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }
    for key, value in info.items():
        print(f"{key}: {value}")
    if not gpu and not cpu:
        return result(
            "FAIL",
            "no CUDA GPU here (torch.cuda.is_available() is False): use --cpu to check the "
            "script itself on the CPU",
            provenance=info,
        )
    return result("OK", f"{info['device']}, torch {info['torch']}, Triton {info['triton']}",
                  provenance=info)  # fmt: skip


# ------------------------------------------------------------------------------ notebooks


def ipc_kernel():
    """Configuration of a kernel on Unix sockets at a path of its own, not on TCP ports: a kernel
    started while other processes open ports could find its port taken and die at start (seen in
    CI, six checks at once: "ZMQError: Address already in use"). The settings are the tests'
    (``tests/jupyter_kernels.py``, in the same checkout)."""
    import importlib.util

    from traitlets.config import Config

    spec = importlib.util.spec_from_file_location(
        "jupyter_kernels", ROOT / "tests" / "jupyter_kernels.py"
    )
    kernels = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernels)
    return Config({"KernelManager": kernels.on_unix_sockets()})


def notebook(path: str) -> int:
    """Execute a notebook in a fresh kernel, in memory, as a Colab user would (its committed
    outputs are not compared: timings and device names differ on a GPU; nbval does that on the
    CPU in CI)."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    at = [0]  # the code cell running now, counted from 1

    def on_cell_start(cell, cell_index):
        at[0] = sum(i <= cell_index for i in code)

    client = nbclient.NotebookClient(
        nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", on_cell_start=on_cell_start,
        resources={"metadata": {"path": str(Path(path).parent)}}, config=ipc_kernel(),
    )  # fmt: skip
    try:
        client.execute()
    except BaseException as exc:
        where = f"code cell {at[0]} of {len(code)}"
        # On SIGINT nbclient shuts the kernel down (its own handler), and the cell in flight
        # fails with DeadKernelError: say it was interrupted, not that the kernel crashed.
        if getattr(client, "_async_cleanup_kernel_future", None) is not None:
            return result("FAIL", f"interrupted in {where}; the kernel was shut down")
        return result("FAIL", f"{where}: {error_line(exc)}")
    return result("OK", f"{len(code)} code cells ran")


# ------------------------------------------------------------------------------ labs


def grade(lab: str, kind: str) -> int:
    """Grade the lab's solutions (generated from its master, in ``autograder/``) or its
    untouched student notebook with the lab's own autograder, like ``otter run``."""
    from otter.run import main as otter_run

    lab_dir = ROOT / "labs" / lab
    source = lab_dir / ("autograder" if kind == "solution" else "student") / f"{lab}.ipynb"
    with tempfile.TemporaryDirectory(prefix=f"gpu-check-{lab}-") as tmp:
        work = Path(tmp)
        (work / "out").mkdir()
        shutil.copy(source, work / source.name)
        log = io.StringIO()
        os.chdir(work)
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                otter_run(
                    str(work / source.name),
                    autograder=str(lab_dir / "autograder" / f"{lab}-autograder.zip"),
                    output_dir=str(work / "out"),
                    no_logo=True,
                )
        except BaseException as exc:  # KeyboardInterrupt too: the runner reads the line
            print(log.getvalue()[-3000:])
            return result("FAIL", f"otter run stopped: {error_line(exc)}")
        finally:
            os.chdir(ROOT)
        print(log.getvalue()[-3000:])
        path = work / "out" / "results.json"
        if not path.is_file():
            return result("FAIL", "otter run wrote no results: " + " ".join(log.getvalue()[-300:]
                          .split()))  # fmt: skip
        tests = json.loads(path.read_text())["tests"]
    scores = {
        t["name"]: (float(t["score"]), float(t["max_score"]))
        for t in tests
        if t.get("max_score") is not None
    }
    if not scores:
        return result("FAIL", "no question was graded")
    earned = sum(s for s, _ in scores.values())
    possible = sum(p for _, p in scores.values())
    if kind == "solution":
        lost = sorted(q for q, (s, p) in scores.items() if s != p)
        detail = f"{earned:g}/{possible:g}" + (f"; lost: {', '.join(lost)}" if lost else "")
        return result("FAIL" if lost else "OK", detail)
    scored = sorted(q for q, (s, _) in scores.items() if s != 0)
    detail = f"{earned:g}/{possible:g}" + (f"; earned: {', '.join(scored)}" if scored else "")
    return result("FAIL" if scored else "OK", detail)


# ------------------------------------------------------------------------------ pytest


class Tally:
    """A pytest plugin that counts outcomes and keeps the first failure's one-line reason
    (under pytest-xdist the controller receives every worker's reports)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.first_failure = ""

    def _fail(self, report) -> None:
        if self.first_failure:
            return
        crash = getattr(report.longrepr, "reprcrash", None)
        message = crash.message if crash is not None else str(report.longrepr)
        lines = message.strip().splitlines() or [""]
        self.first_failure = f"{report.nodeid}: {lines[0]}"

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed:
            outcome = "failed" if report.when == "call" else "error"
        elif hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        elif report.skipped:
            outcome = "skipped"
        elif report.when == "call":
            outcome = "passed"
        else:
            return
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        if report.failed:
            self._fail(report)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.counts["error"] = self.counts.get("error", 0) + 1
            self._fail(report)


def run_pytest(args: list[str], cpu: bool) -> int:
    """pytest with the given arguments; OK when nothing failed and (on a GPU) something passed:
    a GPU check whose tests all skipped has checked nothing."""
    import pytest

    tally = Tally()
    base = ["-q", "-p", "no:nbval", "-p", "no:cacheprovider", "-o", "addopts=", "-rfE"]
    start = time.perf_counter()
    try:
        code = pytest.main([*base, *args], plugins=[tally])
    except KeyboardInterrupt:
        code = pytest.ExitCode.INTERRUPTED
    seconds = time.perf_counter() - start
    summary = ", ".join(f"{n} {w}" for w, n in sorted(tally.counts.items())) or "no test ran"
    failed = tally.counts.get("failed", 0) + tally.counts.get("error", 0)
    if code == pytest.ExitCode.INTERRUPTED:
        return result("FAIL", f"interrupted after {seconds:.0f} s: {summary} so far")
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        return result("FAIL", f"no test was selected by: {' '.join(args)}")
    if failed or code != pytest.ExitCode.OK:
        return result("FAIL", f"{summary}; first: {tally.first_failure or f'exit {int(code)}'}")
    if not tally.counts.get("passed") and not cpu:
        return result("FAIL", f"{summary}: nothing was checked on this GPU")
    return result("OK", summary)


# ------------------------------------------------------------------------------ the benchmark


def bench(out: str | None, list_only: bool) -> int:
    """``python -m gpuperf.bench --quick``: every target's numbers in one run, the JSON kept
    after each case in ``out``/bench.json and the printed table in ``out``/bench.txt."""
    from gpuperf import bench as gb

    if list_only:
        code = gb.main(["--quick", "--list"])
        n = len(gb.cases(quick=True))
        return result("OK" if code == 0 else "FAIL", f"{n} cases listed; nothing timed (--cpu)")
    path = Path(out) / "bench.json"
    text = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, s: str) -> int:
            sys.__stdout__.write(s)
            text.write(s)
            return len(s)

    try:
        with contextlib.redirect_stdout(Tee()):
            code = gb.main(["--quick", "--no-progress", "--json", str(path)])
    finally:
        (Path(out) / "bench.txt").write_text(text.getvalue(), encoding="utf-8")
    if not path.is_file():
        return result("FAIL", f"exit {code}; no {path.name} written")
    doc = json.loads(path.read_text())
    wrong = [r["case"] for r in doc["records"] if not r.get("us")]
    status = {}
    for t in doc.get("targets", []):
        status[t["status"]] = status.get(t["status"], 0) + 1
    targets = ", ".join(f"{n} {s}" for s, n in status.items())
    detail = f"{len(doc['records'])} records; targets: {targets}"
    if code == 130 or not doc.get("complete"):
        return result("FAIL", f"interrupted: {path.name} keeps {detail}")
    if wrong:
        return result("FAIL", f"wrong results (not timed): {', '.join(wrong)}; {detail}")
    return result("OK", detail)


# ------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="task", required=True)
    sub.add_parser("probe").add_argument("--cpu", action="store_true")
    sub.add_parser("notebook").add_argument("path")
    g = sub.add_parser("grade")
    g.add_argument("lab")
    g.add_argument("kind", choices=("solution", "student"))
    t = sub.add_parser("pytest")
    t.add_argument("--cpu", action="store_true")
    t.add_argument("args", nargs=argparse.REMAINDER)
    b = sub.add_parser("bench")
    b.add_argument("--out")
    b.add_argument("--list", action="store_true")
    sub.add_parser("fail").add_argument("message")
    args = parser.parse_args(argv)
    if args.task == "probe":
        return probe(args.cpu)
    if args.task == "notebook":
        return notebook(args.path)
    if args.task == "grade":
        return grade(args.lab, args.kind)
    if args.task == "pytest":
        return run_pytest([a for a in args.args if a != "--"], args.cpu)
    if args.task == "bench":
        if not args.list and not args.out:
            parser.error("bench needs --out DIR (or --list)")
        return bench(args.out, args.list)
    return result("FAIL", args.message)


if __name__ == "__main__":
    sys.exit(main())
