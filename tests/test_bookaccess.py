"""gpuperf.bookaccess: the built pages' markup repaired for screen readers (unit level; the
browser test audits every built page with axe-core)."""

from __future__ import annotations

import pytest

from gpuperf.bookaccess import accessible_page

SIDEBAR = (
    '<li class="toctree-l1 current active has-children">'
    '<a class="current reference internal" href="#">4 · Flash&amp;Attention</a>'
    '<details open="open"><summary><span class="toctree-toggle" role="presentation">'
    '<i class="fa-solid fa-chevron-down"></i></span></summary><ul>'
    '<li class="toctree-l2"><a class="reference internal" href="x.html">4.1 · X</a></li></ul>'
    "</details></li>"
    '<li class="toctree-l1"><a class="reference internal" href="y.html">Y</a></li>'
    '<li class="toctree-l1 has-children"><a class="reference internal" href="z.html">Z</a>'
    "<details><summary><span></span></summary></details></li>"
)


def test_every_sidebar_toggle_is_named_after_its_own_chapter():
    page = accessible_page(SIDEBAR)
    assert '<summary aria-label="Sections of 4 · Flash&amp;Attention">' in page
    assert '<summary aria-label="Sections of Z">' in page, "not the link before it (Y)"
    assert "<summary>" not in page


def test_labels_that_hide_the_visible_text_are_dropped():
    toggle = (
        '<details class="admonition hide above-input"><summary aria-label="Toggle hidden content">'
        '<p class="collapsed admonition-title">Show code cell source</p></summary></details>'
    )
    assert "aria-label" not in accessible_page(toggle)
    search = (
        '<button class="btn search-button-field search-button__button pst-js-only" '
        'title="Search" aria-label="Search" data-bs-toggle="tooltip">'
        '<span class="search-button__default-text">Search</span></button>'
    )
    assert accessible_page(search) == search.replace(' aria-label="Search"', "")


def test_the_bibliography_loses_roles_its_markup_does_not_fit():
    refs = (
        '<div role="list" class="citation-list"><div class="citation" id="x" '
        'role="doc-biblioentry"><span class="label"><a href="#y">1</a></span></div></div>'
    )
    page = accessible_page(refs)
    assert 'role="list"' not in page and "doc-biblioentry" not in page
    assert '<div class="citation-list">' in page


def test_repairs_are_idempotent_and_refuse_non_text():
    once = accessible_page(SIDEBAR)
    assert accessible_page(once) == once
    with pytest.raises(TypeError, match="page must be the HTML of a page"):
        accessible_page(b"<html></html>")
