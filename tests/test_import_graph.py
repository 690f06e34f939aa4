"""The package's imports flow one way (DESIGN §2): no module imports, directly or through others,
a module that imports it.

Every ``import`` / ``from … import`` in every module of ``src/gpuperf`` is read with ``ast`` —
at the top of the file or inside a function (a lazy import still ties two modules together),
but not under ``if TYPE_CHECKING:``, which never runs. Relative imports are resolved against
the module's package; ``from pkg import name`` is an edge to ``pkg.name`` when that is a module,
else to ``pkg``. Importing a submodule also runs its package's ``__init__``, but that implicit
step is not an edge (every package would otherwise be a cycle with its own modules). The
strongly connected components of that graph with more than one module are the cycles.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gpuperf

PACKAGE_DIR = Path(gpuperf.__file__).resolve().parent

#: Cycles known today, each named by two modules in it, with who removes it and why it exists.
#: Strict: when the cycle is gone the entry must go too (the test says so), so a fixed cycle
#: cannot come back unnoticed.
KNOWN_CYCLES = {}


def module_files() -> dict[str, Path]:
    """Dotted name → file, for every module of the package."""
    found = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if _type_checking_block(node):
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module → the package modules it imports."""
    modules = module_files()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                    for alias in node.names
                ]
            for target in targets:
                while target and target not in modules:  # import a.b.c → the deepest module
                    target = target.rpartition(".")[0]
                if target.startswith("gpuperf") and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def _path(graph: dict[str, set[str]], component: set[str]) -> str:
    """One cycle through ``component``, as ``a → b → a``, to show in a failure."""
    start = min(component)
    path, seen = [start], {start}
    while True:
        nxt = min(n for n in graph[path[-1]] if n in component)
        path.append(nxt)
        if nxt in seen:
            return " → ".join(path[path.index(nxt) :])
        seen.add(nxt)


def test_the_package_imports_flow_one_way():
    graph = import_graph()
    found = cycles(graph)
    known = {pair: next((c for c in found if set(pair) <= c), None) for pair in KNOWN_CYCLES}
    unknown = [c for c in found if c not in known.values()]
    assert not unknown, "import cycles:\n" + "\n".join(_path(graph, c) for c in unknown)
    stale = [pair for pair, component in known.items() if component is None]
    assert not stale, (
        f"the known cycle(s) {stale} are gone: remove them from KNOWN_CYCLES so they cannot "
        "come back unnoticed"
    )


def test_the_graph_sees_imports_the_way_python_does():
    # Lazy imports count, relative ones resolve, and a cycle through them is found.
    graph = import_graph()
    assert "gpuperf.inspect" in graph["gpuperf.widgets.tile_reports"]  # target_of, module level
    assert "gpuperf.plots" in graph["gpuperf.widgets.tiles"]  # from .. import plots
    assert "gpuperf.kernels._common" in graph["gpuperf.kernels.copy"]  # from ._common import
    assert "gpuperf.runtime" in graph["gpuperf.plots"]  # a lazy import inside a function
    planted = {**graph, "gpuperf.units": graph["gpuperf.units"] | {"gpuperf.widgets.tiles"}}
    assert any({"gpuperf.units", "gpuperf.widgets.tiles"} <= c for c in cycles(planted))
