"""A Sphinx extension that repairs what the book's theme and extensions get wrong for readers of
screen readers, as an axe-core audit finds it (``tests/test_browser.py`` runs that audit on every
page at desktop and phone width and fails on any serious or critical violation).

The fixes are made to the built HTML, once the build has finished, because the markup comes from
third-party templates (sphinx-book-theme, myst-nb, sphinxcontrib-bibtex):

* the sidebar's expand buttons (``<summary>`` holding only a chevron icon) get a name: "Sections
  of <chapter>";
* a control whose ``aria-label`` hides its visible text (myst-nb's "Show code cell source"
  toggles are all named "Toggle hidden content"; the search button shows "Search Ctrl+K" but is
  named "Search") loses that label, so its name is what the reader sees (WCAG 2.5.3);
* the bibliography drops the ARIA roles docutils gives it (``role="list"`` around children that
  are not list items, the deprecated ``doc-biblioentry``): the plain markup reads correctly.

Colours with too little contrast are fixed in ``_static/gpuperf.css`` instead.
"""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path
from typing import Any

__all__ = ["accessible_page", "setup"]

# an <a> to a chapter in the sidebar, directly followed by the <details> of its sections
_SIDEBAR_TOGGLE = re.compile(
    r"(<a class=\"[^\"]*reference internal[^\"]*\"[^>]*>(?P<title>(?:(?!</a>).)*)</a>"
    r"\s*<details[^>]*>\s*)<summary>",
    re.S,
)
_TOGGLE_LABEL = re.compile(r"<summary aria-label=\"Toggle hidden content\">")
_SEARCH_LABEL = re.compile(
    r"(<button class=\"btn search-button-field[^>]*?) aria-label=\"Search\""
)
_CITATION_LIST = re.compile(r"<div role=\"list\" class=\"citation-list\">")
_BIBLIOENTRY = re.compile(r" role=\"doc-biblioentry\"")


def _name_sidebar_toggles(page: str) -> str:
    def name(match: re.Match[str]) -> str:
        title = html_lib.unescape(re.sub(r"<[^>]+>", "", match.group("title"))).strip()
        label = html_lib.escape(f"Sections of {title}", quote=True)
        return f'{match.group(1)}<summary aria-label="{label}">'

    return _SIDEBAR_TOGGLE.sub(name, page)


def accessible_page(page: str) -> str:
    """The page's HTML with the fixes of this module's docstring applied (idempotent)."""
    if not isinstance(page, str):
        raise TypeError(f"page must be the HTML of a page (a string), not {type(page).__name__}")
    page = _name_sidebar_toggles(page)
    page = _TOGGLE_LABEL.sub("<summary>", page)
    page = _SEARCH_LABEL.sub(r"\1", page)
    page = _CITATION_LIST.sub('<div class="citation-list">', page)
    return _BIBLIOENTRY.sub("", page)


def _repair_pages(app: Any, exception: BaseException | None) -> None:
    """``build-finished`` handler: rewrite every HTML page of a successful HTML build."""
    if exception is not None or app.builder.format != "html":
        return
    for path in Path(app.outdir).rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        repaired = accessible_page(text)
        if repaired != text:
            path.write_text(repaired, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.connect("build-finished", _repair_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
