"""Section 3.1 explorer: the rounding error of a long dot product, by format and accumulator.

:func:`accumulation_explorer` plots, against the vector length ``n`` (log-log), the relative
error of a dot product whose inputs are stored in one format and summed left to right in an
accumulator of another — emulated by :func:`gpuperf.numerics.dot_errors`, bit-exact to the torch
demonstration in the chapter — next to the worst-case bound ``γ_n = n·u / (1 - n·u)`` and the
typical ``√n·u`` of :mod:`gpuperf.numerics`. The reader picks the input format, the accumulator
and a length; the status line gives the numbers at that length. With an fp16 or bf16
accumulator the error leaves the typical line and the sum *stagnates*: each new term is below
half an ulp of the running sum, and the curve bends up toward 1.

No formula lives here: the curves are computed once per (format, accumulator) by the
calculator and cached. :func:`accumulation_static` is the online book's client-side figure
(Vega-Lite), every control of the live explorer, its curves read from the same view.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import numerics
from .._cache import pure
from ..runtime import require
from ..scrub import control
from ..vega import book_altair, book_figure
from .live import Explorer, _control_widget, _new_figure

__all__ = [
    "ACCUMULATORS",
    "INPUT_FORMATS",
    "LENGTHS",
    "accumulation_explorer",
    "accumulation_static",
    "curve",
]

#: Input formats of the explorer (their products are exact in fp32).
INPUT_FORMATS: tuple[str, ...] = ("fp16", "bf16", "e4m3")
#: Accumulator formats.
ACCUMULATORS: tuple[str, ...] = numerics.ACCUMULATORS
#: Vector lengths the slider offers: powers of two from 16 to 16384.
LENGTHS: tuple[int, ...] = tuple(2**k for k in range(4, 15))
#: Random vectors per length; the plotted error is their mean.
TRIALS = 32
#: Lengths the curves are evaluated at: a geometric grid, 4 points per octave.
CURVE_LENGTHS: tuple[int, ...] = tuple(
    sorted({round(2 ** (k / 4)) for k in range(16, 4 * 14 + 1)})
)
_ERROR_RANGE = (1e-9, 3.0)


@pure
def curve(input_format: str, accumulator: str) -> numerics.DotErrors:
    """The errors plotted for one (input format, accumulator): computed once, then cached."""
    return numerics.dot_errors(CURVE_LENGTHS, input_format, accumulator, trials=TRIALS)


def _finite(values: tuple[float, ...]) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    return np.where(np.isfinite(array), array, np.nan)


class _AccumulationView:
    """Error against length: the emulated mean (and worst of the trials), the bound, √n·u."""

    def __init__(self, *, figsize: tuple[float, float] = (6.4, 3.8), dpi: int = 80) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        ax = figure.subplots()
        figure.subplots_adjust(left=0.13, right=0.97, top=0.9, bottom=0.14)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlim(CURVE_LENGTHS[0] / 1.2, CURVE_LENGTHS[-1] * 1.2)
        ax.set_ylim(*_ERROR_RANGE)
        ax.set_xlabel("vector length n")
        ax.set_ylabel("relative error |ŝ − s| / Σ|xᵢyᵢ|")
        ax.grid(True, which="major", alpha=0.3)
        (self.bound,) = ax.plot([], [], "--", color="black", lw=1.3, label="bound γₙ = nu/(1−nu)")
        (self.typical,) = ax.plot([], [], ":", color="0.35", lw=1.6, label="typical √n·u")
        (self.worst,) = ax.plot([], [], "-", color="tab:orange", lw=1, alpha=0.7, label="worst")
        (self.mean,) = ax.plot([], [], "-", color="tab:blue", lw=2.2, label="mean (emulated)")
        (self.point,) = ax.plot([], [], "o", color="tab:red", mec="black", ms=8, label="chosen n")
        ax.legend(loc="lower right", fontsize=8, ncol=2)
        ax.set_title("left-to-right dot product of positive terms", fontsize=9)
        self.animated = [self.bound, self.typical, self.worst, self.mean, self.point]
        self.last: dict[str, Any] = {}

    def update(self, input_format: str, accumulator: str, length: int) -> str:
        errors = curve(input_format, accumulator)
        n = np.asarray(errors.lengths, dtype=float)
        self.bound.set_data(n, _finite(errors.bound))
        self.typical.set_data(n, errors.typical)
        self.worst.set_data(n, np.maximum(errors.max_error, _ERROR_RANGE[0]))
        self.mean.set_data(n, np.maximum(errors.mean_error, _ERROR_RANGE[0]))
        if length not in errors.lengths:
            raise ValueError(f"length={length!r} must be one of {', '.join(map(str, LENGTHS))}")
        i = errors.lengths.index(length)
        mean, bound, typical = errors.mean_error[i], errors.bound[i], errors.typical[i]
        self.point.set_data([length], [max(mean, _ERROR_RANGE[0])])
        u = numerics.float_format(accumulator).unit_roundoff
        self.last = {"mean": mean, "bound": bound, "typical": typical, "u": u}
        bound_text = f"{bound:.2g}" if np.isfinite(bound) else "none (n·u ≥ 1)"
        return (
            f"{input_format} inputs, {accumulator} accumulator (u = {u:.3g}), n = {length}: "
            f"mean relative error {mean:.2g} over {TRIALS} random vectors; worst-case bound "
            f"{bound_text}; typical √n·u = {typical:.2g}"
        )

    def render(self, input_format: str, accumulator: str, length: int) -> tuple[Any, str]:
        return self.figure, self.update(input_format, accumulator, length)


def accumulation_explorer(
    input_format: str = "fp16", accumulator: str = "fp32", length: int = 4096
) -> Explorer:
    """Input format × accumulator × length → the error curve, the bounds and the chosen point."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    controls = {
        "input_format": _control_widget(
            widgets.ToggleButtons, "input_format", options=[(f, f) for f in INPUT_FORMATS],
            value=input_format, description="inputs",
        ),
        "accumulator": _control_widget(
            widgets.ToggleButtons, "accumulator", options=[(a, a) for a in ACCUMULATORS],
            value=accumulator, description="accumulator",
        ),
        "length": _control_widget(
            widgets.SelectionSlider, "length", options=[(str(n), n) for n in LENGTHS],
            value=length, description="n",
        ),
    }  # fmt: skip
    for fmt in INPUT_FORMATS:  # every curve now (~0.6 s): a first visit would cost 50-100 ms
        for acc in ACCUMULATORS:
            curve(fmt, acc)
    view = _AccumulationView()
    return Explorer.for_view(view, controls, title="Accumulation: the error of a long dot product")


@book_figure
def accumulation_static(
    input_format: str = "fp16", accumulator: str = "fp32", length: int = 4096, *, colab: str = ""
) -> Any:
    """Static twin of :func:`accumulation_explorer` for the online book (a
    :class:`gpuperf.vega.StaticExplorer`): every input format (:data:`INPUT_FORMATS`),
    accumulator (:data:`ACCUMULATORS`) and length (:data:`LENGTHS`) of the live controls. The
    four curves and the chosen point are read from an :class:`_AccumulationView` after its
    ``update``; the line under the figure is the live status line. The arguments are the
    initial values."""
    from ..vega import StaticExplorer

    alt = book_altair()
    view = _AccumulationView(dpi=72)
    explorer = StaticExplorer(
        [
            control("input_format", INPUT_FORMATS, label="inputs", initial=input_format),
            control("accumulator", ACCUMULATORS, label="accumulator", initial=accumulator),
            control("length", LENGTHS, label="n", initial=length),
        ],
        alt=(
            "Log-log plot of the relative error of a dot product against its length n for the "
            "chosen input format and accumulator: the emulated mean error (blue) and worst of "
            "the trials (orange), the worst-case bound n·u/(1−n·u) (dashed) and the typical "
            "√n·u (dotted), with the chosen length as a red point."
        ),
        note=lambda **values: view.update(**values),
        colab=colab,
        dropdowns=("input_format", "accumulator"),
    )
    series = (
        ("bound γₙ = nu/(1−nu)", "bound"),
        ("typical √n·u", "typical"),
        ("worst", "worst"),
        ("mean (emulated)", "mean"),
    )

    def curves(input_format: str, accumulator: str) -> list[dict[str, Any]]:
        view.update(input_format, accumulator, LENGTHS[0])
        rows = []
        for name, attr in series:
            xs, ys = getattr(view, attr).get_data()
            for x, y in zip(xs, ys, strict=True):
                if np.isfinite(y):  # the bound leaves the plot where n·u reaches 1
                    rows.append({"curve": name, "n": float(x), "error": float(y)})
        return rows

    def point(input_format: str, accumulator: str, length: int) -> list[dict[str, Any]]:
        view.update(input_format, accumulator, length)
        xs, ys = view.point.get_data()
        return [{"n": float(xs[0]), "error": float(ys[0])}]

    x = alt.X(
        "n:Q",
        title="vector length n",
        scale=alt.Scale(
            type="log",
            base=2,
            domain=[CURVE_LENGTHS[0] / 1.2, CURVE_LENGTHS[-1] * 1.2],
            nice=False,
        ),
        axis=alt.Axis(values=[2**k for k in range(4, 15, 2)]),
    )
    y = alt.Y(
        "error:Q",
        title="relative error |ŝ − s| / Σ|xᵢyᵢ|",
        scale=alt.Scale(type="log", domain=list(_ERROR_RANGE), nice=False, clamp=True),
        axis=alt.Axis(format=".0e", values=[10.0**k for k in range(-9, 1)]),
    )
    names = [name for name, _ in series]
    chart = alt.layer(
        explorer.table("curves", curves, over=("input_format", "accumulator"))
        .mark_line(clip=True)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "curve:N",
                title=None,
                legend=alt.Legend(orient="bottom", columns=2),
                scale=alt.Scale(domain=names, range=["black", "#595959", "#ff7f0e", "#1f77b4"]),
            ),
            strokeDash=alt.StrokeDash(
                "curve:N",
                legend=None,
                scale=alt.Scale(domain=names, range=[[6, 3], [1, 3], [1, 0], [1, 0]]),
            ),
            strokeWidth=alt.StrokeWidth(
                "curve:N", legend=None, scale=alt.Scale(domain=names, range=[1.3, 1.6, 1, 2.2])
            ),
            detail="curve:N",
        ),
        explorer.table("point", point)
        .mark_point(filled=True, size=100, color="#d62728", stroke="black")
        .encode(x=x, y=y, tooltip=["n:Q", alt.Tooltip("error:Q", format=".2g")]),
    ).properties(height=260, title="left-to-right dot product of positive terms")
    explorer.chart(
        chart.configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer
