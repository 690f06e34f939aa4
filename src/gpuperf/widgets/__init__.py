"""ipywidgets explorers used by the chapters. They only wire controls to calculators and plots.

Each explorer module builds a :class:`~gpuperf.widgets.live.Explorer`; its kernel-free twin for
the online book (``<name>_static``) is a :class:`~gpuperf.vega.StaticExplorer` whose rows are
read off the same drawing code.
"""

from __future__ import annotations

from .live import Explorer, LiveFigure
from .roofline import (
    hardware_explorer,
    mfu_calculator,
    roofline_explorer,
)

__all__ = [
    "Explorer",
    "LiveFigure",
    "hardware_explorer",
    "mfu_calculator",
    "roofline_explorer",
]
