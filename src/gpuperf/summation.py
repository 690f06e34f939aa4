"""How a long sum is rounded: the accumulator's width, its rounding mode and the order of adds.

:func:`gpuperf.numerics.accumulate` adds terms left to right and rounds every partial sum to the
nearest number of an fp32, bf16 or fp16 accumulator. Real hardware and libraries differ from that
in three ways, each of which this module emulates in numpy so its error can be computed without
the hardware:

* **A narrower accumulator, promoted every few terms.** DeepSeek-V3 (§3.3.2 of its report)
  found that the FP8 tensor cores of its H800s (Hopper) keep only about 14 bits while they
  accumulate a long dot product, and chose *promotion* for its own kernels: after every
  N_C = 128 products (four WGMMA instructions) the tensor core's partial sum is added into an
  FP32 register on the CUDA cores. That is DeepSeek's choice, not a default of the hardware or
  of the libraries (the report notes that a few FP8 frameworks keep the narrow accumulation by
  default). :data:`FP8_MMA_ACCUMULATOR` models that accumulator as a float with 14 significant
  bits (the report's figure) that truncates, i.e. rounds toward zero (an assumption: the
  datapath is undocumented), and :func:`blocked_sum` with ``outer="fp32"`` is the promotion.
* **Another rounding mode.** Besides round to nearest (ties to even), hardware adders truncate
  (round toward zero: every error has the same sign, so they add up linearly), and *stochastic
  rounding* rounds x between neighbours lo < x < hi up to hi with probability
  (x − lo)/(hi − lo), the fraction of the gap already covered (40 % of the way up: a 40 %
  chance), so each rounding error has mean zero (Gupta et al. 2015): errors add like a random
  walk and a sum of small terms never stalls. Blackwell converts to FP4/FP8 with stochastic
  rounding in hardware, and NVFP4 training uses it for gradients (Transformer Engine's NVFP4
  recipe).
* **Another order.** Pairwise (tree) summation adds neighbours, then neighbours of those sums:
  every term meets ⌈log2 n⌉ roundings instead of up to n − 1, so the worst-case bound is
  γ_⌈log2 n⌉ instead of γ_n (Higham, *Accuracy and Stability of Numerical Algorithms*, §4.2).
  Blocked summation adds blocks of ``block`` terms left to right and then the block sums:
  (block − 1) + (⌈n/block⌉ − 1) additions after a term's own, fewest near block = √n.
  :func:`roundings` counts what :func:`error_bound` charges, which is one more at each level:
  a term's own addition rounds too, since a product the accumulator cannot hold is rounded as
  it enters (block and ⌈n/block⌉; n for the sequential sum). A GPU reduction is
  blocked: each thread sums its own chunk of the input, then the threads' partial sums are
  combined (within a warp, across the warps of a block, across blocks); :func:`blocked_sum`
  with ``outer`` equal to ``accumulator`` models it with two levels.

The error measure is the one of :func:`gpuperf.numerics.dot_errors`: |ŝ − s| / Σ|x_i·y_i| for
dot products of random inputs in [0, 1) rounded to an input format (positive terms: the hard case
for a short accumulator), with ``s`` exact in float64. Formats are
:class:`gpuperf.numerics.FloatFormat` objects or their names; rounding keeps a format's
subnormals and its exponent range.

Limits: the emulation adds exact products (a product of two 8- or 16-bit numbers is exact) and
rounds each sum once; hardware may align several products before one rounding. Stochastic
rounding uses numpy's generator with a fixed ``seed``, so results are reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import numerics
from ._validate import MAX_QUANTITY, choice, name_string, optional, positive_int, show
from .numerics import FloatFormat

__all__ = [
    "FP8_MMA_ACCUMULATOR",
    "MAX_TERMS",
    "MAX_VALUES",
    "ORDERS",
    "ROUNDINGS",
    "SummationErrors",
    "blocked_sum",
    "error_bound",
    "pairwise_sum",
    "round_to_format",
    "roundings",
    "running_sum",
    "summation_errors",
]

#: Rounding modes: to nearest (ties to even), toward zero (truncation), stochastic.
ROUNDINGS: tuple[str, ...] = ("nearest", "toward_zero", "stochastic")
#: Orders of summation: left to right, pairwise (a tree), blocks then their sums.
ORDERS: tuple[str, ...] = ("sequential", "pairwise", "blocked")
#: The accumulator of Hopper's FP8 tensor cores as DeepSeek-V3 describes it: about 14
#: significant bits (13 stored mantissa bits) with fp32's exponent range.
FP8_MMA_ACCUMULATOR = FloatFormat("fp8-mma-14bit", 8, 13)
#: Longest sum the emulation runs (one numpy step per term).
MAX_TERMS = 2**16
#: Most values one call holds (trials × terms): 32 MiB per float64 array.
MAX_VALUES = 2**22


def _format(argument: str, value: object) -> FloatFormat:
    if isinstance(value, FloatFormat):
        return value
    if not isinstance(value, str):
        raise TypeError(
            f"{argument}={show(value)} must be a format name ({', '.join(numerics.FORMATS)}) "
            "or a gpuperf.numerics.FloatFormat"
        )
    try:
        return numerics.float_format(value)
    except ValueError:
        raise ValueError(
            f"{argument}={value!r} is not a known format; valid: {', '.join(numerics.FORMATS)}"
        ) from None


def _values(name: str, values: Any, max_terms: int = MAX_TERMS) -> np.ndarray:
    message = f"{name}={show(values)} must be an array of finite real numbers"
    if values is None or isinstance(values, str | bytes | bool | np.bool_ | dict):
        raise ValueError(message)
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(message) from None
    if raw.dtype.kind not in "iuf" or raw.ndim == 0 or raw.size == 0:
        raise ValueError(message)
    if raw.size > MAX_VALUES or raw.shape[-1] > max_terms:
        raise ValueError(
            f"{name} has shape {raw.shape}: at most {max_terms} on the last axis and "
            f"{MAX_VALUES} values in all"
        )
    array = raw.astype(np.float64)
    if not np.all(np.isfinite(array)) or np.max(np.abs(array)) > MAX_QUANTITY:
        raise ValueError(f"{message} of magnitude ≤ {MAX_QUANTITY:g}")
    return array


def _rounder(fmt: FloatFormat, rounding: str, seed: int) -> Any:
    """A function x ↦ x rounded to ``fmt`` in ``rounding`` mode (float64 arrays, no checks)."""
    rng = np.random.default_rng(seed)

    def apply(x: np.ndarray) -> np.ndarray:
        magnitude = np.abs(x)
        _, exponent = np.frexp(magnitude)
        # |x| = f·2^e, f ∈ [0.5, 1): the leading bit is worth 2^(e−1); below the normal range the
        # spacing stays that of the smallest binade (subnormals).
        quantum = np.ldexp(1.0, np.maximum(exponent - 1, fmt.min_exponent) - fmt.mantissa_bits)
        units = magnitude / quantum  # exact: a division by a power of two
        if rounding == "nearest":
            units = np.round(units)  # ties to even
        elif rounding == "toward_zero":
            units = np.floor(units)
        else:
            lower = np.floor(units)
            units = lower + (rng.random(units.shape) < units - lower)  # up with P = distance
        rounded = units * quantum
        with np.errstate(over="ignore"):
            rounded = np.where(rounded > fmt.largest_finite, np.inf, rounded)
        return np.copysign(rounded, x)

    return apply


def _checked(rounding: object, seed: object) -> tuple[str, int]:
    return (
        choice("rounding", rounding, ROUNDINGS),
        positive_int("seed", seed, minimum=0, maximum=2**32 - 1),
    )


def round_to_format(
    values: Any, format: str | FloatFormat, rounding: str = "nearest", *, seed: int = 0
) -> np.ndarray:
    """``values`` rounded to ``format`` in ``rounding`` mode, as float64 (with subnormals).

    ``"nearest"`` equals :func:`gpuperf.numerics.round_to` (tests check it);
    ``"toward_zero"`` drops the bits below the format's last place; ``"stochastic"`` rounds up
    with probability (x − lower neighbour) / (gap), so the result's expected value is x. A value
    beyond the largest finite number becomes ±inf.
    """
    fmt = _format("format", format)
    rounding, seed = _checked(rounding, seed)
    x = _values("values", values, MAX_VALUES)
    return _rounder(fmt, rounding, seed)(x)


def _check_finite(sums: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    if not np.all(np.isfinite(sums)):
        raise ValueError(
            f"a partial sum passes {fmt.name}'s largest finite value {fmt.largest_finite:g}: "
            "the terms overflow the accumulator"
        )
    return sums


def running_sum(
    terms: Any,
    accumulator: str | FloatFormat = "fp32",
    rounding: str = "nearest",
    *,
    seed: int = 0,
) -> np.ndarray:
    """Left-to-right partial sums along the last axis, each rounded to ``accumulator``.

    Entry ``[..., j]`` is the sum of the first j + 1 terms as the accumulator holds it. Each step
    adds one term to the rounded running sum exactly (in float64) and rounds once.
    """
    fmt = _format("accumulator", accumulator)
    rounding, seed = _checked(rounding, seed)
    x = _values("terms", terms)
    rounder = _rounder(fmt, rounding, seed)
    sums = np.empty_like(x)
    acc = np.zeros(x.shape[:-1])
    for j in range(x.shape[-1]):
        acc = rounder(acc + x[..., j])
        sums[..., j] = acc
    return _check_finite(sums, fmt)


def blocked_sum(
    terms: Any,
    block: int,
    accumulator: str | FloatFormat = FP8_MMA_ACCUMULATOR,
    outer: str | FloatFormat = "fp32",
    rounding: str = "toward_zero",
    *,
    seed: int = 0,
) -> np.ndarray:
    """Sums of every prefix when blocks of ``block`` terms are summed in ``accumulator`` and
    each block's sum is then added, rounded to nearest, into a running sum in ``outer``.

    The defaults are DeepSeek-V3's promotion: a 14-bit truncating tensor-core accumulator whose
    partial sum moves into an fp32 register every ``block`` (N_C = 128) terms. Entry ``[..., j]``
    is what the kernel would return for a dot product of length j + 1: the promoted sum plus the
    block in progress, added in ``outer``. ``block`` ≥ the length is one block: no promotion.
    """
    inner = _format("accumulator", accumulator)
    outer_fmt = _format("outer", outer)
    rounding, seed = _checked(rounding, seed)
    x = _values("terms", terms)
    block = positive_int("block", block, maximum=MAX_TERMS)
    inner_round = _rounder(inner, rounding, seed)
    outer_round = _rounder(outer_fmt, "nearest", seed)
    sums = np.empty_like(x)
    promoted = np.zeros(x.shape[:-1])
    partial = np.zeros(x.shape[:-1])
    for j in range(x.shape[-1]):
        partial = inner_round(partial + x[..., j])
        sums[..., j] = outer_round(promoted + partial)
        if (j + 1) % block == 0:
            promoted, partial = sums[..., j], np.zeros(x.shape[:-1])
    _check_finite(sums, inner)
    return _check_finite(sums, outer_fmt)


def pairwise_sum(
    terms: Any,
    accumulator: str | FloatFormat = "fp32",
    rounding: str = "nearest",
    *,
    seed: int = 0,
) -> np.ndarray:
    """The sum along the last axis by pairwise (tree) summation, every add rounded.

    Neighbours are added in pairs, then the pair sums in pairs, …: ⌈log2 n⌉ levels (an odd
    element out waits for the next level). A GPU reduction is not this: its threads first sum
    chunks serially (:func:`blocked_sum`).
    """
    fmt = _format("accumulator", accumulator)
    rounding, seed = _checked(rounding, seed)
    level = _values("terms", terms)
    rounder = _rounder(fmt, rounding, seed)
    while level.shape[-1] > 1:
        odd = level.shape[-1] % 2
        pairs = rounder(level[..., 0 : level.shape[-1] - odd : 2] + level[..., 1::2])
        level = np.concatenate([pairs, level[..., -1:]], axis=-1) if odd else pairs
    return _check_finite(level[..., 0], fmt)


def roundings(n: int, order: str = "sequential", *, block: int = 128) -> tuple[int, int]:
    """How many roundings a term meets at worst: (in the accumulator, in ``outer``).

    Counted as the emulation rounds: every addition rounds, a term's own addition included (a
    product the accumulator cannot hold exactly is rounded as it enters). Sequential: the first
    term enters and then meets n − 1 more additions, (n, 0). Pairwise: one per level of the
    tree, (⌈log2 n⌉, 0) (the leaves are never rounded alone). Blocked: the ``block`` roundings of
    its block (its own and block − 1 more) and one in ``outer`` for each block sum added there,
    (min(block, n), ⌈n/block⌉). These are the exponents of :func:`error_bound`, which is
    therefore an upper bound on the prose count (b − 1) + (⌈n/b⌉ − 1) of additions after a
    term's own.
    """
    n = positive_int("n", n, maximum=2**53)
    order = choice("order", order, ORDERS)
    block = positive_int("block", block, maximum=2**53)
    if order == "sequential":
        return n, 0
    if order == "pairwise":
        return math.ceil(math.log2(n)), 0
    return min(block, n), math.ceil(n / block)


def error_bound(
    n: int,
    accumulator: str | FloatFormat = "fp32",
    order: str = "sequential",
    rounding: str = "nearest",
    *,
    block: int = 128,
    outer: str | FloatFormat = "fp32",
) -> float:
    """Worst-case relative error of a sum of ``n`` terms (relative to Σ|terms|).

    A term that meets k roundings of unit roundoff u is off by at most (1 + u)^k − 1; u is
    2^−(M+1) for round to nearest and 2^−M (a whole last place: truncation and stochastic
    rounding can land on the far neighbour) for the others. The k are :func:`roundings`, each
    term's own (first) addition included: sequential k = n; pairwise k = ⌈log2 n⌉; blocked,
    min(block, n) roundings of the accumulator and ⌈n/block⌉ of ``outer`` (to nearest).
    Stochastic rounding's *typical* error is far smaller (a random walk, ~√n·u), but this is
    the worst case. Returns ``inf`` past e^700: the bound then says nothing.
    """
    n = positive_int("n", n, maximum=2**53)
    fmt = _format("accumulator", accumulator)
    order = choice("order", order, ORDERS)
    rounding = choice("rounding", rounding, ROUNDINGS)
    block = positive_int("block", block, maximum=2**53)
    outer_format = _format("outer", outer)
    u = fmt.unit_roundoff if rounding == "nearest" else fmt.machine_epsilon
    inner_k, outer_k = roundings(n, order, block=block)
    exponent = inner_k * math.log1p(u) + outer_k * math.log1p(outer_format.unit_roundoff)
    return math.inf if exponent > 700 else math.expm1(exponent)  # inf: no useful bound


@dataclass(frozen=True)
class SummationErrors:
    """Relative errors of emulated dot products by length (see :func:`summation_errors`).

    ``mean_error[i]`` / ``max_error[i]``: mean and worst over ``trials`` random vectors of length
    ``lengths[i]`` of |ŝ − s| / Σ|x_j·y_j|; ``bound[i]``: :func:`error_bound` at that length
    (``inf`` where the worst case exceeds e^700: no bound worth the name).
    """

    label: str
    input_format: str
    accumulator: str
    order: str
    rounding: str
    block: int | None
    trials: int
    lengths: tuple[int, ...]
    mean_error: tuple[float, ...]
    max_error: tuple[float, ...]
    bound: tuple[float, ...]

    def __post_init__(self) -> None:
        for name in ("label", "input_format", "accumulator"):
            name_string(name, getattr(self, name))
        choice("order", self.order, ORDERS)
        choice("rounding", self.rounding, ROUNDINGS)
        optional("block", self.block, positive_int, maximum=2**53)
        positive_int("trials", self.trials, maximum=numerics.MAX_TRIALS)
        if not isinstance(self.lengths, tuple) or not self.lengths:
            raise ValueError(f"lengths={show(self.lengths)} must be a non-empty tuple")
        for name in ("mean_error", "max_error", "bound"):
            column = getattr(self, name)
            if not isinstance(column, tuple) or len(column) != len(self.lengths):
                raise ValueError(f"{name} must hold one value per length ({len(self.lengths)})")
            for value in column:
                finite = math.isfinite(value) if isinstance(value, float) else False
                if not (isinstance(value, float) and value >= 0 and (finite or name == "bound")):
                    raise ValueError(f"{name} entry {value!r} must be a float ≥ 0 (finite)")


def summation_errors(
    lengths: Any,
    accumulator: str | FloatFormat = "fp32",
    *,
    order: str = "sequential",
    rounding: str = "nearest",
    block: int = 128,
    outer: str | FloatFormat = "fp32",
    input_format: str | FloatFormat = "e4m3",
    trials: int = 32,
    seed: int = 0,
) -> SummationErrors:
    """Error of dot products of every length in ``lengths`` summed in ``order`` and ``rounding``.

    Inputs are :func:`gpuperf.numerics.dot_inputs` (uniform in [0, 1) rounded to
    ``input_format``, the same draw for every order, so the rows of a table differ only in how
    they sum). ``order="blocked"`` with the defaults (a 14-bit truncating accumulator, blocks of
    128, an fp32 ``outer``) is FP8 tensor-core accumulation with DeepSeek-V3's promotion;
    ``order="sequential"`` with that accumulator is the same without promotion. The stochastic
    draws use ``seed`` too. ``trials`` × the longest length ≤ :data:`MAX_VALUES`.
    """
    fmt = _format("accumulator", accumulator)
    fmt_in = _format("input_format", input_format)
    if fmt_in.name not in numerics.INPUT_FORMATS:
        raise ValueError(
            f"input_format={fmt_in.name!r} must be one of {', '.join(numerics.INPUT_FORMATS)} "
            "(their products are exact)"
        )
    order = choice("order", order, ORDERS)
    rounding, seed = _checked(rounding, seed)
    block = positive_int("block", block, maximum=MAX_TERMS)
    outer_fmt = _format("outer", outer)
    if isinstance(lengths, int | np.integer) and not isinstance(lengths, bool):
        lengths = [lengths]
    if isinstance(lengths, str | bytes) or not hasattr(lengths, "__iter__"):
        raise TypeError(f"lengths={show(lengths)} must be a length or a sequence of lengths")
    found = tuple(sorted({positive_int("lengths", n, maximum=MAX_TERMS) for n in lengths}))
    if not found:
        raise ValueError("lengths must hold at least one length")
    trials = positive_int("trials", trials, maximum=numerics.MAX_TRIALS)
    if trials * found[-1] > MAX_VALUES:
        raise ValueError(
            f"trials={trials} × length {found[-1]} exceeds {MAX_VALUES} values: use fewer trials"
        )
    x, y = numerics.dot_inputs(found[-1], trials, fmt_in, seed)
    products = x * y
    exact = np.cumsum(products, axis=-1)
    scale = np.cumsum(np.abs(products), axis=-1)
    index = np.asarray(found) - 1
    if order == "sequential":
        got = running_sum(products, fmt, rounding, seed=seed)[:, index]
    elif order == "blocked":
        got = blocked_sum(products, block, fmt, outer_fmt, rounding, seed=seed)[:, index]
    else:
        got = np.stack(
            [pairwise_sum(products[:, :n], fmt, rounding, seed=seed) for n in found], axis=1
        )
    relative = np.abs(got - exact[:, index]) / np.where(scale[:, index] > 0, scale[:, index], 1)
    label = f"{order}, {fmt.name} accumulator, {rounding}"
    if order == "blocked":
        label += f", promoted to {outer_fmt.name} every {block}"
    return SummationErrors(
        label=label,
        input_format=fmt_in.name,
        accumulator=fmt.name,
        order=order,
        rounding=rounding,
        block=block if order == "blocked" else None,
        trials=trials,
        lengths=found,
        mean_error=tuple(float(v) for v in relative.mean(axis=0)),
        max_error=tuple(float(v) for v in relative.max(axis=0)),
        bound=tuple(
            error_bound(n, fmt, order, rounding, block=block, outer=outer_fmt) for n in found
        ),
    )
