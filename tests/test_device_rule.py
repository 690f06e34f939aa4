"""The device rule, checked statically on a machine without a GPU.

On a CPU every tensor lives on the CPU, so a notebook that builds its tensors there and hands
them to a Triton kernel passes every CPU test and then fails for every Colab GPU user (it did,
in 9 of 16 chapters). This test reads the code cells of every chapter and lab notebook (and the
labs' test files) as Python ASTs and requires that each tensor a cell creates says where it
lives: ``device=DEVICE`` (``from gpuperf.runtime import DEVICE``), an explicit ``device=...``,
or a ``.to(...)``/``.cuda()`` on the result. A CPU generator passed to a constructor on another
device is also caught (torch raises on a GPU). ``*_like`` constructors inherit their argument's
device and are fine.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path(__file__).resolve().parent.parent

#: torch functions that allocate a new tensor on the CPU unless told otherwise.
CONSTRUCTORS = frozenset(
    {
        "arange", "as_tensor", "empty", "empty_strided", "eye", "from_numpy", "full", "linspace",
        "logspace", "ones", "rand", "randint", "randn", "randperm", "tensor", "zeros",
    }
)  # fmt: skip
#: Methods that move a tensor: ``torch.randn(n).to(DEVICE)`` obeys the rule.
MOVERS = frozenset({"to", "cuda"})


def notebook_sources() -> list[tuple[str, str]]:
    """(id, code) for every code cell of every chapter, lab master and student notebook, and
    every lab test file."""
    sources = []
    for path in sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("labs/*/**/*.ipynb")]):
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = nbformat.read(path, as_version=4)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and cell.source.strip():
                sources.append((f"{path.relative_to(ROOT)}[{index}]", cell.source))
    for path in sorted(ROOT.glob("labs/*/*/tests/*.py")):
        sources.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return sources


def parseable(source: str) -> str:
    """Cell source as plain Python: IPython turns magics and shell escapes into calls."""
    return TransformerManager().transform_cell(source)


def _is_torch_call(node: ast.Call, names: frozenset[str]) -> str | None:
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "torch"
        and func.attr in names
    ):
        return func.attr
    return None


def _keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in node.keywords if kw.arg == name), None)


def violations(source: str) -> Iterator[str]:
    """Each tensor construction in ``source`` that breaks the device rule, in words."""
    tree = ast.parse(parseable(source))
    moved: set[int] = set()  # ids of constructor calls that are the receiver of .to()/.cuda()
    cpu_generators: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MOVERS
        ):
            receiver = node.func.value
            while isinstance(receiver, ast.Call | ast.Attribute | ast.Subscript | ast.BinOp):
                if isinstance(receiver, ast.Call) and _is_torch_call(receiver, CONSTRUCTORS):
                    moved.add(id(receiver))
                    break
                if isinstance(receiver, ast.BinOp):
                    moved.add(id(receiver.left))
                    moved.add(id(receiver.right))
                    receiver = receiver.left
                    continue
                receiver = receiver.value if not isinstance(receiver, ast.Call) else receiver.func
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            # torch.Generator() or torch.Generator().manual_seed(...) with no device: a CPU one
            while isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
                call = call.func.value
            if _is_torch_call(call, frozenset({"Generator"})) and not (
                _keyword(call, "device") or call.args
            ):
                cpu_generators.update(t.id for t in node.targets if isinstance(t, ast.Name))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _is_torch_call(node, CONSTRUCTORS)
        if name is None:
            continue
        device = _keyword(node, "device")
        line = f"line {node.lineno}: torch.{name}(...)"
        if device is None and id(node) not in moved:
            yield f"{line} creates a CPU tensor: add device=DEVICE or .to(DEVICE)"
        generator = _keyword(node, "generator")
        if (
            device is not None
            and isinstance(generator, ast.Name)
            and generator.id in cpu_generators
            and not (isinstance(device, ast.Constant) and device.value == "cpu")
        ):
            yield (
                f"{line} uses the CPU generator {generator.id!r} for a tensor on "
                f"{ast.unparse(device)}: create it with torch.Generator(device=DEVICE)"
            )


SOURCES = notebook_sources()


@pytest.mark.parametrize(("where", "source"), SOURCES, ids=[w for w, _ in SOURCES])
def test_tensors_are_created_on_the_course_device(where, source):
    try:
        found = list(violations(source))
    except SyntaxError as error:
        pytest.fail(f"{where} is not valid Python (a student would meet this): {error}")
    assert not found, f"{where} breaks the device rule:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("x = torch.randn(4, 4)", 1),
        ("x = torch.randn(4, 4, device=DEVICE)", 0),
        ("x = torch.randn(4, 4).to(DEVICE)", 0),
        ("x = (torch.randn(4, 4) * 3).to(DEVICE)", 0),
        ("x = torch.randn(4, 4, dtype=torch.float16).cuda()", 0),
        ("y = vector_add(torch.ones(8), torch.zeros(8, device=DEVICE))", 1),
        ("x = torch.empty_like(y)", 0),
        ("x = torch.from_numpy(a)", 1),
        ("x = torch.from_numpy(a).to(DEVICE)", 0),
        ("x = torch.tensor([1.0], device='cpu')", 0),
        (
            "g = torch.Generator().manual_seed(0)\nx = torch.randn(4, generator=g, device=DEVICE)",
            1,
        ),
        ("g = torch.Generator(device=DEVICE)\nx = torch.randn(4, generator=g, device=DEVICE)", 0),
        ("g = torch.Generator().manual_seed(0)\nx = torch.randn(4, generator=g).to(DEVICE)", 0),
        ("%time x = torch.randn(3)\ny = 1", 0),
    ],
)
def test_the_rule_catches_what_it_should(code, expected):
    """The checker itself: a test that cannot fail is a defect."""
    assert len(list(violations(code))) == expected, code
