"""The online book's overlap figure (chapter 3.8) plots what the calculator computes.

:func:`gpuperf.widgets.asynchrony.overlap_static` reads its bars from the live view; these tests
recompute every bar's start and end from :func:`gpuperf.asynchrony.tile_overlap` at sampled
control values (the two schedules written out here, not taken from the widget), and read the
figure's rows back from the shipped spec.
"""

from __future__ import annotations

import pytest

from gpuperf.asynchrony import tile_overlap
from gpuperf.widgets.asynchrony import (
    BLOCKS_K,
    CHIPS,
    PRECISION,
    REUSES,
    SHOWN_STEPS,
    TILES,
    K,
    overlap_static,
)

pytest.importorskip("altair")
pytest.importorskip("vl_convert")
pytest.importorskip("matplotlib")

LOAD, MATH = "load A, B panels", "tensor-core math"


@pytest.fixture(scope="module")
def figure():
    return overlap_static()


def test_controls_are_the_live_explorers(figure):
    offered = {c.name: tuple(c.values) for c in figure.controls}
    assert offered == {
        "chip_name": tuple(CHIPS),
        "tile": tuple(shape for _label, shape in TILES),
        "block_k": tuple(BLOCKS_K),
        "reuse": tuple(REUSES),
    }
    assert figure.kinds == {n: "dropdown" for n in offered}


@pytest.mark.parametrize(
    ("chip_name", "tile", "block_k", "reuse"),
    [
        ("A100-80GB", (64, 64), 32, 1),
        ("H100-SXM", (128, 128), 64, 4),
        ("H100-SXM", (256, 128), 32, 8),
        ("B200", (256, 256), 64, 2),
        ("B200", (64, 64), 64, 8),
    ],
)
def test_bars_are_the_two_schedules(figure, chip_name, tile, block_k, reuse):
    values = dict(chip_name=chip_name, tile=tile, block_k=block_k, reuse=reuse)
    r = tile_overlap(chip_name, tile[0], tile[1], block_k, K, PRECISION, reuse)
    load, mth = r.load_s, r.math_s
    scale = SHOWN_STEPS * (load + mth)
    period = max(load, mth)
    expected = []
    for i in range(SHOWN_STEPS):
        # synchronous lane (top): load i, then math i, back to back
        expected.append((LOAD, 2.6, i * (load + mth), load))
        expected.append((MATH, 2.6, i * (load + mth) + load, mth))
        # overlapped lanes: a load every max(load, math); math i after load i lands
        expected.append((LOAD, 1.3, i * period, load))
        expected.append((MATH, 0.5, load + i * period, mth))
    rows = figure.rows("bars", **values)
    assert len(rows) == 4 * SHOWN_STEPS
    got = sorted((row["kind"], row["y"], row["x"], row["x2"]) for row in rows)
    want = sorted(
        (kind, y, start / scale, (start + width) / scale) for kind, y, start, width in expected
    )
    for g, w in zip(got, want, strict=True):
        assert g[:2] == pytest.approx(w[:2]) and g[2:] == pytest.approx(w[2:], rel=1e-9, abs=1e-12)
    (end,) = figure.rows("end", **values)
    shown = tile_overlap(
        chip_name, tile[0], tile[1], block_k, SHOWN_STEPS * block_k, PRECISION, reuse
    )
    assert end["x"] == pytest.approx(shown.overlapped_s / scale, rel=1e-9)
    note = figure.note(**values)
    assert r.chip_name in note and f"({r.speedup:.2f}×)" in note
    assert f"{tile[0]} × {tile[1]} × {block_k}" in note


def test_value_not_offered_is_refused(figure):
    with pytest.raises(ValueError, match="reuse=3 is not one of its values"):
        figure.rows("bars", chip_name="B200", tile=(128, 128), block_k=64, reuse=3)
    with pytest.raises(ValueError, match="tile"):
        figure.rows("end", chip_name="B200", tile=(32, 32), block_k=64, reuse=1)
