#!/usr/bin/env python3
"""Point everything a class touches at the version in ``gpuperf.__version__``.

Run it after changing the version (cutting a release, or moving ``main`` back to a development
version), and after merging branches that touched notebooks; then regenerate the labs
(``python tests/test_labs.py --assign``) and commit. ``tests/test_release.py`` fails until both
are done. Everything it writes comes from :func:`gpuperf.release.pins` of the version:

* the first code cell (the Colab setup cell) of every chapter and lab master notebook, and
  nothing else of those cells' notebooks (``gpuperf.notebook.colab_setup_source``);
* the ``gpuperf[kernels]`` line of each lab master's ``ASSIGNMENT CONFIG`` (what its autograder
  zip installs);
* ``repository.branch`` in ``_config.yml`` (where the book's Colab buttons point);
* every "open in Colab" link of the repository, in the Markdown pages and in the notebooks'
  stored outputs (the kernel-free figures link to Colab from ``_config.yml``'s branch, so a
  fresh run writes the same link).

Only what differs is rewritten (a notebook is written back with nbformat, which keeps every
other byte). ``--check`` changes nothing and exits 1 listing what would change. ``--root`` and
``--version`` (tests/test_release.py) sync another copy of the course, or to another version.

Usage: .ci/sync_version.py [--check] [--root DIR] [--version V]   (run from anywhere)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # the working tree's gpuperf, whatever is installed

import nbformat  # noqa: E402

from gpuperf import __version__  # noqa: E402
from gpuperf.notebook import colab_setup_source, needs_triton, repository_url_from_config  # noqa: E402
from gpuperf.release import pins  # noqa: E402

#: Notebooks otter assign generates (rewritten by ``python tests/test_labs.py --assign``).
GENERATED = ("student", "autograder", "dist", ".ipynb_checkpoints")
#: Markdown pages that may link a notebook in Colab.
PAGES = ("README.md", "CONTRIBUTING.md", "intro.md", "labs/index.md", "labs/instructor_guide.md")
_REQUIREMENT = re.compile(r"^(\s*-\s*)gpuperf\[kernels\].*$", re.M)
_BRANCH = re.compile(r"^(repository:\n(?:[ \t]+.*\n)*?[ \t]+branch:[ \t]*)(\S+)", re.M)


def master_notebooks(root: Path = ROOT) -> list[Path]:
    """Every chapter and lab master notebook (what tests/test_notebooks.py checks)."""
    return [
        path
        for folder in ("chapters", "labs")
        for path in sorted((root / folder).rglob("*.ipynb"))
        if not any(part in GENERATED for part in path.relative_to(root).parts)
    ]


def colab_links(text: str, repository_url: str, ref: str) -> str:
    """``text`` with every Colab link into the repository pointing at ``ref``."""
    owner_repo = repository_url.removeprefix("https://github.com/")
    prefix = re.escape(f"https://colab.research.google.com/github/{owner_repo}/blob/")
    return re.sub(rf"({prefix})[^/\s\"'<>)\\]+/", rf"\g<1>{ref}/", text)


def sync_notebook(path: Path, url: str, version: str) -> bool:
    """Rewrite the setup cell, the lab config's requirement and stored Colab links of one
    notebook; True if anything changed."""
    release = pins(version, url)
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    if code:
        triton = needs_triton(cell.source for cell in code[1:])
        code[0].source = colab_setup_source(url, triton=triton, version=version)
    first = nb.cells[0] if nb.cells else None
    if first is not None and first.cell_type == "raw" and "# ASSIGNMENT CONFIG" in first.source:
        first.source = _REQUIREMENT.sub(
            lambda m: m.group(1) + release.autograder_requirement, first.source
        )
    for cell in code:
        for output in cell.get("outputs", []):
            for key, value in output.get("data", {}).items():
                if isinstance(value, str) and "colab.research.google.com" in value:
                    output["data"][key] = colab_links(value, url, release.ref)
            if isinstance(output.get("text"), str):
                output["text"] = colab_links(output["text"], url, release.ref)
    after = nbformat.writes(nb)
    if after == before:
        return False
    path.write_text(after + "\n", encoding="utf-8")
    return True


def sync_text(path: Path, url: str, version: str) -> bool:
    text = path.read_text(encoding="utf-8")
    new = colab_links(text, url, pins(version, url).ref)
    if path.name == "_config.yml":
        new = _BRANCH.sub(lambda m: m.group(1) + pins(version, url).ref, new, count=1)
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    parser.add_argument("--root", type=Path, default=ROOT, help="the course's folder")
    parser.add_argument("--version", default=__version__, help="default: gpuperf.__version__")
    args = parser.parse_args(argv)
    root, version = args.root.resolve(), args.version
    url = repository_url_from_config(root / "_config.yml")
    release = pins(version, url)  # a bad version stops here, before anything is written
    changed = []
    files = [root / "_config.yml", *(root / page for page in PAGES if (root / page).is_file())]
    for path in [*master_notebooks(root), *files]:
        original = path.read_bytes()
        sync = sync_notebook if path.suffix == ".ipynb" else sync_text
        if sync(path, url, version):
            changed.append(str(path.relative_to(root)))
            if args.check:
                path.write_bytes(original)
    print(f"gpuperf {version}: everything points at {release.ref}")
    for name in changed:
        print(("  stale: " if args.check else "  updated: ") + name)
    if changed and not args.check:
        print("now regenerate the labs: python tests/test_labs.py --assign")
    return 1 if changed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
