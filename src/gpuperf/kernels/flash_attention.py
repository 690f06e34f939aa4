"""FlashAttention-2, forward and backward, as a ``torch.autograd.Function``.

What you learn: standard attention writes the (seq × seq) score and probability matrices to HBM;
FlashAttention never does. A program holds a BLOCK_M block of queries, streams BLOCK_N blocks of
keys and values through SRAM, and keeps an online softmax (running max ``m``, running sum ``l``,
see :mod:`gpuperf.kernels.softmax`). HBM traffic drops from Θ(Nd + N²) to Θ(N²d²/M) per head (M:
SRAM in elements; FA1 Theorem 2) and the extra memory from O(N²) to O(N), while FLOPs stay 4·N²·d
forward (2·N²·d with a causal mask, which skips blocks above the diagonal). The papers count
the backward as 2.5× the forward, five matmuls (:func:`gpuperf.cost.attention`,
:mod:`gpuperf.attention`); this kernel runs seven, 3.5×, because its dQ kernel recomputes S and
dP rather than sharing them with the dK/dV kernel (counted by :mod:`gpuperf.counting`).

The backward pass does not store the probabilities either: it recomputes ``P = exp(S − L)`` from
the saved logsumexp ``L = m + log l`` (Dao 2023, FlashAttention-2, Algorithm 2). One kernel per
key block accumulates dK and dV; one per query block accumulates dQ; ``D = rowsum(dO ∘ O)`` is a
cheap elementwise reduction done in torch.

Contract (DESIGN §3): ``FlashAttention.apply(q, k, v, is_causal=False)`` takes (batch, seq, d) or
(batch, heads, seq, d) tensors of one shape, scales scores by 1/√d, uses a top-left causal mask
(query i sees keys j ≤ i), and saves q, k, v, o and ``L`` shaped like q without its last dim.
:class:`FlashAttentionTorch` is the same algorithm in plain, tiled torch with the same interface,
so one test harness checks both; :func:`attention_ref` is the naive O(N²)-memory version.

Precision: fp32 inputs use IEEE fp32 dot products (``input_precision="ieee"``), never TF32
behind the reader's back, so the CPU interpreter and a GPU agree within the fp32 tolerance of
:mod:`gpuperf.tolerances`; fp16/bf16 inputs use tensor cores as usual.

Limits checked before compiling (:func:`_check_config`): tiles are powers of two in 16–256,
``num_warps`` in 1–32, ``num_stages`` in 1–8, the K and V tiles fit the device's shared memory
per block, and the live fp32 tiles (Q, the accumulator, the scores) stay within
:data:`MAX_LIVE_PER_THREAD` values per thread — beyond that the compiler runs for minutes and
spills. The grid is 1-D (query blocks × batch·heads folded into axis 0, whose limit is 2³¹ − 1,
not 65,535), and the per-head base offset is int64.

Default tiles (:func:`default_configs`): 64×64 with 4 warps and 2 stages for all three kernels
on the CPU, sm_80 and sm_90. A T4 (sm_75) has no tensor-core ``tl.dot`` in Triton, so every dot
is unrolled into FMAs held in registers, and those tiles spill (the fp16 forward keeps 4 KiB per
thread in local memory): there each kernel and dtype has its own tiles, :data:`T4_CONFIGS`,
chosen from offline compiles as the largest tile that fits without spilling registers
(``tests/kernels/test_flash_attention_configs.py`` recompiles them) for d = 64. Tiles given by
the caller serve all three kernels (:func:`_backward_config` halves the fp32 dK/dV kernel's
BLOCK_M on a T4 until it fits).

NaN and infinity: a NaN (or ±inf) in q, k or v reaches the affected rows as NaN, as in torch.
One deliberate difference: a query row with no visible key (a fully masked row; impossible with
this top-left causal mask and equal lengths, but the kernels guard it) gives 0 and logsumexp 0,
where torch's softmax gives NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from .._validate import instance, positive_int
from ._common import (
    arch_name,
    block,
    cdiv,
    check_grid,
    check_reference,
    check_shared_memory,
    check_tensor,
    device_arch,
    flag,
    float_dtype,
    next_power_of_2,
    pipeline_buffers,
    reject_bf16_in_interpreter,
    stages,
    warps,
)
from ._common import (
    element_size as _element_size,
)

MAX_HEAD_DIM = 256
#: Live fp32 values per thread (Q, accumulator and score tiles) beyond which a configuration is
#: refused: 255 registers per thread is the hardware limit, and twice that spills so much that
#: compiling takes minutes (d=256 with 256×256 tiles took over 150 s for sm_75).
MAX_LIVE_PER_THREAD = 512


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
    """softmax(Q Kᵀ/√d) V in fp32 with the (seq × seq) matrix materialised; differentiable.

    Keys and values may be longer or shorter than the queries (a padded or cached sequence), as
    in any attention; the causal mask is top-left, as the kernels': query i sees keys j ≤ i."""
    is_causal = flag("is_causal", is_causal)
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_reference(name, t, ndim=(3, 4))
    for name, t in (("k", k), ("v", v)):
        if t.dtype != q.dtype:
            raise TypeError(f"{name}.dtype={t.dtype} but q.dtype={q.dtype}; they must match")
    if k.shape != v.shape:
        raise ValueError(
            f"v has shape {tuple(v.shape)} but k has {tuple(k.shape)}; they must match"
        )
    if k.shape[:-2] != q.shape[:-2] or k.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"k has shape {tuple(k.shape)} but q has {tuple(q.shape)}; they must match in every "
            "dimension but the sequence: (batch[, heads], seq, d)"
        )
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = (q.float() @ k.float().transpose(-1, -2)) * scale  # (…, seq_q, seq_k): the N² traffic
    if is_causal:
        n_q, n_k = q.shape[-2], k.shape[-2]
        mask = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).triu(1)
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
    INPUT_PRECISION: tl.constexpr,
):
    # 1-D grid: query block fastest, then (batch·head); bh in int64 so bh·stride_b cannot wrap.
    pid = tl.program_id(axis=0)
    num_m = tl.cdiv(seq_len, BLOCK_M)
    pid_m = pid % num_m
    bh = (pid // num_m).to(tl.int64)
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
        s = tl.dot(q, tl.trans(k), input_precision=INPUT_PRECISION) * scale  # (BM, BN) fp32
        valid = offs_n[None, :] < seq_len
        if IS_CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None])
        s = tl.where(valid, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        p = tl.exp(s - m_safe[:, None])
        alpha = tl.exp(m_i - m_safe)  # rescales what was accumulated under the old max
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=INPUT_PRECISION)
        m_i = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # no visible key: 0, not NaN (NaN stays NaN)
    o = acc / l_safe[:, None]
    lse = tl.where(m_i == -float("inf"), 0.0, m_i) + tl.log(l_safe)
    tl.store(
        o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :],
        o.to(o_ptr.dtype.element_ty),
        mask=qd_mask,
    )
    tl.store(l_ptr + bh * seq_len + offs_m, lse, mask=offs_m < seq_len)  # bh is int64


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
    INPUT_PRECISION: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_n = tl.cdiv(seq_len, BLOCK_N)
    pid_n = pid % num_n
    bh = (pid // num_n).to(tl.int64)
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
        s = tl.dot(q, tl.trans(k), input_precision=INPUT_PRECISION) * scale  # (BM, BN)
        valid = row_ok[:, None] & (offs_n[None, :] < seq_len)
        if IS_CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None])
        p = tl.where(valid, tl.exp(s - lse[:, None]), 0.0)  # recomputed, never stored
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=INPUT_PRECISION)
        dp = tl.dot(do, tl.trans(v), input_precision=INPUT_PRECISION)  # (BM, BN)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=INPUT_PRECISION)
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
    INPUT_PRECISION: tl.constexpr,
):
    # 1-D grid: query block fastest, then (batch·head); bh in int64 so bh·stride_b cannot wrap.
    pid = tl.program_id(axis=0)
    num_m = tl.cdiv(seq_len, BLOCK_M)
    pid_m = pid % num_m
    bh = (pid // num_m).to(tl.int64)
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
        s = tl.dot(q, tl.trans(k), input_precision=INPUT_PRECISION) * scale
        valid = row_ok[:, None] & (offs_n[None, :] < seq_len)
        if IS_CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None])
        p = tl.where(valid, tl.exp(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision=INPUT_PRECISION)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k, input_precision=INPUT_PRECISION)
    tl.store(dq_ptr + q_offs, (dq * scale).to(dq_ptr.dtype.element_ty), mask=qd_mask)


# --------------------------------------------------------------------------------------------
# Launchers.


def _check_qkv(q: object, k: object, v: object, what: str) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, t, ndim=(3, 4))
    _same_qkv(q, k, v)
    if q.shape[-1] > MAX_HEAD_DIM:
        raise ValueError(f"head dim d={q.shape[-1]} must be ≤ {MAX_HEAD_DIM}")
    seq, d = q.shape[-2], q.shape[-1]
    if seq * d > 2**31 - 1:
        raise ValueError(
            f"seq·d = {seq}·{d} = {seq * d} elements per head must be < 2³¹ (offsets within a "
            "head are int32; the per-head base offset is int64)"
        )
    reject_bf16_in_interpreter(q, what)


def _same_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    for name, t in (("k", k), ("v", v)):
        if t.shape != q.shape:
            raise ValueError(
                f"{name} has shape {tuple(t.shape)} but q has {tuple(q.shape)}; "
                "q, k and v must have one shape (batch[, heads], seq, d)"
            )
        if t.dtype != q.dtype:
            raise TypeError(f"{name}.dtype={t.dtype} but q.dtype={q.dtype}; they must match")


@dataclass(frozen=True)
class FlashConfig:
    """Tiles, warps and stages of one FlashAttention launch.

    In the dK/dV kernel ``BLOCK_N`` is the block of keys a program holds and ``BLOCK_M`` the block
    of queries it streams; in the forward and dQ kernels it is the other way round.
    """

    BLOCK_M: int = 64
    BLOCK_N: int = 64
    num_warps: int = 4
    num_stages: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "BLOCK_M", block("BLOCK_M", self.BLOCK_M, 16, 256))
        object.__setattr__(self, "BLOCK_N", block("BLOCK_N", self.BLOCK_N, 16, 256))
        object.__setattr__(self, "num_warps", warps(self.num_warps))
        object.__setattr__(self, "num_stages", stages(self.num_stages))

    def shared_memory_bytes(self, head_dim: int, element_size: int, arch: str = "sm_90") -> int:
        """Estimate: the K and V tiles times the pipeline's buffers on ``arch``
        (:func:`~gpuperf.kernels._common.pipeline_buffers`), plus one Q tile
        (BLOCK_D = 2^⌈log₂ d⌉)."""
        block_d = max(16, next_power_of_2(_head_dim(head_dim)))
        size = _element_size(element_size)
        kv = 2 * self.BLOCK_N * block_d * size
        q = self.BLOCK_M * block_d * size
        return pipeline_buffers(self.num_stages, arch_name(arch)) * kv + q

    def live_per_thread(self, head_dim: int) -> int:
        """fp32 values a thread holds: Q and the accumulator (BLOCK_M×BLOCK_D), the scores."""
        block_d = max(16, next_power_of_2(_head_dim(head_dim)))
        live = 2 * self.BLOCK_M * block_d + self.BLOCK_M * self.BLOCK_N
        return live // (32 * self.num_warps)


def _head_dim(value: object) -> int:
    return positive_int("head_dim", value, 1, MAX_HEAD_DIM)


def _check_config(
    config: FlashConfig, head_dim: int, dtype: torch.dtype, what: str = "flash_attention"
) -> FlashConfig:
    """Validate a FlashAttention configuration before compiling (numbers in every message)."""
    bm = block("BLOCK_M", config.BLOCK_M, 16, 256)
    bn = block("BLOCK_N", config.BLOCK_N, 16, 256)
    config = FlashConfig(bm, bn, warps(config.num_warps), stages(config.num_stages))
    live = config.live_per_thread(head_dim)
    if live > MAX_LIVE_PER_THREAD:
        raise ValueError(
            f"{what}: BLOCK_M={bm}, BLOCK_N={bn}, d={head_dim} over {config.num_warps} warps "
            f"keeps {live} fp32 values per thread in registers; at most {MAX_LIVE_PER_THREAD} "
            "(a thread has 255 registers). Use smaller blocks or more warps."
        )
    size = torch.empty((), dtype=dtype).element_size()
    check_shared_memory(
        what,
        config.shared_memory_bytes(head_dim, size, device_arch()),
        f"K and V tiles of {bn}×{head_dim} with num_stages={config.num_stages} "
        f"and a {bm}×{head_dim} Q tile",
    )
    return config


def _backward_config(
    config: FlashConfig, dtype: torch.dtype, arch: str | None = None
) -> FlashConfig:
    """Backward tiles for forward tiles the caller chose: the forward's, except where dK/dV
    would not fit (with no tiles given, :func:`default_configs` has each kernel's own).

    On sm_75 (a T4, 64 KiB per block) Triton lowers fp32 ``tl.dot`` to FMA and the dK/dV kernel
    at 64×64 needs 80 KiB (compiled offline with Triton 3.9; 56 KiB at 32×64, 36 KiB at 32×32:
    exactly ``(2·BLOCK_N·d + 2·BLOCK_M·d + BLOCK_M·BLOCK_N)·4`` bytes for d = 64). There
    ``BLOCK_M`` is halved until that fits. Everywhere else the forward's tiles are kept.
    """
    arch = device_arch() if arch is None else arch
    if arch != "sm_75" or dtype != torch.float32:
        return config
    limit = 64 * 1024
    bm, bn, bd = config.BLOCK_M, config.BLOCK_N, 64

    def needed(bm: int) -> int:
        return (2 * bn * bd + 2 * bm * bd + bm * bn) * 4

    while bm > 16 and needed(bm) > limit:
        bm //= 2
    return FlashConfig(bm, bn, config.num_warps, config.num_stages)


@dataclass(frozen=True)
class FlashDefaults:
    """The configuration of each of the three kernels: forward, dK/dV and dQ."""

    forward: FlashConfig
    dkdv: FlashConfig
    dq: FlashConfig

    def __post_init__(self) -> None:
        for name in ("forward", "dkdv", "dq"):
            instance(name, getattr(self, name), FlashConfig)


#: T4 (sm_75) defaults by dtype (fp16; fp32), each kernel on its own. Chosen from offline compiles
#: (:func:`gpuperf.inspect.compile_kernel`, Triton 3.9, d = 64): the largest BLOCK_M·BLOCK_N that
#: spills no register and fits 64 KiB, among BLOCK_M, BLOCK_N ∈ {16, 32, 64} with 4 or 8 warps
#: and 2 stages (every larger tile of that grid was compiled; 1 stage and 2 warps, tried on
#: many, never removed a spill). Between equal areas, the larger block a program holds wins:
#: it re-reads the streamed tensors fewer times. What they compiled to (registers per thread,
#: shared memory), and the spilled bytes per thread of the previous default and of the runners-up:
#:
#: - forward fp16 64×32, 8 warps: 255 registers, 24 KiB (64×64 / 4 warps: 4104 B; 64×64 /
#:   8 warps: 400 B; 32×64 / 8 warps: 296 B)
#: - forward fp32 64×64, 8 warps: 128 registers, 48 KiB (64×64 / 4 warps: 2952 B)
#: - dK/dV fp16 32×64 (32 queries streamed, 64 keys held), 8 warps: 255 registers, 48 KiB
#:   (64×64 / 4 warps: 3168 B; 64×64 / 8 warps: 592 B; 64×32 / 8 warps: 320 B)
#: - dK/dV fp32 64×32 (64 queries streamed, 32 keys held), 8 warps: 255 registers, 56 KiB
#:   (64×64 needs 80 KiB; the previous 32×64 / 4 warps: 1064 B; 32×64 / 8 warps: 400 B)
#: - dQ fp16 64×16, 8 warps: 237 registers, 36 KiB (64×64 / 4 warps: 5608 B; every tile of
#:   2048 elements spills, 32×64 / 8 warps least: 392 B)
#: - dQ fp32 64×32, 8 warps: 128 registers, 48 KiB (the previous 32×64 / 4 warps: 104 B;
#:   64×64 / 8 warps: 96 B)
#:
#: Only "compiles for a T4 without spilling" is established here; how fast these run on a T4 is
#: for a GPU to measure. bf16 takes the fp16 row (a T4 has no bf16 arithmetic).
T4_CONFIGS: dict[str, FlashDefaults] = {
    "fp16": FlashDefaults(
        forward=FlashConfig(64, 32, 8, 2),
        dkdv=FlashConfig(32, 64, 8, 2),
        dq=FlashConfig(64, 16, 8, 2),
    ),
    "fp32": FlashDefaults(
        forward=FlashConfig(64, 64, 8, 2),
        dkdv=FlashConfig(64, 32, 8, 2),
        dq=FlashConfig(64, 32, 8, 2),
    ),
}


def default_configs(dtype: torch.dtype, arch: str | None = None) -> FlashDefaults:
    """The tiles FlashAttention uses for ``dtype`` on ``arch`` (default: this device) when the
    caller gives none: :data:`T4_CONFIGS` on sm_75, 64×64 / 4 warps / 2 stages elsewhere."""
    float_dtype("dtype", dtype)
    arch = device_arch() if arch is None else arch_name(arch)
    if arch == "sm_75":
        return T4_CONFIGS["fp32" if dtype == torch.float32 else "fp16"]
    portable = FlashConfig()
    return FlashDefaults(portable, portable, portable)


def _flash_grid(seq_len: int, batch_heads: int, block: int) -> tuple[int]:
    """The 1-D launch grid: ⌈seq/block⌉ blocks for each of the batch·heads (one axis)."""
    return check_grid((cdiv(seq_len, block) * batch_heads,), "flash_attention")


#: fp32 dot products in IEEE fp32, never TF32; fp16/bf16 inputs use tensor cores regardless.
DOT_PRECISION = "ieee"


def _flash_forward(q, k, v, is_causal, config: FlashConfig):
    seq, d = q.shape[-2], q.shape[-1]
    bh = q.numel() // (seq * d)
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device)
    _flash_fwd_kernel[_flash_grid(seq, bh, config.BLOCK_M)](
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
        BLOCK_M=config.BLOCK_M,
        BLOCK_N=config.BLOCK_N,
        BLOCK_D=max(16, next_power_of_2(d)),
        INPUT_PRECISION=DOT_PRECISION,
        num_warps=config.num_warps,
        num_stages=config.num_stages,
    )
    return o, lse


def _flash_backward(
    q, k, v, o, lse, do, is_causal, config: FlashConfig, dq_config: FlashConfig | None = None
):
    """dQ, dK, dV: the dK/dV kernel with ``config``, the dQ kernel with ``dq_config`` (default:
    the same). The two kernels share no tile, so their blocks may differ."""
    seq, d = q.shape[-2], q.shape[-1]
    bh = q.numel() // (seq * d)
    do = do.contiguous()
    delta = (do.float() * o.float()).sum(dim=-1)  # D_i = rowsum(dO ∘ O), shaped like lse
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)

    def meta(c: FlashConfig) -> dict:
        return dict(
            IS_CAUSAL=bool(is_causal),
            BLOCK_M=c.BLOCK_M,
            BLOCK_N=c.BLOCK_N,
            BLOCK_D=max(16, next_power_of_2(d)),
            INPUT_PRECISION=DOT_PRECISION,
            num_warps=c.num_warps,
            num_stages=c.num_stages,
        )

    dq_config = config if dq_config is None else dq_config
    scalars = (seq, d, 1.0 / math.sqrt(d), seq * d, d)
    _flash_bwd_dkdv_kernel[_flash_grid(seq, bh, config.BLOCK_N)](
        q, k, v, do, lse, delta, dk, dv, *scalars, **meta(config)
    )
    _flash_bwd_dq_kernel[_flash_grid(seq, bh, dq_config.BLOCK_M)](
        q, k, v, do, lse, delta, dq, *scalars, **meta(dq_config)
    )
    return dq, dk, dv


def _given_or_default(given: tuple, default: FlashConfig) -> FlashConfig:
    """(BLOCK_M, BLOCK_N, num_warps, num_stages) with each ``None`` taken from ``default``."""
    base = (default.BLOCK_M, default.BLOCK_N, default.num_warps, default.num_stages)
    return FlashConfig(*(b if g is None else g for g, b in zip(given, base, strict=True)))


class FlashAttention(torch.autograd.Function):
    """FlashAttention-2 in Triton: ``FlashAttention.apply(q, k, v, is_causal=False)``.

    Class attributes ``BLOCK_M``/``BLOCK_N`` set the tiles (powers of two, 16–256),
    ``NUM_WARPS``/``NUM_STAGES`` the launch; all are checked by :func:`_check_config`. Left as
    ``None`` they come from :func:`default_configs` (per kernel on a T4); if any is set, the
    forward uses the given values (the rest from the default forward) and the backward uses
    :func:`_backward_config` of that.
    """

    BLOCK_M: int | None = None
    BLOCK_N: int | None = None
    NUM_WARPS: int | None = None
    NUM_STAGES: int | None = None

    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        is_causal = flag("is_causal", is_causal)
        _check_qkv(q, k, v, "FlashAttention")
        cls = FlashAttention
        given = (cls.BLOCK_M, cls.BLOCK_N, cls.NUM_WARPS, cls.NUM_STAGES)
        defaults = default_configs(q.dtype)
        if all(x is None for x in given):
            fwd, dkdv, dq = defaults.forward, defaults.dkdv, defaults.dq
        else:
            fwd, dkdv, dq = _given_or_default(given, defaults.forward), None, None
        d = q.shape[-1]
        fwd = _check_config(fwd, d, q.dtype, "FlashAttention")
        if dkdv is None:
            dkdv = dq = _backward_config(fwd, q.dtype)
        o, lse = _flash_forward(q, k, v, is_causal, fwd)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal = is_causal
        ctx.configs = (
            _check_config(dkdv, d, q.dtype, "FlashAttention backward (dK/dV)"),
            _check_config(dq, d, q.dtype, "FlashAttention backward (dQ)"),
        )
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        dkdv, dq_config = ctx.configs
        dq, dk, dv = _flash_backward(q, k, v, o, lse, do, ctx.is_causal, dkdv, dq_config)
        return dq, dk, dv, None


def flash_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    is_causal: bool = False,
    *,
    BLOCK_M: int | None = None,
    BLOCK_N: int | None = None,
    num_warps: int | None = None,
    num_stages: int | None = None,
) -> torch.Tensor:
    """softmax(Q Kᵀ/√d) V with FlashAttention-2; differentiable (see :class:`FlashAttention`).

    Arguments left as ``None`` come from :func:`default_configs` for this device."""
    is_causal = flag("is_causal", is_causal)
    _check_qkv(q, k, v, "flash_attention")
    given = (BLOCK_M, BLOCK_N, num_warps, num_stages)
    if not all(x is None for x in given):  # fail here, before touching the class
        _check_config(
            _given_or_default(given, default_configs(q.dtype).forward), q.shape[-1], q.dtype
        )
    cls = FlashAttention
    old = (cls.BLOCK_M, cls.BLOCK_N, cls.NUM_WARPS, cls.NUM_STAGES)
    cls.BLOCK_M, cls.BLOCK_N, cls.NUM_WARPS, cls.NUM_STAGES = given
    try:
        return FlashAttention.apply(q, k, v, is_causal)
    finally:
        cls.BLOCK_M, cls.BLOCK_N, cls.NUM_WARPS, cls.NUM_STAGES = old


# --------------------------------------------------------------------------------------------
# The same algorithm in plain torch, tile by tile: readable, and a second implementation to test.


#: dtypes the plain-torch twin accepts (fp64 too: it is the chapter's exact reference).
_TORCH_TWIN_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)


class FlashAttentionTorch(torch.autograd.Function):
    """Tiled FlashAttention-2 in plain torch with the same interface and saved tensors."""

    BLOCK_M = 64
    BLOCK_N = 64

    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        is_causal = flag("is_causal", is_causal)
        for name, t in (("q", q), ("k", k), ("v", v)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
            if t.dtype not in _TORCH_TWIN_DTYPES:
                valid = ", ".join(str(d).removeprefix("torch.") for d in _TORCH_TWIN_DTYPES)
                raise TypeError(
                    f"{name}.dtype={t.dtype} is not supported; expected one of {valid}"
                )
            if t.dtype != q.dtype:
                raise TypeError(f"{name}.dtype={t.dtype} but q.dtype={q.dtype}; they must match")
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
        ctx.is_causal = is_causal
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
    "MAX_LIVE_PER_THREAD",
    "T4_CONFIGS",
    "FlashAttention",
    "FlashAttentionTorch",
    "FlashConfig",
    "FlashDefaults",
    "attention_cost",
    "attention_ref",
    "default_configs",
    "flash_attention",
]
