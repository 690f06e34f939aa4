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


class _Kind:
    """A stand-in for torch's DeviceType enum member (only ``.name`` is read)."""

    def __init__(self, name):
        self.name = name


def _event(key, self_cpu_us, self_cuda_us=0.0, kind="CPU", count=1):
    """One row of ``prof.key_averages()`` as torch builds it (times in microseconds)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        key=key, count=count, self_cpu_time_total=self_cpu_us, cpu_time_total=self_cpu_us,
        self_device_time_total=self_cuda_us, device_time_total=self_cuda_us,
        device_type=_Kind(kind), is_user_annotation=False,
    )  # fmt: skip


def _synchronised_gpu_bound_step():
    """A GPU-bound step profiled the way ``profile`` does (synchronising at the end).

    The shape of a real table (uccl-project/uccl issue #684): cudaDeviceSynchronize holds
    150.485 ms of a 195.526 ms Self CPU total. The host spent ~45 ms issuing 150 ms of kernels,
    and each kernel's time is booked twice — on the kernel's own row (a device event) and as the
    Self CUDA of the operator that launched it.
    """
    return [
        _event("aten::mm", 20_000.0, self_cuda_us=100_000.0),
        _event("aten::add", 15_000.0, self_cuda_us=50_000.0),
        _event("cudaLaunchKernel", 10_041.0),
        _event("cudaDeviceSynchronize", 150_485.0),
        _event("sm90_xmma_gemm_bf16bf16", 0.0, self_cuda_us=100_000.0, kind="CUDA"),
        _event("vectorized_elementwise_kernel", 0.0, self_cuda_us=50_000.0, kind="CUDA"),
    ]


def test_a_synchronised_gpu_bound_step_reads_gpu_bound():
    # Issue 34 (R4): the host's wait inside torch.cuda.synchronize() is not host work. Counting
    # it, the step above would read "CPU-bound: 195.5 ms of host time against 150 ms".
    run = profiling._profile_from_averages(
        _synchronised_gpu_bound_step(), device="cuda", steps=1, table=""
    )
    assert run.self_cpu_total_s == pytest.approx(195.526e-3)  # the table's own total
    assert run.host_wait_s == pytest.approx(150.485e-3)
    assert run.host_issue_s == pytest.approx(45.041e-3)
    # device time: the kernels once (the table's "Self CUDA time total"), not 300 ms
    assert run.self_device_total_s == pytest.approx(150e-3)
    assert run.bound.startswith("GPU-bound")
    # the rule the profiler page states, on the old sums, gets it backwards
    assert profiling.bound_in_words(run.self_cpu_total_s, 150e-3).startswith("CPU-bound")


def test_a_launch_bound_step_still_reads_cpu_bound():
    # many tiny kernels: 2000 launches of 12 µs of host time for 3 µs kernels (05_profiling P1)
    events = [
        _event("aten::add", 14_000.0, self_cuda_us=6_000.0, count=2000),
        _event("cudaLaunchKernel", 10_000.0, count=2000),
        _event("cudaDeviceSynchronize", 5.0),
        _event("vectorized_elementwise_kernel", 0.0, self_cuda_us=6_000.0, kind="CUDA"),
    ]
    run = profiling._profile_from_averages(events, device="cuda", steps=1, table="")
    assert run.host_issue_s == pytest.approx(24e-3)
    assert run.bound.startswith("CPU-bound: the host spent 4×")


def test_host_wait_events():
    for name in ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                 "aten::_local_scalar_dense"):  # fmt: skip
        assert profiling.is_host_wait(name)
    for name in ("cudaLaunchKernel", "aten::mm", "cudaMemcpyAsync"):
        assert not profiling.is_host_wait(name)
    with pytest.raises(TypeError, match="name"):
        profiling.is_host_wait(None)
    row = profiling.ProfileRow("cudaStreamSynchronize", 1, 1e-3, 1e-3, 0.0, 0.0)
    assert row.host_wait and not row.on_device
    with pytest.raises(TypeError, match="on_device"):
        profiling.ProfileRow("k", 1, 0.0, 0.0, 1.0, 1.0, on_device="yes")


def test_problem_6_calls_the_ladders_l2_figure_what_its_record_says():
    # Issue 34 (R4): 5.3's Problem 6 called the ladder's H100 SXM L2 figure "measured"; the
    # record (and 5's own text) says it is the playbook's approximate figure, and the one L2
    # microbenchmark ran on an H100 PCIe card. The answer now reads both from their records.
    from pathlib import Path

    import nbformat

    from gpuperf import measurements

    sxm = measurements.find("L2 bandwidth", "H100-SXM")
    pcie = measurements.find("L2 bandwidth", "H100-PCIe")
    assert "approximate" in sxm.method and "microbenchmark" in pcie.method
    page = Path(__file__).resolve().parent.parent / "chapters" / "05_profiling.ipynb"
    cells = [c for c in nbformat.read(page, 4).cells if "p6_l2" in c.source]
    (answer,) = cells
    html = "".join(o["data"]["text/html"] for o in answer.outputs if "text/html" in o["data"])
    assert sxm.method in html and pcie.method in html
    assert "measured L2 figure" not in html.replace("no measured L2 figure", "")
