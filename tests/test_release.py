"""A release freezes what a class touches: everything follows ``gpuperf.__version__``.

One version source (``gpuperf.__version__``, calendar versioning; pyproject.toml reads it) and one
derivation (:func:`gpuperf.release.pins`). These tests fail if anything a class touches
disagrees with the derivation for the version in the tree:

* the first code cell of every notebook (masters, student and autograder copies): what the
  Colab setup cell installs;
* each lab master's ``ASSIGNMENT CONFIG``, its ``autograder/requirements.txt`` and the
  ``environment.yml`` inside its autograder zip: what Gradescope installs;
* where a lab's grader fetches its public tests in Colab (and that they are there);
* ``repository.branch`` of ``_config.yml`` (the book's Colab buttons) and every "open in Colab"
  link of the repository, in the Markdown pages and in the notebooks' stored outputs.

``.ci/sync_version.py`` writes all of it; a copy of the course synced to a release version here
passes the same checks, and the release workflow builds what PyPI gets from the same version.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from functools import cache
from pathlib import Path

import nbformat
import pytest
import tomllib
import yaml

import gpuperf
from gpuperf import release
from gpuperf.grading import grader as lab_grading
from gpuperf.notebook import colab_setup_source, needs_triton, repository_url_from_config

ROOT = Path(__file__).resolve().parent.parent
SYNC = ROOT / ".ci" / "sync_version.py"
PAGES = ("README.md", "CONTRIBUTING.md", "intro.md", "labs/index.md", "labs/instructor_guide.md")
_COLAB = re.compile(r"https://colab\.research\.google\.com/github/[^\s\"'<>)\\]+")


def lab_dirs(root: Path) -> list[Path]:
    labs = (root / "labs").glob("lab[0-9]*_*")
    return sorted(p for p in labs if (p / f"{p.name}.ipynb").is_file())


def config_requirements(master: Path) -> list[str]:
    """The ``requirements:`` list of a lab master's ``ASSIGNMENT CONFIG`` cell."""
    first = nbformat.read(master, as_version=4).cells[0]
    assert first.cell_type == "raw" and first.source.startswith("# ASSIGNMENT CONFIG"), master
    return yaml.safe_load(first.source.split("\n", 1)[1])["requirements"]


def problems(root: Path, version: str, *, zips: bool = True) -> list[str]:
    """Everything under ``root`` a class touches that disagrees with ``pins(version)``."""
    url = repository_url_from_config(root / "_config.yml")
    pins = release.pins(version, url)
    found = []
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    if config["repository"].get("branch") != pins.ref:
        found.append(f"_config.yml: repository.branch is not {pins.ref!r}")
    notebooks = sorted([*(root / "chapters").rglob("*.ipynb"), *(root / "labs").rglob("*.ipynb")])
    for path in notebooks:
        if ".ipynb_checkpoints" in path.parts:
            continue
        where = path.relative_to(root)
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        triton = needs_triton(c.source for c in code[1:])
        if code[0].source != colab_setup_source(url, triton=triton, version=version):
            found.append(f"{where}: the setup cell is not the one of {version}")
        for cell in code:
            text = nbformat.writes(nbformat.v4.new_notebook(cells=[cell]))
            found += [f"{where}: {link}" for link in _stale_links(text, pins)]
    for page in PAGES:
        if (root / page).is_file():
            text = (root / page).read_text(encoding="utf-8")
            found += [f"{page}: {link}" for link in _stale_links(text, pins)]
    for lab_dir in lab_dirs(root):
        lab = lab_dir.name
        ours = [r for r in config_requirements(lab_dir / f"{lab}.ipynb") if "gpuperf" in r]
        if ours != [pins.autograder_requirement]:
            found.append(f"{lab}: ASSIGNMENT CONFIG installs {ours}")
        if not zips:
            continue
        lines = (lab_dir / "autograder" / "requirements.txt").read_text().splitlines()
        if [line for line in lines if "gpuperf" in line] != [pins.autograder_requirement]:
            found.append(f"{lab}/autograder/requirements.txt is not {pins.autograder_requirement}")
        with zipfile.ZipFile(lab_dir / "autograder" / f"{lab}-autograder.zip") as zf:
            environment = yaml.safe_load(zf.read("environment.yml"))
        pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
        if [p for p in pip if "gpuperf" in p] != [pins.autograder_requirement]:
            found.append(f"{lab}-autograder.zip installs {[p for p in pip if 'gpuperf' in p]}")
    return found


def _stale_links(text: str, pins: release.Pins) -> list[str]:
    """Colab links into the course's repository that do not point at ``pins.ref``."""
    owner_repo = pins.repository_url.removeprefix("https://github.com/")
    ours = f"https://colab.research.google.com/github/{owner_repo}/blob/"
    return [
        link
        for link in _COLAB.findall(text)
        if link.startswith(ours) and not link.startswith(f"{ours}{pins.ref}/")
    ]


# --- the tree as it is -------------------------------------------------------------------------


def test_one_version_source():
    """pyproject.toml reads the version from gpuperf.__version__, a calendar version."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gpuperf.__version__"}
    release.parse_version(gpuperf.__version__)
    assert repository_url_from_config(ROOT / "_config.yml") == release.REPOSITORY_URL


def test_everything_a_class_touches_follows_the_version():
    found = problems(ROOT, gpuperf.__version__)
    assert not found, (
        f"{len(found)} things disagree with gpuperf {gpuperf.__version__}: run "
        ".ci/sync_version.py, then python tests/test_labs.py --assign\n" + "\n".join(found[:40])
    )


@cache
def sync_script():
    """``.ci/sync_version.py`` as a module (in this process: no second interpreter to start)."""
    spec = importlib.util.spec_from_file_location("sync_version", SYNC)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sync_script_agrees(capsys):
    assert sync_script().main(["--check"]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("lab_dir", lab_dirs(ROOT), ids=lambda p: p.name)
def test_a_lab_grader_fetches_the_public_tests_of_its_release(lab_dir, monkeypatch):
    monkeypatch.delenv(lab_grading.TESTS_URL_ENV, raising=False)
    lab = lab_dir.name
    source = lab_grading._tests_source(lab, None)
    assert source == release.pins().tests_url(lab)
    ref_path = source.split(f"/raw/{release.pins().ref}/", 1)[1]
    public = sorted(p.name for p in (ROOT / ref_path).glob("q*.py"))
    assert public, f"{ref_path} holds no public tests"


def test_the_changelog_has_the_version():
    """A release has its section; the tip of main collects changes under "Unreleased"."""
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    heading = "Unreleased" if not release.pins().is_release else gpuperf.__version__
    assert re.search(rf"^## {re.escape(heading)}\b", changelog, re.M), heading


# --- cutting a release ---------------------------------------------------------------------------


def test_a_copy_synced_to_a_release_passes_the_same_checks(tmp_path):
    """What the release procedure does (CONTRIBUTING.md), on a copy: sync to 2026.12.0, and
    every setup cell, lab config, book setting and link points at the tag (the zips follow with
    ``--assign``, which the release procedure runs and the tree's own test checks)."""
    for name in ("_config.yml", *PAGES):
        if (ROOT / name).is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, tmp_path / name)
    for notebook in ("chapters/02_roofline.ipynb", "chapters/03_2_fusion.ipynb"):
        (tmp_path / "chapters").mkdir(exist_ok=True)
        shutil.copy(ROOT / notebook, tmp_path / notebook)
    lab = lab_dirs(ROOT)[0]
    (tmp_path / "labs" / lab.name).mkdir(parents=True)
    shutil.copy(lab / f"{lab.name}.ipynb", tmp_path / "labs" / lab.name / f"{lab.name}.ipynb")
    assert problems(tmp_path, "2026.12.0", zips=False)  # everything still follows main
    before = (tmp_path / "chapters" / "02_roofline.ipynb").read_text(encoding="utf-8")
    run = ["--root", str(tmp_path), "--version", "2026.12.0"]
    assert sync_script().main(run) == 0
    assert problems(tmp_path, "2026.12.0", zips=False) == []
    after = (tmp_path / "chapters" / "02_roofline.ipynb").read_text(encoding="utf-8")
    # only the setup cell and the Colab links changed: every other line is byte for byte
    changed = {line for line in after.splitlines()} - set(before.splitlines())
    assert all("2026.12.0" in line or "if not any(" in line for line in changed), changed
    # and back to the tip of main
    assert sync_script().main([*run[:-1], "2026.12.1.dev0"]) == 0
    assert (tmp_path / "chapters" / "02_roofline.ipynb").read_text(encoding="utf-8") == before


# --- the derivation ----------------------------------------------------------------------------


def test_pins_of_a_release_and_of_the_tip():
    tag = release.pins("2026.12.0")
    assert tag.is_release and tag.ref == "v2026.12.0"
    assert tag.setup_installs == (
        "gpuperf==2026.12.0",
        "gpuperf @ git+https://github.com/gpuperf/gpuperf@v2026.12.0",
    )
    assert tag.autograder_requirement == "gpuperf[kernels]==2026.12.0"
    assert tag.tests_url("lab1_rooflines") == (
        "https://github.com/gpuperf/gpuperf/raw/v2026.12.0/labs/lab1_rooflines/student/tests"
    )
    assert tag.colab_url("chapters/02_roofline.ipynb") == (
        "https://colab.research.google.com/github/gpuperf/gpuperf/blob/v2026.12.0/"
        "chapters/02_roofline.ipynb"
    )
    tip = release.pins("2026.12.1.dev0", "https://github.com/someone/fork")
    assert not tip.is_release and tip.ref == "main"
    assert tip.setup_installs == ("gpuperf @ git+https://github.com/someone/fork",)
    assert tip.autograder_requirement == "gpuperf[kernels] @ git+https://github.com/someone/fork"


@pytest.mark.parametrize(
    "version",
    ["0.1.0", "2026.12", "2026.13.0", "2026.0.1", "2026.01.0", "2026.12.0rc1", "v2026.12.0",
     "2026.12.00", "1999.1.0", " 2026.12.0", "2026.12.0.dev01", ""],
)  # fmt: skip
def test_a_version_that_is_not_calendar_versioning_is_refused(version):
    with pytest.raises(ValueError, match="version="):
        release.pins(version)


@pytest.mark.parametrize("bad", [None, 2026.12, b"2026.12.0", ["2026.12.0"]])
def test_a_version_that_is_not_a_string_is_refused(bad):
    with pytest.raises((TypeError, ValueError), match="version="):
        release.parse_version(bad)


def test_pins_cannot_disagree_with_their_version():
    with pytest.raises(ValueError, match=r"disagree with version='2026\.12\.0'"):
        release.Pins("2026.12.0", release.REPOSITORY_URL, "main", ("gpuperf",), "gpuperf")
    assert release.Pins("2026.12.0") == release.pins("2026.12.0")


@pytest.mark.parametrize("triton", [False, True], ids=["page without kernels", "with kernels"])
@pytest.mark.parametrize("on_pypi", [True, False], ids=["on PyPI", "not on PyPI yet"])
def test_a_release_setup_cell_installs_exactly_its_release(monkeypatch, triton, on_pypi):
    """Run the cell (its ``%pip`` recorded, not run) in a fresh Colab runtime: PyPI's gpuperf of
    the release; the tag over git only when PyPI did not have it."""
    import importlib.metadata
    import types

    from IPython.core.inputtransformer2 import TransformerManager

    import gpuperf.colab

    pips: list[str] = []
    installed: list[object] = []

    class Shell:
        def run_line_magic(self, name, line):
            assert name == "pip"
            pips.append(line)
            if on_pypi or "git+" in line:
                installed.append(object())

    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(importlib.metadata, "distributions", lambda **query: iter(installed))
    monkeypatch.setattr(gpuperf.colab, "install_triton", lambda: None)
    source = colab_setup_source("https://github.com/a/b", triton=triton, version="2026.12.0")
    exec(TransformerManager().transform_cell(source), {"get_ipython": Shell})
    expected = ['install -q "gpuperf==2026.12.0"']
    if not on_pypi:
        expected.append('install -q "gpuperf @ git+https://github.com/a/b@v2026.12.0"')
    assert pips == expected
    assert source.splitlines()[0].startswith("# Colab only (≈ 10 s, once per runtime): installs "
                                             "gpuperf 2026.12.0")  # fmt: skip


def test_the_release_workflow_builds_checks_publishes_and_attaches():
    """``.github/workflows/release.yml`` (actionlint checks its syntax in tests/test_ci.py):
    a tag builds and checks the wheel and sdist, PyPI gets them by trusted publishing (an
    identity token, no password), and the GitHub release carries the five autograder zips and
    the PDF of the book built from the tag."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert workflow[True]["push"]["tags"] == ["v*"]  # YAML reads the key `on` as True
    jobs = workflow["jobs"]
    runs = {name: "\n".join(s.get("run", "") for s in job["steps"]) for name, job in jobs.items()}
    uses = {name: [s.get("uses", "") for s in job["steps"]] for name, job in jobs.items()}
    assert "sync_version.py --check" in runs["dist"] and "python -m build" in runs["dist"]
    assert "twine check --strict dist/*" in runs["dist"]
    assert 'check_dist.py dist --tag "$GITHUB_REF_NAME"' in runs["dist"]
    assert jobs["pypi"]["permissions"] == {"id-token": "write"}
    assert any(u.startswith("pypa/gh-action-pypi-publish@") for u in uses["pypi"])
    assert not any("password" in str(s.get("with", {})) for s in jobs["pypi"]["steps"])
    assert "jupyter-book build ." in runs["book"]
    attached = runs["github-release"]
    assert "labs/*/autograder/*-autograder.zip" in attached and "gpuperf-book.pdf" in attached
    assert len(lab_dirs(ROOT)) == 5  # the glob attaches five zips
    assert jobs["github-release"]["needs"] == "pypi" and set(jobs["pypi"]["needs"]) == {
        "dist",
        "book",
    }


@pytest.mark.slow  # builds the wheel and the sdist (a few seconds)
def test_the_wheel_is_the_package_and_its_data_only(tmp_path):
    """What ``python -m build`` makes from this tree (the release workflow's step; here through
    setuptools' own backend, on a copy, so the tree gets no build/ folder) passes
    ``.ci/check_dist.py``: the package, its data and its metadata, no notebook."""
    pytest.importorskip("setuptools", reason="setuptools builds the wheel")
    copy = tmp_path / "tree"
    (copy / "src").mkdir(parents=True)
    shutil.copytree(
        ROOT / "src" / "gpuperf",
        copy / "src" / "gpuperf",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    build = (
        "from setuptools import build_meta as b; "
        "b.build_wheel('../dist'); b.build_sdist('../dist')"
    )
    done = subprocess.run(
        [sys.executable, "-c", build], cwd=copy, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    spec = importlib.util.spec_from_file_location("check_dist", ROOT / ".ci" / "check_dist.py")
    check_dist = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_dist)
    assert check_dist.problems(tmp_path / "dist") == []
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    assert wheel.stat().st_size < 2_000_000, f"{wheel.name}: {wheel.stat().st_size} bytes"
