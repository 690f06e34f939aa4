"""The ``grader`` of a lab notebook, and what it needs inside Google Colab.

:func:`lab_grader` creates the ``grader`` object of a lab notebook (``grader.check("q1")``).
Locally and under ``otter run`` the public tests sit next to the notebook. Inside Colab it first
installs otter-grader without touching Colab's ipywidgets, numpy or torch
(:func:`install_otter_for_colab`) and downloads the lab's public tests, because otter cannot
fetch tests by URL there. They come from the same release as the installed ``gpuperf``:
``gpuperf.release.pins().tests_url(lab)`` (the tag of a release, ``main`` for the tip), so a
student's checks never change under them in the middle of a semester.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._validate import file_path, show
from ..release import pins

__all__ = ["install_otter_for_colab", "lab_grader"]

#: otter-grader version the labs were generated with; Colab installs the same one.
OTTER_VERSION = "7.0.0"
#: Installed in Colab with ``--no-deps``: otter-grader 7 declares ``ipywidgets>=8.1.5`` (upgrading
#: Colab's ipywidgets 7.7.1 breaks its widgets) and fica declares Sphinx (needed only for its
#: Sphinx extension). Neither needs anything else from its dependency list to check answers.
COLAB_NO_DEPS_PACKAGES = (f"otter-grader=={OTTER_VERSION}", "fica>=0.4.1")
#: What ``import otter`` and ``grader.check`` import besides Colab's own packages (found by
#: tracing otter 7.0.0's imports: ``otter.check.utils`` imports ipylab and wrapt,
#: ``otter.utils`` python-frontmatter, ``otter.check.logs`` dill, ``otter.execute`` nbconvert).
#: Installed *with* their dependencies, under a pip constraint that pins the versions of
#: ipywidgets, numpy, torch and matplotlib already installed, so nothing of Colab's is upgraded.
#: wrapt has no upper bound although otter 7.0.0 declares ``wrapt<2``: Colab ships wrapt 2.3.0,
#: whose ``wrapt.decorator`` (all otter uses) is unchanged, and a downgrade would change a
#: package Colab's own code imports (the Colab replica runs every check under 2.3.0).
COLAB_WITH_DEPS_PACKAGES = (
    "python-frontmatter>=1.3,<2",
    "ipylab>=1,<2",
    "dill>=0.3",
    "wrapt>=1.16",
    "nbconvert>=6",
)
#: Everything :func:`install_otter_for_colab` installs.
COLAB_OTTER_PACKAGES = COLAB_NO_DEPS_PACKAGES + COLAB_WITH_DEPS_PACKAGES
#: The modules those packages provide: if one is missing, the Colab grader installs them.
OTTER_IMPORTS = ("otter", "fica", "frontmatter", "ipylab", "dill", "wrapt", "nbconvert")
#: Installed packages Colab's pip must never upgrade while installing otter.
PINNED_IN_COLAB = ("ipywidgets", "numpy", "torch", "matplotlib")
#: A base URL (``{lab}`` is replaced by the lab's name) or a local folder from which the Colab
#: grader copies the public tests instead of downloading them from the release's own
#: (``gpuperf.release.pins().tests_url``).
TESTS_URL_ENV = "GPUPERF_LAB_TESTS_URL"


def _in_colab() -> bool:
    return "google.colab" in sys.modules


def _missing_modules(names: Sequence[str] = OTTER_IMPORTS) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


def install_otter_for_colab(python: str | None = None) -> list[list[str]]:
    """Install what ``import otter`` and ``grader.check`` need on top of Colab's packages.

    Two pip commands, returned as the argument lists that ran: :data:`COLAB_WITH_DEPS_PACKAGES`
    with their dependencies under a constraint file that pins the installed versions of
    :data:`PINNED_IN_COLAB` (so ipywidgets 7.7.1 stays), then :data:`COLAB_NO_DEPS_PACKAGES` with
    ``--no-deps``. ``python`` is the interpreter whose environment receives them (this one by
    default). The tests build a Colab-like environment and call exactly this function.
    """
    import importlib.metadata
    import tempfile

    if python is not None and (not isinstance(python, str) or not Path(python).is_file()):
        raise ValueError(f"python={show(python)} must be the path of a Python interpreter")
    python = python or sys.executable
    pins = []
    for package in PINNED_IN_COLAB:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            pins.append(f"{package}=={importlib.metadata.version(package)}")
    commands = []
    with tempfile.TemporaryDirectory() as tmp:
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("\n".join(pins) + "\n")
        commands.append(
            [
                python,
                "-m",
                "pip",
                "install",
                "-q",
                "-c",
                str(constraints),
                *COLAB_WITH_DEPS_PACKAGES,
            ]
        )
        commands.append(
            [python, "-m", "pip", "install", "-q", "--no-deps", *COLAB_NO_DEPS_PACKAGES]
        )
        for command in commands:
            subprocess.run(command, check=True)
    importlib.invalidate_caches()
    return commands


def _tests_source(lab: str, base_url: str | None) -> str:
    base = base_url or os.environ.get(TESTS_URL_ENV) or ""
    if not base:
        return pins().tests_url(lab)
    base = base.replace("{lab}", lab)
    if "://" not in base:  # a local folder
        return Path(base).resolve().as_uri()
    return base


def _fetch_tests(
    lab: str,
    questions: Sequence[str],
    tests_dir: str | Path = "tests",
    *,
    base_url: str | None = None,
) -> Path:
    """Download a lab's public test files (``q1.py``, ...) into ``tests_dir``; return it.

    They come from ``base_url`` if given, else from the folder or URL in the environment
    variable ``GPUPERF_LAB_TESTS_URL`` (``{lab}`` replaced by the lab's name), else from the
    course repository's ``labs/<lab>/student/tests``. Files already present are kept.
    """
    base = _tests_source(lab, base_url)
    target = Path(tests_dir)
    target.mkdir(parents=True, exist_ok=True)
    for question in questions:
        path = target / f"{question}.py"
        if not path.exists():
            with urllib.request.urlopen(f"{base}/{question}.py", timeout=30) as response:
                path.write_bytes(response.read())
    return target


def lab_grader(
    lab: str, questions: Sequence[str], tests_dir: str = "tests", *, tests_url: str | None = None
) -> Any:
    """The ``grader`` of a lab notebook: an ``otter.Notebook`` whose tests are on disk.

    Locally (and under ``otter run``) this is ``otter.Notebook(tests_dir=tests_dir)``. In Colab
    it first installs what otter needs if any of it is missing (:func:`install_otter_for_colab`,
    which never upgrades Colab's ipywidgets) and fetches the lab's public tests that are not in
    ``tests_dir`` yet: from ``tests_url`` (a folder or URL) if given, else from the one in the
    environment variable ``GPUPERF_LAB_TESTS_URL`` (``{lab}`` replaced by the lab's name), else
    from the course repository's ``labs/<lab>/student/tests``.
    If otter cannot be imported, the error names the module that is really missing.
    ``lab`` is the lab's folder name, ``questions`` its question names (``["q1", "q2"]``).
    """
    lab, questions = _lab_name(lab), _questions(questions)
    tests_dir = str(file_path("tests_dir", tests_dir))
    if tests_url is not None and (not isinstance(tests_url, str) or not tests_url.strip()):
        raise ValueError(f"tests_url={show(tests_url)} must be a folder, a URL or None")
    if _in_colab():
        if _missing_modules():
            install_otter_for_colab()
        _fetch_tests(lab, questions, tests_dir, base_url=tests_url)
    try:
        import otter
    except ModuleNotFoundError as error:
        missing = error.name or str(error)
        raise ModuleNotFoundError(
            f"the lab checks use otter-grader, and importing it failed because the module "
            f"{missing!r} is not installed. Install it (pip install {missing}) — or, in Colab, "
            "call gpuperf.grading.install_otter_for_colab() — then run this cell again. "
            f"Locally, pip install -r requirements.txt installs everything.",
            name=missing,
        ) from error
    from gpuperf import _grading_originals

    _grading_originals.remember_otter()
    return otter.Notebook(tests_dir=tests_dir)


_LAB = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def _lab_name(lab: object) -> str:
    if not isinstance(lab, str) or not _LAB.match(lab):
        raise ValueError(f"lab={show(lab)} must be a lab's folder name, e.g. 'lab1_rooflines'")
    return lab


def _questions(questions: object) -> list[str]:
    if isinstance(questions, str | bytes) or not isinstance(questions, Sequence) or not questions:
        raise TypeError(f"questions={show(questions)} must be a non-empty list such as ['q1']")
    for index, question in enumerate(questions):
        if not isinstance(question, str) or not question.isidentifier():
            raise ValueError(
                f"questions[{index}]={show(question)} must be a question's name, such as 'q1'"
            )
    return list(questions)
