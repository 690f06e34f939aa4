"""A matmul whose tiles arrive by TMA, with and without warp specialisation (section 3.8).

What you learn: the course matmul (:mod:`gpuperf.kernels.matmul`) loads its panels through
pointer arithmetic, so on an H100 Triton turns the loads into per-thread ``cp.async`` copies.
This variant describes A, B and C with *tensor descriptors* (``tl.make_tensor_descriptor``):
on sm_90 and sm_100 each ``desc.load`` becomes one TMA copy (``cp.async.bulk.tensor``) of a
whole tile, rows past the end of the matrix zero-filled by the hardware, and C leaves by a TMA
store. One meta-parameter changes who does what:

* ``WARP_SPECIALIZE=False``: every warp issues copies *and* multiplies, as in the course matmul;
* ``WARP_SPECIALIZE=True`` (``tl.range(..., warp_specialize=True)``): Triton splits the K loop
  into *partitions* — a producer warpgroup that only issues the TMA copies and consumer
  warpgroups that only multiply — talking through ``mbarrier``s in shared memory, and moves
  registers from the producer to the consumers with ``setmaxnreg`` (compiler output in
  :mod:`gpuperf.warpspec`).

The arithmetic is the course matmul's: C = A·B with fp32 accumulation, 2·M·N·K FLOPs, and, for
(BM, BN, BK) tiles, (M·K·⌈N/BN⌉ + K·N·⌈M/BM⌉) elements read from global memory and M·N written.
Both variants share one reference, ``matmul_tma_ref``.

Where it runs: compiled, only on sm_90 and newer is a descriptor a TMA copy; elsewhere Triton
lowers it to ordinary loads, and on a CPU it runs in Triton's interpreter, so the tests check
its numbers without a GPU. TMA needs 16-byte-aligned rows: K and N times the element size must
be multiples of 16 bytes. Nothing here claims a speed: only a GPU can time it.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..runtime import interpreting
from ._common import (
    cdiv,
    check_grid,
    check_reference,
    check_tensor,
    flag,
    reject_autograd,
    reject_bf16_in_interpreter,
)

#: Tiles the launcher uses: 128×128 output tiles, 64-deep K steps for 16-bit inputs (32 for
#: fp32, so three stages and the C tile stay inside an H100's 227 KiB of shared memory).
BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
BLOCK_K_FP32 = 32
NUM_WARPS, NUM_STAGES = 4, 3
#: Oldest GPU the tiles fit (sm_75's 64 KiB of shared memory per block is too small).
MIN_CAPABILITY = (8, 0)
#: TMA copies rows whose byte length is a multiple of 16.
TMA_ROW_ALIGNMENT_BYTES = 16


def matmul_tma_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A·B in fp32, returned in A's dtype.

    Reads M·K + K·N elements once (a perfect cache); writes M·N.
    """
    check_reference("a", a, ndim=2)
    check_reference("b", b, ndim=2)
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"a is {a.shape[0]}×{a.shape[1]} and b is {b.shape[0]}×{b.shape[1]}: "
            "the inner sizes must match"
        )
    return (a.float() @ b.float()).to(a.dtype)


@triton.jit
def _matmul_tma_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
):
    # Descriptors: the matrices' shapes and strides, and the box one TMA copy moves.
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])  # (M, K)
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])  # (K, N)
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])  # (M, N)
    pid = tl.program_id(axis=0)
    num_n = tl.cdiv(N, BLOCK_N)
    offs_m = (pid // num_n) * BLOCK_M
    offs_n = (pid % num_n) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([offs_m, k * BLOCK_K])  # (BM, BK): one TMA copy, zero-filled past M, K
        b = b_desc.load([k * BLOCK_K, offs_n])  # (BK, BN)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
    c_desc.store([offs_m, offs_n], acc.to(c_ptr.dtype.element_ty))  # rows past M are dropped


_allocator_set = False


def _ensure_allocator() -> None:
    """Descriptors built on the device need a little global scratch memory: torch's."""
    global _allocator_set
    if _allocator_set or interpreting():
        return

    def alloc(size: int, alignment: int, stream: int | None) -> torch.Tensor:
        return torch.empty(size, device="cuda", dtype=torch.int8)

    triton.set_allocator(alloc)
    _allocator_set = True


def matmul_tma(a: torch.Tensor, b: torch.Tensor, warp_specialize: bool = False) -> torch.Tensor:
    """C = A·B with TMA tiles; ``warp_specialize`` splits producer and consumer warps.

    ``a`` is (M, K), ``b`` (K, N), both contiguous, of one dtype (fp32, fp16 or bf16); fp32 runs
    as IEEE fp32 (never TF32 unasked). K and N must make rows of a multiple of 16 bytes.
    """
    warp_specialize = flag("warp_specialize", warp_specialize)
    check_tensor("a", a, ndim=2)
    check_tensor("b", b, ndim=2)
    reject_autograd("matmul_tma", a, b)
    reject_bf16_in_interpreter(a, "matmul_tma")
    if b.dtype != a.dtype:
        raise TypeError(f"b.dtype={b.dtype} must equal a.dtype={a.dtype}")
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise ValueError(f"a is {m}×{k} and b is {k2}×{n}: the inner sizes must match")
    size = a.element_size()
    for name, elements in (("K", k), ("N", n)):
        if elements * size % TMA_ROW_ALIGNMENT_BYTES:
            raise ValueError(
                f"{name}={elements} × {size} bytes must be a multiple of "
                f"{TMA_ROW_ALIGNMENT_BYTES} bytes: TMA copies 16-byte-aligned rows"
            )
    if a.data_ptr() % 16 or b.data_ptr() % 16:
        raise ValueError("a and b must start on a 16-byte boundary (TMA)")
    if a.is_cuda and torch.cuda.get_device_capability(a.device) < MIN_CAPABILITY:
        raise ValueError(
            f"matmul_tma needs sm_80 or newer (its tiles do not fit sm_75's shared memory); "
            f"this GPU is sm_{''.join(map(str, torch.cuda.get_device_capability(a.device)))}: "
            "use gpuperf.kernels.matmul"
        )
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    _ensure_allocator()
    grid = check_grid((cdiv(m, BLOCK_M) * cdiv(n, BLOCK_N),), "matmul_tma")
    _matmul_tma_kernel[grid](
        a,
        b,
        c,
        m,
        n,
        k,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K_FP32 if a.dtype == torch.float32 else BLOCK_K,
        WARP_SPECIALIZE=warp_specialize,
        INPUT_PRECISION="ieee" if a.dtype == torch.float32 else "tf32",
        num_warps=NUM_WARPS,
        num_stages=NUM_STAGES,
    )
    return c


__all__ = ["matmul_tma", "matmul_tma_ref"]
