"""The Hopper FlashAttention forward (tensor descriptors) against the same reference.

Triton's interpreter executes tensor descriptors, so these run on a CPU; the sm_90 evidence
(TMA and wgmma in the PTX, no spills) is in tests/test_inspect_hopper.py.
"""

from __future__ import annotations

import pytest
import torch

from gpuperf.kernels.flash_attention import FlashConfig, attention_ref
from gpuperf.kernels.flash_attention_hopper import (
    HEAD_DIMS,
    FlashAttentionHopper,
    flash_attention_hopper,
    hopper_config,
)
from gpuperf.tolerances import tolerance

from .conftest import DEVICE

SMALL = {  # interpreter-sized tiles; the sm_90 tiles (hopper_config) are tested offline
    "square": FlashConfig(16, 16, 4, 2),
    "tall": FlashConfig(32, 16, 4, 2),
    "wide": FlashConfig(16, 32, 4, 2),
}


def _qkv(shape, dtype=torch.float32, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randn(*shape, generator=g).to(dtype).to(DEVICE).requires_grad_(grad)
        for _ in range(3)
    ]


@pytest.mark.parametrize("tiles", SMALL)
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("shape", [(2, 37, 16), (1, 2, 50, 32), (1, 1, 1, 16), (1, 1, 64, 16)])
def test_forward_matches_reference(shape, is_causal, tiles):
    q, k, v = _qkv(shape)
    with torch.no_grad():
        o = flash_attention_hopper(q, k, v, is_causal, config=SMALL[tiles])
    rtol, atol = tolerance("fp32")
    torch.testing.assert_close(o, attention_ref(q, k, v, is_causal), rtol=rtol, atol=atol)


def test_fp16_with_the_sm90_tiles():
    q, k, v = _qkv((1, 1, 130, 64), torch.float16)
    with torch.no_grad():
        o = flash_attention_hopper(q, k, v, True)  # hopper_config(64): 128×128, ragged end
    rtol, atol = tolerance("fp16")
    torch.testing.assert_close(
        o.float(), attention_ref(q, k, v, True).float(), rtol=rtol, atol=atol
    )


@pytest.mark.parametrize("is_causal", [False, True])
def test_backward_through_the_portable_kernels(is_causal):
    q, k, v = _qkv((1, 2, 40, 16), grad=True)
    FlashAttentionHopper.CONFIG = SMALL["tall"]
    try:
        o = FlashAttentionHopper.apply(q, k, v, is_causal)
    finally:
        FlashAttentionHopper.CONFIG = None
    lse = next(t for t in o.grad_fn.saved_tensors if t.shape == q.shape[:-1])
    do = torch.randn_like(o)
    grads = torch.autograd.grad(o, (q, k, v), do)
    o_ref = attention_ref(q, k, v, is_causal)
    grads_ref = torch.autograd.grad(o_ref, (q, k, v), do)
    rtol, atol = tolerance("fp32")
    for got, want in zip((o, *grads), (o_ref, *grads_ref), strict=True):
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol)
    scores = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    if is_causal:
        scores = scores.masked_fill(torch.ones(40, 40, dtype=torch.bool).triu(1), float("-inf"))
    torch.testing.assert_close(lse, torch.logsumexp(scores, dim=-1), rtol=rtol, atol=atol)


def test_configs_for_sm90_fit_and_are_wgmma_shaped():
    for d in HEAD_DIMS:
        c = hopper_config(d)
        assert c.BLOCK_M in (64, 128) and c.num_warps == 8
        assert c.shared_memory_bytes(d, 2) <= 227 * 1024


def test_rejections():
    q, k, v = _qkv((1, 8, 40))
    with pytest.raises(ValueError, match=r"head dim d=40 must be one of \(16, 32, 64, 128, 256\)"):
        flash_attention_hopper(q, k, v)
    q, k, v = _qkv((1, 8, 16))
    with pytest.raises(TypeError, match=r"is_causal='yes' must be True or False"):
        flash_attention_hopper(q, k, v, "yes")
    with pytest.raises(ValueError, match=r"num_stages=0"):
        flash_attention_hopper(q, k, v, config=FlashConfig(16, 16, 4, 0))
    with pytest.raises(TypeError, match=r"k.dtype=torch.float16 but q.dtype=torch.float32"):
        flash_attention_hopper(q, k.half(), v)
