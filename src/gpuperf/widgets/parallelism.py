"""Section 1.1 explorer: how many warps must each SM keep busy to fill DRAM?

Little's law (:mod:`gpuperf.parallelism`): a chip with bandwidth B and DRAM latency L must have
B × L bytes in flight. Each resident warp holds 32 × ``bytes_per_load`` × ``loads_in_flight``
of them, so the achievable bandwidth rises linearly with the warps per SM until it meets B
(:func:`gpuperf.parallelism.achievable_bandwidth`), and the warps where it does
(:func:`gpuperf.parallelism.memory_parallelism`) must fit under the SM's warp limit.
:func:`parallelism_explorer` wires chip, latency, load width and ILP to that curve;
:func:`parallelism_static` is the online book's twin (every chip, load width and ILP of the live
explorer and a grid of latencies, drawn in the browser from rows this view computed at build
time). No formula lives here.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import parallelism
from ..hardware import chip, chips
from ..runtime import require
from ..scrub import control
from ..units import format_bandwidth, format_bytes, format_seconds
from ..vega import book_altair, book_figure
from .live import Explorer, _chip_value, _control_widget, _new_figure

if TYPE_CHECKING:
    from ..vega import StaticExplorer

__all__ = [
    "GPUS",
    "STATIC_LOADS_IN_FLIGHT",
    "parallelism_explorer",
    "parallelism_static",
    "static_latencies",
]

#: Every GPU of the hardware table (TPUs have no SMs or warps).
GPUS: tuple[str, ...] = tuple(c.name for c in chips() if c.is_gpu)
#: Largest warps-per-SM limit in the table (2048 threads / 32); the x axis goes 1.5× beyond it,
#: so a requirement above the limit still shows.
_MAX_WARPS = max(c.max_threads_per_sm // 32 for c in chips() if c.is_gpu)
_X_MAX = 3 * _MAX_WARPS // 2
_Y_MAX = 135
_LATENCY_NS = (50.0, 2000.0)


class _ParallelismView:
    """Achievable DRAM bandwidth against resident warps per SM, with the SM's warp limit."""

    def __init__(self, *, figsize: tuple[float, float] = (7.2, 3.6), dpi: int = 72) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        ax = self.ax = figure.add_subplot(1, 1, 1)
        figure.subplots_adjust(left=0.1, right=0.97, top=0.9, bottom=0.15)
        ax.set_xlim(0, _X_MAX)
        ax.set_ylim(0, _Y_MAX)
        ax.set_xlabel("resident warps per SM")
        ax.set_ylabel("DRAM bandwidth reachable (% of peak)")
        ax.set_title("Little's law: bytes in flight = bandwidth × latency", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.axhline(100, color="black", lw=1, ls=":")
        self.warps = np.linspace(0, _MAX_WARPS, 2 * _MAX_WARPS + 1)
        self.beyond = ax.axvspan(
            _X_MAX, _X_MAX, color="0.6", alpha=0.3, label="beyond the SM's limit"
        )
        (self.curve,) = ax.plot([], [], color="tab:blue", lw=2, label="reachable bandwidth")
        (self.limit,) = ax.plot([], [], color="tab:red", lw=1.5, label="SM warp limit")
        (self.needed,) = ax.plot([], [], color="tab:green", lw=1.5, ls="--", label="warps needed")
        (self.point,) = ax.plot([], [], "o", color="tab:orange", ms=9, mec="black")
        self.label = ax.text(
            0.02, 0.96, "", transform=ax.transAxes, va="top", fontsize=9,
            bbox={"boxstyle": "round", "fc": "white", "ec": "0.7"},
        )  # fmt: skip
        ax.legend(loc="lower right", fontsize=8, framealpha=0.95)
        self.animated = [self.beyond, self.curve, self.limit, self.needed, self.point, self.label]
        self.last: parallelism.MemoryParallelism | None = None

    @staticmethod
    def _set_span(patch: Any, start: float, stop: float) -> None:
        if hasattr(patch, "set_x") and hasattr(patch, "set_width"):
            patch.set_x(start)
            patch.set_width(stop - start)
        else:
            patch.set_xy([[start, 0], [start, 1], [stop, 1], [stop, 0], [start, 0]])

    def update(
        self, chip_name: str, latency_ns: float, bytes_per_load: int, loads_in_flight: int
    ) -> str:
        the_chip = chip(chip_name)
        latency_s = latency_ns * 1e-9
        result = parallelism.memory_parallelism(
            the_chip, latency_s, bytes_per_load, loads_in_flight
        )
        self.last = result
        limit = result.max_warps_per_sm
        warps = self.warps[self.warps <= limit]
        reach = parallelism.achievable_bandwidth(
            the_chip, latency_s, warps, bytes_per_load, loads_in_flight
        )
        self.curve.set_data(warps, 100 * reach / result.bandwidth)
        self.limit.set_data([limit, limit], [0, _Y_MAX])
        self._set_span(self.beyond, limit, _X_MAX)
        needed = result.warps_needed_per_sm
        self.needed.set_data([min(needed, _X_MAX)] * 2, [0, _Y_MAX])
        at = min(needed, limit)
        self.point.set_data([at], [100 * result.max_bandwidth_fraction if at == limit else 100])
        self.label.set_text(
            f"{the_chip.name}: {format_bytes(result.bytes_in_flight_per_sm)} in flight per SM\n"
            f"{result.bytes_per_warp} B per warp → {needed} warps needed, {limit} allowed"
        )
        verdict = (
            f"feasible at {result.occupancy_needed:.0%} occupancy"
            if result.feasible
            else (
                f"not feasible: at most {result.max_bandwidth_fraction:.0%} of peak; needs "
                f"{result.loads_in_flight_needed_at_full_occupancy} loads in flight per thread"
            )
        )
        return (
            f"{format_bandwidth(result.bandwidth)} × {format_seconds(latency_s)} = "
            f"{format_bytes(result.bytes_in_flight)} in flight "
            f"({format_bytes(result.bytes_in_flight_per_sm)} per SM, "
            f"{result.latency_cycles:.0f} cycles at {the_chip.boost_clock_hz / 1e9:.2f} GHz); "
            f"{bytes_per_load} B × {loads_in_flight} loads per thread: {needed} warps per SM, "
            f"{verdict}."
        )

    def render(self, **values: Any) -> tuple[Any, str]:
        return self.figure, self.update(**values)


def parallelism_explorer(
    chip_name: str = "H100-SXM",
    latency_ns: float | None = None,
    bytes_per_load: int = 16,
    loads_in_flight: int = 1,
) -> Explorer:
    """Chip × DRAM latency × load width × ILP → warps per SM needed vs the SM's limit.

    ``latency_ns`` defaults to the measured DRAM latency of the chip's generation
    (:func:`gpuperf.parallelism.dram_latency`), or of the H100 where none was measured.
    """
    widgets = require("ipywidgets", "pip install ipywidgets")
    style = {"description_width": "initial"}
    name = _chip_value(chip_name)
    if latency_ns is None:
        try:
            latency_ns = parallelism.dram_latency(name).value * 1e9
        except (KeyError, ValueError):  # a chip without a measurement, or not a GPU
            latency_ns = parallelism.dram_latency("H100-SXM").value * 1e9
    controls = {
        "chip_name": _control_widget(
            widgets.Dropdown, "chip_name", options=[(c, c) for c in GPUS], value=name,
            description="chip",
        ),
        "latency_ns": _control_widget(
            widgets.FloatSlider, "latency_ns", value=latency_ns, min=_LATENCY_NS[0],
            max=_LATENCY_NS[1], step=5, description="DRAM latency (ns)", style=style,
        ),
        "bytes_per_load": _control_widget(
            widgets.Dropdown, "bytes_per_load", options=list(parallelism.LOAD_WIDTHS_BYTES),
            value=bytes_per_load, description="bytes per thread per load", style=style,
        ),
        "loads_in_flight": _control_widget(
            widgets.IntSlider, "loads_in_flight", value=loads_in_flight, min=1, max=8,
            description="loads in flight (ILP)", style=style,
        ),
    }  # fmt: skip
    view = _ParallelismView()
    return Explorer.for_view(
        view, controls, title="Little's law: warps per SM needed to keep DRAM busy"
    )


#: The loads in flight per thread the static figure offers: the live slider's 1 … 8.
STATIC_LOADS_IN_FLIGHT: tuple[int, ...] = tuple(range(1, 9))


def static_latencies() -> tuple[float, ...]:
    """The DRAM latencies (ns) the static figure offers: 50 to 2000 ns in uneven steps, plus the
    two measured pointer-chase latencies of :func:`gpuperf.parallelism.dram_latency` (the A100
    and the H100 generations), so each chip's default is one of them."""
    measured = {parallelism.dram_latency(name).value * 1e9 for name in ("A100-80GB", "H100-SXM")}
    grid = {50.0, 100.0, 200.0, 300.0, 500.0, 750.0, 1000.0, 1500.0, 2000.0}
    return tuple(sorted(grid | measured))


def _corners(xs: Any, ys: Any) -> list[tuple[float, float]]:
    """The points of a polyline where its slope changes (plus its ends): the same line drawn
    with a fraction of the points. (Vectorised: the book's figure calls it for thousands of
    control combinations.)"""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"xs and ys must be two equally long lines, got {x.shape} and {y.shape}")
    if len(x) < 3:
        return [(float(a), float(b)) for a, b in zip(x, y, strict=True)]
    cross = (x[1:-1] - x[:-2]) * (y[2:] - y[1:-1]) - (y[1:-1] - y[:-2]) * (x[2:] - x[1:-1])
    bends = np.abs(cross) > 1e-9 * np.maximum(1.0, np.abs(y[1:-1]))
    kept = [0, *(np.flatnonzero(bends) + 1).tolist(), len(x) - 1]
    return [(float(x[i]), float(y[i])) for i in kept]


@book_figure
def parallelism_static(
    chip_name: str = "H100-SXM",
    latency_ns: float | None = None,
    bytes_per_load: int = 16,
    loads_in_flight: int = 1,
    *,
    colab: str = "",
) -> StaticExplorer:
    """Static twin of :func:`parallelism_explorer` for the online book: chip × DRAM latency ×
    load width × loads in flight. Every chip, load width and ILP of the live controls; the
    live latency slider (50 to 2000 ns in steps of 5) becomes the grid :func:`static_latencies`.
    Rows are read from a :class:`_ParallelismView` after ``update``; the sentence under the
    figure is its status line. The arguments are the initial control values (``latency_ns``
    defaults, as in the live explorer, to the chip generation's measured latency)."""
    from ..vega import StaticExplorer

    alt = book_altair()
    name = _chip_value(chip_name)
    latencies = static_latencies()
    measured = {}
    for gpu in ("A100-80GB", "H100-SXM"):
        m = parallelism.dram_latency(gpu)
        measured[m.value * 1e9] = m.chip
    if latency_ns is None:
        try:
            latency_ns = parallelism.dram_latency(name).value * 1e9
        except (KeyError, ValueError):  # no measurement for this generation
            latency_ns = parallelism.dram_latency("H100-SXM").value * 1e9

    @cache
    def snapshot(
        chip_name: str, latency_ns: float, bytes_per_load: int, loads_in_flight: int
    ) -> dict[str, Any]:
        """The view's artists after one update, as plain numbers (each combination once)."""
        status = view.update(chip_name, latency_ns, bytes_per_load, loads_in_flight)
        (needed, _), _ = view.needed.get_data()
        (px,), (py,) = view.point.get_data()
        return {
            "status": status,
            "curve": _corners(*view.curve.get_data()),
            "state": {
                "needed": float(needed),
                "warps": float(px),
                "percent": float(py),
                "label": view.label.get_text(),
            },
        }

    def latency_label(ns: float) -> str:
        return f"{ns:.0f} ns (measured, {measured[ns]})" if ns in measured else f"{ns:.0f} ns"

    controls = [
        control("chip_name", GPUS, label="chip", initial=name),
        control(
            "latency_ns", latencies, label="DRAM latency", initial=latency_ns,
            format=latency_label,
        ),
        control(
            "bytes_per_load", parallelism.LOAD_WIDTHS_BYTES, label="bytes per thread per load",
            initial=bytes_per_load, format=lambda b: f"{b} B",
        ),
        control(
            "loads_in_flight", STATIC_LOADS_IN_FLIGHT,
            label="loads in flight (ILP)", initial=loads_in_flight,
        ),
    ]  # fmt: skip
    view = _ParallelismView()
    explorer = StaticExplorer(
        controls,
        alt=(
            "Line chart of the DRAM bandwidth a chip can reach against resident warps per SM: "
            "a straight rise that flattens at 100 % of peak, a red line at the SM's warp limit "
            "with the region beyond it shaded, a dashed green line at the warps Little's law "
            "requires for the chosen latency, load width and loads in flight, and an orange "
            "point where the chip gets."
        ),
        note=lambda **values: snapshot(**values)["status"],
        colab=colab,
        dropdowns=("bytes_per_load",),
    )

    def limit(chip_name: str) -> dict[str, Any]:
        view.update(chip_name, latencies[0], 16, 1)
        xs, _ = view.limit.get_data()
        return {"warps": float(xs[0]), "end": float(_X_MAX)}

    def curve(**values: Any) -> list[dict[str, Any]]:
        return [{"warps": x, "percent": y} for x, y in snapshot(**values)["curve"]]

    def state(**values: Any) -> dict[str, Any]:
        return snapshot(**values)["state"]

    x_scale = alt.Scale(domain=[0, _X_MAX], nice=False)
    y_scale = alt.Scale(domain=[0, _Y_MAX], nice=False)
    x = alt.X("warps:Q", title="resident warps per SM", scale=x_scale)
    y = alt.Y("percent:Q", title="DRAM bandwidth reachable (% of peak)", scale=y_scale)
    kinds = ["reachable bandwidth", "SM warp limit", "warps needed"]
    legend = alt.Color(
        "kind:N",
        title=None,
        scale=alt.Scale(domain=kinds, range=["#1f77b4", "#d62728", "#2ca02c"]),
        legend=alt.Legend(orient="bottom"),
    )
    limits = explorer.table("limit", limit, over=("chip_name",))
    states = explorer.table("state", state)
    plot = alt.layer(
        limits.mark_rect(color="#999", opacity=0.3).encode(x=x, x2="end:Q"),
        explorer.table("full", lambda: {"percent": 100.0}, over=())
        .mark_rule(color="black", strokeDash=[2, 3])
        .encode(y=y),
        explorer.table("curve", curve)
        .transform_calculate(kind="'reachable bandwidth'")
        .mark_line(strokeWidth=2.5)
        .encode(x=x, y=y, color=legend),
        limits.transform_calculate(kind="'SM warp limit'")
        .mark_rule(strokeWidth=1.8)
        .encode(x=x, color=legend),
        states.transform_calculate(kind="'warps needed'")
        .mark_rule(strokeWidth=1.8, strokeDash=[6, 4], clip=True)
        .encode(x=alt.X("needed:Q", scale=x_scale), color=legend),
        states.mark_point(filled=True, size=130, color="#ff7f0e", stroke="black").encode(x=x, y=y),
    ).properties(width=300, height=260)
    # the live view's boxed label, as a line of text above the plot (no line runs through it)
    label = states.mark_text(align="left", baseline="top", fontSize=12, lineBreak="\n").encode(
        x=alt.value(0), y=alt.value(0), text="label:N"
    )
    explorer.chart(
        alt.vconcat(
            label.properties(
                width=300,
                height=30,
                title="Little's law: bytes in flight = bandwidth × latency",
                view=alt.ViewBackground(stroke=None),
            ),
            plot,
            spacing=6,
        )
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer
