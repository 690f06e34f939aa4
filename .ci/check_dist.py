#!/usr/bin/env python3
"""Check a release's wheel and sdist before they are published (``.github/workflows/release.yml``).

* exactly one wheel and one sdist, both of ``gpuperf.__version__`` (``--tag vV``: and the tag is
  that version, a release, not a development version);
* the wheel holds the package and its data only — ``gpuperf/…`` and its ``.dist-info`` — with
  every package-data file pyproject.toml declares, and no notebook, lab, test or book file;
* the sdist holds the package's sources, pyproject.toml and the README, and no notebook;
* prints each file's size (the README quotes the wheel's).

Usage: .ci/check_dist.py DIST_DIR [--tag vYEAR.MONTH.N]
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import tarfile
import zipfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # the working tree's version, whatever is installed

from gpuperf import __version__  # noqa: E402
from gpuperf.release import parse_version  # noqa: E402


def problems(dist: Path, tag: str | None = None) -> list[str]:
    found = []
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        return [f"{dist} must hold one wheel and one sdist, not {wheels + sdists}"]
    wheel, sdist = wheels[0], sdists[0]
    if tag is not None:
        if tag != f"v{__version__}":
            found.append(f"the tag {tag} is not v{__version__} (gpuperf.__version__)")
        if parse_version(__version__)[3] is not None:
            found.append(f"{__version__} is a development version: release YEAR.MONTH.N")
    if not wheel.name.startswith(f"gpuperf-{__version__}-"):
        found.append(f"{wheel.name} is not gpuperf {__version__}")
    info = f"gpuperf-{__version__}.dist-info/"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(info + "METADATA").decode() if info + "METADATA" in names else ""
    if f"\nVersion: {__version__}\n" not in metadata:
        found.append(f"{wheel.name}: METADATA does not say Version: {__version__}")
    stray = [n for n in names if not n.startswith(("gpuperf/", info))]
    found += [f"{wheel.name} holds {n}: the wheel is the package only" for n in stray]
    found += [f"{wheel.name} holds {n}" for n in names if n.endswith((".ipynb", ".zip"))]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for pattern in project["tool"]["setuptools"]["package-data"]["gpuperf"]:
        data = [p for p in (ROOT / "src" / "gpuperf").glob(pattern) if p.is_file()]
        for path in data:
            name = "gpuperf/" + path.relative_to(ROOT / "src" / "gpuperf").as_posix()
            if name not in names:
                found.append(f"{wheel.name} lacks {name} (package data: {pattern})")
    sources = [p for p in (ROOT / "src" / "gpuperf").rglob("*.py") if "__pycache__" not in p.parts]
    for path in sources:
        name = "gpuperf/" + path.relative_to(ROOT / "src" / "gpuperf").as_posix()
        if name not in names:
            found.append(f"{wheel.name} lacks {name}")
    with tarfile.open(sdist) as tf:
        members = [m.split("/", 1)[1] for m in tf.getnames() if "/" in m]
    for needed in ("pyproject.toml", "README.md", "src/gpuperf/__init__.py"):
        if needed not in members:
            found.append(f"{sdist.name} lacks {needed}")
    found += [
        f"{sdist.name} holds {m}"
        for m in members
        if fnmatch.fnmatch(m, "*.ipynb") or m.startswith(("chapters/", "labs/"))
    ]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", type=Path)
    parser.add_argument("--tag", help="the git tag being released (vYEAR.MONTH.N)")
    args = parser.parse_args(argv)
    for path in sorted(args.dist.glob("*")):
        print(f"{path.name}: {path.stat().st_size / 1e6:.2f} MB")
    found = problems(args.dist, args.tag)
    for problem in found:
        print(f"FAIL {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
