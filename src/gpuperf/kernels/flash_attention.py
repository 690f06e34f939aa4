"""FlashAttention-2, forward and backward, as a ``torch.autograd.Function``.

What you learn: standard attention writes the (seq × seq) score and probability matrices to HBM;
FlashAttention never does. A program holds a BLOCK_M block of queries, streams BLOCK_N blocks of
keys and values through SRAM, and keeps an online softmax (running max ``m``, running sum ``l``,
see :mod:`gpuperf.kernels.softmax`). HBM traffic drops from O(N²) to O(N·d) per head while FLOPs
stay 4·N²·d forward (2·N²·d with a causal mask, which skips blocks above the diagonal) and
2.5× that backward (:func:`gpuperf.cost.attention`, :mod:`gpuperf.attention`).

The backward pass does not store the probabilities either: it recomputes ``P = exp(S − L)`` from
the saved logsumexp ``L = m + log l`` (Dao 2023, FlashAttention-2, Algorithm 2). One kernel per
key block accumulates dK and dV; one per query block accumulates dQ; ``D = rowsum(dO ∘ O)`` is a
cheap elementwise reduction done in torch.

Contract (DESIGN §3): ``FlashAttention.apply(q, k, v, is_causal=False)`` takes (batch, seq, d) or
(batch, heads, seq, d) tensors of one shape, scales scores by 1/√d, uses a top-left causal mask
(query i sees keys j ≤ i), and saves q, k, v, o and ``L`` shaped like q without its last dim.
:class:`FlashAttentionTorch` is the same algorithm in plain, tiled torch with the same interface,
so one test harness checks both; :func:`attention_ref` is the naive O(N²)-memory version.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ._common import block, cdiv, check_tensor, next_power_of_2, reject_bf16_in_interpreter

MAX_HEAD_DIM = 256


def attention_cost(
    batch: int,
    heads: int,
    seq_len: int,
    head_dim: int,
    precision: str = "fp16",
    *,
    causal: bool = False,
):
    from .. import cost

    return cost.attention(batch, heads, seq_len, head_dim, precision, causal=causal)


def attention_ref(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, is_causal: bool = False
) -> torch.Tensor:
    """softmax(Q Kᵀ/√d) V in fp32 with the (seq × seq) matrix materialised; differentiable."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = (q.float() @ k.float().transpose(-1, -2)) * scale  # (…, seq, seq): the N² traffic
    if is_causal:
        n = q.shape[-2]
        mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(mask, float("-inf"))
    return (torch.softmax(s, dim=-1) @ v.float()).to(q.dtype)


# --------------------------------------------------------------------------------------------
# Triton kernels. All tensors are viewed as (batch·heads, seq, d), contiguous: stride_b = seq·d,
# stride_s = d; L and D are (batch·heads, seq) fp32.


@triton.jit
def _flash_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    l_ptr,
    seq_len,
    head_dim,
    scale,
    stride_b,
    stride_s,
    IS_CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid_m = tl.program_id(axis=0)
    bh = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    base = bh * stride_b
    qd_mask = (offs_m[:, None] < seq_len) & (offs_d[None, :] < head_dim)
    q = tl.load(
        q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], mask=qd_mask, other=0.0
    )  # (BM, BD), stays in registers for the whole loop
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    # Causal: key blocks above the diagonal are skipped, not just masked.
    hi = tl.minimum(seq_len, (pid_m + 1) * BLOCK_M) if IS_CAUSAL else seq_len
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_mask = (offs_n[:, None] < seq_len) & (offs_d[None, :] < head_dim)
        kv_offs = base + offs_n[:, None] * stride_s + offs_d[None, :]
        k = tl.load(k_ptr + kv_offs, mask=kv_mask, other=0.0)  # (BN, BD)
        v = tl.load(v_ptr + kv_offs, mask=kv_mask, other=0.0)  # (BN, BD)
        s = tl.dot(q, tl.trans(k)) * scale  # (BM, BN) fp32
        valid = offs_n[None, :] < seq_len
        if IS_CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None])
        s = tl.where(valid, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        p = tl.exp(s - m_safe[:, None])
        alpha = tl.exp(m_i - m_safe)  # rescales what was accumulated under the old max
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    l_safe = tl.where(l_i > 0.0, l_i, 1.0)
    o = acc / l_safe[:, None]
    lse = tl.where(m_i == -float("inf"), 0.0, m_i) + tl.log(l_safe)
    tl.store(
        o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :],
        o.to(o_ptr.dtype.element_ty),
        mask=qd_mask,
    )
    tl.store(l_ptr + bh * seq_len + offs_m, lse, mask=offs_m < seq_len)


@triton.jit
def _flash_bwd_dkdv_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    do_ptr,
    l_ptr,
    delta_ptr,
    dk_ptr,
    dv_ptr,
    seq_len,
    head_dim,
    scale,
    stride_b,
    stride_s,
    IS_CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid_n = tl.program_id(axis=0)
    bh = tl.program_id(axis=1)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    base = bh * stride_b
    kv_mask = (offs_n[:, None] < seq_len) & (offs_d[None, :] < head_dim)
    kv_offs = base + offs_n[:, None] * stride_s + offs_d[None, :]
    k = tl.load(k_ptr + kv_offs, mask=kv_mask, other=0.0)  # (BN, BD)
    v = tl.load(v_ptr + kv_offs, mask=kv_mask, other=0.0)
    dk = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)
    dv = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)
    # Causal: query blocks before this key block see none of it.
    lo = (pid_n * BLOCK_N // BLOCK_M) * BLOCK_M if IS_CAUSAL else 0
    for start_m in range(lo, seq_len, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        row_ok = offs_m < seq_len
        qd_mask = row_ok[:, None] & (offs_d[None, :] < head_dim)
        q_offs = base + offs_m[:, None] * stride_s + offs_d[None, :]
        q = tl.load(q_ptr + q_offs, mask=qd_mask, other=0.0)  # (BM, BD)
        do = tl.load(do_ptr + q_offs, mask=qd_mask, other=0.0)
        lse = tl.load(l_ptr + bh * seq_len + offs_m, mask=row_ok, other=0.0)  # (BM,)
        delta = tl.load(delta_ptr + bh * seq_len + offs_m, mask=row_ok, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale  # (BM, BN)
        valid = row_ok[:, None] & (offs_n[None, :] < seq_len)
        if IS_CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None])
        p = tl.where(valid, tl.exp(s - lse[:, None]), 0.0)  # recomputed, never stored
        dv += tl.dot(tl.trans(p.to(do.dtype)), do)
        dp = tl.dot(do, tl.trans(v))  # (BM, BN)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
    tl.store(dk_ptr + kv_offs, (dk * scale).to(dk_ptr.dtype.element_ty), mask=kv_mask)
    tl.store(dv_ptr + kv_offs, dv.to(dv_ptr.dtype.element_ty), mask=kv_mask)


@triton.jit
def _flash_bwd_dq_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    do_ptr,
    l_ptr,
    delta_ptr,
    dq_ptr,
    seq_len,
    head_dim,
    scale,
    stride_b,
    stride_s,
    IS_CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid_m = tl.program_id(axis=0)
    bh = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    base = bh * stride_b
    row_ok = offs_m < seq_len
    qd_mask = row_ok[:, None] & (offs_d[None, :] < head_dim)
    q_offs = base + offs_m[:, None] * stride_s + offs_d[None, :]
    q = tl.load(q_ptr + q_offs, mask=qd_mask, other=0.0)
    do = tl.load(do_ptr + q_offs, mask=qd_mask, other=0.0)
    lse = tl.load(l_ptr + bh * seq_len + offs_m, mask=row_ok, other=0.0)
    delta = tl.load(delta_ptr + bh * seq_len + offs_m, mask=row_ok, other=0.0)
    dq = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    hi = tl.minimum(seq_len, (pid_m + 1) * BLOCK_M) if IS_CAUSAL else seq_len
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_mask = (offs_n[:, None] < seq_len) & (offs_d[None, :] < head_dim)
        kv_offs = base + offs_n[:, None] * stride_s + offs_d[None, :]
        k = tl.load(k_ptr + kv_offs, mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + kv_offs, mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        valid = row_ok[:, None] & (offs_n[None, :] < seq_len)
        if IS_CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None])
        p = tl.where(valid, tl.exp(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k)
    tl.store(dq_ptr + q_offs, (dq * scale).to(dq_ptr.dtype.element_ty), mask=qd_mask)


# --------------------------------------------------------------------------------------------
# Launchers.


def _check_qkv(q: object, k: object, v: object, what: str) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, t, ndim=(3, 4))
    for name, t in (("k", k), ("v", v)):
        if t.shape != q.shape:
            raise ValueError(
                f"{name} has shape {tuple(t.shape)} but q has {tuple(q.shape)}; "
                "q, k and v must have one shape (batch[, heads], seq, d)"
            )
        if t.dtype != q.dtype:
            raise TypeError(f"{name}.dtype={t.dtype} but q.dtype={q.dtype}; they must match")
    if q.shape[-1] > MAX_HEAD_DIM:
        raise ValueError(f"head dim d={q.shape[-1]} must be ≤ {MAX_HEAD_DIM}")
    reject_bf16_in_interpreter(q, what)


def _blocks(BLOCK_M: int, BLOCK_N: int) -> tuple[int, int]:
    return block("BLOCK_M", BLOCK_M, 16, 256), block("BLOCK_N", BLOCK_N, 16, 256)


def _flash_forward(q, k, v, is_causal, BLOCK_M, BLOCK_N, num_warps=4, num_stages=2):
    seq, d = q.shape[-2], q.shape[-1]
    bh = q.numel() // (seq * d)
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device)
    grid = (cdiv(seq, BLOCK_M), bh)
    _flash_fwd_kernel[grid](
        q,
        k,
        v,
        o,
        lse,
        seq,
        d,
        1.0 / math.sqrt(d),
        seq * d,
        d,
        IS_CAUSAL=bool(is_causal),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_D=max(16, next_power_of_2(d)),
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return o, lse


def _flash_backward(q, k, v, o, lse, do, is_causal, BLOCK_M, BLOCK_N, num_warps=4, num_stages=2):
    seq, d = q.shape[-2], q.shape[-1]
    bh = q.numel() // (seq * d)
    do = do.contiguous()
    delta = (do.float() * o.float()).sum(dim=-1)  # D_i = rowsum(dO ∘ O), shaped like lse
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    meta = dict(
        IS_CAUSAL=bool(is_causal),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_D=max(16, next_power_of_2(d)),
        num_warps=num_warps,
        num_stages=num_stages,
    )
    scalars = (seq, d, 1.0 / math.sqrt(d), seq * d, d)
    _flash_bwd_dkdv_kernel[(cdiv(seq, BLOCK_N), bh)](
        q, k, v, do, lse, delta, dk, dv, *scalars, **meta
    )
    _flash_bwd_dq_kernel[(cdiv(seq, BLOCK_M), bh)](q, k, v, do, lse, delta, dq, *scalars, **meta)
    return dq, dk, dv


class FlashAttention(torch.autograd.Function):
    """FlashAttention-2 in Triton: ``FlashAttention.apply(q, k, v, is_causal=False)``.

    Class attributes ``BLOCK_M``/``BLOCK_N`` set the tiles (powers of two, 16–256).
    """

    BLOCK_M = 64
    BLOCK_N = 64

    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        _check_qkv(q, k, v, "FlashAttention")
        bm, bn = _blocks(FlashAttention.BLOCK_M, FlashAttention.BLOCK_N)
        o, lse = _flash_forward(q, k, v, is_causal, bm, bn)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal = bool(is_causal)
        ctx.blocks = (bm, bn)
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = _flash_backward(q, k, v, o, lse, do, ctx.is_causal, *ctx.blocks)
        return dq, dk, dv, None


def flash_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    is_causal: bool = False,
    *,
    BLOCK_M: int = 64,
    BLOCK_N: int = 64,
) -> torch.Tensor:
    """softmax(Q Kᵀ/√d) V with FlashAttention-2; differentiable (see :class:`FlashAttention`)."""
    _check_qkv(q, k, v, "flash_attention")
    bm, bn = _blocks(BLOCK_M, BLOCK_N)
    old = (FlashAttention.BLOCK_M, FlashAttention.BLOCK_N)
    FlashAttention.BLOCK_M, FlashAttention.BLOCK_N = bm, bn
    try:
        return FlashAttention.apply(q, k, v, is_causal)
    finally:
        FlashAttention.BLOCK_M, FlashAttention.BLOCK_N = old


# --------------------------------------------------------------------------------------------
# The same algorithm in plain torch, tile by tile: readable, and a second implementation to test.


class FlashAttentionTorch(torch.autograd.Function):
    """Tiled FlashAttention-2 in plain torch with the same interface and saved tensors."""

    BLOCK_M = 64
    BLOCK_N = 64

    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        if q.shape != k.shape or q.shape != v.shape or q.ndim not in (3, 4):
            raise ValueError(
                f"q, k, v must share one shape (batch[, heads], seq, d); got "
                f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
            )
        seq, d = q.shape[-2], q.shape[-1]
        scale = 1.0 / math.sqrt(d)
        qf, kf, vf = q.float(), k.float(), v.float()
        o = torch.empty_like(qf)
        lse = torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device)
        bm, bn = FlashAttentionTorch.BLOCK_M, FlashAttentionTorch.BLOCK_N
        for i in range(0, seq, bm):
            qi = qf[..., i : i + bm, :]
            rows = torch.arange(i, min(i + bm, seq), device=q.device)
            m = torch.full(qi.shape[:-1], float("-inf"), device=q.device)
            l_i = torch.zeros_like(m)
            acc = torch.zeros_like(qi)
            hi = min(seq, i + bm) if is_causal else seq
            for j in range(0, hi, bn):
                s = qi @ kf[..., j : j + bn, :].transpose(-1, -2) * scale
                if is_causal:
                    cols = torch.arange(j, min(j + bn, seq), device=q.device)
                    s = s.masked_fill(cols[None, :] > rows[:, None], float("-inf"))
                m_new = torch.maximum(m, s.amax(dim=-1))
                p = torch.exp(s - m_new[..., None])
                alpha = torch.exp(m - m_new)
                l_i = l_i * alpha + p.sum(dim=-1)
                acc = acc * alpha[..., None] + p @ vf[..., j : j + bn, :]
                m = m_new
            o[..., i : i + bm, :] = acc / l_i[..., None]
            lse[..., i : i + bm] = m + torch.log(l_i)
        o = o.to(q.dtype)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal = bool(is_causal)
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        seq, d = q.shape[-2], q.shape[-1]
        scale = 1.0 / math.sqrt(d)
        qf, kf, vf, dof = q.float(), k.float(), v.float(), do.float()
        delta = (dof * o.float()).sum(dim=-1)
        dq, dk, dv = torch.zeros_like(qf), torch.zeros_like(kf), torch.zeros_like(vf)
        bm, bn = FlashAttentionTorch.BLOCK_M, FlashAttentionTorch.BLOCK_N
        for j in range(0, seq, bn):
            kj, vj = kf[..., j : j + bn, :], vf[..., j : j + bn, :]
            cols = torch.arange(j, min(j + bn, seq), device=q.device)
            for i in range((j // bm) * bm if ctx.is_causal else 0, seq, bm):
                rows = torch.arange(i, min(i + bm, seq), device=q.device)
                qi, doi = qf[..., i : i + bm, :], dof[..., i : i + bm, :]
                p = torch.exp(qi @ kj.transpose(-1, -2) * scale - lse[..., i : i + bm, None])
                if ctx.is_causal:
                    p = p.masked_fill(cols[None, :] > rows[:, None], 0.0)
                dv[..., j : j + bn, :] += p.transpose(-1, -2) @ doi
                ds = p * (doi @ vj.transpose(-1, -2) - delta[..., i : i + bm, None])
                dk[..., j : j + bn, :] += ds.transpose(-1, -2) @ qi * scale
                dq[..., i : i + bm, :] += ds @ kj * scale
        return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype), None


__all__ = [
    "FlashAttention",
    "FlashAttentionTorch",
    "attention_cost",
    "attention_ref",
    "flash_attention",
]
