"""Validation and small helpers shared by the launchers.

Every launcher checks its inputs at the door so a wrong device, dtype, shape or tile size fails
with a message naming the value and the valid range, never deep inside Triton.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from .._validate import positive_int, power_of_two
from ..runtime import default_device, interpreting

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}


def precision_of(dtype: torch.dtype) -> str:
    """The course's precision string (``"fp16"``) for a torch dtype."""
    return _NAMES[dtype]


def expected_device() -> str:
    """Where kernel inputs must live: the course's one device (``runtime.default_device``)."""
    return default_device()


def check_tensor(
    name: str,
    t: object,
    *,
    dtypes: Iterable[torch.dtype] = FLOAT_DTYPES,
    ndim: int | tuple[int, ...] | None = None,
    contiguous: bool = True,
    allow_empty: bool = False,
) -> torch.Tensor:
    """Check one kernel input; raise ``TypeError``/``ValueError`` naming what is wrong."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    dtypes = tuple(dtypes)
    if t.dtype not in dtypes:
        valid = ", ".join(str(d).removeprefix("torch.") for d in dtypes)
        raise TypeError(f"{name}.dtype={t.dtype} is not supported; expected one of {valid}")
    device = expected_device()
    if t.device.type != device:
        where = "a CUDA GPU" if device == "cuda" else "the CPU (Triton's interpreter, no GPU here)"
        raise ValueError(
            f"{name} is on device {t.device}; kernels here run on {where}: "
            f"move it with .to({device!r})"
        )
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if t.ndim not in allowed:
            raise ValueError(
                f"{name} has shape {tuple(t.shape)} ({t.ndim}-D); expected "
                f"{' or '.join(f'{d}-D' for d in allowed)}"
            )
    if contiguous and not t.is_contiguous():
        raise ValueError(
            f"{name} with shape {tuple(t.shape)} and strides {t.stride()} is not "
            "contiguous; call .contiguous() first"
        )
    if not allow_empty and t.numel() == 0:
        raise ValueError(f"{name} has shape {tuple(t.shape)} with no elements")
    return t


def reject_bf16_in_interpreter(t: torch.Tensor, what: str) -> None:
    """bf16 arithmetic is wrong in Triton's interpreter (triton #11584): refuse, do not mislead."""
    if t.dtype == torch.bfloat16 and interpreting():
        raise TypeError(
            f"{what}: dtype=bfloat16 cannot run in Triton's CPU interpreter (its bf16 arithmetic "
            "is wrong, triton #11584); use float16/float32 here, or compile for sm_80/sm_90 "
            "with gpuperf.inspect"
        )


def block(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """A tile size: a power of two in [minimum, maximum]."""
    return power_of_two(name, value, minimum, maximum)


def count(name: str, value: object, minimum: int = 1) -> int:
    return positive_int(name, value, minimum)


def same(name_a: str, a: torch.Tensor, name_b: str, b: torch.Tensor) -> None:
    if a.shape != b.shape:
        raise ValueError(
            f"{name_a} has shape {tuple(a.shape)} but {name_b} has shape "
            f"{tuple(b.shape)}; they must match"
        )
    if a.dtype != b.dtype:
        raise TypeError(f"{name_a}.dtype={a.dtype} but {name_b}.dtype={b.dtype}; they must match")


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_power_of_2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


__all__ = [
    "FLOAT_DTYPES",
    "block",
    "cdiv",
    "check_tensor",
    "count",
    "default_device",
    "expected_device",
    "next_power_of_2",
    "precision_of",
    "reject_bf16_in_interpreter",
    "same",
]
