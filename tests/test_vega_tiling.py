"""The online book's tiling figure (chapter 3.6) plots what the calculators compute.

:func:`gpuperf.widgets.tiles.tiling_static` reads its rows from the live view; these tests
recompute each plotted number from :mod:`gpuperf.tiling`, :mod:`gpuperf.roofline` and the stored
compiler table at sampled control values, and read the figure's rows back from the shipped spec.
"""

from __future__ import annotations

import pytest

from gpuperf import chip, tiling
from gpuperf.inspect import target_of
from gpuperf.roofline import attainable_flops
from gpuperf.widgets import tile_reports
from gpuperf.widgets.tiles import CHIPS, MATMUL_SIZE, PRECISION, tiling_static

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


@pytest.fixture(scope="module")
def figure():
    return tiling_static()


def test_controls_are_the_live_explorers(figure):
    offered = {c.name: tuple(c.values) for c in figure.controls}
    assert offered == {
        "block_m": tile_reports.BLOCKS_MN,
        "block_n": tile_reports.BLOCKS_MN,
        "block_k": tile_reports.BLOCKS_K,
        "chip_name": tuple(CHIPS),
    }


@pytest.mark.parametrize(
    ("block_m", "block_n", "block_k"),
    [(32, 32, 16), (64, 64, 32), (128, 256, 64), (256, 256, 64), (256, 32, 16)],
)
@pytest.mark.parametrize("chip_name", ["T4", "A100-80GB", "H100-SXM"])
def test_points_and_gauge_equal_the_calculators(figure, block_m, block_n, block_k, chip_name):
    values = dict(block_m=block_m, block_n=block_n, block_k=block_k, chip_name=chip_name)
    the_chip = chip(chip_name)
    n = MATMUL_SIZE
    t = tiling.tiled_matmul(n, n, n, block_m, block_n, block_k, PRECISION)
    naive = t.useful_flops / t.naive_hbm_bytes
    points = {r["kind"]: r for r in figure.rows("points", **values)}
    assert set(points) == {"tiled (BM, BN, BK)", "untiled (naive)"}
    tiled, untiled = points["tiled (BM, BN, BK)"], points["untiled (naive)"]
    roof = tiling.dot_roof_precision(the_chip, PRECISION)  # the compiled tl.dot's unit
    assert tiled["x"] == pytest.approx(t.intensity, rel=1e-12)
    assert tiled["y"] == pytest.approx(
        float(attainable_flops(t.intensity, the_chip, roof)), rel=1e-12
    )
    assert untiled["x"] == pytest.approx(naive, rel=1e-12)
    assert untiled["y"] == pytest.approx(float(attainable_flops(naive, the_chip, roof)), rel=1e-12)

    (gauge,) = figure.rows("gauge", **values)
    report = tile_reports.tile_report(target_of(chip_name), block_m, block_n, block_k)
    model = tiling.shared_memory_budget(
        the_chip, block_m, block_n, block_k, PRECISION, tile_reports.NUM_STAGES
    )
    used = report.shared_memory_bytes if report.fits else model.shared_memory_bytes
    assert gauge["source"] == ("compiler" if report.fits else "model")
    assert gauge["fraction"] == pytest.approx(min(used / model.limit_bytes, 1.5), rel=1e-12)
    assert f"{used / 1024:g} KiB" in gauge["label"]
    note = figure.note(**values)
    assert f"tile {block_m}×{block_n}×{block_k}" in note and the_chip.name in note


@pytest.mark.parametrize("chip_name", CHIPS)
def test_roof_is_the_roofline_of_the_compiled_kernels_math_unit(figure, chip_name):
    # The compiled kernel's roof: fp32 FMA on the T4 (Triton's tl.dot uses no tensor cores on
    # sm_75), the fp16 tensor cores where the stored compiles carry mma / wgmma.
    the_chip = chip(chip_name)
    roof_precision = tiling.dot_roof_precision(the_chip, PRECISION)
    compiled = tile_reports.tile_report(target_of(chip_name), 64, 64, 32)
    assert (roof_precision == PRECISION) == bool(compiled.tensor_core_instruction)
    roof = figure.rows("roof", chip_name=chip_name)
    assert len(roof) == 3
    for row in roof:
        assert row["y"] == pytest.approx(
            float(attainable_flops(row["x"], the_chip, roof_precision)), rel=1e-12
        )
    assert max(r["y"] for r in roof) == pytest.approx(
        the_chip.peak_flops(roof_precision), rel=1e-12
    )
    note = figure.note(block_m=64, block_n=64, block_k=32, chip_name=chip_name)
    assert ("FMA" in note.split("; gauge")[0]) == (roof_precision != PRECISION)


def test_a_tile_the_sliders_lack_is_refused(figure):
    with pytest.raises(ValueError, match="block_m=48 is not one of its values"):
        figure.rows("points", block_m=48, block_n=64, block_k=32, chip_name="T4")
