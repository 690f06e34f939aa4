"""Root pytest configuration: every notebook under chapters/ and labs/ is checked by nbval.

Strict mode (``--nbval``): stored outputs must match a fresh run, after the substitutions in
``tests/nbval_sanitize.cfg``. Generated student notebooks are not run: their answers are blank.

The calculators' coverage gate (``--cov=gpuperf``, see ``[tool.coverage]`` in pyproject.toml)
counts what the calculators' own tests run; every other test is marked ``no_cover`` and runs
untraced from its setup to its teardown, so one pytest run holds the whole suite and the gate at
no cost.

Under pytest-xdist each worker, and every kernel, grader and replica it starts, gets its share
of the cores' OpenMP threads (:func:`share_of_the_cores`).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"


def share_of_the_cores() -> None:
    """In a pytest-xdist worker, set ``OMP_NUM_THREADS`` to the cores per worker (unless the
    caller set it), before anything imports torch; the kernels, graders and replicas the worker
    starts inherit it. The workers already keep every core busy: torch's default of one thread
    per core in each of them, and in each kernel beside them, oversubscribes the cores, and idle
    OpenMP threads spin. Measured on 2 cores (2026-11-27): the kernel tests and three kernel
    notebooks took 45 and 48 CPU-seconds by default, 38 and 39 with one thread per worker.
    (scikit-learn's test suite limits its workers' threads the same way.)"""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if workers.isdigit() and int(workers) > 0:
        affinity = getattr(os, "sched_getaffinity", None)
        cores = len(affinity(0)) if affinity else (os.cpu_count() or 1)
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, cores // int(workers))))


share_of_the_cores()


def calculator_tests() -> set[Path]:
    """``tests/test_<module>.py`` of every module the coverage gate measures."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
        import tomli as tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["coverage"]["report"]["include"]
    modules = [re.fullmatch(r"\*/gpuperf/(\w+)\.py", p).group(1) for p in patterns]
    return {ROOT / "tests" / f"test_{module}.py" for module in modules}


collect_ignore_glob = ["_build/*", "labs/*/student/*", "labs/*/autograder/*", ".venv*/*"]


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("_cov"):
        return  # pytest-cov absent (or -p no:cov): nothing is traced anyway
    counted = calculator_tests()
    for item in items:
        if item.path not in counted:
            item.add_marker(pytest.mark.no_cover)


def _coverage(config):
    """pytest-cov's controller of this process's coverage, or None without ``--cov``."""
    return getattr(config.pluginmanager.get_plugin("_cov"), "cov_controller", None)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """Under pytest-xdist, pytest-cov 7.1 starts coverage twice in each worker: once when the
    worker parses ``-n`` (the master's kind of coverage) and again, its own, at session start.
    Coverage keeps started collectors on a stack, so pausing the second for a ``no_cover`` test
    resumed the first, and every test was traced (measured: +67 % CPU on kernel tests). The
    first collects nothing pytest-cov ever saves, so it is stopped before the second starts."""
    controller = _coverage(session.config)
    if controller is not None and hasattr(session.config, "workerinput"):
        controller.pause()


@contextlib.contextmanager
def _untraced(item):
    """No tracing for a ``no_cover`` test (pytest-cov itself pauses only around its call)."""
    controller = _coverage(item.config)
    if controller is None or item.get_closest_marker("no_cover") is None:
        yield
        return
    controller.pause()
    try:
        yield
    finally:
        controller.resume()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with _untraced(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    with _untraced(item):
        return (yield)


def pytest_configure(config):
    # Decide compile-or-interpret before any test module can import triton: Triton fixes the
    # choice for its own helpers at import time (see gpuperf.kernels).
    from gpuperf.runtime import configure_triton

    configure_triton()
    option = config.option
    # nbval runs a notebook's cells in order in one kernel, so under pytest-xdist a notebook
    # must stay on one worker: `-n` alone spreads single tests (--dist load); group by file.
    if getattr(option, "dist", "no") in ("load", "worksteal"):
        option.dist = "loadfile"
    if not hasattr(option, "nbval") or option.nbval_lax:
        return  # nbval disabled with -p no:nbval, or the user asked for lax mode
    option.nbval = True
    option.nbval_current_env = True
    if option.nbval_sanitize_with is None and not option.sanitize_with:
        option.nbval_sanitize_with = str(SANITIZE)
