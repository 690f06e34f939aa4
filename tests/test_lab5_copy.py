"""Lab 5's persistent copy (question 3): graded for correctness and, on the CPU, for sectors.

Issue 35, item 6: "lab 5's copy kernels' sector efficiency". The hidden efficiency case
``q3_traffic`` counts the student's kernel in Triton's interpreter on a fixed grid of P programs
(:func:`gpuperf.grading.check_sector_efficiency`, then :func:`gpuperf.grading.check_traffic`).
Here, on the lab's own cells: the master's solution passes the public test and both hidden cases;
a kernel in which each lane owns a contiguous chunk copies correctly but fails the efficiency
case, naming its load line and the share of the sectors it used; one that reads x twice fails it
too; and the untouched handout fails every case with a grading message, not a crash. The kernels
are written to files so that ``@triton.jit`` can read their source, as it reads a notebook cell's.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from gpuperf.runtime import configure_triton

configure_triton()
torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from gpuperf.grading import CheckError  # noqa: E402
from gpuperf.runtime import interpreting  # noqa: E402

pytestmark = pytest.mark.skipif(not interpreting(), reason="counting needs Triton's interpreter")

LAB = Path(__file__).resolve().parents[1] / "labs" / "lab5_memory_hierarchy"
PRELUDE = """import torch
import triton
import triton.language as tl
from gpuperf.grading import all_answered, padded
from gpuperf.runtime import DEVICE
"""
BODY = re.compile(r"    # BEGIN SOLUTION\n.*?    # END SOLUTION\n", re.S)

#: The classic mistake: lane i of program p owns elements [(p·BLOCK + i)·chunk, … + chunk) and
#: walks them, so neighbouring lanes of one load are a chunk apart. Correct, and wasteful.
LANE_OWNS_A_CHUNK = """    pid = tl.program_id(axis=0)
    chunk = tl.cdiv(n, tl.num_programs(axis=0) * BLOCK_SIZE)
    first = (pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)) * chunk
    for i in range(0, chunk):
        offs = first + i
        mask = offs < n
        values = tl.load(x_ptr + offs, mask=mask)  # the wasteful load
        tl.store(out_ptr + offs, values, mask=mask)
"""

#: Coalesced, but x is loaded twice per block.
READS_X_TWICE = """    pid = tl.program_id(axis=0)
    lanes = tl.arange(0, BLOCK_SIZE)
    for block in range(pid, tl.cdiv(n, BLOCK_SIZE), tl.num_programs(axis=0)):
        offs = block * BLOCK_SIZE + lanes
        mask = offs < n
        values = tl.load(x_ptr + offs, mask=mask)
        values = values + 0 * tl.load(x_ptr + offs, mask=mask)  # x again
        tl.store(out_ptr + offs, values, mask=mask)
"""


def _cell(notebook: Path, marker: str) -> str:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and marker in source:
            return source
    raise AssertionError(f"no cell with {marker!r} in {notebook.name}")


def _solution() -> str:
    source = _cell(LAB / f"{LAB.name}.ipynb", "def _persistent_copy_kernel")
    return source.split("\nx = torch.arange")[0]  # the definitions, not the demo lines


def _env(tmp_path: Path, source: str, tag: str) -> tuple[dict, Path]:
    path = tmp_path / f"lab5_student_{tag}.py"
    path.write_text(PRELUDE + source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return dict(vars(module)), path


def _with_body(body: str) -> str:
    source, replaced = BODY.subn(body, _solution())
    assert replaced == 1
    return source


def _hidden():
    spec = importlib.util.spec_from_file_location("_hidden_lab5_copy", LAB / "hidden_tests.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _public(env: dict) -> None:
    """The master's public test cell of question 3, run on ``env``."""
    exec(_cell(LAB / f"{LAB.name}.ipynb", 'call("_persistent_copy_kernel"'), env)


def _line_of(path: Path, text: str) -> int:
    (line,) = [i for i, s in enumerate(path.read_text().splitlines(), 1) if text in s]
    return line


def test_the_reference_solution_passes_every_case(tmp_path):
    env, _ = _env(tmp_path, _solution(), "solution")
    hidden = _hidden()
    _public(dict(env))
    hidden.q3(env)
    hidden.q3_traffic(env)


def test_a_lane_that_owns_a_chunk_is_correct_but_loses_the_efficiency_case(tmp_path):
    env, path = _env(tmp_path, _with_body(LANE_OWNS_A_CHUNK), "chunk")
    hidden = _hidden()
    _public(
        dict(env)
    )  # correct: the public case and the hidden correctness case keep their points
    hidden.q3(env)
    with pytest.raises(CheckError) as error:
        hidden.q3_traffic(env)
    message = str(error.value)
    assert "is correct but wastes the sectors it touches" in message
    # the load line by number and code, and the share of its sectors' bytes it used: 4 of 32
    load = _line_of(path, "# the wasteful load")
    assert f"line {load} of {path.name} `values = tl.load(x_ptr + offs, mask=mask)" in message
    assert "bytes loaded in" in message and "12% used" in message
    assert "below the 90% required" in message


def test_reading_x_twice_loses_the_efficiency_case(tmp_path):
    env, path = _env(tmp_path, _with_body(READS_X_TWICE), "twice")
    hidden = _hidden()
    hidden.q3(env)
    with pytest.raises(CheckError) as error:
        hidden.q3_traffic(env)
    message = str(error.value)
    assert "is correct but requested" in message and "2.00×" in message
    assert "Most of the excess is `x_ptr`" in message
    assert f"line {_line_of(path, '# x again')}" in message


def test_the_untouched_handout_fails_every_case_without_crashing(tmp_path):
    handout = _cell(LAB / "student" / f"{LAB.name}.ipynb", "def _persistent_copy_kernel")
    handout = handout.split("\nx = torch.arange")[0]
    assert "tl.load" not in handout and "    ...\n" in handout
    env, _ = _env(tmp_path, handout, "handout")
    hidden = _hidden()
    for case in (_public, hidden.q3, hidden.q3_traffic):
        with pytest.raises(CheckError):
            case(dict(env))
