"""Units, formatting and the shared argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuperf import _validate, units


def test_precision_sizes():
    sizes = [units.bytes_per_element(p) for p in units.PRECISIONS]
    assert sizes == [8, 4, 4, 2, 2, 1, 1, 0.75, 0.5]
    # widest first, and an element's bits are its name's: fp6 packs four values in three bytes
    assert sizes == sorted(sizes, reverse=True)
    assert units.bytes_per_element("fp6") * 8 == 6
    with pytest.raises(ValueError, match="precision='fp12' is not a known precision"):
        units.bytes_per_element("fp12")
    with pytest.raises(ValueError, match="precision=16"):
        units.check_precision(16)


@pytest.mark.parametrize(
    ("function", "value", "text"),
    [
        (units.format_flops, 989e12, "989 TFLOP/s"),
        (units.format_flops, 1.979e15, "1.98 PFLOP/s"),
        (units.format_bandwidth, 3.35e12, "3.35 TB/s"),
        (units.format_bandwidth, 15.75e9, "15.8 GB/s"),
        (units.format_bytes, 80e9, "80 GB"),
        (units.format_seconds, 4.1e-5, "41 µs"),
        (units.format_seconds, 1.5, "1.5 s"),
        (units.format_seconds, 2e-10, "0.2 ns"),
        (units.format_seconds, math.inf, "inf s"),
    ],
)
def test_formatting(function, value, text):
    assert function(value) == text


def test_binary_bytes():
    assert units.format_bytes(228 * units.KiB, binary=True) == "228 KiB"
    assert units.format_bytes(50 * units.MiB, binary=True) == "50 MiB"


def test_positive_int_accepts_integral_values_only():
    assert _validate.positive_int("n", 4096.0) == 4096
    assert _validate.positive_int("n", np.int64(7)) == 7
    assert _validate.positive_int("n", 0, minimum=0) == 0
    for bad in (0, -3, 2.5, math.nan, math.inf, True, "4", None, [4]):
        with pytest.raises(ValueError, match=r"n=.* must be an integer ≥ 1"):
            _validate.positive_int("n", bad)


def test_positive_float():
    assert _validate.positive_float("x", 2) == 2.0
    assert _validate.positive_float("x", 0, allow_zero=True) == 0.0
    for bad in (0, -1e-9, math.nan, math.inf, False, "1"):
        with pytest.raises(ValueError, match=r"x=.* must be a finite number > 0"):
            _validate.positive_float("x", bad)


def test_fraction():
    assert _validate.fraction("f", 0.5) == 0.5
    with pytest.raises(ValueError, match=r"f=1.5 must be in \(0, 1\]"):
        _validate.fraction("f", 1.5)


def test_power_of_two():
    assert _validate.power_of_two("BLOCK_M", 64, minimum=16) == 64
    for bad in (48, 8, 0, -16, 16.5, "64", 512):
        with pytest.raises(ValueError, match=r"BLOCK_M=.* must be a power of two ≥ 16 and ≤ 256"):
            _validate.power_of_two("BLOCK_M", bad, minimum=16, maximum=256)


def test_counts_are_bounded_and_named():
    assert _validate.positive_int("n", _validate.MAX_COUNT) == 2**53
    for bad in (_validate.MAX_COUNT + 1, 10**400, 1e30):
        with pytest.raises(
            ValueError, match=r"n=.* must be an integer ≥ 1 and ≤ 9007199254740992"
        ):
            _validate.positive_int("n", bad)
    # A 400-digit value is shortened in the message, not printed whole.
    with pytest.raises(ValueError) as error:
        _validate.positive_int("n", 10**400)
    assert len(str(error.value)) < 150


def test_quantities_stay_inside_float_range():
    assert _validate.positive_float("bw", 1e100) == 1e100
    for bad in (1e101, 1e-101, 10**400):
        with pytest.raises(ValueError, match=r"bw=.* must be a finite number > 0"):
            _validate.positive_float("bw", bad)
    assert _validate.positive_float("t", 0.0, allow_zero=True) == 0.0


def test_flags_must_be_booleans():
    assert _validate.flag("causal", True) is True
    assert _validate.flag("causal", np.bool_(False)) is False
    for bad in ("no", "False", None, 0, 1, 1.0, [True]):
        with pytest.raises(TypeError, match=r"causal=.* must be True or False"):
            _validate.flag("causal", bad)


def test_choice_never_matches_a_bool_to_a_number():
    assert _validate.choice("lanes", 16.0, (1, 2, 4, 8, 16)) == 16
    for bad in (True, 3, "16", np.array([1, 2])):
        with pytest.raises(ValueError, match=r"lanes=.* is not one of: 1, 2, 4, 8, 16"):
            _validate.choice("lanes", bad, (1, 2, 4, 8, 16))


def test_formatting_rejects_nonsense_and_never_prints_1000_of_a_unit():
    with pytest.raises(ValueError, match=r"flops_per_s=1000000.* must be a real number"):
        units.format_flops(10**400)
    with pytest.raises(TypeError, match="binary='no' must be True or False"):
        units.format_bytes(1024, binary="no")
    with pytest.raises(ValueError, match=r"digits=0 must be an integer ≥ 1 and ≤ 17"):
        units.format_seconds(1.0, digits=0)
    assert units.format_seconds(0.9999996e-6) == "1 µs"
    assert units.format_bytes(1023.9 * units.KiB, binary=True) == "1 MiB"
    assert units.format_bytes(np.array(2048.0)) == "2.05 kB"  # a 0-d array is a number
    assert units.format_flops(math.nan) == "nan FLOP/s"
    with pytest.raises(ValueError, match="precision=''"):
        units.check_precision("")
