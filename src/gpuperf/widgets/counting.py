"""Explorer of counted launches: pick a course kernel, its size and tile, and a chip; see what the
kernel requests from global memory and where that puts it on the chip's roofline.

:func:`counting_explorer` runs the chosen kernel in Triton's CPU interpreter under
:func:`gpuperf.counting.counting` (each combination once, then cached) and draws two points on
the roofline of the chosen chip (:func:`gpuperf.counting.roofline_place`'s numbers): the
intensity over the *requested* bytes (no cache reuse) and over the *unique* bytes (a perfect
cache), the band in which the real DRAM traffic lies. FLOPs are the counted ``tl.dot`` FLOPs
plus elementwise arithmetic; the roof is the tensor cores' for a kernel with ``tl.dot`` in fp16,
else the fp32 peak (the kernels here run in fp32, as the interpreter does). Everything shown is
bytes requested, counted on the CPU — not DRAM traffic, and never a time.

Counting needs the interpreter: on a GPU session the live explorer raises (the kernels are
compiled there) and :func:`counting_static`, the online book's kernel-free twin
(:class:`gpuperf.vega.StaticExplorer`, every control value, rows read from the same view), is
what the book shows.
"""

from __future__ import annotations

from typing import Any

from .. import plots
from .._cache import pure
from ..hardware import chip
from ..roofline import attainable_flops
from ..runtime import require
from ..scrub import control
from ..units import format_bytes, format_flops
from ..vega import StaticExplorer, _roofline_layer, book_altair, book_figure
from .live import Explorer, _chip_value, _control_widget, _new_figure
from .tricks import CHIPS

__all__ = ["KERNELS", "SIZES", "TILES", "counted", "counting_explorer", "counting_static"]

#: Course kernels the explorer counts, by the name its dropdown shows.
KERNELS: tuple[str, ...] = (
    "vector add",
    "transpose naive",
    "transpose tiled",
    "matmul tiled",
    "flash attention forward",
)
#: Problem size N: vector length N², an N × N matrix, an N³ matmul, a sequence of N (d = 32).
#: Small (every count runs in the interpreter) and 48 on purpose: 32-wide tiles leave masked
#: edges there.
SIZES: tuple[int, ...] = (32, 48, 64)
#: Tile (block) size: BLOCK for the tiled kernels; a vector add's block is 16 × this.
TILES: tuple[int, ...] = (16, 32)
HEAD_DIM = 32
_INTENSITY = (1e-2, 1e3)
_FLOPS = (1e9, 2e15)


def _launch(kernel: str, n: int, tile: int) -> Any:
    """The counted launches of one configuration (``gpuperf.counting.Counted``)."""
    import torch

    from .. import kernels
    from ..counting import count
    from ..kernels.flash_attention import FlashConfig, _flash_forward
    from ..runtime import default_device

    gen = torch.Generator().manual_seed(35)
    device = default_device()

    def randn(*shape: int) -> Any:
        return torch.randn(*shape, generator=gen).to(device)

    if kernel == "vector add":
        return count(kernels.vector_add, randn(n * n), randn(n * n), BLOCK_SIZE=16 * tile)
    if kernel == "transpose naive":
        return count(kernels.transpose_naive, randn(n, n), BLOCK_N=tile)
    if kernel == "transpose tiled":
        return count(kernels.transpose_tiled, randn(n, n), BLOCK_M=tile, BLOCK_N=tile)
    if kernel == "matmul tiled":
        return count(kernels.matmul, randn(n, n), randn(n, n), BLOCK_M=tile, BLOCK_N=tile,
                     BLOCK_K=tile)  # fmt: skip
    q, k, v = (randn(1, n, HEAD_DIM) for _ in range(3))
    return count(_flash_forward, q, k, v, False, FlashConfig(tile, tile))


@pure
def counted(kernel: str, n: int, tile: int) -> dict[str, float]:
    """FLOPs, requested and unique bytes, sector efficiency and programs of one configuration,
    counted in the interpreter once and cached."""
    from .._validate import choice

    kernel = choice("kernel", kernel, KERNELS)
    n, tile = choice("n", n, SIZES), choice("tile", tile, TILES)
    launches = _launch(kernel, n, tile).launches
    moved = sum(s.bytes for x in launches for s in x.sites)
    sectors = sum(s.sector_bytes for x in launches for s in x.sites)
    return {
        "flops": float(sum(x.flops for x in launches)),
        "dot_flops": float(sum(x.dot_flops for x in launches)),
        "bytes": float(sum(x.bytes for x in launches)),
        "unique_bytes": float(sum(x.unique_bytes for x in launches)),
        "sector_efficiency": moved / sectors if sectors else 1.0,
        "programs": float(sum(x.programs for x in launches)),
    }


#: The roof: the kernels here run in fp32 and their ``tl.dot`` in IEEE fp32 (no tensor cores),
#: so the chip's CUDA-core fp32 peak.
PRECISION = "fp32"


class _CountingView:
    """Roofline of a chip with a counted launch at its requested and unique intensities."""

    def __init__(self, *, figsize: tuple[float, float] = (6.4, 3.9), dpi: int = 80) -> None:
        self.figure = figure = _new_figure(figsize, dpi)
        ax = figure.subplots()
        figure.subplots_adjust(left=0.13, right=0.97, top=0.9, bottom=0.14)
        self.panel = plots._RooflinePanel(
            ax, intensity_range=_INTENSITY, flops_range=_FLOPS, annotate=False
        )
        self.roof, self.point = self.panel.roof, self.panel.point
        self.point.set_label("requested bytes (no reuse)")
        (self.unique,) = ax.plot(
            [], [], "D", color="tab:green", mec="black", ms=8, label="unique bytes (perfect cache)"
        )
        ax.legend(loc="lower right", fontsize=8)
        ax.set_title("a counted launch on the roofline (fp32)", fontsize=9)
        self.animated = [*self.panel.artists, self.unique]
        self.last: dict[str, Any] = {}

    def update(self, kernel: str, n: int, tile: int, chip_name: str) -> str:
        the_chip = chip(chip_name)
        counts = counted(kernel, n, tile)
        precision = PRECISION
        self.panel.set_roof(the_chip, precision)
        flops = max(counts["flops"], 1.0)
        req = flops / counts["bytes"]
        uniq = flops / counts["unique_bytes"]
        y_req = float(attainable_flops(req, the_chip, precision))
        y_uniq = float(attainable_flops(uniq, the_chip, precision))
        self.panel.set_point(req, y_req)
        self.unique.set_data([uniq], [y_uniq])
        floor = max(counts["flops"] / the_chip.peak_flops(precision),
                    counts["bytes"] / the_chip.hbm_bandwidth)  # fmt: skip
        self.last = {"counts": counts, "requested": req, "unique": uniq, "floor_s": floor}
        return (
            f"{kernel}, N = {n}, tile {tile}: {counts['programs']:.0f} programs, "
            f"{format_flops(counts['flops']).replace('/s', '')} counted, "
            f"{format_bytes(counts['bytes'])} requested, {format_bytes(counts['unique_bytes'])} "
            f"unique, sector efficiency {counts['sector_efficiency']:.0%}; on the "
            f"{the_chip.name}: {req:.3g} FLOP/B requested ({uniq:.3g} unique), attains at most "
            f"{format_flops(y_req)}. Bytes requested from global memory, counted on the CPU — "
            "not DRAM traffic; time only measured on a GPU."
        )

    def render(self, kernel: str, n: int, tile: int, chip_name: str) -> tuple[Any, str]:
        return self.figure, self.update(kernel, n, tile, chip_name)


def counting_explorer(
    kernel: str = "matmul tiled", n: int = 64, tile: int = 16, chip_name: str = "H100-SXM"
) -> Explorer:
    """Kernel × size × tile × chip → counted requested and unique intensity on the roofline."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    from ..counting import counting

    with counting():  # fails here, clearly, where kernels are compiled instead of interpreted
        pass
    controls = {
        "kernel": _control_widget(
            widgets.Dropdown, "kernel", options=[(k, k) for k in KERNELS], value=kernel,
            description="kernel",
        ),
        "n": _control_widget(
            widgets.SelectionSlider, "n", options=[(str(s), s) for s in SIZES], value=n,
            description="N",
        ),
        "tile": _control_widget(
            widgets.SelectionSlider, "tile", options=[(str(t), t) for t in TILES], value=tile,
            description="tile",
        ),
        "chip_name": _control_widget(
            widgets.Dropdown, "chip_name", options=[(c, c) for c in CHIPS],
            value=_chip_value(chip_name), description="chip",
        ),
    }  # fmt: skip
    for name in KERNELS:  # every count now (seconds, once): a slider step then takes ms
        for size in SIZES:
            for block in TILES:
                counted(name, size, block)
    view = _CountingView()
    return Explorer.for_view(view, controls, title="Count a kernel, place it on a roofline")


@book_figure
def counting_static(
    kernel: str = "matmul tiled",
    n: int = 64,
    tile: int = 16,
    chip_name: str = "H100-SXM",
    *,
    colab: str = "",
) -> StaticExplorer:
    """Static twin of :func:`counting_explorer` for the online book: every kernel
    (:data:`KERNELS`), size (:data:`SIZES`), tile (:data:`TILES`) and chip (:data:`CHIPS`),
    both points read from a :class:`_CountingView` after its ``update`` (the counts come from
    the interpreter when the book's notebook is executed) under the chip's fp32 roof, drawn as
    the live view's. The arguments are the initial values."""
    book_altair()  # without Altair 5: an UnavailableFigure (book_figure), before any counting
    view = _CountingView(dpi=72)
    explorer = StaticExplorer(
        [
            control("kernel", KERNELS, label="kernel", initial=kernel),
            control("n", SIZES, label="N", initial=n),
            control("tile", TILES, label="tile", initial=tile),
            control("chip_name", CHIPS, label="chip", initial=_chip_value(chip_name)),
        ],
        alt=(
            "Roofline of the chosen chip (fp32) with the chosen course kernel as two points: a "
            "red circle at its intensity over the bytes it requests from global memory, counted "
            "in Triton's CPU interpreter, and a green diamond at its intensity over the unique "
            "bytes it touches."
        ),
        note=lambda **values: view.update(**values),
        colab=colab,
        dropdowns=("kernel", "chip_name"),
    )

    def points(**values: Any) -> list[dict[str, Any]]:
        view.update(**values)
        rows = []
        for kind, artist in (
            ("requested bytes (no reuse)", view.point),
            ("unique bytes (perfect cache)", view.unique),
        ):
            (x,), (y,) = artist.get_data()
            rows.append({"kind": kind, "x": float(x), "y": float(y)})
        return rows

    chart = _roofline_layer(
        explorer,
        lambda chip_name: (chip(chip_name), PRECISION),
        points,
        kinds={
            "requested bytes (no reuse)": ("circle", "#d62728"),
            "unique bytes (perfect cache)": ("diamond", "#2ca02c"),
        },
        intensity_range=_INTENSITY,
        flops_range=_FLOPS,
    ).properties(height=260, title="a counted launch on the roofline (fp32)")
    explorer.chart(
        chart.configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_title(fontSize=12, fontWeight="normal")
        .configure_legend(labelFontSize=11)
    )
    return explorer
