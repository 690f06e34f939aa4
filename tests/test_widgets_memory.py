"""Chapter 5 explorer (transfer size → effective bandwidth) and the chapter 5 figures."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from gpuperf import measurements, memory
from gpuperf.units import GB
from gpuperf.widgets import memory as wm


@pytest.fixture(scope="module")
def explorer():
    return wm.transfer_explorer()


def test_presets_are_measured_pairs():
    links = wm.presets()
    assert len(links) == 4
    for link in links:
        assert link.latency.unit == "s" and link.bandwidth.unit == "B/s"
        assert link.latency in measurements.MEASUREMENTS
        assert link.bandwidth in measurements.MEASUREMENTS
    pcie = links[0]
    assert pcie.bandwidth_bytes_per_s == pytest.approx(14.2 * GB)
    assert pcie.latency_s == pytest.approx(1.4e-6)


def test_point_and_bars_are_the_calculators(explorer):
    status = explorer.step(n_bytes=1e4, latency_us=1.4, bandwidth_gb_s=14.2)
    view = explorer.view
    expected = memory.effective_bandwidth(1e4, 14.2 * GB, 1.4e-6)
    assert view.point.get_xdata()[0] == 1e4
    assert view.point.get_ydata()[0] == pytest.approx(expected / GB)
    time_s = memory.transfer_time(1e4, 14.2 * GB, 1.4e-6)
    assert view.latency_bar.get_width() == pytest.approx(1.4e-6 / time_s)
    assert view.bytes_bar.get_width() == pytest.approx(1 - 1.4e-6 / time_s)
    half = memory.half_bandwidth_size(14.2 * GB, 1.4e-6)
    assert view.half.get_xdata()[0] == pytest.approx(half)
    assert "latency-bound" in status
    assert "bandwidth-bound" in explorer.step(n_bytes=1e8)


def test_curve_never_exceeds_the_peak(explorer):
    explorer.step(latency_us=10, bandwidth_gb_s=100)
    y = explorer.view.curve.get_ydata()
    assert np.all(y < 100) and np.all(np.diff(y) > 0)


def test_preset_sets_both_sliders(explorer):
    links = wm.presets()
    explorer.preset.value = 2
    assert explorer.controls["latency_us"].value == pytest.approx(links[2].latency_s * 1e6)
    assert explorer.controls["bandwidth_gb_s"].value == pytest.approx(
        links[2].bandwidth_bytes_per_s / GB, rel=1e-3
    )
    explorer.preset.value = 0


def test_bad_preset_is_rejected():
    with pytest.raises(
        ValueError, match="preset=9 is not an option of the 'preset' control; options: 0, 1, 2, 3"
    ):
        wm.transfer_explorer(preset=9)
    with pytest.raises(ValueError, match="preset=True is not an option"):
        wm.transfer_explorer(preset=True)
    with pytest.raises(ValueError, match=r"n_bytes=10 must be a number in \[100, 1e\+10\]"):
        wm.transfer_explorer(n_bytes=10)


def test_steps_blit(explorer, needless_full_redraws):
    steps = [{"n_bytes": 10**exponent} for exponent in np.arange(2, 10.01, 0.5)]
    assert needless_full_redraws(explorer, steps) == []


def test_ladder_and_link_figures():
    from gpuperf import plots

    levels = memory.bandwidth_ladder("H100-SXM")
    hbm = levels[3].name
    fig = plots.memory_ladder(levels, {hbm: [measurements.find("HBM copy, read + write")]})
    assert fig.axes[0].get_xscale() == "log"
    with pytest.raises(ValueError, match="are not levels"):
        plots.memory_ladder(levels, {"DRAM": []})
    rows = [("CPU → GPU", measurements.find("CPU → GPU copy"), 15.75 * GB)]
    assert plots.link_bandwidths(rows).axes[0].get_xscale() == "log"
    fig = plots.effective_bandwidth_curves({"PCIe": (14.2 * GB, 1.4e-6)}, latency_bound_below=1e6)
    (curve, *_) = fig.axes[0].get_lines()
    assert max(curve.get_ydata()) < 14.2 * GB


def test_allreduce_presets_move_messages_at_the_algorithm_bandwidth():
    # NCCL: busbw = algbw · 2(p − 1)/p. The 8-GPU preset's 480 GB/s bus rate moves a message at
    # 480 · 8/14 ≈ 274 GB/s, so t₀ · algbw (chapter 5: 3.54 MB) is about half of t₀ · busbw.
    by_label = {link.label: link for link in wm.presets()}
    node = by_label["all-reduce, 8 H100 in one node"]
    nodes = by_label["all-reduce, 16 H100 nodes"]
    assert (node.ranks, nodes.ranks) == (8, 128)
    assert node.measured_bandwidth_bytes_per_s == node.bandwidth.value
    assert node.bandwidth_bytes_per_s == pytest.approx(node.bandwidth.value * 8 / 14)
    assert nodes.bandwidth_bytes_per_s == pytest.approx(nodes.bandwidth.value * 128 / 254)
    assert memory.half_bandwidth_size(node.bandwidth_bytes_per_s, node.latency_s) == (
        pytest.approx(3.54e6, rel=0.005)
    )
    assert memory.half_bandwidth_size(nodes.bandwidth_bytes_per_s, nodes.latency_s) == (
        pytest.approx(39.7e6, rel=0.005)
    )
    for link in wm.presets():
        if link.ranks is None:
            assert link.bandwidth_bytes_per_s == link.measured_bandwidth_bytes_per_s


def test_view_uses_the_message_rate():
    view_text = wm._TransferView().update(
        n_bytes=1e6, latency_us=12.9, bandwidth_gb_s=wm.presets()[1].bandwidth_bytes_per_s / GB
    )
    assert "half the peak needs 3.54 MB" in view_text


def test_hbm_preset_pairs_two_measurements_of_one_card_below_its_datasheet():
    # Issue 34 (R4): the preset paired the 80 GB card's latency with FastIceFlo's 1.65 TB/s on a
    # 40 GB card, above that card's 1.555 TB/s datasheet. Every preset's two numbers now come
    # from one chip, and no bandwidth exceeds that chip's datasheet.
    from gpuperf.hardware import chip

    hbm = wm.presets()[3]
    assert hbm.latency.chip == hbm.bandwidth.chip == "A100-80GB" == hbm.label.split(", ")[1]
    assert hbm.bandwidth.source == "TRITON-VA"
    for link in wm.presets():
        assert link.latency.chip == link.bandwidth.chip
        if link.label.startswith("HBM"):
            assert link.bandwidth_bytes_per_s < chip(link.bandwidth.chip).hbm_bandwidth
    # short enough for a drop-down on a phone (the browser test measures it there)
    assert len(hbm.label) <= 36


def test_preset_ranks_are_checked():
    link = wm.presets()[1]
    with pytest.raises(ValueError, match="ranks=1"):
        wm.TransferPreset("x", link.latency, link.bandwidth, ranks=1)
