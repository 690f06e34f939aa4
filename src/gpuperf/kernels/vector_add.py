"""Vector add, the first kernel of the course: ``out[i] = x[i] + y[i]``.

What you learn: a Triton program instance handles one ``BLOCK_SIZE`` slice of the vector; the grid
is ``cdiv(n, BLOCK_SIZE)`` programs; the mask ``offs < n`` keeps the last, partial block from
reading or writing past the end. Cost: n FLOPs, 2n elements read, n written — 1/12 FLOP/byte in
fp32, far left of every ridge point, so the kernel is memory-bound and the roofline floor is
``3 n × bytes_per_element / HBM bandwidth``.
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
    reject_autograd,
    reject_bf16_in_interpreter,
    same,
)


def vector_add_cost(n: int, precision: str = "fp32"):
    """FLOPs and bytes of ``x + y`` over n elements (reads 2n, writes n)."""
    from .. import cost

    return cost.elementwise(n, precision, flops_per_element=1, n_inputs=2, n_outputs=1)


def vector_add_ref(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    same("x", check_reference("x", x), "y", check_reference("y", y))
    return x + y  # reads 2n elements, writes n


@triton.jit
def _vector_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0).to(tl.int64)  # int64: pid * BLOCK_SIZE may pass 2³¹
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements  # the last block may be partial
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def vector_add(x: torch.Tensor, y: torch.Tensor, *, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """``x + y`` for contiguous fp32/fp16 (bf16 on a GPU) tensors of any shape.

    No backward: inputs that require grad are refused while grad mode is on.
    """
    check_tensor("x", x)
    check_tensor("y", y)
    same("x", x, "y", y)
    reject_bf16_in_interpreter(x, "vector_add")
    reject_autograd("vector_add", x, y)
    BLOCK_SIZE = block("BLOCK_SIZE", BLOCK_SIZE, 16, 65536)
    n = x.numel()
    grid = check_grid((cdiv(n, BLOCK_SIZE),), "vector_add")
    out = torch.empty_like(x)
    _vector_add_kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


__all__ = ["vector_add", "vector_add_cost", "vector_add_ref"]
