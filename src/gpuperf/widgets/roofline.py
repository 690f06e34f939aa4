"""Chapters 1 and 2 explorers: hardware explorer, MFU calculator, roofline explorer.

Each explorer is a *view* (a figure plus an ``update(**values)`` that moves its artists from
calculator results and returns a sentence) wired to ipywidgets controls by
:class:`~gpuperf.widgets.live.Explorer`. The same view class renders the kernel-free
:class:`~gpuperf.scrub.Scrubber` for the online book, so the live widget and the scrubber cannot
disagree. No formula lives here: the numbers come from :mod:`gpuperf.hardware`,
:mod:`gpuperf.cost` and :mod:`gpuperf.roofline`, the drawing from :mod:`gpuperf.plots`.

Controls are plain ``Dropdown`` / ``SelectionSlider`` / ``FloatLogSlider`` / ``ToggleButtons``
with ``(label, value)`` options, so everything works on ipywidgets 7.7 (Colab) and 8.x.
"""

from __future__ import annotations

import html
import io
from collections.abc import Sequence
from typing import Any

from .. import cost, plots
from ..hardware import Chip, chip, chips
from ..measurements import find, gemm_range
from ..roofline import critical_batch_size, time_bounds
from ..runtime import require
from ..scrub import FRAME_DPI, Scrubber, control, legible
from ..units import PRECISIONS, format_bandwidth, format_bytes, format_flops
from .live import Explorer, LiveFigure, chip_value, control_widget, new_figure

__all__ = [
    "OPERATIONS",
    "HardwareView",
    "MFUView",
    "RooflineView",
    "hardware_explorer",
    "hardware_scrubber",
    "mfu_calculator",
    "mfu_scrubber",
    "roofline_explorer",
    "roofline_scrubber",
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


#: Resolution of scrubber frames: two bitmap pixels per CSS pixel (see gpuperf.scrub).
SCRUB_DPI = FRAME_DPI


def _blit_frames(view: Any) -> None:
    """Make ``view.figure.savefig`` blit instead of redrawing the whole figure.

    A :class:`~gpuperf.scrub.Scrubber` saves the figure once per frame. A full draw of these
    log-log figures costs ~0.3 s on a 2-core CPU (tick labels are text, and text is slow to
    rasterise), so 50 frames would take 15 s. Instead the static background is drawn once and
    each frame redraws only the artists that moved: the very pixels a full draw would produce.
    Frames are quantised to 128 colours, which keeps the page light.
    """
    pil = require("PIL.Image", "pip install pillow")
    legible(view.figure)  # before the background is cached: blitting never redraws it
    live = LiveFigure(view.figure, view.animated)

    def savefig(target: Any, format: str = "png", **_options: Any) -> None:
        if format != "png":
            raise ValueError(f"format={format!r}: scrubber frames are PNG only")
        live.render()
        image = pil.fromarray(require("numpy").asarray(view.figure.canvas.buffer_rgba()))
        buffer = io.BytesIO()
        image.convert("RGB").quantize(colors=128).save(buffer, "png")
        target.write(buffer.getvalue())

    view.figure.savefig = savefig


def _status(sentence: str) -> str:
    """The view's sentence as HTML for the status line, with the verdict in bold."""
    text = html.escape(sentence)
    for word in ("memory-bound", "compute-bound"):
        text = text.replace(f"→ {word}", f"→ <b>{word}</b>")
    return text


def _chip_options(names: Sequence[str] | None = None) -> list[tuple[str, str]]:
    selected = [chip(n) for n in names] if names else list(chips())
    return [(c.name, c.name) for c in selected]


# --- chapter 1: hardware explorer -------------------------------------------------------------


class HardwareView:
    """Chip × precision → peak, bandwidth, ridge point and that chip's roofline.

    ``annotate=False`` (the live widget) keeps text out of the figure: the status line under
    it carries the numbers, and each step stays within the latency budget.
    """

    def __init__(self, *, annotate: bool = True, dpi: int = LIVE_DPI) -> None:
        self.figure = new_figure(FIGSIZE, dpi=dpi)
        left, right = self.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.5, 1]})
        self.figure.subplots_adjust(left=0.09, right=0.98, bottom=0.14, top=0.97, wspace=0.28)
        self.roofline = plots.RooflinePanel(left, intensity_range=(0.1, 1e4), annotate=annotate)
        self.peaks = plots.PeakBarsPanel(right, annotate=annotate)
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
            f"{format_flops(peak)}, {the_chip.memory_type} {format_bytes(the_chip.hbm_bytes)} at "
            f"{format_bandwidth(the_chip.hbm_bandwidth)}. Ridge point {self.ridge:.3g} FLOP/byte: "
            f"an operation needs at least that many FLOPs per byte it moves to be compute-bound."
        )


def hardware_explorer(chip_name: str = "H100-SXM", precision: str = "bf16") -> Explorer:
    """Live widget: pick a chip and a precision, see its peak, bandwidth, ridge and roofline."""
    widgets = _widgets()
    chip_options = _chip_options()
    precision_options = [(p, p) for p in PRECISIONS]
    controls = {
        "chip_name": control_widget(
            widgets.Dropdown, "chip_name", options=chip_options, value=chip_value(chip_name),
            description="chip",
        ),
        "precision": control_widget(
            widgets.Dropdown, "precision", options=precision_options, value=precision,
            description="precision",
        ),
    }  # fmt: skip
    view = HardwareView(annotate=False)
    explorer = Explorer(
        controls,
        lambda **values: _status(view.update(**values)),
        LiveFigure(view.figure, view.animated),
        title="Hardware explorer",
    )
    explorer.view = view
    return explorer


SCRUB_CHIPS = ("T4", "V100", "A100-80GB", "H100-SXM", "B200", "TPU-v5e")
SCRUB_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")


def hardware_scrubber(
    chip_names: Sequence[str] = SCRUB_CHIPS, precisions: Sequence[str] = SCRUB_PRECISIONS
) -> Scrubber:
    """Kernel-free twin of :func:`hardware_explorer` for the online book."""
    view = HardwareView(dpi=SCRUB_DPI)
    _blit_frames(view)

    def render(chip_name: str, precision: str) -> tuple[Any, str]:
        return view.figure, view.update(chip_name, precision)

    return Scrubber(
        render,
        [
            control(
                "chip_name",
                [chip(n).name for n in chip_names],
                label="chip",
                initial="H100-SXM" if "H100-SXM" in chip_names else None,
            ),
            control(
                "precision",
                list(precisions),
                label="precision",
                initial="bf16" if "bf16" in precisions else None,
            ),
        ],
        alt="A roofline (attainable FLOP/s against arithmetic intensity, log-log) and a bar "
        "chart of dense peak FLOP/s per precision for the chosen chip; the ridge point is "
        "marked where the sloped memory roof meets the flat compute roof.",
    )


# --- chapter 1: MFU calculator ----------------------------------------------------------------

#: Published training MFUs drawn as reference lines: (label, measurement quantity).
MFU_REFERENCES = (
    ("Llama 3 405B", "Llama 3 405B training MFU"),
    ("DeepSeek-V3", "DeepSeek-V3 training MFU"),
    ("SmolLM3", "SmolLM3 training MFU"),
    ("PaLM 540B", "PaLM 540B training MFU"),
)


class MFUView:
    """Tokens/s per chip and model size → model FLOP/s per chip → MFU against the dense peak."""

    def __init__(self, *, annotate: bool = True, dpi: int = LIVE_DPI) -> None:
        self.figure = new_figure((FIGSIZE[0], 2.9), dpi=dpi)
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
    return [(c.name, c.name) for c in chips() if "bf16" in c.precisions]


def mfu_calculator(
    chip_name: str = "H100-SXM", n_params: float = 405e9, tokens_per_s: float = 170.0
) -> Explorer:
    """Live widget: model size and training throughput per chip → MFU, next to published runs."""
    widgets = _widgets()
    controls = {
        "chip_name": control_widget(
            widgets.Dropdown,
            "chip_name",
            options=_bf16_chip_options(),
            value=chip_value(chip_name),
            description="chip",
        ),
        "n_params": control_widget(
            widgets.SelectionSlider,
            "n_params",
            options=[(label, value) for label, value in MODEL_SIZES],
            value=n_params,
            description="model",
        ),
        "tokens_per_s": control_widget(
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
    view = MFUView(annotate=False)
    explorer = Explorer(
        controls,
        lambda **values: _status(view.update(**values)),
        LiveFigure(view.figure, view.animated),
        title="MFU calculator",
    )
    explorer.view = view
    return explorer


SCRUB_TOKENS_PER_S = (30, 100, 300, 1000, 3000, 10000, 30000, 100000)


def mfu_scrubber(
    chip_name: str = "H100-SXM", tokens_per_s: Sequence[float] = SCRUB_TOKENS_PER_S
) -> Scrubber:
    """Kernel-free twin of :func:`mfu_calculator` (one chip; model size × tokens/s)."""
    view = MFUView(dpi=SCRUB_DPI)
    _blit_frames(view)
    name = chip(chip_name).name

    def render(n_params: float, tokens_per_s: float) -> tuple[Any, str]:
        return view.figure, view.update(name, n_params, tokens_per_s)

    return Scrubber(
        render,
        [
            control(
                "n_params",
                [v for _, v in MODEL_SIZES],
                label="model parameters",
                format=lambda v: f"{v / 1e9:g}B",
                initial=70e9,
            ),
            control(
                "tokens_per_s",
                list(tokens_per_s),
                label="tokens/s per chip",
                format=lambda v: f"{v:,.0f}",
                initial=1000,
            ),
        ],
        alt=f"A horizontal bar showing the model FLOPs utilisation on an {name} for the chosen "
        "model size and training throughput, against dashed lines for published runs "
        "(Llama 3, DeepSeek-V3, SmolLM3, PaLM) and a band for measured matmul efficiency.",
    )


# --- chapter 2: roofline explorer ------------------------------------------------------------


def operation(op: str, tokens: int, width: int, precision: str) -> cost.OpCost:
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


class RooflineView:
    """Chip × precision × operation → the operation's point on the roofline and its time bars."""

    def __init__(self, *, annotate: bool = True, dpi: int = LIVE_DPI) -> None:
        self.figure = new_figure(FIGSIZE, dpi=dpi)
        left, right = self.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.55, 1]})
        self.figure.subplots_adjust(left=0.09, right=0.97, bottom=0.14, top=0.91, wspace=0.42)
        self.roofline = plots.RooflinePanel(
            left, intensity_range=(0.03, 3e4), flops_range=(1e9, 3e16), annotate=annotate
        )
        self.bars = plots.TimeBarsPanel(right, annotate=annotate)
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
        the_op = operation(op, tokens, width, precision)
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
            f"{plots.bound_in_words(bounds)}; at best "
            f"{format_flops(bounds.attainable_flops_per_s)}."
        )
        if op == "matmul":
            critical = critical_batch_size(the_chip, precision, d=width, f=width)
            text += (
                f" Compute-bound once B > {critical:.0f}."
                if critical != float("inf")
                else " Never compute-bound at this width."
            )
        return text


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
        "chip_name": control_widget(
            widgets.Dropdown, "chip_name", options=_chip_options(), value=chip_value(chip_name),
            description="chip",
        ),
        "precision": control_widget(
            widgets.Dropdown, "precision", options=[(p, p) for p in PRECISIONS],
            value=precision, description="precision",
        ),
        "op": control_widget(
            widgets.ToggleButtons, "op", options=[(o, o) for o in OPERATIONS], value=op
        ),
        "tokens": control_widget(
            widgets.SelectionSlider, "tokens", options=[(str(t), t) for t in TOKENS],
            value=tokens, description="tokens B / N",
        ),
        "width": control_widget(
            widgets.SelectionSlider, "width", options=[(str(w), w) for w in WIDTHS],
            value=width, description="D = F",
        ),
    }  # fmt: skip
    view = RooflineView(annotate=False)
    explorer = Explorer(
        controls,
        lambda **values: _status(view.update(**values)),
        LiveFigure(view.figure, view.animated),
        title="Roofline explorer",
    )
    explorer.widget.children = (
        *explorer.widget.children[:1],
        widgets.HBox([controls["chip_name"], controls["precision"], controls["op"]]),
        widgets.HBox([controls["tokens"], controls["width"]]),
        *explorer.widget.children[2:],
    )
    explorer.view = view
    return explorer


SCRUB_BATCHES = tuple(2**i for i in range(0, 14))
SCRUB_MATH_PRECISIONS = ("fp32", "bf16", "fp8")


def roofline_scrubber(
    chip_name: str | Chip = "H100-SXM",
    op: str = "matmul",
    width: int = 8192,
    batches: Sequence[int] = SCRUB_BATCHES,
    precisions: Sequence[str] = SCRUB_MATH_PRECISIONS,
) -> Scrubber:
    """Kernel-free twin of :func:`roofline_explorer`: precision × batch for one chip and op."""
    view = RooflineView(dpi=SCRUB_DPI)
    _blit_frames(view)
    name = chip(chip_name).name

    def render(precision: str, tokens: int) -> tuple[Any, str]:
        return view.figure, view.update(name, precision, op, tokens, width)

    return Scrubber(
        render,
        [
            control(
                "precision",
                list(precisions),
                label="precision",
                initial="bf16" if "bf16" in precisions else None,
            ),
            control(
                "tokens",
                list(batches),
                label="token batch B",
                initial=64 if 64 in batches else None,
            ),
        ],
        alt=f"Roofline of the {name} with the {op} (D = F = {width}) drawn as a point at its "
        "arithmetic intensity; as the batch grows the point slides up the sloped memory roof "
        "to the flat compute roof. Beside it, bars compare T_math and T_comms.",
    )
