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

from collections.abc import Mapping, Sequence
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
    "coalescing_picture",
    "compute_vs_bandwidth",
    "effective_bandwidth_curves",
    "gpu_anatomy",
    "link_bandwidths",
    "memory_ladder",
    "roofline",
    "roofline_bandwidths",
    "sawtooth",
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


def roofline(
    chips: str | Chip | Sequence[str | Chip],
    precision: str = "bf16",
    *,
    ops: Mapping[str, OpCost] | None = None,
    intensity_range: tuple[float, float] = (0.05, 5000.0),
    bandwidth: float | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = (7.0, 4.2),
) -> Any:
    """Log-log roofline of one or more chips at one precision; returns the ``Figure``.

    ``ops`` maps a label to an :class:`~gpuperf.cost.OpCost`; each is drawn as a point at its
    arithmetic intensity on the roof of the *first* chip. ``bandwidth`` replaces HBM bandwidth
    (e.g. a link) for every chip. With a single chip the memory-bound region is shaded.
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
    for the_chip in resolved:
        roof = attainable_flops(intensity, the_chip, precision, bandwidth) / _TFLOPS
        ridge = the_chip.ridge_point(precision, bandwidth)
        (line,) = ax.loglog(intensity, roof, lw=2, label=f"{the_chip.name} ({precision})")
        ax.axvline(ridge, color=line.get_color(), ls=":", lw=1)
        ax.annotate(
            f"ridge {ridge:.0f}",
            (ridge, the_chip.peak_flops(precision) / _TFLOPS),
            textcoords="offset points",
            xytext=(4, -14),
            fontsize=8,
            color=line.get_color(),
        )
    if len(resolved) == 1:
        ridge = resolved[0].ridge_point(precision, bandwidth)
        ax.axvspan(low, ridge, color="tab:blue", alpha=0.07, lw=0)
        ax.axvspan(ridge, high, color="tab:orange", alpha=0.07, lw=0)
        ax.text(low * 1.3, ax.get_ylim()[1] * 0.4, "memory-bound", fontsize=9, va="top")
        ax.text(ridge * 1.3, ax.get_ylim()[0] * 2.0, "compute-bound", fontsize=9, va="bottom")
    for label, op in (ops or {}).items():
        y = attainable_flops(op.intensity, resolved[0], precision, bandwidth)
        ax.plot(op.intensity, y / _TFLOPS, "o", ms=7, mec="black", zorder=3)
        ax.annotate(
            f"{label}\n{format_flops(y)}",
            (op.intensity, y / _TFLOPS),
            textcoords="offset points",
            xytext=(6, -22),
            fontsize=8,
        )
    ax.set_xlim(low, high)
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("attainable TFLOP/s")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    if title:
        ax.set_title(title)
    return fig


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
    return f"{value:g}"


def _number(value: float) -> str:
    """``295.2`` → ``'295'``, ``1125`` → ``'1,125'``, ``0.125`` → ``'0.125'``."""
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:.3g}"


def _log_axes(ax: Any, intensity_range: tuple[float, float], flops_range: tuple[float, float]):
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*intensity_range)
    ax.set_ylim(*flops_range)
    ax.xaxis.set_major_locator(LogLocator(base=10))
    ax.xaxis.set_major_formatter(FuncFormatter(_intensity_tick))
    ax.yaxis.set_major_formatter(FuncFormatter(_flops_tick))
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


def gpu_anatomy(chip_name: str | Chip = "A100-80GB", *, figsize=(6.4, 8.6)) -> Any:
    """The chip (GPCs → TPCs → SMs, L2, memory, links) above one SM's inside.

    Works for the A100 (GA100) and H100 (GH100) rows of the table. SMs that the product fuses
    off (the full die has more than the SKU enables) are drawn hatched; which ones are disabled
    differs from die to die, so their positions here are illustrative only. The two panels are
    stacked and the SM shows one of its four identical partitions, so the figure fits a phone's
    width with every label at 8–9 pt.
    """
    from matplotlib.patches import Rectangle

    the_chip = chip(chip_name)
    figsize = figure_size("figsize", figsize)
    if the_chip.architecture not in _DIE_LAYOUT:
        known = ", ".join(c.name for c in _chips_with_layout())
        raise ValueError(f"no die layout for {the_chip.name}; drawable chips: {known}")
    die, n_gpc, tpc_per_gpc, sm_per_tpc, units = _DIE_LAYOUT[the_chip.architecture]
    full = n_gpc * tpc_per_gpc * sm_per_tpc
    enabled = the_chip.sm_count
    plt = _pyplot()
    fig, (ax_chip, ax_sm) = plt.subplots(
        2, 1, figsize=figsize, layout="constrained", gridspec_kw={"height_ratios": [1.1, 1]}
    )

    def box(ax, x, y, w, h, text="", color="white", size=9, **kw):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="black", lw=0.6, **kw))
        if text:
            ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size)

    # ---- the chip: two rows of GPCs around the L2 cache -------------------------------------
    ax = ax_chip
    ax.set_xlim(0, 100)
    ax.set_ylim(-5, 76)
    ax.set_xlim(-0.5, 100.5)
    ax.axis("off")
    ax.set_title(
        f"{the_chip.name}: {die} die, {full} SMs on the full die, {enabled} enabled", fontsize=10
    )
    box(ax, 8, 66, 84, 7, "host interface (PCIe) · GigaThread\nengine (blocks → SMs; MIG)",
        "lightyellow", size=8)  # fmt: skip
    box(ax, 8, 0, 84, 6.5, f"{the_chip.interconnect or 'links'} · high-speed hub", "lavender")
    for side in (0, 94):
        box(ax, side, 8, 6, 56, "", "white")
        ax.text(side + 3, 36, f"{the_chip.memory_type} memory controllers", rotation=90,
                ha="center", va="center", fontsize=8)  # fmt: skip
    box(ax, 8, 33, 84, 5, f"L2 cache ({_binary_bytes(the_chip.l2_bytes)}), shared by all SMs",
        "#cfe8cf")  # fmt: skip
    gpc_w = 84 / (n_gpc // 2)
    disabled = _spread(full - enabled, full)
    sm_index = 0
    for g in range(n_gpc):
        row, col = divmod(g, n_gpc // 2)
        x0 = 8 + col * gpc_w
        y0 = 39.5 if row == 0 else 7.5
        box(ax, x0 + 0.4, y0, gpc_w - 0.8, 25, "", "#f4f4f4")
        ax.text(x0 + gpc_w / 2, y0 + 22.8, f"GPC {g}", ha="center", fontsize=8)
        cols = 2
        rows = -(-tpc_per_gpc // cols)
        tw, th = (gpc_w - 2) / cols, 20.5 / rows
        for t in range(tpc_per_gpc):
            tr, tc = divmod(t, cols)
            tx, ty = x0 + 1 + tc * tw, y0 + 0.6 + (rows - 1 - tr) * th
            box(ax, tx + 0.1, ty + 0.1, tw - 0.2, th - 0.2, "", "#d5d8dc")  # one TPC
            for s in range(sm_per_tpc):
                off = sm_index in disabled
                box(ax, tx + 0.3 + s * (tw - 0.6) / sm_per_tpc, ty + 0.3,
                    (tw - 0.6) / sm_per_tpc - 0.3, th - 0.6, "", "white" if off else "#7fb3d5",
                    hatch="////" if off else None)  # fmt: skip
                sm_index += 1
    ax.text(50, -4.5, "blue: enabled SM · hatched: fused off · two SMs make a TPC",
            ha="center", fontsize=8)  # fmt: skip

    # ---- one SM: one of its four partitions, over the shared L1 / shared memory ---------------
    ax = ax_sm
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.axis("off")
    ax.set_title("inside one SM (streaming multiprocessor)", fontsize=10)
    box(ax, 2, 91, 96, 7, "L1 instruction cache", "lightyellow")
    regs = the_chip.registers_per_sm // _SM_PARTITIONS
    x0, y0, pw, ph = 2, 21, 96, 68
    box(ax, x0, y0, pw, ph, "", "#f4f4f4")
    ax.text(x0 + 2, y0 + ph - 1.5, f"one of {_SM_PARTITIONS} identical partitions", va="top",
            fontsize=9, fontstyle="italic")  # fmt: skip
    box(ax, x0 + 2, y0 + 50, pw - 4, 8,
        "L0 i-cache · warp scheduler · dispatch (32 threads/clock)", "lightyellow",
        size=8.5)  # fmt: skip
    box(ax, x0 + 2, y0 + 40.5, pw - 4, 8, f"register file: {regs:,} × 32-bit", "#f9e79f")
    ux = x0 + 2
    for name, count in units.items():
        if name == "LD/ST":
            continue
        box(ax, ux, y0 + 12, 17.5, 27, f"{name}\n×{count}", "#aed6f1")
        ux += 18.5
    box(ax, ux, y0 + 12, pw - 4 - (ux - x0 - 2), 27, "Tensor\nCore", "#82e0aa")
    box(ax, x0 + 2, y0 + 2, (pw - 4) * 0.62, 8.5, f"LD/ST ×{units['LD/ST']}", "#d7bde2")
    box(ax, x0 + 2 + (pw - 4) * 0.64, y0 + 2, (pw - 4) * 0.36, 8.5, "SFU", "#f5b7b1")
    smem = _binary_bytes(the_chip.shared_memory_per_sm_bytes)
    box(ax, 2, 10, 96, 9, f"L1 data cache / shared memory\n(up to {smem} as shared memory)",
        "#cfe8cf", size=8.5)  # fmt: skip
    box(ax, 2, 1, 96, 7, "texture units", "white")
    return fig


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


def compute_vs_bandwidth(
    names: Sequence[str] = ("V100", "A100-80GB", "H100-SXM", "B200"), *, figsize=(9.5, 3.6)
) -> Any:
    """Growth of 16-bit peak and HBM bandwidth across generations, and the ridge point it implies.

    16-bit is BF16 where the chip has it, else FP16 (V100, T4). Left: both quantities relative to
    the first chip (log scale). Right: the ridge point, peak / bandwidth, in FLOP per byte.
    """
    resolved = _chips("names", names)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    precisions = ["bf16" if "bf16" in c.precisions else "fp16" for c in resolved]
    peaks = np.array([c.peak_flops(p) for c, p in zip(resolved, precisions, strict=True)])
    bandwidths = np.array([c.hbm_bandwidth for c in resolved])
    ridges = [c.ridge_point(p) for c, p in zip(resolved, precisions, strict=True)]
    fig, (left, right) = plt.subplots(1, 2, figsize=figsize, layout="constrained")
    x = np.arange(len(resolved))
    labels = [c.name for c in resolved]
    left.semilogy(x, peaks / peaks[0], "o-", lw=2, label="16-bit tensor peak (FLOP/s)")
    left.semilogy(x, bandwidths / bandwidths[0], "s-", lw=2, label="HBM bandwidth (bytes/s)")
    left.set_xticks(x, labels, fontsize=8)
    left.set_ylabel(f"relative to {resolved[0].name}")
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=8)
    left.set_title("compute grew faster than bandwidth", fontsize=10)
    bars = right.bar(x, ridges, color="tab:purple")
    right.bar_label(bars, [f"{r:.0f}" for r in ridges], fontsize=8)
    right.set_xticks(x, labels, fontsize=8)
    right.set_ylabel("ridge point (FLOP / byte)")
    right.set_title("so each byte must feed more FLOPs", fontsize=10)
    right.grid(True, axis="y", alpha=0.3)
    return fig


def roofline_bandwidths(
    the_chip: str | Chip,
    precision: str,
    bandwidths: Mapping[str, float],
    *,
    ops: Mapping[str, float] | None = None,
    intensity_range: tuple[float, float] = (0.1, 1e5),
    figsize=(7.5, 4.2),
) -> Any:
    """One chip's roof under two bandwidths (e.g. HBM and a slower link), with coloured regions.

    ``bandwidths`` maps a label to bytes/s (two entries). Red: memory-bound under both; yellow:
    memory-bound only under the lower bandwidth; green: compute-bound under both. ``ops`` maps
    a label to an arithmetic intensity, drawn on the lower roof.
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
        ax.plot(intensity, roof, style, lw=2, label=f"{label}: ridge {_number(ridge)} FLOP/B")
    for label, value in ops.items():
        y = attainable_flops(value, the_chip, precision, low_bw)
        ax.plot(value, y, "o", ms=8, mec="black", zorder=4)
        ax.annotate(label, (value, y), xytext=(6, -14), textcoords="offset points", fontsize=8)
    ax.set_title(f"{the_chip.name} {precision}: two bandwidths, three regions", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    return fig


def batch_roofline(
    the_chip: str | Chip,
    widths: Sequence[int],
    precision: str = "bf16",
    *,
    weight_precision: str | None = None,
    max_batch: int = 512,
    figsize=(7.5, 3.8),
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
        (line,) = ax.plot(batch, flops / _TFLOPS, lw=2, label=f"D = F = {width}")
        crit = critical_batch_size(
            the_chip, precision, weight_precision=weight_precision, d=width, f=width
        )
        if np.isfinite(crit) and crit <= max_batch:
            ax.axvline(crit, color=line.get_color(), ls=":", lw=1)
            ax.annotate(f"B* ≈ {crit:.0f}", (crit, 0), xytext=(4, 8), textcoords="offset points",
                        fontsize=8, color=line.get_color())  # fmt: skip
    weights = weight_precision or precision
    ax.set_xlabel("token batch B")
    ax.set_ylabel(f"roofline TFLOP/s ({precision} math)")
    ax.set_title(f"{the_chip.name}: {weights} weights, {precision} activations", fontsize=10)
    ax.set_xlim(0, max_batch)
    ax.set_ylim(0, the_chip.peak_flops(precision) / _TFLOPS * 1.1)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return fig


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
    figsize=(7.5, 4.4),
) -> Any:
    """A Nsight-Compute-style chart: measured points under the datasheet roof.

    ``points`` maps a label to ``(intensity, achieved FLOP/s)``; each is drawn with a dashed
    drop line up to the roof and labelled with its percentage of the roof at that intensity
    (the distance left to gain). ``measured_bandwidth`` and ``measured_peak`` add the measured
    roof (dashed) under the datasheet one. ``labels=False`` leaves the points unlabelled (for
    clusters of points whose labels would overlap).
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
    for k, (label, (x, y)) in enumerate(points.items()):
        roof = attainable_flops(x, the_chip, precision)
        ax.plot([x, x], [y, roof], ":", color="tab:red", lw=1.2)
        ax.plot(x, y, "o", ms=8, color="tab:red", mec="black", zorder=5)
        if labels:
            # a number beside the point and the words in the key: neighbouring points' labels
            # cannot run into each other or into the markers; numbers alternate sides, so two
            # points at one intensity keep theirs apart
            side = -1 if k % 2 == 0 else 1
            ax.annotate(str(k + 1), (x, y), xytext=(9 * side, 0), textcoords="offset points",
                        ha="right" if side < 0 else "left", va="center", fontsize=9,
                        fontweight="bold", color="tab:red")  # fmt: skip
            ax.plot([], [], ls="none", marker=f"${k + 1}$", ms=7, color="tab:red",
                    label=f"{label}, {y / roof:.0%} of roof")  # fmt: skip
    ax.set_title(title or f"{the_chip.name}: achieved vs attainable", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
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


def coalescing_picture(results: Sequence[Any], n_lines: int = 16) -> Any:
    """Side-by-side byte maps of several warp loads (e.g. stride 1, offset 1, stride 2, 8)."""
    from .memory import Coalescing

    results = sequence("results", results, lambda name, r: instance(name, r, Coalescing))
    n_lines = positive_int("n_lines", n_lines, maximum=MAX_LINES_DRAWN)
    plt = _pyplot()
    fig, axes = plt.subplots(
        1, len(results), figsize=(2.6 * len(results), 3.2), layout="constrained", squeeze=False
    )
    for ax, result in zip(axes[0], results, strict=True):
        _draw_coalescing(ax, result, n_lines)
        ax.set_title(
            f"stride {result.stride}, offset {result.offset}\n{result.transactions} sectors, "
            f"{result.efficiency:.0%} useful",
            fontsize=9,
        )
        ax.set_xlabel("byte in line")
    return fig


def _require_matplotlib(module: str) -> Any:
    from .runtime import require

    return require(module, "pip install matplotlib")


def _draw_sawtooth(ax: Any, sizes: np.ndarray, efficiency: np.ndarray, **style: Any) -> Any:
    """The wave-efficiency curve as a step line; returns the Line2D."""
    (line,) = ax.plot(sizes, efficiency, drawstyle="steps-post", lw=1.2, **style)
    return line


def sawtooth(
    chips: Sequence[str | Chip],
    block_m: int,
    block_n: int,
    sizes: np.ndarray,
    *,
    highlight: Sequence[int] = (),
    figsize: tuple[float, float] = (8.0, 3.6),
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
    ax.set_xlabel(f"matrix size N (N × N output, {block_m} × {block_n} tiles)")
    ax.set_ylabel("wave efficiency")
    ax.set_ylim(0, 1.05)
    ax.set_xlim(sizes[0], sizes[-1])
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def tile_picture(m: int, n: int, block_m: int, block_n: int, *, figsize=(4.2, 4.2)) -> Any:
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
    ax.set_xlabel("column of C")
    ax.set_ylabel("row of C")
    ax.set_title(
        f"{m} × {n} with {block_m} × {block_n} tiles: {tile_count(m, n, block_m, block_n)} "
        f"tiles,\n{tile_efficiency(m, n, block_m, block_n):.0%} of computed outputs are useful",
        fontsize=9,
    )
    return fig


def _draw_smem_gauge(ax: Any, budget: Any | None = None) -> tuple[Any, Any]:
    """A horizontal gauge: shared memory needed over the per-block limit (1.0 = full).

    Returns (bar, text) to move with :func:`_set_smem_gauge`. The axis runs to 1.5 so an
    overflow shows past the red limit line.
    """
    (bar,) = ax.barh([0], [0.0], height=0.5, color="tab:green")
    ax.axvline(1.0, color="tab:red", lw=2)
    ax.text(1.0, 0.35, " limit", color="tab:red", fontsize=8, va="bottom")
    ax.set_xlim(0, 1.5)
    ax.set_ylim(-0.4, 1.0)
    ax.set_yticks([])
    ax.set_xlabel("shared memory needed / available per block")
    text = ax.text(0.02, 0.35, "", fontsize=8, va="bottom")
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


def smem_gauges(budgets: Sequence[Any], *, figsize: tuple[float, float] = (6.4, 0.9)) -> Any:
    """One shared-memory gauge per budget (e.g. one tile on T4, A100, H100), stacked."""
    from .tiling import SharedMemoryBudget

    check = lambda name, b: instance(name, b, SharedMemoryBudget)
    budgets = sequence("budgets", budgets, check)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    fig, axes = plt.subplots(
        len(budgets), 1, figsize=(figsize[0], figsize[1] * len(budgets) + 0.6),
        layout="constrained", squeeze=False,
    )  # fmt: skip
    for ax, budget in zip(axes[:, 0], budgets, strict=True):
        _draw_smem_gauge(ax, budget)
        ax.set_ylabel(budget.chip_name, rotation=0, ha="right", va="center", fontsize=9)
        if ax is not axes[-1, 0]:
            ax.set_xlabel("")
    return fig


def traffic_bars(costs: Mapping[str, OpCost], *, figsize: tuple[float, float] = (6.0, 2.6)) -> Any:
    """HBM bytes read and written per operation (or variant), as stacked horizontal bars."""
    from .units import format_bytes

    costs = _labelled("costs", costs, _op)
    figsize = figure_size("figsize", figsize)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    labels = list(costs)
    reads = np.array([costs[k].bytes_read for k in labels])
    writes = np.array([costs[k].bytes_written for k in labels])
    y = np.arange(len(labels))
    ax.barh(y, reads, color="tab:blue", label="read from HBM")
    ax.barh(y, writes, left=reads, color="tab:orange", label="written to HBM")
    for i, total in enumerate(reads + writes):
        ax.text(total, i, " " + format_bytes(total), va="center", fontsize=8)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, float((reads + writes).max()) * 1.25)
    ax.set_xlabel("bytes moved")
    ax.legend(loc="lower right", fontsize=8)
    return fig


def checkpoint_tradeoff(
    n_layers: int,
    activation_bytes_per_layer: float,
    input_bytes_per_layer: float,
    *,
    figsize: tuple[float, float] = (6.4, 3.4),
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
    ax.plot(ks, [p.peak_bytes / baseline for p in plans], "o-", ms=3, label="peak (backward)")
    stored = [p.stored_bytes / baseline for p in plans]
    ax.plot(ks, stored, "s--", ms=3, label="kept after forward")
    ax.axhline(1.0, color="black", lw=1, ls=":", label="no checkpointing")
    ax.axvline(best, color="tab:red", lw=1, ls=":")
    ax.annotate(f"best k = {best}", (best, 0.9), xytext=(4, 0), textcoords="offset points",
                color="tab:red", fontsize=8)  # fmt: skip
    ax.set_xlabel(f"checkpoint every k layers (L = {n_layers})")
    ax.set_ylabel("activation memory / no checkpointing")
    ax.set_ylim(0, 1.1)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="center right")
    return fig


# ---------------------------------------------------------------------------------------------
# Chapters 4 and 5: attention traffic vs N, the memory ladder, effective bandwidth vs size.


def attention_traffic(
    head_dim: int = 128,
    sram_bytes: int | None = None,
    precision: str = "fp16",
    *,
    chip_name: str | Chip = "A100-80GB",
    seq_lens: Sequence[int] = tuple(2**k for k in range(8, 18)),
    figsize: tuple[float, float] = (7.0, 4.2),
) -> Any:
    """HBM bytes per head of one attention forward vs N: standard, FlashAttention-1 and -2.

    ``sram_bytes`` defaults to the chip's shared memory per block. Also drawn: Theorem 2's
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
        ax.loglog(n, values, ms=4, label=label, **styles[label])
    theorem = [attn.io_complexity_flash(x, head_dim, blocks.sram_elements) * size for x in n]
    ax.loglog(n, theorem, color="0.5", lw=1, ls="-.", label="Theorem 2: N²d²/M (no constant)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("HBM bytes per head, forward")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(
        f"{the_chip.name}: d = {head_dim}, {precision}, SRAM {format_bytes(sram, binary=True)} "
        f"(B_c = {blocks.block_c}, B_r = {blocks.block_r})",
        fontsize=10,
    )
    return fig


def memory_ladder(
    levels: Sequence[Any],
    measured: Mapping[str, Sequence[Any]] | None = None,
    *,
    title: str | None = None,
    figsize: tuple[float, float] = (8.0, 4.6),
) -> Any:
    """The bandwidth ladder on a log scale: datasheet bars with measured values beside them.

    ``levels`` are :class:`gpuperf.memory.Level` rungs, fastest first (drawn top to bottom);
    ``measured`` maps a level's name to :class:`gpuperf.measurements.Measurement` objects (B/s)
    drawn as diamonds on that rung, their values written right of the rung. A rung with no
    datasheet bandwidth says so; capacities, where known, are written under the rung's name.
    Sources belong in the caption (a citation), not inside the figure.
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
    low, high = min(values) / 4, max(values) * 400
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    y = np.arange(len(levels))[::-1]
    for row, level in zip(y, levels, strict=True):
        bandwidth = level.bandwidth_bytes_per_s
        rung = measured.get(level.name, ())
        # the words go right of everything drawn on the rung, so no label sits on a marker
        right = max([bandwidth or 0.0, *(m.value for m in rung)]) * 1.25
        if bandwidth:
            ax.barh(row, bandwidth - low, left=low, height=0.55,
                    color="lightsteelblue", edgecolor="steelblue")  # fmt: skip
        for m in rung:
            ax.plot(m.value, row - 0.12, "D", color="tab:orange", mec="black", ms=6, zorder=4)
        datasheet = format_bandwidth(bandwidth) if bandwidth else "no published bandwidth"
        ax.text(right if bandwidth or rung else low * 1.3, row + (0.17 if rung else 0.0),
                datasheet, va="center", fontsize=8, color="steelblue")  # fmt: skip
        if rung:
            words = ", ".join(
                format_bandwidth(m.value) + (f" ({m.chip})" if m.chip else "") for m in rung
            )
            ax.text(right, row - 0.2, "◆ " + words, va="center", fontsize=8,
                    color="saddlebrown")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(-0.6, len(levels) - 0.4)
    # capacities join the rung names, where nothing else is drawn
    names = [
        level.name + (f"\n{format_bytes(level.capacity_bytes)}" if level.capacity_bytes else "")
        for level in levels
    ]
    ax.set_yticks(y, names, fontsize=8)
    ax.set_xlabel("bandwidth (bytes/s, log scale): bars = datasheet, ◆ = measured")
    ax.grid(True, axis="x", which="major", alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    return fig


def link_bandwidths(
    rows: Sequence[tuple[str, Any, float | None]],
    *,
    title: str | None = None,
    figsize: tuple[float, float] = (8.0, 3.8),
) -> Any:
    """Measured link bandwidths (log scale) beside the theoretical peak of the same link.

    ``rows`` are ``(label, measurement, peak_bytes_per_s or None)``; each measurement is labelled
    with its value and, when a peak is given, the fraction of it achieved. Sources belong in the
    caption (a citation), not inside the figure.
    """
    from .units import format_bandwidth

    rows = sequence("rows", rows, _link_row)
    title, figsize = _title(title), figure_size("figsize", figsize)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    y = np.arange(len(rows))[::-1]
    for row, (_, m, peak) in zip(y, rows, strict=True):
        if peak:
            ax.plot([peak], [row], "|", color="black", ms=16, mew=2)
        ax.barh(row, m.value, height=0.5, color="tab:orange", alpha=0.8)
        note = format_bandwidth(m.value)
        if peak:
            note += f", {m.value / peak:.0%} of {format_bandwidth(peak)}"
        # right of the bar and of the peak tick, so the tick never crosses the words
        ax.text(max(m.value, peak or 0.0) * 1.3, row, note, va="center", fontsize=8)
    values = [m.value for _, m, _ in rows] + [p for _, _, p in rows if p]
    ax.set_xscale("log")
    ax.set_xlim(min(values) / 3, max(values) * 200)
    ax.set_yticks(y, [label for label, _, _ in rows], fontsize=8)
    ax.set_xlabel("bytes/s (log scale): bars = measured, | = theoretical peak of the link")
    ax.grid(True, axis="x", which="major", alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    return fig


def effective_bandwidth_curves(
    links: Mapping[str, tuple[float, float]],
    *,
    size_range: tuple[float, float] = (1e2, 1e10),
    latency_bound_below: float | None = None,
    figsize: tuple[float, float] = (7.0, 4.0),
) -> Any:
    """Effective bandwidth vs transfer size for links given as ``{label: (bandwidth, latency_s)}``.

    Each curve is :func:`gpuperf.memory.effective_bandwidth`; a circle marks its half-bandwidth
    size (latency × bandwidth). ``latency_bound_below`` draws a dashed line at that size (the
    ~1 MB knee of nvbandwidth copies on an H100 node, Smol Training Playbook).
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
        (line,) = ax.loglog(sizes, memory.effective_bandwidth(sizes, bandwidth, latency_s),
                            lw=2, label=label)  # fmt: skip
        half = memory.half_bandwidth_size(bandwidth, latency_s)
        ax.plot(half, bandwidth / 2, "o", color=line.get_color(), mec="black", ms=6)
        ax.annotate(format_bytes(half), (half, bandwidth / 2), xytext=(6, -10),
                    textcoords="offset points", fontsize=7, color=line.get_color())  # fmt: skip
    if latency_bound_below:
        # in the key, not on the axes: every free spot of the plot has a curve through it
        ax.axvline(latency_bound_below, color="0.4", ls="--", lw=1,
                   label="nvbandwidth copies: latency-bound below this size")  # fmt: skip
    ax.set_xlim(*size_range)
    ax.set_xlabel("transfer size (bytes)")
    ax.set_ylabel("effective bandwidth (bytes/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
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
