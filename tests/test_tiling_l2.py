"""L2 as a level of the tiling roofline: tiles against L2, the whole matrix against HBM."""

from __future__ import annotations

import numpy as np
import pytest

from gpuperf import tiling


def test_program_tiles_follow_the_kernels_grouped_order():
    # 4 × 3 tiles, GROUP_M = 2: tile-rows 0–1 swept column by column, then rows 2–3.
    pid_m, pid_n = tiling.program_tiles(4 * 16, 3 * 16, 16, 16, group_m=2)
    assert pid_m.tolist() == [0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3]
    assert pid_n.tolist() == [0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2]
    # Every tile exactly once, whatever the group size (a last group may be short).
    for group in (1, 3, 8):
        pm, pn = tiling.program_tiles(5 * 16, 7 * 16, 16, 16, group)
        assert sorted(zip(pm.tolist(), pn.tolist(), strict=True)) == [
            (i, j) for i in range(5) for j in range(7)
        ]
    rows, _ = tiling.program_tiles(4 * 16, 3 * 16, 16, 16, group_m=1)
    assert rows.tolist() == list(np.repeat(np.arange(4), 3))  # row-major


def test_l2_level_is_the_tile_count_and_hbm_level_counts_each_panel_once_per_wave():
    levels = tiling.l2_levels(4096, 4096, 4096, 128, 128, 32, "H100-SXM", group_m=8)
    t = levels.tiled
    assert levels.l2_bytes == t.hbm_bytes
    assert levels.l2_intensity == pytest.approx(t.useful_flops / t.hbm_bytes)
    # 1024 tiles on 132 SMs: 8 waves; the first holds 8 tile-rows × 17 tile-columns.
    assert levels.waves == 8 and levels.concurrent_tiles == 132
    pid_m, pid_n = tiling.program_tiles(4096, 4096, 128, 128, 8)
    expected = 0.0
    for w in range(8):
        rows = len(set(pid_m[w * 132 : (w + 1) * 132].tolist()))
        cols = len(set(pid_n[w * 132 : (w + 1) * 132].tolist()))
        expected += (rows + cols) * 128 * 4096 * 2
    assert levels.hbm_bytes == pytest.approx(expected + 4096 * 4096 * 2)
    assert levels.compulsory_bytes == pytest.approx(3 * 4096 * 4096 * 2)
    # Ordered: compulsory ≤ HBM with L2 reuse ≤ per-tile (L2) traffic.
    assert levels.compulsory_bytes <= levels.hbm_bytes <= levels.l2_bytes


def test_tile_intensity_below_the_hbm_ridge_is_still_compute_bound_with_l2():
    # The 3.6 / 3.1 reconciliation: 128 × 128 tiles (64 FLOP/B per tile) sit below every chip's
    # fp16 HBM ridge point, yet the whole matmul is compute-bound against HBM.
    for name in ("T4", "A100-80GB", "H100-SXM"):
        levels = tiling.l2_levels(4096, 4096, 4096, 128, 128, 32, name)
        assert levels.tiled.tile_intensity < levels.hbm_ridge_point
        assert levels.hbm_bound == "compute", name
        assert levels.l2_bandwidth_needed == pytest.approx(
            levels.peak_flops_per_s / levels.l2_intensity
        )


def test_grouped_order_reads_less_from_hbm_than_row_major():
    grouped = tiling.l2_levels(4096, 4096, 4096, 128, 128, 32, "T4", group_m=8)
    row_major = tiling.l2_levels(4096, 4096, 4096, 128, 128, 32, "T4", group_m=1)
    assert grouped.hbm_bytes < row_major.hbm_bytes
    assert grouped.l2_bytes == row_major.l2_bytes  # the per-tile traffic does not change
    assert row_major.hbm_bound == "memory" and grouped.hbm_bound == "compute"


def test_l2_bound_compares_with_a_given_bandwidth():
    levels = tiling.l2_levels(4096, 4096, 4096, 128, 128, 32, "H100-SXM")
    assert levels.l2_bound(levels.l2_bandwidth_needed * 1.01) == "compute"
    assert levels.l2_bound(levels.l2_bandwidth_needed * 0.99) == "L2"
    with pytest.raises(ValueError, match="l2_bandwidth"):
        levels.l2_bound(0)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="group_m"):
        tiling.l2_levels(256, 256, 256, 64, 64, 32, "A100-80GB", group_m=0)
    with pytest.raises(ValueError, match="block_m"):
        tiling.program_tiles(256, 256, 48, 64)
    with pytest.raises(ValueError, match="no SMs"):
        tiling.l2_levels(256, 256, 256, 64, 64, 32, "TPU v5e")


def test_co_resident_ctas_widen_the_wave():
    # Two programs per SM: an H100 wave is 264 tiles, 4 waves for 1024 tiles, and with more
    # programs sharing each fetched panel HBM sees fewer bytes than with one program per SM.
    one = tiling.l2_levels(4096, 4096, 4096, 128, 128, 32, "H100-SXM", ctas_per_sm=1)
    two = tiling.l2_levels(4096, 4096, 4096, 128, 128, 32, "H100-SXM", ctas_per_sm=2)
    assert (one.concurrent_tiles, one.waves) == (132, 8)
    assert (two.concurrent_tiles, two.waves) == (264, 4)
    pid_m, pid_n = tiling.program_tiles(4096, 4096, 128, 128, 8)
    expected = sum(
        (len(set(pid_m[w * 264 : (w + 1) * 264].tolist()))
         + len(set(pid_n[w * 264 : (w + 1) * 264].tolist()))) * 128 * 4096 * 2
        for w in range(4)
    )  # fmt: skip
    assert two.hbm_bytes == pytest.approx(expected + 4096 * 4096 * 2)
    assert two.hbm_intensity > one.hbm_intensity
    assert two.l2_bytes == one.l2_bytes  # per-tile traffic does not depend on residency
    with pytest.raises(ValueError, match="ctas_per_sm"):
        tiling.l2_levels(4096, 4096, 4096, 128, 128, 32, "H100-SXM", ctas_per_sm=0)


def test_ctas_per_sm_comes_from_the_compiler_table():
    from gpuperf import chip
    from gpuperf.widgets import tile_reports

    for name, target in (("T4", "sm_75"), ("A100-80GB", "sm_80"), ("H100-SXM", "sm_90")):
        for bm, bn in ((64, 64), (128, 128)):
            r = tile_reports.tile_report(target, bm, bn, 32)
            occ = tiling.occupancy(
                chip(name), 32 * tile_reports.NUM_WARPS, r.registers_per_thread,
                r.shared_memory_bytes,
            )  # fmt: skip
            got = tile_reports.ctas_per_sm(name, bm, bn, 32)
            assert got == occ.blocks_per_sm >= 1, (name, bm, bn)
            assert got * tile_reports.NUM_WARPS == pytest.approx(
                r.occupancy * chip(name).max_threads_per_sm / 32
            )
    # A tile the table did not compile has no residency to report.
    assert not tile_reports.tile_report("sm_75", 256, 256, 32).fits
    assert tile_reports.ctas_per_sm("T4", 256, 256, 32) is None
