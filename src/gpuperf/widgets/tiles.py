"""Chapter 3 explorers, part 2: tile sizes on the roofline, and wave quantization.

:func:`tiling_explorer` moves BLOCK_M, BLOCK_N and BLOCK_K of a 4096³ fp16 matmul. The point on
the chosen chip's roofline sits at the tiled matmul's intensity (:func:`gpuperf.tiling.
tiled_matmul`, ≈ BM·BN/(BM + BN) FLOP/B), under the roof of the unit the compiled ``tl.dot``
runs on (:func:`gpuperf.tiling.dot_roof_precision`: the fp32 FMA peak on a T4, the fp16 tensor
cores on an A100 or H100), and the status line reports what the compiler made
of that tile on that chip — shared memory, registers, occupancy, tensor-core instructions — from
the table :mod:`gpuperf.widgets.tile_reports` precompiled with :mod:`gpuperf.inspect` (compiling
on every step would take seconds). The shared-memory gauge shows the *compiler's* bytes from that
table whenever the tile compiled; for a tile the table has no compile for (one stage alone is
over the limit), it shows the course model's three full stages
(:func:`gpuperf.tiling.shared_memory_budget`), drawn hatched and labelled as the model.

:func:`wave_explorer` slides the matrix size N for a tile shape and chip along the sawtooth of
wave efficiency (:func:`gpuperf.tiling.wave_efficiency_curve`,
:func:`gpuperf.tiling.wave_quantization`): 2048 → 2049 adds a row and a column and a whole wave.

:func:`tiling_static` is the online book's client-side figure of :func:`tiling_explorer` (every
value of its four controls, rows read from :class:`_TilingView` at build time).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .. import plots, tiling
from ..hardware import chip
from ..inspect import target_of
from ..roofline import attainable_flops
from ..runtime import require
from ..scrub import control
from ..units import format_flops
from ..vega import StaticExplorer, _roofline_layer, book_altair, book_figure
from . import tile_reports
from .live import Explorer, _chip_value, _control_widget, _new_figure
from .tricks import CHIPS

__all__ = [
    "TILE_SHAPES",
    "tiling_explorer",
    "tiling_static",
    "wave_explorer",
]

MATMUL_SIZE = 4096
PRECISION = "fp16"
_INTENSITY = (0.2, 2e3)
_FLOPS = (1e11, 2e15)


class _TilingView:
    """Roofline with the tiled matmul's point (top) and a shared-memory gauge (bottom)."""

    def __init__(self, *, figsize: tuple[float, float] = (6.4, 4.4), dpi: int = 80) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        top, bottom = figure.subplots(2, 1, height_ratios=(4, 1))
        figure.subplots_adjust(left=0.13, right=0.97, top=0.93, bottom=0.1, hspace=0.45)
        # Chapter 2's roofline panel draws the roof, ridge, regions and the (red) tiled point.
        self.panel = plots._RooflinePanel(
            top, intensity_range=_INTENSITY, flops_range=_FLOPS, annotate=False
        )
        self.roof, self.point = self.panel.roof, self.panel.point
        self.point.set_label("tiled (BM, BN, BK)")
        (self.naive,) = top.plot([], [], "x", color="0.3", ms=9, mew=2, label="untiled (naive)")
        top.legend(loc="lower right", fontsize=8)
        top.set_title(f"{MATMUL_SIZE}³ {PRECISION} matmul on the roofline", fontsize=9)
        # The gauge's text stays empty: per-step text costs ~10 ms to draw; the status says it.
        self.bar, self.gauge_text = plots._draw_smem_gauge(bottom)
        bottom.set_xlabel(
            "shared memory / limit per block: compiler's bytes (solid), "
            f"else model, {tile_reports.NUM_STAGES} full stages (hatched)",
            fontsize=8,
        )
        self.animated = [*self.panel.artists, self.naive, self.bar]
        self.last: dict[str, Any] = {}

    def update(self, block_m: int, block_n: int, block_k: int, chip_name: str) -> str:
        the_chip = chip(chip_name)
        t = tiling.tiled_matmul(
            MATMUL_SIZE, MATMUL_SIZE, MATMUL_SIZE, block_m, block_n, block_k, PRECISION
        )
        naive_intensity = t.useful_flops / t.naive_hbm_bytes
        # The roof of the unit the compiled tl.dot runs on: fp32 FMA on a T4, tensor cores above.
        roof = tiling.dot_roof_precision(the_chip, PRECISION)
        y = float(attainable_flops(t.intensity, the_chip, roof))
        self.panel.set_roof(the_chip, roof)
        self.panel.set_point(t.intensity, y)
        self.naive.set_data(
            [naive_intensity], [float(attainable_flops(naive_intensity, the_chip, roof))]
        )
        model = tiling.shared_memory_budget(
            the_chip, block_m, block_n, block_k, PRECISION, tile_reports.NUM_STAGES
        )
        report = tile_reports.tile_report(target_of(chip_name), block_m, block_n, block_k)
        # The gauge: the compiler's allocation where the table has one, else the model's.
        if report.fits:
            budget = dataclasses.replace(model, shared_memory_bytes=report.shared_memory_bytes)
            gauge = f"gauge: compiler's {budget.shared_memory_bytes / 1024:g} KiB"
        else:
            budget = model
            gauge = (
                f"gauge: model, {tile_reports.NUM_STAGES} full stages = "
                f"{model.shared_memory_bytes / 1024:g} KiB (not compiled)"
            )
        plots._set_smem_gauge(self.bar, self.gauge_text, budget)
        self.bar.set_hatch("" if report.fits else "//")
        self.gauge_text.set_text("")
        self.last = {
            "tiled": t,
            "roof_precision": roof,
            "attainable": y,
            "budget": budget,
            "model_budget": model,
            "gauge_source": "compiler" if report.fits else "model",
            "report": report,
        }
        if report.fits:
            tc = report.tensor_core_instruction.split(".")[0] or "none (FMA)"
            spilled = report.spill_bytes
            spill = f" ({spilled} B/thread spilled to local memory)" if spilled else ""
            compiled = (
                f"compiled for {target_of(chip_name)}: {report.shared_memory_bytes / 1024:g} KiB "
                f"shared memory, {report.registers_per_thread} registers/thread"
                f"{spill}, "
                f"occupancy {report.occupancy:.0%} (limited by {report.limited_by}), "
                f"tensor cores: {tc}"
            )
        else:
            compiled = f"compiler: {report.explanation}"
        unit = "tensor cores" if roof == PRECISION else f"{roof} FMA: tl.dot uses no tensor cores"
        return (
            f"{the_chip.name}, tile {block_m}×{block_n}×{block_k}: each A element read "
            f"{t.a_reads_per_element}× (naive: {MATMUL_SIZE}×), intensity {t.intensity:.0f} "
            f"FLOP/B → attains {format_flops(y)} (roof "
            f"{format_flops(the_chip.peak_flops(roof))}, {unit}); "
            f"{gauge} of {budget.limit_bytes / 1024:g} KiB per block. {compiled}"
        )

    def render(self, block_m: int, block_n: int, block_k: int, chip_name: str) -> tuple[Any, str]:
        return self.figure, self.update(block_m, block_n, block_k, chip_name)


def tiling_explorer(
    block_m: int = 64, block_n: int = 64, block_k: int = 32, chip_name: str = "A100-80GB"
) -> Explorer:
    """BLOCK_M × BLOCK_N × BLOCK_K × chip → point on the roofline and shared-memory gauge."""
    widgets = require("ipywidgets", "pip install ipywidgets")

    def slider(name: str, label: str, values: tuple[int, ...], value: int) -> Any:
        return _control_widget(
            widgets.SelectionSlider,
            name,
            options=[(str(v), v) for v in values],
            value=value,
            description=label,
        )

    controls = {
        "block_m": slider("block_m", "BLOCK_M", tile_reports.BLOCKS_MN, block_m),
        "block_n": slider("block_n", "BLOCK_N", tile_reports.BLOCKS_MN, block_n),
        "block_k": slider("block_k", "BLOCK_K", tile_reports.BLOCKS_K, block_k),
        "chip_name": _control_widget(
            widgets.Dropdown,
            "chip_name",
            options=[(c, c) for c in CHIPS],
            value=_chip_value(chip_name),
            description="chip",
        ),
    }
    view = _TilingView()
    return Explorer.for_view(
        view, controls, title="Tiling: bigger tiles, more reuse, more shared memory"
    )


@book_figure
def tiling_static(
    block_m: int = 64,
    block_n: int = 64,
    block_k: int = 32,
    chip_name: str = "A100-80GB",
    *,
    colab: str = "",
) -> StaticExplorer:
    """Static twin of :func:`tiling_explorer` for the online book (a
    :class:`gpuperf.vega.StaticExplorer`): BLOCK_M × BLOCK_N × BLOCK_K × chip, every value the
    live sliders offer (:data:`tile_reports.BLOCKS_MN`, :data:`tile_reports.BLOCKS_K`,
    :data:`CHIPS`; 144 tiles and chips). The tiled point, the naive cross and the gauge's width
    are read from a :class:`_TilingView` after its ``update``, the roof (of the compiled
    ``tl.dot``'s unit) is drawn as the live view's, and the line under the figure is the live
    status line. The arguments are the initial values."""
    from matplotlib.colors import to_hex

    alt = book_altair()
    controls = [
        control("block_m", tile_reports.BLOCKS_MN, label="BLOCK_M", initial=block_m),
        control("block_n", tile_reports.BLOCKS_MN, label="BLOCK_N", initial=block_n),
        control("block_k", tile_reports.BLOCKS_K, label="BLOCK_K", initial=block_k),
        control("chip_name", CHIPS, label="chip", initial=_chip_value(chip_name)),
    ]
    view = _TilingView(dpi=72)
    explorer = StaticExplorer(
        controls,
        alt=(
            f"Roofline of the chosen chip for its compiled kernel's math unit (fp32 FMA on the "
            f"T4, {PRECISION} tensor cores on the others) with a {MATMUL_SIZE}³ matmul as a red "
            "point at the tiled intensity and a grey cross for the untiled kernel; below, a gauge "
            "of the shared memory the compiled kernel allocates against the chip's per-block "
            "limit, or, paler with a dashed outline, the course model's full stages for a tile "
            "that was not compiled."
        ),
        note=lambda **values: view.update(**values),
        colab=colab,
    )

    def points(**values: Any) -> list[dict[str, Any]]:
        view.update(**values)
        rows = []
        for kind, artist in (("tiled (BM, BN, BK)", view.point), ("untiled (naive)", view.naive)):
            (x,), (y,) = artist.get_data()
            rows.append({"kind": kind, "x": float(x), "y": float(y)})
        return rows

    def gauge(**values: Any) -> dict[str, Any]:
        view.update(**values)
        source = view.last["gauge_source"]
        budget = view.last["budget"]
        return {
            "fraction": float(view.bar.get_width()),
            "colour": to_hex(view.bar.get_facecolor()),
            "source": source,
            "label": (
                f"compiler's {budget.shared_memory_bytes / 1024:g} KiB"
                if source == "compiler"
                else f"model, {tile_reports.NUM_STAGES} full stages = "
                f"{budget.shared_memory_bytes / 1024:g} KiB (not compiled)"
            ),
        }

    def roof(chip_name: str) -> tuple[Any, str]:
        # the roof of the unit the compiled tl.dot runs on, as the live view draws it
        the_chip = chip(chip_name)
        return the_chip, tiling.dot_roof_precision(the_chip, PRECISION)

    top = _roofline_layer(
        explorer,
        roof,
        points,
        kinds={
            "tiled (BM, BN, BK)": ("circle", "#d62728"),
            "untiled (naive)": ("cross", "#4d4d4d"),
        },
        intensity_range=_INTENSITY,
        flops_range=_FLOPS,
    ).properties(height=240, title=f"{MATMUL_SIZE}³ {PRECISION} matmul on the roofline")
    gauge_chart = explorer.table("gauge", gauge)
    fraction = alt.X(
        "fraction:Q",
        title="shared memory / limit per block",
        scale=alt.Scale(domain=[0, 1.5], nice=False),
    )
    bottom = alt.layer(
        gauge_chart.mark_bar(height=22, strokeWidth=1.5).encode(
            x=fraction,
            # the live bar's colour, used as is
            color=alt.Color("colour:N", legend=None, scale=None),
            opacity=alt.Opacity(
                "source:N",
                legend=None,
                scale=alt.Scale(domain=["compiler", "model"], range=[1.0, 0.45]),
            ),
            stroke=alt.Stroke("colour:N", legend=None, scale=None),
            strokeDash=alt.StrokeDash(
                "source:N",
                legend=None,
                scale=alt.Scale(domain=["compiler", "model"], range=[[1, 0], [4, 3]]),
            ),
        ),
        explorer.table("limit", lambda: {"fraction": 1.0, "text": "limit"}, over=())
        .mark_rule(color="#d62728", strokeWidth=2)
        .encode(x=fraction),
        gauge_chart.mark_text(align="left", baseline="bottom", dy=-14, fontSize=11).encode(
            x=alt.value(2), text="label:N"
        ),
    ).properties(height=60)
    explorer.chart(
        alt.vconcat(top, bottom, spacing=24)
        .resolve_scale(color="independent", shape="independent", fill="independent")
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer


# ---------------------------------------------------------------------------------------------
# Wave quantization

#: Tile shapes offered: (label, (BLOCK_M, BLOCK_N)).
TILE_SHAPES: tuple[tuple[str, tuple[int, int]], ...] = (
    ("128 × 128", (128, 128)),
    ("256 × 128", (256, 128)),
    ("64 × 64", (64, 64)),
)
SIZES = np.arange(256, 8192 + 1)


class _WaveView:
    """The sawtooth of wave efficiency against N, with a marker at the chosen N."""

    def __init__(self, *, figsize: tuple[float, float] = (7.2, 3.2), dpi: int = 80) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        ax = figure.subplots()
        figure.subplots_adjust(left=0.09, right=0.97, top=0.88, bottom=0.14)
        ax.set_xlim(SIZES[0], SIZES[-1])
        ax.set_ylim(0, 1.08)
        ax.set_xlabel("matrix size N (N × N output)")
        ax.set_ylabel("wave efficiency")
        ax.grid(True, alpha=0.3)
        self.curve = plots._draw_sawtooth(ax, SIZES, np.ones_like(SIZES, dtype=float))
        (self.marker,) = ax.plot([], [], "o", color="tab:red", ms=9, mec="black")
        (self.vline,) = ax.plot([], [], color="tab:red", lw=0.8, ls=":")
        ax.set_title("wave efficiency = tiles / (waves × SMs)", fontsize=9)
        self.animated = [self.curve, self.marker, self.vline]
        self.last: tiling.WaveQuantization | None = None
        self._curve_key: tuple | None = None

    def update(self, size: int, tile: tuple[int, int], chip_name: str) -> str:
        block_m, block_n = tile
        if self._curve_key != (tile, chip_name):  # the curve changes only with tile or chip
            self.curve.set_ydata(tiling.wave_efficiency_curve(SIZES, block_m, block_n, chip_name))
            self._curve_key = (tile, chip_name)
        w = tiling.wave_quantization(size, size, block_m, block_n, chip_name)
        self.last = w
        self.marker.set_data([size], [w.wave_efficiency])
        self.vline.set_data([size, size], [0, 1.08])
        return (
            f"{w.chip_name} ({w.sm_count} SMs), {block_m} × {block_n} tiles, N = {size}: "
            f"{w.tiles} tiles on {w.slots_per_wave} SM slots → {w.waves} "
            f"wave{'s' if w.waves != 1 else ''}, the last holding "
            f"{w.tail_tiles} tiles; wave efficiency {w.wave_efficiency:.1%}, tile efficiency "
            f"{w.tile_efficiency:.1%}, together {w.efficiency:.1%}"
        )

    def render(self, size: int, tile: tuple[int, int], chip_name: str) -> tuple[Any, str]:
        return self.figure, self.update(size, tile, chip_name)


def wave_explorer(
    size: int = 2048, tile: tuple[int, int] = (256, 128), chip_name: str = "H100-SXM"
) -> Explorer:
    """Size × tile × chip → where N sits on the sawtooth, tiles and waves."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    controls = {
        "size": _control_widget(
            widgets.IntSlider, "size", value=size, min=int(SIZES[0]), max=int(SIZES[-1]),
            step=1, description="N",
        ),
        "tile": _control_widget(
            widgets.Dropdown, "tile", options=list(TILE_SHAPES), value=tile, description="tile"
        ),
        "chip_name": _control_widget(
            widgets.Dropdown, "chip_name", options=[(c, c) for c in CHIPS],
            value=_chip_value(chip_name), description="chip",
        ),
    }  # fmt: skip
    view = _WaveView()
    return Explorer.for_view(
        view, controls, title="Wave quantization: one more row can cost a whole wave"
    )
