"""Numbers in prose come from cells: a typed copy of a computed number fails here.

A chapter's Markdown may quote a number that a code cell prints, but only through myst-nb's glue
(``{glue:text}`name``` with ``gpuperf.notebook.glue``), so that when a calculator or a table
changes, the prose changes with it. This test finds every number typed in a Markdown cell that
also appears in a code cell's output of the same notebook — a number the notebook computes —
and fails on it. Inputs are not flagged — they are the question, not the answer: numbers the
notebook's code types itself (``N = 4097``), powers of two, years, counts ≤ 100, and section
numbers ("section 3.6").
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

#: A number with a thousands separator, a decimal point, or at least three digits.
NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+\.\d+|\d{3,})(?![\w])")
#: Markdown that is not prose: code, maths, link targets, roles (citations, glue, refs), HTML tags.
NOT_PROSE = [
    re.compile(r"```.*?```", re.S),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"\$[^$\n]*\$"),
    re.compile(r"\]\([^)]*\)"),
    re.compile(r"\{[a-z:]+\}`[^`]*`"),
    re.compile(r"<[^>]+>"),
    re.compile(r"\[[^\]]*\]"),  # link text: "[3.6 Tiling]"
    re.compile(r"(?im)^#+ .*$"),  # headings: "# 3.6 · Tiling"
    re.compile(
        r"(?i)(?:sections?|chapters?|§)\s*\d+(?:\.\d+)*(?:\s*(?:,|and|or|–)\s*\d+(?:\.\d+)*)*"
    ),
]


def prose(markdown: str) -> str:
    for pattern in NOT_PROSE:
        markdown = pattern.sub(" ", markdown)
    return markdown


def _plain(number: str) -> str:
    return number.replace(",", "")


def is_an_input(number: str) -> bool:
    """Numbers a reader chooses rather than computes: powers of two, years, small counts."""
    value = float(_plain(number))
    if value.is_integer():
        n = int(value)
        return n <= 100 or (n & (n - 1) == 0) or 1900 <= n <= 2100
    return False


#: The data grid of a gpuperf.vega figure (every combination of its controls, not a result the
#: prose could quote): its spec inside the HTML, and the same spec as a Vega-Lite output.
VEGA_SPEC = re.compile(
    r'<script type="application/json" class="gpuperf-vega-spec">.*?</script>', re.S
)


def computed_numbers(nb) -> set[str]:
    found: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                text = output.text
            else:
                data = output.get("data", {})
                text = "\n".join(
                    str(v)
                    for k, v in data.items()
                    if not k.startswith(("image/", "application/vnd.vegalite"))
                )
            found |= {_plain(n) for n in NUMBER.findall(VEGA_SPEC.sub(" ", text))}
    return found


def typed_in_code(nb) -> set[str]:
    """Numbers written in code cells: inputs the notebook chose, not results it computed."""
    source = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    return {_plain(n) for n in NUMBER.findall(source)} | {
        n.replace("_", "") for n in re.findall(r"\b\d{1,3}(?:_\d{3})+\b", source)
    }


def typed_copies(nb) -> list[str]:
    computed = computed_numbers(nb) - typed_in_code(nb)
    hits = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for number in NUMBER.findall(prose(cell.source)):
            if _plain(number) in computed and not is_an_input(number):
                hits.append(f"cell {index}: {number}")
    return hits


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.name for p in CHAPTERS])
def test_prose_quotes_computed_numbers_only_through_glue(path):
    hits = typed_copies(nbformat.read(path, as_version=4))
    assert not hits, (
        f"{path.name}: these numbers are typed in prose but computed by a cell; glue them "
        "(gpuperf.notebook.glue + {glue:text}`name`):\n" + "\n".join(hits)
    )


def test_the_detector_finds_a_typed_copy_and_ignores_glue_and_inputs():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "print(ridge)",
            outputs=[nbformat.v4.new_output("stream", name="stdout", text="ridge 295.2\n")],
        ),
        nbformat.v4.new_markdown_cell("The ridge is 295.2 FLOP/byte for N = 4096."),
        nbformat.v4.new_markdown_cell("The ridge is {glue:text}`ridge` for N = 4096."),
    ]
    assert typed_copies(nb) == ["cell 1: 295.2"]
