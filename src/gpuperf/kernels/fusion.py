"""Fusion: sin²(x) + cos²(x) as five torch ops versus one Triton kernel.

What you learn: eager torch launches one kernel per op, and every op reads its inputs from HBM
and writes its output back. The unfused sequence ``a = sin(x); b = a*a; c = cos(x); d = c*c;
out = b + d`` moves 11 n elements (6 n read, 5 n written); the fused kernel reads x once and
writes out once: 2 n elements, so it is ~5.5× less traffic for the same ~5 n FLOPs. (The answer
is 1 up to rounding, which makes the test easy to read.)
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
    flag,
    reject_autograd,
    reject_bf16_in_interpreter,
)

FLOPS_PER_ELEMENT = 5  # sin, cos, two squares, one add (counting a transcendental as 1)


def sin2cos2_cost(n: int, precision: str = "fp32", *, fused: bool = True):
    """OpCost of the fused kernel (read n, write n) or the five-op torch sequence."""
    from .._validate import positive_int
    from ..cost import OpCost
    from ..units import bytes_per_element

    n = positive_int("n", n)
    size = bytes_per_element(precision)
    if flag("fused", fused):
        return OpCost(FLOPS_PER_ELEMENT * n, n * size, n * size, "sin²+cos² fused")
    # sin: r1 w1 | a*a: r1 w1 | cos: r1 w1 | c*c: r1 w1 | b+d: r2 w1  →  read 6n, write 5n
    return OpCost(FLOPS_PER_ELEMENT * n, 6 * n * size, 5 * n * size, "sin²+cos² unfused")


def sin2cos2_ref(x: torch.Tensor) -> torch.Tensor:
    xf = check_reference("x", x).float()
    return (torch.sin(xf) ** 2 + torch.cos(xf) ** 2).to(x.dtype)


def sin2cos2_unfused(x: torch.Tensor) -> torch.Tensor:
    """The eager torch sequence: five kernels, five HBM round trips. It takes what
    :func:`sin2cos2_fused` takes (a variant of the same operation), on the course's device."""
    check_tensor("x", x)
    a = torch.sin(x)  # read n, write n
    b = a * a  # read n, write n
    c = torch.cos(x)  # read n, write n
    d = c * c  # read n, write n
    return b + d  # read 2n, write n


@triton.jit
def _sin2cos2_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0).to(tl.int64)  # int64: pid * BLOCK_SIZE may pass 2³¹
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)  # the only read
    s = tl.sin(x)
    c = tl.cos(x)
    tl.store(out_ptr + offs, (s * s + c * c).to(out_ptr.dtype.element_ty), mask=mask)


def sin2cos2_fused(x: torch.Tensor, *, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """sin²(x) + cos²(x) in one pass: one read and one write per element."""
    check_tensor("x", x)
    reject_bf16_in_interpreter(x, "sin2cos2_fused")
    reject_autograd("sin2cos2_fused", x)
    BLOCK_SIZE = block("BLOCK_SIZE", BLOCK_SIZE, 16, 65536)
    n = x.numel()
    grid = check_grid((cdiv(n, BLOCK_SIZE),), "sin2cos2_fused")
    out = torch.empty_like(x)
    _sin2cos2_kernel[grid](x, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


__all__ = ["sin2cos2_cost", "sin2cos2_fused", "sin2cos2_ref", "sin2cos2_unfused"]
