"""The online book's coalescing figure (chapter 3.4) plots what the calculator computes.

:func:`gpuperf.widgets.tricks.coalescing_static` stores the live view's byte map as runs of
fetched and of requested bytes; these tests rebuild both from :func:`gpuperf.memory.coalescing`
at sampled control values and compare them, byte by byte, with the runs the page ships.
"""

from __future__ import annotations

import pytest

from gpuperf import memory
from gpuperf.widgets.tricks import (
    ELEMENT_BYTES,
    LINES_DRAWN,
    STATIC_OFFSETS,
    STRIDES,
    coalescing_static,
)

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


@pytest.fixture(scope="module")
def figure():
    return coalescing_static()


def test_controls_are_the_live_explorers(figure):
    offered = {c.name: tuple(c.values) for c in figure.controls}
    assert offered == {"stride": STRIDES, "offset": STATIC_OFFSETS, "element_bytes": ELEMENT_BYTES}
    assert set(STATIC_OFFSETS) <= set(range(33))  # the live offset slider's range


def _expected(stride: int, offset: int, element_bytes: int) -> dict[int, str]:
    """Byte address → state for every drawn byte the warp's load touches."""
    result = memory.coalescing(stride, offset, element_bytes)
    drawn = LINES_DRAWN * result.line_bytes
    states = {}
    for sector in result.sectors:
        for b in range(sector * result.sector_bytes, (sector + 1) * result.sector_bytes):
            if b < drawn:
                states[b] = "fetched, unused"
    for lane in range(32):
        start = element_bytes * (offset + stride * lane)
        for b in range(start, start + element_bytes):
            if b < drawn:
                states[b] = "requested"
    return states


@pytest.mark.parametrize("stride", [1, 2, 3, 8, 32])
@pytest.mark.parametrize("offset", [0, 1, 3, 31])
@pytest.mark.parametrize("element_bytes", [1, 4, 16])
def test_byte_map_equals_the_calculator(figure, stride, offset, element_bytes):
    values = dict(stride=stride, offset=offset, element_bytes=element_bytes)
    shown: dict[int, str] = {}
    # the page draws every fetched byte in orange, then the requested ones over them in blue
    for table, state in (("fetched", "fetched, unused"), ("requested", "requested")):
        covered: set[int] = set()
        for run in figure.rows(table, **values):
            assert 0 <= run["line"] < LINES_DRAWN and 0 <= run["x0"] < run["x1"] <= 128
            for b in range(run["x0"], run["x1"]):
                address = run["line"] * 128 + b
                assert address not in covered, f"runs of {table} overlap"
                covered.add(address)
                shown[address] = state
    assert shown == _expected(stride, offset, element_bytes)
    result = memory.coalescing(stride, offset, element_bytes)
    note = figure.note(**values)
    assert f"{result.transactions} × {result.sector_bytes}-byte sectors" in note
    assert f"efficiency {result.efficiency:.1%}" in note


def test_sector_rules_every_32_bytes(figure):
    assert [r["x"] for r in figure.rows("sectors")] == [0, 32, 64, 96, 128]


def test_an_offset_off_the_grid_is_refused(figure):
    with pytest.raises(ValueError, match="offset=5 is not one of its values"):
        figure.rows("requested", stride=1, offset=5, element_bytes=4)
