"""gpuperf.summation against independent derivations: numerics.round_to and numerics.accumulate
(another implementation of round to nearest), bit truncation of fp32 values for round toward
zero, the statistics of stochastic rounding, hand-written loops for blocked sums, and the
worst-case bounds as hard limits on every emulated error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuperf import numerics
from gpuperf import summation as sm


@pytest.mark.parametrize("name", ["fp32", "bf16", "fp16", "e4m3", "e5m2"])
def test_round_to_nearest_equals_numerics_round_to(name):
    fmt = numerics.FORMATS[name]
    x = np.random.default_rng(0).standard_normal(5000) * fmt.largest_finite / 64
    x[:50] *= 1e-6  # subnormals too
    np.testing.assert_array_equal(sm.round_to_format(x, name), numerics.round_to(x, name))


def test_round_toward_zero_truncates_the_bits():
    x = np.random.default_rng(1).standard_normal(5000).astype(np.float32)
    truncated = (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)  # bf16 by cutting
    np.testing.assert_array_equal(sm.round_to_format(x, "bf16", "toward_zero"), truncated)


def test_stochastic_rounding_is_unbiased_and_picks_a_neighbour():
    x = np.full(200_000, 1 + 2**-9)  # a quarter of the way from 1 to bf16's next number, 1 + 2^-7
    r = sm.round_to_format(x, "bf16", "stochastic", seed=3)
    assert set(np.unique(r)) == {1.0, 1 + 2**-7}
    assert np.mean(r == 1 + 2**-7) == pytest.approx(0.25, abs=0.005)
    assert np.mean(r) == pytest.approx(1 + 2**-9, abs=2e-5)
    exact = numerics.round_to(np.linspace(-3, 3, 97), "bf16")  # representable: unchanged
    np.testing.assert_array_equal(sm.round_to_format(exact, "bf16", "stochastic"), exact)


def test_running_sum_in_fp32_equals_numerics_accumulate():
    x, y = numerics.dot_inputs(2048, 4, "fp16", seed=1)
    np.testing.assert_array_equal(
        sm.running_sum(x * y, "fp32"), numerics.accumulate(x * y, "fp32")
    )


def test_a_sum_of_ones_stalls_in_bf16_unless_rounding_is_stochastic():
    ones = np.ones((1, 4096))
    assert sm.running_sum(ones, "bf16")[0, -1] == 256  # 256 + 1 is a tie: back to 256
    assert sm.running_sum(ones, "bf16", "toward_zero")[0, -1] == 256
    stochastic = sm.running_sum(np.ones((64, 4096)), "bf16", "stochastic", seed=0)[:, -1]
    assert abs(stochastic.mean() - 4096) < 4096 * 0.02  # unbiased: no stall


def test_pairwise_sum_of_ones_is_exact_and_meets_its_bound():
    assert sm.pairwise_sum(np.ones(4096), "bf16") == 4096  # every partial sum is a power of two
    x, y = numerics.dot_inputs(3000, 8, "fp16", seed=2)
    got = sm.pairwise_sum(x * y, "fp16")
    relative = np.abs(got - (x * y).sum(axis=1)) / (x * y).sum(axis=1)
    assert np.all(relative <= sm.error_bound(3000, "fp16", "pairwise"))


def test_blocked_sum_equals_a_hand_written_promotion_loop():
    x, y = numerics.dot_inputs(300, 3, "e4m3", seed=4)
    products = x * y
    got = sm.blocked_sum(products, 128)
    inner = sm.FP8_MMA_ACCUMULATOR
    for row in range(3):
        promoted = np.float32(0)
        partial = 0.0
        for j, p in enumerate(products[row]):
            # truncate partial + p to 14 significant bits
            value = partial + p
            exponent = math.frexp(value)[1] - 1
            quantum = 2.0 ** (exponent - inner.mantissa_bits)
            partial = math.floor(value / quantum) * quantum
            now = np.float32(np.float64(promoted) + partial)
            assert got[row, j] == now
            if (j + 1) % 128 == 0:
                promoted, partial = now, 0.0


def test_blocked_sum_with_one_block_is_the_running_sum():
    x, y = numerics.dot_inputs(500, 2, "e4m3", seed=5)
    np.testing.assert_array_equal(
        sm.blocked_sum(x * y, 512, sm.FP8_MMA_ACCUMULATOR, "fp32", "toward_zero")[:, -1],
        sm.running_sum(x * y, sm.FP8_MMA_ACCUMULATOR, "toward_zero")[:, -1],
    )


def test_error_bound_formulas():
    u = 2.0**-24
    assert sm.error_bound(1000, "fp32") == pytest.approx((1 + u) ** 1000 - 1)
    assert sm.error_bound(1024, "fp32", "pairwise") == pytest.approx((1 + u) ** 10 - 1)
    e = 2.0**-13  # truncation: a whole last place of the 14-bit accumulator
    expected = (1 + e) ** 128 * (1 + u) ** 32 - 1
    assert sm.error_bound(4096, sm.FP8_MMA_ACCUMULATOR, "blocked", "toward_zero") == pytest.approx(
        expected
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"accumulator": "fp32"},
        {"accumulator": "fp16", "input_format": "fp16", "order": "pairwise"},
        {"accumulator": sm.FP8_MMA_ACCUMULATOR, "rounding": "toward_zero"},
        {"accumulator": sm.FP8_MMA_ACCUMULATOR, "rounding": "toward_zero", "order": "blocked"},
        {"accumulator": "bf16", "input_format": "bf16", "rounding": "stochastic"},
    ],
)
def test_every_emulated_error_is_within_its_bound(kwargs):
    r = sm.summation_errors([16, 100, 1024, 2048], trials=8, **kwargs)
    assert all(m <= b for m, b in zip(r.max_error, r.bound, strict=True))
    assert all(m <= w for m, w in zip(r.mean_error, r.max_error, strict=True))


def test_promotion_every_128_rescues_a_14_bit_accumulator():
    lengths = [128, 4096]
    kwargs = {"accumulator": sm.FP8_MMA_ACCUMULATOR, "rounding": "toward_zero", "trials": 16}
    plain = sm.summation_errors(lengths, **kwargs)
    promoted = sm.summation_errors(lengths, order="blocked", block=128, **kwargs)
    fp32 = sm.summation_errors(lengths, "fp32", trials=16)
    assert plain.mean_error[0] == promoted.mean_error[0]  # one block: nothing promoted yet
    assert promoted.mean_error[1] < plain.mean_error[1] / 10
    assert fp32.mean_error[1] < promoted.mean_error[1] / 100


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: sm.round_to_format([1.0], "fp12"), "format='fp12'"),
        (lambda: sm.round_to_format([1.0], "fp16", "up"), "rounding='up'"),
        (lambda: sm.running_sum("1 2 3"), "terms="),
        (lambda: sm.blocked_sum(np.ones((1, 8)), 0), "block=0"),
        (lambda: sm.summation_errors([16], order="random"), "order='random'"),
        (lambda: sm.summation_errors([16], input_format="fp32"), "input_format='fp32'"),
        (lambda: sm.summation_errors([2**17]), "lengths="),
        (lambda: sm.running_sum(np.full((1, 2), 60000.0), "fp16"), "largest finite"),
    ],
)
def test_bad_arguments_are_named(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def _path_roundings(n, order, block=128):
    """Independent count: follow term 0 through the emulation's additions, counting each
    rounded addition whose result still contains it, split by level (accumulator, outer)."""
    if order == "sequential":  # acc = round(acc + x_j) for j = 0 … n − 1, all containing x_0
        return sum(1 for _ in range(n)), 0
    if order == "pairwise":  # x_0 is in the first pair of every level until one value is left
        levels, width = 0, n
        while width > 1:
            levels, width = levels + 1, (width + 1) // 2
        return levels, 0
    # blocked: x_0's block rounds once per term it holds; every block sum then enters ``outer``
    inner = min(block, n)
    outer = len(range(0, n, block))
    return inner, outer


@pytest.mark.parametrize("order", sm.ORDERS)
@pytest.mark.parametrize("n", [1, 2, 3, 64, 100, 4096, 5000])
def test_roundings_are_the_emulations_and_the_bounds_exponents(order, n):
    # Issue 34 (R1 #2): the page counted (b − 1) + (⌈n/b⌉ − 1) roundings while error_bound
    # charged b + ⌈n/b⌉. Both are now stated: the bound counts each term's own addition too.
    block = 64
    assert sm.roundings(n, order, block=block) == _path_roundings(n, order, block)
    inner, outer = sm.roundings(n, order, block=block)
    u16, u32 = 2.0**-11, 2.0**-24
    expected = (1 + u16) ** inner * (1 + u32) ** outer - 1
    bound = sm.error_bound(n, "fp16", order, block=block)
    assert bound == pytest.approx(expected, rel=1e-12)
    if order == "blocked":
        # the page's count of additions after a term's own is one fewer at each level
        assert (inner - 1) + (outer - 1) == (min(block, n) - 1) + (math.ceil(n / block) - 1)


def test_stochastic_rounding_goes_up_with_the_fraction_of_the_gap():
    # Issue 34 (R1 #5): rounds up with probability (x − lo)/(hi − lo), "40 % of the way, a 40 %
    # chance" (Transformer Engine's NVFP4 documentation), not "the distance".
    ulp = 2.0**-10  # fp16's gap above 1
    for fraction in (0.1, 0.4, 0.75):
        x = np.full(40_000, 1 + fraction * ulp)
        up = sm.round_to_format(x, "fp16", "stochastic", seed=3) > 1
        assert up.mean() == pytest.approx(fraction, abs=0.01)
