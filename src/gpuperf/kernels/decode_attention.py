"""Decode attention: one new query per sequence against its KV cache, plain and split-KV.

What you learn: when a decoder generates a token, each query head attends from *one* query to
the ``context_len`` cached keys and values of its sequence. The work is a matrix–vector product
— 4·context·head_dim FLOPs per query head for 2·context·head_dim·bytes of cache per KV head —
so the kernel is bound by HBM bandwidth, and the only question is whether enough SMs stream the
cache (:mod:`gpuperf.inference`).

``decode_attention_plain`` launches one program per (sequence, KV head). The program loads the
queries of every head in the KV head's group (GQA: ``group = heads / kv_heads``; MQA: all of
them), so each key and value is read from HBM once for the whole group, and runs the online
softmax of FlashAttention over the whole context (running max m, running sum ℓ, accumulator).
At batch 1 with 8 KV heads that is 8 programs: most SMs of a GPU have nothing to do.

``decode_attention_split`` ("Flash-Decoding", Dao et al. 2023) also splits the context into
``num_splits`` chunks of whole ``BLOCK_N`` blocks, one program each. A program writes its
chunk's normalised partial output o_s with its m_s and ℓ_s (fp32); a second kernel combines
the splits of each query head:

    M = max_s m_s,   w_s = ℓ_s · exp(m_s − M),   o = Σ_s w_s · o_s / Σ_s w_s,

exactly the rescaling that lets the online softmax visit blocks in any order. The combine reads
and writes ``2 · batch · heads · splits · (head_dim + 2)`` fp32 values, small next to the cache.

Shapes: ``q`` (batch, heads, head_dim) — the new token's queries; ``k_cache``, ``v_cache``
(batch, kv_heads, context_len, head_dim), contiguous; output like ``q``. Scores are scaled by
1/√head_dim; every cached position is visible (the new token is the last). fp32 inputs use
IEEE fp32 dot products (never TF32 behind the reader's back); fp16 and bf16 use tensor cores on
sm_80 and later; bf16 is refused by the CPU interpreter (its bf16 arithmetic is wrong) and runs
compiled.

The query group is padded to ``BLOCK_G`` ≥ 16 rows, the smallest ``tl.dot`` accepts: with
MHA (group 1) 15 of the 16 rows are masked work — cheap here, because the kernel waits on HBM,
not on the tensor cores.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from .._validate import positive_int
from ._common import (
    block,
    cdiv,
    check_grid,
    check_reference,
    check_tensor,
    next_power_of_2,
    reject_autograd,
    reject_bf16_in_interpreter,
    same,
    warps,
)

MAX_HEAD_DIM = 256
#: Most query heads one KV head may serve (one program holds the whole group's queries).
MAX_GROUP = 128
#: Most splits the combine kernel reduces in one program (its BLOCK_S × BLOCK_D fp32 tile stays
#: within 256 values per thread at head_dim 256 and 4 warps); a chip with more SMs gets this many.
MAX_SPLITS = 128
#: Chip whose SM count sizes the default split when no GPU is present (the course's largest).
CPU_REFERENCE_CHIP = "H100-SXM"
#: fp32 dot products in IEEE fp32, never TF32; fp16/bf16 inputs use tensor cores regardless.
DOT_PRECISION = "ieee"


def decode_attention_cost(
    batch: int,
    n_heads: int,
    n_kv_heads: int,
    context_len: int,
    head_dim: int,
    precision: str = "fp16",
):
    from .. import inference

    return inference.decode_attention_cost(
        batch, n_heads, n_kv_heads, context_len, head_dim, precision
    )


def decode_attention_ref(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor
) -> torch.Tensor:
    """softmax(q Kᵀ/√d) V for one query per head, in fp32, with KV heads shared by their group."""
    _check_shapes(
        check_reference("q", q, ndim=3),
        check_reference("k_cache", k_cache, ndim=4),
        check_reference("v_cache", v_cache, ndim=4),
    )
    group = q.shape[1] // k_cache.shape[1]
    k = k_cache.float().repeat_interleave(group, dim=1)  # (B, H, T, D): KV head per query head
    v = v_cache.float().repeat_interleave(group, dim=1)  # read the cache: 2·B·KVH·T·D elements
    s = torch.einsum("bhd,bhtd->bht", q.float(), k) / math.sqrt(q.shape[-1])  # (B, H, T)
    p = torch.softmax(s, dim=-1)
    return torch.einsum("bht,bhtd->bhd", p, v).to(q.dtype)  # write B·H·D elements


# --------------------------------------------------------------------------------------------
# Triton kernels. One program per (sequence b, KV head, split); pid = (b·KVH + kvh)·splits + s.


@triton.jit
def _decode_split_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    out_ptr,
    o_part_ptr,
    m_part_ptr,
    l_part_ptr,
    n_kv_heads,
    context_len,
    head_dim,
    group,
    chunk_len,
    num_splits,
    scale,
    stride_qb,
    stride_qh,
    stride_kb,
    stride_kh,
    stride_kt,
    BLOCK_G: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
    SINGLE: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    split = pid % num_splits
    bkv = pid // num_splits
    b = (bkv // n_kv_heads).to(tl.int64)  # int64: b·stride_kb may pass 2³¹
    kvh = (bkv % n_kv_heads).to(tl.int64)
    offs_g = tl.arange(0, BLOCK_G)
    offs_d = tl.arange(0, BLOCK_D)
    heads = kvh * group + offs_g  # the query heads that share this KV head
    g_mask = offs_g < group
    d_mask = offs_d < head_dim
    q = tl.load(
        q_ptr + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :],
        mask=g_mask[:, None] & d_mask[None, :],
        other=0.0,
    )  # (BG, BD): the group's queries, read once
    kv_base = b * stride_kb + kvh * stride_kh
    lo = split * chunk_len
    hi = tl.minimum(lo + chunk_len, context_len)
    m_i = tl.full([BLOCK_G], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    for start_n in range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_mask = offs_n < hi
        kv_offs = kv_base + offs_n[:, None].to(tl.int64) * stride_kt + offs_d[None, :]
        kv_mask = n_mask[:, None] & d_mask[None, :]
        k = tl.load(k_ptr + kv_offs, mask=kv_mask, other=0.0)  # (BN, BD): each byte read once
        v = tl.load(v_ptr + kv_offs, mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=INPUT_PRECISION) * scale  # (BG, BN) fp32
        s = tl.where(n_mask[None, :], s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        p = tl.exp(s - m_safe[:, None])
        alpha = tl.exp(m_i - m_safe)  # rescales what was accumulated under the old max
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=INPUT_PRECISION)
        m_i = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    o = acc / l_safe[:, None]  # this chunk's softmax-weighted values, normalised
    out_mask = g_mask[:, None] & d_mask[None, :]
    if SINGLE:  # the plain kernel: the whole context was one chunk, o is the answer
        tl.store(
            out_ptr + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :],
            o.to(out_ptr.dtype.element_ty),
            mask=out_mask,
        )
    else:  # partials of (b, head, split), fp32: o (…, D), m and ℓ (…)
        row = (b * n_kv_heads * group + heads) * num_splits + split
        tl.store(o_part_ptr + row[:, None] * head_dim + offs_d[None, :], o, mask=out_mask)
        tl.store(m_part_ptr + row, m_i, mask=g_mask)
        tl.store(l_part_ptr + row, l_i, mask=g_mask)


@triton.jit
def _decode_combine_kernel(
    o_part_ptr,
    m_part_ptr,
    l_part_ptr,
    out_ptr,
    num_splits,
    head_dim,
    BLOCK_S: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    row = tl.program_id(axis=0).to(tl.int64)  # one (sequence, query head); out is (B·H, D)
    offs_s = tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    s_mask = offs_s < num_splits
    d_mask = offs_d < head_dim
    m = tl.load(m_part_ptr + row * num_splits + offs_s, mask=s_mask, other=-float("inf"))
    l_s = tl.load(l_part_ptr + row * num_splits + offs_s, mask=s_mask, other=0.0)
    m_max = tl.max(m, axis=0)
    m_max = tl.where(m_max == -float("inf"), 0.0, m_max)
    w = l_s * tl.exp(m - m_max)  # each split's share of the softmax denominator
    o = tl.load(
        o_part_ptr + (row * num_splits + offs_s)[:, None] * head_dim + offs_d[None, :],
        mask=s_mask[:, None] & d_mask[None, :],
        other=0.0,
    )  # (BS, BD)
    total = tl.sum(w, axis=0)
    result = tl.sum(w[:, None] * o, axis=0) / tl.where(total == 0.0, 1.0, total)
    tl.store(out_ptr + row * head_dim + offs_d, result.to(out_ptr.dtype.element_ty), mask=d_mask)


# --------------------------------------------------------------------------------------------
# Launchers.


def _check(q, k_cache, v_cache, what: str) -> tuple[int, int, int, int, int]:
    check_tensor("q", q, ndim=3)
    check_tensor("k_cache", k_cache, ndim=4)
    check_tensor("v_cache", v_cache, ndim=4)
    batch, n_heads, n_kv_heads, context_len, head_dim = _check_shapes(q, k_cache, v_cache)
    if n_heads // n_kv_heads > MAX_GROUP:
        raise ValueError(
            f"group = heads / kv_heads = {n_heads // n_kv_heads} must be ≤ {MAX_GROUP} "
            "(one program holds the whole group's queries)"
        )
    if head_dim > MAX_HEAD_DIM:
        raise ValueError(f"head_dim={head_dim} must be ≤ {MAX_HEAD_DIM}")
    reject_bf16_in_interpreter(q, what)
    reject_autograd(what, q, k_cache, v_cache)
    return batch, n_heads, n_kv_heads, context_len, head_dim


def _check_shapes(q, k_cache, v_cache) -> tuple[int, int, int, int, int]:
    """One query per head against a cache of KV heads: the shapes and dtypes must agree."""
    same("k_cache", k_cache, "v_cache", v_cache)
    if q.dtype != k_cache.dtype:
        raise TypeError(f"q.dtype={q.dtype} but k_cache.dtype={k_cache.dtype}; they must match")
    batch, n_heads, head_dim = q.shape
    kv_batch, n_kv_heads, context_len, kv_dim = k_cache.shape
    if kv_batch != batch or kv_dim != head_dim:
        raise ValueError(
            f"q has shape {tuple(q.shape)} (batch, heads, head_dim) but k_cache has shape "
            f"{tuple(k_cache.shape)} (batch, kv_heads, context_len, head_dim): batch and "
            "head_dim must match"
        )
    if n_heads % n_kv_heads:
        raise ValueError(
            f"q has {n_heads} heads and the cache {n_kv_heads} KV heads: heads must be a "
            "multiple of kv_heads (each KV head serves a group of query heads)"
        )
    return batch, n_heads, n_kv_heads, context_len, head_dim


def default_num_splits(batch: int, n_kv_heads: int, context_len: int, block_n: int) -> int:
    """Splits that fill one wave of this device's SMs (:func:`gpuperf.inference.choose_num_splits`;
    without a GPU, of :data:`CPU_REFERENCE_CHIP`'s)."""
    from .. import inference
    from ..hardware import chip
    from ..runtime import has_cuda_gpu, interpreting

    the_chip = chip(CPU_REFERENCE_CHIP)
    if has_cuda_gpu() and not interpreting():
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        the_chip = the_chip.replace(sm_count=int(sms))
    splits = inference.choose_num_splits(batch, n_kv_heads, context_len, the_chip, block_n)
    return min(splits, MAX_SPLITS)


def _launch(q, k_cache, v_cache, num_splits, BLOCK_N, num_warps, what):
    batch, n_heads, n_kv_heads, context_len, head_dim = _check(q, k_cache, v_cache, what)
    BLOCK_N = block("BLOCK_N", BLOCK_N, 16, 256)
    num_warps = warps(num_warps)
    blocks = cdiv(context_len, BLOCK_N)
    if num_splits is None:
        num_splits = default_num_splits(batch, n_kv_heads, context_len, BLOCK_N)
    num_splits = positive_int("num_splits", num_splits, 1, min(blocks, MAX_SPLITS))
    # Whole blocks per split; rounding up can leave the last splits empty, so drop them.
    chunk_len = cdiv(blocks, num_splits) * BLOCK_N
    num_splits = cdiv(context_len, chunk_len)
    group = n_heads // n_kv_heads
    grid = check_grid((batch * n_kv_heads * num_splits,), what)
    out = torch.empty_like(q)
    single = num_splits == 1
    if single:  # the plain kernel never touches the partial buffers: pass out as a stand-in
        o_part = m_part = l_part = out
    else:
        rows = batch * n_heads * num_splits
        o_part = torch.empty(rows, head_dim, dtype=torch.float32, device=q.device)
        m_part = torch.empty(rows, dtype=torch.float32, device=q.device)
        l_part = torch.empty(rows, dtype=torch.float32, device=q.device)
    BLOCK_D = max(16, next_power_of_2(head_dim))
    _decode_split_kernel[grid](
        q, k_cache, v_cache, out, o_part, m_part, l_part,
        n_kv_heads, context_len, head_dim, group, chunk_len, num_splits,
        1.0 / math.sqrt(head_dim),
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        BLOCK_G=max(16, next_power_of_2(group)), BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        SINGLE=single, INPUT_PRECISION=DOT_PRECISION, num_warps=num_warps,
    )  # fmt: skip
    if not single:
        _decode_combine_kernel[check_grid((batch * n_heads,), what)](
            o_part, m_part, l_part, out, num_splits, head_dim,
            BLOCK_S=max(2, next_power_of_2(num_splits)), BLOCK_D=BLOCK_D,
        )  # fmt: skip
    return out


def decode_attention_plain(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    *,
    BLOCK_N: int = 64,
    num_warps: int = 4,
) -> torch.Tensor:
    """Decode attention with one program per (sequence, KV head): batch · kv_heads programs."""
    return _launch(q, k_cache, v_cache, 1, BLOCK_N, num_warps, "decode_attention_plain")


def decode_attention_split(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    *,
    num_splits: int | None = None,
    BLOCK_N: int = 64,
    num_warps: int = 4,
) -> torch.Tensor:
    """Split-KV decode attention: ``num_splits`` chunks of the context per (sequence, KV head),
    then a combine kernel. ``num_splits=None`` fills one wave of the device's SMs."""
    return _launch(q, k_cache, v_cache, num_splits, BLOCK_N, num_warps, "decode_attention_split")


__all__ = [
    "MAX_GROUP",
    "MAX_HEAD_DIM",
    "MAX_SPLITS",
    "decode_attention_cost",
    "decode_attention_plain",
    "decode_attention_ref",
    "decode_attention_split",
    "default_num_splits",
]
