"""The chip table: lookups, errors, sources, and every peak against an independent derivation."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import gpuperf
from gpuperf import hardware
from gpuperf.hardware import chip, chip_from_device_name, chips, pcie_bandwidth

ROOT = Path(__file__).resolve().parents[1]
EXPECTED_CHIPS = {
    "T4", "V100", "A10G", "L4", "A100-40GB", "A100-80GB", "H100-SXM", "H100-PCIe", "H200",
    "B200", "RTX-4090", "TPU-v5e", "TPU-v5p", "TPU-v6e",
}  # fmt: skip


def test_table_has_every_chip_the_course_uses():
    assert {c.name for c in chips()} == EXPECTED_CHIPS
    assert gpuperf.chips() is chips()


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("h100", "H100-SXM"),
        ("H100", "H100-SXM"),
        ("h100 sxm", "H100-SXM"),
        ("H100_PCIe", "H100-PCIe"),
        ("a100", "A100-80GB"),
        ("A100-40gb", "A100-40GB"),
        ("tpu v5e", "TPU-v5e"),
        ("v6e", "TPU-v6e"),
        ("trillium", "TPU-v6e"),
        ("4090", "RTX-4090"),
        ("t4", "T4"),
    ],
)
def test_aliases_are_case_insensitive(alias, name):
    assert chip(alias).name == name


def test_chip_passes_a_chip_through():
    h100 = chip("h100")
    assert chip(h100) is h100


@pytest.mark.parametrize("bad", ["h1000", "", "gtx 1080", "TPU v4"])
def test_unknown_chip_lists_known_names(bad):
    with pytest.raises(KeyError, match="known chips: T4, V100") as info:
        chip(bad)
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("bad", [None, 3, 1.5])
def test_non_string_chip_name_is_a_key_error(bad):
    with pytest.raises(KeyError, match="must be a string"):
        chip(bad)


@pytest.mark.parametrize(
    ("name", "precision"),
    [("a100", "fp8"), ("t4", "bf16"), ("t4", "tf32"), ("v100", "int8"), ("h100", "fp4"),
     ("v5e", "fp32"), ("v5e", "fp16")],
)  # fmt: skip
def test_missing_precision_says_so(name, precision):
    the_chip = chip(name)
    with pytest.raises(ValueError, match=f"{the_chip.name} has no {precision} support") as info:
        the_chip.peak_flops(precision)
    assert "it lists:" in str(info.value)


def test_unknown_precision_lists_valid_ones():
    with pytest.raises(ValueError, match="valid: fp64, fp32, tf32, fp16, bf16, fp8, int8, fp4"):
        chip("h100").peak_flops("fp12")


# Ridge points worked out by hand in the reference notes (§1E), from dense 16-bit peaks / DRAM BW.
RIDGE_POINTS = {
    "T4": ("fp16", 203), "V100": ("fp16", 139), "A10G": ("fp16", 117), "L4": ("bf16", 403),
    "A100-40GB": ("bf16", 201), "A100-80GB": ("bf16", 153), "H100-SXM": ("bf16", 295),
    "H100-PCIe": ("bf16", 378), "H200": ("bf16", 206), "B200": ("bf16", 281),
    "RTX-4090": ("bf16", 164), "TPU-v5e": ("bf16", 240), "TPU-v5p": ("bf16", 166),
    "TPU-v6e": ("bf16", 560),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(RIDGE_POINTS))
def test_ridge_points_match_hand_derivation(name):
    precision, expected = RIDGE_POINTS[name]
    assert chip(name).ridge_point(precision) == pytest.approx(expected, abs=1.0)


def test_h100_ridge_point_is_about_295_and_uses_dense_peak():
    h100 = chip("h100")
    assert h100.peak_flops("bf16") == pytest.approx(989.4e12)
    assert h100.ridge_point("bf16") == pytest.approx(295.3, abs=0.1)
    # The sparse headline (1979 TFLOP/s) must not have leaked in.
    assert all(c.peak_flops_per_s.get("bf16", 0) < 2.3e15 for c in chips())


@pytest.mark.parametrize(
    ("name", "precision", "units", "flop_per_unit_per_clock", "clock_hz"),
    [
        # tensor cores × dense FLOP per TC per clock × clock (reference §1A notes 2 and 4)
        ("A100-80GB", "bf16", 432, 512, 1.41e9),
        ("H100-SXM", "bf16", 528, 1024, 1.83e9),
        ("V100", "fp16", 640, 128, 1.53e9),
        ("T4", "fp16", 320, 128, 1.59e9),
        # CUDA cores × 2 (FMA) × clock
        ("H100-SXM", "fp32", 132 * 128, 2, 1.98e9),
        ("A10G", "fp32", 80 * 128, 2, 1.71e9),
        ("A100-80GB", "fp32", 108 * 64, 2, 1.41e9),
        # FP64 units: 2 per SM on Turing/GA10x/Ada, × 2 (FMA) × clock
        ("T4", "fp64", 40 * 2, 2, 1.59e9),
        ("L4", "fp64", 58 * 2, 2, 2.04e9),
        ("A10G", "fp64", 80 * 2, 2, 1.71e9),
        ("RTX-4090", "fp64", 128 * 2, 2, 2.52e9),
    ],
)
def test_peaks_agree_with_units_times_rate_times_clock(
    name, precision, units, flop_per_unit_per_clock, clock_hz
):
    derived = units * flop_per_unit_per_clock * clock_hz
    assert chip(name).peak_flops(precision) == pytest.approx(derived, rel=0.01)


@pytest.mark.parametrize("the_chip", chips(), ids=lambda c: c.name)
def test_every_row_is_plausible(the_chip):
    peaks = the_chip.peak_flops_per_s
    assert the_chip.sources, "every row needs a source"
    assert 1e9 < the_chip.hbm_bytes < 1e12
    assert 1e11 < the_chip.hbm_bandwidth < 1e13
    if "fp32" in peaks and "fp16" in peaks:
        assert peaks["fp16"] > peaks["fp32"]
    if "fp8" in peaks:
        assert peaks["fp8"] >= peaks["bf16"]
    if "int8" in peaks:
        assert peaks["int8"] >= peaks.get("bf16", peaks.get("fp16"))
    if the_chip.is_gpu:
        assert the_chip.shared_memory_per_block_bytes <= the_chip.shared_memory_per_sm_bytes
        assert the_chip.registers_per_sm == 65536
        assert the_chip.sm_arch.startswith("sm_")
    else:
        assert the_chip.sm_arch is None


def test_every_source_key_is_in_the_bibliography():
    bib = (ROOT / "references.bib").read_text()
    keys = set(re.findall(r"@\w+\{([^,\s]+),", bib))
    used = {key for c in chips() for key in c.sources}
    used |= {m.source for m in gpuperf.measurements.MEASUREMENTS}
    used.add(gpuperf.measurements.H100_GEMM_SOURCE)
    assert used - keys == set()


def test_per_sm_limits_follow_compute_capability():
    assert chip("t4").shared_memory_per_block_bytes == 64 * 1024
    assert chip("a100").shared_memory_per_sm_bytes == 164 * 1024
    assert chip("h100").shared_memory_per_block_bytes == 227 * 1024
    assert chip("l4").max_threads_per_sm == 1536
    assert chip("b200").compute_capability == (10, 0)
    assert chip("b200").sm_arch == "sm_100"


def test_shared_memory_bandwidth_matches_flashattention_papers_19_tb_s():
    # FA1: "192KB ... per each of 108 SMs with bandwidth estimated around 19TB/s" on A100.
    assert chip("a100").shared_memory_bandwidth() == pytest.approx(19.5e12, rel=0.01)
    with pytest.raises(ValueError, match="TPU-v5e has no SMs"):
        chip("v5e").shared_memory_bandwidth()


def test_chips_are_immutable():
    h100 = chip("h100")
    with pytest.raises(dataclasses.FrozenInstanceError):
        h100.hbm_bandwidth = 1.0
    with pytest.raises(TypeError):
        h100.peak_flops_per_s["bf16"] = 1.0
    assert hash(h100) == hash(chip("H100-SXM"))


def test_replace_makes_a_modified_copy_for_what_if_questions():
    slower = chip("v5e").replace(hbm_bandwidth=8.1e11)
    assert slower.hbm_bandwidth == 8.1e11
    assert chip("v5e").hbm_bandwidth == 819e9


def test_pcie_bandwidths_match_the_generation_table():
    assert pcie_bandwidth(4, 8) == pytest.approx(15.75e9, rel=1e-3)  # the p5 switch uplink
    assert pcie_bandwidth(5, 16) == pytest.approx(63.0e9, rel=1e-3)
    assert pcie_bandwidth(3) == pytest.approx(15.76e9, rel=1e-3)
    with pytest.raises(ValueError, match="generation=8"):
        pcie_bandwidth(8)
    with pytest.raises(ValueError, match="lanes=3"):
        pcie_bandwidth(4, 3)


def test_unified_l1_shared_memory_per_sm_follows_the_programming_guide():
    kib = {c.name: c.l1_shared_memory_per_sm_bytes // 1024 for c in chips() if c.is_gpu}
    expected = {"T4": 96, "V100": 128, "A10G": 128, "L4": 128, "RTX-4090": 128}
    expected |= {"A100-40GB": 192, "A100-80GB": 192, "B200": 256}
    expected |= {"H100-SXM": 256, "H100-PCIe": 256, "H200": 256}
    assert {name: kib[name] for name in expected} == expected
    for the_chip in chips():
        if the_chip.is_gpu:
            assert the_chip.shared_memory_per_sm_bytes < the_chip.l1_shared_memory_per_sm_bytes
            assert "CUDAPG" in the_chip.sources
        else:
            assert the_chip.l1_shared_memory_per_sm_bytes is None
    with pytest.raises(ValueError, match="must be ≤ l1_shared_memory_per_sm_bytes=131072"):
        chip("a100").replace(l1_shared_memory_per_sm_bytes=128 * 1024)
    with pytest.raises(ValueError, match="missing: l1_shared_memory_per_sm_bytes"):
        chip("h100").replace(l1_shared_memory_per_sm_bytes=None)


def test_tpu_ici_links_are_numbers_consistent_with_the_text():
    for the_chip in chips():
        links, per_link = the_chip.interconnect_links, the_chip.interconnect_link_bandwidth
        if the_chip.is_gpu:
            assert links is None and per_link is None
            assert the_chip.pairwise_link_bandwidth() == the_chip.interconnect_bandwidth
            continue
        assert links * per_link == pytest.approx(the_chip.interconnect_bandwidth)
        assert f"{links} links × {per_link / 1e9:g} GB/s per direction" in the_chip.interconnect
        assert the_chip.pairwise_link_bandwidth() == per_link
    assert chip("v5e").interconnect_link_bandwidth == 50e9
    assert chip("v5p").interconnect_links == 6


def test_ici_link_fields_are_validated():
    v5e = chip("v5e")
    with pytest.raises(ValueError, match="must equal interconnect_bandwidth=2e\\+11"):
        v5e.replace(interconnect_link_bandwidth=45e9)
    with pytest.raises(ValueError, match="both be given or both be None"):
        v5e.replace(interconnect_links=None)
    with pytest.raises(ValueError, match="interconnect_links=0 must be an integer ≥ 1"):
        v5e.replace(interconnect_links=0)
    with pytest.raises(ValueError, match="needs an interconnect"):
        chip("t4").replace(interconnect_links=1, interconnect_link_bandwidth=1e9)


def test_link_bandwidths_are_per_direction():
    assert chip("h100").interconnect_bandwidth == pytest.approx(450e9)
    assert chip("a100").interconnect_bandwidth == pytest.approx(300e9)
    assert chip("t4").interconnect_bandwidth is None


@pytest.mark.parametrize(
    ("device_name", "expected"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-SXM"),
        ("NVIDIA H100 PCIe", "H100-PCIe"),
        ("Tesla T4", "T4"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA A10G", "A10G"),
        ("NVIDIA GeForce RTX 4090", "RTX-4090"),
        ("NVIDIA L40S", None),
        ("AMD Instinct MI300X", None),
    ],
)
def test_device_names_map_to_rows_or_to_none(device_name, expected):
    found = chip_from_device_name(device_name)
    assert (found.name if found else None) == expected


def test_hopper_tensor_peaks_are_the_unrounded_figures_at_1_83_ghz():
    # GLENN-H100: 528 tensor cores × 1024 FLOP/clk × 1.83 GHz = 989.4 TFLOP/s (the datasheet
    # rounds to 989); TF32 is half of it, FP8 and INT8 twice, all at the same clock.
    for name in ("H100-SXM", "H200"):
        c = chip(name)
        assert c.peak_flops("bf16") == c.peak_flops("fp16") == 989.4e12
        assert c.peak_flops("bf16") == pytest.approx(528 * 1024 * 1.83e9, rel=1e-4)
        assert c.peak_flops("tf32") == pytest.approx(c.peak_flops("bf16") / 2, rel=1e-4)
        assert c.peak_flops("fp8") == c.peak_flops("int8") == 1978.9e12
        assert c.peak_flops("fp8") == pytest.approx(2 * c.peak_flops("bf16"), rel=1e-4)


def test_no_peak_number_outside_hardware_py():
    pattern = re.compile(r"\b(989e12|9\.89e14|3\.35e12|312e12|1\.97e14|197e12)\b")
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "src" / "gpuperf").rglob("*.py")
        if path.name != "hardware.py" and pattern.search(path.read_text())
    ]
    assert offenders == []
    assert hardware.WARP_SIZE == 32


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("hbm_bandwidth", -1),
        ("hbm_bandwidth", "3e12"),
        ("hbm_bandwidth", 0),
        ("hbm_bandwidth", float("nan")),
        ("sm_count", 0),
        ("sm_count", 2.5),
        ("peak_flops_per_s", {"fp16": -1.0}),
        ("peak_flops_per_s", {"fp12": 1e12}),
        ("shared_memory_per_block_bytes", 10**9),
        ("name", ""),
    ],
)
def test_chip_replace_validates_every_field(field, value):
    with pytest.raises(ValueError, match=field.split("_per_s")[0] if field != "name" else "name"):
        chip("H100").replace(**{field: value})


def test_gpu_fields_come_together():
    with pytest.raises(ValueError, match="missing: sm_count"):
        chip("H100").replace(sm_count=None)
    assert chip("v5e").replace(hbm_bandwidth=8.1e11).hbm_bandwidth == 8.1e11


def test_ridge_point_bandwidth_is_explicit():
    h100 = chip("H100")
    assert h100.ridge_point("bf16") == h100.peak_flops("bf16") / h100.hbm_bandwidth
    assert h100.ridge_point("bf16", 1e12) == h100.peak_flops("bf16") / 1e12
    for bad in (0, -1, float("nan"), True, "1e12"):
        with pytest.raises(ValueError, match=r"bandwidth=.* must be a finite number > 0"):
            h100.ridge_point("bf16", bad)


def test_pcie_and_device_name_reject_nonsense():
    for bad in (True, 0, 8, "4", 4.5):
        with pytest.raises(ValueError, match=r"generation=.* is not one of: 1, 2, 3, 4, 5, 6, 7"):
            pcie_bandwidth(bad)
    with pytest.raises(ValueError, match=r"lanes=True is not one of"):
        pcie_bandwidth(4, True)
    with pytest.raises(TypeError, match="device_name=None must be a string"):
        chip_from_device_name(None)
