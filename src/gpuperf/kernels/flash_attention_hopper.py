"""FlashAttention-2 forward for Hopper (sm_90): tensor descriptors, big tiles, split causal loop.

What you learn: the algorithm is exactly :mod:`gpuperf.kernels.flash_attention`'s (same online
softmax, same logsumexp, same reference ``attention_ref``); only how the tiles reach the tensor
cores changes. Three steps, each a named change against the portable kernel:

1. **Tensor descriptors (TMA).** ``tl.make_tensor_descriptor`` describes q, k, v and o as
   (batch·heads, seq, d) arrays; ``desc.load([bh, row, 0])`` becomes one ``cp.async.bulk.tensor``
   instruction on sm_90: the Tensor Memory Accelerator copies a whole tile into shared memory
   while the warps compute, with no per-thread address arithmetic and no masks (rows past the
   end of a head are zero-filled by the hardware, never read from the next head).
2. **Hopper tiles.** 128 query rows per program over 8 warps (two warpgroups, the shape of
   ``wgmma``), 128 keys per step for d ≤ 64 and 64 for d = 128, and 3 pipeline stages: chosen
   so K and V tiles in flight plus the Q tile fit in the 227 KiB of shared memory per block
   (:func:`hopper_config`).
3. **Causal split and exp2.** Key blocks strictly below the diagonal need no mask; only the
   block on the diagonal does. The loop runs twice — unmasked, then masked — instead of masking
   every block. Scores are pre-scaled by log₂e so ``exp2`` replaces ``exp``.

Only the forward pass is new: :class:`FlashAttentionHopper`'s backward is the portable
kernels' (:func:`gpuperf.kernels.flash_attention._flash_backward`), which read the same saved
logsumexp. Contract as :class:`~gpuperf.kernels.flash_attention.FlashAttention`: (batch, seq, d)
or (batch, heads, seq, d), one shape, scores scaled by 1/√d, top-left causal mask; ``d`` must be
16, 32, 64, 128 or 256 here (a TMA box is the whole head dimension, and TMA needs 16-byte rows).

Where it runs: compiled on sm_90 it uses TMA and ``wgmma`` (offline evidence in
``tests/test_inspect_hopper.py``). Triton lowers descriptors to ordinary loads on other GPUs and
runs them in its CPU interpreter, so the same tests check its numbers on a laptop. Whether it
is faster than the portable kernel, and by how much, only ``python -m gpuperf.bench`` on an
H100 can say (the "FA-hopper" rows); nothing here claims a speed.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from .._validate import choice, instance, optional
from ..runtime import interpreting
from ._common import cdiv, check_grid, flag, reject_bf16_in_interpreter
from .flash_attention import (
    FlashConfig,
    _backward_config,
    _check_config,
    _check_qkv,
    _flash_backward,
    attention_ref,
)

#: Head dimensions the descriptor kernel accepts (the TMA box spans the whole of d).
HEAD_DIMS = (16, 32, 64, 128, 256)
LOG2E = 1.4426950408889634


@triton.jit
def _attn_fwd_tile_loop(
    acc,
    l_i,
    m_i,
    q,
    k_desc,
    v_desc,
    bh,
    offs_m,
    lo,
    hi,
    seq_len,
    qk_scale,
    MASKED: tl.constexpr,
    IS_CAUSAL: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
):
    # Stream key/value blocks [lo, hi): online softmax in base 2 (qk_scale includes log2(e)).
    for start_n in tl.range(lo, hi, BLOCK_N):
        k = k_desc.load([bh, start_n, 0]).reshape(BLOCK_N, BLOCK_D)  # TMA: one bulk copy
        s = tl.dot(q, tl.trans(k), input_precision=INPUT_PRECISION) * qk_scale  # (BM, BN), log2
        offs_n = start_n + tl.arange(0, BLOCK_N)
        if MASKED:  # only the diagonal block(s) and the ragged end need a mask
            valid = offs_n[None, :] < seq_len
            if IS_CAUSAL:
                valid = valid & (offs_n[None, :] <= offs_m[:, None])
            s = tl.where(valid, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        p = tl.exp2(s - m_safe[:, None])
        alpha = tl.exp2(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = v_desc.load([bh, start_n, 0]).reshape(BLOCK_N, BLOCK_D)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=INPUT_PRECISION)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _flash_fwd_tma_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    l_ptr,
    seq_len,
    batch_heads,
    scale,
    IS_CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
):
    # 1-D grid: query block fastest, then batch·head (no 65,535 limit on axis 0).
    pid = tl.program_id(axis=0)
    num_m = tl.cdiv(seq_len, BLOCK_M)
    pid_m = pid % num_m
    bh = pid // num_m
    # (batch·heads, seq, d) views; the hardware zero-fills rows past seq_len of each head.
    stride_b = seq_len * BLOCK_D
    q_desc = tl.make_tensor_descriptor(
        q_ptr, [batch_heads, seq_len, BLOCK_D], [stride_b, BLOCK_D, 1], [1, BLOCK_M, BLOCK_D]
    )
    k_desc = tl.make_tensor_descriptor(
        k_ptr, [batch_heads, seq_len, BLOCK_D], [stride_b, BLOCK_D, 1], [1, BLOCK_N, BLOCK_D]
    )
    v_desc = tl.make_tensor_descriptor(
        v_ptr, [batch_heads, seq_len, BLOCK_D], [stride_b, BLOCK_D, 1], [1, BLOCK_N, BLOCK_D]
    )
    o_desc = tl.make_tensor_descriptor(
        o_ptr, [batch_heads, seq_len, BLOCK_D], [stride_b, BLOCK_D, 1], [1, BLOCK_M, BLOCK_D]
    )
    start_m = pid_m * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    q = q_desc.load([bh, start_m, 0]).reshape(BLOCK_M, BLOCK_D)
    qk_scale = scale * 1.4426950408889634  # exp(x) = exp2(x·log2 e)
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    if IS_CAUSAL:
        # Blocks entirely below the diagonal: no mask. Then the diagonal block(s), masked.
        diag = (start_m // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = _attn_fwd_tile_loop(
            acc, l_i, m_i, q, k_desc, v_desc, bh, offs_m, 0, diag, seq_len, qk_scale,
            False, IS_CAUSAL, BLOCK_N, BLOCK_D, INPUT_PRECISION,
        )  # fmt: skip
        hi = tl.minimum(seq_len, start_m + BLOCK_M)
        acc, l_i, m_i = _attn_fwd_tile_loop(
            acc, l_i, m_i, q, k_desc, v_desc, bh, offs_m, diag, hi, seq_len, qk_scale,
            True, IS_CAUSAL, BLOCK_N, BLOCK_D, INPUT_PRECISION,
        )  # fmt: skip
    else:
        # Full blocks unmasked; the ragged last block (if any) masked by the same code path.
        full = (seq_len // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = _attn_fwd_tile_loop(
            acc, l_i, m_i, q, k_desc, v_desc, bh, offs_m, 0, full, seq_len, qk_scale,
            False, IS_CAUSAL, BLOCK_N, BLOCK_D, INPUT_PRECISION,
        )  # fmt: skip
        acc, l_i, m_i = _attn_fwd_tile_loop(
            acc, l_i, m_i, q, k_desc, v_desc, bh, offs_m, full, seq_len, seq_len, qk_scale,
            True, IS_CAUSAL, BLOCK_N, BLOCK_D, INPUT_PRECISION,
        )  # fmt: skip
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # no visible key: 0, not NaN (NaN stays NaN)
    o = acc / l_safe[:, None]
    # logsumexp in natural log, as the portable kernel saves it: (m·ln 2) + ln l.
    lse = tl.where(m_i == -float("inf"), 0.0, m_i) * 0.6931471805599453 + tl.log(l_safe)
    o_desc.store([bh, start_m, 0], o.to(o_ptr.dtype.element_ty).reshape(1, BLOCK_M, BLOCK_D))
    row_ok = offs_m < seq_len
    tl.store(l_ptr + bh.to(tl.int64) * seq_len + offs_m, lse, mask=row_ok)


def hopper_config(head_dim: int) -> FlashConfig:
    """Tiles for sm_90: 128 queries × 8 warps; 128 keys per step for d ≤ 64, 64 beyond; 3 stages
    (2 for d = 256, to stay inside 227 KiB of shared memory)."""
    head_dim = choice("head_dim", head_dim, HEAD_DIMS)
    if head_dim <= 64:
        return FlashConfig(128, 128, 8, 3)
    if head_dim <= 128:
        return FlashConfig(128, 64, 8, 3)
    return FlashConfig(64, 64, 8, 2)


_allocator_set = False


def _ensure_allocator() -> None:
    """Device-side descriptors need a little global scratch memory: let torch provide it."""
    global _allocator_set
    if _allocator_set or interpreting():
        return

    def alloc(size: int, alignment: int, stream: int | None) -> torch.Tensor:
        return torch.empty(size, device="cuda", dtype=torch.int8)

    triton.set_allocator(alloc)
    _allocator_set = True


def _check_hopper(q, k, v, what: str) -> None:
    _check_qkv(q, k, v, what)
    d = q.shape[-1]
    if d not in HEAD_DIMS:
        raise ValueError(
            f"{what}: head dim d={d} must be one of {HEAD_DIMS} (a TMA box spans all of d); "
            "use gpuperf.kernels.flash_attention for other sizes"
        )
    if q.data_ptr() % 16 or k.data_ptr() % 16 or v.data_ptr() % 16:
        raise ValueError(f"{what}: q, k and v must start on a 16-byte boundary (TMA)")


def _forward(q, k, v, is_causal: bool, config: FlashConfig):
    seq, d = q.shape[-2], q.shape[-1]
    bh = q.numel() // (seq * d)
    _ensure_allocator()
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device)
    grid = check_grid((cdiv(seq, config.BLOCK_M) * bh,), "flash_attention_hopper")
    _flash_fwd_tma_kernel[grid](
        q,
        k,
        v,
        o,
        lse,
        seq,
        bh,
        1.0 / math.sqrt(d),
        IS_CAUSAL=is_causal,
        BLOCK_M=config.BLOCK_M,
        BLOCK_N=config.BLOCK_N,
        BLOCK_D=d,
        INPUT_PRECISION="ieee",  # fp32: IEEE, never TF32 unasked; fp16/bf16: tensor cores
        num_warps=config.num_warps,
        num_stages=config.num_stages,
    )
    return o, lse


class FlashAttentionHopper(torch.autograd.Function):
    """``FlashAttentionHopper.apply(q, k, v, is_causal=False)``: TMA forward, portable backward.

    ``CONFIG`` (None: :func:`hopper_config` by head dim) sets tiles, warps and stages.
    """

    CONFIG: FlashConfig | None = None

    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        is_causal = flag("is_causal", is_causal)
        _check_hopper(q, k, v, "FlashAttentionHopper")
        d = q.shape[-1]
        wanted = FlashAttentionHopper.CONFIG
        if wanted is None:  # not `or`: a falsy wrong value is an error, never the default
            wanted = hopper_config(d)
        instance("FlashAttentionHopper.CONFIG", wanted, FlashConfig)
        config = _check_config(wanted, d, q.dtype, "FlashAttentionHopper")
        o, lse = _forward(q, k, v, is_causal, config)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal = is_causal
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        # The portable kernels' default tiles: the backward is not tuned for Hopper here.
        config = _backward_config(FlashConfig(), q.dtype)
        dq, dk, dv = _flash_backward(q, k, v, o, lse, do, ctx.is_causal, config)
        return dq, dk, dv, None


def flash_attention_hopper(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    is_causal: bool = False,
    *,
    config: FlashConfig | None = None,
) -> torch.Tensor:
    """softmax(Q Kᵀ/√d) V with the Hopper forward (TMA); differentiable through the portable
    backward. ``config`` overrides :func:`hopper_config`."""
    is_causal = flag("is_causal", is_causal)
    optional("config", config, instance, FlashConfig)
    _check_hopper(q, k, v, "flash_attention_hopper")
    reject_bf16_in_interpreter(q, "flash_attention_hopper")
    old = FlashAttentionHopper.CONFIG
    FlashAttentionHopper.CONFIG = config
    try:
        return FlashAttentionHopper.apply(q, k, v, is_causal)
    finally:
        FlashAttentionHopper.CONFIG = old


__all__ = [
    "HEAD_DIMS",
    "FlashAttentionHopper",
    "attention_ref",
    "flash_attention_hopper",
    "hopper_config",
]
