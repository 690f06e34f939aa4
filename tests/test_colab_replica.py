"""The course runs in Google Colab's CPU runtime, proven in a replica built from Colab's record.

``tests/colab_replica.py`` builds the replica (a fresh virtual environment with the recorded
versions of Colab's CPU runtime, a kernel that imports a stand-in ``google.colab`` at start,
a git copy of this working tree for the setup cells to install from) and runs in it, several at
a time: every chapter page and lab master top to bottom, every untouched student notebook up to
its grader and first ``grader.check``, and the kernel tests under the Triton the setup cells
installed (Colab's pairing for its torch: 3.6.0, with Colab's numpy 2.1.3). The table it prints
(notebook → seconds → OK or the error) heads the output; stand-ins are listed above it:

* Python: the nearest to Colab's (3.13) that has a CPU build of torch here (3.11 on the CI
  machine: PyPI has no CPU torch wheels and download.pytorch.org is unreachable);
* torch: 2.13.0+cpu for Colab's 2.11.0+cpu, installed without its dependencies, which keep
  Colab's versions; ``install_triton`` learns which release it stands for from
  ``GPUPERF_TORCH_STANDS_FOR``, so the Triton installed is Colab's pairing, not 2.13's;
* ``google.colab``: a module with nothing in it, imported at kernel start;
* PyPI: a cached wheelhouse (every pip command of the replica installs only from it).

The test fails on any error in a notebook or the kernel tests, on a recorded package whose
version a notebook changed, and on a student grader that is not otter's, lacks its lab's public
tests, or passes an unanswered question (and, for lab 1, fails a right one). The lab-grading test
of a Colab-like environment it replaces checked the same.

Select it with ``-m colab`` (or leave it out with ``-m "not colab"``). The first run downloads the
wheels (about 300 MB); with no network and no cache it is skipped, except under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import os

import colab_replica as replica
import nbformat
import pytest

JOBS = replica.jobs()
NOTEBOOKS = [job for job in JOBS if job.path is not None]


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"{reason} (required when CI=true)", pytrace=False)
    pytest.skip(reason)


@pytest.mark.colab
def test_every_notebook_runs_in_a_replica_of_colabs_cpu_runtime(tmp_path):
    try:
        built = replica.build(tmp_path)
    except replica.ReplicaUnavailableError as reason:
        _skip_or_fail(f"cannot build the Colab replica: {reason}")
    packages = replica.cpu_runtime()["packages"]
    before = built.packages()
    assert {"triton", "otter-grader", "gpuperf"}.isdisjoint(before), "Colab's CPU runtime has none"
    result = replica.run(built)
    print(result.table())  # shown with -s or -rP, and with the failure below
    failures = [f"{row.name}: {row.error}" for row in result.failed]
    for name, output in result.log.items():
        if any(row.name.startswith(name) for row in result.failed):
            failures.append(f"{name} output:\n{output[-5000:]}")
    assert not failures, result.table() + "\n\n" + "\n".join(failures)
    after = result.after
    assert after["triton"] == built.triton == "3.6.0", "install_triton installs Colab's pairing"
    moved = {
        name: (version, after.get(name))
        for name, version in packages.items()
        if name not in ("torch", "triton") and after.get(name) != version
    }
    assert not moved, f"the notebooks changed Colab's packages (recorded → now): {moved}"
    assert after["torch"] == before["torch"]
    kernel_tests = next(row for row in result.rows if row.name.startswith("kernel tests"))
    assert " passed" in kernel_tests.detail, kernel_tests


# ---------------------------------------------------------------- the replica's parts, fast


@pytest.mark.parametrize("job", NOTEBOOKS, ids=[job.name for job in NOTEBOOKS])
def test_only_the_setup_cells_url_changes(job):
    prepared = replica.prepare(job, "file:///tmp/copy")
    original = [c for c in nbformat.read(job.path, as_version=4).cells if c.cell_type == "code"]
    setup = prepared.cells[0].source
    assert '%pip install -q "gpuperf @ git+file:///tmp/copy"' in setup
    url = replica.nbhelpers.repository_url_from_config(replica.ROOT / "_config.yml")
    assert setup.replace("file:///tmp/copy", url) == original[0].source
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


def test_the_record_and_the_freeze_come_from_the_same_commit():
    commit = replica.record()["source"]["commit"][:7]
    assert f"at {commit} (" in replica.FREEZE.read_text().splitlines()[1]
    pins = replica.freeze_pins()
    for name, version in replica.cpu_runtime()["packages"].items():
        if version is not None and name != "torch":  # torch's line is a URL: not a pin
            assert pins[replica._name(name)].endswith(f"=={version}"), name


def test_the_python_nearest_to_colabs_is_tried_first():
    versions = [(3, 10), (3, 11), (3, 12), (3, 14)]
    assert replica._by_closeness(versions, (3, 13)) == [(3, 12), (3, 14), (3, 11), (3, 10)]


def test_the_first_installing_cell_of_a_kind_runs_alone_and_later_ones_together():
    """Two cells of a kind not yet run: the second starts only after the first has finished;
    once the kind has run, two of them run at the same time (shown by each waiting for the
    other to have started)."""

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
        await asyncio.sleep(0)  # let the first take the gate
        tasks.append(asyncio.create_task(gate.run("setup", second)))
        await asyncio.sleep(0)
        log.append("released")
        first_may_finish.set()
        await asyncio.gather(*tasks)

        started = [asyncio.Event(), asyncio.Event()]

        async def together(mine: int) -> None:
            started[mine].set()
            await started[1 - mine].wait()  # deadlocks unless both run at once

        both = [gate.run("setup", lambda mine=mine: together(mine)) for mine in (0, 1)]
        await asyncio.wait_for(asyncio.gather(*both), timeout=60)  # a hang guard only
        return log

    assert asyncio.run(scenario()) == ["first starts", "released", "first ends", "second starts"]
