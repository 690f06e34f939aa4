"""Static checks of every chapter and lab notebook, plus the notebook helpers.

nbval (configured in the root conftest.py) re-runs each notebook and compares outputs; these
tests check what nbval cannot:

* the first code cell is exactly the canonical Colab setup cell (``gpuperf.notebook``), with the
  repository URL from ``_config.yml``; the second imports from gpuperf;
* every other non-empty code cell has stored outputs (an unexecuted notebook passes nbval
  trivially), none is an error, none leaks a path, a memory address or a stderr stream;
* every figure has a caption and alt text; chapters are in the toc; cited keys exist.

A cell that legitimately prints nothing (e.g. a function definition) can opt out of the output
rule with the cell tag ``no-output``.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml

from gpuperf import notebook as nbhelpers

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ("student", "autograder", "dist", ".ipynb_checkpoints")


def course_notebooks() -> list[Path]:
    found = []
    for folder in ("chapters", "labs"):
        for path in sorted((ROOT / folder).rglob("*.ipynb")):
            if not any(part in GENERATED for part in path.relative_to(ROOT).parts):
                found.append(path)
    return found


NOTEBOOKS = course_notebooks()
IDS = [str(p.relative_to(ROOT)) for p in NOTEBOOKS]
REPOSITORY_URL = nbhelpers.repository_url_from_config(ROOT / "_config.yml")
LEAKS = re.compile(
    r"(/home/|/root/|/tmp/|/Users/|[A-Z]:\\\\|site-packages|\bat 0x[0-9a-fA-F]{4,}"
    r"|Wall time|CPU times)"
)


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def output_text(output) -> str:
    if output.output_type == "stream":
        return output.text
    data = output.get("data", {})
    return "\n".join(str(v) for k, v in data.items() if not k.startswith("image/"))


def test_there_are_five_chapters():
    """Five chapters in the toc, in order; a chapter may add section notebooks."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    first_files = [
        chapter["file"]
        for part in toc["parts"]
        for chapter in part["chapters"]
        if chapter["file"].startswith("chapters/")
    ]
    assert first_files == [
        "chapters/01_gpu_anatomy",
        "chapters/02_roofline",
        "chapters/03_making_it_fast",
        "chapters/04_flashattention",
        "chapters/05_memory_hierarchy",
    ]
    for number, first in enumerate(first_files, start=1):
        sections = [p for p in NOTEBOOKS if p.parent.name == "chapters"]
        assert any(p.name.startswith(f"0{number}_") for p in sections), first


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_setup_cell_is_canonical_and_second_cell_imports_gpuperf(path):
    cells = code_cells(nbformat.read(path, as_version=4))
    assert len(cells) >= 2, "a notebook needs the setup cell and an import cell"
    triton = nbhelpers.needs_triton(cell.source for cell in cells[1:])
    assert cells[0].source == nbhelpers.colab_setup_source(REPOSITORY_URL, triton=triton), (
        "the first code cell must be exactly gpuperf.notebook.colab_setup_source("
        f"repository.url, triton={triton})"
    )
    student = path.parent / "student" / path.name
    if student.exists():  # otter assign copies it; an unregenerated student notebook would lag
        assert code_cells(nbformat.read(student, as_version=4))[0].source == cells[0].source
    assert re.search(r"^\s*(from gpuperf(\.\w+)* import|import gpuperf)", cells[1].source, re.M), (
        "the second code cell must import from gpuperf"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_cells_are_executed_cleanly(path):
    cells = code_cells(nbformat.read(path, as_version=4))
    for index, cell in enumerate(cells[1:], start=2):
        where = f"code cell {index}: {cell.source[:60]!r}"
        if cell.source.strip() and "no-output" not in cell.metadata.get("tags", []):
            assert cell.outputs, f"{where} has no stored output (execute and commit the notebook)"
        for output in cell.outputs:
            assert output.output_type != "error", f"{where} stored an error"
            assert output.get("name") != "stderr", f"{where} wrote to stderr"
            leak = LEAKS.search(output_text(output))
            assert not leak, f"{where} output is machine-specific: {leak.group(0)!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_test_plumbing_stays_out_of_the_reading_flow(path):
    """Readers see teaching code, not test machinery: nbval instructions are cell tags, not
    comments; the Colab setup cell is collapsed; no frame-count asserts or self-check loops."""
    cells = code_cells(nbformat.read(path, as_version=4))
    assert "hide-cell" in cells[0].metadata.get("tags", []), "tag the setup cell hide-cell"
    for index, cell in enumerate(cells, start=1):
        tags = cell.metadata.get("tags", [])
        where = f"code cell {index}: {cell.source[:60]!r}"
        assert not re.search(r"#\s*NBVAL_", cell.source), (
            f"{where}: use the nbval cell tag (nbval-ignore-output, nbval-skip), not a comment"
        )
        if "remove-cell" in tags:
            continue  # hidden invariant checks may assert what they like
        assert not re.search(r"^\s*assert\s+len\(\w+\.frames\)", cell.source, re.M), (
            f"{where}: frame-count checks belong in tests/ or a remove-cell cell"
        )
        assert not re.search(r"^\s*for .*:\n\s+\w+\.step\(", cell.source, re.M), (
            f"{where}: explorer self-check loops belong in tests/ (they change the reader's view)"
        )


CHAPTERS = [p for p in NOTEBOOKS if p.parent.name == "chapters"]


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.name for p in CHAPTERS])
def test_chapter_figures_have_captions_and_alt_text(path):
    nb = nbformat.read(path, as_version=4)
    figures = 0
    for cell in code_cells(nb):
        if any(set(o.get("data", {})) & {"image/svg+xml", "image/png"} for o in cell.outputs):
            figures += 1
            meta = cell.metadata.get("mystnb", {})
            assert meta.get("figure", {}).get("caption"), (
                f"figure without caption: {cell.source[:60]!r}"
            )
            assert meta.get("image", {}).get("alt"), (
                f"figure without alt text: {cell.source[:60]!r}"
            )
    assert figures >= 1, "every chapter shows at least one figure"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_placeholders(path):
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(cell.source for cell in nb.cells).lower()
    for word in ("coming soon", "lorem ipsum", "tbd"):
        assert not re.search(rf"\b{word}\b", text), f"placeholder text {word!r}"


def toc_files() -> set[str]:
    return set(nbhelpers.toc_files(ROOT / "_toc.yml"))


def test_every_chapter_is_in_the_toc_and_every_toc_entry_exists():
    files = toc_files()
    for path in NOTEBOOKS:
        if path.parent.name == "chapters":
            assert str(path.relative_to(ROOT).with_suffix("")) in files, path
    for entry in files:
        assert any((ROOT / f"{entry}{ext}").exists() for ext in (".md", ".ipynb")), entry


def bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\{([^,\s]+),", (ROOT / "references.bib").read_text(), re.M))


def test_every_bibliography_entry_parses_whole():
    """The book's own BibTeX reader (pybtex, under sphinxcontrib-bibtex) sees every entry: one
    entry left unclosed swallows the next ones, whose citations then break the build."""
    from pybtex.database import parse_file

    parsed = set(parse_file(ROOT / "references.bib").entries)
    assert parsed == bib_keys(), sorted(bib_keys() ^ parsed)


def test_cited_keys_and_hardware_sources_are_in_the_bibliography():
    keys = bib_keys()
    sources = [
        ROOT / f"{entry}{ext}"
        for entry in toc_files()
        for ext in (".md", ".ipynb")
        if (ROOT / f"{entry}{ext}").exists()
    ]
    cited = set()
    for path in sources:
        for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", path.read_text(encoding="utf-8")):
            cited.update(k.strip() for k in group.split(","))
    import gpuperf
    from gpuperf import measurements

    cited.update(k for c in gpuperf.chips() for k in c.sources)
    cited.update(m.source for m in measurements.MEASUREMENTS)
    missing = sorted(cited - keys)
    assert not missing, f"keys missing from references.bib: {missing}"


# --- gpuperf.notebook and gpuperf.plots ------------------------------------------------------


@pytest.mark.parametrize("triton", [False, True])
def test_colab_setup_source_installs_only_gpuperf_and_triton_and_only_in_colab(triton):
    source = nbhelpers.colab_setup_source("https://github.com/gpuperf/gpuperf", triton=triton)
    first_line = source.splitlines()[0]
    assert first_line.startswith("# Colab only (≈ 10 s, once per runtime): installs gpuperf")
    assert ("Triton" in first_line) is triton
    # figures as SVG drawn for a phone's column: every word legible without a tap (issue 26)
    assert source.endswith("from gpuperf.figures import use_book_style\n\nuse_book_style()")
    colab_branch = source.split('if "google.colab" in sys.modules')[1].split("\n\n#")[0]
    for package in ("numpy", "torch", "matplotlib", "ipywidgets", "-U", "--upgrade"):
        assert package not in colab_branch, package


@pytest.mark.parametrize("triton", [False, True], ids=["page without kernels", "with kernels"])
@pytest.mark.parametrize(
    ("in_colab", "installed", "expected_pip"),
    [(False, False, []), (True, False, ['install -q "gpuperf @ git+https://github.com/a/b"']),
     (True, True, [])],
    ids=["outside Colab", "a fresh Colab runtime", "a restarted Colab session"],
)  # fmt: skip
def test_the_setup_cell_installs_gpuperf_once_per_colab_runtime(
    monkeypatch, triton, in_colab, installed, expected_pip
):
    """Run the cell itself (its ``%pip`` and ``install_triton`` recorded, not run): it installs
    gpuperf only in a Colab runtime that lacks it, and Triton's check runs on every Colab run
    of a page with kernels (``install_triton`` installs only where Triton is missing)."""
    import importlib.metadata
    import sys
    import types

    from IPython.core.inputtransformer2 import TransformerManager

    import gpuperf.colab

    calls: list[tuple[str, str]] = []

    class Shell:
        def run_line_magic(self, name, line):
            calls.append((name, line))

    if in_colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    found = [object()] if installed else []
    monkeypatch.setattr(importlib.metadata, "distributions", lambda **query: iter(found))
    monkeypatch.setattr(gpuperf.colab, "install_triton", lambda: calls.append(("triton", "")))
    source = nbhelpers.colab_setup_source("https://github.com/a/b", triton=triton)
    exec(TransformerManager().transform_cell(source), {"get_ipython": Shell})
    assert [line for name, line in calls if name == "pip"] == expected_pip
    assert [name for name, _ in calls if name == "triton"] == (
        ["triton"] if in_colab and triton else []
    )


def test_needs_triton_reads_imports_not_words():
    assert nbhelpers.needs_triton(["import triton.language as tl"])
    assert nbhelpers.needs_triton(["%pip install x\nfrom gpuperf import chip, kernels"])
    assert nbhelpers.needs_triton(["from gpuperf.kernels.matmul import matmul"])
    assert nbhelpers.needs_triton(["from gpuperf import inspect as gpu_inspect"])
    assert not nbhelpers.needs_triton(["from gpuperf import chip, bench", "# kernels, triton"])
    assert not nbhelpers.needs_triton(["import tritonclient", "from gpuperf import kernel_fusion"])
    with pytest.raises(TypeError, match=r"sources\[0\]=3 must be a string"):
        nbhelpers.needs_triton([3])


@pytest.mark.parametrize("bad", [None, 3, ["https://github.com/a/b"]])
def test_colab_setup_source_rejects_a_url_that_is_not_a_string(bad):
    with pytest.raises(TypeError, match="repository_url="):
        nbhelpers.colab_setup_source(bad)
    with pytest.raises(TypeError, match="triton='yes' must be True or False"):
        nbhelpers.colab_setup_source("https://github.com/a/b", triton="yes")


@pytest.mark.parametrize(
    "url", ["github.com/a/b", "https://github.com/a/b/", "https://github.com/a/b.git", ""]
)
def test_colab_setup_source_rejects_bad_urls(url):
    with pytest.raises(ValueError, match="repository_url"):
        nbhelpers.colab_setup_source(url)


def test_show_source_renders_package_code():
    from gpuperf import cost

    shown = nbhelpers.show_source(cost.dot)
    # A fenced Markdown block, not Pygments HTML: the stored output must not depend on the
    # installed Pygments release (2.20 and 2.21 escape quotes differently).
    assert shown.data.startswith("```python\ndef dot(") and shown.data.endswith("\n```")
    assert "<span" not in shown.data
    with pytest.raises(TypeError, match="cannot show its source"):
        nbhelpers.show_source(3)


def test_show_source_unwraps_triton_kernels_and_fences_backticks():
    pytest.importorskip("triton")
    from gpuperf.kernels.vector_add import _vector_add_kernel

    assert "def _vector_add_kernel(" in nbhelpers.show_source(_vector_add_kernel).data
    # A source containing a ``` fence gets a longer fence, so the block cannot end early.
    assert nbhelpers.show_source(nbhelpers.glue).data.startswith("````python")


def test_glue_emits_myst_nb_glue_output(monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    published = []
    shell = InteractiveShell.instance()  # display() publishes through the shell
    monkeypatch.setattr(
        shell.display_pub,
        "publish",
        lambda data, metadata=None, **_: published.append((data, metadata)),
    )
    assert nbhelpers.glue("ridge", 295.2) == 295.2
    ((data, metadata),) = published
    assert metadata["scrapbook"] == {"name": "ridge", "mime_prefix": nbhelpers._GLUE_PREFIX}
    assert data == {nbhelpers._GLUE_PREFIX + "text/plain": "295.2"}
    with pytest.raises(ValueError, match="glue name"):
        nbhelpers.glue("2bad name", 1)


def test_table_renders_markdown_and_checks_row_length():
    md = nbhelpers.table(["a", "b"], [[1, "x|y"]]).data
    assert md.splitlines() == ["| a | b |", "|---|---|", "| 1 | x\\|y |"]
    with pytest.raises(ValueError, match="but headers has 2"):
        nbhelpers.table(["a", "b"], [[1]])


def test_roofline_figure_draws_one_roof_per_chip():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpuperf import cost, plots

    fig = plots.roofline(["A100-80GB", "H100-SXM"], "bf16", ops={"dot": cost.dot(1024)})
    try:
        ax = fig.axes[0]
        assert ax.get_xscale() == ax.get_yscale() == "log"
        # two roofs and one numbered operation, named in the key under the axes
        assert len(fig.legends[0].get_texts()) == 3
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match=r"chips=\[\] must hold at least 1"):
        plots.roofline([], "bf16")
    with pytest.raises(ValueError, match="intensity_range"):
        plots.roofline("H100-SXM", "bf16", intensity_range=(10, 1))
