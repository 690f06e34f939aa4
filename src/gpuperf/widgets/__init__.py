"""ipywidgets explorers used by the chapters. They only wire controls to calculators and plots.

Each explorer module builds a :class:`~gpuperf.widgets.live.Explorer`; its kernel-free twin for
the online book is a :class:`~gpuperf.scrub.Scrubber` rendered by the same drawing code.
"""

from __future__ import annotations

from .live import Explorer, LiveFigure, new_figure
from .roofline import (
    hardware_explorer,
    hardware_scrubber,
    mfu_calculator,
    mfu_scrubber,
    roofline_explorer,
    roofline_scrubber,
)

__all__ = [
    "Explorer",
    "LiveFigure",
    "hardware_explorer",
    "hardware_scrubber",
    "mfu_calculator",
    "mfu_scrubber",
    "new_figure",
    "roofline_explorer",
    "roofline_scrubber",
]
