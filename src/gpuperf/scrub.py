"""Kernel-free interactive figures for the online book.

The published book has no Python kernel, so an ipywidgets slider there cannot recompute. A
:class:`Scrubber` renders every combination of its controls ahead of time, with the same plotting
code the live widget uses, and writes one self-contained HTML block: the frames as inline PNGs,
plain ``<input type=range>`` / ``<select>`` controls, and a few lines of vanilla JavaScript that
swap the image. No CDN, no kernel, no build step; it works offline and in any browser.

Frames are drawn for phones as well as desktops: the bitmap has twice the pixels of its size on
the page (``dpi`` = 2 × :data:`CSS_DPI`, the ``<img>`` carries its CSS width and height), so text
stays sharp on a high-density screen and when a reader pinches to zoom; no text is smaller than
:data:`MIN_FONT_PT`; and a tap on the figure shows it at full size, scrolling sideways inside its
own box on a narrow screen. Frames cost page weight (a frame is quantised to 128 colours and is
~30–80 kB), so keep the grid small: a few dozen frames per figure; the book loads a frame only
when a control selects it. ``max_frames`` guards against an accidental cross product of
thousands.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._validate import name_string, positive_float, positive_int, sequence, show

#: Highest resolution a frame may be rendered at (frames are inline PNGs in the page).
MAX_DPI = 300
#: CSS pixels per figure inch on the page: a figure is shown at the size its fonts were set for.
CSS_DPI = 72
#: Resolution frames are rendered at: two bitmap pixels per CSS pixel (sharp on phones).
FRAME_DPI = 2 * CSS_DPI
#: Smallest font size (points at display size) a frame may show.
MIN_FONT_PT = 9.0
#: Colours a frame is quantised to (a palette PNG is a third of an RGB one).
FRAME_COLOURS = 128


def legible(figure: Any, minimum: float = MIN_FONT_PT) -> Any:
    """Raise every text of ``figure`` smaller than ``minimum`` points to ``minimum``."""
    from .runtime import require

    minimum = positive_float("minimum", minimum, maximum=72)
    if not callable(getattr(figure, "findobj", None)):
        raise TypeError(f"figure={show(figure)} must be a matplotlib Figure")
    text_type = require("matplotlib.text", "pip install matplotlib").Text
    for text in figure.findobj(text_type):
        if text.get_text() and text.get_fontsize() < minimum:
            text.set_fontsize(minimum)
    return figure


@dataclass(frozen=True)
class Control:
    """One control: a slider over numbers, or a dropdown over anything else."""

    name: str
    values: tuple[Any, ...]
    label: str
    labels: tuple[str, ...]
    initial: int

    def __post_init__(self) -> None:
        name_string("name", self.name)
        name_string("label", self.label)
        for label in ("values", "labels"):
            given = getattr(self, label)
            if isinstance(given, str | bytes | Mapping) or not isinstance(given, Iterable):
                raise TypeError(
                    f"{label}={show(given)} of control {self.name!r} must be a sequence"
                )
        object.__setattr__(self, "values", tuple(self.values))
        object.__setattr__(self, "labels", tuple(self.labels))
        if not self.values or len(self.labels) != len(self.values):
            raise ValueError(
                f"control {self.name!r} needs ≥ 1 value and one label per value, got "
                f"{len(self.values)} values and {len(self.labels)} labels"
            )
        if not all(isinstance(text, str) for text in self.labels):
            raise TypeError(f"labels={show(self.labels)} of control {self.name!r} must be strings")
        positive_int("initial", self.initial, minimum=0, maximum=len(self.values) - 1)

    @property
    def kind(self) -> str:
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in self.values)
        return "slider" if numeric and len(self.values) > 1 else "dropdown"


#: ``initial`` not given: the first value.
_FIRST: Any = object()


def control(
    name: str,
    values: Sequence[Any],
    *,
    label: str | None = None,
    format: Callable[[Any], str] = str,
    initial: Any = _FIRST,
) -> Control:
    """Describe one control; ``initial`` must be one of ``values`` (default: the first). A
    builder passes its argument here, so ``None`` for a control without a ``None`` value is an
    error, not "the default"."""
    name_string("name", name)
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise TypeError(f"values={show(values)} of control {name!r} must be a sequence")
    values = tuple(values)
    if not values:
        raise ValueError(f"values=() of control {name!r}: a control needs at least one value")
    if not callable(format):
        raise TypeError(f"format={show(format)} must be callable")
    if label is not None:
        name_string("label", label)
    if initial is _FIRST:
        index = 0
    else:
        matches = [i for i, v in enumerate(values) if _same(v, initial)]
        if not matches:
            raise ValueError(
                f"initial={show(initial)} is not one of the values of control {name!r}: "
                f"{', '.join(map(show, values))}"
            )
        index = matches[0]
    return Control(name, values, label or name, tuple(format(v) for v in values), index)


def _same(a: Any, b: Any) -> bool:
    """``a == b`` for control values, where a bool never equals a number."""
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


class Scrubber:
    """Precomputed frames of ``render(**values)`` for every combination of ``controls``.

    ``render`` returns a matplotlib ``Figure`` (it may update and return the same figure every
    time, which is much faster than building a new one) or a ``(figure, note)`` pair whose note
    is shown under the image. ``alt`` describes the figure for screen readers and is required.
    """

    def __init__(
        self,
        render: Callable[..., Any],
        controls: Sequence[Control],
        *,
        alt: str,
        caption: str = "",
        dpi: int = FRAME_DPI,
        max_frames: int = 200,
    ) -> None:
        if not callable(render):
            raise TypeError(f"render={show(render)} must be callable")
        if not isinstance(alt, str) or not alt.strip():
            raise ValueError("alt text is required: describe what the figure shows")
        if not isinstance(caption, str):
            raise TypeError(f"caption={show(caption)} must be a string")
        controls = sequence("controls", controls)
        if not all(isinstance(c, Control) for c in controls):
            raise TypeError(f"controls={show(controls)} must be Control objects (see control())")
        names = [c.name for c in controls]
        if len(set(names)) != len(names):
            raise ValueError(f"control names must be unique, got {names}")
        self.controls = tuple(controls)
        self.alt = alt
        self.caption = caption
        self.dpi = positive_int("dpi", dpi, maximum=MAX_DPI)
        n_frames = 1
        for c in self.controls:
            n_frames *= len(c.values)
        if n_frames > positive_int("max_frames", max_frames):
            raise ValueError(
                f"{n_frames} frames exceed max_frames={max_frames}; use fewer control values"
            )
        self.frames: dict[str, str] = {}
        self.notes: dict[str, str] = {}
        for indices in itertools.product(*(range(len(c.values)) for c in self.controls)):
            values = {c.name: c.values[i] for c, i in zip(self.controls, indices, strict=True)}
            result = render(**values)
            figure, note = result if isinstance(result, tuple) else (result, "")
            key = ",".join(map(str, indices))
            self.frames[key] = _png_base64(legible(figure), self.dpi)
            self.notes[key] = str(note)
        width, height = figure.get_size_inches()
        #: Size of a frame on the page, in CSS pixels (the bitmap has dpi / CSS_DPI × as many).
        self.display_size = (round(width * CSS_DPI), round(height * CSS_DPI))
        _close(figure)

    @property
    def uid(self) -> str:
        """Stable id from the content, so re-running a notebook gives the same HTML ids."""
        digest = hashlib.sha1(self.alt.encode())
        for c in self.controls:
            digest.update(repr((c.name, c.labels)).encode())
        return "scrub-" + digest.hexdigest()[:10]

    def initial_key(self) -> str:
        return ",".join(str(c.initial) for c in self.controls)

    def to_html(self) -> str:
        uid = self.uid
        parts = [f'<div class="gpuperf-scrubber" id="{uid}">']
        parts.append('<div class="gpuperf-scrubber-controls">')
        for position, c in enumerate(self.controls):
            label = html.escape(c.label)
            if c.kind == "slider":
                parts.append(
                    f'<label>{label} <input type="range" min="0" max="{len(c.values) - 1}" '
                    f'step="1" value="{c.initial}" data-control="{position}" '
                    f'aria-label="{label}"> <output>{html.escape(c.labels[c.initial])}</output>'
                    "</label>"
                )
            else:
                options = "".join(
                    f'<option value="{i}"{" selected" if i == c.initial else ""}>'
                    f"{html.escape(text)}</option>"
                    for i, text in enumerate(c.labels)
                )
                parts.append(
                    f'<label>{label} <select data-control="{position}" aria-label="{label}">'
                    f"{options}</select></label>"
                )
        parts.append(
            '<span class="gpuperf-scrubber-hint" style="font-size:0.85em;opacity:0.75">'
            "tap the figure to see it full size</span>"
        )
        parts.append("</div>")
        key = self.initial_key()
        width, height = self.display_size
        parts.append(
            '<div class="gpuperf-scrubber-figure" style="overflow-x:auto">'
            f'<img class="gpuperf-scrubber-frame" alt="{html.escape(self.alt)}" '
            f'width="{width}" height="{height}" title="tap to enlarge" '
            f'style="max-width:100%;height:auto;cursor:zoom-in" '
            f'src="data:image/png;base64,{self.frames[key]}"></div>'
        )
        parts.append(f'<p class="gpuperf-scrubber-note">{html.escape(self.notes[key])}</p>')
        if self.caption:
            parts.append(f'<p class="gpuperf-scrubber-caption">{html.escape(self.caption)}</p>')
        parts.append("</div>")
        data = json.dumps(
            {
                "frames": self.frames,
                "notes": self.notes,
                "labels": [list(c.labels) for c in self.controls],
            }
        )
        parts.append(
            f"<script>{_SCRIPT.replace('__UID__', uid).replace('__DATA__', data)}</script>"
        )
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        sizes = "×".join(str(len(c.values)) for c in self.controls)
        return f"<Scrubber {sizes} frames: {', '.join(c.label for c in self.controls)}>"


# Vanilla JS: find the block, read every control's index, show that frame and its note.
_SCRIPT = """
(function () {
  var root = document.getElementById("__UID__");
  if (!root) { return; }
  var data = __DATA__;
  var inputs = root.querySelectorAll("[data-control]");
  var image = root.querySelector(".gpuperf-scrubber-frame");
  var note = root.querySelector(".gpuperf-scrubber-note");
  function update() {
    var key = [];
    inputs.forEach(function (input) {
      var position = Number(input.getAttribute("data-control"));
      var index = Number(input.value);
      key[position] = index;
      var shown = input.parentNode.querySelector("output");
      if (shown) { shown.textContent = data.labels[position][index]; }
    });
    key = key.join(",");
    if (data.frames[key]) {
      image.src = "data:image/png;base64," + data.frames[key];
      note.textContent = data.notes[key];
    }
  }
  inputs.forEach(function (input) {
    input.addEventListener("input", update);
    input.addEventListener("change", update);
  });
  // tap to enlarge: the frame at its full size, scrolling sideways in its own box if wider
  image.addEventListener("click", function () {
    var enlarged = image.style.maxWidth === "none";
    image.style.maxWidth = enlarged ? "100%" : "none";
    image.style.cursor = enlarged ? "zoom-in" : "zoom-out";
  });
})();
"""


def _png_base64(figure: Any, dpi: int) -> str:
    from .runtime import require

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    image = require("PIL.Image", "pip install pillow").open(io.BytesIO(buffer.getvalue()))
    if image.mode != "P":  # a view that already quantised its frame (blitting) is left alone
        buffer = io.BytesIO()
        image.convert("RGB").quantize(colors=FRAME_COLOURS).save(buffer, "png", optimize=True)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _close(figure: Any) -> None:
    from .runtime import require

    require("matplotlib.pyplot", "pip install matplotlib").close(figure)


def scrubber(
    render: Callable[..., Any],
    controls: Sequence[Control] | Mapping[str, Sequence[Any]],
    **options: Any,
) -> Scrubber:
    """Build a :class:`Scrubber`; ``controls`` may be a plain ``{name: values}`` mapping."""
    if isinstance(controls, Mapping):
        controls = [control(name, values) for name, values in controls.items()]
    elif isinstance(controls, str | bytes) or not isinstance(controls, Sequence):
        raise TypeError(f"controls={show(controls)} must be a mapping or a sequence of Control")
    return Scrubber(render, controls, **options)


__all__ = [
    "CSS_DPI",
    "FRAME_DPI",
    "MAX_DPI",
    "MIN_FONT_PT",
    "Control",
    "Scrubber",
    "control",
    "legible",
    "scrubber",
]
