"""The measurement harness: the no-GPU path, floors, correctness, targets and the JSON schema.

Nothing here times anything without a GPU. Records used to test the target evaluation are either
the first-party H100 run shipped with the package (real measurements) or explicitly marked fake.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from importlib import resources

import pytest

from gpuperf import bench, cost, measurements
from gpuperf.hardware import chip
from gpuperf.runtime import has_cuda_gpu
from gpuperf.units import format_seconds

NUMBER_WITH_UNIT = re.compile(r"\d[\d.]*\s*(µs|ms|ns|s\b|GB/s|TB/s|FLOP/s|%)")
no_gpu_only = pytest.mark.skipif(has_cuda_gpu(), reason="tests the machine without a GPU")


def _packaged_run() -> dict:
    text = resources.files("gpuperf").joinpath(measurements.COURSE_KERNELS_FILE).read_text()
    return json.loads(text)


# ---------------------------------------------------------------------------------- no GPU


@no_gpu_only
def test_cli_without_gpu_says_so_and_exits_nonzero(tmp_path):
    target = tmp_path / "run.json"
    proc = subprocess.run(
        [sys.executable, "-m", "gpuperf.bench", "--json", str(target)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "No CUDA GPU" in proc.stderr and "nothing can be measured" in proc.stderr
    assert f"Nothing was written to {target}" in proc.stderr
    assert proc.stdout == ""
    assert not target.exists()
    assert not NUMBER_WITH_UNIT.search(proc.stdout + proc.stderr)


@no_gpu_only
def test_measuring_without_gpu_raises_instead_of_returning_a_number():
    with pytest.raises(bench.NoGPUError, match="No CUDA GPU"):
        bench.measure_seconds(lambda: None)
    with pytest.raises(bench.NoGPUError):
        bench.measure_ceilings()
    with pytest.raises(bench.NoGPUError):
        bench.run()
    with pytest.raises(bench.NoGPUError):
        bench.collect(quick=True)
    with pytest.raises(bench.NoGPUError):
        bench.provenance("H100-SXM")
    case = bench.cases(quick=True)[0]
    with pytest.raises(bench.NoGPUError):
        bench.measure_case(case, bench.roofline_floor(case.op, 1e12, 1e12), 1e12)
    assert bench.main([]) == 1


# ---------------------------------------------------------------------------------- floors


def test_floor_memory_bound_from_chip_table():
    a100 = chip("A100")
    op = cost.elementwise(1 << 28, "fp32", n_inputs=2)  # vector add: 12 bytes per element
    floor = bench.chip_floor(op, "A100", "fp32")
    assert floor.bound == "HBM"
    assert floor.time_s == pytest.approx(op.bytes / a100.hbm_bandwidth)
    assert floor.t_math_s < floor.t_memory_s
    assert "A100" in floor.source


def test_floor_compute_bound_matmul():
    op = cost.matmul(4096, 4096, 4096, "fp16")
    h100 = chip("H100")
    floor = bench.chip_floor(op, "H100", "fp16")
    assert floor.bound == "compute"
    assert floor.time_s == pytest.approx(2 * 4096**3 / h100.peak_flops("fp16"))


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "1e12", True, None])
def test_floor_rejects_bad_roofs(bad):
    op = cost.OpCost(0, 1e9, 1e9)
    assert bench.roofline_floor(op, 1e12, 1e12, "x").time_s == pytest.approx(2e-3)
    with pytest.raises(ValueError, match=r"must be a finite number > 0"):
        bench.roofline_floor(op, bad, 1e12)
    with pytest.raises(ValueError, match=r"bandwidth_bytes_per_s=.* must be a finite number"):
        bench.roofline_floor(op, 1e12, bad)


def test_report_format_floor_first():
    # FAKE TEST DATA: the 47 µs below is an invented timing used only to test formatting.
    fake_measured_s = 47e-6
    op = cost.OpCost(0, 0.5 * 41e-6 * 1e12, 0.5 * 41e-6 * 1e12, "copy")
    floor = bench.roofline_floor(op, 1e15, 1e12, "test ceilings")
    line = bench.Measurement("copy", op, floor, fake_measured_s).format()
    assert line.startswith("copy: floor 41 µs (HBM), measured 47 µs, 87 % of roofline")
    assert line.index("floor") < line.index("measured")
    assert "GB/s" in line or "TB/s" in line
    table = bench.format_table([bench.Measurement("copy", op, floor, fake_measured_s)] * 2)
    assert table.count("\n") == 1
    assert line.endswith("; roof: test ceilings")


def test_every_printed_floor_names_the_chip_whose_roof_it_used():
    # R3 finding 6: the line never said which chip's floor it was, so a reader on an unlisted
    # GPU saw ">100 % of roofline" with no hint why.
    # FAKE TEST DATA: the 1 ms below is an invented timing used only to test formatting.
    op = cost.matmul(4096, 4096, 4096, "fp16")
    for name in ("H100-SXM", "T4", "GB200"):
        line = bench.Measurement("mm", op, bench.chip_floor(op, name, "fp16"), 1e-3).format()
        assert f"roof: {name} datasheet (gpuperf.hardware)" in line
    bare = bench.roofline_floor(op, 1e15, 1e12)
    assert "roof: not named by the caller" in bench.Measurement("mm", op, bare, 1e-3).format()


def test_non_matmul_work_gets_the_non_tensor_floor():
    op = cost.softmax(4096, 4096, "bf16")
    h100 = chip("H100-SXM")
    tensor = bench.chip_floor(op, h100, "bf16")
    vector = bench.chip_floor(op, h100, "bf16", tensor_cores=False)
    assert vector.t_math_s == pytest.approx(op.flops / 133.8e12)
    assert vector.t_math_s == pytest.approx(tensor.t_math_s * 989.4 / 133.8)
    assert "non-tensor bf16 peak" in vector.source and "H100-SXM" in vector.source
    with pytest.raises(ValueError, match="no sourced non-tensor"):
        bench.chip_floor(op, "B200", "bf16", tensor_cores=False)


# ---------------------------------------------------------------------- which GPU, which roof


def test_the_advice_says_what_each_colab_gpu_gives():
    text = bench.NO_GPU_MESSAGE
    for name, arch in (("T4", "sm_75"), ("L4", "sm_89"), ("A100", "sm_80"), ("H100", "sm_90")):
        assert f"{name} ({arch}:" in text
        assert chip(name).sm_arch == arch  # the advice and the chip table agree
    t4 = bench.COLAB_GPUS["T4"]
    # ERRATA / frontier §9, release by release, and Triton's README (compute capability 8.0+)
    facts = ("8.0+", "3.2 still emits mma", "3.3 falls back to FMA", "fp16 dots crash")
    facts += ("3.4 and later compile them to FMA", "no tensor cores", "torch.matmul")
    for fact in facts:
        assert fact in t4, fact
    for name in ("L4", "A100", "H100"):
        assert "supported by Triton" in bench.COLAB_GPUS[name]


@pytest.mark.parametrize(
    ("device_name", "row"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-SXM"),
        ("NVIDIA H100 NVL", "H100-NVL"),
        ("NVIDIA A100 80GB PCIe", "A100-80GB-PCIe"),
        ("Tesla T4", "T4"),
        ("NVIDIA L4", "L4"),
        ("AMD Instinct MI300X", "MI300X"),
        ("NVIDIA H800", None),
        ("NVIDIA A100-PCIE-40GB", None),
        ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", None),
    ],
)
def test_resolve_gpu_uses_the_devices_own_row_or_none(device_name, row):
    gpu = bench.resolve_gpu(device_name)
    op = cost.elementwise(2**20, "fp16")
    if row is None:
        assert gpu.chip is None and not gpu.has_roof
        assert gpu.floor(op, "fp16") is None
        assert "not in gpuperf's chip table, so no datasheet roof is used" in gpu.message
        assert "no other chip's roof stands in" in str(gpu)
    else:
        assert gpu.chip is chip(row) and gpu.has_roof
        assert f"chip table row {row}: floors use its datasheet roof" in gpu.message
        assert gpu.floor(op, "fp16") == bench.chip_floor(op, row, "fp16")
    assert device_name in gpu.message


@pytest.mark.parametrize(
    ("version", "says"),
    [
        ("3.2.0", "3.2 emits mma (tensor cores) for fp16 dots"),
        ("3.3.1", "3.3 falls back to FMA and crashes on fp16 dots"),
        ("3.6.0", "3.6 compiles dots to FMA (no tensor cores)"),
        (None, "3.4 and later compile them to FMA"),
    ],
)
def test_a_t4_is_told_what_its_triton_gives(version, says):
    gpu = bench.resolve_gpu("Tesla T4", (7, 5), version)
    assert says in gpu.message
    assert "below Triton's supported hardware (compute capability 8.0+)" in gpu.message
    assert "tensor cores" in bench.resolve_gpu("NVIDIA L4", (8, 9), version).message


def test_resolve_gpu_without_a_gpu_and_bad_input():
    assert bench.resolve_gpu(None).message == bench.NO_GPU_MESSAGE
    assert bench.resolve_gpu(None).chip is None
    with pytest.raises(TypeError, match="device_name=3 must be a string"):
        bench.resolve_gpu(3)
    with pytest.raises(ValueError, match="compute_capability"):
        bench.resolve_gpu("Tesla T4", (7, -5))
    with pytest.raises(TypeError, match="tensor_cores"):
        bench.resolve_gpu("Tesla T4").floor(cost.elementwise(8, "fp16"), "fp16", "yes")


@no_gpu_only
def test_this_gpu_without_a_gpu_says_so_and_has_no_roof():
    gpu = bench.this_gpu()
    assert gpu.device_name is None and gpu.chip is None
    assert gpu.message == bench.NO_GPU_MESSAGE


# ---------------------------------------------------------------------------------- correctness


def test_relative_error():
    torch = pytest.importorskip("torch")
    ref = torch.tensor([3.0, 4.0])
    assert bench.relative_error(ref.clone(), ref) == 0.0
    assert bench.relative_error(torch.tensor([3.0, 4.5]), ref) == pytest.approx(0.1)
    # Tuples: one norm over all tensors.
    assert bench.relative_error((ref, torch.zeros(2)), (ref, torch.ones(2))) == pytest.approx(
        math.sqrt(2) / math.sqrt(27)
    )
    assert bench.relative_error(torch.tensor([math.nan, 4.0]), ref) == math.inf
    with pytest.raises(ValueError, match=r"output shape \(3,\) but reference \(2,\)"):
        bench.relative_error(torch.zeros(3), ref)
    assert bench.error_threshold("fp16") == pytest.approx(1e-2)
    assert bench.error_threshold("fp32") < bench.error_threshold("bf16")


def test_measure_case_assembles_records(monkeypatch):
    """The record logic, with FAKE TIMINGS (2 µs kernel, 4 µs and 1 µs torch) on the CPU."""
    torch = pytest.importorskip("torch")
    fake_times = iter([2e-6, 4e-6, 1e-6])
    monkeypatch.setattr(bench, "_require_gpu", lambda: None)
    monkeypatch.setattr(bench, "measure_seconds", lambda fn, **_: (fn(), next(fake_times))[1])
    x = torch.arange(8.0)
    prepared = bench.Prepared(
        lambda: x * 1,
        lambda: x * 1,
        lambda: x.double(),
        {"torch": lambda: x.clone(), "other": lambda: x.clone()},
    )
    case = bench.Case("toy fp32", cost.OpCost(0, 32, 32), "fp32", lambda: prepared)
    floor = bench.roofline_floor(case.op, 1e12, 64e6)
    main, other = bench.measure_case(case, floor, copy_bandwidth=64e6)
    assert main["case"] == "toy fp32" and other["case"] == "toy fp32 vs other"
    assert main["us"] == pytest.approx(2.0) and main["torch_us"] == pytest.approx(4.0)
    assert main["speed_vs_torch"] == pytest.approx(2.0)
    assert other["speed_vs_torch"] == pytest.approx(0.5)
    assert main["GBps"] == pytest.approx(64 / 2e-6 / 1e9)
    assert main["frac_copy_bw"] == pytest.approx(0.5)  # 32 MB/s achieved of 64 MB/s
    assert main["rel_err"] == 0.0 and other["rel_err"] == 0.0
    assert set(main) <= set(measurements._RECORD_KEYS)
    # A wrong answer is reported, not timed.
    wrong = bench.Prepared(lambda: x, lambda: x + 1, lambda: x.double(), {"torch": lambda: x})
    bad = bench.Case("bad fp32", cost.OpCost(0, 32, 32), "fp32", lambda: wrong)
    (record,) = bench.measure_case(bad, floor, 64e6)
    assert record["us"] == 0.0 and record["rel_err"] > 0.01
    assert "WRONG RESULT" in bench.format_records([record])


# ---------------------------------------------------------------------------------- cases


def test_cases_build_without_a_gpu_and_cover_every_target():
    full, quick = bench.cases(), bench.cases(quick=True)
    names = [c.name for c in full]
    assert len(set(names)) == len(names), "case names must be unique"
    assert 0 < len(quick) < len(full)
    has_hopper = any(n.startswith("FA-hopper") for n in names)
    # Every target's cases exist (the "vs SDPA default" rows come from the FA cases).
    produced = names + [n + " vs SDPA default" for n in names if n.startswith("FA")]
    for target in bench.TARGETS:
        for pattern in target.cases:
            hit = any(re.search(pattern, n) for n in produced)
            if "hopper" in pattern and not has_hopper:
                assert not hit
                continue
            assert hit, f"{target.name}: no case matches {pattern}"


def test_quick_is_every_case_the_targets_need():
    """One ``--quick`` run yields every number of the targets table: the copy ceiling, matmul
    vs cuBLAS (fp16/bf16, 4096³ and 8192³, default and autotuned), FA vs SDPA FLASH and default
    (d64/d128, causal or not, fwd and fwd+bwd), decode vs copy bandwidth — and nothing else."""
    quick = [c.name for c in bench.cases(quick=True)]
    produced = quick + [n + " vs SDPA default" for n in quick if n.startswith("FA")]
    for target in bench.TARGETS:
        for pattern in target.cases:
            if "hopper" in pattern and not any(n.startswith("FA-hopper") for n in quick):
                continue
            assert any(re.search(pattern, n) for n in produced), (target.name, pattern)
    wanted = [p for t in bench.TARGETS for p in t.cases] + list(bench.QUICK_ALSO)
    for name in quick:
        assert any(re.search(p, n) for p in wanted for n in (name, name + " vs SDPA default"))
    for needed in (
        "matmul torch.bfloat16 8192³ autotune",
        "FA fwd+bwd fp16 B4 H16 N4096 d128 causal=True",
        "decode split-KV fp16 B1 H32 KVH8 T32768 d128",
        "decode plain fp16 B1 H32 KVH8 T32768 d128",
    ):
        assert needed in quick


def test_list_prints_the_cases_and_times_nothing(capsys):
    assert bench.main(["--list", "--quick", "--only", "^decode"]) == 0
    out = capsys.readouterr().out
    assert "decode split-KV fp16 B1 H32 KVH8 T32768 d128  [fp16;" in out
    assert "memory-bound" in out and "2 cases; nothing was timed (--list)" in out
    assert not re.search(r"\d\s*(µs|ms|GB/s|TB/s|FLOP/s)", out)
    with pytest.raises(SystemExit):
        bench.main(["--list", "--only", "("])
    assert "--only '(' is not a regular expression" in capsys.readouterr().err


def test_decode_counterpart_matches_the_reference():
    """SDPA with grouped KV heads and one query computes what decode_attention_ref does (tiny
    CPU tensors: a correctness check of the torch counterpart, not a measurement)."""
    torch = pytest.importorskip("torch")
    from gpuperf.kernels.decode_attention import decode_attention_ref

    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 8, 16, generator=g)
    k, v = (torch.randn(2, 2, 37, 16, generator=g) for _ in range(2))
    got = bench._sdpa_decode(q, k, v)
    assert bench.relative_error(got, decode_attention_ref(q, k, v)) < 1e-5


def test_decode_cases_check_and_record_at_a_tiny_size(monkeypatch):
    """The decode cases' structure on the CPU (Triton's interpreter) at a 100-token cache: the
    kernels' outputs pass the correctness check against the fp32 reference, and the records
    carry the fraction of the copy bandwidth. The timings are FAKE (a monkeypatched timer): this
    is not a measurement."""
    pytest.importorskip("torch")
    from gpuperf.runtime import configure_triton

    configure_triton()
    monkeypatch.setattr(bench, "CASE_DEVICE", "cpu")
    monkeypatch.setattr(bench, "DECODE_CONTEXTS", (100,))
    monkeypatch.setattr(bench, "_require_gpu", lambda: None)
    fake_seconds = iter([2e-6, 3e-6, 4e-6, 6e-6])  # FAKE TIMINGS: kernel, SDPA, kernel, SDPA
    monkeypatch.setattr(bench, "measure_seconds", lambda fn, **_: (fn(), next(fake_seconds))[1])
    decode = [c for c in bench.cases() if c.name.startswith("decode")]
    assert [c.name for c in decode] == [
        "decode plain fp16 B1 H32 KVH8 T100 d128",
        "decode split-KV fp16 B1 H32 KVH8 T100 d128",
    ]
    for case in decode:
        assert case.memory_bound
        floor = bench.roofline_floor(case.op, 1e15, 1e12)
        (record,) = bench.measure_case(case, floor, copy_bandwidth=1e12)
        assert record["us"] > 0 and record["rel_err"] <= bench.error_threshold("fp16")
        assert record["frac_copy_bw"] == pytest.approx(
            case.op.bytes / (record["us"] * 1e-6) / 1e12
        )
        assert record["speed_vs_torch"] == pytest.approx(1.5)


def test_json_is_rewritten_after_each_case_and_kept_when_interrupted(monkeypatch, tmp_path):
    """The run's structure with FAKE RESULTS (no timing happens): ``collect`` reports after
    the ceilings and after each case, ``main`` rewrites the document each time, and a run
    interrupted mid-way keeps what was done with ``complete: false``."""
    torch = pytest.importorskip("torch")
    fake_records = {  # FAKE TEST DATA, invented: not measurements
        "decode plain fp16 B1 H32 KVH8 T32768 d128": {"us": 1.0, "GBps": 1.0},
        "decode split-KV fp16 B1 H32 KVH8 T32768 d128": {"us": 2.0, "GBps": 2.0},
    }
    seen, interrupt_at = [], [2]

    def fake_measure_case(case, floor, copy_bandwidth):
        path = tmp_path / "run.json"
        seen.append(json.loads(path.read_text())["records"] if path.exists() else None)
        if len(seen) in interrupt_at:
            raise KeyboardInterrupt  # stopped while measuring the second case
        return [{"case": case.name, **fake_records[case.name]}]

    monkeypatch.setattr(bench, "has_cuda_gpu", lambda: True)
    monkeypatch.setattr(bench, "_require_gpu", lambda: None)
    monkeypatch.setattr(bench, "provenance", lambda chip_name: dict(FAKE_PROVENANCE))
    monkeypatch.setattr(bench, "measure_ceilings", lambda: bench.Ceilings(1e12, 1e15))
    monkeypatch.setattr(bench, "measure_case", fake_measure_case)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "FAKE H100 (test)")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    argv = ["--quick", "--only", "^decode", "--no-progress", "--chip", "H100-SXM"]
    code = bench.main([*argv, "--json", str(tmp_path / "run.json")])
    assert code == 130
    assert seen == [[], [{"case": "decode plain fp16 B1 H32 KVH8 T32768 d128", "us": 1.0,
                          "GBps": 1.0}]]  # fmt: skip
    doc = json.loads((tmp_path / "run.json").read_text())
    assert doc["complete"] is False and doc["ceilings"]["copy_GBps"] == pytest.approx(1000)
    assert [r["case"] for r in doc["records"]] == ["decode plain fp16 B1 H32 KVH8 T32768 d128"]
    assert not list(tmp_path.glob(".*partial"))  # written atomically, nothing left over
    interrupt_at.clear()
    assert bench.main([*argv, "--json", str(tmp_path / "run.json")]) == 0
    doc = json.loads((tmp_path / "run.json").read_text())
    assert doc["complete"] is True and len(doc["records"]) == 2


def test_memory_bound_classification():
    by_name = {c.name: c for c in bench.cases(quick=True)}
    assert by_name["gelu fp32 2^26"].memory_bound
    assert by_name["softmax fp32 (4096, 4096)"].memory_bound
    assert not by_name["matmul torch.float16 4096³ default"].memory_bound
    assert not by_name["FA fwd fp16 B4 H16 N4096 d64 causal=False"].memory_bound


# ---------------------------------------------------------------------------------- targets


def test_targets_on_the_packaged_h100_run():
    """The real H100 run of 2026-11-22 against issue 14's table: what it says today."""
    results = {r.target.name: r for r in bench.evaluate_targets(_packaged_run()["records"])}
    by_start = lambda s: next(r for n, r in results.items() if n.startswith(s))
    mem = by_start("memory-bound")
    assert mem.status == "not measured" and any("gelu" in m for m in mem.missing)
    assert mem.worst_value == pytest.approx(0.9556, abs=1e-3)  # tiled transpose, the lowest
    assert by_start("fused softmax").status == "met"
    online = by_start("softmax_online")
    assert online.status == "not met"
    assert online.worst_case == "softmax_online fp32 (1024, 32768)"
    assert online.worst_value == pytest.approx(0.5896, abs=1e-3)
    default = by_start("matmul fp16/bf16 default")
    assert default.status == "not met" and default.worst_value < 0.42
    assert by_start("matmul fp16/bf16 autotune").status == "not met"
    small = by_start("matmul bf16 1024³")
    assert small.status == "not met" and small.worst_value == pytest.approx(0.0911, abs=1e-3)
    fa = by_start("FlashAttention fwd fp16")
    assert fa.status == "not met" and fa.worst_value == pytest.approx(0.8293, abs=1e-3)
    assert by_start("Hopper FlashAttention").status == "not measured"
    fab = by_start("FlashAttention fwd+bwd")
    assert fab.status == "not met" and fab.worst_value == pytest.approx(0.7223, abs=1e-3)
    text = bench.format_targets(results.values())
    assert "[MET] fused softmax" in text and "[NOT MET] softmax_online" in text


def _fake_records(value: float) -> list[dict]:
    """FAKE TEST DATA: one invented record per target case, every metric equal to ``value``."""
    out = []
    for t in bench.TARGETS:
        for pattern in t.cases:
            name = pattern.strip("^$").replace("\\", "")  # the regex, unescaped
            out.append({"case": name, "us": 1.0, t.metric: value})
    return out


def test_targets_met_not_met_and_wrong_results():
    fake = _fake_records(1.5)
    for r in fake:
        assert any(re.search(p, r["case"]) for t in bench.TARGETS for p in t.cases), r["case"]
    assert {r.status for r in bench.evaluate_targets(fake)} == {"met"}
    assert {r.status for r in bench.evaluate_targets(_fake_records(0.5))} == {"not met"}
    # A wrong result is recorded with us = 0 and fails its target even if others are fast.
    fake[0] = {"case": fake[0]["case"], "us": 0.0, "rel_err": 0.3}
    first = bench.evaluate_targets(fake)[0]
    assert first.status == "not met" and first.wrong == (fake[0]["case"],)
    assert "wrong result, not timed" in first.format()
    assert bench.evaluate_targets([])[0].status == "not measured"


# ---------------------------------------------------------------------------------- JSON


FAKE_PROVENANCE = {  # FAKE TEST DATA: a made-up provenance used only to test the schema.
    "chip": "H100-SXM",
    "device": "NVIDIA H100 80GB HBM3",
    "driver": "0.0 (test)",
    "cuda": "0.0",
    "torch": "0.0",
    "triton": "0.0",
    "numpy": "0.0",
    "date": "2000-01-01",
    "commit": "test",
    "method": "fake",
}


def test_document_schema_is_what_measurements_reads(tmp_path):
    records = [*_fake_records(0.97), {"case": "wrong one", "us": 0.0, "rel_err": 0.5}]
    doc = bench.document(
        records,
        FAKE_PROVENANCE,
        ceilings=bench.Ceilings(3.0e12, 7.0e14),
        roofline={"x": {"floor_us": 1.0, "bound": "HBM", "fraction": 0.9}},
    )
    assert doc["schema"] == bench.SCHEMA == measurements.KERNELS_SCHEMA
    assert set(doc) == {
        "schema", "complete", "provenance", "records", "ceilings", "roofline", "targets"
    }  # fmt: skip
    assert doc["complete"] is True
    assert len(doc["targets"]) == len(bench.TARGETS)
    assert {t["status"] for t in doc["targets"]} <= {"met", "not met", "not measured"}
    path = bench.write_json(tmp_path / "sub" / "run.json", doc)
    loaded = measurements.load_kernels(path)
    assert len(loaded) == len(records)
    assert loaded[-1].us is None and loaded[-1].rel_err == 0.5
    assert json.loads(path.read_text())["ceilings"]["copy_GBps"] == pytest.approx(3000)


def test_record_keys_are_the_ones_measurements_accepts():
    allowed = set(measurements._RECORD_KEYS)
    used = set(re.findall(r'r\["(\w+)"\]|record\["(\w+)"\]|rates\["(\w+)"\]', _source()))
    used = {k for group in used for k in group if k}
    assert used and used <= allowed, used - allowed


def _source() -> str:
    import inspect

    return inspect.getsource(bench)


def test_packaged_run_has_provenance_and_is_read_back():
    doc = _packaged_run()
    assert doc["schema"] == bench.SCHEMA
    assert doc["provenance"]["chip"] == "H100-SXM"
    assert measurements.load_kernels(doc)


# ---------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
@pytest.mark.skipif(not has_cuda_gpu(), reason="needs a CUDA GPU")
def test_gpu_quick_run_writes_a_readable_document(tmp_path):  # pragma: no cover - GPU only
    path = tmp_path / "run.json"
    code = bench.main(["--quick", "--no-progress", "--json", str(path)])
    doc = json.loads(path.read_text())
    assert code == 0, [r for r in doc["records"] if not r.get("us")]
    loaded = measurements.load_kernels(doc)
    assert all(m.us is None or m.us > 0 for m in loaded)
    assert all(r["rel_err"] <= 1e-2 for r in doc["records"] if "rel_err" in r)
    assert doc["provenance"]["device"]


def test_the_instructor_guides_record_of_what_ran_matches_the_packaged_run():
    """Issue 34 item 4: the guide said every lab runs "on a T4"; no T4 run is recorded. What it
    says ran on a GPU must be the run the package ships (device, date, versions)."""
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "labs" / "instructor_guide.md").read_text()
    text = " ".join(guide.split())
    assert "and* on a T4" not in text and "runs on a T4" not in text
    prov = _packaged_run()["provenance"]
    assert f"on {prov['date']} the course ran on one {prov['device']}" in text
    assert f"driver {prov['driver']}, CUDA {prov['cuda']}" in text
    torch_version = ".".join(prov["torch"].split("+")[0].split(".")[:2])
    triton_version = ".".join(prov["triton"].split(".")[:2])
    assert f"torch {torch_version}, Triton {triton_version}" in text
    assert "no lab or chapter has been run on a T4" in text


def test_report_names_the_roof_never_borrows_one_and_keeps_a_lower_bound_without_a_vector_rate():
    """A "measure it" line: this GPU's own floor, no floor at all on a GPU the table lacks, and
    the memory time alone (said in words) where non-matmul work has no sourced non-tensor
    rate — never another chip's roof, never the tensor-core peak for a ReLU."""
    op = cost.elementwise(2**26, "fp16")
    h100 = bench.resolve_gpu("NVIDIA H100 80GB HBM3", (9, 0))
    line = h100.report("relu fp16", op, "fp16", 1e-3, tensor_cores=False)
    assert "H100-SXM datasheet, non-tensor fp16 peak" in line
    unknown = bench.resolve_gpu("NVIDIA Imaginary X1", (9, 0))
    line = unknown.report("relu fp16", op, "fp16", 1e-3)
    assert "no datasheet roof" in line and "floor" not in line
    t4 = bench.resolve_gpu("Tesla T4", (7, 5))
    line = t4.report("relu fp16", op, "fp16", 1e-3, tensor_cores=False)
    assert "HBM bandwidth only" in line and "math is left out" in line
    expected = op.bytes / chip("T4").hbm_bandwidth
    assert f"floor {format_seconds(expected)}" in line
    with pytest.raises(ValueError, match="bf16"):
        t4.report("relu bf16", op, "bf16", 1e-3, tensor_cores=False)  # the T4 has no bf16
