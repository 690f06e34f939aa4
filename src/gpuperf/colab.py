"""Google Colab's runtimes, as Colab publishes them, and the one thing the course adds to them.

Every notebook opens in Colab's CPU runtime unless the student changes the runtime type. That
runtime ships torch (its CPU build) but no Triton; the GPU runtime ships the Triton that its torch
build requires. The course's kernels run on the CPU through Triton's interpreter, so a page with
kernels needs Triton there too. :func:`install_triton` adds it, inside Colab only (the setup cell
calls it), at the version that the *same* torch release's CUDA build pins — the Triton a student
would get on the GPU runtime — and only when no Triton is installed: never a second Triton beside
the one torch came with, and never anything else (``--no-deps``): numpy, torch, matplotlib and
ipywidgets stay as Colab ships them.

:data:`TRITON_FOR_TORCH` is that pairing, read from the ``Requires-Dist: triton==…`` line of
torch's Linux x86-64 wheels on PyPI (checked 2026-11-26). A torch release newer than the table is
looked up the same way, from PyPI, at run time.

:data:`TORCH_STANDS_FOR_ENV` names the torch release to pair Triton with instead of the installed
one. Only a replica of Colab sets it: the Colab replica test, whose torch (the CPU build this
machine can install) stands in for the release Colab ships, so that the replica gets the Triton
Colab's own runtime would get. It changes the version asked for and nothing else, and the
message printed says which torch stood in for which.

:func:`recorded_runtimes` returns the versions of the packages that matter in Colab's CPU and GPU
runtimes, as the public repository googlecolab/backend-info lists them (``colab_runtimes.json``,
written by ``.ci/colab-record``); the Colab replica test builds its environment from it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
from functools import cache
from importlib import resources
from typing import Any

__all__ = [
    "TORCH_STANDS_FOR_ENV",
    "TRITON_FOR_TORCH",
    "install_triton",
    "recorded_runtimes",
    "triton_for_torch",
]

#: torch release → the Triton its CUDA wheels require (PyPI metadata, checked 2026-11-26).
TRITON_FOR_TORCH = {
    "2.4.0": "3.0.0",
    "2.4.1": "3.0.0",
    "2.5.0": "3.1.0",
    "2.5.1": "3.1.0",
    "2.6.0": "3.2.0",
    "2.7.0": "3.3.0",
    "2.7.1": "3.3.1",
    "2.8.0": "3.4.0",
    "2.9.0": "3.5.0",
    "2.9.1": "3.5.1",
    "2.10.0": "3.6.0",
    "2.11.0": "3.6.0",
    "2.12.0": "3.7.0",
    "2.13.0": "3.7.1",
}

#: Environment variable: the torch version (e.g. ``2.11.0+cpu``) whose Triton
#: :func:`install_triton` installs when the installed torch only stands in for it (a replica of
#: Colab's runtime).
TORCH_STANDS_FOR_ENV = "GPUPERF_TORCH_STANDS_FOR"

_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)")
_PYPI_TORCH = "https://pypi.org/simple/torch/"


def _release(torch_version: Any) -> str:
    if not isinstance(torch_version, str) or not _RELEASE.match(torch_version.strip()):
        raise ValueError(
            f"torch_version={torch_version!r} must be a torch version such as '2.11.0+cpu'"
        )
    return _RELEASE.match(torch_version.strip()).group(0)


def triton_for_torch(torch_version: str) -> str:
    """The Triton version that torch ``torch_version``'s CUDA build requires.

    Local build tags are ignored (``2.11.0+cpu`` pairs like ``2.11.0+cu128``). A release missing
    from :data:`TRITON_FOR_TORCH` is looked up in its wheel's metadata on PyPI; ``LookupError``
    if that fails too, naming the release.
    """
    release = _release(torch_version)
    if release in TRITON_FOR_TORCH:
        return TRITON_FOR_TORCH[release]
    try:
        return _triton_from_pypi(release)
    except (OSError, ValueError) as exc:
        raise LookupError(
            f"cannot tell which Triton torch {release} pairs with ({exc}); install the version "
            "its CUDA build requires: pip install --no-deps triton==VERSION"
        ) from None


def _triton_from_pypi(release: str) -> str:
    """Read ``Requires-Dist: triton==…`` from the metadata of a Linux x86-64 torch wheel."""
    import urllib.request  # lazily: only a torch release newer than the table needs the network

    request = urllib.request.Request(
        _PYPI_TORCH, headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        files = json.load(response)["files"]
    wheels = [
        f["url"]
        for f in files
        if f["filename"].startswith(f"torch-{release}-")
        and re.search(r"manylinux.*x86_64\.whl$", f["filename"])
        and f.get("core-metadata")
    ]
    for url in wheels[:3]:
        with urllib.request.urlopen(url + ".metadata", timeout=30) as response:
            metadata = response.read().decode("utf-8", "replace")
        pinned = re.search(r"^Requires-Dist: triton\s*\(?(?:==|~=)\s*([0-9.]+)", metadata, re.M)
        if pinned:
            return pinned.group(1)
    raise ValueError(f"no torch {release} wheel on PyPI names a Triton version")


def _installed(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def install_triton() -> str | None:
    """Install the Triton that this runtime's torch pairs with, if no Triton is installed.

    Returns the version installed, or ``None`` when nothing was needed (Triton present, e.g. on
    Colab's GPU runtime). Only Triton is installed (``--no-deps``); Triton wheels exist for
    Linux only, so elsewhere this raises ``RuntimeError`` saying so. With
    :data:`TORCH_STANDS_FOR_ENV` set, the Triton is the one that torch version pairs with.
    """
    if _installed("triton") is not None:
        return None
    torch_version = _installed("torch")
    if torch_version is None:
        raise RuntimeError("torch is not installed, so there is no Triton to pair with it")
    if not sys.platform.startswith("linux"):
        raise RuntimeError(f"Triton ships wheels for Linux only, not for {sys.platform!r}")
    stands_for = os.environ.get(TORCH_STANDS_FOR_ENV, "").strip()
    paired = stands_for or torch_version
    version = triton_for_torch(paired)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", f"triton=={version}"],
        check=True,
    )
    importlib.invalidate_caches()
    message = f"Installed Triton {version}, the version torch {_release(paired)} pairs with."
    if stands_for:
        message += (
            f" (torch {torch_version} is installed, standing in for {stands_for}: "
            f"{TORCH_STANDS_FOR_ENV})"
        )
    print(message)
    return version


@cache
def _record() -> dict[str, Any]:
    text = resources.files("gpuperf").joinpath("colab_runtimes.json").read_text("utf-8")
    return json.loads(text)


def recorded_runtimes() -> dict[str, Any]:
    """Colab's runtimes as recorded: ``source`` (repository, commit, date), ``runtimes`` →
    ``cpu``/``gpu`` → ``python`` and ``packages`` (name → version, ``None`` where absent)."""
    return json.loads(json.dumps(_record()))  # a copy: callers cannot change the record
