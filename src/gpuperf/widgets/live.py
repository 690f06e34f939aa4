"""Live figures for ipywidgets: controls wired to calculators, redrawn in place by blitting.

A slider that re-renders a whole matplotlib figure on every step (``interactive`` with the
inline backend) costs ~100 ms per step on a 2-core machine: the reader sees the point lag behind
the slider. :class:`LiveFigure` draws the static parts (axes, grid, labels) once, caches them,
and on each step restores that background and redraws only the artists that move, then encodes
a small PNG into an ``ipywidgets.Image``: ~5 ms per step. The figure is a plain
``matplotlib.figure.Figure`` on an Agg canvas, not a pyplot figure, so Jupyter does not also
display it as a static image, and ipympl (broken in Colab) is not needed.

:class:`Explorer` wires named controls to an ``update(**values)`` function that moves the
artists (from calculator results) and returns a line of text for the status bar. No formula
lives here. Works with ipywidgets 7.7 (Colab) and 8.x: only ``Image``, ``HTML``, ``VBox`` and
``HBox`` and ``observe(..., names="value")`` are used.
"""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..runtime import require


def new_figure(figsize: tuple[float, float] = (6.4, 3.8), dpi: int = 80) -> Any:
    """A matplotlib ``Figure`` on an Agg canvas that pyplot does not manage (or auto-display)."""
    figure_module = require("matplotlib.figure", "pip install matplotlib")
    agg = require("matplotlib.backends.backend_agg", "pip install matplotlib")
    figure = figure_module.Figure(figsize=figsize, dpi=dpi)
    agg.FigureCanvasAgg(figure)
    return figure


class LiveFigure:
    """A figure whose ``animated`` artists are redrawn on a cached background.

    Call :meth:`render` after changing the artists' data; call :meth:`refresh` after changing
    anything static (axis limits, labels), which redraws and re-caches the background.
    """

    def __init__(self, figure: Any, animated: Sequence[Any]) -> None:
        self.figure = figure
        self.animated = list(animated)
        for artist in self.animated:
            artist.set_animated(True)
        self._image = None
        self._background = None
        self.png = b""
        self.refresh()

    @property
    def image(self) -> Any:
        """The ``ipywidgets.Image`` showing the figure (created on first use)."""
        if self._image is None:
            widgets = require("ipywidgets", "pip install ipywidgets")
            self._image = widgets.Image(value=self.png, format="png")
        return self._image

    def refresh(self) -> bytes:
        canvas = self.figure.canvas
        canvas.draw()
        self._background = canvas.copy_from_bbox(self.figure.bbox)
        return self.render()

    def render(self) -> bytes:
        canvas = self.figure.canvas
        canvas.restore_region(self._background)
        for artist in self.animated:
            artist.axes.draw_artist(artist) if artist.axes else self.figure.draw_artist(artist)
        self.png = _encode_png(canvas.buffer_rgba())
        if self._image is not None:
            self._image.value = self.png
        return self.png


def _encode_png(rgba: Any) -> bytes:
    """A PNG of an RGBA buffer, written directly: no row filters, zlib level 1.

    Pillow's encoder spends ~9 ms on a 700×280 frame choosing row filters whatever the
    compression level; writing the chunks directly takes ~2–4 ms for the same pixels, and the
    encoder is most of a slider step's time.
    """
    np = require("numpy")
    pixels = np.asarray(rgba)
    height, width, _ = pixels.shape
    rows = np.zeros((height, 1 + 4 * width), dtype=np.uint8)  # filter byte 0 ("none") per row
    rows[:, 1:] = pixels.reshape(height, -1)

    def chunk(tag: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(tag + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 1))
        + chunk(b"IEND", b"")
    )


class Explorer:
    """Named controls → ``update(**values)`` → artists moved → :class:`LiveFigure` re-rendered.

    ``update`` returns the status text (HTML allowed) or ``None``. Every step's wall time is
    kept in :attr:`timings_ms` so a benchmark can report p50/p95 without a stopwatch in the UI.
    """

    def __init__(
        self,
        controls: Mapping[str, Any],
        update: Callable[..., str | None],
        live: LiveFigure,
        *,
        title: str = "",
    ) -> None:
        widgets = require("ipywidgets", "pip install ipywidgets")
        self.controls = dict(controls)
        self.live = live
        self._update = update
        self.status = widgets.HTML(value="")
        self.timings_ms: list[float] = []
        header = [widgets.HTML(value=f"<b>{title}</b>")] if title else []
        self.widget = widgets.VBox(
            [*header, widgets.HBox(list(self.controls.values())), live.image, self.status]
        )
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self._on_change()

    @classmethod
    def for_view(cls, view: Any, controls: Mapping[str, Any], *, title: str = "") -> Explorer:
        """The explorer of a view object with ``figure``, ``animated`` artists and ``update``.

        The view is kept as :attr:`view`, so tests can read the plotted artists.
        """
        explorer = cls(controls, view.update, LiveFigure(view.figure, view.animated), title=title)
        explorer.view = view
        return explorer

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def step(self, **values: Any) -> str:
        """Set controls programmatically (as a reader would) and return the status text."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise ValueError(f"unknown controls {sorted(unknown)}; valid: {sorted(self.controls)}")
        for name, value in values.items():
            self.controls[name].value = value
        return self.status.value

    def _on_change(self, change: Any = None) -> None:
        start = time.perf_counter()
        text = self._update(**self.values())
        self.status.value = text or ""
        self.live.render()
        self.timings_ms.append(1e3 * (time.perf_counter() - start))

    def _ipython_display_(self) -> None:
        require("IPython.display", "pip install ipython").display(self.widget)
