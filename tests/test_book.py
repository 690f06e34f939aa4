"""The book builds with Sphinx warnings as errors, and the output has every toc page.

``jupyter-book build . -W -n --keep-going`` runs once per session (``built_book`` in
conftest.py). Notebooks are not executed at build time (``execute_notebooks: "off"``): the book
shows the committed outputs, which nbval checks against a fresh run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpuperf.notebook import toc_files as toc_files_of

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.book, pytest.mark.slow]


def toc_files() -> list[str]:
    """Every document in _toc.yml (root first), without extension."""
    return toc_files_of(ROOT / "_toc.yml")


def test_book_builds_without_warnings(built_book):
    tail = built_book.output[-4000:]
    assert built_book.returncode == 0, f"jupyter-book build failed:\n{tail}"
    warnings = [line for line in built_book.output.splitlines() if "WARNING" in line]
    assert not warnings, "the build printed warnings:\n" + "\n".join(warnings)


#: What the book build must not need (requirements-book.txt installs none of it).
NOT_FOR_THE_BUILD = ("torch", "triton", "otter", "pytest", "selenium", "matplotlib")


def test_the_book_builds_from_requirements_book_alone(built_book):
    """``pip install -r requirements-book.txt && jupyter-book build .`` is enough: ``.ci/run``
    builds this session's book in a venv made from that file alone (``GPUPERF_BOOK_VENV``), and
    that venv holds none of the test stack. Locally, without it, this is skipped."""
    if built_book.python == sys.executable:
        reason = (
            "the book was built in the test environment, not from requirements-book.txt alone "
            "(set GPUPERF_BOOK_VENV to a venv of it, as .ci/run does)"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (required when CI=true)", pytrace=False)
        pytest.skip(reason)
    probe = subprocess.run(
        [built_book.python, "-c", "import importlib.util as u, sys; "
         "print(*[m for m in sys.argv[1:] if u.find_spec(m)])", *NOT_FOR_THE_BUILD],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == [], f"the book's environment has {probe.stdout.strip()}"
    assert built_book.returncode == 0, built_book.output[-4000:]


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


# ------------------------------------------------------------------ front page, downloads, weight


def test_front_page_links_every_chapter_and_the_downloads(built_book):
    page = (built_book.html / "intro.html").read_text(encoding="utf-8")
    for doc in toc_files()[1:]:
        if doc.startswith("chapters/") or doc == "labs/index":
            assert f'href="{doc}.html' in page, f"the front page does not link {doc}"
    assert 'href="downloads/gpuperf-notebooks.zip"' in page
    # the PDF is linked exactly when the build printed it (it needs Chromium)
    pdf_built = (built_book.html / "downloads" / "gpuperf-book.pdf").is_file()
    assert ('href="downloads/gpuperf-book.pdf"' in _uncommented(page)) == pdf_built
    # a figure (an image with its caption; not a numbered figure, which would renumber the book)
    assert re.search(r'<img[^>]*roofline\.svg[^>]*alt="FP16 tensor-core rooflines', page) or (
        re.search(r'<img[^>]*alt="FP16 tensor-core rooflines[^>]*roofline\.svg', page)
    )


def _uncommented(html: str) -> str:
    return re.sub(r"<!--.*?-->", "", html, flags=re.S)


def test_no_page_links_a_file_that_was_not_built(built_book):
    """Every relative link of every page (outside HTML comments) names a file of the build."""
    missing = set()
    for path in built_book.html.rglob("*.html"):
        if path.relative_to(built_book.html).parts[0] in {"_static", "_sources"}:
            continue  # the theme's template fragments, not pages
        for url in re.findall(r'\bhref="([^"#?]+)', _uncommented(path.read_text("utf-8"))):
            if re.match(r"^[a-z][a-z0-9+.-]*:|^//", url):
                continue  # http:, mailto:, javascript: …
            if not (path.parent / url).resolve().exists():
                missing.add(f"{path.relative_to(built_book.html)} → {url}")
    assert not missing, sorted(missing)


def test_notebooks_download_has_every_notebook_without_outputs(built_book):
    import zipfile

    import nbformat

    path = built_book.html / "downloads" / "gpuperf-notebooks.zip"
    assert path.is_file(), "the build wrote no downloads/gpuperf-notebooks.zip"
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        expected = {
            f"gpuperf-notebooks/{doc}.ipynb"
            for doc in toc_files()
            if (ROOT / f"{doc}.ipynb").is_file()
        }
        assert expected and expected <= names, sorted(expected - names)
        assert "gpuperf-notebooks/labs/lab1_rooflines/student/tests/q1.py" in names
        for name in sorted(expected):
            nb = nbformat.reads(archive.read(name).decode("utf-8"), as_version=4)
            code = [c for c in nb.cells if c.cell_type == "code"]
            assert code, name
            assert all(c.outputs == [] and c.execution_count is None for c in code), name


def test_book_pdf_is_printed_when_chromium_is_there(built_book, chrome_paths):
    pdf = built_book.html / "downloads" / "gpuperf-book.pdf"
    assert pdf.is_file(), "Chromium is installed but the build printed no PDF"
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and len(data) > 200_000
    assert data.count(b"/Type /Page") > 50 or data.count(b"/Type/Page") > 50


def test_pages_carry_no_icon_script_and_no_inline_frames(built_book):
    heavy = []
    for path in built_book.html.rglob("*.html"):
        if path.relative_to(built_book.html).parts[0] == "_static":
            continue  # the theme's template fragments, not pages
        text = path.read_text(encoding="utf-8", errors="replace")
        if "scripts/fontawesome.js" in text or re.search(r"<img[^>]*src=\"data:", text):
            heavy.append(path.relative_to(built_book.html).as_posix())
    assert not heavy, f"pages that still embed the icon script or base64 images: {heavy}"
    intro = (built_book.html / "intro.html").read_text(encoding="utf-8")
    assert "tex-chtml.js" not in intro, "MathJax on the front page, which has no formula"
    assert (built_book.html / "_static" / "gpuperf-icons.css").is_file()


def test_the_pdf_draws_every_interactive_figure(built_book):
    """The page Chromium prints holds each gpuperf.vega figure as a static SVG (no script runs
    in a PDF), as many as the book has, each pointing at its live page."""
    from gpuperf import bookext

    html = built_book.html
    documents = [
        p.relative_to(html).with_suffix("").as_posix() for p in sorted(html.rglob("*.html"))
    ]
    figures = sum(
        (html / f"{doc}.html").read_text(encoding="utf-8").count('class="gpuperf-vega"')
        for doc in documents
    )
    assert figures >= 16
    page = bookext._print_page(html, documents, "https://o.github.io/r/")
    assert page.count('<figure class="gpuperf-vega-print">') == figures
    assert "gpuperf-vega-spec" not in page and page.count("Shown at its first setting") == figures
