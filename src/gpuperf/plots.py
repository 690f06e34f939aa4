"""Matplotlib figures for the course, each returned as a ``Figure``.

A figure function only draws: every number comes from the calculators (:mod:`gpuperf.hardware`,
:mod:`gpuperf.roofline`, :mod:`gpuperf.cost`). The figures are made with ``pyplot`` so that the
inline backend shows them in Jupyter, in Colab and in the built book; a notebook cell ends with
``plt.show()``. matplotlib is imported lazily, so ``import gpuperf`` needs numpy only.

:func:`roofline` draws the roofline model of Williams, Waterman & Patterson (2009): attainable
FLOP/s = min(peak, bandwidth × intensity), on log-log axes, one roof per chip, with the ridge
point marked and optional operations placed at their arithmetic intensity.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ._validate import (
    figsize as figure_size,
)
from ._validate import (
    flag,
    instance,
    optional,
    positive_float,
    positive_int,
    sequence,
    show,
    value_range,
)
from .cost import OpCost
from .figures import FONT_PT, RC, TITLE_PT, WIDTH_IN, plain_log_ticks, si_label
from .hardware import Chip, chip
from .roofline import attainable_flops
from .units import format_flops

__all__ = [
    "MAX_LINES_DRAWN",
    "MAX_TILES_DRAWN",
    "achieved_roofline",
    "attention_traffic",
    "batch_roofline",
    "checkpoint_tradeoff",
    "chip_diagram",
    "coalescing_picture",
    "compute_vs_bandwidth",
    "effective_bandwidth_curves",
    "link_bandwidths",
    "memory_ladder",
    "roofline",
    "roofline_bandwidths",
    "sawtooth",
    "schedule_efficiency",
    "sm_diagram",
    "smem_gauges",
    "tile_picture",
    "traffic_bars",
]

_TFLOPS = 1e12
#: Largest token batch :func:`batch_roofline` draws (one point per batch size).
MAX_BATCH_DRAWN = 1 << 16
#: Most layers :func:`checkpoint_tradeoff` draws (one point per checkpoint interval).
MAX_LAYERS_DRAWN = 4096
#: Most cache lines :func:`_coalescing_grid` draws, and most tiles per side :func:`tile_picture`
#: draws (a figure, not a data structure: beyond these nothing is readable anyway).
MAX_LINES_DRAWN = 1024
MAX_TILES_DRAWN = 256


def _pyplot() -> Any:
    from .runtime import require

    return require("matplotlib.pyplot", "pip install matplotlib")


def _book_figure(draw: Callable[..., Any]) -> Callable[..., Any]:
    """Draw a static figure in the course's style (:data:`gpuperf.figures.RC`: drawn for a
    phone's column, no text under 11.5 pt) whatever matplotlib's global settings are. Tick
    labels are pinned to that size too: matplotlib makes ticks when it draws, after this
    returns."""

    @functools.wraps(draw)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        matplotlib = _require_matplotlib("matplotlib")
        with matplotlib.rc_context(RC):
            fig = draw(*args, **kwargs)
        for ax in fig.axes:
            ax.tick_params(which="both", labelsize=FONT_PT)
        return fig

    return wrapper


def _wrap(text: str, width_in: float = WIDTH_IN - 0.2, size_pt: float = FONT_PT) -> str:
    """``text`` broken between words into lines no wider than ``width_in`` inches at
    ``size_pt``, measured with matplotlib's own font metrics: a title or a key entry never
    widens the figure (which would shrink all of it on a phone)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    font = FontProperties(family=RC["font.family"], size=size_pt)

    def width_in_of(line: str) -> float:
        return text_to_path.get_text_width_height_descent(line, font, ismath=False)[0] / 72

    lines = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if line and width_in_of(candidate) > width_in:
                lines.append(line)
                candidate = word
            line = candidate
        lines.append(line)
    return "\n".join(lines)


def _key_below(ax: Any, **kwargs: Any) -> Any:
    """The key under the axes, one entry a line, the figure made taller by its height: on a
    phone-width figure a key inside the axes would hide the data it explains. (Needs the
    constrained layout every static figure uses.)"""
    handles, labels = ax.get_legend_handles_labels()
    fig = ax.figure
    lines = sum(label.count("\n") + 1 for label in labels)
    fig.set_figheight(fig.get_figheight() + lines * FONT_PT * 1.45 / 72 + 0.1)
    return fig.legend(
        handles,
        labels,
        loc="outside lower center",
        frameon=False,
        ncols=1,
        handlelength=1.8,
        **kwargs,
    )


# --- argument checks shared by the figures: a bad argument fails before anything is drawn ------


def _chips(name: str, value: object) -> list[Chip]:
    """One chip (a name or a ``Chip``) or a non-empty sequence of them."""
    if isinstance(value, str | Chip):
        return [_chip(name, value)]
    return list(sequence(name, value, _chip))


def _chip(name: str, value: object) -> Chip:
    """The chip ``value`` names; the error says which argument named it."""
    if not isinstance(value, str | Chip):
        raise TypeError(f"{name}={show(value)} must be a chip name or a Chip")
    try:
        return chip(value)
    except KeyError as error:
        raise KeyError(f"{name}={value!r}: {error.args[0]}") from None


def _labelled(name: str, value: object, check: Any, *, minimum: int = 1) -> dict[str, Any]:
    """A mapping from string labels to values, each passed through ``check(name[label], v)``."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{name}={show(value)} must be a mapping from labels to values")
    if len(value) < minimum:
        raise ValueError(f"{name}={show(value)} must hold at least {minimum} entry")
    out = {}
    for label, item in value.items():
        if not isinstance(label, str):
            raise TypeError(f"{name} key {show(label)} must be a string label")
        out[label] = check(f"{name}[{label!r}]", item)
    return out


def _title(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"title={show(value)} must be a string or None")
    return value


def _op(name: str, value: object) -> OpCost:
    return instance(name, value, OpCost)


def _point(name: str, value: object) -> tuple[float, float]:
    """(intensity, FLOP/s) of a measured point."""
    x, y = sequence(name, value, minimum=2, maximum=2)
    return positive_float(name, x), positive_float(name, y)


@_book_figure
def roofline(
    chips: str | Chip | Sequence[str | Chip],
    precision: str = "bf16",
    *,
    ops: Mapping[str, OpCost] | None = None,
    intensity_range: tuple[float, float] = (0.05, 5000.0),
    bandwidth: float | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = (WIDTH_IN, 3.0),
) -> Any:
    """Log-log roofline of one or more chips at one precision; returns the ``Figure``.

    ``ops`` maps a label to an :class:`~gpuperf.cost.OpCost`; each is drawn as a numbered point
    at its arithmetic intensity on the roof of the *first* chip, and the key under the axes
    names it with its attainable FLOP/s. The ridge point is written at the ridge for one chip,
    in the key for several. ``bandwidth`` replaces HBM bandwidth (e.g. a link)
    for every chip. With a single chip the memory-bound region is shaded.
    """
    resolved = _chips("chips", chips)
    low, high = value_range("intensity_range", intensity_range)
    ops = _labelled("ops", ops, _op, minimum=0) if ops is not None else {}
    optional("bandwidth", bandwidth, positive_float)
    title, figsize = _title(title), figure_size("figsize", figsize)
    for the_chip in resolved:
        the_chip.peak_flops(precision)  # every chip has the precision, before drawing
    plt = _pyplot()
    intensity = np.geomspace(low, high, 400)

    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    top = max(c.peak_flops(precision) for c in resolved)
    _log_axes(ax, (low, high), (top * 1e-4, top * 4))
    for the_chip in resolved:
        roof = attainable_flops(intensity, the_chip, precision, bandwidth)
        ridge = the_chip.ridge_point(precision, bandwidth)
        if len(resolved) > 1:  # ridges side by side: their values go in the key
            label = f"{the_chip.name} ({precision}): ridge {_number(ridge)} FLOP/B"
        else:  # one chip under a title needs no key entry: the title names it
            label = f"{the_chip.name} ({precision})" if not title else "_roof"
        (line,) = ax.plot(intensity, roof, lw=2, label=label)
        ax.axvline(ridge, color=line.get_color(), ls=":", lw=1)
        if len(resolved) == 1:
            ax.annotate(f"ridge {_number(ridge)}", (ridge, the_chip.peak_flops(precision)),
                        textcoords="offset points", xytext=(-4, 5), ha="right",
                        color=line.get_color())  # fmt: skip
    if len(resolved) == 1:
        ridge = resolved[0].ridge_point(precision, bandwidth)
        ax.axvspan(low, ridge, color="tab:blue", alpha=0.07, lw=0)
        ax.axvspan(ridge, high, color="tab:orange", alpha=0.07, lw=0)
        ax.text(0.02, 0.97, "memory-\nbound", transform=ax.transAxes, va="top",
                color="tab:blue")  # fmt: skip
        ax.text(0.98, 0.03, "compute-bound", transform=ax.transAxes, ha="right",
                color="tab:orange")  # fmt: skip
    for k, (label, op) in enumerate((ops or {}).items(), start=1):
        y = attainable_flops(op.intensity, resolved[0], precision, bandwidth)
        _numbered_point(ax, k, op.intensity, y, f"{label}: {format_flops(y)}")
    if title:
        ax.set_title(_wrap(title, 3.4, TITLE_PT))
    if ax.get_legend_handles_labels()[0]:
        _key_below(ax)
    return fig


def _numbered_point(ax: Any, k: int, x: float, y: float, words: str, *, side: int = 1,
                    color: str = "tab:red") -> None:  # fmt: skip
    """A marker with its number beside it, and ``words`` in the key under the axes: on a
    phone-width figure, words next to neighbouring points would run into each other."""
    ax.plot(x, y, "o", ms=8, color=color, mec="black", zorder=5)
    ax.annotate(str(k), (x, y), xytext=(8 * side, 0), textcoords="offset points",
                ha="left" if side > 0 else "right", va="center", fontweight="bold",
                color=color)  # fmt: skip
    ax.plot([], [], ls="none", marker=f"${k}$", ms=9, color=color, label=_wrap(words, 3.8))


# --------------------------------------------------------------------------------------------
# Chapters 1 and 2: updatable roofline panels (shared by the live explorers in
# gpuperf.widgets.roofline and by their static twins), the GPU/SM anatomy diagram and
# the static roofline figures. Every number is read from the calculators; the panels only draw.
# --------------------------------------------------------------------------------------------


def _flops_tick(value: float, _position: Any = None) -> str:
    """Axis ticks in SI FLOP/s: ``1e12`` → ``'1 T'``."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}"
    return f"{value:g}"


def _intensity_tick(value: float, _position: Any = None) -> str:
    """Plain numbers below a thousand, SI prefixes above: ``1e4`` → ``'10k'``."""
    return _si_tick(value)


def _si_tick(value: float, _position: Any = None, unit: str = "") -> str:
    return si_label(value, unit=unit)


def _log_ticks(axis: Any, formatter: Callable[..., str] = _si_tick, **kwargs: Any) -> None:
    plain_log_ticks(axis, formatter, **kwargs)


def _number(value: float) -> str:
    """``295.2`` → ``'295'``, ``1125`` → ``'1,125'``, ``0.125`` → ``'0.125'``."""
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:.3g}"


def _log_axes(ax: Any, intensity_range: tuple[float, float], flops_range: tuple[float, float]):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*intensity_range)
    ax.set_ylim(*flops_range)
    _log_ticks(ax.xaxis, _intensity_tick)
    _log_ticks(ax.yaxis, _flops_tick)
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("attainable FLOP/s")
    ax.grid(True, which="major", alpha=0.3)


def _vertical_band(ax: Any, x0: float, x1: float, color: str) -> Any:
    """A full-height band from x0 to x1 that ``set_x``/``set_width`` can move.

    (``axvspan`` returns a ``Rectangle`` only since matplotlib 3.9; Colab may ship older.)
    """
    from matplotlib.patches import Rectangle

    transform = ax.get_xaxis_transform()  # x in data units, y in axes units
    band = Rectangle((x0, 0.0), x1 - x0, 1.0, transform=transform, color=color, alpha=0.08, lw=0)
    ax.add_patch(band)
    return band


class _RooflinePanel:
    """A log-log roofline on one ``Axes`` whose roof, ridge point, regions and point move in place.

    Axis limits are fixed at construction, so moving any artist never needs a full redraw: a
    live explorer marks :attr:`artists` as animated and blits them; a scrubber simply saves the
    figure after each update. The y axis is in FLOP/s (SI), so a point's data *is* the
    calculator's value.
    """

    def __init__(
        self,
        ax: Any,
        *,
        intensity_range: tuple[float, float] = (1e-2, 1e5),
        flops_range: tuple[float, float] = (1e9, 3e16),
        annotate: bool = True,
    ) -> None:
        self.ax = ax
        self.annotate = annotate
        self.intensity_range = intensity_range
        _log_axes(ax, intensity_range, flops_range)
        low, high = intensity_range
        self.memory_region = _vertical_band(ax, low, low, "tab:blue")
        self.compute_region = _vertical_band(ax, low, high, "tab:orange")
        (self.roof,) = ax.plot([], [], lw=2.2, color="black")
        (self.ridge,) = ax.plot([], [], ls=":", lw=1, color="dimgray")
        # up and to the left of the ridge: above the memory slope, clear of the flat roof
        self.ridge_label = ax.annotate(
            "", (1.0, 1.0), xytext=(-6, 7), textcoords="offset points", fontsize=8, ha="right"
        )
        self.region_labels = (
            ax.text(0.02, 0.02, "", transform=ax.transAxes, fontsize=8, color="tab:blue"),
            ax.text(0.98, 0.02, "", transform=ax.transAxes, fontsize=8, color="tab:orange",
                    ha="right"),
        )  # fmt: skip
        self.title = ax.text(0.02, 0.97, "", transform=ax.transAxes, va="top", fontsize=9)
        (self.point,) = ax.plot(
            [], [], "o", ms=9, color="tab:red", mec="black", zorder=5, label="operation"
        )
        self.point_label = ax.annotate(
            "", (1.0, 1.0), xytext=(8, -16), textcoords="offset points", fontsize=8,
            color="tab:red",
        )  # fmt: skip

    @property
    def artists(self) -> list[Any]:
        """Everything that moves when the chip, precision or operation changes.

        Text is expensive to rasterise (~0.25 ms per glyph with matplotlib 3.11 on a small
        CPU), so a panel built with ``annotate=False`` leaves its labels empty and out of this
        list; a live explorer then states the numbers in its status line instead.
        """
        shapes = [self.memory_region, self.compute_region, self.roof, self.ridge, self.point]
        if not self.annotate:
            return shapes
        return [*shapes, self.ridge_label, *self.region_labels, self.title, self.point_label]

    def _text(self, artist: Any, text: str) -> None:
        if self.annotate:
            artist.set_text(text)

    def set_roof(
        self,
        the_chip: str | Chip,
        precision: str,
        *,
        bandwidth: float | None = None,
        title: str | None = None,
    ) -> float:
        """Draw ``min(peak, bandwidth × intensity)`` for a chip; returns the ridge point."""
        from .roofline import ridge_point

        the_chip = _chip("the_chip", the_chip)
        ridge = ridge_point(the_chip, precision, bandwidth)
        peak = the_chip.peak_flops(precision)
        low, high = self.intensity_range
        # On log-log axes the roof is two straight segments: three vertices draw it exactly and
        # cost far less to redraw on every slider step than a densely sampled curve.
        corners = np.array([low, min(max(ridge, low), high), high])
        self.roof.set_data(corners, attainable_flops(corners, the_chip, precision, bandwidth))
        self.ridge.set_data([ridge, ridge], [self.ax.get_ylim()[0], peak])
        self.ridge_label.xy = (ridge, peak)
        self._text(self.ridge_label, f"ridge {_number(ridge)} FLOP/B")
        self.memory_region.set_x(low)
        self.memory_region.set_width(max(min(ridge, high) - low, 0.0))
        self.compute_region.set_x(min(ridge, high))
        self.compute_region.set_width(max(high - ridge, 0.0))
        self._text(self.region_labels[0], "memory-bound")
        self._text(self.region_labels[1], "compute-bound")
        self._text(self.title, title if title is not None else f"{the_chip.name} · {precision}")
        return ridge

    def clear_roof(self, message: str) -> None:
        """No roof to draw (the chip has no rate at that precision): say so on the axes."""
        low = self.intensity_range[0]
        self.roof.set_data([], [])
        self.ridge.set_data([], [])
        self._text(self.ridge_label, "")
        for region in (self.memory_region, self.compute_region):
            region.set_x(low)
            region.set_width(0.0)
        for label in self.region_labels:
            self._text(label, "")
        self._text(self.title, message)
        self.clear_point()

    def set_point(self, intensity: float, flops_per_s: float, label: str = "") -> None:
        """Place the operation at (intensity, attainable FLOP/s)."""
        self.point.set_data([intensity], [flops_per_s])
        self.point_label.xy = (intensity, flops_per_s)
        self._text(self.point_label, label)

    def clear_point(self) -> None:
        self.point.set_data([], [])
        self._text(self.point_label, "")


class _TimeBarsPanel:
    """Two horizontal bars, T_math and T_comms, scaled to the larger; the bound named in words."""

    def __init__(self, ax: Any, *, annotate: bool = True) -> None:
        self.ax = ax
        self.annotate = annotate
        self.bars = ax.barh([1, 0], [0.0, 0.0], height=0.55, color=["tab:orange", "tab:blue"])
        ax.set_yticks([1, 0], ["T_math\n(FLOPs / peak)", "T_comms\n(bytes / BW)"], fontsize=8)
        ax.set_xlim(0, 1.6)
        ax.set_ylim(-0.6, 1.6)
        ax.set_xticks([0, 0.5, 1.0])
        ax.set_xlabel("time ÷ lower bound max(T_math, T_comms)", fontsize=8)
        ax.axvline(1.0, color="dimgray", lw=0.8, ls=":")
        self.values = [ax.text(0.0, y, "", va="center", fontsize=8) for y in (1, 0)]
        self.verdict = ax.text(
            1.0,
            1.02,
            "",
            transform=ax.transAxes,
            va="bottom",
            ha="right",
            fontsize=8,
            fontweight="bold",
        )

    @property
    def artists(self) -> list[Any]:
        """The bars, plus the time labels and the verdict when ``annotate`` is on."""
        return [*self.bars, *self.values, self.verdict] if self.annotate else [*self.bars]

    def set_bounds(self, bounds: Any) -> None:
        """Show a :class:`gpuperf.roofline.TimeBounds`."""
        from .units import format_seconds

        longest = bounds.lower_s
        for bar, text, seconds in zip(
            self.bars, self.values, (bounds.t_math_s, bounds.t_comms_s), strict=True
        ):
            width = seconds / longest if longest > 0 else 0.0
            bar.set_width(width)
            text.set_x(width + 0.03)
            if self.annotate:
                text.set_text(format_seconds(seconds))
        if self.annotate:
            self.verdict.set_text(_bound_in_words(bounds))

    def clear(self, message: str = "") -> None:
        for bar, text in zip(self.bars, self.values, strict=True):
            bar.set_width(0.0)
            text.set_text("")
        if self.annotate:
            self.verdict.set_text(message)


def _bound_in_words(bounds: Any) -> str:
    """``'memory-bound: T_comms is 37× T_math'`` for a :class:`~gpuperf.roofline.TimeBounds`."""
    if bounds.t_math_s == 0:
        return "memory-bound: no math at all"
    ratio = bounds.t_comms_s / bounds.t_math_s
    if bounds.bound == "memory":
        return f"memory-bound: T_comms = {ratio:.3g} × T_math"
    if ratio == 0:
        return "compute-bound: no bytes to move"
    return f"compute-bound: T_math = {1 / ratio:.3g} × T_comms"


class _PeakBarsPanel:
    """Dense peak FLOP/s per precision for one chip (log scale); missing precisions show '–'."""

    def __init__(
        self, ax: Any, flops_range: tuple[float, float] = (1e10, 3e17), *, annotate: bool = True
    ) -> None:
        from matplotlib.ticker import FuncFormatter

        from .units import PRECISIONS

        self.ax = ax
        self.annotate = annotate
        self.precisions = PRECISIONS
        positions = np.arange(len(PRECISIONS))
        self.floor = flops_range[0]
        self.bars = ax.bar(
            positions, [0.0] * len(PRECISIONS), bottom=self.floor, color="lightgray"
        )
        ax.set_yscale("log")
        ax.set_ylim(*flops_range)
        ax.set_xticks(positions, PRECISIONS, fontsize=8)
        ax.yaxis.set_major_formatter(FuncFormatter(_flops_tick))
        ax.set_ylabel("dense peak FLOP/s")
        ax.grid(True, axis="y", which="major", alpha=0.3)
        self.labels = [
            # upright labels would run into their neighbours' at a legible size
            ax.text(x, self.floor, "", ha="center", va="bottom", fontsize=8, rotation=90)
            for x in positions
        ]
        self.title = ax.text(0.02, 0.97, "", transform=ax.transAxes, va="top", fontsize=9)

    @property
    def artists(self) -> list[Any]:
        """The bars, plus value labels and title when ``annotate`` is on."""
        return [*self.bars, *self.labels, self.title] if self.annotate else [*self.bars]

    def set_chip(self, the_chip: str | Chip, selected: str) -> None:
        the_chip = _chip("the_chip", the_chip)
        for precision, bar, label in zip(self.precisions, self.bars, self.labels, strict=True):
            if precision in the_chip.precisions:
                peak = the_chip.peak_flops(precision)
                bar.set_height(peak - self.floor)
                label.set_position((label.get_position()[0], peak * 1.3))
                if self.annotate:
                    label.set_text(_flops_tick(peak))
            else:
                bar.set_height(0.0)
                label.set_position((label.get_position()[0], self.floor))
                if self.annotate:
                    label.set_text("–")
            bar.set_color("tab:red" if precision == selected else "lightsteelblue")
        if self.annotate:
            self.title.set_text(f"{the_chip.name}: dense peaks")


# --- GPU and SM anatomy ---------------------------------------------------------------------

#: Full-die layout (GPCs, TPCs per GPC, SMs per TPC) and one SM partition's units, drawn from
#: the A100 and H100 architecture whitepapers (A100-WP, H100-WP). Drawing constants only: the
#: enabled SM count, registers and shared memory come from the chip table.
_DIE_LAYOUT = {
    "Ampere (GA100)": ("GA100", 8, 8, 2, {"INT32": 16, "FP32": 16, "FP64": 8, "LD/ST": 8}),
    "Hopper": ("GH100", 8, 9, 2, {"INT32": 16, "FP32": 32, "FP64": 16, "LD/ST": 8}),
}
_SM_PARTITIONS = 4


@_book_figure
def chip_diagram(chip_name: str | Chip = "A100-80GB", *, figsize=(WIDTH_IN, 4.6)) -> Any:
    """The chip from the outside in: GPCs → TPCs → SMs around the L2, memory, host and links.

    Works for the A100 (GA100) and H100 (GH100) rows of the table. SMs that the product fuses
    off (the full die has more than the SKU enables) are drawn hatched; which ones are disabled
    differs from die to die, so their positions here are illustrative only. The inside of one
    SM is :func:`sm_diagram`: one picture each keeps every label legible on a phone.
    """
    the_chip, die, n_gpc, tpc_per_gpc, sm_per_tpc, _ = _layout(chip_name)
    figsize = figure_size("figsize", figsize)
    full = n_gpc * tpc_per_gpc * sm_per_tpc
    enabled = the_chip.sm_count
    fig, ax = _pyplot().subplots(figsize=figsize, layout="constrained")
    box = functools.partial(_box, ax)
    ax.set_xlim(-0.5, 100.5)
    ax.set_ylim(-9, 80)
    ax.axis("off")
    ax.set_title(_wrap(f"{the_chip.name} ({die} die): {enabled} of {full} SMs", 3.4, TITLE_PT))
    box(8, 67, 84, 12, "PCIe host interface\nGigaThread engine (blocks → SMs)", "lightyellow")
    box(8, 0, 84, 6.5, f"{the_chip.interconnect or 'links'} · high-speed hub", "lavender")
    for side in (0, 94):
        box(side, 8, 6, 57, "", "white")
        ax.text(side + 3, 36.5, f"{the_chip.memory_type} controllers", rotation=90,
                ha="center", va="center")  # fmt: skip
    box(8, 33.5, 84, 6, f"L2 cache, {_binary_bytes(the_chip.l2_bytes)}", "#cfe8cf")
    gpc_w = 84 / (n_gpc // 2)
    disabled = _spread(full - enabled, full)
    sm_index = 0
    for g in range(n_gpc):
        row, col = divmod(g, n_gpc // 2)
        x0 = 8 + col * gpc_w
        y0 = 41 if row == 0 else 8
        box(x0 + 0.4, y0, gpc_w - 0.8, 24, "", "#f4f4f4")
        ax.text(x0 + gpc_w / 2, y0 + 20.6, f"GPC {g}", ha="center")
        cols = 2
        rows = -(-tpc_per_gpc // cols)
        tw, th = (gpc_w - 2) / cols, 19 / rows
        for t in range(tpc_per_gpc):
            tr, tc = divmod(t, cols)
            tx, ty = x0 + 1 + tc * tw, y0 + 0.6 + (rows - 1 - tr) * th
            box(tx + 0.1, ty + 0.1, tw - 0.2, th - 0.2, "", "#d5d8dc")  # one TPC
            for s in range(sm_per_tpc):
                off = sm_index in disabled
                box(tx + 0.3 + s * (tw - 0.6) / sm_per_tpc, ty + 0.3,
                    (tw - 0.6) / sm_per_tpc - 0.3, th - 0.6, "", "white" if off else "#7fb3d5",
                    hatch="////" if off else None)  # fmt: skip
                sm_index += 1
    ax.text(50, -2, "blue: an enabled SM · hatched: fused off\ngrey pairs: two SMs make a TPC",
            ha="center", va="top")  # fmt: skip
    return fig


@_book_figure
def sm_diagram(chip_name: str | Chip = "A100-80GB", *, figsize=(WIDTH_IN, 4.4)) -> Any:
    """Inside one SM: one of its four identical partitions (warp scheduler, register file,
    CUDA cores, Tensor Core, load/store units) between the instruction cache and the L1 data
    cache / shared memory. Unit counts per partition from the whitepapers; registers and shared
    memory from the chip table."""
    the_chip, _, _, _, _, units = _layout(chip_name)
    figsize = figure_size("figsize", figsize)
    fig, ax = _pyplot().subplots(figsize=figsize, layout="constrained")
    box = functools.partial(_box, ax)
    ax.set_xlim(-0.5, 100.5)
    ax.set_ylim(0, 100)
    ax.axis("off")
    ax.set_title(f"inside one {the_chip.name} SM", fontsize=TITLE_PT)
    box(0, 92, 100, 7, "L1 instruction cache", "lightyellow")
    regs = the_chip.registers_per_sm // _SM_PARTITIONS
    x0, y0, pw, ph = 0, 23, 100, 67
    box(x0, y0, pw, ph, "", "#f4f4f4")
    ax.text(x0 + 2, y0 + ph - 1.5, f"one of {_SM_PARTITIONS} identical partitions", va="top",
            fontstyle="italic")  # fmt: skip
    box(x0 + 2, y0 + 45, pw - 4, 13, "L0 i-cache · warp scheduler\ndispatch: 32 threads a clock",
        "lightyellow")  # fmt: skip
    box(x0 + 2, y0 + 36, pw - 4, 7.5, f"register file: {regs:,} × 32 bit", "#f9e79f")
    ux, uw = x0 + 2, (pw - 4 - 3 * 1.5) / 4
    for name, count in units.items():
        if name == "LD/ST":
            continue
        box(ux, y0 + 12, uw, 22, f"{name}\n×{count}", "#aed6f1")
        ux += uw + 1.5
    box(ux, y0 + 12, uw, 22, "Tensor\nCore", "#82e0aa")
    box(x0 + 2, y0 + 2, (pw - 4) * 0.62, 8, f"LD/ST ×{units['LD/ST']}", "#d7bde2")
    box(x0 + 2 + (pw - 4) * 0.64, y0 + 2, (pw - 4) * 0.36, 8, "SFU", "#f5b7b1")
    smem = _binary_bytes(the_chip.shared_memory_per_sm_bytes)
    box(0, 9, 100, 12, f"L1 data cache / shared memory\n(up to {smem} as shared memory)",
        "#cfe8cf")  # fmt: skip
    box(0, 0.5, 100, 7, "texture units", "white")
    return fig


def _layout(chip_name: str | Chip) -> tuple[Chip, str, int, int, int, dict[str, int]]:
    the_chip = chip(chip_name)
    if the_chip.architecture not in _DIE_LAYOUT:
        known = ", ".join(c.name for c in _chips_with_layout())
        raise ValueError(f"no die layout for {the_chip.name}; drawable chips: {known}")
    return (the_chip, *_DIE_LAYOUT[the_chip.architecture])


def _box(ax: Any, x: float, y: float, w: float, h: float, text: str = "", color: str = "white",
         **kw: Any) -> None:  # fmt: skip
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="black", lw=0.6, **kw))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", linespacing=1.3)


def _binary_bytes(n_bytes: float | None) -> str:
    from .units import format_bytes

    return "?" if n_bytes is None else format_bytes(n_bytes, binary=True)


def _spread(count: int, total: int) -> set[int]:
    """``count`` indices spread evenly over ``range(total)`` (the illustrative fused-off SMs)."""
    if count <= 0:
        return set()
    return {int(i * total / count + total / (2 * count)) for i in range(count)}


def _chips_with_layout() -> list[Chip]:
    from .hardware import chips

    return [c for c in chips() if c.architecture in _DIE_LAYOUT]


# --- static roofline figures ----------------------------------------------------------------


@_book_figure
def compute_vs_bandwidth(
    names: Sequence[str] = ("V100", "A100-80GB", "H100-SXM", "B200"),
    *,
    figsize=(WIDTH_IN, 5.6),
) -> Any:
    """Growth of 16-bit peak and HBM bandwidth across generations, and the ridge point it implies.

    16-bit is BF16 where the chip has it, else FP16 (V100, T4). Top: both quantities relative to
    the first chip (log scale). Bottom: the ridge point, peak / bandwidth, in FLOP per byte. The
    panels are stacked, so each keeps the figure's full width on a phone.
    """
    resolved = _chips("names", names)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    precisions = ["bf16" if "bf16" in c.precisions else "fp16" for c in resolved]
    peaks = np.array([c.peak_flops(p) for c, p in zip(resolved, precisions, strict=True)])
    bandwidths = np.array([c.hbm_bandwidth for c in resolved])
    ridges = [c.ridge_point(p) for c, p in zip(resolved, precisions, strict=True)]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=figsize, layout="constrained", sharex=True)
    x = np.arange(len(resolved))
    labels = [c.name.replace("-", "\n", 1) for c in resolved]  # "H100\nSXM": no labels touch
    top.semilogy(x, peaks / peaks[0], "o-", lw=2, label="16-bit tensor peak")
    top.semilogy(x, bandwidths / bandwidths[0], "s-", lw=2, label="HBM bandwidth")
    _log_ticks(top.yaxis, lambda v, _=None: f"×{v:g}", subs=(1.0, 2.0, 5.0))
    top.set_ylabel(f"relative to {resolved[0].name}")
    top.grid(True, which="major", alpha=0.3)
    top.legend(loc="upper left")
    top.set_title("compute grew faster than bandwidth")
    top.set_xlim(-0.4, len(resolved) - 0.6)
    bars = bottom.bar(x, ridges, color="tab:purple", width=0.6)
    bottom.bar_label(bars, [f"{r:.0f}" for r in ridges], padding=2)
    bottom.set_ylim(0, max(ridges) * 1.25)
    bottom.set_xticks(x, labels)
    bottom.set_ylabel("FLOP per byte")
    bottom.set_title("so each byte must feed more FLOPs:\nthe ridge point, peak ÷ bandwidth")
    bottom.grid(True, axis="y", alpha=0.3)
    return fig


@_book_figure
def roofline_bandwidths(
    the_chip: str | Chip,
    precision: str,
    bandwidths: Mapping[str, float],
    *,
    ops: Mapping[str, float] | None = None,
    intensity_range: tuple[float, float] = (0.1, 1e5),
    figsize=(WIDTH_IN, 3.0),
) -> Any:
    """One chip's roof under two bandwidths (e.g. HBM and a slower link), with coloured regions.

    ``bandwidths`` maps a label to bytes/s (two entries). Red: memory-bound under both; yellow:
    memory-bound only under the lower bandwidth; green: compute-bound under both. ``ops`` maps
    a label to an arithmetic intensity, drawn as a numbered point on the lower roof.
    """
    the_chip = _chip("the_chip", the_chip)
    the_chip.peak_flops(precision)
    bandwidths = _labelled("bandwidths", bandwidths, positive_float)
    if len(bandwidths) != 2:
        raise ValueError(
            f"bandwidths={show(bandwidths)} must have exactly two entries, got {len(bandwidths)}"
        )
    ops = _labelled("ops", ops, positive_float, minimum=0) if ops is not None else {}
    intensity_range = value_range("intensity_range", intensity_range)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    (low_label, low_bw), (high_label, high_bw) = sorted(bandwidths.items(), key=lambda kv: kv[1])
    intensity = np.geomspace(*intensity_range, 400)
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    peak = the_chip.peak_flops(precision)
    _log_axes(ax, intensity_range, (peak * 1e-5, peak * 3))
    ridge_high = the_chip.ridge_point(precision, high_bw)
    ridge_low = the_chip.ridge_point(precision, low_bw)
    ax.axvspan(intensity_range[0], ridge_high, color="tab:red", alpha=0.12, lw=0)
    ax.axvspan(ridge_high, ridge_low, color="gold", alpha=0.18, lw=0)
    ax.axvspan(ridge_low, intensity_range[1], color="tab:green", alpha=0.12, lw=0)
    for label, bw, style in ((high_label, high_bw, "-"), (low_label, low_bw, "--")):
        roof = attainable_flops(intensity, the_chip, precision, bw)
        ridge = the_chip.ridge_point(precision, bw)
        ax.plot(intensity, roof, style, lw=2,
                label=_wrap(f"{label}: ridge {_number(ridge)} FLOP/B", 3.8))  # fmt: skip
    for k, (label, value) in enumerate((ops or {}).items(), start=1):
        y = attainable_flops(value, the_chip, precision, low_bw)
        _numbered_point(ax, k, value, y, label, color="tab:blue")
    ax.set_title(_wrap(f"{the_chip.name} {precision}: two bandwidths, three regions",
                       3.4, TITLE_PT))  # fmt: skip
    _key_below(ax)
    return fig


@_book_figure
def batch_roofline(
    the_chip: str | Chip,
    widths: Sequence[int],
    precision: str = "bf16",
    *,
    weight_precision: str | None = None,
    max_batch: int = 512,
    figsize=(WIDTH_IN, 3.0),
) -> Any:
    """Roofline FLOP/s of X[B, D] · W[D, F] (D = F = width) against the token batch B.

    Exact byte counts (:func:`gpuperf.roofline.matmul_flops_vs_batch`); the dotted line is the
    exact critical batch for each width. Seed 004, problem 3.
    """
    from .roofline import critical_batch_size, matmul_flops_vs_batch

    the_chip = _chip("the_chip", the_chip)
    the_chip.peak_flops(precision)
    widths = sequence("widths", widths, positive_int)
    max_batch = positive_int("max_batch", max_batch, maximum=MAX_BATCH_DRAWN)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    batch = np.arange(1, max_batch + 1)
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    for width in widths:
        flops = matmul_flops_vs_batch(
            batch, width, width, the_chip, precision, weight_precision=weight_precision
        )
        crit = critical_batch_size(
            the_chip, precision, weight_precision=weight_precision, d=width, f=width
        )
        label = f"D = F = {width}"
        if np.isfinite(crit) and crit <= max_batch:
            label += f": B* ≈ {crit:.0f} (dotted)"
        (line,) = ax.plot(batch, flops / _TFLOPS, lw=2, label=label)
        if np.isfinite(crit) and crit <= max_batch:
            ax.axvline(crit, color=line.get_color(), ls=":", lw=1.2)
    weights = weight_precision or precision
    ax.set_xlabel("token batch B")
    ax.set_ylabel(f"TFLOP/s ({precision} math)")
    ax.set_title(_wrap(f"{the_chip.name}: {weights} weights, {precision} activations",
                       3.4, TITLE_PT))  # fmt: skip
    ax.set_xlim(0, max_batch)
    ax.set_ylim(0, the_chip.peak_flops(precision) / _TFLOPS * 1.1)
    ax.grid(True, alpha=0.3)
    _key_below(ax)
    return fig


@_book_figure
def achieved_roofline(
    the_chip: str | Chip,
    precision: str,
    points: Mapping[str, tuple[float, float]],
    *,
    measured_bandwidth: float | None = None,
    measured_peak: float | None = None,
    intensity_range: tuple[float, float] = (0.01, 1e5),
    title: str | None = None,
    labels: bool = True,
    figsize=(WIDTH_IN, 3.0),
) -> Any:
    """A Nsight-Compute-style chart: measured points under the datasheet roof.

    ``points`` maps a label to ``(intensity, achieved FLOP/s)``; each is drawn with a dashed
    drop line up to the roof, numbered, and named in the key under the axes with its percentage
    of the roof at that intensity (the distance left to gain). ``measured_bandwidth`` and
    ``measured_peak`` add the measured roof (dashed) under the datasheet one. ``labels=False``
    leaves the points unnumbered and out of the key (for clusters of points).
    """
    the_chip = _chip("the_chip", the_chip)
    peak = the_chip.peak_flops(precision)
    points = _labelled("points", points, _point, minimum=0)
    optional("measured_bandwidth", measured_bandwidth, positive_float)
    optional("measured_peak", measured_peak, positive_float)
    intensity_range = value_range("intensity_range", intensity_range)
    title, labels = _title(title), flag("labels", labels)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    intensity = np.geomspace(*intensity_range, 400)
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    _log_axes(ax, intensity_range, (peak * 1e-6, peak * 3))
    ax.plot(intensity, attainable_flops(intensity, the_chip, precision), lw=2, color="black",
            label=f"datasheet roof ({precision})")  # fmt: skip
    if measured_bandwidth is not None or measured_peak is not None:
        bw = measured_bandwidth or the_chip.hbm_bandwidth
        top = measured_peak or peak
        measured = the_chip.replace(peak_flops_per_s={precision: top}, hbm_bandwidth=bw)
        ax.plot(intensity, attainable_flops(intensity, measured, precision), "--", lw=1.6,
                color="tab:green", label="measured roof")  # fmt: skip
    for k, (label, (x, y)) in enumerate(points.items(), start=1):
        roof = attainable_flops(x, the_chip, precision)
        ax.plot([x, x], [y, roof], ":", color="tab:red", lw=1.2)
        if labels:
            # numbers alternate sides, so two points at one intensity keep theirs apart
            _numbered_point(ax, k, x, y, f"{label}, {y / roof:.0%} of roof",
                            side=-1 if k % 2 else 1)  # fmt: skip
        else:
            ax.plot(x, y, "o", ms=8, color="tab:red", mec="black", zorder=5)
    ax.set_title(_wrap(title or f"{the_chip.name}: achieved vs attainable", 3.4, TITLE_PT))
    _key_below(ax)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 3 (making it fast): coalescing, tiles, shared memory, waves, fusion, recomputation.
# The ``draw_*`` helpers draw onto a given Axes and return the artists a live view moves; the
# figure functions around them build a pyplot figure for a static notebook figure.

#: Colour codes of :func:`_coalescing_grid`: byte not fetched, fetched but unused, requested.
_BYTE_IDLE, _BYTE_WASTED, _BYTE_USED = 0, 1, 2
_BYTE_COLOURS = ("#f4f4f4", "#f4a582", "#2166ac")


def _coalescing_grid(result: Any, n_lines: int = 32) -> np.ndarray:
    """Bytes of memory as an (n_lines, line_bytes) array of :data:`_BYTE_IDLE`/`WASTED`/`USED`.

    Row r is cache line r; a byte is WASTED when its sector is fetched but no lane asked for it.
    Addresses beyond ``n_lines`` lines are not drawn (the caller says so in its caption).
    """
    from .memory import Coalescing

    if not isinstance(result, Coalescing):
        raise TypeError(f"result={result!r} must be a gpuperf.memory.Coalescing")
    n_lines = positive_int("n_lines", n_lines, maximum=MAX_LINES_DRAWN)
    line, sector = result.line_bytes, result.sector_bytes
    grid = np.full(n_lines * line, _BYTE_IDLE, dtype=np.int8)
    for s in result.sectors:
        start = s * sector
        if start < grid.size:
            grid[start : min(start + sector, grid.size)] = _BYTE_WASTED
    for address in result.addresses:
        if address < grid.size:
            grid[address : min(address + result.element_bytes, grid.size)] = _BYTE_USED
    return grid.reshape(n_lines, line)


def _draw_coalescing(ax: Any, result: Any, n_lines: int = 32) -> Any:
    """One warp's load as a byte map (rows: 128-byte lines, dotted columns: 32-byte sectors)."""
    colors = _require_matplotlib("matplotlib.colors")
    cmap = colors.ListedColormap(_BYTE_COLOURS)
    image = ax.imshow(
        _coalescing_grid(result, n_lines),
        cmap=cmap,
        vmin=-0.5,
        vmax=2.5,
        aspect="auto",
        interpolation="nearest",
        extent=(0, result.line_bytes, n_lines, 0),
    )
    for x in range(0, result.line_bytes + 1, result.sector_bytes):
        ax.axvline(x, color="0.5", lw=0.6, ls=":")
    ax.set_xlim(0, result.line_bytes)
    ax.set_ylim(n_lines, 0)
    ax.set_xlabel(
        f"byte within a {result.line_bytes}-byte line ({result.sector_bytes}-byte sectors)"
    )
    ax.set_ylabel("cache line")
    return image


@_book_figure
def coalescing_picture(results: Sequence[Any], n_lines: int = 16) -> Any:
    """Byte maps of several warp loads (e.g. stride 1, offset 1, stride 2, 8), one under the
    other, each the figure's full width: side by side, a phone would shrink them to stamps."""
    from .memory import Coalescing

    results = sequence("results", results, lambda name, r: instance(name, r, Coalescing))
    n_lines = positive_int("n_lines", n_lines, maximum=MAX_LINES_DRAWN)
    plt = _pyplot()
    fig, axes = plt.subplots(
        len(results), 1, figsize=(WIDTH_IN, 0.8 + 1.4 * len(results)), layout="constrained",
        squeeze=False, sharex=True,
    )  # fmt: skip
    for ax, result in zip(axes[:, 0], results, strict=True):
        _draw_coalescing(ax, result, n_lines)
        ax.set_title(
            f"stride {result.stride}, offset {result.offset}: {result.transactions} sectors, "
            f"{result.efficiency:.0%} useful",
            fontsize=FONT_PT,
        )
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.set_yticks([0, n_lines // 2, n_lines])
    first = results[0]
    axes[-1, 0].set_xticks(range(0, first.line_bytes + 1, first.sector_bytes))
    axes[-1, 0].set_xlabel(_wrap(f"byte in a {first.line_bytes}-byte line (dotted: "
                                 f"{first.sector_bytes}-byte sectors)"))  # fmt: skip
    fig.supylabel("cache line", fontsize=FONT_PT)
    return fig


def _require_matplotlib(module: str) -> Any:
    from .runtime import require

    return require(module, "pip install matplotlib")


def _draw_sawtooth(ax: Any, sizes: np.ndarray, efficiency: np.ndarray, **style: Any) -> Any:
    """The wave-efficiency curve as a step line; returns the Line2D."""
    (line,) = ax.plot(sizes, efficiency, drawstyle="steps-post", lw=1.2, **style)
    return line


@_book_figure
def sawtooth(
    chips: Sequence[str | Chip],
    block_m: int,
    block_n: int,
    sizes: np.ndarray,
    *,
    highlight: Sequence[int] = (),
    figsize: tuple[float, float] = (WIDTH_IN, 2.8),
) -> Any:
    """Wave efficiency of an N × N matmul against N for each chip (the sawtooth)."""
    from .tiling import wave_efficiency, wave_efficiency_curve

    resolved = _chips("chips", chips)
    curves = [wave_efficiency_curve(sizes, block_m, block_n, c) for c in resolved]  # checks
    sizes = np.asarray(sizes)
    highlight = sequence("highlight", highlight, positive_int, minimum=0)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    for the_chip, eff in zip(resolved, curves, strict=True):
        line = _draw_sawtooth(ax, sizes, eff, label=f"{the_chip.name} ({the_chip.sm_count} SMs)")
        for n in highlight:
            value = wave_efficiency(n, n, block_m, block_n, the_chip)
            ax.plot(n, value, "o", color=line.get_color(), mec="black", ms=6, zorder=3)
    for n in highlight:
        ax.axvline(n, color="0.4", lw=0.8, ls=":")
    ax.set_xlabel(_wrap(f"matrix size N (N × N output, {block_m} × {block_n} tiles)"))
    ax.set_ylabel("wave efficiency")
    ax.set_ylim(0, 1.08)
    ax.set_xlim(sizes[0], sizes[-1])
    ax.grid(True, alpha=0.3)
    _key_below(ax)
    return fig


#: Most matrix sizes :func:`schedule_efficiency` draws (four schedules each, counted one by one).
MAX_SIZES_DRAWN = 2048


@_book_figure
def schedule_efficiency(
    chip_name: str | Chip,
    sizes: np.ndarray,
    k: int,
    block_m: int,
    block_n: int,
    block_k: int,
    *,
    highlight: Sequence[int] = (),
    figsize: tuple[float, float] = (WIDTH_IN, 2.8),
) -> Any:
    """Busy fraction of the SMs against N for an N × N × k GEMM under each schedule.

    Data-parallel and persistent share one line (the same tail); stream-K and the hybrid pay
    the fix-up of :mod:`gpuperf.gemm_schedule` (its default cost) instead of a tail.
    """
    from .gemm_schedule import SCHEDULES, gemm_schedules

    the_chip = chip(chip_name)
    sizes = np.array(sequence("sizes", sizes, positive_int, maximum=MAX_SIZES_DRAWN))
    rows = [gemm_schedules(n, n, k, block_m, block_n, block_k, the_chip) for n in sizes]
    highlight = sequence("highlight", highlight, positive_int, minimum=0)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    styles = {
        "data-parallel": ("data-parallel = persistent (same tail)", "-", "tab:blue"),
        "stream-K": ("stream-K (fix-up, no tail)", "-", "tab:orange"),
        "hybrid": ("hybrid: two-tile stream-K + data-parallel", "--", "tab:green"),
    }
    for name, (label, dash, color) in styles.items():  # persistent: the data-parallel line
        eff = np.array([row[SCHEDULES.index(name)].efficiency for row in rows])
        ax.plot(sizes, eff, dash, drawstyle="steps-post", lw=1.2, color=color, label=label)
    for n in highlight:
        ax.axvline(n, color="0.4", lw=0.8, ls=":")
    ax.set_xlabel(
        _wrap(f"matrix size N (N × N × {k} GEMM, {block_m} × {block_n} × {block_k} tiles)")
    )
    ax.set_ylabel("SMs busy")
    ax.set_ylim(0, 1.08)
    ax.set_xlim(sizes[0], sizes[-1])
    ax.set_title(f"{the_chip.name} ({the_chip.sm_count} SMs)", fontsize=TITLE_PT)
    ax.grid(True, alpha=0.3)
    _key_below(ax)
    return fig


@_book_figure
def tile_picture(
    m: int, n: int, block_m: int, block_n: int, *, figsize=(WIDTH_IN * 0.8, 4.0)
) -> Any:
    """The output C[m, n] cut into BM × BN tiles; the masked part of the edge tiles is hatched."""
    from .tiling import tile_count, tile_efficiency

    tile_count(m, n, block_m, block_n)  # validates the sizes and blocks, with their names
    figsize = figure_size("figsize", figsize)
    m, n, block_m, block_n = int(m), int(n), int(block_m), int(block_n)
    tiles_m, tiles_n = -(-m // block_m), -(-n // block_n)
    if max(tiles_m, tiles_n) > MAX_TILES_DRAWN:
        raise ValueError(
            f"m={m}, n={n} with {block_m} × {block_n} tiles is a {tiles_m} × {tiles_n} grid; "
            f"tile_picture draws at most {MAX_TILES_DRAWN} tiles per side (one line per edge)"
        )
    patches = _require_matplotlib("matplotlib.patches")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    padded_m, padded_n = tiles_m * block_m, tiles_n * block_n
    ax.add_patch(patches.Rectangle((0, 0), n, m, color="tab:blue", alpha=0.25, lw=0))
    # The masked (padding) part of the edge tiles: loads return 0, stores are skipped.
    for xy, width, height in (((n, 0), padded_n - n, padded_m), ((0, m), n, padded_m - m)):
        if width > 0 and height > 0:
            ax.add_patch(
                patches.Rectangle(
                    xy, width, height, fill=False, hatch="///", ec="tab:red", lw=0, alpha=0.7
                )
            )
    for i in range(tiles_m + 1):
        ax.axhline(i * block_m, color="black", lw=0.8)
    for j in range(tiles_n + 1):
        ax.axvline(j * block_n, color="black", lw=0.8)
    ax.add_patch(patches.Rectangle((0, 0), n, m, fill=False, ec="tab:blue", lw=2))
    ax.set_xlim(0, tiles_n * block_n)
    ax.set_ylim(tiles_m * block_m, 0)
    ax.set_aspect("equal")
    # ticks on the tile edges, at most six to an axis
    ax.set_xticks(range(0, padded_n + 1, block_n * -(-(tiles_n + 1) // 6)))
    ax.set_yticks(range(0, padded_m + 1, block_m * -(-(tiles_m + 1) // 6)))
    ax.set_xlabel("column of C")
    ax.set_ylabel("row of C")
    ax.set_title(
        f"{m} × {n}, {block_m} × {block_n} tiles:\n{tile_count(m, n, block_m, block_n)} tiles, "
        f"{tile_efficiency(m, n, block_m, block_n):.0%} of outputs useful",
        fontsize=FONT_PT,
    )
    return fig


def _draw_smem_gauge(
    ax: Any, budget: Any | None = None, *, fontsize: float = 8
) -> tuple[Any, Any]:
    """A horizontal gauge: shared memory needed over the per-block limit (1.0 = full).

    Returns (bar, text) to move with :func:`_set_smem_gauge`. The axis runs to 1.5 so an
    overflow shows past the red limit line.
    """
    (bar,) = ax.barh([0], [0.0], height=0.5, color="tab:green")
    ax.axvline(1.0, color="tab:red", lw=2)
    ax.text(1.0, 0.35, " limit", color="tab:red", fontsize=fontsize, va="bottom")
    ax.set_xlim(0, 1.5)
    ax.set_ylim(-0.4, 1.0)
    ax.set_yticks([])
    ax.set_xlabel("shared memory needed / available per block")
    text = ax.text(0.02, 0.35, "", fontsize=fontsize, va="bottom")
    if budget is not None:
        _set_smem_gauge(bar, text, budget)
    return bar, text


def _set_smem_gauge(bar: Any, text: Any, budget: Any) -> None:
    """Fill the gauge from a :class:`~gpuperf.tiling.SharedMemoryBudget`."""
    fraction = budget.fraction_used
    bar.set_width(min(fraction, 1.5))
    bar.set_color("tab:green" if fraction <= 0.75 else "tab:orange" if budget.fits else "tab:red")
    text.set_text(
        f"{budget.shared_memory_bytes / 1024:g} KiB of {budget.limit_bytes / 1024:g} KiB "
        f"({budget.chip_name}, {budget.num_stages} stages)"
    )


@_book_figure
def smem_gauges(budgets: Sequence[Any], *, figsize: tuple[float, float] = (WIDTH_IN, 1.0)) -> Any:
    """One shared-memory gauge per budget (e.g. one tile on T4, A100, H100), stacked; each names
    its chip and states its bytes above its bar."""
    from .tiling import SharedMemoryBudget

    check = lambda name, b: instance(name, b, SharedMemoryBudget)
    budgets = sequence("budgets", budgets, check)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    fig, axes = plt.subplots(
        len(budgets), 1, figsize=(figsize[0], figsize[1] * len(budgets) + 0.6),
        layout="constrained", squeeze=False, sharex=True,
    )  # fmt: skip
    for ax, budget in zip(axes[:, 0], budgets, strict=True):
        _, text = _draw_smem_gauge(ax, budget, fontsize=FONT_PT)
        text.set_text(
            f"{budget.chip_name}: {budget.shared_memory_bytes / 1024:g} of "
            f"{budget.limit_bytes / 1024:g} KiB"
        )
        ax.set_xticks([0, 0.5, 1.0, 1.5], ["0", "½", "1", "1½"])
        if ax is not axes[-1, 0]:
            ax.set_xlabel("")
    axes[-1, 0].set_xlabel(_wrap("shared memory needed ÷ available per block"))
    return fig


@_book_figure
def traffic_bars(
    costs: Mapping[str, OpCost], *, figsize: tuple[float, float] = (WIDTH_IN, 1.0)
) -> Any:
    """HBM bytes read and written per operation (or variant), as stacked horizontal bars, each
    named above its bar (names beside the bars would take half a phone's width)."""
    from .units import format_bytes

    costs = _labelled("costs", costs, _op)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    labels = list(costs)
    fig, ax = plt.subplots(
        figsize=(figsize[0], figsize[1] + 0.75 * len(labels)), layout="constrained"
    )
    reads = np.array([costs[k].bytes_read for k in labels])
    writes = np.array([costs[k].bytes_written for k in labels])
    y = np.arange(len(labels))
    ax.barh(y, reads, height=0.45, color="tab:blue", label="read from HBM")
    ax.barh(y, writes, left=reads, height=0.45, color="tab:orange", label="written to HBM")
    for i, (label, total) in enumerate(zip(labels, reads + writes, strict=True)):
        ax.text(0, i - 0.3, f"{label}: {format_bytes(total)}", va="bottom")
    ax.set_yticks([])
    ax.set_ylim(len(labels) - 0.5, -0.9)
    ax.set_xlim(0, float((reads + writes).max()) * 1.05)
    ax.xaxis.set_major_formatter(_formatter(lambda v, _=None: format_bytes(v) if v else "0"))
    ax.xaxis.set_major_locator(_max_ticks(4))
    ax.set_xlabel("bytes moved")
    _key_below(ax)
    return fig


def _formatter(function: Callable[..., str]) -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(function)


def _max_ticks(count: int) -> Any:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(count)


@_book_figure
def checkpoint_tradeoff(
    n_layers: int,
    activation_bytes_per_layer: float,
    input_bytes_per_layer: float,
    *,
    figsize: tuple[float, float] = (WIDTH_IN, 3.0),
) -> Any:
    """Peak activation memory against how often one checkpoints (every k layers), plus k = none."""
    from .recompute import best_checkpoint_every, checkpointing

    n_layers = positive_int("n_layers", n_layers, maximum=MAX_LAYERS_DRAWN)
    best = best_checkpoint_every(n_layers, activation_bytes_per_layer, input_bytes_per_layer)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    ks = np.arange(1, n_layers + 1)
    plans = [
        checkpointing(n_layers, activation_bytes_per_layer, input_bytes_per_layer, 1.0, int(k))
        for k in ks
    ]
    baseline = plans[0].baseline_bytes
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    ax.plot(ks, [p.peak_bytes / baseline for p in plans], "o-", ms=4, label="peak (backward)")
    stored = [p.stored_bytes / baseline for p in plans]
    ax.plot(ks, stored, "s--", ms=4, label="kept after the forward")
    ax.axhline(1.0, color="black", lw=1, ls=":", label="no checkpointing")
    ax.axvline(best, color="tab:red", lw=1, ls=":")
    ax.annotate(f"best k = {best}", (best, 0.9), xytext=(4, 0), textcoords="offset points",
                color="tab:red")  # fmt: skip
    ax.set_xlabel(f"checkpoint every k layers (L = {n_layers})")
    ax.set_ylabel(_wrap("activation memory ÷ none", 2.6))
    ax.set_xlim(0, n_layers + 1)
    ax.set_ylim(-0.05, 1.1)  # markers at 0 stay whole
    ax.grid(True, alpha=0.3)
    _key_below(ax)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapters 4 and 5: attention traffic vs N, the memory ladder, effective bandwidth vs size.


@_book_figure
def attention_traffic(
    head_dim: int = 128,
    sram_bytes: int | None = None,
    precision: str = "fp16",
    *,
    chip_name: str | Chip = "A100-80GB",
    seq_lens: Sequence[int] = tuple(2**k for k in range(8, 18)),
    figsize: tuple[float, float] = (WIDTH_IN, 3.2),
) -> Any:
    """HBM bytes per head of one attention forward vs N: standard, FlashAttention-1 and -2.

    ``sram_bytes`` defaults to the chip's shared memory per block. FlashAttention-1 is counted
    with Algorithm 1's blocks, FlashAttention-2 with its own tiles (B_r = 128 where they fit,
    :func:`gpuperf.attention.fa2_block_sizes`); the title gives both. Also drawn: Theorem 2's
    N²d²/M count (elements × bytes per element, constants dropped) as a thin dashed guide, and
    the traffic of FlashAttention-2 if every K/V re-read hit L2 (one pass over Q, K, V, O).
    """
    from . import attention as attn
    from .units import bytes_per_element, format_bytes

    the_chip = chip(chip_name)
    if sram_bytes is None:
        sram = the_chip.shared_memory_per_block_bytes
        if sram is None:
            raise ValueError(
                f"chip_name={the_chip.name!r} has no shared memory per block: pass sram_bytes"
            )
    else:
        sram = positive_int("sram_bytes", sram_bytes)
    blocks = attn.flash_block_sizes(sram, head_dim, precision)
    tiles = attn.fa2_block_sizes(sram, head_dim, precision)
    n = np.array(sequence("seq_lens", seq_lens, positive_int), dtype=np.int64)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    size = bytes_per_element(precision)
    series = {
        "standard (writes S and P)": [attn.hbm_traffic_standard(x, head_dim, precision).bytes
                                      for x in n],
        "FlashAttention-1 loop order": [
            attn.hbm_traffic_flash(x, head_dim, sram, precision, version=1).bytes for x in n],
        "FlashAttention-2 loop order": [
            attn.hbm_traffic_flash(x, head_dim, sram, precision).bytes for x in n],
        "FA-2 if K/V re-reads hit L2": [
            attn.hbm_traffic_flash(x, head_dim, sram, precision, block_r=int(x)).bytes
            for x in n],
    }  # fmt: skip
    styles = {
        "standard (writes S and P)": dict(color="tab:red", marker="o"),
        "FlashAttention-1 loop order": dict(color="tab:cyan", ls="--", marker="^"),
        "FlashAttention-2 loop order": dict(color="tab:blue", marker="s"),
        "FA-2 if K/V re-reads hit L2": dict(color="tab:blue", ls=":", marker="s", mfc="white"),
    }
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    for label, values in series.items():
        ax.loglog(n, values, ms=5, label=label, **styles[label])
    theorem = [attn.io_complexity_flash(x, head_dim, blocks.sram_elements) * size for x in n]
    ax.loglog(n, theorem, color="0.5", lw=1, ls="-.", label="Theorem 2: N²d²/M (no constant)")
    ax.set_xscale("log", base=2)
    _log_ticks(ax.xaxis, _count_tick, base=4)
    _log_ticks(ax.yaxis, _bytes_tick, numticks=6)
    ax.set_xlim(n[0] / 1.3, n[-1] * 1.3)  # markers at the ends stay whole
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("HBM bytes per head")
    ax.grid(True, which="major", alpha=0.3)
    title = (
        f"{the_chip.name}, forward: d = {head_dim}, {precision}, SRAM "
        f"{format_bytes(sram, binary=True)}; FA-1 blocks B_c = {blocks.block_c}, "
        f"B_r = {blocks.block_r}; FA-2 tiles {tiles.block_r} × {tiles.block_c}"
    )
    ax.set_title(_wrap(title, 3.4, TITLE_PT))
    _key_below(ax)
    return fig


def _count_tick(value: float, _position: Any = None) -> str:
    """Powers of two as people write sequence lengths: 256, 1K, 16K, 1M."""
    for scale, suffix in ((2**20, "M"), (2**10, "K")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def _bytes_tick(value: float, _position: Any = None) -> str:
    return _si_tick(value, unit="B")


def _rate_tick(value: float, _position: Any = None) -> str:
    return _si_tick(value, unit="B/s")


@_book_figure
def memory_ladder(
    levels: Sequence[Any],
    measured: Mapping[str, Sequence[Any]] | None = None,
    *,
    title: str | None = None,
    figsize: tuple[float, float] = (WIDTH_IN, 0.7),
) -> Any:
    """The bandwidth ladder on a log scale: datasheet bars with measured values beside them.

    ``levels`` are :class:`gpuperf.memory.Level` rungs, fastest first (drawn top to bottom);
    ``measured`` maps a level's name to :class:`gpuperf.measurements.Measurement` objects (B/s)
    drawn as diamonds on that rung. Each rung reads as three lines: its name and capacity, the
    bar with the datasheet value at its end, and the measured values. A rung with no datasheet
    bandwidth says so. ``figsize`` is the width and the height *per rung*. Sources belong in
    the caption (a citation), not inside the figure.
    """
    from .memory import Level
    from .units import format_bandwidth, format_bytes

    levels = sequence("levels", levels, lambda name, lv: instance(name, lv, Level))
    rungs = lambda name, ms: sequence(name, ms, _measured_rate, minimum=0)
    measured = _labelled("measured", measured, rungs, minimum=0) if measured is not None else {}
    title, figsize = _title(title), figure_size("figsize", figsize)
    plt = _pyplot()
    unknown = set(measured) - {level.name for level in levels}
    if unknown:
        raise ValueError(
            f"measured names {sorted(unknown)} are not levels; valid: "
            f"{[level.name for level in levels]}"
        )
    values = [lv.bandwidth_bytes_per_s for lv in levels if lv.bandwidth_bytes_per_s]
    values += [m.value for ms in measured.values() for m in ms]
    if not values:
        raise ValueError(f"levels={show(levels)}: no rung has a bandwidth to draw")
    low, high = min(values) / 3, max(values) * 60
    fig, ax = plt.subplots(
        figsize=(figsize[0], figsize[1] * len(levels) + 0.9), layout="constrained"
    )
    y = np.arange(len(levels))[::-1]
    for row, level in zip(y, levels, strict=True):
        bandwidth = level.bandwidth_bytes_per_s
        rung = measured.get(level.name, ())
        name = level.name + (f" · {format_bytes(level.capacity_bytes)}"
                             if level.capacity_bytes else "")  # fmt: skip
        ax.text(low * 1.15, row + 0.3, name, va="center")
        if bandwidth:
            # the words go right of everything drawn on the rung, so no marker covers them
            right = max([bandwidth, *(m.value for m in rung)]) * 1.7
            ax.barh(row, bandwidth - low, left=low, height=0.26,
                    color="lightsteelblue", edgecolor="steelblue")  # fmt: skip
            ax.text(right, row, format_bandwidth(bandwidth), va="center", color="steelblue")
        else:
            ax.text(low * 1.15, row, "no published bandwidth", va="center", color="steelblue")
        for m in rung:
            ax.plot(m.value, row, "D", color="tab:orange", mec="black", ms=7, zorder=4)
        if rung:
            words = ", ".join(
                format_bandwidth(m.value)
                + (f" ({m.chip})" if m.chip and m.chip not in (title or "") else "")
                for m in rung
            )
            ax.text(low * 1.15, row - 0.3, _wrap("◆ measured " + words, 3.9), va="center",
                    color="saddlebrown")  # fmt: skip
    ax.set_xscale("log")
    _log_ticks(ax.xaxis, _rate_tick, numticks=5)
    ax.set_xlim(low, high)
    ax.set_ylim(-0.6, len(levels) - 0.4)
    ax.set_yticks([])
    ax.set_xlabel("bandwidth (log scale)")
    ax.grid(True, axis="x", which="major", alpha=0.3)
    if title:
        ax.set_title(_wrap(title, 3.4, TITLE_PT))
    return fig


@_book_figure
def link_bandwidths(
    rows: Sequence[tuple[str, Any, float | None]],
    *,
    title: str | None = None,
    figsize: tuple[float, float] = (WIDTH_IN, 0.5),
) -> Any:
    """Measured link bandwidths (log scale) beside the theoretical peak of the same link.

    ``rows`` are ``(label, measurement, peak_bytes_per_s or None)``; each row is named above its
    bar and its measurement is written after the bar with, when a peak is given, the fraction of
    it achieved. ``figsize`` is the width and the height *per row*. Sources belong in the
    caption (a citation), not inside the figure.
    """
    from .units import format_bandwidth

    rows = sequence("rows", rows, _link_row)
    title, figsize = _title(title), figure_size("figsize", figsize)
    plt = _pyplot()
    fig, ax = plt.subplots(
        figsize=(figsize[0], figsize[1] * len(rows) + 0.9), layout="constrained"
    )
    values = [m.value for _, m, _ in rows] + [p for _, _, p in rows if p]
    low, high = min(values) / 3, max(values) * 300  # room for the words after the longest bar
    y = np.arange(len(rows))[::-1]
    for row, (label, m, peak) in zip(y, rows, strict=True):
        ax.text(low * 1.15, row + 0.28, label, va="center")
        ax.barh(row - 0.08, m.value - low, left=low, height=0.3, color="tab:orange", alpha=0.8)
        note = format_bandwidth(m.value)
        if peak:
            ax.plot([peak], [row - 0.08], "|", color="black", ms=14, mew=2)
            note += f" ({m.value / peak:.0%})"
        # right of the bar and of the peak tick, so the tick never crosses the words
        ax.text(max(m.value, peak or 0.0) * 1.25, row - 0.08, note, va="center")
    ax.set_xscale("log")
    _log_ticks(ax.xaxis, _rate_tick, numticks=4)
    ax.set_xlim(low, high)
    ax.set_ylim(-0.6, len(rows) - 0.35)
    ax.set_yticks([])
    ax.set_xlabel(_wrap("bars: measured (log scale); |: the link's theoretical peak, and in "
                        "brackets the share of it reached"))  # fmt: skip
    ax.grid(True, axis="x", which="major", alpha=0.3)
    if title:
        ax.set_title(_wrap(title, 3.4, TITLE_PT))
    return fig


@_book_figure
def effective_bandwidth_curves(
    links: Mapping[str, tuple[float, float]],
    *,
    size_range: tuple[float, float] = (1e2, 1e10),
    latency_bound_below: float | None = None,
    figsize: tuple[float, float] = (WIDTH_IN, 3.0),
) -> Any:
    """Effective bandwidth vs transfer size for links given as ``{label: (bandwidth, latency_s)}``.

    Each curve is :func:`gpuperf.memory.effective_bandwidth`; a circle marks its half-bandwidth
    size (latency × bandwidth), given in the key. ``latency_bound_below`` draws a dashed line at
    that size (the ~1 MB knee of nvbandwidth copies on an H100 node, Smol Training Playbook).
    """
    from . import memory
    from .units import format_bytes

    links = _labelled("links", links, _link)
    size_range = value_range("size_range", size_range)
    optional("latency_bound_below", latency_bound_below, positive_float)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    sizes = np.geomspace(*size_range, 300)
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    for label, (bandwidth, latency_s) in links.items():
        half = memory.half_bandwidth_size(bandwidth, latency_s)
        (line,) = ax.loglog(
            sizes,
            memory.effective_bandwidth(sizes, bandwidth, latency_s),
            lw=2,
            label=_wrap(f"{label} · half at {format_bytes(half)}", 3.8),
        )
        ax.plot(half, bandwidth / 2, "o", color=line.get_color(), mec="black", ms=7)
    if latency_bound_below:
        ax.axvline(latency_bound_below, color="0.4", ls="--", lw=1,
                   label=_wrap("nvbandwidth copies: latency-bound below this size",
                               3.8))  # fmt: skip
    ax.set_xlim(*size_range)
    _log_ticks(ax.xaxis, _bytes_tick, numticks=5)
    _log_ticks(ax.yaxis, _rate_tick, numticks=6)
    ax.set_xlabel("transfer size")
    ax.set_ylabel("effective bandwidth")
    ax.grid(True, which="major", alpha=0.3)
    _key_below(ax)
    return fig


def _measured_rate(name: str, value: object) -> Any:
    """A :class:`gpuperf.measurements.Measurement` of a rate in B/s."""
    from .measurements import Measurement

    m = instance(name, value, Measurement)
    if m.unit != "B/s":
        raise ValueError(f"{name}={m.quantity!r} is in {m.unit}, not B/s")
    return m


def _link_row(name: str, value: object) -> tuple[str, Any, float | None]:
    """``(label, measurement of B/s, peak bytes/s or None)`` of :func:`link_bandwidths`."""
    label, measured, peak = sequence(name, value, minimum=3, maximum=3)
    if not isinstance(label, str):
        raise TypeError(f"{name}[0]={show(label)} must be a label (a string)")
    return label, _measured_rate(f"{name}[1]", measured), optional(name, peak, positive_float)


def _link(name: str, value: object) -> tuple[float, float]:
    """``(bandwidth bytes/s, latency s)`` of one link."""
    bandwidth, latency_s = sequence(name, value, minimum=2, maximum=2)
    return positive_float(name, bandwidth), positive_float(name, latency_s, allow_zero=True)
