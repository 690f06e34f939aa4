"""Chapters 1–2 explorers: each slider step puts the calculator's value on the figure.

The widgets are driven as a reader would (``Explorer.step``); every assertion compares what is
plotted with an independent call to the calculators in :mod:`gpuperf.roofline`/:mod:`gpuperf.cost`.
"""

from __future__ import annotations

import html
import io
import itertools
import math

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from gpuperf import chip, cost, plots
from gpuperf.measurements import find
from gpuperf.roofline import attainable_flops, critical_batch_size, time_bounds
from gpuperf.widgets import (
    hardware_explorer,
    mfu_calculator,
    roofline_explorer,
)
from gpuperf.widgets import roofline as rw


@pytest.fixture(scope="module")
def roofline_widget():
    return roofline_explorer()


@pytest.fixture(scope="module")
def hardware_widget():
    return hardware_explorer()


@pytest.fixture(scope="module")
def mfu_widget():
    return mfu_calculator()


def _text(explorer):
    """The status line as the reader sees it (tags stripped, entities decoded)."""
    return html.unescape(explorer.status.value.replace("<b>", "").replace("</b>", ""))


def _point(panel):
    return float(panel.point.get_xdata()[0]), float(panel.point.get_ydata()[0])


# --- roofline explorer ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chip_name", "precision", "op", "tokens", "width"),
    [
        ("H100-SXM", "bf16", "matmul", 1, 8192),
        ("H100-SXM", "bf16", "matmul", 4096, 8192),
        ("TPU-v5e", "int8", "matmul", 256, 4096),
        ("B200", "fp4", "matmul", 64, 16384),
        ("T4", "fp16", "elementwise", 1024, 4096),
        ("A100-80GB", "fp32", "elementwise", 16, 512),
        ("H100-SXM", "bf16", "attention", 8192, 4096),
        ("L4", "fp8", "attention", 1, 512),
    ],
)
def test_roofline_point_is_the_calculators_value(
    roofline_widget, chip_name, precision, op, tokens, width
):
    roofline_widget.step(chip_name=chip_name, precision=precision, op=op, tokens=tokens)
    roofline_widget.step(width=width)
    if op == "matmul":
        expected_op = cost.matmul(tokens, width, width, precision)
    elif op == "elementwise":
        expected_op = cost.elementwise(tokens * width, precision)
    else:
        expected_op = cost.attention(1, width // 128, tokens, 128, precision)
    bounds = time_bounds(expected_op, chip_name, precision)
    view = roofline_widget.view
    x, y = _point(view.roofline)
    assert x == pytest.approx(bounds.intensity, rel=1e-12)
    assert y == pytest.approx(bounds.attainable_flops_per_s, rel=1e-12)
    # The point sits on the roof drawn for that chip and precision.
    assert y == pytest.approx(attainable_flops(x, chip_name, precision), rel=1e-12)
    roof_x, roof_y = view.roofline.roof.get_data()
    assert np.allclose(roof_y, attainable_flops(roof_x, chip_name, precision))
    # T_math / T_comms bars are the two times scaled to the larger one.
    math_bar, comms_bar = view.bars.bars
    assert math_bar.get_width() == pytest.approx(bounds.t_math_s / bounds.lower_s)
    assert comms_bar.get_width() == pytest.approx(bounds.t_comms_s / bounds.lower_s)
    status = _text(roofline_widget)
    assert f"{bounds.bound}-bound" in status
    assert f"{bounds.intensity:.3g} FLOP/byte" in status


def test_batch_slider_moves_the_point_up_the_roof(roofline_widget):
    roofline_widget.step(chip_name="H100-SXM", precision="bf16", op="matmul", width=8192)
    xs, ys, bounds = [], [], []
    for tokens in rw.TOKENS:
        roofline_widget.step(tokens=tokens)
        x, y = _point(roofline_widget.view.roofline)
        xs.append(x)
        ys.append(y)
        bounds.append(roofline_widget.view.bounds.bound)
    assert all(b > a for a, b in itertools.pairwise(xs)), "intensity grows with B"
    assert all(b >= a for a, b in itertools.pairwise(ys)), "FLOP/s never falls"
    assert bounds[0] == "memory" and bounds[-1] == "compute"
    # The switch happens exactly at the calculator's critical batch.
    critical = critical_batch_size("H100-SXM", "bf16", d=8192, f=8192)
    for tokens, bound in zip(rw.TOKENS, bounds, strict=True):
        assert bound == ("compute" if tokens >= critical else "memory")
    roofline_widget.step(tokens=64)
    assert f"Compute-bound once B > {critical:.0f}" in _text(roofline_widget)


def test_missing_precision_is_said_not_plotted(roofline_widget):
    status = roofline_widget.step(chip_name="T4", precision="bf16")
    assert "T4 has no bf16 rate" in status
    assert len(roofline_widget.view.roofline.point.get_xdata()) == 0
    assert len(roofline_widget.view.roofline.roof.get_xdata()) == 0
    assert roofline_widget.view.bounds is None
    roofline_widget.step(chip_name="H100-SXM")
    assert len(roofline_widget.view.roofline.point.get_xdata()) == 1


def test_unknown_operation_names_the_valid_ones():
    with pytest.raises(ValueError, match="matmul, elementwise, attention"):
        rw._operation("conv", 1, 512, "bf16")


def test_each_step_changes_the_picture(roofline_widget):
    roofline_widget.step(chip_name="H100-SXM", precision="bf16", op="matmul", tokens=1)
    before = bytes(roofline_widget.live.png)
    roofline_widget.step(tokens=4096)
    assert bytes(roofline_widget.live.png) != before
    roofline_widget.step(tokens=1)
    assert bytes(roofline_widget.live.png) == before


# --- the chips the explorers offer (issue 34 items 3 and 8) -----------------------------------


def test_explorers_offer_the_2026_parts_where_the_choice_matters(
    roofline_widget, hardware_widget, mfu_widget
):
    new = {"GB200", "B300", "GB300", "MI300X", "MI355X"}
    lookup_only = {"H100-NVL", "H200-NVL", "A100-80GB-PCIe", "L40S", "GH200", "RTX-5090"}
    for explorer in (roofline_widget, hardware_widget, mfu_widget):
        offered = {value for _, value in explorer.controls["chip_name"].options}
        assert new <= offered and not offered & lookup_only
        assert offered <= set(rw.EXPLORER_CHIPS)
    # every offered chip is a row; the roofline explorer offers fp6 for the parts that have it
    assert all(chip(name).name == name for name in rw.EXPLORER_CHIPS)
    assert "fp6" in {v for _, v in roofline_widget.controls["precision"].options}


@pytest.mark.parametrize(
    ("chip_name", "precision"),
    [("GB200", "fp6"), ("B300", "fp4"), ("GB300", "bf16"), ("MI300X", "fp8"), ("MI355X", "fp4")],
)
def test_new_chips_sit_on_their_own_roof(roofline_widget, chip_name, precision):
    roofline_widget.step(chip_name=chip_name, precision=precision, op="matmul", tokens=4096)
    roofline_widget.step(width=8192)
    bounds = time_bounds(cost.matmul(4096, 8192, 8192, precision), chip_name, precision)
    assert roofline_widget.view.bounds == bounds
    assert f"vs ridge point {chip(chip_name).ridge_point(precision):.3g}" in _text(roofline_widget)


def test_relu_is_placed_against_the_non_tensor_roof_too(roofline_widget):
    # R3 finding 11: non-matmul work runs on the CUDA cores (H100 bf16 133.8 TFLOP/s).
    roofline_widget.step(chip_name="H100-SXM", precision="bf16", op="elementwise", tokens=1024)
    roofline_widget.step(width=4096)
    ridge = chip("H100-SXM").ridge_point("bf16", tensor_cores=False)
    text = _text(roofline_widget)
    assert f"their bf16 peak is 134 TFLOP/s, ridge {ridge:.3g} FLOP/byte" in text
    assert "memory-bound against that roof too" in text
    roofline_widget.step(chip_name="B200")
    assert "no sourced non-tensor bf16 rate for the B200" in _text(roofline_widget)


def test_hardware_explorer_gives_the_boxs_memory_and_the_devices(hardware_widget):
    hardware_widget.step(chip_name="H100-SXM", precision="bf16")
    assert "80 GB HBM3 (81,559 MiB as nvidia-smi reports it)" in _text(hardware_widget)
    hardware_widget.step(chip_name="MI300X")
    assert "192 GB HBM3 (192 GiB as the vendor's table lists it)" in _text(hardware_widget)


# --- hardware explorer -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chip_name", "precision"),
    [("H100-SXM", "bf16"), ("T4", "fp16"), ("B200", "fp4"), ("TPU-v5e", "bf16"), ("V100", "fp64")],
)
def test_hardware_explorer_marks_the_ridge_point(hardware_widget, chip_name, precision):
    status = hardware_widget.step(chip_name=chip_name, precision=precision)
    the_chip = chip(chip_name)
    x, y = _point(hardware_widget.view.roofline)
    assert x == pytest.approx(the_chip.ridge_point(precision), rel=1e-12)
    assert y == pytest.approx(the_chip.peak_flops(precision), rel=1e-12)
    assert f"Ridge point {the_chip.ridge_point(precision):.3g} FLOP/byte" in status
    # One bar per precision; the chip's peaks, and nothing for precisions it lacks.
    peaks = hardware_widget.view.peaks
    for p, bar in zip(peaks.precisions, peaks.bars, strict=True):
        top = bar.get_y() + bar.get_height()
        if p in the_chip.precisions:
            assert top == pytest.approx(the_chip.peak_flops(p))
        else:
            assert bar.get_height() == 0


def test_hardware_explorer_without_the_precision(hardware_widget):
    status = hardware_widget.step(chip_name="A100-80GB", precision="fp8")
    assert "A100-80GB has no fp8 rate" in status
    assert hardware_widget.view.ridge is None


# --- MFU calculator ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chip_name", "n_params", "tokens_per_s"),
    [("H100-SXM", 405e9, 170.0), ("A100-80GB", 8e9, 3000.0), ("B200", 70e9, 10**4.5)],
)
def test_mfu_bar_is_the_calculators_value(mfu_widget, chip_name, n_params, tokens_per_s):
    mfu_widget.step(chip_name=chip_name, n_params=n_params, tokens_per_s=tokens_per_s)
    rate = mfu_widget.controls["tokens_per_s"].value  # the slider snaps to its step
    expected = cost.training_mfu(rate, n_params, chip_name, "bf16").mfu
    assert mfu_widget.view.mfu == pytest.approx(expected, rel=1e-12)
    assert mfu_widget.view.bar.get_width() == pytest.approx(min(expected, 1.0))
    assert f"MFU {expected:.1%}" in _text(mfu_widget)


def test_llama3_throughput_gives_its_published_mfu(mfu_widget):
    # 400 TFLOP/s per H100 is Llama 3 405B's 41 %: 400e12 / (6 × 405e9) tokens/s per GPU.
    mfu_widget.step(chip_name="H100-SXM", n_params=405e9, tokens_per_s=400e12 / (6 * 405e9))
    rate = mfu_widget.controls["tokens_per_s"].value
    reported = find("Llama 3 405B training MFU").value
    assert mfu_widget.view.mfu == pytest.approx(reported, abs=0.02)
    assert rate == pytest.approx(400e12 / (6 * 405e9), rel=0.06)


def test_impossible_mfu_is_flagged(mfu_widget):
    mfu_widget.step(chip_name="H100-SXM", n_params=405e9, tokens_per_s=1e5)
    assert mfu_widget.view.mfu > 1
    assert "impossible" in _text(mfu_widget)
    assert mfu_widget.view.bar.get_width() == 1.0


# --- controls work on ipywidgets 7.7 and 8 -----------------------------------------------------


def test_controls_use_only_7x_compatible_widgets(roofline_widget, hardware_widget, mfu_widget):
    allowed = {"Dropdown", "SelectionSlider", "FloatLogSlider", "ToggleButtons", "IntSlider"}
    for explorer in (roofline_widget, hardware_widget, mfu_widget):
        for control in explorer.controls.values():
            assert type(control).__name__ in allowed
            options = getattr(control, "_options_full", None) or getattr(control, "options", ())
            assert not isinstance(options, dict), "dict options raise on ipywidgets 8"


# --- plots -------------------------------------------------------------------------------------


def test_fast_png_round_trips_the_canvas():
    from PIL import Image

    explorer = roofline_explorer(tokens=512)
    pixels = np.asarray(explorer.view.figure.canvas.buffer_rgba())
    decoded = np.asarray(Image.open(io.BytesIO(explorer.live.png)).convert("RGBA"))
    assert decoded.shape == pixels.shape
    assert np.array_equal(decoded, pixels)


@pytest.mark.parametrize(
    "name",
    ["A100-80GB", "A100-40GB", "A100-80GB-PCIe", "H100-SXM", "H100-PCIe", "H100-NVL", "GH200",
     "H200", "H200-NVL"],
)  # fmt: skip
def test_the_chip_diagram_draws_every_sm_of_the_die(name):
    figure = plots.chip_diagram(name)
    chip_axes = figure.axes[0]
    title = chip_axes.get_title().replace("\n", " ")
    enabled, die_sms = (int(n) for n in title.split(": ")[-1].split(" SMs")[0].split(" of "))
    assert enabled == chip(name).sm_count
    hatched = [p for p in chip_axes.patches if p.get_hatch()]
    assert len(hatched) == die_sms - chip(name).sm_count


def test_the_sm_diagram_shows_one_partition_of_the_chip():
    words = [t.get_text() for t in plots.sm_diagram("H100-SXM").axes[0].texts]
    regs = chip("H100-SXM").registers_per_sm // plots._SM_PARTITIONS
    assert f"register file: {regs:,} × 32 bit" in words
    assert "FP32\n×32" in words and "one of 4 identical partitions" in words


@pytest.mark.parametrize("draw", [plots.chip_diagram, plots.sm_diagram])
def test_anatomy_refuses_chips_without_a_layout(draw):
    drawable = "A100-40GB, A100-80GB, A100-80GB-PCIe, H100-SXM, H100-PCIe, H100-NVL, GH200"
    with pytest.raises(ValueError, match=f"drawable chips: {drawable}, H200, H200-NVL$"):
        draw("T4")
    with pytest.raises(ValueError, match="no die layout for MI300X"):
        draw("MI300X")


def test_static_roofline_figures():
    assert plots.compute_vs_bandwidth().axes
    figure = plots.roofline_bandwidths(
        "H100",
        "bf16",
        {"HBM": chip("H100").hbm_bandwidth, "PCIe": chip("H100").host_link_bandwidth},
    )
    assert len(figure.axes[0].lines) == 2
    with pytest.raises(ValueError, match="exactly two"):
        plots.roofline_bandwidths("H100", "bf16", {"HBM": 1e12})
    figure = plots.batch_roofline("TPU-v5e", [4096, 1024], weight_precision="int8")
    assert len([line for line in figure.axes[0].lines if line.get_linestyle() == "-"]) == 2
    figure = plots.achieved_roofline("H100", "bf16", {"matmul": (1000.0, 7e14)})
    assert figure.axes


def test_bound_in_words():
    memory = time_bounds(cost.dot(10**6), "H100", "bf16")
    assert plots._bound_in_words(memory).startswith("memory-bound: T_comms = ")
    compute = time_bounds(cost.matmul(8192, 8192, 8192), "H100", "bf16")
    assert plots._bound_in_words(compute).startswith("compute-bound: T_math = ")
    assert not math.isnan(compute.intensity)


@pytest.mark.parametrize(
    ("build", "control", "shown"),
    [
        (lambda: roofline_explorer(tokens=100), "tokens", "options: 1, 2, 4, 8"),
        (lambda: roofline_explorer(precision="FP16"), "precision", "'fp16'"),
        (lambda: roofline_explorer(op="conv"), "op", "'matmul', 'elementwise', 'attention'"),
        (lambda: rw.mfu_calculator(chip_name="T4"), "chip_name", "'H100-SXM'"),
        (lambda: rw.hardware_explorer(chip_name="T5"), "chip_name", "'T4'"),
        (lambda: rw.mfu_calculator(tokens_per_s=1e9), "tokens_per_s", "must be a number in"),
    ],
)
def test_constructors_name_the_control_and_its_options(build, control, shown):
    with pytest.raises(ValueError, match=f"{control}=") as error:
        build()
    assert f"'{control}' control" in str(error.value)
    assert shown in str(error.value)


def test_step_names_the_control_and_keeps_the_state(roofline_widget):
    before = roofline_widget.values()
    with pytest.raises(ValueError, match=r"tokens=100 is not an option of the 'tokens' control"):
        roofline_widget.step(tokens=100)
    with pytest.raises(ValueError, match=r"op=True is not an option of the 'op' control"):
        roofline_widget.step(op=True)
    assert roofline_widget.values() == before
