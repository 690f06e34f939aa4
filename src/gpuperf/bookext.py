"""A Sphinx extension of the course book: lighter pages, and the downloads the front page offers.

Listed in ``_config.yml`` (``sphinx.config.extensions``), so ``jupyter-book build .`` runs it.
When the HTML build has finished it rewrites every page to load less on a first view (a chapter
page must stay under 600 kB gzipped, ``tests/test_browser.py`` measures it):

* the theme's Font Awesome *script* (1.5 MB; its CSS already draws the icons from web fonts) is
  dropped; MathJax is dropped from pages with no formula of their own, and saved widget state
  (nothing renders it) from every page;
* the frames of every :mod:`gpuperf.scrub` figure move from base64 inside the page to PNG files
  under ``_images/frames/`` that the browser fetches when a control selects them;
* the theme's Font Awesome fonts are cut to the few icons the book shows (275 kB → 5 kB);
* every image loads lazily, when the reader scrolls near it;
* the spec (data grid) of every :mod:`gpuperf.vega` figure moves into a JSON file under
  ``_images/vega/`` that the figure fetches when it nears the screen, and the Vega runtime the
  figures draw with is written once to ``_static/gpuperf-vega.js`` (from the
  ``vl-convert-python`` wheel, at build time: no CDN);

and it writes, under ``_build/html/downloads/``:

* ``gpuperf-notebooks.zip`` — every chapter notebook and every lab's student notebook (with the
  lab's public tests), in the order of the table of contents, with outputs and execution counts
  stripped (what a reader runs, not what the book shows), plus a short README;
* ``gpuperf-book.pdf`` — the whole book as one PDF, printed by headless Chromium from one page
  that strings every built page's article together (the same HTML, CSS, figures and typeset
  formulas as the website). Without Chromium (``GPUPERF_CHROMIUM`` or ``chromium`` on the PATH)
  the PDF is skipped with a message, and ``GPUPERF_BOOK_PDF=0`` skips it on purpose; either way
  no page links a download that was not written (:func:`_unlink_missing_downloads`).

Nothing here is imported by the course package itself; Sphinx, nbformat, fontTools and
vl-convert (``requirements-book.txt``) and, for the PDF, Chromium are needed only while the book
builds.
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Any

#: Where the downloads land, relative to the HTML output directory.
__all__ = [
    "BOOK_PDF",
    "DOWNLOADS",
    "NOTEBOOKS_ZIP",
    "setup",
]

DOWNLOADS = "downloads"
NOTEBOOKS_ZIP = "gpuperf-notebooks.zip"
BOOK_PDF = "gpuperf-book.pdf"
#: Fixed timestamp inside the zip, so the same notebooks make the same bytes.
_ZIP_DATE = (2020, 1, 1, 0, 0, 0)


def _toc_documents(app: Any) -> list[str]:
    """Every document of the book in reading order (root first), without extension."""
    site_map = getattr(app.config, "external_site_map", None)
    if site_map is None:
        return list(app.env.found_docs)
    order: list[str] = []

    def walk(name: str) -> None:
        if name in order:
            return
        order.append(name)
        for subtree in site_map[name].subtrees:
            for item in subtree.items:
                if isinstance(item, str):
                    walk(item)

    walk(site_map.root.docname)
    return order


def _stripped_notebook(path: Path) -> bytes:
    """The notebook without outputs, execution counts or widget state."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    out = io.StringIO()
    nbformat.write(nb, out)
    return out.getvalue().encode("utf-8")


def _write_notebooks_zip(srcdir: Path, documents: list[str], target: Path) -> list[str]:
    """Zip every notebook among ``documents`` (outputs stripped); returns the archive names."""
    names = []
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        readme = (
            "gpuperf course notebooks, outputs stripped.\n\n"
            "Open a chapter in Jupyter or upload it to Google Colab and run it from the top;\n"
            "the first cell installs the gpuperf package inside Colab. Locally:\n"
            "pip install -r requirements.txt (see the repository's README).\n"
        )
        archive.writestr(zipfile.ZipInfo("gpuperf-notebooks/README.txt", _ZIP_DATE), readme)
        for doc in documents:
            path = srcdir / f"{doc}.ipynb"
            if not path.is_file():
                continue
            name = f"gpuperf-notebooks/{doc}.ipynb"
            info = zipfile.ZipInfo(name, _ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, _stripped_notebook(path))
            names.append(name)
            # a lab's public tests sit next to its student notebook (grader.check reads them)
            for test in sorted((path.parent / "tests").glob("*.py")):
                test_name = f"gpuperf-notebooks/{Path(doc).parent.as_posix()}/tests/{test.name}"
                archive.writestr(zipfile.ZipInfo(test_name, _ZIP_DATE), test.read_bytes())
                names.append(test_name)
    return names


_ARTICLE = re.compile(r"<article class=\"bd-article\"[^>]*>(.*?)</article>", re.S)
_URL_ATTR = re.compile(r"\b(src|href)=\"([^\"]+)\"")


def _rebase(html: str, page: str) -> str:
    """Rewrite relative src/href of a page at ``page`` (e.g. chapters/x.html) to the root."""
    base = posixpath.dirname(page)

    def fix(match: re.Match) -> str:
        attr, url = match.groups()
        if url.startswith(("#", "/", "data:", "http:", "https:", "mailto:")):
            return match.group(0)
        return f'{attr}="{posixpath.normpath(posixpath.join(base, url))}"'

    return _URL_ATTR.sub(fix, html)


_VEGA_BLOCK = re.compile(
    r'<div class="gpuperf-vega" id="[^"]+">.*?role="img" aria-label="(?P<alt>[^"]*)".*?'
    r'<p class="gpuperf-vega-note">(?P<note>.*?)</p>\s*'
    r'(?:<p class="gpuperf-vega-caption">(?P<caption>.*?)</p>\s*)?'
    r'<script type="application/json" class="gpuperf-vega-spec"(?: data-src="(?P<src>[^"]+)")?>'
    r"(?P<inline>.*?)</script>\s*<script>.*?</script>\s*</div>",
    re.S,
)


def _online_book_url(repository_url: str) -> str:
    """Where GitHub Pages publishes the book of ``https://github.com/OWNER/REPO``."""
    match = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)/?", repository_url.strip())
    if match is None:
        raise ValueError(f"repository_url={repository_url!r} is not https://github.com/OWNER/REPO")
    owner, repo = match.groups()
    return f"https://{owner.lower()}.github.io/{repo}/"


def _static_vega_figures(html: str, page: str, outdir: Path, online: str | None) -> str:
    """Each :mod:`gpuperf.vega` figure of a page drawn as a static SVG at its default controls
    (vl-convert renders the same Vega spec the browser draws), for the PDF, where no script runs:
    the figure keeps its alt text, note and caption, plus a line pointing at the live page."""
    import base64
    import json

    import vl_convert

    def draw(match: re.Match[str]) -> str:
        if match.group("src"):
            spec_path = outdir / posixpath.normpath(
                posixpath.join(posixpath.dirname(page), match.group("src"))
            )
            spec = json.loads(spec_path.read_text(encoding="utf-8"))
        else:
            spec = json.loads(match.group("inline"))  # "<\\/" is JSON for "</"
        svg = vl_convert.vega_to_svg(spec)
        image = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        caption = re.sub(r"\s*<a [^>]*>Open the live explorer in Colab</a>\.", "",
                         match.group("caption") or "")  # fmt: skip
        where = f"{online}{page}" if online else page
        return (
            f'<figure class="gpuperf-vega-print"><img src="data:image/svg+xml;base64,{image}" '
            f'alt="{match.group("alt")}"><figcaption>{match.group("note")} {caption} '
            f"Shown at its first setting; move its controls on the online page: "
            f'<a href="{where}">{where}</a>.</figcaption></figure>'
        )

    return _VEGA_BLOCK.sub(draw, html)


def _print_page(outdir: Path, documents: list[str], online: str | None = None) -> str:
    """One HTML page with every document's article, in order, for printing; interactive figures
    become static pictures (:func:`_static_vega_figures`), ``online`` being the book's URL."""
    first = (outdir / f"{documents[0]}.html").read_text(encoding="utf-8")
    head = first.split("</head>", 1)[0]
    articles = []
    mathjax = ""
    for doc in documents:
        page = outdir / f"{doc}.html"
        if not page.is_file():
            continue
        text = page.read_text(encoding="utf-8")
        if not mathjax and "tex-chtml.js" in text.split("</head>", 1)[0]:
            # the front page may have no formula (and so no MathJax): borrow a chapter's
            mathjax = _rebase("".join(_MATHJAX_TAGS.findall(text)), f"{doc}.html")
        match = _ARTICLE.search(text)
        if match:
            article = _static_vega_figures(match.group(1), f"{doc}.html", outdir, online)
            articles.append(
                f'<section class="gpuperf-print-page">{_rebase(article, f"{doc}.html")}</section>'
            )
    style = (
        "<style>@page{size:A4;margin:16mm}"
        ".gpuperf-print-page{break-before:page}"
        ".gpuperf-scrubber-controls,.headerlink,.copybtn,.toggle-button{display:none!important}"
        "body{background:#fff}*{-webkit-print-color-adjust:exact;print-color-adjust:exact}"
        "pre,.highlight pre{white-space:pre-wrap!important;overflow-wrap:anywhere}"
        ".cell_output,.output,.highlight,mjx-container{overflow:visible!important}</style>"
    )
    body = "".join(articles).replace('loading="lazy"', 'loading="eager"')
    if "tex-chtml.js" not in head:
        head += mathjax
    return f"{head}{style}</head><body><main>{body}</main></body></html>"


def _chromium_path() -> str | None:
    candidate = os.environ.get("GPUPERF_CHROMIUM")
    if candidate and Path(candidate).is_file():
        return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _write_pdf(
    outdir: Path, documents: list[str], target: Path, chromium: str, online: str | None = None
) -> None:
    """Print the whole book to ``target`` with headless Chromium (offline, file:// URLs)."""
    page = outdir / "_print.html"
    page.write_text(_print_page(outdir, documents, online), encoding="utf-8")
    try:
        with tempfile.TemporaryDirectory(prefix="gpuperf-pdf-") as profile:
            subprocess.run(
                [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={profile}",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--no-pdf-header-footer",
                 "--virtual-time-budget=20000", f"--print-to-pdf={target}", page.as_uri()],
                check=True, capture_output=True, timeout=300,
            )  # fmt: skip
    finally:
        page.unlink(missing_ok=True)


# ------------------------------------------------------------------------------ lighter pages

_FONTAWESOME_JS = re.compile(
    r"\s*<(?:script|link)[^>]*scripts/fontawesome\.js[^>]*>(?:</script>)?"
)
_MATHJAX_TAGS = re.compile(
    r"\s*<script>window\.MathJax = [^<]*</script>|\s*<script[^>]*mathjax/tex-chtml\.js[^>]*>"
    r"</script>"
)
_MATH_MARKERS = ('class="math', "mathjax_process", "\\(", "$$")
_DATA_START = re.compile(r"var data = (?=\{)")
_FRAME_JS = '"data:image/png;base64," + data.frames[key]'
_INLINE_IMG = re.compile(
    r'(<img\b[^>]*?\bsrc=")data:image/(png|svg\+xml);base64,([A-Za-z0-9+/=]+)"'
)
#: Scrubber frames and inline images, one PNG (or SVG) file each, named by content.
FRAMES_DIR = "_images/frames"


def _drop_fontawesome(html: str) -> str:
    """Remove the theme's 1.5 MB Font Awesome script: its CSS already draws the same icons from
    the web fonts, which the browser fetches only for glyphs a page shows."""
    return _FONTAWESOME_JS.sub("", html)


_WIDGET_STATE = re.compile(
    r'\s*<script type="application/vnd\.jupyter\.widget-state\+json">.*?</script>', re.S
)


def _drop_widget_state(html: str) -> str:
    """Remove saved ipywidgets state: nothing in the book renders live widgets (their outputs
    are removed; ``nb_ipywidgets_js`` is empty), so it is dead weight."""
    return _WIDGET_STATE.sub("", html)


def _drop_mathjax_without_math(html: str) -> str:
    """Remove MathJax from a page with no formula of its own (Sphinx adds it to a page whose
    toctree children have maths, e.g. the front page)."""
    body = html.split("<body", 1)[-1]
    if any(marker in body for marker in _MATH_MARKERS):
        return html
    return _MATHJAX_TAGS.sub("", html)


def _externalize_frames(html: str, page: str, outdir: Path) -> str:
    """Move a scrubber's inline base64 frames into PNG files that load when a control selects
    them, and every other inline PNG or SVG ``<img>`` (a figure in an answer) into a file: the
    page keeps a URL per frame, and only the first frame of each scrubber loads at once."""
    import base64
    import hashlib
    import json

    decoder = json.JSONDecoder()
    page_dir = posixpath.dirname(page)
    urls: dict[str, str] = {}

    def url_of(b64: str, extension: str = "png") -> str:
        if b64 not in urls:
            data = base64.b64decode(b64)
            name = f"{FRAMES_DIR}/{hashlib.sha256(data).hexdigest()[:24]}.{extension}"
            target = outdir / name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            urls[b64] = posixpath.relpath(name, page_dir or ".")
        return urls[b64]

    parts, position = [], 0
    # only the scrubber script this rewrite knows; another script's data stays as it is
    matches = _DATA_START.finditer(html) if _FRAME_JS in html else ()
    for match in matches:
        try:
            data, end = decoder.raw_decode(html, match.end())
        except ValueError:
            continue
        frames = data.get("frames") if isinstance(data, dict) else None
        if not isinstance(frames, dict) or not all(isinstance(v, str) for v in frames.values()):
            continue
        data["frames"] = {key: url_of(value) for key, value in frames.items()}
        parts += [html[position : match.end()], json.dumps(data)]
        position = end
    if urls:
        html = "".join([*parts, html[position:]]).replace(_FRAME_JS, "data.frames[key]")

    # every other inline image (a scrubber's first frame, a figure in an output) becomes a file
    def to_file(m: re.Match[str]) -> str:
        return f'{m.group(1)}{url_of(m.group(3), "png" if m.group(2) == "png" else "svg")}"'

    return _INLINE_IMG.sub(to_file, html)


_VEGA_SPEC = re.compile(
    r'(<script type="application/json" class="gpuperf-vega-spec")>(.*?)</script>', re.S
)
#: Specs of :mod:`gpuperf.vega` figures, one JSON file each, named by content.
VEGA_DIR = "_images/vega"


def _externalize_vega_specs(html: str, page: str, outdir: Path) -> str:
    """Move each :mod:`gpuperf.vega` figure's spec (its data grid: tens to hundreds of kB) out of
    the page into a JSON file, which the figure fetches when it nears the screen."""
    import hashlib

    page_dir = posixpath.dirname(page)

    def move(match: re.Match[str]) -> str:
        text = match.group(2)
        if not text.strip():
            return match.group(0)
        data = text.encode("utf-8")
        name = f"{VEGA_DIR}/{hashlib.sha256(data).hexdigest()[:24]}.json"
        target = outdir / name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return f'{match.group(1)} data-src="{posixpath.relpath(name, page_dir or ".")}"></script>'

    return _VEGA_SPEC.sub(move, html)


def _write_vega_bundle(outdir: Path) -> bool:
    """Write the Vega runtime into ``_static/`` when a page has a :mod:`gpuperf.vega` figure."""
    if not any(
        "gpuperf-vega-spec" in path.read_text(encoding="utf-8", errors="ignore")
        for path in outdir.rglob("*.html")
        if path.parts[len(outdir.parts)] not in {"_static", "_sources", "_images"}
    ):
        return False
    from .vega import write_bundle

    write_bundle(outdir / "_static")
    return True


_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_CONTENT = re.compile(r'content:\s*"\\([0-9a-fA-F]{4,5})"')
_FA_ONLY = re.compile(r"^\s*(\.fa-[a-z0-9-]+::?before\s*,?\s*)+$")
_FONT_FACE = re.compile(r"@font-face\{([^}]*)\}")
#: The theme's icon variables (``--pst-icon-bell:"\\f0f3"`` or the glyph itself): admonition
#: titles draw them through ``content:var(...)``, which :data:`_CONTENT` cannot see.
_ICON_VARIABLE = re.compile(r'--pst-icon-[a-z0-9-]+:\s*"(\\[0-9a-fA-F]{4,5}|[\ue000-\uf8ff])"')
#: Where the theme keeps Font Awesome (pydata-sphinx-theme 0.16).
ICON_CSS = "_static/styles/pydata-sphinx-theme.css"
#: The subset icon fonts, and the stylesheet (linked after the theme's) that points the theme's
#: font faces at them.
ICON_FONTS_DIR = "_static/fonts"
ICONS_CSS = "_static/gpuperf-icons.css"


def _used_icon_codepoints(outdir: Path) -> set[int]:
    """Code points of the Font Awesome icons the book can show: the ``fa-*`` classes named in
    its pages and scripts, and the glyphs the stylesheets draw themselves (directly, or through
    the theme's ``--pst-icon-*`` variables, as an admonition's title does)."""
    names_to_code: dict[str, int] = {}
    drawn: set[int] = set()
    for css in (outdir / "_static").rglob("*.css"):
        for selectors, body in _CSS_RULE.findall(css.read_text(encoding="utf-8", errors="ignore")):
            for glyph in _ICON_VARIABLE.findall(body):
                drawn.add(int(glyph[1:], 16) if glyph.startswith("\\") else ord(glyph))
            codes = [int(c, 16) for c in _CONTENT.findall(body)]
            if not codes:
                continue
            if _FA_ONLY.match(selectors):
                for name in re.findall(r"\.fa-([a-z0-9-]+)", selectors):
                    names_to_code[name] = codes[0]
            else:
                drawn.update(codes)
    used: set[str] = set()
    for path in [*outdir.rglob("*.html"), *(outdir / "_static").rglob("*.js")]:
        if path.name.startswith("fontawesome"):
            continue
        used.update(re.findall(r"\bfa-([a-z0-9-]+)", path.read_text(errors="ignore")))
    return drawn | {names_to_code[name] for name in used if name in names_to_code}


def _subset_icon_fonts(outdir: Path) -> int:
    """Cut the theme's Font Awesome fonts (275 kB of woff2 on a first view) down to the glyphs
    the book uses, and make the book's stylesheet load those instead; returns the fonts made."""
    css_path = outdir / ICON_CSS
    if not css_path.is_file():
        return 0
    from fontTools import subset

    codepoints = _used_icon_codepoints(outdir)
    faces = []
    for face in _FONT_FACE.findall(css_path.read_text(encoding="utf-8")):
        ttf = re.search(r"url\(([^)]+\.ttf)\)", face)
        if not ttf or "fontawesome" not in ttf.group(1):
            continue
        source = (css_path.parent / ttf.group(1)).resolve()
        if not source.is_file():
            continue
        options = subset.Options()
        options.flavor = "woff"  # zlib: needs no brotli; a few kB either way
        options.layout_features = ["*"]
        font = subset.load_font(str(source), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codepoints)
        subsetter.subset(font)
        target = outdir / ICON_FONTS_DIR / f"{source.stem}.subset.woff"
        target.parent.mkdir(parents=True, exist_ok=True)
        subset.save_font(font, str(target), options)
        descriptors = ";".join(
            part for part in face.split(";") if not part.strip().startswith("src:")
        )
        relative = posixpath.relpath(
            f"{ICON_FONTS_DIR}/{target.name}", posixpath.dirname(ICONS_CSS)
        )
        faces.append(f'@font-face{{{descriptors};src:url({relative}) format("woff")}}')
    if faces:
        # the last @font-face with the same descriptors wins: the subsets replace the originals
        (outdir / ICONS_CSS).write_text(
            "/* Font Awesome, only the glyphs this book uses (written by gpuperf.bookext) */\n"
            + "\n".join(faces)
            + "\n",
            encoding="utf-8",
        )
    return len(faces)


def _link_icons_css(html: str, page: str) -> str:
    """Link the subset icon fonts' stylesheet last in the head (once)."""
    if "gpuperf-icons.css" in html or "</head>" not in html:
        return html
    href = posixpath.relpath(ICONS_CSS, posixpath.dirname(page) or ".")
    link = f'<link rel="stylesheet" type="text/css" href="{href}" />\n'
    return html.replace("</head>", link + "</head>", 1)


_IMG_TAG = re.compile(r"<img\b(?![^>]*\bloading=)")


def _lazy_images(html: str) -> str:
    """Let the browser fetch a figure when the reader scrolls near it (``loading="lazy"``);
    those in the first screen still load at once."""
    return _IMG_TAG.sub('<img loading="lazy" decoding="async"', html)


def _pages(outdir: Path) -> list[Path]:
    """The built pages (not the theme's templates, sources, images or downloads)."""
    return [
        path
        for path in sorted(outdir.rglob("*.html"))
        if path.parts[len(outdir.parts)] not in {"_static", "_sources", "_images", DOWNLOADS}
    ]


def _lighten_pages(outdir: Path) -> dict[str, int]:
    """Apply the rewrites above to every built page (idempotent: an incremental build leaves
    pages it did not rewrite as they were); returns page → bytes saved."""
    icons = (outdir / ICONS_CSS).is_file()
    saved = {}
    for path in _pages(outdir):
        page = path.relative_to(outdir).as_posix()
        html = path.read_text(encoding="utf-8")
        light = _drop_widget_state(_drop_mathjax_without_math(_drop_fontawesome(html)))
        light = _externalize_frames(light, page, outdir)
        light = _externalize_vega_specs(light, page, outdir)
        light = _lazy_images(light)
        if icons:
            light = _link_icons_css(light, page)
        if light != html:
            path.write_text(light, encoding="utf-8")
            saved[page] = len(html) - len(light)
    return saved


# A list item that links a download: `<li>…href="…downloads/NAME"…</li>`, not crossing items.
_DOWNLOAD_ITEM = re.compile(
    r"<li>(?:(?!</?li>).)*?\bhref=\"([^\"]*\b" + DOWNLOADS + r"/[^\"]+)\"(?:(?!</?li>).)*</li>",
    re.S,
)
# The same item once hidden because its file was not built (restored when it is).
_HIDDEN_ITEM = re.compile(r"<!-- gpuperf: not built: (<li>.*?</li>) -->", re.S)


def _unlink_missing_downloads(html: str, page: str, outdir: Path) -> str:
    """Hide every list item that links a file under ``downloads/`` this build did not write
    (the PDF without Chromium), inside an HTML comment, so a page never links a missing file;
    an item hidden by an earlier build comes back once its file exists (incremental builds)."""
    base = posixpath.dirname(page)

    def built(url: str) -> bool:
        return (outdir / posixpath.normpath(posixpath.join(base, url))).is_file()

    def restore(match: re.Match[str]) -> str:
        item = match.group(1)
        link = _DOWNLOAD_ITEM.fullmatch(item)
        return item if link and built(link.group(1)) else match.group(0)

    def hide(match: re.Match[str]) -> str:
        item = match.group(0)
        if built(match.group(1)):
            return item
        return "" if "--" in item else f"<!-- gpuperf: not built: {item} -->"  # no "--" inside

    html = _HIDDEN_ITEM.sub(restore, html)
    parts = _HIDDEN_ITEM.split(html)  # hide only what is not hidden already
    for i in range(0, len(parts), 2):
        parts[i] = _DOWNLOAD_ITEM.sub(hide, parts[i])
    for i in range(1, len(parts), 2):
        parts[i] = f"<!-- gpuperf: not built: {parts[i]} -->"
    return "".join(parts)


def _print_pdf(outdir: Path, documents: list[str], log: Any, online: str | None = None) -> None:
    """Print the PDF where Chromium exists; otherwise remove any PDF an earlier build left.
    ``online`` is the published book's URL, which each interactive figure points at."""
    pdf = outdir / DOWNLOADS / BOOK_PDF
    chromium = _chromium_path()
    if os.environ.get("GPUPERF_BOOK_PDF", "1") == "0":
        reason = "skipped (GPUPERF_BOOK_PDF=0)"
    elif chromium is None:
        reason = "skipped: no Chromium (apt-get install chromium, or set GPUPERF_CHROMIUM)"
    else:
        try:
            _write_pdf(outdir, documents, pdf, chromium, online)
            log.info(f"gpuperf: the book as one PDF → {DOWNLOADS}/{BOOK_PDF}")
            return
        except (subprocess.SubprocessError, OSError) as error:
            reason = f"not written: {error}"
    pdf.unlink(missing_ok=True)  # a stale PDF would not match the pages
    log.info(f"gpuperf: PDF {reason}; the front page does not link it")


def _build_downloads(app: Any, exception: BaseException | None) -> None:
    """``build-finished`` handler: the zip of notebooks and, where Chromium exists, the PDF."""
    from sphinx.util import logging

    if exception is not None or app.builder.format != "html":
        return
    log = logging.getLogger(__name__)
    outdir = Path(app.outdir)
    if _write_vega_bundle(outdir):
        log.info("gpuperf: Vega runtime for the interactive figures → _static/")
    log.info(f"gpuperf: {_subset_icon_fonts(outdir)} icon fonts cut to the glyphs in use")
    saved = _lighten_pages(outdir)
    log.info(f"gpuperf: {len(saved)} pages lightened by {sum(saved.values()) / 1e6:.1f} MB")
    documents = _toc_documents(app)
    target = outdir / DOWNLOADS
    names = _write_notebooks_zip(Path(app.srcdir), documents, target / NOTEBOOKS_ZIP)
    count = sum(name.endswith(".ipynb") for name in names)
    log.info(f"gpuperf: {count} notebooks (outputs stripped) → {DOWNLOADS}/{NOTEBOOKS_ZIP}")
    repository = (app.config.html_theme_options or {}).get("repository_url", "")
    _print_pdf(outdir, documents, log, _online_book_url(repository) if repository else None)
    for path in _pages(outdir):
        html = path.read_text(encoding="utf-8")
        linked = _unlink_missing_downloads(html, path.relative_to(outdir).as_posix(), outdir)
        if linked != html:
            path.write_text(linked, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.connect("build-finished", _build_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
