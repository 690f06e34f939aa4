"""Transpose: naive (strided writes) versus tiled through shared memory.

What you learn: ``out = x.T`` for an (M, N) matrix reads and writes M·N elements whatever the
kernel does (2·M·N·size bytes, 0 FLOPs), yet a naive kernel is slow. ``transpose_naive`` reads a
run of one row (coalesced) and writes it down a column: consecutive threads write addresses M
elements apart, one sector per element. ``transpose_tiled`` loads a BLOCK_M×BLOCK_N tile with
coalesced reads, transposes it in registers/shared memory (``tl.trans``; the compiler stages the
layout change through shared memory, visible in :mod:`gpuperf.inspect`), and writes it back with
coalesced writes.

Both launch a 1-D grid (:func:`_transpose_grid`): the tile coordinates are unfolded from one
program id, because CUDA's grid axes 1 and 2 stop at 65,535 and a (1, 4,194,432) matrix needs
65,538 column tiles. Offsets are int64, so matrices past 2³¹ elements are addressed correctly.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._common import (
    block,
    cdiv,
    check_grid,
    check_reference,
    check_tensor,
    count,
    reject_autograd,
    reject_bf16_in_interpreter,
)


def transpose_cost(m: int, n: int, precision: str = "fp32"):
    from ..cost import OpCost
    from ..units import bytes_per_element

    m, n = count("m", m), count("n", n)
    size = bytes_per_element(precision)
    return OpCost(0, m * n * size, m * n * size, "transpose")


def transpose_ref(x: torch.Tensor) -> torch.Tensor:
    return check_reference("x", x, ndim=2).t().contiguous()  # reads M·N, writes M·N


@triton.jit
def _transpose_naive_kernel(
    x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, stride_on, BLOCK_N: tl.constexpr
):
    # One program per (row m, block of columns): coalesced read, strided (by M) write.
    # 1-D grid, row fastest: program pid covers row pid % M, column block pid // M.
    pid = tl.program_id(axis=0).to(tl.int64)  # int64: offsets may pass 2³¹
    m = pid % M
    offs_n = (pid // M) * BLOCK_N + tl.arange(0, BLOCK_N)
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
    # 1-D grid, tile-row fastest (the order of the former 2-D grid's axis 0).
    pid = tl.program_id(axis=0).to(tl.int64)  # int64: offsets may pass 2³¹
    num_pid_m = tl.cdiv(M, BLOCK_M)
    offs_m = (pid % num_pid_m) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = (pid // num_pid_m) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask)
    # (BLOCK_N, BLOCK_M) tile stored row by row of `out`: contiguous along m.
    out_ptrs = out_ptr + offs_n[:, None] * stride_om + offs_m[None, :] * stride_on
    tl.store(out_ptrs, tl.trans(tile), mask=tl.trans(mask))


def _transpose_grid(m: int, n: int, BLOCK_M: int, BLOCK_N: int) -> tuple[int]:
    """The 1-D launch grid: one program per BLOCK_M×BLOCK_N tile (``BLOCK_M=1``: naive)."""
    return check_grid((cdiv(m, BLOCK_M) * cdiv(n, BLOCK_N),), "transpose")


def _check(x: torch.Tensor, what: str) -> tuple[torch.Tensor, int, int]:
    check_tensor("x", x, ndim=2, contiguous=False)
    reject_bf16_in_interpreter(x, what)
    reject_autograd(what, x)
    m, n = x.shape
    return torch.empty((n, m), dtype=x.dtype, device=x.device), m, n


def transpose_naive(x: torch.Tensor, *, BLOCK_N: int = 1024) -> torch.Tensor:
    """x.T (contiguous) with coalesced reads and strided writes. Any strides are accepted."""
    BLOCK_N = block("BLOCK_N", BLOCK_N, 16, 65536)
    out, m, n = _check(x, "transpose_naive")
    _transpose_naive_kernel[_transpose_grid(m, n, 1, BLOCK_N)](
        x, out, m, n, x.stride(0), x.stride(1), out.stride(0), out.stride(1), BLOCK_N=BLOCK_N
    )
    return out


def transpose_tiled(x: torch.Tensor, *, BLOCK_M: int = 64, BLOCK_N: int = 64) -> torch.Tensor:
    """x.T (contiguous) through BLOCK_M×BLOCK_N tiles: coalesced reads and writes."""
    BLOCK_M = block("BLOCK_M", BLOCK_M, 16, 256)
    BLOCK_N = block("BLOCK_N", BLOCK_N, 16, 256)
    out, m, n = _check(x, "transpose_tiled")
    _transpose_tiled_kernel[_transpose_grid(m, n, BLOCK_M, BLOCK_N)](
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


__all__ = [
    "transpose_cost",
    "transpose_naive",
    "transpose_ref",
    "transpose_tiled",
]
