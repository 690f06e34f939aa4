"""Chapter 3 explorers, part 1: low precision on the roofline, and memory coalescing.

:func:`precision_explorer` puts ReLU or a square matmul on one chip's roofline and lets the reader
pick the precision: fewer bytes per element move the *point* right (higher intensity), and the
Tensor Cores' rate for that precision moves the *roof* up. Numbers come from
:func:`gpuperf.cost.elementwise`, :func:`gpuperf.cost.matmul` and
:func:`gpuperf.roofline.time_bounds`.

:func:`coalescing_explorer` draws the bytes one warp's load touches when lane i reads element
``offset + i·stride``: requested bytes in blue, bytes fetched with them but never used in orange
(:func:`gpuperf.memory.coalescing`, drawn by :func:`gpuperf.plots._draw_coalescing`).

:func:`coalescing_static` is the online book's client-side figure of :func:`coalescing_explorer`
(its byte map read from :class:`_CoalescingView` at build time), :func:`precision_static` that of
:func:`precision_explorer` (roof, ridge and points read from :class:`_PrecisionView`).
The tiling and wave-quantization explorers live in :mod:`gpuperf.widgets.tiles`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from .. import cost, memory, plots
from ..hardware import chip
from ..roofline import attainable_flops, time_bounds
from ..runtime import require
from ..scrub import control
from ..units import format_bytes, format_flops, format_seconds
from ..vega import StaticExplorer, book_altair, book_figure
from .live import Explorer, _chip_value, _control_widget, _new_figure

__all__ = [
    "CHIPS",
    "coalescing_explorer",
    "coalescing_static",
    "precision_explorer",
    "precision_static",
]

#: The chips the chapter compares: Colab's T4, and the A100 and H100 of most training clusters.
CHIPS: tuple[str, ...] = ("T4", "A100-80GB", "H100-SXM")
PRECISIONS: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16", "fp8")
#: The two operations of the precision explorer: (label, key).
OPERATIONS: tuple[tuple[str, str], ...] = (
    ("ReLU, 2²⁶ elements", "relu"),
    ("matmul 4096³", "matmul"),
)
RELU_ELEMENTS = 2**26
MATMUL_SIZE = 4096

_INTENSITY = (0.05, 2e4)
_MARKERS = ("o", "s", "^", "v", "D")
_FLOPS = (1e10, 1e16)


def _operation_cost(op: str, precision: str) -> cost.OpCost:
    """The OpCost the precision explorer plots (calculators only)."""
    if op == "relu":
        return cost.elementwise(RELU_ELEMENTS, precision, flops_per_element=1, name="ReLU")
    if op == "matmul":
        return cost.matmul(MATMUL_SIZE, MATMUL_SIZE, MATMUL_SIZE, precision)
    raise ValueError(f"op={op!r} must be one of {[key for _, key in OPERATIONS]}")


class _PrecisionView:
    """One chip's roofline at the chosen precision, with the operation's point on it.

    Faint points show the same operation at every precision the chip supports, so the move is
    visible; the roof, the ridge and the points are animated artists on fixed log-log axes.
    """

    def __init__(self, *, figsize: tuple[float, float] = (6.4, 3.6), dpi: int = 80) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        ax = figure.subplots()
        figure.subplots_adjust(left=0.12, right=0.97, top=0.9, bottom=0.14)
        # The roofline drawing is chapter 2's panel (roof, ridge, shaded regions, red point).
        self.panel = plots._RooflinePanel(
            ax, intensity_range=_INTENSITY, flops_range=_FLOPS, annotate=False
        )
        self.roof, self.point = self.panel.roof, self.panel.point
        # One grey marker per precision (a static legend names them): text artists cost
        # ~10 ms each to redraw, markers almost nothing.
        self.others = {
            p: ax.plot([], [], marker, color="0.55", ms=7, ls="", label=p)[0]
            for p, marker in zip(PRECISIONS, _MARKERS, strict=True)
        }
        ax.legend(
            handles=[
                *[
                    ax.plot([], [], m, color="0.55", ls="", label=p)[0]
                    for p, m in zip(PRECISIONS, _MARKERS, strict=True)
                ],
                ax.plot([], [], "o", color="tab:red", mec="black", ls="", label="chosen")[0],
            ],
            loc="lower right",
            fontsize=8,
            ncol=2,
        )
        ax.set_title("roof (black) and ridge (dotted) at the chosen precision", fontsize=9)
        # The grey markers go under the red point: draw order is list order.
        self.animated = [*self.panel.artists[:-1], *self.others.values(), self.point]
        self.last: dict[str, Any] = {}

    def update(self, chip_name: str, precision: str, op: str) -> str:
        the_chip = chip(chip_name)
        supported = [p for p in PRECISIONS if p in the_chip.precisions]
        for p, marker in self.others.items():
            if p in supported:
                c = _operation_cost(op, p)
                marker.set_data([c.intensity], [float(attainable_flops(c.intensity, the_chip, p))])
            else:
                marker.set_data([], [])
        if precision not in supported:
            self.panel.clear_roof(f"{the_chip.name} has no {precision}")
            self.last = {"supported": False}
            return (
                f"{the_chip.name} cannot compute in {precision} (it supports "
                f"{', '.join(supported)}): pick another precision or chip."
            )
        c = _operation_cost(op, precision)
        bounds = time_bounds(c, the_chip, precision)
        y = bounds.attainable_flops_per_s
        ridge = self.panel.set_roof(the_chip, precision)
        self.panel.set_point(c.intensity, y)
        self.last = {"supported": True, "intensity": c.intensity, "attainable": y, "cost": c}
        return (
            f"{the_chip.name} {precision}: roof {format_flops(the_chip.peak_flops(precision))}, "
            f"ridge {ridge:.0f} FLOP/B. {c.name}: {format_bytes(c.bytes)} moved, intensity "
            f"{c.intensity:.3g} FLOP/B → attains {format_flops(y)}, at least "
            f"{format_seconds(bounds.lower_s)} ({bounds.bound}-bound)"
        )

    def render(self, chip_name: str, precision: str, op: str) -> tuple[Any, str]:
        return self.figure, self.update(chip_name, precision, op)


def precision_explorer(
    chip_name: str = "H100-SXM", precision: str = "fp32", op: str = "relu"
) -> Explorer:
    """Chip × precision × operation → the roof and the point move on the roofline."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    controls = {
        "chip_name": _control_widget(
            widgets.Dropdown, "chip_name", options=[(c, c) for c in CHIPS],
            value=_chip_value(chip_name), description="chip",
        ),
        "precision": _control_widget(
            widgets.ToggleButtons, "precision", options=[(p, p) for p in PRECISIONS],
            value=precision, description="precision",
        ),
        "op": _control_widget(
            widgets.Dropdown, "op", options=list(OPERATIONS), value=op, description="operation"
        ),
    }  # fmt: skip
    view = _PrecisionView()
    return Explorer.for_view(
        view, controls, title="Low precision: the point and the roof both move"
    )


# ---------------------------------------------------------------------------------------------
# Coalescing

STRIDES: tuple[int, ...] = (1, 2, 3, 4, 8, 16, 32)
ELEMENT_BYTES: tuple[int, ...] = memory.ELEMENT_BYTES
#: Cache lines drawn (2 KiB): a warp of 4-byte loads up to stride 16; more is reported, not drawn.
LINES_DRAWN = 16


class _CoalescingView:
    """The byte map of one warp's load; an animated image on fixed axes."""

    def __init__(self, *, figsize: tuple[float, float] = (6.0, 3.6), dpi: int = 80) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        ax = figure.subplots()
        figure.subplots_adjust(left=0.11, right=0.97, top=0.86, bottom=0.13)
        self.image = plots._draw_coalescing(ax, memory.coalescing(), LINES_DRAWN)
        ax.set_title("one warp's load: requested (blue), fetched but unused (orange)", fontsize=9)
        self.animated = [self.image]
        self.last: memory.Coalescing | None = None

    def update(self, stride: int, offset: int, element_bytes: int) -> str:
        result = memory.coalescing(stride, offset, element_bytes)
        self.image.set_data(plots._coalescing_grid(result, LINES_DRAWN))
        self.last = result
        beyond = sum(1 for s in result.sectors if s * result.sector_bytes >= LINES_DRAWN * 128)
        hidden = f" ({beyond} of them beyond the 2 KiB drawn)" if beyond else ""
        return (
            f"lane i reads byte {element_bytes}·({offset} + {stride}·i): "
            f"{result.transactions} × {result.sector_bytes}-byte sectors{hidden} in "
            f"{result.cache_lines} cache lines = {format_bytes(result.bytes_moved)} moved for "
            f"{result.bytes_requested} useful bytes: efficiency {result.efficiency:.1%}"
        )

    def render(self, stride: int, offset: int, element_bytes: int) -> tuple[Any, str]:
        return self.figure, self.update(stride, offset, element_bytes)


def coalescing_explorer(stride: int = 1, offset: int = 0, element_bytes: int = 4) -> Explorer:
    """Stride × offset × element size → the sectors one warp's load fetches."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    controls = {
        "stride": _control_widget(
            widgets.SelectionSlider, "stride", options=[(str(s), s) for s in STRIDES],
            value=stride, description="stride",
        ),
        "offset": _control_widget(
            widgets.IntSlider, "offset", value=offset, min=0, max=32, description="offset"
        ),
        "element_bytes": _control_widget(
            widgets.Dropdown, "element_bytes", options=[(f"{b} B", b) for b in ELEMENT_BYTES],
            value=element_bytes, description="element",
        ),
    }  # fmt: skip
    view = _CoalescingView()
    return Explorer.for_view(
        view, controls, title="Coalescing: which bytes does one warp's load move?"
    )


#: The static figure's offsets (elements): the live slider runs over every integer 0 … 32; these
#: keep the aligned case, each small misalignment and a few larger ones.
STATIC_OFFSETS: tuple[int, ...] = (0, 1, 2, 3, 4, 8, 16, 24, 31, 32)
#: The byte map's two layers as the static figure names them (coloured as the live view).
_FETCHED, _REQUESTED = "fetched, unused", "requested"


def _byte_runs(grid: Any, states: tuple[int, ...]) -> list[dict[str, Any]]:
    """Runs of bytes whose state is in ``states`` in a byte map (rows: cache lines), one row per
    run: ``line`` and bytes ``x0`` ≤ b < ``x1``."""
    inside = np.isin(np.ma.getdata(grid).astype(int), states)  # (lines, bytes), plain booleans
    # a run starts where a byte is in and the one before is not; it ends where that flips back
    edges = np.diff(np.pad(inside.astype(np.int8), ((0, 0), (1, 1))), axis=1)
    rows = []
    for line, row in enumerate(edges):
        starts, stops = np.flatnonzero(row == 1), np.flatnonzero(row == -1)
        rows += [
            {"line": line, "x0": int(a), "x1": int(b)} for a, b in zip(starts, stops, strict=True)
        ]
    return rows


@book_figure
def coalescing_static(
    stride: int = 1, offset: int = 0, element_bytes: int = 4, *, colab: str = ""
) -> StaticExplorer:
    """Static twin of :func:`coalescing_explorer` for the online book (a
    :class:`gpuperf.vega.StaticExplorer`): stride × offset × element size. Every stride
    (:data:`STRIDES`) and element size (:data:`ELEMENT_BYTES`) of the live controls; the offset
    slider, continuous in the live view, moves over :data:`STATIC_OFFSETS`. The byte map is the
    live view's image, read after its ``update``, stored as runs of fetched and of requested
    bytes; the line under the figure is the live status line. The arguments are the initial
    values."""
    from matplotlib.colors import to_hex

    alt = book_altair()
    controls = [
        control("stride", STRIDES, label="stride", initial=stride),
        control("offset", STATIC_OFFSETS, label="offset", initial=offset),
        control(
            "element_bytes",
            ELEMENT_BYTES,
            label="element",
            initial=element_bytes,
            format=lambda b: f"{b} B",
        ),
    ]
    view = _CoalescingView(dpi=72)

    @cache
    def snapshot(stride: int, offset: int, element_bytes: int) -> dict[str, Any]:
        """The view after one update: each combination drawn once, read by the note and both
        layers. Every fetched byte (orange) lies under the requested ones (blue): half the rows
        of one run per colour change when small elements alternate with gaps."""
        status = view.update(stride, offset, element_bytes)
        grid = view.image.get_array()
        return {
            "status": status,
            "fetched": _byte_runs(grid, (plots._BYTE_WASTED, plots._BYTE_USED)),
            "requested": _byte_runs(grid, (plots._BYTE_USED,)),
        }

    explorer = StaticExplorer(
        controls,
        alt=(
            f"Byte map of {LINES_DRAWN} cache lines of 128 bytes, one row per line: bytes the "
            "warp asked for in blue, bytes fetched with them in the same 32-byte sectors but "
            "unused in orange, untouched bytes in light grey."
        ),
        note=lambda **values: snapshot(**values)["status"],
        colab=colab,
        dropdowns=("element_bytes",),
    )

    def fetched(**values: Any) -> list[dict[str, Any]]:
        return snapshot(**values)["fetched"]

    def requested(**values: Any) -> list[dict[str, Any]]:
        return snapshot(**values)["requested"]

    first = memory.coalescing()
    line_bytes, sector_bytes = first.line_bytes, first.sector_bytes
    ticks = list(range(0, line_bytes + 1, sector_bytes))

    def sectors() -> list[dict[str, Any]]:
        return [{"x": x} for x in ticks]

    # the live image's colour map: idle, fetched-but-unused and requested bytes
    idle, wasted, used = (to_hex(c) for c in view.image.get_cmap().colors)
    bytes_scale = alt.Scale(domain=[0, line_bytes], nice=False)
    x = alt.X(
        "x0:Q",
        title=f"byte within a {line_bytes}-byte line ({sector_bytes}-byte sectors)",
        scale=bytes_scale,
        axis=alt.Axis(values=ticks),
    )
    y = alt.Y(
        "line:Q",
        title="cache line",
        scale=alt.Scale(domain=[0, LINES_DRAWN], nice=False, reverse=True),
        axis=alt.Axis(values=list(range(0, LINES_DRAWN + 1, 2))),
    )
    colour = alt.Scale(domain=[_FETCHED, _REQUESTED], range=[wasted, used])

    def layer(name: str, compute: Any, state: str) -> Any:
        return (
            explorer.table(name, compute)
            .transform_calculate(line_end="datum.line + 1", state=f"'{state}'")
            .mark_rect()
            .encode(
                x=x,
                x2="x1:Q",
                y=y,
                y2="line_end:Q",
                color=alt.Color(
                    "state:N", scale=colour, title=None, legend=alt.Legend(orient="top")
                ),
                tooltip=["line:Q", "x0:Q", "x1:Q"],
            )
        )

    explorer.chart(
        alt.layer(
            layer("fetched", fetched, _FETCHED),
            layer("requested", requested, _REQUESTED),
            explorer.table("sectors", sectors, over=())
            .mark_rule(color="#808080", strokeDash=[2, 2], strokeWidth=0.8)
            .encode(x=alt.X("x:Q", scale=bytes_scale)),
        )
        .properties(
            height=260, title="one warp's load: requested (blue), fetched but unused (orange)"
        )
        .configure_view(fill=idle)
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer


@book_figure
def precision_static(
    chip_name: str = "H100-SXM", precision: str = "fp32", op: str = "relu", *, colab: str = ""
) -> StaticExplorer:
    """Static twin of :func:`precision_explorer` for the online book (a
    :class:`gpuperf.vega.StaticExplorer`): every chip (:data:`CHIPS`), precision
    (:data:`PRECISIONS`) and operation of the live controls. The roof, the ridge, the shaded
    regions, the grey markers and the red point are read from a :class:`_PrecisionView` after its
    ``update``; the line under the figure is the live status line. The arguments are the initial
    values."""
    alt = book_altair()
    view = _PrecisionView(dpi=72)
    labels = dict((key, label) for label, key in OPERATIONS)
    explorer = StaticExplorer(
        [
            control("chip_name", CHIPS, label="chip", initial=chip(chip_name).name),
            control("precision", PRECISIONS, label="precision", initial=precision),
            control("op", list(labels), label="operation", initial=op, format=labels.get),
        ],
        alt=(
            "Log-log roofline of the chosen chip at the chosen precision (attainable FLOP/s "
            "against arithmetic intensity) with ReLU or a 4096³ matmul as a red point; grey "
            "points show the same operation at the other precisions the chip supports."
        ),
        note=lambda **values: view.update(**values),
        colab=colab,
    )

    def roof(chip_name: str, precision: str) -> list[dict[str, Any]]:
        view.update(chip_name, precision, "relu")
        xs, ys = view.roof.get_data()
        return [{"x": float(x), "y": float(y)} for x, y in zip(xs, ys, strict=True)]

    def regions(chip_name: str, precision: str) -> list[dict[str, Any]]:
        view.update(chip_name, precision, "relu")
        rows = []
        for what, patch in (
            ("memory-bound", view.panel.memory_region),
            ("compute-bound", view.panel.compute_region),
        ):
            x0, x1 = patch.get_x(), patch.get_x() + patch.get_width()
            if x1 > x0:
                rows.append({"what": what, "x0": float(x0), "x1": float(x1)})
        return rows

    def ridge(chip_name: str, precision: str) -> list[dict[str, Any]]:
        view.update(chip_name, precision, "relu")
        xs, ys = view.panel.ridge.get_data()
        if not len(xs):
            return [{"text": f"{chip(chip_name).name} has no {precision}"}]
        return [{"x": float(xs[0]), "y0": float(ys[0]), "y": float(ys[1]), "text": ""}]

    def others(chip_name: str, op: str) -> list[dict[str, Any]]:
        view.update(chip_name, "fp32", op)
        rows = []
        for p, marker in view.others.items():
            xs, ys = marker.get_data()
            if len(xs):
                rows.append({"precision": p, "x": float(xs[0]), "y": float(ys[0])})
        return rows

    def point(chip_name: str, precision: str, op: str) -> list[dict[str, Any]]:
        view.update(chip_name, precision, op)
        xs, ys = view.point.get_data()
        if not len(xs):
            return []
        return [{"x": float(xs[0]), "y": float(ys[0]), "what": "chosen", "op": labels[op]}]

    x_scale = alt.Scale(type="log", domain=list(_INTENSITY), nice=False)
    x_title = "arithmetic intensity (FLOP/byte)"
    # every decade labelled at a phone's width too: 1k and 10k, not 1,000 and 10,000 (which
    # come closer than an em there, so Vega would drop the last label)
    x_axis = alt.Axis(
        values=[10.0**k for k in range(-1, 5)],
        labelExpr="datum.value < 1 ? format(datum.value, '~g') : format(datum.value, '~s')",
    )
    x = alt.X("x:Q", title=x_title, scale=x_scale, axis=x_axis)
    y_scale = alt.Scale(type="log", domain=list(_FLOPS), nice=False)
    y_title = "attainable FLOP/s"
    y = alt.Y(
        "y:Q",
        title=y_title,
        scale=y_scale,
        axis=alt.Axis(format="~s", values=[10.0**k for k in range(10, 17)]),
    )
    ridge_chart = explorer.table("ridge", ridge, over=("chip_name", "precision"))
    shapes = alt.Scale(
        domain=list(PRECISIONS),
        range=["circle", "square", "triangle-up", "triangle-down", "diamond"],
    )
    chart = alt.layer(
        explorer.table("regions", regions, over=("chip_name", "precision"))
        .mark_rect(opacity=0.12)
        .encode(
            x=alt.X("x0:Q", scale=x_scale, title=x_title),
            x2="x1:Q",
            color=alt.Color(
                "what:N",
                title=None,
                legend=alt.Legend(orient="top"),
                scale=alt.Scale(
                    domain=["memory-bound", "compute-bound"], range=["#1f77b4", "#ff7f0e"]
                ),
            ),
        ),
        explorer.table("roof", roof, over=("chip_name", "precision"))
        .mark_line(color="black", strokeWidth=2.2)
        .encode(x=x, y=y),
        ridge_chart.transform_filter("isValid(datum.x)")
        .mark_rule(color="dimgray", strokeDash=[2, 3])
        .encode(x=x, y=alt.Y("y0:Q", scale=y_scale, title=y_title), y2="y:Q"),
        explorer.table("others", others, over=("chip_name", "op"))
        .mark_point(filled=True, size=70, color="#8c8c8c")
        .encode(
            x=x,
            y=y,
            shape=alt.Shape(
                "precision:N", scale=shapes, title=None, legend=alt.Legend(orient="bottom")
            ),
            tooltip=["precision:N"],
        ),
        explorer.table("point", point)
        .mark_point(filled=True, size=110, color="#d62728", stroke="black")
        .encode(x=x, y=y, tooltip=["op:N"]),
        ridge_chart.mark_text(fontSize=13, color="#444", align="left").encode(
            x=alt.value(10), y=alt.value(20), text="text:N"
        ),
    ).properties(height=260, title="roof (black) and ridge (dotted) at the chosen precision")
    explorer.chart(
        chart.configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer
