"""What a release of the course freezes, derived from one version string.

A class is taught from a *release*: a git tag ``vYEAR.MONTH.N`` (calendar versioning, PEP 440,
e.g. ``2026.12.0``) plus the wheel and sdist built from it. Everything a student or a grader
touches must come from that one release, or a fix pushed in week 6 silently changes the checks
of a lab students began in week 5. :func:`pins` derives every such reference from the version
(:data:`gpuperf.__version__` by default), and nothing else in the repository spells one out:

* the Colab setup cell's install: ``gpuperf==V`` from PyPI, else the tag over git (a page opened
  before PyPI has the release still gets exactly it);
* where a lab's grader fetches its public tests in Colab: ``…/raw/vV/labs/<lab>/student/tests``;
* what each autograder zip installs for Gradescope: ``gpuperf[kernels]==V``;
* where the book's Colab buttons and links point: ``…/blob/vV/<notebook>`` (the book reads
  ``repository.branch`` of ``_config.yml``, which ``.ci/sync-version`` keeps equal to
  :attr:`Pins.ref`).

The tip of ``main`` carries a *development* version, the next release's number with ``.devN``
(``2026.12.1.dev0``): every reference above then follows ``main`` (the setup cell installs
``gpuperf @ git+URL``, the tests and Colab links use ``main``), so readers who follow the tip get
the tip. ``tests/test_release.py`` fails if any notebook, lab, zip or link disagrees with
:func:`pins` of the package's version.
"""

from __future__ import annotations

import dataclasses
import re

from ._validate import name_string, show

__all__ = ["REPOSITORY_URL", "Pins", "parse_version", "pins"]

#: The course repository (the same as ``repository.url`` in ``_config.yml``; a test keeps the two
#: equal). Code that runs where the book's configuration is not at hand (a grader in Colab)
#: reads it here.
REPOSITORY_URL = "https://github.com/gpuperf/gpuperf"
#: The branch development versions follow.
DEV_BRANCH = "main"
#: What PyPI calls the package.
DISTRIBUTION = "gpuperf"

_VERSION = re.compile(r"^(\d{4})\.(\d{1,2})\.(\d{1,4})(?:\.dev(\d{1,4}))?$")
_URL = re.compile(r"^https://[A-Za-z0-9.-]+(/[A-Za-z0-9._-]+)+$")
_LAB = re.compile(r"^[A-Za-z0-9_-]+$")
_PATH = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")


def parse_version(version: str) -> tuple[int, int, int, int | None]:
    """``(year, month, n, dev)`` of a calendar version ``YEAR.MONTH.N`` or ``YEAR.MONTH.N.devD``
    (``dev`` is None for a release); ``ValueError`` for anything else."""
    name_string("version", version)
    match = _VERSION.match(version)
    if match is None:
        raise ValueError(
            f"version={show(version)} must be a calendar version YEAR.MONTH.N (a release, e.g. "
            "'2026.12.0') or YEAR.MONTH.N.devD (the tip of main, e.g. '2026.12.1.dev0')"
        )
    year, month, n, dev = match.groups()
    if not 2020 <= int(year) <= 2200 or not 1 <= int(month) <= 12 or month.startswith("0"):
        raise ValueError(
            f"version={show(version)}: the year must be in 2020…2200 and the month in 1…12, "
            "without a leading zero (PEP 440 normalizes '2026.01.0' to '2026.1.0')"
        )
    if (len(n) > 1 and n[0] == "0") or (dev is not None and len(dev) > 1 and dev[0] == "0"):
        raise ValueError(f"version={show(version)}: numbers have no leading zeros (PEP 440)")
    return int(year), int(month), int(n), None if dev is None else int(dev)


def _repository(repository_url: object) -> str:
    if not isinstance(repository_url, str):
        raise TypeError(f"repository_url={show(repository_url)} must be a string")
    if (
        not repository_url.startswith("https://github.com/")
        or not _URL.match(repository_url)
        or repository_url.endswith(".git")
        or repository_url.count("/") != 4
    ):
        raise ValueError(
            f"repository_url={show(repository_url)} must be https://github.com/OWNER/REPO "
            "exactly (no trailing slash, no .git, no sub-path)"
        )
    return repository_url


def _derive(version: str, repository_url: str) -> tuple[str, tuple[str, ...], str]:
    """``(ref, setup_installs, autograder_requirement)`` of a version: the one derivation."""
    *_, dev = parse_version(version)
    git = f"{DISTRIBUTION} @ git+{_repository(repository_url)}"
    if dev is not None:  # the tip of main
        return DEV_BRANCH, (git,), f"{DISTRIBUTION}[kernels] @ git+{repository_url}"
    tag = f"v{version}"
    return (
        tag,
        (f"{DISTRIBUTION}=={version}", f"{git}@{tag}"),
        f"{DISTRIBUTION}[kernels]=={version}",
    )


@dataclasses.dataclass(frozen=True)
class Pins:
    """Every reference a class touches, for one version of the course (made by :func:`pins`).

    ``ref`` is the git ref the references point at: the tag ``v<version>`` of a release,
    ``main`` for a development version. ``setup_installs`` are the pip requirements the Colab
    setup cell tries in turn until one installs (PyPI first, the tag over git second; only the
    git URL of ``main`` for a development version). ``autograder_requirement`` is the line each
    autograder zip installs the course with. The derived fields must be what :func:`pins`
    derives (a ``Pins`` cannot disagree with its version).
    """

    version: str
    repository_url: str = REPOSITORY_URL
    ref: str = ""
    setup_installs: tuple[str, ...] = ()
    autograder_requirement: str = ""

    def __post_init__(self) -> None:
        ref, installs, requirement = _derive(self.version, self.repository_url)
        if not isinstance(self.setup_installs, tuple | list):
            raise TypeError(f"setup_installs={show(self.setup_installs)} must be a tuple")
        given = (self.ref, tuple(self.setup_installs), self.autograder_requirement)
        if given == ("", (), ""):  # only the version and URL given: derive the rest
            object.__setattr__(self, "ref", ref)
            object.__setattr__(self, "setup_installs", installs)
            object.__setattr__(self, "autograder_requirement", requirement)
        elif given != (ref, installs, requirement):
            raise ValueError(
                f"ref={show(self.ref)}, setup_installs={show(self.setup_installs)} and "
                f"autograder_requirement={show(self.autograder_requirement)} disagree with "
                f"version={show(self.version)}: use pins(version)"
            )

    @property
    def is_release(self) -> bool:
        """True for a release (a tag), False for a development version (``main``)."""
        return self.ref != DEV_BRANCH

    def tests_url(self, lab: str) -> str:
        """Where a lab's grader downloads the public tests (``q1.py`` …) in Colab."""
        if not isinstance(lab, str) or not _LAB.match(lab):
            raise ValueError(f"lab={show(lab)} must be a lab's folder name, e.g. 'lab1_rooflines'")
        return f"{self.repository_url}/raw/{self.ref}/labs/{lab}/student/tests"

    def colab_url(self, notebook: str) -> str:
        """The "open in Colab" URL of ``notebook``, a path in the repository ending in .ipynb."""
        if not isinstance(notebook, str) or not _PATH.match(notebook) or ".." in notebook:
            raise ValueError(
                f"notebook={show(notebook)} must be a relative path in the repository, "
                "e.g. 'chapters/02_roofline.ipynb'"
            )
        if not notebook.endswith(".ipynb"):
            raise ValueError(f"notebook={show(notebook)} must end in .ipynb")
        owner_repo = self.repository_url.removeprefix("https://github.com/")
        return f"https://colab.research.google.com/github/{owner_repo}/blob/{self.ref}/{notebook}"


def pins(version: str | None = None, repository_url: str = REPOSITORY_URL) -> Pins:
    """The :class:`Pins` of ``version`` (``None``: the installed ``gpuperf.__version__``) for the
    repository at ``repository_url`` (``https://github.com/OWNER/REPO``)."""
    if version is None:
        from . import __version__ as version
    return Pins(version, repository_url)
