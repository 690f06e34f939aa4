"""Every static figure reads on a phone (issue 26): gpuperf.figures and the figures of plots.

Each figure function of :mod:`gpuperf.plots` is drawn with the arguments a chapter uses and
written as the book writes it (SVG, text as text, tight bounding box). Shrunk to the phone's
column, its smallest word must still be 12 CSS px, and no marker may be cut by the edge of its
axes. The browser test measures the built pages the same way; this one fails first, and names
the function.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from gpuperf import chip, cost, figures, measurements, memory, plots, tiling  # noqa: E402


def svg_of(fig) -> str:
    """The SVG the notebook's inline backend writes after ``use_book_style``."""
    out = io.BytesIO()
    with matplotlib.rc_context(figures.RC):
        fig.savefig(out, format="svg", metadata=figures.SVG_METADATA)
    return out.getvalue().decode()


def cut_markers(fig) -> list[str]:
    """Markers the axes cut in half: drawn clipped, partly inside the axes and partly out."""
    fig.canvas.draw()
    cut = []
    for ax in fig.axes:
        box = ax.get_window_extent()
        for line in ax.get_lines():
            if line.get_marker() in (None, "None", "", " ") or not line.get_clip_on():
                continue
            radius = line.get_markersize() / 2 * fig.dpi / 72
            points = line.get_transform().transform(np.column_stack(line.get_data()))
            for x, y in points:
                inside = (box.x0 <= x - radius and x + radius <= box.x1
                          and box.y0 <= y - radius and y + radius <= box.y1)  # fmt: skip
                outside = (x + radius <= box.x0 or x - radius >= box.x1
                           or y + radius <= box.y0 or y - radius >= box.y1)  # fmt: skip
                if not (inside or outside):
                    cut.append(f"{line.get_label()!r} at ({x:.0f}, {y:.0f}) px")
    return cut


def roofline_ops():
    return {
        "dot (bf16)": cost.dot(2**24, "bf16"),
        "ReLU (fp32)": cost.elementwise(2**26, "fp32"),
        "matmul B=64": cost.matmul(64, 8192, 8192, "bf16"),
        "matmul B=4096": cost.matmul(4096, 8192, 8192, "bf16"),
    }


def ladder():
    h100 = chip("H100-SXM")
    levels = memory.bandwidth_ladder(h100)
    return plots.memory_ladder(
        levels, {levels[3].name: [measurements.find("HBM copy, read + write")]}, title="ladder"
    )


def links():
    copy = measurements.find("HBM copy, read + write")
    return plots.link_bandwidths(
        [("CPU → GPU (PCIe, via switch)", copy, 4e12), ("GPU → GPU over NVLink 4", copy, None)],
        title="Measured links of an 8 × H100 AWS p5 node",
    )


#: Every static figure function, with arguments like a chapter's.
FIGURES = {
    "roofline": lambda: plots.roofline("H100-SXM", "bf16", ops=roofline_ops(), title="H100"),
    "roofline, two chips": lambda: plots.roofline(["A100-80GB", "H100-SXM"], "bf16"),
    "chip_diagram A100": lambda: plots.chip_diagram("A100-80GB"),
    "chip_diagram H100": lambda: plots.chip_diagram("H100-SXM"),
    "sm_diagram": lambda: plots.sm_diagram("H100-SXM"),
    "compute_vs_bandwidth": lambda: plots.compute_vs_bandwidth(),
    "roofline_bandwidths": lambda: plots.roofline_bandwidths(
        "H100-SXM",
        "bf16",
        {"HBM": chip("H100-SXM").hbm_bandwidth, "NVLink 4 (one direction)": 450e9},
        ops={"matmul B=512": 400.0, "matmul B=8192": 2700.0},
    ),
    "batch_roofline": lambda: plots.batch_roofline(
        "TPU-v5e", [4096, 1024], weight_precision="int8"
    ),
    "achieved_roofline": lambda: plots.achieved_roofline(
        "H100-SXM",
        "bf16",
        {"a long name for a matmul, measured": (2000.0, 7e14), "vector add": (0.08, 2e11)},
        measured_bandwidth=3e12,
        title="H100-SXM: published matmuls and the course's vector add",
    ),
    "coalescing_picture": lambda: plots.coalescing_picture(
        [memory.coalescing(1, 0), memory.coalescing(1, 1), memory.coalescing(8, 0)], n_lines=8
    ),
    "sawtooth": lambda: plots.sawtooth(
        ["A100-80GB", "H100-SXM"], 128, 128, np.arange(256, 8193, 8), highlight=(2048, 2049)
    ),
    "schedule_efficiency": lambda: plots.schedule_efficiency(
        "H100-SXM", np.arange(256, 8193, 64), 2048, 256, 128, 64, highlight=(2049,)
    ),
    "tile_picture": lambda: plots.tile_picture(300, 200, 128, 64),
    "smem_gauges": lambda: plots.smem_gauges(
        [tiling.shared_memory_budget(c, 128, 128, 64, "fp16", 3) for c in ("T4", "H100-SXM")]
    ),
    "traffic_bars": lambda: plots.traffic_bars(
        {"unfused (5 kernels)": cost.elementwise(2**26, "fp32"), "fused": cost.dot(2**20)}
    ),
    "checkpoint_tradeoff": lambda: plots.checkpoint_tradeoff(24, 34.0, 1.0),
    "attention_traffic": lambda: plots.attention_traffic(128, chip_name="A100-80GB"),
    "memory_ladder": ladder,
    "link_bandwidths": links,
    "effective_bandwidth_curves": lambda: plots.effective_bandwidth_curves(
        {"CPU → GPU, H100 node (PCIe)": (14e9, 1.4e-6), "HBM, A100": (1.6e12, 4e-7)},
        latency_bound_below=1e6,
    ),
}


@pytest.fixture(params=sorted(FIGURES))
def drawn(request):
    fig = FIGURES[request.param]()
    yield request.param, fig
    plt.close(fig)


def test_every_word_reads_on_a_phone_and_no_marker_is_cut(drawn):
    name, fig = drawn
    svg = svg_of(fig)
    smallest = figures.smallest_text_px(svg)
    assert smallest >= figures.MIN_TEXT_PX, (
        f"{name}: smallest text {smallest:.1f} px at {figures.PHONE_COLUMN_PX} px "
        f"(the figure is {figures.svg_width_px(svg):.0f} px wide)"
    )
    assert not cut_markers(fig), f"{name}: markers cut by the axes: {cut_markers(fig)}"
    assert "<tspan" not in svg, f"{name}: mathtext (its exponents are drawn at 70 %)"


def test_the_overlap_timeline_reads_on_a_phone():
    from gpuperf.widgets.asynchrony import _OverlapView

    view = _OverlapView(pyplot=True)
    view.update("H100-SXM", (128, 128), 64, reuse=4)
    try:
        assert figures.smallest_text_px(svg_of(view.figure)) >= figures.MIN_TEXT_PX
    finally:
        plt.close(view.figure)


def test_the_svg_is_the_same_bytes_every_time():
    """No date, no version, ids from a fixed salt: re-executing a notebook leaves no diff."""
    first, second = (svg_of(plots.sm_diagram("A100-80GB")) for _ in range(2))
    assert first == second
    assert "<dc:date>" not in first and "Matplotlib v" not in first
    assert "<text" in first, "text stays text (svg.fonttype: none)"
    plt.close("all")


def test_text_sizes_scale_with_the_width_shown():
    svg = svg_of(plots.sm_diagram("A100-80GB"))
    own = figures.svg_width_px(svg)
    at_own = dict(figures.svg_text_px(svg))
    halved = dict(figures.svg_text_px(svg, own / 2))
    word = "L1 instruction cache"
    assert at_own[word] == pytest.approx(figures.FONT_PT * 4 / 3)  # 11.5 pt = 15.3 px
    assert halved[word] == pytest.approx(at_own[word] / 2)
    assert figures.smallest_text_px(svg, column_px=10 * own) == pytest.approx(at_own[word])
    plt.close("all")


@pytest.mark.parametrize("bad", [None, 3, "", "<html></html>"])
def test_measuring_needs_svg(bad):
    with pytest.raises(TypeError, match="must be SVG text"):
        figures.svg_text_px(bad)


def test_use_book_style_sets_the_figure_rules():
    with matplotlib.rc_context():
        figures.use_book_style()  # plain Python: no IPython shell to configure
        assert matplotlib.rcParams["svg.fonttype"] == "none"
        assert matplotlib.rcParams["font.size"] == figures.FONT_PT
        assert tuple(matplotlib.rcParams["figure.figsize"]) == (figures.WIDTH_IN, 3.2)


def test_log_ticks_are_plain_text():
    fig, ax = plt.subplots()
    ax.loglog([1, 1e6], [1e9, 1e15])
    figures.plain_log_ticks(ax.xaxis)
    figures.plain_log_ticks(ax.yaxis, lambda v, _: figures.si_label(v, unit="B/s"))
    fig.canvas.draw()
    assert {"1", "10", "1k", "1M"} <= {t.get_text() for t in ax.get_xticklabels()}
    assert "1 TB/s" in [t.get_text() for t in ax.get_yticklabels()]
    with pytest.raises(TypeError, match="matplotlib Axis"):
        figures.plain_log_ticks(ax)
    plt.close(fig)


def test_si_labels():
    assert figures.si_label(2e9) == "2G"
    assert figures.si_label(1500, unit="B") == "1.5 kB"
    assert figures.si_label(0.05) == "0.05"
    assert figures.si_label(3, unit="s") == "3 s"


# ------------------------------------------------------------------------------ the front page
FRONT_PAGE = Path(__file__).resolve().parent.parent / "images" / "roofline.svg"


def front_page_figure() -> str:
    """The front page's picture: FP16 tensor-core rooflines of four generations, as SVG."""
    fig = plots.roofline(["V100", "A100-80GB", "H100-SXM", "B200"], "fp16")
    try:
        return svg_of(fig)
    finally:
        plt.close(fig)


def test_the_front_page_figure_is_current_and_reads_on_a_phone():
    """images/roofline.svg is what gpuperf draws today (same bytes: the SVG is deterministic);
    regenerate it with ``python tests/test_figures.py --front-page``."""
    svg = front_page_figure()
    assert FRONT_PAGE.read_text(encoding="utf-8") == svg, (
        "images/roofline.svg is stale: run python tests/test_figures.py --front-page"
    )
    assert figures.smallest_text_px(svg) >= figures.MIN_TEXT_PX


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--front-page"]:
        FRONT_PAGE.write_text(front_page_figure(), encoding="utf-8")
        print(f"wrote {FRONT_PAGE}")
    else:
        sys.exit("usage: python tests/test_figures.py --front-page")
