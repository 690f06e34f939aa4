"""Section 3.3 explorer: what one transformer layer keeps for its backward pass, per mode.

A transformer layer keeps s·b·h·(34 + 5·a·s/h) bytes of 16-bit activations for its backward
pass (:func:`gpuperf.recompute.layer_activations`, every tensor listed by
:func:`gpuperf.recompute.layer_activation_terms`). :func:`recompute_explorer` lets the reader
choose the sequence length, micro-batch, hidden size, heads, tensor parallelism, sequence
parallelism and recompute mode, and draws, for the three modes side by side, the bytes one GPU
keeps per layer — split into the s·b·h tensors outside the tensor-parallel regions (split only by
sequence parallelism), those tensor parallelism splits, and the attention-score matrices — next
to the FLOPs each mode adds to a training step. :func:`recompute_static` is its twin for the
online book (the same seven controls over a grid of their values, drawn in the browser by
:mod:`gpuperf.vega` from rows read off this view). The widget only wires controls to those
calculators.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import recompute
from ..runtime import require
from ..scrub import control
from ..units import format_bytes
from ..vega import book_altair, book_figure
from .live import Explorer, _control_widget, _new_figure

if TYPE_CHECKING:
    from ..vega import StaticExplorer

__all__ = [
    "HEADS",
    "HIDDEN",
    "MICRO_BATCHES",
    "SEQ_LENS",
    "TENSOR_PARALLEL",
    "recompute_explorer",
    "recompute_static",
]

SEQ_LENS: tuple[int, ...] = (512, 1024, 2048, 4096, 8192, 16384, 32768)
MICRO_BATCHES: tuple[int, ...] = (1, 2, 4, 8, 16)
HIDDEN: tuple[int, ...] = (1024, 2048, 4096, 5120, 8192, 12288)
HEADS: tuple[int, ...] = (8, 16, 32, 40, 64, 96, 128)
TENSOR_PARALLEL: tuple[int, ...] = (1, 2, 4, 8)
#: (label, colour) of the three parts of a bar.
PARTS: tuple[tuple[str, str], ...] = (
    ("10·sbh outside tensor parallelism", "#4c72b0"),
    ("24·sbh split by tensor parallelism", "#8cb0e0"),
    ("attention scores, 5·a·s²·b", "#dd8452"),
)
_MODES = recompute.RECOMPUTE_MODES


def _layer_parts(plan: recompute.LayerActivations) -> tuple[float, float, float]:
    """The kept bytes of ``plan`` split into :data:`PARTS` (they add up to its bytes).

    Sums :func:`gpuperf.recompute.layer_activation_terms` the way
    :func:`gpuperf.recompute.layer_activations` does, grouped for the bars.
    """
    s, b, h, a = plan.seq_len, plan.micro_batch, plan.hidden, plan.heads
    t = plan.tensor_parallel
    parts = [0.0, 0.0, 0.0]
    for term in recompute.layer_activation_terms():
        if plan.mode == "selective" and term.selective:
            continue
        if plan.mode == "full" and not term.layer_input:
            continue
        split = t if (term.tensor_parallel or plan.sequence_parallel) else 1
        parts[0 if not term.tensor_parallel else 1] += term.sbh_bytes * s * b * h / split
        parts[2] += term.as2b_bytes * a * s * s * b / split
    return parts[0], parts[1], parts[2]


def _status(
    plans: dict[str, recompute.LayerActivations],
    mode: str,
    tensor_parallel: int,
    sequence_parallel: bool,
) -> str:
    """The line under the figure: the chosen mode's bytes, saving and extra FLOPs."""
    chosen = plans[mode]
    parallel = f"TP {tensor_parallel}" + (" + SP" if sequence_parallel else "")
    return (
        f"{mode}: {format_bytes(chosen.activation_bytes)} per layer per GPU "
        f"({chosen.bytes_per_sbh:.4g} bytes per s·b·h element, {parallel}), "
        f"{chosen.memory_saving:.3g}× less than keeping everything, for "
        f"+{chosen.compute_overhead:.1%} FLOPs per step"
    )


def _bar_edges(plan: recompute.LayerActivations) -> list[float]:
    """Right edges (GB) of one mode's stacked bars, as :class:`_RecomputeView` places them
    (``x = left / 1e9``, ``width = part / 1e9``)."""
    edges, left = [], 0.0
    for part in _layer_parts(plan):
        edges.append(left / 1e9 + part / 1e9)
        left += part
    return edges


class _RecomputeView:
    """Stacked bars of the bytes kept per layer and GPU, and the FLOP overhead, per mode."""

    def __init__(self, *, figsize: tuple[float, float] = (7.4, 3.2), dpi: int = 80) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        self.ax_mem, self.ax_flops = figure.subplots(
            1, 2, gridspec_kw={"width_ratios": [2.3, 1]}, sharey=True
        )
        figure.subplots_adjust(left=0.12, right=0.97, top=0.8, bottom=0.17, wspace=0.08)
        rows = list(range(len(_MODES)))
        self.bars: list[Any] = []
        left = [0.0] * len(_MODES)
        for label, colour in PARTS:
            self.bars.append(
                self.ax_mem.barh(rows, [1.0] * len(_MODES), left=left, color=colour, label=label)
            )
        self.flop_bars = self.ax_flops.barh(rows, [0.0] * len(_MODES), color="#55a868")
        self.ax_mem.set_yticks(rows, [f"{m}" for m in _MODES])
        self.ax_mem.invert_yaxis()
        self.ax_mem.set_xlabel("bytes kept per layer, per GPU (GB)")
        self.ax_flops.set_xlabel("extra FLOPs per step (%)")
        self.ax_flops.set_xlim(0, 40)
        self.ax_mem.legend(
            loc="lower left", bbox_to_anchor=(0.0, 1.02), ncol=2, fontsize=8, frameon=False
        )
        for ax in (self.ax_mem, self.ax_flops):
            ax.grid(axis="x", alpha=0.3)
        self.animated = [
            *(rect for group in self.bars for rect in group),
            *self.flop_bars,
        ]
        # the bytes axis follows the widest bar: redrawn as a layer, not the whole figure
        self.rescaling = [self.ax_mem.xaxis]
        self.last: dict[str, recompute.LayerActivations] = {}

    def update(
        self,
        seq_len: int,
        micro_batch: int,
        hidden: int,
        heads: int,
        tensor_parallel: int,
        sequence_parallel: bool,
        mode: str,
    ) -> str:
        try:
            plans = {
                m: recompute.layer_activations(
                    seq_len, micro_batch, hidden, heads, tensor_parallel, sequence_parallel, m
                )
                for m in _MODES
            }
        except ValueError as error:
            for rect in self.animated:
                rect.set_width(0.0)
            self.last = {}
            return f"<b>No such layer:</b> {error}"
        self.last = plans
        widest = 0.0
        for row, m in enumerate(_MODES):
            left = 0.0
            alpha = 1.0 if m == mode else 0.35
            for group, part in zip(self.bars, _layer_parts(plans[m]), strict=True):
                rect = group[row]
                rect.set_x(left / 1e9)
                rect.set_width(part / 1e9)
                rect.set_alpha(alpha)
                left += part
            widest = max(widest, left)
            self.flop_bars[row].set_width(100 * plans[m].compute_overhead)
            self.flop_bars[row].set_alpha(alpha)
        self.ax_mem.set_xlim(0, 1.08 * widest / 1e9)
        return _status(plans, mode, tensor_parallel, sequence_parallel)

    def render(self, **values: Any) -> tuple[Any, str]:
        return self.figure, self.update(**values)


def recompute_explorer(
    seq_len: int = 2048,
    micro_batch: int = 1,
    hidden: int = 4096,
    heads: int = 32,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    mode: str = "selective",
) -> Explorer:
    """Layer shape × parallelism × recompute mode → bytes kept per layer and FLOP overhead."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    controls = {
        "seq_len": _control_widget(
            widgets.SelectionSlider, "seq_len", options=[(f"{s:,}", s) for s in SEQ_LENS],
            value=seq_len, description="seq len s",
        ),
        "micro_batch": _control_widget(
            widgets.Dropdown, "micro_batch", options=list(MICRO_BATCHES), value=micro_batch,
            description="micro-batch b",
        ),
        "hidden": _control_widget(
            widgets.Dropdown, "hidden", options=list(HIDDEN), value=hidden,
            description="hidden h",
        ),
        "heads": _control_widget(
            widgets.Dropdown, "heads", options=list(HEADS), value=heads, description="heads a"
        ),
        "tensor_parallel": _control_widget(
            widgets.Dropdown, "tensor_parallel", options=list(TENSOR_PARALLEL),
            value=tensor_parallel, description="TP t",
        ),
        "sequence_parallel": _control_widget(
            widgets.Dropdown, "sequence_parallel", options=[("off", False), ("on", True)],
            value=sequence_parallel, description="SP",
        ),
        "mode": _control_widget(
            widgets.Dropdown, "mode", options=list(_MODES), value=mode, description="recompute"
        ),
    }  # fmt: skip
    view = _RecomputeView()
    return Explorer.for_view(
        view, controls, title="Activation memory of one transformer layer, by recompute mode"
    )


# --- the online book's twin: every control, drawn in the browser -----------------------------

#: The static figure's grids: every sequence length, tensor-parallel degree, sequence-parallel
#: setting and mode of the live explorer, but three of its micro-batches (everything grows
#: linearly with b), and the hidden sizes and head counts that every combination divides (so no
#: choice is "no such layer"), so the page stays light (about 12,600 combinations).
STATIC_SEQ_LENS: tuple[int, ...] = SEQ_LENS
STATIC_MICRO_BATCHES: tuple[int, ...] = (1, 4, 16)
STATIC_HIDDEN: tuple[int, ...] = (1024, 2048, 4096, 8192, 12288)
STATIC_HEADS: tuple[int, ...] = (8, 16, 32, 64, 128)
STATIC_TENSOR_PARALLEL: tuple[int, ...] = TENSOR_PARALLEL
#: Range of the extra-FLOPs axis (percent), fixed as in the live view (its ``set_xlim``).
FLOP_RANGE: tuple[float, float] = (0.0, 40.0)


@book_figure
def recompute_static(
    seq_len: int = 2048,
    micro_batch: int = 1,
    hidden: int = 4096,
    heads: int = 32,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    mode: str = "selective",
    *,
    colab: str = "",
) -> StaticExplorer:
    """Static twin of :func:`recompute_explorer` for the online book: the same seven controls,
    over the grids :data:`STATIC_SEQ_LENS` … :data:`STATIC_TENSOR_PARALLEL` (SP off/on, every
    mode), drawn in the browser from rows computed here (see :mod:`gpuperf.vega`).

    Every row is what :class:`_RecomputeView` draws for those controls (the same bar edges,
    :func:`_bar_edges`, and FLOP overheads, from one set of plans per layer: 4,200 layers would
    take seconds of matplotlib updates); the sentence under the figure is the live view's status
    line. The arguments are the initial values."""
    from ..vega import StaticExplorer

    alt = book_altair()
    controls = [
        control("seq_len", STATIC_SEQ_LENS, label="seq len s", initial=seq_len,
                format=lambda s: f"{s:,}"),
        control("micro_batch", STATIC_MICRO_BATCHES, label="micro-batch b", initial=micro_batch),
        control("hidden", STATIC_HIDDEN, label="hidden h", initial=hidden),
        control("heads", STATIC_HEADS, label="heads a", initial=heads),
        control("tensor_parallel", STATIC_TENSOR_PARALLEL, label="TP t",
                initial=tensor_parallel),
        control("sequence_parallel", (False, True), label="SP", initial=sequence_parallel,
                format=lambda on: "on" if on else "off"),
        control("mode", _MODES, label="recompute", initial=mode),
    ]  # fmt: skip

    shape = ("seq_len", "micro_batch", "hidden", "heads", "tensor_parallel", "sequence_parallel")
    layers: dict[tuple[Any, ...], dict[str, recompute.LayerActivations] | None] = {}

    def plans(*layer: Any) -> dict[str, recompute.LayerActivations] | None:
        """Every mode's plan for one layer, computed once (None: no such layer)."""
        if layer not in layers:
            try:
                layers[layer] = {m: recompute.layer_activations(*layer, m) for m in _MODES}
            except ValueError:
                layers[layer] = None
        return layers[layer]

    def status(**values: Any) -> str:
        shape_values = [values[name] for name in shape]
        found = plans(*shape_values)
        if found is None:  # the live view's message, word for word
            line = _RecomputeView(dpi=72).update(**values)
        else:
            line = _status(found, values["mode"], *shape_values[-2:])
        return line.replace("<b>", "").replace("</b>", "")

    explorer = StaticExplorer(
        controls,
        alt=(
            "Top: for no, selective and full recomputation, horizontal stacked bars of the "
            "bytes one GPU keeps per transformer layer, split into the 10·sbh tensors outside "
            "tensor parallelism, the 24·sbh tensor parallelism splits, and the attention "
            "scores; the chosen mode is drawn solid, the others faded. Bottom: the extra FLOPs "
            "per training step of each mode, in percent."
        ),
        note=status,
        colab=colab,
        dropdowns=("micro_batch", "hidden", "heads", "tensor_parallel", "sequence_parallel"),
    )

    def memory(**values: Any) -> list[dict[str, Any]]:
        found = plans(*(values[name] for name in shape))
        if found is None:  # no such layer (not on this grid): the live view draws no bars
            return []
        rows = []
        for m in _MODES:
            edges = _bar_edges(found[m])
            rows.append({"mode": m, **{f"gb{k + 1}": float(e) for k, e in enumerate(edges)}})
        return rows

    def overhead(seq_len: int, hidden: int) -> list[dict[str, Any]]:
        # recomputed FLOPs over a step's: b, a, t and SP cancel (gpuperf.recompute), so any
        # valid layer of this s and h gives the bars
        heads = min(a for a in STATIC_HEADS if hidden % a == 0)
        found = plans(seq_len, 1, hidden, heads, 1, False)
        return [{"mode": m, "flops": float(100 * found[m].compute_overhead)} for m in _MODES]

    kept = explorer.table("memory", memory, over=shape)
    extra = explorer.table("flops", overhead, over=("seq_len", "hidden"))
    chosen = explorer.params["mode"].name  # the mode control's signal: an index into _MODES
    y = alt.Y("mode:N", title=None, sort=list(_MODES), axis=alt.Axis(labelFontSize=12))
    opacity = alt.condition(
        " || ".join(f"(datum.mode == '{m}' && {chosen} == {i})" for i, m in enumerate(_MODES)),
        alt.value(1.0),
        alt.value(0.35),
    )
    colours = alt.Scale(domain=[label for label, _ in PARTS], range=[c for _, c in PARTS])
    # about five ticks at any width: labels an em apart on a phone, not eleven on a desktop
    gb = alt.Axis(title="bytes kept per layer, per GPU (GB)", tickCount=5)
    layers = []
    for k, (label, _) in enumerate(PARTS):
        encoding = {
            "x": alt.X(f"gb{k + 1}:Q", axis=gb, scale=alt.Scale(zero=True)),
            "y": y,
            "color": alt.Color(
                "part:N", scale=colours, title=None,
                legend=alt.Legend(orient="top", columns=1, labelLimit=320),
            ),
            "opacity": opacity,
        }  # fmt: skip
        if k:
            encoding["x"] = alt.X(f"gb{k}:Q", axis=gb)
            encoding["x2"] = f"gb{k + 1}:Q"
        part = kept.transform_calculate(part=f"'{label}'")
        layers.append(part.mark_bar(height=22).encode(**encoding))
    bars = alt.layer(*layers).properties(height=110, title="activation memory by mode")
    flops = (
        extra.mark_bar(height=22, color="#55a868")
        .encode(
            x=alt.X(
                "flops:Q",
                title="extra FLOPs per step (%)",
                scale=alt.Scale(domain=list(FLOP_RANGE)),
                # every 10 %: each label apart at a phone's width, none left out on a desktop
                axis=alt.Axis(values=list(range(0, int(FLOP_RANGE[1]) + 1, 10))),
            ),
            y=y,
            opacity=opacity,
            tooltip=["mode:N", alt.Tooltip("flops:Q", title="extra FLOPs (%)", format=".3g")],
        )
        .properties(height=110, title="compute added by recomputation")
    )
    explorer.chart(
        alt.vconcat(bars, flops, spacing=18)
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer
