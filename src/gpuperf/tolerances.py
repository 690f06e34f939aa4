"""How close a kernel's answer must be to its reference: one table, used everywhere.

Tests, chapter notebooks and lab checks all compare a Triton kernel with a torch reference. The
tolerance depends on the precision the arithmetic ran in, not on the machine: fp32 kernels use
IEEE fp32 dot products by default (``tl.dot(..., input_precision="ieee")``), so the CPU
interpreter and a CUDA GPU agree within the same fp32 tolerance. Only when lower precision is
asked for — fp16, bf16, or TF32 (``matmul(..., tf32=True)``: 10 mantissa bits, like fp16) — is a
looser tolerance used, and it is the one below, on every device.

The numbers are relative and absolute tolerances for ``torch.testing.assert_close`` /
``numpy.allclose`` (``|actual - expected| <= atol + rtol * |expected|``), chosen with margin over
the rounding error of the course's kernels at the sizes the course runs (reductions of a few
thousand terms, accumulated in fp32).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ._validate import positive_float

__all__ = ["TOLERANCES", "Tolerance", "tolerance"]


@dataclass(frozen=True)
class Tolerance:
    """``rtol`` and ``atol`` for one precision (unpacks as ``rtol, atol = tolerance(...)``):
    finite and ≥ 0, so a comparison made with them can fail."""

    rtol: float
    atol: float

    def __post_init__(self) -> None:
        for name in ("rtol", "atol"):
            value = positive_float(name, getattr(self, name), allow_zero=True, maximum=1.0)
            object.__setattr__(self, name, value)

    def __iter__(self) -> Iterator[float]:
        return iter((self.rtol, self.atol))


#: (rtol, atol) by the precision the arithmetic ran in.
TOLERANCES: dict[str, Tolerance] = {
    "fp64": Tolerance(1e-10, 1e-12),
    "fp32": Tolerance(1e-4, 1e-5),
    "tf32": Tolerance(1e-2, 1e-2),
    "fp16": Tolerance(1e-2, 1e-2),
    "bf16": Tolerance(2e-2, 2e-2),
}

_TORCH_NAMES = {"float64": "fp64", "float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def tolerance(precision: Any) -> Tolerance:
    """The tolerance for a precision string (``"fp16"``) or a torch/numpy dtype."""
    if isinstance(precision, str):
        key = precision.strip().lower()
    else:
        key = _TORCH_NAMES.get(str(precision).removeprefix("torch."), str(precision))
    if not isinstance(key, str) or key not in TOLERANCES:
        valid = ", ".join(TOLERANCES)
        raise KeyError(f"no tolerance for precision {precision!r}; known: {valid}")
    return TOLERANCES[key]
