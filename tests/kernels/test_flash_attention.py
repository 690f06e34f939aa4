"""FlashAttention-2 (Triton) and its tiled torch twin against torch autograd."""

from __future__ import annotations

import pytest
import torch

from gpuperf.kernels import FlashAttention, FlashAttentionTorch, flash_attention
from gpuperf.kernels.flash_attention import attention_ref
from gpuperf.tolerances import tolerance

from .conftest import DEVICE

SHAPES = [(2, 77, 40), (1, 2, 50, 16), (1, 1, 1, 16), (2, 1, 130, 64)]
IMPLS = {"triton": FlashAttention.apply, "torch-tiled": FlashAttentionTorch.apply}


def _inputs(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randn(*shape, generator=g).to(dtype).to(DEVICE).requires_grad_(True)
        for _ in range(3)
    ]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_forward_and_backward_match_autograd(impl, shape, is_causal):
    q, k, v = _inputs(shape, torch.float32)
    o_ref = attention_ref(q, k, v, is_causal)
    do = torch.randn_like(o_ref)
    grads_ref = torch.autograd.grad(o_ref, (q, k, v), do)
    o = IMPLS[impl](q, k, v, is_causal)
    grads = torch.autograd.grad(o, (q, k, v), do)
    assert o.shape == q.shape
    rtol, atol = tolerance("fp32")  # IEEE fp32 dot products: one tolerance on CPU and GPU
    for name, got, want in zip(
        ("O", "dQ", "dK", "dV"), (o, *grads), (o_ref, *grads_ref), strict=True
    ):
        assert not torch.isnan(got).any(), f"NaN in {name}"
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, msg=f"{name} differs")


@pytest.mark.parametrize("is_causal", [False, True])
def test_fp16(is_causal):
    q, k, v = _inputs((1, 2, 70, 32), torch.float16)
    o = flash_attention(q, k, v, is_causal, BLOCK_M=32, BLOCK_N=16)
    do = torch.randn_like(o)
    grads = torch.autograd.grad(o, (q, k, v), do)
    o_ref = attention_ref(q, k, v, is_causal)
    grads_ref = torch.autograd.grad(o_ref, (q, k, v), do)
    rtol, atol = tolerance("fp16")
    for got, want in zip((o, *grads), (o_ref, *grads_ref), strict=True):
        torch.testing.assert_close(got.float(), want.float(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("impl", [FlashAttention, FlashAttentionTorch])
@pytest.mark.parametrize("shape", [(2, 33, 16), (2, 3, 33, 16)])
def test_saved_tensors_contract(impl, shape):
    q, k, v = _inputs(shape, torch.float32)
    o = impl.apply(q, k, v, False)
    saved = o.grad_fn.saved_tensors
    assert len(saved) == 5
    lse_like = [t for t in saved if t.shape == q.shape[:-1]]
    assert len(lse_like) == 1, "L must be the only saved tensor shaped like q without its last dim"
    lse = lse_like[0]
    scores = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    rtol, atol = tolerance("fp32")
    torch.testing.assert_close(lse, torch.logsumexp(scores, dim=-1), rtol=rtol, atol=atol)
    assert any(t.shape == q.shape and torch.equal(t, o) for t in saved), "o must be saved"


def test_block_sizes_are_arguments():
    q, k, v = _inputs((1, 45, 16), torch.float32)
    for bm, bn in [(16, 16), (32, 64), (64, 16)]:
        o = flash_attention(q, k, v, True, BLOCK_M=bm, BLOCK_N=bn)
        rtol, atol = tolerance("fp32")
        torch.testing.assert_close(o, attention_ref(q, k, v, True), rtol=rtol, atol=atol)


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("seq_k", [24, 40, 48])
def test_the_reference_takes_keys_of_another_length(seq_k, is_causal):
    """Padded or cached keys are longer (or shorter) than the queries: the reference is torch's
    attention with a top-left causal mask, whatever the two lengths (lab 4 relies on it)."""
    gen = torch.Generator().manual_seed(7)
    q = torch.randn(1, 2, 40, 16, generator=gen).to(DEVICE)
    k, v = (torch.randn(1, 2, seq_k, 16, generator=gen).to(DEVICE) for _ in range(2))
    scores = (q @ k.transpose(-1, -2)) / 16**0.5
    if is_causal:
        above = torch.ones(40, seq_k, dtype=torch.bool, device=DEVICE).triu(1)
        scores = scores.masked_fill(above, -torch.inf)
    expected = torch.softmax(scores, dim=-1) @ v
    rtol, atol = tolerance("fp32")
    torch.testing.assert_close(attention_ref(q, k, v, is_causal), expected, rtol=rtol, atol=atol)
    with pytest.raises(ValueError, match="must match in every dimension but the sequence"):
        attention_ref(q, k[..., :8], v[..., :8])
    with pytest.raises(ValueError, match="v has shape"):
        attention_ref(q, k, v[..., :-1, :])
