"""The course's Triton kernels, one concept per module.

Importing this package chooses compile-or-interpret *before* Triton is imported
(:func:`gpuperf.runtime.configure_triton`): on a machine without a CUDA GPU every kernel runs in
Triton's CPU interpreter, on a GPU the same code compiles. Each module reads top to bottom:
docstring (what you learn, FLOPs and bytes) → torch reference ``<op>_ref`` → ``@triton.jit``
kernel → launcher ``<op>()`` that validates, allocates, builds the grid and launches.

``GPUPERF_COMPILE_ONLY=1`` is set by :mod:`gpuperf.inspect` in its compiler subprocess: there the
kernels are compiled for a GPU the machine does not have, so neither the interpreter nor a GPU
is wanted.

The launchers are re-exported here (``gpuperf.kernels.softmax`` is the *function*); reach a
module's reference and cost helpers with ``from gpuperf.kernels.softmax import softmax_ref``.

Every launcher behaves the same on the interpreter and on a GPU (:mod:`._common`): fp32 dot
products are IEEE fp32 unless TF32 is asked for, grids are 1-D (no 65,535 limit), offsets that
can pass 2³¹ are int64, infeasible tiles/warps/stages are refused before compiling with the
numbers in the message, NaN propagates as in torch, and launchers without a backward refuse
inputs that require grad. ``matmul`` picks its tiles from the device (``DEFAULT_CONFIGS``);
``flash_attention_hopper`` is the sm_90 (TMA) forward beside the portable ``flash_attention``.
"""

from __future__ import annotations

import os

from ..runtime import configure_triton, require

if os.environ.get("GPUPERF_COMPILE_ONLY") != "1":
    configure_triton()
require("torch", "pip install torch (the CPU wheel is enough to run kernels interpreted)")
require("triton", "pip install triton (Linux only)")


def _check_interpreter_consistent() -> None:
    """Triton's own helpers (``tl.zeros``) are decorated when triton is first imported; if that
    happened before ``TRITON_INTERPRET=1`` was set, every kernel using them fails deep inside the
    interpreter. Say so here instead."""
    from ..runtime import interpreting

    if not interpreting():
        return
    import triton.language as tl

    if type(tl.zeros).__name__ == "JITFunction":
        raise RuntimeError(
            "triton was imported before TRITON_INTERPRET=1 was set, so its helpers are compiled, "
            "not interpreted, and kernels cannot run on this CPU. Restart the kernel and import "
            "gpuperf.kernels (or call gpuperf.runtime.configure_triton()) before importing triton."
        )


_check_interpreter_consistent()

from .copy import copy_coalesced, copy_misaligned, copy_strided  # noqa: E402
from .decode_attention import decode_attention_plain, decode_attention_split  # noqa: E402
from .divergence import divergence_split, divergence_uniform  # noqa: E402
from .elementwise import gelu, relu  # noqa: E402
from .flash_attention import FlashAttention, FlashAttentionTorch, flash_attention  # noqa: E402
from .flash_attention_hopper import FlashAttentionHopper, flash_attention_hopper  # noqa: E402
from .fusion import sin2cos2_fused, sin2cos2_unfused  # noqa: E402
from .matmul import matmul, matmul_naive  # noqa: E402
from .matmul_tma import matmul_tma  # noqa: E402
from .softmax import softmax, softmax_online  # noqa: E402
from .transpose import transpose_naive, transpose_tiled  # noqa: E402
from .vector_add import vector_add  # noqa: E402

__all__ = [
    "FlashAttention",
    "FlashAttentionHopper",
    "FlashAttentionTorch",
    "copy_coalesced",
    "copy_misaligned",
    "copy_strided",
    "decode_attention_plain",
    "decode_attention_split",
    "divergence_split",
    "divergence_uniform",
    "flash_attention",
    "flash_attention_hopper",
    "gelu",
    "matmul",
    "matmul_naive",
    "matmul_tma",
    "relu",
    "sin2cos2_fused",
    "sin2cos2_unfused",
    "softmax",
    "softmax_online",
    "transpose_naive",
    "transpose_tiled",
    "vector_add",
]
