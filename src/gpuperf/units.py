"""Units, precisions and number formatting.

Inside gpuperf every quantity is in SI base units: bytes, bytes per second, FLOPs, FLOP/s and
seconds. On-chip sizes (shared memory, L2) are binary, as the CUDA documentation states them, so
``KiB``/``MiB`` exist alongside the decimal ``GB``/``TB`` used for DRAM and bandwidth. Conversion
to human units happens only when a number is printed, through the ``format_*`` helpers here.

Precisions are plain strings. Each has a storage size in bytes per element; ``tf32`` is stored as
a 32-bit float (the tensor core reads the top 19 bits), ``fp6`` (E2M3/E3M2, as MXFP6 blocks use
it) packs four values in three bytes, and ``fp4`` packs two values per byte. The storage sizes
leave out block scales (one byte per 32 values for MXFP6/MXFP4, per 16 for NVFP4), which the
cost models that use them add.
"""

from __future__ import annotations

import math

from ._validate import flag, positive_int, real_number

KiB = 1024
MiB = 1024**2
GiB = 1024**3
KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12

#: Every precision the course knows, widest first.
PRECISIONS: tuple[str, ...] = (
    "fp64",
    "fp32",
    "tf32",
    "fp16",
    "bf16",
    "fp8",
    "int8",
    "fp6",
    "fp4",
)

_BYTES_PER_ELEMENT: dict[str, float] = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,
    "fp16": 2,
    "bf16": 2,
    "fp8": 1,
    "int8": 1,
    "fp6": 0.75,
    "fp4": 0.5,
}


def check_precision(precision: str, name: str = "precision") -> str:
    """Return ``precision`` if it is one of :data:`PRECISIONS`, else raise ``ValueError``.

    ``name`` is the argument named in the message (``a_precision``, ``weight_precision``...).
    """
    if type(name) is not str:
        raise TypeError(f"name={name!r} must be the argument's name (a string)")
    if not isinstance(precision, str) or precision not in _BYTES_PER_ELEMENT:
        raise ValueError(
            f"{name}={precision!r} is not a known precision; valid: {', '.join(PRECISIONS)}"
        )
    return precision


def bytes_per_element(precision: str) -> float:
    """Storage size of one element of ``precision`` in bytes (``fp6`` → 0.75, ``fp4`` → 0.5)."""
    return _BYTES_PER_ELEMENT[check_precision(precision)]


#: Most significant digits a ``format_*`` helper prints (float64 holds 17).
MAX_DIGITS = 17


def _number(name: str, value: object, digits: object) -> tuple[float, int]:
    return real_number(name, value), positive_int("digits", digits, maximum=MAX_DIGITS)


def _fits(mantissa: float, digits: int) -> bool:
    """Whether ``mantissa`` still reads ≥ 1 once rounded to ``digits`` significant digits, so
    0.9999996 µs is shown as ``1 µs``, never as ``1e+03 ns``."""
    return abs(float(f"{mantissa:.{digits}g}")) >= 1


def _scaled(value: float, steps: tuple[tuple[float, str], ...], unit: str, digits: int) -> str:
    if not math.isfinite(value):
        return f"{value} {unit}"
    for scale, prefix in steps:
        if _fits(value / scale, digits):
            return f"{value / scale:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


_DECIMAL = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def format_flops(flops_per_s: float, digits: int = 3) -> str:
    """``1.5e14`` → ``'150 TFLOP/s'``."""
    flops_per_s, digits = _number("flops_per_s", flops_per_s, digits)
    return _scaled(flops_per_s, _DECIMAL, "FLOP/s", digits)


def format_bandwidth(bytes_per_s: float, digits: int = 3) -> str:
    """``2.5e12`` → ``'2.5 TB/s'`` (decimal, as vendors quote bandwidth)."""
    bytes_per_s, digits = _number("bytes_per_s", bytes_per_s, digits)
    return _scaled(bytes_per_s, _DECIMAL, "B/s", digits)


def format_bytes(n_bytes: float, digits: int = 3, binary: bool = False) -> str:
    """Decimal (``'80 GB'``) or binary (``'228 KiB'``) byte counts."""
    n_bytes, digits = _number("n_bytes", n_bytes, digits)
    if flag("binary", binary):
        steps = ((GiB * 1024, "Ti"), (GiB, "Gi"), (MiB, "Mi"), (KiB, "Ki"))
        return _scaled(n_bytes, steps, "B", digits)
    return _scaled(n_bytes, _DECIMAL, "B", digits)


def format_seconds(seconds: float, digits: int = 3) -> str:
    """``4.1e-5`` → ``'41 µs'``."""
    seconds, digits = _number("seconds", seconds, digits)
    if not math.isfinite(seconds):
        return f"{seconds} s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if _fits(seconds / scale, digits):
            return f"{seconds / scale:.{digits}g} {unit}"
    return f"{seconds / 1e-9:.{digits}g} ns"


__all__ = [
    "GB",
    "KB",
    "MAX_DIGITS",
    "MB",
    "PRECISIONS",
    "TB",
    "GiB",
    "KiB",
    "MiB",
    "bytes_per_element",
    "check_precision",
    "format_bandwidth",
    "format_bytes",
    "format_flops",
    "format_seconds",
]
