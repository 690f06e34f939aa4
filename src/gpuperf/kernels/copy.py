"""Memory coalescing: the same copy with coalesced, strided and misaligned accesses.

What you learn: a warp's 32 loads are served in 32-byte sectors. When consecutive threads read
consecutive addresses (``copy_coalesced``) every fetched byte is used. Reading every
``stride``-th element (``copy_strided``) uses ``size/32`` of each sector once ``stride × size ≥
32`` bytes, so the same useful bytes cost up to 8× (fp32) the traffic. Starting at an ``offset``
that is not a multiple of the sector (``copy_misaligned``) makes each warp straddle one extra
sector — a small, not a large, penalty on modern GPUs. :mod:`gpuperf.memory` models the
transactions; the useful bytes are below. All three share one reference: ``x[offset::stride]``.
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

SECTOR_BYTES = 32


def copy_cost(n_out: int, precision: str = "fp32", *, stride: int = 1):
    """Useful bytes (read n_out, write n_out) and the bytes the sectors actually fetch."""
    from ..cost import OpCost
    from ..units import bytes_per_element

    n_out = count("n_out", n_out, 1)
    stride = count("stride", stride, 1)
    size = bytes_per_element(precision)
    fetched_per_element = min(stride * size, SECTOR_BYTES) if stride > 1 else size
    return OpCost(0, n_out * fetched_per_element, n_out * size, f"copy stride={stride}")


def copy_ref(x: torch.Tensor, *, stride: int = 1, offset: int = 0) -> torch.Tensor:
    check_reference("x", x)
    stride, offset = count("stride", stride, 1), count("offset", offset, 0)
    if offset >= x.numel():
        raise ValueError(f"offset={offset} must be less than the {x.numel()} elements of x")
    return x.reshape(-1)[offset::stride].clone()  # reads n_out, writes n_out


@triton.jit
def _copy_kernel(x_ptr, out_ptr, n_out, stride, offset, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0).to(tl.int64)  # int64: offs * stride may pass 2³¹
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_out
    # stride == 1, offset == 0: thread i reads address i (coalesced); otherwise not.
    x = tl.load(x_ptr + offset + offs * stride, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


def _copy(x: torch.Tensor, stride: int, offset: int, BLOCK_SIZE: int, what: str) -> torch.Tensor:
    check_tensor("x", x)
    reject_bf16_in_interpreter(x, what)
    reject_autograd(what, x)
    BLOCK_SIZE = block("BLOCK_SIZE", BLOCK_SIZE, 16, 65536)
    n = x.numel()
    stride = count("stride", stride, 1)
    offset = count("offset", offset, 0)
    if offset >= n:
        raise ValueError(f"offset={offset} must be < x.numel()={n}")
    n_out = cdiv(n - offset, stride)
    grid = check_grid((cdiv(n_out, BLOCK_SIZE),), what)
    out = torch.empty(n_out, dtype=x.dtype, device=x.device)
    _copy_kernel[grid](x, out, n_out, stride, offset, BLOCK_SIZE=BLOCK_SIZE)
    return out


def copy_coalesced(x: torch.Tensor, *, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """Copy x (flattened): consecutive threads touch consecutive addresses."""
    return _copy(x, 1, 0, BLOCK_SIZE, "copy_coalesced")


def copy_strided(x: torch.Tensor, stride: int, *, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """``x.flatten()[::stride]``: thread i reads element i·stride."""
    return _copy(x, stride, 0, BLOCK_SIZE, "copy_strided")


def copy_misaligned(x: torch.Tensor, offset: int, *, BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """``x.flatten()[offset:]``: every warp starts ``offset`` elements past a sector boundary."""
    return _copy(x, 1, offset, BLOCK_SIZE, "copy_misaligned")


__all__ = ["copy_coalesced", "copy_cost", "copy_misaligned", "copy_ref", "copy_strided"]
