"""gpuperf.microscaling against independent derivations: element values decoded from their bit
patterns (OCP MX v1.0), brute-force nearest rounding, torch's FP8 casts, the spec's scale rule
written as an inequality, and NVFP4 re-derived block by block."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuperf import microscaling as mx
from gpuperf import numerics

#: The OCP MX v1.0 spec's tables: (largest normal, smallest normal, smallest subnormal).
SPEC = {
    "e5m2": (57344.0, 2.0**-14, 2.0**-16),
    "e4m3": (448.0, 2.0**-6, 2.0**-9),
    "e3m2": (28.0, 2.0**-2, 2.0**-4),
    "e2m3": (7.5, 1.0, 2.0**-3),
    "e2m1": (6.0, 1.0, 0.5),
}


def decoded(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Every finite non-negative value of a format, decoded bit pattern by bit pattern, and the
    parity of its mantissa code (for ties to even), written from the encoding alone."""
    exponent_bits, mantissa_bits, bias = {
        "e5m2": (5, 2, 15), "e4m3": (4, 3, 7), "e3m2": (3, 2, 3), "e2m3": (2, 3, 1),
        "e2m1": (2, 1, 1),
    }[name]  # fmt: skip
    values, parity = [], []
    for e in range(2**exponent_bits):
        for m in range(2**mantissa_bits):
            if name == "e5m2" and e == 2**exponent_bits - 1:
                continue  # inf and NaN
            if name == "e4m3" and e == 15 and m == 7:
                continue  # NaN
            if e == 0:
                value = 2.0 ** (1 - bias) * m / 2**mantissa_bits
            else:
                value = 2.0 ** (e - bias) * (1 + m / 2**mantissa_bits)
            values.append(value)
            parity.append(m % 2)
    order = np.argsort(values)
    return np.array(values)[order], np.array(parity)[order]


def nearest(x: np.ndarray, name: str) -> np.ndarray:
    """Brute force: the nearest representable value, ties to the even mantissa, saturating."""
    table, parity = decoded(name)
    out = np.empty_like(x)
    for i, v in enumerate(x):
        magnitude = min(abs(v), table[-1])
        distance = np.abs(table - magnitude)
        best = np.flatnonzero(distance == distance.min())
        pick = best[0] if len(best) == 1 else best[parity[best] == 0][0]
        out[i] = math.copysign(table[pick], v)
    return out


@pytest.mark.parametrize("name", list(SPEC))
def test_element_formats_match_the_spec_and_their_bit_patterns(name):
    fmt = mx.element_format(name)
    table, _ = decoded(name)
    assert (fmt.max_normal, fmt.min_normal, fmt.min_subnormal) == SPEC[name]
    assert table[-1] == fmt.max_normal and table[1] == fmt.min_subnormal
    assert 2.0**fmt.emax <= fmt.max_normal < 2.0 ** (fmt.emax + 1)


@pytest.mark.parametrize("name", list(SPEC))
def test_elements_round_to_the_nearest_decoded_value(name):
    # Every block holds the largest normal, so the floor rule gives the scale 2^0 and the
    # elements are the values themselves, rounded.
    fmt = mx.element_format(name)
    rng = np.random.default_rng(0)
    blocks = rng.uniform(-1, 1, (20, 32)) * fmt.max_normal * rng.choice([1, 1e-1, 1e-2], (20, 1))
    blocks[:, 0] = fmt.max_normal
    table, _ = decoded(name)
    blocks[:, 1:4] = rng.choice(table[1:-1], (20, 3)) + rng.choice([-1, 1], (20, 3)) * 0.0
    got, exponents = mx.quantize_mx(blocks.ravel(), name, 32)
    assert np.all(exponents == 0)
    np.testing.assert_array_equal(got, nearest(blocks.ravel(), name))


@pytest.mark.parametrize(("name", "dtype"), [("e4m3", "float8_e4m3fn"), ("e5m2", "float8_e5m2")])
def test_fp8_elements_equal_torch_casts(name, dtype):
    torch = pytest.importorskip("torch")
    fmt = mx.element_format(name)
    x = np.random.default_rng(1).standard_normal(4096) * fmt.max_normal / 8
    x[0] = fmt.max_normal  # scale 1
    got, _ = mx.quantize_mx(x, name, block_size=x.size)
    cast = torch.as_tensor(x, dtype=torch.float32).to(getattr(torch, dtype)).double().numpy()
    np.testing.assert_array_equal(got, cast)


@pytest.mark.parametrize("rule", ["floor", "ceil"])
@pytest.mark.parametrize("name", list(SPEC))
def test_mx_scale_rules_as_inequalities(rule, name):
    fmt = mx.element_format(name)
    x = np.random.default_rng(2).standard_normal(32 * 50) * np.repeat(
        10.0 ** np.random.default_rng(3).uniform(-8, 8, 50), 32
    )
    _, exponents = mx.quantize_mx(x, name, 32, scale_rule=rule)
    amax = np.abs(x.reshape(50, 32)).max(axis=1)
    scale = 2.0**exponents
    if rule == "floor":  # the spec: 2^(e + emax) ≤ amax < 2^(e + emax + 1)
        assert np.all(scale * 2.0**fmt.emax <= amax) and np.all(
            amax < scale * 2.0 ** (fmt.emax + 1)
        )
    else:  # the smallest power of two that keeps amax / scale within the largest normal
        assert np.all(amax / scale <= fmt.max_normal)
        assert np.all(amax / (scale / 2) > fmt.max_normal)
        assert mx.block_quantization_error(x, "mxfp8", scale_rule="ceil").saturated == 0


@pytest.mark.parametrize(
    ("rule", "low", "high", "closed_low"), [("floor", 4, 8, True), ("ceil", 3, 6, False)]
)
def test_where_an_e2m1_blocks_amax_lands(rule, low, high, closed_low):
    # Issue 34 (R1 #3): the module's docstring gave only the rounded-up rule's (3, 6]; the spec's
    # floor rule (the default) puts amax / scale in [4, 8), clamped above 6. The page says both.
    x = np.random.default_rng(5).standard_normal(32 * 400) * np.repeat(
        10.0 ** np.random.default_rng(6).uniform(-6, 6, 400), 32
    )
    _, exponents = mx.quantize_mx(x, "e2m1", 32, scale_rule=rule)
    ratio = np.abs(x.reshape(400, 32)).max(axis=1) / 2.0**exponents
    assert np.all(ratio >= low if closed_low else ratio > low) and np.all(ratio <= high)
    assert np.all(ratio < high) if rule == "floor" else ratio.max() > 5.5
    assert mx.__doc__ is not None and "[4, 8)" in mx.__doc__ and "(3, 6]" in mx.__doc__


def test_e8m0_scales_are_exact_in_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e8m0fnu"):
        pytest.skip("this torch has no float8_e8m0fnu")
    x = np.random.default_rng(4).standard_normal(32 * 64) * 1e3
    _, exponents = mx.quantize_mx(x, "e2m1")
    scales = torch.as_tensor(2.0**exponents, dtype=torch.float32)
    assert torch.equal(scales.to(torch.float8_e8m0fnu).float(), scales)


def test_nvfp4_rederived_block_by_block():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).standard_normal(16 * 40) * np.repeat(
        10.0 ** np.random.default_rng(6).uniform(-2, 2, 40), 16
    )
    got, block_scales, tensor_scale = mx.quantize_nvfp4(x)
    amax = float(np.abs(x).max())
    assert tensor_scale == float(np.float32(amax / (6 * 448)))
    expected = []
    for b, block in enumerate(x.reshape(40, 16)):
        wanted = np.abs(block).max() / 6 / tensor_scale
        stored = torch.tensor(min(wanted, 448.0)).to(torch.float8_e4m3fn).item()
        assert block_scales[b] == stored
        total = stored * tensor_scale
        assert total > 0
        expected.append(nearest(block / total, "e2m1") * total)
    np.testing.assert_array_equal(got, np.concatenate(expected))


def test_nvfp4_flushes_a_block_whose_scale_is_below_e4m3s_range():
    # E4M3 reaches down to 2^-9: a block scale below 2^-10 rounds to 0, i.e. a block whose amax
    # is under 2^-10 × 6 / (6 · 448) ≈ 2.2e-6 of the tensor's amax; its values are stored as 0.
    x = np.concatenate([np.full(16, 1.0), np.full(16, 1e-6), np.full(16, 1e-5)])
    got, block_scales, _ = mx.quantize_nvfp4(x)
    assert block_scales[1] == 0 and np.all(got[16:32] == 0)
    assert block_scales[2] > 0 and np.all(got[32:] != 0)


def test_bits_per_element_and_a_block_size_that_is_not_a_divisor():
    assert mx.scaled_format("mxfp8").bits_per_element == 8.25
    assert mx.scaled_format("mxfp4").bits_per_element == 4.25
    assert mx.scaled_format("nvfp4").bits_per_element == 4.5
    x = np.linspace(-3, 5, 70)  # 70 = 2 blocks of 32 and 6
    got = mx.block_quantize(x, "mxfp4")
    assert got.shape == x.shape
    r = mx.block_quantization_error(x[x != 0], "mxfp4")
    assert r.n_scales == 3


def test_error_measures_by_hand():
    x = np.array([6.0, 5.0, 0.1, -0.3] + [1.0] * 28)
    r = mx.block_quantization_error(x, "mxfp4")  # amax 6: scale 1, elements rounded as they are
    stored = np.array([6.0, 4.0, 0.0, -0.5] + [1.0] * 28)  # 5 → 4 (tie to even), 0.1 → 0
    relative = np.abs(stored - x) / np.abs(x)
    assert r.median_relative_error == pytest.approx(np.median(relative))
    assert r.rms_relative_error == pytest.approx(np.sqrt(np.mean(relative**2)))
    assert r.flushed_to_zero == pytest.approx(1 / 32) and r.saturated == 0
    # 7 in a block whose amax is 7: the floor rule keeps scale 1 and 7 saturates to 6.
    assert mx.block_quantization_error(np.array([7.0] + [1.0] * 31), "mxfp4").saturated == 1 / 32


def test_finer_blocks_and_scales_beat_coarser_ones_on_an_outlier():
    x = np.random.default_rng(1).standard_normal(4096) * 1e-3
    x[123] = 500.0
    per_tensor = numerics.quantization_error(x, "e4m3")
    mxfp8 = mx.block_quantization_error(x, "mxfp8")
    assert mxfp8.flushed_to_zero < per_tensor.flushed_to_zero / 50
    nvfp4, mxfp4 = (mx.block_quantization_error(x, f) for f in ("nvfp4", "mxfp4"))
    assert nvfp4.median_relative_error < mxfp4.median_relative_error


def test_delayed_scaling_saturates_on_growth_and_loses_small_values_after_a_spike():
    rng = np.random.default_rng(0)
    steps = 40
    sigma = 1.05 ** np.arange(steps)
    sigma[20] *= 1000  # a spike
    tensors = rng.standard_normal((steps, 512)) * sigma[:, None]
    run = mx.scaling_over_steps(tensors, "e4m3", history=8)
    amax = np.abs(tensors).max(axis=1)
    for t in range(steps):  # the history rule, by brute force
        assert run.delayed_amax[t] == (amax[0] if t == 0 else amax[max(0, t - 8) : t].max())
    assert max(run.saturated_current) == 0
    growing = [t for t in range(1, 20) if amax[t] > run.delayed_amax[t]]
    assert growing and all(run.saturated_delayed[t] > 0 for t in growing)
    assert run.saturated_delayed[20] > 0.9  # the spike step
    after = range(21, 29)  # the spike's amax rules the scale for the next 8 steps
    assert all(run.delayed_amax[t] == amax[20] for t in after)
    # Relative precision is the same throughout the normal range: the median barely moves, the
    # RMS grows with the values pushed into the subnormals.
    assert all(run.rms_error_delayed[t] > 1.5 * run.rms_error_current[t] for t in after)
    assert sum(run.flushed_delayed[t] for t in after) > 0 == sum(run.flushed_current)
    assert all(run.median_error_delayed[t] < 2 * run.median_error_current[t] for t in after)


def test_cast_cost_current_reads_twice():
    current = mx.cast_cost(1000, "current", "bf16")
    delayed = mx.cast_cost(1000, "delayed", "bf16")
    assert (current.bytes_read, current.bytes_written) == (4000, 1000)
    assert (delayed.bytes_read, delayed.bytes_written) == (2000, 1000)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: mx.quantize_mx([1.0], "e9m9"), "element='e9m9' is not an element format"),
        (lambda: mx.quantize_mx([1.0], "e4m3", 0), "block_size=0"),
        (lambda: mx.quantize_mx([1.0], scale_rule="round"), "scale_rule='round'"),
        (lambda: mx.block_quantize([1.0], "fp4"), "format='fp4' is not known"),
        (lambda: mx.block_quantization_error([0.0, 0.0]), "all zero"),
        (lambda: mx.quantize_nvfp4([1.0, float("nan")]), "finite"),
        (lambda: mx.scaling_over_steps([1.0, 2.0]), "2-D array"),
        (lambda: mx.scaling_over_steps([[0.0, 0.0]]), "nonzero amax"),
        (lambda: mx.cast_cost(10, "lazy"), "recipe='lazy'"),
    ],
)
def test_bad_arguments_are_named(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# --- what a format buys on a Blackwell tensor core --------------------------------------------

#: NVIDIA's table of Blackwell tensor cores (NVFP4 report, arXiv:2509.25149, Table 1): speedup
#: of each block-scaled format over BF16 on GB200 and GB300.
_TABLE_1 = {
    "GB200": {"mxfp8": 2, "mxfp6": 2, "mxfp4": 4, "nvfp4": 4},
    "GB300": {"mxfp8": 2, "mxfp6": 2, "mxfp4": 6, "nvfp4": 6},
}


@pytest.mark.parametrize("chip", sorted(_TABLE_1))
def test_scaled_format_peaks_reproduce_nvidias_blackwell_table(chip):
    for name, speedup in _TABLE_1[chip].items():
        if (chip, name) == ("GB300", "mxfp6"):  # no absolute GB300 FP6 peak in the table
            continue
        peak = mx.scaled_format_peak(chip, name)
        assert peak.speedup_vs_bf16 == pytest.approx(speedup)
        assert peak.precision == mx.FORMAT_PRECISION[name]


def test_scaled_format_peaks_are_the_datasheet_rows():
    # HGX B200 per GPU, dense: FP8/FP6 9 PF sparse → 4.5; NVFP4 18 PF sparse → 9 (Blackwell
    # datasheet); B300's dense NVFP4 14 PF (NVIDIA's aiconfigurator b300_sxm.yaml).
    assert mx.scaled_format_peak("B200", "mxfp8").peak_flops_per_s == 4.5e15
    assert mx.scaled_format_peak("B200", "mxfp6").peak_flops_per_s == 4.5e15
    assert mx.scaled_format_peak("B200", "nvfp4").peak_flops_per_s == 9e15
    assert mx.scaled_format_peak("b300", "mxfp4").peak_flops_per_s == 14e15


def test_scaled_format_peak_refuses_chips_without_block_scaled_mma_and_missing_rates():
    with pytest.raises(ValueError, match=r"chip_name='H100-SXM' has no block-scaled.*B200"):
        mx.scaled_format_peak("H100-SXM", "mxfp8")
    for name in ("B300", "GB300"):
        with pytest.raises(ValueError, match=f"{name} has no fp6"):
            mx.scaled_format_peak(name, "mxfp6")
    with pytest.raises(ValueError, match="format='int4' is not known"):
        mx.scaled_format_peak("B200", "int4")
    with pytest.raises(KeyError):
        mx.scaled_format_peak("B900", "nvfp4")


# --- training recipes: scale costs and the random Hadamard transform --------------------------


def test_block_scalings_cost_what_their_scales_say():
    # bits per element = element bits + scale bits / block elements, by hand
    bits = {name: b.bits_per_element() for name, b in mx.BLOCK_SCALINGS.items()}
    assert bits["DeepSeek-V3 FP8, activations"] == 8 + 32 / 128
    assert bits["DeepSeek-V3 FP8, weights"] == 8 + 32 / (128 * 128)
    assert bits["MXFP8, any tensor"] == 8 + 8 / 32 == mx.SCALED_FORMATS["mxfp8"].bits_per_element
    assert (
        bits["NVFP4, activations and gradients"]
        == 4.5
        == mx.SCALED_FORMATS["nvfp4"].bits_per_element
    )
    assert bits["NVFP4, weights (2D)"] == 4 + 8 / 256
    nvfp4 = mx.BLOCK_SCALINGS["NVFP4, activations and gradients"]
    assert nvfp4.bits_per_element(1024) == 4.5 + 32 / 1024  # the FP32 tensor scale
    assert mx.BLOCK_SCALINGS["MXFP8, any tensor"].bits_per_element(1024) == 8.25  # none


def test_hadamard_matrix_is_sylvesters_and_orthogonal():
    two = np.array([[1.0, 1.0], [1.0, -1.0]]) / math.sqrt(2)
    assert np.array_equal(mx.hadamard_matrix(2), two)
    h16 = mx.hadamard_matrix(16)
    assert np.allclose(h16 @ h16.T, np.eye(16))
    assert np.all(np.abs(h16) == 0.25)
    assert np.allclose(np.kron(two, mx.hadamard_matrix(8)), h16)


def test_random_hadamard_transform_spreads_an_outlier_and_keeps_the_product():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 5)), rng.standard_normal((64, 7))
    ta, tb = mx.random_hadamard_transform(a, 16, 3), mx.random_hadamard_transform(b, 16, 3)
    assert np.allclose(ta.T @ tb, a.T @ b)
    spike = np.zeros((16, 1))
    spike[5] = 16.0
    assert np.allclose(np.abs(mx.random_hadamard_transform(spike)), 4.0)  # 16 / √16 each


def test_gemm_error_is_zero_when_the_format_holds_the_inputs_exactly():
    rng = np.random.default_rng(1)
    a = rng.integers(-8, 9, (64, 4)).astype(float)  # integers ≤ 8: exact in E4M3 (and scale 1)
    b = rng.integers(-8, 9, (64, 3)).astype(float)
    assert mx.gemm_quantization_error(a, b, "mxfp8") == 0.0


def test_rht_helps_mxfp4_on_heavy_tails_more_than_nvfp4():
    # Student-t (3 degrees of freedom) inputs of a weight-gradient-like GEMM: the transform makes
    # each block nearly Gaussian, which MXFP4's power-of-two scale needs and NVFP4's does not.
    rng = np.random.default_rng(100)
    x, dy = rng.standard_t(3, (2048, 64)), rng.standard_t(3, (2048, 64))
    mx4 = mx.gemm_quantization_error(x, dy, "mxfp4")
    mx4_rht = mx.gemm_quantization_error(x, dy, "mxfp4", rht_size=32)
    nv4 = mx.gemm_quantization_error(x, dy, "nvfp4")
    nv4_rht = mx.gemm_quantization_error(x, dy, "nvfp4", rht_size=16)
    assert mx4_rht < 0.9 * mx4
    assert nv4 < mx4 and abs(nv4_rht - nv4) < 0.2 * nv4


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: mx.hadamard_matrix(12), "size=12 must be a power of two"),
        (lambda: mx.hadamard_matrix(512), "size=512"),
        (lambda: mx.random_hadamard_transform(np.ones((20, 2))), "20 rows"),
        (lambda: mx.random_hadamard_transform(np.ones(32)), "2-D array"),
        (lambda: mx.gemm_quantization_error(np.ones((16, 2)), np.ones((32, 2))), "k rows"),
        (lambda: mx.gemm_quantization_error(np.zeros((16, 2)), np.ones((16, 2))), "zero"),
        (lambda: mx.BLOCK_SCALINGS["MXFP8, any tensor"].bits_per_element(0), "n_elements=0"),
        (lambda: mx.BlockScaling("x", "e4m3", "fp16", 1, 32, False, "S"), "scale='fp16'"),
    ],
)
def test_recipe_arguments_are_named(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
