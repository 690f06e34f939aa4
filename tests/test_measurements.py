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


#: Published measurements above their card's datasheet, kept as published and never read as a
#: fraction of that peak: FastIceFlo's A = B + C kernel, 1536 GiB/s on an "A100 SXM4 40GB".
KNOWN_ABOVE_DATASHEET = {("FASTICE", "A100-40GB")}


def test_bandwidth_measurements_stay_below_the_datasheet():
    above = set()
    for m in measurements.measurements(unit="B/s"):
        if m.chip is not None and ("copy" in m.quantity or "memcopy" in m.quantity):
            limit = 2 * chip(m.chip).hbm_bandwidth if "read + write" in m.quantity else None
            per_direction = chip(m.chip).hbm_bandwidth
            kind = "HBM" in m.quantity or "device" in m.quantity or "memcopy" in m.quantity
            if kind and m.value > (limit or per_direction):
                above.add((m.source, m.chip))
    assert above == KNOWN_ABOVE_DATASHEET


def test_fastice_records_match_the_source():
    # scripts/memcopy.cu: A = B + C, 3 × 8 B per element, divided by 1024³ (GiB/s); the cards
    # are a Tesla A100 SXM4 40GB and a V100 SXM2 16GB (output/EffectiveMemoryThroughput.md).
    a100 = measurements.find("memcopy kernel (effective", "A100-40GB")
    v100 = measurements.find("memcopy kernel (effective", "V100")
    assert a100.value == 1536 * 1024**3 and v100.value == 785 * 1024**3
    for m in (a100, v100):
        assert m.source == "FASTICE"
        assert m.method == "A = B + C kernel (2 reads + 1 write), reported in GiB/s"
    assert all(m.chip != "A100-80GB" for m in measurements.MEASUREMENTS if m.source == "FASTICE")


def test_measured_matmuls_stay_below_the_dense_peak():
    for m in measurements.measurements(unit="FLOP/s"):
        precision = "bf16" if "bf16" in m.quantity else "fp16"
        # A row whose source names no GPU (tritonbench's FA3 runs: only Hopper runs FA3) is
        # held to the H100 SXM's dense peak, the highest 16-bit peak of a Hopper part.
        assert m.value < chip(m.chip or "H100-SXM").peak_flops(precision)
    for g in measurements.H100_GEMM:
        for dtype in ("fp16", "bf16", "tf32"):
            assert g.flops_per_s[dtype] < chip("h100").peak_flops(dtype)


def test_flashattention_4_is_the_papers_b200_figure_at_71_percent_of_the_bf16_peak():
    # FA4 paper abstract: "up to 1613 TFLOPs/s (71% utilization)" on B200, BF16; the datasheet's
    # dense BF16 peak is 2.25 PFLOP/s (4.5 sparse), so 1613 / 2250 = 0.717, which the authors
    # print as 71 %. Blog post: 1605, also "71 %".
    fa4 = measurements.find("FlashAttention-4")
    assert (fa4.value, fa4.chip, fa4.source) == (1613e12, "B200", "FA4")
    assert chip("B200").peak_flops("bf16") == 2.25e15
    assert fa4.fraction_of(chip("B200").peak_flops("bf16")) == pytest.approx(0.717, abs=0.001)
    assert 0.71 <= fa4.fraction_of(2.25e15) < 0.72 and 0.71 <= 1605 / 2250 < 0.72
    assert "1.3× cuDNN 9.13 and 2.7× Triton" in fa4.method
    # the abstract's comparisons and the blog's figure, as their own rows for the page's glue
    assert measurements.find("FA4 bf16 forward speed over cuDNN").value == 1.3
    assert measurements.find("FA4 bf16 forward speed over Triton").value == 2.7
    blog = measurements.find("as the authors' blog post gives it")
    assert (blog.value, blog.chip, blog.source) == (1605e12, "B200", "FA4-BLOG")
    # FA3's best case on an H100 and FA4's on a B200: each about three quarters of its own peak.
    fa3 = measurements.find("FlashAttention-3")
    assert fa3.fraction_of(chip("H100-SXM").peak_flops("fp16")) == pytest.approx(0.748, abs=0.001)


def test_tritonbench_fa3_rows_are_the_commit_test_plan():
    # pytorch/benchmark ff65cb6, test plan, row (4, 16, 4096, 128): triton_tutorial_flash_v2
    # 458.359, flash_v3 590.233 TFLOP/s. No GPU named, so no chip; FA3 is 1.29x the Triton loop.
    fa2 = measurements.find("Triton tutorial FA-2 forward, tritonbench")
    fa3 = measurements.find("FA3 forward, tritonbench, B4 H16 N4096 d128")
    assert (fa2.value, fa3.value) == (458.359e12, 590.233e12)
    assert fa2.chip is None and fa3.chip is None
    assert {fa2.source, fa3.source} == {"PTBENCH-FA3"}
    assert fa3.value / fa2.value == pytest.approx(1.288, abs=0.001)
    # The older finds the chapters use still match one row each.
    assert measurements.find("FlashAttention-3").source == "FA3"
    assert measurements.find("FlashAttention-2").source == "FA2"


def test_sdpa_backends_on_an_h100_are_issue_142132s_table():
    # pytorch issue 142132: (1, 24, 4608, 128), sdpa 329.483, cudnn_90100 631.338, flash_v3
    # 631.827 TFLOP/s: cuDNN's kernel is 1.92x SDPA's FlashAttention-2 default of the time.
    shape = "tritonbench, B1 H24 N4608 d128"
    sdpa = measurements.find(f"SDPA default (FA-2) forward, {shape}")
    cudnn = measurements.find(f"cuDNN 9.1 attention forward, {shape}")
    fa3 = measurements.find(f"FA3 forward, {shape}")
    assert (sdpa.value, cudnn.value, fa3.value) == (329.483e12, 631.338e12, 631.827e12)
    assert {sdpa.source, cudnn.source, fa3.source} == {"PT-142132"}
    assert cudnn.value / sdpa.value == pytest.approx(1.916, abs=0.001)
    assert all(m.chip is None and "H100 (variant not named)" in m.method for m in (sdpa, cudnn))


def test_p5_pcie_hop_reaches_90_percent_of_gen4_x8():
    measured = measurements.find("CPU → GPU copy", "h100").value
    from gpuperf.hardware import pcie_bandwidth

    assert measured / pcie_bandwidth(4, 8) == pytest.approx(0.90, abs=0.01)


def test_nvlink_measured_is_87_percent_of_spec():
    both = measurements.find("both directions", "h100")
    assert both.value / (2 * chip("h100").interconnect_bandwidth) == pytest.approx(0.873, abs=0.01)
    assert both.method.startswith("nvbandwidth memcpy CE, 87 % of 900 GB/s")


def test_every_percentage_a_method_quotes_is_its_value_over_the_reference():
    # Issue 34 (R4): the NVLink record copied the playbook's "85 % of 900 GB/s" while its value,
    # 786 GB/s, is 87 % of it (the page printed 87 %). A method that says "N % of X GB/s" must
    # agree with value / X to the percent; "(... says 85 %, a slip)" quotes no reference.
    import re

    quoted = 0
    for m in measurements.MEASUREMENTS:
        for percent, reference in re.findall(
            r"(\d+(?:\.\d+)?) % of (\d+(?:\.\d+)?) GB/s", m.method
        ):
            quoted += 1
            assert round(100 * m.value / (float(reference) * 1e9)) == round(float(percent)), m
    assert quoted >= 1


def test_filters_and_errors():
    assert all(m.chip == "T4" for m in measurements.measurements("t4"))
    with pytest.raises(ValueError, match="unit='parsecs'"):
        measurements.measurements(unit="parsecs")
    with pytest.raises(KeyError, match="measurements match 'zzz'"):
        measurements.find("zzz")
    with pytest.raises(ValueError, match="dtype='fp4' is not a column"):
        measurements.gemm_range("fp4")
    assert measurements.find("Llama 3").fraction_of(1.0) == pytest.approx(0.41)


# ---------------------------------------------------------------- first-party measurements


def test_find_rejects_none_naming_the_argument():
    with pytest.raises(TypeError, match="quantity=None"):
        measurements.find(None)
    with pytest.raises(TypeError, match="quantity=3"):
        measurements.find(3)


def test_course_kernels_are_the_shipped_h100_run_with_provenance():
    records = measurements.course_kernels()
    assert len(records) == 47
    for r in records:
        p = r.provenance
        assert (p.chip, p.device, p.driver, p.cuda) == (
            "H100-SXM", "NVIDIA H100 80GB HBM3", "580.159.04", "13.0"
        )  # fmt: skip
        assert (p.torch, p.triton, p.numpy, p.date, p.commit) == (
            "2.11.0+cu130", "3.6.0", "2.5.2", "2026-11-22", "2bfc2e4"
        )  # fmt: skip
        assert r.case and (r.us is None or r.us > 0)
    with pytest.raises(AttributeError):
        records[0].us = 1.0  # frozen


def test_course_kernel_values_are_the_file_values():
    vector_add = measurements.course_kernel("vector_add")
    assert vector_add.us == pytest.approx(269.4079875946045)
    assert vector_add.gbps == pytest.approx(2989.170347880688)
    assert vector_add.bytes_per_s == pytest.approx(2.989170347880688e12)
    assert vector_add.frac_copy_bw == pytest.approx(0.9957833840274908)
    assert vector_add.speed_vs_torch == pytest.approx(vector_add.torch_us / vector_add.us)
    assert vector_add.seconds == pytest.approx(269.4079875946045e-6)
    matmul = measurements.course_kernel("matmul torch.float16 4096³ autotune")
    assert matmul.tflops == pytest.approx(610.384, rel=1e-5)
    assert matmul.gbps is None and matmul.flops_per_s == pytest.approx(610.384e12, rel=1e-5)
    # the accuracy-only row has no time (the bench stores 0), never a made-up one
    accuracy = measurements.course_kernel("rel err vs fp32 ref")
    assert accuracy.us is None and accuracy.seconds is None and accuracy.rel_err > 0


def test_first_party_numbers_stay_below_the_datasheet_and_the_copy():
    h100 = chip("h100")
    copy = measurements.course_kernel("copy 1GiB").bytes_per_s
    assert copy <= 2 * h100.hbm_bandwidth  # read + write counted
    for r in measurements.course_kernels():
        if r.bytes_per_s is not None:
            assert r.bytes_per_s <= copy * 1.01, r.case
        if r.frac_copy_bw is not None:
            assert r.frac_copy_bw == pytest.approx(r.bytes_per_s / copy, rel=1e-6), r.case
        if r.flops_per_s is not None:
            precision = "fp16" if ("fp16" in r.case or "float16" in r.case) else "bf16"
            if "fp32" in r.case:
                precision = "tf32"
            assert r.flops_per_s < h100.peak_flops(precision), r.case


def test_in_words_says_rate_fraction_and_device():
    words = measurements.course_kernel("vector_add").in_words("vector add")
    assert words.startswith("the course's vector add on an H100-SXM: 2.99 TB/s, 99 % of a")
    assert "measured copy" in words and "1.00× torch" in words
    prov = measurements.course_kernels()[0].provenance.in_words()
    assert "NVIDIA H100 80GB HBM3" in prov and "2026-11-22" in prov and "2bfc2e4" in prov


def test_course_kernel_errors():
    with pytest.raises(KeyError, match="first-party records match 'softmax'"):
        measurements.course_kernel("softmax")  # several match
    with pytest.raises(KeyError, match="0 first-party records match 'zzz'"):
        measurements.course_kernel("zzz")
    with pytest.raises(TypeError, match="case=None"):
        measurements.course_kernel(None)


def _document(**overrides):
    import json
    from importlib import resources

    text = (
        resources.files("gpuperf")
        .joinpath(measurements.COURSE_KERNELS_FILE)
        .read_text(encoding="utf-8")
    )
    doc = json.loads(text)
    doc.update(overrides)
    return doc


def test_load_kernels_reads_a_path_and_rejects_incomplete_documents(tmp_path):
    import json

    path = tmp_path / "run.json"
    path.write_text(json.dumps(_document()), encoding="utf-8")
    assert measurements.load_kernels(path) == measurements.course_kernels()
    doc = _document()
    with pytest.raises(ValueError, match="bare list"):
        measurements.load_kernels(doc["records"])
    with pytest.raises(ValueError, match="schema='v0'"):
        measurements.load_kernels(_document(schema="v0"))
    no_driver = _document()
    del no_driver["provenance"]["driver"]
    with pytest.raises(ValueError, match="provenance lacks \\['driver'\\]"):
        measurements.load_kernels(no_driver)
    blank = _document()
    blank["provenance"]["commit"] = " "
    with pytest.raises(ValueError, match="provenance commit=' '"):
        measurements.load_kernels(blank)
    bad = _document(records=[{"case": "x", "us": -1.0}])
    with pytest.raises(ValueError, match=r"'x': us=-1\.0 must be finite and ≥ 0"):
        measurements.load_kernels(bad)
    typo = _document(records=[{"case": "x", "us": 1.0, "GBPS": 3.0}])
    with pytest.raises(ValueError, match="unknown keys \\['GBPS'\\]"):
        measurements.load_kernels(typo)
    with pytest.raises(TypeError, match="source=3"):
        measurements.load_kernels(3)


def test_a_bench_json_document_loads_with_its_provenance():
    """`python -m gpuperf.bench --json` writes what course_kernels reads (the same schema)."""
    bench = pytest.importorskip("gpuperf.bench")
    records = [
        {"case": "vector_add fp32 2^26", "us": 270.0, "torch_us": 271.0,
         "speed_vs_torch": 271.0 / 270.0, "GBps": 2980.0, "frac_copy_bw": 0.99, "rel_err": 0.0},
        {"case": "wrong kernel", "us": 0.0, "rel_err": 0.5},
    ]  # fmt: skip
    provenance = {
        "chip": "NVIDIA H100 80GB HBM3", "device": "NVIDIA H100 80GB HBM3",
        "driver": "580.159.04", "cuda": "13.0", "torch": "2.11.0+cu130", "triton": "3.6.0",
        "numpy": "2.5.2", "date": "2026-11-22", "commit": "abc1234", "method": "do_bench",
    }  # fmt: skip
    doc = bench.document(records, provenance)
    assert doc["schema"] == measurements.KERNELS_SCHEMA
    loaded = measurements.load_kernels(doc)
    assert [r.case for r in loaded] == ["vector_add fp32 2^26", "wrong kernel"]
    assert loaded[0].gbps == 2980.0 and loaded[1].us is None
    assert loaded[0].provenance.chip_name == "H100-SXM"  # the driver's name is mapped
    assert loaded[0].in_words("vector add").startswith("the course's vector add on an H100-SXM")


def test_training_mfus_are_the_published_runs_and_nothing_else():
    """Chapter 1's MFU table and its problem 2 read these rows: a fraction that is not a training
    MFU (an acceptance rate, a share of bandwidth) must not join them."""
    rows = measurements.training_mfus()
    assert {m.quantity for m in rows} == {
        m.quantity for m in measurements.MEASUREMENTS if m.quantity.endswith("training MFU")
    } | {"GPT training MFU with FlashAttention-2"}
    assert all(m.unit == "fraction" and 0 < m.value < 1 for m in rows)
    others = set(measurements.measurements(unit="fraction")) - set(rows)
    assert others and not any("MFU" in m.quantity for m in others)
