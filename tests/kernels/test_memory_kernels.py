"""Copy (coalesced / strided / misaligned), transpose (naive / tiled) and divergence."""

from __future__ import annotations

import pytest
import torch

from gpuperf.kernels import (
    copy_coalesced,
    copy_misaligned,
    copy_strided,
    divergence_split,
    divergence_uniform,
    transpose_naive,
    transpose_tiled,
)
from gpuperf.kernels.copy import copy_cost, copy_ref
from gpuperf.kernels.divergence import divergence_ref
from gpuperf.kernels.transpose import transpose_ref

from .conftest import DTYPES, assert_close, randn


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 33, 3001])
def test_copy_coalesced(gen, n, dtype):
    x = randn(gen, n, dtype=dtype)
    assert_close(copy_coalesced(x), copy_ref(x))


@pytest.mark.parametrize("stride", [1, 2, 7, 32])
def test_copy_strided(gen, stride):
    x = randn(gen, 2049)
    out = copy_strided(x, stride)
    assert out.numel() == len(range(0, 2049, stride))
    assert_close(out, copy_ref(x, stride=stride))


@pytest.mark.parametrize("offset", [0, 1, 3, 2048])
def test_copy_misaligned(gen, offset):
    x = randn(gen, 2049, dtype=torch.float16)
    assert_close(copy_misaligned(x, offset), copy_ref(x, offset=offset))


def test_copy_cost_counts_sectors():
    assert copy_cost(100, "fp32").bytes_read == 400
    assert copy_cost(100, "fp32", stride=8).bytes_read == 100 * 32  # one sector per element
    assert copy_cost(100, "fp32", stride=2).bytes_read == 100 * 8


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (1, 37), (37, 1), (45, 70)])
def test_transpose(gen, shape, dtype):
    x = randn(gen, *shape, dtype=dtype)
    assert_close(transpose_naive(x, BLOCK_N=32), transpose_ref(x))
    assert_close(transpose_tiled(x, BLOCK_M=32, BLOCK_N=16), transpose_ref(x))


def test_transpose_accepts_strided_view(gen):
    x = randn(gen, 40, 30).t()  # non-contiguous view: strides are passed to the kernel
    assert_close(transpose_tiled(x, BLOCK_M=16, BLOCK_N=16), transpose_ref(x))
    assert_close(transpose_naive(x, BLOCK_N=16), transpose_ref(x))


@pytest.mark.parametrize("n", [1, 100, 1000])
def test_divergence(gen, n):
    x = randn(gen, n)
    assert_close(divergence_uniform(x, iters=4, BLOCK_SIZE=128), divergence_ref(x, 128, 4))
    assert_close(divergence_split(x, iters=4, BLOCK_SIZE=128), divergence_ref(x, 1, 4))
