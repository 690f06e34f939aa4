"""Peak decomposition and Little's law (gpuperf.parallelism), checked against the sources' own
arithmetic and an independent derivation written out here."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from gpuperf import chip, chips, parallelism
from gpuperf.hardware import SHARED_MEMORY_BYTES_PER_CLOCK_PER_SM, TENSOR_FLOP_PER_CLOCK_PER_SM

ROOT = Path(__file__).resolve().parents[1]
GPUS = [c.name for c in chips() if c.is_gpu]


# --- peak = SMs × FLOP/clk/SM × clock ---------------------------------------------------------


def test_a100_peak_is_432_tensor_cores_times_256_fma_at_1_41_ghz():
    # STAS (reference §1A note 4): 432 TCs × 256 FMA/clk × 2 × 1.41 GHz = 311.9 TFLOP/s
    assert parallelism.peak_flops_from_parts(108, 4 * 256 * 2, 1.41e9) == pytest.approx(
        432 * 256 * 2 * 1.41e9
    )
    d = parallelism.peak_decomposition("A100-80GB", "bf16")
    assert d.flop_per_clock_per_sm == 2048 and d.source == "STAS"
    assert d.implied_clock_hz == pytest.approx(1.41e9, rel=1e-3)
    assert d.clock_ratio == pytest.approx(1.0, abs=1e-3)


def test_h100_tensor_peak_assumes_1_83_ghz_not_the_1_98_ghz_boost():
    # STAS (reference §1A note 2): 989.4 = 528 TCs × 512 FMA × 2 × 1.83 GHz; 1070 at 1.98 GHz
    d = parallelism.peak_decomposition("H100-SXM", "bf16")
    assert d.flop_per_clock_per_sm == 4096
    assert d.implied_clock_hz == pytest.approx(1.83e9, rel=1e-4)  # 1.830, not 1.829
    assert d.implied_clock_hz < d.boost_clock_hz
    assert d.peak_at_boost_flops_per_s == pytest.approx(1070e12, rel=1e-3)
    assert 1 / d.clock_ratio - 1 == pytest.approx(0.08, abs=0.005)  # "about 8 % off"
    # at the boost clock the peak would need a per-SM rate that is no power of two
    assert d.flop_per_clock_per_sm_at_boost == pytest.approx(989.4e12 / (132 * 1.98e9))
    assert math.log2(d.flop_per_clock_per_sm_at_boost) % 1 > 0.05


def test_h100_fp32_peak_uses_the_boost_clock():
    # reference §1A note 2 (DER): 67 = 132 SMs × 128 lanes × 2 × 1.98 GHz = 66.9
    assert parallelism.flop_per_clock_per_sm("H100-SXM", "fp32") == pytest.approx(256, rel=5e-3)


@pytest.mark.parametrize(
    ("name", "expected"), [("T4", 1024), ("V100", 1024), ("L4", 1024), ("RTX-4090", 512)]
)
def test_per_sm_rates_worked_back_from_the_datasheets(name, expected):
    # reference §1A note 4: T4 320 TCs × 128 × 1.59 GHz = 65.1; V100 640 × 128 × 1.53 = 125.3
    rate = parallelism.flop_per_clock_per_sm(name, "fp16")
    assert rate == pytest.approx(expected, rel=5e-3)


@pytest.mark.parametrize("name", GPUS)
def test_decomposition_round_trips_for_every_gpu(name):
    the_chip = chip(name)
    d = parallelism.peak_decomposition(name)
    rebuilt = parallelism.peak_flops_from_parts(
        the_chip.sm_count, d.flop_per_clock_per_sm_at_boost, the_chip.boost_clock_hz
    )
    assert rebuilt == pytest.approx(the_chip.peak_flops("fp16"), rel=1e-12)
    if d.flop_per_clock_per_sm is None:
        assert d.source is None and d.implied_clock_hz is None and d.clock_ratio is None
    else:
        assert d.source is not None
        clock = d.implied_clock_hz
        assert parallelism.peak_flops_from_parts(
            the_chip.sm_count, d.flop_per_clock_per_sm, clock
        ) == pytest.approx(the_chip.peak_flops("fp16"))
        # a datasheet never assumes a clock above the boost clock (V100: 1.526 vs 1.53 GHz)
        assert clock <= the_chip.boost_clock_hz * 1.001


def test_published_rates_are_sourced_and_used():
    keys = set(re.findall(r"^@\w+\{([^,\s]+),", (ROOT / "references.bib").read_text(), re.M))
    ccs = {c.compute_capability for c in chips() if c.is_gpu}
    for cc, (rate, source) in TENSOR_FLOP_PER_CLOCK_PER_SM.items():
        assert cc in ccs, cc
        assert source in keys, source
        assert rate & (rate - 1) == 0, rate  # tensor-core rates are powers of two


def test_ridge_point_is_flop_per_clock_over_bytes_per_clock_per_sm():
    for name in ("A100-80GB", "H100-SXM", "B200", "T4"):
        the_chip = chip(name)
        clock = 1.5e9  # any common clock cancels
        ratio = parallelism.flop_per_clock_per_sm(
            name, "fp16", clock
        ) / parallelism.dram_bytes_per_clock_per_sm(name, clock)
        assert ratio == pytest.approx(the_chip.ridge_point("fp16"))


def test_dram_bytes_per_clock_is_an_order_below_shared_memory():
    h100 = parallelism.dram_bytes_per_clock_per_sm("H100-SXM")
    assert h100 == pytest.approx(3.35e12 / (132 * 1.98e9))
    assert 5 < SHARED_MEMORY_BYTES_PER_CLOCK_PER_SM / h100 < 15


# --- Little's law -------------------------------------------------------------------------------


def test_bytes_in_flight_is_bandwidth_times_latency():
    assert parallelism.bytes_in_flight(3.35e12, 375e-9) == pytest.approx(1.25625e6)


def test_h100_little_law_worked_example():
    m = parallelism.memory_parallelism("H100-SXM")  # latency: the H100 PCIe measurement
    assert m.latency_s == pytest.approx(375e-9)
    per_sm = 3.35e12 * 375e-9 / 132
    assert m.bytes_in_flight_per_sm == pytest.approx(per_sm)
    assert m.bytes_per_clock_per_sm * m.latency_cycles == pytest.approx(per_sm)
    assert m.bytes_per_warp == 32 * 16
    assert m.warps_needed_per_sm == math.ceil(per_sm / 512) == 19
    assert m.max_warps_per_sm == 2048 // 32
    assert m.feasible and m.occupancy_needed == pytest.approx(19 / 64)
    assert m.register_share == pytest.approx(per_sm / (65536 * 4))
    # scalar fp32 loads at ILP 1 cannot do it: 75 warps > 64; two loads in flight can
    scalar = parallelism.memory_parallelism("H100-SXM", bytes_per_load=4)
    assert scalar.warps_needed_per_sm == math.ceil(per_sm / 128) == 75
    assert not scalar.feasible
    assert scalar.loads_in_flight_needed_at_full_occupancy == 2
    assert scalar.max_bandwidth_fraction == pytest.approx(64 * 128 / per_sm)
    ilp2 = parallelism.memory_parallelism("H100-SXM", bytes_per_load=4, loads_in_flight=2)
    assert ilp2.feasible and ilp2.warps_needed_per_sm == 38


def test_latency_in_cycles_matches_the_measurement():
    # gpu-benches: ~658 cycles (375 ns) on the H100 PCIe, ~570 cycles (404 ns) on the A100
    assert parallelism.memory_parallelism("H100-PCIe").latency_cycles == pytest.approx(658, abs=1)
    assert parallelism.memory_parallelism("A100-80GB").latency_cycles == pytest.approx(570, abs=1)


def test_dram_latency_stand_ins_name_the_card_they_were_measured_on():
    assert parallelism.dram_latency("H100-SXM").chip == "H100-PCIe"
    assert parallelism.dram_latency("h200").chip == "H100-PCIe"
    assert parallelism.dram_latency("A100-40GB").chip == "A100-80GB"
    assert parallelism.dram_latency("A100-80GB").source == "GPUBENCH"
    with pytest.raises(ValueError, match=r"T4.*pass latency_s"):
        parallelism.dram_latency("T4")
    with pytest.raises(ValueError, match="pass latency_s"):
        parallelism.memory_parallelism("B200")
    b200 = parallelism.memory_parallelism("B200", latency_s=375e-9, bytes_per_load=4)
    assert b200.warps_needed_per_sm == math.ceil(8e12 * 375e-9 / 148 / 128)


def test_256_bit_loads_from_compute_capability_10():
    """Review 2026-12 (R2): sm_100 loads 32 B per thread (ld.global.v8.b32; LLVM NVPTX:
    sm_100+ with PTX 8.8, global memory only), which LOAD_WIDTHS_BYTES could not express."""
    for the_chip in chips():
        if not the_chip.is_gpu:
            continue
        widths = parallelism.load_widths(the_chip)
        assert widths[: len(parallelism.LOAD_WIDTHS_BYTES)] == parallelism.LOAD_WIDTHS_BYTES
        assert (32 in widths) == (the_chip.compute_capability >= (10, 0))
    b200 = parallelism.memory_parallelism("B200", latency_s=375e-9, bytes_per_load=32)
    assert b200.warps_needed_per_sm == math.ceil(8e12 * 375e-9 / 148 / (32 * 32)) == 20
    wide = parallelism.copy_parallelism("B200", "ldg", 32, latency_s=375e-9)
    assert wide.warps_needed == b200.warps_needed_per_sm
    with pytest.raises(ValueError, match=r"bytes_per_load=32: 256-bit.*10\.0.*H100-SXM has 9\.0"):
        parallelism.memory_parallelism("H100-SXM", bytes_per_load=32)
    with pytest.raises(ValueError, match="bytes_per_copy=32"):
        parallelism.copy_parallelism("B200", "cp.async", 32)  # cp.async stays at 16 B
    with pytest.raises(ValueError, match="bytes_per_copy=32: 256-bit"):
        parallelism.copy_parallelism("A100-80GB", "ldg", 32)


def test_achievable_bandwidth_is_littles_law_capped_at_the_peak():
    h100 = chip("H100-SXM")
    warps = np.arange(0, 65)
    curve = parallelism.achievable_bandwidth("H100-SXM", 375e-9, warps, 16, 1)
    expected = np.minimum(h100.hbm_bandwidth, 132 * warps * 32 * 16 / 375e-9)
    np.testing.assert_allclose(curve, expected)
    assert np.all(np.diff(curve) >= 0) and curve[0] == 0
    needed = parallelism.memory_parallelism("H100-SXM").warps_needed_per_sm
    assert curve[needed] == pytest.approx(h100.hbm_bandwidth)
    assert curve[needed - 1] < h100.hbm_bandwidth
    scalar = parallelism.achievable_bandwidth("H100-SXM", 375e-9, 16.0, 4, 2)
    assert isinstance(scalar, float)
    assert scalar == pytest.approx(132 * 16 * 32 * 4 * 2 / 375e-9)


# --- failure paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: parallelism.peak_decomposition("TPU-v5e"), "TPU"),
        (lambda: parallelism.peak_decomposition("H100", "fp8"), "precision='fp8'"),
        (lambda: parallelism.peak_decomposition("T4", "bf16"), "bf16"),
        (lambda: parallelism.memory_parallelism("H100", bytes_per_load=3), "bytes_per_load=3"),
        (lambda: parallelism.memory_parallelism("H100", loads_in_flight=0), "loads_in_flight=0"),
        (lambda: parallelism.memory_parallelism("H100", latency_s=-1.0), "latency_s=-1.0"),
        (lambda: parallelism.achievable_bandwidth("T4", 4e-7, 33), r"\[0, 32\]"),
        (lambda: parallelism.achievable_bandwidth("H100", 4e-7, [[1.0]]), "warps_per_sm"),
        (lambda: parallelism.achievable_bandwidth("H100", 4e-7, "x"), "warps_per_sm='x'"),
        (lambda: parallelism.peak_flops_from_parts(0, 1024, 1e9), "sm_count=0"),
        (lambda: parallelism.dram_bytes_per_clock_per_sm("H100", 0.0), "clock_hz=0.0"),
        (lambda: parallelism.bytes_in_flight(3e12, math.nan), "latency_s=nan"),
    ],
)
def test_bad_arguments_name_the_value_and_the_range(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_unknown_chip_lists_the_known_ones():
    with pytest.raises(KeyError, match="known chips"):
        parallelism.memory_parallelism("H300")


def test_result_objects_check_their_fields():
    with pytest.raises(ValueError, match="both be given"):
        parallelism.PeakDecomposition("X", "fp16", 1, 1e9, 1e12, 1024, None)
    with pytest.raises(ValueError, match="sm_count"):
        parallelism.PeakDecomposition("X", "fp16", 0, 1e9, 1e12)
    with pytest.raises(ValueError, match="bytes_per_load"):
        parallelism.MemoryParallelism("X", 1e12, 1e-7, 10, 1e9, 64, 262144, 3, 1)


# --- latency under load and copy mechanisms ----------------------------------------------------


def test_loaded_latency_is_littles_law_on_the_measured_sweep():
    # gpu-benches README, H100 PCIe (114 SMs), gpu-stream read: 2 blocks of 32 threads per SM
    # drew 96 GB/s, 2 blocks of 1024 drew 1942 GB/s; each thread holds one 8-byte load.
    r = parallelism.loaded_latency("H100-PCIe")
    assert r.effective_latency_s[0] == pytest.approx(114 * 64 * 8 / 96e9)
    assert r.effective_latency_s[-1] == pytest.approx(114 * 2048 * 8 / 1942e9)
    assert r.effective_latency_s[-1] == pytest.approx(962e-9, rel=1e-3)
    assert r.unloaded_latency_s == 375e-9
    assert r.latency_ratio[-1] == pytest.approx(962 / 375, rel=1e-3)
    # the more load, the longer each load takes (the curve rises with bandwidth, up to noise)
    latency = np.array(r.effective_latency_s)
    assert np.corrcoef(latency, r.bandwidth)[0, 1] > 0.9 and latency[-8:].min() > latency[:8].max()
    h200 = parallelism.loaded_latency("H200")
    assert h200.sm_count == 132 and h200.bandwidth_fraction[-1] == pytest.approx(2756 / 4800)
    with pytest.raises(ValueError, match="no occupancy sweep"):
        parallelism.loaded_latency("A100-80GB")


def test_copy_parallelism_by_hand_and_against_memory_parallelism():
    h100 = chip("H100-SXM")
    per_sm = h100.hbm_bandwidth * 375e-9 / h100.sm_count
    ldg = parallelism.copy_parallelism("H100-SXM", "ldg", 16, 1)
    assert ldg.bytes_in_flight_per_sm == pytest.approx(per_sm)
    assert ldg.warps_needed == math.ceil(per_sm / 512)
    assert (
        ldg.warps_needed
        == parallelism.memory_parallelism("H100-SXM", bytes_per_load=16).warps_needed_per_sm
    )
    assert ldg.landing_bytes_per_sm == 4 * 65536  # the register file
    tma = parallelism.copy_parallelism("H100-SXM", "tma", 128 * 64 * 2, 2, latency_s=962e-9)
    assert tma.warps_needed == 1 and tma.bytes_per_warp == 2 * 16384
    # Two 16 KiB tiles in flight occupy 32 KiB of the 228 KiB shared memory (14 %), more than the
    # 24.4 kB Little's law asks for (10 %): a tile lands whole.
    assert tma.bytes_held_per_sm == 2 * 16384 > tma.bytes_in_flight_per_sm
    assert tma.landing_share == pytest.approx(2 * 16384 / (228 * 1024))
    assert round(tma.landing_share, 2) == 0.14
    assert ldg.bytes_held_per_sm == ldg.warps_needed * 512 >= ldg.bytes_in_flight_per_sm
    cp = parallelism.copy_parallelism("A100-80GB", "cp.async", 16, 8)
    assert cp.bytes_per_warp == 32 * 16 * 8


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"chip_name": "T4", "mechanism": "cp.async"}, "needs compute capability 8.0"),
        ({"chip_name": "A100-80GB", "mechanism": "tma", "bytes_per_copy": 1024}, "9.0"),
        ({"chip_name": "H100-SXM", "mechanism": "tma", "bytes_per_copy": 1000}, "multiple of 16"),
        (
            {"chip_name": "H100-SXM", "mechanism": "cp.async", "bytes_per_copy": 2},
            "bytes_per_copy",
        ),
        ({"chip_name": "H100-SXM", "mechanism": "dma"}, "mechanism='dma'"),
        ({"chip_name": "TPU-v5e"}, "TPU"),
    ],
)
def test_copy_parallelism_rejects(kwargs, match):
    with pytest.raises(ValueError, match=match):
        parallelism.copy_parallelism(**kwargs)
