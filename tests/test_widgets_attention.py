"""Chapter 4 explorers: the online-softmax step-through and attention on the roofline."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from gpuperf import attention, chip
from gpuperf.roofline import time_bounds
from gpuperf.widgets import attention as wa


@pytest.fixture(scope="module")
def softmax_explorer():
    return wa.online_softmax_explorer()


@pytest.fixture(scope="module")
def attention_explorer():
    return wa.attention_explorer()


def _estimate(view):
    return np.array([segment[1][1] for segment in view.estimate.get_segments()])


def test_nothing_read_shows_nothing(softmax_explorer):
    status = softmax_explorer.step(block_size=4, step=0)
    view = softmax_explorer.view
    assert "m = −∞, ℓ = 0" in status
    assert len(view.estimate.get_segments()) == 0
    assert view.last["read"] == 0


@pytest.mark.parametrize("block_size", wa.BLOCK_SIZES)
def test_last_step_is_the_softmax(softmax_explorer, block_size):
    torch = pytest.importorskip("torch")
    explorer = softmax_explorer
    explorer.step(block_size=block_size)
    n_blocks = math.ceil(len(wa.EXAMPLE_ROW) / block_size)
    assert explorer.controls["step"].max == n_blocks, "the slider must end at the last block"
    status = explorer.step(step=n_blocks)
    expected = torch.softmax(torch.tensor(wa.EXAMPLE_ROW, dtype=torch.float64), dim=0).numpy()
    np.testing.assert_allclose(_estimate(explorer.view), expected, rtol=1e-12)
    assert "now the softmax" in status
    final = attention.online_softmax_steps(wa.EXAMPLE_ROW, block_size)[-1]
    assert explorer.view.max_line.get_ydata()[0] == final.max_after == max(wa.EXAMPLE_ROW)
    assert explorer.view.last["sum"] == pytest.approx(final.sum_after)


def test_each_step_shows_the_running_max_and_rescale(softmax_explorer):
    explorer = softmax_explorer
    explorer.step(block_size=4)
    steps = attention.online_softmax_steps(wa.EXAMPLE_ROW, 4)
    for k, s in enumerate(steps, start=1):
        status = explorer.step(step=k)
        assert f"rescale factor {s.rescale:.4g}" in status
        assert explorer.view.max_line.get_ydata()[0] == s.max_after
        seen = np.array(wa.EXAMPLE_ROW[: s.stop])
        np.testing.assert_allclose(
            _estimate(explorer.view), np.exp(seen - s.max_after) / s.sum_after
        )
    grew = [s.max_after > s.max_before for s in steps[1:]]
    assert any(grew), "the example row must make the max grow after the first block"


def test_block_size_is_validated():
    with pytest.raises(
        ValueError,
        match="block_size=3 is not an option of the 'block_size' control; options: 2, 4, 8",
    ):
        wa.online_softmax_explorer(block_size=3)
    with pytest.raises(ValueError, match="row must be 1-D"):
        wa._OnlineSoftmaxView([1.0])


def test_attention_points_are_the_calculators(attention_explorer):
    explorer = attention_explorer
    status = explorer.step(seq_len=4096, head_dim=64, chip_name="A100-80GB", sram_kib=0,
                           precision="fp16")  # fmt: skip
    a100 = chip("A100-80GB")
    sram = a100.shared_memory_per_block_bytes
    view = explorer.view
    standard = attention.hbm_traffic_standard(4096, 64, "fp16")
    flash = attention.hbm_traffic_flash(4096, 64, sram, "fp16")
    for point, op in ((view.standard_point, standard), (view.flash_point, flash)):
        assert point.get_xdata()[0] == pytest.approx(op.intensity)
        expected = time_bounds(op, a100, "fp16").attainable_flops_per_s
        assert point.get_ydata()[0] == pytest.approx(expected)
    blocks = attention.flash_block_sizes(sram, 64, "fp16")
    assert f"FA-1 blocks B_c = {blocks.block_c}, B_r = {blocks.block_r}" in status
    tiles = attention.fa2_block_sizes(sram, 64, "fp16")
    assert f"FA-2 tiles B_r × B_c = {tiles.block_r} × {tiles.block_c}" in status
    curve = dict(zip(view.flash_curve.get_xdata(), view.flash_curve.get_ydata(), strict=True))
    assert curve[4096] == pytest.approx(flash.bytes)
    assert view.n_marker.get_xdata()[0] == 4096
    assert view.last["ratio"] == pytest.approx(standard.bytes / flash.bytes)


def test_sram_choice_changes_the_blocks(attention_explorer):
    explorer = attention_explorer
    explorer.step(chip_name="H100-SXM", head_dim=128, precision="fp16", sram_kib=48)
    assert explorer.view.last["blocks"].sram_bytes == 48 * 1024
    explorer.step(sram_kib=0)
    assert (
        explorer.view.last["blocks"].sram_bytes == chip("H100-SXM").shared_memory_per_block_bytes
    )


def test_missing_precision_clears_the_roof(attention_explorer):
    status = attention_explorer.step(chip_name="T4", precision="bf16")
    assert "no bf16 math" in status
    assert len(attention_explorer.view.flash_point.get_xdata()) == 0
    assert attention_explorer.view.last["bounds"] is None
    attention_explorer.step(precision="fp16")
    assert len(attention_explorer.view.flash_point.get_xdata()) == 1


def test_no_fa2_point_where_its_tiles_do_not_fit(attention_explorer):
    """d = 256 in fp16 needs 96 KiB for FA-2's smallest tiles: a 48 KiB budget has no FA-2
    kernel, so the view draws no FA-2 point or curve and says why (FA-1 and standard stay)."""
    view = attention_explorer.view
    status = attention_explorer.step(chip_name="A100-80GB", precision="fp16", head_dim=256,
                                     sram_kib=48, seq_len=4096)  # fmt: skip
    assert "no FA-2 point" in status and "smallest tiles" in status
    for artist in (view.flash_point, view.ideal_point, view.flash_curve, view.ideal_curve):
        assert len(artist.get_xdata()) == 0
    assert len(view.standard_point.get_xdata()) == 1 and len(view.flash1_curve.get_xdata()) > 0
    assert view.last["ratio"] is None and set(view.last["bounds"]) == {"standard"}
    attention_explorer.step(sram_kib=0)  # 163 KiB: 128 × 64 tiles fit again
    assert len(view.flash_point.get_xdata()) == 1
    assert view.last["tiles"].block_r == 128


def test_l2_point_moves_every_byte_once(attention_explorer):
    attention_explorer.step(chip_name="H100-SXM", precision="fp16", seq_len=8192, head_dim=128,
                            sram_kib=0)  # fmt: skip
    ideal = attention_explorer.view.last["ideal"]
    n, d = 8192, 128
    assert ideal.bytes == pytest.approx(4 * n * d * 2 + n * 4)  # Q, K, V read, O and L written
    assert attention_explorer.view.last["bounds"]["ideal"].bound == "compute"


def test_steps_blit(attention_explorer, softmax_explorer, needless_full_redraws):
    steps = [{"seq_len": n} for n in wa.SEQ_LENS]
    assert needless_full_redraws(attention_explorer, steps) == []
    steps = [{"block_size": 4, "step": k} for k in range(5)]
    assert needless_full_redraws(softmax_explorer, steps) == []


def test_attention_traffic_figure():
    from gpuperf import plots

    fig = plots.attention_traffic(64, chip_name="A100-80GB", seq_lens=(256, 1024, 4096))
    lines = fig.axes[0].get_lines()
    assert len(lines) == 5
    standard = lines[0].get_ydata()
    assert standard[-1] == attention.hbm_traffic_standard(4096, 64, "fp16").bytes


def test_attention_view_on_a_tpu_needs_an_sram_budget():
    view = wa._AttentionView()
    with pytest.raises(ValueError, match="TPU-v5e has no shared memory per block"):
        view.update(seq_len=1024, head_dim=64, chip_name="TPU-v5e", sram_kib=0, precision="bf16")
    text = view.update(seq_len=1024, head_dim=64, chip_name="TPU-v5e", sram_kib=64,
                       precision="bf16")  # fmt: skip
    assert "SRAM 64 KiB" in text and view.last["bounds"] is not None
    with pytest.raises(ValueError, match="chip_name='TPU-v5e' is not an option"):
        wa.attention_explorer(chip_name="TPU-v5e")


@pytest.mark.parametrize("block_size", wa.BLOCK_SIZES)
def test_probability_axis_holds_every_bar(softmax_explorer, block_size):
    explorer = softmax_explorer
    explorer.step(block_size=block_size)
    tallest = 0.0
    for k in range(explorer.controls["step"].max + 1):
        explorer.step(step=k)
        top = explorer.view.probability_axes.get_ylim()[1]
        if len(explorer.view.estimate.get_segments()):
            tallest = max(tallest, _estimate(explorer.view).max())
        assert _estimate(explorer.view).max(initial=0.0) < top, "a bar runs off the top"
    assert top < 1.5 * tallest, "the axis must fit the bars, not a fixed ceiling"


def test_online_softmax_steps_never_redraw_the_figure(needless_full_redraws, full_draw_png):
    """Every block size's probability axis is drawn when the explorer is built, so no step —
    a block size included — redraws the whole figure, and each picture is a full draw's."""
    explorer = wa.online_softmax_explorer()
    walk = [{"block_size": b, "step": k} for b in (4, 8, 2, 8, 4) for k in (0, 1, 2, 1)]
    assert needless_full_redraws(explorer, walk, rescales=False) == []
    for block_size in wa.BLOCK_SIZES:
        for k in range(math.ceil(len(wa.EXAMPLE_ROW) / block_size) + 1):
            status = explorer.step(block_size=block_size, step=k)
            reference = wa._OnlineSoftmaxView()
            assert bytes(explorer.live.png) == full_draw_png(reference, k, block_size)
            assert status == reference.update(k, block_size)
