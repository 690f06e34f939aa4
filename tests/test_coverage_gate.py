"""The calculators' coverage gate costs the rest of the suite nothing, under pytest-xdist too.

The README's command runs every test with ``--cov=gpuperf -n auto``. Only the calculators' own
tests are measured; every other test is marked ``no_cover`` by the root ``conftest.py`` and must
run with no tracer at all, from its setup to its teardown. pytest-cov 7.1 left a second coverage
running in each xdist worker, which traced every test (kernel tests took 67 % more CPU); the root
conftest stops it. This file runs a small session the way the README does and checks both halves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE_ENV = "GPUPERF_TRACE_PROBE"


@pytest.fixture
def probe_fixture():
    yield sys.gettrace()
    if os.environ.get(PROBE_ENV):
        assert sys.gettrace() is None, f"traced during teardown: {sys.gettrace()}"


def test_probe_outside_the_gate_runs_untraced(probe_fixture):
    """Run by the session below (it sets the variable); anywhere else there is nothing to see."""
    if os.environ.get(PROBE_ENV):
        assert probe_fixture is None, f"traced during setup: {probe_fixture}"
        assert sys.gettrace() is None, f"traced during the call: {sys.gettrace()}"


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"], ids=["one process", "two xdist workers"])
def test_only_the_calculators_tests_are_traced(tmp_path, workers):
    report = tmp_path / "coverage.json"
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers,
        "--cov=gpuperf", "--cov-fail-under=0", f"--cov-report=json:{report}",
        f"{Path(__file__).relative_to(ROOT)}::test_probe_outside_the_gate_runs_untraced",
        "tests/test_hardware.py",
    ]  # fmt: skip
    # its own data files: a session combining the files of the one running it would delete them
    env = {**os.environ, PROBE_ENV: "1", "COVERAGE_FILE": str(tmp_path / ".coverage")}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    files = json.loads(report.read_text())["files"]
    hardware = next(data for name, data in files.items() if name.endswith("gpuperf/hardware.py"))
    assert hardware["summary"]["percent_covered"] > 90, hardware["summary"]
