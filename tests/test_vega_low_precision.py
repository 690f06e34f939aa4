"""The online book's two figures of chapter 3.1 plot what the calculators compute.

:func:`gpuperf.widgets.tricks.precision_static` (the roofline at a chosen precision) and
:func:`gpuperf.widgets.numerics.accumulation_static` (the error of a long dot product) read
their rows from the live views; these tests recompute them from :mod:`gpuperf.cost`,
:mod:`gpuperf.roofline` and :func:`gpuperf.numerics.dot_errors` at sampled control values.
"""

from __future__ import annotations

import math

import pytest

from gpuperf import cost, numerics
from gpuperf.hardware import chip
from gpuperf.roofline import attainable_flops, ridge_point
from gpuperf.widgets import numerics as acc
from gpuperf.widgets import tricks

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


@pytest.fixture(scope="module")
def precision():
    return tricks.precision_static()


@pytest.fixture(scope="module")
def accumulation():
    return acc.accumulation_static()


def test_precision_controls_are_the_live_explorers(precision):
    offered = {c.name: tuple(c.values) for c in precision.controls}
    assert offered == {
        "chip_name": tricks.CHIPS,
        "precision": tricks.PRECISIONS,
        "op": tuple(key for _, key in tricks.OPERATIONS),
    }


def _op(op: str, p: str) -> cost.OpCost:
    if op == "relu":
        return cost.elementwise(2**26, p, flops_per_element=1)
    return cost.matmul(4096, 4096, 4096, p)


@pytest.mark.parametrize("chip_name", ["T4", "A100-80GB", "H100-SXM"])
@pytest.mark.parametrize("p", ["fp32", "tf32", "bf16", "fp8"])
@pytest.mark.parametrize("op", ["relu", "matmul"])
def test_precision_figure_equals_the_calculators(precision, chip_name, p, op):
    the_chip = chip(chip_name)
    values = dict(chip_name=chip_name, precision=p, op=op)
    point = precision.rows("point", **values)
    if p not in the_chip.precisions:
        assert point == [] and precision.rows("roof", **values) == []
        assert "cannot compute" in precision.note(**values)
        return
    c = _op(op, p)
    [shown] = point
    assert math.isclose(shown["x"], c.flops / c.bytes, rel_tol=1e-12)
    expected = min(the_chip.peak_flops(p), the_chip.hbm_bandwidth * c.flops / c.bytes)
    assert math.isclose(shown["y"], expected, rel_tol=1e-9)
    ridge = ridge_point(the_chip, p)
    [rule] = precision.rows("ridge", **values)
    assert math.isclose(rule["x"], ridge, rel_tol=1e-12)
    assert math.isclose(rule["y"], the_chip.peak_flops(p), rel_tol=1e-12)
    roof = precision.rows("roof", **values)
    assert roof[-1]["y"] == pytest.approx(the_chip.peak_flops(p), rel=1e-12)
    for r in roof:
        assert r["y"] == pytest.approx(float(attainable_flops(r["x"], the_chip, p)), rel=1e-12)
    others = {r["precision"]: r for r in precision.rows("others", **values)}
    assert set(others) == {q for q in tricks.PRECISIONS if q in the_chip.precisions}
    for q, r in others.items():
        cq = _op(op, q)
        assert r["x"] == pytest.approx(cq.flops / cq.bytes, rel=1e-12)


def test_accumulation_controls_are_the_live_explorers(accumulation):
    offered = {c.name: tuple(c.values) for c in accumulation.controls}
    assert offered == {
        "input_format": acc.INPUT_FORMATS,
        "accumulator": acc.ACCUMULATORS,
        "length": acc.LENGTHS,
    }


@pytest.mark.parametrize(
    ("input_format", "accumulator", "length"),
    [("fp16", "fp32", 4096), ("e4m3", "fp16", 16384), ("bf16", "bf16", 64), ("fp16", "fp16", 16)],
)
def test_accumulation_figure_equals_the_calculator(
    accumulation, input_format, accumulator, length
):
    errors = numerics.dot_errors(acc.CURVE_LENGTHS, input_format, accumulator, trials=acc.TRIALS)
    u = numerics.float_format(accumulator).unit_roundoff
    floor = 1e-9  # the plot's lower edge: smaller errors are drawn on it
    values = dict(input_format=input_format, accumulator=accumulator, length=length)
    [point] = accumulation.rows("point", **values)
    i = errors.lengths.index(length)
    assert point["n"] == length
    assert point["error"] == pytest.approx(max(errors.mean_error[i], floor), rel=1e-12)
    curves: dict[str, dict[float, float]] = {}
    for r in accumulation.rows("curves", **values):
        curves.setdefault(r["curve"], {})[r["n"]] = r["error"]
    mean, typical = curves["mean (emulated)"], curves["typical √n·u"]
    bound = curves["bound γₙ = nu/(1−nu)"]
    for j, n in enumerate(errors.lengths):
        assert mean[n] == pytest.approx(max(errors.mean_error[j], floor), rel=1e-12)
        assert typical[n] == pytest.approx(math.sqrt(n) * u, rel=1e-12)
        if n * u < 1:
            assert bound[n] == pytest.approx(n * u / (1 - n * u), rel=1e-12)
        else:
            assert n not in bound  # no bound where n·u ≥ 1: left out of the figure


def test_values_off_the_grid_are_refused(precision, accumulation):
    with pytest.raises(ValueError, match="length"):
        accumulation.rows("point", input_format="fp16", accumulator="fp32", length=100)
    with pytest.raises(ValueError, match="precision"):
        precision.rows("point", chip_name="T4", precision="fp64", op="relu")


def test_an_initial_value_off_the_grid_is_refused():
    with pytest.raises(ValueError, match="fp64"):
        tricks.precision_static(precision="fp64")
    with pytest.raises(ValueError, match="100"):
        acc.accumulation_static(length=100)
