"""Chapters 1 and 2 explorers: hardware explorer, MFU calculator, roofline explorer.

Each explorer is a *view* (a figure plus an ``update(**values)`` that moves its artists from
calculator results and returns a sentence) wired to ipywidgets controls by
:class:`~gpuperf.widgets.live.Explorer`. Each has a client-side twin for the online book
(:func:`hardware_static`, :func:`mfu_static`, :func:`gpuperf.widgets.static.roofline_static`:
:class:`gpuperf.vega.StaticExplorer` figures whose rows are read from the same views after
``update``), so the live widget and the book's figure cannot disagree. No formula lives here: the
numbers come from :mod:`gpuperf.hardware`, :mod:`gpuperf.cost` and :mod:`gpuperf.roofline`, the
drawing from :mod:`gpuperf.plots`.

Controls are plain ``Dropdown`` / ``SelectionSlider`` / ``FloatLogSlider`` / ``ToggleButtons``
with ``(label, value)`` options, so everything works on ipywidgets 7.7 (Colab) and 8.x.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from .. import cost, plots
from ..hardware import chip
from ..measurements import find, gemm_range
from ..roofline import critical_batch_size, time_bounds
from ..runtime import require
from ..scrub import control
from ..units import PRECISIONS, format_bandwidth, format_bytes, format_flops
from ..vega import book_altair, book_figure
from .live import Explorer, LiveFigure, _chip_value, _control_widget, _new_figure

__all__ = [
    "EXPLORER_CHIPS",
    "OPERATIONS",
    "hardware_explorer",
    "hardware_static",
    "mfu_calculator",
    "mfu_static",
    "roofline_explorer",
]

#: Figure size shared by the three explorers (inches), and the live widgets' resolution: at
#: 72 dpi a frame is ~630 × 250 pixels, small enough to encode and send in a few ms.
FIGSIZE = (8.8, 3.5)
LIVE_DPI = 72
#: Token batches (or sequence lengths) the sliders offer: powers of two.
TOKENS = tuple(2**i for i in range(0, 17))
#: Model widths D = F offered for matmuls (and D / 128 heads for attention).
WIDTHS = (512, 1024, 2048, 4096, 8192, 16384)
#: Head dimension of the attention operation.
HEAD_DIM = 128
OPERATIONS = ("matmul", "elementwise", "attention")
#: Model sizes (parameters) the MFU calculator offers.
MODEL_SIZES = (
    ("1.7B", 1.7e9),
    ("3B", 3e9),
    ("8B", 8e9),
    ("70B", 70e9),
    ("405B", 405e9),
)


def _widgets() -> Any:
    return require("ipywidgets", "pip install ipywidgets")


def _status(sentence: str) -> str:
    """The view's sentence as HTML for the status line, with the verdict in bold."""
    text = html.escape(sentence)
    for word in ("memory-bound", "compute-bound"):
        text = text.replace(f"→ {word}", f"→ <b>{word}</b>")
    return text


#: The chips the explorers offer: the rows a reader compares, from the T4 to the 2026 parts whose
#: choice changes the picture — GB200 (NVL72), B300 and GB300 (Blackwell Ultra: more fp4, far less
#: int8 and fp64), AMD's MI300X and MI355X — and the TPUs. The table's other rows (PCIe and NVL
#: variants, L40S, GH200, RTX 5090, MI325X) are there so a measurement finds its own roof
#: (:func:`gpuperf.bench.this_gpu`); they add no new ridge to compare, and every row offered
#: multiplies the data of the book's client-side twins.
EXPLORER_CHIPS: tuple[str, ...] = (
    "T4", "V100", "A10G", "L4", "A100-40GB", "A100-80GB", "H100-SXM", "H100-PCIe", "H200",
    "B200", "GB200", "B300", "GB300", "RTX-4090", "MI300X", "MI355X", "TPU-v5e", "TPU-v5p",
    "TPU-v6e",
)  # fmt: skip


def _chip_options(names: Sequence[str] | None = None) -> list[tuple[str, str]]:
    selected = [chip(n) for n in (names or EXPLORER_CHIPS)]
    return [(c.name, c.name) for c in selected]


# --- chapter 1: hardware explorer -------------------------------------------------------------


class _HardwareView:
    """Chip × precision → peak, bandwidth, ridge point and that chip's roofline.

    ``annotate=False`` (the live widget) keeps text out of the figure: the status line under
    it carries the numbers, and each step stays within the latency budget.
    """

    def __init__(self, *, annotate: bool = True, dpi: int = LIVE_DPI) -> None:
        self.figure = _new_figure(FIGSIZE, dpi=dpi)
        left, right = self.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.5, 1]})
        self.figure.subplots_adjust(left=0.09, right=0.98, bottom=0.14, top=0.97, wspace=0.28)
        self.roofline = plots._RooflinePanel(left, intensity_range=(0.1, 1e4), annotate=annotate)
        self.peaks = plots._PeakBarsPanel(right, annotate=annotate)
        self.ridge = None

    @property
    def animated(self) -> list[Any]:
        return [*self.roofline.artists, *self.peaks.artists]

    def update(self, chip_name: str, precision: str) -> str:
        the_chip = chip(chip_name)
        self.peaks.set_chip(the_chip, precision)
        if precision not in the_chip.precisions:
            self.ridge = None
            self.roofline.clear_roof(f"{the_chip.name} has no {precision} rate")
            return (
                f"{the_chip.name} has no {precision} rate in the table; it has "
                f"{', '.join(the_chip.precisions)}."
            )
        self.ridge = self.roofline.set_roof(the_chip, precision)
        peak = the_chip.peak_flops(precision)
        self.roofline.set_point(self.ridge, peak)
        arch = f", {the_chip.sm_count} SMs, {the_chip.sm_arch}" if the_chip.is_gpu else ""
        return (
            f"{the_chip.name} ({the_chip.architecture}{arch}) · {precision}: dense peak "
            f"{format_flops(peak)}, {_memory_in_words(the_chip)} at "
            f"{format_bandwidth(the_chip.hbm_bandwidth)}. Ridge point {self.ridge:.3g} FLOP/byte: "
            f"an operation needs at least that many FLOPs per byte it moves to be compute-bound."
        )


def _memory_in_words(the_chip: Any) -> str:
    """'80 GB HBM3 (81,559 MiB as nvidia-smi reports it)': the box's figure and the device's."""
    marketed = the_chip.hbm_marketed_bytes
    box = f"{format_bytes(marketed)} {the_chip.memory_type}" if marketed else the_chip.memory_type
    if the_chip.hbm_provenance.startswith("nvidia-smi"):
        return f"{box} ({the_chip.hbm_mib:,.0f} MiB as nvidia-smi reports it)"
    if marketed and the_chip.hbm_bytes != marketed:
        listed = format_bytes(the_chip.hbm_bytes, binary=True)
        return f"{box} ({listed} as the vendor's table lists it)"
    return box


def hardware_explorer(chip_name: str = "H100-SXM", precision: str = "bf16") -> Explorer:
    """Live widget: pick a chip and a precision, see its peak, bandwidth, ridge and roofline."""
    widgets = _widgets()
    chip_options = _chip_options()
    precision_options = [(p, p) for p in PRECISIONS]
    controls = {
        "chip_name": _control_widget(
            widgets.Dropdown, "chip_name", options=chip_options, value=_chip_value(chip_name),
            description="chip",
        ),
        "precision": _control_widget(
            widgets.Dropdown, "precision", options=precision_options, value=precision,
            description="precision",
        ),
    }  # fmt: skip
    view = _HardwareView(annotate=False)
    explorer = Explorer(
        controls,
        lambda **values: _status(view.update(**values)),
        LiveFigure(view.figure, view.animated),
        title="Hardware explorer",
    )
    explorer.view = view
    return explorer


# --- chapter 1: MFU calculator ----------------------------------------------------------------

#: Published training MFUs drawn as reference lines: (label, measurement quantity).
MFU_REFERENCES = (
    ("Llama 3 405B", "Llama 3 405B training MFU"),
    ("DeepSeek-V3", "DeepSeek-V3 training MFU"),
    ("SmolLM3", "SmolLM3 training MFU"),
    ("PaLM 540B", "PaLM 540B training MFU"),
)


class _MFUView:
    """Tokens/s per chip and model size → model FLOP/s per chip → MFU against the dense peak."""

    def __init__(self, *, annotate: bool = True, dpi: int = LIVE_DPI) -> None:
        self.figure = _new_figure((FIGSIZE[0], 2.9), dpi=dpi)
        self.annotate = annotate
        ax = self.figure.subplots()
        self.figure.subplots_adjust(left=0.05, right=0.97, bottom=0.2, top=0.8)
        self.ax = ax
        ax.set_xlim(0, 1.0)
        ax.set_ylim(-0.8, 0.8)
        ax.set_yticks([])
        ax.set_xticks([i / 10 for i in range(11)], [f"{i * 10}%" for i in range(11)])
        ax.set_xlabel("model FLOPs utilisation (achieved model FLOP/s ÷ dense peak)")
        h100 = chip("H100-SXM")
        low, high = (v / h100.peak_flops("bf16") for v in gemm_range("bf16"))
        ax.axvspan(low, high, color="tab:green", alpha=0.18, lw=0)
        ax.text((low + high) / 2, 0.72, "H100 BF16 matmul\nalone (measured)", ha="center",
                va="top", fontsize=7, color="darkgreen")  # fmt: skip
        for i, (label, quantity) in enumerate(MFU_REFERENCES):
            value = find(quantity).value
            ax.axvline(value, color="dimgray", lw=1, ls="--")
            ax.text(value, -0.5 - 0.13 * (i % 2), f" {label}", fontsize=7, color="dimgray")
        (self.bar,) = ax.barh([0], [0.0], height=0.45, color="tab:blue")
        self.label = ax.text(0.0, 0.0, "", va="center", fontsize=9, fontweight="bold")
        self.title = ax.text(0.0, 1.06, "", transform=ax.transAxes, fontsize=9)
        self.mfu = None

    @property
    def animated(self) -> list[Any]:
        # The short percentage label stays even in the live widget (a few glyphs are cheap).
        return [self.bar, self.label, self.title] if self.annotate else [self.bar, self.label]

    def update(self, chip_name: str, n_params: float, tokens_per_s: float) -> str:
        the_chip = chip(chip_name)
        result = cost.training_mfu(tokens_per_s, n_params, the_chip, "bf16")
        self.mfu = result.mfu
        shown = min(result.mfu, 1.0)
        self.bar.set_width(shown)
        self.bar.set_color("tab:red" if result.mfu > 1 else "tab:blue")
        self.label.set_x(min(shown + 0.01, 0.85))
        self.label.set_text(f"{result.mfu:.1%}")
        if self.annotate:
            self.title.set_text(
                f"{n_params / 1e9:g}B parameters, {tokens_per_s:,.0f} tokens/s per {the_chip.name}"
            )
        text = (
            f"{tokens_per_s:,.0f} tokens/s × 6 × {n_params / 1e9:g}B parameters = "
            f"{format_flops(result.achieved_flops_per_s)} of model FLOPs per chip, against a "
            f"dense BF16 peak of {format_flops(result.peak_flops_per_s)}: MFU {result.mfu:.1%}."
        )
        if result.mfu > 1:
            text += " Above 100 %: impossible — check the parameter count and the token rate."
        return text


def _bf16_chip_options() -> list[tuple[str, str]]:
    return [(name, value) for name, value in _chip_options() if "bf16" in chip(value).precisions]


def mfu_calculator(
    chip_name: str = "H100-SXM", n_params: float = 405e9, tokens_per_s: float = 170.0
) -> Explorer:
    """Live widget: model size and training throughput per chip → MFU, next to published runs."""
    widgets = _widgets()
    controls = {
        "chip_name": _control_widget(
            widgets.Dropdown,
            "chip_name",
            options=_bf16_chip_options(),
            value=_chip_value(chip_name),
            description="chip",
        ),
        "n_params": _control_widget(
            widgets.SelectionSlider,
            "n_params",
            options=[(label, value) for label, value in MODEL_SIZES],
            value=n_params,
            description="model",
        ),
        "tokens_per_s": _control_widget(
            widgets.FloatLogSlider,
            "tokens_per_s",
            value=tokens_per_s,
            base=10,
            min=1,
            max=5.5,
            step=0.05,
            description="tokens/s/chip",
            readout_format=".3g",
        ),
    }
    view = _MFUView(annotate=False)
    explorer = Explorer(
        controls,
        lambda **values: _status(view.update(**values)),
        LiveFigure(view.figure, view.animated),
        title="MFU calculator",
    )
    explorer.view = view
    return explorer


# --- chapter 2: roofline explorer ------------------------------------------------------------


def _operation(op: str, tokens: int, width: int, precision: str) -> cost.OpCost:
    """The cost model behind each choice of the roofline explorer.

    * ``matmul``: X[B, D] · W[D, F] with B = ``tokens`` and D = F = ``width``;
    * ``elementwise``: ReLU over the B × D activations;
    * ``attention``: one sequence of N = ``tokens``, D / 128 heads of dimension 128, the
      compulsory traffic of a fused (FlashAttention) kernel.
    """
    if op == "matmul":
        return cost.matmul(tokens, width, width, precision)
    if op == "elementwise":
        return cost.elementwise(tokens * width, precision, name="ReLU")
    if op == "attention":
        return cost.attention(1, max(width // HEAD_DIM, 1), tokens, HEAD_DIM, precision)
    raise ValueError(f"op={op!r} is not one of {', '.join(OPERATIONS)}")


def _describe(op: str, tokens: int, width: int) -> str:
    if op == "matmul":
        return f"matmul X[{tokens}, {width}]·W[{width}, {width}]"
    if op == "elementwise":
        return f"ReLU over {tokens}×{width}"
    return f"attention N={tokens}, {max(width // HEAD_DIM, 1)} heads × d={HEAD_DIM}"


class _RooflineView:
    """Chip × precision × operation → the operation's point on the roofline and its time bars."""

    def __init__(self, *, annotate: bool = True, dpi: int = LIVE_DPI) -> None:
        self.figure = _new_figure(FIGSIZE, dpi=dpi)
        left, right = self.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.55, 1]})
        self.figure.subplots_adjust(left=0.09, right=0.97, bottom=0.14, top=0.91, wspace=0.42)
        self.roofline = plots._RooflinePanel(
            left, intensity_range=(0.03, 3e4), flops_range=(1e9, 3e16), annotate=annotate
        )
        self.bars = plots._TimeBarsPanel(right, annotate=annotate)
        self.bounds = None

    @property
    def animated(self) -> list[Any]:
        return [*self.roofline.artists, *self.bars.artists]

    def update(self, chip_name: str, precision: str, op: str, tokens: int, width: int) -> str:
        the_chip = chip(chip_name)
        if precision not in the_chip.precisions:
            self.bounds = None
            message = f"{the_chip.name} has no {precision} rate"
            self.roofline.clear_roof(message)
            self.bars.clear(message)
            return f"{message} in the table; it has {', '.join(the_chip.precisions)}."
        the_op = _operation(op, tokens, width, precision)
        bounds = time_bounds(the_op, the_chip, precision)
        self.bounds = bounds
        self.roofline.set_roof(the_chip, precision)
        self.roofline.set_point(
            bounds.intensity, bounds.attainable_flops_per_s, f"{bounds.intensity:.3g} FLOP/B"
        )
        self.bars.set_bounds(bounds)
        text = (
            f"{_describe(op, tokens, width)} in {precision} on the {the_chip.name}: "
            f"{format_flops(the_op.flops)[:-2]}, {format_bytes(the_op.bytes)} moved, intensity "
            f"{bounds.intensity:.3g} FLOP/byte vs ridge point {bounds.ridge_point:.3g} → "
            f"{plots._bound_in_words(bounds)}; at best "
            f"{format_flops(bounds.attainable_flops_per_s)}."
        )
        if op == "matmul":
            critical = critical_batch_size(the_chip, precision, d=width, f=width)
            text += (
                f" Compute-bound once B > {critical:.0f}."
                if critical != float("inf")
                else " Never compute-bound at this width."
            )
        elif op == "elementwise":
            text += " " + _non_tensor_in_words(the_chip, precision, bounds.intensity)
        return text


def _non_tensor_in_words(the_chip: Any, precision: str, intensity: float) -> str:
    """An elementwise op runs on the CUDA cores, not the tensor cores drawn: their roof."""
    if precision not in the_chip.vector_precisions:
        return (
            f"(ReLU runs on the CUDA cores, not the tensor cores drawn; the table has no sourced "
            f"non-tensor {precision} rate for the {the_chip.name}.)"
        )
    peak = the_chip.peak_flops(precision, tensor_cores=False)
    ridge = the_chip.ridge_point(precision, tensor_cores=False)
    side = "memory-bound" if intensity < ridge else "compute-bound"
    return (
        f"(ReLU runs on the CUDA cores: their {precision} peak is {format_flops(peak)}, ridge "
        f"{ridge:.3g} FLOP/byte, so it is {side} against that roof too.)"
    )


def roofline_explorer(
    chip_name: str = "H100-SXM",
    precision: str = "bf16",
    op: str = "matmul",
    tokens: int = 64,
    width: int = 8192,
) -> Explorer:
    """Live widget: chip × precision × operation; the point moves on the roofline as B moves."""
    widgets = _widgets()
    controls = {
        "chip_name": _control_widget(
            widgets.Dropdown, "chip_name", options=_chip_options(), value=_chip_value(chip_name),
            description="chip",
        ),
        "precision": _control_widget(
            widgets.Dropdown, "precision", options=[(p, p) for p in PRECISIONS],
            value=precision, description="precision",
        ),
        "op": _control_widget(
            widgets.ToggleButtons, "op", options=[(o, o) for o in OPERATIONS], value=op
        ),
        "tokens": _control_widget(
            widgets.SelectionSlider, "tokens", options=[(str(t), t) for t in TOKENS],
            value=tokens, description="tokens B / N",
        ),
        "width": _control_widget(
            widgets.SelectionSlider, "width", options=[(str(w), w) for w in WIDTHS],
            value=width, description="D = F",
        ),
    }  # fmt: skip
    view = _RooflineView(annotate=False)
    explorer = Explorer(
        controls,
        lambda **values: _status(view.update(**values)),
        LiveFigure(view.figure, view.animated),
        title="Roofline explorer",
    )
    explorer.widget.children = (
        *explorer.widget.children[:1],
        widgets.HBox(
            [controls["chip_name"], controls["precision"], controls["op"]],
            layout=widgets.Layout(flex_flow="row wrap"),
        ),
        widgets.HBox(
            [controls["tokens"], controls["width"]], layout=widgets.Layout(flex_flow="row wrap")
        ),
        *explorer.widget.children[2:],
    )
    explorer.view = view
    return explorer


# --- chapter 1: the online book's twins (Vega-Lite, drawn in the browser) ----------------------

#: Axis ranges of :class:`_HardwareView`'s panels (fixed in the live view, so they are here too).
HARDWARE_INTENSITY_RANGE = (0.1, 1e4)
HARDWARE_FLOPS_RANGE = (1e9, 3e16)
PEAK_FLOPS_RANGE = (1e10, 3e17)


@book_figure
def hardware_static(
    chip_name: str = "H100-SXM", precision: str = "bf16", *, colab: str = ""
) -> Any:
    """Static twin of :func:`hardware_explorer` (a :class:`gpuperf.vega.StaticExplorer`): every
    chip × every precision of the table, as in the live explorer. The roof, ridge and peak bars
    are read from a :class:`_HardwareView` after ``update``; the sentence under the figure is the
    live view's."""
    from ..vega import StaticExplorer

    alt = book_altair()
    view = _HardwareView(annotate=False)
    names = [value for _, value in _chip_options()]
    explorer = StaticExplorer(
        [
            control("chip_name", names, label="chip", initial=chip(chip_name).name),
            control("precision", PRECISIONS, label="precision", initial=precision),
        ],
        alt=(
            "Log-log roofline of the chosen chip and precision (attainable FLOP/s against "
            "arithmetic intensity) with the ridge point marked where the sloped memory roof "
            "meets the flat compute roof; below, the chip's dense peak FLOP/s at every "
            "precision as bars, the chosen precision in red."
        ),
        note=lambda chip_name, precision: view.update(chip_name, precision),
        colab=colab,
    )

    def roof(chip_name: str, precision: str) -> list[dict[str, Any]]:
        view.update(chip_name, precision)
        xs, ys = view.roofline.roof.get_data()
        return [{"x": float(x), "y": float(y)} for x, y in zip(xs, ys, strict=True)]

    def regions(chip_name: str, precision: str) -> list[dict[str, Any]]:
        view.update(chip_name, precision)
        rows = []
        for what, patch in (
            ("memory-bound", view.roofline.memory_region),
            ("compute-bound", view.roofline.compute_region),
        ):
            x0, x1 = patch.get_x(), patch.get_x() + patch.get_width()
            if x1 > x0:
                rows.append({"what": what, "x0": float(x0), "x1": float(x1)})
        return rows

    def ridge(chip_name: str, precision: str) -> list[dict[str, Any]]:
        view.update(chip_name, precision)
        xs, ys = view.roofline.point.get_data()
        if not len(xs):
            the_chip = chip(chip_name)
            return [{"text": f"{the_chip.name} has no {precision} rate in the table"}]
        return [
            {
                "x": float(xs[0]),
                "y": float(ys[0]),
                "floor": HARDWARE_FLOPS_RANGE[0],
                "label": f"ridge {view.ridge:,.0f} FLOP/B"
                if view.ridge >= 10
                else f"ridge {view.ridge:.2g} FLOP/B",
                "text": "",
            }
        ]

    def peaks(chip_name: str, precision: str) -> list[dict[str, Any]]:
        view.update(chip_name, precision)
        panel = view.peaks
        rows = []
        for order, (name, bar) in enumerate(zip(panel.precisions, panel.bars, strict=True)):
            height = bar.get_height()
            rows.append(
                {
                    "precision": name,
                    "order": order,
                    "peak": float(panel.floor + height) if height > 0 else None,
                    "label": format_flops(panel.floor + height) if height > 0 else "–",
                    "floor": panel.floor,
                    "selected": name == precision,
                }
            )
        return rows

    x_scale = alt.Scale(type="log", domain=list(HARDWARE_INTENSITY_RANGE), nice=False)
    x_title = "arithmetic intensity (FLOP/byte)"
    x = alt.X(
        "x:Q", title=x_title, scale=x_scale, axis=alt.Axis(values=[10.0**k for k in range(-1, 5)])
    )
    y_scale = alt.Scale(type="log", domain=list(HARDWARE_FLOPS_RANGE), nice=False)
    y_title = "attainable FLOP/s"
    y = alt.Y(
        "y:Q",
        title=y_title,
        scale=y_scale,
        axis=alt.Axis(format="~s", values=[10.0**k for k in range(9, 17)]),
    )
    ridge_chart = explorer.table("ridge", ridge)
    with_roof = ridge_chart.transform_filter("isValid(datum.x)")
    roofline = alt.layer(
        explorer.table("regions", regions)
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
        explorer.table("roof", roof).mark_line(color="black", strokeWidth=2.2).encode(x=x, y=y),
        with_roof.mark_rule(color="dimgray", strokeDash=[2, 3]).encode(
            x=x, y=alt.Y("floor:Q", scale=y_scale, title=y_title), y2="y:Q"
        ),
        with_roof.mark_point(filled=True, size=90, color="#d62728", stroke="black").encode(
            x=x, y=y, tooltip=["label:N"]
        ),
        with_roof.mark_text(align="right", baseline="bottom", dx=-6, dy=-6, fontSize=12).encode(
            x=x, y=y, text="label:N"
        ),
        ridge_chart.mark_text(fontSize=13, color="#444", align="left").encode(
            x=alt.value(10), y=alt.value(20), text="text:N"
        ),
    ).properties(height=240, width=420)
    peak_chart = explorer.table("peaks", peaks)
    # horizontal bars: each value label sits right of its bar, legible at a phone's width
    bar_y = alt.Y("precision:N", title=None, sort=alt.EncodingSortField("order"))
    decades = [10.0**k for k in range(10, 18)]
    peak_scale = alt.Scale(type="log", domain=list(PEAK_FLOPS_RANGE), nice=False)
    peak_axis = alt.Axis(format="~s", values=decades)
    bars = alt.layer(
        peak_chart.transform_filter("isValid(datum.peak)")
        .mark_bar(height=14)
        .encode(
            y=bar_y,
            x=alt.X("peak:Q", title="dense peak FLOP/s", scale=peak_scale, axis=peak_axis),
            x2="floor:Q",
            color=alt.Color(
                "selected:N",
                legend=None,
                scale=alt.Scale(domain=[True, False], range=["#d62728", "#b0c4de"]),
            ),
            tooltip=["precision:N", "label:N"],
        ),
        peak_chart.transform_calculate(
            label_x=f"isValid(datum.peak) ? datum.peak : {PEAK_FLOPS_RANGE[0]}"
        )
        .mark_text(align="left", baseline="middle", dx=4, fontSize=11)
        .encode(y=bar_y, x=alt.X("label_x:Q", scale=peak_scale), text="label:N"),
    ).properties(height=alt.Step(20), width=420)
    explorer.chart(
        alt.vconcat(roofline, bars, spacing=24)
        .resolve_scale(color="independent", x="independent", y="independent")
        .configure_axis(labelFontSize=11, titleFontSize=12)
    )
    return explorer


#: The static MFU calculator's tokens/s per chip: about twelve values a decade from 10 to
#: 300,000 (the live slider's range, 10 to 10^5.5, in steps of 10^0.05).
MFU_TOKENS_PER_S: tuple[float, ...] = tuple(
    round(m * 10**e)
    for e in range(1, 6)
    for m in (1, 1.2, 1.5, 1.7, 2, 2.5, 3, 4, 5, 6, 7, 8.5)
    if m * 10**e <= 10**5.5
)


@book_figure
def mfu_static(
    chip_name: str = "H100-SXM",
    n_params: float = 405e9,
    tokens_per_s: float = 170,
    *,
    colab: str = "",
) -> Any:
    """Static twin of :func:`mfu_calculator` (a :class:`gpuperf.vega.StaticExplorer`): every
    chip with a BF16 rate × the five model sizes × :data:`MFU_TOKENS_PER_S`. The bar is read
    from an :class:`_MFUView` after ``update``; the sentence under it is the live view's."""
    from ..vega import StaticExplorer

    alt = book_altair()
    view = _MFUView(annotate=True)
    explorer = StaticExplorer(
        [
            control(
                "chip_name",
                [value for _, value in _bf16_chip_options()],
                label="chip",
                initial=chip(chip_name).name,
            ),
            control(
                "n_params",
                [value for _, value in MODEL_SIZES],
                label="model",
                initial=n_params,
                format=lambda v: f"{v / 1e9:g}B",
            ),
            control(
                "tokens_per_s",
                MFU_TOKENS_PER_S,
                label="tokens/s per chip",
                initial=tokens_per_s,
                format=lambda v: f"{v:,.0f}",
            ),
        ],
        alt=(
            "A horizontal bar showing the model FLOPs utilisation for the chosen chip, model "
            "size and training throughput, red above 100 %, against dashed lines for published "
            "runs (Llama 3, DeepSeek-V3, SmolLM3, PaLM) and a green band for measured H100 BF16 "
            "matmul efficiency."
        ),
        note=lambda **values: view.update(**values),
        colab=colab,
        dropdowns=("n_params",),
    )

    def bar(chip_name: str, n_params: float, tokens_per_s: float) -> dict[str, Any]:
        view.update(chip_name, n_params, tokens_per_s)
        return {
            "mfu": float(view.mfu),
            "shown": float(view.bar.get_width()),
            "label": view.label.get_text(),
            "title": view.title.get_text(),
            "over": bool(view.mfu > 1),
        }

    def references() -> list[dict[str, Any]]:
        values = {label: float(find(quantity).value) for label, quantity in MFU_REFERENCES}
        ranked = sorted(values, key=values.get)
        # from left to right, labels alternate sides of their lines: two close lines then
        # have their labels apart, even on a phone
        return [
            {"label": label, "mfu": value, "side": "right" if ranked.index(label) % 2 else "left"}
            for label, value in values.items()
        ]

    def band() -> dict[str, Any]:
        peak = chip("H100-SXM").peak_flops("bf16")
        low, high = (v / peak for v in gemm_range("bf16"))
        return {"low": float(low), "high": float(high), "text": "H100 BF16 matmul alone"}

    x_scale = alt.Scale(domain=[0, 1], nice=False)
    x_title = "model FLOPs utilisation (achieved model FLOP/s ÷ dense peak)"
    x = alt.X(
        "shown:Q",
        title=x_title,
        scale=x_scale,
        axis=alt.Axis(format="%", values=[i / 10 for i in range(11)], grid=False),
    )
    measured = explorer.table("band", band, over=())
    published = explorer.table("references", references, over=())
    result = explorer.table("bar", bar)
    explorer.chart(
        alt.layer(
            measured.mark_rect(color="#2ca02c", opacity=0.18).encode(
                x=alt.X("low:Q", scale=x_scale, title=x_title), x2="high:Q"
            ),
            measured.mark_text(baseline="top", dy=4, fontSize=11, color="darkgreen")
            .encode(x=alt.X("mid:Q", scale=x_scale), y=alt.value(0), text="text:N")
            .transform_calculate(mid="(datum.low + datum.high) / 2"),
            published.mark_rule(color="dimgray", strokeDash=[4, 3]).encode(
                x=alt.X("mfu:Q", scale=x_scale)
            ),
            # each label runs up along its own line: the lines are too close for level text
            *(
                published.transform_filter(f"datum.side == '{side}'")
                .mark_text(
                    align="left",
                    baseline=baseline,
                    angle=270,
                    dy=2 if side == "right" else -2,
                    fontSize=11,
                    color="dimgray",
                )
                .encode(x=alt.X("mfu:Q", scale=x_scale), y=alt.value(166), text="label:N")
                for side, baseline in (("right", "top"), ("left", "bottom"))
            ),
            result.mark_bar(height=34).encode(
                x=x,
                x2=alt.datum(0),
                y=alt.value(62),
                color=alt.Color(
                    "over:N",
                    legend=None,
                    scale=alt.Scale(domain=[False, True], range=["#1f77b4", "#d62728"]),
                ),
                tooltip=["title:N", "label:N"],
            ),
            result.transform_calculate(at="min(datum.shown + 0.01, 0.85)")
            .mark_text(align="left", baseline="middle", fontSize=13, fontWeight="bold")
            .encode(x=alt.X("at:Q", scale=x_scale), y=alt.value(62), text="label:N"),
            result.mark_text(align="left", baseline="bottom", fontSize=12).encode(
                x=alt.value(0), y=alt.value(-6), text="title:N"
            ),
        )
        .properties(height=170, width=480)
        .configure_axis(labelFontSize=11, titleFontSize=12)
    )
    return explorer
