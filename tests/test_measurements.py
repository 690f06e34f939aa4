"""Measured data: every row sourced, sane, and findable."""

from __future__ import annotations

import pytest

from gpuperf import measurements
from gpuperf.hardware import chip


def test_every_measurement_names_a_chip_in_the_table_or_none():
    for m in measurements.MEASUREMENTS:
        assert m.source and m.method and m.quantity
        if m.chip is not None:
            assert chip(m.chip).name == m.chip
        if m.low is not None:
            assert m.low <= m.value <= m.high


def test_bandwidth_measurements_stay_below_the_datasheet():
    for m in measurements.measurements(unit="B/s"):
        if m.chip is not None and ("copy" in m.quantity or "memcopy" in m.quantity):
            limit = 2 * chip(m.chip).hbm_bandwidth if "read + write" in m.quantity else None
            per_direction = chip(m.chip).hbm_bandwidth
            if "HBM" in m.quantity or "device" in m.quantity or "memcopy" in m.quantity:
                assert m.value <= (limit or per_direction)


def test_measured_matmuls_stay_below_the_dense_peak():
    for m in measurements.measurements(unit="FLOP/s"):
        precision = "bf16" if "bf16" in m.quantity else "fp16"
        assert m.value < chip(m.chip).peak_flops(precision)
    for g in measurements.H100_GEMM:
        for dtype in ("fp16", "bf16", "tf32"):
            assert g.flops_per_s[dtype] < chip("h100").peak_flops(dtype)


def test_p5_pcie_hop_reaches_90_percent_of_gen4_x8():
    measured = measurements.find("CPU → GPU copy", "h100").value
    from gpuperf.hardware import pcie_bandwidth

    assert measured / pcie_bandwidth(4, 8) == pytest.approx(0.90, abs=0.01)


def test_nvlink_measured_is_85_percent_of_spec():
    both = measurements.find("both directions", "h100").value
    assert both / (2 * chip("h100").interconnect_bandwidth) == pytest.approx(0.873, abs=0.01)


def test_filters_and_errors():
    assert all(m.chip == "T4" for m in measurements.measurements("t4"))
    with pytest.raises(ValueError, match="unit='parsecs'"):
        measurements.measurements(unit="parsecs")
    with pytest.raises(KeyError, match="measurements match 'zzz'"):
        measurements.find("zzz")
    with pytest.raises(ValueError, match="dtype='fp4' is not a column"):
        measurements.gemm_range("fp4")
    assert measurements.find("Llama 3").fraction_of(1.0) == pytest.approx(0.41)
