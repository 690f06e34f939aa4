"""A student's Triton kernel as source the class grader can count on its own, checked to be
nothing but Triton.

Why: efficiency is graded by counting what a kernel requests (:mod:`gpuperf.counting`). Counted
in the student's sandbox, the numbers would come from a process the student's code controls.
So the trusted tester takes the kernel's *source* from the submission — data, never run here —
and :func:`kernel_source` accepts it only if it is the Triton language and nothing else:

* a top-level ``@triton.jit`` function of a code cell (the last definition of its name, not
  rebound afterwards), and the ``@triton.jit`` functions it calls, checked the same way;
* no imports, classes, nested functions, lambdas, ``with``, ``try``, ``global``, comprehensions,
  ``*``/``**`` unpacking or walrus; no attribute or keyword that begins with ``_``, no name
  that begins with ``__``;
* names are its arguments, its locals, a few built-ins (:data:`BUILTINS`), the other kernels,
  numbers the notebook binds at top level to a literal (or ``tl.constexpr(literal)``), and the
  modules ``triton``, ``triton.language`` (and what it contains, such as ``libdevice``) and
  ``math`` under the names the notebook imported them as; a module name only ever begins an
  attribute chain, which is resolved here, on the real modules, and must end at something
  ``triton.language`` defines (or ``triton.jit``/``cdiv``/``next_power_of_2``, a ``math``
  function or constant);
* any other attribute is one of a tensor's or a dtype's public members (:func:`members`).

:mod:`gpuperf.classroom.recount` then runs that source alone, in a sandbox of its own, with
strict counting (every access outside the kernel's arguments refused before it happens). Such a
kernel has no way to reach the counter or the process's memory, so the counts that sandbox
returns are the kernel's own. A kernel this refuses fails the efficiency case with the reason
and its line; the lab asks for plain Triton kernels, which it accepts.
"""

from __future__ import annotations

import ast
import functools
import importlib
import math
import re
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._validate import name_string, show

#: Built-in functions a kernel may call (Triton's front end accepts these too).
BUILTINS = ("abs", "bool", "float", "int", "len", "max", "min", "print", "range", "round")
#: Modules a kernel may name (the notebook's import aliases), and what their chains may reach.
MODULES = ("triton", "triton.language", "math")
#: What of ``triton`` itself a kernel may use (the rest of it compiles and launches kernels).
TRITON_NAMES = ("jit", "cdiv", "next_power_of_2", "language")
#: Node types a kernel's body may contain.
ALLOWED_NODES = (
    ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.While, ast.If, ast.Break,
    ast.Continue, ast.Pass, ast.Return, ast.Assert, ast.BinOp, ast.UnaryOp, ast.BoolOp,
    ast.Compare, ast.IfExp, ast.Call, ast.keyword, ast.Attribute, ast.Subscript, ast.Slice,
    ast.Name, ast.Constant, ast.Tuple, ast.List, ast.JoinedStr, ast.FormattedValue,
    ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop,
)  # fmt: skip


class KernelSourceError(ValueError):
    """The kernel's source is not one the class grader can count (the message says where)."""


@functools.cache
def members() -> frozenset[str]:
    """Attribute names a kernel may read on a value: a tensor's, a tensor descriptor's, a
    dtype's and a constexpr's public members (methods such as ``to``, ``sum``, ``reshape``,
    ``load``; ``dtype``, ``shape``, ``element_ty``), never ``handle`` (the interpreter's array, a
    door to raw memory). Every memory access these reach goes through the interpreter's load,
    store and atomic operations, which strict counting checks."""
    import triton.language as tl

    names = {"dtype", "shape", "numel", "type", "value", "element_ty", "primitive_bitwidth",
             "name", "fp_mantissa_width", "exponent_bias", "int_bitwidth"}  # fmt: skip
    classes = [tl.tensor, tl.dtype, tl.pointer_type, tl.block_type, tl.constexpr]
    classes += [c for c in (getattr(tl, "tensor_descriptor", None),) if c is not None]
    for cls in classes:
        names |= {n for n in dir(cls) if not n.startswith("_")}
    return frozenset(names - {"handle", "to_ir", "data"})


@dataclass(frozen=True)
class KernelSource:
    """A checked kernel: its name, the ``(name, cell, line)`` of every function to define (the
    kernel and the kernels it calls), the cells' sources, the module aliases
    ``(alias, module path)`` and the literal constants ``(name, value)`` they read."""

    kernel: str
    functions: tuple[tuple[str, int, int], ...]
    cells: tuple[tuple[int, str], ...]
    modules: tuple[tuple[str, str], ...]
    constants: tuple[tuple[str, Any], ...]

    def __post_init__(self) -> None:
        name_string("kernel", self.kernel)
        shapes = {
            "functions": (str, int, int),
            "cells": (int, str),
            "modules": (str, str),
            "constants": (str, int | float | str | bool),
        }
        for field, kinds in shapes.items():
            rows = getattr(self, field)
            if not isinstance(rows, tuple) or not all(
                isinstance(row, tuple)
                and len(row) == len(kinds)
                and all(isinstance(v, k) for v, k in zip(row, kinds, strict=True))
                for row in rows
            ):
                raise TypeError(
                    f"{field}={show(rows)} must be a tuple of ({', '.join(map(str, kinds))}) rows"
                )
        if not any(f[0] == self.kernel for f in self.functions):
            raise ValueError(f"functions={show(self.functions)} must define {self.kernel!r}")

    @classmethod
    def from_data(cls, data: Any) -> KernelSource:
        """Rebuild it from :meth:`as_data`'s plain data (lists for tuples), checking each field."""
        fields = ("kernel", "functions", "cells", "modules", "constants")
        if not isinstance(data, dict) or sorted(data) != sorted(fields):
            raise TypeError(f"data={show(data)} must be a dict with exactly the fields {fields}")
        rows = {}
        for field in fields[1:]:
            value = data[field]
            if not isinstance(value, list | tuple) or not all(
                isinstance(r, list | tuple) for r in value
            ):
                raise TypeError(f"{field}={show(value)} must be a list of rows (lists)")
            rows[field] = tuple(tuple(r) for r in value)
        return cls(data["kernel"], **rows)

    def as_data(self) -> dict[str, Any]:
        """Plain data for the counting sandbox (:func:`gpuperf.classroom.recount.launch`)."""
        return {
            "kernel": self.kernel,
            "functions": [list(f) for f in self.functions],
            "cells": [list(c) for c in self.cells],
            "modules": [list(m) for m in self.modules],
            "constants": [list(c) for c in self.constants],
        }


@dataclass
class _Top:
    """What the notebook's top level binds, in cell order: kernels, aliases, literal constants."""

    kernels: dict[str, tuple[int, ast.FunctionDef]]
    modules: dict[str, str]
    constants: dict[str, Any]
    cells: dict[int, str]
    unreadable: list[int]


def _jit_decorated(node: ast.FunctionDef, modules: dict[str, str]) -> bool:
    return any(
        _is_jit(d.func if isinstance(d, ast.Call) else d, modules) for d in node.decorator_list
    )


def _is_jit(node: ast.expr, modules: dict[str, str]) -> bool:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr == "jit" and modules.get(node.value.id) == "triton"
    return isinstance(node, ast.Name) and modules.get(node.id) == "triton.jit"


def _literal(node: ast.expr, modules: dict[str, str]) -> tuple[bool, Any]:
    """(True, value) for ``3``, ``-2.5``, ``'ieee'``, ``True`` or ``tl.constexpr(<that>)``."""
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1:
        f = node.func
        root = f.value if isinstance(f, ast.Attribute) else None
        if isinstance(root, ast.Name) and modules.get(root.id) == "triton.language":
            node = node.args[0] if f.attr == "constexpr" else node
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        ok, value = _literal(node.operand, modules)
        numeric = ok and isinstance(value, int | float) and not isinstance(value, bool)
        return (
            (True, -value if isinstance(node.op, ast.USub) else value) if numeric else (False, 0)
        )
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str | bool):
        return True, node.value
    return False, None


def _allowed_module(name: str) -> bool:
    """A module a kernel may name or reach: :data:`MODULES` and ``triton.language``'s own."""
    return name in MODULES or name.startswith("triton.language.")


def _module_path(path: str) -> str | None:
    """The accepted meaning of an imported dotted path, or None: a module under
    :data:`MODULES`, or ``triton.jit``."""
    if path == "triton.jit":
        return path
    root = path.split(".")[0]
    if root not in ("triton", "math"):
        return None
    try:
        module = importlib.import_module(path)
    except Exception:
        return None
    name = getattr(module, "__name__", "")
    return name if isinstance(module, types.ModuleType) and _allowed_module(name) else None


def _top_bindings(statement: ast.stmt) -> set[str]:
    """Names a top-level statement binds at module level (not inside functions or classes)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
            return
        if isinstance(
            node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
        ):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            found.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Global):
            found.update(node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(statement)
    return found


def _scan(cells: Sequence[str]) -> _Top:
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    top = _Top({}, {"tl": "triton.language", "triton": "triton"}, {}, {}, [])
    for index, raw in enumerate(cells):
        try:
            source = transform(raw)
            body = ast.parse(source).body
            bindings = [_top_bindings(statement) for statement in body]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            top.unreadable.append(index)
            continue
        top.cells[index] = source
        for statement, bound in zip(body, bindings, strict=True):
            for name in bound:  # any rebinding first forgets the name's old meaning
                top.kernels.pop(name, None)
                top.constants.pop(name, None)
                top.modules.pop(name, None)
            if isinstance(statement, ast.FunctionDef) and _jit_decorated(statement, top.modules):
                top.kernels[statement.name] = (index, statement)
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    path = alias.name if alias.asname else alias.name.split(".")[0]
                    meaning = _module_path(path)
                    if meaning:
                        top.modules[alias.asname or path] = meaning
            elif (
                isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module
            ):
                for alias in statement.names:
                    meaning = _module_path(f"{statement.module}.{alias.name}")
                    if meaning:
                        top.modules[alias.asname or alias.name] = meaning
            elif isinstance(statement, ast.Assign | ast.AnnAssign):
                targets = (
                    statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                )
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and statement.value:
                    ok, value = _literal(statement.value, top.modules)
                    if ok:
                        top.constants[targets[0].id] = value
    return top


class _Checker:
    """Checks one kernel function against the rules of the module docstring."""

    def __init__(self, top: _Top, cell: int) -> None:
        self.top, self.cell = top, cell
        self.calls: set[str] = set()

    def fail(self, node: ast.AST, why: str) -> KernelSourceError:
        line = getattr(node, "lineno", "?")
        return KernelSourceError(
            f"code cell {self.cell}, line {line}: {why} — the class grader counts a kernel by "
            "running its source alone, which must be Triton and nothing else (see "
            "gpuperf.classroom.kernel_source)"
        )

    def function(self, node: ast.FunctionDef) -> None:
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            if not _is_jit(call.func if call else decorator, self.top.modules):
                raise self.fail(decorator, "a decorator other than @triton.jit")
            if call:
                if call.args:
                    raise self.fail(call, "@triton.jit(...) with positional arguments")
                for keyword in call.keywords:
                    if keyword.arg is None or keyword.arg.startswith("_"):
                        raise self.fail(call, f"@triton.jit(...) with {show(keyword.arg)}")
                    self.constant_value(keyword.value)
        a = node.args
        if a.vararg or a.kwarg:
            raise self.fail(node, "*args or **kwargs in the kernel's signature")
        params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
        self.locals = set(params) | {
            n.id for s in node.body for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }  # fmt: skip
        reserved = (set(self.top.modules) | set(self.top.kernels) | set(BUILTINS)) & self.locals
        if reserved:
            raise self.fail(node, f"a local named {sorted(reserved)[0]!r}, which names a module, "
                                  "a kernel or a built-in")  # fmt: skip
        for p in a.posonlyargs + a.args + a.kwonlyargs:
            self.identifier(p, p.arg)
            if p.annotation is not None:
                self.annotation(p.annotation)
        for default in a.defaults + [d for d in a.kw_defaults if d is not None]:
            self.constant_value(default)
        if node.returns is not None:
            self.annotation(node.returns)
        for statement in node.body:
            self.visit(statement)

    def identifier(self, node: ast.AST, name: str, *, private: bool = True) -> None:
        """Names may begin with one underscore (``_helper``); attributes and keywords
        (``private=False``) may not, and nothing may begin with two."""
        if name.startswith("__") or (not private and name.startswith("_")):
            what = "names" if private else "attributes and keywords"
            bad = "__" if private else "_"
            raise self.fail(node, f"{name!r} ({what} beginning with {bad} are not accepted)")

    def annotation(self, node: ast.expr) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            # a type string as Triton spells one ("i32", "*fp16"): never code to evaluate
            if not re.fullmatch(r"\*?[a-z][a-z0-9]{0,15}", node.value):
                raise self.fail(node, f"the annotation {node.value[:40]!r} (a type string such "
                                      "as 'i32' or '*fp16' only)")  # fmt: skip
            return
        if isinstance(node, ast.Attribute | ast.Name):
            self.visit(node)
            return
        raise self.fail(node, "an annotation other than tl.constexpr, a dtype or a string")

    def constant_value(self, node: ast.expr) -> None:
        ok = all(isinstance(n, ast.Constant | ast.List | ast.Tuple | ast.Load | ast.UnaryOp
                            | ast.USub | ast.UAdd) for n in ast.walk(node))  # fmt: skip
        if not ok:
            raise self.fail(node, "a default or decorator argument that is not a literal")

    def visit(self, node: ast.AST) -> None:
        if not isinstance(node, ALLOWED_NODES):
            raise self.fail(node, f"{type(node).__name__} ({_what(node)})")
        if isinstance(node, ast.Attribute):
            self.attribute(node)
            return
        if isinstance(node, ast.Name):
            self.name(node, as_value=True)
            return
        if isinstance(node, ast.Call):
            self.call(node)
            return
        if isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.ctx, ast.Store):
            raise self.fail(node, "assignment into an element or attribute")
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            raise self.fail(node, "assignment into an element")
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def name(self, node: ast.Name, *, as_value: bool) -> None:
        name = node.id
        self.identifier(node, name)
        if isinstance(node.ctx, ast.Store):
            return
        if name in self.locals or name in self.top.constants:
            return
        if name in self.top.kernels:
            self.calls.add(name)  # called, or passed as a combine function (tl.reduce)
            return
        if name in BUILTINS and not as_value:
            return
        if name in self.top.modules and not as_value:
            return
        if name in self.top.modules:
            raise self.fail(node, f"the module {name!r} used as a value (only tl.<name> chains)")
        raise self.fail(node, f"the name {name!r}, which is not an argument, a local, a "
                              "literal constant, a kernel, a Triton module or a built-in it "
                              "accepts")  # fmt: skip

    def call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            self.name(func, as_value=False)
            if func.id in self.top.modules and self.top.modules[func.id] != "triton.jit":
                raise self.fail(func, f"a call of the module {func.id!r}")
        else:
            self.visit(func)
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.fail(arg, "*-unpacking in a call")
            self.visit(arg)
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.fail(node, "**-unpacking in a call")
            self.identifier(node, keyword.arg, private=False)
            self.visit(keyword.value)

    def attribute(self, node: ast.Attribute) -> None:
        if not isinstance(node.ctx, ast.Load):
            raise self.fail(node, "assignment into an element or attribute")
        chain: list[str] = []
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            chain.insert(0, base.attr)
            base = base.value
        for attr in chain:
            self.identifier(node, attr, private=False)
        if (
            isinstance(base, ast.Name)
            and base.id in self.top.modules
            and base.id not in self.locals
        ):
            rest = self.resolve(node, self.top.modules[base.id], chain)
        else:
            if isinstance(base, ast.Name) and (base.id in self.top.kernels or base.id in BUILTINS):
                raise self.fail(node, f"an attribute of {base.id!r}")
            self.visit(base)
            rest = chain
        for attr in rest:
            if attr not in members():
                raise self.fail(node, f"the attribute {attr!r}, which is not a member of a "
                                      "Triton tensor or dtype")  # fmt: skip

    def resolve(self, node: ast.AST, path: str, chain: list[str]) -> list[str]:
        """Walk ``module.a.b...`` on the real modules; return the attributes left once the chain
        leaves them (checked as members), or fail."""
        if path == "triton.jit":
            raise self.fail(node, "an attribute of triton.jit")
        obj: Any = importlib.import_module(path)
        for i, attr in enumerate(chain):
            if obj.__name__ == "triton" and attr not in TRITON_NAMES:
                raise self.fail(node, f"triton.{attr} (a kernel may use triton."
                                      f"{', triton.'.join(TRITON_NAMES[:3])})")  # fmt: skip
            if not hasattr(obj, attr):
                raise self.fail(node, f"{obj.__name__}.{attr}, which does not exist")
            obj = getattr(obj, attr)
            if isinstance(obj, types.ModuleType):
                name = obj.__name__
                if not _allowed_module(name):
                    raise self.fail(
                        node, f"the module {name} (through {'.'.join(chain[: i + 1])})"
                    )
                continue
            if not _reachable(obj):
                raise self.fail(node, f"{'.'.join(chain[:i + 1])}, which is not part of Triton's "
                                      "language")  # fmt: skip
            return chain[i + 1 :]
        return []


def _reachable(obj: Any) -> bool:
    """What a module chain may end at: Triton language objects, the three ``triton`` helpers,
    ``math``'s functions and constants."""
    import triton

    if obj is triton.jit or obj is triton.cdiv or obj is triton.next_power_of_2:
        return True
    if isinstance(obj, float) or (callable(obj) and getattr(obj, "__module__", None) == "math"):
        return isinstance(obj, float) or obj is getattr(math, getattr(obj, "__name__", ""), None)
    module = getattr(obj, "__module__", None)
    # the interpreter replaces Triton's functions by its own while it runs a kernel
    return isinstance(module, str) and (
        module.startswith("triton.language") or module == "triton.runtime.interpreter"
    )


def _what(node: ast.AST) -> str:
    try:
        return ast.unparse(node).splitlines()[0][:60]
    except Exception:
        return type(node).__name__


def _cells(cells: Any) -> list[str]:
    if (
        isinstance(cells, str)
        or not isinstance(cells, Sequence)
        or not all(isinstance(c, str) for c in cells)
    ):
        raise TypeError(f"cells={show(cells)} must be a list of code cells' sources (strings)")
    return list(cells)


def kernel_names(cells: Sequence[str]) -> frozenset[str]:
    """Names of the ``@triton.jit`` functions a notebook's top level defines (checked or not)."""
    return frozenset(_scan(_cells(cells)).kernels)


def kernel_source(cells: Sequence[str], kernel: str) -> KernelSource:
    """The checked source of ``kernel`` and the kernels it calls, from a notebook's code cells
    (strings, in order); :class:`KernelSourceError` saying which line breaks which rule."""
    kernel = name_string("kernel", kernel)
    top = _scan(_cells(cells))
    if kernel not in top.kernels:
        unread = f" (cells {top.unreadable} could not be parsed)" if top.unreadable else ""
        raise KernelSourceError(
            f"`{kernel}` is not a @triton.jit function defined at the top level of a code cell "
            f"(and not rebound afterwards){unread}: the class grader counts a kernel from its "
            "source"
        )
    done: dict[str, tuple[int, ast.FunctionDef]] = {}
    todo = [kernel]
    while todo:
        name = todo.pop()
        if name in done:
            continue
        cell, node = top.kernels[name]
        checker = _Checker(top, cell)
        checker.function(node)
        done[name] = (cell, node)
        todo += sorted(checker.calls - set(done))
    used = {n.id for _, node in done.values() for n in ast.walk(node) if isinstance(n, ast.Name)}
    return KernelSource(
        kernel,
        tuple((name, cell, node.lineno) for name, (cell, node) in sorted(done.items())),
        tuple(sorted((c, top.cells[c]) for c in {cell for cell, _ in done.values()})),
        tuple(sorted((a, m) for a, m in top.modules.items() if a in used)),
        tuple(sorted((n, v) for n, v in top.constants.items() if n in used)),
    )


__all__ = [
    "BUILTINS",
    "KernelSource",
    "KernelSourceError",
    "kernel_names",
    "kernel_source",
    "members",
]
