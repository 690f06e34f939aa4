"""Row softmax: fused in one pass over HBM, and an online variant that streams the row.

What you learn: eager ``torch`` softmax as max → subtract → exp → sum → divide reads and writes the
(rows × cols) matrix several times; the fused kernel keeps a whole row in registers and moves each
element twice (read once, write once: ``2·rows·cols·size`` bytes, ~5 FLOPs per element, see
:func:`gpuperf.cost.softmax`). Subtracting the row maximum keeps ``exp`` finite for inputs like
±1e4. When a row is too long for registers, ``softmax_online`` streams it in ``BLOCK_N`` chunks,
keeping a running max and a running sum rescaled by ``exp(m_old - m_new)`` (Milakov & Gimelshein
2018): one extra read of the row, the trick at the heart of FlashAttention.

NaN and infinity behave as in ``torch.softmax``: a row holding a NaN or a ``+inf`` comes out all
NaN (``inf - inf`` is NaN, and the row sum carries it to every element). One deliberate
difference: rows that are entirely ``-inf`` (a fully masked causal row) give zeros, where torch
gives NaN — there is nothing to attend to. ``softmax_ref`` states that convention in torch.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._common import (
    block,
    check_grid,
    check_reference,
    check_tensor,
    flag,
    next_power_of_2,
    reject_autograd,
    reject_bf16_in_interpreter,
)

MAX_FUSED_COLS = 32768  # a row beyond this does not fit in one program's registers: go online


def softmax_cost(rows: int, cols: int, precision: str = "fp32", *, fused: bool = True):
    from .. import cost

    return cost.softmax(rows, cols, precision, fused=flag("fused", fused))


def softmax_ref(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dim in fp32; fully ``-inf`` rows give 0 instead of NaN."""
    xf = check_reference("x", x, ndim=(1, 2, 3, 4)).float()
    m = xf.amax(dim=-1, keepdim=True)  # read rows·cols
    m = torch.where(torch.isinf(m) & (m < 0), torch.zeros_like(m), m)
    e = torch.exp(xf - m)  # read rows·cols, write rows·cols
    s = e.sum(dim=-1, keepdim=True)  # read rows·cols; NaN if the row holds NaN or +inf
    out = e / torch.where(s == 0, torch.ones_like(s), s)  # fully -inf row: 0 / 1 = 0
    return out.to(x.dtype)  # write rows·cols


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0).to(tl.int64)  # int64: row * stride_xm may pass 2³¹
    offs_n = tl.arange(0, BLOCK_N)
    mask = offs_n < n_cols
    x = tl.load(x_ptr + row * stride_xm + offs_n, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)  # fully masked row: exp(-inf - 0) = 0
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    # Fully masked row: e is all 0, so y is 0. A NaN (or +inf) in the row makes s NaN, and
    # NaN == 0 is False, so the whole row becomes NaN, as in torch.
    y = e / tl.where(s == 0.0, 1.0, s)
    tl.store(out_ptr + row * stride_om + offs_n, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_online_kernel(x_ptr, out_ptr, n_cols, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0).to(tl.int64)  # int64: row * stride_xm may pass 2³¹
    x_row = x_ptr + row * stride_xm
    # Pass 1: per-lane running max m and running sum l_i (rescaled whenever m grows).
    m = tl.full([BLOCK_N], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs_n, mask=offs_n < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        l_i = l_i * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    # Combine the lanes: M = max m, L = Σ l·exp(m − M).
    m_row = tl.max(m, axis=0)
    m_row = tl.where(m_row == -float("inf"), 0.0, m_row)
    l_row = tl.sum(l_i * tl.exp(m - m_row), axis=0)
    inv_l = 1.0 / tl.where(l_row == 0.0, 1.0, l_row)  # masked row: 0; NaN row: NaN, as torch
    # Pass 2: normalise and write.
    for start in range(0, n_cols, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < n_cols
        x = tl.load(x_row + offs_n, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - m_row) * inv_l
        tl.store(out_ptr + row * stride_om + offs_n, y.to(out_ptr.dtype.element_ty), mask=mask)


def _prepare(x: torch.Tensor, what: str) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    check_tensor("x", x, ndim=(1, 2, 3, 4))
    reject_bf16_in_interpreter(x, what)
    reject_autograd(what, x)
    x2 = x.reshape(-1, x.shape[-1])
    check_grid((x2.shape[0],), what)
    return x2, torch.empty_like(x2), x2.shape[0], x2.shape[1]


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Numerically stable softmax over the last dim, one program (one HBM pass) per row."""
    x2, out, rows, cols = _prepare(x, "softmax")
    if cols > MAX_FUSED_COLS:
        raise ValueError(
            f"x.shape[-1]={cols} must be ≤ {MAX_FUSED_COLS} for the fused kernel "
            "(one row per program); use softmax_online for longer rows"
        )
    BLOCK_N = max(16, next_power_of_2(cols))
    _softmax_kernel[(rows,)](x2, out, cols, x2.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
    return out.reshape(x.shape)


def softmax_online(x: torch.Tensor, *, BLOCK_N: int = 1024) -> torch.Tensor:
    """Softmax over the last dim streaming each row in ``BLOCK_N`` chunks (two passes)."""
    BLOCK_N = block("BLOCK_N", BLOCK_N, 16, 65536)
    x2, out, rows, cols = _prepare(x, "softmax_online")
    _softmax_online_kernel[(rows,)](x2, out, cols, x2.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
    return out.reshape(x.shape)


__all__ = ["softmax", "softmax_cost", "softmax_online", "softmax_ref"]
