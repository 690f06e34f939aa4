"""The book builds with Sphinx warnings as errors, and the output has every toc page.

``jupyter-book build . -W -n --keep-going`` runs once per session (``built_book`` in
conftest.py). Notebooks are not executed at build time (``execute_notebooks: "off"``): the book
shows the committed outputs, which nbval checks against a fresh run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuperf.notebook import toc_files as toc_files_of

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.book


def toc_files() -> list[str]:
    """Every document in _toc.yml (root first), without extension."""
    return toc_files_of(ROOT / "_toc.yml")


def test_book_builds_without_warnings(built_book):
    tail = built_book.output[-4000:]
    assert built_book.returncode == 0, f"jupyter-book build failed:\n{tail}"
    warnings = [line for line in built_book.output.splitlines() if "WARNING" in line]
    assert not warnings, "the build printed warnings:\n" + "\n".join(warnings)


def test_book_has_every_toc_page(built_book):
    missing = [f for f in toc_files() if not (built_book.html / f"{f}.html").is_file()]
    assert not missing, f"pages in _toc.yml missing from the build: {missing}"


def test_book_has_no_execution_reports(built_book):
    # myst-nb writes reports/ when a notebook fails to execute; none should exist (and it would
    # be published).
    assert not (built_book.html / "reports").exists()


def test_mathjax_is_bundled_not_fetched(built_book):
    page = (built_book.html / "chapters" / "02_roofline.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', page)
    assert any("_static/mathjax/" in s for s in scripts), scripts
    remote = [s for s in scripts if s.startswith(("http:", "https:", "//"))]
    assert not remote, f"pages load scripts from the network: {remote}"
    assert (built_book.html / "_static" / "mathjax" / "tex-chtml.js").is_file()


def test_colab_launch_button_points_at_the_notebook(built_book):
    page = (built_book.html / "chapters" / "01_gpu_anatomy.html").read_text(encoding="utf-8")
    expected = (
        "https://colab.research.google.com/github/gpuperf/gpuperf/blob/main/"
        "chapters/01_gpu_anatomy.ipynb"
    )
    assert expected in page
