"""The online book's twins of the live explorers: every control, drawn in the browser, no kernel.

Each function here builds a :class:`gpuperf.vega.StaticExplorer` with the same controls as one
ipywidgets explorer of :mod:`gpuperf.widgets` and fills its tables from the same calculators the
live view calls (:mod:`gpuperf.roofline`, :mod:`gpuperf.tiling`, :mod:`gpuperf.attention`). No
formula lives here: a table row is a calculator's result, the browser only selects rows. Where a
live slider is continuous (wave quantization's N runs over every integer), the static figure
offers a grid of its values, named in the page's text.

======================================  ====================================================
live explorer                           static twin
======================================  ====================================================
:func:`~.roofline.roofline_explorer`     :func:`roofline_static`: chip, precision, operation,
                                        tokens, width
:func:`~.tiles.wave_explorer`            :func:`wave_static`: N, tile, chip
:func:`~.attention.online_softmax_explorer`  :func:`online_softmax_static`: block size, blocks read
:func:`~.attention.attention_explorer`   :func:`attention_static`: N, d, chip, SRAM, precision
======================================  ====================================================
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from .. import plots
from .._validate import file_path
from ..hardware import chip
from ..roofline import attainable_flops, critical_batch_size, time_bounds
from ..runtime import require
from ..scrub import control
from ..units import PRECISIONS, format_bytes, format_flops, format_seconds
from ..vega import StaticExplorer, book_altair, book_figure

__all__ = [
    "attention_static",
    "colab_url",
    "online_softmax_static",
    "roofline_static",
    "wave_static",
]

_COLAB = "https://colab.research.google.com/github/"


def colab_url(notebook: str, start: str | Path = ".") -> str:
    """The "open in Colab" URL of ``notebook`` (a path in the repository, such as
    ``"chapters/02_roofline.ipynb"``), from ``repository`` in the book's ``_config.yml``, found
    in ``start`` or a folder above it; ``""`` where there is none (e.g. inside Colab)."""
    if not isinstance(notebook, str) or not notebook.endswith(".ipynb"):
        raise ValueError(f"notebook={notebook!r} must be a repository path ending in .ipynb")
    start = file_path("start", start).resolve()
    for folder in [start, *start.parents]:
        config = folder / "_config.yml"
        if config.is_file():
            yaml = require("yaml", "pip install pyyaml")
            repository = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get(
                "repository", {}
            )
            url = str(repository.get("url", ""))
            if not url.startswith("https://github.com/"):
                return ""
            branch = repository.get("branch", "main")
            return f"{_COLAB}{url.removeprefix('https://github.com/')}/blob/{branch}/{notebook}"
    return ""


# --- chapter 2: the roofline ------------------------------------------------------------------

#: The static roofline's token batches and widths: every other value of the live sliders
#: (powers of 4 up to 64 Ki tokens; D = F from 1024 to 16384), so the page stays light.
ROOFLINE_TOKENS = tuple(4**i for i in range(0, 9))
ROOFLINE_WIDTHS = (1024, 4096, 16384)
#: Axis ranges of the live view (FLOP/byte, FLOP/s): fixed, so a point visibly moves.
INTENSITY_RANGE = (0.03, 3e4)
FLOPS_RANGE = (1e9, 3e16)


@book_figure
def roofline_static(
    chip_name: str = "H100-SXM",
    precision: str = "bf16",
    op: str = "matmul",
    tokens: int = 64,
    width: int = 4096,
    *,
    colab: str = "",
) -> StaticExplorer:
    """Static twin of :func:`gpuperf.widgets.roofline.roofline_explorer`: chip × precision ×
    operation × tokens × width, the operation's point on the chip's roofline and its time
    bounds. The arguments are the initial control values."""
    from .roofline import OPERATIONS, _chip_options, _describe, _operation

    alt = book_altair()
    names = [value for _, value in _chip_options()]
    controls = [
        control("chip_name", names, label="chip", initial=chip(chip_name).name),
        control("precision", PRECISIONS, label="precision", initial=precision),
        control("op", OPERATIONS, label="operation", initial=op),
        control(
            "tokens",
            ROOFLINE_TOKENS,
            label="tokens B / N",
            initial=tokens,
            format=lambda t: f"{t:,}",
        ),
        control("width", ROOFLINE_WIDTHS, label="D = F", initial=width, format=lambda w: f"{w:,}"),
    ]
    explorer = StaticExplorer(
        controls,
        alt=(
            "Log-log roofline of the chosen chip and precision (attainable FLOP/s against "
            "arithmetic intensity) with the chosen operation as a red point on it; below, bars "
            "compare T_math with T_comms in seconds, and the sentence names the bound."
        ),
        colab=colab,
    )

    def roof(chip_name: str, precision: str) -> list[dict[str, Any]]:
        the_chip = chip(chip_name)
        if precision not in the_chip.precisions:
            return []
        low, high = INTENSITY_RANGE
        ridge = the_chip.ridge_point(precision)
        xs = [low, ridge, high] if low < ridge < high else [low, high]
        return [{"x": x, "y": float(attainable_flops(x, the_chip, precision))} for x in xs]

    def missing(chip_name: str, precision: str) -> list[dict[str, Any]]:
        the_chip = chip(chip_name)
        if precision in the_chip.precisions:
            return []
        return [{"text": f"{the_chip.name} has no {precision} rate in the table"}]

    def point(
        chip_name: str, precision: str, op: str, tokens: int, width: int
    ) -> list[dict[str, Any]]:
        the_chip = chip(chip_name)
        if precision not in the_chip.precisions:
            return []
        the_op = _operation(op, tokens, width, precision)
        bounds = time_bounds(the_op, the_chip, precision)
        verdict = plots._bound_in_words(bounds)
        if op == "matmul":
            critical = critical_batch_size(the_chip, precision, d=width, f=width)
            verdict += (
                f"\ncompute-bound once B > {critical:.0f}"
                if critical != float("inf")
                else "\nnever compute-bound at this width"
            )
        return [
            {
                "x": bounds.intensity,
                "y": bounds.attainable_flops_per_s,
                "label": f"{bounds.intensity:.3g} FLOP/B",
                "t_math_s": bounds.t_math_s,
                "t_comms_s": bounds.t_comms_s,
                "math_text": format_seconds(bounds.t_math_s),
                "comms_text": format_seconds(bounds.t_comms_s),
                "what": (
                    f"{_describe(op, tokens, width)}\n{format_flops(the_op.flops)[:-2]}, "
                    f"{format_bytes(the_op.bytes)}"
                ),
                "verdict": verdict,
            }
        ]

    x_scale = alt.Scale(type="log", domain=list(INTENSITY_RANGE))
    y_scale = alt.Scale(type="log", domain=list(FLOPS_RANGE))
    x_axis = alt.X("x:Q", scale=x_scale, title="arithmetic intensity (FLOP/byte)")
    y_axis = alt.Y("y:Q", scale=y_scale, title="attainable FLOP/s", axis=alt.Axis(format="~s"))
    roof_chart = explorer.table("roof", roof, over=("chip_name", "precision"))
    point_chart = explorer.table("point", point)
    missing_chart = explorer.table("missing", missing, over=("chip_name", "precision"))
    roofline = alt.layer(
        roof_chart.mark_line(color="black", strokeWidth=2.2, clip=True).encode(x=x_axis, y=y_axis),
        point_chart.mark_point(filled=True, size=110, color="#d62728", stroke="black").encode(
            x=x_axis, y=y_axis, tooltip=["what:N", "label:N", "verdict:N"]
        ),
        point_chart.mark_text(align="left", baseline="top", dx=8, dy=8, fontSize=12).encode(
            x=x_axis, y=y_axis, text="label:N"
        ),
        missing_chart.mark_text(fontSize=13, color="#444").encode(
            x=alt.value(10), y=alt.value(20), text="text:N"
        ),
        point_chart.mark_text(
            align="left", baseline="top", fontSize=12, color="#222", lineBreak="\n"
        ).encode(x=alt.value(4), y=alt.value(4), text="what:N"),
    ).properties(height=260)
    bars = (
        point_chart.transform_fold(["t_math_s", "t_comms_s"], as_=["time", "seconds"])
        .transform_calculate(
            name="datum.time == 't_math_s' ? 'T_math = ' + datum.math_text"
            " : 'T_comms = ' + datum.comms_text",
            order="datum.time == 't_math_s' ? 0 : 1",
        )
        .encode(
            y=alt.Y(
                "name:N",
                title=None,
                sort=alt.EncodingSortField("order"),
                axis=alt.Axis(labelFontSize=12, labelLimit=200),
            ),
            x=alt.X(
                "seconds:Q",
                title="seconds (longer bar = the bound)",
                axis=alt.Axis(format="~s", tickCount=4),
            ),
        )
    )
    time_bars = alt.layer(
        bars.mark_bar(height=18).encode(
            color=alt.Color(
                "time:N",
                legend=None,
                scale=alt.Scale(domain=["t_math_s", "t_comms_s"], range=["#ff7f0e", "#1f77b4"]),
            )
        ),
        point_chart.mark_text(
            align="left", baseline="bottom", fontSize=12, fontWeight="bold", lineBreak="\n"
        ).encode(x=alt.value(0), y=alt.value(-6), text="verdict:N"),
    ).properties(height=70)
    explorer.chart(
        alt.vconcat(roofline, time_bars, spacing=48).configure_axis(
            labelFontSize=11, titleFontSize=12
        )
    )
    return explorer


# --- chapter 3.7: wave quantization -----------------------------------------------------------

#: The static N grid: every multiple of 128 from 256 to 8192 and the size one above it, so each
#: "one more row" step (2048 → 2049, 4096 → 4097, …) is one notch of the slider.
WAVE_SIZES: tuple[int, ...] = tuple(
    n for base in range(256, 8192 + 1, 128) for n in (base, base + 1) if n <= 8192
)


def _steps(xs: Any, ys: Any) -> list[dict[str, Any]]:
    """The points of a step function where its value changes (plus its first and last), drawn
    with ``interpolate="step-after"``: the same curve with a fraction of the points."""
    rows = []
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        if i == 0 or i == len(xs) - 1 or y != ys[i - 1]:
            rows.append({"n": int(x), "efficiency": float(y)})
    return rows


@book_figure
def wave_static(
    size: int = 2048,
    tile: tuple[int, int] = (256, 128),
    chip_name: str = "H100-SXM",
    *,
    colab: str = "",
) -> StaticExplorer:
    """Static twin of :func:`gpuperf.widgets.tiles.wave_explorer`: N × tile × chip. The curve
    is the live view's sawtooth (every N from 256 to 8192, stored where it steps); N moves over
    :data:`WAVE_SIZES`."""
    from .tiles import CHIPS, SIZES, TILE_SHAPES, _WaveView

    alt = book_altair()
    labels = {shape: label for label, shape in TILE_SHAPES}
    controls = [
        control("size", WAVE_SIZES, label="N", initial=size, format=lambda n: f"{n:,}"),
        control(
            "tile",
            [shape for _, shape in TILE_SHAPES],
            label="tile",
            initial=tile,
            format=labels.get,
        ),
        control("chip_name", CHIPS, label="chip", initial=chip_name),
    ]
    view = _WaveView(dpi=72)
    explorer = StaticExplorer(
        controls,
        alt=(
            "Step plot of wave efficiency against matrix size N for the chosen tile and chip, "
            "with a red marker at the chosen N."
        ),
        note=lambda size, tile, chip_name: view.update(size, tile, chip_name),
        colab=colab,
    )

    def curve(tile: tuple[int, int], chip_name: str) -> list[dict[str, Any]]:
        view.update(int(SIZES[0]), tile, chip_name)
        return _steps(view.curve.get_xdata(), view.curve.get_ydata())

    def marker(size: int, tile: tuple[int, int], chip_name: str) -> dict[str, Any]:
        view.update(size, tile, chip_name)
        (x,), (y,) = view.marker.get_data()
        return {"n": int(x), "efficiency": float(y)}

    x = alt.X(
        "n:Q",
        title="matrix size N (N × N output)",
        scale=alt.Scale(domain=[int(SIZES[0]), int(SIZES[-1])], nice=False),
    )
    y = alt.Y(
        "efficiency:Q",
        title="wave efficiency",
        scale=alt.Scale(domain=[0, 1.08]),
        axis=alt.Axis(format="%"),
    )
    line = explorer.table("curve", curve, over=("tile", "chip_name"))
    point = explorer.table("marker", marker)
    explorer.chart(
        alt.layer(
            line.mark_line(interpolate="step-after", color="#1f77b4", strokeWidth=1.4).encode(
                x=x, y=y
            ),
            point.mark_rule(color="#d62728", strokeDash=[2, 3]).encode(x=x),
            point.mark_point(filled=True, size=120, color="#d62728", stroke="black").encode(
                x=x, y=y
            ),
        )
        .properties(height=240, title="wave efficiency = tiles / (waves × SMs)")
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
    )
    return explorer


# --- chapter 4: online softmax ------------------------------------------------------------------


@book_figure
def online_softmax_static(
    row: Any = None, block_size: int = 4, step: int = 2, *, colab: str = ""
) -> StaticExplorer:
    """Static twin of :func:`gpuperf.widgets.attention.online_softmax_explorer`: block size ×
    blocks read. The live slider ends at the last block of the chosen size; here it runs to the
    last block of the smallest size, and steps beyond a larger size's last block show its final
    state (as the live view does when asked)."""
    import math

    from .attention import BLOCK_SIZES, EXAMPLE_ROW, _OnlineSoftmaxView

    alt = book_altair()
    view = _OnlineSoftmaxView(EXAMPLE_ROW if row is None else row)
    n = view.row.size
    sizes = tuple(b for b in BLOCK_SIZES if b < n) or (1,)
    steps = tuple(range(math.ceil(n / min(sizes)) + 1))
    controls = [
        control("block_size", sizes, label="block size", initial=block_size),
        control("step", steps, label="blocks read", initial=step),
    ]
    explorer = StaticExplorer(
        controls,
        alt=(
            f"Bar chart of {n} attention scores with the blocks read so far shaded and the "
            "running maximum as a red line; below, the softmax computed from the running max "
            "and sum as blue bars against the exact softmax as black ticks, which they match "
            "once every block has been read."
        ),
        note=lambda block_size, step: view.update(step, block_size),
        colab=colab,
        dropdowns=("block_size",),
    )

    def scores() -> list[dict[str, Any]]:
        return [{"i": i, "x": float(x)} for i, x in enumerate(view.row)]

    def exact() -> list[dict[str, Any]]:
        return [{"i": i, "p": float(p)} for i, p in enumerate(view.softmax)]

    def spans(block_size: int, step: int) -> list[dict[str, Any]]:
        view.update(step, block_size)
        rows = []
        for name, patch in (("read", view.done_span), ("this block", view.block_span)):
            x0, x1 = patch.get_x(), patch.get_x() + patch.get_width()
            if x1 > x0:
                rows.append({"what": name, "x0": float(x0), "x1": float(x1)})
        return rows

    def maxima(block_size: int, step: int) -> list[dict[str, Any]]:
        view.update(step, block_size)
        rows = []
        for name, line in (
            ("running max m", view.max_line),
            ("max before this block", view.old_max_line),
        ):
            xs, ys = line.get_data()
            if len(xs):
                rows.append(
                    {"what": name, "x0": float(xs[0]), "x1": float(xs[1]), "m": float(ys[0])}
                )
        return rows

    def estimate(block_size: int, step: int) -> list[dict[str, Any]]:
        view.update(step, block_size)
        return [
            {"i": int(seg[0][0]), "p": float(seg[1][1])} for seg in view.estimate.get_segments()
        ]

    x = alt.X(
        "i:Q",
        title="position in the row",
        scale=alt.Scale(domain=[-0.6, n - 0.4]),
        axis=alt.Axis(tickMinStep=1),
    )
    shade = alt.Color(
        "what:N",
        title=None,
        legend=alt.Legend(orient="top"),
        scale=alt.Scale(domain=["read", "this block"], range=["#c6dbef", "#fdd0a2"]),
    )
    lines = alt.Color(
        "what:N",
        title=None,
        legend=alt.Legend(orient="top"),
        scale=alt.Scale(
            domain=["running max m", "max before this block"], range=["#d62728", "#ff9896"]
        ),
    )
    top = (
        alt.layer(
            explorer.table("spans", spans)
            .mark_rect()
            .encode(
                x=alt.X("x0:Q", scale=alt.Scale(domain=[-0.6, n - 0.4]), title=None),
                x2="x1:Q",
                color=shade,
            ),
            explorer.table("scores", scores, over=())
            .mark_bar(color="#999", size=12)
            .encode(
                x=alt.X("i:Q", scale=alt.Scale(domain=[-0.6, n - 0.4]), title=None),
                y=alt.Y("x:Q", title="score x"),
            ),
            explorer.table("max", maxima)
            .mark_rule(strokeWidth=2.5)
            .encode(
                x=alt.X("x0:Q", scale=alt.Scale(domain=[-0.6, n - 0.4]), title=None),
                x2="x1:Q",
                y="m:Q",
                color=lines,
            ),
        )
        .resolve_scale(color="independent")
        .properties(height=170, title="scores, streamed block by block")
    )
    bottom = alt.layer(
        explorer.table("estimate", estimate)
        .mark_bar(color="#1f77b4", size=9)
        .encode(x=x, y=alt.Y("p:Q", title="probability")),
        explorer.table("exact", exact, over=())
        .mark_tick(color="black", thickness=2, size=14, orient="horizontal")
        .encode(x=x, y="p:Q"),
    ).properties(height=150, title="exp(x − m) / ℓ so far (blue) and the exact softmax (black)")
    explorer.chart(
        alt.vconcat(top, bottom, spacing=16)
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer


# --- chapter 4: attention on the roofline --------------------------------------------------------

#: The static attention figure's chips: one GPU per generation the chapter discusses.
ATTENTION_CHIPS = ("T4", "A100-80GB", "H100-SXM")


@book_figure
def attention_static(
    seq_len: int = 16384,
    head_dim: int = 128,
    chip_name: str = "H100-SXM",
    sram_kib: int = 0,
    precision: str = "fp16",
    *,
    chip_names: tuple[str, ...] = ATTENTION_CHIPS,
    colab: str = "",
) -> StaticExplorer:
    """Static twin of :func:`gpuperf.widgets.attention.attention_explorer`: N × d × chip ×
    SRAM × precision, every value of the live controls except the chips, which are
    ``chip_names``. Every number is read from the live view after its ``update``."""
    from .attention import (
        _FLOPS,
        _INTENSITY,
        _TRAFFIC,
        ATTENTION_PRECISIONS,
        HEAD_DIMS,
        SEQ_LENS,
        SRAM_CHOICES_KIB,
        _AttentionView,
    )

    alt = book_altair()
    sram_labels = {0: "chip max/block", **{k: f"{k} KiB" for k in SRAM_CHOICES_KIB}}
    controls = [
        control("seq_len", SEQ_LENS, label="N", initial=seq_len, format=lambda n: f"{n:,}"),
        control("head_dim", HEAD_DIMS, label="d", initial=head_dim),
        control("chip_name", chip_names, label="chip", initial=chip_name),
        control(
            "sram_kib", tuple(sram_labels), label="SRAM", initial=sram_kib, format=sram_labels.get
        ),
        control("precision", ATTENTION_PRECISIONS, label="precision", initial=precision),
    ]
    view = _AttentionView()

    kinds = ("standard", "FlashAttention-2", "FA-2, K/V re-reads hit L2")

    @cache
    def snapshot(
        seq_len: int, head_dim: int, chip_name: str, sram_kib: int, precision: str
    ) -> dict[str, Any]:
        """The view after one update, as plain numbers: each combination is drawn once, and the
        note, the points and the curves read the same update."""
        status = view.update(seq_len, head_dim, chip_name, sram_kib, precision)
        points = []
        artists = (view.standard_point, view.flash_point, view.ideal_point)
        for kind, artist in zip(kinds, artists, strict=True):
            xs, ys = artist.get_data()
            if len(xs):
                points.append({"kind": kind, "x": float(xs[0]), "y": float(ys[0])})
        curves = []
        for kind, line in (
            ("standard", view.standard_curve),
            ("FlashAttention-1", view.flash1_curve),
            ("FlashAttention-2", view.flash_curve),
            ("FA-2, K/V re-reads hit L2", view.ideal_curve),
        ):
            xs, ys = line.get_data()
            curves += [
                {"kind": kind, "n": int(x), "bytes": float(y)} for x, y in zip(xs, ys, strict=True)
            ]
        return {"status": status, "points": points, "curves": curves}

    explorer = StaticExplorer(
        controls,
        alt=(
            "Top: the roofline of the chosen GPU and precision with standard attention (red "
            "circle), FlashAttention-2 (blue square) and FlashAttention-2 with its K/V re-reads "
            "served by L2 (white square) at their arithmetic intensities. Bottom: HBM bytes per "
            "head against sequence length for standard attention, FlashAttention-1 and -2, on "
            "log axes, with a grey line at the chosen N."
        ),
        note=lambda **values: snapshot(**values)["status"].replace("<br>", " · "),
        colab=colab,
        dropdowns=("head_dim", "sram_kib"),
    )

    def roof(chip_name: str, precision: str) -> list[dict[str, Any]]:
        the_chip = chip(chip_name)
        if precision not in the_chip.precisions:
            return []
        low, high = _INTENSITY
        ridge = the_chip.ridge_point(precision)
        xs = [low, ridge, high] if low < ridge < high else [low, high]
        return [{"x": x, "y": float(attainable_flops(x, the_chip, precision))} for x in xs]

    def points(**values: Any) -> list[dict[str, Any]]:
        return snapshot(**values)["points"]

    def curves(head_dim: int, chip_name: str, sram_kib: int, precision: str):
        return snapshot(SEQ_LENS[0], head_dim, chip_name, sram_kib, precision)["curves"]

    def chosen(seq_len: int) -> dict[str, Any]:
        return {"n": seq_len}

    colours = alt.Scale(
        domain=[*kinds[:1], "FlashAttention-1", *kinds[1:]],
        range=["#d62728", "#17becf", "#1f77b4", "#1f77b4"],
    )
    x = alt.X(
        "x:Q",
        title="arithmetic intensity (FLOP / HBM byte)",
        scale=alt.Scale(type="log", domain=list(_INTENSITY)),
    )
    y = alt.Y(
        "y:Q",
        title="attainable FLOP/s",
        axis=alt.Axis(format="~s"),
        scale=alt.Scale(type="log", domain=list(_FLOPS)),
    )
    top = alt.layer(
        explorer.table("roof", roof, over=("chip_name", "precision"))
        .mark_line(color="black", strokeWidth=2.2, clip=True)
        .encode(x=x, y=y),
        explorer.table("points", points)
        .mark_point(size=130, filled=True, stroke="black")
        .encode(
            x=x,
            y=y,
            shape=alt.Shape(
                "kind:N",
                title=None,
                legend=alt.Legend(orient="bottom"),
                scale=alt.Scale(domain=list(kinds), range=["circle", "square", "square"]),
            ),
            fill=alt.Fill(
                "kind:N",
                legend=None,
                scale=alt.Scale(domain=list(kinds), range=["#d62728", "#1f77b4", "white"]),
            ),
            tooltip=["kind:N", alt.Tooltip("x:Q", title="FLOP/B", format=".3g")],
        ),
    ).properties(height=230, title="forward pass on the roofline")
    n_axis = alt.X(
        "n:Q",
        title="sequence length N",
        scale=alt.Scale(type="log", base=2, domain=[SEQ_LENS[0], SEQ_LENS[-1]]),
        axis=alt.Axis(values=list(SEQ_LENS[::2]), format=",d"),
    )
    bottom = alt.layer(
        explorer.table("curves", curves, over=("head_dim", "chip_name", "sram_kib", "precision"))
        .mark_line(strokeWidth=2)
        .encode(
            x=n_axis,
            y=alt.Y(
                "bytes:Q",
                title="HBM bytes per head",
                axis=alt.Axis(format="~s"),
                scale=alt.Scale(type="log", domain=list(_TRAFFIC)),
            ),
            color=alt.Color(
                "kind:N", title=None, scale=colours, legend=alt.Legend(orient="bottom", columns=2)
            ),
            strokeDash=alt.StrokeDash(
                "kind:N",
                legend=None,
                scale=alt.Scale(
                    domain=[
                        "standard",
                        "FlashAttention-1",
                        "FlashAttention-2",
                        "FA-2, K/V re-reads hit L2",
                    ],
                    range=[[1, 0], [6, 3], [1, 0], [2, 2]],
                ),
            ),
        ),
        explorer.table("n", chosen, over=("seq_len",)).mark_rule(color="#666").encode(x=n_axis),
    ).properties(height=200, title="HBM traffic vs N")
    explorer.chart(
        alt.vconcat(top, bottom, spacing=20)
        .resolve_scale(color="independent", shape="independent", fill="independent")
        .configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11, labelLimit=260)
    )
    return explorer
