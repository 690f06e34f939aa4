"""Chapter 5.2 explorer: how long does a collective take, and when does the tree beat the ring?

For a collective, a number of ranks p, a message of S bytes, a link of B bytes/s per direction
(:func:`gpuperf.collectives.links`, read from the hardware table) and a fixed cost α per step,
the left panel draws the α–β time of the ring (and, for an all-reduce, of the double binary tree)
against the message size (:func:`gpuperf.collectives.collective_time`), with the chosen size
marked, the ring's half-bandwidth size n½ = p·α·B and the ring/tree crossover
(:func:`gpuperf.collectives.ring_tree_crossover_bytes`). The right panel splits the ring's time
into its latency term and its bandwidth term. The status line gives the time, the algorithm
bandwidth S/t and the bus bandwidth nccl-tests would report.

The default α is *derived*, not measured: the Smol Training Playbook's 12.9 µs all-reduce of the
smallest message on 8 H100s, divided by the ring's 14 steps
(:func:`gpuperf.collectives.step_latency_from_collective_latency`). :func:`collective_explorer` is
the live widget and :func:`collective_static` the online book's: every control as a Vega-Lite
figure drawn in the browser (:mod:`gpuperf.vega`), its numbers read from a
:class:`_CollectiveView`. The widgets only wire controls to those calculators.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from .. import collectives
from ..measurements import find
from ..runtime import require
from ..scrub import control
from ..units import format_bandwidth, format_bytes, format_seconds
from ..vega import book_altair, book_figure
from .live import Explorer, LiveFigure, _control_widget, _new_figure

__all__ = [
    "RANKS",
    "STATIC_ALPHA_FACTORS",
    "STATIC_SIZES",
    "collective_explorer",
    "collective_static",
    "default_step_latency_s",
]

_SIZES = (1e3, 1e11)
_TIMES = (1e-6, 1e2)
#: Rank counts the explorer offers: powers of two from one pair to 1024 GPUs.
RANKS: tuple[int, ...] = tuple(2**k for k in range(1, 11))
#: GPUs of the node the default α is derived from (AWS p5: 8 × H100, Smol Training Playbook).
_NODE_GPUS = 8


def default_step_latency_s() -> float:
    """α derived from the measured one-node all-reduce latency over the ring's 2(p − 1) steps."""
    t0 = find("all-reduce latency, one node", "H100-SXM").value
    return collectives.step_latency_from_collective_latency(t0, "all-reduce", _NODE_GPUS)


class _CollectiveView:
    """Time against message size for ring and tree (left); the ring's time split (right)."""

    def __init__(self, *, figsize: tuple[float, float] = (9.0, 3.8), dpi: int = 72) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        grid = figure.add_gridspec(1, 2, width_ratios=(3.2, 1))
        left = figure.add_subplot(grid[0])
        right = figure.add_subplot(grid[1])
        figure.subplots_adjust(left=0.09, right=0.97, top=0.9, bottom=0.15, wspace=0.35)
        left.set_xscale("log")
        left.set_yscale("log")
        left.set_xlim(*_SIZES)
        left.set_ylim(*_TIMES)
        left.set_xlabel("message size S (bytes)")
        left.set_ylabel("time (s)")
        left.set_title("t = steps·α + traffic·S / B", fontsize=10)
        left.grid(True, which="major", alpha=0.3)
        left.minorticks_off()
        self.sizes = np.geomspace(*_SIZES, 160)
        (self.ring,) = left.plot([], [], color="tab:blue", lw=2, label="ring")
        (self.tree,) = left.plot([], [], color="tab:green", lw=2, ls="--", label="tree")
        (self.half,) = left.plot([], [], color="tab:red", lw=1, label="ring n½ = p·α·B")
        (self.cross,) = left.plot([], [], color="tab:green", lw=1, ls=":", label="crossover")
        (self.point,) = left.plot([], [], "o", color="tab:orange", ms=9, mec="black")
        (self.tree_point,) = left.plot([], [], "s", color="tab:green", ms=7, mec="black")
        left.legend(loc="upper left", fontsize=7)

        right.set_xlim(0, 1)
        right.set_ylim(-0.5, 1.4)
        right.set_yticks([])
        right.set_xlabel("share of the ring's time")
        right.set_title("where the time goes", fontsize=10)
        self.latency_bar = right.barh([0], [0], color="tab:red", alpha=0.6, label="steps·α")[0]
        self.bytes_bar = right.barh([0], [0], color="tab:blue", alpha=0.6, label="bytes / B")[0]
        right.legend(loc="upper center", fontsize=7, ncol=1)
        self.animated = [
            self.ring,
            self.tree,
            self.half,
            self.cross,
            self.point,
            self.tree_point,
            self.latency_bar,
            self.bytes_bar,
        ]
        self.last: dict[str, Any] = {}
        self._curves: dict[tuple[Any, ...], np.ndarray] = {}

    def update(
        self, collective: str, ranks: int, n_bytes: float, link: int, alpha_us: float
    ) -> str:
        the_link = collectives.links()[link]
        bandwidth, alpha = the_link.bandwidth, alpha_us * 1e-6
        ring_curve = self._curve(collective, ranks, bandwidth, alpha, "ring")
        self.ring.set_data(self.sizes, ring_curve)
        ring = collectives.collective_time(collective, n_bytes, ranks, bandwidth, alpha)
        self.point.set_data([n_bytes], [ring.time_s])
        half = ring.half_bandwidth_bytes
        self.half.set_data([half, half], list(_TIMES))
        tree = None
        if collective == "all-reduce":
            tree_curve = self._curve(collective, ranks, bandwidth, alpha, "tree")
            self.tree.set_data(self.sizes, tree_curve)
            tree = collectives.collective_time(
                collective, n_bytes, ranks, bandwidth, alpha, "tree"
            )
            self.tree_point.set_data([n_bytes], [tree.time_s])
            crossover = collectives.ring_tree_crossover_bytes(ranks, bandwidth, alpha)
            if crossover:
                self.cross.set_data([crossover, crossover], list(_TIMES))
            else:  # p ≤ 3: the ring is never slower
                self.cross.set_data([], [])
        else:
            for artist in (self.tree, self.tree_point, self.cross):
                artist.set_data([], [])
            crossover = None
        latency_share = ring.latency_s / ring.time_s
        self.latency_bar.set_width(latency_share)
        self.bytes_bar.set_x(latency_share)
        self.bytes_bar.set_width(1 - latency_share)
        self.last = {"ring": ring, "tree": tree, "crossover_bytes": crossover}
        text = (
            f"{collective} of {format_bytes(n_bytes)} over {ranks} ranks, {the_link.label} "
            f"({format_bandwidth(bandwidth)} per direction), α = {format_seconds(alpha)}: ring "
            f"{format_seconds(ring.time_s)} ({ring.steps} steps), algbw "
            f"{format_bandwidth(ring.algorithm_bandwidth)}, busbw "
            f"{format_bandwidth(ring.bus_bandwidth)}; n½ = {format_bytes(half)}"
        )
        if tree is not None:
            faster = "tree" if tree.time_s < ring.time_s else "ring"
            text += (
                f"; tree {format_seconds(tree.time_s)} ({tree.steps} steps): the {faster} "
                "is faster"
            )
        return text + "."

    def _curve(
        self, collective: str, ranks: int, bandwidth: float, alpha: float, algorithm: str
    ) -> np.ndarray:
        """The time curve over :attr:`sizes` (it does not depend on the chosen size, so a
        size slider and the book's figure reuse it)."""
        key = (collective, ranks, bandwidth, alpha, algorithm)
        if key not in self._curves:
            if len(self._curves) >= 4096:  # a slider dragged for hours: keep memory bounded
                self._curves.clear()
            self._curves[key] = collectives.collective_time_curve(
                collective, self.sizes, ranks, bandwidth, alpha, algorithm
            )
        return self._curves[key]


def collective_explorer(
    collective: str = "all-reduce", ranks: int = 8, n_bytes: float = 1e6, link: int = 0
) -> Explorer:
    """Collective × ranks × message size × link × α → ring and tree times, algbw and busbw."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    style = {"description_width": "initial"}
    found = collectives.links()
    controls = {
        "collective": _control_widget(
            widgets.Dropdown, "collective", options=list(collectives.MODELLED_COLLECTIVES),
            value=collective, description="collective", style=style,
        ),
        "ranks": _control_widget(
            widgets.Dropdown, "ranks", options=list(RANKS), value=ranks,
            description="ranks p", style=style,
        ),
        "n_bytes": _control_widget(
            widgets.FloatLogSlider, "n_bytes", value=n_bytes, base=10, min=3, max=11,
            step=0.25, description="message bytes", readout_format=".3g", style=style,
        ),
        "link": _control_widget(
            widgets.Dropdown, "link", options=[(x.label, i) for i, x in enumerate(found)],
            value=link, description="link", style=style,
        ),
        "alpha_us": widgets.FloatLogSlider(
            value=default_step_latency_s() * 1e6, base=10, min=-1, max=2, step=0.05,
            description="α per step (µs)", readout_format=".3g", style=style,
        ),
    }  # fmt: skip
    view = _CollectiveView()
    explorer = Explorer(
        controls,
        view.update,
        LiveFigure(view.figure, view.animated),
        title="Collectives: ring vs tree, algbw vs busbw",
    )
    explorer.view = view
    return explorer


# --- the online book's twin: every control, drawn in the browser ------------------------------

#: The static figure's message sizes: half decades from 1 kB to 100 GB (the live slider moves in
#: quarter decades over the same range).
STATIC_SIZES: tuple[float, ...] = tuple(float(10 ** (e / 2)) for e in range(6, 23))
#: The static figure's α, as multiples of the derived default (:func:`default_step_latency_s`):
#: an eighth of it, itself and 8 times it (about 0.1 to 7 µs; the live slider runs to 100 µs).
STATIC_ALPHA_FACTORS: tuple[float, ...] = (0.125, 1.0, 8.0)
#: Every how many of the live curves' points the static curves keep (smooth on log axes).
_CURVE_STRIDE = 8


def _sig(value: float) -> float:
    """A plotted number to five significant digits: the page's data stays small."""
    return float(f"{float(value):.5g}")


def _static_alphas_us() -> tuple[float, ...]:
    """The static figure's α values (µs): :data:`STATIC_ALPHA_FACTORS` × the derived default."""
    alpha_us = default_step_latency_s() * 1e6
    return tuple(factor * alpha_us for factor in STATIC_ALPHA_FACTORS)


@book_figure
def collective_static(
    collective: str = "all-reduce",
    ranks: int = 8,
    n_bytes: float = 1e6,
    link: int = 0,
    alpha_factor: float = 1.0,
    *,
    colab: str = "",
) -> Any:
    """Static twin of :func:`collective_explorer` (a :class:`gpuperf.vega.StaticExplorer`):
    collective × ranks × message size × link × α. Collectives, ranks and links are every value
    of the live drop-downs; sizes are :data:`STATIC_SIZES`; α is one of
    :func:`_static_alphas_us` (``alpha_factor`` picks the initial one from
    :data:`STATIC_ALPHA_FACTORS`). Every plotted number is read from a :class:`_CollectiveView`
    after its ``update``."""
    from ..vega import StaticExplorer

    alt = book_altair()
    if isinstance(alpha_factor, bool) or alpha_factor not in STATIC_ALPHA_FACTORS:
        raise ValueError(
            f"alpha_factor={alpha_factor!r} must be one of "
            f"{', '.join(map(str, STATIC_ALPHA_FACTORS))}"
        )
    found = collectives.links()
    alphas = _static_alphas_us()

    @cache
    def snapshot(
        collective: str, ranks: int, n_bytes: float, link: int, alpha_us: float
    ) -> dict[str, Any]:
        """The view after one update, as plain numbers: each combination is drawn once, and the
        note, the point and the lines read the same update."""
        status = view.update(collective, ranks, n_bytes, link, alpha_us)
        lines: list[dict[str, Any]] = []
        for name, artist in (("ring", view.ring), ("tree", view.tree)):
            xs, ys = artist.get_data()
            if len(xs):
                keep = sorted({*range(0, len(xs), _CURVE_STRIDE), len(xs) - 1})
                lines += [{"series": name, "x": _sig(xs[i]), "y": _sig(ys[i])} for i in keep]
        for name, artist in (("half", view.half), ("crossover", view.cross)):
            xs = artist.get_xdata()
            if len(xs):
                lines.append({"series": name, "x": _sig(xs[0])})
        (x,), (ring,) = view.point.get_data()
        point = {
            "x": float(x),
            "ring": _sig(ring),
            "latency_share": _sig(view.latency_bar.get_width()),
            "bytes_share": _sig(view.bytes_bar.get_width()),
        }
        tree = view.tree_point.get_ydata()
        if collective == "all-reduce" and len(tree):
            point["tree"] = _sig(tree[0])
        return {"status": status, "lines": lines, "point": point}

    controls = [
        control(
            "collective", collectives.MODELLED_COLLECTIVES, label="collective", initial=collective
        ),
        control("ranks", RANKS, label="ranks p", initial=ranks),
        control(
            "n_bytes", STATIC_SIZES, label="message bytes", initial=n_bytes, format=format_bytes
        ),
        control(
            "link", range(len(found)), label="link", initial=link, format=lambda i: found[i].label
        ),
        control(
            "alpha_us",
            alphas,
            label="α per step",
            initial=alphas[STATIC_ALPHA_FACTORS.index(alpha_factor)],
            format=lambda a: format_seconds(a * 1e-6),
        ),
    ]
    view = _CollectiveView(dpi=72)
    explorer = StaticExplorer(
        controls,
        alt=(
            "Log-log plot of collective time against message size: the ring's curve is flat at "
            "its latency floor for small messages and rises in proportion to size beyond its "
            "half-bandwidth size (red line); for an all-reduce a dashed tree curve starts lower "
            "but rises above the ring for large messages, crossing it at the dotted green line. "
            "Markers show the chosen size; below, a bar splits the ring's time into steps × α "
            "and bytes over bandwidth."
        ),
        note=lambda **values: snapshot(**values)["status"],
        colab=colab,
        dropdowns=("ranks", "link"),
    )

    def lines(collective: str, ranks: int, link: int, alpha_us: float) -> list[dict[str, Any]]:
        return snapshot(collective, ranks, STATIC_SIZES[0], link, alpha_us)["lines"]

    def point(**values: Any) -> dict[str, Any]:
        return snapshot(**values)["point"]

    series = ("ring", "tree", "half", "crossover")
    names = {
        "tree": "tree (all-reduce)",
        "half": "ring n½ = p·α·B",
        "crossover": "ring/tree crossover",
    }
    label = " : ".join(f"datum.label == '{k}' ? '{v}'" for k, v in names.items())
    colour = alt.Color(
        "series:N",
        title=None,
        scale=alt.Scale(domain=list(series), range=["#1f77b4", "#2ca02c", "#d62728", "#2ca02c"]),
        legend=alt.Legend(
            orient="bottom",
            direction="vertical",
            labelLimit=330,
            labelExpr=f"{label} : datum.label",
        ),
    )
    dash = alt.StrokeDash(
        "series:N",
        title=None,
        scale=alt.Scale(domain=list(series), range=[[1, 0], [6, 3], [1, 0], [2, 2]]),
        legend=alt.Legend(
            orient="bottom",
            direction="vertical",
            labelLimit=330,
            labelExpr=f"{label} : datum.label",
        ),
    )
    x = alt.X(
        "x:Q",
        title="message size S (bytes)",
        scale=alt.Scale(type="log", domain=list(_SIZES)),
        axis=alt.Axis(format="~s", values=[10.0**e for e in range(3, 12, 2)]),
    )
    time_scale = alt.Scale(type="log", domain=list(_TIMES))
    y = alt.Y(
        "y:Q",
        title="time (s)",
        scale=time_scale,
        axis=alt.Axis(format="~s", values=[10.0**e for e in range(-6, 3)]),
    )
    drawn = explorer.table("lines", lines, over=("collective", "ranks", "link", "alpha_us"))
    dots = explorer.table("point", point)
    curves = drawn.transform_filter("isValid(datum.y)")
    rules = drawn.transform_filter("!isValid(datum.y)")
    top = alt.layer(
        curves.mark_line(strokeWidth=2, clip=True).encode(
            x=x, y=y, color=colour, strokeDash=dash, detail="series:N"
        ),
        rules.mark_rule(clip=True).encode(x=x, color=colour, strokeDash=dash),
        dots.mark_point(filled=True, stroke="black", size=100, color="#ff7f0e", clip=True).encode(
            x=x, y=alt.Y("ring:Q", scale=time_scale)
        ),
        dots.transform_filter("isValid(datum.tree)")
        .mark_square(filled=True, stroke="black", size=70, color="#2ca02c", clip=True)
        .encode(x=x, y=alt.Y("tree:Q", scale=time_scale)),
    ).properties(height=240, title="t = steps·α + traffic·S / B")
    folded = (
        dots.transform_calculate(
            parts="[{part: 'steps·α', start: 0, stop: datum.latency_share},"
            " {part: 'bytes / B', start: datum.latency_share,"
            " stop: datum.latency_share + datum.bytes_share}]"
        )
        .transform_flatten(["parts"])
        .transform_calculate(
            part="datum.parts.part", start="datum.parts.start", stop="datum.parts.stop"
        )
    )
    bars = (
        folded.mark_bar(height=22, opacity=0.7)
        .encode(
            x=alt.X(
                "start:Q",
                title="share of the ring's time",
                scale=alt.Scale(domain=[0, 1]),
                # quarters: 0% to 100% all labelled, apart, at a phone's width and a desktop's
                axis=alt.Axis(format="%", values=[0, 0.25, 0.5, 0.75, 1]),
            ),
            x2="stop:Q",
            color=alt.Color(
                "part:N",
                title=None,
                scale=alt.Scale(domain=["steps·α", "bytes / B"], range=["#d62728", "#1f77b4"]),
                legend=alt.Legend(orient="bottom"),
            ),
        )
        .properties(height=30, title="where the time goes")
    )
    explorer.chart(
        alt.vconcat(top, bars, spacing=20)
        .resolve_scale(color="independent", strokeDash="independent")
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer
