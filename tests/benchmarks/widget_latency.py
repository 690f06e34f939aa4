"""Per-step latency of every live explorer of ``gpuperf.widgets``, measured in a Jupyter kernel.

Not a pytest test (the file name keeps pytest from collecting it): timings depend on the machine
and its load, so they are reported, not asserted. The course's bar for a live control is one
frame at 60 Hz: **p50 ≤ 16 ms and p95 ≤ 50 ms per step**, in ipywidgets 7.7 (Colab) and 8.x.

The script starts an IPython kernel with ``nbclient`` and there, so that widgets behave as in a
notebook (comms, ``display``), builds every explorer of ``gpuperf.widgets`` (every public function
annotated ``-> Explorer``), displays it, and moves every control a reader can touch (every
control in the explorer's widget tree, wiring-only ones such as a preset picker included) through
about eight of its values, one at a time, then back to where it started. A step's time is the
wall time of setting the control's value: the observers (wiring, update, blit, PNG encoding)
run synchronously inside it. There is no warm-up pass: a reader's first move of a control counts,
so a cache filled on first use shows up in p95; the time to build each explorer is printed
separately. The thread's CPU time per step is printed too, since wall time grows when other
processes share the CPU, and so is the load average before and after.

Run: ``python tests/benchmarks/widget_latency.py`` (``--values N`` values per control, ``--only
NAME`` for some explorers, ``--profile`` for each explorer's ten costliest functions, ``--src
DIR`` to measure another checkout's ``src/`` before and after a change, ``--json`` for the raw
results). The exit status is 1 when an explorer is over the bar.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import pkgutil
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BUDGET_P50_MS = 16.0
BUDGET_P95_MS = 50.0
VALUES_PER_CONTROL = 8

HERE = Path(__file__).resolve().parent
SRC = HERE.parent.parent / "src"


# --- what is measured: run inside the kernel, importable by the structure test ---------------


def explorer_builders() -> dict[str, Callable[[], Any]]:
    """Every public function of ``gpuperf.widgets`` that returns an ``Explorer``, by name."""
    import gpuperf.widgets as package

    builders = {}
    for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        for name in getattr(module, "__all__", ()):
            function = getattr(module, name)
            if not inspect.isfunction(function):
                continue
            if inspect.signature(function).return_annotation in ("Explorer", package.Explorer):
                builders[name] = function
    return builders


def controls_of(explorer: Any) -> dict[str, Any]:
    """Every control in the explorer's widget tree, named by its key in ``explorer.controls``
    (or by its description, for wiring-only controls outside it)."""
    names = {id(control): name for name, control in explorer.controls.items()}
    found: dict[str, Any] = {}

    def walk(widget: Any) -> None:
        if hasattr(widget, "options") or (hasattr(widget, "min") and hasattr(widget, "max")):
            found[names.get(id(widget), widget.description or f"control {len(found)}")] = widget
        for child in getattr(widget, "children", ()):
            walk(child)

    walk(explorer.widget)
    return found


def sweep_values(control: Any, n: int = VALUES_PER_CONTROL) -> list[Any]:
    """About ``n`` values spread over a control's options or range, ends included."""
    if hasattr(control, "options"):
        options = list(control._options_values)  # values, in 7.7 and 8.x alike
        if len(options) <= n:
            return options
        return [options[round(i * (len(options) - 1) / (n - 1))] for i in range(n)]
    low, high, step = control.min, control.max, control.step or 1
    base = getattr(control, "base", None)  # FloatLogSlider: min, max and step are exponents
    positions = [low + round(i * (high - low) / (n - 1) / step) * step for i in range(n)]
    positions = [min(max(p, low), high) for p in positions]
    if isinstance(control.value, int) and not isinstance(control.value, bool):
        positions = [int(p) for p in positions]
    values = [base**p for p in positions] if base is not None else positions
    return list(dict.fromkeys(values))


def sweep(explorer: Any, n: int = VALUES_PER_CONTROL) -> list[dict[str, Any]]:
    """Move every control through its sweep values and back; one record per step taken."""
    steps = []
    for name, control in controls_of(explorer).items():
        start = control.value
        # values are read when the control's turn comes: another control may have moved its range
        for value in [*sweep_values(control, n), start]:
            if value == control.value:
                continue  # no change, no step
            wall, cpu = time.perf_counter(), time.thread_time()
            control.value = value
            steps.append(
                {
                    "control": name,
                    "value": repr(value),
                    "ms": 1e3 * (time.perf_counter() - wall),
                    "cpu_ms": 1e3 * (time.thread_time() - cpu),
                }
            )
    return steps


def _environment() -> dict[str, Any]:
    import ipywidgets
    import matplotlib
    import numpy

    model = ""
    if Path("/proc/cpuinfo").is_file():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": model or platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable,
        "python": platform.python_version(),
        "kernel_executable": sys.executable,
        "kernel_prefix": sys.prefix,
        "gpuperf": str(Path(importlib.import_module("gpuperf").__file__).parent.parent),
        "ipywidgets": ipywidgets.__version__,
        "matplotlib": matplotlib.__version__,
        "numpy": numpy.__version__,
    }


def run(
    n: int = VALUES_PER_CONTROL, only: list[str] | None = None, profile: bool = False
) -> dict[str, Any]:
    """Build, display and sweep each explorer (in the kernel); the raw results as a dict."""
    from IPython.display import display

    results: dict[str, Any] = {
        "environment": _environment(),
        "load_before": os.getloadavg(),
        "values_per_control": n,
        "explorers": {},
    }
    builders = explorer_builders()
    unknown = sorted(set(only or ()) - set(builders))
    if unknown:
        raise ValueError(f"no explorer named {unknown}; explorers: {', '.join(builders)}")
    for name, build in builders.items():
        if only and name not in only:
            continue
        start = time.perf_counter()
        explorer = build()
        display(explorer.widget)
        build_ms = 1e3 * (time.perf_counter() - start)
        profiler = None
        if profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        steps = sweep(explorer, n)
        entry = {
            "build_ms": build_ms,
            "controls": {c: len(sweep_values(w, n)) for c, w in controls_of(explorer).items()},
            "steps": steps,
        }
        if profiler is not None:
            profiler.disable()
            entry["profile"] = _top_functions(profiler)
        results["explorers"][name] = entry
    results["load_after"] = os.getloadavg()
    return results


def _top_functions(profiler: Any, count: int = 10) -> str:
    import io
    import pstats

    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(count)
    lines = text.getvalue().splitlines()
    table = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(lines[table : table + count + 1])


# --- the driver: starts the kernel, prints the report ----------------------------------------


def measure(
    n: int = VALUES_PER_CONTROL,
    only: list[str] | None = None,
    profile: bool = False,
    timeout_s: int = 1200,
    src: Path = SRC,
) -> dict[str, Any]:
    """Run :func:`run` in a fresh IPython kernel of this Python, with the ``gpuperf`` under
    ``src``, and return its results."""
    import nbformat
    from nbclient import NotebookClient

    code = (
        "import json, sys\n"
        f"sys.path[:0] = [{str(src)!r}, {str(HERE)!r}]\n"
        "import widget_latency\n"
        f"print(json.dumps(widget_latency.run({n!r}, {only!r}, profile={profile!r})))\n"
    )
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(code)]
    client = NotebookClient(notebook, timeout=timeout_s, kernel_name="python3")
    client.execute()
    text = "".join(
        output.get("text", "")
        for output in notebook.cells[0].outputs
        if output.get("name") == "stdout"
    )
    if not text.strip():
        raise RuntimeError(f"the benchmark kernel printed no result: {notebook.cells[0].outputs}")
    return json.loads(text.strip().splitlines()[-1])


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile with linear interpolation (numpy's default), without numpy."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def report(results: dict[str, Any]) -> tuple[str, bool]:
    """The printed report, and whether every explorer is within the bar."""
    env = results["environment"]
    lines = [
        f"machine: {env['cpu']}, {env['cpu_count']} CPUs ({env['usable_cpus']} usable); "
        "load average (1, 5, 15 min) "
        + " → ".join(
            "{:.2f} {:.2f} {:.2f}".format(*results[k]) for k in ("load_before", "load_after")
        ),
        f"python {env['python']} ({env['kernel_executable']}), ipywidgets {env['ipywidgets']}, "
        f"matplotlib {env['matplotlib']}, numpy {env['numpy']}; gpuperf from {env['gpuperf']}",
        f"bar: p50 ≤ {BUDGET_P50_MS:g} ms, p95 ≤ {BUDGET_P95_MS:g} ms per step; every control "
        f"through ≤ {results['values_per_control']} values and back, no warm-up",
        "",
        f"{'explorer':26s} {'controls':>8s} {'steps':>5s} {'p50 ms':>7s} {'p95 ms':>7s} "
        f"{'max ms':>7s} {'CPU p95':>7s} {'build ms':>8s}",
    ]
    if env.get("kernel_prefix", sys.prefix) != sys.prefix:
        lines.insert(2, f"note: the kernel ran in {env['kernel_prefix']}, not in {sys.prefix}")
    within = True
    every: list[float] = []
    for name, entry in results["explorers"].items():
        ms = [s["ms"] for s in entry["steps"]]
        cpu = [s["cpu_ms"] for s in entry["steps"]]
        every += ms
        p50, p95 = percentile(ms, 50), percentile(ms, 95)
        ok = p50 <= BUDGET_P50_MS and p95 <= BUDGET_P95_MS
        within &= ok
        lines.append(
            f"{name:26s} {len(entry['controls']):8d} {len(ms):5d} {p50:7.1f} {p95:7.1f} "
            f"{max(ms, default=0):7.1f} {percentile(cpu, 95):7.1f} {entry['build_ms']:8.0f}"
            f"  {'ok' if ok else 'OVER'}"
        )
    p50, p95 = percentile(every, 50), percentile(every, 95)
    lines.append(
        f"{'all explorers':26s} {'':8s} {len(every):5d} {p50:7.1f} {p95:7.1f} "
        f"{max(every, default=0):7.1f}"
    )
    for name, entry in results["explorers"].items():
        if "profile" in entry:
            lines += ["", f"--- {name}: costliest functions over its steps (own time)"]
            lines.append(entry["profile"])
    return "\n".join(lines), within


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=VALUES_PER_CONTROL, metavar="N")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="explorers to measure")
    parser.add_argument("--profile", action="store_true", help="cProfile each explorer's steps")
    parser.add_argument("--json", action="store_true", help="print the raw results only")
    parser.add_argument(
        "--src", type=Path, default=SRC, help="the gpuperf sources to measure (another checkout's"
        " src/, for a before-and-after comparison); default: this checkout's"
    )  # fmt: skip
    args = parser.parse_args(argv)
    results = measure(args.values, args.only, args.profile, src=args.src.resolve())
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    text, within = report(results)
    print(text)
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
