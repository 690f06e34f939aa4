"""The online book's decode figure (section 4.3): every plotted value equals the calculator's.

:func:`gpuperf.widgets.inference.decode_static` reads its rows from the live view; these checks
recompute them here from :func:`gpuperf.inference.decode_step` and the chip table, reading the
rows back from the compiled Vega spec the page ships.
"""

from __future__ import annotations

import pytest

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

from gpuperf import inference
from gpuperf.hardware import chip
from gpuperf.units import format_bytes
from gpuperf.widgets import inference as widget


@pytest.fixture(scope="module")
def decode():
    return widget.decode_static()


def _step(batch, context_len, kv_heads, chip_name):
    config = inference.ILLUSTRATIVE.with_kv_heads(kv_heads)
    return inference.decode_step(config, batch, context_len, chip(chip_name), "bf16")


SAMPLES = [
    (1, 4096, 8, "H100-SXM"),
    (16, 2048, 1, "A100-80GB"),
    (128, 512, 32, "H200"),
    (1024, 32768, 32, "A100-80GB"),
    (64, 16384, 4, "H100-SXM"),
    (256, 8192, 8, "B200"),
    (2, 32768, 1, "GB200"),
]


@pytest.mark.parametrize(("batch", "context_len", "kv_heads", "chip_name"), SAMPLES)
def test_decode_marker_bars_and_note_equal_the_calculator(
    decode, batch, context_len, kv_heads, chip_name
):
    values = dict(batch=batch, context_len=context_len, kv_heads=kv_heads, chip_name=chip_name)
    step = _step(**values)
    (marker,) = decode.rows("marker", **values)
    assert marker == {"batch": batch, "intensity": pytest.approx(step.intensity, rel=1e-12)}
    kv = step.kv_read_bytes + step.kv_write_bytes
    config = inference.ILLUSTRATIVE.with_kv_heads(kv_heads)
    held = config.total_bytes("bf16") + kv  # every weight is held; the step reads fewer
    capacity = chip(chip_name).hbm_bytes
    bars = {(b["row"], b["part"].split(" (")[0]): b for b in decode.rows("bars", **values)}
    read_w, read_kv = bars["read per step", "weights"], bars["read per step", "KV cache"]
    assert read_w["x1"] - read_w["x0"] == pytest.approx(step.weight_bytes / step.bytes)
    assert read_kv["x1"] - read_kv["x0"] == pytest.approx(kv / step.bytes)
    hold_kv = bars["HBM holds", "KV cache"]
    assert hold_kv["x1"] == pytest.approx(min(1.0, held / capacity))
    assert ("does not fit" in hold_kv["part"]) == (held > capacity)
    texts = {t["row"]: t["text"] for t in decode.rows("texts", **values)}
    assert texts["HBM holds"].startswith(f"{format_bytes(held)} of {format_bytes(capacity)}")
    note = decode.note(**values)
    assert f"batch {batch}, context {context_len}" in note
    assert f"Intensity {step.intensity:.3g} FLOP/B" in note
    assert f"{step.bound}-bound" in note


@pytest.mark.parametrize(
    ("context_len", "kv_heads", "chip_name"), [(512, 32, "H200"), (32768, 1, "A100-80GB")]
)
def test_decode_curves_equal_the_calculator(decode, context_len, kv_heads, chip_name):
    rows = decode.rows("curves", context_len=context_len, kv_heads=kv_heads, chip_name=chip_name)
    by_series = {}
    for row in rows:
        by_series.setdefault(row["series"], {})[row["batch"]] = row["intensity"]
    assert set(by_series) == {"weights only", "whole step", "ridge point"}
    for batch in widget.BATCHES:
        step = _step(batch, context_len, kv_heads, chip_name)
        assert by_series["whole step"][batch] == pytest.approx(step.intensity, rel=1e-12)
        assert by_series["weights only"][batch] == pytest.approx(step.weight_intensity, rel=1e-12)
        assert by_series["ridge point"][batch] == pytest.approx(
            chip(chip_name).ridge_point("bf16"), rel=1e-12
        )


def test_decode_offers_the_live_explorers_controls(decode):
    pytest.importorskip("ipywidgets")
    live = widget.decode_explorer()
    static_values = {c.name: c.values for c in decode.controls}
    assert list(static_values) == ["batch", "context_len", "kv_heads", "chip_name"]
    for name, values in static_values.items():
        offered = tuple(v for _, v in live.controls[name].options)
        assert values == offered, name


def test_decode_refuses_a_batch_it_does_not_offer(decode):
    with pytest.raises(ValueError, match="batch=3 is not one of its values"):
        decode.rows("marker", batch=3, context_len=4096, kv_heads=8, chip_name="H100-SXM")
