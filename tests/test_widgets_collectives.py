"""Chapter 5.2 explorer (collective × ranks × size × link × α) and its static twin."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from gpuperf import collectives, measurements
from gpuperf.widgets import collectives as wc


@pytest.fixture(scope="module")
def explorer():
    return wc.collective_explorer()


def test_default_alpha_is_derived_from_the_measured_node_latency():
    t0 = measurements.find("all-reduce latency, one node").value
    assert wc.default_step_latency_s() == pytest.approx(t0 / 14)


def test_points_and_bars_are_the_calculators(explorer):
    link = collectives.links()[2]
    status = explorer.step(collective="all-reduce", ranks=64, n_bytes=1e7, link=2, alpha_us=2.0)
    view = explorer.view
    ring = collectives.collective_time("all-reduce", 1e7, 64, link.bandwidth, 2e-6)
    tree = collectives.collective_time("all-reduce", 1e7, 64, link.bandwidth, 2e-6, "tree")
    assert view.point.get_ydata()[0] == pytest.approx(ring.time_s)
    assert view.tree_point.get_ydata()[0] == pytest.approx(tree.time_s)
    assert view.half.get_xdata()[0] == pytest.approx(64 * 2e-6 * link.bandwidth)
    assert view.cross.get_xdata()[0] == pytest.approx(
        collectives.ring_tree_crossover_bytes(64, link.bandwidth, 2e-6)
    )
    assert view.latency_bar.get_width() == pytest.approx(ring.latency_s / ring.time_s)
    assert view.bytes_bar.get_width() == pytest.approx(ring.bandwidth_s / ring.time_s)
    assert "126 steps" in status and "tree is faster" in status
    # the curves are the calculator at every plotted size
    curve = view.ring.get_ydata()
    for i in (0, 80, -1):
        s = view.sizes[i]
        expected = collectives.collective_time("all-reduce", s, 64, link.bandwidth, 2e-6).time_s
        assert curve[i] == pytest.approx(expected)
    assert "ring is faster" in explorer.step(n_bytes=1e11)


def test_tree_hidden_for_gather_and_scatter(explorer):
    status = explorer.step(collective="all-gather", ranks=8, n_bytes=1e6, link=0, alpha_us=1.0)
    assert len(explorer.view.tree.get_xdata()) == 0
    assert len(explorer.view.tree_point.get_xdata()) == 0
    assert "tree" not in status and "7 steps" in status
    explorer.step(collective="all-reduce", ranks=2)
    assert len(explorer.view.cross.get_xdata()) == 0  # p = 2: the ring is never slower


def test_curves_are_monotone_and_above_the_floor(explorer):
    explorer.step(collective="all-reduce", ranks=256, link=0, alpha_us=1.0)
    ring, tree = explorer.view.ring.get_ydata(), explorer.view.tree.get_ydata()
    assert np.all(np.diff(ring) > 0) and np.all(np.diff(tree) > 0)
    assert ring[0] == pytest.approx(2 * 255 * 1e-6, rel=1e-3)
    assert tree[0] == pytest.approx(2 * 8 * 1e-6, rel=1e-3)


def test_bad_controls_are_named():
    with pytest.raises(ValueError, match="ranks=3 is not an option of the 'ranks' control"):
        wc.collective_explorer(ranks=3)
    with pytest.raises(ValueError, match="collective='all-to-all' is not an option"):
        wc.collective_explorer(collective="all-to-all")
    with pytest.raises(ValueError, match=r"n_bytes=10 must be a number in \[1000, 1e\+11\]"):
        wc.collective_explorer(n_bytes=10)
    with pytest.raises(ValueError, match="link=7 is not an option"):
        wc.collective_explorer(link=7)


def test_steps_blit(explorer, needless_full_redraws):
    assert needless_full_redraws(explorer, [{"ranks": ranks} for ranks in wc.RANKS]) == []
