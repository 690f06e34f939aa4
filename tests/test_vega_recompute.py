"""Section 3.3's book figure (gpuperf.widgets.recompute.recompute_static): the bars it ships equal
the recompute calculators.

The figure's rows are read back from the compiled Vega spec the page ships
(``StaticExplorer.rows``) and compared, at sampled control values, with bytes computed here from
the closed forms of :func:`gpuperf.recompute.layer_activations` and with its FLOP overhead.
"""

from __future__ import annotations

import gzip
import inspect
import json
import math

import pytest

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

from gpuperf import recompute
from gpuperf.units import format_bytes
from gpuperf.vega import MAX_ROWS
from gpuperf.widgets import recompute as wr

SHAPE = ("seq_len", "micro_batch", "hidden", "heads", "tensor_parallel", "sequence_parallel")


@pytest.fixture(scope="module")
def figure():
    return wr.recompute_static()


def expected_parts(s, b, h, a, t, sp, mode):
    """Bytes per GPU of (the 10·sbh outside TP, the 24·sbh TP splits, the scores), by hand."""
    outside = (2 if mode == "full" else 10) * s * b * h / (t if sp else 1)
    inside = 0 if mode == "full" else 24 * s * b * h / t
    scores = 5 * a * s * s * b / t if mode == "none" else 0
    return outside, inside, scores


SAMPLES = [
    (2048, 1, 4096, 32, 1, False),
    (512, 4, 1024, 8, 8, True),
    (32768, 16, 12288, 128, 8, False),
    (8192, 1, 2048, 64, 2, True),
    (16384, 4, 8192, 16, 4, False),
]


@pytest.mark.parametrize("shape", SAMPLES)
def test_memory_bars_equal_the_calculator(figure, shape):
    rows = figure.rows("memory", **dict(zip(SHAPE, shape, strict=True)))
    assert [r["mode"] for r in rows] == list(recompute.RECOMPUTE_MODES)
    for row in rows:
        parts = expected_parts(*shape, row["mode"])
        edges = [sum(parts[: k + 1]) / 1e9 for k in range(3)]
        drawn = [row["gb1"], row["gb2"], row["gb3"]]
        assert drawn == pytest.approx(edges, rel=1e-12)
        plan = recompute.layer_activations(*shape, row["mode"])
        assert row["gb3"] * 1e9 == pytest.approx(plan.activation_bytes, rel=1e-12)


@pytest.mark.parametrize("shape", SAMPLES)
def test_flop_bars_equal_the_calculator_for_any_batch_heads_and_parallelism(figure, shape):
    s, b, h, a, t, sp = shape
    rows = figure.rows("flops", seq_len=s, hidden=h)
    for row in rows:
        plan = recompute.layer_activations(s, b, h, a, t, sp, row["mode"])
        assert row["flops"] == pytest.approx(100 * plan.compute_overhead, rel=1e-12)
    selective = {r["mode"]: r["flops"] for r in rows}["selective"]
    # selective recomputation repeats the core attention, QKᵀ and ·V: 4bs²h of the step's
    # 3·(24bsh² + 4bs²h) FLOPs (Megatron-LM's region, Korthikanti et al. §4.3)
    assert selective == pytest.approx(100 * 4 * s / (3 * (24 * h + 4 * s)), rel=1e-12)


@pytest.mark.parametrize("shape", SAMPLES)
def test_the_rows_are_what_the_live_view_draws(figure, shape):
    """The figure computes its rows without drawing (4,200 layers); the live view's bars, after
    its update, hold the same numbers bit for bit, and its status line is the note."""
    view = wr._RecomputeView()
    values = dict(zip(SHAPE, shape, strict=True))
    for mode in recompute.RECOMPUTE_MODES:
        status = view.update(**values, mode=mode)
        assert figure.note(**values, mode=mode) == status
    for row, drawn in enumerate(figure.rows("memory", **values)):
        edges = [group[row].get_x() + group[row].get_width() for group in view.bars]
        assert [drawn["gb1"], drawn["gb2"], drawn["gb3"]] == edges
    view.update(shape[0], 1, shape[2], 8, 1, False, "none")
    flops = figure.rows("flops", seq_len=shape[0], hidden=shape[2])
    assert [r["flops"] for r in flops] == [bar.get_width() for bar in view.flop_bars]


@pytest.mark.parametrize("mode", recompute.RECOMPUTE_MODES)
def test_the_note_is_the_live_status_line(figure, mode):
    shape = SAMPLES[1]
    note = figure.note(**dict(zip(SHAPE, shape, strict=True)), mode=mode)
    plan = recompute.layer_activations(*shape, mode)
    assert note.startswith(f"{mode}: {format_bytes(plan.activation_bytes)} per layer per GPU")
    assert f"+{plan.compute_overhead:.1%} FLOPs" in note


def test_the_controls_are_the_live_explorers_over_a_grid_of_its_values(figure):
    live = inspect.signature(wr.recompute_explorer).parameters
    assert [c.name for c in figure.controls] == list(live)
    offered = {
        "seq_len": wr.SEQ_LENS,
        "micro_batch": wr.MICRO_BATCHES,
        "hidden": wr.HIDDEN,
        "heads": wr.HEADS,
        "tensor_parallel": wr.TENSOR_PARALLEL,
        "sequence_parallel": (False, True),
        "mode": recompute.RECOMPUTE_MODES,
    }
    for c in figure.controls:
        assert set(c.values) <= set(offered[c.name]), c.name
        assert c.values[c.initial] == live[c.name].default, c.name
    by_name = {c.name: c for c in figure.controls}
    assert by_name["seq_len"].values == wr.SEQ_LENS
    assert by_name["mode"].values == recompute.RECOMPUTE_MODES
    assert figure.kinds["seq_len"] == "slider" and figure.kinds["hidden"] == "dropdown"


def test_every_combination_is_a_layer_and_the_page_stays_light(figure):
    combinations = math.prod(len(c.values) for c in figure.controls if c.name in SHAPE)
    shipped = {d["name"]: d.get("values") for d in figure.vega_spec()["data"]}
    assert len(shipped["memory"]) == 3 * combinations  # no "no such layer" on the grid
    assert len(shipped["memory"]) + len(shipped["flops"]) < MAX_ROWS
    data = json.dumps(figure.vega_spec(), separators=(",", ":")).encode()
    assert len(gzip.compress(data)) < 200_000


def test_bad_values_are_refused_with_the_value_named(figure):
    with pytest.raises(ValueError, match="3000"):
        wr.recompute_static(seq_len=3000)
    with pytest.raises(ValueError, match="attention"):
        wr.recompute_static(mode="attention")
    shape = dict(zip(SHAPE, SAMPLES[0], strict=True))
    with pytest.raises(ValueError, match="micro_batch=2 is not one of its values"):
        figure.rows("memory", **{**shape, "micro_batch": 2})
