"""Elementwise activations, ReLU and GELU, by dtype.

What you learn: the same kernel runs for fp32, fp16 and bf16; only the bytes per element change,
so a memory-bound activation in fp16 takes half the time of fp32. Each kernel loads the storage
dtype, computes in fp32 (so fp16/bf16 inputs lose nothing in the math), and stores the storage
dtype. Cost per element: read 1, write 1; ReLU ~1 FLOP, GELU (erf form) ~8 FLOPs — both far
below any ridge point, hence memory-bound.
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
)

#: FLOPs per element, counted as the course counts them (a comparison or erf ≈ a few FLOPs).
RELU_FLOPS_PER_ELEMENT = 1
GELU_FLOPS_PER_ELEMENT = 8


def relu_cost(n: int, precision: str = "fp32"):
    from .. import cost

    return cost.elementwise(n, precision, flops_per_element=RELU_FLOPS_PER_ELEMENT)


def gelu_cost(n: int, precision: str = "fp32"):
    from .. import cost

    return cost.elementwise(n, precision, flops_per_element=GELU_FLOPS_PER_ELEMENT)


def relu_ref(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(check_reference("x", x))  # reads n, writes n


def gelu_ref(x: torch.Tensor) -> torch.Tensor:
    """Exact GELU, x·Φ(x) = x/2·(1 + erf(x/√2)), computed in fp32 and rounded to x's dtype."""
    check_reference("x", x)
    return torch.nn.functional.gelu(x.float()).to(x.dtype)


@triton.jit
def _relu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0).to(tl.int64)  # int64: pid * BLOCK_SIZE may pass 2³¹
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.where(x < 0.0, 0.0, x)  # NaN < 0 is False, so NaN stays NaN as in torch.relu
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _gelu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0).to(tl.int64)  # int64: pid * BLOCK_SIZE may pass 2³¹
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))  # x·Φ(x)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def _launch(kernel, x: torch.Tensor, BLOCK_SIZE: int, what: str) -> torch.Tensor:
    check_tensor("x", x)
    reject_bf16_in_interpreter(x, what)
    reject_autograd(what, x)
    BLOCK_SIZE = block("BLOCK_SIZE", BLOCK_SIZE, 16, 65536)
    n = x.numel()
    grid = check_grid((cdiv(n, BLOCK_SIZE),), what)
    out = torch.empty_like(x)
    kernel[grid](x, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


def relu(x: torch.Tensor, *, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """max(x, 0) elementwise, same dtype and shape as x; NaN stays NaN (as ``torch.relu``)."""
    return _launch(_relu_kernel, x, BLOCK_SIZE, "relu")


def gelu(x: torch.Tensor, *, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """Exact (erf) GELU elementwise, computed in fp32, stored in x's dtype."""
    return _launch(_gelu_kernel, x, BLOCK_SIZE, "gelu")


__all__ = ["gelu", "gelu_cost", "gelu_ref", "relu", "relu_cost", "relu_ref"]
