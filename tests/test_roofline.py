"""Roofline bounds, critical batch sizes and network rooflines, against the seeds' answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuperf import cost, measurements, roofline
from gpuperf.hardware import chip, chips

GPU_PRECISIONS = [(c.name, p) for c in chips() for p in c.precisions]


def test_one_teraflop_on_an_h100_takes_about_a_millisecond():
    # Seed 004: 1e12 FLOPs / 9.89e14 FLOP/s ≈ 1.01 ms.
    op = cost.OpCost(1e12, 1.0, 0.0)
    assert roofline.time_bounds(op, "h100", "bf16").t_math_s == pytest.approx(1.01e-3, rel=0.01)


def test_bounds_are_max_and_sum_and_at_most_two_apart():
    op = cost.matmul(256, 4096, 4096, "bf16")
    bounds = roofline.time_bounds(op, "h100", "bf16")
    assert bounds.t_math_s == pytest.approx(op.flops / 989.4e12)
    assert bounds.t_comms_s == pytest.approx(op.bytes / 3.35e12)
    assert bounds.lower_s == max(bounds.t_math_s, bounds.t_comms_s)
    assert bounds.upper_s == bounds.t_math_s + bounds.t_comms_s
    assert bounds.lower_s <= bounds.upper_s <= 2 * bounds.lower_s


def test_bound_names_the_slower_resource():
    relu = cost.elementwise(1 << 24, "fp32")
    assert roofline.time_bounds(relu, "a100", "fp32").bound == "memory"
    big = cost.matmul(8192, 8192, 8192, "bf16")
    assert roofline.time_bounds(big, "a100", "bf16").bound == "compute"
    small_batch = cost.matmul(16, 8192, 8192, "bf16")
    assert roofline.time_bounds(small_batch, "h100", "bf16").bound == "memory"


def test_tpu_v5e_bf16_critical_batch_is_240():
    # Seed 004: 1.97e14 / 8.2e11 = 240.
    assert roofline.critical_batch_size("v5e") == pytest.approx(240, abs=1)
    assert roofline.ridge_point("v5e", "bf16") == pytest.approx(240, abs=1)


def test_int8_weights_with_bf16_compute_halve_the_critical_batch():
    # Seed 004, problem 2: compute-bound when 2B > 240, i.e. B > 120.
    assert roofline.critical_batch_size("v5e", weight_precision="int8") == pytest.approx(
        120, abs=1
    )


def test_int8_matmul_critical_batch_with_the_problems_numbers():
    # Seed 004, problem 1 assumes 8.1e11 B/s and 3.94e14 int8 OP/s: 486 / 2 = 243.
    assumed = chip("v5e").replace(hbm_bandwidth=8.1e11)
    assert assumed.ridge_point("int8") == pytest.approx(486, abs=1)
    assert roofline.critical_batch_size(assumed, "int8") == pytest.approx(243, abs=0.5)


def test_h100_critical_batch_is_about_295():
    # Seed 004, problem 5 (with 1e15 rounded: 298); the dense 989.4 TFLOP/s gives 295.
    assert roofline.critical_batch_size("h100") == pytest.approx(295, abs=1)


@pytest.mark.parametrize("d", [1024, 4096])
def test_exact_critical_batch_matches_a_scan_over_batch_sizes(d):
    # Seed 004, problem 3: exact byte counts, int8 weights, bf16 activations and math.
    exact = roofline.critical_batch_size("v5e", weight_precision="int8", d=d, f=d)
    scanned = next(
        b
        for b in range(1, 2000)
        if roofline.time_bounds(
            cost.matmul(b, d, d, "bf16", b_precision="int8"), "v5e", "bf16"
        ).bound
        == "compute"
    )
    assert math.ceil(exact) == scanned


def test_smaller_matrices_need_a_larger_batch():
    # Seed 004, problem 3: D = F = 1024 almost doubles the critical batch of D = F = 4096.
    big = roofline.critical_batch_size("v5e", weight_precision="int8", d=4096, f=4096)
    small = roofline.critical_batch_size("v5e", weight_precision="int8", d=1024, f=1024)
    assert 1.5 < small / big < 2.0


def test_tiny_matrices_are_never_compute_bound():
    assert roofline.critical_batch_size("h100", d=128, f=128) == math.inf


def test_roofline_curve_rises_then_flattens_at_the_peak():
    batch = np.arange(1, 513)
    flops = roofline.matmul_flops_vs_batch(batch, 4096, 4096, "v5e", weight_precision="int8")
    peak = chip("v5e").peak_flops("bf16")
    assert np.all(np.diff(flops) >= -1e-9 * peak)
    assert flops[0] < 0.02 * peak
    assert flops[-1] == pytest.approx(peak)
    with pytest.raises(ValueError, match="non-empty 1-D"):
        roofline.matmul_flops_vs_batch(np.array([]), 8, 8, "v5e")


def test_two_chip_matmul_is_compute_bound_above_d_8755():
    # Seed 004: D/2 > 1.97e14 / 4.5e10 = 4377, i.e. D > 8755, whatever B and F.
    link = 4.5e10
    assert roofline.critical_split_dim("v5e", link_bandwidth=link) == pytest.approx(
        8755.6, abs=0.1
    )
    for b, f in [(128, 4096), (4096, 16384)]:
        below = roofline.split_matmul_time_bounds(b, 8755, f, "v5e", link_bandwidth=link)
        above = roofline.split_matmul_time_bounds(b, 8756, f, "v5e", link_bandwidth=link)
        assert (below.bound, above.bound) == ("memory", "compute")
        # T_math = BDF / 1.97e14 and T_comms = 2BF / 4.5e10 (seed 004).
        assert above.t_math_s == pytest.approx(b * 8756 * f / 197e12)
        assert above.t_comms_s == pytest.approx(2 * b * f / link)


def test_tpu_pairwise_split_defaults_to_one_ici_link():
    # Two v5e chips exchange partial sums over the one 50 GB/s link between them, not over the
    # four links (200 GB/s) of the chip's torus ports: D > 2 · 1.97e14 / 5e10 = 7880.
    v5e = chip("v5e")
    assert roofline.critical_split_dim("v5e") == pytest.approx(2 * 197e12 / 50e9)
    all_four = roofline.critical_split_dim("v5e", link_bandwidth=v5e.interconnect_bandwidth)
    assert roofline.critical_split_dim("v5e") == pytest.approx(4 * all_four)
    bounds = roofline.split_matmul_time_bounds(1024, 8192, 8192, "v5e")
    assert bounds.bandwidth == v5e.interconnect_link_bandwidth == 50e9
    assert roofline.critical_split_dim("v5p") == pytest.approx(2 * 459e12 / 100e9)


def test_split_matmul_uses_the_chips_own_link_and_refuses_when_there_is_none():
    h100 = roofline.split_matmul_time_bounds(64, 8192, 8192, "h100")
    assert h100.bandwidth == chip("h100").interconnect_bandwidth
    assert roofline.critical_split_dim("h100", n_chips=8) == pytest.approx(
        7 * 2 * 989.4e12 / 450e9
    )
    with pytest.raises(ValueError, match="T4 has no chip-to-chip link"):
        roofline.split_matmul_time_bounds(64, 8192, 8192, "t4", "fp16")
    with pytest.raises(ValueError, match="n_chips=1 must be an integer ≥ 2"):
        roofline.critical_split_dim("h100", n_chips=1)


def test_h100_bf16_measured_714_to_758_is_72_to_77_percent_of_peak():
    low, high = measurements.gemm_range("bf16")
    peak = chip("h100").peak_flops("bf16")
    assert (low / 1e12, high / 1e12) == (714.5, 757.7)
    assert round(100 * low / peak) == 72 and round(100 * high / peak) == 77


def test_nvbandwidth_1519_each_way_is_about_3_tb_s():
    per_direction = measurements.NVBANDWIDTH_H100_LOCAL_COPY
    assert min(per_direction) / 1e9 == pytest.approx(1519, abs=1)
    total = 2 * np.mean(per_direction)
    assert total == pytest.approx(3.04e12, rel=0.01)
    assert total / chip("h100").hbm_bandwidth == pytest.approx(0.907, abs=0.005)


def test_attainable_flops_is_the_roof():
    h100 = chip("h100")
    ridge = h100.ridge_point("bf16")
    assert roofline.attainable_flops(ridge, h100, "bf16") == pytest.approx(989.4e12)
    assert roofline.attainable_flops(1.0, h100, "bf16") == pytest.approx(3.35e12)
    curve = roofline.attainable_flops(np.array([0.5, ridge, 1e4]), "h100", "bf16")
    assert curve.shape == (3,) and curve[-1] == pytest.approx(989.4e12)
    # A slower second bandwidth (PCIe) moves the ridge right.
    pcie = h100.host_link_bandwidth
    assert roofline.ridge_point(h100, "bf16", pcie) == pytest.approx(989.4e12 / 63.0e9, rel=1e-3)
    assert roofline.ridge_point(h100, "bf16", pcie) > 50 * ridge


@given(
    name_precision=st.sampled_from(GPU_PRECISIONS),
    intensity=st.floats(1e-3, 1e6, allow_nan=False),
    bandwidth=st.one_of(st.none(), st.floats(1e9, 1e13)),
)
def test_attainable_never_exceeds_either_roof(name_precision, intensity, bandwidth):
    name, precision = name_precision
    the_chip = chip(name)
    bw = bandwidth or the_chip.hbm_bandwidth
    value = roofline.attainable_flops(intensity, the_chip, precision, bandwidth)
    assert value <= min(the_chip.peak_flops(precision), bw * intensity) * (1 + 1e-12)
    assert value >= min(the_chip.peak_flops(precision), bw * intensity) * (1 - 1e-12)


@given(
    name_precision=st.sampled_from(GPU_PRECISIONS),
    flops=st.floats(1, 1e18),
    n_bytes=st.floats(1, 1e15),
)
def test_time_bounds_invariants(name_precision, flops, n_bytes):
    name, precision = name_precision
    bounds = roofline.time_bounds(cost.OpCost(flops, n_bytes, 0), name, precision)
    assert bounds.lower_s <= bounds.upper_s <= 2 * bounds.lower_s * (1 + 1e-12)
    assert (bounds.bound == "compute") == (bounds.intensity >= bounds.ridge_point * (1 - 1e-12))
    assert bounds.attainable_flops_per_s <= chip(name).peak_flops(precision) * (1 + 1e-9)


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf])
def test_bad_intensity_and_bandwidth(bad):
    with pytest.raises(ValueError, match="intensity="):
        roofline.attainable_flops(bad, "h100", "bf16")
    with pytest.raises(ValueError, match="bandwidth="):
        roofline.ridge_point("h100", "bf16", bandwidth=bad if bad != 0 else -2)
    with pytest.raises(ValueError, match="link_bandwidth="):
        roofline.critical_split_dim("h100", link_bandwidth=bad if bad != 0 else -2)


def test_bad_arguments_to_the_other_functions():
    with pytest.raises(TypeError, match=r"must be a gpuperf\.cost\.OpCost"):
        roofline.time_bounds((1e9, 1e6), "h100", "bf16")
    with pytest.raises(ValueError, match="T4 has no bf16"):
        roofline.critical_batch_size("t4", "bf16")
    with pytest.raises(ValueError, match="pass both d and f"):
        roofline.critical_batch_size("h100", d=4096)
    with pytest.raises(ValueError, match="d=0 must be"):
        roofline.critical_batch_size("h100", d=0, f=4096)
    with pytest.raises(ValueError, match="is not a known precision"):
        roofline.critical_batch_size("h100", weight_precision="int4")
    with pytest.raises(KeyError, match="unknown chip"):
        roofline.ridge_point("a800", "bf16")
    with pytest.raises(ValueError, match=r"b=2\.5"):
        roofline.split_matmul_time_bounds(2.5, 8, 8, "h100")


def test_batches_and_intensities_must_be_numbers():
    for bad in ([3.5], [True], ["64"], [0]):
        with pytest.raises(ValueError, match=r"batch\[0\]=.* must be an integer ≥ 1"):
            roofline.matmul_flops_vs_batch(bad, 1024, 1024, "H100")
    for bad in (True, "4096", [1.0, "x"], np.array([1 + 1j])):
        with pytest.raises(ValueError, match=r"intensity=.* must be finite numbers > 0"):
            roofline.attainable_flops(bad, "H100", "bf16")
    with pytest.raises(ValueError, match="n_bytes=0 must be a finite number > 0"):
        roofline.TimeBounds(1, 0, 1, 1)
    with pytest.raises(ValueError, match="weight_precision='' is not a known precision"):
        roofline.critical_batch_size("H100", weight_precision="")
