"""Chapter 3.8 explorer: one tile's K loop with and without overlapping loads and math.

:func:`overlap_explorer` picks a chip, an output tile (BM × BN) and BK, and draws the first
:data:`SHOWN_STEPS` steps of the tile's K loop as a timeline from
:func:`gpuperf.asynchrony.tile_overlap`: on top, the synchronous schedule (load a panel, then
multiply it, then load the next); below, the asynchronous one (the copy engine loads panel i + 1
while the tensor cores multiply panel i). The time axis is in units of the synchronous
schedule's length, so the shorter lower bar *is* the speedup. The status line gives the times
for the whole K = :data:`K` loop. "HBM reuse" is the number of tiles that share each panel
byte fetched from HBM (the rest hit in L2): a modelling knob, not a measured number. No
formula lives here: the times come from the calculator.

:func:`overlap_figure` draws one setting as a static figure for a notebook cell, and
:func:`overlap_static` is the online book's twin: every control of the live explorer with every
value it offers (96 combinations), drawn in the browser by Vega-Lite from the bars of the same
view read after each ``update``.
"""

from __future__ import annotations

from typing import Any

from .._validate import flag, int_pair
from ..asynchrony import TileOverlap, tile_overlap
from ..runtime import require
from ..scrub import control
from ..units import format_seconds
from ..vega import StaticExplorer, book_altair, book_figure
from .live import Explorer, _chip_value, _control_widget, _new_figure

__all__ = [
    "BLOCKS_K",
    "CHIPS",
    "REUSES",
    "SHOWN_STEPS",
    "TILES",
    "K",
    "overlap_explorer",
    "overlap_figure",
    "overlap_static",
]

#: Chips offered: one per generation with a different asynchronous machinery.
CHIPS: tuple[str, ...] = ("A100-80GB", "H100-SXM", "B200")
#: Output tiles offered: (label, (BLOCK_M, BLOCK_N)).
TILES: tuple[tuple[str, tuple[int, int]], ...] = (
    ("64 × 64", (64, 64)),
    ("128 × 128", (128, 128)),
    ("256 × 128", (256, 128)),
    ("256 × 256", (256, 256)),
)
BLOCKS_K: tuple[int, ...] = (32, 64)
#: Tiles sharing each HBM fetch of a panel (through L2); see gpuperf.asynchrony.tile_overlap.
REUSES: tuple[int, ...] = (1, 2, 4, 8)
#: The reduction length of the modelled matmul (fp16).
K = 4096
PRECISION = "fp16"
#: K steps drawn on the timeline.
SHOWN_STEPS = 6

_LOAD, _MATH = "tab:blue", "tab:orange"
_LANES = {"sync": 2.6, "async_load": 1.3, "async_math": 0.5}
_HEIGHT = 0.6


def _schedule(
    result: TileOverlap, steps: int = SHOWN_STEPS
) -> dict[str, list[tuple[float, float]]]:
    """(start, duration) of every load and multiply of the first ``steps`` steps, both ways.

    Synchronous: load i then math i, back to back. Asynchronous: load i starts when the copy
    engine is free *and* a buffer is free, i.e. every max(load, math) after the first; math i
    starts when load i has landed and math i − 1 is done.
    """
    load, mth = result.load_s, result.math_s
    period = max(load, mth)
    sync_load = [(i * (load + mth), load) for i in range(steps)]
    sync_math = [(i * (load + mth) + load, mth) for i in range(steps)]
    async_load = [(i * period, load) for i in range(steps)]
    async_math = [(load + i * period, mth) for i in range(steps)]
    return {
        "sync_load": sync_load,
        "sync_math": sync_math,
        "async_load": async_load,
        "async_math": async_math,
    }


class _OverlapView:
    """Two timelines of the first K steps: synchronous on top, overlapped below."""

    def __init__(
        self, *, figsize: tuple[float, float] | None = None, dpi: int = 80, pyplot: bool = False
    ) -> None:
        """``pyplot=True`` draws on a pyplot figure (a static figure in a notebook, shown with
        ``plt.show()``), in the book's style: as wide as a phone's column allows with every word
        legible (:mod:`gpuperf.figures`). The default is an off-screen figure for the explorer.
        ``figsize`` defaults to the one that suits each."""
        patches = require("matplotlib.patches", "pip install matplotlib")
        if flag("pyplot", pyplot):
            from ..figures import FONT_PT, RC, WIDTH_IN

            matplotlib = require("matplotlib", "pip install matplotlib")
            plt = require("matplotlib.pyplot", "pip install matplotlib")
            with matplotlib.rc_context(RC):
                self.figure = plt.figure(figsize=figsize or (WIDTH_IN, 3.4), layout="constrained")
                self._draw(patches, wrap_label=True)
            self.figure.axes[0].tick_params(labelsize=FONT_PT)
        else:
            self.figure = _new_figure(figsize or (7.2, 3.0), dpi)
            self._draw(patches, wrap_label=False)
            self.figure.subplots_adjust(left=0.2, right=0.97, top=0.86, bottom=0.17)

    def _draw(self, patches: Any, *, wrap_label: bool) -> None:
        """The lanes, bars and key; ``wrap_label`` fits the words to a phone-width figure."""
        figure = self.figure
        ax = figure.subplots()
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 3.4)
        ax.set_yticks(
            [_LANES["sync"] + _HEIGHT / 2, _LANES["async_load"] + _HEIGHT / 2,
             _LANES["async_math"] + _HEIGHT / 2],
            ["no overlap", "async: loads", "async: math"],
        )  # fmt: skip
        label = f"time, in units of the first {SHOWN_STEPS} steps without overlap"
        ax.set_xlabel(label.replace("steps ", "steps\n") if wrap_label else label)
        ax.grid(True, axis="x", alpha=0.3)
        ax.axhline(2.1, color="grey", lw=0.6)
        self.bars: dict[str, list[Any]] = {}
        for key, lane, color in (
            ("sync_load", "sync", _LOAD),
            ("sync_math", "sync", _MATH),
            ("async_load", "async_load", _LOAD),
            ("async_math", "async_math", _MATH),
        ):
            self.bars[key] = [
                ax.add_patch(
                    patches.Rectangle((0, _LANES[lane]), 0, _HEIGHT, color=color, ec="white")
                )
                for _ in range(SHOWN_STEPS)
            ]
        ax.legend(
            handles=[
                patches.Patch(color=_LOAD, label="load A, B panels"),
                patches.Patch(color=_MATH, label="tensor-core math"),
            ],
            loc="upper center",
            bbox_to_anchor=(0.5, 1.2),
            ncol=2,
            frameon=False,
            # on a phone-width figure the two entries only fit side by side held close
            **({"handlelength": 1.0, "columnspacing": 0.8} if wrap_label else {}),
        )
        (self.end,) = ax.plot([], [], color="black", lw=1.2, ls="--")
        self.animated = [bar for bars in self.bars.values() for bar in bars] + [self.end]
        self.last: TileOverlap | None = None

    def update(
        self, chip_name: str, tile: tuple[int, int], block_k: int = 64, reuse: int = 1
    ) -> str:
        block_m, block_n = tile
        result = tile_overlap(chip_name, block_m, block_n, block_k, K, PRECISION, reuse)
        self.last = result
        shown = _schedule(result)
        scale = SHOWN_STEPS * (result.load_s + result.math_s)
        for key, spans in shown.items():
            for bar, (start, width) in zip(self.bars[key], spans, strict=True):
                bar.set_x(start / scale)
                bar.set_width(width / scale)
        start, width = shown["async_math"][-1]
        finish = (start + width) / scale
        self.end.set_data([finish, finish], [0.3, 2.0])
        return (
            f"{result.chip_name}, {block_m} × {block_n} × {block_k} fp16 tile, K = {K} "
            f"({result.steps} steps), each panel byte from HBM shared by {reuse} "
            f"tile{'s' if reuse != 1 else ''}; per step: load "
            f"{format_seconds(result.load_s)}, math {format_seconds(result.math_s)} → "
            f"{result.bound}-bound. Whole loop: "
            f"{format_seconds(result.serial_s)} without overlap, "
            f"{format_seconds(result.overlapped_s)} with ({result.speedup:.2f}×); tensor cores "
            f"busy {result.tensor_busy_serial:.0%} → {result.tensor_busy_overlapped:.0%}"
        )

    def render(
        self, chip_name: str, tile: tuple[int, int], block_k: int = 64, reuse: int = 1
    ) -> tuple[Any, str]:
        return self.figure, self.update(chip_name, tile, block_k, reuse)


def overlap_figure(
    chip_name: str = "H100-SXM",
    tile: tuple[int, int] = (128, 128),
    block_k: int = 64,
    reuse: int = 1,
) -> Any:
    """The explorer's two timelines for one setting, as a pyplot ``Figure`` for a notebook cell
    (end the cell with ``plt.show()``). Any tile the calculator accepts, not only the
    explorer's options."""
    tile = int_pair("tile", tile)
    tile_overlap(chip_name, *tile, block_k, K, PRECISION, reuse)  # check before drawing
    view = _OverlapView(pyplot=True)
    view.update(chip_name, tile, block_k, reuse)
    return view.figure


def overlap_explorer(
    chip_name: str = "H100-SXM",
    tile: tuple[int, int] = (128, 128),
    block_k: int = 64,
    reuse: int = 1,
) -> Explorer:
    """Chip × tile × BK × HBM reuse → the K loop's timeline with and without overlap."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    controls = {
        "chip_name": _control_widget(
            widgets.Dropdown, "chip_name", options=[(c, c) for c in CHIPS],
            value=_chip_value(chip_name), description="chip",
        ),
        "tile": _control_widget(
            widgets.Dropdown, "tile", options=list(TILES), value=int_pair("tile", tile),
            description="tile",
        ),
        "block_k": _control_widget(
            widgets.Dropdown, "block_k", options=list(BLOCKS_K), value=block_k,
            description="BLOCK_K",
        ),
        "reuse": _control_widget(
            widgets.Dropdown, "reuse", options=list(REUSES), value=reuse,
            description="HBM reuse",
        ),
    }  # fmt: skip
    return Explorer.for_view(
        _OverlapView(), controls, title="Overlap: load the next panel while multiplying this one"
    )


@book_figure
def overlap_static(
    chip_name: str = "H100-SXM",
    tile: tuple[int, int] = (128, 128),
    block_k: int = 64,
    reuse: int = 1,
    *,
    colab: str = "",
) -> StaticExplorer:
    """Static twin of :func:`overlap_explorer` for the online book (a
    :class:`gpuperf.vega.StaticExplorer`): chip × tile × BLOCK_K × HBM reuse, every value the
    live drop-downs offer (:data:`CHIPS`, :data:`TILES`, :data:`BLOCKS_K`, :data:`REUSES`; 96
    combinations). Every bar and the dashed end line are read from an :class:`_OverlapView`
    after its ``update``, and the line under the figure is the live status line. The arguments
    are the initial values."""
    from matplotlib.colors import to_hex

    alt = book_altair()
    labels = {shape: label for label, shape in TILES}
    controls = [
        control("chip_name", CHIPS, label="chip", initial=_chip_value(chip_name)),
        control(
            "tile",
            [shape for _label, shape in TILES],
            label="tile",
            format=labels.get,
            initial=int_pair("tile", tile),
        ),
        control("block_k", BLOCKS_K, label="BLOCK_K", initial=block_k),
        control("reuse", REUSES, label="HBM reuse", initial=reuse),
    ]
    view = _OverlapView(dpi=72)
    explorer = StaticExplorer(
        controls,
        alt=(
            f"Two timelines of a matmul tile's first {SHOWN_STEPS} K steps: on top, loads (blue) "
            "and tensor-core math (orange) alternate; below, loads run on their own lane while "
            "the math of the previous panel proceeds, ending earlier at the dashed line."
        ),
        note=lambda **values: view.update(**values),
        colab=colab,
        dropdowns=("block_k", "reuse"),
    )
    kinds = {"sync_load": "load", "sync_math": "math", "async_load": "load", "async_math": "math"}
    legend = ("load A, B panels", "tensor-core math")
    names = {"load": legend[0], "math": legend[1]}

    def bars(**values: Any) -> list[dict[str, Any]]:
        view.update(**values)
        rows = []
        for key, patches in view.bars.items():
            for step, bar in enumerate(patches):
                start, width = float(bar.get_x()), float(bar.get_width())
                rows.append(
                    {
                        "kind": names[kinds[key]],
                        "step": step + 1,
                        "x": start,
                        "x2": start + width,
                        "width": width,
                        "y": float(bar.get_y()),
                        "y2": float(bar.get_y() + bar.get_height()),
                    }
                )
        return rows

    def end(**values: Any) -> dict[str, Any]:
        view.update(**values)
        xs, ys = view.end.get_data()
        return {"x": float(xs[0]), "y": float(min(ys)), "y2": float(max(ys))}

    x = alt.X(
        "x:Q",
        title=f"time, in units of the first {SHOWN_STEPS} steps without overlap",
        scale=alt.Scale(domain=[0, 1.02], nice=False),
    )
    centres = [_LANES[lane] + _HEIGHT / 2 for lane in ("async_math", "async_load", "sync")]
    lane_names = ("async: math", "async: loads", "no overlap")
    label_expr = (
        " : ".join(
            f"datum.value < {(a + b) / 2:.3f} ? '{name}'"
            for a, b, name in zip(centres, centres[1:], lane_names, strict=False)
        )
        + f" : '{lane_names[-1]}'"
    )
    y = alt.Y(
        "y:Q",
        title=None,
        scale=alt.Scale(domain=[0, 3.4], nice=False),
        axis=alt.Axis(values=[round(c, 3) for c in centres], labelExpr=label_expr, grid=False),
    )
    colours = [to_hex(_LOAD), to_hex(_MATH)]
    explorer.chart(
        alt.layer(
            explorer.table("bars", bars)
            .mark_rect(stroke="white", strokeWidth=1)
            .encode(
                x=x,
                x2="x2:Q",
                y=y,
                y2="y2:Q",
                color=alt.Color(
                    "kind:N",
                    title=None,
                    scale=alt.Scale(domain=list(legend), range=colours),
                    legend=alt.Legend(orient="top"),
                ),
                tooltip=[
                    alt.Tooltip("kind:N", title="work"),
                    alt.Tooltip("step:Q", title="K step"),
                    alt.Tooltip("x:Q", title="starts at", format=".3f"),
                    alt.Tooltip("width:Q", title="lasts", format=".3f"),
                ],
            ),
            explorer.table("separator", lambda: {"y": 2.1}, over=())
            .mark_rule(color="grey", strokeWidth=0.6)
            .encode(y=y),
            explorer.table("end", end)
            .mark_rule(color="black", strokeWidth=1.2, strokeDash=[5, 3])
            .encode(x=x, y=y, y2="y2:Q"),
        )
        .properties(height=200, title="Overlap: load the next panel while multiplying this one")
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer
