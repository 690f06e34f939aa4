"""One tolerance table for tests, notebooks and labs (gpuperf.tolerances)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gpuperf.tolerances import TOLERANCES, tolerance


def test_lower_precision_never_gets_a_tighter_tolerance():
    order = ["fp64", "fp32", "tf32", "bf16"]
    for tighter, looser in itertools.pairwise(order):
        assert tolerance(tighter).rtol <= tolerance(looser).rtol
        assert tolerance(tighter).atol <= tolerance(looser).atol
    # TF32 keeps 10 mantissa bits, like fp16: the same tolerance.
    assert tolerance("tf32") == tolerance("fp16")


def test_dtypes_and_precision_names_agree():
    torch = pytest.importorskip("torch")
    assert tolerance(torch.float32) == tolerance("fp32") == tolerance(" FP32 ")
    assert tolerance(torch.bfloat16) == TOLERANCES["bf16"]
    assert tolerance(np.dtype("float16")) == tolerance("fp16")
    rtol, atol = tolerance("fp32")  # unpacks like a tuple
    assert (rtol, atol) == (TOLERANCES["fp32"].rtol, TOLERANCES["fp32"].atol)


def test_fp32_tolerance_separates_ieee_from_tf32_rounding():
    """The fp32 tolerance must fail a TF32-rounded dot product: that is what caught the GPU bug."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 256)), rng.standard_normal((256, 64))

    def tf32(x):  # round to 10 mantissa bits (nearest), as the conversion to TF32 does
        bits = x.astype(np.float32).view(np.uint32) + np.uint32(0x1000)
        return (bits & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)

    exact = a @ b
    rtol, atol = tolerance("fp32")
    assert np.allclose((a.astype(np.float32) @ b.astype(np.float32)), exact, rtol=rtol, atol=atol)
    assert not np.allclose(tf32(a) @ tf32(b), exact, rtol=rtol, atol=atol)


def test_unknown_precision_lists_the_known_ones():
    with pytest.raises(KeyError, match=r"fp12.*known: fp64, fp32, tf32, fp16, bf16"):
        tolerance("fp12")
