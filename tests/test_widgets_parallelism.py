"""Section 1.1 explorer (warps per SM needed by Little's law)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from gpuperf import chip, parallelism
from gpuperf.widgets import parallelism as wp


@pytest.fixture(scope="module")
def explorer():
    return wp.parallelism_explorer()


def test_default_latency_is_the_measurement(explorer):
    measured = parallelism.dram_latency("H100-SXM")
    assert explorer.controls["latency_ns"].value == pytest.approx(measured.value * 1e9)
    assert "19 warps per SM" in explorer.status.value


def test_artists_are_the_calculators(explorer):
    status = explorer.step(chip_name="H100-SXM", latency_ns=375.0, bytes_per_load=4,
                           loads_in_flight=1)  # fmt: skip
    view = explorer.view
    ref = parallelism.memory_parallelism("H100-SXM", 375e-9, 4, 1)
    assert view.last == ref
    x, y = view.curve.get_data()
    assert x[-1] == ref.max_warps_per_sm
    expected = parallelism.achievable_bandwidth("H100-SXM", 375e-9, x, 4, 1)
    np.testing.assert_allclose(y, 100 * expected / chip("H100-SXM").hbm_bandwidth)
    assert view.needed.get_xdata()[0] == ref.warps_needed_per_sm == 75
    assert view.limit.get_xdata()[0] == 64
    assert view.point.get_ydata()[0] == pytest.approx(100 * ref.max_bandwidth_fraction)
    assert "not feasible" in status and "2 loads in flight" in status
    status = explorer.step(loads_in_flight=2)
    assert "feasible at" in status and "not" not in status
    assert view.point.get_ydata()[0] == 100


def test_limit_moves_with_the_chip(explorer):
    explorer.step(chip_name="T4")
    assert explorer.view.limit.get_xdata()[0] == chip("T4").max_threads_per_sm // 32
    explorer.step(chip_name="h100")  # an alias selects the canonical option
    assert explorer.controls["chip_name"].value == "H100-SXM"


def test_curve_never_exceeds_the_peak(explorer):
    for width in parallelism.LOAD_WIDTHS_BYTES:
        explorer.step(bytes_per_load=width, loads_in_flight=8, latency_ns=50.0)
        assert np.all(explorer.view.curve.get_ydata() <= 100 + 1e-9)


def test_bad_values_name_the_control():
    with pytest.raises(ValueError, match="chip_name='TPU-v5e' is not an option"):
        wp.parallelism_explorer(chip_name="TPU-v5e")
    with pytest.raises(ValueError, match="bytes_per_load=3 is not an option"):
        wp.parallelism_explorer(bytes_per_load=3)
    with pytest.raises(ValueError, match=r"loads_in_flight=9 must be an integer in \[1, 8\]"):
        wp.parallelism_explorer(loads_in_flight=9)
    with pytest.raises(ValueError, match=r"latency_ns=1 must be a number in \[50, 2000\]"):
        wp.parallelism_explorer(latency_ns=1)


def test_chip_without_a_measured_latency_starts_from_the_h100s():
    explorer = wp.parallelism_explorer(chip_name="B200")
    assert explorer.controls["latency_ns"].value == pytest.approx(
        parallelism.dram_latency("H100-SXM").value * 1e9
    )


def test_steps_blit(explorer, needless_full_redraws):
    steps = [{"latency_ns": float(latency)} for latency in np.linspace(100, 1500, 12)]
    assert needless_full_redraws(explorer, steps) == []


def test_the_static_curve_keeps_exactly_the_bends_and_the_ends():
    """The static figure stores a curve by its corners: a rise sampled at many collinear points
    then a flat top keeps the start, the bend and the end, nothing else; fewer than three points
    are kept as they are; two lines of different lengths are refused."""
    xs = np.linspace(0, 64, 129)
    ys = np.minimum(xs * 2.5, 100.0)  # bends at x = 40
    assert wp._corners(xs, ys) == [(0.0, 0.0), (40.0, 100.0), (64.0, 100.0)]
    assert wp._corners(xs, xs) == [(0.0, 0.0), (64.0, 64.0)]  # a straight line: its ends
    assert wp._corners([1.0, 2.0], [3.0, 4.0]) == [(1.0, 3.0), (2.0, 4.0)]
    assert wp._corners([], []) == []
    with pytest.raises(ValueError, match="equally long"):
        wp._corners([0.0, 1.0, 2.0], [0.0, 1.0])
