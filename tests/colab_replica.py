"""A replica of Google Colab's CPU runtime, built from the record of what Colab ships.

Colab publishes its runtimes' packages (googlecolab/backend-info); ``.ci/colab-record`` keeps the
versions that matter in ``src/gpuperf/colab_runtimes.json`` and the CPU runtime's whole freeze in
``tests/colab_cpu_pip_freeze.txt``. :func:`build` makes from them

* a fresh virtual environment with the CPU runtime's packages at the recorded versions, every
  dependency pip adds under the constraints of Colab's freeze (so traitlets, pyzmq, tornado and
  pip itself get Colab's versions too), and no Triton and no otter-grader, as in Colab;
* a kernel that imports a stand-in ``google.colab`` at start, as Colab's kernel imports the real
  one, so every setup cell takes its Colab branch;
* a git copy of the working tree, for the setup cells to install gpuperf from.

Where this machine cannot install what Colab has, a stand-in replaces it and
:attr:`Replica.stand_ins` says so: the Python nearest to Colab's that has a CPU build of torch
here, and that torch for Colab's, with ``GPUPERF_TORCH_STANDS_FOR`` telling ``install_triton``
which release it stands for (so the Triton installed is the one Colab's runtime would get).
``build(python=(3, 13), torch=False)`` makes a replica on Colab's own Python without torch, for
the pages that need neither torch nor Triton, where no CPU torch exists for that Python here.

Wheels come from a cache keyed by the record (``GPUPERF_COLAB_REPLICA_CACHE``, default
``~/.cache``): the first build downloads them, later ones need no network, and every pip command
in the replica — the setup cells' too — installs only from it.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuperf import colab, grading

ROOT = Path(__file__).resolve().parents[1]
FREEZE = ROOT / "tests" / "colab_cpu_pip_freeze.txt"
#: The torch CPU build that stands in where Colab's cannot be installed (what CI installs).
TORCH_STAND_IN = os.environ.get("GPUPERF_REPLICA_TORCH", "2.13.0+cpu")
#: Colab ships these too (versions from its freeze): pip runs the setup cells, setuptools and
#: wheel build gpuperf, pytest runs the tests.
TOOLS = ("pip", "setuptools", "wheel", "pytest")
#: What the calculators' tests need besides Colab's packages (a replica without torch runs them).
TEST_EXTRAS = ("hypothesis",)
KERNEL_NAME = "colab-replica"


class ReplicaUnavailableError(RuntimeError):
    """The replica cannot be built here (no network and no cached wheels, no git, no Python)."""


def record() -> dict[str, Any]:
    return colab.recorded_runtimes()


def cpu_runtime() -> dict[str, Any]:
    return record()["runtimes"]["cpu"]


def colab_python() -> tuple[int, int]:
    major, minor = cpu_runtime()["python"].split(".")[:2]
    return int(major), int(minor)


def name_of(requirement: str) -> str:
    """The normalised distribution name of a requirement (``Jinja2>=3`` → ``jinja2``)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0)).lower()


def freeze_pins() -> dict[str, str]:
    """Colab's CPU freeze: normalised name → ``name==version`` line."""
    lines = FREEZE.read_text(encoding="utf-8").splitlines()
    return {name_of(line): line for line in lines if line and not line.startswith("#")}


# ------------------------------------------------------------------ Python and torch


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


def by_closeness(versions, target: tuple[int, int]) -> list[tuple[int, int]]:
    """Nearest first; on a tie the older one (Colab moves forward, rarely back)."""
    return sorted(versions, key=lambda v: (abs(v[1] - target[1]), v[1] > target[1]))


def _download(python: str, args: list[str], where: Path) -> None:
    command = [python, "-m", "pip", "download", "-q", "--disable-pip-version-check"]
    done = subprocess.run([*command, "-d", str(where), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, args, done.stdout, done.stderr)


def _torch_wheel(version: tuple[int, int], torch: str, where: Path) -> bool:
    """Download the CPU torch wheel ``torch`` for CPython ``version`` (Linux x86-64) into
    ``where``, if this machine's pip settings reach one (a ``+cpu`` version: never CUDA's)."""
    tag = f"{version[0]}{version[1]}"
    try:
        _download(
            sys.executable,
            ["--no-deps", "--only-binary=:all:", "--python-version", tag, "--implementation",
             "cp", "--abi", f"cp{tag}", "--platform", "manylinux_2_28_x86_64", f"torch=={torch}"],
            where,
        )  # fmt: skip
    except subprocess.CalledProcessError:
        return False
    return True


def choose_python_and_torch(
    found: dict[tuple[int, int], str], where: Path, python: tuple[int, int] | None, torch: bool
) -> tuple[tuple[int, int], str | None, list[str]]:
    """The Python (``python``, else the nearest to Colab's that has a CPU torch here) and the
    torch (Colab's release, else :data:`TORCH_STAND_IN`; ``None`` when ``torch`` is False), its
    wheel downloaded into ``where``; plus what was tried and not found."""
    versions = [python] if python else by_closeness(found, colab_python())
    if not torch:
        return versions[0], None, []
    tried = []
    for version in versions:
        for release in dict.fromkeys([cpu_runtime()["packages"]["torch"], TORCH_STAND_IN]):
            if _torch_wheel(version, release, where):
                return version, release, tried
            tried.append(f"torch {release} for CPython {version[0]}.{version[1]}")
    raise ReplicaUnavailableError(f"no CPU build of torch can be downloaded here (tried {tried})")


# ------------------------------------------------------------------ the wheelhouse


def cache_folder(python: tuple[int, int] | None, torch: bool) -> Path:
    """Named by everything that decides what the replica installs."""
    parts = [
        record(),
        FREEZE.read_text(encoding="utf-8"),
        grading.COLAB_WITH_DEPS_PACKAGES,
        grading.COLAB_NO_DEPS_PACKAGES,
        TORCH_STAND_IN if torch else None,
        python,
        TOOLS,
        TEST_EXTRAS,
        3,  # the layout of this cache
    ]
    key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]
    base = os.environ.get("GPUPERF_COLAB_REPLICA_CACHE") or Path.home() / ".cache"
    return Path(base) / "gpuperf-colab-replica" / key


def _requires(wheel: Path) -> list[str]:
    """The names a wheel depends on unconditionally (``Requires-Dist`` without an extra)."""
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(meta).decode("utf-8", "replace")
    lines = re.findall(r"^Requires-Dist: (.+)$", text, re.M)
    return [name_of(line) for line in lines if "extra ==" not in line]


def base_requirements(torch_wheel: Path | None) -> list[str]:
    """What the environment gets besides torch: the recorded packages at their versions,
    Colab's tools, torch's own dependencies, the packages the course's otter install touches
    that Colab already has (so that install meets Colab's versions), and with no torch the
    calculators' test extras. Unpinned names get Colab's version through the constraints."""
    packages = cpu_runtime()["packages"]
    pinned = [f"{n}=={v}" for n, v in packages.items() if v is not None and n != "torch"]
    touched = [name_of(spec) for spec in grading.COLAB_OTTER_PACKAGES]
    extra = [*TOOLS, *(n for n in touched if n in freeze_pins())]
    extra += _requires(torch_wheel) if torch_wheel else TEST_EXTRAS
    return pinned + sorted(set(extra) - {name_of(p) for p in pinned})


def _pypi_reachable() -> bool:
    try:
        with urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=15):
            return True
    except OSError:
        return False


def wheelhouse(
    found: dict[tuple[int, int], str], python: tuple[int, int] | None, torch: bool
) -> tuple[Path, dict[str, Any]]:
    """The cached wheelhouse and its manifest (Python, torch, Triton), downloaded if missing."""
    folder = cache_folder(python, torch)
    if (folder / "manifest.json").is_file():
        manifest = json.loads((folder / "manifest.json").read_text())
        if tuple(manifest["python"]) in found:
            return folder, manifest
    if not _pypi_reachable():
        raise ReplicaUnavailableError("PyPI is not reachable and no wheelhouse is cached")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
        wheels = Path(tmp) / "wheels"
        version, torch_release, tried = choose_python_and_torch(found, wheels, python, torch)
        torch_wheel = next(wheels.glob("torch-*.whl"), None)
        triton = colab.triton_for_torch(cpu_runtime()["packages"]["torch"]) if torch else None
        # the otter install pins what grading pins and meets Colab's versions for the rest
        grading_names = {name_of(spec) for spec in grading.COLAB_OTTER_PACKAGES}
        others = Path(tmp) / "colab-but-grading.txt"
        others.write_text(
            "\n".join(p for n, p in freeze_pins().items() if n not in grading_names) + "\n"
        )
        downloads = [
            ["-c", str(FREEZE), *base_requirements(torch_wheel)],
            ["-c", str(others), *grading.COLAB_WITH_DEPS_PACKAGES],
            ["--no-deps", *grading.COLAB_NO_DEPS_PACKAGES],
        ]
        if triton:
            downloads.append(["--no-deps", f"triton=={triton}"])
        for args in downloads:
            try:
                _download(found[version], args, wheels)
            except subprocess.CalledProcessError as error:
                raise RuntimeError(f"pip download {args}:\n{error.stderr[-3000:]}") from None
        manifest = {"python": list(version), "torch": torch_release, "triton": triton}
        manifest["tried"] = tried
        (wheels / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        wheels.rename(folder)  # complete or absent: the manifest marks a finished download
    return folder, manifest


# ------------------------------------------------------------------ the replica


@dataclass
class Replica:
    """One replica: its environment, its kernel, the repository copy and what stands in."""

    root: Path
    venv: Path
    wheels: Path
    repo: Path
    kernels: Path
    python_version: str
    torch: str | None
    triton: str | None  # the Triton the setup cells are to install (None: none, no torch)
    stand_ins: list[str]
    kernel_env: dict[str, str]
    cold: bool
    build_s: float

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
        return {name_of(p["name"]): p["version"] for p in json.loads(listed.stdout)}


def _clean_env() -> dict[str, str]:
    """The test's environment minus what would leak into the replica (PYTHONPATH, pip and
    Triton settings, gpuperf switches, the test's virtual environment and Jupyter paths)."""
    leaks = ("PYTHON", "PIP_", "TRITON_", "GPUPERF_", "VIRTUAL_ENV", "JUPYTER", "IPYTHON", "MPL")
    # The compile log only records what the replica compiles (.ci/store-compiles keeps the
    # records of Colab's Triton from it); it changes nothing the replica does.
    kept = ("GPUPERF_COMPILE_LOG",)
    return {k: v for k, v in os.environ.items() if k in kept or not k.startswith(leaks)}


def _pip_install(python: str, wheels: Path, args: list[str]) -> None:
    env = {**_clean_env(), "PIP_CONFIG_FILE": os.devnull}
    command = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    command += ["--no-index", "--find-links", str(wheels), "--no-compile", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(args)} failed:\n{done.stderr[-3000:]}")


def repository_copy(target: Path) -> Path:
    """A git repository holding the working tree as it is (tracked and untracked, not ignored
    files), committed: what ``pip install git+file://`` builds, as it builds the course's URL."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        raise ReplicaUnavailableError(f"{ROOT} is not a git checkout")
    for name in filter(None, listed.stdout.decode().split("\0")):
        if (ROOT / name).is_file():  # a deleted, not yet committed file is listed too
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    git = ["git", "-C", str(target), "-c", "user.name=replica", "-c", "user.email=replica@local"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "working tree"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    return target


GOOGLE_COLAB_STAND_IN = '''"""Stand-in for Colab's ``google.colab`` (the Colab replica test).

Colab's kernel imports the real module at start, so a notebook sees ``"google.colab" in
sys.modules``; the course uses nothing else of it.
"""
'''


def install_kernel(root: Path, python: str) -> tuple[Path, Path]:
    """A kernelspec for the replica's Python, and an IPython directory whose startup file
    imports the stand-in ``google.colab`` (put in the environment's site-packages)."""
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    package = Path(purelib) / "google" / "colab"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(GOOGLE_COLAB_STAND_IN)
    startup = root / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-google-colab.py").write_text("import google.colab  # as Colab's kernel does\n")
    kernels = root / "kernels"
    (kernels / KERNEL_NAME).mkdir(parents=True)
    spec = {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (Colab CPU runtime replica)",
        "language": "python",
    }
    (kernels / KERNEL_NAME / "kernel.json").write_text(json.dumps(spec, indent=1))
    return kernels, root / "ipython"


def build(root: Path, python: tuple[int, int] | None = None, torch: bool = True) -> Replica:
    """A fresh replica under ``root``: on ``python`` if given (else the nearest to Colab's with
    a CPU torch here), with torch unless ``torch`` is False."""
    start = time.perf_counter()
    if shutil.which("git") is None:
        raise ReplicaUnavailableError("git is not installed")
    found = interpreters()
    if python is not None and python not in found:
        raise ReplicaUnavailableError(f"no CPython {python[0]}.{python[1]} on this machine")
    cold = not (cache_folder(python, torch) / "manifest.json").is_file()
    wheels, manifest = wheelhouse(found, python, torch)
    version = tuple(manifest["python"])
    venv = root / "venv"
    subprocess.run([found[version], "-m", "venv", str(venv)], check=True, env=_clean_env())
    exe = str(venv / "bin" / "python")
    _pip_install(exe, wheels, [freeze_pins()["pip"]])  # Colab's pip runs the setup cells
    torch_wheel = next(wheels.glob("torch-*.whl"), None)
    if torch_wheel:  # without its dependencies: a stand-in's own pins must not move Colab's
        _pip_install(exe, wheels, ["--no-deps", str(torch_wheel)])
    _pip_install(exe, wheels, ["-c", str(FREEZE), *base_requirements(torch_wheel)])
    kernels, ipython_dir = install_kernel(root, exe)
    repo = repository_copy(root / "repository")
    (root / "home").mkdir()
    kernel_env = {
        **_clean_env(),
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(root / "home"),
        "IPYTHONDIR": str(ipython_dir),
        # every pip command of the replica, the setup cells' too, installs from the wheelhouse
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        # ipykernel 6.17's debugger warns at every kernel start that Python's modules are frozen
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        # lab_grader fetches a lab's public tests from the copy, not from GitHub
        grading.TESTS_URL_ENV: str(repo / "labs" / "{lab}" / "student" / "tests"),
    }
    python_version = subprocess.run(
        [exe, "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    colab_torch = cpu_runtime()["packages"]["torch"]
    stand_ins = ["google.colab: a stand-in module, imported at kernel start"]
    if version != colab_python():
        stand_ins.append(
            f"Python {python_version} for Colab's {cpu_runtime()['python']} (no CPU torch here "
            f"for a nearer one: tried {'; '.join(manifest['tried'])})"
        )
    elif python_version != cpu_runtime()["python"]:
        stand_ins.append(f"Python {python_version} for Colab's {cpu_runtime()['python']}")
    if manifest["torch"] is None:
        stand_ins.append(
            "no torch (no CPU build of torch for this Python is reachable here): only pages "
            f"that need neither torch nor Triton run; {', '.join(TEST_EXTRAS)} added for the "
            "calculators' tests"
        )
    elif manifest["torch"] != colab_torch:
        kernel_env[colab.TORCH_STANDS_FOR_ENV] = colab_torch
        stand_ins.append(
            f"torch {manifest['torch']} for Colab's {colab_torch}, installed without its "
            "dependencies (they keep Colab's versions); install_triton is told "
            f"{colab.TORCH_STANDS_FOR_ENV}={colab_torch}"
        )
    stand_ins.append("PyPI: the cached wheelhouse; gpuperf from a git copy of the working tree")
    return Replica(
        root=root,
        venv=venv,
        wheels=wheels,
        repo=repo,
        kernels=kernels,
        python_version=python_version,
        torch=manifest["torch"],
        triton=manifest["triton"],
        stand_ins=stand_ins,
        kernel_env=kernel_env,
        cold=cold,
        build_s=time.perf_counter() - start,
    )
