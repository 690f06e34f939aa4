"""The course runs in Google Colab's CPU runtime, proven in a replica built from Colab's record.

``tests/colab_replica.py`` builds the replica: a fresh virtual environment with the recorded
versions of Colab's CPU runtime (``src/gpuperf/colab_runtimes.json``, dependencies constrained to
Colab's whole freeze), a kernel that imports a stand-in ``google.colab`` at start, and a git copy
of this working tree for the setup cells to install from. ``tests/colab_replica_run.py`` runs
in it, several at a time: every chapter page and lab master top to bottom, every untouched
student notebook up to its grader and first ``grader.check`` (then checks the grader), and the
kernel tests under the Triton the setup cells installed — Colab's pairing for its torch, 3.6.0,
beside Colab's numpy 2.1.3. The table (notebook → seconds → OK or the error) is printed, with
the stand-ins above it:

* Python: the nearest to Colab's 3.13 that has a CPU build of torch here (3.11 on the CI
  machine: PyPI has CUDA builds only, and download.pytorch.org is out of reach);
* torch: 2.13.0+cpu for Colab's 2.11.0+cpu, installed without its dependencies (they keep
  Colab's versions); ``GPUPERF_TORCH_STANDS_FOR`` tells ``install_triton`` which release it stands
  for, so the Triton installed is Colab's pairing, not 2.13's;
* ``google.colab``: a module with nothing in it, imported at kernel start;
* PyPI: a cached wheelhouse (every pip command of the replica installs only from it).

A second replica runs on Colab's own Python (3.13) without torch: the pages that need neither
torch nor Triton, and the calculators' tests.

The tests fail on any error in a notebook or in the tests run inside, on a recorded package whose
version a notebook changed, and on a student's grader that is not otter's, lacks its lab's public
tests, or passes an unanswered question (and, for lab 1, fails a right one): the checks of the
Colab lab-grading test this one replaced. Select them with ``-m colab``; the first run downloads
the wheels (about 600 MB); with no network and no cached wheels they skip, except under CI=true.
"""

from __future__ import annotations

import asyncio
import os

import colab_replica
import colab_replica_run as replica
import nbformat
import pytest

from gpuperf.release import pins

NOTEBOOKS = [job for job in replica.jobs() if job.path is not None]


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"{reason} (required when CI=true)", pytrace=False)
    pytest.skip(reason)


def _build(tmp_path, **options) -> colab_replica.Replica:
    try:
        return colab_replica.build(tmp_path, **options)
    except colab_replica.ReplicaUnavailableError as reason:
        _skip_or_fail(f"cannot build the Colab replica: {reason}")


def _assert_all_ran(result: replica.Result) -> None:
    print(result.table())  # shown with -s or -rP, and with a failure
    failures = [f"{row.name}: {row.error}" for row in result.failed]
    failures += [
        f"{row.name} output:\n{result.log[row.name][-5000:]}"
        for row in result.failed
        if row.name in result.log
    ]
    assert not failures, result.table() + "\n\n" + "\n".join(failures)
    # Every package of Colab's freeze that the replica has keeps Colab's version: the setup
    # cells and the lab grader's otter install add packages, never change Colab's (torch and
    # Triton are the stand-ins the table names).
    pins = colab_replica.freeze_pins().items()
    freeze = {name: line.split("==", 1)[1] for name, line in pins if "==" in line}
    moved = {
        name: (version, result.after[name])
        for name, version in freeze.items()
        if name not in ("torch", "triton")
        and name in result.after
        and result.after[name] != version
    }
    assert not moved, f"the notebooks changed Colab's packages (Colab's → now): {moved}"
    assert result.after.get("torch") == result.before.get("torch")
    for row in result.rows:
        if row.name.endswith("(pytest)"):
            assert " passed" in row.detail, row


@pytest.mark.colab
@pytest.mark.slow
def test_every_notebook_runs_in_a_replica_of_colabs_cpu_runtime(tmp_path):
    built = _build(tmp_path)
    before = built.packages()
    assert {"triton", "otter-grader", "gpuperf"}.isdisjoint(before), "Colab's CPU runtime has none"
    result = replica.run(built)
    _assert_all_ran(result)
    assert result.after["triton"] == built.triton == "3.6.0", "install_triton: Colab's pairing"
    assert any(row.name.startswith("kernel tests") for row in result.rows)


@pytest.mark.colab
@pytest.mark.slow
def test_pages_without_torch_run_on_colabs_python(tmp_path):
    """Python 3.13, Colab's, where this machine has it; no CPU torch exists for it here."""
    built = _build(tmp_path, python=colab_replica.colab_python(), torch=False)
    result = replica.run(built)
    _assert_all_ran(result)
    assert built.python_version.startswith(colab_replica.cpu_runtime()["python"][:4])
    assert "torch" not in result.after and "triton" not in result.after
    ran = {row.name for row in result.rows}
    assert {"chapters/01_1_peak_and_parallelism.ipynb", "labs/lab1_rooflines (student)"} <= ran


# ---------------------------------------------------------------- the replica's parts, fast


@pytest.mark.parametrize("job", NOTEBOOKS, ids=[job.name for job in NOTEBOOKS])
def test_only_the_setup_cells_url_changes(job):
    prepared = replica.prepare(job, "file:///tmp/copy")
    original = [c for c in nbformat.read(job.path, as_version=4).cells if c.cell_type == "code"]
    setup = prepared.cells[0].source
    assert '%pip install -q "gpuperf @ git+file:///tmp/copy"' in setup
    url = replica.nbhelpers.repository_url_from_config(replica.ROOT / "_config.yml")
    restored = setup
    for requirement in pins(repository_url=url).setup_installs:
        restored = restored.replace('"gpuperf @ git+file:///tmp/copy"', f'"{requirement}"', 1)
    assert restored == original[0].source
    if not job.student:
        assert [c.source for c in prepared.cells[1:]] == [c.source for c in original[1:]]


@pytest.mark.parametrize(
    "job", [j for j in NOTEBOOKS if j.student], ids=lambda job: job.name.split()[0]
)
def test_a_student_notebook_runs_to_its_grader_and_first_check(job):
    cells = replica.prepare(job, "file:///tmp/copy").cells
    assert "lab_grader(" in cells[-3].source
    assert cells[-2].source.strip().startswith("grader.check(")
    assert "REPLICA-PROBE" in cells[-1].source
    compile(cells[-1].source, "probe", "exec")


def test_without_torch_only_pages_that_need_neither_torch_nor_triton_run():
    names = [job.name for job in replica.jobs(torch=False)]
    assert "calculator tests (pytest)" in names and "labs/lab1_rooflines (master)" in names
    assert "chapters/02_roofline.ipynb" not in names  # runs Triton kernels
    assert not any(name.startswith("kernel tests") for name in names)


def test_the_two_kernel_test_runs_share_no_file_and_leave_none_out():
    def files(args) -> set[str]:
        ignored = {a.split("=", 1)[1] for a in args if a.startswith("--ignore=")}
        named = [replica.ROOT / a for a in args if not a.startswith("-")]
        found = {p for n in named for p in ([n] if n.is_file() else n.rglob("test_*.py"))}
        return {str(p.relative_to(replica.ROOT)) for p in found} - ignored

    first, rest = files(replica.KERNEL_TESTS_FIRST), files(replica.kernel_tests_rest())
    assert first and rest and not first & rest
    assert first | rest == files(replica.KERNEL_TESTS)


def test_the_record_and_the_freeze_come_from_the_same_commit():
    commit = colab_replica.record()["source"]["commit"][:7]
    assert f"at {commit} (" in colab_replica.FREEZE.read_text().splitlines()[1]
    pins = colab_replica.freeze_pins()
    for name, version in colab_replica.cpu_runtime()["packages"].items():
        if version is not None and name != "torch":  # torch's line is a URL: not a pin
            assert pins[colab_replica.name_of(name)].endswith(f"=={version}"), name


def test_the_python_nearest_to_colabs_is_tried_first():
    versions = [(3, 10), (3, 11), (3, 12), (3, 14)]
    assert colab_replica.by_closeness(versions, (3, 13)) == [(3, 12), (3, 14), (3, 11), (3, 10)]


def test_the_first_installing_cell_of_a_kind_runs_alone_and_later_ones_together():
    """Two cells of a kind not yet run: the second starts only after the first has finished.
    Once the kind has run, two run at the same time (each waits for the other to start)."""

    async def scenario() -> list[str]:
        gate, log = replica.InstallGate(), []
        first_may_finish = asyncio.Event()

        async def first() -> None:
            log.append("first starts")
            await first_may_finish.wait()
            log.append("first ends")

        async def second() -> None:
            log.append("second starts")

        tasks = [asyncio.create_task(gate.run("setup", first))]
        await asyncio.sleep(0)  # the first takes the gate
        tasks.append(asyncio.create_task(gate.run("setup", second)))
        await asyncio.sleep(0)
        log.append("released")
        first_may_finish.set()
        await asyncio.gather(*tasks)

        started = [asyncio.Event(), asyncio.Event()]

        async def together(mine: int) -> None:
            started[mine].set()
            await started[1 - mine].wait()  # never returns unless both run at once

        both = [gate.run("setup", lambda mine=mine: together(mine)) for mine in (0, 1)]
        await asyncio.wait_for(asyncio.gather(*both), timeout=60)  # a hang guard only
        return log

    assert asyncio.run(scenario()) == ["first starts", "released", "first ends", "second starts"]


def test_a_job_taken_first_gets_the_next_free_slot_before_waiting_pages():
    """One slot, held by a page; another page waits, then a pytest run: freed, the slot goes to
    the run, and the waiting page runs after it."""

    async def scenario() -> list[str]:
        slots, log = replica.Slots(1), []
        release = asyncio.Event()

        async def job(name: str, first: bool = False, hold: asyncio.Event | None = None) -> None:
            async with slots.take(first=first):
                log.append(name)
                if hold is not None:
                    await hold.wait()

        holder = asyncio.create_task(job("page 1", hold=release))
        await asyncio.sleep(0)
        waiting = [asyncio.create_task(job("page 2"))]
        await asyncio.sleep(0)
        waiting.append(asyncio.create_task(job("tests", first=True)))
        await asyncio.sleep(0)
        release.set()
        await asyncio.wait_for(asyncio.gather(holder, *waiting), timeout=60)  # a hang guard
        return log

    assert asyncio.run(scenario()) == ["page 1", "tests", "page 2"]
