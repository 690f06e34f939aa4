"""Control divergence: a branch uniform per warp versus one that splits every warp.

What you learn: the 32 threads of a warp share one instruction stream. When a branch goes the
same way for the whole warp only the taken path runs; when it splits the warp, the warp runs
*both* paths with half its lanes masked off each time. Both kernels compute the same function

    out[i] = path_a(x[i]) if (i // period) % 2 == 0 else path_b(x[i])

``divergence_uniform`` uses ``period = BLOCK_SIZE``: the branch depends on the program id only, a
real ``if`` that every thread of the block agrees on. ``divergence_split`` uses ``period = 1``:
even and odd elements alternate, so each warp evaluates both paths (``tl.where`` over both, which
is what the hardware does under divergence). Each path is ``ITERS`` dependent sin (or cos) calls,
so the split kernel does ~2× the math for the same bytes (read n, write n).
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

#: ``ITERS`` is unrolled at compile time (``tl.static_range``): beyond this the compiler runs for
#: minutes (20,000 iterations did not finish in 75 s on an H100 machine).
MAX_ITERS = 256


def divergence_ref(x: torch.Tensor, period: int, iters: int = 8) -> torch.Tensor:
    check_reference("x", x)
    period = count("period", period, 1)
    iters = count("iters", iters, 0)
    if iters > MAX_ITERS:
        raise ValueError(f"iters={iters} must be ≤ {MAX_ITERS}")
    xf = x.reshape(-1).float()
    a, b = xf.clone(), xf.clone()
    for _ in range(iters):
        a = torch.sin(a)
        b = torch.cos(b)
    take_a = (torch.arange(xf.numel(), device=x.device) // period) % 2 == 0
    return torch.where(take_a, a, b).to(x.dtype).reshape(x.shape)


@triton.jit
def _divergence_uniform_kernel(
    x_ptr, out_ptr, n_elements, ITERS: tl.constexpr, BLOCK_SIZE: tl.constexpr
):
    pid = tl.program_id(axis=0).to(tl.int64)  # int64: pid * BLOCK_SIZE may pass 2³¹
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    y = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    if pid % 2 == 0:  # one scalar per program: every warp takes the same side
        for _ in tl.static_range(ITERS):
            y = tl.sin(y)
    else:
        for _ in tl.static_range(ITERS):
            y = tl.cos(y)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _divergence_split_kernel(
    x_ptr, out_ptr, n_elements, ITERS: tl.constexpr, BLOCK_SIZE: tl.constexpr
):
    pid = tl.program_id(axis=0).to(tl.int64)  # int64: pid * BLOCK_SIZE may pass 2³¹
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    a = x
    b = x
    for _ in tl.static_range(ITERS):  # both paths run for every lane
        a = tl.sin(a)
        b = tl.cos(b)
    y = tl.where(offs % 2 == 0, a, b)  # even lanes keep path a, odd lanes path b
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def _launch(kernel, x: torch.Tensor, iters: int, BLOCK_SIZE: int, what: str) -> torch.Tensor:
    check_tensor("x", x)
    reject_bf16_in_interpreter(x, what)
    reject_autograd(what, x)
    BLOCK_SIZE = block("BLOCK_SIZE", BLOCK_SIZE, 32, 65536)
    iters = count("iters", iters, 1)
    if iters > MAX_ITERS:
        raise ValueError(
            f"iters={iters} must be an integer in 1–{MAX_ITERS}: the loop is unrolled at compile "
            "time, and longer ones take minutes to compile"
        )
    n = x.numel()
    grid = check_grid((cdiv(n, BLOCK_SIZE),), what)
    out = torch.empty_like(x)
    kernel[grid](x, out, n, ITERS=iters, BLOCK_SIZE=BLOCK_SIZE)
    return out


def divergence_uniform(x: torch.Tensor, *, iters: int = 8, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """Branch per program (uniform per warp); equals ``divergence_ref(x, BLOCK_SIZE, iters)``."""
    return _launch(_divergence_uniform_kernel, x, iters, BLOCK_SIZE, "divergence_uniform")


def divergence_split(x: torch.Tensor, *, iters: int = 8, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """Branch per element (splits every warp); equals ``divergence_ref(x, 1, iters)``."""
    return _launch(_divergence_split_kernel, x, iters, BLOCK_SIZE, "divergence_split")


__all__ = ["MAX_ITERS", "divergence_ref", "divergence_split", "divergence_uniform"]
