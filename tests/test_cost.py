"""Cost models against hand counts, the seeds' worked numbers, and invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuperf import cost
from gpuperf.cost import OpCost
from gpuperf.units import bytes_per_element

BAD_SIZES = [0, -1, 2.5, math.nan, math.inf, True, "8", None]


def test_dot_product_intensity_tends_to_one_half():
    # (N + N - 1) FLOPs over (2N + 2N + 2) bytes in bf16 (seed 004).
    for n in (10, 1000, 10**9):
        op = cost.dot(n, "bf16")
        assert op.intensity == pytest.approx((2 * n - 1) / (4 * n + 2))
    assert cost.dot(10**9).intensity == pytest.approx(0.5, rel=1e-8)


def test_relu_intensity_doubles_from_fp32_to_fp16():
    # Read 4 B, write 4 B, 1 FLOP → 1/8; in fp16 read 2, write 2 → 1/4 (seed 002, p. 16).
    assert cost.elementwise(1 << 20, "fp32").intensity == pytest.approx(1 / 8)
    assert cost.elementwise(1 << 20, "fp16").intensity == pytest.approx(1 / 4)
    assert cost.elementwise(1 << 20, "fp8").intensity == pytest.approx(1 / 2)


def test_vector_add_moves_three_arrays():
    op = cost.elementwise(1000, "fp32", n_inputs=2)
    assert op.bytes_read == 8000 and op.bytes_written == 4000 and op.flops == 1000


def test_matmul_counts_match_the_formula():
    b, d, f = 128, 4096, 8192
    op = cost.matmul(b, f, d, "bf16")
    assert op.flops == 2 * b * d * f
    assert op.bytes_read == 2 * b * d + 2 * d * f
    assert op.bytes_written == 2 * b * f
    assert op.intensity == pytest.approx(b * d * f / (b * d + d * f + b * f))


@pytest.mark.parametrize("b", [1, 8, 64, 256])
def test_matmul_intensity_is_about_the_batch_when_batch_is_small(b):
    d = f = 16384
    intensity = cost.matmul(b, f, d, "bf16").intensity
    assert intensity == pytest.approx(b, rel=2 * b / d + 1e-12)
    assert intensity < b


def test_int8_matmul_counts_one_byte_per_element():
    # Seed 004, problem 1: BD + DF bytes loaded, BF written, 2BDF OPs, intensity → 2B.
    b, d, f = 16, 8192, 8192
    op = cost.matmul(b, f, d, "int8")
    assert op.bytes_read == b * d + d * f
    assert op.bytes_written == b * f
    assert op.intensity == pytest.approx(2 * b, rel=0.01)


def test_int8_weights_with_bf16_activations():
    # Seed 004, problem 2: bf16[B, D] * int8[D, F] -> bf16[B, F].
    b, d, f = 16, 8192, 8192
    op = cost.matmul(b, f, d, "bf16", b_precision="int8")
    assert op.bytes_read == 2 * b * d + d * f
    assert op.bytes_written == 2 * b * f
    assert op.intensity == pytest.approx(2 * b, rel=0.01)


def test_per_example_weights_have_intensity_about_two():
    # Seed 004, problem 4: int8[B, D] x int8[B, D, F] -> int8[B, F]: 2BDF / (BD + BDF + BF).
    b, d, f = 512, 4096, 4096
    op = cost.batched_matmul(b, 1, f, d, "int8")
    assert op.flops == 2 * b * d * f
    assert op.bytes == b * d + b * d * f + b * f
    assert 1.9 < op.intensity < 2.0


def test_shared_weights_batched_matmul_reads_b_once():
    shared = cost.batched_matmul(4, 32, 64, 128, "fp16", shared_b=True)
    separate = cost.batched_matmul(4, 32, 64, 128, "fp16")
    assert separate.bytes_read - shared.bytes_read == 3 * 64 * 128 * 2


def test_unfused_softmax_moves_about_four_times_the_fused_bytes():
    # Triton's fused-softmax tutorial: naive reads 5MN + 2M, writes 3MN + 2M; fused 2MN.
    m, n = 4096, 1024
    fused = cost.softmax(m, n, "fp32")
    unfused = cost.softmax(m, n, "fp32", fused=False)
    assert unfused.bytes == 4 * ((5 * m * n + 2 * m) + (3 * m * n + 2 * m))
    assert fused.bytes == 4 * 2 * m * n
    assert unfused.bytes / fused.bytes == pytest.approx(4, rel=0.01)
    assert unfused.flops == fused.flops
    # Eager torch.softmax is one kernel: the one-pass model; five ops is the hand-written one.
    assert (fused.name, unfused.name) == ("softmax (one pass)", "softmax (hand-written, five ops)")


def test_layernorm_is_memory_bound_everywhere():
    op = cost.layernorm(8192, 4096, "bf16")
    assert op.intensity == pytest.approx(8 / 4, rel=0.01)


def test_attention_flops_follow_the_flashattention2_count():
    # 4 · seqlen² · d · heads forward; causal halves it.
    assert cost.attention_flops(2, 16, 1024, 64) == 4 * 2 * 16 * 1024**2 * 64
    assert cost.attention_flops(2, 16, 1024, 64, causal=True) == 2 * 2 * 16 * 1024**2 * 64
    op = cost.attention(1, 1, 1024, 64, "fp16")
    assert op.bytes_read == 3 * 1024 * 64 * 2 and op.bytes_written == 1024 * 64 * 2


def test_training_flops_are_six_n_d_plus_palm_attention():
    run = cost.transformer_training_flops(405e9, 15.6e12)
    assert run.total == pytest.approx(6 * 405e9 * 15.6e12)
    with_attention = cost.transformer_training_flops(
        1e9, 1e6, n_layers=24, seq_len=2048, d_model=2048
    )
    assert with_attention.attention_flops == pytest.approx(12 * 24 * 2048 * 2048 * 1e6)
    with pytest.raises(ValueError, match="pass all of n_layers"):
        cost.transformer_training_flops(1e9, 1e6, n_layers=24)


def test_llama3_mfu_is_43_percent_of_dense_h100_peak():
    # Llama 3 405B: 430 TFLOP/s per GPU → 43 % (Table 4); a sparse peak would halve it.
    assert cost.mfu(430e12, "h100").mfu == pytest.approx(0.435, abs=0.001)
    assert cost.mfu(430e12 * 8192, "h100", n_chips=8192).mfu == pytest.approx(0.435, abs=0.001)


def test_training_mfu_from_tokens_per_second():
    # 1B params, 6e9 FLOPs/token; 33,000 tok/s on one A100 = 198 TFLOP/s = 63 % of 312.
    result = cost.training_mfu(33_000, 1e9, "a100")
    assert result.achieved_flops_per_s == pytest.approx(6e9 * 33_000)
    assert result.mfu == pytest.approx(198e12 / 312e12)


def test_opcosts_add_and_repeat():
    a = OpCost(10, 20, 30, "a")
    b = OpCost(1, 2, 3, "b")
    total = a + b
    assert (total.flops, total.bytes_read, total.bytes_written, total.name) == (
        11,
        22,
        33,
        "a + b",
    )
    assert a.times(3).bytes == 150
    assert a.__add__(5) is NotImplemented


@pytest.mark.parametrize("field", ["flops", "bytes_read", "bytes_written"])
def test_opcost_rejects_negative_and_nan(field):
    values = {"flops": 1.0, "bytes_read": 1.0, "bytes_written": 1.0}
    for bad in (-1.0, math.nan):
        values[field] = bad
        with pytest.raises(ValueError, match=field):
            OpCost(**values)


def test_opcost_must_move_a_byte():
    with pytest.raises(ValueError, match="at least one byte"):
        OpCost(1, 0, 0)


@pytest.mark.parametrize("bad", BAD_SIZES)
@pytest.mark.parametrize(
    ("function", "argument"),
    [
        (lambda v: cost.elementwise(v), "n"),
        (lambda v: cost.dot(v), "n"),
        (lambda v: cost.matmul(v, 4, 4), "m"),
        (lambda v: cost.matmul(4, 4, v), "k"),
        (lambda v: cost.batched_matmul(v, 4, 4, 4), "batch"),
        (lambda v: cost.softmax(4, v), "cols"),
        (lambda v: cost.layernorm(v, 4), "rows"),
        (lambda v: cost.attention(1, 1, v, 64), "seq_len"),
        (lambda v: cost.attention_flops(1, v, 8, 8), "heads"),
        (lambda v: OpCost(1, 1, 1).times(v), "count"),
    ],
)
def test_bad_sizes_name_the_argument(function, argument, bad):
    with pytest.raises(ValueError, match=f"{argument}=.* must be an integer ≥ 1"):
        function(bad)


@pytest.mark.parametrize("bad", [0, -5.0, math.nan, "fast"])
def test_bad_rates_are_rejected(bad):
    with pytest.raises(ValueError, match="model_flops_per_s"):
        cost.mfu(bad, "h100")
    with pytest.raises(ValueError, match="n_params"):
        cost.transformer_training_flops(bad, 1e6)


def test_unknown_precision_is_rejected_everywhere():
    for call in (
        lambda: cost.elementwise(8, "fp12"),
        lambda: cost.matmul(8, 8, 8, "fp12"),
        lambda: cost.matmul(8, 8, 8, "bf16", b_precision="int3"),
        lambda: cost.softmax(8, 8, "half"),
    ):
        with pytest.raises(ValueError, match="is not a known precision"):
            call()


def test_mfu_unknown_chip_and_missing_precision():
    with pytest.raises(KeyError, match="unknown chip"):
        cost.mfu(1e12, "h1000")
    with pytest.raises(ValueError, match="A100-80GB has no fp8"):
        cost.mfu(1e12, "a100", "fp8")


@given(
    b=st.integers(1, 4096),
    extra=st.integers(1, 4096),
    d=st.integers(64, 16384),
    f=st.integers(64, 16384),
    precision=st.sampled_from(["fp32", "bf16", "fp8"]),
)
def test_matmul_intensity_grows_with_batch(b, extra, d, f, precision):
    small = cost.matmul(b, f, d, precision).intensity
    large = cost.matmul(b + extra, f, d, precision).intensity
    assert large > small


@given(n=st.integers(1, 10**12), precision=st.sampled_from(["fp32", "fp16", "bf16", "fp64"]))
def test_elementwise_intensity_only_depends_on_precision(n, precision):
    op = cost.elementwise(n, precision)
    assert op.intensity == pytest.approx(1 / (2 * bytes_per_element(precision)))


@pytest.mark.parametrize(
    ("call", "flag"),
    [
        (lambda v: cost.attention(1, 2, 64, 16, causal=v), "causal"),
        (lambda v: cost.attention_flops(1, 2, 64, 16, causal=v), "causal"),
        (lambda v: cost.softmax(4, 8, fused=v), "fused"),
        (lambda v: cost.layernorm(4, 8, affine=v), "affine"),
        (lambda v: cost.batched_matmul(2, 4, 4, 4, shared_b=v), "shared_b"),
    ],
)
def test_flags_reject_truthy_strings(call, flag):
    for bad in ("no", None, 1, 0):
        with pytest.raises(TypeError, match=f"{flag}=.* must be True or False"):
            call(bad)


def test_operand_precisions_are_checked_not_defaulted():
    for name in ("a_precision", "b_precision", "out_precision"):
        with pytest.raises(ValueError, match=f"{name}='' is not a known precision"):
            cost.matmul(4, 4, 4, **{name: ""})


def test_overflowing_sizes_and_zero_peaks_are_clear_errors():
    with pytest.raises(
        ValueError, match=r"n=1000.* must be an integer ≥ 1 and ≤ 9007199254740992"
    ):
        cost.elementwise(10**400)
    with pytest.raises(ValueError, match="peak_flops_per_s=0 must be a finite number > 0"):
        cost.MFU(1e14, 0)
