"""Section 3.1 accumulation explorer: artists sit where gpuperf.numerics says, the status line
gives the calculator's numbers, bad control values are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from gpuperf import numerics
from gpuperf.widgets import numerics as explorer_module


def test_curves_are_the_calculators_and_the_point_sits_on_the_mean():
    view = explorer_module._AccumulationView()
    status = view.update("fp16", "fp32", 4096)
    expected = numerics.dot_errors(
        explorer_module.CURVE_LENGTHS, "fp16", "fp32", trials=explorer_module.TRIALS
    )
    x, y = view.mean.get_data()
    assert np.allclose(x, expected.lengths) and np.allclose(y, expected.mean_error)
    _, bound = view.bound.get_data()
    assert np.allclose(bound, expected.bound)
    px, py = view.point.get_data()
    i = expected.lengths.index(4096)
    assert px[0] == 4096 and py[0] == pytest.approx(expected.mean_error[i])
    assert f"{expected.mean_error[i]:.2g}" in status and "fp32 accumulator" in status


def test_short_accumulator_has_no_bound_and_a_large_error():
    view = explorer_module._AccumulationView()
    status = view.update("bf16", "fp16", 16384)
    assert "none (n·u ≥ 1)" in status
    assert math.isinf(view.last["bound"]) and view.last["mean"] > 0.1
    _, bound = view.bound.get_data()
    assert np.isnan(bound[-1])  # an infinite bound is not drawn


def test_explorer_steps_and_refuses_bad_values():
    explorer = explorer_module.accumulation_explorer()
    assert "fp32 accumulator" in explorer.step(accumulator="fp32")
    assert "n = 256" in explorer.step(length=256)
    with pytest.raises(ValueError, match="length=100"):
        explorer.step(length=100)
    with pytest.raises(ValueError, match="input_format='fp32'"):
        explorer_module.accumulation_explorer(input_format="fp32")


def test_steps_compute_no_curve_and_never_redraw(needless_full_redraws, full_draw_png):
    """Every (format, accumulator) curve is computed when the explorer is built (50–100 ms
    each): a step only reads the cache and blits, and each picture is a full draw's."""
    explorer = explorer_module.accumulation_explorer()
    computed = explorer_module.curve.cache_info().misses
    walk = [
        {"input_format": f, "accumulator": a, "length": n}
        for f in explorer_module.INPUT_FORMATS
        for a in explorer_module.ACCUMULATORS
        for n in (16, 4096, 16384)
    ]
    assert needless_full_redraws(explorer, walk, rescales=False) == []
    assert explorer_module.curve.cache_info().misses == computed
    for values in walk[::4]:
        status = explorer.step(**values)
        reference = explorer_module._AccumulationView()
        assert bytes(explorer.live.png) == full_draw_png(reference, **values)
        assert status == reference.update(**values)
