"""Floating-point formats and the rounding error they cost, computed from their bit layouts.

A binary floating-point number is ``(-1)^s · 1.m · 2^(e - bias)``: a sign bit, ``E`` exponent
bits and ``M`` mantissa (fraction) bits. Everything a reader needs to choose a format follows
from ``E`` and ``M`` alone, so this module computes it instead of tabulating it:

* **range** — the largest finite value, the smallest normal value ``2^(1 - bias)`` and the
  smallest subnormal ``2^(1 - bias - M)``, with ``bias = 2^(E-1) - 1``. IEEE-style formats (fp32,
  tf32, bf16, fp16, fp8 e5m2) reserve the top exponent for infinities and NaN; fp8 e4m3 in its
  "fn" variant (finite, NaN only at all ones) keeps the top exponent for numbers, which is how
  it reaches 448 instead of 240;
* **precision** — the machine epsilon ``2^-M`` (the gap between 1 and the next number) and the
  unit roundoff ``u = 2^-(M+1)``, the largest relative error of one round-to-nearest;
* **rounding** — :func:`round_to` rounds float64 values to any of these formats (round to
  nearest, ties to even, with subnormals), in numpy, so the consequences can be computed without
  the hardware. Tests check it bit for bit against torch's own casts.

Three consequences the chapter computes with it:

* **loss scaling** (:func:`underflow_fraction`, :func:`max_loss_scale`): fp16 has only five
  exponent bits, so small gradients round to zero; multiplying the loss by a power of two ``S``
  shifts them into range (and dividing the gradients by ``S`` afterwards undoes it exactly).
  bf16 keeps fp32's eight exponent bits and needs no scaling;
* **fp8 scaling** (:func:`quantization_error`): fp8 covers so few binades that a tensor is
  divided by a scale before the cast. One scale per tensor lets a single outlier set it, and
  every small value loses its bits; one scale per block of ``block_size`` values confines the
  damage to the outlier's block;
* **accumulation** (:func:`dot_errors`, :func:`summation_bound`): a dot product of length ``n``
  summed left to right in a format with unit roundoff ``u`` has a relative error (relative to
  ``Σ|x_i·y_i|``) of at most ``γ_n = n·u / (1 - n·u)`` (Higham, *Accuracy and Stability of
  Numerical Algorithms*, §3.1), and typically about ``√n·u`` when the rounding errors are
  independent. With a 16-bit accumulator ``n·u`` reaches 1 after a few thousand terms — and a
  sum of positive terms stops growing once each term is below half an ulp of the running sum —
  which is why Tensor Cores take 16- and 8-bit inputs but accumulate in fp32.

Limits: the formats here are the binary formats with subnormals; rounding is round to nearest,
ties to even (what every cast in the chapter uses). Other rounding modes (toward zero,
stochastic), other summation orders and narrower accumulators are :mod:`gpuperf.summation`'s;
block-scaled formats with E8M0 or E4M3 scales (MX, NVFP4) are :mod:`gpuperf.microscaling`'s. The
accumulation model adds exact products (a product of two 16- or 8-bit numbers is exact in fp32)
in fp32 and rounds each partial sum to the accumulator format, as PyTorch's elementwise ops do;
a hardware unit may order and round its additions differently, within the same bounds.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import (
    MAX_QUANTITY,
    MIN_QUANTITY,
    choice,
    flag,
    name_string,
    optional,
    positive_float,
    positive_int,
    show,
)

__all__ = [
    "ACCUMULATORS",
    "FORMATS",
    "INPUT_FORMATS",
    "MAX_DOT_ELEMENTS",
    "MAX_DOT_LENGTH",
    "MAX_TRIALS",
    "DotErrors",
    "FloatFormat",
    "Quantization",
    "accumulate",
    "dot_errors",
    "dot_inputs",
    "float_format",
    "max_loss_scale",
    "overflow_fraction",
    "quantization_error",
    "quantize",
    "round_to",
    "summation_bound",
    "typical_summation_error",
    "underflow_fraction",
]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format given by its bit layout; every property is derived.

    ``ieee_specials``: the top exponent is reserved for ±inf and NaN (IEEE 754 style). When
    ``False`` (fp8 e4m3 "fn"), the top exponent holds numbers and only the all-ones pattern is
    NaN, so there is no infinity and the largest mantissa of the top binade is lost to NaN.
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    ieee_specials: bool = True
    torch_dtype: str | None = None  #: name of the torch dtype (``torch.<name>``), if any

    def __post_init__(self) -> None:
        name_string("name", self.name)
        bits = positive_int("exponent_bits", self.exponent_bits, minimum=2, maximum=11)
        object.__setattr__(self, "exponent_bits", bits)
        bits = positive_int("mantissa_bits", self.mantissa_bits, minimum=1, maximum=52)
        object.__setattr__(self, "mantissa_bits", bits)
        object.__setattr__(self, "ieee_specials", flag("ieee_specials", self.ieee_specials))
        optional("torch_dtype", self.torch_dtype, name_string)
        if not self.ieee_specials and self.exponent_bits == 11:
            # the top binade would hold numbers up to 2^1024: beyond float64, which emulates it
            raise ValueError(
                "exponent_bits=11 with ieee_specials=False puts numbers in the binade 2^1024, "
                "beyond float64; use exponent_bits ≤ 10 or ieee_specials=True"
            )

    @property
    def bits(self) -> int:
        """Storage bits: sign + exponent + mantissa (tf32 is stored in 32 bits; this is 19)."""
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def bias(self) -> int:
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def max_exponent(self) -> int:
        """Unbiased exponent of the top binade that holds finite numbers."""
        top = 2**self.exponent_bits - 1  # all-ones exponent field
        return (top - 1 if self.ieee_specials else top) - self.bias

    @property
    def min_exponent(self) -> int:
        """Unbiased exponent of the smallest normal number (exponent field 1)."""
        return 1 - self.bias

    @property
    def largest_finite(self) -> float:
        # 1.11…1, or 1.11…10 when the all-ones pattern of the top binade is NaN
        lost = 0 if self.ieee_specials else 1
        significand = 2 - 2.0 ** (lost - self.mantissa_bits)
        return math.ldexp(significand, self.max_exponent)

    @property
    def smallest_normal(self) -> float:
        return math.ldexp(1.0, self.min_exponent)

    @property
    def smallest_subnormal(self) -> float:
        return math.ldexp(1.0, self.min_exponent - self.mantissa_bits)

    @property
    def machine_epsilon(self) -> float:
        """Gap between 1 and the next larger number: ``2^-M``."""
        return math.ldexp(1.0, -self.mantissa_bits)

    @property
    def unit_roundoff(self) -> float:
        """Largest relative error of rounding to nearest (normal range): ``2^-(M+1)``."""
        return math.ldexp(1.0, -self.mantissa_bits - 1)

    @property
    def decimal_digits(self) -> float:
        """Significant decimal digits: ``(M + 1)·log10(2)``."""
        return (self.mantissa_bits + 1) * math.log10(2)

    @property
    def dynamic_range_decades(self) -> float:
        """``log10(largest finite / smallest normal)``: decades covered at full precision."""
        # a difference of logs: the ratio itself overflows float64 with 11 exponent bits
        return math.log10(self.largest_finite) - math.log10(self.smallest_normal)


#: The formats the course uses, widest first. tf32 has no torch dtype (it is an internal
#: Tensor-Core format: fp32 storage, 10 mantissa bits in the multiplier).
FORMATS: dict[str, FloatFormat] = {
    f.name: f
    for f in (
        FloatFormat("fp32", 8, 23, torch_dtype="float32"),
        FloatFormat("tf32", 8, 10),
        FloatFormat("bf16", 8, 7, torch_dtype="bfloat16"),
        FloatFormat("fp16", 5, 10, torch_dtype="float16"),
        FloatFormat("e5m2", 5, 2, torch_dtype="float8_e5m2"),
        FloatFormat("e4m3", 4, 3, ieee_specials=False, torch_dtype="float8_e4m3fn"),
    )
}
#: Accumulator formats of :func:`dot_errors`.
ACCUMULATORS: tuple[str, ...] = ("fp32", "bf16", "fp16")


def float_format(name: str | FloatFormat) -> FloatFormat:
    """The :class:`FloatFormat` called ``name`` (``"fp16"``, ``"e4m3"``…); a format passes."""
    return _format("format", name)


def _format(argument: str, name: object) -> FloatFormat:
    """:func:`float_format`, with errors that name the caller's ``argument``."""
    if isinstance(name, FloatFormat):
        return name
    if not isinstance(name, str):
        raise TypeError(
            f"{argument}={show(name)} must be a format name: one of {', '.join(FORMATS)}"
        )
    key = name.strip().lower().removeprefix("fp8-").removeprefix("fp8_")
    if key not in FORMATS:
        raise ValueError(f"{argument}={name!r} is not a known format; valid: {', '.join(FORMATS)}")
    return FORMATS[key]


def _array(name: str, values: Any) -> np.ndarray:
    """``values`` as a float64 array; strings, bytes, booleans, ``None``, ints beyond float
    range and NaN are refused (numpy would parse ``"64"`` as 64 and turn ``None`` into NaN)."""
    message = f"{name}={show(values)} must be an array of real numbers"
    if values is None or isinstance(values, str | bytes | bool | np.bool_ | Mapping):
        raise ValueError(message)
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError, RuntimeError):  # ragged lists, tensors numpy cannot read
        raise ValueError(message) from None
    if raw.dtype.kind not in "iuf":  # bool, str, object (an int beyond int64), complex
        raise ValueError(message)
    if raw.size > 2**26:
        raise ValueError(f"{name} has {raw.size} elements; at most 2**26 are accepted")
    array = raw.astype(np.float64)
    if np.isnan(array).any():
        raise ValueError(f"{name}={show(values)} holds NaN; every value must be a number")
    return array


def _round(x: np.ndarray, fmt: FloatFormat, saturate: bool) -> np.ndarray:
    """:func:`round_to` without the checks: overflow gives NaN in a format without infinity."""
    magnitude = np.abs(x)
    with np.errstate(invalid="ignore", over="ignore"):
        _, exponent = np.frexp(np.where(np.isfinite(magnitude), magnitude, 1.0))
        # magnitude = f·2^exponent with f in [0.5, 1): its leading bit is worth 2^(exponent-1).
        # Below the normal range the quantum stays that of the smallest binade (subnormals).
        binade = np.maximum(exponent - 1, fmt.min_exponent)
        quantum = np.ldexp(1.0, binade - fmt.mantissa_bits)
        rounded = np.round(magnitude / quantum) * quantum  # np.round: ties to even
        too_big = rounded > fmt.largest_finite
        if saturate:
            rounded = np.where(too_big, fmt.largest_finite, rounded)
        else:
            rounded = np.where(too_big, np.inf if fmt.ieee_specials else np.nan, rounded)
        return np.copysign(rounded, x)


def round_to(values: Any, format: str | FloatFormat, *, saturate: bool = False) -> np.ndarray:
    """``values`` rounded to ``format`` (to nearest, ties to even, with subnormals), as float64.

    A value beyond the largest finite number becomes ±inf in a format that has infinities (that
    is what the cast gives: fp16 overflows to inf). e4m3 has no infinity: its cast gives NaN,
    which here is an error naming the largest finite value, unless ``saturate=True``, which
    clamps to ±largest in any format (what scaled fp8 casts rely on). NaN inputs are refused.
    """
    fmt = _format("format", format)
    saturate = flag("saturate", saturate)
    x = _array("values", values)
    rounded = _round(x, fmt, saturate)
    if np.isnan(rounded).any():
        raise ValueError(
            f"values={show(values)} exceed {fmt.name}'s largest finite value "
            f"{fmt.largest_finite:g}, and {fmt.name} has no infinity (the cast gives NaN): "
            "pass saturate=True to clamp them"
        )
    return rounded


# --- range: underflow, overflow and loss scaling ---------------------------------------------


def _scaled(values: Any, scale: float) -> np.ndarray:
    factor = positive_float("scale", scale)
    x = _array("values", values)
    with np.errstate(over="ignore"):
        return x * factor  # an overflow to inf is beyond every format: filtered by the callers


def underflow_fraction(values: Any, format: str | FloatFormat, scale: float = 1.0) -> float:
    """Fraction of the nonzero finite ``values`` that round to zero in ``format`` after
    ``× scale`` (0 when there are none)."""
    fmt = _format("format", format)
    x = _scaled(values, scale)
    nonzero = x[(x != 0) & np.isfinite(x)]
    if nonzero.size == 0:
        return 0.0
    return float(np.mean(_round(nonzero, fmt, saturate=False) == 0))


def overflow_fraction(values: Any, format: str | FloatFormat, scale: float = 1.0) -> float:
    """Fraction of the finite ``values`` beyond ``format``'s range after ``× scale`` (a value
    whose product overflows float64 itself is not counted; 0 when there are none)."""
    fmt = _format("format", format)
    x = _scaled(values, scale)
    finite = x[np.isfinite(x)]
    if finite.size == 0:
        return 0.0
    return float(np.mean(~np.isfinite(_round(finite, fmt, saturate=False))))


def max_loss_scale(largest_value: float, format: str | FloatFormat = "fp16") -> float:
    """The largest power of two ``S`` with ``largest_value · S`` still finite in ``format``.

    Dynamic loss scaling searches for this at run time (halving on overflow, growing after a run
    of clean steps); here it is computed from the largest gradient magnitude.
    """
    largest = positive_float("largest_value", largest_value)
    fmt = _format("format", format)
    # a difference of logs: the ratio itself may overflow float64 (a format with 11 exponent bits)
    exponent = math.floor(math.log2(fmt.largest_finite) - math.log2(largest))
    if exponent > 1000:  # only a custom format with 11 exponent bits gets here
        raise ValueError(
            f"largest_value={show(largest_value)} is so small that the loss scale 2^{exponent} "
            f"for {fmt.name} exceeds float64's range; largest_value must be ≥ "
            f"{fmt.largest_finite / 2.0**1000:g}"
        )
    # floating-point log2 may be off by one at exact powers of two: check and correct
    while largest * 2.0**exponent > fmt.largest_finite:
        exponent -= 1
    while largest * 2.0 ** (exponent + 1) <= fmt.largest_finite:
        exponent += 1
    return 2.0**exponent


# --- fp8 scaling: per tensor or per block ----------------------------------------------------


@dataclass(frozen=True)
class Quantization:
    """Error of storing a tensor in a narrow format with scales (see :func:`quantization_error`).

    Over the nonzero elements, with ``r_i = |x̂_i - x_i| / |x_i|`` (a value flushed to zero has
    ``r_i = 1``): ``rms_relative_error`` is ``√mean(r_i²)`` and ``median_relative_error`` the
    median of ``r_i`` (the error a typical element sees); a norm-wise error ``‖x̂ - x‖ / ‖x‖``
    would hide them, since one outlier carries most of the norm;
    ``flushed_to_zero`` the fraction of nonzero elements stored as 0; ``n_scales`` how many
    scales are stored (one per tensor, or one per block).
    """

    format: str
    block_size: int | None
    n_scales: int
    rms_relative_error: float
    median_relative_error: float
    flushed_to_zero: float

    def __post_init__(self) -> None:
        name_string("format", self.format)
        optional("block_size", self.block_size, positive_int)
        positive_int("n_scales", self.n_scales)
        if self.block_size is None and self.n_scales != 1:
            raise ValueError(
                f"n_scales={show(self.n_scales)} must be 1 when block_size is None "
                "(one scale for the whole tensor)"
            )
        for name in ("rms_relative_error", "median_relative_error"):
            positive_float(name, getattr(self, name), allow_zero=True, bounded=False)
        positive_float("flushed_to_zero", self.flushed_to_zero, allow_zero=True, maximum=1.0)


def quantize(
    values: Any, format: str | FloatFormat = "e4m3", block_size: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(dequantized values, scales)``: ``x`` stored as ``round(x / s) · s`` in ``format``.

    The scale maps the largest magnitude of each group onto the format's largest finite value,
    ``s = amax / largest_finite``, so nothing overflows. ``block_size=None`` uses one scale for
    the whole (flattened) tensor; otherwise one per consecutive block of ``block_size`` values
    (the last block may be shorter; a block longer than the tensor is the whole tensor). A group
    of zeros gets scale 1. Magnitudes stop at 1e100 and a group's largest starts at 1e-100, so
    every scale is a normal float64.
    """
    fmt = _format("format", format)
    x = _array("values", values).ravel()
    if x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"values must be a non-empty array of finite numbers, got {show(x)}")
    size = x.size
    if block_size is not None:
        size = min(positive_int("block_size", block_size), x.size)
    n_blocks = -(-x.size // size)
    padded = np.zeros(n_blocks * size)
    padded[: x.size] = x
    blocks = padded.reshape(n_blocks, size)
    amax = np.max(np.abs(blocks), axis=1)
    if amax.max() > MAX_QUANTITY or np.any((amax > 0) & (amax < MIN_QUANTITY)):
        raise ValueError(
            f"values={show(values)}: each group's largest magnitude must be 0 or between "
            f"{MIN_QUANTITY:g} and {MAX_QUANTITY:g} (its scale is amax / "
            f"{fmt.largest_finite:g})"
        )
    scales = np.where(amax > 0, amax / fmt.largest_finite, 1.0)
    stored = _round(blocks / scales[:, None], fmt, saturate=True)
    return (stored * scales[:, None]).ravel()[: x.size], scales


def quantization_error(
    values: Any, format: str | FloatFormat = "e4m3", block_size: int | None = None
) -> Quantization:
    """The error of :func:`quantize`: per-tensor (``block_size=None``) or per-block scaling."""
    fmt = _format("format", format)
    x = _array("values", values).ravel()
    block_size = optional("block_size", block_size, positive_int)
    dequantized, scales = quantize(x, fmt, block_size)
    nonzero = x != 0
    if not nonzero.any():
        raise ValueError("values are all zero: the relative error is undefined")
    relative = np.abs(dequantized[nonzero] - x[nonzero]) / np.abs(x[nonzero])
    return Quantization(
        format=fmt.name,
        block_size=block_size,
        n_scales=int(scales.size),
        rms_relative_error=float(np.sqrt(np.mean(relative**2))),
        median_relative_error=float(np.median(relative)),
        flushed_to_zero=float(np.mean(dequantized[nonzero] == 0)),
    )


# --- accumulation: the error of a long dot product -------------------------------------------


def summation_bound(n: int, accumulator: str | FloatFormat = "fp32") -> float:
    """Worst-case relative error of summing ``n`` terms left to right: ``γ_n = n·u / (1 - n·u)``.

    Relative to ``Σ|terms|`` (for a dot product, ``Σ|x_i·y_i|``). Returns ``inf`` once
    ``n·u ≥ 1``: the bound then says nothing, and a sum can indeed lose every digit.
    """
    nu = positive_int("n", n) * _format("accumulator", accumulator).unit_roundoff
    return math.inf if nu >= 1 else nu / (1 - nu)


def typical_summation_error(n: int, accumulator: str | FloatFormat = "fp32") -> float:
    """The usual size of that error when rounding errors are independent: ``√n · u``."""
    return math.sqrt(positive_int("n", n)) * _format("accumulator", accumulator).unit_roundoff


#: Input formats of :func:`dot_errors`: 16- and 8-bit, so every product is exact in fp32.
INPUT_FORMATS: tuple[str, ...] = ("bf16", "fp16", "e5m2", "e4m3")
#: Longest vector :func:`dot_errors` emulates (one pass of Python-level steps per term).
MAX_DOT_LENGTH = 2**16
#: Most random vectors per length.
MAX_TRIALS = 1024
#: Most values (trials × length) one emulation holds: 32 MiB per float64 array.
MAX_DOT_ELEMENTS = 2**22


@dataclass(frozen=True)
class DotErrors:
    """Relative errors of left-to-right dot products by length (see :func:`dot_errors`).

    ``lengths[i]`` terms gave ``mean_error[i]`` (mean over ``trials`` random vectors) and
    ``max_error[i]`` (their maximum), both ``|ŝ - s| / Σ|x_j·y_j|`` with ``s`` exact;
    ``bound[i]`` and ``typical[i]`` are :func:`summation_bound` and
    :func:`typical_summation_error` for the accumulator (``bound[i]`` is ``inf`` once
    ``n·u ≥ 1``: no bound exists there).
    """

    input_format: str
    accumulator: str
    trials: int
    lengths: tuple[int, ...]
    mean_error: tuple[float, ...]
    max_error: tuple[float, ...]
    bound: tuple[float, ...]
    typical: tuple[float, ...]

    def __post_init__(self) -> None:
        choice("input_format", self.input_format, INPUT_FORMATS)
        choice("accumulator", self.accumulator, ACCUMULATORS)
        positive_int("trials", self.trials, maximum=MAX_TRIALS)
        if not isinstance(self.lengths, tuple) or not self.lengths:
            raise TypeError(f"lengths={show(self.lengths)} must be a non-empty tuple of lengths")
        for n in self.lengths:
            positive_int("lengths", n, maximum=MAX_DOT_LENGTH)
        if list(self.lengths) != sorted(set(self.lengths)):
            raise ValueError(f"lengths={show(self.lengths)} must increase, without repeats")
        for name in ("mean_error", "max_error", "bound", "typical"):
            column = getattr(self, name)
            if not isinstance(column, tuple) or len(column) != len(self.lengths):
                raise ValueError(
                    f"{name}={show(column)} must be a tuple with one value per length "
                    f"({len(self.lengths)})"
                )
        for name in ("mean_error", "max_error"):
            for value in getattr(self, name):
                positive_float(name, value, allow_zero=True, bounded=False)
        for mean, worst in zip(self.mean_error, self.max_error, strict=True):
            if mean > worst * (1 + 1e-12):  # a mean of equal values may round up by an ulp
                raise ValueError(f"mean_error={mean!r} must not exceed max_error={worst!r}")
        expected = {
            "bound": tuple(summation_bound(n, self.accumulator) for n in self.lengths),
            "typical": tuple(typical_summation_error(n, self.accumulator) for n in self.lengths),
        }
        for name, values in expected.items():
            if getattr(self, name) != values:
                raise ValueError(
                    f"{name}={show(getattr(self, name))} must be {show(values)}, the "
                    f"{self.accumulator} formula at lengths {show(self.lengths)}"
                )


def dot_inputs(n: int, trials: int, input_format: str | FloatFormat, seed: int = 0) -> np.ndarray:
    """``(2, trials, n)`` inputs: uniform in [0, 1), rounded to ``input_format`` (float64).

    ``n`` ≤ :data:`MAX_DOT_LENGTH`, ``trials`` ≤ :data:`MAX_TRIALS`, and ``trials · n`` ≤
    :data:`MAX_DOT_ELEMENTS`.
    """
    n = positive_int("n", n, maximum=MAX_DOT_LENGTH)
    trials = _trials(trials, n)
    seed = positive_int("seed", seed, minimum=0, maximum=2**32 - 1)
    fmt = _format("input_format", input_format)
    rng = np.random.default_rng(seed)
    return _round(rng.random((2, trials, n)), fmt, saturate=False)  # [0, 1): never overflows


def _trials(trials: object, n: int) -> int:
    result = positive_int("trials", trials, maximum=MAX_TRIALS)
    if result * n > MAX_DOT_ELEMENTS:
        raise ValueError(
            f"trials={show(trials)} × length {n} = {result * n} values; at most "
            f"{MAX_DOT_ELEMENTS} (2**22) are emulated: use fewer trials or shorter vectors"
        )
    return result


def accumulate(products: Any, accumulator: str | FloatFormat) -> np.ndarray:
    """Running sums of ``products`` (last axis), each partial sum rounded to ``accumulator``.

    Each step computes ``acc + p`` in fp32 and rounds it to the accumulator (PyTorch's
    ``addcmul`` on fp16/bf16 tensors does exactly this; for fp32 the second rounding is void).
    ``products`` must be exact in fp32 (products of 16- or 8-bit numbers are), hold at most
    :data:`MAX_DOT_LENGTH` terms along the last axis and :data:`MAX_DOT_ELEMENTS` in all, and
    must not overflow the accumulator (an error names its largest finite value).
    """
    fmt = _format("accumulator", accumulator)
    if fmt.name not in ACCUMULATORS:
        raise ValueError(f"accumulator={fmt.name!r} must be one of {', '.join(ACCUMULATORS)}")
    exact = _array("products", products)
    if exact.ndim == 0 or exact.shape[-1] == 0:
        raise ValueError(
            f"products={show(products)} must be an array with at least one term on its last axis"
        )
    if exact.shape[-1] > MAX_DOT_LENGTH or exact.size > MAX_DOT_ELEMENTS:
        raise ValueError(
            f"products has shape {exact.shape}: at most {MAX_DOT_LENGTH} terms on the last "
            f"axis and {MAX_DOT_ELEMENTS} values in all"
        )
    with np.errstate(over="ignore"):
        p = exact.astype(np.float32)
    if not np.array_equal(p, exact):
        raise ValueError(
            f"products={show(products)} must be exactly representable in fp32 (products of "
            "16- or 8-bit numbers are); these would be rounded before the sum"
        )
    sums = np.empty(p.shape, dtype=np.float64)
    acc = np.zeros(p.shape[:-1], dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        for j in range(p.shape[-1]):
            acc = acc + p[..., j]  # fp32 add: one rounding
            if fmt.name == "fp16":
                acc = acc.astype(np.float16).astype(np.float32)  # numpy's cast: nearest, even
            elif fmt.name == "bf16":
                acc = _round_fp32_to_bf16(acc)
            sums[..., j] = acc
    if not np.all(np.isfinite(sums)):
        raise ValueError(
            f"products={show(products)} overflow the {fmt.name} accumulator: a partial sum "
            f"passes its largest finite value {fmt.largest_finite:g}"
        )
    return sums


def _round_fp32_to_bf16(values: np.ndarray) -> np.ndarray:
    """Finite fp32 values rounded to bf16 (to nearest, ties to even) by integer arithmetic on the
    bits: a fast path of :func:`round_to` for the accumulation loop (tests check they agree)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def _lengths(lengths: object) -> tuple[int, ...]:
    """One length or an iterable of them, as a sorted tuple without repeats."""
    if isinstance(lengths, numbers.Real | np.ndarray) and np.ndim(lengths) == 0:
        lengths = [lengths]  # one length (a bool, a float or a 0-d array fails below)
    if isinstance(lengths, str | bytes) or not isinstance(lengths, Iterable):
        raise TypeError(
            f"lengths={show(lengths)} must be a length or a sequence of lengths "
            f"(1 to {MAX_DOT_LENGTH})"
        )
    found = tuple(sorted({positive_int("lengths", n, maximum=MAX_DOT_LENGTH) for n in lengths}))
    if not found:
        raise ValueError("lengths must hold at least one length")
    return found


def dot_errors(
    lengths: int | Sequence[int],
    input_format: str | FloatFormat = "fp16",
    accumulator: str | FloatFormat = "fp32",
    *,
    trials: int = 32,
    seed: int = 0,
) -> DotErrors:
    """Relative error of a length-``n`` dot product for every ``n`` in ``lengths`` (one length
    or a sequence of them), emulated.

    Inputs are uniform in [0, 1) rounded to ``input_format`` (positive terms: the running sum
    grows like ``n/4``, the hard case for a short accumulator); products are exact; the sum runs
    left to right in ``accumulator`` (:func:`accumulate`). One pass over the longest length gives
    every shorter one, since the partial sums are the shorter dot products. ``trials`` times the
    longest length is at most :data:`MAX_DOT_ELEMENTS`.
    """
    fmt_in, fmt_acc = _format("input_format", input_format), _format("accumulator", accumulator)
    if fmt_in.name not in INPUT_FORMATS:
        raise ValueError(
            f"input_format={fmt_in.name!r} must be a 16- or 8-bit format (bf16, fp16, e5m2, "
            "e4m3): their products are exact in fp32"
        )
    if fmt_acc.name not in ACCUMULATORS:
        raise ValueError(f"accumulator={fmt_acc.name!r} must be one of {', '.join(ACCUMULATORS)}")
    lengths = _lengths(lengths)
    trials = _trials(trials, lengths[-1])
    x, y = dot_inputs(lengths[-1], trials, fmt_in, seed)
    products = x * y
    sums = accumulate(products, fmt_acc)
    exact = np.cumsum(products, axis=-1)  # float64: exact to ~1e-16, far below any error here
    scale = np.cumsum(np.abs(products), axis=-1)
    idx = np.asarray(lengths) - 1
    with np.errstate(invalid="ignore"):  # 0 / 0 when every term so far is 0: no error
        relative = np.abs(sums[:, idx] - exact[:, idx]) / scale[:, idx]
    relative = np.where(scale[:, idx] > 0, relative, 0.0)
    return DotErrors(
        input_format=fmt_in.name,
        accumulator=fmt_acc.name,
        trials=int(x.shape[0]),
        lengths=lengths,
        mean_error=tuple(float(v) for v in relative.mean(axis=0)),
        max_error=tuple(float(v) for v in relative.max(axis=0)),
        bound=tuple(summation_bound(n, fmt_acc) for n in lengths),
        typical=tuple(typical_summation_error(n, fmt_acc) for n in lengths),
    )
