"""The online book's chapter 1 figures: every plotted value equals the calculator's.

:func:`gpuperf.widgets.roofline.hardware_static` and :func:`~gpuperf.widgets.roofline.mfu_static`
read their rows from the live views. These checks recompute the same numbers here from the chip
table (peak, bandwidth, ridge point) and the definition of MFU (6 N × tokens/s ÷ dense BF16
peak), reading the rows back from the compiled Vega spec the page ships.
"""

from __future__ import annotations

import pytest

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

from gpuperf.hardware import chip
from gpuperf.measurements import find, gemm_range
from gpuperf.units import PRECISIONS
from gpuperf.widgets import roofline as widget


@pytest.fixture(scope="module")
def hardware():
    return widget.hardware_static(colab="https://colab.example/chapters/01_gpu_anatomy.ipynb")


@pytest.fixture(scope="module")
def mfu():
    return widget.mfu_static()


# --- the hardware explorer ----------------------------------------------------------------------


def test_hardware_offers_the_live_explorers_controls(hardware):
    by_name = {c.name: c for c in hardware.controls}
    assert list(by_name) == ["chip_name", "precision"]
    assert by_name["chip_name"].values == widget.EXPLORER_CHIPS
    assert by_name["precision"].values == PRECISIONS
    assert hardware.kinds == {"chip_name": "dropdown", "precision": "dropdown"}


@pytest.mark.parametrize(
    ("chip_name", "precision"),
    [
        ("H100-SXM", "bf16"),
        ("A100-80GB", "fp32"),
        ("B200", "fp4"),
        ("T4", "fp16"),
        ("TPU-v5e", "bf16"),
        ("H200", "fp8"),
    ],
)
def test_hardware_roof_ridge_and_peaks_equal_the_table(hardware, chip_name, precision):
    the_chip = chip(chip_name)
    peak = the_chip.peak_flops(precision)
    bandwidth = the_chip.hbm_bandwidth
    ridge = peak / bandwidth
    low, high = widget.HARDWARE_INTENSITY_RANGE
    roof = hardware.rows("roof", chip_name=chip_name, precision=precision)
    assert [r["x"] for r in roof] == pytest.approx([low, min(max(ridge, low), high), high])
    for r in roof:
        assert r["y"] == pytest.approx(min(peak, bandwidth * r["x"]), rel=1e-9)
    (point,) = hardware.rows("ridge", chip_name=chip_name, precision=precision)
    assert point["x"] == pytest.approx(ridge, rel=1e-12)
    assert point["y"] == pytest.approx(peak, rel=1e-12)
    assert point["text"] == ""
    regions = {
        r["what"]: r for r in hardware.rows("regions", chip_name=chip_name, precision=precision)
    }
    assert regions["memory-bound"]["x1"] == pytest.approx(ridge)
    assert regions["compute-bound"]["x0"] == pytest.approx(ridge)
    bars = hardware.rows("peaks", chip_name=chip_name, precision=precision)
    assert [b["precision"] for b in bars] == list(PRECISIONS)
    for bar in bars:
        if bar["precision"] in the_chip.precisions:
            assert bar["peak"] == pytest.approx(the_chip.peak_flops(bar["precision"]), rel=1e-9)
        else:
            assert bar["peak"] is None and bar["label"] == "–"
        assert bar["selected"] == (bar["precision"] == precision)
    note = hardware.note(chip_name=chip_name, precision=precision)
    assert f"Ridge point {ridge:.3g} FLOP/byte" in note


def test_hardware_without_a_rate_says_so_and_draws_no_roof(hardware):
    assert "bf16" not in chip("T4").precisions
    assert hardware.rows("roof", chip_name="T4", precision="bf16") == []
    assert hardware.rows("regions", chip_name="T4", precision="bf16") == []
    (message,) = hardware.rows("ridge", chip_name="T4", precision="bf16")
    assert message == {"text": "T4 has no bf16 rate in the table"}
    assert hardware.note(chip_name="T4", precision="bf16").startswith("T4 has no bf16 rate")


def test_hardware_page_block_links_the_live_explorer(hardware):
    page = hardware.to_html()
    assert "https://colab.example/chapters/01_gpu_anatomy.ipynb" in page
    assert "Open the live explorer in Colab" in page


# --- the MFU calculator -------------------------------------------------------------------------


def test_mfu_offers_the_live_calculators_controls(mfu):
    by_name = {c.name: c for c in mfu.controls}
    assert list(by_name) == ["chip_name", "n_params", "tokens_per_s"]
    assert by_name["chip_name"].values == tuple(
        name for name in widget.EXPLORER_CHIPS if "bf16" in chip(name).precisions
    )
    assert by_name["n_params"].values == (1.7e9, 3e9, 8e9, 70e9, 405e9)
    grid = by_name["tokens_per_s"].values
    # the live FloatLogSlider runs from 10**1 to 10**5.5
    assert grid[0] == 10 and grid[-1] <= 10**5.5 and list(grid) == sorted(set(grid))
    assert 170 in grid and 1000 in grid
    assert mfu.kinds["tokens_per_s"] == "slider"


@pytest.mark.parametrize(
    ("chip_name", "n_params", "tokens_per_s"),
    [
        ("H100-SXM", 405e9, 170),
        ("H100-SXM", 70e9, 1000),
        ("A100-80GB", 8e9, 2500),
        ("B200", 1.7e9, 300_000),
        ("TPU-v5e", 3e9, 10),
        ("H100-SXM", 70e9, 100_000),
    ],
)
def test_mfu_bar_equals_six_n_tokens_over_the_dense_peak(mfu, chip_name, n_params, tokens_per_s):
    expected = 6 * n_params * tokens_per_s / chip(chip_name).peak_flops("bf16")
    (bar,) = mfu.rows("bar", chip_name=chip_name, n_params=n_params, tokens_per_s=tokens_per_s)
    assert bar["mfu"] == pytest.approx(expected, rel=1e-12)
    assert bar["shown"] == pytest.approx(min(expected, 1.0), rel=1e-12)
    assert bar["over"] == (expected > 1)
    assert bar["label"] == f"{expected:.1%}"
    assert chip(chip_name).name in bar["title"]
    note = mfu.note(chip_name=chip_name, n_params=n_params, tokens_per_s=tokens_per_s)
    assert note.endswith(f"MFU {expected:.1%}.") or "Above 100 %" in note


def test_mfu_reference_lines_and_band_are_the_published_measurements(mfu):
    lines = {r["label"]: r["mfu"] for r in mfu.rows("references")}
    assert lines == {label: find(quantity).value for label, quantity in widget.MFU_REFERENCES}
    (band,) = mfu.rows("band")
    peak = chip("H100-SXM").peak_flops("bf16")
    low, high = gemm_range("bf16")
    assert (band["low"], band["high"]) == pytest.approx((low / peak, high / peak))


def test_a_value_off_the_grid_is_refused_by_name(mfu):
    with pytest.raises(ValueError, match="tokens_per_s=171"):
        mfu.rows("bar", chip_name="H100-SXM", n_params=405e9, tokens_per_s=171)
    with pytest.raises(KeyError, match="NoSuchChip"):
        widget.hardware_static("NoSuchChip")
