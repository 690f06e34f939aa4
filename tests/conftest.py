"""Shared fixtures for the book tests: one book build per session, and Chromium discovery.

The book is built once, into a temporary directory, by the session fixture ``built_book``; both
``test_book.py`` (exit code, warnings) and ``test_browser.py`` (pages render in headless
Chromium) use that build. Missing system tools skip the tests locally and fail them under
``CI=true``, so a CI machine cannot pass by lacking Chromium.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

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


def jupyter_book_command() -> list[str]:
    exe = shutil.which("jupyter-book", path=str(Path(sys.executable).parent)) or shutil.which(
        "jupyter-book"
    )
    if exe is None:
        return [sys.executable, "-c", "from jupyter_book.cli.main import main; main()"]
    return [exe]


@pytest.fixture(scope="session")
def built_book(tmp_path_factory: pytest.TempPathFactory) -> BookBuild:
    """``jupyter-book build . -W -n --keep-going`` into a fresh directory, once per session.

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
    out = tmp_path_factory.mktemp("book")
    command = [
        *jupyter_book_command(),
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
        timeout=600,
        env={**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"},
    )
    return BookBuild(
        returncode=result.returncode,
        output=result.stdout + result.stderr,
        html=out / "_build" / "html",
        seconds=time.perf_counter() - start,
    )


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
