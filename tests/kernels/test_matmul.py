"""Tiled and naive matmul against an fp32-accumulated reference on awkward shapes."""

from __future__ import annotations

import pytest
import torch

from gpuperf.kernels import matmul, matmul_naive
from gpuperf.kernels.matmul import matmul_ref
from gpuperf.tolerances import tolerance

from .conftest import DTYPES, randn

# fp32 inputs, fp32 accumulation (IEEE, not TF32): only summation order differs. fp16 output is
# rounded to fp16. Tolerances from gpuperf.tolerances, as everywhere.
SHAPES = [(1, 1, 1), (1, 40, 17), (17, 33, 45), (70, 50, 90)]


def _check(out, a, b):
    assert not torch.isnan(out).any(), "NaN in output: an element was never written"
    rtol, atol = tolerance(a.dtype)
    torch.testing.assert_close(out.float(), matmul_ref(a, b).float(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
def test_matmul(gen, m, n, k, dtype):
    a, b = randn(gen, m, k, dtype=dtype), randn(gen, k, n, dtype=dtype)
    _check(matmul(a, b, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=2), a, b)


@pytest.mark.parametrize(
    ("bm", "bn", "bk", "group", "warps", "stages"),
    [(16, 16, 16, 1, 1, 1), (64, 32, 32, 4, 4, 2), (32, 64, 64, 8, 8, 3)],
)
def test_matmul_tile_arguments(gen, bm, bn, bk, group, warps, stages):
    a, b = randn(gen, 75, 51, dtype=torch.float16), randn(gen, 51, 66, dtype=torch.float16)
    out = matmul(
        a, b, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, num_warps=warps, num_stages=stages
    )
    _check(out, a, b)


def test_matmul_strided_operands(gen):
    a = randn(gen, 40, 30).t()  # (30, 40), column-major
    b = randn(gen, 50, 40).t()  # (40, 50)
    _check(matmul(a, b, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16), a, b)


def test_matmul_autotune_without_gpu_uses_given_tiles(gen):
    a, b = randn(gen, 20, 20), randn(gen, 20, 20)
    _check(matmul(a, b, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, autotune=True), a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
def test_matmul_naive(gen, m, n, k, dtype):
    a, b = randn(gen, m, k, dtype=dtype), randn(gen, k, n, dtype=dtype)
    _check(matmul_naive(a, b, BLOCK_N=32, BLOCK_K=32), a, b)
