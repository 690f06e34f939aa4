"""The counting explorer (issue 35): counts from the interpreter, placed on a chip's roofline."""

from __future__ import annotations

import pytest

from gpuperf.runtime import configure_triton

configure_triton()
pytest.importorskip("torch")
pytest.importorskip("triton")
pytest.importorskip("ipywidgets")

from gpuperf.hardware import chip  # noqa: E402
from gpuperf.runtime import interpreting  # noqa: E402
from gpuperf.widgets import counting as w  # noqa: E402

pytestmark = pytest.mark.skipif(not interpreting(), reason="counting needs Triton's interpreter")


def test_counts_match_the_cost_models():
    n = 64
    add = w.counted("vector add", n, 16)
    assert add["bytes"] == 3 * n * n * 4 and add["unique_bytes"] == add["bytes"]
    mm = w.counted("matmul tiled", n, 16)
    assert mm["dot_flops"] == 2 * n**3
    assert mm["bytes"] == 4 * (2 * n * n * (n // 16) + n * n)
    naive, tiled = w.counted("transpose naive", n, 16), w.counted("transpose tiled", n, 16)
    assert naive["bytes"] == tiled["bytes"] == 2 * n * n * 4
    assert naive["sector_efficiency"] < tiled["sector_efficiency"]


def test_explorer_moves_the_points_and_labels_what_it_shows():
    e = w.counting_explorer("vector add", 32, 16, "H100-SXM")
    text = e.step(kernel="matmul tiled", n=64, tile=32)
    assert "not DRAM traffic" in text and "time only measured on a GPU" in text
    (x,), (y,) = e.view.point.get_data()
    counts = w.counted("matmul tiled", 64, 32)
    assert x == pytest.approx(counts["flops"] / counts["bytes"])
    h100 = chip("H100-SXM")
    assert y <= h100.peak_flops("fp32") * (1 + 1e-9)
    (ux,), _ = e.view.unique.get_data()
    assert ux > x  # a perfect cache moves fewer bytes: higher intensity
    e.step(chip_name="T4")
    assert e.view.roof.get_data()[1].max() == pytest.approx(chip("T4").peak_flops("fp32"))


def test_static_twin_has_every_combination():
    s = w.counting_static()
    rows = s.rows("points", kernel="flash attention forward", n=48, tile=32, chip_name="T4")
    assert {r["kind"] for r in rows} == {
        "requested bytes (no reuse)",
        "unique bytes (perfect cache)",
    }
    assert "not DRAM traffic" in s.note(kernel="vector add", n=32, tile=16, chip_name="T4")


def test_static_roof_is_the_live_views():
    # the static roof (vega._roofline_layer) is built from the chip, not read from the view:
    # it must be the corners the live panel draws, so the two figures cannot drift apart
    s = w.counting_static()
    view = w._CountingView()
    for chip_name in ("T4", "A100-80GB", "H100-SXM"):
        view.update("vector add", 32, 16, chip_name)
        xs, ys = view.roof.get_data()
        drawn = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)]
        assert [(r["x"], r["y"]) for r in s.rows("roof", chip_name=chip_name)] == drawn
        assert max(ys) == chip(chip_name).peak_flops(w.PRECISION)
