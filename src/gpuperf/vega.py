"""Client-side interactive figures for the online book: Vega-Lite charts over a precomputed grid.

The published book has no Python kernel, yet a reader should be able to turn every knob of a
chapter's live explorer. This module gets there without a server and without moving a single
formula out of :mod:`gpuperf`:

1. A :class:`StaticExplorer` takes the live explorer's controls (:func:`gpuperf.scrub.control`:
   a name, the values it offers, a label, one display string per value).
2. Each :meth:`~StaticExplorer.table` calls a gpuperf function once for every combination of the
   controls that table depends on (``over=``) and stores the rows it returns, tagged with the
   index of each control value. This is the only place numbers are made, at build time.
3. Every control becomes a Vega-Lite *parameter* bound to a slider or a drop-down (Altair's
   ``alt.param`` with ``alt.binding_range`` / ``alt.binding_select``); every table is filtered
   by the parameters, so the browser only *selects* rows, it never computes one. Axes rescale to
   the rows shown.
4. :meth:`~StaticExplorer.to_html` writes a small block: the Vega-Lite spec as JSON and a few
   lines of JavaScript that, once the figure scrolls near the screen, load the Vega bundle from
   the book's ``_static/`` folder (one cached file per site, written at build time by
   :func:`write_bundle` from the pinned ``vl-convert-python`` wheel: no CDN, no network at
   read time) and draw the chart as SVG, as wide as its column, so it is sharp on a phone.

The notebook output is a MIME bundle: ``text/html`` for the book (myst-nb renders it) and, when
it is not too large (:data:`MIME_SPEC_LIMIT`), the Vega-Lite JSON for front ends that draw it
natively (JupyterLab). Outside the book there is no
``_static/`` bundle to load: the block then says so and points at the live explorer.

:meth:`~StaticExplorer.rows` reads rows back *from the generated spec*, so a test can check that
the plotted values equal the calculator's at any control values.
"""

from __future__ import annotations

import functools
import hashlib
import html
import importlib
import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._validate import file_path, function, name_string, positive_int, sequence, show
from .scrub import Control, control

__all__ = [
    "BUNDLE_NAME",
    "MAX_ROWS",
    "MIME_SPEC_LIMIT",
    "BookFigureUnavailable",
    "StaticExplorer",
    "UnavailableFigure",
    "book_altair",
    "book_figure",
    "control",
    "javascript_bundle",
    "vegalite_version",
    "write_bundle",
]

#: The file, under the book's ``_static/``, that holds Vega and Vega-Lite (written at build time).
BUNDLE_NAME = "gpuperf-vega.js"
#: Rows a figure may hold over all its tables: a guard against an accidental huge cross product.
MAX_ROWS = 60_000
#: Largest Vega-Lite spec (characters of JSON) a notebook output also stores as its own MIME type.
MIME_SPEC_LIMIT = 400_000
#: Widest a chart is drawn (CSS pixels); narrower columns get a narrower chart.
MAX_WIDTH = 640
#: Smallest font a chart draws, in CSS pixels: 12 px is 9 pt, legible on a phone. The chart is
#: drawn at its column's width, never scaled down, so this is the size the reader sees.
MIN_FONT_PX = 12
#: Smallest gap between two tick labels of an axis, in CSS px: one em of the smallest font
#: (Vega hides a label that would come closer to its neighbour; closer, "1,000" and "10,000"
#: read as one number).
LABEL_GAP_PX = 12
#: Vega-Lite config keys whose value is a font size.
_FONT_KEYS = ("fontSize", "labelFontSize", "titleFontSize")
#: Vega-Lite's MIME type for the Vega-Lite major version Altair writes.
_MIME = "application/vnd.vegalite.v{major}+json"
_INDEX = "i_"  # prefix of a row's control-index columns
_PARAM = "p_"  # prefix of a control's parameter name


class BookFigureUnavailable(ImportError):  # noqa: N818 (an ImportError, named for what it means)
    """The kernel-free figures need Altair 5 (and vl-convert-python to draw them as the book
    does); a fresh Colab runtime or a minimal install may lack them."""


#: What to install for the book's figures (the ``book`` extra of the package).
BOOK_INSTALL = "pip install 'altair>=5' 'vl-convert-python>=1.9'"


def book_altair() -> Any:
    """Altair, or :class:`BookFigureUnavailable` if it is missing or older than version 5."""
    try:
        alt = importlib.import_module("altair")
    except ImportError as error:
        raise BookFigureUnavailable(f"altair is not installed ({BOOK_INSTALL})") from error
    if not hasattr(alt, "param"):  # parameters bound to controls arrived in Altair 5
        version = getattr(alt, "__version__", "?")
        raise BookFigureUnavailable(f"altair {version} is older than 5 ({BOOK_INSTALL})")
    return alt


_altair = book_altair


class UnavailableFigure:
    """What a kernel-free figure shows where it cannot be built: why, and what to use instead.

    Notebooks run in Colab or a minimal install must not stop at a figure meant for the static
    book: the live explorer next to it is the one to use there.
    """

    def __init__(self, name: str, reason: str) -> None:
        self.name = name_string("name", name)
        self.reason = name_string("reason", reason)

    def _repr_html_(self) -> str:
        return (
            f"<p><em>The online book draws this figure in the browser; here it cannot be built "
            f"({html.escape(self.reason)}). Use the live explorer in the next cell.</em></p>"
        )

    def __repr__(self) -> str:
        return f"<{self.name}: not built here ({self.reason}); use the live explorer>"


def book_figure(build: Callable[..., StaticExplorer]) -> Callable[..., Any]:
    """Decorate a function that builds a :class:`StaticExplorer` for the book: without Altair 5
    it returns an :class:`UnavailableFigure` instead of raising (any other error still raises)."""
    function("build", build)

    @functools.wraps(build)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return build(*args, **kwargs)
        except BookFigureUnavailable as error:
            return UnavailableFigure(build.__name__, str(error))

    return wrapper


def vegalite_version() -> str:
    """The Vega-Lite version of the specs Altair writes, e.g. ``"6.4.1"``."""
    return str(_altair().SCHEMA_VERSION).lstrip("v")


def _vl_convert() -> tuple[Any, str]:
    """``vl_convert`` and the Vega-Lite version (``"6.4"``) it must use: the one Altair writes."""
    try:
        vlc = importlib.import_module("vl_convert")
    except ImportError as error:
        raise BookFigureUnavailable(
            f"vl-convert-python is not installed ({BOOK_INSTALL})"
        ) from error
    major_minor = ".".join(vegalite_version().split(".")[:2])
    available = vlc.get_vegalite_versions()
    if major_minor not in available:
        raise RuntimeError(
            f"vl-convert-python {getattr(vlc, '__version__', '?')} bundles Vega-Lite "
            f"{', '.join(available)}, not {major_minor} (what Altair writes): install a "
            "vl-convert-python release that matches your Altair"
        )
    return vlc, major_minor


def javascript_bundle() -> str:
    """Vega (with vega-embed) as one script that defines ``window.vegaEmbed`` (~900 kB, ~305 kB
    gzipped; the page loads it once, and only when a figure comes near the screen).

    Produced offline by ``vl-convert-python``, the wheel Altair itself uses to save standalone
    HTML. Specs are compiled to Vega in Python at build time; the page only draws them."""
    vlc, major_minor = _vl_convert()
    # vl-convert 1.9 binds the bare ``vega`` / ``vegaLite`` names of a snippet to null, so the
    # page draws through vega-embed (which embeds Vega) rather than ``vega.View`` directly.
    text = vlc.javascript_bundle(snippet="window.vegaEmbed = vegaEmbed;", vl_version=major_minor)
    # The bundle declares top-level names (``const _``, …) that would clash with the page's own
    # scripts (Sphinx's ``_``): wrapped in a function, only ``window.vegaEmbed`` leaves it.
    return f"(function () {{\n{text}\n}})();\n"


def write_bundle(static_dir: str | Path) -> Path:
    """Write :data:`BUNDLE_NAME` into ``static_dir`` (unless an identical file is there)."""
    target = file_path("static_dir", static_dir) / BUNDLE_NAME
    text = javascript_bundle()
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return target


def _json_value(table: str, key: str, value: Any) -> Any:
    """A row value as plain JSON (numpy scalars to Python); non-finite numbers are refused."""
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(
                f"table {table!r}: column {key!r} is {value!r}; JSON has no infinities or NaN "
                "(leave the row out, or store None)"
            )
        return value
    raise TypeError(
        f"table {table!r}: column {key!r} holds {show(value)}; rows hold numbers, strings, "
        "booleans or None"
    )


class StaticExplorer:
    """A Vega-Lite figure whose every control filters rows that gpuperf computed in advance.

    ``controls`` are :class:`gpuperf.scrub.Control` objects (from :func:`control`): a slider for
    numbers, a drop-down otherwise. ``alt`` describes the figure for screen readers (required).
    ``note(**values)``, if given, is a sentence shown under the figure for every combination of
    the controls (the live explorer's status line). ``colab`` is the notebook's "open in Colab"
    URL, shown as a link to the live explorer. Controls named in ``dropdowns`` get a drop-down
    even if their values are numbers.
    """

    def __init__(
        self,
        controls: Sequence[Control],
        *,
        alt: str,
        note: Callable[..., str] | None = None,
        caption: str = "",
        colab: str = "",
        dropdowns: Sequence[str] = (),
        max_rows: int = MAX_ROWS,
    ) -> None:
        controls = sequence("controls", controls)
        if not all(isinstance(c, Control) for c in controls):
            raise TypeError(f"controls={show(controls)} must be Control objects (see control())")
        names = [c.name for c in controls]
        if len(set(names)) != len(names):
            raise ValueError(f"control names must be unique, got {names}")
        for name in names:
            if not name.isidentifier() or not name.isascii():
                raise ValueError(
                    f"control name {name!r} must be an ASCII identifier (it names a Vega signal)"
                )
        if not isinstance(alt, str) or not alt.strip():
            raise ValueError("alt text is required: describe what the figure shows")
        for label, text in (("caption", caption), ("colab", colab)):
            if not isinstance(text, str):
                raise TypeError(f"{label}={show(text)} must be a string")
        if colab and not re.fullmatch(r"https://\S+", colab):
            raise ValueError(f"colab={colab!r} must be an https:// URL (colab_url) or ''")
        if note is not None and not callable(note):
            raise TypeError(f"note={show(note)} must be callable or None")
        self.controls = controls
        self.alt = alt
        self.caption = caption
        self.colab = colab
        self.max_rows = positive_int("max_rows", max_rows)
        self._by_name = {c.name: c for c in controls}
        dropdowns = sequence("dropdowns", dropdowns, name_string, minimum=0)
        if not all(n in self._by_name for n in dropdowns):
            raise ValueError(
                f"dropdowns={dropdowns!r} must be a sequence of control names among {names}"
            )
        #: "slider" or "dropdown" for each control (numbers get a slider unless in dropdowns)
        self.kinds = {c.name: "dropdown" if c.name in dropdowns else c.kind for c in controls}
        self._tables: dict[str, tuple[tuple[str, ...], list[dict[str, Any]]]] = {}
        self._notes: dict[str, str] = {}
        if note is not None:
            for indices in self._combinations(names):
                values = self._values(names, indices)
                text = note(**values)
                if not isinstance(text, str):
                    raise TypeError(f"note(**{values}) returned {show(text)}, not a string")
                self._notes[",".join(map(str, indices))] = text
        self._chart: Any = None
        alt_ = _altair()
        self.params: dict[str, Any] = {}
        for c in controls:
            if self.kinds[c.name] == "slider":
                binding = alt_.binding_range(min=0, max=len(c.values) - 1, step=1, name=c.label)
            else:
                binding = alt_.binding_select(
                    options=list(range(len(c.values))), labels=list(c.labels), name=c.label
                )
            self.params[c.name] = alt_.param(name=_PARAM + c.name, value=c.initial, bind=binding)

    # -- data ---------------------------------------------------------------------------------
    def _combinations(self, names: Sequence[str]) -> Iterable[tuple[int, ...]]:
        return itertools.product(*(range(len(self._by_name[n].values)) for n in names))

    def _values(self, names: Sequence[str], indices: Sequence[int]) -> dict[str, Any]:
        return {n: self._by_name[n].values[i] for n, i in zip(names, indices, strict=True)}

    def _row_count(self) -> int:
        return sum(len(rows) for _, rows in self._tables.values())

    def table(
        self,
        name: str,
        compute: Callable[..., Mapping[str, Any] | Sequence[Mapping[str, Any]]],
        over: Sequence[str] | None = None,
    ) -> Any:
        """Rows of ``compute(**values)`` for every combination of the controls in ``over``
        (default: all), as an Altair chart filtered by those controls' parameters.

        ``compute`` returns one row (a mapping) or a list of rows; only the controls named in
        ``over`` are passed to it, so a roof that depends on the chip alone is stored once per
        chip, not once per batch size. Add marks and encodings to the returned chart."""
        name_string("name", name)
        if name in self._tables:
            raise ValueError(f"table {name!r} is already defined")
        if not callable(compute):
            raise TypeError(f"compute={show(compute)} must be callable")
        if over is None:
            over = tuple(self._by_name)
        if isinstance(over, str) or not isinstance(over, Iterable):
            raise TypeError(f"over={show(over)} must be a sequence of control names")
        over = tuple(over)
        unknown = [n for n in over if n not in self._by_name]
        if unknown or len(set(over)) != len(over):
            raise ValueError(
                f"over={over!r} must name distinct controls among {', '.join(self._by_name)}"
            )
        rows: list[dict[str, Any]] = []
        for indices in self._combinations(over):
            values = self._values(over, indices)
            result = compute(**values)
            produced = [result] if isinstance(result, Mapping) else result
            if isinstance(produced, str | bytes) or not isinstance(produced, Iterable):
                raise TypeError(
                    f"table {name!r}: compute(**{values}) returned {show(result)}; return a "
                    "row (a mapping) or a list of rows"
                )
            for row in produced:
                if not isinstance(row, Mapping):
                    raise TypeError(f"table {name!r}: row {show(row)} is not a mapping")
                clean = {}
                for key, value in row.items():
                    if not isinstance(key, str) or key.startswith(_INDEX):
                        raise ValueError(
                            f"table {name!r}: column {key!r} must be a string not starting "
                            f"with {_INDEX!r} (reserved for control indices)"
                        )
                    clean[key] = _json_value(name, key, value)
                clean.update({_INDEX + n: i for n, i in zip(over, indices, strict=True)})
                rows.append(clean)
            if self._row_count() + len(rows) > self.max_rows:
                raise ValueError(
                    f"table {name!r} makes the figure hold more than max_rows={self.max_rows} "
                    "rows; offer fewer control values or narrow over="
                )
        self._tables[name] = (over, rows)
        alt_ = _altair()
        # the chart names its table; the rows join the spec only in spec(), so Altair never
        # deep-copies or validates thousands of rows
        chart = alt_.Chart(alt_.NamedData(name=name))
        if over:
            test = " && ".join(f"datum.{_INDEX}{n} == {_PARAM}{n}" for n in over)
            chart = chart.transform_filter(test)
        return chart

    # -- the figure ---------------------------------------------------------------------------
    def chart(self, chart: Any) -> StaticExplorer:
        """Set the figure: tables' charts layered (``+``) or stacked (``&``, a ``vconcat``).
        Side-by-side (``|``) is refused: it does not fit a phone. Returns ``self``."""
        alt_ = _altair()
        allowed = (alt_.Chart, alt_.LayerChart, alt_.VConcatChart)
        if not isinstance(chart, allowed):
            raise TypeError(
                f"chart={show(chart)} must be an Altair Chart, LayerChart or VConcatChart "
                "(stack panels with &; side by side does not fit a phone)"
            )
        if not self._tables:
            raise ValueError("define at least one table() before chart()")
        self._chart = chart.add_params(*self.params.values())
        self.__dict__.pop("_spec", None)
        self.__dict__.pop("_vega", None)
        return self

    def spec(self) -> dict[str, Any]:
        """The Vega-Lite spec (a dict), with the controls and notes under ``usermeta``."""
        if self._chart is None:
            raise ValueError("call chart() first: the explorer has no figure yet")
        if "_spec" not in self.__dict__:
            spec = _legible(self._chart.to_dict())
            # The chart's box is one image to a screen reader (role="img", named by the alt
            # text): no ARIA roles inside it. Vega would otherwise name each mark, but leave a
            # mark left empty by a control's filter as an unnamed graphics-symbol.
            spec["config"]["aria"] = False
            # each table once, at the top level, referenced by name wherever a layer uses it
            spec["datasets"] = {
                **spec.get("datasets", {}),
                **{name: rows for name, (_, rows) in self._tables.items()},
            }
            spec["usermeta"] = {
                "gpuperf": {
                    "controls": [
                        {
                            "name": c.name,
                            "param": _PARAM + c.name,
                            "label": c.label,
                            "labels": list(c.labels),
                            "kind": self.kinds[c.name],
                        }
                        for c in self.controls
                    ],
                    "notes": self._notes,
                    "maxWidth": MAX_WIDTH,
                }
            }
            self.__dict__["_spec"] = spec
        return self.__dict__["_spec"]

    def vega_spec(self) -> dict[str, Any]:
        """The Vega spec the book ships: :meth:`spec` compiled by ``vl-convert`` at build time
        (the browser then needs only the Vega runtime, not the Vega-Lite compiler)."""
        if "_vega" not in self.__dict__:
            vlc, major_minor = _vl_convert()
            self.__dict__["_vega"] = vlc.vegalite_to_vega(self.spec(), vl_version=major_minor)
        return self.__dict__["_vega"]

    def rows(self, table: str, **values: Any) -> list[dict[str, Any]]:
        """The rows of ``table`` the figure shows at these control values, read back from the
        compiled Vega spec that the page ships (what the browser filters), without the index
        columns. Controls the table does not
        depend on may be omitted; a value that is not one of a control's values is an error."""
        if not isinstance(table, str) or table not in self._tables:
            raise ValueError(f"table={table!r} is not one of {', '.join(self._tables) or '()'}")
        over, _ = self._tables[table]
        unknown = [n for n in values if n not in self._by_name]
        if unknown:
            raise ValueError(f"unknown controls {unknown}; the controls are {list(self._by_name)}")
        missing = [n for n in over if n not in values]
        if missing:
            raise ValueError(f"table {table!r} depends on controls {missing}: give their values")
        wanted = {}
        for n, value in values.items():  # every value given is checked, used or not
            c = self._by_name[n]
            matches = [i for i, v in enumerate(c.values) if _same(v, value)]
            if not matches:
                raise ValueError(
                    f"{n}={show(value)} is not one of its values: {', '.join(map(show, c.values))}"
                )
            if n in over:
                wanted[_INDEX + n] = matches[0]
        shipped = {d.get("name"): d.get("values") for d in self.vega_spec().get("data", [])}
        rows = shipped.get(table)
        if rows is None:
            raise ValueError(f"table {table!r} is not drawn: use its chart in chart()")
        return [
            {k: v for k, v in row.items() if not k.startswith(_INDEX)}
            for row in rows
            if all(row.get(k) == v for k, v in wanted.items())
        ]

    def note(self, **values: Any) -> str:
        """The note shown under the figure at these control values (from the spec)."""
        names = [c.name for c in self.controls]
        missing = [n for n in names if n not in values]
        if missing:
            raise ValueError(f"give a value for every control; missing {missing}")
        key = []
        for c in self.controls:
            matches = [i for i, v in enumerate(c.values) if _same(v, values[c.name])]
            if not matches:
                raise ValueError(f"{c.name}={show(values[c.name])} is not one of its values")
            key.append(str(matches[0]))
        return self.spec()["usermeta"]["gpuperf"]["notes"].get(",".join(key), "")

    @property
    def uid(self) -> str:
        """Stable id from the content, so re-running a notebook gives the same HTML."""
        digest = hashlib.sha1(self.alt.encode())
        for c in self.controls:
            digest.update(repr((c.name, c.labels)).encode())
        return "vega-" + digest.hexdigest()[:10]

    def to_html(self) -> str:
        """The block the book shows: controls, the chart (drawn in the browser), its note."""
        spec = self.vega_spec()
        uid = self.uid
        initial = ",".join(str(c.initial) for c in self.controls)
        note = self._notes.get(initial, "")
        data = json.dumps(spec, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
        data = data.replace("</", "<\\/")  # never end the <script> early
        live = (
            f' <a href="{html.escape(self.colab)}">Open the live explorer in Colab</a>.'
            if self.colab
            else ""
        )
        parts = [
            f'<div class="gpuperf-vega" id="{uid}">',
            f"<style>{_CSS.replace('__UID__', uid)}</style>",
            '<div class="gpuperf-vega-controls"></div>',
            f'<div class="gpuperf-vega-chart" role="img" aria-label="{html.escape(self.alt)}">'
            '<p class="gpuperf-vega-wait">The interactive figure loads here.</p></div>',
            f'<p class="gpuperf-vega-note">{html.escape(note)}</p>',
        ]
        if self.caption or live:
            parts.append(f'<p class="gpuperf-vega-caption">{html.escape(self.caption)}{live}</p>')
        parts += [
            f'<script type="application/json" class="gpuperf-vega-spec">{data}</script>',
            f"<script>{_LOADER.replace('__UID__', uid)}</script>",
            "</div>",
        ]
        return "\n".join(parts)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """HTML for the book; the Vega-Lite spec too (JupyterLab draws it natively) unless it
        is larger than :data:`MIME_SPEC_LIMIT`, which would double a notebook's size."""
        spec = self.spec()
        try:
            page = self.to_html()
        except ImportError as error:  # no vl-convert (e.g. Colab): say so, keep the spec below
            page = (
                f"<p>{html.escape(self.alt)}</p><p><em>The online book draws this figure in the "
                f"browser ({html.escape(str(error))}); here, use the live explorer.</em></p>"
            )
        bundle = {"text/html": page, "text/plain": repr(self)}
        if len(json.dumps(spec, separators=(",", ":"))) <= MIME_SPEC_LIMIT:
            bundle[_MIME.format(major=vegalite_version().split(".")[0])] = spec
        return bundle

    def __repr__(self) -> str:
        sizes = " × ".join(f"{c.label} ({len(c.values)})" for c in self.controls)
        return f"<StaticExplorer: {sizes}; {self._row_count()} rows>"


def _roofline_layer(
    explorer: StaticExplorer,
    roof: Callable[[str], tuple[Any, str]],
    points: Callable[..., Sequence[Mapping[str, Any]]],
    *,
    kinds: Mapping[str, tuple[str, str]],
    intensity_range: tuple[float, float],
    flops_range: tuple[float, float],
) -> Any:
    """A log-log roofline with marked points, as the top layer of a static explorer that has a
    ``chip_name`` control; the caller sets its height and title.

    The roof is that of ``roof(chip_name)``, a ``(Chip, precision)`` pair, stored once per chip
    as the three corners the live :class:`gpuperf.plots._RooflinePanel` draws. The points are
    ``points(**values)``'s rows (``kind``, ``x`` in FLOP/byte, ``y`` in FLOP/s), one shape and
    colour per kind (``kinds``: kind → ``(shape, colour)``). The x axis labels only the
    decades inside ``intensity_range``, so no labels crowd on a phone.

    Chapter 3.6's tiling and counting figures drew this same chart; one builder keeps their
    scales, axes and tooltips alike.
    """
    import numpy as np

    from .roofline import attainable_flops, ridge_point

    alt = _altair()
    low, high = intensity_range

    def roof_rows(chip_name: str) -> list[dict[str, Any]]:
        the_chip, precision = roof(chip_name)
        ridge = ridge_point(the_chip, precision)
        corners = np.array([low, min(max(ridge, low), high), high])
        ys = attainable_flops(corners, the_chip, precision)
        return [{"x": float(x), "y": float(y)} for x, y in zip(corners, ys, strict=True)]

    decades = range(math.ceil(math.log10(low)), math.floor(math.log10(high)) + 1)
    x = alt.X(
        "x:Q",
        title="arithmetic intensity (FLOP/byte)",
        scale=alt.Scale(type="log", domain=list(intensity_range)),
        axis=alt.Axis(values=[10**k if k >= 0 else 10.0**k for k in decades], format="~g"),
    )
    y = alt.Y(
        "y:Q",
        title="attainable FLOP/s",
        axis=alt.Axis(format="~s"),
        scale=alt.Scale(type="log", domain=list(flops_range)),
    )
    legend = alt.Legend(orient="bottom-right")
    names = list(kinds)
    shapes, colours = (list(column) for column in zip(*kinds.values(), strict=True))
    return alt.layer(
        explorer.table("roof", roof_rows, over=("chip_name",))
        .mark_line(color="black", strokeWidth=2.2, clip=True)
        .encode(x=x, y=y),
        explorer.table("points", points)
        .mark_point(size=120, strokeWidth=2.5, filled=True, opacity=1, clip=True)
        .encode(
            x=x,
            y=y,
            shape=alt.Shape(
                "kind:N", title=None, legend=legend, scale=alt.Scale(domain=names, range=shapes)
            ),
            color=alt.Color(
                "kind:N", title=None, legend=legend, scale=alt.Scale(domain=names, range=colours)
            ),
            tooltip=["kind:N", alt.Tooltip("x:Q", title="FLOP/B", format=".3g")],
        ),
    )


def _legible(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with no text smaller than :data:`MIN_FONT_PX`: axis, legend and title defaults
    raised in its config, and every explicit font size below the minimum raised to it; tick
    labels at least :data:`LABEL_GAP_PX` apart."""

    def raise_fonts(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: max(v, MIN_FONT_PX)
                if k in _FONT_KEYS and isinstance(v, int | float) and not isinstance(v, bool)
                else raise_fonts(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [raise_fonts(v) for v in node]
        return node

    spec = raise_fonts(spec)
    config = spec.setdefault("config", {})
    # neighbouring tick labels keep a gap; Vega drops the labels that would come closer
    config.setdefault("axis", {}).setdefault("labelSeparation", LABEL_GAP_PX)
    for part, keys in (
        ("axis", ("labelFontSize", "titleFontSize")),
        ("legend", ("labelFontSize", "titleFontSize")),
        ("header", ("labelFontSize", "titleFontSize")),
        ("title", ("fontSize",)),
        ("text", ("fontSize",)),
    ):
        section = config.setdefault(part, {})
        for key in keys:
            section[key] = max(section.get(key, 0), MIN_FONT_PX)
    return spec


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


_CSS = """
#__UID__ .gpuperf-vega-controls{display:flex;flex-wrap:wrap;gap:.2em 1.2em;margin:.3em 0}
#__UID__ .vega-bind{display:flex;align-items:center;gap:.4em;max-width:100%}
#__UID__ .vega-bind label{display:flex;align-items:center;gap:.2em .4em;flex-wrap:wrap;
  max-width:100%}
#__UID__ .vega-bind input[type=range]{width:11em;max-width:55vw}
#__UID__ .vega-bind select{max-width:100%}
#__UID__ .vega-bind input[type=range] + span{display:none}
#__UID__ .gpuperf-vega-chart{max-width:100%;overflow-x:auto;min-height:2em}
#__UID__ .gpuperf-vega-chart svg{max-width:100%;height:auto}
#__UID__ .gpuperf-vega-note{font-size:.9em;min-height:2.6em}
#__UID__ .gpuperf-vega-note:empty{display:none}
#__UID__ .gpuperf-vega-caption{font-size:.9em;opacity:.85}
"""

# Plain JavaScript, no framework. When the figure nears the screen: load the Vega bundle once
# per page from the book's _static/ (Sphinx writes the way there as <html data-content_root>),
# compile the Vega-Lite spec, draw it as SVG at the column's width, and show each slider's
# value label and the note for the chosen controls.
_LOADER = r"""
(function () {
  var root = document.getElementById("__UID__");
  if (!root || root.getAttribute("data-started")) { return; }
  var holder = root.querySelector(".gpuperf-vega-spec");
  var spec, meta;
  var chart = root.querySelector(".gpuperf-vega-chart");
  var note = root.querySelector(".gpuperf-vega-note");
  function bundle() {
    if (window.vegaEmbed) { return Promise.resolve(); }
    if (!window.gpuperfVegaBundle) {
      var base = document.documentElement.getAttribute("data-content_root");
      if (base === null) {
        return Promise.reject(new Error("not in the book"));
      }
      window.gpuperfVegaBundle = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = base + "_static/__BUNDLE__";
        script.onload = resolve;
        script.onerror = reject;
        document.head.appendChild(script);
      });
    }
    return window.gpuperfVegaBundle;
  }
  function load() {
    // the book moves a large spec into a file of its own (gpuperf.bookext), fetched on demand
    var src = holder.getAttribute("data-src");
    if (!src) { return Promise.resolve(JSON.parse(holder.textContent)); }
    return fetch(src).then(function (response) {
      if (!response.ok) { throw new Error(src + ": HTTP " + response.status); }
      return response.json();
    });
  }
  function draw(loaded) {
    spec = loaded;
    meta = spec.usermeta.gpuperf;
    var width = Math.min(meta.maxWidth, Math.max(200, chart.clientWidth - 110));
    if (typeof spec.width === "number") { spec.width = width; }
    (spec.signals || []).forEach(function (s) {
      var sized = /^(width|childWidth|child_width|concat_\d+_width)$/.test(s.name);
      if (sized && typeof s.value === "number") { s.value = width; }
    });
    chart.textContent = "";
    return vegaEmbed(chart, spec, {
      mode: "vega", renderer: "svg", actions: false,
      bind: root.querySelector(".gpuperf-vega-controls")
    }).then(function (result) {
      var view = result.view;
      root.gpuperfView = view;
      // the chart's box is the one image a screen reader meets (role="img" and the alt text);
      // Vega's marks inside it would be unnamed graphics of their own
      var svg = chart.querySelector("svg");
      if (svg) { svg.setAttribute("aria-hidden", "true"); }
      var outputs = [];
      meta.controls.forEach(function (c, position) {
        if (c.kind !== "slider") { return; }
        var input = root.querySelectorAll(".vega-bind input[type=range]")[outputs.length];
        if (!input) { return; }
        var out = document.createElement("output");
        input.parentNode.appendChild(out);
        outputs.push([c, out]);
      });
      function update() {
        var key = meta.controls.map(function (c) { return view.signal(c.param); }).join(",");
        outputs.forEach(function (pair) {
          pair[1].textContent = pair[0].labels[view.signal(pair[0].param)];
        });
        if (meta.notes[key] !== undefined) { note.textContent = meta.notes[key]; }
      }
      meta.controls.forEach(function (c) { view.addSignalListener(c.param, update); });
      update();
      root.setAttribute("data-ready", "1");
    });
  }
  function start() {
    if (root.getAttribute("data-started")) { return; }
    root.setAttribute("data-started", "1");
    Promise.all([load(), bundle()]).then(function (both) {
      return draw(both[0]);
    }).catch(function (error) {
      if (error && error.message !== "not in the book") {
        console.error("gpuperf figure:", error);
      }
      chart.textContent = "This figure is drawn by the online book's JavaScript; in a " +
        "notebook, use the live explorer instead.";
    });
  }
  if ("IntersectionObserver" in window) {
    var seen = new IntersectionObserver(function (entries) {
      if (entries.some(function (e) { return e.isIntersecting; })) { seen.disconnect(); start(); }
    }, {rootMargin: "400px"});
    seen.observe(root);
  } else { start(); }
})();
""".replace("__BUNDLE__", BUNDLE_NAME)
