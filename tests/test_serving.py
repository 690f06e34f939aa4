"""Serving (section 4.3): paged KV, static vs continuous batching, speculative decoding and
launch-bound steps, each against a brute-force count or a step-by-step simulation."""

from __future__ import annotations

import itertools
import math

import pytest

from gpuperf import inference, serving
from gpuperf.inference import ILLUSTRATIVE


def test_paged_memory_is_whole_blocks_and_reserved_is_max_len():
    lens = [1, 15, 16, 17, 1000, 4096]
    per = 1000.0
    p = serving.paged_kv(lens, 4096, 16, per)
    blocks = 0
    for n in lens:  # allocate block by block as the sequence grows
        for held in range(n):
            if held % 16 == 0:  # token `held` starts a new block
                blocks += 1
    assert p.paged_bytes == blocks * 16 * per
    assert p.reserved_bytes == len(lens) * 4096 * per
    assert p.used_bytes == sum(lens) * per
    assert p.paged_waste < p.reserved_waste
    # at most one partial block per sequence
    assert p.paged_bytes - p.used_bytes <= len(lens) * 15 * per


def test_static_batch_occupancy_from_a_step_by_step_batch():
    lengths = [10, 3, 7, 10, 1]
    slots_used = sum(1 for step in range(max(lengths)) for n in lengths if step < n)
    slot_steps = len(lengths) * max(lengths)
    assert serving.static_batch_occupancy(lengths) == pytest.approx(slots_used / slot_steps)
    assert serving.static_batch_occupancy([5, 5, 5]) == 1.0


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.8, 1.0])
@pytest.mark.parametrize("gamma", [1, 3, 6])
def test_expected_tokens_by_enumerating_accept_patterns(alpha, gamma):
    expected = 0.0
    for pattern in itertools.product([True, False], repeat=gamma):
        p = math.prod(alpha if ok else 1 - alpha for ok in pattern)
        accepted = next((i for i, ok in enumerate(pattern) if not ok), gamma)
        expected += p * (accepted + 1)  # the target always adds one token
    assert serving.expected_tokens_per_round(alpha, gamma) == pytest.approx(expected)


def test_speculation_at_batch_one_is_tokens_per_weight_read():
    r = serving.speculative_decoding(
        ILLUSTRATIVE, serving.ILLUSTRATIVE_DRAFT, 4, 0.8, 4096, "H100-SXM"
    )
    plain = inference.decode_step(ILLUSTRATIVE, 1, 4096, "H100-SXM").time_s
    draft = inference.decode_step(serving.ILLUSTRATIVE_DRAFT, 1, 4096, "H100-SXM").time_s
    verify = inference.verify_step(ILLUSTRATIVE, 1, 5, 4096, "H100-SXM").time_s
    assert r.verify_s == verify == pytest.approx(plain, rel=1e-3)
    # Leviathan et al.'s improvement factor (1 − α^(γ+1)) / ((1 − α)(γ c + 1)), c = draft/target
    c = draft / plain
    assert r.speedup == pytest.approx((1 - 0.8**5) / (0.2 * (4 * c + verify / plain)))
    assert (
        serving.speculative_decoding(
            ILLUSTRATIVE, serving.ILLUSTRATIVE_DRAFT, 4, 0.0, 4096, "H100-SXM"
        ).speedup
        < 1
    )  # nothing accepted: the draft's steps are pure cost


def test_speculative_max_batch_holds_both_models():
    h100 = "H100-SXM"
    draft = serving.ILLUSTRATIVE_DRAFT
    b = serving.speculative_max_batch(ILLUSTRATIVE, draft, 4096, h100)
    # by hand: the H100's 81,559 MiB (as nvidia-smi reports it) − both models' weights, over
    # both caches of 4096 tokens
    capacity = 81559 * 2**20
    weights = (ILLUSTRATIVE.total_params + draft.total_params) * 2
    per_sequence = (2 * 32 * 8 * 128 * 2 + 2 * 16 * 4 * 128 * 2) * 4096
    assert b == (capacity - weights) // per_sequence
    used = weights + b * per_sequence
    assert used <= capacity < used + per_sequence
    # the draft takes room: fewer sequences than the target alone, which max_batch counts
    assert 0 < b < inference.max_batch(ILLUSTRATIVE, 4096, h100)
    assert serving.speculative_max_batch(ILLUSTRATIVE, draft, 512, h100) >= 256
    assert serving.speculative_max_batch(ILLUSTRATIVE, draft, 4096, "T4") == 0  # 16 GB: no room


def test_decode_kernels():
    assert serving.decode_kernels(ILLUSTRATIVE) == 11 * 32 + 3 == 355
    assert serving.decode_kernels(serving.ILLUSTRATIVE_DRAFT) == 11 * 16 + 3


def test_launch_bound_step():
    s = serving.launch_bound_step(1e-3, 400, 5e-6, gap_s_per_kernel=0.0)
    assert s.cpu_s == pytest.approx(2e-3) and s.cpu_bound
    assert s.eager_s == pytest.approx(2e-3) and s.graph_s == pytest.approx(1e-3)
    assert s.break_even_s == pytest.approx(2.5e-6) and s.graph_speedup == pytest.approx(2)
    fast = serving.launch_bound_step(1e-3, 400, 1e-6, gap_s_per_kernel=0.0)
    assert not fast.cpu_bound and fast.graph_speedup == 1
    # the default keeps the measured gap at every kernel boundary
    gapped = serving.launch_bound_step(1e-3, 400, 5e-6)
    assert gapped.gap_s_per_kernel == serving.GRAPH_GAP_S_PER_KERNEL
    assert gapped.graph_s == pytest.approx(1e-3 + 400 * serving.GRAPH_GAP_S_PER_KERNEL)


@pytest.mark.parametrize("gpu_s", [1e-5, 2.75e-4, 4e-3])
@pytest.mark.parametrize("kernels", [1, 179, 355, 2000])
@pytest.mark.parametrize("cpu_s_per_kernel", [1e-7, 3.57e-6, 1.1e-4])
def test_a_graph_keeps_the_kernel_boundaries(gpu_s, kernels, cpu_s_per_kernel):
    """Review 2026-12 (R2): a graph was modelled as the bare roofline time, with no gap between
    its kernels, which made the billion-weight draft on a B200 2.3× faster. A graph removes the
    host's launches, not the boundaries: its step is at least GPU time + kernels × gap."""
    s = serving.launch_bound_step(gpu_s, kernels, cpu_s_per_kernel)
    gap = serving.GRAPH_GAP_S_PER_KERNEL
    assert s.graph_s >= gpu_s + kernels * gap
    assert s.eager_s >= s.graph_s  # the graph never loses
    # its gain is capped by what the host costs over the GPU's own side
    assert s.graph_speedup <= max(1.0, kernels * cpu_s_per_kernel / (gpu_s + kernels * gap))
    assert s.gap_share == pytest.approx(kernels * gap / s.graph_s)


def test_the_draft_on_a_b200_gains_what_the_boundaries_leave():
    """The row the review recomputed: 275 µs of weight reads, 179 kernels, 3.57 µs per launch,
    ~1.3 µs of GPU gap per kernel (Hazy Research): about 1.26×, not 2.3×."""
    draft = serving.ILLUSTRATIVE_DRAFT
    gpu = inference.decode_step(draft, 1, 4096, "B200").time_s
    s = serving.launch_bound_step(gpu, serving.decode_kernels(draft), 1 / 280e3)
    assert gpu == pytest.approx(275e-6, rel=0.01)
    assert s.graph_s == pytest.approx(gpu + 179 * 1.3e-6)
    assert s.graph_speedup == pytest.approx(639e-6 / 508e-6, rel=0.01)
    no_gaps = serving.launch_bound_step(gpu, 179, 1 / 280e3, gap_s_per_kernel=0.0)
    assert s.graph_speedup < 1.3 < no_gaps.graph_speedup


def test_speculation_at_equal_memory_gives_plain_decoding_its_larger_batch():
    """Review 2026-12 (R2): the speed-ups compared the two at the same batch; plain decoding,
    with no draft in HBM, fits more sequences, and at large batch and short context wins."""
    draft, h100 = serving.ILLUSTRATIVE_DRAFT, "H100-SXM"
    for context in (512, 4096):
        e = serving.speculative_at_equal_memory(ILLUSTRATIVE, draft, 4, 0.8, context, h100)
        assert e.speculative.batch == serving.speculative_max_batch(
            ILLUSTRATIVE, draft, context, h100
        )
        assert e.plain_batch == inference.max_batch(ILLUSTRATIVE, context, h100)
        assert e.plain_batch > e.speculative.batch
        plain = inference.decode_step(ILLUSTRATIVE, e.plain_batch, context, h100)
        assert e.plain_tokens_per_s == pytest.approx(plain.tokens_per_s)
        assert e.speedup < e.speculative.speedup  # equal memory is the harder comparison
    short = serving.speculative_at_equal_memory(ILLUSTRATIVE, draft, 4, 0.8, 512, h100, batch=256)
    assert short.speedup < 1 < short.speculative.speedup  # speculation loses throughput here
    long = serving.speculative_at_equal_memory(ILLUSTRATIVE, draft, 4, 0.8, 4096, h100)
    assert long.speedup > 1  # memory-bound verification: it still pays
    with pytest.raises(ValueError, match="do not fit"):
        serving.speculative_at_equal_memory(ILLUSTRATIVE, draft, 4, 0.8, 4096, "T4")


def test_serving_refuses_nonsense():
    with pytest.raises(ValueError, match=r"context_lens\[1\]=0"):
        serving.paged_kv([3, 0], 16, 4, 1.0)
    with pytest.raises(ValueError, match="more than max_len=16"):
        serving.paged_kv([17], 16, 4, 1.0)
    with pytest.raises(ValueError, match=r"acceptance=1\.5"):
        serving.expected_tokens_per_round(1.5, 2)
    with pytest.raises(TypeError, match="draft=3"):
        serving.speculative_decoding(ILLUSTRATIVE, 3, 2, 0.5, 10, "H100-SXM")
    with pytest.raises(ValueError, match="output_lengths"):
        serving.static_batch_occupancy([])
    with pytest.raises(ValueError, match="kernels=0"):
        serving.launch_bound_step(1e-3, 0, 1e-6)
    with pytest.raises(ValueError, match="gap_s_per_kernel=-1"):
        serving.launch_bound_step(1e-3, 10, 1e-6, -1e-6)
    with pytest.raises(TypeError, match="draft=None"):
        serving.speculative_max_batch(ILLUSTRATIVE, None, 4096, "H100-SXM")
    with pytest.raises(ValueError, match="context_len=0"):
        serving.speculative_max_batch(ILLUSTRATIVE, ILLUSTRATIVE, 0, "H100-SXM")
    with pytest.raises(TypeError, match="config='7B'"):
        serving.decode_kernels("7B")


# ---------------------------------------------------- chunked prefill, disaggregation, prefixes


def test_a_mixed_step_reads_the_weights_once():
    h100 = "H100-SXM"
    m = serving.chunked_prefill(ILLUSTRATIVE, 16, 4096, 256, h100)
    d = inference.decode_step(ILLUSTRATIVE, 16, 4096, h100)
    c = inference.prefill_step(ILLUSTRATIVE, 1, 256, h100)
    assert m.flops == pytest.approx(d.flops + c.flops)
    # by hand: weights once, 16 caches of 4096 read, 16 + 256 tokens' K and V written
    per = ILLUSTRATIVE.kv_bytes_per_token()
    by_hand = ILLUSTRATIVE.step_weight_params * 2 + per * (16 * 4096 + 16 + 256)
    assert m.bytes == pytest.approx(by_hand)
    assert m.bound == "memory" and m.time_s == pytest.approx(m.bytes / 3.35e12)
    assert m.saved_s == pytest.approx(d.time_s + c.time_s - m.time_s)
    assert m.extra_s < 0.01 * d.time_s  # the chunk rides on the weight read


def test_free_chunk_is_where_the_mixed_step_turns_compute_bound():
    for batch, context in ((1, 512), (16, 4096)):
        free = serving.free_chunk_tokens(ILLUSTRATIVE, batch, context, "H100-SXM")
        at = serving.chunked_prefill(ILLUSTRATIVE, batch, context, free, "H100-SXM")
        past = serving.chunked_prefill(ILLUSTRATIVE, batch, context, free + 1, "H100-SXM")
        assert at.t_math_s <= at.t_memory_s and past.t_math_s > past.t_memory_s
    # small cache, bf16: 2·(W + H)·1 + 2·W·C + 2·H (the chunk's one logit) = ridge · 2·(W + H)
    # for layer weights W and LM head H, i.e. C = (ridge·(W + H) − (W + H) − H) / W; attention
    # FLOPs take a little off, the cache bytes add a little
    w, h = ILLUSTRATIVE.weight_params, ILLUSTRATIVE.lm_head_params
    ridge = 989.4e12 / 3.35e12
    by_hand = (ridge * (w + h) - (w + h) - h) / w
    assert abs(serving.free_chunk_tokens(ILLUSTRATIVE, 1, 512, "H100-SXM") - by_hand) < 5
    # a decode step that is already compute-bound has nothing free
    assert serving.free_chunk_tokens(ILLUSTRATIVE, 512, 64, "H100-SXM") == 0


def test_free_chunk_depends_on_the_decode_tokens_not_on_how_the_cache_is_split():
    # 16 × 4096 and 64 × 1024 cache the same 65,536 tokens: the memory-bound step is as long,
    # and the free chunk shrinks only by the 48 extra decode tokens' FLOPs, each a pass through
    # the layers' weights W and the output head H, i.e. by about 48·(W + H)/W chunk tokens
    a = inference.decode_step(ILLUSTRATIVE, 16, 4096, "H100-SXM")
    b = inference.decode_step(ILLUSTRATIVE, 64, 1024, "H100-SXM")
    assert b.time_s == pytest.approx(a.time_s, rel=1e-3)
    free_a = serving.free_chunk_tokens(ILLUSTRATIVE, 16, 4096, "H100-SXM")
    free_b = serving.free_chunk_tokens(ILLUSTRATIVE, 64, 1024, "H100-SXM")
    w, h = ILLUSTRATIVE.weight_params, ILLUSTRATIVE.lm_head_params
    assert free_a - free_b == pytest.approx(48 * (w + h) / w, abs=2)


def test_a_later_chunk_attends_to_the_earlier_ones():
    first = serving.chunked_prefill(ILLUSTRATIVE, 1, 512, 256, "H100-SXM")
    later = serving.chunked_prefill(ILLUSTRATIVE, 1, 512, 256, "H100-SXM", chunk_context=1024)
    c = ILLUSTRATIVE
    extra = 4.0 * c.n_layers * c.n_heads * c.head_dim * 256 * 1024  # 256 queries × 1024 keys
    assert later.flops - first.flops == pytest.approx(extra)
    assert later.bytes - first.bytes == pytest.approx(c.kv_bytes_per_token() * 1024)


def test_kv_transfer_is_layers_2_kv_heads_head_dim_bytes_prompt():
    t = serving.kv_transfer(ILLUSTRATIVE, 4096, "InfiniBand NDR 400G")
    assert t.bytes == 32 * 2 * 8 * 128 * 2 * 4096  # = 512 MiB
    assert t.time_s == pytest.approx(t.bytes / 50e9)
    nv5 = serving.kv_transfer(ILLUSTRATIVE, 4096, "NVLink 5 (B200, GB200)", "fp8")
    assert nv5.time_s == pytest.approx(t.bytes / 2 / 900e9)
    with pytest.raises(ValueError, match="link"):
        serving.kv_transfer(ILLUSTRATIVE, 4096, "carrier pigeon")


def test_prefix_cache_saves_the_prefix_weights_and_its_own_attention():
    c = ILLUSTRATIVE
    p = serving.prefix_cache(c, 4096, 3072, "H100-SXM")
    s = 3072
    by_hand = 2 * c.weight_params * s + 4 * c.n_layers * c.n_heads * c.head_dim * s * (s + 1) / 2
    assert p.flops_saved == pytest.approx(by_hand)
    assert p.prefix_kv_bytes == c.kv_bytes_per_token() * s
    assert p.speedup > 1 and p.time_saved_s == pytest.approx(p.full.time_s - p.cached.time_s)
    with pytest.raises(ValueError, match="prefix_len"):
        serving.prefix_cache(c, 4096, 4096, "H100-SXM")


# ------------------------------------------------------------------------------ self-speculation


def test_a_draft_head_is_one_layer_and_the_lm_head():
    head = serving.draft_head(ILLUSTRATIVE)
    assert head.n_layers == 1 and head.d_model == ILLUSTRATIVE.d_model
    one_layer = ILLUSTRATIVE.weight_params / ILLUSTRATIVE.n_layers
    assert head.step_weight_params == one_layer + ILLUSTRATIVE.lm_head_params


def test_mtp_one_drafted_token_by_hand():
    """γ = 1 (DeepSeek-V3's MTP): 1 + α tokens per round for one head step and one 2-token
    verification; at batch 1 every step is its weight read."""
    h100 = "H100-SXM"
    alpha = 0.875
    r = serving.self_speculative_decoding(ILLUSTRATIVE, 1, alpha, 4096, h100)
    assert r.tokens_per_round == pytest.approx(1 + alpha)
    c, bw = ILLUSTRATIVE, 3.35e12
    kv = c.kv_bytes_per_token() / c.n_layers * 4097  # the head's one layer: cache + new token
    head_bytes = 2 * (c.weight_params / c.n_layers + 2 * c.d_model**2 + c.lm_head_params) + kv
    assert r.draft_step_s == pytest.approx(head_bytes / bw)
    plain = inference.decode_step(c, 1, 4096, h100).time_s
    verify = inference.verify_step(c, 1, 2, 4096, h100).time_s
    assert r.speedup == pytest.approx((1 + alpha) * plain / (head_bytes / bw + verify))
    assert 1.6 < r.speedup < 1 + alpha  # the head costs a tenth of a step here


def test_a_head_drafts_cheaper_than_a_separate_model():
    h = serving.self_speculative_decoding(ILLUSTRATIVE, 4, 0.8, 4096, "H100-SXM")
    d = serving.speculative_decoding(
        ILLUSTRATIVE, serving.ILLUSTRATIVE_DRAFT, 4, 0.8, 4096, "H100-SXM"
    )
    assert h.draft_step_s < d.draft_step_s and h.speedup > d.speedup
    with pytest.raises(ValueError, match="layers"):
        serving.draft_head(ILLUSTRATIVE, 33)


# ------------------------------------------------------------------------- mixture-of-experts


@pytest.mark.parametrize(("e", "k", "b"), [(5, 2, 1), (5, 2, 3), (6, 3, 2), (4, 1, 4)])
def test_distinct_experts_by_enumerating_every_routing(e, k, b):
    subsets = list(itertools.combinations(range(e), k))  # each token's equally likely choices
    total = 0
    for routing in itertools.product(subsets, repeat=b):
        total += len(set().union(*routing))
    expected = total / len(subsets) ** b
    assert serving.expected_distinct_experts(e, k, b) == pytest.approx(expected)


def test_deepseek_v3_has_its_reported_671b_and_37b():
    c = serving.DEEPSEEK_V3_MOE
    assert c.total_params == pytest.approx(671e9, rel=2e-3)  # the report: 671B total
    assert c.active_params == pytest.approx(37e9, rel=0.02)  # and 37B activated per token
    # one expert: 3 × 7168 × 2048; 58 MoE layers of 256
    assert c.expert_params == 3 * 7168 * 2048 and c.moe_layers == 58


def test_moe_decode_reads_top_k_experts_at_one_token_and_all_at_many():
    c = serving.DEEPSEEK_V3_MOE
    one = serving.moe_decode(c, 1)
    assert one.weight_bytes == pytest.approx(c.active_params)  # fp8: 1 byte per weight
    many = serving.moe_decode(c, 4096, 2.0)
    assert many.distinct_experts == pytest.approx(256)
    assert many.weight_bytes == pytest.approx(2 * (c.total_params - 129_280 * 7168), rel=1e-9)
    assert many.tokens_per_expert == pytest.approx(4096 * 8 / 256)
    with pytest.raises(ValueError, match="top_k"):
        serving.expected_distinct_experts(8, 9, 1)


def test_a_megakernel_removes_the_launches_and_the_boundaries():
    s = serving.launch_bound_step(600e-6, 179, 3.6e-6, 1.3e-6)
    assert s.graph_s == pytest.approx(600e-6 + 179 * 1.3e-6)
    assert s.megakernel_s == pytest.approx(600e-6)
    assert s.megakernel_speedup == pytest.approx((600e-6 + 179 * 1.3e-6) / 600e-6)
    tiny = serving.launch_bound_step(1e-6, 1, 5e-6, 0.0)  # even one kernel needs its launch
    assert tiny.megakernel_s == 5e-6
