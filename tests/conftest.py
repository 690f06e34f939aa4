"""Shared fixtures for the book tests: one book build per session, and Chromium discovery.

The book is built once, into a temporary directory, by the session fixture ``built_book``; both
``test_book.py`` (exit code, warnings) and ``test_browser.py`` (pages render in headless
Chromium) use that build, also when pytest-xdist runs them in different worker processes.
Missing system tools skip the tests locally and fail them under ``CI=true``, so a CI machine
cannot pass by lacking Chromium.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

try:
    from hypothesis import settings
except ModuleNotFoundError:  # the Colab replica runs the kernel tests, which use none of it,
    settings = None  # with Colab's packages only, and Colab has no hypothesis

# No test asserts how long one Hypothesis example takes: the default 200 ms deadline is a
# wall-clock bound that a loaded machine (or coverage tracing) breaks at random. Hangs are
# caught where they can happen (test_api_contract.py's per-call alarm).
if settings is not None:
    settings.register_profile("gpuperf", deadline=None)
    settings.load_profile("gpuperf")

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("GPUPERF_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("GPUPERF_CHROMEDRIVER", "/usr/bin/chromedriver"))


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def skip_or_fail(reason: str) -> None:
    """Skip on a developer machine; fail under CI=true, where the tool must be installed."""
    if in_ci():
        pytest.fail(f"{reason} (required when CI=true)", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True)
class BookBuild:
    returncode: int
    output: str
    html: Path
    seconds: float
    #: The Python that ran the build (GPUPERF_BOOK_VENV's, or the tests' own).
    python: str = sys.executable


def book_python() -> str:
    """The interpreter that builds the book: ``GPUPERF_BOOK_VENV``'s, an environment made from
    requirements-book.txt alone (``.ci/run`` sets it, so CI proves the light build works and
    tests that very build), or else the tests' own."""
    venv = os.environ.get("GPUPERF_BOOK_VENV")
    if not venv:
        return sys.executable
    python = Path(venv).resolve() / "bin" / "python"
    if not python.is_file():
        pytest.fail(f"GPUPERF_BOOK_VENV={venv} has no bin/python", pytrace=False)
    return str(python)


def jupyter_book_command(python: str | None = None) -> list[str]:
    python = python or sys.executable
    exe = shutil.which("jupyter-book", path=str(Path(python).parent))
    if exe is None and python == sys.executable:
        exe = shutil.which("jupyter-book")
    if exe is None:
        return [python, "-c", "from jupyter_book.cli.main import main; main()"]
    return [exe]


def _build_book(out: Path, python: str) -> dict[str, Any]:
    """``jupyter-book build . -W -n --keep-going`` into ``out``; the result as plain data."""
    command = [
        *jupyter_book_command(python),
        "build",
        str(ROOT),
        "-W",
        "-n",
        "--keep-going",
        "--path-output",
        str(out),
    ]
    start = time.perf_counter()
    result = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard: the build takes about a minute
        env={**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"},
    )
    return {
        "returncode": result.returncode,
        "output": result.stdout + result.stderr,
        "html": str(out / "_build" / "html"),
        "seconds": time.perf_counter() - start,
        "python": python,
    }


def session_shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder all workers of this test session share: under pytest-xdist each worker's base
    temp is ``<session>/popen-gwN``, so the session folder is its parent; without xdist it is
    the base temp itself (a new one each session, so nothing leaks between sessions)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(autouse=True)
def _matplotlib_settings_restored():
    """matplotlib's global settings are put back after each test: a test that changes them
    (``figures.use_book_style()``, called by the API sweep) would otherwise change the figures
    of the next test on the same worker."""
    try:
        import matplotlib
    except ModuleNotFoundError:  # the calculators need no matplotlib, nor do their tests
        yield
        return
    with matplotlib.rc_context():
        yield


@pytest.fixture(scope="session")
def built_book(tmp_path_factory: pytest.TempPathFactory) -> BookBuild:
    """``jupyter-book build . -W -n --keep-going`` into a fresh directory, once per session.

    Under pytest-xdist the workers share that one build: the first to ask builds it while
    holding a file lock, and the others wait for the lock (the build's end is the signal),
    then read the result it recorded.

    ``GPUPERF_BUILT_BOOK=DIR`` reuses a build made with ``--path-output DIR`` instead (for
    iterating on the browser tests; its log, if saved as ``DIR/build.log``, is the output)."""
    reuse = os.environ.get("GPUPERF_BUILT_BOOK")
    if reuse:
        log = Path(reuse) / "build.log"
        return BookBuild(
            returncode=0,
            output=log.read_text(errors="replace") if log.is_file() else "",
            html=Path(reuse) / "_build" / "html",
            seconds=0.0,
        )
    from filelock import FileLock

    shared = session_shared_dir(tmp_path_factory)
    record = shared / "book-build.json"
    with FileLock(shared / "book-build.lock"):
        if not record.is_file():
            result = _build_book(shared / "book", book_python())
            record.write_text(json.dumps(result), encoding="utf-8")
        result = json.loads(record.read_text(encoding="utf-8"))
    return BookBuild(**{**result, "html": Path(result["html"])})


@pytest.fixture(scope="session")
def chrome_paths() -> tuple[Path, Path]:
    """(chromium, chromedriver); skipped locally and failed under CI=true when missing."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        skip_or_fail("selenium is not installed (pip install -r requirements.txt)")
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not tool.exists():
            skip_or_fail(f"{tool} not found (apt-get install chromium chromium-driver)")
    return CHROMIUM, CHROMEDRIVER


#: axe-core from npm (``npm ci --prefix tests/a11y``; .ci/run does it), for the browser test.
AXE_JS = ROOT / "tests" / "a11y" / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture(scope="session")
def axe_source() -> str:
    """The axe-core script; skipped locally and failed under CI=true when missing."""
    if not AXE_JS.is_file():
        skip_or_fail(f"{AXE_JS.relative_to(ROOT)} not found (npm ci --prefix tests/a11y)")
    return AXE_JS.read_text(encoding="utf-8")


@pytest.fixture
def needless_full_redraws():
    """Step an explorer and return the steps that redrew its whole figure with no axis rescaled.

    A live explorer stays within a frame by blitting: only a step that rescales an axis redraws
    the static background (``canvas.draw``). Counting those draws tests the mechanism itself,
    whatever the machine's load; the step times are reported by the widget benchmark
    (``tests/benchmarks/widget_latency.py``) instead of being asserted against a wall-clock
    bound here. With ``rescales=False`` every whole-figure draw is reported, rescaling or not:
    for an explorer whose rescales are cached or redrawn as a layer (see ``LiveFigure``).
    """

    def run(
        explorer: Any, steps: list[dict[str, Any]], *, rescales: bool = True
    ) -> list[dict[str, Any]]:
        figure = explorer.live.figure
        canvas = figure.canvas
        draws = 0
        original = canvas.draw

        def counting_draw(*args: Any, **kwargs: Any) -> Any:
            nonlocal draws
            draws += 1
            return original(*args, **kwargs)

        def limits() -> list[tuple[float, ...]]:
            return [(*ax.get_xlim(), *ax.get_ylim()) for ax in figure.axes]

        needless = []
        canvas.draw = counting_draw
        try:
            for step in steps:
                before, drawn = limits(), draws
                explorer.step(**step)
                if draws > drawn and (limits() == before or not rescales):
                    needless.append(step)
        finally:
            del canvas.draw  # the instance attribute; the class's method shows again
        return needless

    return run


@pytest.fixture
def full_draw_png():
    """The PNG a view's figure gives when drawn whole after ``view.update(*args, **kwargs)``.

    A fresh ``LiveFigure`` with no cached background and no ``rescaling`` layer draws the whole
    figure, then its animated artists: the picture every step showed before backgrounds were
    cached per limits and rescaling axes redrawn as layers. Tests compare an explorer's
    picture with it, pixel for pixel (the PNG encoder is deterministic).
    """
    from gpuperf.widgets import LiveFigure

    def draw(view: Any, *args: Any, **kwargs: Any) -> bytes:
        view.update(*args, **kwargs)
        return LiveFigure(view.figure, view.animated).png

    return draw
