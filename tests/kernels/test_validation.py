"""Launchers reject bad inputs at the door, naming the value and the valid range."""

from __future__ import annotations

import pytest
import torch

from gpuperf import kernels as K  # noqa: N812

from .conftest import DEVICE


def t(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype).to(DEVICE)


ONE_INPUT = [
    K.relu,
    K.gelu,
    K.sin2cos2_fused,
    K.copy_coalesced,
    K.softmax,
    K.softmax_online,
    K.divergence_split,
    K.divergence_uniform,
]


@pytest.mark.parametrize("fn", ONE_INPUT)
def test_rejects_wrong_dtype(fn):
    with pytest.raises(TypeError, match=r"x.dtype=torch.int32 .*expected one of float32"):
        fn(torch.ones(8, dtype=torch.int32, device=DEVICE))


@pytest.mark.parametrize("fn", ONE_INPUT)
def test_rejects_wrong_device(fn):
    with pytest.raises(ValueError, match=r"x is on device meta"):
        fn(torch.empty(8, device="meta"))


@pytest.mark.parametrize("fn", ONE_INPUT)
def test_rejects_non_tensor_and_empty(fn):
    with pytest.raises(TypeError, match=r"must be a torch\.Tensor"):
        fn([1.0, 2.0])
    with pytest.raises(ValueError, match="no elements"):
        fn(t(0))


def test_rejects_non_contiguous_where_unsupported():
    x = t(8, 6).t()
    for fn in (K.relu, K.copy_coalesced, K.softmax):
        with pytest.raises(ValueError, match="not contiguous"):
            fn(x)
    with pytest.raises(ValueError, match="not contiguous"):
        K.vector_add(x, x)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: K.vector_add(t(8), t(8), BLOCK_SIZE=48), r"BLOCK_SIZE=48 must be a power of two"),
        (lambda: K.relu(t(8), BLOCK_SIZE=8), r"BLOCK_SIZE=8 must be a power of two ≥ 16"),
        (lambda: K.matmul(t(4, 4), t(4, 4), BLOCK_M=48), r"BLOCK_M=48 .* ≥ 16 and ≤ 256"),
        (lambda: K.matmul(t(4, 4), t(4, 4), BLOCK_K=8), r"BLOCK_K=8 must be a power of two"),
        (lambda: K.matmul(t(4, 4), t(4, 4), num_warps=3), r"num_warps=3 must be a power of two"),
        (lambda: K.matmul(t(4, 4), t(4, 4), GROUP_M=0), r"GROUP_M=0 must be an integer ≥ 1"),
        (lambda: K.matmul(t(4, 4), t(4, 4), num_stages=0), r"num_stages=0"),
        (lambda: K.transpose_tiled(t(4, 4), BLOCK_N=512), r"BLOCK_N=512 .* ≤ 256"),
        (lambda: K.softmax_online(t(4, 4), BLOCK_N=100), r"BLOCK_N=100 must be a power of two"),
        (lambda: K.copy_strided(t(8), 0), r"stride=0 must be an integer ≥ 1"),
        (lambda: K.copy_misaligned(t(8), 8), r"offset=8 must be < x.numel\(\)=8"),
        (
            lambda: K.flash_attention(t(1, 8, 16), t(1, 8, 16), t(1, 8, 16), BLOCK_M=24),
            r"BLOCK_M=24",
        ),
    ],
)
def test_rejects_bad_tile_sizes_and_parameters(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"x has shape \(4,\) but y has shape \(5,\)"):
        K.vector_add(t(4), t(5))
    with pytest.raises(ValueError, match=r"a.shape\[1\]=3 must equal b.shape\[0\]=4"):
        K.matmul(t(2, 3), t(4, 5))
    with pytest.raises(ValueError, match=r"expected 2-D"):
        K.matmul(t(2, 3, 4), t(4, 5))
    with pytest.raises(ValueError, match=r"k has shape .* q, k and v must have one shape"):
        K.FlashAttention.apply(t(1, 8, 16), t(1, 9, 16), t(1, 8, 16), False)
    with pytest.raises(ValueError, match=r"expected 3-D or 4-D"):
        K.flash_attention(t(8, 16), t(8, 16), t(8, 16))
    with pytest.raises(TypeError, match=r"b.dtype=torch.float16; they must match"):
        K.matmul(t(2, 3), t(3, 2, dtype=torch.float16))


@pytest.mark.skipif(DEVICE != "cpu", reason="only the interpreter mishandles bf16")
def test_bf16_is_refused_in_the_interpreter_with_a_reason():
    x = t(16, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match=r"bfloat16 cannot run in Triton's CPU interpreter"):
        K.relu(x)
    with pytest.raises(TypeError, match=r"gpuperf.inspect"):
        K.matmul(t(16, 16, dtype=torch.bfloat16), t(16, 16, dtype=torch.bfloat16))
