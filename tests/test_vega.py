"""gpuperf.vega and gpuperf.widgets.static: the book's client-side interactive figures.

The figures' numbers are computed by gpuperf at build time; the browser only filters rows. So
the checks here read the rows back from the compiled Vega spec the page ships
(``StaticExplorer.rows``) and compare them with the calculators at sampled control values.
"""

from __future__ import annotations

import json
import math
import re

import pytest

alt = pytest.importorskip("altair")
pytest.importorskip("vl_convert")

from gpuperf import attention as attn  # noqa: E402
from gpuperf import tiling  # noqa: E402
from gpuperf.bookext import _externalize_vega_specs  # noqa: E402
from gpuperf.hardware import chip  # noqa: E402
from gpuperf.roofline import attainable_flops, time_bounds  # noqa: E402
from gpuperf.scrub import control  # noqa: E402
from gpuperf.vega import BUNDLE_NAME, StaticExplorer, javascript_bundle  # noqa: E402
from gpuperf.widgets import static  # noqa: E402
from gpuperf.widgets.roofline import _operation  # noqa: E402


def toy(**options):
    explorer = StaticExplorer(
        [control("a", [1, 2, 3]), control("b", ["x", "y"])],
        alt="a test figure",
        note=lambda a, b: f"a={a} b={b}",
        **options,
    )
    line = explorer.table("line", lambda a, b: [{"k": k, "v": a * k} for k in range(3)])
    dot = explorer.table("dot", lambda b: {"k": 1, "v": len(b)}, over=["b"])
    explorer.chart(
        line.mark_line().encode(x="k:Q", y="v:Q") + dot.mark_point().encode(x="k:Q", y="v:Q")
    )
    return explorer


# --- the generic module -------------------------------------------------------------------------


def test_rows_are_the_computed_rows_filtered_by_every_control():
    explorer = toy()
    assert explorer.rows("line", a=3, b="y") == [
        {"k": 0, "v": 0},
        {"k": 1, "v": 3},
        {"k": 2, "v": 6},
    ]
    assert explorer.rows("dot", b="y") == [{"k": 1, "v": 1}]
    assert explorer.note(a=2, b="x") == "a=2 b=x"
    spec = explorer.vega_spec()
    filters = json.dumps(spec["data"])
    assert "datum.i_a == p_a && datum.i_b == p_b" in filters
    assert "datum.i_b == p_b" in filters
    signals = {s["name"]: s for s in spec["signals"]}
    assert signals["p_a"]["bind"]["input"] == "range" and signals["p_a"]["value"] == 0
    assert signals["p_b"]["bind"]["input"] == "select"
    assert signals["p_b"]["bind"]["labels"] == ["x", "y"]


def test_each_table_is_stored_once_over_its_own_controls():
    explorer = toy()
    shipped = {d["name"]: d.get("values") for d in explorer.vega_spec()["data"]}
    assert len(shipped["line"]) == 3 * 2 * 3
    assert len(shipped["dot"]) == 2


def test_html_block_holds_the_spec_and_the_loader():
    explorer = toy(colab="https://colab.research.google.com/github/o/r/blob/main/x.ipynb")
    page = explorer.to_html()
    assert (
        page
        == toy(colab="https://colab.research.google.com/github/o/r/blob/main/x.ipynb").to_html()
    )
    spec_text = re.search(r'class="gpuperf-vega-spec">(.*?)</script>', page, re.S).group(1)
    assert json.loads(spec_text) == json.loads(json.dumps(explorer.vega_spec()))
    assert f"_static/{BUNDLE_NAME}" in page
    assert "Open the live explorer in Colab" in page
    assert 'aria-label="a test figure"' in page
    assert "a=1 b=x" in page  # the initial note, visible before any script runs
    bundle = explorer._repr_mimebundle_()
    assert set(bundle) == {"text/html", "application/vnd.vegalite.v6+json", "text/plain"}


def test_a_closing_script_tag_in_the_data_cannot_end_the_block():
    explorer = StaticExplorer([control("a", [1])], alt="x")
    explorer.chart(explorer.table("t", lambda a: {"s": "</script><b>"}).mark_text())
    page = explorer.to_html()
    assert page.count("</script>") == 2  # the spec's and the loader's own


@pytest.mark.parametrize(
    ("controls", "options", "error"),
    [
        ([], {"alt": "x"}, ValueError),
        ("ab", {"alt": "x"}, TypeError),
        ([control("a", [1]), control("a", [2])], {"alt": "x"}, ValueError),
        ([control("not valid", [1])], {"alt": "x"}, ValueError),
        ([control("a", [1])], {"alt": "  "}, ValueError),
        ([control("a", [1])], {"alt": "x", "note": "text"}, TypeError),
        ([control("a", [1])], {"alt": "x", "dropdowns": ["b"]}, ValueError),
        ([control("a", [1])], {"alt": "x", "max_rows": 0}, ValueError),
        ([("a", [1])], {"alt": "x"}, TypeError),
    ],
)
def test_bad_explorers_are_refused(controls, options, error):
    with pytest.raises(error):
        StaticExplorer(controls, **options)


def test_bad_tables_are_refused_with_the_culprit_named():
    explorer = StaticExplorer([control("a", [1, 2])], alt="x", max_rows=3)
    with pytest.raises(ValueError, match="over="):
        explorer.table("t", lambda a: {}, over=["b"])
    with pytest.raises(ValueError, match="infinities"):
        explorer.table("t", lambda a: {"v": math.inf})
    with pytest.raises(TypeError, match="column 'v'"):
        explorer.table("t", lambda a: {"v": object()})
    with pytest.raises(ValueError, match="reserved"):
        explorer.table("t", lambda a: {"i_a": 1})
    with pytest.raises(TypeError, match="mapping"):
        explorer.table("t", lambda a: 3)
    with pytest.raises(ValueError, match="max_rows=3"):
        explorer.table("t", lambda a: [{"v": 1}, {"v": 2}])
    with pytest.raises(ValueError, match="chart"):
        explorer.spec()
    chart = explorer.table("ok", lambda a: {"v": a})
    with pytest.raises(ValueError, match="already defined"):
        explorer.table("ok", lambda a: {"v": a})
    with pytest.raises(TypeError, match="side by side"):
        explorer.chart(chart.mark_point() | chart.mark_point())
    explorer.chart(chart.mark_point().encode(x="v:Q"))
    with pytest.raises(ValueError, match="not one of its values"):
        explorer.rows("ok", a=3)
    with pytest.raises(ValueError, match="give their values"):
        explorer.rows("ok")
    with pytest.raises(ValueError, match="table="):
        explorer.rows("missing", a=1)


def test_the_javascript_bundle_is_offline_vega():
    text = javascript_bundle()
    assert "window.vegaEmbed=" in text.replace(" ", "")
    assert "cdn.jsdelivr" not in text and "unpkg.com" not in text
    # wrapped, so its top-level names (const _ …) cannot clash with the page's scripts
    assert text.startswith("(function () {") and text.rstrip().endswith("})();")


def test_the_book_writes_the_bundle_only_when_a_page_has_a_figure(tmp_path):
    from gpuperf.bookext import _write_vega_bundle

    (tmp_path / "chapters").mkdir()
    page = tmp_path / "chapters" / "page.html"
    page.write_text("<html><body>no figure</body></html>")
    assert _write_vega_bundle(tmp_path) is False
    assert not (tmp_path / "_static" / BUNDLE_NAME).exists()
    page.write_text(f"<html><body>{toy().to_html()}</body></html>")
    assert _write_vega_bundle(tmp_path) is True
    assert (tmp_path / "_static" / BUNDLE_NAME).read_text() == javascript_bundle()


def test_the_book_moves_specs_into_files(tmp_path):
    explorer = toy()
    page = f"<html><body>{explorer.to_html()}</body></html>"
    light = _externalize_vega_specs(page, "chapters/page.html", tmp_path)
    match = re.search(r'class="gpuperf-vega-spec" data-src="([^"]+)"></script>', light)
    assert match, light[:500]
    assert match.group(1).startswith("../_images/vega/")
    stored = tmp_path / "chapters" / match.group(1)
    assert json.loads(stored.resolve().read_text()) == json.loads(json.dumps(explorer.vega_spec()))
    assert len(light) < len(page)
    assert _externalize_vega_specs(light, "chapters/page.html", tmp_path) == light


# --- the book's figures: plotted values equal the calculators' ----------------------------------


@pytest.fixture(scope="module")
def roofline():
    return static.roofline_static()


@pytest.mark.parametrize(
    ("chip_name", "precision", "op", "tokens", "width"),
    [
        ("H100-SXM", "bf16", "matmul", 64, 4096),
        ("T4", "fp16", "elementwise", 1, 1024),
        ("B200", "fp4", "attention", 65536, 16384),
        ("TPU-v5e", "int8", "matmul", 4096, 16384),
        ("A100-80GB", "fp32", "attention", 256, 4096),
    ],
)
def test_roofline_points_equal_the_calculator(roofline, chip_name, precision, op, tokens, width):
    values = dict(chip_name=chip_name, precision=precision, op=op, tokens=tokens, width=width)
    (point,) = roofline.rows("point", **values)
    bounds = time_bounds(_operation(op, tokens, width, precision), chip(chip_name), precision)
    assert point["x"] == bounds.intensity
    assert point["y"] == bounds.attainable_flops_per_s
    assert point["t_math_s"] == bounds.t_math_s
    assert point["t_comms_s"] == bounds.t_comms_s
    roof = roofline.rows("roof", chip_name=chip_name, precision=precision)
    assert roof and all(r["y"] == attainable_flops(r["x"], chip_name, precision) for r in roof)


def test_roofline_without_a_rate_says_so(roofline):
    values = dict(chip_name="T4", precision="bf16", op="matmul", tokens=64, width=4096)
    assert roofline.rows("point", **values) == []
    assert roofline.rows("roof", chip_name="T4", precision="bf16") == []
    (message,) = roofline.rows("missing", chip_name="T4", precision="bf16")
    assert "no bf16" in message["text"]


def test_roofline_offers_the_live_explorers_controls(roofline):
    from gpuperf.units import PRECISIONS
    from gpuperf.widgets.roofline import OPERATIONS, _chip_options

    by_name = {c.name: c for c in roofline.controls}
    assert list(by_name) == ["chip_name", "precision", "op", "tokens", "width"]
    assert by_name["chip_name"].values == tuple(v for _, v in _chip_options())
    assert by_name["precision"].values == PRECISIONS
    assert by_name["op"].values == OPERATIONS


@pytest.fixture(scope="module")
def waves():
    return static.wave_static()


@pytest.mark.parametrize("size", [256, 2048, 2049, 4097, 8192])
@pytest.mark.parametrize("tile", [(128, 128), (256, 128), (64, 64)])
@pytest.mark.parametrize("chip_name", ["T4", "H100-SXM"])
def test_wave_marker_and_curve_equal_the_calculator(waves, size, tile, chip_name):
    (marker,) = waves.rows("marker", size=size, tile=tile, chip_name=chip_name)
    expected = tiling.wave_quantization(size, size, *tile, chip_name)
    assert marker == {"n": size, "efficiency": expected.wave_efficiency}
    assert f"N = {size}:" in waves.note(size=size, tile=tile, chip_name=chip_name)
    # the stored sawtooth, read as the step-after line the browser draws, at sampled sizes
    steps = waves.rows("curve", tile=tile, chip_name=chip_name)
    for n in (256, 300, size, 5000, 8191, 8192):
        drawn = [s["efficiency"] for s in steps if s["n"] <= n][-1]
        assert drawn == tiling.wave_quantization(n, n, *tile, chip_name).wave_efficiency, n


@pytest.fixture(scope="module")
def softmax():
    return static.online_softmax_static()


@pytest.mark.parametrize("block_size", [2, 4, 8])
@pytest.mark.parametrize("step", [0, 1, 2, 8])
def test_online_softmax_bars_equal_the_calculator(softmax, block_size, step):
    from gpuperf.widgets.attention import EXAMPLE_ROW

    steps = attn.online_softmax_steps(EXAMPLE_ROW, block_size)
    estimate = softmax.rows("estimate", block_size=block_size, step=step)
    maxima = softmax.rows("max", block_size=block_size, step=step)
    if step == 0:
        assert estimate == [] and maxima == []
        return
    last = steps[min(step, len(steps)) - 1]
    assert [r["i"] for r in estimate] == list(range(last.stop))
    for r in estimate:
        assert r["p"] == pytest.approx(
            math.exp(EXAMPLE_ROW[r["i"]] - last.max_after) / last.sum_after, rel=1e-12
        )
    assert maxima[0]["m"] == last.max_after
    if last.stop == len(EXAMPLE_ROW):  # every score read: the exact softmax
        exact = attn.softmax(EXAMPLE_ROW)
        assert [r["p"] for r in estimate] == pytest.approx(list(exact), rel=1e-12)


@pytest.fixture(scope="module")
def attention():
    return static.attention_static()


@pytest.mark.parametrize(
    ("seq_len", "head_dim", "chip_name", "sram_kib", "precision"),
    [
        (16384, 128, "H100-SXM", 0, "fp16"),
        (512, 64, "T4", 48, "fp32"),
        (131072, 256, "A100-80GB", 227, "bf16"),
    ],
)
def test_attention_points_equal_the_calculator(
    attention, seq_len, head_dim, chip_name, sram_kib, precision
):
    the_chip = chip(chip_name)
    sram = sram_kib * 1024 or the_chip.shared_memory_per_block_bytes
    ops = {
        "standard": attn.hbm_traffic_standard(seq_len, head_dim, precision),
        "FlashAttention-2": attn.hbm_traffic_flash(seq_len, head_dim, sram, precision),
        "FA-2, K/V re-reads hit L2": attn.hbm_traffic_flash(
            seq_len, head_dim, sram, precision, block_r=seq_len
        ),
    }
    values = dict(
        seq_len=seq_len,
        head_dim=head_dim,
        chip_name=chip_name,
        sram_kib=sram_kib,
        precision=precision,
    )
    points = {r["kind"]: r for r in attention.rows("points", **values)}
    assert set(points) == set(ops)
    for kind, op in ops.items():
        bounds = time_bounds(op, the_chip, precision)
        assert points[kind]["x"] == op.intensity
        assert points[kind]["y"] == bounds.attainable_flops_per_s
    curves = attention.rows(
        "curves", head_dim=head_dim, chip_name=chip_name, sram_kib=sram_kib, precision=precision
    )
    standard = {r["n"]: r["bytes"] for r in curves if r["kind"] == "standard"}
    assert standard[seq_len] == ops["standard"].bytes
    flash = {r["n"]: r["bytes"] for r in curves if r["kind"] == "FlashAttention-2"}
    assert flash[seq_len] == ops["FlashAttention-2"].bytes


def test_colab_url_comes_from_the_book_config(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    url = static.colab_url("chapters/02_roofline.ipynb", root / "chapters")
    assert url.startswith("https://colab.research.google.com/github/")
    assert url.endswith("/blob/main/chapters/02_roofline.ipynb")
    assert static.colab_url("chapters/02_roofline.ipynb", tmp_path) == ""
    with pytest.raises(ValueError, match="ipynb"):
        static.colab_url("chapters/02_roofline.md")


def test_without_altair_a_book_figure_says_so_instead_of_raising(monkeypatch):
    """A fresh Colab runtime may lack Altair 5 or vl-convert: "Run all" must not stop at a
    figure meant for the static book; it says why and points to the live explorer."""
    import importlib

    from gpuperf import vega
    from gpuperf.widgets.static import wave_static

    real = importlib.import_module

    def no_altair(name, *args, **kwargs):
        if name == "altair":
            raise ImportError("No module named 'altair'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(vega.importlib, "import_module", no_altair)
    figure = wave_static()
    assert isinstance(figure, vega.UnavailableFigure)
    assert "altair is not installed" in figure.reason
    assert "live explorer" in figure._repr_html_()
    with pytest.raises(vega.BookFigureUnavailable, match="altair is not installed"):
        vega.book_altair()


def test_an_old_altair_counts_as_missing(monkeypatch):
    import types

    from gpuperf import vega

    old = types.SimpleNamespace(__version__="4.2.2")  # no alt.param before Altair 5
    monkeypatch.setattr(vega.importlib, "import_module", lambda name, *a, **k: old)
    with pytest.raises(vega.BookFigureUnavailable, match=r"altair 4\.2\.2 is older than 5"):
        vega.book_altair()


def test_other_errors_of_a_book_figure_still_raise():
    from gpuperf.widgets.static import wave_static

    with pytest.raises((ValueError, TypeError)):
        wave_static(size=-1)


def test_no_chart_text_is_smaller_than_nine_points():
    """Every font size in a figure's spec, explicit or from the config defaults, is >= 12 px."""
    from gpuperf import vega
    from gpuperf.widgets.static import wave_static

    spec = wave_static().spec()
    sizes = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("fontSize", "labelFontSize", "titleFontSize"):
                    sizes.append(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    assert sizes and min(sizes) >= vega.MIN_FONT_PX == 12
    for part in ("axis", "legend", "title"):
        assert spec["config"][part], part
    # neighbouring tick labels one em apart: "1,000" and "10,000" read as two numbers (issue 26)
    assert spec["config"]["axis"]["labelSeparation"] == vega.LABEL_GAP_PX == 12


def test_a_drop_down_may_take_the_whole_column():
    """A drop-down is never narrower than the column lets it be (a 60vw cap cut "NVLink 4 (18
    links), H100-SXM" at 390 px); its label wraps above it instead. The browser test checks
    that no option is cut on a phone."""
    html = toy().to_html()
    assert ".vega-bind select{max-width:100%}" in html
    assert "max-width:60vw" not in html


def test_the_chart_is_one_image_to_a_screen_reader():
    """The chart's box is role="img" with the alt text; Vega adds no ARIA inside it (a mark
    emptied by a filter was an unnamed graphics-symbol, an axe-core violation)."""
    explorer = toy()
    assert explorer.spec()["config"]["aria"] is False
    assert re.search(r'class="gpuperf-vega-chart" role="img" aria-label="a test figure"',
                     explorer.to_html())  # fmt: skip
    compiled = json.dumps(explorer.vega_spec())
    assert '"aria": false' in compiled or '"aria":false' in compiled
    # with aria off Vega still names each mark container a graphics-symbol, without a name: the
    # loader hides the drawn SVG from assistive technology, the box's alt text speaks for it
    assert 'svg.setAttribute("aria-hidden", "true")' in explorer.to_html()
