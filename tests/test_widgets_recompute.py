"""Section 3.3 explorer: the bars are the calculator's bytes, the overheads its FLOPs, bad layer
shapes are explained."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from gpuperf import recompute
from gpuperf.widgets import recompute as wr


@pytest.mark.parametrize(("t", "sp"), [(1, False), (8, False), (8, True)])
def test_bars_are_the_calculators_bytes_and_overheads(t, sp):
    view = wr._RecomputeView()
    status = view.update(4096, 2, 4096, 32, t, sp, "selective")
    for row, mode in enumerate(recompute.RECOMPUTE_MODES):
        plan = recompute.layer_activations(4096, 2, 4096, 32, t, sp, mode)
        right = max(group[row].get_x() + group[row].get_width() for group in view.bars)
        assert right == pytest.approx(plan.activation_bytes / 1e9)
        assert sum(wr._layer_parts(plan)) == pytest.approx(plan.activation_bytes)
        assert view.flop_bars[row].get_width() == pytest.approx(100 * plan.compute_overhead)
        assert view.bars[0][row].get_alpha() == (1.0 if mode == "selective" else 0.35)
    assert status.startswith("selective: ") and "+" in status


def test_parts_follow_the_term_table():
    plan = recompute.layer_activations(2048, 1, 4096, 32, 4, False, "none")
    whole, split, scores = wr._layer_parts(plan)
    sbh = 2048 * 4096
    assert whole == 10 * sbh and split == 24 * sbh / 4
    assert scores == 5 * 32 * 2048 * 2048 / 4
    full = recompute.layer_activations(2048, 1, 4096, 32, 4, True, "full")
    assert wr._layer_parts(full) == (2 * sbh / 4, 0.0, 0.0)


def test_a_shape_with_no_whole_heads_is_explained_and_drawn_empty():
    view = wr._RecomputeView()
    status = view.update(2048, 1, 1024, 96, 1, False, "none")
    assert "heads=96 must divide hidden=1024" in status
    assert all(rect.get_width() == 0 for rect in view.animated)


def test_explorer_steps_and_rejects_bad_values():
    explorer = wr.recompute_explorer()
    assert "selective" in explorer.status.value
    assert explorer.step(mode="full").startswith("full: ")
    with pytest.raises(ValueError, match="tensor_parallel"):
        explorer.step(tensor_parallel=3)
    with pytest.raises(ValueError, match="mode"):
        wr.recompute_explorer(mode="attention")


def _walk(count: int, seed: int = 27) -> list[dict]:
    """A reader's random walk: one control at a time, over every value it offers."""
    rng = random.Random(seed)
    grids = {
        "seq_len": wr.SEQ_LENS, "micro_batch": wr.MICRO_BATCHES, "hidden": wr.HIDDEN,
        "heads": wr.HEADS, "tensor_parallel": wr.TENSOR_PARALLEL,
        "sequence_parallel": (False, True), "mode": recompute.RECOMPUTE_MODES,
    }  # fmt: skip
    return [{name: rng.choice(grids[name])} for name in rng.choices(list(grids), k=count)]


def test_a_rescale_redraws_the_bytes_axis_not_the_figure(needless_full_redraws):
    """The bytes axis follows the widest bar, so almost every step rescales it: only that
    axis is redrawn (a layer under the bars), never the whole figure."""
    explorer = wr.recompute_explorer()
    # a shape with no whole heads draws no bars (an empty axis) and comes back
    walk = [*_walk(30), {"hidden": 1024, "heads": 96}, {"heads": 32}]
    assert needless_full_redraws(explorer, walk, rescales=False) == []


def test_pictures_are_a_full_draws(full_draw_png):
    explorer = wr.recompute_explorer()
    for step in [*_walk(16, seed=3), {"hidden": 1024}, {"heads": 96}, {"heads": 8}]:
        before = explorer.values()
        status = explorer.step(**step)
        reference = wr._RecomputeView()
        reference.update(**before)  # no such layer keeps the range of the step before
        assert bytes(explorer.live.png) == full_draw_png(reference, **explorer.values()), step
        assert status == reference.update(**explorer.values())
