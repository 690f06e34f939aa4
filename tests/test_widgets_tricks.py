"""Chapter 3 explorers and figures: artists sit where the calculators say, the precompiled tile
table matches the compiler, and a slider step is fast."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from gpuperf import cost, memory, plots, tiling
from gpuperf import inspect as gpu_inspect
from gpuperf.hardware import chip
from gpuperf.roofline import attainable_flops, time_bounds
from gpuperf.widgets import tile_reports, tiles, tricks

# --- precision ------------------------------------------------------------------------------


@pytest.mark.parametrize("precision", ["fp32", "fp16", "fp8"])
def test_precision_point_is_the_roofline_value(precision):
    view = tricks._PrecisionView()
    status = view.update("H100-SXM", precision, "relu")
    relu = cost.elementwise(tricks.RELU_ELEMENTS, precision)
    bounds = time_bounds(relu, chip("H100-SXM"), precision)
    x, y = view.point.get_data()
    assert x[0] == pytest.approx(relu.intensity)
    assert y[0] == pytest.approx(bounds.attainable_flops_per_s)
    assert "memory-bound" in status
    assert max(view.roof.get_ydata()) == pytest.approx(chip("H100-SXM").peak_flops(precision))


def test_relu_intensity_doubles_from_fp32_to_fp16_and_matmul_is_compute_bound():
    view = tricks._PrecisionView()
    view.update("A100-80GB", "fp32", "relu")
    fp32 = view.last["intensity"]
    view.update("A100-80GB", "fp16", "relu")
    assert view.last["intensity"] == pytest.approx(2 * fp32)
    assert "compute-bound" in view.update("A100-80GB", "fp16", "matmul")


def test_precision_the_chip_lacks_is_explained_not_plotted():
    view = tricks._PrecisionView()
    status = view.update("T4", "fp8", "matmul")
    assert "T4 cannot compute in fp8" in status and "fp16" in status
    assert len(view.point.get_xdata()) == 0
    with pytest.raises(ValueError, match="op='conv'"):
        tricks._operation_cost("conv", "fp16")


# --- coalescing -----------------------------------------------------------------------------


@pytest.mark.parametrize(("stride", "offset"), [(1, 0), (1, 1), (2, 0), (8, 3), (3, 5)])
def test_coalescing_grid_counts_the_calculators_bytes(stride, offset):
    result = memory.coalescing(stride, offset, 4)
    grid = plots._coalescing_grid(result, n_lines=64)
    assert (grid == plots._BYTE_USED).sum() == result.bytes_requested
    assert (grid != plots._BYTE_IDLE).sum() == result.bytes_moved


def test_coalescing_view_shows_the_grid_and_reports_efficiency():
    view = tricks._CoalescingView()
    status = view.update(1, 1, 4)
    assert "5 × 32-byte sectors" in status and "80.0%" in status
    expected = plots._coalescing_grid(memory.coalescing(1, 1, 4), tricks.LINES_DRAWN)
    assert np.array_equal(np.asarray(view.image.get_array()), expected)
    assert "beyond the 2 KiB drawn" in view.update(32, 0, 4)


# --- tiling ---------------------------------------------------------------------------------


def test_tile_table_covers_the_slider_grid():
    assert tile_reports.TRITON_VERSION
    for target in tile_reports.TARGETS:
        for bm in tile_reports.BLOCKS_MN:
            for bn in tile_reports.BLOCKS_MN:
                for bk in tile_reports.BLOCKS_K:
                    report = tile_reports.tile_report(target, bm, bn, bk)
                    assert report.fits == (report.explanation == "")
    with pytest.raises(KeyError, match="BLOCK_K in"):
        tile_reports.tile_report("sm_80", 64, 64, 8)


def test_tile_table_agrees_with_the_models_on_what_fits():
    # The compiler keeps fewer buffers than stages on sm_80 (and none pipelined on sm_75), so
    # only a tile whose single stage is over the limit is sure not to fit; the "stages × panels"
    # count is an upper bound on what was compiled.
    for target, (chip_name, _) in gpu_inspect.TARGETS.items():
        for bm, bn, bk in [(64, 64, 32), (256, 256, 64), (128, 128, 64)]:
            report = tile_reports.tile_report(target, bm, bn, bk)
            one_stage = tiling.shared_memory_budget(chip_name, bm, bn, bk, "fp16", 1)
            if not one_stage.fits:
                assert not report.fits
            if report.fits:
                assert report.shared_memory_bytes <= one_stage.limit_bytes
                assert report.shared_memory_bytes <= tiling.shared_memory_bytes(
                    bm, bn, bk, "fp16", tile_reports.NUM_STAGES
                )


def test_tiling_view_point_and_gauge_follow_the_calculators():
    view = tiles._TilingView()
    status = view.update(128, 128, 32, "A100-80GB")
    t = tiling.tiled_matmul(4096, 4096, 4096, 128, 128, 32, "fp16")
    model = tiling.shared_memory_budget("A100-80GB", 128, 128, 32, "fp16", 3)
    compiled = tile_reports.tile_report("sm_80", 128, 128, 32)
    assert view.point.get_xdata()[0] == pytest.approx(t.intensity)
    # A compiled tile: the gauge is the compiler's bytes (2 buffers on sm_80), not the model's 3.
    assert compiled.shared_memory_bytes < model.shared_memory_bytes
    assert view.bar.get_width() == pytest.approx(compiled.shared_memory_bytes / model.limit_bytes)
    assert view.last["gauge_source"] == "compiler" and view.bar.get_hatch() in ("", None)
    assert "compiled for sm_80" in status
    assert f"gauge: compiler's {compiled.shared_memory_bytes / 1024:g} KiB" in status
    # A tile the table has no compile for: the model's three stages, hatched and labelled.
    too_big = view.update(256, 256, 64, "T4")
    assert view.last["gauge_source"] == "model" and view.bar.get_hatch() == "//"
    assert not view.last["budget"].fits
    assert view.last["budget"] == view.last["model_budget"]
    assert view.bar.get_width() == pytest.approx(1.5)  # clipped at the axis end
    assert "gauge: model, 3 full stages = 192 KiB" in too_big
    assert "course model" in too_big or "does not fit" in too_big


def test_tiling_view_roof_is_the_compiled_kernels_unit():
    # On a T4 Triton's tl.dot is fp32 FMA: the point sits under the fp32 roof, not the tensor
    # cores' (the page's T4 verdicts use the same roof); on an A100 under the fp16 tensor roof.
    view = tiles._TilingView()
    t = tiling.tiled_matmul(4096, 4096, 4096, 64, 64, 32, "fp16")
    for name, roof in (("T4", "fp32"), ("A100-80GB", "fp16")):
        status = view.update(64, 64, 32, name)
        assert view.last["roof_precision"] == roof == tiling.dot_roof_precision(name)
        assert view.point.get_ydata()[0] == pytest.approx(
            float(attainable_flops(t.intensity, name, roof))
        )
        assert max(view.roof.get_ydata()) == pytest.approx(chip(name).peak_flops(roof))
        assert ("FMA" in status.split("; gauge")[0]) == (roof == "fp32")


def test_target_of_maps_chips_to_compile_targets():
    assert gpu_inspect.target_of("H100-SXM") == "sm_90"
    assert gpu_inspect.target_of("t4") == "sm_75"
    with pytest.raises(ValueError, match="no compile target"):
        gpu_inspect.target_of("V100")


def test_tile_table_matches_a_fresh_compile():
    gi = pytest.importorskip("gpuperf.inspect")
    if gi._triton_version() != tile_reports.TRITON_VERSION:
        pytest.skip("the table was compiled with another Triton version")
    for target, (bm, bn, bk) in [("sm_80", (64, 64, 32)), ("sm_75", (128, 64, 32))]:
        fresh = gi.compile_kernel(
            "matmul", target, dtype="fp16", num_warps=4, num_stages=3,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
        )  # fmt: skip
        assert tile_reports.TileReport.from_report(fresh) == tile_reports.tile_report(
            target, bm, bn, bk
        )


# --- waves ----------------------------------------------------------------------------------


def test_wave_view_marks_2049_one_wave_more_than_2048():
    view = tiles._WaveView()
    view.update(2048, (256, 128), "H100-SXM")
    before = view.last
    status = view.update(2049, (256, 128), "H100-SXM")
    assert view.last.waves == before.waves + 1
    assert view.marker.get_ydata()[0] == pytest.approx(
        tiling.wave_efficiency(2049, 2049, 256, 128, "H100-SXM")
    )
    curve = tiling.wave_efficiency_curve(tiles.SIZES, 256, 128, "H100-SXM")
    assert np.allclose(view.curve.get_ydata(), curve)
    assert "2 waves" in status


# --- explorers and latency ----------------------------------------------------------

EXPLORERS = {
    "precision": (tricks.precision_explorer, [{"precision": p} for p in tricks.PRECISIONS]),
    "coalescing": (tricks.coalescing_explorer, [{"stride": s} for s in tricks.STRIDES]),
    "tiling": (tiles.tiling_explorer, [{"block_m": b} for b in tile_reports.BLOCKS_MN]),
    "waves": (tiles.wave_explorer, [{"size": n} for n in range(2040, 2060)]),
}


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_explorer_steps_blit_and_records_latency(name, needless_full_redraws):
    make, steps = EXPLORERS[name]
    explorer = make()
    assert needless_full_redraws(explorer, steps) == []
    assert explorer.status.value
    assert len(explorer.timings_ms) >= len(steps)  # a step to the current value is no event


def test_static_figures_return_figures():
    import matplotlib.pyplot as plt

    figures = [
        plots.coalescing_picture([memory.coalescing(1, 0), memory.coalescing(2, 0)]),
        plots.sawtooth(["A100"], 128, 128, np.arange(256, 4097, 16), highlight=(2048,)),
        plots.tile_picture(300, 200, 128, 64),
        plots.smem_gauges([tiling.shared_memory_budget("T4", 128, 128, 64, "fp16", 3)]),
        plots.traffic_bars({"a": cost.elementwise(10, "fp32")}),
        plots.checkpoint_tradeoff(12, 9.0, 1.0),
    ]
    for figure in figures:
        assert figure.axes
        plt.close(figure)
