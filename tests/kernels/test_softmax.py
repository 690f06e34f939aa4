"""Fused and online row softmax: correctness, large magnitudes, fully masked rows."""

from __future__ import annotations

import pytest
import torch

from gpuperf.kernels import softmax, softmax_online
from gpuperf.kernels.softmax import softmax_ref

from .conftest import DTYPES, assert_close, randn

SHAPES = [(1, 1), (1, 17), (7, 300), (3, 1000)]


def _online(x):
    return softmax_online(x, BLOCK_N=128)  # several blocks per row, last one partial


@pytest.mark.parametrize("kernel", [softmax, _online])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_softmax(gen, kernel, shape, dtype):
    x = randn(gen, *shape, dtype=dtype, scale=3.0)
    out = kernel(x)
    assert_close(out, softmax_ref(x))
    assert_close(out, torch.softmax(x.float(), dim=-1).to(dtype))


@pytest.mark.parametrize("kernel", [softmax, _online])
@pytest.mark.parametrize("scale", [1e4, -1e4])
def test_softmax_large_inputs_stay_finite(gen, kernel, scale):
    x = randn(gen, 5, 300, scale=scale)
    out = kernel(x)
    assert torch.isfinite(out).all()
    assert_close(out, torch.softmax(x, dim=-1))


@pytest.mark.parametrize("kernel", [softmax, _online])
def test_softmax_fully_masked_causal_rows(gen, kernel):
    rows, cols = 6, 200
    x = randn(gen, rows, cols)
    # Bottom-right-aligned causal mask with more queries than keys leaves the first rows empty.
    causal = torch.ones(rows, cols, dtype=torch.bool).triu(cols - rows + 1)
    causal[:2] = True
    x = x.masked_fill(causal.to(x.device), float("-inf"))
    out = kernel(x)
    assert torch.isfinite(out).all()
    assert (out[:2] == 0).all()
    assert_close(out, softmax_ref(x))
    assert_close(out[2:], torch.softmax(x[2:], dim=-1))


def test_softmax_3d(gen):
    x = randn(gen, 2, 3, 50)
    assert_close(softmax(x), torch.softmax(x, dim=-1))
