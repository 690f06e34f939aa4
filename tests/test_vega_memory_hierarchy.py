"""Chapter 5's transfer figure for the online book (gpuperf.widgets.memory.transfer_static).

The rows the page ships are read back from the compiled Vega spec and compared with the
calculators of :mod:`gpuperf.memory`, computed here from the measurements directly, at sampled
control values: a measured link and a link of your own.
"""

from __future__ import annotations

import gzip
import json

import pytest

pytest.importorskip("altair")
pytest.importorskip("vl_convert")
pytest.importorskip("matplotlib")

from gpuperf import memory
from gpuperf.measurements import LATENCY_BOUND_BELOW_BYTES, find
from gpuperf.units import GB
from gpuperf.widgets import memory as wm


@pytest.fixture(scope="module")
def figure():
    return wm.transfer_static(colab="https://colab.example/05_memory_hierarchy.ipynb")


def _link(preset):
    """(latency s, bandwidth B/s) of a preset, from the measurements, not from presets()."""
    if preset == 0:
        return (
            find("CPU ↔ GPU round-trip latency", "H100-SXM").value,
            find("CPU → GPU copy", "H100-SXM").value,
        )
    if preset == 2:
        busbw = find("all-reduce bus bandwidth, 3–16 nodes", "H100-SXM").value
        ranks = 16 * 8
        return (
            find("all-reduce latency, 16 nodes", "H100-SXM").value,
            busbw * ranks / (2 * (ranks - 1)),
        )
    raise AssertionError(preset)


def test_controls_are_the_live_explorers():
    figure = wm.transfer_static()
    names = [c.name for c in figure.controls]
    assert names == ["preset", "n_bytes", "latency_us", "bandwidth_gb_s"]
    assert len(figure.controls[0].values) == len(wm.presets()) + 1
    sizes = figure.controls[1].values
    assert sizes[0] == pytest.approx(1e2) and sizes[-1] == pytest.approx(1e10)
    assert len(sizes) == 33  # the live slider: 10² … 10¹⁰ in steps of 0.25 decade
    assert figure.kinds == {
        "preset": "dropdown",
        "n_bytes": "slider",
        "latency_us": "slider",
        "bandwidth_gb_s": "slider",
    }


@pytest.mark.parametrize("preset", [0, 2])
@pytest.mark.parametrize("exponent", [2.0, 4.5, 6.0, 9.25])
def test_measured_link_point_and_bars_are_the_calculators(figure, preset, exponent):
    n = float(10**exponent)
    latency, bandwidth = _link(preset)
    (row,) = figure.rows("measured_point", preset=preset, n_bytes=n)
    time_s = latency + n / bandwidth
    assert row["x"] == pytest.approx(n)
    assert row["y"] == pytest.approx(n / time_s / GB, rel=1e-9)
    assert row["y"] == pytest.approx(memory.effective_bandwidth(n, bandwidth, latency) / GB)
    assert row["latency_share"] == pytest.approx(latency / time_s, rel=1e-9)
    assert row["bytes_start"] + row["bytes_share"] == pytest.approx(1.0)
    regime = "latency-bound" if n < latency * bandwidth else "bandwidth-bound"
    assert regime in row["note"]
    assert (
        figure.rows("own_point", preset=preset, n_bytes=n, latency_us=1.0, bandwidth_gb_s=1.0)
        == []
    )


def test_measured_link_curve_and_limits(figure):
    latency, bandwidth = _link(2)
    rows = figure.rows("measured_lines", preset=2)
    curve = [r for r in rows if r["kind"] == "curve"]
    (limits,) = [r for r in rows if r["kind"] == "limits"]
    assert curve[0]["x"] == pytest.approx(1e2) and curve[-1]["x"] == pytest.approx(1e10)
    assert len(curve) >= 50
    for r in curve:
        assert r["y"] == pytest.approx(r["x"] / (latency + r["x"] / bandwidth) / GB, rel=1e-9)
    assert limits["half"] == pytest.approx(latency * bandwidth)
    assert limits["peak"] == pytest.approx(bandwidth / GB)
    assert limits["x"] == pytest.approx(1e2) and limits["x2"] == pytest.approx(latency * bandwidth)
    assert figure.rows("measured_lines", preset=wm.OWN_LINK) == []
    (copies,) = figure.rows("copies")
    assert copies["x"] == LATENCY_BOUND_BELOW_BYTES


@pytest.mark.parametrize(
    ("latency_us", "bandwidth_gb_s", "exponent"),
    [(0.1, 1.0, 2.0), (10**0.5, 10**3.5, 7.75), (1000.0, 10**4, 10.0), (10.0, 100.0, 5.0)],
)
def test_own_link_is_the_calculators(figure, latency_us, bandwidth_gb_s, exponent):
    n = float(10**exponent)
    latency, bandwidth = latency_us * 1e-6, bandwidth_gb_s * GB
    values = {"preset": wm.OWN_LINK}
    lat = next(v for v in wm.STATIC_LATENCIES_US if v == pytest.approx(latency_us))
    bw = next(v for v in wm.STATIC_BANDWIDTHS_GB_S if v == pytest.approx(bandwidth_gb_s))
    size = next(v for v in wm.STATIC_SIZES if v == pytest.approx(n))
    values.update(latency_us=lat, bandwidth_gb_s=bw)
    (row,) = figure.rows("own_point", n_bytes=size, **values)
    time_s = latency + n / bandwidth
    assert row["y"] == pytest.approx(n / time_s / GB, rel=1e-9)
    assert row["latency_share"] == pytest.approx(latency / time_s, rel=1e-9)
    rows = figure.rows("own_lines", latency_us=lat, bandwidth_gb_s=bw)
    (limits,) = [r for r in rows if r["kind"] == "limits"]
    assert limits["half"] == pytest.approx(latency * bandwidth)
    assert limits["peak"] == pytest.approx(bandwidth_gb_s)
    for r in rows:
        if r["kind"] == "curve":
            assert r["y"] == pytest.approx(r["x"] / (latency + r["x"] / bandwidth) / GB, rel=1e-9)
    assert figure.rows("measured_point", preset=wm.OWN_LINK, n_bytes=size) == []


def test_page_block_is_light_and_links_to_colab(figure):
    page = figure.to_html()
    assert "Open the live explorer in Colab" in page
    assert len(gzip.compress(json.dumps(figure.vega_spec()).encode())) < 200_000
    assert sum(len(rows) for _, rows in figure._tables.values()) < 60_000


def test_bad_preset_is_refused():
    with pytest.raises(ValueError, match="preset=7"):
        wm.transfer_static(preset=7)
    with pytest.raises(ValueError, match="not one of the values"):
        wm.transfer_static(n_bytes=12345.0)


def test_a_boolean_is_not_a_link():
    with pytest.raises(ValueError, match="preset=True"):
        wm.transfer_static(preset=True)
