"""Chapter 5.2's collectives figure for the online book (gpuperf.widgets.collectives).

The rows the page ships are read back from the compiled Vega spec and compared, at sampled
control values, with the α–β model written out here (ring: 2(p − 1)α + 2(p − 1)/p · S/B for an
all-reduce, half that for an all-gather or a reduce-scatter; tree: 2⌈log₂ p⌉α + 2S/B), with the
link bandwidths read from :func:`gpuperf.collectives.links`. The page stores plotted numbers to
five significant digits, hence the relative tolerance.
"""

from __future__ import annotations

import gzip
import json
import math

import pytest

pytest.importorskip("altair")
pytest.importorskip("vl_convert")
pytest.importorskip("matplotlib")

from gpuperf import collectives
from gpuperf.measurements import find
from gpuperf.widgets import collectives as wc

REL = 1e-4  # five significant digits


@pytest.fixture(scope="module")
def figure():
    return wc.collective_static(colab="https://colab.example/05_collectives.ipynb")


def _alpha(factor):
    """α from the measured one-node all-reduce latency over the ring's 2(8 − 1) steps."""
    t0 = find("all-reduce latency, one node", "H100-SXM").value
    return factor * t0 / (2 * (8 - 1))


def _ring(collective, p, size, bandwidth, alpha):
    k = 2 if collective == "all-reduce" else 1
    return k * (p - 1) * alpha + k * (p - 1) / p * size / bandwidth


def _tree(p, size, bandwidth, alpha):
    return 2 * math.ceil(math.log2(p)) * alpha + 2 * size / bandwidth


def _values(figure, collective, ranks, n_bytes, link, factor):
    alpha_us = figure.controls[4].values[wc.STATIC_ALPHA_FACTORS.index(factor)]
    assert alpha_us == pytest.approx(_alpha(factor) * 1e6)
    size = next(s for s in wc.STATIC_SIZES if s == pytest.approx(n_bytes))
    return {
        "collective": collective,
        "ranks": ranks,
        "n_bytes": size,
        "link": link,
        "alpha_us": alpha_us,
    }


def test_controls_are_the_live_explorers(figure):
    assert [c.name for c in figure.controls] == [
        "collective",
        "ranks",
        "n_bytes",
        "link",
        "alpha_us",
    ]
    assert figure.controls[0].values == collectives.MODELLED_COLLECTIVES
    assert figure.controls[1].values == tuple(2**k for k in range(1, 11))
    assert len(figure.controls[3].values) == len(collectives.links())
    sizes = figure.controls[2].values
    assert sizes[0] == pytest.approx(1e3) and sizes[-1] == pytest.approx(1e11)
    assert figure.kinds == {
        "collective": "dropdown",
        "ranks": "dropdown",
        "n_bytes": "slider",
        "link": "dropdown",
        "alpha_us": "slider",
    }


@pytest.mark.parametrize(
    ("collective", "ranks", "n_bytes", "link", "factor"),
    [
        ("all-reduce", 8, 1e6, 0, 1.0),
        ("all-reduce", 1024, 10**8.5, 2, 8.0),
        ("all-reduce", 2, 1e3, 1, 0.125),
        ("all-gather", 64, 1e9, 2, 1.0),
        ("reduce-scatter", 16, 10**4.5, 0, 8.0),
    ],
)
def test_point_bars_and_note_are_the_model(figure, collective, ranks, n_bytes, link, factor):
    values = _values(figure, collective, ranks, n_bytes, link, factor)
    bandwidth = collectives.links()[link].bandwidth
    alpha = _alpha(factor)
    (row,) = figure.rows("point", **values)
    ring = _ring(collective, ranks, n_bytes, bandwidth, alpha)
    assert row["x"] == pytest.approx(n_bytes)
    assert row["ring"] == pytest.approx(ring, rel=REL)
    k = 2 if collective == "all-reduce" else 1
    assert row["latency_share"] == pytest.approx(k * (ranks - 1) * alpha / ring, rel=REL)
    assert row["latency_share"] + row["bytes_share"] == pytest.approx(1.0, rel=REL)
    if collective == "all-reduce":
        assert row["tree"] == pytest.approx(_tree(ranks, n_bytes, bandwidth, alpha), rel=REL)
    else:
        assert "tree" not in row
    note = figure.note(**values)
    assert note.startswith(f"{collective} of ") and f"over {ranks} ranks" in note


@pytest.mark.parametrize(
    ("collective", "ranks", "link", "factor"),
    [("all-reduce", 256, 2, 1.0), ("all-reduce", 2, 0, 8.0), ("all-gather", 8, 1, 0.125)],
)
def test_curves_and_rules_are_the_model(figure, collective, ranks, link, factor):
    values = _values(figure, collective, ranks, 1e3, link, factor)
    del values["n_bytes"]
    bandwidth = collectives.links()[link].bandwidth
    alpha = _alpha(factor)
    rows = figure.rows("lines", **values)
    ring = [r for r in rows if r["series"] == "ring"]
    assert ring[0]["x"] == pytest.approx(1e3) and ring[-1]["x"] == pytest.approx(1e11)
    assert len(ring) >= 20
    for r in ring:
        assert r["y"] == pytest.approx(_ring(collective, ranks, r["x"], bandwidth, alpha), rel=REL)
    (half,) = [r["x"] for r in rows if r["series"] == "half"]
    assert half == pytest.approx(ranks * alpha * bandwidth, rel=REL)
    tree = [r for r in rows if r["series"] == "tree"]
    crossover = [r["x"] for r in rows if r["series"] == "crossover"]
    if collective != "all-reduce":
        assert tree == [] and crossover == []
        return
    for r in tree:
        assert r["y"] == pytest.approx(_tree(ranks, r["x"], bandwidth, alpha), rel=REL)
    extra = ranks - 1 - math.ceil(math.log2(ranks))
    if extra > 0:
        assert crossover == [pytest.approx(extra * ranks * alpha * bandwidth, rel=REL)]
    else:  # two ranks: the ring is never slower, no crossover drawn
        assert crossover == []


def test_page_block_is_light_and_links_to_colab(figure):
    assert "Open the live explorer in Colab" in figure.to_html()
    assert len(gzip.compress(json.dumps(figure.vega_spec()).encode())) < 230_000
    assert sum(len(rows) for _, rows in figure._tables.values()) < 60_000


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="alpha_factor=3"):
        wc.collective_static(alpha_factor=3)
    with pytest.raises(ValueError, match="not one of the values"):
        wc.collective_static(ranks=3)


def test_a_boolean_is_not_an_alpha_factor():
    with pytest.raises(ValueError, match="alpha_factor=True"):
        wc.collective_static(alpha_factor=True)
