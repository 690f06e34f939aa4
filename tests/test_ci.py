"""The CI scripts do what the README says, and the GPU check script works (on the CPU here).

* ``.ci/run`` runs the README's test commands verbatim, in the fresh virtual environment it
  creates, so CI sees what a newcomer sees.
* ``.ci/gpu-check --cpu`` executes notebooks, grades a lab and prints its one table: a good
  notebook reads OK, a broken one shows its error, solutions score full marks and the untouched
  student notebook zero. On a GPU machine the same script runs everything (see README).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CI_RUN = ROOT / ".ci" / "run"
GPU_CHECK = ROOT / ".ci" / "gpu-check"


def readme_test_commands() -> list[str]:
    """The command lines of the README's "Run the tests" block (comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Run the tests", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    lines = [line.split("  #")[0].strip() for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_ci_runs_the_readme_commands_verbatim_in_a_fresh_venv():
    script = CI_RUN.read_text(encoding="utf-8")
    commands = readme_test_commands()
    assert commands[0].startswith("python3 -m venv .venv-ci"), commands
    assert commands[-1] == "pip install -r requirements.txt && pytest", commands
    for command in commands:
        if command.startswith("pip install torch"):
            # the reader's torch line; CI installs the same CPU build from a local wheel
            assert 'pip install -q "torch==${TORCH_VERSION}"' in script
            continue
        fragment = command.replace("&& pytest", "&& {")
        assert fragment in script, f".ci/run does not run the README's {command!r}"
    assert 'rm -rf "$VENV"' in script and "VENV=.venv-ci" in script  # recreated every run
    assert "pip freeze --exclude-editable" in script and ".ci/constraints.txt" in script


def test_constraints_file_is_a_freeze_without_gpuperf():
    path = ROOT / ".ci" / "constraints.txt"
    if not path.exists():
        pytest.skip(".ci/constraints.txt is written by the first .ci/run")
    pins = [line for line in path.read_text().splitlines() if line and line[0] != "#"]
    assert pins and all("==" in p for p in pins), pins[:5]
    names = {p.split("==")[0].lower() for p in pins}
    assert {"torch", "numpy", "jupyter-book", "pytest"} <= names
    assert "gpuperf" not in names


def _gpu_check_module():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / ".ci" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gpu_check", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_pytest_summary_is_parsed():
    parse = _gpu_check_module().parse_pytest_summary
    out = "....F\nFAILED tests/x.py::t\n3 failed, 188 passed, 2 skipped, 1 error in 9.10s\n"
    assert parse(out) == {"failed": 3, "passed": 188, "skipped": 2, "error": 1}
    assert parse("no tests ran in 0.01s") == {}


def test_table_shows_ok_and_errors():
    module = _gpu_check_module()
    table = module.format_table(
        [module.Row("a.ipynb", 1.25, True, "OK"), module.Row("b.ipynb", 2.0, False, "E: bad")]
    )
    assert re.search(r"a\.ipynb\s+1\.2\s+OK", table)
    assert re.search(r"b\.ipynb\s+2\.0\s+FAILED E: bad", table)


def test_gpu_check_cpu_mode_prints_one_table(tmp_path):
    broken = tmp_path / "broken.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("raise ValueError('x is on device cpu')")]
    nbformat.write(nb, broken)
    result = subprocess.run(
        ["bash", str(GPU_CHECK), "--cpu", "--jobs", "3", "--notebooks",
         "chapters/05_outside_the_gpu.ipynb", str(broken), "--labs", "lab1_rooflines"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHON": sys.executable},
    )  # fmt: skip
    out = result.stdout
    assert result.returncode == 1, out + result.stderr  # the broken notebook fails the run
    assert re.search(r"chapters/05_outside_the_gpu\.ipynb\s+[\d.]+\s+OK", out), out
    assert re.search(r"broken\.ipynb\s+[\d.]+\s+FAILED ValueError: x is on device cpu", out), out
    assert re.search(r"lab1_rooflines solutions: full marks\s+[\d.]+\s+OK (\d+)/\1\b", out), out
    assert re.search(r"lab1_rooflines student: zero\s+[\d.]+\s+OK 0/\d+", out), out
    assert "3 of 4 OK" in out, out


def test_gpu_check_refuses_to_pretend_without_a_gpu():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    result = subprocess.run(
        ["bash", str(GPU_CHECK), "--no-tests", "--notebooks"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHON": sys.executable},
    )  # fmt: skip
    assert result.returncode == 2
    assert "no CUDA GPU here" in result.stderr
