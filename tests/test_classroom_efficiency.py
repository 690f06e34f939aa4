"""The class grader grades efficiency without trusting the student's process (issue 35).

An efficiency case counts the bytes the student's kernel requests. The class grader takes the
kernel's source from the submission, checks that it is Triton and nothing else
(:mod:`gpuperf.classroom.kernel_source`) and counts it in a sandbox of its own with strict
bounds (:mod:`gpuperf.classroom.recount`). Unit tests here run the checker and the sandbox's
launcher in this process; one small class of lab 2 (honest, wasteful, a forger that disables
counting in its own notebook, a kernel with an import in it) is graded with the real command.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
import torch

from gpuperf import counting
from gpuperf.classroom import recount
from gpuperf.classroom.kernel_source import KernelSourceError, kernel_names, kernel_source
from gpuperf.classroom.tester import load_tests
from gpuperf.runtime import interpreting

ROOT = Path(__file__).resolve().parents[1]
LABS = ROOT / "labs"
KERNELS = ROOT / "src" / "gpuperf" / "kernels"

HEADER = "import triton\nimport triton.language as tl\n"
GOOD = """
@triton.jit
def _scale_kernel(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=mask), mask=mask)
"""


def _kernel(body: str, signature: str = "x_ptr, y_ptr, n, BLOCK: tl.constexpr") -> list[str]:
    """A notebook of two cells: the imports, and a kernel ``k`` with ``body``."""
    source = f"@triton.jit\ndef k({signature}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return [HEADER, source]


@pytest.mark.parametrize(
    ("lab", "expected"),
    [("lab1_rooflines", []), ("lab2_fusion", ["q1_traffic"]),
     ("lab3_tiled_matmul", ["q1_traffic"]), ("lab4_flashattention", ["q2_traffic"]),
     ("lab5_memory_hierarchy", ["q3_traffic"])],
)  # fmt: skip
def test_efficiency_cases_are_found_in_the_labs_tests(lab: str, expected: list[str]) -> None:
    questions = load_tests(LABS / lab / "autograder" / "tests")
    found = [c.efficiency for cases in questions.values() for c in cases if c.efficiency]
    assert found == expected
    for cases in questions.values():
        assert all(c.hidden and c.points > 0 for c in cases if c.efficiency)


@pytest.mark.parametrize(
    ("lab", "kernel"),
    [("lab2_fusion", "_axpb_relu_kernel"), ("lab3_tiled_matmul", "_matmul_kernel"),
     ("lab4_flashattention", "_attn_fwd_kernel"),
     ("lab5_memory_hierarchy", "_persistent_copy_kernel")],
)  # fmt: skip
def test_the_labs_kernels_are_accepted_as_written(lab: str, kernel: str) -> None:
    for copy in ("autograder", "student"):  # the solution, and the handout's skeleton
        nb = nbformat.read(LABS / lab / copy / f"{lab}.ipynb", as_version=4)
        cells = [c.source for c in nb.cells if c.cell_type == "code"]
        source = kernel_source(cells, kernel)
        assert [f[0] for f in source.functions] == [kernel]
        assert dict(source.modules) == {"tl": "triton.language", "triton": "triton"}


def test_every_course_kernel_is_accepted_so_the_rules_are_not_too_narrow() -> None:
    refused = {"_tma_multicast_probe", "_two_cta_mma_probe"}  # Gluon, not triton.jit
    accepted = []
    for path in sorted(KERNELS.glob("*.py")):
        text = path.read_text()
        for name in sorted(kernel_names([text])):
            kernel_source([text], name)  # raises for one it refuses
            accepted.append(name)
    assert len(accepted) >= 18 and not refused & set(accepted)
    assert {"_flash_fwd_tma_kernel", "_matmul_tma_kernel", "_decode_split_kernel"} <= set(accepted)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("import os\ntl.store(y_ptr, tl.load(x_ptr))", "Import"),
        ("v = tl.load(x_ptr)\nh = v.handle", "'handle'"),
        ("v = tl.load(x_ptr)\nc = v.__class__", "attributes and keywords beginning with _"),
        ("c = getattr(x_ptr, 'handle')", "'getattr'"),
        ("f = open('/etc/passwd')", "'open'"),
        ("r = triton.runtime", "triton.runtime"),
        ("g = tl.core.inspect", "the module inspect"),
        ("g = tl.nothing_here", "does not exist"),
        ("f = lambda v: v", "Lambda"),
        ("s = [i for i in range(3)]", "ListComp"),
        ("global n\nn = 1", "Global"),
        ("try:\n    n = 1\nexcept Exception:\n    pass", "Try"),
        ("v = tl.load(x_ptr, _semantic=None)", "attributes and keywords beginning with _"),
        ("tl.store(y_ptr, tl.load(x_ptr), **{})", "**-unpacking"),
        ("m = tl\nv = m.load(x_ptr)", "used as a value"),
        ("tl = 3", "a local named 'tl'"),
        ("def inner():\n    pass", "FunctionDef"),
        ("v = tl.load(x_ptr)\nv.T = 1", "assignment into an element or attribute"),
        ("del n", "Delete"),
        ("__builtins__ = 1", "beginning with __"),
        ("v = x_ptr.bit_length()", "'bit_length'"),
    ],
)  # fmt: skip
def test_anything_but_triton_is_refused_with_its_line(body: str, why: str) -> None:
    with pytest.raises(KernelSourceError) as caught:
        kernel_source(_kernel(body), "k")
    message = str(caught.value)
    assert why in message and message.startswith("code cell 1, line ")


def test_a_string_annotation_is_a_type_string_never_code() -> None:
    assert kernel_source(_kernel("pass", 'x_ptr: "*fp32", n: "i32"'), "k").kernel == "k"
    with pytest.raises(KernelSourceError, match="a type string such as"):
        kernel_source(_kernel("pass", 'x_ptr: "().__class__.__base__"'), "k")


def test_a_decorator_signature_or_rebinding_other_than_plain_jit_is_refused() -> None:
    with pytest.raises(KernelSourceError, match=r"a decorator other than @triton\.jit"):
        kernel_source([HEADER, "@triton.jit\n@print\ndef k(x_ptr):\n    pass\n"], "k")
    with pytest.raises(KernelSourceError, match=r"\*args or \*\*kwargs"):
        kernel_source(_kernel("pass", "*args"), "k")
    # rebound after its definition (or only ever made by a call): not a kernel of the source
    for cells in ([*_kernel("pass"), "k = print"], [HEADER, "k = triton.jit(print)"]):
        with pytest.raises(KernelSourceError, match=r"not a @triton\.jit function defined"):
            kernel_source(cells, "k")


def test_helpers_constants_and_imported_libraries_are_followed() -> None:
    cells = [
        HEADER + "from triton.language.extra import libdevice\nimport math\n",
        "SCALE = tl.constexpr(2.0)\nOTHER = open\n",
        "@triton.jit\ndef _twice(v):\n    return SCALE * v\n\n\n"
        "@triton.jit\ndef k(x_ptr, y_ptr, BLOCK: tl.constexpr):\n"
        "    o = tl.arange(0, BLOCK)\n"
        "    v = _twice(libdevice.exp(tl.load(x_ptr + o))) * math.log2(math.e)\n"
        "    tl.store(y_ptr + o, tl.reduce(v, 0, _add) + v.to(tl.float32))\n\n\n"
        "@triton.jit\ndef _add(a, b):\n    return a + b\n",
    ]
    source = kernel_source(cells, "k")
    assert [f[0] for f in source.functions] == ["_add", "_twice", "k"]
    assert dict(source.constants) == {"SCALE": 2.0}
    assert dict(source.modules)["libdevice"].startswith("triton.language.extra")
    assert "math" in dict(source.modules)
    with pytest.raises(KernelSourceError, match="'OTHER'"):  # a constant that is not a literal
        kernel_source([*cells, "@triton.jit\ndef j(x_ptr):\n    OTHER(x_ptr)\n"], "j")


needs_interpreter = pytest.mark.skipif(not interpreting(), reason="runs Triton's interpreter")


@needs_interpreter
def test_the_sandboxs_launcher_counts_the_checked_source_and_computes_its_output() -> None:
    source = kernel_source([HEADER, GOOD], "_scale_kernel")
    spec = json.loads(json.dumps(source.as_data()))  # what crosses the sandbox's wall
    x, y = torch.arange(100.0), torch.zeros(100)
    data = recount.launch(spec, [4], x, y, 100, 3.0, BLOCK=32)
    (launch,) = [counting.LaunchCount.from_data(json.loads(json.dumps(d))) for d in data]
    assert torch.equal(y, 3.0 * x)
    assert (launch.bytes_read, launch.bytes_written, launch.grid) == (400, 400, (4, 1, 1))
    load = launch.site(5, "load")
    assert load.where == "cell 1 line 5" and "tl.load" in load.code


@needs_interpreter
def test_strict_counting_refuses_an_access_outside_the_kernels_tensors() -> None:
    cells = _kernel("o = tl.arange(0, BLOCK)\ntl.store(y_ptr + o + n, tl.load(x_ptr + o))")
    spec = json.loads(json.dumps(kernel_source(cells, "k").as_data()))
    x, y = torch.ones(16), torch.zeros(16)
    with pytest.raises(Exception, match="outside every tensor passed to the kernel"):
        recount.launch(spec, [1], x, y, 8, BLOCK=16)  # writes 8 elements past y's end
    assert torch.equal(y[:8], torch.zeros(8))  # refused before anything was written


@needs_interpreter
def test_the_kernels_namespace_holds_no_more_than_it_was_checked_for() -> None:
    # a spec the checker would refuse, built by hand: at run time `open` is not there either
    spec = kernel_source(_kernel("pass"), "k").as_data()
    spec["cells"] = [[1, "@triton.jit\ndef k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
                         "    open('/etc/hostname')\n"]]  # fmt: skip
    with pytest.raises(Exception, match="open"):
        recount.launch(spec, [1], torch.zeros(4), torch.zeros(4), 4, BLOCK=4)


def test_the_launcher_refuses_a_malformed_spec_or_grid() -> None:
    spec = kernel_source([HEADER, GOOD], "_scale_kernel").as_data()
    for bad in ({**spec, "kernel": 3}, {**spec, "functions": [["other", 1, 2]]}, {}, "x"):
        with pytest.raises((TypeError, ValueError)):
            recount.launch(bad, [1])
    for grid in ([], [0], [1, 2, 3, 4], [True], ["1"]):
        with pytest.raises(ValueError, match="positive program counts"):
            recount.launch(spec, grid)


def _grade(tmp_path: Path, notebooks: dict[str, nbformat.NotebookNode]) -> tuple[dict, Path]:
    lab = LABS / "lab2_fusion"
    submissions = tmp_path / "subs"
    submissions.mkdir()
    for name, nb in notebooks.items():
        nbformat.write(nb, submissions / f"{name}.ipynb")
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "gpuperf.grading", "grade", str(lab), str(submissions),
         "--out", str(out), "--jobs", "2", "--timeout", "600", "--cell-timeout", "120"],
        capture_output=True, text=True, timeout=900, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    with open(out / lab.name / "grades.csv", newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}, out / lab.name


def _variant(old: str, new: str, extra_cell: str = "") -> nbformat.NotebookNode:
    nb = nbformat.read(LABS / "lab2_fusion" / "autograder" / "lab2_fusion.ipynb", 4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and old in c.source]
    cell.source = cell.source.replace(old, new)
    if extra_cell:
        nb.cells.insert(nb.cells.index(cell) + 1, nbformat.v4.new_code_cell(extra_cell))
    return nb


@pytest.mark.slow
def test_class_grader_counts_efficiency_where_the_student_cannot_reach(tmp_path) -> None:
    old = "    y = tl.maximum(a * x + b, 0.0)"
    reread = "    y = tl.maximum(a * tl.load(x_ptr + offs, mask=mask) + b, 0.0)"
    # a forger: the same wasteful kernel, and a notebook that switches counting off in its own
    # process (it would fool a check run there: its loads are no longer recorded)
    forge = ("import gpuperf.counting as _c\n_c._record = lambda *args, **kwargs: None\n"
             "_c._check_bounds = lambda *args, **kwargs: None")  # fmt: skip
    notebooks = {
        "honest": _variant(old, old),
        "wasteful": _variant(old, reread),
        "forger": _variant(old, reread, forge),
        "importer": _variant(old, "    import os\n" + old),
    }
    rows, out = _grade(tmp_path, notebooks)
    questions = load_tests(LABS / "lab2_fusion" / "autograder" / "tests")
    (index,) = [i for i, c in enumerate(questions["q1"]) if c.efficiency]
    points = questions["q1"][index].points
    for student in notebooks:
        row = rows[student]
        assert row["status"] == "GRADED" and row["max_total"] == "12", row
        results = json.loads((out / student / "results.json").read_text())
        cases = results["questions"]["q1"]["cases"]
        assert all(c["passed"] for i, c in enumerate(cases) if i != index), (student, cases)
        efficiency = cases[index]
        if student == "honest":
            assert efficiency["passed"] and row["total"] == "12", row
            continue
        assert not efficiency["passed"], (student, efficiency)
        assert float(row["total"]) == pytest.approx(12 - points, abs=1e-4), row
        output = efficiency["output"]
        if student == "importer":
            assert "Import (import os)" in output and "code cell 2, line 9" in output, output
        else:  # the excess, and the line that requested it, in the student's own cell
            assert "Most of the excess is `x_ptr`: 24,000 bytes, where 12,000 suffice" in output
            assert "of code cell 2 `y = tl.maximum(a * tl.load(x_ptr + offs" in output, output
    assert "hidden test 3: failed" in (out / "wasteful" / "feedback.txt").read_text()
