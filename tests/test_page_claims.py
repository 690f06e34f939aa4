"""What the chapter pages state in words agrees with the course's own numbers and tables.

Review 2026-12 (R3) found sentences in chapters 2, 3 and 3.2 that the notebooks' own numbers
contradict or that hide an assumption: "measure it" cells that fell back silently to a T4's roof
on a GPU the table lacks; "both kinds reach a similar fraction of their roof" for 74 % and 91 %;
a fusion speed-up "whatever the chip" for tensors that would fit in a B200's L2; sin and cos
priced at one FLOP each on one page and at 144 on another. Each test here would have failed.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from gpuperf import chip, measurements
from gpuperf.kernels.fusion import FLOPS_PER_ELEMENT, sin2cos2_cost

ROOT = Path(__file__).resolve().parent.parent
CH2 = ROOT / "chapters/02_roofline.ipynb"
CH3 = ROOT / "chapters/03_making_it_fast.ipynb"
CH3_2 = ROOT / "chapters/03_2_fusion.ipynb"
#: Pages whose "measure it" cells were checked in review R3's round (extend as others are fixed).
MEASURING_PAGES = [
    CH2,
    CH3,
    CH3_2,
    ROOT / "chapters/03_1_low_precision.ipynb",
    ROOT / "chapters/03_4_coalescing.ipynb",
    ROOT / "chapters/03_5_control_divergence.ipynb",
    ROOT / "chapters/03_6_tiling.ipynb",
    ROOT / "labs/lab1_rooflines/lab1_rooflines.ipynb",
    ROOT / "labs/lab2_fusion/lab2_fusion.ipynb",
]


def _cells(path: Path, kind: str) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [c.source for c in nb.cells if c.cell_type == kind]


def _text(path: Path) -> str:
    return " ".join(" ".join(_cells(path, "markdown")).split())


@pytest.mark.parametrize("path", MEASURING_PAGES, ids=[p.stem for p in MEASURING_PAGES])
def test_measure_cells_never_borrow_another_chips_roof(path):
    """R3 #6: ``chip_from_device_name(...) or chip("T4")`` compared an L40S with a T4's roof."""
    for source in _cells(path, "code"):
        assert not re.search(r"chip_from_device_name\([^)]*\)\)?\s*or\s+chip\(", source), path
        if "measure_seconds" in source or "do_bench" in source:
            # either this GPU's own row (bench.this_gpu) or an explicit None branch
            assert "this_gpu()" in source or re.search(r"is (not )?None", source), path.name


def test_chapter3_says_how_far_apart_the_measured_fractions_are():
    """R3 #16: 74 % and 91 % of their roofs are not "a similar fraction"."""
    h = chip("H100-SXM")
    gemm = measurements.find("bf16 matmul, Llama-70B", "H100-SXM").fraction_of(
        h.peak_flops("bf16")
    )
    copy = measurements.find("HBM copy, read + write", "H100-SXM").fraction_of(h.hbm_bandwidth)
    assert abs(gemm - copy) > 0.1
    text = _text(CH3) + " ".join(_cells(CH3, "code"))
    assert "similar fraction" not in text
    assert "p3_scaled_share" in text


def test_chapter3_non_matmul_rows_are_memory_bound_under_the_cuda_core_roof():
    """R3 #11: the layer table's softmax/GELU/layernorm run on the CUDA cores."""
    text = _text(CH3)
    assert "p3_vector_ridge" in text
    assert chip("H100-SXM").ridge_point("bf16", tensor_cores=False) < chip("H100-SXM").ridge_point(
        "bf16"
    )


def test_fusion_byte_model_states_its_l2_and_launch_assumptions():
    """R3 #15: the byte ratio is the speed-up only beyond L2 and above launch overhead."""
    n = 2**26  # 3.2's size
    assert n * 4 > 2 * max(chip(c).l2_bytes for c in ("T4", "A100-80GB", "H100-SXM", "B200"))
    # lab 2's old 2**24 fp32 tensors (64 MiB) would not have been: half a B200's L2
    assert chip("B200").l2_bytes > 2**24 * 4
    text = _text(CH3_2)
    assert "L2" in text and "launch" in text
    assert "whatever the chip." not in text


def test_fusion_prices_sin_and_cos_against_its_own_measurement():
    """R3 #7: 3.2 counts sin and cos as one FLOP; 3.5 counts libdevice's FMAs. 3.2's H100
    measurement bounds the executed cost, and the page says so and points to 3.5."""
    run = measurements.course_kernel("sin2cos2 fused vs unfused(torch)")
    n = 2**26
    max_flops = chip("H100-SXM").peak_flops("fp32") * run.seconds / n
    assert FLOPS_PER_ELEMENT < max_flops < 2 * 144 + 3  # 3.5's listing count would not fit
    assert sin2cos2_cost(n).flops == FLOPS_PER_ELEMENT * n
    text = _text(CH3_2)
    assert "03_5_control_divergence" in text and "a5_per_call" in text


def test_triton_tutorial_gpu_is_called_inferred():
    """R3 #14: the Triton docs do not name their GPU; the pages must not say they do."""
    va = measurements.find("Triton vector add", "A100-80GB")
    assert va.value > chip("A100-40GB").hbm_bandwidth  # the inference the pages state
    assert "inference" in _text(CH2)
    assert "inferred" in " ".join(_cells(CH3_2, "code"))


def _ridge_table_chips() -> list[str]:
    source = next(s for s in _cells(CH2, "code") if s.startswith("RIDGE_CHIPS = ["))
    namespace: dict = {}
    exec(source.split("rows = []")[0], namespace)
    return namespace["RIDGE_CHIPS"]


def test_chapter2_ridge_table_offers_the_2026_chips_and_the_explorer_does_too():
    """R3 #17: the table stopped at the HGX B200 and left out the H200, the clearest case of a
    falling ridge."""
    from gpuperf.widgets.roofline import EXPLORER_CHIPS

    names = _ridge_table_chips()
    for name in ("H200", "B200", "GB200", "B300", "MI300X", "MI355X"):
        assert name in names and name in EXPLORER_CHIPS, name
    # the prose's claim: not ordered by age (T4 2018 > A100 2020; H200, B200 < H100)
    assert chip("T4").ridge_point("fp16") > chip("A100-80GB").ridge_point("bf16")
    for name in ("H200", "B200"):
        assert chip(name).ridge_point("bf16") < chip("H100-SXM").ridge_point("bf16")


def test_chapter2_places_non_matmul_work_under_the_cuda_core_roof():
    """R3 #11: a dot product runs on the CUDA cores; its ridge there is several times lower."""
    h = chip("H100-SXM")
    assert h.ridge_point("bf16") / h.ridge_point("bf16", tensor_cores=False) > 5
    text = _text(CH2)
    assert "CUDA cores" in text and "r2_ridge_h100_cuda" in text
    assert "a peak it could never use" in text


def test_chapter2_log_log_bandwidth_roof_shifts_rather_than_steepens():
    """R3 #12: on log-log axes more bandwidth moves the slope-1 roof up, never steeper."""
    assert "steeper" not in _text(CH2)


def test_chapter2_critical_batch_approximation_is_stated_where_it_holds():
    """R3 #13: at B = 16 Ki, D = F = 8192 the intensity is 3,277, not about B."""
    from gpuperf import cost

    i = cost.matmul(16384, 8192, 8192, "bf16").intensity
    assert i == pytest.approx(3276.8) and i < 16384 / 4
    text = _text(CH2)
    assert "so the approximation holds" not in text
    assert "r2_i_16k" in text


def test_fusion_page_prices_launches_with_the_serving_model():
    """R3 #20 / issue 37: fusion's second benefit. Small chains are launch-bound and fusion then
    gains the kernel count; large ones gain the byte ratio; a CUDA graph keeps the gaps."""
    from gpuperf import roofline, serving

    h = chip("H100-SXM")
    per_op = measurements.find("PyTorch eager time per operation").value

    def steps(n):
        unfused = roofline.time_bounds(sin2cos2_cost(n, fused=False), h, "fp32").lower_s
        fused = roofline.time_bounds(sin2cos2_cost(n), h, "fp32").lower_s
        return serving.launch_bound_step(unfused, 5, per_op), serving.launch_bound_step(
            fused, 1, per_op
        )

    eager, fused = steps(2**12)
    assert eager.cpu_bound and eager.eager_s / fused.eager_s == pytest.approx(5)
    assert eager.graph_s == pytest.approx(5 * serving.GRAPH_GAP_S_PER_KERNEL, rel=0.05)
    eager, fused = steps(2**26)
    byte_ratio = sin2cos2_cost(1, fused=False).bytes / sin2cos2_cost(1).bytes
    assert eager.eager_s / fused.eager_s == pytest.approx(byte_ratio, rel=0.01)
    text = _text(CH3_2)
    assert "(launches)=" in text and 'mode="reduce-overhead"' in text
    assert "launch_bound_step" in text and "{cite}`CUDAGRAPHS`" in text
    assert "a8_reduce" in text and "a9_saving" in text  # the worked problems' hidden answers
