"""Every tick of the newest book figures keeps its label at a phone's width (and a desktop's).

Vega drops a tick label that would come within :data:`gpuperf.vega.LABEL_GAP_PX` of its
neighbour, so a figure whose labels crowd still passes the browser test, with a tick left bare
("10,000" on a phone) or an axis ending unlabelled ("100%"). These figures choose their ticks so
that none is dropped: the compiled Vega spec is drawn here by ``vl-convert`` at the plot widths
of the book's column on a phone (238 px) and on a desktop (566 px), and the labels it keeps
visible are compared with the ticks the figure asks for.
"""

from __future__ import annotations

import copy
import re

import pytest

pytest.importorskip("altair")
pytest.importorskip("vl_convert")
pytest.importorskip("matplotlib")

import vl_convert as vlc

from gpuperf.widgets import collectives, inference, recompute, tricks

#: Plot widths the page's loader gives a figure: its column less 110 px (390 px phone, desktop).
WIDTHS = (238, 566)
_SIZED = re.compile(r"width|childWidth|child_width|concat_\d+_width")


def visible_axis_labels(explorer, width: int) -> list[list[str]]:
    """The tick labels of each axis that Vega leaves visible when the figure is ``width`` px
    wide, as the book's loader sizes it (the width signals of the compiled spec)."""
    spec = copy.deepcopy(explorer.vega_spec())
    if isinstance(spec.get("width"), int | float):
        spec["width"] = width
    for signal in spec.get("signals", []):
        if _SIZED.fullmatch(signal["name"]) and isinstance(signal.get("value"), int | float):
            signal["value"] = width
    svg = vlc.vega_to_svg(spec)
    groups = re.findall(r'<g class="mark-text role-axis-label"[^>]*>(.*?)</g>', svg, re.S)
    return [
        [
            text
            for attributes, text in re.findall(r"<text([^>]*)>([^<]*)</text>", group)
            if 'opacity="0"' not in attributes
        ]
        for group in groups
    ]


FIGURES = {
    "3.1 precision roofline": (
        tricks.precision_static,
        [
            ["0.1", "1", "10", "100", "1k", "10k"],
            ["10G", "100G", "1T", "10T", "100T", "1P", "10P"],
        ],
    ),
    "3.3 recomputation": (
        recompute.recompute_static,
        [
            ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"],
            ["none", "selective", "full"],
            ["0", "10", "20", "30", "40"],
            ["none", "selective", "full"],
        ],
    ),
    "4.3 decode": (
        inference.decode_static,
        [
            ["1", "4", "16", "64", "256", "1024"],
            ["1", "10", "100", "1,000"],
            ["0%", "25%", "50%", "75%", "100%"],
            ["read per step", "HBM holds"],
        ],
    ),
    "5.2 collectives": (
        collectives.collective_static,
        [
            ["1k", "100k", "10M", "1G", "100G"],
            ["1µ", "10µ", "100µ", "1m", "10m", "100m", "1", "10", "100"],
            ["0%", "25%", "50%", "75%", "100%"],
        ],
    ),
}


@pytest.fixture(scope="module", params=sorted(FIGURES))
def figure(request):
    build, expected = FIGURES[request.param]
    return build(), expected


@pytest.mark.parametrize("width", WIDTHS)
def test_every_tick_keeps_its_label(figure, width):
    explorer, expected = figure
    assert visible_axis_labels(explorer, width) == expected
