"""Scaled low-precision formats: where a scale lives (MX, NVFP4 blocks) and when it is computed.

An 8-bit or 4-bit float covers so few binades that a tensor is stored as narrow *elements* times
*scales*. :func:`gpuperf.numerics.quantize` puts one fp32 scale on a whole tensor or on a block;
the formats Blackwell's tensor cores read natively fix the block and the scale's own format:

* **MX formats** (OCP Microscaling Formats v1.0, 2023): blocks of 32 elements share one E8M0
  scale — an 8-bit exponent with no mantissa, a power of two 2^(e − 127). The element is
  FP8 (E4M3, E5M2), FP6 (E2M3, E3M2) or FP4 (E2M1). The spec's conversion picks the shared
  exponent ⌊log2(amax)⌋ − emax, where emax is the exponent of the element's largest normal, and
  clamps elements that land above the largest normal (a block's top values can saturate:
  ``scale_rule="floor"``). Transformer Engine rounds the scale up instead, so nothing saturates
  (``scale_rule="ceil"``, its MXFP8 recipe). Cost: 8 bits per 32 elements, 0.25 bit each.
* **NVFP4** (NVIDIA; Transformer Engine's NVFP4 recipe and its paper, arXiv:2509.25149): FP4
  E2M1 elements, blocks of 16, and two levels of scale — an FP32 scale for the whole tensor,
  s_t = amax / (6 · 448), and per block an E4M3 scale, (block amax / 6) / s_t rounded to E4M3,
  which (unlike E8M0) has 3 mantissa bits, so a block's amax lands close to 6 rather than
  anywhere in a binade: in [4, 8) with the MX spec's power-of-two rule (clamped at 6), in (3, 6]
  with the rounded-up one. Cost: 8 bits per 16 elements, 0.5 bit each.

All elements round to nearest (ties to even) and saturate at their largest normal value.
:func:`block_quantization_error` measures a format as :func:`gpuperf.numerics.quantization_error`
measures fp32-scaled blocks: median and RMS relative error, values flushed to zero, and here also
the values that saturated.

**When the scale is computed.** *Current* scaling reads the tensor once for its amax and once to
cast it; *delayed* scaling (Transformer Engine's FP8 recipe) takes the amax from a history of the
previous steps — one read fewer, but a tensor whose amax grows beyond the history saturates, and
after a spike the scale stays too large for the length of the history and small values lose their
bits. :func:`scaling_over_steps` runs both over a sequence of tensors.

**What a format buys on a Blackwell tensor core.** NVIDIA's table of Blackwell tensor cores (the
NVFP4 report's Table 1) runs MXFP8 and MXFP6 at 2× the BF16 rate, MXFP4 and NVFP4 at 4× on GB200
and 6× on GB300; the datasheets give the same rates as the FP8/FP6 and FP4 peaks. So a scaled
format runs at its element's column of :mod:`gpuperf.hardware` (:data:`FORMAT_PRECISION`), and
:func:`scaled_format_peak` reads it, for the compute-capability-10 parts (B200, GB200, B300,
GB300) only: Hopper has FP8 but no block-scaled MMA, and a rate the table lacks (Blackwell
Ultra's FP6: NVIDIA's table gives GB300's MXFP6 only as 2× BF16) is an error, not a guess. The
tensor core applies each block's scale to its partial dot product and accumulates in FP32 (the
same report), so Hopper's FP8 promotion to CUDA cores is not part of the block-scaled MMA.

**Training recipes and what their scales cost.** :data:`BLOCK_SCALINGS` lists the scalings of
the 2026 recipes by tensor — DeepSeek-V3's FP8 (E4M3 everywhere, an FP32 scale per 1 × 128
activation tile and per 128 × 128 weight block), MXFP8 (an E8M0 scale per 32), NVFP4 (an E4M3
scale per 1 × 16 for activations and gradients, per 16 × 16 for weights, plus one FP32 scale per
tensor) — and :attr:`BlockScaling.bits_per_element` what an element costs with its share of the
scales. NVFP4 training applies a *random Hadamard transform* (RHT) of size 16 to both inputs of
the weight-gradient GEMM, along the dimension the GEMM sums over: H·diag(±1) is orthogonal, so
the product is unchanged while an outlier is spread over its 16 neighbours
(:func:`random_hadamard_transform`). :func:`gemm_quantization_error` quantizes both inputs of
such a GEMM, with or without the transform, and measures the product's error: on one GEMM the
transform helps MXFP4's power-of-two scales on heavy-tailed inputs and does little for NVFP4,
whose finer scale already places each block's amax; NVIDIA's case for it is a training ablation
(a 12B model over trillions of tokens), not one GEMM's error.

Limits: one-dimensional blocks of consecutive values (16 × 16 weight blocks are listed for their
cost, not quantized); round to nearest only (NVFP4 training rounds gradients
stochastically: :mod:`gpuperf.summation` has stochastic rounding); the element formats' NaN and
infinity encodings are never produced, since every conversion saturates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import numerics
from ._validate import choice, flag, name_string, positive_float, positive_int, show
from .cost import OpCost

__all__ = [
    "BLOCK_SCALED_MMA_CC",
    "BLOCK_SCALINGS",
    "ELEMENT_FORMATS",
    "FORMAT_PRECISION",
    "MAX_STEP_VALUES",
    "MAX_VALUES",
    "RECIPES",
    "SCALED_FORMATS",
    "SCALE_RULES",
    "BlockQuantization",
    "BlockScaling",
    "ElementFormat",
    "ScaledFormat",
    "ScaledPeak",
    "ScalingOverSteps",
    "block_quantization_error",
    "block_quantize",
    "cast_cost",
    "element_format",
    "gemm_quantization_error",
    "hadamard_matrix",
    "quantize_mx",
    "quantize_nvfp4",
    "random_hadamard_transform",
    "scaled_format",
    "scaled_format_peak",
    "scaling_over_steps",
]

#: Most values one call quantizes.
MAX_VALUES = 2**24


@dataclass(frozen=True)
class ElementFormat:
    """A narrow float by its bit layout, as the OCP MX spec defines it.

    ``specials``: ``"ieee"`` (the top exponent holds ±inf and NaN: E5M2), ``"nan_only"`` (only
    the all-ones pattern is NaN: E4M3) or ``"none"`` (every pattern is a number: FP6, FP4).
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    specials: str

    def __post_init__(self) -> None:
        name_string("name", self.name)
        bits = positive_int("exponent_bits", self.exponent_bits, maximum=8)
        object.__setattr__(self, "exponent_bits", bits)  # a plain int (numpy's breaks ldexp)
        mantissa = positive_int("mantissa_bits", self.mantissa_bits, minimum=0, maximum=10)
        object.__setattr__(self, "mantissa_bits", mantissa)
        object.__setattr__(self, "bias", positive_int("bias", self.bias, 0, 2**bits))
        choice("specials", self.specials, ("ieee", "nan_only", "none"))

    @property
    def bits(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def emax(self) -> int:
        """Unbiased exponent of the largest normal number."""
        top = 2**self.exponent_bits - 1
        return (top - 1 if self.specials == "ieee" else top) - self.bias

    @property
    def max_normal(self) -> float:
        """Largest finite value: 1.11…1 × 2^emax, or 1.11…10 × 2^emax when 1.11…1 is NaN."""
        lost = 1 if self.specials == "nan_only" else 0
        return math.ldexp(2 - 2.0 ** (lost - self.mantissa_bits), self.emax)

    @property
    def min_normal(self) -> float:
        return math.ldexp(1.0, 1 - self.bias)

    @property
    def min_subnormal(self) -> float:
        return math.ldexp(1.0, 1 - self.bias - self.mantissa_bits)

    @property
    def unit_roundoff(self) -> float:
        return math.ldexp(1.0, -self.mantissa_bits - 1)


#: The element formats of OCP MX v1.0 (E4M3 and E5M2 are also the FP8 formats of Hopper).
ELEMENT_FORMATS: dict[str, ElementFormat] = {
    f.name: f
    for f in (
        ElementFormat("e5m2", 5, 2, 15, "ieee"),
        ElementFormat("e4m3", 4, 3, 7, "nan_only"),
        ElementFormat("e3m2", 3, 2, 3, "none"),
        ElementFormat("e2m3", 2, 3, 1, "none"),
        ElementFormat("e2m1", 2, 1, 1, "none"),
    )
}
#: Scale rules for MX: the OCP spec's ⌊log2 amax⌋ − emax, or rounded up (Transformer Engine).
SCALE_RULES: tuple[str, ...] = ("floor", "ceil")
_E8M0_BIAS = 127


def element_format(name: str | ElementFormat) -> ElementFormat:
    """The :class:`ElementFormat` called ``name`` (``"e2m1"``, …); a format passes through."""
    return _element("name", name)


def _element(argument: str, name: object) -> ElementFormat:
    """:func:`element_format`, with errors that name the caller's ``argument``."""
    if isinstance(name, ElementFormat):
        return name
    if not isinstance(name, str):
        raise TypeError(
            f"{argument}={show(name)} must be an element format name: {', '.join(ELEMENT_FORMATS)}"
        )
    key = name.strip().lower()
    if key not in ELEMENT_FORMATS:
        raise ValueError(
            f"{argument}={name!r} is not an element format; valid: {', '.join(ELEMENT_FORMATS)}"
        )
    return ELEMENT_FORMATS[key]


@dataclass(frozen=True)
class ScaledFormat:
    """A block-scaled format: ``element`` values, one ``scale`` (``"e8m0"`` or ``"e4m3"``) per
    ``block_size`` consecutive values, and for NVFP4 one fp32 scale for the whole tensor."""

    name: str
    element: str
    block_size: int
    scale: str
    tensor_scale: bool = False

    def __post_init__(self) -> None:
        name_string("name", self.name)
        _element("element", self.element)
        block = positive_int("block_size", self.block_size, maximum=MAX_VALUES)
        object.__setattr__(self, "block_size", block)
        choice("scale", self.scale, ("e8m0", "e4m3"))
        flag("tensor_scale", self.tensor_scale)

    @property
    def bits_per_element(self) -> float:
        """Element bits plus the block scale's 8 bits shared by the block (the per-tensor fp32
        scale of NVFP4 is negligible and left out)."""
        return _element("element", self.element).bits + 8 / self.block_size


SCALED_FORMATS: dict[str, ScaledFormat] = {
    f.name: f
    for f in (
        ScaledFormat("mxfp8", "e4m3", 32, "e8m0"),
        ScaledFormat("mxfp8-e5m2", "e5m2", 32, "e8m0"),
        ScaledFormat("mxfp6", "e2m3", 32, "e8m0"),
        ScaledFormat("mxfp6-e3m2", "e3m2", 32, "e8m0"),
        ScaledFormat("mxfp4", "e2m1", 32, "e8m0"),
        ScaledFormat("nvfp4", "e2m1", 16, "e4m3", tensor_scale=True),
    )
}


def scaled_format(name: str | ScaledFormat) -> ScaledFormat:
    """The :class:`ScaledFormat` called ``name`` (``"mxfp4"``, ``"nvfp4"``, …)."""
    return _scaled("name", name)


def _scaled(argument: str, name: object) -> ScaledFormat:
    """:func:`scaled_format`, with errors that name the caller's ``argument``."""
    if isinstance(name, ScaledFormat):
        return name
    if not isinstance(name, str):
        raise TypeError(f"{argument}={show(name)} must be one of {', '.join(SCALED_FORMATS)}")
    key = name.strip().lower()
    if key not in SCALED_FORMATS:
        raise ValueError(f"{argument}={name!r} is not known; valid: {', '.join(SCALED_FORMATS)}")
    return SCALED_FORMATS[key]


#: The precision column of :mod:`gpuperf.hardware` whose tensor-core rate each scaled format
#: runs at: MXFP8/MXFP6 at 2× BF16 and MXFP4/NVFP4 at 4× (GB200) or 6× (GB300), NVIDIA's table of
#: Blackwell tensor cores (NVFP4 report, arXiv:2509.25149, Table 1).
FORMAT_PRECISION: dict[str, str] = {
    "mxfp8": "fp8",
    "mxfp8-e5m2": "fp8",
    "mxfp6": "fp6",
    "mxfp6-e3m2": "fp6",
    "mxfp4": "fp4",
    "nvfp4": "fp4",
}
#: Compute capabilities whose tensor cores read block scales (tcgen05: sm_100 and sm_103).
BLOCK_SCALED_MMA_CC: tuple[tuple[int, int], ...] = ((10, 0), (10, 3))


@dataclass(frozen=True)
class ScaledPeak:
    """Dense tensor-core peak of a block-scaled ``format`` on ``chip`` (FLOP/s), the hardware
    column it comes from (``precision``), and its ratio to the chip's BF16 peak."""

    chip: str
    format: str
    precision: str
    peak_flops_per_s: float
    speedup_vs_bf16: float

    def __post_init__(self) -> None:
        for name in ("chip", "format", "precision"):
            name_string(name, getattr(self, name))
        for name in ("peak_flops_per_s", "speedup_vs_bf16"):
            positive_float(name, getattr(self, name))


def scaled_format_peak(chip_name: str, format: str | ScaledFormat = "nvfp4") -> ScaledPeak:
    """The dense peak at which ``chip_name``'s tensor cores multiply ``format`` operands.

    Only chips whose tensor cores take block scales (compute capability 10.0 or 10.3:
    B200, GB200, B300, GB300) are accepted; a precision a row lacks raises ``ValueError``
    naming the ones it has (B300's and GB300's FP6 rows are not in the hardware table).
    """
    from . import hardware

    fmt = _scaled("format", format)
    spec = hardware.chip(chip_name)
    if spec.compute_capability not in BLOCK_SCALED_MMA_CC:
        valid = [c.name for c in hardware.chips() if c.compute_capability in BLOCK_SCALED_MMA_CC]
        raise ValueError(
            f"chip_name={chip_name!r} has no block-scaled tensor-core MMA (compute capability "
            f"{spec.compute_capability}); chips that have one: {', '.join(valid)}"
        )
    precision = FORMAT_PRECISION[fmt.name]
    peak = spec.peak_flops(precision)
    return ScaledPeak(
        chip=spec.name,
        format=fmt.name,
        precision=precision,
        peak_flops_per_s=peak,
        speedup_vs_bf16=peak / spec.peak_flops("bf16"),
    )


def _values(values: Any) -> np.ndarray:
    message = f"values={show(values)} must be a non-empty array of finite real numbers"
    if values is None or isinstance(values, str | bytes | bool | np.bool_ | dict):
        raise ValueError(message)
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(message) from None
    if raw.dtype.kind not in "iuf" or raw.size == 0:
        raise ValueError(message)
    if raw.size > MAX_VALUES:
        raise ValueError(f"values has {raw.size} elements; at most {MAX_VALUES} are accepted")
    x = raw.astype(np.float64).ravel()
    amax = np.max(np.abs(x)) if np.all(np.isfinite(x)) else np.inf
    if amax > 1e30 or 0 < amax < 1e-30:
        raise ValueError(
            f"{message}, the largest magnitude 0 or between 1e-30 and 1e30 (an fp32 tensor "
            "scale must hold amax / (6 · 448))"
        )
    return x


def _round_saturating(x: np.ndarray, fmt: ElementFormat) -> np.ndarray:
    """Round to nearest (ties to even) in ``fmt``, with subnormals, saturating at max_normal."""
    magnitude = np.abs(x)
    _, exponent = np.frexp(magnitude)
    binade = np.maximum(exponent - 1, 1 - fmt.bias)
    quantum = np.ldexp(1.0, binade - fmt.mantissa_bits)
    rounded = np.minimum(np.round(magnitude / quantum) * quantum, fmt.max_normal)
    return np.copysign(rounded, x)


def _blocks(x: np.ndarray, block_size: int) -> np.ndarray:
    """``x`` as rows of ``block_size`` values, the last row padded with zeros."""
    n_blocks = -(-x.size // block_size)
    padded = np.zeros(n_blocks * block_size)
    padded[: x.size] = x
    return padded.reshape(n_blocks, block_size)


def _mx(
    x: np.ndarray, fmt: ElementFormat, block_size: int, scale_rule: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MX conversion of flat ``x``: (dequantized, scale exponents, saturated mask)."""
    blocks = _blocks(x, block_size)
    amax = np.max(np.abs(blocks), axis=1)
    safe = np.where(amax > 0, amax, 1.0)
    if scale_rule == "floor":
        exponent = np.frexp(safe)[1] - 1 - fmt.emax  # ⌊log2 amax⌋ − emax, exactly
    else:
        mantissa, power = np.frexp(safe / fmt.max_normal)
        exponent = np.where(mantissa == 0.5, power - 1, power)  # ⌈log2(amax / max_normal)⌉
    exponent = np.where(amax > 0, np.clip(exponent, -_E8M0_BIAS, _E8M0_BIAS), -_E8M0_BIAS)
    scale = np.ldexp(1.0, exponent)[:, None]
    scaled = blocks / scale  # exact: a power of two
    dequantized = _round_saturating(scaled, fmt) * scale
    saturated = np.abs(scaled) > fmt.max_normal
    return dequantized.ravel()[: x.size], exponent.astype(np.int64), saturated.ravel()[: x.size]


def quantize_mx(
    values: Any, element: str | ElementFormat = "e4m3", block_size: int = 32, *,
    scale_rule: str = "floor",
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(dequantized values, E8M0 scale exponents)`` of an MX format (OCP MX v1.0, §6.3).

    Per block of ``block_size`` consecutive values (the last may be shorter): the scale is
    X = 2^e with e = ⌊log2 amax⌋ − emax (``scale_rule="floor"``, the spec) or
    e = ⌈log2(amax / max_normal)⌉ (``"ceil"``: nothing saturates), clamped to E8M0's
    [−127, 127]; each element is round(v / X) in ``element`` (to nearest, saturating). A block
    of zeros gets e = −127.
    """
    fmt = _element("element", element)
    block_size = positive_int("block_size", block_size, maximum=MAX_VALUES)
    scale_rule = choice("scale_rule", scale_rule, SCALE_RULES)
    dequantized, exponent, _ = _mx(_values(values), fmt, block_size, scale_rule)
    return dequantized, exponent


def _nvfp4(x: np.ndarray, block_size: int) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """NVFP4 conversion of flat ``x``: (dequantized, block scales, tensor scale, saturated)."""
    e2m1, e4m3 = ELEMENT_FORMATS["e2m1"], ELEMENT_FORMATS["e4m3"]
    amax = float(np.max(np.abs(x)))
    tensor_scale = float(np.float32(amax / (e2m1.max_normal * e4m3.max_normal))) if amax else 1.0
    blocks = _blocks(x, block_size)
    block_amax = np.max(np.abs(blocks), axis=1)
    block_scale = _round_saturating(block_amax / e2m1.max_normal / tensor_scale, e4m3)
    total = (block_scale * tensor_scale)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(total > 0, blocks / np.where(total > 0, total, 1.0), 0.0)
    dequantized = _round_saturating(scaled, e2m1) * total
    saturated = np.abs(scaled) > e2m1.max_normal
    return (dequantized.ravel()[: x.size], block_scale, tensor_scale, saturated.ravel()[: x.size])


def quantize_nvfp4(values: Any, block_size: int = 16) -> tuple[np.ndarray, np.ndarray, float]:
    """``(dequantized values, E4M3 block scales, fp32 tensor scale)`` of NVFP4.

    Tensor scale s_t = amax / (6 · 448) (fp32; 1 for an all-zero tensor); block scale
    s_b = E4M3((block amax / 6) / s_t), rounded to nearest and saturating at 448; element
    q = E2M1(v / (s_t · s_b)) to nearest, saturating at ±6; value = q · s_b · s_t. A block
    whose scale rounds to zero in E4M3 is stored as zeros.
    """
    block_size = positive_int("block_size", block_size, maximum=MAX_VALUES)
    dequantized, block_scale, tensor_scale, _ = _nvfp4(_values(values), block_size)
    return dequantized, block_scale, tensor_scale


def _convert(x: np.ndarray, fmt: ScaledFormat, scale_rule: str) -> tuple[np.ndarray, np.ndarray]:
    if fmt.tensor_scale:
        dequantized, _, _, saturated = _nvfp4(x, fmt.block_size)
    else:
        dequantized, _, saturated = _mx(
            x, _element("element", fmt.element), fmt.block_size, scale_rule
        )
    return dequantized, saturated


def block_quantize(
    values: Any, format: str | ScaledFormat = "mxfp8", *, scale_rule: str = "floor"
) -> np.ndarray:
    """``values`` stored in the scaled ``format`` (:data:`SCALED_FORMATS`) and read back.

    ``scale_rule`` applies to the MX formats (:func:`quantize_mx`); NVFP4 has its own.
    """
    fmt = _scaled("format", format)
    scale_rule = choice("scale_rule", scale_rule, SCALE_RULES)
    return _convert(_values(values), fmt, scale_rule)[0]


@dataclass(frozen=True)
class BlockQuantization:
    """Error of a block-scaled format on one tensor (see :func:`block_quantization_error`).

    Over the nonzero values, r_i = |x̂_i − x_i| / |x_i|: ``median_relative_error`` and
    ``rms_relative_error`` (√mean r_i²); ``flushed_to_zero``: the fraction stored as 0;
    ``saturated``: the fraction whose scaled magnitude passed the element's largest normal
    and was clamped to it.
    """

    format: str
    block_size: int
    bits_per_element: float
    n_scales: int
    median_relative_error: float
    rms_relative_error: float
    flushed_to_zero: float
    saturated: float

    def __post_init__(self) -> None:
        name_string("format", self.format)
        positive_int("block_size", self.block_size, maximum=MAX_VALUES)
        positive_int("n_scales", self.n_scales)
        positive_float("bits_per_element", self.bits_per_element)
        for name in ("median_relative_error", "rms_relative_error"):
            positive_float(name, getattr(self, name), allow_zero=True, bounded=False)
        for name in ("flushed_to_zero", "saturated"):
            positive_float(name, getattr(self, name), allow_zero=True, maximum=1.0)


def block_quantization_error(
    values: Any, format: str | ScaledFormat = "mxfp8", *, scale_rule: str = "floor"
) -> BlockQuantization:
    """How well the scaled ``format`` stores ``values`` (the measures of
    :func:`gpuperf.numerics.quantization_error`, plus the fraction that saturated)."""
    fmt = _scaled("format", format)
    scale_rule = choice("scale_rule", scale_rule, SCALE_RULES)
    x = _values(values)
    nonzero = x != 0
    if not nonzero.any():
        raise ValueError("values are all zero: the relative error is undefined")
    dequantized, saturated = _convert(x, fmt, scale_rule)
    relative = np.abs(dequantized[nonzero] - x[nonzero]) / np.abs(x[nonzero])
    return BlockQuantization(
        format=fmt.name,
        block_size=fmt.block_size,
        bits_per_element=fmt.bits_per_element,
        n_scales=-(-x.size // fmt.block_size),
        median_relative_error=float(np.median(relative)),
        rms_relative_error=float(np.sqrt(np.mean(relative**2))),
        flushed_to_zero=float(np.mean(dequantized[nonzero] == 0)),
        saturated=float(np.mean(saturated[nonzero])),
    )


# --- training recipes: what scales cost, and the random Hadamard transform --------------------

_SCALE_BITS = {"fp32": 32, "e8m0": 8, "e4m3": 8}


@dataclass(frozen=True)
class BlockScaling:
    """How one tensor of a training recipe is scaled: ``element`` values, one ``scale``
    (``"fp32"``, ``"e8m0"`` or ``"e4m3"``) per ``block_rows`` × ``block_cols`` block, and an FP32
    scale for the whole tensor where ``tensor_scale``. ``source`` names where it is documented."""

    name: str
    element: str
    scale: str
    block_rows: int
    block_cols: int
    tensor_scale: bool
    source: str

    def __post_init__(self) -> None:
        for label in ("name", "source"):
            name_string(label, getattr(self, label))
        _element("element", self.element)
        choice("scale", self.scale, tuple(_SCALE_BITS))
        for label in ("block_rows", "block_cols"):
            value = positive_int(label, getattr(self, label), maximum=4096)
            object.__setattr__(self, label, value)
        flag("tensor_scale", self.tensor_scale)

    @property
    def block_elements(self) -> int:
        return self.block_rows * self.block_cols

    @property
    def scale_bits_per_element(self) -> float:
        """The block scale's bits shared by the block's elements (the per-tensor scale, 32 bits
        for a whole tensor, is left out: :meth:`bits_per_element` adds it for a given size)."""
        return _SCALE_BITS[self.scale] / self.block_elements

    def bits_per_element(self, n_elements: int | None = None) -> float:
        """Element bits + the block scale's share (+ 32 / ``n_elements`` for a tensor scale)."""
        bits = _element("element", self.element).bits + self.scale_bits_per_element
        if n_elements is not None:
            n = positive_int("n_elements", n_elements, maximum=2**62)
            bits += 32 / n if self.tensor_scale else 0.0
        return bits


#: The scalings of 2026's low-precision training recipes, by tensor.
BLOCK_SCALINGS: dict[str, BlockScaling] = {
    b.name: b
    for b in (
        BlockScaling("DeepSeek-V3 FP8, activations", "e4m3", "fp32", 1, 128, False, "DSV3"),
        BlockScaling("DeepSeek-V3 FP8, weights", "e4m3", "fp32", 128, 128, False, "DSV3"),
        BlockScaling("MXFP8, any tensor", "e4m3", "e8m0", 1, 32, False, "OCP-MX"),
        BlockScaling("NVFP4, activations and gradients", "e2m1", "e4m3", 1, 16, True, "NVFP4"),
        BlockScaling("NVFP4, weights (2D)", "e2m1", "e4m3", 16, 16, True, "NVFP4"),
    )
}

#: Largest Hadamard transform :func:`hadamard_matrix` builds.
MAX_HADAMARD = 256


def hadamard_matrix(size: int = 16) -> np.ndarray:
    """The ``size`` × ``size`` Sylvester Hadamard matrix divided by √size: orthogonal and
    symmetric, entries ±1/√size. ``size`` is a power of two from 2 to 256."""
    size = positive_int("size", size, minimum=2, maximum=MAX_HADAMARD)
    if size & (size - 1):
        raise ValueError(f"size={size} must be a power of two from 2 to {MAX_HADAMARD}")
    h = np.ones((1, 1))
    while h.shape[0] < size:
        h = np.block([[h, h], [h, -h]])
    return h / math.sqrt(size)


def _matrix(argument: str, values: Any) -> np.ndarray:
    x = _values(values)  # finite, non-empty, sized, magnitudes in range
    raw = np.asarray(values)
    if raw.ndim != 2:
        raise ValueError(f"{argument} has shape {raw.shape}; it must be a 2-D array (k × columns)")
    return x.reshape(raw.shape)


def random_hadamard_transform(values: Any, size: int = 16, seed: int = 0) -> np.ndarray:
    """``values`` (k × n) with every run of ``size`` consecutive rows multiplied by H·diag(s):
    H from :func:`hadamard_matrix`, s a random ±1 vector drawn from ``seed`` (one vector shared
    by every block, as in NVIDIA's NVFP4 recipe). The transform runs along the first axis — the
    dimension a GEMM ``aᵀ·b`` sums over — so transforming both inputs leaves the product
    unchanged: (H·D·a)ᵀ(H·D·b) = aᵀ·b. k must be a multiple of ``size``."""
    h = hadamard_matrix(size)
    seed = positive_int("seed", seed, minimum=0, maximum=2**32 - 1)
    x = _matrix("values", values)
    if x.shape[0] % size:
        raise ValueError(
            f"values has {x.shape[0]} rows; the transform needs a multiple of size={size}"
        )
    signs = np.random.default_rng(seed).choice([-1.0, 1.0], size)
    blocks = x.reshape(x.shape[0] // size, size, x.shape[1])
    return np.einsum("ij,bjn->bin", h * signs[None, :], blocks).reshape(x.shape)


def _quantize_columns(x: np.ndarray, fmt: ScaledFormat) -> np.ndarray:
    """``x`` (k × n) with each column stored in ``fmt``: blocks run along k (the GEMM's sum)."""
    return _convert(np.ascontiguousarray(x.T).ravel(), fmt, "floor")[0].reshape(x.T.shape).T


def gemm_quantization_error(
    a: Any, b: Any, format: str | ScaledFormat = "nvfp4", *, rht_size: int | None = None,
    seed: int = 0,
) -> float:  # fmt: skip
    """Relative error ‖Q(a)ᵀQ(b) − aᵀb‖_F / ‖aᵀb‖_F of a GEMM whose inputs ``a`` (k × m) and
    ``b`` (k × n) are stored in ``format`` with blocks along k, as a weight-gradient GEMM
    (Xᵀ·dY, summed over tokens) is. With ``rht_size``, both inputs first go through
    :func:`random_hadamard_transform` of that size (same ``seed``), which leaves the exact
    product unchanged. MX formats use the spec's scale rule."""
    fmt = _scaled("format", format)
    seed = positive_int("seed", seed, minimum=0, maximum=2**32 - 1)
    if rht_size is not None:
        rht_size = positive_int("rht_size", rht_size, minimum=2, maximum=MAX_HADAMARD)
        if rht_size & (rht_size - 1):
            raise ValueError(
                f"rht_size={rht_size} must be a power of two from 2 to {MAX_HADAMARD}"
            )
    x, y = _matrix("a", a), _matrix("b", b)
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"a has {x.shape[0]} rows and b {y.shape[0]}: both must have k rows")
    if x.shape[1] * y.shape[1] > MAX_VALUES:
        size = x.shape[1] * y.shape[1]
        raise ValueError(f"the product has {size} entries; at most {MAX_VALUES}")
    exact = x.T @ y
    norm = np.linalg.norm(exact)
    if norm == 0:
        raise ValueError("aᵀ·b is zero: the relative error is undefined")
    if rht_size is not None:
        x = random_hadamard_transform(x, rht_size, seed)
        y = random_hadamard_transform(y, rht_size, seed)
    approx = _quantize_columns(x, fmt).T @ _quantize_columns(y, fmt)
    return float(np.linalg.norm(approx - exact) / norm)


# --- when the scale is computed: current vs delayed scaling ------------------------------------

#: Scaling recipes of :func:`cast_cost`: amax of this tensor (current) or of a history (delayed).
RECIPES: tuple[str, ...] = ("current", "delayed")
#: Most steps × values :func:`scaling_over_steps` accepts.
MAX_STEP_VALUES = 2**22


@dataclass(frozen=True)
class ScalingOverSteps:
    """Per-tensor FP8 scaling over a sequence of steps, current vs delayed (one entry per step).

    ``amax[t]``: the step's own largest magnitude (current scaling's choice);
    ``delayed_amax[t]``: the largest of the previous ``history`` steps' amaxes (step 0, with no
    history, uses its own). For each recipe: the fraction of the step's nonzero values that
    ``saturated`` (clamped to the format's largest finite value), that were ``flushed`` to zero,
    the ``median_error`` and the ``rms_error`` (median and root-mean-square relative error over
    nonzero values). An over-large scale leaves the median alone — relative precision is the
    same throughout the normal range — and shows in the RMS, through the values it pushes into
    the subnormals.
    """

    format: str
    history: int
    amax: tuple[float, ...]
    delayed_amax: tuple[float, ...]
    saturated_current: tuple[float, ...]
    saturated_delayed: tuple[float, ...]
    flushed_current: tuple[float, ...]
    flushed_delayed: tuple[float, ...]
    median_error_current: tuple[float, ...]
    median_error_delayed: tuple[float, ...]
    rms_error_current: tuple[float, ...]
    rms_error_delayed: tuple[float, ...]

    def __post_init__(self) -> None:
        name_string("format", self.format)
        positive_int("history", self.history, maximum=10**6)
        if not isinstance(self.amax, tuple):
            raise ValueError(f"amax={show(self.amax)} must be a tuple with one value per step")
        steps = len(self.amax)
        for name in (
            "amax", "delayed_amax", "saturated_current", "saturated_delayed", "flushed_current",
            "flushed_delayed", "median_error_current", "median_error_delayed",
            "rms_error_current", "rms_error_delayed",
        ):  # fmt: skip
            column = getattr(self, name)
            if not isinstance(column, tuple) or len(column) != steps or not steps:
                raise ValueError(f"{name} must be a non-empty tuple with one value per step")
            for value in column:
                positive_float(name, value, allow_zero=True, bounded=False)


def scaling_over_steps(
    tensors: Any, format: str | numerics.FloatFormat = "e4m3", history: int = 16
) -> ScalingOverSteps:
    """Quantize each row of ``tensors`` (steps × values) with one scale per step, chosen two
    ways: from the row's own amax (current scaling) and from the largest amax of the previous
    ``history`` rows (delayed scaling, Transformer Engine's ``amax_history`` with its default
    "max" rule). The scale maps that amax onto ``format``'s largest finite value; the cast rounds
    to nearest and saturates (:func:`gpuperf.numerics.round_to`).
    """
    fmt = numerics.float_format(format)
    history = positive_int("history", history, maximum=10**6)
    message = f"tensors={show(tensors)} must be a 2-D array (steps × values) of finite numbers"
    if tensors is None or isinstance(tensors, str | bytes | bool | dict):
        raise ValueError(message)
    try:
        x = np.asarray(tensors)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(message) from None
    if x.dtype.kind not in "iuf" or x.ndim != 2 or x.size == 0:
        raise ValueError(message)
    if x.size > MAX_STEP_VALUES:
        raise ValueError(f"tensors has {x.size} values; at most {MAX_STEP_VALUES}")
    x = x.astype(np.float64)
    if not np.all(np.isfinite(x)) or np.max(np.abs(x)) > 1e30:
        raise ValueError(message)
    amax = np.max(np.abs(x), axis=1)
    if np.any(amax == 0) or np.any(amax < 1e-30):
        raise ValueError(f"{message}: every step needs a nonzero amax ≥ 1e-30")
    delayed = np.array(
        [amax[0] if t == 0 else amax[max(0, t - history) : t].max() for t in range(len(amax))]
    )
    columns: dict[str, list[float]] = {
        k: [] for k in ("sc", "sd", "fc", "fd", "ec", "ed", "rc", "rd")
    }
    for row, own, past in zip(x, amax, delayed, strict=True):
        nonzero = row != 0
        for key, reference in (("c", own), ("d", past)):
            scale = reference / fmt.largest_finite
            stored = numerics.round_to(row / scale, fmt, saturate=True) * scale
            relative = np.abs(stored[nonzero] - row[nonzero]) / np.abs(row[nonzero])
            columns["s" + key].append(float(np.mean(np.abs(row[nonzero]) > reference)))
            columns["f" + key].append(float(np.mean(stored[nonzero] == 0)))
            columns["e" + key].append(float(np.median(relative)))
            columns["r" + key].append(float(np.sqrt(np.mean(relative**2))))
    return ScalingOverSteps(
        format=fmt.name,
        history=history,
        amax=tuple(float(v) for v in amax),
        delayed_amax=tuple(float(v) for v in delayed),
        saturated_current=tuple(columns["sc"]),
        saturated_delayed=tuple(columns["sd"]),
        flushed_current=tuple(columns["fc"]),
        flushed_delayed=tuple(columns["fd"]),
        median_error_current=tuple(columns["ec"]),
        median_error_delayed=tuple(columns["ed"]),
        rms_error_current=tuple(columns["rc"]),
        rms_error_delayed=tuple(columns["rd"]),
    )


def cast_cost(n_elements: int, recipe: str = "current", input_precision: str = "bf16") -> OpCost:
    """HBM traffic of casting ``n_elements`` ``input_precision`` values to FP8 with a per-tensor
    scale, as a :class:`gpuperf.cost.OpCost`.

    Current scaling reads the tensor twice (once for the amax, once to cast) and writes one byte
    per element; delayed scaling reads it once, taking the amax from its history (and recording
    this tensor's amax while it casts). FLOPs: one multiply per element, plus one comparison for
    the amax pass of current scaling.
    """
    from .units import bytes_per_element, check_precision

    n = positive_int("n_elements", n_elements)
    recipe = choice("recipe", recipe, RECIPES)
    precision = check_precision(input_precision, "input_precision")
    reads = 2 if recipe == "current" else 1
    return OpCost(
        flops=float(n * (2 if recipe == "current" else 1)),
        bytes_read=float(reads * n * bytes_per_element(precision)),
        bytes_written=float(n),
        name=f"fp8 cast, {recipe} scaling",
    )
