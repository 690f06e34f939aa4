"""The widget benchmark (``tests/benchmarks/widget_latency.py``) finds every live explorer and
steps every control a reader can touch. No time is asserted here: the benchmark reports the
times with the machine and its load; a test that asserted them would flake."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parent.parent
WIDGETS = ROOT / "src" / "gpuperf" / "widgets"


@pytest.fixture(scope="module")
def bench():
    path = ROOT / "tests" / "benchmarks" / "widget_latency.py"
    spec = importlib.util.spec_from_file_location("widget_latency", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _explorers_in_source() -> set[str]:
    """Public module-level functions annotated ``-> Explorer``, read from the source files."""
    names = set()
    for path in WIDGETS.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                returns = node.returns
                annotation = getattr(returns, "id", None) or getattr(returns, "value", None)
                if annotation == "Explorer":
                    names.add(node.name)
    return names


def test_it_finds_every_explorer(bench):
    found = bench.explorer_builders()
    assert set(found) == _explorers_in_source()
    assert {"recompute_explorer", "accumulation_explorer", "online_softmax_explorer"} <= set(found)


@pytest.mark.parametrize("name", sorted(_explorers_in_source()))
def test_it_sweeps_every_control_of_every_explorer(bench, name):
    explorer = bench.explorer_builders()[name]()
    controls = bench.controls_of(explorer)
    assert set(explorer.controls) <= set(controls)
    for control_name, control in controls.items():
        values = bench.sweep_values(control)
        assert len(values) >= 2, f"{name}: {control_name} has a single value to step"
        if hasattr(control, "options"):
            assert all(v in control._options_values for v in values)
        else:
            low, high = control.min, control.max
            if hasattr(control, "base"):
                low, high = control.base**low, control.base**high
            assert all(low * (1 - 1e-9) <= v <= high * (1 + 1e-9) for v in values)


def test_sweep_values_spread_over_every_kind_of_control(bench):
    import ipywidgets as widgets

    controls = [
        widgets.Dropdown(options=[(str(k), k) for k in range(20)], value=3),
        widgets.ToggleButtons(options=["a", "b", "c"]),
        widgets.SelectionSlider(options=[("1", 1), ("2", 2), ("4", 4)], value=2),
        widgets.IntSlider(value=5, min=1, max=100),
        widgets.FloatSlider(value=50, min=0, max=300, step=5),
        widgets.FloatLogSlider(value=1e6, base=10, min=2, max=10, step=0.25),
    ]
    for control in controls:
        values = bench.sweep_values(control, 8)
        assert 2 <= len(values) <= 8 and len(set(values)) == len(values)
        for value in values:
            control.value = value
            assert control.value == value, f"{value!r} is not a value of {control}"
    assert bench.sweep_values(controls[0], 8)[::7] == [0, 19], "the ends are included"
    assert bench.sweep_values(controls[1], 8) == ["a", "b", "c"]
    assert bench.sweep_values(controls[3], 8)[::7] == [1, 100]
    log = bench.sweep_values(controls[5], 8)
    assert log[0] == pytest.approx(1e2) and log[-1] == pytest.approx(1e10)


def test_it_steps_controls_outside_explorer_controls(bench):
    """The transfer explorer's preset picker only wires the sliders: it is a control too."""
    from gpuperf.widgets.memory import transfer_explorer

    explorer = transfer_explorer()
    controls = bench.controls_of(explorer)
    assert set(explorer.controls) < set(controls)
    assert explorer.preset in controls.values()
    steps = bench.sweep(explorer, 2)
    assert {step["control"] for step in steps} == set(controls)
    assert all(step["ms"] >= 0 and step["cpu_ms"] >= 0 for step in steps)


def test_the_report_gives_each_explorer_and_the_machine(bench):
    steps = [{"control": "x", "value": "1", "ms": float(ms), "cpu_ms": 1.0} for ms in range(20)]
    results = {
        "environment": {
            "cpu": "test CPU", "cpu_count": 2, "usable_cpus": 2, "python": "3.11.7",
            "kernel_executable": "python", "ipywidgets": "7.7.1", "matplotlib": "3.10.0",
            "numpy": "2.0.2", "gpuperf": "/src",
        },
        "load_before": (1.0, 1.0, 1.0),
        "load_after": (1.5, 1.0, 1.0),
        "values_per_control": 8,
        "explorers": {
            "fast_explorer": {"build_ms": 10.0, "controls": {"x": 8}, "steps": steps},
            "slow_explorer": {
                "build_ms": 10.0, "controls": {"x": 8},
                "steps": [{**s, "ms": 100.0} for s in steps],
            },
        },
    }  # fmt: skip
    text, within = bench.report(results)
    assert not within
    assert "2 CPUs" in text and "1.00 1.00 1.00 → 1.50 1.00 1.00" in text
    assert "ipywidgets 7.7.1" in text and "matplotlib 3.10.0" in text
    assert "fast_explorer" in text and "slow_explorer" in text and "all explorers" in text
    assert text.count("OVER") == 1
