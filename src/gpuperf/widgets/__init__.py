"""ipywidgets explorers used by the chapters. They only wire controls to calculators and plots.

Each explorer module builds a :class:`~gpuperf.widgets.live.Explorer`; its kernel-free twin for
the online book is a :class:`~gpuperf.scrub.Scrubber` rendered by the same drawing code.
"""

from __future__ import annotations

from .live import Explorer, LiveFigure, new_figure

__all__ = ["Explorer", "LiveFigure", "new_figure"]
