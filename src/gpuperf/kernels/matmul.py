"""Tiled matrix multiply ``C = A @ B``: the kernel of the tiling and wave-quantization chapters.

What you learn: a program computes one BLOCK_M×BLOCK_N tile of C, walking K in BLOCK_K steps and
accumulating in fp32. Each A tile is reused BLOCK_N times and each B tile BLOCK_M times, so HBM
traffic falls from 2·M·N·K elements (``matmul_naive``, one row at a time, no reuse across rows) to
about M·N·K·(1/BLOCK_N + 1/BLOCK_M) (:mod:`gpuperf.tiling`). ``GROUP_M`` orders programs so
neighbouring programs share A rows in L2; ``num_stages`` pipelines the loads of the next K step
into shared memory while the current step multiplies; ``tl.dot`` becomes tensor-core ``mma``
on sm_80+ (``wgmma`` on sm_90) and FMA on a T4 (Triton ≥ 3.4). FLOPs: 2·M·N·K
(:func:`gpuperf.cost.matmul`). Edges are masked, so any M, N, K works.

Autotuning (``autotune=True``) needs a GPU: without one the given tile sizes are used.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..runtime import has_cuda_gpu, interpreting
from ._common import block, cdiv, check_tensor, count, precision_of, reject_bf16_in_interpreter


def matmul_cost(m: int, n: int, k: int, precision: str = "fp16"):
    from .. import cost

    return cost.matmul(m, n, k, precision)


def matmul_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """fp32-accumulated reference, rounded to a's dtype."""
    return (a.float() @ b.float()).to(a.dtype)  # reads M·K + K·N, writes M·N


@triton.jit
def _matmul_naive_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    # One program per (row m, BLOCK_N columns): every program re-reads all of B.
    m = tl.program_id(axis=0)
    offs_n = tl.program_id(axis=1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + m * stride_am + offs_k * stride_ak, mask=offs_k < K, other=0.0)
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.sum(a.to(tl.float32)[:, None] * b.to(tl.float32), axis=0)  # FMA, no mma
    c_ptrs = c_ptr + m * stride_cm + offs_n * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=offs_n < N)


@triton.jit
def _matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
):
    # Grouped ordering: GROUP_M tile-rows are swept column by column, so A tiles stay in L2.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak  # (BM, BK)
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn  # (BK, BN)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


#: Configurations tried by ``autotune=True`` on a GPU (tutorial-style; fits a T4's 64 KB).
AUTOTUNE_CONFIGS = (
    # (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
    (128, 256, 64, 8, 8, 3),
    (128, 128, 32, 8, 4, 4),
    (128, 64, 32, 8, 4, 4),
    (64, 128, 32, 8, 4, 4),
    (64, 64, 32, 8, 4, 4),
    (128, 128, 64, 8, 8, 3),
)
_autotuned = None


def _autotuned_kernel():
    global _autotuned
    if _autotuned is None:
        configs = [
            triton.Config(
                {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": g},
                num_warps=w,
                num_stages=s,
            )
            for bm, bn, bk, g, w, s in AUTOTUNE_CONFIGS
        ]
        _autotuned = triton.autotune(configs=configs, key=["M", "N", "K"])(_matmul_kernel)
    return _autotuned


def _check_operands(a: torch.Tensor, b: torch.Tensor, what: str) -> tuple[int, int, int]:
    check_tensor("a", a, ndim=2, contiguous=False)
    check_tensor("b", b, ndim=2, contiguous=False)
    if a.dtype != b.dtype:
        raise TypeError(f"a.dtype={a.dtype} but b.dtype={b.dtype}; they must match")
    reject_bf16_in_interpreter(a, what)
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"a has shape {tuple(a.shape)} and b {tuple(b.shape)}: "
            f"a.shape[1]={a.shape[1]} must equal b.shape[0]={b.shape[0]}"
        )
    return a.shape[0], b.shape[1], a.shape[1]


def matmul_naive(
    a: torch.Tensor, b: torch.Tensor, *, BLOCK_N: int = 64, BLOCK_K: int = 64
) -> torch.Tensor:
    """``a @ b`` one output row-block per program, FMA only, no reuse of B across rows."""
    m, n, k = _check_operands(a, b, "matmul_naive")
    BLOCK_N = block("BLOCK_N", BLOCK_N, 16, 1024)
    BLOCK_K = block("BLOCK_K", BLOCK_K, 16, 1024)
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    _matmul_naive_kernel[(m, cdiv(n, BLOCK_N))](
        a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride(), BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K
    )
    return c


def matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    BLOCK_M: int = 64,
    BLOCK_N: int = 64,
    BLOCK_K: int = 32,
    GROUP_M: int = 8,
    num_warps: int = 4,
    num_stages: int = 3,
    tf32: bool = False,
    autotune: bool = False,
) -> torch.Tensor:
    """``a @ b`` for 2-D fp32/fp16 (bf16 on a GPU) tensors of any shape and strides.

    Accumulates in fp32; the result has a's dtype. ``tf32=True`` lets fp32 inputs use TF32
    tensor cores (sm_80+). ``autotune=True`` picks tiles from ``AUTOTUNE_CONFIGS`` on a GPU.
    """
    m, n, k = _check_operands(a, b, "matmul")
    BLOCK_M = block("BLOCK_M", BLOCK_M, 16, 256)
    BLOCK_N = block("BLOCK_N", BLOCK_N, 16, 256)
    BLOCK_K = block("BLOCK_K", BLOCK_K, 16, 256)
    GROUP_M = count("GROUP_M", GROUP_M, 1)
    num_warps = block("num_warps", num_warps, 1, 32)
    num_stages = count("num_stages", num_stages, 1)
    precision = "tf32" if (tf32 and a.dtype == torch.float32) else "ieee"
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    args = (a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride())
    if autotune and has_cuda_gpu() and not interpreting():
        grid = lambda meta: (cdiv(m, meta["BLOCK_M"]) * cdiv(n, meta["BLOCK_N"]),)
        _autotuned_kernel()[grid](*args, INPUT_PRECISION=precision)
        return c
    grid = (cdiv(m, BLOCK_M) * cdiv(n, BLOCK_N),)
    _matmul_kernel[grid](
        *args,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        INPUT_PRECISION=precision,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return c


__all__ = [
    "AUTOTUNE_CONFIGS",
    "matmul",
    "matmul_cost",
    "matmul_naive",
    "matmul_ref",
    "precision_of",
]
