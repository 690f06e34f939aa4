"""Chapter 4.3 explorer: a decode step on the roofline, against batch, context and KV heads.

:func:`decode_explorer` moves the batch, the context length, the number of KV heads (32: MHA,
8: GQA, 1: MQA) of :data:`gpuperf.inference.ILLUSTRATIVE` and the chip. The left panel plots
the arithmetic intensity of one decode step (:func:`gpuperf.inference.decode_step`) against the
batch, for the chosen context, beside the intensity of the weights alone and the chip's ridge
point: the weights' line climbs with the batch, the whole step's flattens where the KV cache
takes over. The right panel shows what HBM holds (weights and caches against capacity) and
what one step reads. The status line adds the roofline time, tokens per second, and the split-KV
launch (:func:`gpuperf.inference.split_kv`) for the chosen batch.

Only calculators are called here. :func:`decode_static` is the online book's twin (every control
of the live explorer, drawn in the browser from rows this view computed at build time).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import inference
from ..hardware import chip
from ..runtime import require
from ..scrub import control
from ..units import format_bytes, format_seconds
from ..vega import book_altair, book_figure
from .live import Explorer, _chip_value, _control_widget, _new_figure

if TYPE_CHECKING:
    from ..vega import StaticExplorer

__all__ = [
    "BATCHES",
    "CHIPS",
    "CONTEXTS",
    "KV_HEADS",
    "decode_explorer",
    "decode_static",
]

PRECISION = "bf16"
CHIPS: tuple[str, ...] = ("A100-80GB", "H100-SXM", "H200", "B200", "GB200")
BATCHES: tuple[int, ...] = tuple(2**k for k in range(11))  # 1 … 1024 sequences
CONTEXTS: tuple[int, ...] = (512, 1024, 2048, 4096, 8192, 16384, 32768)
KV_HEADS: tuple[int, ...] = (32, 16, 8, 4, 2, 1)
_INTENSITY = (0.5, 3000.0)


def _kind(kv_heads: int) -> str:
    return inference.attention_kind(inference.ILLUSTRATIVE.n_heads, kv_heads)


class _DecodeView:
    """Intensity of a decode step against batch (left); HBM use and traffic (right)."""

    def __init__(self, *, figsize: tuple[float, float] = (7.6, 3.4), dpi: int = 80) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        ax, bars = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.5, 1]})
        figure.subplots_adjust(left=0.09, right=0.98, top=0.87, bottom=0.16, wspace=0.32)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlim(BATCHES[0], BATCHES[-1])
        ax.set_ylim(*_INTENSITY)
        ax.set_xlabel("batch (sequences, one new token each)")
        ax.set_ylabel("FLOP per HBM byte")
        ax.set_title("decode step on the roofline", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        x = np.array(BATCHES, dtype=float)
        (self.weights_line,) = ax.plot(x, x, color="tab:gray", ls="--", label="weights only")
        (self.step_line,) = ax.plot(x, x, color="tab:blue", lw=2, label="whole step")
        (self.ridge,) = ax.plot(x, x, color="tab:red", lw=1, label="ridge point")
        (self.marker,) = ax.plot([], [], "o", color="tab:blue", ms=9, mec="black")
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        bars.set_xlim(0, 1)
        bars.set_ylim(-0.6, 1.6)
        bars.set_yticks([0, 1], ["read per\nstep", "HBM\nholds"])
        bars.set_xlabel("share")
        bars.set_title("bytes", fontsize=10)
        self.read_w = bars.barh(0, 0.5, color="tab:gray", height=0.5)[0]
        self.read_kv = bars.barh(0, 0.5, left=0.5, color="tab:orange", height=0.5)[0]
        self.hold_w = bars.barh(1, 0.5, color="tab:gray", height=0.5)[0]
        self.hold_kv = bars.barh(1, 0.5, left=0.5, color="tab:orange", height=0.5)[0]
        self.read_text = bars.text(0.02, -0.45, "", fontsize=8)
        self.hold_text = bars.text(0.02, 1.3, "", fontsize=8)
        bars.legend([self.read_w, self.read_kv], ["weights", "KV cache"], loc="lower right",
                    fontsize=8, frameon=False, bbox_to_anchor=(1.0, 0.35))  # fmt: skip
        self.animated = [
            self.weights_line, self.step_line, self.ridge, self.marker, self.read_w,
            self.read_kv, self.hold_w, self.hold_kv, self.read_text, self.hold_text,
        ]  # fmt: skip
        self.last: inference.InferenceStep | None = None
        self.last_split: inference.SplitKV | None = None

    def update(self, batch: int, context_len: int, kv_heads: int, chip_name: str) -> str:
        config = inference.ILLUSTRATIVE.with_kv_heads(kv_heads)
        the_chip = chip(chip_name)
        steps = [
            inference.decode_step(config, b, context_len, the_chip, PRECISION) for b in BATCHES
        ]
        self.weights_line.set_ydata([s.weight_intensity for s in steps])
        self.step_line.set_ydata([s.intensity for s in steps])
        self.ridge.set_ydata([steps[0].ridge_point] * len(BATCHES))
        step = inference.decode_step(config, batch, context_len, the_chip, PRECISION)
        self.last = step
        self.marker.set_data([batch], [step.intensity])
        kv = step.kv_read_bytes + step.kv_write_bytes
        self.read_w.set_width(step.weight_bytes / step.bytes)
        self.read_kv.set_x(step.weight_bytes / step.bytes)
        self.read_kv.set_width(kv / step.bytes)
        self.read_text.set_text(
            f"{format_bytes(step.weight_bytes)} weights + {format_bytes(kv)} cache"
        )
        # HBM holds every weight (embedding too), but a step reads only the layers and LM head.
        stored = config.total_bytes(PRECISION)
        held = stored + kv
        capacity = the_chip.hbm_bytes
        self.hold_w.set_width(min(1.0, stored / capacity))
        self.hold_kv.set_x(min(1.0, stored / capacity))
        self.hold_kv.set_width(max(0.0, min(1.0, held / capacity) - stored / capacity))
        fits = held <= capacity
        self.hold_kv.set_color("tab:orange" if fits else "tab:red")
        self.hold_text.set_text(
            f"{format_bytes(held)} of {format_bytes(capacity)}"
            + ("" if fits else " — does not fit")
        )
        split = inference.split_kv(
            batch, config.n_heads, kv_heads, context_len, config.head_dim, the_chip,
            precision=PRECISION,
        )  # fmt: skip
        self.last_split = split
        fit_text = (
            "fits in HBM"
            if fits
            else f"does NOT fit in HBM (at most batch "
            f"{inference.max_batch(config, context_len, the_chip, PRECISION)})"
        )
        return (
            f"{the_chip.name}, {_kind(kv_heads)} with {kv_heads} KV heads, batch {batch}, "
            f"context {context_len}: the step reads {format_bytes(step.bytes)} "
            f"({step.kv_fraction:.0%} KV cache), {fit_text}. Intensity "
            f"{step.intensity:.3g} FLOP/B against a ridge of {step.ridge_point:.0f}: "
            f"{step.bound}-bound, ≥ {format_seconds(step.time_s)} per step, ≤ "
            f"{step.tokens_per_s:,.0f} tokens/s. Attention kernel: {split.plain_ctas} CTAs "
            f"({split.plain_sm_busy_fraction:.0%} of {split.sm_count} SMs) plain, "
            f"{split.ctas} with {split.splits_used} split{'s' if split.splits_used > 1 else ''}"
            f" ({split.sm_busy_fraction:.0%})."
        )

    def render(
        self, batch: int, context_len: int, kv_heads: int, chip_name: str
    ) -> tuple[Any, str]:
        return self.figure, self.update(batch, context_len, kv_heads, chip_name)


def decode_explorer(
    batch: int = 1, context_len: int = 4096, kv_heads: int = 8, chip_name: str = "H100-SXM"
) -> Explorer:
    """Batch × context × KV heads × chip → the decode step's intensity, bytes and bound."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    controls = {
        "batch": _control_widget(
            widgets.SelectionSlider, "batch", options=[(str(b), b) for b in BATCHES],
            value=batch, description="batch",
        ),
        "context_len": _control_widget(
            widgets.SelectionSlider, "context_len", options=[(str(c), c) for c in CONTEXTS],
            value=context_len, description="context",
        ),
        "kv_heads": _control_widget(
            widgets.Dropdown, "kv_heads",
            options=[(f"{k} ({_kind(k)})", k) for k in KV_HEADS], value=kv_heads,
            description="KV heads",
        ),
        "chip_name": _control_widget(
            widgets.Dropdown, "chip_name", options=[(c, c) for c in CHIPS],
            value=_chip_value(chip_name), description="chip",
        ),
    }  # fmt: skip
    return Explorer.for_view(
        _DecodeView(), controls, title="Decode: weights once per step, the KV cache per sequence"
    )


@book_figure
def decode_static(
    batch: int = 1,
    context_len: int = 4096,
    kv_heads: int = 8,
    chip_name: str = "H100-SXM",
    *,
    colab: str = "",
) -> StaticExplorer:
    """Static twin of :func:`decode_explorer` for the online book: batch × context × KV heads ×
    chip, every value the live controls offer (11 × 7 × 6 × 5 combinations). Each row is read
    from a :class:`_DecodeView` after ``update``; the sentence under the figure is its status
    line. The arguments are the initial control values."""
    from matplotlib.colors import same_color

    from ..vega import StaticExplorer

    alt = book_altair()

    @cache
    def state(batch: int, context_len: int, kv_heads: int, chip_name: str) -> dict[str, Any]:
        """The view's artists after one update, as plain numbers (each combination once)."""
        status = view.update(batch, context_len, kv_heads, chip_name)
        (mx,), (my,) = view.marker.get_data()
        fits = not same_color(view.hold_kv.get_facecolor(), "tab:red")
        return {
            "status": status,
            "curves": {
                name: [float(y) for y in line.get_ydata()]
                for name, line in (
                    ("weights only", view.weights_line),
                    ("whole step", view.step_line),
                    ("ridge point", view.ridge),
                )
            },
            "marker": {"batch": int(mx), "intensity": float(my)},
            "bars": [
                {
                    "row": row,
                    "part": part,
                    "x0": float(p.get_x()),
                    "x1": float(p.get_x() + p.get_width()),
                }
                for row, part, p in (
                    ("read per step", "weights", view.read_w),
                    ("read per step", "KV cache", view.read_kv),
                    ("HBM holds", "weights", view.hold_w),
                    ("HBM holds", "KV cache" if fits else "KV cache (does not fit)", view.hold_kv),
                )
            ],
            "texts": [
                {"row": "read per step", "text": view.read_text.get_text()},
                {"row": "HBM holds", "text": view.hold_text.get_text()},
            ],
        }

    controls = [
        control("batch", BATCHES, label="batch", initial=batch),
        control("context_len", CONTEXTS, label="context", initial=context_len),
        control(
            "kv_heads", KV_HEADS, label="KV heads", initial=kv_heads,
            format=lambda k: f"{k} ({_kind(k)})",
        ),
        control("chip_name", CHIPS, label="chip", initial=_chip_value(chip_name)),
    ]  # fmt: skip
    view = _DecodeView(dpi=72)
    explorer = StaticExplorer(
        controls,
        alt=(
            "Top: log-log plot of FLOPs per HBM byte of a decode step against the batch, for "
            "the weights alone (dashed, rising) and the whole step (solid, flattening), with the "
            "chip's ridge point as a red line and a marker at the chosen batch. Bottom: bars of "
            "the share of a step's bytes that are weights or KV cache, and of the chip's HBM "
            "that the weights and caches occupy (red when they do not fit)."
        ),
        note=lambda **values: state(**values)["status"],
        colab=colab,
        dropdowns=("kv_heads",),
    )

    def curves(context_len: int, kv_heads: int, chip_name: str) -> list[dict[str, Any]]:
        lines = state(BATCHES[0], context_len, kv_heads, chip_name)["curves"]
        return [
            {"series": name, "batch": b, "intensity": y}
            for name, ys in lines.items()
            for b, y in zip(BATCHES, ys, strict=True)
        ]

    def marker(**values: Any) -> dict[str, Any]:
        return state(**values)["marker"]

    def bars(**values: Any) -> list[dict[str, Any]]:
        return state(**values)["bars"]

    def texts(**values: Any) -> list[dict[str, Any]]:
        return state(**values)["texts"]

    series = ["weights only", "whole step", "ridge point"]
    x = alt.X(
        "batch:Q",
        title="batch (sequences, one new token each)",
        # padded by a marker's radius, so the point at batch 1 is drawn whole, not cut in half
        scale=alt.Scale(
            type="log", base=2, domain=[BATCHES[0], BATCHES[-1]], nice=False, padding=8
        ),
        axis=alt.Axis(values=list(BATCHES[::2]), format="d", labelFlush=True),
    )
    y = alt.Y(
        "intensity:Q",
        title="FLOP per HBM byte",
        scale=alt.Scale(type="log", domain=list(_INTENSITY), nice=False),
        axis=alt.Axis(values=[1, 10, 100, 1000], format=",d"),
    )
    top = alt.layer(
        explorer.table("curves", curves, over=("context_len", "kv_heads", "chip_name"))
        .mark_line(clip=True)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "series:N",
                title=None,
                scale=alt.Scale(domain=series, range=["#7f7f7f", "#1f77b4", "#d62728"]),
                legend=alt.Legend(orient="top"),
            ),
            strokeDash=alt.StrokeDash(
                "series:N",
                legend=None,
                scale=alt.Scale(domain=series, range=[[6, 4], [1, 0], [1, 0]]),
            ),
            strokeWidth=alt.StrokeWidth(
                "series:N", legend=None, scale=alt.Scale(domain=series, range=[1.5, 2.5, 1.2])
            ),
        ),
        explorer.table("marker", marker)
        .mark_point(filled=True, size=130, color="#1f77b4", stroke="black", clip=True)
        .encode(x=x, y=y, tooltip=[alt.Tooltip("intensity:Q", title="FLOP/B", format=".3g")]),
    ).properties(height=230, title="decode step on the roofline")
    parts = ["weights", "KV cache", "KV cache (does not fit)"]
    rows_axis = alt.Y(
        "row:N",
        title=None,
        sort=["read per step", "HBM holds"],
        axis=alt.Axis(labelFontSize=12),
    )
    bottom = alt.layer(
        explorer.table("bars", bars)
        .mark_bar(height=22)
        .encode(
            y=rows_axis,
            x=alt.X(
                "x0:Q",
                title="share",
                scale=alt.Scale(domain=[0, 1]),
                # quarters: 0% to 100% all labelled, apart, at a phone's width and a desktop's
                axis=alt.Axis(format="%", values=[0, 0.25, 0.5, 0.75, 1]),
            ),
            x2="x1:Q",
            color=alt.Color(
                "part:N",
                title=None,
                scale=alt.Scale(domain=parts, range=["#7f7f7f", "#ff7f0e", "#d62728"]),
                legend=alt.Legend(orient="bottom"),
            ),
        ),
        explorer.table("texts", texts)
        .mark_text(align="left", baseline="bottom", dy=-12, fontSize=11)
        .encode(y=rows_axis, x=alt.value(2), text="text:N"),
    ).properties(height=110, title="bytes: what a step reads, what HBM holds")
    explorer.chart(
        alt.vconcat(top, bottom, spacing=20)
        .resolve_scale(color="independent")
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer
