"""The inference cost model against independent counts, the seeds' worked numbers and brute
force: KV-cache bytes, decode vs prefill on the roofline, and split-KV's CTAs and waves."""

from __future__ import annotations

import math

import pytest

from gpuperf import inference, roofline, tiling
from gpuperf.hardware import chip, chips
from gpuperf.inference import ILLUSTRATIVE, DecoderConfig
from gpuperf.units import bytes_per_element

SMALL = DecoderConfig(n_layers=2, d_model=64, n_heads=8, n_kv_heads=2, head_dim=16, d_ff=96)


def _matrices(config: DecoderConfig) -> list[tuple[int, int]]:
    """Every weight matrix of the model, listed one by one (an independent count)."""
    d, hd = config.d_model, config.head_dim
    per_layer = [
        (d, config.n_heads * hd),  # W_Q
        (d, config.n_kv_heads * hd),  # W_K
        (d, config.n_kv_heads * hd),  # W_V
        (config.n_heads * hd, d),  # W_O
        (d, config.d_ff),  # up
        (config.d_ff, d),  # down
    ] + ([(d, config.d_ff)] if config.gated_mlp else [])  # gate
    return per_layer * config.n_layers


def _cache_elements(config: DecoderConfig, tokens: int, batch: int) -> int:
    """Elements of the K and V tensors of every layer, shape (batch, kv_heads, tokens, d)."""
    shape = (batch, config.n_kv_heads, tokens, config.head_dim)
    return sum(math.prod(shape) for _layer in range(config.n_layers) for _kv in ("K", "V"))


# ---------------------------------------------------------------------------------- KV cache


@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp8"])
@pytest.mark.parametrize(("tokens", "batch"), [(1, 1), (37, 3), (4096, 8)])
def test_kv_cache_bytes_equal_the_tensors_it_holds(precision, tokens, batch):
    want = _cache_elements(SMALL, tokens, batch) * bytes_per_element(precision)
    got = inference.kv_cache_bytes(SMALL.n_layers, SMALL.n_kv_heads, SMALL.head_dim, tokens,
                                   batch, precision)  # fmt: skip
    assert got == want
    assert SMALL.kv_bytes_per_token(precision) * tokens * batch == want


def test_gqa_and_mqa_shrink_the_cache_by_the_group_size():
    mha = ILLUSTRATIVE.with_kv_heads(ILLUSTRATIVE.n_heads)
    for kv_heads, kind in [(32, "MHA"), (8, "GQA"), (4, "GQA"), (1, "MQA")]:
        config = ILLUSTRATIVE.with_kv_heads(kv_heads)
        assert config.attention_kind == kind
        ratio = mha.kv_bytes_per_token() / config.kv_bytes_per_token()
        assert ratio == config.group_size == 32 // kv_heads
    with pytest.raises(ValueError, match="n_heads=32 must be a multiple of n_kv_heads=3"):
        ILLUSTRATIVE.with_kv_heads(3)


def test_weight_params_count_every_matrix():
    for config in (SMALL, ILLUSTRATIVE, DecoderConfig(3, 40, 5, 5, 8, 50, gated_mlp=False)):
        assert config.weight_params == sum(a * b for a, b in _matrices(config))


# ----------------------------------------------------------------------------- decode attention


def test_decode_attention_cost_counts_the_two_matrix_vector_products():
    b, h, kvh, t, d = 3, 8, 2, 100, 16
    cost = inference.decode_attention_cost(b, h, kvh, t, d, "fp16")
    # q·Kᵀ: b·h dot products of length d with t keys; p·V: the same count; 2 FLOPs per MAC
    assert cost.flops == 2 * (b * h * t * d) * 2
    assert cost.bytes_read == 2 * (2 * b * kvh * t * d + b * h * d)
    assert cost.bytes_written == 2 * b * h * d


@pytest.mark.parametrize("kv_heads", [32, 8, 1])
def test_decode_attention_intensity_ignores_batch_and_context(kv_heads):
    group = 32 // kv_heads
    values = [
        inference.decode_attention_cost(batch, 32, kv_heads, context, 128, "bf16").intensity
        for batch in (1, 64)
        for context in (4096, 65536)
    ]
    assert max(values) - min(values) < 0.01 * group  # flat in batch and context
    assert values[0] == pytest.approx(2 * group / 2, rel=0.01)  # 2·group / bytes (bf16)


# ------------------------------------------------------------------------- decode and prefill


def test_decode_step_bytes_and_time_from_an_independent_count():
    h100 = chip("H100-SXM")
    step = inference.decode_step(ILLUSTRATIVE, 4, 1000, h100)
    weights = sum(a * b for a, b in _matrices(ILLUSTRATIVE)) * 2
    cache = _cache_elements(ILLUSTRATIVE, 1000, 4) * 2
    new = _cache_elements(ILLUSTRATIVE, 1, 4) * 2
    assert step.bytes == weights + cache + new
    assert step.bound == "memory"
    assert step.time_s == pytest.approx((weights + cache + new) / h100.hbm_bandwidth)
    assert step.tokens_per_s == pytest.approx(4 / step.time_s)
    # per generated token: the weights shared by 4 sequences, each sequence's own cache
    assert step.bytes_per_token == pytest.approx(weights / 4 + (cache + new) / 4)


def test_decode_weights_cross_the_ridge_at_the_critical_batch():
    """With a tiny context only the weights matter: decode turns compute-bound at a token batch
    of about the ridge point (seed 004: B > 240 for bf16 on TPU v5e)."""
    for name in ("TPU v5e", "H100-SXM", "A100-80GB"):
        critical = roofline.critical_batch_size(name, "bf16")
        if name == "TPU v5e":
            assert critical == pytest.approx(240, abs=1)  # 1.97e14 / 8.2e11 in seed 004
        below = inference.decode_step(ILLUSTRATIVE, int(critical * 0.9), 1, name)
        above = inference.decode_step(ILLUSTRATIVE, int(critical * 1.1), 1, name)
        assert below.bound == "memory" and above.bound == "compute", name


def test_long_context_keeps_decode_memory_bound_at_any_batch():
    """The cache grows with the batch as fast as the FLOPs: intensity saturates below the
    ridge (≈ 2·group/bytes from attention, plus the weights' share)."""
    steps = [inference.decode_step(ILLUSTRATIVE, b, 32768, "H100-SXM") for b in (1, 64, 4096)]
    assert all(s.bound == "memory" for s in steps)
    assert steps[-1].intensity < 2 * ILLUSTRATIVE.group_size  # below 2·group/bytes·2
    assert steps[0].kv_fraction < steps[1].kv_fraction < steps[2].kv_fraction


def test_prefill_is_compute_bound_and_counts_causal_attention():
    step = inference.prefill_step(SMALL, 2, 9, "H100-SXM")
    # token i (1-based) of the prompt attends to i keys: Σ i = 45 per head per layer
    attended = sum(range(1, 10))
    assert step.attention_flops == 4 * 2 * SMALL.n_layers * SMALL.n_heads * SMALL.head_dim * (
        attended
    )
    assert step.kv_read_bytes == 0 and step.tokens == 18
    big = inference.prefill_step(ILLUSTRATIVE, 1, 2048, "H100-SXM")
    assert big.bound == "compute" and big.intensity > big.ridge_point


def test_max_batch_fills_hbm_and_no_more():
    h100 = chip("H100-SXM")
    n = inference.max_batch(ILLUSTRATIVE, 8192, h100)
    weights = ILLUSTRATIVE.weight_bytes()
    per_seq = ILLUSTRATIVE.kv_bytes_per_token() * 8192
    assert weights + n * per_seq <= h100.hbm_bytes < weights + (n + 1) * per_seq
    huge = DecoderConfig(200, 32768, 256, 8, 128, 131072)
    assert inference.max_batch(huge, 10, h100) == 0


# ------------------------------------------------------------------------------------ split-KV


def test_plain_kernel_at_batch_one_leaves_most_sms_idle():
    h100 = chip("H100-SXM")
    plain = inference.split_kv(1, 32, 8, 8192, 128, h100, num_splits=1)
    assert plain.ctas == 8 and plain.waves == 1
    assert plain.sm_busy_fraction == pytest.approx(8 / h100.sm_count)
    assert plain.combine_bytes == 0
    split = inference.split_kv(1, 32, 8, 8192, 128, h100)
    assert split.ctas <= h100.sm_count < split.ctas + 8  # one more split: a second wave
    assert split.waves == 1 and split.sm_busy_fraction > 0.9
    for k in (plain, split, inference.split_kv(64, 32, 8, 8192, 128, h100, num_splits=4)):
        assert k.waves == tiling.waves(k.ctas, h100)  # the course's wave calculator agrees


@pytest.mark.parametrize("name", [c.name for c in chips() if c.is_gpu])
@pytest.mark.parametrize(
    ("batch", "kv_heads", "context"), [(1, 8, 8192), (2, 1, 300), (1, 4, 64), (64, 8, 4096)]
)
def test_choose_num_splits_is_the_best_single_wave_by_brute_force(name, batch, kv_heads, context):
    sms = chip(name).sm_count
    best = max(
        (inference.split_kv(batch, kv_heads, kv_heads, context, 64, name, s) for s in
         range(1, -(-context // 64) + 1)),
        key=lambda k: (k.waves == 1 or k.splits_used == 1, k.ctas if k.waves == 1 else 0),
    )  # fmt: skip
    chosen = inference.split_kv(batch, kv_heads, kv_heads, context, 64, name)
    assert chosen.ctas == best.ctas
    assert chosen.waves == 1 or chosen.splits_used == 1
    assert chosen.splits_used == inference.choose_num_splits(batch, kv_heads, context, name)
    assert chosen.ctas <= max(sms, batch * kv_heads)


def test_split_chunks_cover_the_context_in_whole_blocks():
    for context in (1, 63, 64, 65, 1000):
        for splits in range(1, -(-context // 64) + 1):
            k = inference.split_kv(1, 2, 1, context, 16, "A100-80GB", splits, block_n=64)
            assert k.chunk_len % 64 == 0
            assert (k.splits_used - 1) * k.chunk_len < context <= k.splits_used * k.chunk_len


def test_combine_bytes_are_the_fp32_partials_written_and_read():
    k = inference.split_kv(2, 8, 2, 4096, 64, "H100-SXM", num_splits=16)
    partial_values = 2 * 8 * 16 * (64 + 2)  # o (64) plus m and ℓ for each head and split
    assert k.combine_bytes == 2 * partial_values * 4
    assert k.combine_overhead == k.combine_bytes / (2 * 2 * 2 * 4096 * 64 * 2)


def test_errors_name_the_value_and_the_range():
    with pytest.raises(ValueError, match="num_splits=100 must be ≤ 2"):
        inference.split_kv(1, 2, 1, 100, 16, "H100-SXM", num_splits=100)
    with pytest.raises(ValueError, match="has no SMs"):
        inference.split_kv(1, 2, 1, 100, 16, "TPU v5e")
    with pytest.raises(TypeError, match="config="):
        inference.decode_step("llama", 1, 10, "H100-SXM")
    with pytest.raises(ValueError, match="context_len=0"):
        inference.decode_step(SMALL, 1, 0, "H100-SXM")
    with pytest.raises(ValueError, match="batch=-1"):
        inference.kv_cache_bytes(1, 1, 1, 1, -1)
    with pytest.raises(TypeError, match="gated_mlp"):
        DecoderConfig(1, 8, 2, 1, 4, 8, gated_mlp="no")
