"""Vector add, ReLU/GELU, fused vs unfused sin²+cos²: each against its torch reference."""

from __future__ import annotations

import pytest
import torch

from gpuperf.kernels import gelu, relu, sin2cos2_fused, sin2cos2_unfused, vector_add
from gpuperf.kernels.elementwise import gelu_ref, relu_ref
from gpuperf.kernels.fusion import sin2cos2_cost, sin2cos2_ref
from gpuperf.kernels.vector_add import vector_add_cost, vector_add_ref

from .conftest import DTYPES, assert_close, randn

SIZES = [1, 17, 1000, 4097]  # 1 element, and sizes that are not multiples of the block


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_vector_add(gen, n, dtype):
    x, y = randn(gen, n, dtype=dtype), randn(gen, n, dtype=dtype)
    assert_close(vector_add(x, y, BLOCK_SIZE=1024), vector_add_ref(x, y))


def test_vector_add_2d_and_small_block(gen):
    x, y = randn(gen, 3, 37), randn(gen, 3, 37)
    assert_close(vector_add(x, y, BLOCK_SIZE=64), x + y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("kernel", "ref"), [(relu, relu_ref), (gelu, gelu_ref)])
def test_activations(gen, kernel, ref, n, dtype):
    x = randn(gen, n, dtype=dtype, scale=3.0)
    out = kernel(x)
    assert out.dtype == dtype and out.shape == x.shape
    assert_close(out, ref(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_sin2cos2_fused_matches_unfused(gen, n, dtype):
    x = randn(gen, n, dtype=dtype, scale=10.0)
    fused = sin2cos2_fused(x)
    assert_close(fused, sin2cos2_ref(x))
    assert_close(fused, torch.ones_like(fused))
    assert_close(sin2cos2_unfused(x.float()), sin2cos2_ref(x.float()))


def test_bytes_moved():
    n = 1000
    fused, unfused = sin2cos2_cost(n, "fp32"), sin2cos2_cost(n, "fp32", fused=False)
    assert (fused.bytes_read, fused.bytes_written) == (4 * n, 4 * n)
    assert (unfused.bytes_read, unfused.bytes_written) == (6 * 4 * n, 5 * 4 * n)
    assert unfused.bytes / fused.bytes == pytest.approx(5.5)
    assert vector_add_cost(n, "fp16").bytes == 3 * 2 * n
