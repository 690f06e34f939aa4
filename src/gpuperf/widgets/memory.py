"""Chapter 5 explorer: how big must a transfer be before bandwidth, not latency, decides its time?

A copy of n bytes over a link with fixed cost ``latency`` and peak ``bandwidth`` takes ``latency +
n / bandwidth`` (:func:`gpuperf.memory.transfer_time`); its effective bandwidth n / time
(:func:`gpuperf.memory.effective_bandwidth`) reaches half the peak at n = latency × bandwidth
(:func:`gpuperf.memory.half_bandwidth_size`). Below that size the link idles most of the time.
:func:`transfer_explorer` puts a size slider on that curve, with latency and bandwidth sliders and
presets built from *measured* pairs in :mod:`gpuperf.measurements`; :func:`transfer_static` is the
online book's twin: every control of the live explorer as a Vega-Lite figure drawn in the browser
(:mod:`gpuperf.vega`), its numbers read from a :class:`_TransferView`. The widgets only wire
controls to those calculators.

An all-reduce preset's bandwidth is the rate its message moves at: NCCL measures a *bus*
bandwidth, and the preset converts it to the *algorithm* bandwidth busbw · p / (2(p − 1))
(:func:`gpuperf.memory.allreduce_algorithm_bandwidth`) for its number of GPUs p, so the
half-bandwidth size it shows is t₀ · algbw, the message size at which the collective reaches half
its rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import memory
from .._validate import instance, name_string, positive_int
from ..measurements import LATENCY_BOUND_BELOW_BYTES, Measurement, find
from ..runtime import require
from ..scrub import control
from ..units import GB, format_bandwidth, format_bytes, format_seconds
from ..vega import book_altair, book_figure
from .live import Explorer, LiveFigure, _control_widget, _new_figure

__all__ = [
    "GPUS_PER_NODE",
    "OWN_LINK",
    "STATIC_BANDWIDTHS_GB_S",
    "STATIC_LATENCIES_US",
    "STATIC_SIZES",
    "TransferPreset",
    "presets",
    "transfer_explorer",
    "transfer_static",
]

_SIZES = (1e2, 1e10)
_BANDWIDTH_GB = (1e-4, 1e4)


@dataclass(frozen=True)
class TransferPreset:
    """A link described by two measurements: its fixed cost and its large-transfer bandwidth.

    ``ranks`` is the number of GPUs of an all-reduce preset whose ``bandwidth`` is NCCL's bus
    bandwidth, ``None`` for a point-to-point link whose measured rate is the message rate.
    """

    label: str
    latency: Measurement
    bandwidth: Measurement
    ranks: int | None = None

    def __post_init__(self) -> None:
        name_string("label", self.label)
        for name in ("latency", "bandwidth"):
            instance(name, getattr(self, name), Measurement)
        if self.latency.unit != "s" or self.bandwidth.unit != "B/s":
            raise ValueError(
                f"latency={self.latency.quantity!r} ({self.latency.unit}) and bandwidth="
                f"{self.bandwidth.quantity!r} ({self.bandwidth.unit}) must be in s and B/s"
            )
        if self.ranks is not None:
            positive_int("ranks", self.ranks, minimum=2)

    @property
    def latency_s(self) -> float:
        return self.latency.value

    @property
    def measured_bandwidth_bytes_per_s(self) -> float:
        """The measurement as published (NCCL's bus bandwidth for an all-reduce)."""
        return self.bandwidth.value

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """Bytes/s at which a message moves: the algorithm bandwidth for an all-reduce."""
        if self.ranks is None:
            return self.bandwidth.value
        return memory.allreduce_algorithm_bandwidth(self.bandwidth.value, self.ranks)

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.latency.source, self.bandwidth.source)))


#: GPUs in one node of the cluster the all-reduce presets were measured on (AWS p5: 8 × H100).
GPUS_PER_NODE = 8


def presets() -> tuple[TransferPreset, ...]:
    """Links whose latency *and* bandwidth were both measured (GPU microbenchmarks and the
    Smol Training Playbook's AWS p5 measurements; see :mod:`gpuperf.measurements`)."""
    return (
        TransferPreset(
            "CPU → GPU, H100 node (PCIe)",
            find("CPU ↔ GPU round-trip latency", "H100-SXM"),
            find("CPU → GPU copy", "H100-SXM"),
        ),
        TransferPreset(
            "all-reduce, 8 H100 in one node",
            find("all-reduce latency, one node", "H100-SXM"),
            find("all-reduce bus bandwidth in one node", "H100-SXM"),
            ranks=GPUS_PER_NODE,
        ),
        TransferPreset(
            "all-reduce, 16 H100 nodes",
            find("all-reduce latency, 16 nodes", "H100-SXM"),
            find("all-reduce bus bandwidth, 3–16 nodes", "H100-SXM"),
            ranks=16 * GPUS_PER_NODE,
        ),
        TransferPreset(
            # One card for both numbers: the pointer chase and Triton's vector add, 1684 GB/s,
            # 83 % of the 80 GB card's datasheet. (FastIceFlo's A = B + C on a 40 GB card
            # reports more than that card's datasheet: never used as a link's W.)
            "HBM, A100-80GB",
            find("HBM load latency", "A100-80GB"),
            find("Triton vector add", "A100-80GB"),
        ),
    )


class _TransferView:
    """Effective bandwidth vs transfer size (left) and where the time goes (right)."""

    def __init__(self, *, figsize: tuple[float, float] = (9.0, 3.6), dpi: int = 72) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        grid = figure.add_gridspec(1, 2, width_ratios=(3.2, 1))
        left = figure.add_subplot(grid[0])
        right = figure.add_subplot(grid[1])
        figure.subplots_adjust(left=0.08, right=0.97, top=0.9, bottom=0.15, wspace=0.35)
        left.set_xscale("log")
        left.set_yscale("log")
        left.set_xlim(*_SIZES)
        left.set_ylim(*_BANDWIDTH_GB)
        left.set_xlabel("transfer size (bytes)")
        left.set_ylabel("effective bandwidth (GB/s)")
        left.set_title("time = latency + bytes / bandwidth", fontsize=10)
        left.grid(True, which="major", alpha=0.3)
        left.minorticks_off()
        left.axvline(LATENCY_BOUND_BELOW_BYTES, color="0.5", ls="--", lw=1)
        left.annotate(
            "nvbandwidth copies\nlatency-bound below ~1 MB",
            (LATENCY_BOUND_BELOW_BYTES, _BANDWIDTH_GB[0] * 3),
            xytext=(4, 0),
            textcoords="offset points",
            fontsize=7,
            color="0.35",
        )
        self.sizes = np.geomspace(*_SIZES, 240)
        self.latency_region = left.axvspan(_SIZES[0], _SIZES[0], color="tab:red", alpha=0.1)
        (self.curve,) = left.plot([], [], color="tab:blue", lw=2, label="effective bandwidth")
        (self.peak,) = left.plot([], [], color="black", lw=1, ls=":", label="peak bandwidth")
        (self.half,) = left.plot([], [], color="tab:red", lw=1, label="half peak at latency × bw")
        (self.point,) = left.plot([], [], "o", color="tab:orange", ms=9, mec="black")
        left.legend(loc="upper left", fontsize=7)

        right.set_xlim(0, 1)
        right.set_ylim(-0.5, 1.4)
        right.set_yticks([])
        right.set_xlabel("share of the transfer time")
        right.set_title("where the time goes", fontsize=10)
        self.latency_bar = right.barh([0], [0], color="tab:red", alpha=0.6, label="latency")[0]
        self.bytes_bar = right.barh([0], [0], color="tab:blue", alpha=0.6, label="bytes / bw")[0]
        right.legend(loc="upper center", fontsize=7, ncol=1)
        self.animated = [
            self.latency_region,
            self.curve,
            self.peak,
            self.half,
            self.point,
            self.latency_bar,
            self.bytes_bar,
        ]
        self.last: dict[str, float] = {}

    @staticmethod
    def _set_span(patch: Any, start: float, stop: float) -> None:
        if hasattr(patch, "set_x") and hasattr(patch, "set_width"):
            patch.set_x(start)
            patch.set_width(stop - start)
        else:
            patch.set_xy([[start, 0], [start, 1], [stop, 1], [stop, 0], [start, 0]])

    def update(self, n_bytes: float, latency_us: float, bandwidth_gb_s: float) -> str:
        latency_s, bandwidth = latency_us * 1e-6, bandwidth_gb_s * GB
        curve = memory.effective_bandwidth(self.sizes, bandwidth, latency_s)
        self.curve.set_data(self.sizes, curve / GB)
        self.peak.set_data(list(_SIZES), [bandwidth_gb_s] * 2)
        half = memory.half_bandwidth_size(bandwidth, latency_s)
        self.half.set_data([half, half], list(_BANDWIDTH_GB))
        self._set_span(self.latency_region, _SIZES[0], max(_SIZES[0], min(half, _SIZES[1])))
        time_s = float(memory.transfer_time(n_bytes, bandwidth, latency_s))
        achieved = float(memory.effective_bandwidth(n_bytes, bandwidth, latency_s))
        self.point.set_data([n_bytes], [achieved / GB])
        latency_share = latency_s / time_s
        self.latency_bar.set_width(latency_share)
        self.bytes_bar.set_x(latency_share)
        self.bytes_bar.set_width(1 - latency_share)
        self.last = {
            "time_s": time_s,
            "effective_bandwidth": achieved,
            "half_bandwidth_bytes": half,
            "latency_share": latency_share,
        }
        regime = "latency-bound" if n_bytes < half else "bandwidth-bound"
        return (
            f"{format_bytes(n_bytes)} at {format_bandwidth(bandwidth)} with "
            f"{format_seconds(latency_s)} latency: {format_seconds(time_s)}, effective "
            f"{format_bandwidth(achieved)} ({achieved / bandwidth:.0%} of peak), {regime}; "
            f"half the peak needs {format_bytes(half)}."
        )

    def render(self, **values: Any) -> tuple[Any, str]:
        return self.figure, self.update(**values)


def transfer_explorer(preset: int = 0, n_bytes: float = 1e6) -> Explorer:
    """Size × latency × bandwidth sliders (and measured presets) → effective bandwidth."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    links = presets()
    style = {"description_width": "initial"}
    picker = _control_widget(
        widgets.Dropdown,
        "preset",
        options=[(link.label, i) for i, link in enumerate(links)],
        value=preset,
        description="measured link",
        style=style,
    )
    chosen = links[picker.value]
    controls = {
        "n_bytes": _control_widget(
            widgets.FloatLogSlider, "n_bytes", value=n_bytes, base=10, min=2, max=10,
            step=0.25, description="bytes",
            readout_format=".3g", style=style,
        ),
        "latency_us": widgets.FloatLogSlider(
            value=chosen.latency_s * 1e6, base=10, min=-1, max=3, step=0.05,
            description="latency (µs)", readout_format=".3g", style=style,
        ),
        "bandwidth_gb_s": widgets.FloatLogSlider(
            value=chosen.bandwidth_bytes_per_s / GB, base=10, min=0, max=4, step=0.05,
            description="bandwidth (GB/s)", readout_format=".4g", style=style,
        ),
    }  # fmt: skip
    view = _TransferView()
    explorer = Explorer(
        controls,
        view.update,
        LiveFigure(view.figure, view.animated),
        title="Latency vs bandwidth: effective bandwidth of one transfer",
    )

    def on_preset(change: Any) -> None:  # wiring: a preset sets both sliders
        link = links[change["new"]]
        controls["latency_us"].value = link.latency_s * 1e6
        controls["bandwidth_gb_s"].value = link.bandwidth_bytes_per_s / GB

    picker.observe(on_preset, names="value")
    explorer.widget.children = (picker, *explorer.widget.children)
    explorer.view = view
    explorer.preset = picker
    return explorer


# --- the online book's twin: every control, drawn in the browser ------------------------------

#: The static figure's transfer sizes: every value of the live slider (10² … 10¹⁰ bytes in
#: quarter decades).
STATIC_SIZES: tuple[float, ...] = tuple(float(10 ** (e / 4)) for e in range(8, 41))
#: The static figure's latencies (µs) and bandwidths (GB/s) for a link of your own: half decades
#: over the live sliders' ranges (0.1 µs … 1 ms; 1 GB/s … 10 TB/s).
STATIC_LATENCIES_US: tuple[float, ...] = tuple(float(10 ** (e / 2)) for e in range(-2, 7))
STATIC_BANDWIDTHS_GB_S: tuple[float, ...] = tuple(float(10 ** (e / 2)) for e in range(0, 9))
#: The ``preset`` value meaning "no measured link: use the latency and bandwidth controls".
OWN_LINK = "own"
#: Every how many of the live curve's points the static curve keeps (it is smooth on log axes).
_CURVE_STRIDE = 4


def _short(x: float) -> str:
    return f"{x:.3g}"


@book_figure
def transfer_static(
    preset: int | str = 0,
    n_bytes: float = 1e6,
    latency_us: float = 1.0,
    bandwidth_gb_s: float = 100.0,
    *,
    colab: str = "",
) -> Any:
    """Static twin of :func:`transfer_explorer` (a :class:`gpuperf.vega.StaticExplorer`):
    measured link × transfer size, and for a link of your own (``preset=OWN_LINK``) latency ×
    bandwidth. Sizes are every value of the live slider (:data:`STATIC_SIZES`); latency and
    bandwidth move in half decades (:data:`STATIC_LATENCIES_US`, :data:`STATIC_BANDWIDTHS_GB_S`).
    Every plotted number is read from a :class:`_TransferView` after its ``update``."""
    from ..vega import StaticExplorer

    alt = book_altair()
    links = presets()
    choices = (*range(len(links)), OWN_LINK)
    if isinstance(preset, bool) or not any(
        preset == c and isinstance(preset, type(c)) for c in choices
    ):
        raise ValueError(
            f"preset={preset!r} must be a link index 0…{len(links) - 1} or {OWN_LINK!r}"
        )
    controls = [
        control(
            "preset",
            choices,
            label="measured link",
            initial=preset,
            format=lambda i: (
                links[i].label if i != OWN_LINK else "your own: latency and bandwidth"
            ),
        ),
        control("n_bytes", STATIC_SIZES, label="bytes", initial=n_bytes, format=format_bytes),
        control(
            "latency_us",
            STATIC_LATENCIES_US,
            label="latency (µs, your own link)",
            initial=latency_us,
            format=_short,
        ),
        control(
            "bandwidth_gb_s",
            STATIC_BANDWIDTHS_GB_S,
            label="bandwidth (GB/s, your own link)",
            initial=bandwidth_gb_s,
            format=_short,
        ),
    ]
    view = _TransferView(dpi=72)
    explorer = StaticExplorer(
        controls,
        alt=(
            "Log-log curve of effective bandwidth against transfer size for the chosen link: flat "
            "at the peak (dotted) for large transfers, falling in proportion to size left of the "
            "half-bandwidth size (red line, shaded latency-bound region), with the chosen size as "
            "an orange point; below, a bar splits its time into latency and bytes over "
            "bandwidth, and the sentence gives the time and the effective bandwidth."
        ),
        colab=colab,
        dropdowns=("preset",),
    )

    def link(preset: int | str, latency_us: float, bandwidth_gb_s: float) -> tuple[float, float]:
        if preset == OWN_LINK:
            return latency_us, bandwidth_gb_s
        chosen = links[int(preset)]
        return chosen.latency_s * 1e6, chosen.bandwidth_bytes_per_s / GB

    def lines(latency_us: float, bandwidth_gb_s: float) -> list[dict[str, Any]]:
        view.update(STATIC_SIZES[0], latency_us, bandwidth_gb_s)
        xs, ys = view.curve.get_data()
        keep = [*range(0, len(xs), _CURVE_STRIDE), len(xs) - 1]
        rows: list[dict[str, Any]] = [
            {"kind": "curve", "x": float(xs[i]), "y": float(ys[i])} for i in sorted(set(keep))
        ]
        (_, peak), (half, _) = view.peak.get_ydata(), view.half.get_xdata()
        region = view.latency_region
        start = float(region.get_x())
        rows.append(
            {
                "kind": "limits",
                "peak": float(peak),
                "half": float(half),
                "x": start,
                "x2": start + float(region.get_width()),
            }
        )
        return rows

    def point(
        preset: int | str, n_bytes: float, latency_us: float, bandwidth_gb_s: float
    ) -> dict[str, Any]:
        sentence = view.update(n_bytes, *link(preset, latency_us, bandwidth_gb_s))
        (x,), (y,) = view.point.get_data()
        return {
            "x": float(x),
            "y": float(y),
            "latency_share": float(view.latency_bar.get_width()),
            "bytes_start": float(view.bytes_bar.get_x()),
            "bytes_share": float(view.bytes_bar.get_width()),
            "note": sentence.replace(": ", ":\n", 1).replace(" (", "\n(", 1).replace("; ", ";\n"),
        }

    def measured_lines(preset: int | str) -> list[dict[str, Any]]:
        return [] if preset == OWN_LINK else lines(*link(preset, 0.0, 0.0))

    def own_lines(latency_us: float, bandwidth_gb_s: float) -> list[dict[str, Any]]:
        return lines(latency_us, bandwidth_gb_s)

    def measured_point(preset: int | str, n_bytes: float) -> list[dict[str, Any]]:
        return [] if preset == OWN_LINK else [point(preset, n_bytes, 0.0, 0.0)]

    def own_point(preset: int | str, n_bytes: float, latency_us: float, bandwidth_gb_s: float):
        return [point(preset, n_bytes, latency_us, bandwidth_gb_s)] if preset == OWN_LINK else []

    x = alt.X(
        "x:Q",
        title="transfer size (bytes)",
        scale=alt.Scale(type="log", domain=list(_SIZES)),
        axis=alt.Axis(format="~s", values=[10.0**e for e in range(2, 11)]),
    )
    y = alt.Y(
        "y:Q",
        title="effective bandwidth (GB/s)",
        scale=alt.Scale(type="log", domain=list(_BANDWIDTH_GB)),
        axis=alt.Axis(format="~g", values=[10.0**e for e in range(-4, 5)]),
    )

    series = (
        "effective bandwidth",
        "peak bandwidth",
        "half peak at latency × bandwidth",
        "measured copies latency-bound below ~1 MB",
        "your latency and bandwidth",
    )
    colour = alt.Color(
        "series:N",
        title=None,
        scale=alt.Scale(
            domain=list(series), range=["#1f77b4", "black", "#d62728", "#888", "#9467bd"]
        ),
        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=330),
    )
    dash = alt.StrokeDash(
        "series:N",
        title=None,
        scale=alt.Scale(domain=list(series), range=[[1, 0], [2, 2], [1, 0], [5, 3], [4, 2]]),
        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=330),
    )

    def named(chart: Any, index: int) -> Any:
        return chart.transform_calculate(series=repr(series[index]))

    def curve_layers(chart: Any) -> list[Any]:
        limits = chart.transform_filter("datum.kind == 'limits'")
        return [
            limits.mark_rect(color="#d62728", opacity=0.1, clip=True).encode(x=x, x2="x2:Q"),
            named(chart.transform_filter("datum.kind == 'curve'"), 0)
            .mark_line(strokeWidth=2, clip=True)
            .encode(x=x, y=y, color=colour, strokeDash=dash),
            named(limits, 1).mark_rule().encode(y=alt.Y("peak:Q"), color=colour, strokeDash=dash),
            named(limits, 2)
            .mark_rule(clip=True)
            .encode(x=alt.X("half:Q"), color=colour, strokeDash=dash),
        ]

    def point_layer(chart: Any) -> Any:
        return chart.mark_point(filled=True, size=110, color="#ff7f0e", stroke="black").encode(
            x=x, y=y
        )

    measured = explorer.table("measured_lines", measured_lines, over=("preset",))
    own_index = choices.index(OWN_LINK)
    own_lines_chart = explorer.table("own_lines", own_lines, over=("latency_us", "bandwidth_gb_s"))
    # your own link is the figure's link when chosen, and a grey curve to compare otherwise
    own = own_lines_chart.transform_filter(f"p_preset == {own_index}")
    ghost = named(
        own_lines_chart.transform_filter(f"p_preset != {own_index} && datum.kind == 'curve'"), 4
    )
    measured_dot = explorer.table("measured_point", measured_point, over=("preset", "n_bytes"))
    own_dot = explorer.table("own_point", own_point)
    copies = explorer.table("copies", lambda: {"x": float(LATENCY_BOUND_BELOW_BYTES)}, over=())
    curve = alt.layer(
        named(copies, 3).mark_rule().encode(x=x, color=colour, strokeDash=dash),
        *curve_layers(measured),
        *curve_layers(own),
        ghost.mark_line(strokeWidth=1.5, clip=True).encode(
            x=x, y=y, color=colour, strokeDash=dash
        ),
        point_layer(measured_dot),
        point_layer(own_dot),
    ).properties(height=240, title="time = latency + bytes / bandwidth")  # fmt: skip

    def bar_layers(chart: Any) -> list[Any]:
        share = alt.X(
            "start:Q", title="share of the transfer time", scale=alt.Scale(domain=[0, 1]),
            axis=alt.Axis(format="%"),
        )  # fmt: skip
        folded = (
            chart.transform_calculate(
                parts="[{part: 'latency', start: 0, stop: datum.latency_share},"
                " {part: 'bytes / bandwidth', start: datum.bytes_start,"
                " stop: datum.bytes_start + datum.bytes_share}]"
            )
            .transform_flatten(["parts"])
            .transform_calculate(
                part="datum.parts.part", start="datum.parts.start", stop="datum.parts.stop"
            )
        )
        return folded.mark_bar(height=22, opacity=0.7).encode(
            x=share,
            x2="stop:Q",
            color=alt.Color(
                "part:N",
                title=None,
                scale=alt.Scale(
                    domain=["latency", "bytes / bandwidth"], range=["#d62728", "#1f77b4"]
                ),
                legend=alt.Legend(orient="bottom"),
            ),
        )

    def note_layer(chart: Any) -> Any:
        return chart.mark_text(
            align="left", baseline="top", fontSize=12, lineBreak="\n", color="#222"
        ).encode(x=alt.value(0), y=alt.value(0), text="note:N")

    bars = alt.layer(bar_layers(measured_dot), bar_layers(own_dot)).properties(
        height=30, title="where the time goes"
    )
    note = alt.layer(note_layer(measured_dot), note_layer(own_dot)).properties(height=64)
    explorer.chart(
        alt.vconcat(curve, bars, note, spacing=20)
        .resolve_scale(color="independent", strokeDash="independent")
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
        .configure_view(strokeWidth=0)
    )
    return explorer
