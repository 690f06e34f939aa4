"""Chapter 4 explorers: the online softmax, step by step, and attention on the roofline.

:func:`online_softmax_explorer` walks one row of scores block by block, the way a FlashAttention
program sees it: after each block the running max ``m`` and the running sum ``ℓ`` are updated,
and the old sum is rescaled by exp(m_old − m_new) whenever the max grows. The lower panel shows
the softmax *as it would be reported now*, exp(x − m)/ℓ over the values seen so far; after the
last block it equals the true softmax (drawn as outlines). Every number comes from
:func:`gpuperf.attention.online_softmax_steps`.

:func:`attention_explorer` places standard attention and FlashAttention-2 on the roofline of a
chip for a sequence length N, head dimension d, SRAM budget and precision, next to their HBM
traffic as N grows (:func:`gpuperf.attention.hbm_traffic_standard`,
:func:`gpuperf.attention.hbm_traffic_flash`, :func:`gpuperf.roofline.time_bounds`).

Each explorer has a kernel-free twin for the online book in :mod:`gpuperf.widgets.static`
(``online_softmax_static``, ``attention_static``), whose rows are read from the same view class.
No formula lives here: the views only move artists to where the calculators say.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import attention as attn
from .._validate import positive_int, real_array
from ..hardware import Chip, chip, chips
from ..plots import _RooflinePanel
from ..roofline import time_bounds
from ..runtime import require
from ..units import KiB, format_bytes, format_flops, format_seconds
from .live import Explorer, LiveFigure, _chip_value, _control_widget, _new_figure

__all__ = [
    "EXAMPLE_ROW",
    "attention_explorer",
    "online_softmax_explorer",
]

#: A row of 16 attention scores whose maximum grows in several blocks (so the rescaling shows).
EXAMPLE_ROW: tuple[float, ...] = (
    0.5, -1.2, 1.1, 0.3, 2.4, -0.7, 0.9, 1.8, -0.4, 3.1, 0.2, -1.5, 1.0, 2.9, -0.3, 3.6,
)  # fmt: skip

#: Block sizes offered by the step-through widget (each divides the 16 example scores).
BLOCK_SIZES: tuple[int, ...] = (2, 4, 8)


def _fmt(value: float) -> str:
    return "−∞" if value == -math.inf else f"{value:.3g}"


class _OnlineSoftmaxView:
    """A two-panel figure for one row: scores with the running max, and the current softmax."""

    def __init__(
        self,
        row: Sequence[float] = EXAMPLE_ROW,
        *,
        figsize: tuple[float, float] = (7.2, 4.6),
        dpi: int = 80,
    ) -> None:
        self.row = np.asarray(real_array("row", row, allow_negative=True, ndim=1))
        if self.row.size < 2:
            raise ValueError(f"row must be 1-D with ≥ 2 finite values, got {row!r}")
        n = self.row.size
        self.softmax = attn.softmax(self.row)
        self.figure = figure = _new_figure(figsize, dpi)
        top, bottom = figure.subplots(2, 1, sharex=True)
        figure.subplots_adjust(left=0.09, right=0.98, top=0.93, bottom=0.11, hspace=0.28)
        positions = np.arange(n)
        top.bar(positions, self.row, color="0.75", width=0.8)
        top.axhline(0, color="0.3", lw=0.8)
        span = float(np.ptp(self.row))
        top.set_ylim(self.row.min() - 0.15 * span, self.row.max() + 0.45 * span)
        top.set_xlim(-0.6, n - 0.4)
        top.set_ylabel("score x")
        top.set_title("scores, streamed block by block", fontsize=10)
        self.done_span = top.axvspan(-0.5, -0.5, color="tab:blue", alpha=0.12, lw=0)
        self.block_span = top.axvspan(-0.5, -0.5, color="tab:orange", alpha=0.25, lw=0)
        (self.max_line,) = top.plot([], [], color="tab:red", lw=2, label="running max m")
        (self.old_max_line,) = top.plot(
            [], [], color="tab:red", lw=1.2, ls=":", label="max before this block"
        )
        top.legend(loc="upper left", fontsize=8, ncol=2)
        bottom.plot(
            positions, self.softmax, "_", color="black", ms=14, mew=2, label="exact softmax"
        )
        collections = require("matplotlib.collections", "pip install matplotlib")
        self.estimate = collections.LineCollection(
            [], colors="tab:blue", linewidths=9, label="exp(x − m) / ℓ so far"
        )
        bottom.add_collection(self.estimate)
        self.probability_axes = bottom
        self._scale_probabilities(max(BLOCK_SIZES[0], 1))
        bottom.set_xlabel("position in the row")
        bottom.set_ylabel("probability")
        bottom.legend(loc="upper left", fontsize=8, ncol=2)
        self.animated = [
            self.done_span,
            self.block_span,
            self.max_line,
            self.old_max_line,
            self.estimate,
        ]

    @staticmethod
    def _set_span(patch: Any, start: float, stop: float) -> None:
        # axvspan returns a Rectangle (matplotlib ≥ 3.9) or a Polygon (older); handle both.
        if hasattr(patch, "set_x") and hasattr(patch, "set_width"):
            patch.set_x(start)
            patch.set_width(stop - start)
        else:
            patch.set_xy([[start, 0], [start, 1], [stop, 1], [stop, 0], [start, 0]])

    def steps(self, block_size: int) -> tuple[attn.OnlineSoftmaxStep, ...]:
        return attn.online_softmax_steps(self.row, block_size)

    def _scale_probabilities(self, block_size: int) -> None:
        """Fit the probability axis to the tallest bar any step of this block size shows.

        Early estimates exp(x − m)/ℓ over the few scores read so far are larger than the final
        softmax (they sum to 1 over fewer positions), so the axis follows the block size.
        """
        tallest = float(self.softmax.max())
        for s in self.steps(block_size):
            seen = self.row[: s.stop]
            tallest = max(tallest, float((np.exp(seen - s.max_after) / s.sum_after).max()))
        top = min(1.0, tallest) * 1.25  # room for the legend above the bars
        if self.probability_axes.get_ylim() != (0.0, top):
            self.probability_axes.set_ylim(0.0, top)

    def update(self, step: int, block_size: int) -> str:
        """Show the state after ``step`` blocks (0 = nothing read yet); returns the status."""
        steps = self.steps(block_size)
        self._scale_probabilities(block_size)
        step = int(min(max(step, 0), len(steps)))
        if step == 0:
            stop, m, total = 0, -math.inf, 0.0
            self._set_span(self.block_span, -0.5, -0.5)
            self.old_max_line.set_data([], [])
            self.max_line.set_data([], [])
            detail = "nothing read yet: m = −∞, ℓ = 0"
        else:
            s = steps[step - 1]
            stop, m, total = s.stop, s.max_after, s.sum_after
            self._set_span(self.block_span, s.start - 0.5, s.stop - 0.5)
            self.max_line.set_data([-0.5, s.stop - 0.5], [m, m])
            if math.isfinite(s.max_before):
                self.old_max_line.set_data([-0.5, s.stop - 0.5], [s.max_before] * 2)
            else:
                self.old_max_line.set_data([], [])
            grew = "max grew" if s.max_after > s.max_before else "max unchanged"
            detail = (
                f"block {step}/{len(steps)} (x[{s.start}:{s.stop}]): "
                f"block max {_fmt(s.block_max)}, {grew}: m {_fmt(s.max_before)} → {_fmt(m)}; "
                f"ℓ = {s.sum_before:.4g} × e^({_fmt(s.max_before)} − {_fmt(m)}) "
                f"+ Σ e^(x − m) = {total:.4g} (rescale factor {s.rescale:.4g})"
            )
        self._set_span(self.done_span, -0.5, stop - 0.5)
        if stop:
            seen = self.row[:stop]
            probabilities = np.exp(seen - m) / total
            self.estimate.set_segments([[(i, 0.0), (i, p)] for i, p in enumerate(probabilities)])
            mass = float(probabilities.sum())
        else:
            self.estimate.set_segments([])
            mass = 0.0
        self.last = {"max": m, "sum": total, "read": stop, "mass": mass}
        finished = stop == self.row.size
        progress = (
            "all scores read: exp(x − m)/ℓ is now the softmax"
            if finished
            else f"{stop}/{self.row.size} scores read; so far they sum to {mass:.3g}"
        )
        return f"m = {_fmt(m)}, ℓ = {total:.4g}. {detail}. {progress}."

    def render(self, step: int, block_size: int) -> tuple[Any, str]:
        """For the scrubber: update and return (figure, note)."""
        return self.figure, self.update(step, block_size)


def online_softmax_explorer(row: Sequence[float] = EXAMPLE_ROW, block_size: int = 4) -> Explorer:
    """Step slider (blocks read) × block size → running max, running sum and softmax so far."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    view = _OnlineSoftmaxView(row)
    n = view.row.size
    sizes = tuple(b for b in BLOCK_SIZES if b < n) or (1,)
    size_control = _control_widget(
        widgets.Dropdown,
        "block_size",
        options=[(str(b), b) for b in sizes],
        value=block_size,
        description="block size",
    )
    step_control = widgets.IntSlider(
        value=0, min=0, max=math.ceil(n / block_size), description="blocks read"
    )

    def on_size(change: Any) -> None:  # wiring: the slider ends at the number of blocks
        step_control.max = math.ceil(n / change["new"])

    size_control.observe(on_size, names="value")
    live = LiveFigure(view.figure, view.animated)
    for size in sizes:  # the probability axis of each block size, drawn now and cached
        view.update(0, size)
        live.render()
    explorer = Explorer(
        {"step": step_control, "block_size": size_control},
        view.update,
        live,
        title="Online softmax, one block at a time",
    )
    explorer.view = view
    return explorer


# ---------------------------------------------------------------------------------------------
# Attention on the roofline

#: Sequence lengths offered by the attention explorer (powers of two, 512 … 128K).
SEQ_LENS: tuple[int, ...] = tuple(2**k for k in range(9, 18))
HEAD_DIMS: tuple[int, ...] = (64, 128, 256)
ATTENTION_PRECISIONS: tuple[str, ...] = ("fp32", "fp16", "bf16", "fp8")
#: SRAM budgets offered besides "the chip's per-block maximum" (0 in the dropdown).
SRAM_CHOICES_KIB: tuple[int, ...] = (48, 64, 100, 164, 227)

_INTENSITY = (1.0, 2e4)
_FLOPS = (1e11, 1e16)
_TRAFFIC = (1e4, 1e12)


def _gpu_names() -> tuple[str, ...]:
    return tuple(c.name for c in chips() if c.shared_memory_per_block_bytes)


class _AttentionView:
    """Roofline (left) and HBM traffic vs N (right) for standard attention and FlashAttention-2.

    Axis limits are fixed over every chip and precision so a step never needs a full redraw; the
    roof itself is an animated artist.
    """

    def __init__(self, *, figsize: tuple[float, float] = (9.0, 3.6), dpi: int = 72) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        left, right = figure.subplots(1, 2)
        figure.subplots_adjust(left=0.08, right=0.98, top=0.91, bottom=0.14, wspace=0.25)
        # The roof, ridge and shaded regions come from the chapter 2 roofline panel.
        self.panel = _RooflinePanel(left, intensity_range=_INTENSITY, flops_range=_FLOPS)
        left.set_xlabel("arithmetic intensity (FLOP / HBM byte)")
        left.set_title("forward pass on the roofline", fontsize=10)
        self.standard_point = self.panel.point
        self.standard_point.set_label("standard")
        (self.flash_point,) = left.plot(
            [], [], "s", color="tab:blue", ms=9, mec="black", zorder=5, label="FlashAttention-2"
        )
        (self.ideal_point,) = left.plot(
            [],
            [],
            "s",
            color="white",
            ms=9,
            mec="tab:blue",
            mew=2,
            zorder=5,
            label="FA-2, K/V re-reads hit L2",
        )
        left.legend(loc="lower right", fontsize=8)
        left.minorticks_off()  # minor log ticks double the cost of every scrubber frame

        right.set_xscale("log", base=2)
        right.set_yscale("log")
        right.set_xlim(SEQ_LENS[0] / 1.2, SEQ_LENS[-1] * 1.2)
        right.set_ylim(*_TRAFFIC)
        right.set_xlabel("sequence length N")
        right.set_ylabel("HBM bytes per head (forward)")
        right.grid(True, which="major", alpha=0.3)
        right.set_title("HBM traffic vs N", fontsize=10)
        self.n_values = np.array(SEQ_LENS)
        (self.standard_curve,) = right.plot([], [], "-", color="tab:red", label="standard")
        (self.flash1_curve,) = right.plot([], [], "--", color="tab:cyan", label="FlashAttention-1")
        (self.flash_curve,) = right.plot([], [], "-", color="tab:blue", label="FlashAttention-2")
        (self.ideal_curve,) = right.plot(
            [], [], ":", color="tab:blue", lw=2, label="FA-2, K/V re-reads hit L2"
        )
        (self.n_marker,) = right.plot([], [], color="0.4", lw=1)
        right.legend(loc="upper left", fontsize=8)
        right.minorticks_off()
        # The panel's text labels cost ~5 ms each per redraw; the status line carries their
        # content (ridge point, bound), so they stay hidden and out of the blitted set.
        texts = [a for a in self.panel.artists if hasattr(a, "get_text")]
        for text in texts:
            text.set_visible(False)
        self.animated = [
            *(a for a in self.panel.artists if a not in texts),
            self.flash_point,
            self.ideal_point,
            self.standard_curve,
            self.flash1_curve,
            self.flash_curve,
            self.ideal_curve,
            self.n_marker,
        ]
        self.last: dict[str, Any] = {}

    @staticmethod
    def sram_bytes(the_chip: Chip, sram_kib: int) -> int:
        """The SRAM budget: the chip's per-block maximum when ``sram_kib`` is 0.

        FlashAttention's blocks are sized for a GPU's shared memory per block, so a chip
        without one (a TPU) raises ``ValueError`` naming the GPUs, unless ``sram_kib`` says
        how much on-chip memory to assume.
        """
        sram_kib = positive_int("sram_kib", sram_kib, minimum=0)
        if sram_kib:
            return sram_kib * KiB
        if the_chip.shared_memory_per_block_bytes is None:
            raise ValueError(
                f"{the_chip.name} has no shared memory per block in the chip table, so "
                "sram_kib=0 ('the chip's maximum') means nothing; pass sram_kib > 0 or choose "
                f"a GPU: {', '.join(_gpu_names())}"
            )
        return the_chip.shared_memory_per_block_bytes

    @staticmethod
    def ideal(seq_len: int, head_dim: int, sram: int, precision: str) -> Any:
        """FlashAttention-2 with one Q block spanning N: every byte crosses HBM once (4Nd + N).

        This is the traffic when every re-read of K and V is served by L2 instead of HBM: a
        bound, reached only if the programs that share a head's K and V read each block close
        enough in time for it to still be in L2 (04_flashattention_algorithm).
        """
        return attn.hbm_traffic_flash(seq_len, head_dim, sram, precision, block_r=seq_len)

    def update(
        self, seq_len: int, head_dim: int, chip_name: str, sram_kib: int, precision: str
    ) -> str:
        the_chip = chip(chip_name)
        sram = self.sram_bytes(the_chip, sram_kib)
        blocks = attn.flash_block_sizes(sram, head_dim, precision)
        try:
            tiles = attn.fa2_block_sizes(sram, head_dim, precision)
        except ValueError as error:  # FA-2 has no tiles for this SRAM: no FA-2 point or curve
            tiles, no_tiles = None, str(error)
        standard = attn.hbm_traffic_standard(seq_len, head_dim, precision)
        flash = attn.hbm_traffic_flash(seq_len, head_dim, sram, precision) if tiles else None
        ideal = self.ideal(seq_len, head_dim, sram, precision) if tiles else None
        curves = [
            [attn.hbm_traffic_standard(n, head_dim, precision).bytes for n in self.n_values],
            [
                attn.hbm_traffic_flash(n, head_dim, sram, precision, version=1).bytes
                for n in self.n_values
            ],
            [attn.hbm_traffic_flash(n, head_dim, sram, precision).bytes for n in self.n_values]
            if tiles
            else [],
            [self.ideal(n, head_dim, sram, precision).bytes for n in self.n_values]
            if tiles
            else [],
        ]
        lines = (self.standard_curve, self.flash1_curve, self.flash_curve, self.ideal_curve)
        for line, values in zip(lines, curves, strict=True):
            line.set_data(self.n_values[: len(values)], values)
        self.n_marker.set_data([seq_len, seq_len], list(_TRAFFIC))
        ratio = standard.bytes / flash.bytes if flash else None
        setup = (
            f"{the_chip.name}, {precision}, N = {seq_len:,}, d = {head_dim}, SRAM "
            f"{format_bytes(sram, binary=True)} → FA-1 blocks B_c = {blocks.block_c}, "
            f"B_r = {blocks.block_r}; "
            + (
                f"FA-2 tiles B_r × B_c = {tiles.block_r} × {tiles.block_c}; standard attention "
                f"moves {ratio:.3g}× the HBM bytes of FlashAttention-2"
                if tiles
                else f"no FA-2 point: {no_tiles}"
            )
        )
        self.last = {
            "standard": standard,
            "flash": flash,
            "ideal": ideal,
            "blocks": blocks,
            "tiles": tiles,
            "ratio": ratio,
        }
        points = (self.standard_point, self.flash_point, self.ideal_point)
        if precision not in the_chip.precisions:
            self.panel.clear_roof(f"{the_chip.name}: no {precision} rate in the table")
            for artist in points:
                artist.set_data([], [])
            self.last["bounds"] = None
            return f"{setup}. The {the_chip.name} has no {precision} math: no roof to draw."
        ridge = self.panel.set_roof(the_chip, precision)
        setup += (
            f"; roof: peak {format_flops(the_chip.peak_flops(precision))}, "
            f"ridge {ridge:.0f} FLOP/B"
        )
        bounds = {}
        names = ("standard", "flash", "ideal")
        for name, op, point in zip(names, (standard, flash, ideal), points, strict=True):
            if op is None:
                point.set_data([], [])
                continue
            b = time_bounds(op, the_chip, precision)
            bounds[name] = b
            point.set_data([op.intensity], [b.attainable_flops_per_s])
        self.last["bounds"] = bounds
        parts = [
            f"{label}: {format_bytes(op.bytes)} from HBM, {op.intensity:.3g} FLOP/B, "
            f"{bounds[key].bound}-bound, ≥ {format_seconds(bounds[key].lower_s)} per head"
            for key, label, op in (
                ("standard", "standard", standard),
                ("flash", "FlashAttention-2", flash),
                ("ideal", "FA-2 with K/V re-reads from L2", ideal),
            )
            if op is not None
        ]
        return f"{setup}.<br>" + "<br>".join(parts)

    def render(self, **values: Any) -> tuple[Any, str]:
        return self.figure, self.update(**values).replace("<br>", " · ")


def attention_explorer(
    seq_len: int = 8192,
    head_dim: int = 128,
    chip_name: str = "H100-SXM",
    sram_kib: int = 0,
    precision: str = "fp16",
) -> Explorer:
    """N × d × chip × SRAM × precision → both attentions on the roofline and their HBM traffic."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    style = {"description_width": "initial"}
    controls = {
        "seq_len": _control_widget(
            widgets.SelectionSlider, "seq_len",
            options=[(f"{n:,}", n) for n in SEQ_LENS], value=seq_len, description="N",
            style=style,
        ),
        "head_dim": _control_widget(
            widgets.Dropdown, "head_dim",
            options=[(str(d), d) for d in HEAD_DIMS], value=head_dim, description="d",
            style=style, layout=widgets.Layout(width="110px"),
        ),
        "chip_name": _control_widget(
            widgets.Dropdown, "chip_name",
            options=[(n, n) for n in _gpu_names()], value=_chip_value(chip_name),
            description="chip", style=style, layout=widgets.Layout(width="170px"),
        ),
        "sram_kib": _control_widget(
            widgets.Dropdown, "sram_kib",
            options=[("chip max/block", 0)] + [(f"{k} KiB", k) for k in SRAM_CHOICES_KIB],
            value=sram_kib, description="SRAM", style=style,
            layout=widgets.Layout(width="170px"),
        ),
        "precision": _control_widget(
            widgets.Dropdown, "precision",
            options=[(p, p) for p in ATTENTION_PRECISIONS], value=precision,
            description="precision", style=style, layout=widgets.Layout(width="150px"),
        ),
    }  # fmt: skip
    view = _AttentionView()
    return Explorer.for_view(
        view, controls, title="Standard vs FlashAttention-2: HBM traffic and the roofline"
    )
