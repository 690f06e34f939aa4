"""Notebooks and labs use only gpuperf's public API: names without a leading underscore that
their module lists in ``__all__`` (STYLE §16). What a chapter or a lab calls is what the contract
test sweeps (``tests/test_api_contract.py``), so a reader never meets a helper that was not
built to be handed nonsense.

Every code cell of every notebook under ``chapters/`` and ``labs/`` (masters and the generated
student and autograder copies) and every lab's Python files are parsed — IPython's
``TransformerManager`` first turns ``%pip`` and ``!`` lines into Python — and every import of
gpuperf and every attribute chain starting from a gpuperf name (``from gpuperf import plots``
then ``plots.roofline``; ``import gpuperf.kernels.copy as c`` then ``c.copy_ref``) is resolved
against the installed package. Aliases carry over from one cell to the next, as in a kernel.
"""

from __future__ import annotations

import ast
import importlib
import json
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("labs/**/*.ipynb")])
LAB_SOURCES = sorted(p for p in ROOT.glob("labs/**/*.py"))


def code_cells(path: Path) -> list[str]:
    """The code of each cell (a ``.py`` file is one cell), as plain Python."""
    from IPython.core.inputtransformer2 import TransformerManager

    if path.suffix == ".py":
        return [path.read_text(encoding="utf-8")]
    transform = TransformerManager().transform_cell
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [transform("".join(c["source"])) for c in cells if c["cell_type"] == "code"]


def gpuperf_names(sources: list[str]) -> list[tuple[int, str]]:
    """(cell number, dotted name) of every gpuperf name the cells import or reach."""
    aliases: dict[str, str] = {}  # a local name → the dotted gpuperf name it stands for
    found: list[tuple[int, str]] = []
    for number, source in enumerate(sources, 1):
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "gpuperf":
                        found.append((number, alias.name))
                        local = alias.asname or alias.name.split(".")[0]
                        aliases[local] = alias.name if alias.asname else "gpuperf"
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gpuperf"):
                for alias in node.names:
                    found.append((number, f"{node.module}.{alias.name}"))
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

        def dotted(node: ast.AST) -> str | None:
            if isinstance(node, ast.Name):
                return aliases.get(node.id)
            if isinstance(node, ast.Attribute):
                base = dotted(node.value)
                return f"{base}.{node.attr}" if base else None
            return None

        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and (name := dotted(node)):
                found.append((number, name))
    return found


def why_not_public(dotted: str) -> str:
    """Why ``dotted`` is not a public gpuperf name ('' if it is one)."""
    parts = dotted.split(".")
    obj: object = importlib.import_module("gpuperf")
    for i, part in enumerate(parts[1:], 1):
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            return f"{part!r} is private"
        if isinstance(obj, types.ModuleType):
            try:
                obj = importlib.import_module(".".join(parts[: i + 1]))
                continue  # a submodule
            except ModuleNotFoundError:
                pass
            if not hasattr(obj, part):
                return f"{obj.__name__} has no {part!r}"
            exported = getattr(obj, "__all__", None)
            if exported is None:
                return f"{obj.__name__} has no __all__"
            if part not in exported:
                return f"{part!r} is not in {obj.__name__}.__all__"
        obj = getattr(obj, part, None)
        if obj is None or not isinstance(obj, types.ModuleType | type):
            return ""  # past the module level: a method or attribute of a public object
    return ""


@pytest.mark.parametrize("path", NOTEBOOKS + LAB_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebooks_and_labs_use_only_public_names(path):
    names = gpuperf_names(code_cells(path))
    problems = sorted(
        {f"cell {n}: {name}: {why}" for n, name in names if (why := why_not_public(name))}
    )
    assert not problems, f"{path.name} uses non-public gpuperf names:\n" + "\n".join(problems)


def test_the_check_sees_private_and_unexported_names(tmp_path):
    sources = [
        "from gpuperf.kernels.fusion import _sin2cos2_kernel\nimport gpuperf.widgets.live as live",
        "%pip install nothing\nlive._check_option('x', 1, [1])\nlive.Explorer",
        "from gpuperf import plots\nplots.roofline('H100')\nplots._RooflinePanel",
    ]
    cells = [{"cell_type": "code", "source": source} for source in sources]
    notebook = tmp_path / "planted.ipynb"
    notebook.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    verdicts = {name: why_not_public(name) for _, name in gpuperf_names(code_cells(notebook))}
    assert "private" in verdicts["gpuperf.kernels.fusion._sin2cos2_kernel"]
    assert "private" in verdicts["gpuperf.widgets.live._check_option"]
    assert "private" in verdicts["gpuperf.plots._RooflinePanel"]
    assert verdicts["gpuperf.widgets.live.Explorer"] == ""
    assert verdicts["gpuperf.plots.roofline"] == ""
    assert "not in gpuperf.units.__all__" in why_not_public("gpuperf.units.annotations")
    assert "has no" in why_not_public("gpuperf.plots.no_such_figure")
