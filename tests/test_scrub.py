"""The kernel-free scrubber: frames, controls, and HTML that stands alone."""

from __future__ import annotations

import json
import re

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from gpuperf import scrub  # noqa: E402


@pytest.fixture
def render():
    figure, axes = plt.subplots(figsize=(2, 1.5))
    (line,) = axes.plot([0, 1], [0, 1])
    calls = []

    def draw(slope, colour):
        calls.append((slope, colour))
        line.set_data([0, 1], [0, slope])
        line.set_color(colour)
        return figure, f"slope {slope} in {colour}"

    draw.calls = calls
    return draw


def test_every_combination_is_rendered_once(render):
    s = scrub.Scrubber(
        render,
        [scrub.control("slope", [1, 2, 3]), scrub.control("colour", ["red", "blue"])],
        alt="a line whose slope follows the slider",
    )
    assert len(render.calls) == 6 and len(s.frames) == 6
    assert len(set(s.frames.values())) == 6, "each frame must differ"
    assert s.notes["2,1"] == "slope 3 in blue"
    assert repr(s) == "<Scrubber 3×2 frames: slope, colour>"


def test_html_is_self_contained_and_starts_at_the_initial_values(render):
    s = scrub.Scrubber(
        render,
        [
            scrub.control("slope", [1, 2, 3], label="Slope", initial=2),
            scrub.control("colour", ["red", "blue"], label="Colour"),
        ],
        alt="line",
        caption="Drag the slider.",
    )
    page = s.to_html()
    assert page == s._repr_html_()
    assert 'type="range"' in page and "<select" in page and "Drag the slider." in page
    assert 'value="1"' in page  # the slider starts at slope=2, index 1
    assert f'src="data:image/png;base64,{s.frames["1,0"]}"' in page
    assert "http://" not in page and "https://" not in page, "no CDN, no network"
    payload = re.search(r"var data = (\{.*?\});\n", page, re.S).group(1)
    assert json.loads(payload)["labels"] == [["1", "2", "3"], ["red", "blue"]]
    assert s.uid == scrub.Scrubber(render, s.controls, alt="line").uid


def test_mapping_shorthand_and_formatting(render):
    s = scrub.scrubber(render, {"slope": [1, 2], "colour": ["red"]}, alt="line")
    assert [c.kind for c in s.controls] == ["slider", "dropdown"]
    c = scrub.control("slope", [0.5, 1.0], format=lambda v: f"{v:.1f}×")
    assert c.labels == ("0.5×", "1.0×")


def test_bad_arguments(render):
    with pytest.raises(ValueError, match="alt text is required"):
        scrub.scrubber(render, {"slope": [1]}, alt=" ")
    with pytest.raises(ValueError, match=r"controls=\[\] must hold at least 1"):
        scrub.Scrubber(render, [], alt="x")
    with pytest.raises(ValueError, match="6 frames exceed max_frames=4"):
        scrub.scrubber(render, {"slope": [1, 2, 3], "colour": ["a", "b"]}, alt="x", max_frames=4)
    with pytest.raises(ValueError, match="initial=9 is not one of"):
        scrub.control("slope", [1, 2], initial=9)
    with pytest.raises(ValueError, match="needs at least one value"):
        scrub.control("slope", [])
    with pytest.raises(ValueError, match="must be unique"):
        scrub.Scrubber(render, [scrub.control("slope", [1]), scrub.control("slope", [2])], alt="x")


def test_frames_are_sharp_small_and_legible(render):
    import base64
    import io

    from PIL import Image

    s = scrub.scrubber(render, {"slope": [1, 2], "colour": ["red"]}, alt="line")
    assert s.dpi == scrub.FRAME_DPI == 2 * scrub.CSS_DPI
    image = Image.open(io.BytesIO(base64.b64decode(s.frames["0,0"])))
    assert image.mode == "P", "frames are palette PNGs"
    assert s.display_size == (144, 108)  # the 2 × 1.5 inch figure at CSS_DPI
    assert image.size == (288, 216), "two bitmap pixels per CSS pixel"
    page = s.to_html()
    assert 'width="144" height="108"' in page and "max-width:100%" in page
    assert "tap to enlarge" in page and "tap the figure to see it full size" in page


def test_legible_raises_small_text_only():
    figure, axes = plt.subplots()
    small = axes.text(0, 0, "small", fontsize=6)
    big = axes.text(0, 0, "big", fontsize=14)
    scrub.legible(figure)
    assert small.get_fontsize() == scrub.MIN_FONT_PT and big.get_fontsize() == 14
    plt.close(figure)
