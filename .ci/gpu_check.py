"""Run the whole course on a CUDA GPU inside a time budget, writing each result as it lands.

A GPU machine is lent for minutes (15 in all, start-up, transfers and retries included), so this
script spends them in the order that teaches most per second, and never loses what it learned:

1. ``probe``: the device and its software (device, driver, CUDA, torch, Triton, Python, commit),
   printed first and kept as the run's provenance, then compared with the Colab GPU runtime the
   course targets (``src/gpuperf/colab_runtimes.json``): a difference is a WARN row, not a failure;
2. ``install``: the carried wheels (``.whl/``, built by ``.ci/gpu-wheelhouse``) into a private
   site folder, when the Jupyter stack is missing — timed, and inside the budget;
3. the kernel tests, compiled on the GPU: ``pytest -m gpu`` (tensors past 2³¹ elements, 70,000
   batch·heads), then the kernel suite (``tests/kernels``, with pytest-xdist where present);
4. each lab: its solutions must score full marks, the untouched student notebook zero;
5. every chapter page, executed top to bottom, ``--jobs`` (8) at a time;
6. ``bench``: the benchmark quick run, whose JSON (``bench.json``) is rewritten after each case.

Each check is a process of its own (``gpu_check_tasks.py`` holds what each one does), started in
its own process group, in this order; a check marked exclusive runs alone (the pytest runs use
every core, the benchmark needs a quiet GPU). The moment a check ends, its row — check → seconds
→ OK / FAIL / WARN and the first error line — is added to ``gpu-check.md`` and
``gpu-check.json`` in ``--out`` (both rewritten atomically, with the checks still running and
those not started yet), and its output's tail to ``gpu-check.log``.

The budget (``--budget``, seconds of wall time from this script's start, the install included)
is kept by construction: when what is left falls to the time needed to stop cleanly
(2 × ``--grace`` + 1 s), no new check starts, running ones are interrupted (SIGINT, then SIGTERM
``--grace`` seconds later, then SIGKILL) and recorded as CUT, and the checks never started are
listed as NOT REACHED. A SIGTERM or SIGINT sent to this script does the same at once. Exit
status: 0 if every row is OK or WARN; 1 if any is FAIL, CUT or NOT REACHED; 2 for bad arguments
or when there is no GPU (without ``--cpu``).

``--cpu`` runs the same plan without a GPU (Triton's interpreter) on small subsets: one kernel
test file, lab 1, one chapter, the benchmark's case list (nothing is timed). ``--plan FILE``
replaces the course's checks with scripted ones; ``tests/test_ci.py`` uses both.

Only the standard library is imported here: this script runs before the wheels are installed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / ".ci" / "gpu_check_tasks.py"
COLAB_RUNTIMES = ROOT / "src" / "gpuperf" / "colab_runtimes.json"
#: Seven minutes: one device call, wheels install included, with time left in a 15-minute lease
#: to start the machine, fetch the results and rerun what failed.
DEFAULT_BUDGET_S = 420.0
MAX_BUDGET_S = 24 * 3600.0
DEFAULT_GRACE_S = 10.0
MAX_GRACE_S = 120.0
#: Kept free at the end of the budget for reaping and the last write of the files.
FINAL_WRITE_S = 1.0
#: How often the loop looks at its checks (seconds): the granularity of starts and stops.
POLL_S = 0.05
#: Modules the notebooks, the labs' grader and the kernel runner import that a torch + Triton
#: image lacks; if one is missing, the carried wheels are installed first.
JUPYTER_MODULES = ("nbclient", "nbformat", "ipykernel", "ipywidgets", "otter", "altair")
#: A task's last word: ``RESULT {"status": ..., "detail": ...}`` on a line of its own.
RESULT_PREFIX = "RESULT "
#: Lines of each check's output kept in gpu-check.log (failures keep more).
LOG_TAIL_OK, LOG_TAIL_FAILED = 15, 120
#: What CPU mode runs of the course (small, interpreter-friendly subsets).
CPU_KERNEL_TESTS = ("tests/kernels/test_memory_kernels.py", "-k", "copy_coalesced")
CPU_GPU_MARKED = ("tests/kernels/test_robustness.py",)
CPU_LABS = ("lab1_rooflines",)
CPU_CHAPTERS = ("chapters/05_outside_the_gpu.ipynb",)
#: The device tool brings back at most 8 files from its output folder: these are ours.
OUT_FILES = ("gpu-check.md", "gpu-check.json", "gpu-check.log", "bench.json", "bench.txt")

OK, WARN, FAIL, CUT, NOT_REACHED = "OK", "WARN", "FAIL", "CUT", "NOT REACHED"
PASSING = (OK, WARN)


# ------------------------------------------------------------------------------ checks and rows


@dataclass
class Check:
    """One thing to verify: a command run in its own process group.

    ``exclusive``: runs alone (no other check beside it). ``stop_on_fail``: if it fails, nothing
    after it can mean anything (no GPU, no Jupyter stack), so the run stops there; such a check
    runs alone too, since what follows must wait for its verdict.
    """

    name: str
    argv: list[str]
    group: str = "checks"
    exclusive: bool = False
    stop_on_fail: bool = False

    def __post_init__(self) -> None:
        self.exclusive = self.exclusive or self.stop_on_fail


@dataclass
class Row:
    """What a check came to: ``status`` is OK, WARN, FAIL, CUT (stopped by the budget) or
    NOT REACHED; ``detail`` is the first error line, or the result in a few words."""

    check: str
    group: str
    seconds: float | None
    status: str
    detail: str = ""


@dataclass
class Running:
    check: Check
    proc: subprocess.Popen
    log: Path
    started: float
    signals: list[str] = field(default_factory=list)
    ended: float | None = None

    def done(self) -> bool:
        """Whether the process has ended (its end time is kept from the first look that saw it)."""
        if self.ended is None and self.proc.poll() is not None:
            self.ended = time.monotonic()
        return self.ended is not None


# ------------------------------------------------------------------------------ the course's plan


def _task(*args: str) -> list[str]:
    return [sys.executable, str(TASKS), *args]


def chapter_notebooks() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "chapters").glob("*.ipynb"))


def lab_names() -> list[str]:
    return sorted(
        p.name for p in (ROOT / "labs").glob("lab[0-9]*_*") if (p / f"{p.name}.ipynb").is_file()
    )


def missing_jupyter_modules() -> list[str]:
    return [m for m in JUPYTER_MODULES if importlib.util.find_spec(m) is None]


def install_check(wheels: Path, site: Path) -> Check:
    """pip installs the carried wheels (no index, no dependencies: the set is complete). A
    missing wheelhouse, or one built for another Python, fails at once, saying what to do."""
    found = sorted(wheels.glob("*.whl"))
    argv = [
        sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
        "--no-cache-dir", "--upgrade", "--target", str(site), *map(str, found),
    ]  # fmt: skip
    here = "{}.{}".format(*sys.version_info[:2])
    try:
        built_for = json.loads((wheels / "WHEELHOUSE.json").read_text())["python"]
    except (OSError, ValueError, KeyError):
        built_for = here  # an older wheelhouse without its description: let pip judge
    if not found:
        argv = _task("fail", f"Jupyter stack missing ({', '.join(missing_jupyter_modules())}) "
                     f"and no wheels in {wheels}: run .ci/gpu-wheelhouse --python {here} "
                     f"where pip can download, and carry {wheels.name}/")  # fmt: skip
    elif built_for != here:
        argv = _task("fail", f"{wheels.name}/ was built for CPython {built_for}, this is "
                     f"{here}: run .ci/gpu-wheelhouse --python {here}")  # fmt: skip
    return Check(f"install ({len(found)} wheels)", argv, "setup", True, True)


def course_plan(args: argparse.Namespace) -> list[Check]:
    """Every check of the course, in the order that teaches most per second."""
    cpu = ["--cpu"] if args.cpu else []
    checks = [Check("probe", _task("probe", *cpu), "setup", True, True)]
    if missing_jupyter_modules():
        checks.append(install_check(args.wheels, args.site))
    workers = [] if importlib.util.find_spec("xdist") is None else ["-n", str(os.cpu_count())]
    gpu_marked = ["-m", "gpu", *(CPU_GPU_MARKED if args.cpu else ["tests/kernels"])]
    suite = ["-m", "not gpu", *(CPU_KERNEL_TESTS if args.cpu else ["tests/kernels", *workers])]
    checks += [
        Check("pytest -m gpu", _task("pytest", *cpu, "--", *gpu_marked), "kernels", True),
        Check("kernel suite", _task("pytest", *cpu, "--", *suite), "kernels", True),
    ]
    labs = args.labs if args.labs is not None else (CPU_LABS if args.cpu else lab_names())
    for lab in labs:
        checks.append(Check(f"{lab} solutions", _task("grade", lab, "solution"), "labs"))
        checks.append(Check(f"{lab} student", _task("grade", lab, "student"), "labs"))
    notebooks = args.notebooks
    if notebooks is None:
        notebooks = list(CPU_CHAPTERS) if args.cpu else chapter_notebooks()
    checks += [Check(nb, _task("notebook", nb), "chapters") for nb in notebooks]
    bench = ["--list"] if args.cpu else ["--out", str(args.out)]
    checks.append(Check("bench", _task("bench", *bench), "bench", True))
    if args.only:
        keep = re.compile(args.only)
        checks = [c for c in checks if c.group == "setup" or keep.search(c.name)]
    return checks


def plan_from_file(path: Path) -> list[Check]:
    """Checks from a JSON list of {"name", "argv", "group"?, "exclusive"?, "stop_on_fail"?};
    ``{python}`` in an argument is this interpreter, ``{tasks}`` gpu_check_tasks.py."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"gpu-check: --plan {path}: {exc}") from None
    if not isinstance(raw, list) or not raw:
        raise SystemExit(f"gpu-check: --plan {path} must hold a non-empty JSON list of checks")
    checks = []
    for item in raw:
        if not (isinstance(item, dict) and item.get("name") and item.get("argv")):
            raise SystemExit(f"gpu-check: --plan {path}: {item!r} needs 'name' and 'argv'")
        argv = [
            str(a).replace("{python}", sys.executable).replace("{tasks}", str(TASKS))
            for a in item["argv"]
        ]
        checks.append(
            Check(
                str(item["name"]),
                argv,
                str(item.get("group", "checks")),
                bool(item.get("exclusive", False)),
                bool(item.get("stop_on_fail", False)),
            )
        )
    return checks


# ------------------------------------------------------------------------------ results


def _clean(text: str, limit: int = 200) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return " ".join(text.split())[:limit]


def read_result(log: Path, returncode: int) -> tuple[str, str, dict[str, Any]]:
    """(status, detail, extra) of a finished check from its output: the task's RESULT line if it
    printed one, else the exit code and the first line that looks like an error."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    lines = text.splitlines()
    for line in reversed(lines):
        if line.startswith(RESULT_PREFIX):
            try:
                result = json.loads(line[len(RESULT_PREFIX) :])
                status, detail = str(result.pop("status")), str(result.pop("detail", ""))
            except (ValueError, KeyError, AttributeError):
                break
            if status not in (OK, WARN, FAIL):
                status, detail = FAIL, f"unknown status {status!r}: {detail}"
            if returncode != 0 and status != FAIL:
                status, detail = FAIL, f"exit status {returncode} after: {detail}"
            return status, _clean(detail), result
    error = next((ln for ln in lines if re.search(r"Error|Exception|FAILED|error:", ln)), None)
    last = next((ln for ln in reversed(lines) if ln.strip()), "")
    if returncode == 0:
        return OK, _clean(last), {}
    return FAIL, _clean(error or last or f"exit status {returncode}, no output"), {}


def colab_row(provenance: dict[str, Any], record_path: Path = COLAB_RUNTIMES) -> Row:
    """This device's Python, torch and Triton against the Colab GPU runtime on record:
    major.minor of Python and torch, Triton exactly. A difference warns; it fails nothing."""
    name = "versions vs Colab GPU"
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        gpu = record["runtimes"]["gpu"]
        want = {
            "Python": gpu["python"],
            "torch": gpu["packages"]["torch"],
            "Triton": gpu["packages"]["triton"],
        }
        source = f"backend-info {record['source']['commit'][:7]}, {record['source']['date']}"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return Row(name, "setup", 0.0, WARN, f"no Colab GPU record ({exc})")
    have = {
        "Python": provenance.get("python"),
        "torch": provenance.get("torch"),
        "Triton": provenance.get("triton"),
    }

    def key(what: str, version: str | None) -> str | None:
        if not version:
            return None
        plain = version.split("+")[0]
        return plain if what == "Triton" else ".".join(plain.split(".")[:2])

    differ = [
        f"{what} {have[what]} here, {want[what]} on Colab"
        for what in want
        if key(what, have[what]) != key(what, want[what])
    ]
    if differ:
        return Row(name, "setup", 0.0, WARN, "; ".join(differ) + f" ({source})")
    same = ", ".join(f"{what} {have[what]}" for what in want)
    return Row(name, "setup", 0.0, OK, f"same as Colab: {same} ({source})")


# ------------------------------------------------------------------------------ the output files


def _write_atomic(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


class Report:
    """The run's table and JSON in ``out``, rewritten after each row; the log, appended."""

    def __init__(self, out: Path, budget_s: float, started: float, argv: list[str]) -> None:
        self.out = out
        self.budget_s = budget_s
        self.started = started
        self.argv = argv
        self.started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        self.provenance: dict[str, Any] = {}
        self.rows: list[Row] = []
        self.running: list[str] = []
        self.pending: list[str] = []
        self.stop_reason = ""
        self.exit_code: int | None = None
        out.mkdir(parents=True, exist_ok=True)
        for name in OUT_FILES:  # a previous run's files would read as this run's
            (out / name).unlink(missing_ok=True)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def add(self, row: Row, log_text: str = "") -> None:
        self.rows.append(row)
        seconds = "" if row.seconds is None else f"{row.seconds:7.1f} s"
        print(f"{row.status:<11} {seconds:>9}  {row.check}" + (f"  — {row.detail}" if row.detail
              else ""), flush=True)  # fmt: skip
        if row.seconds is not None:  # it ran: its output's tail goes to the log
            keep = LOG_TAIL_OK if row.status in PASSING else LOG_TAIL_FAILED
            tail = "".join(f"{line}\n" for line in log_text.splitlines()[-keep:])
            with (self.out / "gpu-check.log").open("a", encoding="utf-8") as log:
                log.write(f"=== {row.check}: {row.status} in {row.seconds:.1f} s\n{tail}")
        self.write()

    def document(self) -> dict[str, Any]:
        return {
            "schema": "gpuperf.gpu-check/1",
            "started_at": self.started_at,
            "budget_s": self.budget_s,
            "elapsed_s": round(self.elapsed(), 2),
            "finished": self.exit_code is not None,
            "exit_code": self.exit_code,
            "stop_reason": self.stop_reason,
            "command": self.argv,
            "provenance": self.provenance,
            "rows": [asdict(r) for r in self.rows],
            "running": self.running,
            "pending": self.pending,
            "not_reached": [r.check for r in self.rows if r.status == NOT_REACHED],
        }

    def table(self) -> str:
        doc = self.document()
        p = self.provenance
        state = f"finished, exit status {self.exit_code}" if doc["finished"] else "running"
        lines = [
            f"# gpu-check on {p.get('device', 'a device not probed')}",
            "",
            f"{self.started_at} · budget {self.budget_s:.0f} s · {doc['elapsed_s']:.0f} s "
            f"elapsed · {state}" + (f" · stopped: {self.stop_reason}" if self.stop_reason else ""),
            "",
            provenance_line(p),
            "",
            "| # | check | seconds | result | detail |",
            "|---|---|---:|---|---|",
        ]
        for i, r in enumerate(self.rows, 1):
            seconds = "" if r.seconds is None else f"{r.seconds:.1f}"
            detail = r.detail.replace("|", "\\|")
            lines.append(f"| {i} | {r.check} | {seconds} | {r.status} | {detail} |")
        if self.running:
            lines += ["", "Running: " + ", ".join(self.running)]
        if self.pending:
            lines += ["", "Not started yet: " + ", ".join(self.pending)]
        if doc["not_reached"]:
            lines += ["", "Not reached: " + ", ".join(doc["not_reached"])]
        return "\n".join(lines) + "\n"

    def write(self) -> None:
        """The table first, then the JSON: once the JSON shows a state, the table shows it too."""
        _write_atomic(self.out / "gpu-check.md", self.table())
        _write_atomic(self.out / "gpu-check.json", json.dumps(self.document(), indent=1) + "\n")


def provenance_line(p: dict[str, Any]) -> str:
    if not p:
        return "provenance: not probed (scripted plan, or the probe has not run)"
    order = ("device", "capability", "driver", "cuda", "torch", "triton", "python", "commit")
    return " · ".join(f"{k} {p[k]}" for k in order if p.get(k)) or json.dumps(p)


# ------------------------------------------------------------------------------ running the plan


def _signal_group(item: Running, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(item.proc.pid, sig)
        item.signals.append(sig.name)


def _start(check: Check, log: Path, env: dict[str, str]) -> Running:
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            check.argv, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,  # its own process group
        )  # fmt: skip
    return Running(check, proc, log, time.monotonic())


def _row(item: Running, report: Report, cut_reason: str = "") -> Row:
    seconds = (item.ended or time.monotonic()) - item.started
    status, detail, extra = read_result(item.log, item.proc.returncode)
    if extra.get("provenance"):
        report.provenance = extra["provenance"]
        print(provenance_line(report.provenance), flush=True)
    if cut_reason:
        said = f" ({detail})" if detail and not detail.endswith("no output") else ""
        status = CUT
        detail = f"{cut_reason}: stopped after {seconds:.0f} s by {'/'.join(item.signals)}{said}"
    return Row(item.check.name, item.check.group, round(seconds, 2), status, detail)


def _stop(running: list[Running], grace_s: float) -> None:
    """SIGINT (Python unwinds: a notebook's kernel is shut down, pytest prints its summary, the
    benchmark keeps its JSON), then SIGTERM, then SIGKILL, each to a check's whole group."""
    for sig, patience in (
        (signal.SIGINT, grace_s),
        (signal.SIGTERM, grace_s),
        (signal.SIGKILL, 5),
    ):
        alive = [r for r in running if not r.done()]
        for item in alive:
            _signal_group(item, sig)
        deadline = time.monotonic() + patience
        while not all([r.done() for r in alive]) and time.monotonic() < deadline:
            time.sleep(POLL_S)
    for item in running:
        item.proc.wait()
        with contextlib.suppress(ProcessLookupError):  # what it left behind in its group
            os.killpg(item.proc.pid, signal.SIGKILL)


def run_plan(
    checks: list[Check], report: Report, jobs: int, grace_s: float, env: dict[str, str]
) -> None:
    """Start the checks in order — exclusive ones alone, the others up to ``jobs`` at once —
    record each as it ends, and stop cleanly when the budget runs short (or on a signal)."""
    stop_at = report.budget_s - 2 * grace_s - FINAL_WRITE_S
    pending: deque[Check] = deque(checks)
    running: list[Running] = []
    logs = Path(tempfile.mkdtemp(prefix="gpuperf-gpu-check-"))

    def on_signal(signum: int, frame: object) -> None:
        report.stop_reason = report.stop_reason or f"received {signal.Signals(signum).name}"

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)

    def sync() -> None:
        report.running = [r.check.name for r in running]
        report.pending = [c.name for c in pending]
        report.write()

    while (pending or running) and not (report.stop_reason and running + list(pending)):
        if report.elapsed() >= stop_at and not report.stop_reason:
            report.stop_reason = f"budget of {report.budget_s:g} s ran short"
            break
        # Start what may start: in order, exclusive checks alone, at most ``jobs`` at once.
        while pending and not report.stop_reason:
            busy = len(running)
            if busy and (pending[0].exclusive or running[0].check.exclusive or busy >= jobs):
                break
            check = pending.popleft()
            running.append(_start(check, logs / f"{len(checks) - len(pending):03d}.log", env))
            sync()
        # Record what ended, the moment it ends.
        for item in [r for r in running if r.done()]:
            running.remove(item)
            row = _row(item, report)
            report.running = [r.check.name for r in running]
            report.add(row, item.log.read_text(encoding="utf-8", errors="replace"))
            if item.check.name == "probe" and report.provenance:
                report.add(colab_row(report.provenance))
            if row.status == FAIL and item.check.stop_on_fail:
                report.stop_reason = f"{item.check.name} failed, so nothing after it can run"
        time.sleep(POLL_S)
    if running:
        _stop(running, grace_s)
        for item in running:
            text = item.log.read_text(encoding="utf-8", errors="replace")
            report.add(_row(item, report, report.stop_reason), text)
        running.clear()
    for check in pending:
        report.rows.append(Row(check.name, check.group, None, NOT_REACHED, report.stop_reason))
    pending.clear()
    sync()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


# ------------------------------------------------------------------------------ main


def _seconds(what: str, low: float, high: float):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not low <= value <= high:  # also refuses nan
            raise argparse.ArgumentTypeError(
                f"{what} {text!r} must be a number of seconds in [{low:g}, {high:g}]"
            )
        return value

    return parse


def _jobs(text: str) -> int:
    if not re.fullmatch(r"\d+", text.strip()) or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"--jobs {text!r} must be a whole number in [1, 64]")
    return int(text)


def _regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(
            f"--only {text!r} is not a regular expression: {exc}"
        ) from None
    return text


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=".ci/gpu-check", description=__doc__.split("\n")[0],
        epilog="Each row is written to --out the moment it ends; see the module docstring.",
    )  # fmt: skip
    parser.add_argument(
        "--budget", type=_seconds("--budget", 1, MAX_BUDGET_S), default=DEFAULT_BUDGET_S,
        help=f"wall-clock seconds for the whole run, install included (default "
        f"{DEFAULT_BUDGET_S:.0f}: one device call of at most 7 minutes)",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=Path, default=Path(tempfile.gettempdir()) / "gpuperf-gpu-check",
        help="folder for gpu-check.md, gpu-check.json, gpu-check.log, bench.json, bench.txt",
    )  # fmt: skip
    parser.add_argument("--cpu", action="store_true", help="no GPU: interpreter, small subsets")
    parser.add_argument("--jobs", type=_jobs, default=8, help="labs and chapters at once (8)")
    parser.add_argument("--only", type=_regex, help="run only the checks whose name matches")
    parser.add_argument("--notebooks", nargs="*", help="chapter notebooks (default: all)")
    parser.add_argument("--labs", nargs="*", help="labs to grade (default: all)")
    parser.add_argument("--plan", type=Path, help="JSON list of checks replacing the course's")
    parser.add_argument("--list", action="store_true", help="print the plan; run nothing")
    parser.add_argument(
        "--grace", type=_seconds("--grace", 0, MAX_GRACE_S), default=DEFAULT_GRACE_S,
        help="seconds a stopped check gets after SIGINT, and again after SIGTERM (10)",
    )  # fmt: skip
    parser.add_argument("--commit", help="gpuperf's commit, where the checkout has no .git")
    parser.add_argument("--wheels", type=Path, default=ROOT / ".whl", help="carried wheels")
    parser.add_argument(
        "--site", type=Path, default=Path(tempfile.gettempdir()) / "gpuperf-site",
        help="where the wheels are installed (prepended to PYTHONPATH)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    # Checks run in the repository's root: every path they are given is absolute.
    args.out, args.site, args.wheels = (p.resolve() for p in (args.out, args.site, args.wheels))
    reserve = 2 * args.grace + FINAL_WRITE_S
    if args.budget <= reserve:
        parser.error(
            f"--budget {args.budget:g} leaves no time to run: stopping cleanly takes "
            f"2 × --grace {args.grace:g} + {FINAL_WRITE_S:g} = {reserve:g} s; give a budget "
            f"above {reserve:g} s or a smaller --grace"
        )
    for name in args.notebooks or []:
        if not (ROOT / name).is_file():
            parser.error(f"notebook {name!r} not found under {ROOT}")
    for lab in args.labs or []:
        if lab not in lab_names():
            parser.error(f"lab {lab!r} unknown; valid: {', '.join(lab_names())}")
    return args


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, text=True, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _git_commit() -> str:
    """The checkout's short commit (+ "-dirty"), or "" where there is no git repository."""
    sha = _git("rev-parse", "--short", "HEAD")
    dirty = sha and _git("status", "--porcelain", "--untracked-files=no")
    return f"{sha}-dirty" if dirty else sha


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    args = parse_args(argv)
    checks = plan_from_file(args.plan) if args.plan else course_plan(args)
    if args.list:
        for i, c in enumerate(checks, 1):
            mode = "alone" if c.exclusive else f"≤ {args.jobs} at once"
            print(f"{i:3d}. [{c.group}, {mode}] {c.name}: {' '.join(c.argv[1:])}")
        return 0
    commit = args.commit or _git_commit() or "unknown (no .git here: pass --commit)"
    env = dict(os.environ)
    paths = [str(args.site), str(ROOT / "src"), env.get("PYTHONPATH", "")]
    env.update(
        PYTHONPATH=os.pathsep.join(p for p in paths if p),
        PATH=os.pathsep.join([str(args.site / "bin"), env.get("PATH", "")]),
        PYTHONUNBUFFERED="1",
        GPUPERF_COMMIT=commit,
        GPU_CHECK_OUT=str(args.out),
    )
    report = Report(args.out, args.budget, started, ["gpu-check", *(argv or sys.argv[1:])])
    mode = "CPU (interpreter, small subsets)" if args.cpu else "GPU"
    print(f"gpu-check: {len(checks)} checks, budget {args.budget:.0f} s, {mode}, "
          f"output in {args.out}", flush=True)  # fmt: skip
    report.write()
    run_plan(checks, report, args.jobs, args.grace, env)
    bad = [r for r in report.rows if r.status not in PASSING]
    probe = next((r for r in report.rows if r.check == "probe"), None)
    no_gpu = probe is not None and probe.status == FAIL and "no CUDA GPU" in probe.detail
    report.exit_code = 2 if no_gpu else (1 if bad else 0)
    report.write()
    counts = {s: sum(r.status == s for r in report.rows) for s in (OK, WARN, FAIL, CUT)}
    counts[NOT_REACHED] = len(report.document()["not_reached"])
    print(f"\n{report.table()}")
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    print(f"{summary} in {report.elapsed():.0f} s of a {args.budget:g} s budget; files in "
          f"{args.out}: {', '.join(p.name for p in sorted(args.out.iterdir()))}")  # fmt: skip
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
