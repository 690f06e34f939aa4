"""The PyTorch-profiler helper: real runs on this machine, structure only (timings vary)."""

from __future__ import annotations

import pytest

from gpuperf import profiling


def test_bound_in_words():
    assert profiling.bound_in_words(1.0, 0.0).startswith("no GPU activity")
    assert profiling.bound_in_words(3.0, 1.0) == (
        "CPU-bound: the host spent 3× the device time issuing work"
    )
    assert profiling.bound_in_words(1.0, 4.0).startswith("GPU-bound: the device was busy 4×")
    assert profiling.bound_in_words(0, 1e-3).startswith("GPU-bound: the host recorded no time")
    assert profiling.bound_in_words(0, 0).startswith("no GPU activity")
    with pytest.raises(ValueError, match=r"host_s=-1\.0 must be a finite number ≥ 0"):
        profiling.bound_in_words(-1.0, 1.0)
    for bad in (float("nan"), float("inf"), True, "1", None):
        with pytest.raises(ValueError, match=r"device_s=.* must be a finite number ≥ 0"):
            profiling.bound_in_words(1.0, bad)


def test_glossary_covers_the_table_columns():
    columns = {name for name, _ in profiling.GLOSSARY}
    assert {"Self CPU", "CPU total", "Self CUDA", "CUDA total", "# of Calls"} <= columns


def test_profile_runs_for_real():
    torch = pytest.importorskip("torch")
    x = torch.randn(64, 64)
    result = profiling.profile(lambda: (x @ x).relu().sum(), steps=2)
    mm = result.row("aten::mm")
    assert mm.calls == 2 and mm.self_cpu_s > 0 and mm.cpu_total_s >= mm.self_cpu_s
    assert "Self CPU" in result.table and "aten::mm" in result.table
    assert result.self_cpu_total_s > 0
    if not torch.cuda.is_available():
        assert result.device == "cpu" and result.self_device_total_s == 0
        assert result.bound.startswith("no GPU activity")
    with pytest.raises(KeyError, match="no row 'aten::nothing'"):
        result.row("aten::nothing")
    with pytest.raises(ValueError):
        profiling.profile(lambda: None, steps=0)


def test_profiler_chatter_does_not_reach_stderr(capfd):
    torch = pytest.importorskip("torch")
    x = torch.randn(8, 8)
    profiling.profile(lambda: x @ x, steps=1)
    captured = capfd.readouterr()
    assert "USDT" not in captured.err and "profiler_start" not in captured.err
