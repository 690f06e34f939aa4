"""Section 3.3 explorer: the bars are the calculator's bytes, the overheads its FLOPs, bad layer
shapes are explained."""

from __future__ import annotations

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
