"""Decode attention (plain and split-KV) against torch's scaled_dot_product_attention and an
einsum reference, on awkward shapes: context lengths that are not multiples of BLOCK_N, a
context of 1, more splits than SMs would want, and GQA groups of 1 (MHA), 3, 4 and all heads
(MQA)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F  # noqa: N812

from gpuperf import inference
from gpuperf.kernels import decode_attention_plain, decode_attention_split
from gpuperf.kernels.decode_attention import (
    MAX_GROUP,
    decode_attention_cost,
    decode_attention_ref,
    default_num_splits,
)

from .conftest import DEVICE, assert_close

# (batch, heads, kv_heads, context_len, head_dim)
SHAPES = [
    (1, 4, 4, 37, 16),  # MHA, group 1: 15 of 16 padded query rows masked
    (2, 6, 2, 100, 24),  # GQA group 3, head_dim not a power of two
    (1, 8, 2, 1, 32),  # context of one token
    (3, 4, 1, 77, 64),  # MQA: one KV head for all four query heads
    (1, 2, 1, 130, 16),  # context just past two 64-key blocks
]


def _inputs(batch, heads, kv_heads, context_len, head_dim, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, heads, head_dim, generator=g).to(dtype).to(DEVICE)
    k = torch.randn(batch, kv_heads, context_len, head_dim, generator=g).to(dtype).to(DEVICE)
    v = torch.randn(batch, kv_heads, context_len, head_dim, generator=g).to(dtype).to(DEVICE)
    return q, k, v


def _sdpa(q, k, v):
    """torch's own attention with the KV heads repeated for their group: an independent check."""
    group = q.shape[1] // k.shape[1]
    k, v = (t.float().repeat_interleave(group, dim=1) for t in (k, v))
    return F.scaled_dot_product_attention(q.float().unsqueeze(2), k, v).squeeze(2)


def test_reference_equals_torch_sdpa_and_a_loop():
    q, k, v = _inputs(2, 6, 2, 9, 8, dtype=torch.float64)
    ref = decode_attention_ref(q, k, v)
    torch.testing.assert_close(ref.float(), _sdpa(q, k, v))
    # the textbook formula, one head at a time
    b, h = 1, 4
    kv = h // 3
    s = k[b, kv] @ q[b, h] / math.sqrt(8)
    expected = torch.softmax(s, dim=0) @ v[b, kv]
    torch.testing.assert_close(ref[b, h], expected)


@pytest.mark.parametrize("shape", SHAPES)
def test_plain_matches_sdpa(shape):
    q, k, v = _inputs(*shape)
    out = decode_attention_plain(q, k, v, BLOCK_N=16)
    assert out.shape == q.shape and out.dtype == q.dtype
    assert_close(out, _sdpa(q, k, v), torch.float32)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("num_splits", [2, 3, 1000])
def test_split_matches_sdpa(shape, num_splits):
    q, k, v = _inputs(*shape)
    blocks = -(-shape[3] // 16)
    out = decode_attention_split(q, k, v, num_splits=min(num_splits, blocks), BLOCK_N=16)
    assert_close(out, _sdpa(q, k, v), torch.float32)
    assert_close(out, decode_attention_ref(q, k, v))


def test_every_split_count_gives_the_same_answer():
    """1 to 9 splits of 130 keys in blocks of 16: the combine step must not depend on them."""
    q, k, v = _inputs(1, 4, 2, 130, 16, seed=3)
    want = decode_attention_ref(q, k, v)
    for splits in range(1, 10):
        assert_close(decode_attention_split(q, k, v, num_splits=splits, BLOCK_N=16), want)


def test_default_split_fills_the_reference_chip():
    q, k, v = _inputs(1, 4, 2, 200, 16)
    assert default_num_splits(1, 2, 200, 16) == inference.choose_num_splits(
        1, 2, 200, "H100-SXM" if DEVICE == "cpu" else _this_gpu(), 16
    )
    assert_close(decode_attention_split(q, k, v, BLOCK_N=16), decode_attention_ref(q, k, v))


def _this_gpu():
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    from gpuperf.hardware import chip

    return chip("H100-SXM").replace(sm_count=int(sms))


def test_large_scores_stay_finite():
    """Scores of ±1e3 in different splits: the combine step rescales, never overflows."""
    q, k, v = _inputs(1, 2, 1, 70, 16, seed=5)
    k = k * 60.0
    out = decode_attention_split(q, k, v, num_splits=5, BLOCK_N=16)
    assert torch.isfinite(out).all()
    assert_close(out, decode_attention_ref(q, k, v))


def test_fp16():
    q, k, v = _inputs(2, 8, 2, 90, 32, dtype=torch.float16)
    for out in (
        decode_attention_plain(q, k, v, BLOCK_N=32),
        decode_attention_split(q, k, v, num_splits=3, BLOCK_N=32),
    ):
        assert out.dtype == torch.float16
        assert_close(out, decode_attention_ref(q, k, v), torch.float16)


def test_a_wrong_combine_would_be_caught():
    """Averaging the partial outputs (forgetting the weights ℓ·exp(m − M)) is wrong: the test
    data must tell the two apart, or the tests above prove nothing about the combine."""
    q, k, v = _inputs(1, 2, 1, 64, 16, seed=7)
    k[:, :, :32] *= 4.0  # the first split gets much larger scores than the second
    parts = [decode_attention_ref(q, k[:, :, i : i + 32], v[:, :, i : i + 32]) for i in (0, 32)]
    naive = (parts[0] + parts[1]) / 2
    want = decode_attention_ref(q, k, v)
    assert (naive - want).abs().max() > 0.1
    assert_close(decode_attention_split(q, k, v, num_splits=2, BLOCK_N=32), want)


def test_cost_model_intensity_is_two_flops_per_byte_per_group_member():
    c = decode_attention_cost(4, 32, 8, 4096, 128, "fp16")
    assert c.flops == 4 * 4 * 32 * 4096 * 128
    assert c.intensity == pytest.approx(2 * 4 / 2, rel=1e-2)  # 2·group / bytes per element


# ------------------------------------------------------------------------------ bad arguments


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ({"q": (1, 4, 16), "k": (1, 3, 10, 16)}, ValueError, "multiple of kv_heads"),
        ({"q": (2, 4, 16), "k": (1, 2, 10, 16)}, ValueError, "batch and head_dim must match"),
        ({"q": (1, 4, 16), "k": (1, 2, 10, 32)}, ValueError, "batch and head_dim must match"),
        ({"q": (1, 4, 16, 1), "k": (1, 2, 10, 16)}, ValueError, "expected 3-D"),
        ({"q": (1, 4, 300), "k": (1, 2, 10, 300)}, ValueError, "head_dim=300 must be ≤ 256"),
        ({"q": (1, 2 * MAX_GROUP, 16), "k": (1, 1, 4, 16)}, ValueError, "group"),
    ],
)
def test_bad_shapes_are_named(args, error, match):
    q = torch.zeros(args["q"], device=DEVICE)
    k = torch.zeros(args["k"], device=DEVICE)
    with pytest.raises(error, match=match):
        decode_attention_split(q, k, k.clone())


def test_bad_arguments_are_named():
    q, k, v = _inputs(1, 2, 1, 40, 16)
    with pytest.raises(ValueError, match="num_splits=4 must be an integer ≥ 1 and ≤ 3"):
        decode_attention_split(q, k, v, num_splits=4, BLOCK_N=16)
    with pytest.raises(ValueError, match="num_splits=0"):
        decode_attention_split(q, k, v, num_splits=0)
    with pytest.raises(ValueError, match="BLOCK_N=48 must be a power of two"):
        decode_attention_plain(q, k, v, BLOCK_N=48)
    with pytest.raises(ValueError, match="num_warps=3"):
        decode_attention_plain(q, k, v, num_warps=3)
    with pytest.raises(TypeError, match="must match"):
        decode_attention_plain(q.half(), k, v)
    with pytest.raises(ValueError, match="must match"):
        decode_attention_plain(q, k, v[:, :, :5].contiguous())
    with pytest.raises(ValueError, match="not contiguous"):
        decode_attention_plain(q, k.transpose(2, 3), v.transpose(2, 3))
    with pytest.raises(TypeError, match="int64 is not supported"):
        decode_attention_plain(q.long(), k.long(), v.long())
    with pytest.raises(RuntimeError, match="no backward"):
        decode_attention_plain(q.requires_grad_(), k, v)


@pytest.mark.skipif(DEVICE != "cpu", reason="the interpreter's bf16 refusal")
def test_bf16_is_refused_by_the_interpreter():
    q, k, v = _inputs(1, 2, 1, 40, 16, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="bfloat16 cannot run"):
        decode_attention_split(q, k, v)


@pytest.mark.skipif(DEVICE == "cpu", reason="wrong-device check needs a GPU to differ")
def test_cpu_tensors_are_refused_on_a_gpu():
    q, k, v = (t.cpu() for t in _inputs(1, 2, 1, 40, 16))
    with pytest.raises(ValueError, match="is on device cpu"):
        decode_attention_split(q, k, v)


@pytest.mark.skipif(DEVICE == "cpu", reason="bf16 arithmetic is tested compiled, on a GPU")
def test_bf16_on_a_gpu():
    q, k, v = _inputs(2, 8, 2, 300, 64, dtype=torch.bfloat16)
    assert_close(decode_attention_split(q, k, v), decode_attention_ref(q, k, v), torch.bfloat16)


# ------------------------------------------------------------------- compiled for real GPUs

_COMPILE = r"""
import json, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from gpuperf.kernels import decode_attention as da

FP32 = {"o_part_ptr", "m_part_ptr", "l_part_ptr"}
results = []
for kernel, constexprs in [
    (da._decode_split_kernel, {"BLOCK_G": 16, "BLOCK_N": 64, "BLOCK_D": 128, "SINGLE": False,
                               "INPUT_PRECISION": "ieee"}),
    (da._decode_split_kernel, {"BLOCK_G": 16, "BLOCK_N": 64, "BLOCK_D": 128, "SINGLE": True,
                               "INPUT_PRECISION": "ieee"}),
    (da._decode_combine_kernel, {"BLOCK_S": 16, "BLOCK_D": 128}),
]:
    for cc, dtype in [(75, "fp16"), (80, "fp16"), (80, "fp32"), (90, "fp16"), (90, "bf16")]:
        sig = {}
        for name in kernel.arg_names:
            if name in constexprs:
                sig[name] = "constexpr"
            elif name.endswith("_ptr"):
                sig[name] = "*fp32" if name in FP32 else "*" + dtype
            else:
                sig[name] = "fp32" if name == "scale" else "i32"
        src = ASTSource(kernel, sig, constexprs=constexprs)
        try:
            c = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})
            ok = bool(c.asm.get("cubin"))
            error = "mma" if "mma" in c.asm.get("ptx", "") else ""
        except Exception as exc:  # reported, not raised: the test names the failing case
            ok, error = False, str(exc).strip().splitlines()[-1][:300]
        results.append([kernel.fn.__name__, constexprs.get("SINGLE"), cc, dtype, ok, error])
print("RESULTS" + json.dumps(results))
"""


def test_kernels_compile_for_t4_a100_and_h100_without_a_gpu():
    """What the interpreter cannot show: Triton's compiler accepts both kernels for sm_75, sm_80
    and sm_90 (bf16 included), compiled offline as :mod:`gpuperf.inspect` does, and the split
    kernel's dot products use tensor-core (mma) instructions on sm_80 and sm_90."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["GPUPERF_COMPILE_ONLY"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", _COMPILE], capture_output=True, text=True, env=env, timeout=900
    )
    assert "RESULTS" in proc.stdout, proc.stderr[-3000:]
    import json

    results = json.loads(proc.stdout.split("RESULTS", 1)[1])
    assert len(results) == 15
    failed = [r for r in results if not r[4]]
    assert not failed, failed
    # the two tl.dot of the split kernel run on tensor cores from sm_80 on (fp16, bf16)
    for name, _single, cc, dtype, _ok, note in results:
        if name == "_decode_split_kernel" and cc >= 80 and dtype != "fp32":
            assert note == "mma", (name, cc, dtype)
