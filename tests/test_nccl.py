"""NCCL's protocols and channels (section 5.2), against the NCCL source they come from.

The payload fractions are re-derived from the line formats of ``src/include/device.h``; the
latencies from the ring formula of ``src/graph/tuning.cc`` (base + steps × per-step latency),
LL's bandwidth cap from its ``llMaxBws`` table;
the crossover sizes by solving the two time lines; the channel overlap against a step-by-step
simulation of compute progressing on the SMs the collective leaves.
"""

from __future__ import annotations

import pytest

from gpuperf import collectives as co
from gpuperf import nccl


def test_ll_line_is_sixteen_bytes_with_interleaved_flags():
    # Issue 34 (R1 #1): device.h's union ncclLLFifoLine {uint32_t data1, flag1, data2, flag2}
    # is one 16-byte line, written by one st.volatile.global.v4.u32 (prims_ll.h, storeLL): a
    # 4-byte flag after each 4-byte data word, not "a flag in every 8-byte store".
    ll_words = ("data1", "flag1", "data2", "flag2")
    ll = nccl.PROTOCOLS["LL"]
    assert ll.line_bytes == 4 * len(ll_words) == 16
    assert ll.payload_bytes == 4 * sum(w.startswith("data") for w in ll_words) == 8
    assert "16-byte" in ll.flag and "8-byte store" not in ll.flag
    # LL128: one 8-byte flag word in a 128-byte line
    assert (nccl.PROTOCOLS["LL128"].line_bytes, nccl.PROTOCOLS["LL128"].payload_bytes) == (
        128,
        120,
    )


def test_payload_fractions_follow_the_line_formats():
    # LL: union ncclLLFifoLine {data1, flag1, data2, flag2}: 4-byte words, half of them flags.
    ll_words = ("data1", "flag1", "data2", "flag2")
    ll = sum(w.startswith("data") for w in ll_words) / len(ll_words)
    # LL128: 128-byte line = 16 uint64 elements, NCCL_LL128_DATAELEMS = 16 - 1 of them data.
    line_elems = 128 // 8
    ll128 = (line_elems - 1) / line_elems
    assert nccl.PROTOCOLS["LL"].payload_fraction == ll == 0.5
    assert nccl.PROTOCOLS["LL128"].payload_fraction == ll128 == 0.9375
    assert nccl.PROTOCOLS["Simple"].payload_fraction == 1.0
    # the tuner's factors are at most the payload fractions (0.92 ≤ 120/128)
    for proto in nccl.PROTOCOLS.values():
        assert proto.bandwidth_factor <= proto.payload_fraction


@pytest.mark.parametrize("ranks", [2, 8, 64])
def test_latency_is_base_plus_steps_times_the_hop(ranks):
    # tuning.cc, ring, one node of NVLink: latency = baseLat + nsteps · hwLat[NVLINK][RING].
    base = {"LL": 6.6, "LL128": 14.0, "Simple": 8.4}
    hop = {"LL": 0.6, "LL128": 1.9, "Simple": 3.4}
    nsteps = 2 * (ranks - 1)
    for name in nccl.PROTOCOLS:
        t = nccl.protocol_time(name, "all-reduce", 0, ranks, 450e9)
        assert t.latency_s == pytest.approx((base[name] + nsteps * hop[name]) * 1e-6)


def test_large_messages_reach_the_protocols_share_of_the_bus():
    # tuning.cc: LL's ring busBw = min(llMaxBw, 0.5 · busBw); LL128's = 0.92 · busBw (its
    # per-channel cap is not modelled); Simple's the link's.
    for bus in (450e9, 200e9, 100e9):
        for name, proto in nccl.PROTOCOLS.items():
            t = nccl.protocol_time(name, "all-reduce", 1e13, 8, bus)
            expected = bus * proto.bandwidth_factor
            if name == "LL":
                expected = min(141e9, expected)
            assert t.bus_bandwidth == pytest.approx(expected, rel=1e-4)
            assert t.peak_bus_bandwidth == pytest.approx(expected)


def test_ll_cap_is_nccls_llmaxbw():
    # llMaxBws, one node by GPU generation (compute capability ≥ 100, ≥ 90, ≥ 80, else Volta's
    # row), across nodes by CPU vendor, 2 nodes or more.
    assert nccl.ll_max_bus_bandwidth("H100-SXM") == nccl.DEFAULT_LL_MAX_BUS_BANDWIDTH == 141e9
    assert nccl.ll_max_bus_bandwidth("H200") == 141e9
    assert nccl.ll_max_bus_bandwidth("A100-80GB") == 87.7e9
    assert nccl.ll_max_bus_bandwidth("B200") == 282e9
    assert nccl.ll_max_bus_bandwidth("V100") == nccl.ll_max_bus_bandwidth("T4") == 39e9
    assert nccl.ll_max_bus_bandwidth("H100-SXM", nodes=2) == 39e9
    assert nccl.ll_max_bus_bandwidth("H100-SXM", nodes=16) == 20.4e9
    assert nccl.ll_max_bus_bandwidth("H100-SXM", nodes=2, cpu_vendor="amd") == 22.5e9
    assert nccl.ll_max_bus_bandwidth("A100-80GB", nodes=4, cpu_vendor="amd") == 19e9
    # the cap binds on an H100 node's NVLink: 141 GB/s, not 0.5 × 450 GB/s
    capped = nccl.protocol_time("LL", "all-reduce", 0, 8, 450e9)
    assert capped.algorithm_bandwidth == pytest.approx(141e9 / 1.75)
    loose = nccl.protocol_time("LL", "all-reduce", 0, 8, 450e9, ll_max_bandwidth=1e12)
    assert loose.algorithm_bandwidth == pytest.approx(225e9 / 1.75)
    # a lower cap moves the LL → LL128 crossover down:
    # (40.6 − 15) µs / (1/algbw_LL − 1/algbw_LL128)
    s = nccl.protocol_crossover_bytes("LL", "LL128", "all-reduce", 8, 450e9)
    expected = 25.6e-6 / (1.75 / 141e9 - 1.75 / (0.92 * 450e9))
    assert s == pytest.approx(expected)
    assert s < nccl.protocol_crossover_bytes(
        "LL", "LL128", "all-reduce", 8, 450e9, ll_max_bandwidth=1e12
    )


def test_crossovers_are_where_the_times_are_equal():
    for small, large in (("LL", "LL128"), ("LL128", "Simple"), ("LL", "Simple")):
        s = nccl.protocol_crossover_bytes(small, large, "all-reduce", 8, 450e9)
        a = nccl.protocol_time(small, "all-reduce", s, 8, 450e9).time_s
        b = nccl.protocol_time(large, "all-reduce", s, 8, 450e9).time_s
        assert a == pytest.approx(b)
    sizes = [10.0**e for e in range(2, 11)]
    picks = [nccl.fastest_protocol("all-reduce", s, 8, 450e9) for s in sizes]
    assert picks[0] == "LL" and picks[-1] == "Simple" and "LL128" in picks
    order = ["LL", "LL128", "Simple"]
    assert [order.index(p) for p in picks] == sorted(order.index(p) for p in picks)


def test_inter_node_steps_pay_the_network_latency_the_others_the_links():
    # Issue 34 (R1 #11), tuning.cc's ring branch: intraLat = max(intraLat, netOverhead) (1 µs on
    # Intel, ×3 for Simple); nInterSteps = 2(nNodes − 1) for an all-reduce; latency = base +
    # (nsteps − nInterSteps) · intraLat + nInterSteps · interLat. 16 nodes × 8 GPUs, LL:
    # 6.6 + 224 × 1.0 + 30 × 2.7 = 311.6 µs, where charging 2.7 µs on all 254 steps gave 692.
    t = nccl.protocol_time("LL", "all-reduce", 0, 128, 50e9, nodes=16)
    assert t.latency_s == pytest.approx(311.6e-6)
    assert t.latency_s < (6.6 + 254 * 2.7) * 1e-6
    simple = nccl.ring_latency_s("Simple", "all-reduce", 128, nodes=16)
    assert simple == pytest.approx((8.4 + 224 * max(3.4, 3 * 1.0) + 30 * 14.0) * 1e-6)
    amd = nccl.ring_latency_s("LL", "all-reduce", 128, nodes=16, cpu_vendor="amd")
    assert amd == pytest.approx((6.6 + 224 * 2.0 + 30 * 2.7) * 1e-6)
    # an all-gather crosses nodes n − 1 times in p − 1 steps
    ag = nccl.ring_latency_s("LL128", "all-gather", 16, nodes=2)
    assert ag == pytest.approx((14.0 + 14 * max(1.9, 1.0) + 1 * 4.0) * 1e-6)
    # one GPU per node ("network"): every step crosses, at the tree's NET latency (ppn == 1)
    for name, tree_net in (("LL", 5.0), ("LL128", 8.5), ("Simple", 14.0)):
        one = nccl.ring_latency_s(name, "all-reduce", 4, "network")
        assert one == pytest.approx((nccl.PROTOCOLS[name].base_latency_s * 1e6 + 6 * tree_net)
                                    * 1e-6)  # fmt: skip
        assert one == nccl.ring_latency_s(name, "all-reduce", 4, "nvlink", nodes=4)
    # one node is unchanged
    assert nccl.ring_latency_s("LL", "all-reduce", 8, nodes=1) == pytest.approx(15.0e-6)


def test_nccls_own_nvlink_figure_and_its_crossovers():
    # Issue 34 (R1 #10): graph/topo.h credits an sm_90 NVLink link with SM90_NVLINK_BW = 20.6
    # GB/s, so 18 links give 370.8 GB/s, below the 450 GB/s per direction of the datasheet that
    # the page feeds the model; R1 recomputed the crossovers with it as 3.52 MB and 37.5 MB, and
    # Problem 9's 4 MiB at 62.1 µs, still LL128.
    bw = nccl.topology_nvlink_bandwidth("H100-SXM")
    assert bw == pytest.approx(18 * 20.6e9) == nccl.topology_nvlink_bandwidth("H100-SXM", 18)
    assert bw < 450e9
    assert nccl.topology_nvlink_bandwidth("A100-80GB") == pytest.approx(12 * 20e9)
    assert nccl.topology_nvlink_bandwidth("B200") == pytest.approx(18 * 40.1e9)
    x_ll = nccl.protocol_crossover_bytes("LL", "LL128", "all-reduce", 8, bw)
    x_simple = nccl.protocol_crossover_bytes("LL128", "Simple", "all-reduce", 8, bw)
    assert (round(x_ll / 1e6, 2), round(x_simple / 1e6, 1)) == (3.52, 37.5)
    four = nccl.protocol_time("LL128", "all-reduce", 4 * 2**20, 8, bw)
    assert round(four.time_s * 1e6, 1) == 62.1
    assert nccl.fastest_protocol("all-reduce", 4 * 2**20, 8, bw) == "LL128"
    with pytest.raises(ValueError, match="no NVLink link count"):
        nccl.topology_nvlink_bandwidth("T4")


def simulate_overlap(compute_s, comm_s, channels, sms, dt=1e-6):
    """Advance compute in small time steps on the SMs the collective leaves."""
    t = done = 0.0
    while done < compute_s - 1e-12:
        share = (sms - channels) / sms if t < comm_s else 1.0
        done += share * dt
        t += dt
    return max(t, comm_s)


@pytest.mark.parametrize("compute, comm", [(0.11, 0.03), (0.01, 0.03), (0.02, 0.02)])
def test_channel_overlap_matches_a_simulation(compute, comm):
    o = nccl.overlap_with_channels(compute, comm, 20, "H100-SXM")
    assert o.overlapped_s == pytest.approx(simulate_overlap(compute, comm, 20, 132), rel=1e-3)
    assert max(compute, comm) <= o.overlapped_s <= o.serial_s
    assert o.slowdown == pytest.approx(132 / 112)


def test_nccl_refuses_nonsense():
    with pytest.raises(ValueError, match="protocol='LL64' is not one of"):
        nccl.protocol_time("LL64", "all-reduce", 1e6, 8, 1e11)
    with pytest.raises(ValueError, match="hardware='ib' is not one of"):
        nccl.protocol_time("LL", "all-reduce", 1e6, 8, 1e11, "ib")
    with pytest.raises(ValueError, match="channels=65"):
        nccl.overlap_with_channels(1.0, 1.0, 65, "B200")
    with pytest.raises(ValueError, match="has no SMs"):
        nccl.overlap_with_channels(1.0, 1.0, 8, "TPU v5e")
    with pytest.raises(ValueError, match="never wins on large messages"):
        nccl.protocol_crossover_bytes("Simple", "LL", "all-reduce", 8, 1e11)
    with pytest.raises(ValueError, match="ll_max_bandwidth=-1"):
        nccl.protocol_time("LL", "all-reduce", 1e6, 8, 1e11, ll_max_bandwidth=-1)
    with pytest.raises(ValueError, match="no CUDA compute capability"):
        nccl.ll_max_bus_bandwidth("TPU v5e")
    with pytest.raises(ValueError, match="nodes=0"):
        nccl.ll_max_bus_bandwidth("H100-SXM", nodes=0)
    with pytest.raises(ValueError, match="cpu_vendor='arm' is not one of"):
        nccl.ll_max_bus_bandwidth("H100-SXM", nodes=2, cpu_vendor="arm")
    with pytest.raises(ValueError, match="nodes=3 must divide ranks=8"):
        nccl.protocol_time("LL", "all-reduce", 1e6, 8, 1e11, nodes=3)
    with pytest.raises(ValueError, match="nodes=2 with hardware='network' must be ranks=8"):
        nccl.ring_latency_s("LL", "all-reduce", 8, "network", nodes=2)
    assert co.bus_bandwidth_factor("all-reduce", 8) == 1.75


# --- copy-engine (zero-SM) collectives, NCCL 2.28 ----------------------------------------------


def test_copy_engine_collectives_are_the_four_of_the_release_notes():
    # NCCL 2.28.3 release notes (2025-10-06): "To enable the feature for ncclAllGather,
    # ncclAlltoAll, ncclGather, ncclScatter, register buffers into symmetric windows and use the
    # NCCL_CTA_POLICY_ZERO flag".
    for collective in nccl.NCCL_COLLECTIVES:
        check = nccl.copy_engine_collective(collective)
        assert check.uses_copy_engines == (
            collective in ("all-gather", "all-to-all", "gather", "scatter")
        )
        assert check.sms == ("no SM" if check.uses_copy_engines else "SMs (channels)")
    # The reducing collectives are not among them.
    reasons = nccl.copy_engine_collective("all-reduce").reasons
    assert len(reasons) == 1 and "not a copy-engine collective" in reasons[0]
    assert nccl.CTA_POLICIES["zero"] == 2  # NCCL_CTA_POLICY_ZERO 0x02 in nccl.h


def test_every_missing_condition_is_named():
    check = nccl.copy_engine_collective(
        "all-gather",
        nvlink_domains=2,
        symmetric_windows=False,
        cta_policy="default",
        cuda_version=(12, 4),
        nccl_version=(2, 27, 3),
    )
    assert not check.uses_copy_engines and len(check.reasons) == 5
    text = " ".join(check.reasons)
    for part in ("2.27.3", "nvlink_domains=2", "symmetric windows", "CTA_POLICY_ZERO", "12.4"):
        assert part in text
    # One condition at a time.
    assert nccl.copy_engine_collective("all-to-all", cta_policy="efficiency").reasons == (
        "cta_policy='efficiency': needs NCCL_CTA_POLICY_ZERO",
    )
    assert not nccl.copy_engine_collective("scatter", cuda_version=(12, 4)).uses_copy_engines


def test_across_nvlink_domains_from_2_30_7_for_all_gather_and_all_to_all():
    # NCCL 2.30.7: "hierarchical zero-SM collectives (AllGather and All2all) that use RMA CPU
    # proxy for inter-node communication and Copy Engines for intra-node communication".
    new = (2, 30, 7)
    assert not nccl.copy_engine_collective("all-gather", 4).uses_copy_engines
    assert nccl.copy_engine_collective("all-gather", 4, nccl_version=new).uses_copy_engines
    assert nccl.copy_engine_collective("all-to-all", 4, nccl_version=new).uses_copy_engines
    assert not nccl.copy_engine_collective("gather", 4, nccl_version=new).uses_copy_engines


def test_copy_engine_check_rejects_nonsense():
    with pytest.raises(ValueError, match="collective='allreduce'"):
        nccl.copy_engine_collective("allreduce")
    with pytest.raises(ValueError, match="nvlink_domains=0"):
        nccl.copy_engine_collective("all-gather", 0)
    with pytest.raises(TypeError, match="symmetric_windows='yes'"):
        nccl.copy_engine_collective("all-gather", symmetric_windows="yes")
    with pytest.raises(ValueError, match="cta_policy='none'"):
        nccl.copy_engine_collective("all-gather", cta_policy="none")
    with pytest.raises(ValueError, match=r"cuda_version=12\.5"):
        nccl.copy_engine_collective("all-gather", cuda_version=12.5)
    with pytest.raises(ValueError, match="nccl_version"):
        nccl.copy_engine_collective("all-gather", nccl_version=(2, 28))
    with pytest.raises(ValueError, match="uses_copy_engines"):
        nccl.CopyEngineCheck("all-gather", True, ("a reason",))


def test_zero_channels_overlap_perfectly_and_blackwell_halved_its_ctas():
    # A copy-engine collective holds no SM: compute is not stretched, overlap = max of the two.
    o = nccl.overlap_with_channels(10e-3, 4e-3, 0, "B200")
    assert o.slowdown == 1 and o.sm_fraction == 0
    assert o.overlapped_s == pytest.approx(10e-3)
    # 2.28.3: "Decreased max CTA count from 32 to 16 on Blackwell ... SM overhead is decreased
    # by 50%": on a B200's 148 SMs, 32/148 → 16/148.
    before, after = nccl.BLACKWELL_MAX_CTAS.values()
    assert (before, after) == (32, 16)
    sms = nccl.overlap_with_channels(1.0, 1.0, after, "B200").sm_count
    assert after / sms == pytest.approx(0.5 * before / sms)
