"""Tiled-matmul calculators against brute-force tile enumeration and the sourced worked numbers."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import hardware, tiling

BAD_SIZES = [0, -1, 2.5, math.nan, math.inf, True, "x", None]
BAD_BLOCKS = [48, 8, 0, -16, 2.5, math.nan, True, "x"]
POW2 = st.sampled_from([16, 32, 64, 128, 256])


# --- independent derivations: Python loops over tiles --------------------------------------------


def brute_tiles(m, n, bm, bn):
    return sum(1 for _ in range(0, m, bm) for _ in range(0, n, bn))


def brute_tiled_bytes(m, n, k, bm, bn, bk, size, out):
    """Walk every output tile and every K step; add the A and B panels it loads (edge tiles are
    masked: only the rows and columns inside the matrices are requested)."""
    read = 0
    for row in range(0, m, bm):
        for col in range(0, n, bn):
            for step in range(0, k, bk):
                rows, cols, depth = min(bm, m - row), min(bn, n - col), min(bk, k - step)
                read += rows * depth * size + depth * cols * size
    return read, m * n * out


def brute_reads_per_element(m, n, k, bm, bn, bk):
    """Count how often each A[i, kk] and B[kk, j] is loaded by the tiled loop nest."""
    a_reads, b_reads = Counter(), Counter()
    for row in range(0, m, bm):
        for col in range(0, n, bn):
            for step in range(0, k, bk):
                for i in range(row, min(row + bm, m)):
                    for kk in range(step, min(step + bk, k)):
                        a_reads[i, kk] += 1
                for kk in range(step, min(step + bk, k)):
                    for j in range(col, min(col + bn, n)):
                        b_reads[kk, j] += 1
    return a_reads, b_reads


# --- tile count and tile quantization (NVIDIA MM guide §3.1) -------------------------------------


def test_nvidia_guide_tile_quantization():
    assert tiling.tile_count(256, 256, 128, 128) == 4
    assert tiling.tile_count(257, 256, 128, 128) == 6
    # +0.39% useful work for 1.5× the executed math.
    small = tiling.tiled_matmul(256, 256, 4096, 128, 128, 32)
    big = tiling.tiled_matmul(257, 256, 4096, 128, 128, 32)
    assert big.executed_flops / small.executed_flops == pytest.approx(1.5)
    assert big.useful_flops / small.useful_flops == pytest.approx(257 / 256)
    assert big.tile_efficiency == pytest.approx(257 * 256 / (384 * 256))


def test_tile_quantization_of_2049():
    # 2049² / (2176·2176) = 0.887 (reference §4B).
    assert tiling.tile_efficiency(2049, 2049, 128, 128) == pytest.approx(0.8867, abs=1e-4)
    assert tiling.tile_efficiency(2048, 2048, 128, 128) == 1.0


@given(st.integers(1, 3000), st.integers(1, 3000), POW2, POW2)
def test_tile_count_matches_enumeration(m, n, bm, bn):
    assert tiling.tile_count(m, n, bm, bn) == brute_tiles(m, n, bm, bn)
    eff = tiling.tile_efficiency(m, n, bm, bn)
    assert 0 < eff <= 1


# --- HBM traffic of a tiled matmul ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("m", "n", "k", "bm", "bn", "bk", "precision", "out"),
    [
        (64, 64, 64, 16, 16, 16, "fp16", None),
        (100, 70, 50, 32, 16, 16, "fp16", "fp32"),
        (257, 256, 129, 128, 128, 64, "fp32", None),
        (33, 17, 200, 16, 32, 64, "fp8", "bf16"),
    ],
)
def test_tiled_bytes_match_loop_nest(m, n, k, bm, bn, bk, precision, out):
    from gpuperf.units import bytes_per_element

    result = tiling.tiled_matmul(m, n, k, bm, bn, bk, precision, out)
    read, written = brute_tiled_bytes(
        m, n, k, bm, bn, bk, bytes_per_element(precision), bytes_per_element(out or precision)
    )
    assert result.hbm_bytes_read == read
    assert result.hbm_bytes_written == written
    assert result.tiles == brute_tiles(m, n, bm, bn)
    assert result.useful_flops == 2 * m * n * k
    assert result.intensity == pytest.approx(2 * m * n * k / (read + written))
    cost = result.cost()
    assert (cost.flops, cost.bytes) == (result.useful_flops, result.hbm_bytes)


def test_each_element_read_n_over_t_times_with_tiles_and_n_times_without():
    # Seed 002, p. 28: untiled, each element of A and B comes from HBM N times; with T×T tiles,
    # N/T times. Check the counts by walking the loop nest element by element.
    n, t = 64, 16
    a_reads, b_reads = brute_reads_per_element(n, n, n, t, t, t)
    assert set(a_reads.values()) == {n // t} and set(b_reads.values()) == {n // t}
    result = tiling.tiled_matmul(n, n, n, t, t, t)
    assert result.a_reads_per_element == result.b_reads_per_element == n // t
    # Untiled: every C[i, j] reads row i of A and column j of B.
    naive_reads = 0
    for _i in range(n):
        for _j in range(n):
            naive_reads += 2 * n  # n A elements + n B elements
    assert tiling.naive_matmul_hbm_bytes(n, n, n, "fp16") == naive_reads * 2 + n * n * 2
    # Reads drop by exactly T.
    assert naive_reads * 2 / result.hbm_bytes_read == pytest.approx(t)


def test_tile_intensity_is_bm_bn_over_bm_plus_bn_for_two_byte_inputs():
    # Seed 004's footnote and the syllabus: ≈ BM·BN / (BM + BN).
    for bm, bn in ((128, 128), (256, 128), (64, 32)):
        result = tiling.tiled_matmul(4096, 4096, 4096, bm, bn, 32, "bf16")
        assert result.tile_intensity == pytest.approx(bm * bn / (bm + bn))
        # 2·BM·BN·BK FLOPs over 2·(BM·BK + BK·BN) bytes per K step.
        bk = 32
        assert result.tile_intensity == pytest.approx(2 * bm * bn * bk / (2 * (bm * bk + bk * bn)))
    assert tiling.tiled_matmul(4096, 4096, 4096, 128, 128, 32, "fp32").tile_intensity == 32
    # Large matrices: whole-matmul intensity approaches the per-tile one (C write is small).
    big = tiling.tiled_matmul(16384, 16384, 16384, 128, 128, 64)
    assert big.intensity == pytest.approx(64, rel=0.01)


@settings(max_examples=50)
@given(st.sampled_from([16, 32, 64, 128]), st.sampled_from([16, 32, 64]))
def test_intensity_grows_with_tile_size(t, bk):
    n = 1024
    small = tiling.tiled_matmul(n, n, n, t, t, bk)
    large = tiling.tiled_matmul(n, n, n, 2 * t, 2 * t, bk)
    assert large.intensity > small.intensity
    assert large.tile_intensity > small.tile_intensity
    assert small.hbm_bytes < small.naive_hbm_bytes


# --- shared memory -------------------------------------------------------------------------------


def test_shared_memory_footprint():
    # stages · (BM·BK + BK·BN) · bytes
    assert tiling.shared_memory_bytes(128, 128, 32, "fp16") == (128 * 32 + 32 * 128) * 2
    assert tiling.shared_memory_bytes(256, 256, 64, "fp16", num_stages=4) == 256 * 1024
    assert tiling.shared_memory_bytes(16, 16, 16, "fp4") == 256
    budget = tiling.check_shared_memory("h100", 128, 128, 64, "fp16", 4)
    assert budget.fits and budget.shared_memory_bytes == 128 * 1024
    assert budget.limit_bytes == hardware.chip("h100").shared_memory_per_block_bytes


def test_shared_memory_model_is_an_upper_bound_of_every_stored_compile():
    # shared_memory_bytes counts num_stages full copies of both panels; its docstring says what
    # Triton 3.9 keeps instead. Checked on every tile of the stored compiler table (S = 3):
    # never more than the model; S buffers for wgmma tiles, S − 1 where cp.async feeds mma
    # (one sm_80 tile a little more), one to two stages' worth on sm_75 (no pipelining).
    from gpuperf.widgets import tile_reports

    stages = tile_reports.NUM_STAGES
    buffers: dict[str, list[float]] = {"wgmma": [], "mma": [], "fma": []}
    for (target, bm, bn, bk), _entry in tile_reports.REPORTS.items():
        report = tile_reports.tile_report(target, bm, bn, bk)
        if not report.fits:
            continue
        model = tiling.shared_memory_bytes(bm, bn, bk, "fp16", stages)
        assert report.shared_memory_bytes <= model, (target, bm, bn, bk)
        kind = report.tensor_core_instruction.split(".")[0] or "fma"
        buffers[kind].append(report.shared_memory_bytes / (model / stages))
    assert set(buffers["wgmma"]) == {stages}
    assert min(buffers["mma"]) == stages - 1 and max(buffers["mma"]) < stages
    assert sum(b != stages - 1 for b in buffers["mma"]) <= 1  # "one tile a little more"
    assert min(buffers["fma"]) == 1 and max(buffers["fma"]) <= 2


def test_shared_memory_overflow_on_t4_names_tile_bytes_and_limit():
    with pytest.raises(ValueError, match=r"256×256×64 fp16.*262144 bytes.*T4.*65536 bytes"):
        tiling.check_shared_memory("T4", 256, 256, 64, "fp16", 4)
    gauge = tiling.shared_memory_budget("T4", 256, 256, 64, "fp16", 4)
    assert not gauge.fits and gauge.fraction_used == pytest.approx(4.0)


def test_tpu_has_no_shared_memory_or_sms():
    for call in (
        lambda: tiling.check_shared_memory("v5e", 128, 128, 32),
        lambda: tiling.waves(10, "v5e"),
        lambda: tiling.wave_efficiency(2048, 2048, 128, 128, "TPU-v6e"),
        lambda: tiling.wave_efficiency_curve([2048], 128, 128, "v5p"),
        lambda: tiling.occupancy("v5e", 128, 32, 0),
    ):
        with pytest.raises(ValueError, match=r"TPU-v.* has no SMs"):
            call()


# --- waves: reference §4B table and NVIDIA guide §3.2 --------------------------------------------

TABLE_4B = [
    # size, tile, chip, tiles, waves, utilisation %
    (2048, (128, 128), "A100", 256, 3, 79),
    (2048, (128, 128), "H100", 256, 2, 97),
    (2048, (128, 128), "B200", 256, 2, 86),
    (2049, (128, 128), "A100", 289, 3, 89),
    (2049, (128, 128), "H100", 289, 3, 73),
    (2049, (128, 128), "B200", 289, 2, 98),
    (2048, (256, 128), "A100", 128, 2, 59),
    (2048, (256, 128), "H100", 128, 1, 97),
    (2048, (256, 128), "B200", 128, 1, 86),
    (2049, (256, 128), "A100", 153, 2, 71),
    (2049, (256, 128), "H100", 153, 2, 58),
    (2049, (256, 128), "B200", 153, 2, 52),
]


@pytest.mark.parametrize(("size", "tile", "name", "tiles", "n_waves", "percent"), TABLE_4B)
def test_2048_vs_2049_table(size, tile, name, tiles, n_waves, percent):
    result = tiling.wave_quantization(size, size, *tile, name)
    assert (result.tiles, result.waves) == (tiles, n_waves)
    assert round(100 * result.wave_efficiency) == percent
    assert tiling.wave_efficiency(size, size, *tile, name) == result.wave_efficiency
    assert tiling.waves(tiles, name) == n_waves
    assert result.efficiency == pytest.approx(result.wave_efficiency * result.tile_efficiency)


def test_nvidia_guide_wave_example():
    one = tiling.wave_quantization(2304, 1536, 256, 128, "A100")
    assert (one.tiles, one.waves, one.wave_efficiency) == (108, 1, 1.0)
    tail = tiling.wave_quantization(2304, 1544, 256, 128, "A100")
    assert (tail.tiles, tail.waves, tail.tail_tiles) == (117, 2, 9)
    # Peaks at N = 1536, 3072, 4608, 6144 along the sweep.
    sizes = np.arange(1536, 6145, 8)
    waves = tiling.wave_efficiency_curve(sizes, 256, 128, "A100", m=2304)
    tiles = tiling.tile_efficiency_curve(sizes, 256, 128, m=2304)
    assert set(sizes[waves * tiles == 1.0].tolist()) == {1536, 3072, 4608, 6144}
    # Wave efficiency alone is flat across a tile column: N = 1409…1536 all give 108 tiles.
    assert tiling.wave_efficiency(2304, 1409, 256, 128, "A100") == 1.0


def test_cutlass_and_cs336_wave_counts():
    # 210 blocks on 108 SMs = 2 waves; on 100 SMs, 3 (CUTLASS issue 335); B200 160 → 148 + 12.
    assert tiling.waves(210, "A100") == 2
    assert tiling.waves(210, hardware.chip("A100").replace(sm_count=100)) == 3
    assert tiling.waves(160, "B200") == 2
    assert tiling.waves(216, "A100", ctas_per_sm=2) == 1


@given(
    st.integers(1, 20000),
    st.integers(1, 20000),
    POW2,
    POW2,
    st.sampled_from([c.name for c in hardware.chips() if c.is_gpu]),
    st.integers(1, 4),
)
def test_wave_efficiency_in_unit_interval_and_matches_loop(m, n, bm, bn, name, ctas):
    result = tiling.wave_quantization(m, n, bm, bn, name, ctas)
    assert 0 < result.wave_efficiency <= 1
    assert 0 < result.tile_efficiency <= 1
    # Independent: hand tiles out to slots one wave at a time.
    slots = hardware.chip(name).sm_count * ctas
    remaining, n_waves = brute_tiles(m, n, bm, bn) if m * n < 10**6 else result.tiles, 0
    while remaining > 0:
        remaining -= slots
        n_waves += 1
    assert result.waves == n_waves
    assert 1 <= result.tail_tiles <= slots


def test_wave_efficiency_curve_matches_scalar():
    sizes = np.arange(1, 4200, 37)
    for name in ("A100", "H100", "T4"):
        curve = tiling.wave_efficiency_curve(sizes, 128, 256, name)
        assert curve.shape == sizes.shape
        expected = [tiling.wave_efficiency(int(s), int(s), 128, 256, name) for s in sizes]
        np.testing.assert_allclose(curve, expected)
    tiles = tiling.tile_efficiency_curve(sizes, 128, 64)
    np.testing.assert_allclose(tiles, [tiling.tile_efficiency(s, s, 128, 64) for s in sizes])
    assert tiling.wave_efficiency_curve([2048.0], 128, 128, "A100")[0] == pytest.approx(256 / 324)


# --- occupancy -----------------------------------------------------------------------------------


def test_occupancy_shared_memory_limited_on_a100():
    occ = tiling.occupancy("A100", 256, 64, 48 * 1024)
    assert (occ.blocks_limit_threads, occ.blocks_limit_registers) == (8, 4)
    assert occ.blocks_limit_shared_memory == 3  # 164 KiB // 48 KiB
    assert (occ.blocks_per_sm, occ.limited_by) == (3, "shared_memory")
    assert (occ.active_warps_per_sm, occ.max_warps_per_sm, occ.occupancy) == (24, 64, 0.375)


def test_occupancy_other_limiters():
    # Registers: 128 regs × 32 lanes = 4096 per warp → 16 warps → 2 blocks of 8 warps.
    occ = tiling.occupancy("A100", 256, 128, 0)
    assert (occ.blocks_per_sm, occ.limited_by, occ.occupancy) == (2, "registers", 0.25)
    # Threads: a T4 SM holds 1024 threads, one 1024-thread block.
    occ = tiling.occupancy("T4", 1024, 32, 0)
    assert (occ.blocks_per_sm, occ.limited_by, occ.occupancy) == (1, "threads", 1.0)
    # Hardware block cap: 32-thread blocks on an A100 stop at 32 blocks = 32 of 64 warps.
    occ = tiling.occupancy("A100", 32, 16, 0)
    assert (occ.blocks_per_sm, occ.limited_by, occ.occupancy) == (32, "max_blocks_per_sm", 0.5)
    # Register allocation granularity: 33 regs round up to 1280 per warp (5 × 256).
    occ = tiling.occupancy("A100", 32, 33, 0)
    assert occ.blocks_limit_registers == 65536 // 1280
    # Too many registers or too much shared memory: 0 blocks, cannot launch.
    assert tiling.occupancy("A100", 1024, 255, 0).blocks_per_sm == 0
    occ = tiling.occupancy("T4", 128, 32, 65 * 1024)
    assert (occ.blocks_per_sm, occ.limited_by) == (0, "shared_memory")


# --- bad inputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", BAD_SIZES)
def test_bad_sizes_are_named(bad):
    with pytest.raises(ValueError, match=r"m=.* must be an integer ≥ 1"):
        tiling.tile_count(bad, 128, 128, 128)
    with pytest.raises(ValueError, match=r"k=.* must be an integer ≥ 1"):
        tiling.tiled_matmul(128, 128, bad, 128, 128, 32)
    with pytest.raises(ValueError, match=r"n=.* must be an integer ≥ 1"):
        tiling.naive_matmul_hbm_bytes(128, bad, 128)
    with pytest.raises(ValueError, match=r"n=.* must be an integer ≥ 1"):
        tiling.wave_efficiency(128, bad, 128, 128, "A100")
    with pytest.raises(ValueError, match=r"m=.* must be an integer ≥ 1"):
        tiling.tile_efficiency(bad, 128, 128, 128)
    with pytest.raises(ValueError, match=r"tiles=.* must be an integer ≥ 1"):
        tiling.waves(bad, "A100")
    with pytest.raises(ValueError, match=r"ctas_per_sm=.* must be an integer ≥ 1"):
        tiling.wave_quantization(128, 128, 128, 128, "A100", bad)
    with pytest.raises(ValueError, match=r"num_stages=.* must be an integer ≥ 1"):
        tiling.shared_memory_bytes(128, 128, 32, "fp16", bad)
    with pytest.raises(ValueError, match=r"threads_per_block=.* must be an integer ≥ 1"):
        tiling.occupancy("A100", bad, 32, 0)


@pytest.mark.parametrize("bad", BAD_BLOCKS)
def test_tiles_must_be_powers_of_two_at_least_16(bad):
    message = rf"block_m={bad!r} must be a power of two ≥ 16".replace("(", r"\(")
    with pytest.raises(ValueError, match=message.replace(")", r"\)")):
        tiling.tiled_matmul(128, 128, 128, bad, 128, 32)
    with pytest.raises(ValueError, match=r"block_n=.* must be a power of two ≥ 16"):
        tiling.tile_count(128, 128, 128, bad)
    with pytest.raises(ValueError, match=r"block_k=.* must be a power of two ≥ 16"):
        tiling.shared_memory_bytes(128, 128, bad)
    with pytest.raises(ValueError, match=r"block_m=.* must be a power of two ≥ 16"):
        tiling.wave_efficiency_curve([128], bad, 128, "A100")


def test_block_48_message():
    with pytest.raises(ValueError, match="block_m=48 must be a power of two ≥ 16"):
        tiling.tiled_matmul(128, 128, 128, 48, 128, 32)


def test_unknown_precision_and_chip():
    with pytest.raises(ValueError, match="precision='fp12'"):
        tiling.tiled_matmul(128, 128, 128, 128, 128, 32, "fp12")
    with pytest.raises(ValueError, match="precision='int4'"):
        tiling.tiled_matmul(128, 128, 128, 128, 128, 32, "fp16", out_precision="int4")
    with pytest.raises(ValueError, match="precision='x'"):
        tiling.shared_memory_bytes(128, 128, 32, "x")
    with pytest.raises(KeyError, match=r"unknown chip 'Z100'.*known chips"):
        tiling.wave_efficiency(128, 128, 128, 128, "Z100")
    with pytest.raises(KeyError, match="unknown chip"):
        tiling.check_shared_memory("Z100", 128, 128, 32)
    with pytest.raises(KeyError, match="unknown chip"):
        tiling.occupancy("Z100", 128, 32, 0)


def test_bad_occupancy_and_curve_inputs():
    with pytest.raises(ValueError, match="threads_per_block=2048 must be ≤ 1024"):
        tiling.occupancy("A100", 2048, 32, 0)
    with pytest.raises(ValueError, match="registers_per_thread=300 must be ≤ 255"):
        tiling.occupancy("A100", 128, 300, 0)
    with pytest.raises(ValueError, match=r"registers_per_thread=-1 must be an integer ≥ 0"):
        tiling.occupancy("A100", 128, -1, 0)
    with pytest.raises(ValueError, match=r"shared_memory_per_block_bytes=nan"):
        tiling.occupancy("A100", 128, 32, math.nan)
    for bad in ([0, 5], [2.5], [math.nan], [], ["x"], [True]):
        with pytest.raises(ValueError, match=r"sizes(\[\d+\])?="):
            tiling.wave_efficiency_curve(bad, 128, 128, "A100")


def test_curves_equal_scalars_beyond_int64_products():
    sizes = [3_037_000_449, 4_000_000_001, 2**53, 257]
    assert tiling.tile_efficiency_curve(sizes, 128, 128).tolist() == [
        tiling.tile_efficiency(s, s, 128, 128) for s in sizes
    ]
    assert tiling.wave_efficiency_curve(sizes, 128, 128, "A100").tolist() == [
        tiling.wave_efficiency(s, s, 128, 128, "A100") for s in sizes
    ]
    q = tiling.wave_quantization(2**53, 2**53, 16, 16, "A100")
    assert 0 < q.tail_tiles <= q.slots_per_wave
    for call in (
        lambda: tiling.wave_efficiency_curve([1e30], 128, 128, "A100"),
        lambda: tiling.wave_quantization(1e30, 1e30, 128, 128, "A100"),
    ):
        with pytest.raises(ValueError, match="must be an integer ≥ 1 and ≤ 9007199254740992"):
            call()
    with pytest.raises(ValueError, match=r"programs; program_tiles lists at most 1048576"):
        tiling.program_tiles(2**40, 2**40, 16, 16)
