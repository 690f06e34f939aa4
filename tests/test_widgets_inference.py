"""Chapter 4.3's decode explorer: artists sit where the calculators say, and a slider step
is fast."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from gpuperf import inference
from gpuperf.hardware import chip
from gpuperf.widgets import inference as wi


def test_marker_and_curves_are_the_calculators_values():
    view = wi._DecodeView()
    status = view.update(16, 4096, 8, "H100-SXM")
    config = inference.ILLUSTRATIVE.with_kv_heads(8)
    step = inference.decode_step(config, 16, 4096, "H100-SXM")
    x, y = view.marker.get_data()
    assert (x[0], y[0]) == (16, pytest.approx(step.intensity))
    curve = [inference.decode_step(config, b, 4096, "H100-SXM").intensity for b in wi.BATCHES]
    assert np.allclose(view.step_line.get_ydata(), curve)
    assert np.allclose(view.ridge.get_ydata(), chip("H100-SXM").ridge_point("bf16"))
    assert view.read_w.get_width() + view.read_kv.get_width() == pytest.approx(1.0)
    assert "memory-bound" in status and "GQA" in status


def test_mqa_raises_the_intensity_and_big_batches_do_not_fit():
    view = wi._DecodeView()
    view.update(256, 32768, 32, "A100-80GB")
    mha = view.last
    assert "does NOT fit" in view.update(256, 32768, 32, "A100-80GB")
    view.update(256, 32768, 1, "A100-80GB")
    assert view.last.intensity > 10 * mha.intensity
    assert view.hold_kv.get_facecolor()[:3] != view.hold_w.get_facecolor()[:3]


def test_split_status_matches_split_kv():
    view = wi._DecodeView()
    status = view.update(1, 8192, 8, "H100-SXM")
    split = inference.split_kv(1, 32, 8, 8192, 128, "H100-SXM")
    assert view.last_split == split
    assert f"{split.ctas} with {split.splits_used} splits" in status


def test_explorer_steps_blit_and_names_bad_values(needless_full_redraws):
    explorer = wi.decode_explorer()
    steps = [{"batch": batch} for batch in wi.BATCHES]
    steps.append({"kv_heads": 1, "chip_name": "h100", "context_len": 32768})
    assert needless_full_redraws(explorer, steps) == []
    assert explorer.status.value
    with pytest.raises(ValueError, match="kv_heads=3 is not an option"):
        explorer.step(kv_heads=3)
    with pytest.raises(ValueError, match="batch=3 is not an option"):
        wi.decode_explorer(batch=3)
