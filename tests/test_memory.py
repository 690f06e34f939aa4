"""Coalescing, transfer model and bandwidth ladder against hand counts and sourced numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuperf import hardware, memory

BAD_SIZES = [0, -1, 2.5, math.nan, math.inf, True, "x", None]


# --- coalescing ----------------------------------------------------------------------------------


def brute_sectors(stride, offset, element_bytes, warp_size=32, sector=32):
    """Mark every byte each lane touches, then list the sectors containing a marked byte."""
    touched = set()
    for lane in range(warp_size):
        first = (offset + lane * stride) * element_bytes
        for byte in range(first, first + element_bytes):
            touched.add(byte)
    return sorted({byte // sector for byte in touched})


@pytest.mark.parametrize(
    ("stride", "offset", "sectors", "efficiency"),
    [(1, 0, 4, 1.0), (1, 1, 5, 0.8), (2, 0, 8, 0.5), (4, 0, 16, 0.25), (8, 0, 32, 0.125)],
)
def test_fp32_warp_worked_numbers(stride, offset, sectors, efficiency):
    # Seed 002, pp. 23–25: aligned consecutive loads use every byte of their bursts; misaligned
    # or strided ones drag in bytes nobody asked for ("one nice tile vs two bad tiles").
    result = memory.coalescing(stride, offset)
    assert result.transactions == sectors
    assert result.efficiency == efficiency
    assert result.bytes_requested == 128
    assert result.bytes_moved == 32 * sectors


def test_cache_lines_and_addresses():
    aligned = memory.coalescing()
    assert aligned.addresses == tuple(range(0, 128, 4))
    assert aligned.sectors == (0, 1, 2, 3) and aligned.cache_lines == 1
    assert memory.coalescing(1, 1).cache_lines == 2  # bytes 4..131 cross a 128-byte line
    assert memory.coalescing(32).cache_lines == 32
    # fp16: 32 lanes × 2 B = 64 B, two sectors; fp64: 256 B, eight sectors.
    assert memory.coalescing(element_bytes=2).transactions == 2
    assert memory.coalescing(element_bytes=8).transactions == 8
    assert memory.coalescing(element_bytes=16).efficiency == 1.0


@given(
    st.integers(1, 64),
    st.integers(0, 100),
    st.sampled_from(memory.ELEMENT_BYTES),
    st.sampled_from([8, 16, 32]),
)
def test_coalescing_matches_byte_enumeration(stride, offset, element_bytes, warp_size):
    result = memory.coalescing(stride, offset, element_bytes, warp_size)
    assert list(result.sectors) == brute_sectors(stride, offset, element_bytes, warp_size)
    assert 0 < result.efficiency <= 1
    assert result.cache_lines <= result.transactions
    # Strides of a whole sector or more cost one sector per lane.
    if stride * element_bytes >= 32:
        assert result.transactions == warp_size


# --- transfer model ------------------------------------------------------------------------------


def test_transfer_time_and_half_bandwidth():
    # 1 µs latency at 10 GB/s: 1 MB takes 101 µs; half the peak at 10 kB.
    assert memory.transfer_time(1e6, 10e9, 1e-6) == pytest.approx(101e-6)
    assert memory.half_bandwidth_size(10e9, 1e-6) == pytest.approx(1e4)
    assert memory.effective_bandwidth(1e4, 10e9, 1e-6) == pytest.approx(5e9)
    # Seed 001: H2D on the p5 node, ~1.4 µs round trip, ~14.2 GB/s → half-bandwidth ~20 kB.
    assert memory.half_bandwidth_size(14.2e9, 1.4e-6) == pytest.approx(19880)
    assert memory.effective_bandwidth(0, 10e9, 1e-6) == 0.0
    assert memory.effective_bandwidth(0, 10e9, 0) == 0.0
    assert memory.transfer_time(0, 10e9, 2e-6) == 2e-6


def test_arrays_in_arrays_out():
    sizes = np.logspace(2, 9, 30)
    times = memory.transfer_time(sizes, 1.5e12, 5e-6)
    assert isinstance(times, np.ndarray) and times.shape == sizes.shape
    np.testing.assert_allclose(times, [5e-6 + s / 1.5e12 for s in sizes])
    bw = memory.effective_bandwidth(sizes, 1.5e12, 5e-6)
    assert np.all(bw < 1.5e12) and np.all(np.diff(bw) > 0)
    # Seed 000/001: below ~1 MB the copy is latency-bound (latency > transfer term here).
    small = sizes < 1e6
    assert np.all(sizes[small] / 1.5e12 * 0.5 < 5e-6)


@given(
    st.floats(1, 1e12),
    st.floats(1e6, 1e13),
    st.floats(1e-9, 1e-3),
    st.floats(1.01, 100),
)
def test_effective_bandwidth_below_peak_and_growing(n_bytes, bandwidth, latency, factor):
    small = memory.effective_bandwidth(n_bytes, bandwidth, latency)
    large = memory.effective_bandwidth(n_bytes * factor, bandwidth, latency)
    assert 0 < small <= bandwidth
    assert large >= small
    if latency * bandwidth / n_bytes > 1e-6:  # strictly, unless rounding hides the latency
        assert small < bandwidth
        assert large > small
    half = memory.half_bandwidth_size(bandwidth, latency)
    assert memory.effective_bandwidth(half, bandwidth, latency) == pytest.approx(bandwidth / 2)


def test_fit_recovers_latency_and_bandwidth():
    sizes = np.array([1e3, 1e4, 1e5, 1e6, 1e7, 1e8])
    times = 2.5e-6 + sizes / 14.2e9
    model = memory.fit_transfer_model(sizes, times)
    assert model.latency_s == pytest.approx(2.5e-6, rel=1e-6)
    assert model.bandwidth == pytest.approx(14.2e9, rel=1e-6)
    assert not model.latency_clipped
    assert model.half_bandwidth_bytes == pytest.approx(2.5e-6 * 14.2e9, rel=1e-6)
    assert model.time_s(1e6) == pytest.approx(2.5e-6 + 1e6 / 14.2e9)
    assert model.effective_bandwidth(1e9) < model.bandwidth
    # Independent derivation: normal equations by hand for two points.
    (n1, n2), (t1, t2) = (1e5, 1e7), (2.5e-6 + 1e5 / 14.2e9, 2.5e-6 + 1e7 / 14.2e9)
    slope = (t2 - t1) / (n2 - n1)
    two = memory.fit_transfer_model([n1, n2], [t1, t2])
    assert two.bandwidth == pytest.approx(1 / slope)
    assert two.latency_s == pytest.approx(t1 - slope * n1)


def test_fit_clips_negative_latency():
    sizes = np.array([1e6, 2e6, 4e6])
    times = sizes / 1e9 - np.array([1e-6, 0, 0])  # noise pushes the intercept below zero
    model = memory.fit_transfer_model(sizes, times)
    assert model.latency_clipped and model.latency_s == 0.0
    assert model.bandwidth == pytest.approx(1e9, rel=1e-3)


def test_fit_rejects_bad_data():
    with pytest.raises(ValueError, match="at least 2 distinct sizes"):
        memory.fit_transfer_model([1e6, 1e6], [1e-3, 1.1e-3])
    with pytest.raises(ValueError, match="at least 2 distinct sizes"):
        memory.fit_transfer_model([1e6], [1e-3])
    with pytest.raises(ValueError, match="same length"):
        memory.fit_transfer_model([1e6, 2e6], [1e-3])
    with pytest.raises(ValueError, match="do not grow"):
        memory.fit_transfer_model([1e6, 2e6, 3e6], [3e-3, 2e-3, 1e-3])
    with pytest.raises(ValueError, match="times_s="):
        memory.fit_transfer_model([1e6, 2e6], [1e-3, math.nan])
    with pytest.raises(ValueError, match="n_bytes="):
        memory.fit_transfer_model([1e6, -2e6], [1e-3, 2e-3])


# --- the ladder ----------------------------------------------------------------------------------


def test_a100_and_h100_ladders_use_the_chip_table():
    h100 = hardware.chip("H100")
    ladder = memory.bandwidth_ladder(h100, l2_bandwidth=12e12)
    names = [level.name.split(" (")[0] for level in ladder]
    assert names == [
        "registers",
        "shared memory / L1",
        "L2",
        "HBM",
        "chip-to-chip",
        "host link",
        "network",
        "storage",
    ]
    by_name = dict(zip(names, ladder, strict=True))
    assert by_name["registers"].capacity_bytes == 65536 * 4 * 132  # 256 KB per SM
    assert by_name["registers"].bandwidth_bytes_per_s is None
    # The whole unified L1/shared SRAM (256 KB per SM on CC 9.0), not the 228 KB carve-out.
    assert by_name["shared memory / L1"].capacity_bytes == 256 * 1024 * 132
    assert by_name["shared memory / L1"].bandwidth_bytes_per_s == pytest.approx(33.4e12, rel=0.01)
    assert by_name["L2"].capacity_bytes == 50 * 2**20
    assert by_name["L2"].bandwidth_bytes_per_s == 12e12
    assert by_name["HBM"].bandwidth_bytes_per_s == h100.hbm_bandwidth
    assert by_name["chip-to-chip"].bandwidth_bytes_per_s == h100.interconnect_bandwidth
    assert by_name["host link"].bandwidth_bytes_per_s == h100.host_link_bandwidth
    assert by_name["network"].bandwidth_bytes_per_s is None
    # A100: shared memory ~19.5 TB/s (the FA1 paper's "around 19TB/s").
    a100 = memory.bandwidth_ladder("A100-40GB")
    assert a100[1].bandwidth_bytes_per_s == pytest.approx(19.5e12, rel=0.01)
    assert a100[1].capacity_bytes == 192 * 1024 * 108  # the FA1 paper's "192KB ... 108 SMs"


def test_ladder_on_chip_levels_get_slower():
    for found in hardware.chips():
        ladder = memory.bandwidth_ladder(found, l2_bandwidth=None)
        known = [level.bandwidth_bytes_per_s for level in ladder[:4]]
        known = [bw for bw in known if bw is not None]
        assert known == sorted(known, reverse=True)
        assert all(level.source for level in ladder)


def test_ladder_caller_values_and_measured_host_link():
    ladder = memory.bandwidth_ladder(
        "H100",
        register_bandwidth=401e12,
        host_bandwidth=14.2e9,
        network_bandwidth=50e9,
        storage_bandwidth=5e9,
    )
    values = {level.name.split(" (")[0]: level for level in ladder}
    assert values["registers"].bandwidth_bytes_per_s == 401e12
    assert values["host link"].bandwidth_bytes_per_s == 14.2e9
    assert "caller" in values["host link"].source
    assert values["network"].bandwidth_bytes_per_s == 50e9
    assert values["storage"].bandwidth_bytes_per_s == 5e9


def test_tpu_ladder_skips_sm_levels():
    ladder = memory.bandwidth_ladder("v5e")
    names = [level.name for level in ladder]
    assert not any(name.startswith(("registers", "shared", "L2")) for name in names)
    assert ladder[0].name.startswith("HBM")
    assert ladder[0].bandwidth_bytes_per_s == hardware.chip("v5e").hbm_bandwidth
    assert ladder[1].bandwidth_bytes_per_s == hardware.chip("v5e").interconnect_bandwidth


# --- bad inputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", BAD_SIZES)
def test_coalescing_rejects_bad_stride(bad):
    with pytest.raises(ValueError, match=r"stride=.* must be an integer ≥ 1"):
        memory.coalescing(stride=bad)


def test_coalescing_rejects_other_bad_inputs():
    with pytest.raises(ValueError, match=r"offset=-1 must be an integer ≥ 0"):
        memory.coalescing(offset=-1)
    with pytest.raises(ValueError, match=r"offset=2.5"):
        memory.coalescing(offset=2.5)
    for bad in (3, 0, 64, True, 4.5, "4"):  # 32 is a 256-bit load (sm_100+): accepted
        with pytest.raises(
            ValueError, match=r"element_bytes=.* must be one of 1, 2, 4, 8, 16, 32"
        ):
            memory.coalescing(element_bytes=bad)
    with pytest.raises(ValueError, match=r"warp_size=0"):
        memory.coalescing(warp_size=0)
    with pytest.raises(ValueError, match=r"sector_bytes=24 must be a power of two"):
        memory.coalescing(sector_bytes=24)
    with pytest.raises(ValueError, match=r"sector_bytes=4 must be a power of two ≥ 8"):
        memory.coalescing(element_bytes=8, sector_bytes=4)
    with pytest.raises(ValueError, match=r"line_bytes=16 must be a power of two ≥ 32"):
        memory.coalescing(line_bytes=16)


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, True, "x", None])
def test_transfer_model_rejects_bad_bandwidth(bad):
    for call in (
        lambda: memory.transfer_time(1e6, bad, 1e-6),
        lambda: memory.effective_bandwidth(1e6, bad, 1e-6),
        lambda: memory.half_bandwidth_size(bad, 1e-6),
    ):
        with pytest.raises(ValueError, match=r"bandwidth=.* must be a finite number > 0"):
            call()


def test_transfer_model_rejects_bad_sizes_and_latency():
    for bad in (-1, math.nan, math.inf, True, "x", None, [1e6, -1], [math.nan], []):
        with pytest.raises(ValueError, match=r"n_bytes=.* must be finite numbers ≥ 0|n_bytes="):
            memory.transfer_time(bad, 1e9, 1e-6)
    for bad in (-1e-6, math.nan, True, "x"):
        with pytest.raises(ValueError, match=r"latency_s=.* must be a finite number ≥ 0"):
            memory.effective_bandwidth(1e6, 1e9, bad)
        with pytest.raises(ValueError, match=r"latency_s="):
            memory.half_bandwidth_size(1e9, bad)


def test_ladder_rejects_bad_inputs():
    with pytest.raises(KeyError, match="unknown chip 'Z100'"):
        memory.bandwidth_ladder("Z100")
    for bad in (0, -1, math.nan, True, "x"):
        with pytest.raises(ValueError, match=r"l2_bandwidth=.* must be a finite number > 0"):
            memory.bandwidth_ladder("A100", l2_bandwidth=bad)
        with pytest.raises(ValueError, match=r"network_bandwidth="):
            memory.bandwidth_ladder("A100", network_bandwidth=bad)


def test_coalescing_warp_is_bounded():
    with pytest.raises(ValueError, match=r"warp_size=100000000 must be an integer ≥ 1 and ≤ 1024"):
        memory.coalescing(warp_size=10**8)
    assert memory.coalescing(warp_size=64).transactions == 8


def test_allreduce_algorithm_bandwidth_is_nccls_bus_factor_inverted():
    # nccl-tests: busbw = algbw · 2(p − 1)/p.
    assert memory.allreduce_algorithm_bandwidth(480e9, 8) == pytest.approx(480e9 * 8 / 14)
    assert memory.allreduce_algorithm_bandwidth(100e9, 2) == pytest.approx(100e9)
    for p in (2, 3, 8, 128, 4096):
        algbw = memory.allreduce_algorithm_bandwidth(1.0, p)
        assert algbw * 2 * (p - 1) / p == pytest.approx(1.0)
        assert 0.5 < algbw <= 1.0
    with pytest.raises(ValueError, match="ranks=1 must be an integer ≥ 2"):
        memory.allreduce_algorithm_bandwidth(480e9, 1)
    with pytest.raises(ValueError, match="bus_bandwidth=0"):
        memory.allreduce_algorithm_bandwidth(0, 8)


@given(
    n_bytes=st.floats(1e2, 1e12),
    bandwidth=st.floats(1e8, 1e14),
    fraction=st.floats(0.01, 0.99),
    shrink=st.sampled_from([0.0, 1e-6, 0.1, 0.5, 0.999, 1.0]),
)
def test_latency_upper_bound_is_where_the_fraction_is_just_reached(
    n_bytes, bandwidth, fraction, shrink
):
    t0 = memory.latency_upper_bound(n_bytes, bandwidth, fraction)
    assert memory.effective_bandwidth(n_bytes, bandwidth, t0) == pytest.approx(
        fraction * bandwidth
    )
    # any smaller fixed cost reaches at least that fraction: the reading is an upper bound
    assert memory.effective_bandwidth(n_bytes, bandwidth, shrink * t0) >= (
        fraction * bandwidth * (1 - 1e-9)
    )
    # and n½ = t₀·W ≤ n(1 − f)/f, which is ≤ n whenever f ≥ ½
    half = memory.half_bandwidth_size(bandwidth, t0)
    assert half == pytest.approx(n_bytes * (1 - fraction) / fraction)


def test_a_plateau_reading_bounds_the_half_bandwidth_size_from_above():
    # Issue 34 (R4): the playbook's nvbandwidth copies are latency-bound below 1 MB and "sustain
    # ~1,500 GB/s" from 1 MB on (seed 001). Read as n½ = 1 MB, t₀ = 658 ns, and a 1 MB copy would
    # move at half speed (760 GB/s), contradicting the sentence it came from. 1 MB bounds n½
    # from above: t₀ ≤ 658 ns at f = ½, ≤ 73 ns if "sustain" means at least 90 %.
    from gpuperf.measurements import LATENCY_BOUND_BELOW_BYTES, find

    w = find("HBM copy, per direction").value
    misread = LATENCY_BOUND_BELOW_BYTES / w
    assert memory.effective_bandwidth(LATENCY_BOUND_BELOW_BYTES, w, misread) == pytest.approx(
        w / 2
    )
    assert memory.effective_bandwidth(LATENCY_BOUND_BELOW_BYTES, w, misread) < 1500e9 / 1.5
    assert memory.latency_upper_bound(LATENCY_BOUND_BELOW_BYTES, w) == pytest.approx(misread)
    t90 = memory.latency_upper_bound(LATENCY_BOUND_BELOW_BYTES, w, 0.9)
    assert round(t90 * 1e9) == 73 and t90 < misread / 9 + 1e-12
    assert memory.effective_bandwidth(LATENCY_BOUND_BELOW_BYTES, w, t90) >= 0.9 * w * (1 - 1e-12)


def test_latency_upper_bound_rejects_nonsense():
    with pytest.raises(ValueError, match=r"fraction=1\.5"):
        memory.latency_upper_bound(1e6, 1e12, 1.5)
    with pytest.raises(ValueError, match="fraction=0"):
        memory.latency_upper_bound(1e6, 1e12, 0)
    with pytest.raises(ValueError, match="n_bytes=-1"):
        memory.latency_upper_bound(-1, 1e12)


def test_each_level_names_its_own_chips_part():
    # Issue 34 (R4): the ladder table labelled the A100 column with the H100's HBM3, NVLink 4 and
    # PCIe Gen5. Each level's part comes from its own chip's row of the hardware table.
    for name in ("A100-80GB", "H100-SXM"):
        found = hardware.chip(name)
        parts = {level.rung: level.part for level in memory.bandwidth_ladder(found)}
        assert parts["HBM"] == found.memory_type
        assert parts["chip-to-chip"] == found.interconnect
        assert parts["host link"] == found.host_link
        assert parts["registers"] is None and parts["network"] is None
    a100 = {level.rung: level.part for level in memory.bandwidth_ladder("A100-80GB")}
    assert a100["HBM"] == "HBM2e" and a100["chip-to-chip"].startswith("NVLink 3")
    assert a100["host link"].startswith("PCIe Gen4")


# --- the two newer rungs: distributed shared memory (Hopper) and tensor memory (Blackwell) ------


def test_default_ladder_has_no_new_rungs():
    rungs = [level.rung for level in memory.bandwidth_ladder("B200")]
    assert "tensor memory" not in rungs and "distributed shared memory" not in rungs


def test_b200_ladder_gains_tensor_memory_and_distributed_shared_memory():
    ladder = memory.bandwidth_ladder("B200", cluster_and_tensor_memory=True)
    rungs = [level.rung for level in ladder]
    assert rungs[:5] == [
        "registers",
        "tensor memory",
        "shared memory / L1",
        "distributed shared memory",
        "L2",
    ]
    by_rung = {level.rung: level for level in ladder}
    # PTX ISA: 128 lanes × 512 columns of 32-bit cells per SM = 256 KiB; 148 SMs on an HGX B200.
    assert by_rung["tensor memory"].capacity_bytes == 256 * 1024 * 148
    # As large as the register file: 64K 32-bit registers per SM.
    assert by_rung["tensor memory"].capacity_bytes == by_rung["registers"].capacity_bytes
    # One portable cluster: 8 CTAs × 227 KB (the largest shared memory of one block).
    assert by_rung["distributed shared memory"].capacity_bytes == 8 * 227 * 1024
    for rung in ("tensor memory", "distributed shared memory"):
        assert by_rung[rung].bandwidth_bytes_per_s is None
        assert "not published" in by_rung[rung].source
    assert "7× faster" in by_rung["distributed shared memory"].source


def test_hopper_has_clusters_but_no_tensor_memory_and_ampere_has_neither():
    h100 = {lv.rung: lv for lv in memory.bandwidth_ladder("H100", cluster_and_tensor_memory=True)}
    assert h100["tensor memory"].part == "none" and h100["tensor memory"].capacity_bytes is None
    assert h100["distributed shared memory"].capacity_bytes == 8 * 227 * 1024
    a100 = {lv.rung: lv for lv in memory.bandwidth_ladder("A100", cluster_and_tensor_memory=True)}
    assert a100["distributed shared memory"].part == "none"
    # Every GPU gets the same rungs, so two chips' ladders line up row by row.
    assert list(h100) == list(a100)
    # A 12.0 part has clusters, but no sourced limits: unknown, not "none".
    rtx = {
        lv.rung: lv for lv in memory.bandwidth_ladder("RTX-5090", cluster_and_tensor_memory=True)
    }
    assert rtx["distributed shared memory"].part is None
    assert rtx["distributed shared memory"].capacity_bytes is None
    with pytest.raises(TypeError, match="cluster_and_tensor_memory"):
        memory.bandwidth_ladder("H100", cluster_and_tensor_memory="yes")


def test_cluster_shared_memory_follows_the_tuning_guides():
    # "The maximum portable cluster size supported is 8; however, NVIDIA Hopper H100 GPU allows
    # for a nonportable cluster size of 16 by opting in" (and the same words for the B200).
    portable = memory.cluster_shared_memory("H100-SXM")
    assert (portable.cluster_size, portable.portable_limit, portable.non_portable_limit) == (
        8,
        8,
        16,
    )
    assert portable.portable and portable.total_bytes == 8 * 232448
    assert portable.remote_fraction == 7 / 8
    big = memory.cluster_shared_memory("B200", 16)
    assert not big.portable and big.total_bytes == 16 * 232448  # 3.5 MiB
    assert memory.cluster_shared_memory("B200", 1).remote_fraction == 0
    with pytest.raises(ValueError, match=r"cluster_size=17"):
        memory.cluster_shared_memory("H100", 17)
    with pytest.raises(ValueError, match=r"cluster_size=0"):
        memory.cluster_shared_memory("H100", 0)
    with pytest.raises(ValueError, match=r"no sourced thread-block cluster limits.*H100"):
        memory.cluster_shared_memory("A100")
    with pytest.raises(ValueError, match="per_cta_bytes"):
        memory.ClusterSharedMemory("H100-SXM", 8, 0, 8, 16, "HOPPER-TG")


def test_cluster_and_dsmem_sources_are_in_the_bibliography():
    from pathlib import Path

    bib = (Path(__file__).resolve().parents[1] / "references.bib").read_text()
    keys = {source for *_, source in hardware.CLUSTER_SIZE_LIMITS.values()}
    keys.add(hardware.DSMEM_EXCHANGE_SPEEDUP[1])
    for key in keys:
        assert f"{{{key}," in bib


def test_a_256_bit_load_is_one_whole_sector_per_lane():
    """By hand: 32 lanes × 32 B = 1024 B per warp instruction (128-bit: 512 B), i.e. 32 sectors in
    8 lines; each lane's 32-byte access is one aligned sector, so a stride in whole vectors
    wastes no sector bytes (a 128-bit load at stride 2 uses half of each sector it touches)."""
    from gpuperf import parallelism

    assert memory.WIDE_ACCESS_BYTES == parallelism.WIDE_LOAD_BYTES == 32
    wide, v4 = memory.coalescing(1, 0, 32), memory.coalescing(1, 0, 16)
    assert (wide.bytes_requested, v4.bytes_requested) == (1024, 512)
    assert (wide.transactions, wide.cache_lines, v4.transactions, v4.cache_lines) == (32, 8, 16, 4)
    assert wide.efficiency == v4.efficiency == 1
    for stride in (2, 3, 8, 32):
        assert memory.coalescing(stride, 0, 32).efficiency == 1
        assert memory.coalescing(stride, 0, 32).transactions == 32
    assert memory.coalescing(2, 0, 16).efficiency == 0.5
