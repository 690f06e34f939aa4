"""What pages 3.4 and 3.5 state agrees with the course's own numbers and rules.

Review 2026-12 (R3) found, on these two pages: 3.5's answer 4 right for the wrong reason (the
repeat period, not the run length — the property itself is tested in ``test_divergence.py``);
"measure it" cells that fell back silently to another chip's roof (``... or chip("T4")``,
``... or a100``) and placed non-matmul work under the tensor-core peak; 3.5's answer 8 pricing a
``tl.sin`` call from the PTX listing with no check against 3.2's measurement of the same call;
and masks called divergence. Each test here would have failed on the old pages.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from gpuperf import chip, measurements
from gpuperf.kernels.fusion import sin2cos2_cost

ROOT = Path(__file__).resolve().parent.parent
COALESCING = ROOT / "chapters/03_4_coalescing.ipynb"
DIVERGENCE = ROOT / "chapters/03_5_control_divergence.ipynb"


def _cells(path: Path):
    return nbformat.read(path, as_version=4).cells


def _markdown_with(path: Path, text: str) -> str:
    """The one Markdown cell of ``path`` that contains ``text``."""
    (cell,) = [c.source for c in _cells(path) if c.cell_type == "markdown" and text in c.source]
    return cell


def _answers() -> str:
    return _markdown_with(DIVERGENCE, "<details><summary>Answer")


def _measure_it_code(path: Path) -> str:
    """The code cell right after the "Measure it on your GPU" heading."""
    cells = _cells(path)
    start = next(
        i
        for i, c in enumerate(cells)
        if c.cell_type == "markdown" and c.source.startswith("## Measure it on your GPU")
    )
    return next(c.source for c in cells[start:] if c.cell_type == "code")


@pytest.mark.parametrize("path", [COALESCING, DIVERGENCE], ids=lambda p: p.stem)
def test_measure_it_uses_this_gpus_own_row_and_the_non_tensor_roof(path):
    code = _measure_it_code(path)
    assert "bench.this_gpu()" in code
    assert not re.search(r"chip_from_device_name\([^)]*\)\)?\s*or\b", code), "silent fallback"
    assert "chip_floor(" not in code, "a floor built from a chip name, not this GPU's row"
    reports = re.findall(r"gpu\.report\((.*?)\)\)", code, re.S)
    assert reports, "the measurements are reported against this GPU's floor"
    # Copies, transposes and sin/cos are not matmuls: CUDA-core peak, never the tensor cores'.
    assert all("tensor_cores=False" in call for call in reports)


def test_answer_4_gives_the_run_length_rule_not_the_repeat_period():
    answers = _answers()
    start = answers.index("\n4. {glue:text}`d35_p24")
    item = answers[start : answers.index("\n5. ", start)]
    assert "shorter" in item and "than a warp" in item
    assert "which\n   is not a multiple of 32" not in item and "repeats every 48" not in item


def test_answer_8_call_cost_is_bounded_by_the_fusion_pages_h100_run():
    """3.2's fused sin²+cos² run caps what one sin/cos call executes; 3.5's listing count is
    above that cap (it counts the slow path), and the conclusion needs less than either."""
    h100, a100 = chip("H100-SXM"), chip("A100-80GB")
    run = measurements.course_kernel("sin2cos2 fused vs unfused(torch)")
    n = 2**26
    flops_per_element = h100.peak_flops("fp32", tensor_cores=False) * run.seconds / n
    call_bound = (flops_per_element - (sin2cos2_cost(n).flops / n - 2)) / 2
    listing = 2 * 72  # 1,152 PTX fma / 16 calls = 72 FMAs (R3 "what checked out")
    assert 80 < call_bound < listing  # ≈ 89 FLOPs per call (R3, finding 7)
    assert a100.ridge_point("fp32") < call_bound  # so ITERS = 8 is compute-bound either way
    markdown = _answers()
    assert "{glue:text}`d35_call_bound" in markdown and "03_2_fusion" in markdown


def test_masks_are_predication_not_divergence():
    takeaways = _answers()
    assert "divergence at the edges" not in takeaways
    mask_line = takeaways[takeaways.index("- Masks in Triton") :].split("\n- ")[0]
    assert "predication" in mask_line and "no warp diverges" in mask_line
    kernels_text = _markdown_with(DIVERGENCE, "## The kernels, run for real")
    assert "exactly what the hardware does" not in kernels_text
    assert "predication" in kernels_text


def test_the_intro_names_independent_thread_scheduling():
    intro = _markdown_with(DIVERGENCE, "# 3.5 · Control divergence")
    assert "independent thread scheduling" in intro and "__syncwarp" in intro
    assert "CUDAPG-SIMT" in intro


def test_warp_specialisation_is_taught_with_its_sources():
    section = _markdown_with(DIVERGENCE, "## Divergence on purpose: warp specialisation")
    assert "FA3" in section and "CUTLASS-WS" in section
    assert "{glue:text}`d35_ws_diverged" in section


def _glued(path: Path) -> dict[str, str]:
    values = {}
    for cell in _cells(path):
        for out in cell.get("outputs", []):
            record = out.get("metadata", {}).get("scrapbook")
            if record:
                values[record["name"]] = out["data"]["application/papermill.record/text/plain"]
    return values


def test_256_bit_loads_agree_between_1_1_and_3_4():
    """1.1 and 3.4 both state what a warp's 256-bit load asks for: 32 lanes × 32 B."""
    peak = _glued(ROOT / "chapters/01_1_peak_and_parallelism.ipynb")
    coalescing = _glued(COALESCING)
    assert peak["p11_warp_bytes32"] == coalescing["w256_warp_bytes"] == "'1,024 B'"
    assert peak["p11_warp_bytes16"] == coalescing["w128_warp_bytes"] == "'512 B'"
    assert coalescing["a9_sectors"] == f"'{2**26 * 4 // 32:,}'"
