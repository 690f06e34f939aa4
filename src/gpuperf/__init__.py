"""gpuperf: the calculators and kernels behind the course on why a GPU program takes the time it
takes.

``import gpuperf`` needs numpy only. The calculators (hardware, cost, roofline, tiling, memory,
attention) are imported eagerly; kernels, inspection, benchmarking, plots and widgets load on
first use, because they need torch, triton, matplotlib or ipywidgets.
"""

from __future__ import annotations

import importlib

from . import attention, cost, divergence, hardware, measurements, memory, roofline, tiling, units
from .cost import OpCost
from .hardware import Chip, chip, chips
from .units import PRECISIONS

#: The course's one version (calendar versioning, PEP 440): a release is ``YEAR.MONTH.N`` and its
#: git tag ``vYEAR.MONTH.N``; the tip of main carries the next release's number with ``.devN``.
#: pyproject.toml reads it from here, and gpuperf.release derives from it what a class touches
#: (setup cells, the labs' test downloads, the autograder zips, the Colab links).
__version__ = "2026.12.0.dev0"

_LAZY_MODULES = ("kernels", "inspect", "bench", "plots", "widgets", "scrub", "notebook", "runtime")


def __getattr__(name: str):
    if name in _LAZY_MODULES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'gpuperf' has no attribute {name!r}")


__all__ = [
    "PRECISIONS",
    "Chip",
    "OpCost",
    "attention",
    "chip",
    "chips",
    "cost",
    "divergence",
    "hardware",
    "measurements",
    "memory",
    "roofline",
    "tiling",
    "units",
]
