"""The book's own Sphinx extension (gpuperf.bookext), on small synthetic pages: no book build.

The full effect — page weights, the downloads, the PDF — is checked on the real build by
test_book.py and test_browser.py.
"""

from __future__ import annotations

import base64
import json
import re
import zipfile

import nbformat
import pytest

from gpuperf import bookext

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake frame").decode()
PNG2 = base64.b64encode(b"\x89PNG\r\n\x1a\n other frame").decode()


def scrubber_page() -> str:
    data = json.dumps({"frames": {"0": PNG, "1": PNG2}, "notes": {"0": "a", "1": "b"}})
    return (
        '<html><head><script src="../_static/scripts/fontawesome.js?digest=1"></script>'
        '<script defer="defer" src="../_static/mathjax/tex-chtml.js"></script></head><body>'
        f'<img class="gpuperf-scrubber-frame" alt="x" src="data:image/png;base64,{PNG}">'
        f"<script>(function () {{ var data = {data};\n"
        '  image.src = "data:image/png;base64," + data.frames[key]; })();</script>'
        "</body></html>"
    )


def test_frames_become_files_loaded_on_demand(tmp_path):
    html = bookext._externalize_frames(scrubber_page(), "chapters/x.html", tmp_path)
    assert "base64," not in html.split("<script>")[1]  # no frame left inline in the data
    assert "image.src = data.frames[key]" in html
    files = sorted((tmp_path / "_images" / "frames").iterdir())
    assert len(files) == 2  # the first frame, shown twice before, is stored once
    assert {f.read_bytes() for f in files} == {base64.b64decode(PNG), base64.b64decode(PNG2)}
    url = f"../_images/frames/{files[0].name}"
    assert url in html or f"../_images/frames/{files[1].name}" in html
    assert 'src="data:' not in html
    # idempotent: a second pass (an incremental build) changes nothing
    assert bookext._externalize_frames(html, "chapters/x.html", tmp_path) == html


def test_an_inline_svg_figure_becomes_an_svg_file(tmp_path):
    """A figure drawn into an answer's HTML as an SVG data URI (legible on a phone) leaves the
    page like a PNG one, as an .svg file the browser fetches when the reader opens it."""
    svg = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg"><text>x</text></svg>')
    page = f'<details><img alt="a" src="data:image/svg+xml;base64,{svg.decode()}"></details>'
    html = bookext._externalize_frames(page, "chapters/x.html", tmp_path)
    (stored,) = (tmp_path / "_images" / "frames").iterdir()
    assert stored.suffix == ".svg" and stored.read_bytes() == base64.b64decode(svg)
    assert f'src="../_images/frames/{stored.name}"' in html and "data:" not in html


def test_unknown_scripts_are_left_alone(tmp_path):
    page = '<script>var data = {"frames": {"0": "abc"}}; show(data.frames[k]);</script>'
    assert bookext._externalize_frames(page, "x.html", tmp_path) == page


def test_icon_script_and_needless_mathjax_are_dropped():
    page = scrubber_page()
    light = bookext._drop_mathjax_without_math(bookext._drop_fontawesome(page))
    assert "fontawesome.js" not in light and "tex-chtml.js" not in light
    with_math = page.replace("<body>", '<body><span class="math notranslate">\\(x\\)</span>')
    assert "tex-chtml.js" in bookext._drop_mathjax_without_math(with_math)


def test_images_load_lazily_once():
    html = '<img src="a.png"><img loading="eager" src="b.png">'
    lazy = bookext._lazy_images(html)
    assert (
        lazy
        == '<img loading="lazy" decoding="async" src="a.png"><img loading="eager" src="b.png">'
    )
    assert bookext._lazy_images(lazy) == lazy


def test_notebooks_zip_strips_outputs_and_adds_lab_tests(tmp_path):
    src = tmp_path / "src"
    (src / "labs" / "lab1" / "student" / "tests").mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(1)")
    cell.outputs = [nbformat.v4.new_output("stream", text="1\n")]
    cell.execution_count = 3
    nb.cells = [cell]
    nbformat.write(nb, src / "labs" / "lab1" / "student" / "lab1.ipynb")
    (src / "labs" / "lab1" / "student" / "tests" / "q1.py").write_text("OK = 1\n")
    target = tmp_path / "out" / "nb.zip"
    names = bookext._write_notebooks_zip(src, ["intro", "labs/lab1/student/lab1"], target)
    assert names == [
        "gpuperf-notebooks/labs/lab1/student/lab1.ipynb",
        "gpuperf-notebooks/labs/lab1/student/tests/q1.py",
    ]
    with zipfile.ZipFile(target) as archive:
        stripped = nbformat.reads(archive.read(names[0]).decode(), as_version=4)
        assert stripped.cells[0].outputs == [] and stripped.cells[0].execution_count is None
        assert archive.read(names[1]) == b"OK = 1\n"
    first = target.read_bytes()
    bookext._write_notebooks_zip(src, ["intro", "labs/lab1/student/lab1"], target)
    assert target.read_bytes() == first  # same notebooks, same bytes


def test_print_page_rebases_links_and_strings_articles(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "intro.html").write_text(
        '<html><head><link href="_static/a.css"></head><body><article class="bd-article">'
        "<h1>Intro</h1></article></body></html>"
    )
    (tmp_path / "chapters" / "c.html").write_text(
        '<html><head></head><body><article class="bd-article" role="main">'
        '<img loading="lazy" src="../_images/f.png"><a href="#s">s</a></article></body></html>'
    )
    page = bookext._print_page(tmp_path, ["intro", "chapters/c"])
    assert page.index("<h1>Intro</h1>") < page.index('src="_images/f.png"')
    assert 'href="#s"' in page and 'loading="eager"' in page and "_static/a.css" in page


def _links(html: str) -> list[str]:
    """The href of every link outside HTML comments."""
    return re.findall(r'href="([^"]+)"', re.sub(r"<!--.*?-->", "", html, flags=re.S))


def test_a_download_that_was_not_built_is_not_linked(tmp_path):
    """No Chromium, no PDF: the front page hides the PDF's list item (in a comment, so that an
    incremental build that prints the PDF later shows it again) and keeps the zip's."""
    page = (
        '<ul><li><p><a href="downloads/nb.zip" download>All notebooks</a> (zip)</p></li>\n'
        '<li><p><a href="downloads/book.pdf">The book as a PDF</a>, printed\n'
        "when the book is built.</p></li>\n</ul>"
    )
    (tmp_path / "downloads").mkdir()
    (tmp_path / "downloads" / "nb.zip").write_bytes(b"PK")
    hidden = bookext._unlink_missing_downloads(page, "intro.html", tmp_path)
    assert _links(hidden) == ["downloads/nb.zip"]
    assert bookext._unlink_missing_downloads(hidden, "intro.html", tmp_path) == hidden
    (tmp_path / "downloads" / "book.pdf").write_bytes(b"%PDF")
    assert bookext._unlink_missing_downloads(hidden, "intro.html", tmp_path) == page
    # a page in a folder resolves the link from its own place
    nested = page.replace('href="downloads/', 'href="../downloads/')
    assert bookext._unlink_missing_downloads(nested, "chapters/x.html", tmp_path) == nested


def _vega_page(tmp_path, externalize: bool) -> str:
    """A built page holding one gpuperf.vega figure (its spec inline, or moved to a file)."""
    pytest.importorskip("vl_convert")
    from test_vega import toy

    html = toy(colab="https://colab.research.google.com/github/o/r/blob/main/c.ipynb").to_html()
    if externalize:
        html = bookext._externalize_vega_specs(html, "chapters/c.html", tmp_path)
    return f'<article class="bd-article"><p>before</p>{html}<p>after</p></article>'


def test_the_pdf_shows_each_interactive_figure_as_a_picture(tmp_path):
    for externalize in (False, True):
        article = _vega_page(tmp_path, externalize)
        page = bookext._static_vega_figures(
            article, "chapters/c.html", tmp_path, "https://o.github.io/r/"
        )
        assert "<script" not in page and "gpuperf-vega-controls" not in page
        assert page.startswith('<article class="bd-article"><p>before</p><figure')
        assert page.endswith("</figure><p>after</p></article>")
        image = page.split('src="data:image/svg+xml;base64,')[1].split('"')[0]
        assert base64.b64decode(image).startswith(b"<svg")
        assert 'alt="a test figure"' in page and "a=1 b=x" in page  # alt and first note
        assert '<a href="https://o.github.io/r/chapters/c.html">' in page
        assert "Open the live explorer in Colab" not in page


def test_the_online_book_lives_on_github_pages():
    assert bookext._online_book_url("https://github.com/GpuPerf/gpuperf") == (
        "https://gpuperf.github.io/gpuperf/"
    )
    with pytest.raises(ValueError, match=r"is not https://github\.com/OWNER/REPO"):
        bookext._online_book_url("https://gitlab.com/a/b")


def test_icon_subset_keeps_the_glyphs_the_themes_icon_variables_draw(tmp_path):
    """An admonition's title draws its icon through ``content:var(--pst-icon-…)``: a subset
    without that glyph made the browser fetch the whole 156 kB Font Awesome font for 3.5."""
    css = tmp_path / "_static" / "styles" / "theme.css"
    css.parent.mkdir(parents=True)
    css.write_text(
        ':root{--pst-icon-bell:"\uf0f3";--pst-icon-info-circle:"\\f05a"}'
        ".admonition>.admonition-title:after{content:var(--pst-icon-admonition-default)}"
        '.fa-bell::before{content:"\\f0f3"}',
        encoding="utf-8",
    )
    assert {0xF0F3, 0xF05A} <= bookext._used_icon_codepoints(tmp_path)
