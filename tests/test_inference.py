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
    # every layer matrix, and the LM head (vocab × d_model), read once per step in bf16
    head = [(ILLUSTRATIVE.vocab_size, ILLUSTRATIVE.d_model)]
    weights = sum(a * b for a, b in _matrices(ILLUSTRATIVE) + head) * 2
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
    # held in HBM: the layers, the embedding table and the (untied) LM head
    weights = (ILLUSTRATIVE.weight_params + 2 * 128_000 * 4096) * 2
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


def test_every_split_reads_the_queries_again():
    # Each (sequence, KV head, split) CTA loads its group's queries: the split kernel reads all
    # batch·heads·d of them once per split, the plain kernel once (decode_attention_cost).
    batch, heads, kv_heads, ctx, d = 2, 8, 2, 4096, 64
    plain = inference.split_kv(batch, heads, kv_heads, ctx, d, "H100-SXM", num_splits=1)
    k = inference.split_kv(batch, heads, kv_heads, ctx, d, "H100-SXM", num_splits=16)
    once = 2 * 8 * 64 * 2  # bf16 queries, read once
    cost = inference.decode_attention_cost(batch, heads, kv_heads, ctx, d)
    assert plain.query_bytes == once == cost.bytes_read - plain.kv_bytes
    assert plain.split_overhead_bytes == 0 and plain.split_overhead == 0
    assert k.query_bytes == 16 * once
    assert k.split_overhead_bytes == k.combine_bytes + 15 * once
    assert k.split_overhead == pytest.approx(k.split_overhead_bytes / (2 * 2 * 2 * ctx * d * 2))
    # splits that whole-block chunks leave empty launch no CTA and read no queries
    odd = inference.split_kv(1, 4, 1, 100, 16, "H100-SXM", num_splits=6, block_n=16)
    assert odd.splits_used == 4 and odd.query_bytes == 4 * 4 * 16 * 2


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


# ------------------------------------------------------------------- LM head and embeddings


def test_the_lm_head_is_read_every_step_and_the_embedding_only_held():
    d, v = ILLUSTRATIVE.d_model, ILLUSTRATIVE.vocab_size
    assert ILLUSTRATIVE.lm_head_params == ILLUSTRATIVE.embedding_params == v * d
    assert ILLUSTRATIVE.step_weight_params == ILLUSTRATIVE.weight_params + v * d
    assert ILLUSTRATIVE.total_params == ILLUSTRATIVE.weight_params + 2 * v * d
    tied = DecoderConfig(32, 4096, 32, 8, 128, 12288, vocab_size=v, tied_embeddings=True)
    assert tied.total_params == tied.weight_params + v * d
    assert tied.step_weight_params == ILLUSTRATIVE.step_weight_params
    # the page's figure: 128k × 4096 × 2 B ≈ 1.05 GB, about 8 % of the layers' 12.3 GB
    assert ILLUSTRATIVE.lm_head_params * 2 == pytest.approx(1.05e9, rel=0.01)
    share = ILLUSTRATIVE.lm_head_params / ILLUSTRATIVE.weight_params
    assert share == pytest.approx(0.085, abs=0.001)
    # decode: logits for every new token; prefill: for each sequence's last token only
    step = inference.decode_step(ILLUSTRATIVE, 3, 100, "H100-SXM")
    assert step.weight_flops == 2 * 3 * (ILLUSTRATIVE.weight_params + v * d)
    pre = inference.prefill_step(ILLUSTRATIVE, 3, 100, "H100-SXM")
    assert pre.weight_flops == 2 * (300 * ILLUSTRATIVE.weight_params + 3 * v * d)
    no_vocab = ILLUSTRATIVE.with_kv_heads(8).__class__(32, 4096, 32, 8, 128, 12288)
    assert no_vocab.step_weight_params == no_vocab.weight_params


# -------------------------------------------------------------------- quantized weights


def test_quantized_bytes_per_weight():
    assert inference.quantized_bytes_per_weight(8) == 1.0
    assert inference.quantized_bytes_per_weight(4, 32, 4) == 0.5 + 4 / 32  # gpt-fast int4 G32
    assert inference.quantized_bytes_per_weight(4, 32, 1) == 0.53125  # MXFP4: E8M0 per 32
    assert inference.quantized_bytes_per_weight(4, 16, 1) == 0.5625  # NVFP4: E4M3 per 16
    with pytest.raises(ValueError, match="scale_bytes=2"):
        inference.quantized_bytes_per_weight(4, None, 2)


def test_weight_only_quantization_divides_the_weight_bytes_not_the_flops():
    h100 = chip("H100-SXM")
    bf16 = inference.decode_step(ILLUSTRATIVE, 1, 4096, h100)
    int4 = inference.decode_step(ILLUSTRATIVE, 1, 4096, h100, weight_bytes_per_param=0.625)
    assert int4.weight_bytes == pytest.approx(bf16.weight_bytes * 0.625 / 2)
    assert int4.flops == bf16.flops and int4.kv_read_bytes == bf16.kv_read_bytes
    assert int4.weight_intensity == pytest.approx(bf16.weight_intensity * 2 / 0.625)
    # the weights turn compute-bound at a batch smaller by the same factor
    tiny = 1
    crossing = next(
        b
        for b in range(1, 2000)
        if inference.decode_step(ILLUSTRATIVE, b, tiny, h100, weight_bytes_per_param=0.625).bound
        == "compute"
    )
    ridge = h100.ridge_point("bf16")
    assert crossing == pytest.approx(ridge * 0.625 / 2, rel=0.1)


def test_verify_step_reads_the_weights_once_for_all_drafted_tokens():
    h100 = chip("H100-SXM")
    plain = inference.decode_step(ILLUSTRATIVE, 1, 4096, h100)
    check = inference.verify_step(ILLUSTRATIVE, 1, 5, 4096, h100)
    assert check.weight_bytes == plain.weight_bytes and check.tokens == 5
    assert check.weight_flops == pytest.approx(5 * plain.weight_flops)
    assert check.time_s == pytest.approx(plain.time_s, rel=1e-3)  # memory-bound: same bytes


# ------------------------------------------------------------------------------------- MLA


def test_mla_cache_per_token_is_the_papers():
    # DeepSeek-V2 Table 1: MLA caches (d_c + d_R)·l elements = 4.5·d_h·l with d_c = 4·d_h and
    # d_R = d_h/2; MHA caches 2·n_h·d_h·l.
    v2 = inference.DEEPSEEK_V2
    assert v2.kv_bytes_per_token("bf16") == 4.5 * 128 * 60 * 2
    assert v2.mha_kv_bytes_per_token("bf16") == 2 * 128 * 128 * 60 * 2
    v3 = inference.DEEPSEEK_V3
    assert v3.kv_bytes_per_token("bf16") == (512 + 64) * 61 * 2 == 70_272


def test_absorbed_mla_equals_per_head_attention_and_its_flops():
    """Absorbing the key up-projection into the query gives the same scores as expanding the
    latents into per-head keys; the FLOPs counted are those of the absorbed form."""
    import numpy as np

    rng = np.random.default_rng(0)
    h, d, d_c, t = 4, 8, 16, 11
    latents = rng.normal(size=(t, d_c))
    w_uk = rng.normal(size=(h, d_c, d))  # latent → per-head key
    q = rng.normal(size=(h, d))
    expanded = np.einsum("hd,htd->ht", q, np.einsum("tc,hcd->htd", latents, w_uk))
    absorbed = np.einsum("hc,tc->ht", np.einsum("hd,hcd->hc", q, w_uk), latents)
    assert np.allclose(expanded, absorbed)
    d_r = 4
    cost = inference.mla_decode_attention_cost(2, h, t, d_c, d_r, "bf16")
    assert cost.flops == 2 * h * t * (2 * (d_c + d_r) + 2 * d_c) / 2 * 2  # batch 2
    assert cost.bytes_read == 2 * (2 * t * (d_c + d_r) + 2 * h * (d_c + d_r))
    big = inference.mla_decode_attention_cost(1, 128, 32768, 512, 64, "bf16").intensity
    assert big == pytest.approx(128 * (4 * 512 + 2 * 64) / (576 * 2), rel=0.01)


def test_the_page_says_which_shapes_are_sourced():
    """Review 2026-12 (R2): section 4.3 said "no model configuration is sourced in this course"
    while it used DeepSeek-V3's sourced attention shapes. Every sourced configuration the module
    holds must be named where the page says what it sources."""
    from pathlib import Path

    import nbformat

    page = Path(__file__).resolve().parent.parent / "chapters/04_inference_decode.ipynb"
    cells = nbformat.read(page, as_version=4).cells
    text = " ".join(c.source for c in cells if c.cell_type == "markdown").replace("\n", " ")
    code = " ".join(c.source for c in cells if c.cell_type == "code")
    assert "no model configuration is sourced" not in text
    sourced = [  # the sourced configurations the page's code uses
        value
        for name, value in vars(inference).items()
        if isinstance(value, inference.MLAConfig) and value.source and f"inference.{name}" in code
    ]
    assert sourced  # DeepSeek-V3's MLA shapes, from the DSV3 report
    claim = text[text.index("The course sources only") :][:300]
    for config in sourced:
        assert config.name in claim, config.name
    assert "Llama-2-7B's depth" in claim  # the launch example's 32 layers (GPT-FAST)


def test_weight_bound_batch_is_ridge_times_bytes_over_two():
    from gpuperf import roofline

    assert inference.weight_bound_batch("H100-SXM") == pytest.approx(
        roofline.critical_batch_size("H100-SXM", "bf16")
    )
    assert inference.weight_bound_batch("H100-SXM", "fp8") == pytest.approx(
        roofline.critical_batch_size("H100-SXM", "fp8")
    )
    # NVFP4 on a B200: 9 PFLOP/s dense fp4 over the table's 8 TB/s, 0.5625 bytes per weight
    nvfp4 = inference.quantized_bytes_per_weight(4, 16, 1)
    assert inference.weight_bound_batch("B200", "fp4", nvfp4) == pytest.approx(
        9e15 / 8e12 * 0.5625 / 2
    )
    # int4 weights with bf16 math on an H100: the batch falls by 2 / 0.625
    int4 = inference.quantized_bytes_per_weight(4, 32, 4)
    assert inference.weight_bound_batch("H100-SXM", "bf16", int4) == pytest.approx(
        989.4e12 / 3.35e12 * 0.625 / 2
    )
