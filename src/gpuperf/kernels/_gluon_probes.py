"""Compile-only probes in Gluon, Triton's lower-level dialect: TMA multicast and 2-CTA MMA.

Triton's ``tl`` language does not emit these two cluster features in Triton 3.9: a kernel
launched with ``num_ctas=2`` gets cluster barriers, but its TMA copies are not multicast and its
``tcgen05.mma`` stays ``cta_group::1`` (section 3.8 shows that compile). Gluon exposes them
explicitly, so these two small kernels ask for them, and :mod:`gpuperf.warpspec` compiles them
offline for sm_90 / sm_100 to read what the PTX holds:

* :func:`_tma_multicast_probe` — a cluster of two CTAs; one TMA load with ``multicast=True``
  brings the same tile into both CTAs' shared memory, and each stores it back;
* :func:`_two_cta_mma_probe` — a pair of CTAs computes one 256×N tile with
  ``tcgen05.mma.cta_group::2``: each CTA holds 128 rows of A and half of B, the accumulator
  lives in both CTAs' tensor memory.

They are *probes*, not course kernels: they are never launched (no GPU here, and no CPU
interpreter runs Gluon), so nothing checks their numbers; what is checked is the instructions
the compiler emits for them. Imported only by the compiler subprocess of
:mod:`gpuperf.warpspec`, where ``GPUPERF_COMPILE_ONLY=1``.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    allocate_tensor_memory,
    tcgen05_mma,
)
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma


@gluon.jit
def _tma_multicast_probe(in_desc, out_desc):
    # One tile, loaded once from global memory and delivered to every CTA of the cluster.
    smem = gl.allocate_shared_memory(in_desc.dtype, in_desc.block_shape, in_desc.layout)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, in_desc.nbytes_per_cta)
    tma.async_load(in_desc, [0, 0], bar, smem, multicast=True)
    mbarrier.wait(bar, phase=0, deps=[smem])
    mbarrier.invalidate(bar)
    tma.async_store(out_desc, [0, 0], smem)
    tma.store_wait(0)


@gluon.jit
def _two_cta_mma_probe(a_desc, b_desc, c_desc):
    # A 256-row tile over a pair of CTAs: each loads its 128 rows of A and half of B's columns.
    rows: gl.constexpr = a_desc.block_shape[0]
    cols: gl.constexpr = b_desc.block_shape[1]
    smem_a = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_shape, a_desc.layout)
    smem_b = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_shape, b_desc.layout)
    loaded = mbarrier.allocate_mbarrier(two_ctas=True)  # the lead CTA waits for both halves
    done = mbarrier.allocate_mbarrier()
    mbarrier.init(loaded, count=1)
    mbarrier.init(done, count=1)
    mbarrier.expect(loaded, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
    tma.async_load(a_desc, [0, 0], loaded, smem_a)
    tma.async_load(b_desc, [0, 0], loaded, smem_b)
    mbarrier.wait(loaded, phase=0, deps=[smem_a, smem_b])
    mbarrier.invalidate(loaded)
    layout: gl.constexpr = TensorMemoryLayout(
        block=(rows // 2, cols), col_stride=1, cga_layout=c_desc.layout.cga_layout, two_ctas=True
    )
    acc = allocate_tensor_memory(gl.float32, [rows, cols], layout)
    tcgen05_mma(smem_a, smem_b, acc, use_acc=False, mbarriers=[done])
    mbarrier.wait(done, phase=0, deps=[smem_a, smem_b])
    mbarrier.invalidate(done)
    out = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_shape, c_desc.layout)
    out.store(acc.load().to(c_desc.dtype))
    tma.async_store(c_desc, [0, 0], out)
    tma.store_wait(0)


def sources(name: str):
    """``(GluonASTSource, options)`` for probe ``name``: descriptors built from fp16 shapes."""
    import torch
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    def desc(shape, cga):
        layout = gl.NVMMASharedLayout.get_default_for(shape, gl.float16, cga_layout=cga)
        base = torch.empty(shape, dtype=torch.float16)  # only its dtype and shape are read
        return TensorDescriptor.from_tensor(base, list(shape), layout).__mangle__()

    if name == "tma_multicast":
        tile = desc((128, 128), [[0, 0]])  # both CTAs of the cluster receive the same tile
        signature = {"in_desc": tile, "out_desc": tile}
        return GluonASTSource(_tma_multicast_probe, signature, constexprs={}), {"num_ctas": 2}
    if name == "two_cta_mma":
        signature = {
            "a_desc": desc((256, 64), [(1, 0)]),  # A split by rows over the pair
            "b_desc": desc((64, 128), [(0, 1)]),  # B split by columns
            "c_desc": desc((256, 128), [(1, 0)]),
        }
        return GluonASTSource(_two_cta_mma_probe, signature, constexprs={}), {"num_ctas": 2}
    raise KeyError(f"no Gluon probe {name!r}; known: tma_multicast, two_cta_mma")
