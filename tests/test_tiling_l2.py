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
    # The model's defaults: one program per SM and the tensor cores' roof, i.e. a hypothetical
    # tensor-core kernel on a T4 (Triton's own compiled kernel is FMA there: see below).
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


# --- the roof of the compiled kernel, and what L2 must hold --------------------------------------


def test_dot_roof_precision_agrees_with_the_stored_compiles():
    # Triton ≥ 3.4 lowers tl.dot to FMA below compute capability 8.0 (PR #5066): every stored
    # sm_75 compile carries no tensor-core instruction, every sm_80 / sm_90 compile does.
    from gpuperf import chip
    from gpuperf.inspect import TARGETS
    from gpuperf.widgets import tile_reports

    for target, (chip_name, _) in TARGETS.items():
        roof = tiling.dot_roof_precision(chip_name, "fp16")
        assert roof == ("fp32" if chip(chip_name).compute_capability < (8, 0) else "fp16")
        for (t, bm, bn, bk), _entry in tile_reports.REPORTS.items():
            report = tile_reports.tile_report(t, bm, bn, bk)
            if t == target and report.fits:
                assert bool(report.tensor_core_instruction) == (roof == "fp16"), (t, bm, bn, bk)
    assert tiling.dot_roof_precision("T4") == "fp32"
    assert tiling.dot_roof_precision("V100") == "fp32"  # MMAv1 is gone too
    assert tiling.dot_roof_precision("L4", "bf16") == "bf16"
    assert tiling.dot_roof_precision("A100-80GB", "fp32") == "fp32"  # IEEE fp32 dots: no TF32
    assert tiling.dot_roof_precision("A100-80GB", "tf32") == "tf32"
    with pytest.raises(ValueError, match="NVIDIA"):
        tiling.dot_roof_precision("TPU v5e")
    with pytest.raises(ValueError, match="fp8"):
        tiling.dot_roof_precision("A100-80GB", "fp8")  # the A100 has no fp8 tensor-core rate


def test_t4_verdict_uses_the_roof_of_the_unit_the_compiled_kernel_uses():
    # R4's finding on 3.6: the compiled sm_75 kernel (2 programs per SM for 64 × 64 tiles) is FMA,
    # so its roof is the T4's fp32 peak (ridge ≈ 25 FLOP/B): compute-bound in either order. Only
    # against the tensor cores' ridge (≈ 203), a roof this kernel never reaches, would row-major
    # order read memory-bound, which is what the page used to say.
    from gpuperf import chip
    from gpuperf.widgets import tile_reports

    t4 = chip("T4")
    ctas = tile_reports.ctas_per_sm("T4", 64, 64, 32)
    roof = tiling.dot_roof_precision(t4)
    for group in (1, 8):
        lv = tiling.l2_levels(
            4096, 4096, 4096, 64, 64, 32, t4, group_m=group, ctas_per_sm=ctas, roof_precision=roof
        )
        assert lv.roof_precision == "fp32"
        assert lv.peak_flops_per_s == t4.peak_flops("fp32")
        assert lv.hbm_ridge_point == pytest.approx(t4.ridge_point("fp32"))
        assert lv.hbm_bound == "compute", group
    tensor = tiling.l2_levels(4096, 4096, 4096, 64, 64, 32, t4, group_m=1, ctas_per_sm=ctas)
    assert tensor.roof_precision == "fp16" and tensor.hbm_bound == "memory"
    with pytest.raises(ValueError, match="roof_precision"):
        tiling.l2_levels(256, 256, 256, 64, 64, 32, t4, roof_precision="fp9")


def test_launch_order_decides_where_the_wave_is_narrow_h100():
    # 3.6's example: 128 × 128 tiles, the compiled kernel's 2 programs per SM (a 264-program
    # wave). At 4096³ a wave holds a whole group and both orders are compute-bound; at 16384³
    # (128 tiles wide) a row-major wave is 3 tile-rows × 128 columns: memory-bound; grouped
    # (8 × 33 tiles) compute-bound.
    from gpuperf.widgets import tile_reports

    ctas = tile_reports.ctas_per_sm("H100-SXM", 128, 128, 32)
    assert ctas == 2

    def bound(n, group):
        return tiling.l2_levels(
            n, n, n, 128, 128, 32, "H100-SXM", group_m=group, ctas_per_sm=ctas
        ).hbm_bound

    assert bound(4096, 1) == bound(4096, 8) == "compute"
    assert (bound(16384, 1), bound(16384, 8)) == ("memory", "compute")


def test_lockstep_working_set_and_whole_panels_against_l2():
    # R4's numbers, derived by hand: a row-major T4 wave of 80 programs with 64 × 64 tiles spans
    # 2 tile-rows and all 64 tile-columns, 66 panels: one K step (BK = 32) is
    # 66·64·32·2 B = 270,336 B, inside the 4 MiB L2; all of K (4096) is 66·64·4096·2 B = 33 MiB.
    lv = tiling.l2_levels(4096, 4096, 4096, 64, 64, 32, "T4", group_m=1, ctas_per_sm=2)
    assert lv.wave_step_bytes == 66 * 64 * 32 * 2 == 270_336
    assert lv.wave_panel_bytes == 66 * 64 * 4096 * 2
    assert lv.l2_capacity_bytes == 4 * 2**20
    assert lv.step_fits_l2 and not lv.panels_fit_l2
    # The largest wave counts: brute force over every wave of the grouped order.
    grouped = tiling.l2_levels(4096, 4096, 4096, 64, 64, 32, "T4", group_m=8, ctas_per_sm=2)
    pid_m, pid_n = tiling.program_tiles(4096, 4096, 64, 64, 8)
    widest = max(
        (len(set(pid_m[w : w + 80].tolist())) + len(set(pid_n[w : w + 80].tolist()))) * 64
        for w in range(0, pid_m.size, 80)
    )
    assert grouped.wave_step_bytes == widest * 32 * 2
    assert grouped.wave_panel_bytes == widest * 4096 * 2
    # An H100 at 4096³ holds even a wave's whole panels in its 50 MiB L2.
    h100 = tiling.l2_levels(4096, 4096, 4096, 128, 128, 32, "H100-SXM", ctas_per_sm=2)
    assert h100.panels_fit_l2 and h100.step_fits_l2
