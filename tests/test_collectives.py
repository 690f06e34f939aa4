"""Collectives: ring and tree all-reduce, algbw vs busbw, n½, bucketed overlap.

The ring's traffic and step counts are checked against a simulation that really reduces arrays
around a ring; the tree's against a double binary tree built rank by rank; the overlap closed
form against an event-by-event schedule; the bandwidth conversions against nccl-tests'
definitions and the Smol Training Playbook's measured all-reduce.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuperf import collectives as co
from gpuperf import measurements, memory
from gpuperf.hardware import NETWORK_BANDWIDTH, chip
from gpuperf.units import GB

# --- independent derivations -----------------------------------------------------------------


def simulate_ring_allreduce(data: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    """Ring reduce-scatter + all-gather on ``data`` (p ranks × n elements), step by step.

    Returns every rank's result, the number of steps and the elements each rank sent.
    """
    p, n = data.shape
    chunks = np.array_split(np.arange(n), p)
    buffers = data.astype(float).copy()
    sent = np.zeros(p, dtype=int)
    n_steps = 0
    # reduce-scatter: at step s rank r sends chunk (r - s) mod p to rank r + 1, which adds it
    for s in range(p - 1):
        outgoing = [buffers[r, chunks[(r - s) % p]].copy() for r in range(p)]
        for r in range(p):
            dst, chunk = (r + 1) % p, chunks[(r - s) % p]
            buffers[dst, chunk] += outgoing[r]
            sent[r] += chunk.size
        n_steps += 1
    # now rank r owns the full sum of chunk (r + 1) mod p; all-gather passes them on
    for s in range(p - 1):
        outgoing = [buffers[r, chunks[(r + 1 - s) % p]].copy() for r in range(p)]
        for r in range(p):
            dst, chunk = (r + 1) % p, chunks[(r + 1 - s) % p]
            buffers[dst, chunk] = outgoing[r]
            sent[r] += chunk.size
        n_steps += 1
    return buffers, n_steps, sent


@pytest.mark.parametrize("ranks", [2, 3, 4, 5, 8])
def test_ring_simulation_matches_the_model(ranks):
    rng = np.random.default_rng(ranks)
    n = 8 * ranks  # chunks of equal size, so the counts are exact
    data = rng.integers(-50, 50, size=(ranks, n))
    result, n_steps, sent = simulate_ring_allreduce(data)
    assert np.array_equal(result, np.tile(data.sum(axis=0), (ranks, 1)))
    assert n_steps == co.steps("all-reduce", ranks)
    assert np.all(sent == co.traffic_per_byte("all-reduce", ranks) * n)
    # each half is the reduce-scatter / the all-gather
    assert co.steps("reduce-scatter", ranks) == co.steps("all-gather", ranks) == n_steps // 2
    assert co.traffic_per_byte("all-gather", ranks) * n == pytest.approx(sent[0] / 2)


def double_binary_tree_traffic(ranks: int, message: float) -> tuple[np.ndarray, int]:
    """Bytes each rank sends in a double binary tree all-reduce, and the deeper tree's depth.

    Tree 1 is the heap order 0, 1, …, p − 1 (children of i: 2i + 1, 2i + 2); tree 2 mirrors the
    ranks (heap position i holds rank p − 1 − i). Each tree carries half the message up (reduce)
    and back down (broadcast).
    """
    sent = np.zeros(ranks)
    for rank_at in (lambda i: i, lambda i: ranks - 1 - i):
        for i in range(ranks):
            children = [c for c in (2 * i + 1, 2 * i + 2) if c < ranks]
            if i > 0:
                sent[rank_at(i)] += message / 2  # its partial sum, up
            sent[rank_at(i)] += len(children) * message / 2  # the result, down
    depth = math.floor(math.log2(ranks))
    return sent, depth


@pytest.mark.parametrize("ranks", [4, 6, 8, 16, 64])
def test_double_binary_tree_matches_the_model(ranks):
    sent, depth = double_binary_tree_traffic(ranks, 1.0)
    model = co.traffic_per_byte("all-reduce", ranks, "tree")
    # the busiest rank (inner node with two children in one tree, leaf in the other) sends 2·S;
    # with 4 ranks no inner node has both a parent and two children
    assert sent.max() == (pytest.approx(model) if ranks >= 6 else 1.5)
    assert 2 * depth <= co.steps("all-reduce", ranks, "tree")
    if ranks & (ranks - 1) == 0:
        assert co.steps("all-reduce", ranks, "tree") == 2 * math.log2(ranks)


def test_tree_latency_grows_with_log_p_and_ring_with_p():
    assert [co.steps("all-reduce", p, "tree") for p in (2, 3, 4, 5, 8, 9, 1024)] == [
        2,
        4,
        4,
        6,
        6,
        8,
        20,
    ]
    assert co.steps("all-reduce", 1024) == 2046


def simulate_buckets(n: int, c: float, backward_s: float) -> float:
    """Finish time of n in-order all-reduces of c seconds, bucket i ready at (i+1)·T/n."""
    end = 0.0
    for i in range(n):
        end = max(end, (i + 1) * backward_s / n) + c
    return end


@pytest.mark.parametrize(
    "n, c, backward", [(1, 0.01, 0.02), (4, 0.001, 0.02), (80, 0.0004, 0.02), (7, 0.01, 0.0)]
)
def test_bucket_schedule_closed_form_matches_the_simulation(n, c, backward):
    plan = co.BucketedAllReduce(1e9, n, c, backward)
    assert plan.finish_s == pytest.approx(simulate_buckets(n, c, backward))
    assert plan.exposed_s == pytest.approx(simulate_buckets(n, c, backward) - backward)
    assert plan.exposed_s >= c  # the last bucket is never hidden
    assert 0 <= plan.hidden_fraction < 1


def test_bucket_size_trade_off():
    # 2 GB of bf16 gradients across 16 nodes (Playbook measurements), 20 ms of backward left
    t0 = measurements.find("all-reduce latency, 16 nodes").value
    busbw = measurements.find("all-reduce bus bandwidth, 3–16 nodes").value
    plans = {
        b: co.bucketed_allreduce(2e9, b, 0.02, t0, busbw, 128) for b in (1e6, 25e6, 250e6, 2e9)
    }
    exposed = {b: plan.exposed_s for b, plan in plans.items()}
    # tiny buckets pay t₀ 2000 times; one bucket cannot start before the backward ends
    assert exposed[1e6] > exposed[25e6] > exposed[250e6]
    assert exposed[2e9] > exposed[250e6]
    assert plans[1e6].n_buckets == 2000 and plans[2e9].n_buckets == 1
    one = plans[2e9]
    assert one.exposed_s == pytest.approx(one.communication_s)
    assert one.bucket_time_s == pytest.approx(t0 + 2e9 / (busbw * 128 / 254))


def test_exposed_time():
    assert co.exposed_time(3e-3, 5e-3) == 0.0
    assert co.exposed_time(5e-3, 3e-3) == pytest.approx(2e-3)
    with pytest.raises(ValueError, match="communication_s=-1"):
        co.exposed_time(-1, 1)


# --- bandwidths: nccl-tests definitions and the sources' numbers ------------------------------


@pytest.mark.parametrize("ranks", [2, 8, 128])
def test_bus_factors_are_nccl_tests(ranks):
    share = (ranks - 1) / ranks
    assert co.bus_bandwidth_factor("all-reduce", ranks) == pytest.approx(2 * share)
    for name in ("all-gather", "reduce-scatter", "all-to-all"):
        assert co.bus_bandwidth_factor(name, ranks) == pytest.approx(share)
    alg = co.algorithm_bandwidth(100 * GB, "all-reduce", ranks)
    assert alg == pytest.approx(memory.allreduce_algorithm_bandwidth(100 * GB, ranks))
    assert co.bus_bandwidth(alg, "all-reduce", ranks) == pytest.approx(100 * GB)


def test_playbook_node_half_bandwidth_size():
    # 480 GB/s bus bandwidth (NVLS) and 12.9 µs on 8 H100s: algbw = 480 · 8/14 ≈ 274 GB/s, so
    # n½ = 12.9 µs × 274 GB/s ≈ 3.54 MB; with the bus rate it would be 6.19 MB (the slip)
    t0 = measurements.find("all-reduce latency, one node").value
    busbw = measurements.find("all-reduce bus bandwidth in one node").value
    assert co.algorithm_bandwidth(busbw, "all-reduce", 8) == pytest.approx(274.29e9, rel=1e-4)
    n_half = co.half_bandwidth_message_bytes(t0, busbw, "all-reduce", 8)
    assert n_half == pytest.approx(3.538e6, rel=1e-3)
    assert t0 * busbw == pytest.approx(6.19e6, rel=1e-3)
    t = co.time_from_bus_bandwidth(n_half, t0, busbw, "all-reduce", 8)
    assert n_half / t == pytest.approx(co.algorithm_bandwidth(busbw, "all-reduce", 8) / 2)


def test_alpha_beta_worked_example():
    # the docstring's example: 8 ranks, 1 GB, 450 GB/s, α = 1 µs
    ring = co.collective_time("all-reduce", 1e9, 8, 450e9, 1e-6)
    assert ring.steps == 14 and ring.latency_s == pytest.approx(14e-6)
    assert ring.bandwidth_s == pytest.approx(1.75e9 / 450e9)
    assert ring.time_s == pytest.approx(3.9029e-3, rel=1e-4)
    # a large message reaches busbw ≈ B: the factor makes busbw comparable with the link
    big = co.collective_time("all-reduce", 1e12, 8, 450e9, 1e-6)
    assert big.bus_bandwidth == pytest.approx(450e9, rel=1e-4)
    gather = co.collective_time("all-gather", 1e12, 8, 450e9, 1e-6)
    assert gather.bus_bandwidth == pytest.approx(450e9, rel=1e-4)
    assert gather.time_s == pytest.approx(big.time_s / 2)


@pytest.mark.parametrize("collective", co.MODELLED_COLLECTIVES)
@pytest.mark.parametrize("ranks", [2, 8, 100])
def test_ring_half_bandwidth_size_is_p_alpha_b(collective, ranks):
    ring = co.collective_time(collective, 1.0, ranks, 50e9, 2e-6)
    assert ring.half_bandwidth_bytes == pytest.approx(ranks * 2e-6 * 50e9)
    at_half = co.collective_time(collective, ring.half_bandwidth_bytes, ranks, 50e9, 2e-6)
    assert at_half.algorithm_bandwidth == pytest.approx(ring.peak_algorithm_bandwidth / 2)
    assert at_half.latency_s == pytest.approx(at_half.bandwidth_s)


def test_ring_tree_crossover():
    p, b, alpha = 64, 450e9, 1e-6
    cross = co.ring_tree_crossover_bytes(p, b, alpha)
    assert cross == pytest.approx(p * alpha * b * (p - 1 - 6))

    def both(s):
        return (
            co.collective_time("all-reduce", s, p, b, alpha).time_s,
            co.collective_time("all-reduce", s, p, b, alpha, "tree").time_s,
        )

    ring, tree = both(cross)
    assert ring == pytest.approx(tree)
    ring, tree = both(cross / 10)
    assert tree < ring
    ring, tree = both(cross * 10)
    assert ring < tree
    for small in (2, 3):
        assert co.ring_tree_crossover_bytes(small, b, alpha) == 0.0


def test_step_latency_is_derived_from_a_collective_latency():
    t0 = measurements.find("all-reduce latency, one node").value
    assert co.step_latency_from_collective_latency(t0, "all-reduce", 8) == pytest.approx(t0 / 14)
    assert co.step_latency_from_collective_latency(t0, "all-reduce", 8, "tree") == pytest.approx(
        t0 / 6
    )


def test_links_come_from_the_hardware_table():
    found = co.links()
    assert [link.bandwidth for link in found] == [
        chip("H100-SXM").interconnect_bandwidth,
        chip("A100-80GB").interconnect_bandwidth,
        NETWORK_BANDWIDTH["InfiniBand NDR 400G"],
    ]
    assert found[0].bandwidth == pytest.approx(450e9)


def test_empty_message():
    nothing = co.collective_time("all-reduce", 0, 8, 450e9, 1e-6)
    assert nothing.time_s == pytest.approx(14e-6)
    assert nothing.algorithm_bandwidth == 0.0 and nothing.bus_bandwidth == 0.0


# --- failure paths ----------------------------------------------------------------------------


def test_errors_name_the_value_and_the_range():
    with pytest.raises(ValueError, match=r"ranks=1 must be an integer ≥ 2"):
        co.bus_bandwidth_factor("all-reduce", 1)
    with pytest.raises(ValueError, match=r"collective='allreduce' is not one of: 'all-reduce'"):
        co.bus_bandwidth_factor("allreduce", 8)
    with pytest.raises(ValueError, match="collective='all-to-all' is not one of"):
        co.collective_time("all-to-all", 1e6, 8, 1e9, 1e-6)
    with pytest.raises(ValueError, match="algorithm='tree' models an all-reduce only"):
        co.collective_time("all-gather", 1e6, 8, 1e9, 1e-6, "tree")
    with pytest.raises(ValueError, match="algorithm='butterfly' is not one of: 'ring', 'tree'"):
        co.steps("all-reduce", 8, "butterfly")
    with pytest.raises(ValueError, match="link_bandwidth=0 must be a finite number > 0"):
        co.collective_time("all-reduce", 1e6, 8, 0, 1e-6)
    with pytest.raises(ValueError, match="message_bytes=-5"):
        co.collective_time("all-reduce", -5, 8, 1e9, 1e-6)
    with pytest.raises(ValueError, match="bus_bandwidth=nan"):
        co.algorithm_bandwidth(float("nan"), "all-reduce", 8)
    with pytest.raises(ValueError, match=r"bucket_bytes=0\.001 splits"):
        co.bucketed_allreduce(1e9, 1e-3, 0.01, 1e-5, 1e11, 8)
    with pytest.raises(ValueError, match="ranks=True"):
        co.steps("all-reduce", True)


# --- sharded data parallelism (ZeRO / FSDP) ---------------------------------------------------


def test_zero_stage_traffic_is_two_or_three_halves_of_a_ring():
    # ZeRO paper (Rajbhandari et al. 2020, §7): baseline and stages 1–2 move 2Ψ per rank,
    # stage 3 moves 3Ψ (an extra all-gather of the weights for the backward): 1.5×.
    for p in (2, 8, 64):
        half = (p - 1) / p
        assert co.data_parallel_step(1e9, p, 1e11, 0.0, 0).traffic_per_byte == pytest.approx(
            2 * half
        )
        assert co.data_parallel_step(1e9, p, 1e11, 0.0, 2).traffic_per_byte == pytest.approx(
            2 * half
        )
        three = co.data_parallel_step(1e9, p, 1e11, 0.0, 3)
        assert three.traffic_per_byte == pytest.approx(3 * half)
        assert [part.collective for part in three.parts] == [
            "all-gather",
            "all-gather",
            "reduce-scatter",
        ]


def test_zero3_costs_half_again_in_the_worked_example():
    alpha = co.step_latency_from_collective_latency(
        measurements.find("all-reduce latency, one node").value, "all-reduce", 8
    )
    plain = co.data_parallel_step(2e9, 8, 450e9, alpha, 0).time_s
    sharded = co.data_parallel_step(2e9, 8, 450e9, alpha, 1).time_s
    full = co.data_parallel_step(2e9, 8, 450e9, alpha, 3).time_s
    assert plain == pytest.approx(7.79e-3, rel=1e-3)
    assert sharded == pytest.approx(plain)  # RS + AG: the all-reduce's bytes and steps
    assert full == pytest.approx(11.69e-3, rel=1e-3)
    assert full / plain == pytest.approx(1.5)


# --- hierarchical and in-network all-reduce --------------------------------------------------


def test_hierarchical_reduces_to_the_flat_cases():
    flat_node = co.collective_time("all-reduce", 1e9, 8, 450e9, 1e-6).time_s
    assert co.hierarchical_allreduce(1e9, 8, 1, 450e9, 50e9, 1e-6, 5e-6).time_s == pytest.approx(
        flat_node
    )
    flat_net = co.collective_time("all-reduce", 1e9, 16, 50e9, 5e-6).time_s
    assert co.hierarchical_allreduce(1e9, 1, 16, 450e9, 50e9, 1e-6, 5e-6).time_s == pytest.approx(
        flat_net
    )


@pytest.mark.parametrize("gpus, nodes", [(2, 2), (4, 3), (8, 4)])
def test_hierarchical_cross_node_bytes_from_a_simulation(gpus, nodes):
    # Two levels with real arrays: reduce-scatter inside each node, ring all-reduce of each
    # GPU's share across the nodes (counted element by element), all-gather inside the node.
    rng = np.random.default_rng(gpus * nodes)
    n = gpus * nodes * 6
    data = rng.integers(-9, 9, size=(nodes, gpus, n))
    shares = np.split(np.arange(n), gpus)
    result = np.zeros_like(data)
    crossed = np.zeros((nodes, gpus), dtype=int)
    for g, share in enumerate(shares):
        local = data[:, :, share].sum(axis=1)  # in-node reduce-scatter: GPU g holds the share
        summed, _, sent = simulate_ring_allreduce(local)  # across nodes, one NIC per GPU
        crossed[:, g] = sent
        result[:, :, share] = summed[:, None, :]  # in-node all-gather
    assert np.array_equal(result, np.broadcast_to(data.sum(axis=(0, 1)), data.shape))
    model = co.hierarchical_allreduce(n, gpus, nodes, 1e11, 1e10)
    assert crossed.max() == pytest.approx(model.inter_bytes_per_gpu)
    flat_ring_nic = co.traffic_per_byte("all-reduce", gpus * nodes) * n
    assert model.inter_bytes_per_gpu < flat_ring_nic / (gpus - 1 + 1e-9) or gpus == 1


@pytest.mark.parametrize("gpus", [4, 8, 72])
def test_each_gpus_cross_node_share_grows_with_the_nodes(gpus):
    # Issue 34 (R4): 5.1 said "each GPU's inter-node share shrinking as nodes are added". Each
    # GPU's NIC sends 2(n − 1)/n · S/g: it grows with n, from S/g at two nodes towards 2S/g, so
    # the bus bandwidth levels off near g × a GPU's network rate (8 × 42.5 GB/s measured = 340 GB/s
    # against the measured 320–350 GB/s), not because each GPU sends less.
    nic, s = 42.5e9, 1e9
    shares = [
        co.hierarchical_allreduce(s, gpus, n, 1e15, nic).inter_bytes_per_gpu
        for n in (2, 3, 4, 8, 16, 64, 1024)
    ]
    assert shares[0] == pytest.approx(s / gpus)
    assert shares == sorted(set(shares))  # strictly growing
    assert shares[-1] < 2 * s / gpus and shares[-1] == pytest.approx(2 * s / gpus, rel=1e-3)
    far = co.hierarchical_allreduce(s, gpus, 10**6, 1e15, nic)
    assert far.bottleneck == "network"
    assert far.bus_bandwidth == pytest.approx(gpus * nic, rel=1e-5)


def test_in_network_reduction_sends_each_share_once():
    ring = co.hierarchical_allreduce(2e9, 8, 16, 450e9, 50e9)
    sharp = co.hierarchical_allreduce(2e9, 8, 16, 450e9, 50e9, in_network=True)
    assert sharp.inter_bytes_per_gpu == pytest.approx(2e9 / 8)
    assert ring.inter_bytes_per_gpu / sharp.inter_bytes_per_gpu == pytest.approx(2 * 15 / 16)
    assert sharp.time_s < ring.time_s
    # with every NIC busy the two-level bus bandwidth bound is 4·B·2(p−1)/p (one ring per NIC)
    bound = 8 * 50e9 / (2 * 15 / 16) * co.bus_bandwidth_factor("all-reduce", 128)
    assert ring.inter_bandwidth_s == pytest.approx(2 * 15 / 16 * 2e9 / 8 / 50e9)
    assert ring.bus_bandwidth == pytest.approx(bound)  # α = 0: the NICs alone set it
    # pipelined: the slower level's bytes set the time; one after the other, they add
    assert ring.time_s == pytest.approx(ring.latency_s + ring.inter_bandwidth_s)
    assert ring.sequential_s == pytest.approx(
        ring.latency_s + 2 * 7 / 8 * 2e9 / 450e9 + ring.inter_bandwidth_s
    )
    assert ring.bottleneck == "network" and sharp.bottleneck == "node"


# --- mixture-of-experts all-to-all -----------------------------------------------------------


@pytest.mark.parametrize("ranks, k", [(2, 1), (4, 2), (8, 8), (16, 4)])
def test_moe_dispatch_bytes_count_the_remote_copies(ranks, k):
    tokens, d = 64 * ranks, 32
    # Uniform routing by construction: copy j of token t goes to rank (t·k + j) mod p.
    home = 0
    remote = sum(1 for t in range(tokens) for j in range(k) if (t * k + j) % ranks != home)
    model = co.moe_all_to_all(tokens, d, k, ranks, 1e11, "fp8", "bf16")
    assert model.dispatch_bytes == pytest.approx(remote * d * 1)
    assert model.combine_bytes == pytest.approx(remote * d * 2)
    assert model.time_s == pytest.approx(remote * d * 3 / 1e11)


def test_new_collective_calculators_refuse_nonsense():
    with pytest.raises(ValueError, match="stage=4 is not one of"):
        co.data_parallel_step(1e9, 8, 1e11, 1e-6, 4)
    with pytest.raises(ValueError, match="gpus_per_node=1 × nodes=1 must be ≥ 2"):
        co.hierarchical_allreduce(1e9, 1, 1, 1e11, 1e10)
    with pytest.raises(TypeError, match="in_network='yes'"):
        co.hierarchical_allreduce(1e9, 8, 2, 1e11, 1e10, in_network="yes")
    with pytest.raises(ValueError, match="gpus_per_node=100"):
        co.hierarchical_allreduce(1e9, 100, 2, 1e11, 1e10)
    with pytest.raises(ValueError, match="copies_per_token=0"):
        co.moe_all_to_all(10, 10, 0, 8, 1e9)
    with pytest.raises(ValueError, match="precision"):
        co.moe_all_to_all(10, 10, 1, 8, 1e9, dispatch_precision="fp5")


def test_ddp_bucket_sizes_are_pytorchs():
    assert co.DDP_BUCKET_CAP_BYTES == 25 * 2**20
    torch = pytest.importorskip("torch")
    import torch.distributed as dist

    if not dist.is_available():
        pytest.skip("torch built without distributed")
    assert co.DDP_FIRST_BUCKET_BYTES == dist._DEFAULT_FIRST_BUCKET_BYTES
    assert torch.__version__  # the constant is read from the installed PyTorch


# --- NVLink domains: HGX nodes, a GB200 NVL72 rack, and the network between domains ----------


def test_nvlink_domains_come_from_the_datasheets():
    by_gpus = {(d.chip_name, d.gpus): d for d in co.nvlink_domains()}
    nvl72 = by_gpus[("GB200", 72)]
    # Blackwell datasheet: 72 GPUs in one NVLink domain, NVLink 5 at 1.8 TB/s per GPU (both
    # directions), so 900 GB/s per direction; 130 TB/s for the rack (72 × 1.8 = 129.6).
    assert nvl72.bandwidth == 1.8e12 / 2
    assert nvl72.gpus * 2 * nvl72.bandwidth == pytest.approx(129.6e12)
    assert by_gpus[("B200", 8)].bandwidth == 900e9
    assert by_gpus[("H100-SXM", 8)].bandwidth == 450e9
    with pytest.raises(ValueError, match="gpus=1"):
        co.NVLinkDomain("one GPU", "B200", 1, "BW-DS")
    with pytest.raises(KeyError):
        co.NVLinkDomain("no such chip", "Z100", 8, "BW-DS")


def test_domain_all_to_all_splits_bytes_by_destination():
    # 8 HGX nodes of 8 GPUs over one 400 Gb/s NIC each: of S, 7/64 stay in the node (NVLink
    # 5) and 56/64 leave it (NIC); the NIC's share sets the time.
    s = 64e6
    a = co.domain_all_to_all(s, 8, 8, 900e9, 50e9)
    assert a.ranks == 64
    assert a.intra_bytes == pytest.approx(7 / 64 * s)
    assert a.inter_bytes == pytest.approx(56 / 64 * s)
    assert a.time_s == pytest.approx(56e6 / 50e9)  # 1.12 ms
    assert a.bottleneck == "network"
    # The same 64 ranks inside one NVL72 domain: (p − 1)/p · S over NVLink, no NIC.
    b = co.domain_all_to_all(s, 64, 1, 900e9)
    assert b.inter_bytes == 0 and b.bottleneck == "NVLink"
    assert b.time_s == pytest.approx(63 / 64 * s / 900e9)
    # Inside one domain the bus bandwidth is the link itself: S/t · (p − 1)/p = B.
    assert b.bus_bandwidth == pytest.approx(900e9)
    assert a.time_s / b.time_s == pytest.approx((56 / 50e9) / (63 / 900e9))


def test_domain_all_to_all_agrees_with_the_moe_count_inside_one_domain():
    tokens, d_model, top_k, p = 4096, 7168, 8, 64
    moe = co.moe_all_to_all(tokens, d_model, top_k, p, 900e9, "fp8", "fp8")
    a = co.domain_all_to_all(tokens * top_k * d_model * 1.0, p, 1, 900e9)
    assert a.intra_bytes == pytest.approx(moe.dispatch_bytes)
    assert a.time_s == pytest.approx(moe.dispatch_bytes / 900e9)


def test_domain_all_to_all_rejects_nonsense():
    with pytest.raises(ValueError, match="inter_bandwidth=None"):
        co.domain_all_to_all(1e6, 8, 2, 900e9)
    with pytest.raises(ValueError, match="must be ≥ 2"):
        co.domain_all_to_all(1e6, 1, 1, 900e9)
    with pytest.raises(ValueError, match="gpus_per_domain=73"):
        co.domain_all_to_all(1e6, 73, 1, 900e9)
    with pytest.raises(ValueError, match="inter_bandwidth=0"):
        co.domain_all_to_all(1e6, 8, 2, 900e9, 0)
    assert co.domain_all_to_all(0, 8, 2, 900e9, 50e9).bus_bandwidth == 0
