"""The TMA matmul (section 3.8) against its reference on shapes that are not tile multiples,
with and without warp specialisation, and its refusals."""

from __future__ import annotations

import pytest
import torch

from gpuperf.kernels import matmul_tma
from gpuperf.kernels.matmul_tma import matmul_tma_ref
from gpuperf.tolerances import tolerance

from .conftest import DTYPES, randn

# M ragged (not a multiple of 128), N and K multiples of 8 (16-byte TMA rows for fp16 and fp32),
# K not a multiple of the 64-deep step: the descriptors zero-fill what lies outside.
SHAPES = [(1, 8, 8), (130, 136, 72), (70, 24, 136)]


@pytest.mark.parametrize("warp_specialize", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
def test_matmul_tma(gen, m, n, k, dtype, warp_specialize):
    a, b = randn(gen, m, k, dtype=dtype), randn(gen, k, n, dtype=dtype)
    out = matmul_tma(a, b, warp_specialize=warp_specialize)
    assert not torch.isnan(out).any(), "NaN in output: an element was never written"
    rtol, atol = tolerance(dtype)
    torch.testing.assert_close(out.float(), matmul_tma_ref(a, b).float(), rtol=rtol, atol=atol)


def test_matmul_tma_refuses_empty_inputs(gen):
    a, b = randn(gen, 3, 0, dtype=torch.float32), randn(gen, 0, 8, dtype=torch.float32)
    with pytest.raises(ValueError, match="no elements"):
        matmul_tma(a, b)


def test_matmul_tma_refuses_what_tma_cannot_copy(gen):
    a = randn(gen, 16, 12, dtype=torch.float16)  # 12 × 2 bytes = 24: not a multiple of 16
    b = randn(gen, 12, 16, dtype=torch.float16)
    with pytest.raises(ValueError, match="K=12 × 2 bytes must be a multiple of 16 bytes"):
        matmul_tma(a, b)
    with pytest.raises(ValueError, match="inner sizes must match"):
        matmul_tma(randn(gen, 8, 8), randn(gen, 16, 8))
    with pytest.raises(TypeError, match=r"must equal a\.dtype"):
        matmul_tma(randn(gen, 8, 8), randn(gen, 8, 8, dtype=torch.float16))
    with pytest.raises(TypeError, match="warp_specialize='yes'"):
        matmul_tma(randn(gen, 8, 8), randn(gen, 8, 8), warp_specialize="yes")
