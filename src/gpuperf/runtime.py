"""Where kernels run: a real CUDA GPU, or Triton's interpreter on the CPU.

Triton decides at decoration time whether ``@triton.jit`` compiles or interprets, from the
``TRITON_INTERPRET`` environment variable. :func:`configure_triton` sets it before any kernel
module is imported, so the same notebook cell compiles on a Colab T4 and interprets on a laptop.
The heavy imports (torch) happen here, lazily, never on ``import gpuperf``.
"""

from __future__ import annotations

import importlib
import os
from functools import cache
from types import ModuleType

__all__ = [
    "DEVICE",  # noqa: F822 (computed on first access by __getattr__ below)
    "configure_triton",
    "default_device",
    "has_cuda_gpu",
    "interpreting",
    "require",
]


def require(module: str, install: str | None = None) -> ModuleType:
    """Import an optional dependency, or raise ``ImportError`` naming the install command."""
    if not isinstance(module, str) or not module.strip():
        raise TypeError(f"module={module!r} must be a module name such as 'torch'")
    if install is not None and not isinstance(install, str):
        raise TypeError(f"install={install!r} must be the install command (a string) or None")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        hint = install or f"pip install {module}"
        raise ImportError(f"this part of gpuperf needs {module!r}: {hint}") from exc


@cache
def has_cuda_gpu() -> bool:
    """True when torch is installed and sees a CUDA device."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def interpreting() -> bool:
    """True when Triton kernels run in the CPU interpreter."""
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in ("1", "true", "on", "yes")


def configure_triton() -> bool:
    """Choose compile-or-interpret before Triton is imported; return True if interpreting.

    With no CUDA GPU the interpreter is switched on. An explicit ``TRITON_INTERPRET`` set by the
    user is respected. Raises ``RuntimeError`` if Triton was already imported in a way that
    cannot work (no GPU and no interpreter), because kernels decorated then would fail later.
    """
    if "TRITON_INTERPRET" not in os.environ and not has_cuda_gpu():
        os.environ["TRITON_INTERPRET"] = "1"
    if not interpreting() and not has_cuda_gpu():
        raise RuntimeError(
            "TRITON_INTERPRET=0 but no CUDA GPU is present: Triton kernels cannot run. "
            "Unset TRITON_INTERPRET (or set it to 1) to use the CPU interpreter."
        )
    return interpreting()


def default_device() -> str:
    """The course's one device: where every tensor a kernel consumes is created.

    ``"cuda"`` when a CUDA GPU is present and kernels compile, else ``"cpu"`` (kernels run in
    Triton's interpreter). Notebooks, labs and tests create their tensors with
    ``device=DEVICE`` (``from gpuperf.runtime import DEVICE``), never on the CPU by default.
    """
    return "cuda" if (has_cuda_gpu() and not interpreting()) else "cpu"


def __getattr__(name: str) -> str:
    # ``DEVICE`` is computed on first access, not at import: ``import gpuperf`` must not import
    # torch, and the answer depends on TRITON_INTERPRET, which configure_triton() may still set.
    if name == "DEVICE":
        configure_triton()
        return default_device()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
