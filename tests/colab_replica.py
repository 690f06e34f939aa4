"""A replica of Google Colab's CPU runtime, built from the record, that runs the course in it.

Colab publishes what its runtimes ship (googlecolab/backend-info); ``.ci/colab-record`` keeps the
versions that matter in ``src/gpuperf/colab_runtimes.json`` and the CPU runtime's whole freeze in
``tests/colab_cpu_pip_freeze.txt``. :func:`build` makes from them

* a fresh virtual environment with the CPU runtime's packages at the recorded versions, every
  dependency pip adds under the constraints of Colab's freeze (so traitlets, pyzmq, tornado and
  pip itself get Colab's versions too), and no Triton and no otter-grader, as in Colab;
* a kernel that imports a stand-in ``google.colab`` at start, as Colab's kernel imports the real
  one, so every setup cell takes its Colab branch;
* a git copy of the working tree: each notebook's setup cell installs gpuperf from it, with only
  the URL of its ``%pip install`` line rewritten (``git+file://``).

Where this machine cannot install what Colab has, a stand-in replaces it and
:attr:`Replica.stand_ins` says so (the nearest Python that has a CPU build of torch here; that
torch for Colab's, with ``GPUPERF_TORCH_STANDS_FOR`` telling ``install_triton`` which release it
stands for, so the Triton installed is the one Colab's runtime would get).

:func:`run` then executes, several at a time in one environment: every chapter page and every
lab's master notebook top to bottom; every untouched student notebook up to the grader's creation
and its first ``grader.check`` (then a probe checks the grader); and the kernel tests under the
Triton the setup cells installed. Installing cells (setup cells, the grader's creation) of a kind
not yet run anywhere run one at a time, so two kernels never install the same package at once.

Wheels are cached in a wheelhouse keyed by the record (``GPUPERF_COLAB_REPLICA_CACHE``, default
``~/.cache/gpuperf-colab-replica``): the first run downloads them, later runs need no network, and
every pip command in the replica (the setup cells' too) installs only from it.

Run it alone for the table: ``python tests/colab_replica.py [--jobs N] [NAME ...]``.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import glob
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__":  # run alone: the record and the helpers from this checkout
    sys.path.insert(0, str(ROOT / "src"))

from gpuperf import colab, grading  # noqa: E402
from gpuperf import notebook as nbhelpers  # noqa: E402

FREEZE = ROOT / "tests" / "colab_cpu_pip_freeze.txt"
#: The torch CPU build that stands in where Colab's cannot be installed (what CI installs).
TORCH_STAND_IN = os.environ.get("GPUPERF_REPLICA_TORCH", "2.13.0+cpu")
#: Colab ships these too (versions from its freeze): pip runs the setup cells, setuptools and
#: wheel build gpuperf, pytest runs the kernel tests.
TOOLS = ("pip", "setuptools", "wheel", "pytest")
KERNEL_NAME = "colab-replica"
#: Per-cell limit, a guard against a hung kernel only (cells normally take seconds).
CELL_TIMEOUT_S = 900
#: The kernel tests of the old CI step, now run here under Colab's Triton and numpy.
KERNEL_TESTS = ("tests/kernels", "tests/test_inspect.py", "tests/test_bench.py")
#: A right answer for one question (the lab-grading test this replica absorbed checked it).
RIGHT_ANSWERS = {
    "lab1_rooflines": {
        "add_intensity": 1 / 12,
        "dot_intensity": 8191 / 16386,
        "matmul_intensity": 2 * 4096**3 / (6 * 4096**2),
    }
}


class ReplicaUnavailableError(RuntimeError):
    """The replica cannot be built here (no network and no cached wheels, no git)."""


def record() -> dict[str, Any]:
    return colab.recorded_runtimes()


def cpu_runtime() -> dict[str, Any]:
    return record()["runtimes"]["cpu"]


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement (``Jinja2>=3`` → ``jinja2``)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0)).lower()


def freeze_pins() -> dict[str, str]:
    """Colab's CPU freeze: normalised name → ``name==version`` line."""
    lines = FREEZE.read_text(encoding="utf-8").splitlines()
    return {_name(line): line for line in lines if line and not line.startswith("#")}


# ------------------------------------------------------------------ Python and torch stand-ins


def interpreters() -> dict[tuple[int, int], str]:
    """CPython (major, minor) → an interpreter on this machine that can create a venv."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [sys.executable]
    candidates += [shutil.which(f"python3.{minor}") for minor in range(10, 20)]
    candidates += sorted(glob.glob(str(pyenv / "versions" / "3.*" / "bin" / "python3")))
    found: dict[tuple[int, int], str] = {}
    for exe in filter(None, candidates):
        probe = subprocess.run(
            [exe, "-c", "import sys, venv, ensurepip; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0:
            major, minor = map(int, probe.stdout.split())
            if (major, minor) >= (3, 10):  # gpuperf's requires-python
                found.setdefault((major, minor), exe)
    return found


def _by_closeness(versions, target: tuple[int, int]) -> list[tuple[int, int]]:
    """Nearest first; on a tie the older one (Colab moves forward, rarely back)."""
    return sorted(versions, key=lambda v: (abs(v[1] - target[1]), v[1] > target[1]))


def _download(python: str, args: list[str], where: Path, env: dict[str, str]) -> None:
    command = [python, "-m", "pip", "download", "-q", "--disable-pip-version-check"]
    done = subprocess.run(
        [*command, "-d", str(where), *args],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, args, done.stdout, done.stderr)


def _torch_wheel(version: tuple[int, int], torch: str, where: Path) -> bool:
    """Download a CPU torch wheel ``torch`` for CPython ``version`` (Linux x86-64), if any is
    reachable with this machine's pip settings."""
    tag = f"{version[0]}{version[1]}"
    try:
        _download(
            sys.executable,
            ["--no-deps", "--only-binary=:all:", "--python-version", tag, "--implementation",
             "cp", "--abi", f"cp{tag}", "--platform", "manylinux_2_28_x86_64", f"torch=={torch}"],
            where,
            dict(os.environ),
        )  # fmt: skip
    except subprocess.CalledProcessError:
        return False
    return True


def choose_python_and_torch(
    found: dict[tuple[int, int], str], where: Path
) -> tuple[tuple[int, int], str, list[str]]:
    """The Python nearest to Colab's that has a CPU torch here (Colab's own release first, else
    :data:`TORCH_STAND_IN`), its wheel downloaded into ``where``; plus what was tried."""
    colab_python = tuple(map(int, cpu_runtime()["python"].split(".")[:2]))
    tried = []
    for version in _by_closeness(found, colab_python):
        for torch in dict.fromkeys([cpu_runtime()["packages"]["torch"], TORCH_STAND_IN]):
            if _torch_wheel(version, torch, where):
                return version, torch, tried
            tried.append(f"torch {torch} for CPython {version[0]}.{version[1]}")
    raise ReplicaUnavailableError(f"no CPU build of torch can be downloaded here (tried {tried})")


# ------------------------------------------------------------------ the wheelhouse


def wheelhouse_key() -> str:
    """Changes whenever what the replica installs changes."""
    parts = [
        record(),
        FREEZE.read_text(encoding="utf-8"),
        grading.COLAB_WITH_DEPS_PACKAGES,
        grading.COLAB_NO_DEPS_PACKAGES,
        TORCH_STAND_IN,
        TOOLS,
        2,  # the layout of this cache
    ]
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def cache_folder() -> Path:
    base = os.environ.get("GPUPERF_COLAB_REPLICA_CACHE") or Path.home() / ".cache"
    return Path(base) / "gpuperf-colab-replica" / wheelhouse_key()


def _requires(wheel: Path) -> list[str]:
    """The names a wheel depends on unconditionally (``Requires-Dist`` without an extra)."""
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(meta).decode("utf-8", "replace")
    lines = re.findall(r"^Requires-Dist: (.+)$", text, re.M)
    return [_name(line) for line in lines if "extra ==" not in line]


def base_requirements(torch_wheel: Path) -> list[str]:
    """What the replica's environment gets besides torch: the recorded packages at their
    versions, Colab's tools, torch's own dependencies, and the packages that the course's
    otter install touches and Colab already has (so that install meets Colab's versions)."""
    packages = cpu_runtime()["packages"]
    pinned = [f"{n}=={v}" for n, v in packages.items() if v is not None and n != "torch"]
    touched = [_name(spec) for spec in grading.COLAB_OTTER_PACKAGES]
    extra = [*TOOLS, *_requires(torch_wheel), *(n for n in touched if n in freeze_pins())]
    return pinned + sorted(set(extra) - {_name(p) for p in pinned})


def _pypi_reachable() -> bool:
    try:
        with urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=15):
            return True
    except OSError:
        return False


def wheelhouse(found: dict[tuple[int, int], str]) -> tuple[Path, dict[str, Any]]:
    """The cached wheelhouse and its manifest (Python, torch, Triton), downloaded if missing."""
    folder = cache_folder()
    manifest_path = folder / "manifest.json"
    if manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text())
        if tuple(manifest["python"]) in found:
            return folder, manifest
    if not _pypi_reachable():
        raise ReplicaUnavailableError("PyPI is not reachable and no wheelhouse is cached")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
        wheels = Path(tmp) / "wheels"
        version, torch, tried = choose_python_and_torch(found, wheels)
        python = found[version]
        torch_wheel = next(wheels.glob("torch-*.whl"))
        triton = colab.triton_for_torch(cpu_runtime()["packages"]["torch"])
        env = dict(os.environ)
        # the otter install pins what grading pins and resolves the rest as Colab would
        grading_names = {_name(spec) for spec in grading.COLAB_OTTER_PACKAGES}
        others = Path(tmp) / "colab-but-grading.txt"
        others.write_text(
            "\n".join(p for n, p in freeze_pins().items() if n not in grading_names) + "\n"
        )
        for args in (
            ["--no-deps", f"triton=={triton}"],
            ["-c", str(FREEZE), *base_requirements(torch_wheel)],
            ["-c", str(others), *grading.COLAB_WITH_DEPS_PACKAGES],
            ["--no-deps", *grading.COLAB_NO_DEPS_PACKAGES],
        ):
            try:
                _download(python, args, wheels, env)
            except subprocess.CalledProcessError as error:
                raise RuntimeError(f"pip download {args}:\n{error.stderr[-3000:]}") from None
        manifest = {"python": list(version), "torch": torch, "triton": triton, "tried": tried}
        (wheels / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        wheels.rename(folder)  # complete or absent: the manifest marks a finished download
    return folder, manifest


# ------------------------------------------------------------------ the environment


@dataclass
class Replica:
    """One replica: its environment, its kernel, the repository copy and what stands in."""

    root: Path
    venv: Path
    wheels: Path
    repo: Path
    kernels: Path
    python_version: str
    torch: str
    triton: str
    stand_ins: list[str]
    kernel_env: dict[str, str]
    cold: bool
    build_s: float = 0.0

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def repo_url(self) -> str:
        return self.repo.as_uri()

    def packages(self) -> dict[str, str]:
        """Installed distribution (normalised name) → version."""
        listed = subprocess.run(
            [self.python, "-m", "pip", "list", "--format=json"],
            env=self.kernel_env,
            capture_output=True,
            text=True,
            check=True,
        )
        return {_name(p["name"]): p["version"] for p in json.loads(listed.stdout)}


def _pip_install(python: str, wheels: Path, args: list[str]) -> None:
    env = {**_clean_env(), "PIP_CONFIG_FILE": os.devnull}
    command = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    command += ["--no-index", "--find-links", str(wheels), "--no-compile", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(args)} failed:\n{done.stderr[-3000:]}")


def _clean_env() -> dict[str, str]:
    """The test's environment minus what would leak into the replica (PYTHONPATH, pip and
    Triton settings, gpuperf switches, the test's virtual environment)."""
    leaks = ("PYTHON", "PIP_", "TRITON_", "GPUPERF_", "VIRTUAL_ENV", "JUPYTER", "IPYTHON", "MPL")
    return {k: v for k, v in os.environ.items() if not k.startswith(leaks)}


def repository_copy(target: Path) -> Path:
    """A git repository holding the working tree as it is (tracked and untracked, not ignored
    files), committed: what ``pip install git+file://`` builds, like the course's URL."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        raise ReplicaUnavailableError(f"{ROOT} is not a git checkout (or git is missing)")
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git = ["git", "-C", str(target), "-c", "user.name=replica", "-c", "user.email=replica@local"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "working tree"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    return target


GOOGLE_COLAB_STAND_IN = '''"""Stand-in for Colab's ``google.colab`` (the Colab replica test).

Colab's kernel imports the real module at start, so a notebook sees ``"google.colab" in
sys.modules``; the course uses nothing else of it.
"""
'''


def install_kernel(replica_root: Path, python: str) -> tuple[Path, Path]:
    """A kernelspec for the replica's Python and an IPython directory whose startup file imports
    the stand-in ``google.colab`` (placed in the environment's site-packages)."""
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    package = Path(purelib) / "google" / "colab"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(GOOGLE_COLAB_STAND_IN)
    startup = replica_root / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-google-colab.py").write_text("import google.colab  # as Colab's kernel does\n")
    kernels = replica_root / "kernels"
    (kernels / KERNEL_NAME).mkdir(parents=True)
    spec = {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (Colab CPU runtime replica)",
        "language": "python",
    }
    (kernels / KERNEL_NAME / "kernel.json").write_text(json.dumps(spec, indent=1))
    return kernels, replica_root / "ipython"


def build(root: Path) -> Replica:
    """A fresh replica under ``root`` (wheels from the cache, downloaded on the first run)."""
    start = time.perf_counter()
    if shutil.which("git") is None:
        raise ReplicaUnavailableError("git is not installed")
    found = interpreters()
    cold = not (cache_folder() / "manifest.json").is_file()
    wheels, manifest = wheelhouse(found)
    version = tuple(manifest["python"])
    venv = root / "venv"
    subprocess.run([found[version], "-m", "venv", str(venv)], check=True, env=_clean_env())
    python = str(venv / "bin" / "python")
    pins = freeze_pins()
    torch_wheel = next(wheels.glob("torch-*.whl"))
    _pip_install(python, wheels, [pins["pip"]])
    # torch --no-deps: a stand-in's own pins (2.13 wants setuptools>=77) must not move Colab's
    _pip_install(python, wheels, ["--no-deps", str(torch_wheel)])
    _pip_install(python, wheels, ["-c", str(FREEZE), *base_requirements(torch_wheel)])
    kernels, ipython_dir = install_kernel(root, python)
    repo = repository_copy(root / "repository")
    home = root / "home"
    home.mkdir()
    colab_python = cpu_runtime()["python"]
    colab_torch = cpu_runtime()["packages"]["torch"]
    python_full = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    stand_ins = ["google.colab: a stand-in module, imported at kernel start"]
    if not colab_python.startswith(f"{version[0]}.{version[1]}."):
        why = "; ".join(manifest["tried"]) or "no CPython " + colab_python
        stand_ins.append(
            f"Python {python_full} for Colab's {colab_python} (not downloadable here: {why})"
        )
    kernel_env = {
        **_clean_env(),
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "IPYTHONDIR": str(ipython_dir),
        # every pip command of the replica, the setup cells' too, installs from the wheelhouse
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        # ipykernel 6.17's debugger warns on every kernel start that Python's modules are frozen
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        # lab_grader fetches a lab's public tests from the copy, not from GitHub
        grading.TESTS_URL_ENV: str(repo / "labs" / "{lab}" / "student" / "tests"),
    }
    if manifest["torch"] != colab_torch:
        kernel_env[colab.TORCH_STANDS_FOR_ENV] = colab_torch
        stand_ins.append(
            f"torch {manifest['torch']} for Colab's {colab_torch} (installed without its "
            f"dependencies, which keep Colab's versions; install_triton is told "
            f"{colab.TORCH_STANDS_FOR_ENV}={colab_torch})"
        )
    stand_ins.append(
        "PyPI: the cached wheelhouse (setup cells install gpuperf from a git copy of the "
        "working tree)"
    )
    return Replica(
        root=root,
        venv=venv,
        wheels=wheels,
        repo=repo,
        kernels=kernels,
        python_version=python_full,
        torch=manifest["torch"],
        triton=manifest["triton"],
        stand_ins=stand_ins,
        kernel_env=kernel_env,
        cold=cold,
        build_s=time.perf_counter() - start,
    )


# ------------------------------------------------------------------ what each notebook runs


@dataclass
class Job:
    """One notebook (or the kernel tests) and what to run of it."""

    name: str
    path: Path | None = None
    student: bool = False
    files: list[Path] = field(default_factory=list)  # copied next to the notebook


def jobs() -> list[Job]:
    """The kernel tests, then lab masters, chapter pages and students (heaviest first)."""
    labs = sorted(p for p in (ROOT / "labs").glob("lab[0-9]*_*") if p.is_dir())
    found = [Job("kernel tests (pytest)")]
    for lab in labs:  # a master runs beside its hidden tests, as it does in the repository
        found.append(Job(f"labs/{lab.name} (master)", lab / f"{lab.name}.ipynb"))
        found[-1].files.append(lab / "hidden_tests.py")
    chapters = sorted((ROOT / "chapters").glob("*.ipynb"))
    chapters.sort(key=lambda p: not _needs_triton(p))  # pages with kernels first: the longest
    found += [Job(str(p.relative_to(ROOT)), p) for p in chapters]
    found += [
        Job(f"labs/{lab.name} (student)", lab / "student" / f"{lab.name}.ipynb", student=True)
        for lab in labs
    ]
    return found


def _code(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def _needs_triton(path: Path) -> bool:
    import nbformat

    return "install_triton()" in _code(nbformat.read(path, as_version=4))[0].source


def local_setup_cell(source: str, repo_url: str) -> str:
    """The setup cell with its ``git+`` URL pointed at the local copy, nothing else changed."""
    url = nbhelpers.repository_url_from_config(ROOT / "_config.yml")
    line = f'%pip install -q "gpuperf @ git+{url}"'
    if source.count(line) != 1:
        raise ValueError(f"the setup cell has no line {line!r}")
    local = source.replace(line, f'%pip install -q "gpuperf @ git+{repo_url}"')
    assert local.replace(repo_url, url) == source  # only the URL differs
    return local


def _is_grader_cell(source: str) -> bool:
    return "lab_grader(" in source


def _is_check_cell(source: str) -> bool:
    return re.search(r"\bgrader\.check\(", source) is not None


def _unanswered(sources: list[str]) -> dict[str, str]:
    """Names the student cells assign ``...`` (the placeholders), for the probe's check."""
    names = {}
    for source in sources:
        for node in ast.parse(source).body:
            value = getattr(node, "value", None)
            if isinstance(node, ast.Assign) and getattr(value, "value", None) is Ellipsis:
                names.update({t.id: "..." for t in node.targets if isinstance(t, ast.Name)})
    return names


PROBE = """
import importlib.metadata, json
from pathlib import Path

import otter

unanswered = grader.check({question!r}, global_env={{{unanswered}}})
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
        skipped = [c.source for c in cells[grader_at + 1 : check_at]]
        unanswered = ", ".join(f"{n!r}: ..." for n in _unanswered(skipped))
        probe = PROBE.format(
            question=question,
            unanswered=unanswered,
            right=RIGHT_ANSWERS.get(job.path.stem),
        )
        cells = [*cells[: grader_at + 1], cells[check_at], nbformat.v4.new_code_cell(probe)]
    nb.cells = cells
    return nb


def check_probe(job: Job, report: dict[str, Any]) -> str | None:
    """What is wrong with a student notebook's grader, or None (the lab-grading checks)."""
    import nbformat

    nb = nbformat.read(job.path, as_version=4)
    call = next(c.source for c in _code(nb) if _is_grader_cell(c.source))
    questions = ast.literal_eval(re.search(r"lab_grader\([^,]+,\s*(\[[^\]]*\])", call).group(1))
    if report["grader"] != "otter.check.notebook.Notebook":
        return f"grader is {report['grader']}"
    if report["tests"] != sorted(f"{q}.py" for q in questions):
        return f"fetched tests {report['tests']}, expected one per question {questions}"
    if not report["otter"].startswith(f"{grading.OTTER_VERSION.split('.')[0]}."):
        return f"otter {report['otter']}"
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
    cells: list[tuple[int, float]] = field(default_factory=list)  # (index, seconds) run


def _one_line(exc: BaseException) -> str:
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(exc).__name__}: {exc}"
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", text).split())[:300]


class InstallGate:
    """Cells that install run alone until their kind has run once: the first setup cell (with
    or without Triton) and the first grader's creation install packages; after that, pip finds
    them installed (same commit of the copy, same versions) and changes nothing, so the same
    kind of cell runs in parallel with anything."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._done: dict[str, asyncio.Event] = {}

    def event(self, kind: str) -> asyncio.Event:
        return self._done.setdefault(kind, asyncio.Event())

    async def run(self, kind: str | None, execute: Callable[[], Awaitable[Any]]) -> Any:
        if kind is None or self.event(kind).is_set():
            return await execute()
        async with self._lock:
            result = await execute()
            self.event(kind).set()
        return result


def install_kind(index: int, source: str) -> str | None:
    if index == 0:
        return "setup with Triton" if "install_triton()" in source else "setup"
    return "grader" if _is_grader_cell(source) else None


async def execute(job: Job, replica: Replica, gate: InstallGate) -> Row:
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    start = time.perf_counter()
    try:
        nb = prepare(job, replica.repo_url)
        cwd = replica.root / "content" / re.sub(r"[^\w.-]+", "_", job.name)
        cwd.mkdir(parents=True)  # an empty folder, like Colab's /content
        for extra in job.files:
            shutil.copy(extra, cwd / extra.name)
        km = AsyncKernelManager(
            kernel_name=KERNEL_NAME,
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(replica.kernels)]),
        )
        client = NotebookClient(
            nb,
            km=km,
            timeout=CELL_TIMEOUT_S,
            startup_timeout=300,
            resources={"metadata": {"path": str(cwd)}},
        )
        cells = []
        async with client.async_setup_kernel(cleanup_kc=True, env=replica.kernel_env):
            cells.append((-1, time.perf_counter() - start))  # the kernel's start
            for index, cell in enumerate(nb.cells):
                began = time.perf_counter()
                await gate.run(
                    install_kind(index, cell.source),
                    lambda c=cell, i=index: client.async_execute_cell(c, i),
                )
                cells.append((index, time.perf_counter() - began))
    except Exception as exc:
        return Row(job.name, time.perf_counter() - start, _one_line(exc), cells=cells)
    seconds = time.perf_counter() - start
    if job.student:
        out = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
        if "REPLICA-PROBE" not in out:
            return Row(job.name, seconds, f"the grader probe printed nothing: {out[-200:]}")
        problem = check_probe(job, json.loads(out.split("REPLICA-PROBE", 1)[1]))
        problem = problem and f"grader probe: {problem}"
        return Row(job.name, seconds, problem, "to 1st check", cells=cells)
    return Row(job.name, seconds, cells=cells)


def _pytest_counts(output: str) -> str:
    lines = [ln for ln in output.splitlines() if re.search(r"\d+ (passed|failed|error)", ln)]
    return lines[-1].strip("= ") if lines else ""


async def kernel_tests(replica: Replica, gate: InstallGate, log: dict[str, str]) -> Row:
    """The kernel, inspect and bench tests, in the replica, under the Triton the setup cells
    installed (they wait for the first setup cell with Triton to have run)."""
    await gate.event("setup with Triton").wait()
    start = time.perf_counter()
    command = [replica.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:nbval"]
    command += ["-o", "addopts=", *KERNEL_TESTS]
    env = {**replica.kernel_env, **({"CI": os.environ["CI"]} if "CI" in os.environ else {})}
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=replica.repo,  # the copy's tests, importing the gpuperf the setup cells installed
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output = (await process.communicate())[0].decode("utf-8", "replace")
    log["kernel tests"] = output
    counts = _pytest_counts(output)
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        return Row("kernel tests (pytest)", seconds, f"pytest exit {process.returncode}: {counts}")
    return Row("kernel tests (pytest)", seconds, None, counts)


async def _run_all(replica: Replica, selected: list[Job], parallel: int, log) -> list[Row]:
    gate = InstallGate()
    slots = asyncio.Semaphore(parallel)

    async def one(job: Job) -> Row:
        if job.path is None:
            await gate.event("setup with Triton").wait()  # take no slot while waiting
        async with slots:
            if job.path is None:
                return await kernel_tests(replica, gate, log)
            return await execute(job, replica, gate)

    return list(await asyncio.gather(*(one(job) for job in selected)))


def default_jobs() -> int:
    """Kernels at once: one per core plus one (kernels wait on pip and on each other)."""
    return int(os.environ.get("GPUPERF_COLAB_REPLICA_JOBS") or min(4, (os.cpu_count() or 1) + 1))


@dataclass
class Result:
    replica: Replica
    rows: list[Row]
    before: dict[str, str]
    after: dict[str, str]
    seconds: float
    cpu_s: float
    parallel: int
    load: tuple[tuple[float, ...], tuple[float, ...]]
    log: dict[str, str]

    @property
    def failed(self) -> list[Row]:
        return [row for row in self.rows if row.error]

    def changed(self) -> dict[str, tuple[str | None, str | None]]:
        """Distributions the notebooks installed or changed: name → (before, after)."""
        names = sorted(set(self.before) | set(self.after))
        return {
            n: (self.before.get(n), self.after.get(n))
            for n in names
            if self.before.get(n) != self.after.get(n)
        }

    def table(self) -> str:
        replica, source = self.replica, record()["source"]
        names = ("numpy", "torch", "triton", "ipython", "ipykernel", "ipywidgets", "matplotlib")
        shown = ", ".join(f"{n} {self.after.get(n, '-')}" for n in names)
        state = "cold (wheels downloaded)" if replica.cold else "warm (cached wheels)"
        lines = [
            f"Colab CPU runtime replica, from googlecolab/backend-info {source['commit'][:7]} "
            f"({source['date']}), run {time.strftime('%Y-%m-%d %H:%M %Z')}",
            f"Python {replica.python_version}; {shown}",
            *(f"stand-in: {s}" for s in replica.stand_ins),
            f"environment: {state}, built in {replica.build_s:.0f} s; {self.parallel} at a time; "
            f"load average {self.load[0][0]:.1f} at start, {self.load[1][0]:.1f} at end "
            f"({os.cpu_count()} cores)",
        ]
        changed = [
            f"{n} {a or 'new'}" if b is None else f"{n} {b} → {a}"
            for n, (b, a) in self.changed().items()
        ]
        lines.append("installed by the notebooks: " + ", ".join(changed))
        width = max(len(row.name) for row in self.rows)
        width = max(width, len("total (CPU, all processes)"))
        lines += ["", f"{'notebook':<{width}}  {'seconds':>7}  result", "-" * (width + 40)]
        for row in self.rows:
            result = f"ERROR {row.error}" if row.error else ("OK " + row.detail).strip()
            lines.append(f"{row.name:<{width}}  {row.seconds:>7.1f}  {result}")
        lines.append(f"{'total (wall)':<{width}}  {self.seconds:>7.1f}")
        lines.append(f"{'total (CPU, all processes)':<{width}}  {self.cpu_s:>7.1f}")
        return "\n".join(lines)


def run(replica: Replica, selected: list[Job] | None = None, parallel: int = 0) -> Result:
    """Run the jobs in the replica; the packages before and after, the rows and the log."""
    selected = jobs() if selected is None else selected
    parallel = parallel or default_jobs()
    before = replica.packages()
    load_start = os.getloadavg()
    log: dict[str, str] = {}
    start, cpu_start = time.perf_counter(), _children_cpu_s()
    rows = asyncio.run(_run_all(replica, selected, parallel, log))
    seconds, cpu_s = time.perf_counter() - start, _children_cpu_s() - cpu_start
    return Result(
        replica, rows, before, replica.packages(), seconds, cpu_s, parallel,
        (load_start, os.getloadavg()), log,
    )  # fmt: skip


def _children_cpu_s() -> float:
    """CPU seconds used by finished child processes (kernels, pip, pytest): unlike wall time,
    this does not grow with the machine's load."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="run only jobs whose name contains one of these")
    parser.add_argument("--jobs", type=int, default=None, help="notebooks at once")
    parser.add_argument("--keep", action="store_true", help="keep the replica's folder")
    parser.add_argument("--cells", action="store_true", help="show each notebook's slow cells")
    args = parser.parse_args(argv)
    selected = [j for j in jobs() if not args.names or any(n in j.name for n in args.names)]
    root = Path(tempfile.mkdtemp(prefix="colab-replica-"))
    try:
        result = run(build(root), selected, args.jobs)
        print(result.table())
        if args.cells:
            for row in result.rows:
                slow = sorted(row.cells, key=lambda c: -c[1])[:5]
                print(row.name, " ".join(f"cell {i}: {t:.1f} s" for i, t in slow))
        for name, output in result.log.items():
            if result.failed and any(r.name.startswith(name) for r in result.failed):
                print(f"\n--- {name} ---\n{output[-6000:]}")
        return 1 if result.failed else 0
    finally:
        if args.keep:
            print(f"replica kept in {root}")
        else:
            with contextlib.suppress(OSError):
                shutil.rmtree(root)


if __name__ == "__main__":
    sys.exit(main())
