"""Lab grading in a fresh Colab runtime, rebuilt in a clean virtual environment.

Colab ships its own packages (ipywidgets 7.7.1 among them) and no otter-grader. A student's first
two cells install ``gpuperf`` (numpy only) and call ``gpuperf.grading.lab_grader``, which in Colab
installs what otter needs and fetches the lab's public tests. This test rebuilds that situation:

1. a new virtual environment with a Colab-like base: ipywidgets==7.7.1, ipykernel, nbformat,
   pandas, jinja2, pyyaml, requests, numpy, matplotlib (no otter, no torch);
2. ``pip install <this checkout>`` without extras, as the setup cell does with the git URL;
3. in that environment, with ``google.colab`` present in ``sys.modules``, the ``lab_grader(...)``
   call of every student notebook (read from the notebook itself): the first one installs exactly
   what :func:`gpuperf.grading.install_otter_for_colab` installs, and each fetches its lab's
   public tests from this checkout (``GPUPERF_LAB_TESTS_URL``) instead of GitHub;
4. ipywidgets is still 7.7.1, ``import otter`` works, and ``grader.check`` passes a right answer
   and fails an unanswered one with "not answered yet".

Wheels are cached: the first run downloads every wheel the environment needs from PyPI into a
wheelhouse (``GPUPERF_COLAB_WHEELHOUSE``, default ``~/.cache/gpuperf-colab-test/<key>``, the key a
hash of the package lists), and every install then runs with ``--no-index --find-links`` on it,
so a re-run needs no network. ``lab_grader``'s own pip commands get the same settings through
the environment: they install exactly the specifications in ``gpuperf.grading``, only from the
local copy of PyPI. Without network and without a wheelhouse the test is skipped locally and
fails under CI.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow  # builds a Colab-like environment

ROOT = Path(__file__).resolve().parents[1]
COLAB_BASE = (
    "ipywidgets==7.7.1",
    "ipykernel",
    "nbformat",
    "pandas",
    "jinja2",
    "pyyaml",
    "requests",
    "numpy",
    "matplotlib",
)
LABS = sorted(p for p in (ROOT / "labs").glob("lab[0-9]*_*") if (p / "student").is_dir())


def _pypi_reachable() -> bool:
    try:
        with urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=10):
            return True
    except OSError:
        return False


def grader_calls() -> dict[str, str]:
    """lab → the source of the ``lab_grader(...)`` call in its student notebook."""
    calls = {}
    for lab_dir in LABS:
        nb = nbformat.read(lab_dir / "student" / f"{lab_dir.name}.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code" or "lab_grader(" not in cell.source:
                continue
            from IPython.core.inputtransformer2 import TransformerManager

            tree = ast.parse(TransformerManager().transform_cell(cell.source))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "lab_grader"
                ):
                    calls[lab_dir.name] = ast.unparse(node)
        assert lab_dir.name in calls, f"{lab_dir.name}'s student notebook never calls lab_grader"
    return calls


def _wheelhouse(python: str, env: dict[str, str]) -> Path:
    """A folder with every wheel the test installs (downloaded once, then reused)."""
    from gpuperf import grading

    specs = [*COLAB_BASE, "numpy>=1.23", "setuptools>=64", "wheel"]
    key = hashlib.sha256(
        json.dumps(
            [specs, grading.COLAB_WITH_DEPS_PACKAGES, grading.COLAB_NO_DEPS_PACKAGES]
        ).encode()
    ).hexdigest()[:16]
    folder = Path(
        os.environ.get("GPUPERF_COLAB_WHEELHOUSE")
        or Path.home() / ".cache" / "gpuperf-colab-test" / key
    )
    if (folder / "COMPLETE").is_file():
        return folder
    if not _pypi_reachable():
        message = "PyPI is not reachable and no wheelhouse is cached: cannot build the environment"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    folder.mkdir(parents=True, exist_ok=True)
    constraints = folder / "constraints.txt"
    constraints.write_text("ipywidgets==7.7.1\n")
    for args in (
        [*specs, *grading.COLAB_WITH_DEPS_PACKAGES, "-c", str(constraints)],
        ["--no-deps", *grading.COLAB_NO_DEPS_PACKAGES],
    ):
        done = subprocess.run(
            [python, "-m", "pip", "download", "-q", "-d", str(folder), *args],
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"pip download failed:\n{done.stderr[-3000:]}"
    (folder / "COMPLETE").write_text("downloaded\n")
    return folder


def _source_copy(target: Path) -> Path:
    """What ``pip install git+…`` would build: the package source, outside the working tree (so
    the build writes no ``build/`` or ``*.egg-info`` into the checkout)."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, target / name)
    shutil.copytree(
        ROOT / "src", target / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__")
    )
    return target


CHECK_SCRIPT = """
import importlib.metadata, json, os, sys, types
from pathlib import Path

sys.modules["google.colab"] = types.ModuleType("google.colab")  # lab_grader's Colab path
from gpuperf import grading

report = {"ipywidgets_before": importlib.metadata.version("ipywidgets"), "graders": {}}
calls = json.loads(sys.argv[1])
work = Path(sys.argv[2])
for lab, call in calls.items():
    folder = work / lab
    folder.mkdir()
    os.chdir(folder)
    grader = eval(call, {"lab_grader": grading.lab_grader})
    fetched = sorted(p.name for p in (folder / "tests").glob("q*.py"))
    report["graders"][lab] = [type(grader).__module__ + "." + type(grader).__name__, fetched]

import otter
report["otter"] = otter.__version__
report["ipywidgets_after"] = importlib.metadata.version("ipywidgets")

# one grader.check per numpy-only question: a right answer passes, `...` fails
os.chdir(work / "lab1_rooflines")
grader = grading.lab_grader("lab1_rooflines", ["q1"])
right = {
    "add_intensity": 1 / 12,
    "dot_intensity": 8191 / 16386,
    "matmul_intensity": 2 * 4096**3 / (6 * 4096**2),
}
result = grader.check("q1", global_env=right)
report["right"] = [result.grade, str(result)]
result = grader.check("q1", global_env={**right, "add_intensity": ...})
report["unanswered"] = [result.grade, str(result)]
print("REPORT" + json.dumps(report))
"""


def test_lab_grading_works_in_a_colab_like_environment(tmp_path):
    calls = grader_calls()
    env_dir = tmp_path / "colab-venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = str(env_dir / "bin" / "python")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))},
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "GPUPERF_LAB_TESTS_URL": str(ROOT / "labs" / "{lab}" / "student" / "tests"),
    }
    wheels = _wheelhouse(python, env)
    env.update({"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)})  # lab_grader's pip too

    def pip(*args: str) -> None:
        done = subprocess.run(
            [python, "-m", "pip", "install", "-q", "--no-compile", *args],
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"pip install {' '.join(args)} failed:\n{done.stderr[-3000:]}"

    pip(*COLAB_BASE)
    source = tmp_path / "gpuperf-source"
    source.mkdir()
    pip(str(_source_copy(source)))  # the setup cell: `pip install gpuperf @ git+…`, no extras
    probe = subprocess.run(
        [
            python,
            "-c",
            "import importlib.util as u; print(u.find_spec('otter'), u.find_spec('torch'))",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.split() == ["None", "None"], (
        "the Colab-like base must lack otter and torch"
    )
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [python, "-c", textwrap.dedent(CHECK_SCRIPT), json.dumps(calls), str(work)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, (
        f"grading in the Colab-like environment failed:\n{done.stderr[-5000:]}"
    )
    report = json.loads(done.stdout.split("REPORT", 1)[1])
    assert report["ipywidgets_before"] == report["ipywidgets_after"] == "7.7.1"
    assert report["otter"].startswith("7.")
    for lab, (kind, fetched) in report["graders"].items():
        questions = ast.literal_eval(ast.parse(calls[lab]).body[0].value.args[1])
        assert kind == "otter.check.notebook.Notebook", (lab, kind)
        assert fetched == sorted(f"{q}.py" for q in questions), (lab, fetched)
    grade, text = report["right"]
    assert grade == 1.0, text
    grade, text = report["unanswered"]
    assert grade < 1.0 and "not answered yet" in text, text
