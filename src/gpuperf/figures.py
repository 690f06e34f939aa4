"""How the course's matplotlib figures reach the page: SVG with real text, sized for a phone.

Readers open the book on phones as often as on desktops. On a 390-px-wide phone the text column
is :data:`PHONE_COLUMN_PX` wide and a wider figure shrinks to it, text included: a figure ``W``
CSS px wide shows a font of ``f`` pt at ``f × 4/3 × 342 / W`` px. The course's floor is 9 pt,
:data:`MIN_TEXT_PX` (12 CSS px), as displayed, without a tap. So figures are drawn
:data:`WIDTH_IN` wide (422 CSS px, comfortable on a desktop) with no text under
:data:`FONT_PT`, which keeps every word at 12 px or more once shrunk to the phone's column;
dense pictures are split or stacked rather than shrunk further. A tap still enlarges a figure.

The inline backend writes SVG with ``svg.fonttype: none``: the words stay text (sharp at any
zoom, searchable, vector in the PDF), and the browser test can read every font size and the
displayed width of every figure. ``svg.hashsalt`` and dropping the Date and Creator metadata make
the same figure the same bytes on every run, so re-executing a notebook leaves no diff.

:func:`use_book_style` is what every notebook's setup cell calls
(:func:`gpuperf.notebook.colab_setup_source`); :func:`svg_text_px` measures an SVG as a reader
would see it at a given width (unit tests; the browser test measures the built pages itself).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from typing import Any

from ._validate import finite_float, optional, positive_float, positive_int, sequence, show

__all__ = [
    "FONT_PT",
    "MIN_TEXT_PX",
    "PHONE_COLUMN_PX",
    "RC",
    "SVG_METADATA",
    "WIDTH_IN",
    "plain_log_ticks",
    "si_label",
    "smallest_text_px",
    "svg_text_px",
    "svg_width_px",
    "use_book_style",
]

#: Width of the book's text column on a 390 × 844 phone, in CSS px (Chromium, sphinx-book-theme).
PHONE_COLUMN_PX = 342
#: Smallest text a reader should see without a tap: 9 pt = 12 CSS px.
MIN_TEXT_PX = 12
#: A figure's width as drawn, in inches (96 CSS px each: 422 px).
WIDTH_IN = 4.4
#: Smallest font in a figure, in points: a WIDTH_IN figure is ~425 px wide once cropped to its
#: ink plus 0.05 in of margin, so shrunk to the phone's column it shows 11.5 pt at
#: 11.5 × 4/3 × 342 / 425 = 12.3 px.
FONT_PT = 11.5
#: A figure's titles, a little larger than its other words.
TITLE_PT = 12.5
#: SVG metadata written as ``None``: no timestamp, no matplotlib version (same bytes every run).
SVG_METADATA = {"Date": None, "Creator": None}
#: CSS px per SVG user unit: matplotlib writes SVG in points (1/72 in), CSS has 96 px per inch.
_PX_PER_PT = 96 / 72

#: The matplotlib settings of the course's figures (``matplotlib.rcParams`` keys).
RC: dict[str, Any] = {
    # no layout engine here: the live explorers place their axes themselves; a static figure
    # asks for layout="constrained"
    "figure.figsize": (WIDTH_IN, 3.2),
    "font.size": FONT_PT,
    "axes.titlesize": TITLE_PT,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": FONT_PT,
    "ytick.labelsize": FONT_PT,
    "legend.fontsize": FONT_PT,
    "legend.title_fontsize": FONT_PT,
    "figure.titlesize": TITLE_PT,
    # matplotlib lays text out with DejaVu Sans (it ships with matplotlib); a browser without
    # it draws the narrower Helvetica or Arial, so text never runs wider than laid out.
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial"],
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.05,
    "svg.fonttype": "none",
    "svg.hashsalt": "gpuperf",
}


def use_book_style() -> None:
    """Draw every later figure in the course's style and show it as SVG with real text.

    Sets :data:`RC` in ``matplotlib.rcParams``; inside IPython it also tells the inline backend
    to print SVG (tight bounding box, no metadata that changes between runs).
    """
    from .runtime import require

    matplotlib = require("matplotlib", "pip install matplotlib")
    matplotlib.rcParams.update(RC)
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: the settings above are all there is
        return
    shell = get_ipython()
    if shell is None:
        return
    shell.run_line_magic("config", 'InlineBackend.figure_formats = ["svg"]')
    kwargs = {"bbox_inches": "tight", "metadata": SVG_METADATA}
    shell.run_line_magic("config", f"InlineBackend.print_figure_kwargs = {kwargs!r}")


def si_label(value: float, _position: Any = None, unit: str = "") -> str:
    """``2e9`` → ``'2 G'`` + unit, ``0.05`` → ``'0.05'``: a short, plain-text tick label (a
    matplotlib ``FuncFormatter`` function; ``unit`` is appended, e.g. ``'B/s'``)."""
    finite_float("value", value)  # a check only: the label formats the value as given
    if not isinstance(unit, str):
        raise TypeError(f"unit={show(unit)} must be a string, e.g. 'B/s'")
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{' ' if unit else ''}{prefix}{unit}"
    return f"{value:g}{' ' + unit if unit else ''}"


def plain_log_ticks(
    axis: Any,
    label: Any = si_label,
    *,
    base: float = 10,
    subs: tuple[float, ...] = (1.0,),
    numticks: int | None = None,
) -> None:
    """Label a log axis (``ax.xaxis``, ``ax.yaxis``) in plain text, major ticks only.

    matplotlib labels log axes ``10³`` in mathtext, whose exponent is drawn at 70 % of the
    font size: under the 12 px a phone needs. ``label`` is a ``(value, position) → str``
    function (default :func:`si_label`: ``1k``, ``10 G``); ``numticks`` caps the labels.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if not callable(getattr(axis, "set_major_locator", None)):
        raise TypeError(f"axis={axis!r} must be a matplotlib Axis, e.g. ax.xaxis")
    if not callable(label):
        raise TypeError(f"label={label!r} must be a function (value, position) -> str")
    if positive_float("base", base) <= 1:
        raise ValueError(f"base={show(base)} must be a log base > 1")
    base = float(base)
    subs = sequence("subs", subs, positive_float)
    numticks = optional("numticks", numticks, positive_int)
    axis.set_major_locator(LogLocator(base=base, subs=subs, numticks=numticks))
    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_formatter(NullFormatter())


_SVG = "{http://www.w3.org/2000/svg}"
_FONT_SIZE = re.compile(r"font-size:\s*([0-9.]+)px")


def _root(svg: str) -> Any:
    if not isinstance(svg, str) or "<svg" not in svg:
        raise TypeError(f"svg={svg[:40] if isinstance(svg, str) else svg!r} must be SVG text")
    try:
        return ElementTree.fromstring(svg.encode("utf-8"))
    except ElementTree.ParseError as error:
        raise ValueError(f"svg={svg[:40]!r}... is not well-formed SVG: {error}") from None


def svg_width_px(svg: str) -> float:
    """The SVG's own width in CSS px (matplotlib writes ``width="324pt"``)."""
    width = _root(svg).get("width", "")
    match = re.fullmatch(r"([0-9.]+)(pt|px)?", width)
    if not match:
        raise ValueError(f"the SVG's width={width!r} is not a length in pt or px")
    return float(match.group(1)) * (_PX_PER_PT if match.group(2) == "pt" else 1.0)


def svg_text_px(svg: str, shown_width_px: float | None = None) -> list[tuple[str, float]]:
    """Every piece of text in a matplotlib SVG with its font size in CSS px as a reader sees it
    when the figure is shown ``shown_width_px`` wide (default: its own width)."""
    root = _root(svg)
    own = svg_width_px(svg)
    shown = own if shown_width_px is None else positive_float("shown_width_px", shown_width_px)
    view_box = [float(v) for v in root.get("viewBox", f"0 0 {own} 0").split()]
    scale = shown / view_box[2]  # CSS px per user unit
    sizes = []
    for element in root.iter():
        if element.tag not in (_SVG + "text", _SVG + "tspan") or not (element.text or "").strip():
            continue
        match = _FONT_SIZE.search(element.get("style", ""))
        if match is None:
            parent_style = _text_style(root, element)
            match = _FONT_SIZE.search(parent_style)
        if match is None:
            raise ValueError(f"text {element.text!r} has no font-size in the SVG")
        sizes.append((element.text.strip(), float(match.group(1)) * scale))
    return sizes


def _text_style(root: Any, element: Any) -> str:
    """The style of the ``<text>`` that holds a ``<tspan>``."""
    for text in root.iter(_SVG + "text"):
        if element in list(text):
            return text.get("style", "")
    return ""


def smallest_text_px(svg: str, column_px: float = PHONE_COLUMN_PX) -> float:
    """The smallest text of a matplotlib SVG, in CSS px, in a column ``column_px`` wide: the
    figure shows at its own width, or shrunk to the column when it is wider."""
    column_px = positive_float("column_px", column_px)
    sizes = svg_text_px(svg, min(svg_width_px(svg), column_px))
    if not sizes:
        raise ValueError("the SVG has no text")
    return min(size for _, size in sizes)
