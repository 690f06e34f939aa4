"""Live figures for ipywidgets: controls wired to calculators, redrawn in place by blitting.

A slider that re-renders a whole matplotlib figure on every step (``interactive`` with the
inline backend) costs ~100 ms per step on a 2-core machine: the reader sees the point lag behind
the slider. :class:`LiveFigure` draws the static parts (axes, grid, labels) once, caches them,
and on each step restores that background and redraws only the artists that move, then encodes
a small PNG into an ``ipywidgets.Image``: ~5 ms per step. The figure is a plain
``matplotlib.figure.Figure`` on an Agg canvas, not a pyplot figure, so Jupyter does not also
display it as a static image, and ipympl (broken in Colab) is not needed.

The image is shown at its natural size (``density`` bitmap pixels per CSS pixel, 1 by default),
never stretched to the output's width: a flex column would otherwise widen it 1.5–2×, and the
text turns soft. On a narrow screen it shrinks to fit. A step that rescales an axis needs new
ticks: backgrounds are cached per axis limits, and an axis that follows the data is redrawn
alone (see :class:`LiveFigure`). The controls wrap as whole widgets onto a
second row rather than squeezing each other.

:class:`Explorer` wires named controls to an ``update(**values)`` function that moves the
artists (from calculator results) and returns a line of text for the status bar. No formula
lives here. Works with ipywidgets 7.7 (Colab) and 8.x: only ``Image``, ``HTML``, ``VBox`` and
``HBox`` and ``observe(..., names="value")`` are used.
"""

from __future__ import annotations

import math
import numbers
import struct
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._validate import function, instance, positive_float, sequence, show
from ..hardware import chip
from ..runtime import require

__all__ = ["Explorer", "LiveFigure"]

# --- control values: checked before a widget sees them ---------------------------------------
#
# ipywidgets answers a value outside a Dropdown's options with ``TraitError: Invalid selection``
# (naming neither the control nor the options) and silently clamps a slider's out-of-range
# value. Explorers check every value here first, so a bad argument names the control and what
# it accepts, in the constructor and in :meth:`Explorer.step` alike.


def _option_values(options: Any) -> list[Any]:
    """The values of ipywidgets-style options: ``(label, value)`` pairs, a mapping, or values."""
    if isinstance(options, Mapping):
        return list(options.values())
    values = []
    for item in options:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            values.append(item[1])
        else:
            values.append(item)
    return values


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _check_option(control: str, value: Any, options: Any) -> Any:
    """``value`` if it is one of the control's options, else ``ValueError`` listing them."""
    values = _option_values(options)
    for option in values:
        if _same(value, option):
            return option
    raise ValueError(
        f"{control}={show(value)} is not an option of the {control!r} control; options: "
        f"{', '.join(show(v, 30) for v in values)}"
    )


def _check_range(
    control: str, value: Any, low: float, high: float, *, integer: bool = False
) -> Any:
    """``value`` if it is a number in [low, high] (an integer if ``integer``), else an error."""
    kind = "an integer" if integer else "a number"
    message = (
        f"{control}={show(value)} must be {kind} in [{low:g}, {high:g}] "
        f"for the {control!r} control"
    )
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(message)
    try:
        as_float = float(value)
    except OverflowError:  # an int beyond float range
        raise ValueError(message) from None
    if not math.isfinite(as_float) or not low <= as_float <= high:
        raise ValueError(message)
    if integer and not as_float.is_integer():
        raise ValueError(message)
    return int(as_float) if integer else value


def _artist(name: str, value: object) -> Any:
    if not callable(getattr(value, "set_animated", None)):
        raise TypeError(f"{name}={show(value)} must be a matplotlib artist")
    return value


def _check_control(name: str, widget: Any, value: Any) -> Any:
    """Check ``value`` against a built widget: its options, or its slider range."""
    if hasattr(widget, "options"):
        return _check_option(name, value, widget.options)
    if hasattr(widget, "min") and hasattr(widget, "max"):
        low, high = widget.min, widget.max
        base = getattr(widget, "base", None)
        if base is not None:  # FloatLogSlider: min and max are exponents
            low, high = base**low, base**high
        integer = isinstance(widget.value, int) and not isinstance(widget.value, bool)
        return _check_range(name, value, low, high, integer=integer)
    return value


def _control_widget(factory: Callable[..., Any], name: str, **kwargs: Any) -> Any:
    """``factory(**kwargs)`` after checking ``kwargs["value"]`` against its options or range.

    ``name`` is the control's name (the explorer's keyword argument), used in the message.
    """
    if "value" in kwargs:
        value = kwargs["value"]
        if "options" in kwargs:
            kwargs["value"] = _check_option(name, value, kwargs["options"])
        elif "min" in kwargs and "max" in kwargs:
            low, high = kwargs["min"], kwargs["max"]
            if "base" in kwargs:
                low, high = kwargs["base"] ** low, kwargs["base"] ** high
            integer = "Int" in getattr(factory, "__name__", "")
            kwargs["value"] = _check_range(name, value, low, high, integer=integer)
    return factory(**kwargs)


def _fit_content(control: Any) -> Any:
    """Size ``control`` to its content, so a row of controls wraps instead of clipping.

    Without this, ipywidgets gives a label a fixed width (long descriptions are cut) and a
    ``ToggleButtons`` a fixed box that hides its last buttons behind a scroll bar (seen in
    JupyterLab with ipywidgets 8). The same attributes exist in ipywidgets 7.7 (Colab).
    """
    control.layout.flex = "0 0 auto"  # keep its natural width: wrap, don't squeeze
    style = getattr(control, "style", None)
    if style is not None and hasattr(style, "description_width"):
        style.description_width = "initial"
    if style is not None and hasattr(style, "button_width"):  # ToggleButtons
        style.button_width = "auto"
        control.layout.width = "auto"
        # ipywidgets 8 otherwise puts the label on a line of its own, above the buttons
        control.layout.display = "flex"
        control.layout.flex_flow = "row nowrap"
    return control


def _chip_value(chip_name: Any) -> Any:
    """A chip's canonical name for a chip dropdown, or ``chip_name`` unchanged if unknown.

    An unknown name then fails the option check, which lists the dropdown's chips.
    """
    try:
        return chip(chip_name).name
    except KeyError:
        return chip_name


def _new_figure(figsize: tuple[float, float] = (6.4, 3.8), dpi: int = 80) -> Any:
    """A matplotlib ``Figure`` on an Agg canvas that pyplot does not manage (or auto-display)."""
    figure_module = require("matplotlib.figure", "pip install matplotlib")
    agg = require("matplotlib.backends.backend_agg", "pip install matplotlib")
    figure = figure_module.Figure(figsize=figsize, dpi=dpi)
    agg.FigureCanvasAgg(figure)
    return figure


#: Backgrounds a :class:`LiveFigure` keeps, one per set of axis limits (~0.6 MB each).
KEPT_BACKGROUNDS = 16


class LiveFigure:
    """A figure whose ``animated`` artists are redrawn on a cached background.

    Call :meth:`render` after changing the artists' data; call :meth:`refresh` after changing
    anything static but axis limits (labels, texts), which redraws and re-caches the background.

    A step that changes axis limits needs a new background (ticks, grid), and a whole-figure
    draw costs 30–130 ms, several frames. Two kinds of views keep it off the step path:

    * A view with a few ranges (one per block size, say) gets each background from a cache
      keyed by the limits (the last :data:`KEPT_BACKGROUNDS`): drawn once, then restored.
    * A view whose axis follows the data to ranges never seen before (recompute's bytes axis
      follows the widest bar) names that axis in ``rescaling``. On such a step only the
      *layer* is redrawn: the Axes' two axes and its spines, on a background drawn without
      them. Their static texts (axis labels, the tick labels of an axis that does not
      rescale) stay in that background, clear of what moves, so the picture is the one a full
      draw gives (the widget tests compare them pixel for pixel). The Axes' other artists must
      be animated or not move with the axis (checked here).

    Any other change of limits redraws the whole figure.
    """

    def __init__(
        self,
        figure: Any,
        animated: Sequence[Any],
        *,
        rescaling: Sequence[Any] = (),
        density: float = 1.0,
    ) -> None:
        message = f"density={show(density)} must be a number in [1, 4]"
        try:
            density = positive_float("density", density, maximum=4.0)
        except ValueError:
            raise ValueError(message) from None
        if density < 1.0:
            raise ValueError(message)
        if not callable(getattr(getattr(figure, "canvas", None), "copy_from_bbox", None)):
            raise TypeError(f"figure={show(figure)} must be a matplotlib Figure on an Agg canvas")
        self.figure = figure
        self.density = float(density)
        self.animated = list(sequence("animated", animated, _artist, minimum=0))
        for artist in self.animated:
            artist.set_animated(True)
        self.rescaling = list(sequence("rescaling", rescaling, self._axis_of_figure, minimum=0))
        self._layer = _layer(self.rescaling)
        self._static_texts: list[Any] = []  # of the layer, kept in the base (set by a draw)
        # placed after the tick labels, so they could move with them (checked on each rescale)
        self._rescaling_labels = [axis.label for axis in self.rescaling]
        self._image = None
        self._background = None
        self._base = None  # the background without the layer, with its static texts
        self._backgrounds: OrderedDict[tuple[float, ...], Any] = OrderedDict()
        self.png = b""
        self.refresh()

    @property
    def image(self) -> Any:
        """The ``ipywidgets.Image`` showing the figure (created on first use)."""
        if self._image is None:
            widgets = require("ipywidgets", "pip install ipywidgets")
            width, _ = self.display_size
            self._image = widgets.Image(
                value=self.png,
                format="png",
                # natural size: a fixed CSS width, never stretched by the flex column around it
                layout=widgets.Layout(
                    width=f"{width}px", height="auto", max_width="100%", align_self="flex-start"
                ),
            )
        return self._image

    def _limits(self) -> tuple[tuple[float, ...], ...]:
        return tuple((*ax.get_xlim(), *ax.get_ylim()) for ax in self.figure.axes)

    @property
    def display_size(self) -> tuple[int, int]:
        """The image's size on the page in CSS pixels: bitmap pixels ÷ ``density``."""
        width, height = self.figure.canvas.get_width_height()
        return round(width / self.density), round(height / self.density)

    def refresh(self) -> bytes:
        """Redraw the whole figure (static parts changed), forget cached backgrounds, render."""
        self._backgrounds.clear()
        self._draw_all()
        return self.render()

    def render(self) -> bytes:
        limits = self._limits()
        if limits != self._drawn_limits:  # the cached background (ticks, grid) is out of date
            if limits in self._backgrounds:
                self._backgrounds.move_to_end(limits)
                self._background, self._drawn_limits = self._backgrounds[limits], limits
            elif self._only_rescaling_moved(limits):
                self._draw_layer()
            else:
                self._draw_all()
        canvas = self.figure.canvas
        canvas.restore_region(self._background)
        for artist in self.animated:
            artist.axes.draw_artist(artist) if artist.axes else self.figure.draw_artist(artist)
        self.png = _encode_png(canvas.buffer_rgba())
        if self._image is not None:
            self._image.value = self.png
        return self.png

    def _keep(self) -> None:
        """Cache the current background under the current limits (the last few only)."""
        self._drawn_limits = self._limits()
        self._backgrounds[self._drawn_limits] = self._background
        self._backgrounds.move_to_end(self._drawn_limits)
        while len(self._backgrounds) > KEPT_BACKGROUNDS:
            self._backgrounds.popitem(last=False)

    def _draw_all(self) -> None:
        canvas = self.figure.canvas
        for artist in self._layer:
            artist.set_animated(False)
        canvas.draw()
        self._background = canvas.copy_from_bbox(self.figure.bbox)
        self._keep()
        if self._layer:  # the base for later rescales: the same figure without the layer
            self._static_texts = _static_texts(self.rescaling)
            for artist in self._layer:
                artist.set_animated(True)
            canvas.draw()
            for text in self._static_texts:  # placed by the full draw above
                self.figure.draw_artist(text)
            self._base = canvas.copy_from_bbox(self.figure.bbox)
            self._label_places = _places(self._rescaling_labels)

    def _axis_of_figure(self, name: str, value: object) -> Any:
        """One x or y axis of this figure (what ``rescaling`` names)."""
        if getattr(getattr(value, "axes", None), "figure", None) is not self.figure or not (
            value is value.axes.xaxis or value is value.axes.yaxis
        ):
            raise TypeError(f"{name}={show(value)} must be an x or y axis of this figure")
        return value

    def _only_rescaling_moved(self, limits: tuple[tuple[float, ...], ...]) -> bool:
        if not self._layer or len(limits) != len(self._drawn_limits):
            return False
        for ax, new, old in zip(self.figure.axes, limits, self._drawn_limits, strict=True):
            if new[:2] != old[:2] and ax.xaxis not in self.rescaling:
                return False
            if new[2:] != old[2:] and ax.yaxis not in self.rescaling:
                return False
        return True

    def _draw_layer(self) -> None:
        canvas = self.figure.canvas
        canvas.restore_region(self._base)
        for text in self._static_texts:
            text.set_visible(False)
        try:
            for artist in self._layer:
                self.figure.draw_artist(artist)
        finally:
            for text in self._static_texts:
                text.set_visible(True)
        if _places(self._rescaling_labels) != self._label_places:
            self._draw_all()  # an axis label moved with the new tick labels: redraw it all
            return
        self._background = canvas.copy_from_bbox(self.figure.bbox)
        self._keep()


def _layer(rescaling: Sequence[Any]) -> list[Any]:
    """The artists redrawn when an axis in ``rescaling`` changes range: the axes and spines of
    its Axes, in the order the Axes draws them (by zorder, otherwise in child order)."""
    layer = []
    for ax in dict.fromkeys(axis.axes for axis in rescaling):
        own = [ax.xaxis, ax.yaxis, *ax.spines.values()]
        for artist in ax.get_children():
            if artist in own or artist is ax.patch or artist.get_animated():
                continue
            _check_still(artist, ax, rescaling)
        layer += sorted((a for a in ax.get_children() if a in own), key=lambda a: a.get_zorder())
    return layer


def _static_texts(rescaling: Sequence[Any]) -> list[Any]:
    """The layer's texts that a rescale leaves alone: axis labels, and the tick labels of an
    axis that does not rescale. Drawn into the base once, they are hidden in a layer redraw."""
    texts = []
    for ax in dict.fromkeys(axis.axes for axis in rescaling):
        for axis in (ax.xaxis, ax.yaxis):
            texts.append(axis.label)
            if axis not in rescaling:
                texts += axis.get_ticklabels(which="both")
    return [text for text in texts if text.get_visible()]


def _check_still(artist: Any, ax: Any, rescaling: Sequence[Any]) -> None:
    """``ValueError`` if ``artist`` is in data coordinates along an axis in ``rescaling``."""
    # the historical spelling, which every matplotlib the course supports has
    in_data = artist.get_transform().contains_branch_seperately(ax.transData)
    for axis, moves in zip((ax.xaxis, ax.yaxis), in_data, strict=True):
        if moves and axis in rescaling:
            raise ValueError(
                f"{artist!r} moves when the {axis.axis_name}-axis rescales, so it cannot stay "
                "in a cached background: make it animated"
            )


def _places(texts: Sequence[Any]) -> list[tuple[Any, ...]]:
    return [(*text.get_position(), text.get_text()) for text in texts]


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
        if not isinstance(controls, Mapping) or not controls:
            raise TypeError(f"controls={show(controls)} must be a non-empty dict of widgets")
        for name, control in controls.items():
            if not isinstance(name, str) or not callable(getattr(control, "observe", None)):
                raise TypeError(f"controls[{name!r}]={show(control)} must be an ipywidget")
        self.controls = dict(controls)
        self.live = instance("live", live, LiveFigure)
        self._update = function("update", update)
        if not isinstance(title, str):
            raise TypeError(f"title={show(title)} must be a string")
        self.status = widgets.HTML(value="")
        self.timings_ms: list[float] = []
        self._shown: dict[str, Any] | None = None  # the control values drawn last
        header = [widgets.HTML(value=f"<b>{title}</b>")] if title else []
        for control in self.controls.values():
            _fit_content(control)
        row = widgets.HBox(
            list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap")
        )
        self.widget = widgets.VBox([*header, row, live.image, self.status])
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self._on_change()

    @classmethod
    def for_view(cls, view: Any, controls: Mapping[str, Any], *, title: str = "") -> Explorer:
        """The explorer of a view object with ``figure``, ``animated`` artists and ``update``
        (and ``rescaling`` axes, if it has any: see :class:`LiveFigure`).

        The view is kept as :attr:`view`, so tests can read the plotted artists.
        """
        for part in ("figure", "animated", "update"):
            if not hasattr(view, part):
                raise TypeError(f"view={show(view)} must have figure, animated and update")
        live = LiveFigure(view.figure, view.animated, rescaling=getattr(view, "rescaling", ()))
        explorer = cls(controls, view.update, live, title=title)
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
            # Checked one at a time, in order: setting one control may change another's range.
            control = self.controls[name]
            if name == "chip_name":  # aliases ("h100") and Chip objects pick the chip's option
                value = _chip_value(value)
            control.value = _check_control(name, control, value)
        return self.status.value

    def _on_change(self, change: Any = None) -> None:
        values = self.values()
        if values == self._shown:
            # wiring moved a second control to follow the first (a slider's end follows a
            # block size): the first change already drew these values
            return
        start = time.perf_counter()
        self._shown = values
        text = self._update(**values)
        self.status.value = text or ""
        self.live.render()
        self.timings_ms.append(1e3 * (time.perf_counter() - start))

    def _ipython_display_(self) -> None:
        require("IPython.display", "pip install ipython").display(self.widget)
