"""Run the course in a replica of Colab's CPU runtime (``colab_replica``), as a student would.

:func:`run` executes, several at a time in the replica's one environment:

* every chapter page and every lab's master notebook, top to bottom (a master beside its
  ``hidden_tests.py``, as in the repository; everything else in an empty folder, as Colab's
  ``/content``), each in a fresh kernel of the replica;
* every untouched student notebook up to the grader's creation and its first ``grader.check``,
  then a probe that checks the grader (otter's, with the lab's public tests; an unanswered
  question fails, a right answer passes where :data:`RIGHT_ANSWERS` has one);
* the kernel tests under the Triton the setup cells installed (a replica without torch runs the
  calculators' tests instead, and only the pages that need neither torch nor Triton).

Each setup cell is run as it is, except that the URL of its ``%pip install "gpuperf @ git+…"``
points at the replica's git copy of the working tree. Cells that install (the setup cells, the
grader's creation) run one at a time until their kind has run once (:class:`InstallGate`).

Run it alone for the table: ``python tests/colab_replica_run.py [--jobs N] [--python 3.13
--no-torch] [NAME ...]``.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run alone: gpuperf from this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import colab_replica as colab
from jupyter_kernels import on_unix_sockets

from gpuperf import grading
from gpuperf import notebook as nbhelpers

ROOT = colab.ROOT
#: Per-cell limit, a guard against a hung kernel only (cells normally take seconds).
CELL_TIMEOUT_S = 900
#: Limit of one pytest run in the replica, a guard against a hang only.
PYTEST_TIMEOUT_S = 3600
#: The kernel tests, which the old CI step ran under Colab's Triton...
KERNEL_TESTS = ("tests/kernels", "tests/test_inspect.py", "tests/test_bench.py")
#: ... in two pytest runs at once: these (they compile the kernels' tile configurations for
#: sm_75/80/90), and the rest; each takes about half the time (measured 2026-11-26).
KERNEL_TESTS_FIRST = (
    "tests/kernels/test_flash_attention_configs.py",
    "tests/kernels/test_matmul_configs.py",
)
#: The calculators' tests (numpy only): what a replica without torch runs instead.
CALCULATOR_TESTS = (
    "tests/test_hardware.py", "tests/test_cost.py", "tests/test_roofline.py",
    "tests/test_tiling.py", "tests/test_memory.py", "tests/test_attention.py",
    "tests/test_measurements.py", "tests/test_divergence.py", "tests/test_recompute.py",
    "tests/test_units_and_validation.py", "tests/test_import.py", "tests/test_colab.py",
)  # fmt: skip
#: A right answer to one question per lab (the lab-grading test the replica absorbed had it).
RIGHT_ANSWERS = {
    "lab1_rooflines": {
        "add_intensity": 1 / 12,
        "dot_intensity": 8191 / 16386,
        "matmul_intensity": 2 * 4096**3 / (6 * 4096**2),
    }
}
TRITON_SETUP = "setup with Triton"


# ------------------------------------------------------------------ what runs


@dataclass
class Job:
    """A notebook and what to run of it, or a pytest run (``tests``)."""

    name: str
    path: Path | None = None
    student: bool = False
    files: list[Path] = field(default_factory=list)  # copied next to the notebook
    tests: tuple[str, ...] = ()


def _code(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def kernel_tests_rest() -> tuple[str, ...]:
    """The kernel tests not in :data:`KERNEL_TESTS_FIRST` (pytest's ``--ignore`` leaves out a
    file found in a folder, not one named on the command line)."""
    rest = [path for path in KERNEL_TESTS if path not in KERNEL_TESTS_FIRST]
    return (*rest, *(f"--ignore={p}" for p in KERNEL_TESTS_FIRST if p not in KERNEL_TESTS))


@cache
def needs_torch(path: Path) -> bool:
    """The page installs Triton or uses torch (a replica without torch cannot run it)."""
    import nbformat

    cells = _code(nbformat.read(path, as_version=4))
    sources = "\n".join(cell.source for cell in cells[1:])
    return "install_triton()" in cells[0].source or re.search(r"\btorch\b", sources) is not None


def jobs(torch: bool = True) -> list[Job]:
    """Tests first, then lab masters, chapter pages (with kernels first) and students: the
    longest start first."""
    labs = sorted(p for p in (ROOT / "labs").glob("lab[0-9]*_*") if p.is_dir())
    if torch:
        found = [
            Job("kernel tests 1/2 (pytest)", tests=KERNEL_TESTS_FIRST),
            Job("kernel tests 2/2 (pytest)", tests=kernel_tests_rest()),
        ]
    else:
        found = [Job("calculator tests (pytest)", tests=CALCULATOR_TESTS)]
    for lab in labs:
        found.append(Job(f"labs/{lab.name} (master)", lab / f"{lab.name}.ipynb"))
        found[-1].files.append(lab / "hidden_tests.py")  # beside it, as in the repository
    chapters = sorted((ROOT / "chapters").glob("*.ipynb"), key=lambda p: not needs_torch(p))
    found += [Job(str(p.relative_to(ROOT)), p) for p in chapters]
    found += [
        Job(f"labs/{lab.name} (student)", lab / "student" / f"{lab.name}.ipynb", student=True)
        for lab in labs
    ]
    return [job for job in found if torch or job.path is None or not needs_torch(job.path)]


def local_setup_cell(source: str, repo_url: str) -> str:
    """The setup cell with what it installs pointed at the local copy, nothing else changed:
    each requirement :func:`gpuperf.release.pins` derives for the version (the ``git+`` URL of
    ``main`` on a development version; PyPI, then the tag, on a release) becomes the copy's."""
    from gpuperf.release import pins

    url = nbhelpers.repository_url_from_config(ROOT / "_config.yml")
    for requirement in pins(repository_url=url).setup_installs:
        line = f'%pip install -q "{requirement}"'
        if source.count(line) != 1:
            raise ValueError(f"the setup cell has no line {line!r}")
        source = source.replace(line, f'%pip install -q "gpuperf @ git+{repo_url}"')
    return source


def _is_grader_cell(source: str) -> bool:
    return "lab_grader(" in source


def _is_check_cell(source: str) -> bool:
    return re.search(r"\bgrader\.check\(", source) is not None


def placeholders(sources: list[str]) -> list[str]:
    """Names the cells assign ``...`` at top level (a student notebook's blanks)."""
    names = []
    for source in sources:
        for node in ast.parse(source).body:
            if isinstance(node, ast.Assign) and getattr(node.value, "value", None) is Ellipsis:
                names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


PROBE = """
import json
from pathlib import Path

import otter

unanswered = grader.check({question!r}, global_env={{name: ... for name in {blanks!r}}})
report = {{
    "grader": type(grader).__module__ + "." + type(grader).__name__,
    "tests": sorted(p.name for p in Path("tests").glob("q*.py")),
    "otter": otter.__version__,
    "unanswered": [unanswered.grade, str(unanswered)],
}}
right = {right!r}
if right is not None:
    result = grader.check({question!r}, global_env=right)
    report["right"] = [result.grade, str(result)]
print("REPLICA-PROBE" + json.dumps(report))
"""


def prepare(job: Job, repo_url: str):
    """The notebook to execute: its setup cell pointed at the copy; for a student notebook the
    cells up to the grader's creation, its first ``grader.check`` and the probe."""
    import nbformat

    nb = nbformat.read(job.path, as_version=4)
    cells = _code(nb)
    cells[0].source = local_setup_cell(cells[0].source, repo_url)
    if job.student:
        grader_at = next(i for i, c in enumerate(cells) if _is_grader_cell(c.source))
        check_at = next(
            i for i, c in enumerate(cells) if i > grader_at and _is_check_cell(c.source)
        )
        question = re.search(r"grader\.check\(\s*['\"](\w+)", cells[check_at].source).group(1)
        probe = PROBE.format(
            question=question,
            blanks=placeholders([c.source for c in cells[grader_at + 1 : check_at]]),
            right=RIGHT_ANSWERS.get(job.path.stem),
        )
        cells = [*cells[: grader_at + 1], cells[check_at], nbformat.v4.new_code_cell(probe)]
    nb.cells = cells
    return nb


def check_probe(job: Job, report: dict[str, Any]) -> str | None:
    """What is wrong with a student notebook's grader, or None."""
    import nbformat

    nb = nbformat.read(job.path, as_version=4)
    call = next(c.source for c in _code(nb) if _is_grader_cell(c.source))
    questions = ast.literal_eval(re.search(r"lab_grader\([^,]+,\s*(\[[^\]]*\])", call).group(1))
    if report["grader"] != "otter.check.notebook.Notebook":
        return f"grader is {report['grader']}"
    if report["tests"] != sorted(f"{q}.py" for q in questions):
        return f"fetched tests {report['tests']}, expected one per question {questions}"
    if report["otter"].split(".")[0] != grading.OTTER_VERSION.split(".")[0]:
        return f"otter {report['otter']}, labs made with {grading.OTTER_VERSION}"
    grade, text = report["unanswered"]
    if grade >= 1.0:
        return f"an unanswered question passed: {text[:200]}"
    if "right" in report:
        if "not answered yet" not in text:
            return f"the unanswered check does not say 'not answered yet': {text[:200]}"
        grade, text = report["right"]
        if grade != 1.0:
            return f"a right answer failed: {text[:200]}"
    return None


# ------------------------------------------------------------------ running


@dataclass
class Row:
    name: str
    seconds: float
    error: str | None = None
    detail: str = ""
    cells: list[tuple[int, float]] = field(default_factory=list)  # (code cell, seconds)


def _one_line(exc: BaseException) -> str:
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(exc).__name__}: {exc}"
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", text).split())[:300]


class InstallGate:
    """Cells that install run alone until their kind has run once.

    The first setup cell (with or without Triton) and the first grader's creation install
    packages; two at once would race in one environment. Once a kind has run, pip finds what it
    installs already there (the same commit of the copy, the same versions) and changes nothing,
    so later cells of that kind run in parallel with anything.
    """

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._done: dict[str, asyncio.Event] = {}

    def done(self, kind: str) -> asyncio.Event:
        return self._done.setdefault(kind, asyncio.Event())

    async def run(self, kind: str | None, execute: Callable[[], Awaitable[Any]]) -> Any:
        if kind is None or self.done(kind).is_set():
            return await execute()
        async with self._lock:
            result = await execute()
            self.done(kind).set()
        return result


class Slots:
    """At most ``n`` jobs at once (one per core); a job taken ``first`` gets the next free slot
    before every job that waits without it.

    The pytest runs can start only once a setup cell has installed what they test, when every
    slot already holds a page; taking the next free slot first, they run early, beside one page
    rather than last and alone, and the short pages fill the end."""

    def __init__(self, n: int) -> None:
        self._free = n
        self._first_waiting = 0
        self._changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def take(self, first: bool = False):
        async with self._changed:
            self._first_waiting += int(first)
            try:
                await self._changed.wait_for(
                    lambda: self._free > 0 and (first or not self._first_waiting)
                )
            finally:
                self._first_waiting -= int(first)
                self._changed.notify_all()
            self._free -= 1
        try:
            yield
        finally:
            async with self._changed:
                self._free += 1
                self._changed.notify_all()


def install_kind(index: int, source: str) -> str | None:
    if index == 0:
        return TRITON_SETUP if "install_triton()" in source else "setup"
    return "grader" if _is_grader_cell(source) else None


async def execute(job: Job, replica: colab.Replica, gate: InstallGate) -> Row:
    """Run one notebook in a fresh kernel of the replica."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    start = time.perf_counter()
    cells: list[tuple[int, float]] = []
    try:
        nb = prepare(job, replica.repo_url)
        cwd = replica.root / "content" / re.sub(r"[^\w.-]+", "_", job.name)
        cwd.mkdir(parents=True)
        for extra in job.files:
            shutil.copy(extra, cwd / extra.name)
        km = AsyncKernelManager(
            kernel_name=colab.KERNEL_NAME,
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(replica.kernels)]),
            **on_unix_sockets(),  # no TCP port another process could take first
        )
        client = NotebookClient(
            nb,
            km=km,
            timeout=CELL_TIMEOUT_S,
            startup_timeout=300,
            resources={"metadata": {"path": str(cwd)}},
        )

        async def timed(cell, index: int) -> None:  # a cell's own time, not its wait at the gate
            began = time.perf_counter()
            await client.async_execute_cell(cell, index)
            cells.append((index, time.perf_counter() - began))

        async with client.async_setup_kernel(cleanup_kc=True, env=replica.kernel_env):
            for index, cell in enumerate(nb.cells):
                await gate.run(
                    install_kind(index, cell.source), lambda c=cell, i=index: timed(c, i)
                )
    except Exception as exc:
        return Row(job.name, time.perf_counter() - start, _one_line(exc), cells=cells)
    seconds = time.perf_counter() - start
    detail = f"setup cell {cells[0][1]:.0f} s"
    if not job.student:
        return Row(job.name, seconds, None, detail, cells)
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    if "REPLICA-PROBE" not in out:
        return Row(job.name, seconds, f"the grader probe printed nothing: {out[-200:]}")
    problem = check_probe(job, json.loads(out.split("REPLICA-PROBE", 1)[1]))
    problem = problem and f"grader probe: {problem}"
    return Row(job.name, seconds, problem, f"{detail}; to the 1st check", cells)


def _pytest_counts(output: str) -> str:
    lines = [ln for ln in output.splitlines() if re.search(r"\d+ (passed|failed|error)", ln)]
    return lines[-1].strip("= ") if lines else ""


async def pytest_job(job: Job, replica: colab.Replica, log: dict[str, str]) -> Row:
    """Tests of the copy, in the replica, importing the gpuperf the setup cells installed."""
    start = time.perf_counter()
    command = [replica.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:nbval"]
    command += ["-o", "addopts=", *job.tests]
    env = {**replica.kernel_env, **{k: v for k, v in os.environ.items() if k == "CI"}}
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=replica.repo,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        output = (await asyncio.wait_for(process.communicate(), PYTEST_TIMEOUT_S))[0]
    except asyncio.TimeoutError:  # a hang guard only
        process.kill()
        output = (await process.communicate())[0] + b"\n(killed: over the hang guard)"
    output = output.decode("utf-8", "replace")
    log[job.name] = output
    counts = _pytest_counts(output)
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        return Row(job.name, seconds, f"pytest exit {process.returncode}: {counts}")
    return Row(job.name, seconds, None, counts)


async def _run_all(replica: colab.Replica, selected: list[Job], parallel: int, log) -> list[Row]:
    gate, slots = InstallGate(), Slots(parallel)
    pages = [job for job in selected if job.path is not None]
    pages_done = asyncio.Event()

    async def page(job: Job) -> Row:
        async with slots.take():  # in the order of the list: the longest first
            return await execute(job, replica, gate)

    async def all_pages() -> list[Row]:
        rows = await asyncio.gather(*(page(job) for job in pages))
        pages_done.set()
        return rows

    async def tests(job: Job) -> Row:
        """A pytest run takes the next free slot, before any waiting page, once a setup cell
        has installed what it tests (gpuperf, and Triton where there is torch). Measured on
        2 cores, 2026-11-27: outside the slots (four processes on two cores) the replica took
        207, 220 and 223 CPU-seconds alone, and the whole suite's pytest 507 s; queued behind
        every page, 197 to 217, but the long run came last and alone, and pytest took 516 s;
        this way, 207 and 213, and 497 s."""
        needed = TRITON_SETUP if replica.torch is not None else "setup"
        waits = [asyncio.create_task(e.wait()) for e in (gate.done(needed), pages_done)]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for waiting in waits:
            waiting.cancel()
        if not gate.done(needed).is_set():
            return Row(job.name, 0.0, f"no {needed} cell ran without an error: nothing to test")
        async with slots.take(first=True):
            return await pytest_job(job, replica, log)

    test_jobs = [job for job in selected if job.path is None]
    page_rows, *test_rows = await asyncio.gather(all_pages(), *(tests(job) for job in test_jobs))
    by_name = {row.name: row for row in [*page_rows, *test_rows]}
    return [by_name[job.name] for job in selected]


def default_parallel() -> int:
    """Kernels at once: one per core (at most 4). One more, to cover kernels waiting on pip,
    cost more than it gained: on 2 cores, 3 at a time took 291 and 330 CPU-seconds and 169 and
    191 s, 2 at a time 269 and 307 CPU-seconds and 161 and 180 s (2026-11-27, same hour)."""
    return int(os.environ.get("GPUPERF_COLAB_REPLICA_JOBS") or min(4, os.cpu_count() or 1))


def _children_cpu_s() -> float:
    """CPU seconds of finished child processes (kernels, pip, pytest): unlike wall time, this
    does not grow with the machine's load."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Result:
    replica: colab.Replica
    rows: list[Row]
    before: dict[str, str]
    after: dict[str, str]
    seconds: float
    cpu_s: float
    parallel: int
    load: tuple[float, float]
    log: dict[str, str]

    @property
    def failed(self) -> list[Row]:
        return [row for row in self.rows if row.error]

    def changed(self) -> dict[str, tuple[str | None, str | None]]:
        """Distributions the notebooks installed or changed: name → (before, after)."""
        names = sorted(set(self.before) | set(self.after))
        pairs = {n: (self.before.get(n), self.after.get(n)) for n in names}
        return {n: pair for n, pair in pairs.items() if pair[0] != pair[1]}

    def table(self) -> str:
        replica, source = self.replica, colab.record()["source"]
        names = ("numpy", "torch", "triton", "ipython", "ipykernel", "ipywidgets", "matplotlib")
        shown = ", ".join(f"{n} {self.after.get(n, 'none')}" for n in names)
        state = "cold: wheels downloaded" if replica.cold else "warm: cached wheels"
        changed = [
            f"{n} {a}" if b is None else f"{n} {b} → {a or 'removed'}"
            for n, (b, a) in self.changed().items()
        ]
        lines = [
            f"Colab CPU runtime replica from googlecolab/backend-info {source['commit'][:7]} "
            f"({source['date']}), run {time.strftime('%Y-%m-%d %H:%M %Z')}",
            f"Python {replica.python_version}; {shown}",
            *(f"stand-in: {s}" for s in replica.stand_ins),
            f"environment built in {replica.build_s:.0f} s ({state}); {self.parallel} at a "
            f"time on {os.cpu_count()} cores; load average {self.load[0]:.1f} at the start, "
            f"{self.load[1]:.1f} at the end",
            "installed or changed by the notebooks: " + ", ".join(changed),
        ]
        totals = ("total, wall", "total, CPU of all processes")
        width = max(len(n) for n in [*(row.name for row in self.rows), *totals])
        lines += ["", f"{'notebook':<{width}}  {'seconds':>7}  result", "-" * (width + 40)]
        for row in self.rows:
            result = f"ERROR {row.error}" if row.error else f"OK {row.detail}".strip()
            lines.append(f"{row.name:<{width}}  {row.seconds:>7.1f}  {result}")
        for name, seconds in zip(totals, (self.seconds, self.cpu_s), strict=True):
            lines.append(f"{name:<{width}}  {seconds:>7.1f}")
        return "\n".join(lines)


def run(replica: colab.Replica, selected: list[Job] | None = None, parallel: int = 0) -> Result:
    """Run the jobs (all that the replica can) in the replica."""
    selected = jobs(torch=replica.torch is not None) if selected is None else selected
    parallel = parallel or default_parallel()
    before, log = replica.packages(), {}
    load, start, cpu_start = os.getloadavg()[0], time.perf_counter(), _children_cpu_s()
    rows = asyncio.run(_run_all(replica, selected, parallel, log))
    seconds, cpu_s = time.perf_counter() - start, _children_cpu_s() - cpu_start
    after = replica.packages()
    return Result(
        replica, rows, before, after, seconds, cpu_s, parallel, (load, os.getloadavg()[0]), log
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="only the jobs whose name contains one of these")
    parser.add_argument("--jobs", type=int, default=0, help="notebooks at once")
    parser.add_argument("--python", help="a Python version such as 3.13 (default: nearest)")
    parser.add_argument("--no-torch", action="store_true", help="a replica without torch")
    parser.add_argument("--cells", action="store_true", help="each notebook's slowest cells")
    parser.add_argument("--keep", action="store_true", help="keep the replica's folder")
    args = parser.parse_args(argv)
    python = tuple(map(int, args.python.split("."))) if args.python else None
    root = Path(tempfile.mkdtemp(prefix="colab-replica-"))
    try:
        replica = colab.build(root, python, torch=not args.no_torch)
        selected = [
            job
            for job in jobs(torch=replica.torch is not None)
            if not args.names or any(name in job.name for name in args.names)
        ]
        result = run(replica, selected, args.jobs)
        print(result.table())
        for row in result.rows if args.cells else []:
            slow = sorted(row.cells, key=lambda cell: -cell[1])[:4]
            print(f"{row.name}: " + ", ".join(f"cell {i} {s:.1f} s" for i, s in slow))
        for row in result.failed:
            if row.name in result.log:
                print(f"\n--- {row.name} ---\n{result.log[row.name][-6000:]}")
        return 1 if result.failed else 0
    finally:
        if args.keep:
            print(f"replica kept in {root}")
        else:
            with contextlib.suppress(OSError):
                shutil.rmtree(root)


if __name__ == "__main__":
    sys.exit(main())
