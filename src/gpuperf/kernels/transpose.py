"""Transpose: naive (strided writes) versus tiled through shared memory.

What you learn: ``out = x.T`` for an (M, N) matrix reads and writes M·N elements whatever the
kernel does (2·M·N·size bytes, 0 FLOPs), yet a naive kernel is slow. ``transpose_naive`` reads a
run of one row (coalesced) and writes it down a column: consecutive threads write addresses M
elements apart, one sector per element. ``transpose_tiled`` loads a BLOCK_M×BLOCK_N tile with
coalesced reads, transposes it in registers/shared memory (``tl.trans``; the compiler stages the
layout change through shared memory, visible in :mod:`gpuperf.inspect`), and writes it back with
coalesced writes.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._common import block, cdiv, check_tensor, reject_bf16_in_interpreter


def transpose_cost(m: int, n: int, precision: str = "fp32"):
    from ..cost import OpCost
    from ..units import bytes_per_element

    size = bytes_per_element(precision)
    return OpCost(0, m * n * size, m * n * size, "transpose")


def transpose_ref(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous()  # reads M·N, writes M·N


@triton.jit
def _transpose_naive_kernel(
    x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, stride_on, BLOCK_N: tl.constexpr
):
    # One program per (row m, block of columns): coalesced read, strided (by M) write.
    m = tl.program_id(axis=0)
    offs_n = tl.program_id(axis=1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = offs_n < N
    row = tl.load(x_ptr + m * stride_xm + offs_n * stride_xn, mask=mask)
    tl.store(out_ptr + offs_n * stride_om + m * stride_on, row, mask=mask)


@triton.jit
def _transpose_tiled_kernel(
    x_ptr,
    out_ptr,
    M,
    N,
    stride_xm,
    stride_xn,
    stride_om,
    stride_on,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    offs_m = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(axis=1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask)
    # (BLOCK_N, BLOCK_M) tile stored row by row of `out`: contiguous along m.
    out_ptrs = out_ptr + offs_n[:, None] * stride_om + offs_m[None, :] * stride_on
    tl.store(out_ptrs, tl.trans(tile), mask=tl.trans(mask))


def _check(x: torch.Tensor, what: str) -> tuple[torch.Tensor, int, int]:
    check_tensor("x", x, ndim=2, contiguous=False)
    reject_bf16_in_interpreter(x, what)
    m, n = x.shape
    return torch.empty((n, m), dtype=x.dtype, device=x.device), m, n


def transpose_naive(x: torch.Tensor, *, BLOCK_N: int = 1024) -> torch.Tensor:
    """x.T (contiguous) with coalesced reads and strided writes. Any strides are accepted."""
    out, m, n = _check(x, "transpose_naive")
    BLOCK_N = block("BLOCK_N", BLOCK_N, 16, 65536)
    _transpose_naive_kernel[(m, cdiv(n, BLOCK_N))](
        x, out, m, n, x.stride(0), x.stride(1), out.stride(0), out.stride(1), BLOCK_N=BLOCK_N
    )
    return out


def transpose_tiled(x: torch.Tensor, *, BLOCK_M: int = 64, BLOCK_N: int = 64) -> torch.Tensor:
    """x.T (contiguous) through BLOCK_M×BLOCK_N tiles: coalesced reads and writes."""
    out, m, n = _check(x, "transpose_tiled")
    BLOCK_M = block("BLOCK_M", BLOCK_M, 16, 256)
    BLOCK_N = block("BLOCK_N", BLOCK_N, 16, 256)
    grid = (cdiv(m, BLOCK_M), cdiv(n, BLOCK_N))
    _transpose_tiled_kernel[grid](
        x,
        out,
        m,
        n,
        x.stride(0),
        x.stride(1),
        out.stride(0),
        out.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
    )
    return out


__all__ = ["transpose_cost", "transpose_naive", "transpose_ref", "transpose_tiled"]
