"""Per-step latency of the chapter 1–2 explorers, measured inside a real Jupyter kernel.

Not a pytest test (the file name keeps pytest from collecting it): timings depend on the
machine, so they are reported, not asserted. The budget is p50 ≤ 16 ms and p95 ≤ 50 ms per
slider step on a 2-core CPU.

The script starts an IPython kernel with ``nbclient``, builds each explorer there, displays it
(so the widget comm traffic of a real front end is part of the cost), steps every control
through its whole range, and prints p50 / p95 / max of :attr:`Explorer.timings_ms` (the time
from a control's change to the new PNG being set on the image widget). Wall time suffers when
other processes share the CPU, so the kernel thread's CPU time per step and the 1-minute load
average are printed too.

Run: ``python tests/benchmarks/widget_latency.py`` (add ``--json`` for machine-readable output).
"""

from __future__ import annotations

import argparse
import json
import sys

import nbformat
from nbclient import NotebookClient

BUDGET_P50_MS = 16.0
BUDGET_P95_MS = 50.0

_DRIVER = r'''
import json
import os
import time

import numpy as np
from IPython.display import display
from gpuperf.widgets import hardware_explorer, mfu_calculator, roofline_explorer


def sweep(explorer):
    """Move every control through every value it offers, one step at a time."""
    explorer.timings_ms.clear()
    for name, control in explorer.controls.items():
        start = control.value
        if hasattr(control, "options"):
            values = [option[1] if isinstance(option, tuple) else option
                      for option in getattr(control, "_options_full", control.options)]
        else:  # FloatLogSlider: every step of the slider
            n = int(round((control.max - control.min) / control.step))
            values = [control.base ** (control.min + i * control.step) for i in range(n + 1)]
        for value in values:
            control.value = value
        control.value = start
    return explorer.timings_ms


results = {}
for name, build in [("hardware explorer", hardware_explorer),
                    ("MFU calculator", mfu_calculator),
                    ("roofline explorer", roofline_explorer)]:
    explorer = build()
    display(explorer.widget)
    sweep(explorer)  # warm-up pass (first draws, caches)
    cpu_start = time.thread_time()
    timings = sweep(explorer)
    cpu_ms = 1e3 * (time.thread_time() - cpu_start) / len(timings)
    results[name] = {
        "steps": len(timings),
        "cpu_ms_per_step": cpu_ms,
        "load_average_1min": os.getloadavg()[0],
        "p50_ms": float(np.percentile(timings, 50)),
        "p95_ms": float(np.percentile(timings, 95)),
        "max_ms": float(np.max(timings)),
    }
print(json.dumps(results))
'''


def measure(timeout_s: int = 600) -> dict[str, dict[str, float]]:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(_DRIVER)]
    client = NotebookClient(notebook, timeout=timeout_s, kernel_name="python3")
    client.execute()
    for output in notebook.cells[0].outputs:
        if output.get("name") == "stdout":
            return json.loads(output["text"].strip().splitlines()[-1])
    raise RuntimeError(f"the benchmark kernel printed no result: {notebook.cells[0].outputs}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the raw JSON only")
    args = parser.parse_args(argv)
    results = measure()
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"budget: p50 ≤ {BUDGET_P50_MS:g} ms, p95 ≤ {BUDGET_P95_MS:g} ms per step")
    within = True
    for name, r in results.items():
        ok = r["p50_ms"] <= BUDGET_P50_MS and r["p95_ms"] <= BUDGET_P95_MS
        within &= ok
        print(
            f"{name:18s} {r['steps']:4d} steps  p50 {r['p50_ms']:5.1f} ms  "
            f"p95 {r['p95_ms']:5.1f} ms  max {r['max_ms']:5.1f} ms  "
            f"CPU {r['cpu_ms_per_step']:4.1f} ms/step  load {r['load_average_1min']:.1f}  "
            f"{'ok' if ok else 'OVER'}"
        )
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
