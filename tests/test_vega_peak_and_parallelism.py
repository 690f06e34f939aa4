"""The online book's Little's-law figure (section 1.1): plotted values equal the calculator's.

:func:`gpuperf.widgets.parallelism.parallelism_static` reads its rows from the live view; these
checks recompute them here from :func:`gpuperf.parallelism.memory_parallelism` and
:func:`gpuperf.parallelism.achievable_bandwidth`, reading the rows back from the compiled Vega
spec the page ships.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

from gpuperf import parallelism
from gpuperf.hardware import chip
from gpuperf.widgets import parallelism as widget


@pytest.fixture(scope="module")
def little():
    return widget.parallelism_static()


def _drawn(corners, warps):
    """The stored polyline read as the browser draws it (straight between stored points)."""
    xs = [c["warps"] for c in corners]
    ys = [c["percent"] for c in corners]
    return float(np.interp(warps, xs, ys))


SAMPLES = [
    ("H100-SXM", 375, 16, 1),
    ("T4", 2000, 4, 1),
    ("A100-80GB", 404, 1, 8),
    ("B200", 50, 8, 3),
    ("RTX-4090", 750, 2, 5),
]


@pytest.mark.parametrize(("chip_name", "latency", "bytes_per_load", "ilp"), SAMPLES)
def test_little_curve_point_and_note_equal_the_calculator(
    little, chip_name, latency, bytes_per_load, ilp
):
    latency_ns = min(widget.static_latencies(), key=lambda ns: abs(ns - latency))
    assert abs(latency_ns - latency) < 1  # the grid holds the latency asked for
    values = dict(
        chip_name=chip_name,
        latency_ns=latency_ns,
        bytes_per_load=bytes_per_load,
        loads_in_flight=ilp,
    )
    the_chip = chip(chip_name)
    latency_s = latency_ns * 1e-9
    result = parallelism.memory_parallelism(the_chip, latency_s, bytes_per_load, ilp)
    limit = the_chip.max_threads_per_sm // 32
    # the curve, at every half warp up to the SM's limit
    corners = little.rows("curve", **values)
    assert corners[0]["warps"] == 0 and corners[-1]["warps"] == limit
    for warps in np.arange(0, limit + 0.25, 0.5):
        reach = parallelism.achievable_bandwidth(the_chip, latency_s, warps, bytes_per_load, ilp)
        assert _drawn(corners, warps) == pytest.approx(100 * reach / the_chip.hbm_bandwidth)
    (state,) = little.rows("state", **values)
    needed = result.warps_needed_per_sm
    assert state["needed"] == pytest.approx(min(needed, 1.5 * widget._MAX_WARPS))
    assert state["warps"] == min(needed, limit)
    expected_percent = 100 if needed <= limit else 100 * result.max_bandwidth_fraction
    assert state["percent"] == pytest.approx(expected_percent)
    assert f"{needed} warps needed, {limit} allowed" in state["label"]
    assert (little.rows("limit", chip_name=chip_name)[0]["warps"]) == limit
    note = little.note(**values)
    assert f"{bytes_per_load} B × {ilp} loads per thread: {needed} warps per SM" in note
    assert ("not feasible" in note) == (not result.feasible)


def test_little_offers_the_live_explorers_controls(little):
    pytest.importorskip("ipywidgets")
    live = widget.parallelism_explorer()
    by_name = {c.name: c for c in little.controls}
    assert list(by_name) == ["chip_name", "latency_ns", "bytes_per_load", "loads_in_flight"]
    assert by_name["chip_name"].values == tuple(v for _, v in live.controls["chip_name"].options)
    assert by_name["bytes_per_load"].values == tuple(live.controls["bytes_per_load"].options)
    ilp = live.controls["loads_in_flight"]
    assert by_name["loads_in_flight"].values == tuple(range(ilp.min, ilp.max + 1))
    latency = live.controls["latency_ns"]
    grid = by_name["latency_ns"].values
    assert min(grid) == latency.min and max(grid) == latency.max
    # the live explorer's default (the measured latency) is a notch of the static slider
    assert latency.value in grid
    assert by_name["latency_ns"].values[by_name["latency_ns"].initial] == latency.value


def test_little_refuses_a_latency_off_the_grid(little):
    with pytest.raises(ValueError, match="latency_ns=123 is not one of its values"):
        little.rows("state", chip_name="T4", latency_ns=123, bytes_per_load=4, loads_in_flight=1)
