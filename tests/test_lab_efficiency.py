"""Efficiency grading in the labs (issue 35, item 6): correct-but-wasteful kernels lose points.

Each lab's hidden efficiency case (``qN_traffic`` in ``labs/<lab>/hidden_tests.py``) counts the
bytes the student's kernel requests in Triton's interpreter. Here the master's own solution
passes it, and the same solution with one wasteful line (a panel or Q reloaded inside the loop)
fails with a message that says how many more bytes it requested and which load line did it.
The kernels are written to files so that ``@triton.jit`` can read their source, as it reads a
notebook cell's.
"""

from __future__ import annotations

import importlib.util
import json
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

ROOT = Path(__file__).resolve().parents[1]
PRELUDE = """
import math
import torch
import triton
import triton.language as tl
from gpuperf.grading import padded
from gpuperf.runtime import DEVICE
"""


def _solution_cell(lab: str, marker: str) -> str:
    nb = json.loads((ROOT / "labs" / lab / f"{lab}.ipynb").read_text())
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and marker in source:
            for demo in ("\na = torch.randn", "\ngen = torch.Generator"):
                source = source.split(demo)[0]  # the definitions, not the demo lines
            return source
    raise AssertionError(f"no cell with {marker!r} in {lab}")


def _env(tmp_path: Path, lab: str, marker: str, change: tuple[str, str] | None) -> dict:
    source = _solution_cell(lab, marker)
    if change is not None:
        old, new = change
        assert old in source, f"{old!r} not in the solution"
        source = source.replace(old, new, 1)
    path = tmp_path / f"student_{lab}_{change is not None}.py"
    path.write_text(PRELUDE + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return dict(vars(module))


def _hidden(lab: str):
    path = ROOT / "labs" / lab / "hidden_tests.py"
    spec = importlib.util.spec_from_file_location(f"_hidden_{lab}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LAB3_RELOAD_A = (
    '        acc += tl.dot(a, b, input_precision="ieee")',
    "        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k0 + offs_k[None, :]) * "
    "stride_ak,\n                    mask=a_mask, other=0.0)  # loaded again: wasteful\n"
    '        acc += tl.dot(a, b, input_precision="ieee")',
)


def test_lab3_reference_passes_and_a_reloaded_panel_loses_the_efficiency_case(tmp_path):
    hidden = _hidden("lab3_tiled_matmul")
    hidden.q1_traffic(_env(tmp_path, "lab3_tiled_matmul", "def _matmul_kernel", None))
    wasteful = _env(tmp_path, "lab3_tiled_matmul", "def _matmul_kernel", LAB3_RELOAD_A)
    hidden.q1(wasteful)  # still correct: the correctness case keeps its points
    with pytest.raises(CheckError) as error:
        hidden.q1_traffic(wasteful)
    message = str(error.value)
    assert "is correct but requested" in message and "more" in message
    # the tensor with the excess, and both lines that load it (the reload among them)
    assert "Most of the excess is `a_ptr`" in message and message.count("a = tl.load(") == 2
    assert "1.48×" in message and "22,400 more" in message  # how much more


LAB4_RELOAD_Q = (
    "        k = tl.load(k_ptr + kv, mask=col_ok[:, None], other=0.0)",
    "        q = tl.load(q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :],\n"
    "                    mask=row_ok[:, None], other=0.0)  # Q again, every key block\n"
    "        k = tl.load(k_ptr + kv, mask=col_ok[:, None], other=0.0)",
)


def test_lab4_reference_passes_and_a_q_reload_loses_the_efficiency_case(tmp_path):
    hidden = _hidden("lab4_flashattention")
    hidden.q2_traffic(_env(tmp_path, "lab4_flashattention", "def _attn_fwd_kernel", None))
    wasteful = _env(tmp_path, "lab4_flashattention", "def _attn_fwd_kernel", LAB4_RELOAD_Q)
    with pytest.raises(CheckError) as error:
        hidden.q2_traffic(wasteful)
    message = str(error.value)
    assert "is correct but requested" in message and "more" in message
    assert "Most of the excess is `q_ptr`" in message
    assert message.count("q = tl.load(") == 2  # the first load and the reload, by line


LAB2_READ_X_TWICE = (
    "    y = tl.maximum(a * x + b, 0.0)",
    "    y = tl.maximum(a * tl.load(x_ptr + offs, mask=mask) + b, 0.0)  # x again: wasteful",
)


def test_lab2_reference_passes_and_reading_x_twice_loses_the_efficiency_case(tmp_path):
    hidden = _hidden("lab2_fusion")
    hidden.q1_traffic(_env(tmp_path, "lab2_fusion", "def _axpb_relu_kernel", None))
    wasteful = _env(tmp_path, "lab2_fusion", "def _axpb_relu_kernel", LAB2_READ_X_TWICE)
    hidden.q1(wasteful)  # still correct: the correctness case keeps its points
    with pytest.raises(CheckError) as error:
        hidden.q1_traffic(wasteful)
    message = str(error.value)
    assert "is correct but requested" in message
    # x is read twice: 3,000 fp32 elements more than the 24,000 bytes of x and b
    assert "1.50×" in message and "12,000 more" in message  # how much more
    assert "Most of the excess is `x_ptr`" in message
    assert "`x = tl.load(x_ptr" in message and "a * tl.load(x_ptr" in message  # which lines
