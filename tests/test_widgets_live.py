"""The live-figure core: in-place redraws, status text, programmatic steps, latency."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from gpuperf.widgets import Explorer, LiveFigure
from gpuperf.widgets.live import _new_figure


def _explorer():
    import ipywidgets as widgets

    figure = _new_figure()
    axes = figure.add_subplot()
    axes.set_xlim(0, 10)
    axes.set_ylim(0, 10)
    (point,) = axes.plot([1], [1], "o")
    live = LiveFigure(figure, [point])

    def update(x):
        point.set_data([x], [x])
        return f"x = {x}"

    slider = widgets.IntSlider(value=1, min=0, max=10)
    return Explorer({"x": slider}, update, live, title="demo"), point


def test_a_step_moves_the_artist_and_the_picture():
    explorer, point = _explorer()
    before = bytes(explorer.live.image.value)
    assert explorer.step(x=7) == "x = 7"
    assert point.get_xdata()[0] == 7
    assert bytes(explorer.live.image.value) != before
    assert bytes(explorer.live.image.value).startswith(b"\x89PNG")
    explorer.step(x=1)
    assert bytes(explorer.live.image.value) == before, "same values must give the same picture"


def test_unknown_control_is_rejected():
    explorer, _ = _explorer()
    with pytest.raises(ValueError, match=r"unknown controls \['y'\]; valid: \['x'\]"):
        explorer.step(y=3)


def test_steps_blit_without_redrawing_the_figure(needless_full_redraws):
    explorer, _ = _explorer()
    assert needless_full_redraws(explorer, [{"x": x} for x in range(11)]) == []
    assert len(explorer.timings_ms) == 1 + 11, "each step's time is kept for the benchmark"


def test_a_needless_full_redraw_is_caught(needless_full_redraws):
    """The redraw counter can fail: an update that redraws the whole figure is reported."""
    explorer, point = _explorer()

    def redrawing_update(x):
        point.set_data([x], [x])
        explorer.live.figure.canvas.draw()

    explorer._update = redrawing_update
    assert needless_full_redraws(explorer, [{"x": 3}]) == [{"x": 3}]


def test_image_keeps_its_natural_size_and_controls_wrap_whole():
    explorer, _ = _explorer()
    live = explorer.live
    width, height = live.figure.canvas.get_width_height()
    assert live.display_size == (width, height)
    layout = live.image.layout
    assert layout.width == f"{width}px", "a fixed CSS width: never stretched by the flex column"
    assert layout.height == "auto" and layout.max_width == "100%"
    row = explorer.widget.children[1]
    assert row.layout.flex_flow == "row wrap"
    assert all(c.layout.flex == "0 0 auto" for c in row.children)
    sharp = LiveFigure(live.figure, [], density=2)
    assert sharp.display_size == (round(width / 2), round(height / 2))
    with pytest.raises(ValueError, match=r"density=0.5 must be a number in \[1, 4\]"):
        LiveFigure(live.figure, [], density=0.5)


def test_controls_are_sized_to_their_content():
    """Labels are never cut and every toggle button shows (JupyterLab clipped them otherwise)."""
    import ipywidgets as widgets

    from gpuperf.widgets.live import _fit_content

    toggles = _fit_content(widgets.ToggleButtons(options=["matmul", "elementwise", "attention"]))
    assert toggles.style.button_width == "auto" and toggles.layout.width == "auto"
    assert toggles.layout.flex_flow == "row nowrap", "label and buttons on one line"
    slider = _fit_content(widgets.IntSlider(description="tokens B / N"))
    assert slider.style.description_width == "initial"
    assert slider.layout.flex == "0 0 auto" and slider.layout.width is None


def test_a_rescaled_axis_redraws_the_background():
    explorer, point = _explorer()
    axes = point.axes
    before = bytes(explorer.live.render())
    axes.set_ylim(0, 100)  # what an autoscaling view does in its update
    after = bytes(explorer.live.render())
    assert after != before, "the ticks must follow the new limits"
    assert explorer.live.render() == after, "and the new background is cached"


def _bars_view(rescaling: bool):
    """Two panels of bars, as recompute draws them: the left axis follows the widest bar."""
    figure = _new_figure()
    left, right = figure.subplots(1, 2, sharey=True)
    bars = left.barh([0, 1, 2], [1.0, 2.0, 3.0])
    right.barh([0, 1, 2], [1.0, 1.0, 1.0])
    left.set_yticks([0, 1, 2], ["none", "selective", "full"])
    left.set_xlabel("bytes (GB)")
    left.grid(axis="x", alpha=0.3)
    right.set_xlim(0, 4)

    class View:
        def update(self, widest):
            for rect, width in zip(bars, (widest / 3, widest / 2, widest), strict=True):
                rect.set_width(width)
            left.set_xlim(0, 1.08 * widest)

    view = View()
    view.figure, view.animated = figure, list(bars)
    view.rescaling = [left.xaxis] if rescaling else []
    return view


def _count_draws(live):
    calls = []
    original = live.figure.canvas.draw
    live.figure.canvas.draw = lambda *a, **k: (calls.append(1), original(*a, **k))[1]
    return calls


def test_a_rescaling_axis_is_redrawn_as_a_layer_with_the_same_pixels(full_draw_png):
    view = _bars_view(rescaling=True)
    view.update(1.0)
    live = LiveFigure(view.figure, view.animated, rescaling=view.rescaling)
    draws = _count_draws(live)
    for widest in (3.0, 0.7, 41.0, 1234.5, 0.002):
        view.update(widest)
        png = live.render()
        assert png == full_draw_png(_bars_view(rescaling=False), widest), widest
    assert draws == [], "a rescale redraws the axis layer, never the whole figure"


def test_backgrounds_are_cached_per_limits_until_a_refresh():
    view = _bars_view(rescaling=False)
    view.update(1.0)
    live = LiveFigure(view.figure, view.animated)
    draws = _count_draws(live)
    view.update(2.0)
    second = live.render()
    view.update(1.0)
    live.render()
    view.update(2.0)
    assert live.render() == second
    assert len(draws) == 1, "limits drawn before come back from the cache"
    live.refresh()  # something static changed: the cached backgrounds are forgotten
    view.update(1.0)
    live.render()
    assert len(draws) == 3


def test_an_artist_that_moves_with_a_rescaling_axis_must_be_animated():
    view = _bars_view(rescaling=True)
    ax = view.rescaling[0].axes
    ax.axvline(0.5, color="red")  # data coordinates along x: it would go stale in a background
    with pytest.raises(ValueError, match=r"moves when the x-axis rescales.*make it animated"):
        LiveFigure(view.figure, view.animated, rescaling=view.rescaling)
    ax.axhline(1.0)  # along y only: stays put while x rescales
    ax.lines[0].remove()
    LiveFigure(view.figure, view.animated, rescaling=view.rescaling)


def test_a_control_that_follows_another_does_not_draw_twice():
    """Wiring that moves a second control first (a slider's end follows a block size) draws
    the new values once: the leader's own change then finds them drawn already."""
    import ipywidgets as widgets

    figure = _new_figure()
    (point,) = figure.add_subplot().plot([1], [1], "o")
    leader = widgets.IntSlider(value=1, min=0, max=10)
    follower = widgets.IntSlider(value=1, min=0, max=10)
    leader.observe(lambda change: setattr(follower, "value", change["new"]), names="value")

    def update(x, y):
        point.set_data([x], [y])
        return f"{x}, {y}"

    explorer = Explorer({"x": leader, "y": follower}, update, LiveFigure(figure, [point]))
    explorer.timings_ms.clear()
    assert explorer.step(x=4) == "4, 4"
    assert len(explorer.timings_ms) == 1
