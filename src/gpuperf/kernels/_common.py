"""Validation and small helpers shared by the launchers.

Every launcher checks its inputs at the door so a wrong device, dtype, shape or tile size fails
with a message naming the value and the valid range, never deep inside Triton.

The same checks hold on the CPU interpreter and on a GPU, so the interpreter refuses what a GPU
would refuse:

- **Grids.** A CUDA grid has at most 2³¹ − 1 programs on axis 0 and 65,535 on axes 1 and 2. The
  course's kernels launch 1-D grids (2-D tiles are folded into axis 0 and unfolded in the kernel
  with ``//`` and ``%``); :func:`check_grid` rejects anything larger, naming the axis.
- **Offsets.** ``pid * BLOCK`` and ``row * stride`` overflow int32 past 2³¹ elements; kernels
  compute them in int64 (``tl.program_id(0).to(tl.int64)``).
- **Feasibility.** ``num_warps`` is a power of two in 1–32, ``num_stages`` is in 1–8, and a
  launcher that stages tiles through shared memory compares its estimate with the device's
  per-block limit (:func:`check_shared_memory`; without a GPU, with the largest limit among the
  course's targets, the H100's) before anything is compiled.
- **Autograd.** Launchers other than FlashAttention have no backward: given an input that
  requires grad while grad mode is on, they raise (:func:`reject_autograd`) instead of
  returning a result silently cut from the graph.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from .._validate import choice, flag, positive_int, power_of_two, show
from ..runtime import default_device, has_cuda_gpu, interpreting

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: CUDA's grid limits: programs along axis 0, and along axes 1 and 2.
MAX_GRID_AXIS_0 = 2**31 - 1
MAX_GRID_AXIS_12 = 65_535
#: Largest element offset an int32 can hold; kernels that can pass it use int64 offsets.
INT32_MAX = 2**31 - 1
NUM_WARPS = (1, 2, 4, 8, 16, 32)
MAX_NUM_STAGES = 8
#: Chip whose shared-memory limit applies when no GPU is present (the largest course target).
CPU_REFERENCE_CHIP = "H100-SXM"
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


#: dtypes a torch reference accepts: the kernels' and float64, the exact reference.
REFERENCE_DTYPES = (torch.float64, *FLOAT_DTYPES)


def check_reference(
    name: str, t: object, *, ndim: int | tuple[int, ...] | None = None
) -> torch.Tensor:
    """Check one input of a torch reference (``<op>_ref``): a non-empty real floating tensor
    with values (not on the ``meta`` device), on any device. Integer, boolean and complex tensors
    are refused as the kernels refuse them, so a reference never answers what its kernel cannot."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype not in REFERENCE_DTYPES:
        valid = ", ".join(str(d).removeprefix("torch.") for d in REFERENCE_DTYPES)
        raise TypeError(f"{name}.dtype={t.dtype} is not supported; expected one of {valid}")
    if t.device.type == "meta":
        raise ValueError(f"{name} is on the meta device: it holds no values to compute with")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if t.ndim not in allowed:
            raise ValueError(
                f"{name} has shape {tuple(t.shape)} ({t.ndim}-D); expected "
                f"{' or '.join(f'{d}-D' for d in allowed)}"
            )
    if t.numel() == 0:
        raise ValueError(f"{name} has shape {tuple(t.shape)} with no elements")
    return t


#: Architectures the launchers pick configurations for (``"cpu"``: the interpreter).
ARCHS = ("sm_75", "sm_80", "sm_90", "cpu")


def arch_name(value: object) -> str:
    """``arch``: one of :data:`ARCHS`."""
    return choice("arch", value, ARCHS)


def element_size(value: object) -> int:
    """Bytes per element of a tensor a kernel stages: 1, 2, 4 or 8."""
    return choice("element_size", value, (1, 2, 4, 8))


def float_dtype(name: str, value: object) -> torch.dtype:
    """One of the kernels' floating dtypes (a ``torch.dtype``, not a string)."""
    if not isinstance(value, torch.dtype) or value not in FLOAT_DTYPES:
        valid = ", ".join(f"torch.{str(d).removeprefix('torch.')}" for d in FLOAT_DTYPES)
        raise TypeError(f"{name}={show(value)} must be one of {valid}")
    return value


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


def warps(value: object) -> int:
    """``num_warps``: a power of two in 1–32 (32 warps = 1024 threads, CUDA's block limit)."""
    return power_of_two("num_warps", value, NUM_WARPS[0], NUM_WARPS[-1])


def stages(value: object) -> int:
    """``num_stages``: 1 (no pipelining) to :data:`MAX_NUM_STAGES` buffered loads in flight."""
    result = positive_int("num_stages", value, 1)
    if result > MAX_NUM_STAGES:
        raise ValueError(f"num_stages={value!r} must be an integer in 1–{MAX_NUM_STAGES}")
    return result


def check_grid(grid: tuple[int, ...], what: str) -> tuple[int, ...]:
    """Return ``grid`` if every axis is within CUDA's limits, else raise naming the axis."""
    for axis, programs in enumerate(grid):
        limit = MAX_GRID_AXIS_0 if axis == 0 else MAX_GRID_AXIS_12
        if programs > limit:
            raise ValueError(
                f"{what}: grid axis {axis} would launch {programs} programs; CUDA allows at "
                f"most {limit} on axis {axis}. Use larger blocks or a smaller input."
            )
    return grid


def reject_autograd(what: str, *tensors: torch.Tensor) -> None:
    """Raise if grad mode is on and an input requires grad: this launcher has no backward."""
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise RuntimeError(
            f"{what} has no backward pass, so its output would be silently cut from the autograd "
            "graph: call it under torch.no_grad() or on .detach()ed inputs (use torch's own op, "
            "or gpuperf.kernels.FlashAttention, where gradients are needed)"
        )


def shared_memory_limit() -> tuple[int, str]:
    """(bytes of shared memory one block may use, where that number comes from).

    On a GPU: the device's opt-in per-block limit (227 KiB on an H100, 163 KiB on an A100, 64 KiB
    on a T4). Without one: the limit of :data:`CPU_REFERENCE_CHIP`, so the interpreter refuses
    a configuration that no course GPU could run.
    """
    from ..hardware import chip

    if has_cuda_gpu() and not interpreting():
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        limit = getattr(props, "shared_memory_per_block_optin", None)
        if limit:
            return int(limit), props.name
        cc = (props.major, props.minor)
        from ..hardware import chips

        for c in chips():
            if c.compute_capability == cc and c.shared_memory_per_block_bytes:
                return c.shared_memory_per_block_bytes, props.name
        return 48 * 1024, f"{props.name} (compute capability {cc[0]}.{cc[1]}, default 48 KiB)"
    ref = chip(CPU_REFERENCE_CHIP)
    assert ref.shared_memory_per_block_bytes is not None
    where = f"{ref.name} (no GPU here: the largest course target)"
    return ref.shared_memory_per_block_bytes, where


def device_arch() -> str:
    """``"sm_90"``, ``"sm_80"`` or ``"sm_75"`` for the GPU kernels run on; ``"cpu"`` without one.

    Hopper and newer count as sm_90, every Ampere/Ada chip as sm_80, Turing and older as sm_75.
    """
    if not has_cuda_gpu() or interpreting():
        return "cpu"
    major, _ = torch.cuda.get_device_capability()
    return "sm_90" if major >= 9 else "sm_80" if major == 8 else "sm_75"


def pipeline_buffers(num_stages: int, arch: str | None = None) -> int:
    """How many copies of a loop's staged tiles Triton keeps in shared memory.

    Measured offline with Triton 3.9 (``tests/kernels/test_matmul_configs.py``): ``num_stages``
    on sm_90 with ``wgmma``, ``num_stages − 1`` where ``cp.async`` pipelines (sm_80 and later),
    one on sm_75, where nothing is pipelined. Without a GPU the check follows the course's
    largest target (sm_90), so this is ``num_stages``: the most any chip keeps.
    """
    arch = device_arch() if arch is None else arch
    if arch in ("sm_90", "cpu"):
        return num_stages
    if arch == "sm_80":
        return max(1, num_stages - 1)
    return 1


def check_shared_memory(what: str, needed_bytes: int, detail: str) -> None:
    """Raise ``ValueError`` with the numbers if ``needed_bytes`` exceeds the per-block limit."""
    limit, source = shared_memory_limit()
    if needed_bytes > limit:
        raise ValueError(
            f"{what}: {detail} needs about {needed_bytes} bytes ({needed_bytes / 1024:g} KiB) of "
            f"shared memory per block; {source} allows {limit} bytes ({limit / 1024:g} KiB). "
            "Use smaller tiles or fewer num_stages."
        )


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_power_of_2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


__all__ = [
    "ARCHS",
    "FLOAT_DTYPES",
    "MAX_GRID_AXIS_0",
    "MAX_GRID_AXIS_12",
    "arch_name",
    "block",
    "cdiv",
    "check_grid",
    "check_reference",
    "check_shared_memory",
    "check_tensor",
    "count",
    "default_device",
    "device_arch",
    "element_size",
    "expected_device",
    "flag",
    "float_dtype",
    "next_power_of_2",
    "pipeline_buffers",
    "precision_of",
    "reject_autograd",
    "reject_bf16_in_interpreter",
    "same",
    "shared_memory_limit",
    "stages",
    "warps",
]


#: The Triton release whose offline compiler chose the default tiles (matmul, FlashAttention):
#: spill-free with it. Register allocation changes between releases — Colab's Triton 3.6 spills
#: 176 B on the T4 fp32 FlashAttention forward and 8 B on the sm_90 fp32 matmul default — so the
#: spill checks of tests/kernels/*_configs.py hold for this release only.
TUNED_WITH_TRITON = "3.9.0"
