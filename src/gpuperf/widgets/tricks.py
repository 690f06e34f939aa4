"""Chapter 3 explorers, part 1: low precision on the roofline, and memory coalescing.

:func:`precision_explorer` puts ReLU or a square matmul on one chip's roofline and lets the reader
pick the precision: fewer bytes per element move the *point* right (higher intensity), and the
Tensor Cores' rate for that precision moves the *roof* up. Numbers come from
:func:`gpuperf.cost.elementwise`, :func:`gpuperf.cost.matmul` and
:func:`gpuperf.roofline.time_bounds`.

:func:`coalescing_explorer` draws the bytes one warp's load touches when lane i reads element
``offset + i·stride``: requested bytes in blue, bytes fetched with them but never used in orange
(:func:`gpuperf.memory.coalescing`, drawn by :func:`gpuperf.plots.draw_coalescing`).

Each explorer has a kernel-free twin (``*_scrubber``) drawn by the same view class. The tiling
and wave-quantization explorers live in :mod:`gpuperf.widgets.tiles`.
"""

from __future__ import annotations

from typing import Any

from .. import cost, memory, plots
from ..hardware import chip
from ..roofline import attainable_flops, time_bounds
from ..runtime import require
from ..scrub import Scrubber, control
from ..units import format_bytes, format_flops, format_seconds
from .live import Explorer, chip_value, control_widget, new_figure

__all__ = [
    "CHIPS",
    "CoalescingView",
    "PrecisionView",
    "coalescing_explorer",
    "coalescing_scrubber",
    "precision_explorer",
    "precision_scrubber",
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


def operation_cost(op: str, precision: str) -> cost.OpCost:
    """The OpCost the precision explorer plots (calculators only)."""
    if op == "relu":
        return cost.elementwise(RELU_ELEMENTS, precision, flops_per_element=1, name="ReLU")
    if op == "matmul":
        return cost.matmul(MATMUL_SIZE, MATMUL_SIZE, MATMUL_SIZE, precision)
    raise ValueError(f"op={op!r} must be one of {[key for _, key in OPERATIONS]}")


class PrecisionView:
    """One chip's roofline at the chosen precision, with the operation's point on it.

    Faint points show the same operation at every precision the chip supports, so the move is
    visible; the roof, the ridge and the points are animated artists on fixed log-log axes.
    """

    def __init__(self, *, figsize: tuple[float, float] = (6.4, 3.6), dpi: int = 80) -> None:
        self.figure = figure = new_figure(figsize, dpi)
        ax = figure.subplots()
        figure.subplots_adjust(left=0.12, right=0.97, top=0.9, bottom=0.14)
        # The roofline drawing is chapter 2's panel (roof, ridge, shaded regions, red point).
        self.panel = plots.RooflinePanel(
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
                c = operation_cost(op, p)
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
        c = operation_cost(op, precision)
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
        "chip_name": control_widget(
            widgets.Dropdown, "chip_name", options=[(c, c) for c in CHIPS],
            value=chip_value(chip_name), description="chip",
        ),
        "precision": control_widget(
            widgets.ToggleButtons, "precision", options=[(p, p) for p in PRECISIONS],
            value=precision, description="precision",
        ),
        "op": control_widget(
            widgets.Dropdown, "op", options=list(OPERATIONS), value=op, description="operation"
        ),
    }  # fmt: skip
    view = PrecisionView()
    return Explorer.for_view(
        view, controls, title="Low precision: the point and the roof both move"
    )


def precision_scrubber() -> Scrubber:
    """Kernel-free twin of :func:`precision_explorer` (3 chips × 5 precisions × 2 ops)."""
    view = PrecisionView(dpi=72)
    return Scrubber(
        view.render,
        [
            control("chip_name", CHIPS, label="chip", initial="H100-SXM"),
            control("precision", PRECISIONS, label="precision"),
            control(
                "op",
                [key for _, key in OPERATIONS],
                label="operation",
                format=dict((k, lbl) for lbl, k in OPERATIONS).get,
            ),
        ],
        alt=(
            "Log-log roofline of the chosen chip at the chosen precision with ReLU or a 4096³ "
            "matmul as a red point; grey points show the same operation at the other precisions."
        ),
    )


# ---------------------------------------------------------------------------------------------
# Coalescing

STRIDES: tuple[int, ...] = (1, 2, 3, 4, 8, 16, 32)
ELEMENT_BYTES: tuple[int, ...] = memory.ELEMENT_BYTES
#: Cache lines drawn (2 KiB): a warp of 4-byte loads up to stride 16; more is reported, not drawn.
LINES_DRAWN = 16


class CoalescingView:
    """The byte map of one warp's load; an animated image on fixed axes."""

    def __init__(self, *, figsize: tuple[float, float] = (6.0, 3.6), dpi: int = 80) -> None:
        self.figure = figure = new_figure(figsize, dpi)
        ax = figure.subplots()
        figure.subplots_adjust(left=0.11, right=0.97, top=0.86, bottom=0.13)
        self.image = plots.draw_coalescing(ax, memory.coalescing(), LINES_DRAWN)
        ax.set_title("one warp's load: requested (blue), fetched but unused (orange)", fontsize=9)
        self.animated = [self.image]
        self.last: memory.Coalescing | None = None

    def update(self, stride: int, offset: int, element_bytes: int) -> str:
        result = memory.coalescing(stride, offset, element_bytes)
        self.image.set_data(plots.coalescing_grid(result, LINES_DRAWN))
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
        "stride": control_widget(
            widgets.SelectionSlider, "stride", options=[(str(s), s) for s in STRIDES],
            value=stride, description="stride",
        ),
        "offset": control_widget(
            widgets.IntSlider, "offset", value=offset, min=0, max=32, description="offset"
        ),
        "element_bytes": control_widget(
            widgets.Dropdown, "element_bytes", options=[(f"{b} B", b) for b in ELEMENT_BYTES],
            value=element_bytes, description="element",
        ),
    }  # fmt: skip
    view = CoalescingView()
    return Explorer.for_view(
        view, controls, title="Coalescing: which bytes does one warp's load move?"
    )


def coalescing_scrubber() -> Scrubber:
    """Kernel-free twin of :func:`coalescing_explorer` (5 strides × 4 offsets × 2 sizes)."""
    view = CoalescingView(dpi=72)
    return Scrubber(
        view.render,
        [
            control("stride", (1, 2, 4, 8, 32), label="stride"),
            control("offset", (0, 1, 4, 8), label="offset"),
            control("element_bytes", (4, 2), label="element bytes", format=lambda b: f"{b} B"),
        ],
        alt=(
            "Byte map of 32 cache lines of 128 bytes: bytes the warp asked for in blue, bytes "
            "fetched with them but unused in orange, untouched bytes in light grey."
        ),
    )
