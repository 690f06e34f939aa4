"""gpuperf.numerics: formats derived from their bit layouts agree with torch.finfo and the
published limits, rounding agrees bit for bit with torch's casts, and the scaling and
accumulation calculators agree with independent derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuperf import numerics
from gpuperf.numerics import FORMATS, float_format, round_to
from gpuperf.tolerances import tolerance

torch = pytest.importorskip("torch")

TORCH_FORMATS = [name for name, f in FORMATS.items() if f.torch_dtype]


# --- formats ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", TORCH_FORMATS)
def test_limits_match_torch_finfo(name):
    fmt = FORMATS[name]
    info = torch.finfo(getattr(torch, fmt.torch_dtype))
    assert fmt.largest_finite == info.max
    assert fmt.smallest_normal == info.smallest_normal
    assert fmt.machine_epsilon == info.eps
    assert fmt.bits == info.bits


def test_limits_match_the_published_values():
    # IEEE 754 binary16 and the OCP FP8 formats, written out by hand (not derived here)
    assert FORMATS["fp16"].largest_finite == 65504.0
    assert FORMATS["fp16"].smallest_subnormal == 2.0**-24
    assert FORMATS["e4m3"].largest_finite == 448.0
    assert FORMATS["e4m3"].smallest_subnormal == 2.0**-9
    assert FORMATS["e5m2"].largest_finite == 57344.0
    assert FORMATS["e5m2"].smallest_subnormal == 2.0**-16
    assert FORMATS["bf16"].largest_finite == (2 - 2**-7) * 2.0**127
    assert FORMATS["tf32"].machine_epsilon == FORMATS["fp16"].machine_epsilon == 2.0**-10
    assert FORMATS["tf32"].smallest_normal == FORMATS["fp32"].smallest_normal
    # an e4m3 with IEEE specials would stop at 240: the "fn" variant gains a binade
    assert numerics.FloatFormat("x", 4, 3).largest_finite == 240.0


def test_every_representable_small_format_value_rounds_to_itself():
    # enumerate e4m3 and e5m2 from their bit patterns, independently of round_to
    for name in ("e4m3", "e5m2"):
        fmt = FORMATS[name]
        values = torch.arange(256, dtype=torch.int32).to(torch.uint8)
        decoded = values.view(getattr(torch, fmt.torch_dtype)).double().numpy()
        finite = decoded[np.isfinite(decoded)]
        assert np.array_equal(round_to(finite, fmt), finite)
        assert finite.max() == fmt.largest_finite
        assert finite[finite > 0].min() == fmt.smallest_subnormal


@pytest.mark.parametrize("name", TORCH_FORMATS)
def test_round_to_matches_torch_casts_bit_for_bit(name):
    fmt = FORMATS[name]
    rng = np.random.default_rng(7)
    # fp32 inputs across 36 decades, plus ties and the subnormal range: torch casts fp32 once
    x = rng.standard_normal(20000) * 10.0 ** rng.uniform(-18, 6, 20000)
    ties = (1 + (2 * np.arange(1, 200) + 1) * 2.0 ** -(fmt.mantissa_bits + 1)) * 2.0
    x = np.concatenate([x, ties, -ties, [0.0, -0.0]]).astype(np.float32).astype(np.float64)
    if not fmt.ieee_specials:  # e4m3: torch's overflow behaviour is not part of the format
        x = x[np.abs(x) <= fmt.largest_finite]
    expected = torch.tensor(x, dtype=torch.float32, device="cpu")
    expected = expected.to(getattr(torch, fmt.torch_dtype)).double().numpy()
    np.testing.assert_array_equal(round_to(x, fmt), expected)


def test_overflow_and_saturation():
    assert round_to([70000.0], "fp16")[0] == math.inf
    assert round_to([-70000.0], "fp16")[0] == -math.inf
    with pytest.raises(ValueError, match=r"largest finite value 448.*saturate=True"):
        round_to([500.0], "e4m3")  # no infinity in e4m3: the cast would give NaN
    assert round_to([500.0, -1e9], "e4m3", saturate=True).tolist() == [448.0, -448.0]
    assert round_to([464.0], "e4m3")[0] == 448.0  # tie between 448 and 480: to even
    assert round_to([65519.9], "fp16")[0] == 65504.0
    assert round_to([65520.0], "fp16")[0] == math.inf  # the tie goes to the even 2^16


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match=r"format='fp12'.*fp16"):
        float_format("fp12")
    with pytest.raises(TypeError, match="format=3"):
        float_format(3)
    assert float_format("fp8-e4m3") is FORMATS["e4m3"]
    with pytest.raises(ValueError, match="values="):
        round_to("abc", "fp16")
    with pytest.raises(ValueError, match="mantissa_bits=0"):
        numerics.FloatFormat("x", 5, 0)
    with pytest.raises(ValueError, match="block_size=0"):
        numerics.quantization_error([1.0, 2.0], "e4m3", block_size=0)
    with pytest.raises(ValueError, match="n=0"):
        numerics.summation_bound(0)
    with pytest.raises(ValueError, match="accumulator='e4m3'"):
        numerics.accumulate(np.ones((1, 4)), "e4m3")
    with pytest.raises(ValueError, match="input_format='fp32'"):
        numerics.dot_errors([16], "fp32")
    with pytest.raises(ValueError, match="scale=0"):
        numerics.underflow_fraction([1.0], "fp16", scale=0)


# --- range: underflow and loss scaling -------------------------------------------------------


def test_fp16_underflow_and_loss_scaling():
    grads = np.logspace(-12, -2, 1001)  # one value per 0.01 decade
    fp16 = FORMATS["fp16"]
    below = np.mean(grads < fp16.smallest_subnormal / 2)  # independent: the half-ulp threshold
    assert numerics.underflow_fraction(grads, "fp16") == pytest.approx(below, abs=2e-3)
    assert numerics.underflow_fraction(grads, "bf16") == 0.0
    scale = numerics.max_loss_scale(grads.max(), "fp16")
    assert scale == 2.0**22  # 1e-2 · 2^22 = 41943 ≤ 65504 < 1e-2 · 2^23
    assert numerics.overflow_fraction(grads, "fp16", scale) == 0.0
    assert numerics.overflow_fraction(grads, "fp16", 2 * scale) > 0.0
    assert numerics.underflow_fraction(grads, "fp16", scale) < 0.25 * below


def test_max_loss_scale_at_exact_powers_of_two():
    assert numerics.max_loss_scale(1.0, "e4m3") == 256.0  # 256 ≤ 448 < 512
    assert numerics.max_loss_scale(65504.0, "fp16") == 1.0
    assert numerics.max_loss_scale(65505.0, "fp16") == 0.5


# --- fp8 scaling -----------------------------------------------------------------------------


def _outlier_tensor(n=4096, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 1e-3
    x[123] = 500.0  # one outlier, 5·10⁵ × the typical value
    return x


def test_per_block_scaling_beats_per_tensor_with_an_outlier():
    x = _outlier_tensor()
    tensor = numerics.quantization_error(x, "e4m3")
    block = numerics.quantization_error(x, "e4m3", block_size=128)
    assert (tensor.n_scales, block.n_scales) == (1, 32)
    # per tensor: scale = 500/448, so most values near 1e-3 sit below e4m3's smallest subnormal
    threshold = FORMATS["e4m3"].smallest_subnormal / 2 * (500 / 448)
    expected_flushed = np.mean(np.abs(np.delete(x, 123)) < threshold) * 4095 / 4096
    assert tensor.flushed_to_zero == pytest.approx(expected_flushed, abs=1e-3)
    assert tensor.median_relative_error > 0.5
    # per block: every block but the outlier's keeps e4m3's full relative precision
    assert block.median_relative_error <= FORMATS["e4m3"].unit_roundoff
    assert block.rms_relative_error < tensor.rms_relative_error


def test_quantize_matches_a_torch_fp8_cast_on_the_device():
    from gpuperf.runtime import DEVICE

    x = _outlier_tensor(1000)
    ours, scales = numerics.quantize(x, "e4m3", block_size=100)
    t = torch.as_tensor(x, dtype=torch.float32, device=DEVICE).reshape(10, 100)
    s = t.abs().amax(dim=1, keepdim=True) / 448.0
    theirs = ((t / s).to(torch.float8_e4m3fn).float() * s).reshape(-1).double().cpu().numpy()
    # the scale is computed in fp32 by torch and in float64 here: agree to fp32 rounding
    rtol = tolerance("fp32").rtol  # relative only: values near 1e-3 sit below fp32 atol
    np.testing.assert_allclose(scales, s.double().cpu().numpy().ravel(), rtol=rtol, atol=0)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=0)


# --- accumulation ----------------------------------------------------------------------------


def test_summation_bounds():
    u = FORMATS["fp16"].unit_roundoff
    assert numerics.summation_bound(100, "fp16") == pytest.approx(100 * u / (1 - 100 * u))
    assert numerics.summation_bound(2048, "fp16") == math.inf  # n·u = 1
    assert numerics.typical_summation_error(4096, "fp32") == 64 * 2.0**-24


def test_fp16_accumulator_stagnates_at_2048_when_adding_ones():
    sums = numerics.accumulate(np.ones((1, 3000)), "fp16")
    assert sums[0, 2047] == 2048 and sums[0, -1] == 2048  # 2048 + 1 ties to even: 2048
    assert numerics.accumulate(np.ones((1, 3000)), "fp32")[0, -1] == 3000
    assert numerics.accumulate(np.ones((1, 300)), "bf16")[0, -1] == 256


@pytest.mark.parametrize("accumulator", ["fp32", "bf16", "fp16"])
def test_accumulate_matches_torch_on_the_device_bit_for_bit(accumulator):
    from gpuperf.runtime import DEVICE

    x, y = numerics.dot_inputs(512, 8, "fp16", seed=3)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[accumulator]
    xt = torch.as_tensor(x, dtype=torch.float16, device=DEVICE)
    yt = torch.as_tensor(y, dtype=torch.float16, device=DEVICE)
    products = xt.float() * yt.float()  # exact: 11 × 11 significant bits fit in fp32's 24
    acc = torch.zeros(8, dtype=dtype, device=DEVICE)
    sums = []
    for j in range(512):
        acc = (acc.float() + products[:, j]).to(dtype)
        sums.append(acc)
    theirs = torch.stack(sums, dim=1).double().cpu().numpy()
    np.testing.assert_array_equal(numerics.accumulate(x * y, accumulator), theirs)


def test_dot_errors_stay_under_the_bound_and_grow_with_a_short_accumulator():
    fp32 = numerics.dot_errors([16, 256, 4096], "fp16", "fp32", trials=16)
    assert all(m <= b for m, b in zip(fp32.max_error, fp32.bound, strict=True))
    assert all(m <= 2 * t for m, t in zip(fp32.mean_error, fp32.typical, strict=True))
    fp16 = numerics.dot_errors([16, 256, 4096], "fp16", "fp16", trials=16)
    finite = [i for i, b in enumerate(fp16.bound) if math.isfinite(b)]
    assert all(fp16.max_error[i] <= fp16.bound[i] for i in finite)
    assert fp16.mean_error[-1] > 1000 * fp32.mean_error[-1]
    assert fp16.lengths == (16, 256, 4096)


def test_dot_errors_against_an_independent_fp16_sum():
    # numpy float16 arithmetic rounds every add: the same sums, reached another way
    x, y = numerics.dot_inputs(1024, 4, "fp16")
    products = (x * y).astype(np.float32)
    acc = np.zeros(4, dtype=np.float16)
    for j in range(1024):
        acc = (acc.astype(np.float32) + products[:, j]).astype(np.float16)
    errors = numerics.dot_errors([1024], "fp16", "fp16", trials=4)
    exact = (x * y).sum(axis=1)
    expected = np.abs(acc.astype(np.float64) - exact) / np.abs(x * y).sum(axis=1)
    assert errors.mean_error[0] == pytest.approx(expected.mean(), rel=1e-9)


# --- argument and result checks (issue 15: the API contract) ---------------------------------


def test_values_must_be_real_numbers_without_nan():
    for bad in ("64", None, True, {"a": 1}, [1, "x"], [10**400]):
        with pytest.raises(ValueError, match="values="):
            round_to(bad, "fp16")
    with pytest.raises(ValueError, match="NaN"):
        round_to([1.0, math.nan], "fp16")
    assert round_to(np.array([3, 5], dtype=np.int32), "e4m3").tolist() == [3.0, 5.0]
    # fractions skip what does not fit the question instead of failing on it
    assert numerics.overflow_fraction([1.0, 1000.0], "e4m3") == 0.5
    assert numerics.underflow_fraction([1e-12, 1000.0], "e4m3") == 0.5


def test_errors_name_the_argument_that_holds_the_bad_format():
    with pytest.raises(TypeError, match="accumulator=None"):
        numerics.summation_bound(16, None)
    with pytest.raises(ValueError, match="input_format='fp12'"):
        numerics.dot_errors([16], "fp12")
    with pytest.raises(ValueError, match="accumulator='tf32'"):
        numerics.dot_errors([16], "fp16", "tf32")
    with pytest.raises(TypeError, match="lengths='64'"):
        numerics.dot_errors("64")
    with pytest.raises(ValueError, match=r"lengths=2\.5"):
        numerics.dot_errors(2.5)


def test_float_format_fields_are_checked_and_its_properties_stay_finite():
    with pytest.raises(ValueError, match="exponent_bits=11 with ieee_specials=False"):
        numerics.FloatFormat("x", 11, 3, ieee_specials=False)
    with pytest.raises(TypeError, match="ieee_specials='no'"):
        numerics.FloatFormat("x", 5, 3, ieee_specials="no")
    with pytest.raises(ValueError, match="name=' '"):
        numerics.FloatFormat(" ", 5, 3)
    wide = numerics.FloatFormat("e11m1", 11, 1)  # the ratio largest / smallest overflows
    assert wide.dynamic_range_decades == pytest.approx(
        math.log10(wide.largest_finite) - math.log10(wide.smallest_normal)
    )
    assert math.isfinite(wide.dynamic_range_decades)
    assert FORMATS["fp16"].dynamic_range_decades == pytest.approx(math.log10(65504 * 2**14))
    with pytest.raises(ValueError, match="largest_value=1e-90 is so small"):
        numerics.max_loss_scale(1e-90, wide)


def test_e4m3_overflow_is_an_error_unless_saturated():
    with pytest.raises(ValueError, match="e4m3 has no infinity"):
        round_to([1.0, math.inf], "e4m3")
    assert round_to([math.inf, -1e300], "e4m3", saturate=True).tolist() == [448.0, -448.0]
    assert round_to([math.inf], "fp16")[0] == math.inf  # fp16 has one: that is the answer


def test_quantize_clamps_a_block_longer_than_the_tensor():
    x = _outlier_tensor(200)
    whole, whole_scales = numerics.quantize(x, "e4m3")
    huge, huge_scales = numerics.quantize(x, "e4m3", block_size=2**53)  # no 2**53 allocation
    assert np.array_equal(whole, huge) and np.array_equal(whole_scales, huge_scales)
    result = numerics.quantization_error(x, "e4m3", block_size=2**53)
    assert (result.block_size, result.n_scales) == (2**53, 1)
    with pytest.raises(ValueError, match="between 1e-100 and 1e\\+100"):
        numerics.quantize([1e-320, 0.0], "e4m3")  # its scale would underflow to 0
    with pytest.raises(ValueError, match="between 1e-100 and 1e\\+100"):
        numerics.quantize([1e300], "e4m3")


def test_quantization_checks_its_fields():
    good = dict(
        format="e4m3",
        block_size=None,
        n_scales=1,
        rms_relative_error=0.1,
        median_relative_error=0.05,
        flushed_to_zero=0.0,
    )
    numerics.Quantization(**good)
    for field, bad, message in [
        ("n_scales", 4, "n_scales=4 must be 1 when block_size is None"),
        ("rms_relative_error", -0.5, "rms_relative_error=-0.5"),
        ("median_relative_error", math.nan, "median_relative_error=nan"),
        ("flushed_to_zero", 1.5, "flushed_to_zero=1.5"),
        ("block_size", 0, "block_size=0"),
    ]:
        with pytest.raises(ValueError, match=message):
            numerics.Quantization(**{**good, field: bad})
    with pytest.raises(TypeError, match="format=3"):
        numerics.Quantization(**{**good, "format": 3})


def test_dot_errors_checks_its_fields():
    real = numerics.dot_errors([16, 64], "fp16", "fp16", trials=4)
    fields = {f: getattr(real, f) for f in real.__dataclass_fields__}
    assert numerics.DotErrors(**fields) == real
    for field, bad, message in [
        ("lengths", (64, 16), "must increase"),
        ("lengths", (16,), "one value per length"),
        ("mean_error", (0.1, -1.0), "mean_error=-1.0"),
        ("max_error", (0.0, 0.0), "must not exceed max_error"),
        ("bound", (0.0, 0.0), "bound=.* must be"),
        ("typical", (math.inf, 0.1), "typical=.* must be"),
        ("trials", 0, "trials=0"),
        ("accumulator", "e4m3", "accumulator='e4m3'"),
    ]:
        if field == "max_error":
            bad = (real.mean_error[0] / 2, real.mean_error[1] / 2)
        with pytest.raises(ValueError, match=message):
            numerics.DotErrors(**{**fields, field: bad})
    # no bound exists once n·u ≥ 1: inf is the documented answer, not a broken field
    short = numerics.dot_errors([4096], "fp16", "fp16", trials=2)
    assert short.bound == (math.inf,)


def test_dot_errors_limits_the_emulated_size_and_never_divides_zero_by_zero():
    with pytest.raises(ValueError, match=r"trials=1024 .* at most 4194304"):
        numerics.dot_errors([2**13], trials=1024)
    with pytest.raises(ValueError, match="lengths=65537"):
        numerics.dot_errors([2**16 + 1])
    # e4m3 rounds inputs below 2^-10 to 0: a length-1 product can be 0 (0/0 before the fix)
    x, y = numerics.dot_inputs(1, 1024, "e4m3", seed=0)
    assert np.any(x * y == 0)
    errors = numerics.dot_errors([1], "e4m3", "fp32", trials=1024)
    assert errors.mean_error == (0.0,) and errors.max_error == (0.0,)


def test_accumulate_refuses_what_it_cannot_emulate():
    with pytest.raises(ValueError, match="exactly representable in fp32"):
        numerics.accumulate(np.array([[1 + 2**-30]]), "fp32")
    with pytest.raises(ValueError, match=r"overflow the fp16 accumulator.*65504"):
        numerics.accumulate(np.full((1, 4), 60000.0), "fp16")
    with pytest.raises(ValueError, match="at least one term"):
        numerics.accumulate(np.float64(3.0), "fp32")
    with pytest.raises(ValueError, match="at most 65536 terms"):
        numerics.accumulate(np.ones((1, 2**16 + 1)), "fp32")
