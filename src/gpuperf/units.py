"""Units, precisions and number formatting.

Inside gpuperf every quantity is in SI base units: bytes, bytes per second, FLOPs, FLOP/s and
seconds. On-chip sizes (shared memory, L2) are binary, as the CUDA documentation states them, so
``KiB``/``MiB`` exist alongside the decimal ``GB``/``TB`` used for DRAM and bandwidth. Conversion
to human units happens only when a number is printed, through the ``format_*`` helpers here.

Precisions are plain strings. Each has a storage size in bytes per element; ``tf32`` is stored as
a 32-bit float (the tensor core reads the top 19 bits) and ``fp4`` packs two values per byte.
"""

from __future__ import annotations

import math

KiB = 1024
MiB = 1024**2
GiB = 1024**3
KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12

#: Every precision the course knows, widest first.
PRECISIONS: tuple[str, ...] = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4")

_BYTES_PER_ELEMENT: dict[str, float] = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,
    "fp16": 2,
    "bf16": 2,
    "fp8": 1,
    "int8": 1,
    "fp4": 0.5,
}


def check_precision(precision: str) -> str:
    """Return ``precision`` if it is one of :data:`PRECISIONS`, else raise ``ValueError``."""
    if not isinstance(precision, str) or precision not in _BYTES_PER_ELEMENT:
        raise ValueError(
            f"precision={precision!r} is not a known precision; valid: {', '.join(PRECISIONS)}"
        )
    return precision


def bytes_per_element(precision: str) -> float:
    """Storage size of one element of ``precision`` in bytes (``fp4`` → 0.5)."""
    return _BYTES_PER_ELEMENT[check_precision(precision)]


def _scaled(value: float, steps: tuple[tuple[float, str], ...], unit: str, digits: int) -> str:
    if not math.isfinite(value):
        return f"{value} {unit}"
    for scale, prefix in steps:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


_DECIMAL = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def format_flops(flops_per_s: float, digits: int = 3) -> str:
    """``1.5e14`` → ``'150 TFLOP/s'``."""
    return _scaled(flops_per_s, _DECIMAL, "FLOP/s", digits)


def format_bandwidth(bytes_per_s: float, digits: int = 3) -> str:
    """``2.5e12`` → ``'2.5 TB/s'`` (decimal, as vendors quote bandwidth)."""
    return _scaled(bytes_per_s, _DECIMAL, "B/s", digits)


def format_bytes(n_bytes: float, digits: int = 3, binary: bool = False) -> str:
    """Decimal (``'80 GB'``) or binary (``'228 KiB'``) byte counts."""
    if binary:
        steps = ((GiB * 1024, "Ti"), (GiB, "Gi"), (MiB, "Mi"), (KiB, "Ki"))
        return _scaled(n_bytes, steps, "B", digits)
    return _scaled(n_bytes, _DECIMAL, "B", digits)


def format_seconds(seconds: float, digits: int = 3) -> str:
    """``4.1e-5`` → ``'41 µs'``."""
    if not math.isfinite(seconds):
        return f"{seconds} s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.{digits}g} {unit}"
    return f"{seconds / 1e-9:.{digits}g} ns"
