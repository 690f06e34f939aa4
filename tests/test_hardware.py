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
    "T4", "V100", "A10G", "L4", "L40S", "A100-40GB", "A100-80GB", "A100-80GB-PCIe", "H100-SXM",
    "H100-PCIe", "H100-NVL", "GH200", "H200", "H200-NVL", "B200", "GB200", "B300", "GB300",
    "RTX-4090", "RTX-5090", "MI300X", "MI325X", "MI355X", "TPU-v5e", "TPU-v5p", "TPU-v6e",
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
        ("h100 nvl", "H100-NVL"),
        ("H200_NVL", "H200-NVL"),
        ("a100 pcie", "A100-80GB-PCIe"),
        ("gb200 nvl72", "GB200"),
        ("B300", "B300"),
        ("gb300", "GB300"),
        ("rtx 5090", "RTX-5090"),
        ("mi300x", "MI300X"),
        ("Instinct MI355X", "MI355X"),
        ("gh200", "GH200"),
        ("l40s", "L40S"),
        # a driver's device name is a name too
        ("NVIDIA H100 NVL", "H100-NVL"),
        ("NVIDIA B300 SXM6 AC", "B300"),
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
    with pytest.raises(
        ValueError, match="valid: fp64, fp32, tf32, fp16, bf16, fp8, int8, fp6, fp4"
    ):
        chip("h100").peak_flops("fp12")


# Ridge points worked out by hand in the reference notes (§1E), from dense 16-bit peaks / DRAM BW.
RIDGE_POINTS = {
    "T4": ("fp16", 203), "V100": ("fp16", 139), "A10G": ("fp16", 117), "L4": ("bf16", 403),
    "A100-40GB": ("bf16", 201), "A100-80GB": ("bf16", 153), "H100-SXM": ("bf16", 295),
    "H100-PCIe": ("bf16", 378), "H200": ("bf16", 206), "B200": ("bf16", 281),
    "RTX-4090": ("bf16", 164), "TPU-v5e": ("bf16", 240), "TPU-v5p": ("bf16", 166),
    "TPU-v6e": ("bf16", 560),
    # R3 finding 17's own arithmetic: GB200 2.5 PF / 8 TB/s ≈ 312, MI300X 1307 / 5.3 ≈ 247
    "GB200": ("bf16", 312), "MI300X": ("bf16", 247),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(RIDGE_POINTS))
def test_ridge_points_match_hand_derivation(name):
    precision, expected = RIDGE_POINTS[name]
    assert chip(name).ridge_point(precision) == pytest.approx(expected, abs=1.0)


def test_h100_ridge_point_is_about_295_and_uses_dense_peak():
    h100 = chip("h100")
    assert h100.peak_flops("bf16") == pytest.approx(989.4e12)
    assert h100.ridge_point("bf16") == pytest.approx(295.3, abs=0.1)
    # The sparse headline (1979 TFLOP/s) must not have leaked in: no 16-bit rate in the table
    # exceeds the largest dense one any source gives (2.5 PF: GB200, GB300, MI355X).
    assert all(c.peak_flops_per_s.get("bf16", 0) <= 2.5e15 for c in chips())


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
        # the new rows' CUDA-core fp32 against their SM counts and clocks
        ("GB200", "fp32", 152 * 128, 2, 2.062e9),
        ("L40S", "fp32", 142 * 128, 2, 2.52e9),
        ("RTX-5090", "fp32", 170 * 128, 2, 2.407e9),
        ("H100-NVL", "fp32", 132 * 128, 2, 1.785e9),
        ("GH200", "fp32", 132 * 128, 2, 1.98e9),
        # AMD: FLOP per clock per CU × CUs × peak engine clock (ROCm's MI300 page)
        ("MI300X", "bf16", 304, 2048, 2.1e9),
        ("MI300X", "fp32", 304, 256, 2.1e9),
        ("MI355X", "bf16", 1024, 512 * 2, 2.4e9),
        ("MI355X", "fp8", 256, 8192, 2.4e9),
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
    if "int8" in peaks and the_chip.architecture != "Blackwell Ultra":
        assert peaks["int8"] >= peaks.get("bf16", peaks.get("fp16"))
    if "fp4" in peaks:
        assert peaks["fp4"] >= peaks["fp8"]
    if "fp6" in peaks:
        assert peaks["fp8"] <= peaks["fp6"] <= peaks["fp4"]
    if the_chip.is_gpu:
        assert the_chip.shared_memory_per_block_bytes <= the_chip.shared_memory_per_sm_bytes
        assert the_chip.registers_per_sm == 65536
        assert the_chip.sm_arch.startswith("sm_")
        assert the_chip.no_sm_model == ""
    else:
        # a row without SMs says why, in words a calculator's error can repeat
        assert len(the_chip.no_sm_model) > 20
        assert (the_chip.sm_arch is None) == (the_chip.vendor != "NVIDIA")


def test_blackwell_ultra_cut_int8_and_fp64():
    # NVIDIA's b300_sxm.yaml (AIC-B300): int8 153.5 TOPS, ~30x below B200's 4.5 POPS; the row
    # must not "fix" it to look like its neighbours.
    b200, b300 = chip("B200"), chip("B300")
    assert b300.peak_flops("int8") == pytest.approx(153.5e12)
    assert b200.peak_flops("int8") / b300.peak_flops("int8") == pytest.approx(29.3, abs=0.1)
    assert b300.peak_flops("fp64") < b200.peak_flops("fp64") / 20
    assert b300.peak_flops("bf16") == b200.peak_flops("bf16") == 2.25e15
    assert "int8 is 153.5 TOPS" in b300.notes


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
        if the_chip.vendor != "Google":
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
        # the variants of issue 34 item 3: each to its own row, never a sibling's
        ("NVIDIA H100 NVL", "H100-NVL"),
        ("NVIDIA H200 NVL", "H200-NVL"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA A100 80GB PCIe", "A100-80GB-PCIe"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA GH200 480GB", "GH200"),
        ("NVIDIA B200", "B200"),
        ("NVIDIA B300 SXM6 AC", "B300"),
        ("NVIDIA GB200", "GB200"),
        ("NVIDIA GB300", "GB300"),
        ("NVIDIA GeForce RTX 5090", "RTX-5090"),
        ("AMD Instinct MI300X", "MI300X"),
        ("AMD Instinct MI325X", "MI325X"),
        ("AMD Instinct MI355X", "MI355X"),
        ("Tesla V100-SXM2-32GB", "V100"),
        # case and repeated spaces do not matter
        ("nvidia  h100 nvl", "H100-NVL"),
        # parts with no row of their own: nothing, not the nearest row
        ("NVIDIA A100-PCIE-40GB", None),
        ("Tesla V100-SXM2-16GB", None),
        ("Tesla V100-PCIE-32GB", None),
        ("NVIDIA A10", None),
        ("NVIDIA L40", None),
        ("NVIDIA H800", None),
        ("NVIDIA H800 PCIe", None),
        ("NVIDIA H20", None),
        ("NVIDIA H100", None),
        ("NVIDIA GH200 144G HBM3e", None),
        ("NVIDIA B200 MIG 1g.23gb", None),
        ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", None),
        ("NVIDIA GeForce RTX 4090 D", None),
        ("NVIDIA GeForce RTX 4090 Laptop GPU", None),
        ("NVIDIA GeForce RTX 5080", None),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", None),
        ("AMD Instinct MI300A", None),
        ("AMD Instinct MI350X", None),
        ("", None),
    ],
)
def test_device_names_map_to_rows_or_to_none(device_name, expected):
    found = chip_from_device_name(device_name)
    assert (found.name if found else None) == expected


def test_every_device_name_is_its_rows_and_chip_accepts_it():
    # R3 finding 5: "NVIDIA H100 NVL" was read as the SXM row (94 GB, 3.9 TB/s, 835 TFLOP/s
    # against 80 GB, 3.35 TB/s, 989). Every listed name now has its own row; chip() agrees.
    for device_name, name in hardware.DEVICE_NAMES.items():
        assert chip_from_device_name(device_name) is chip(name)
        assert chip(device_name) is chip(name)
    nvl, sxm = chip_from_device_name("NVIDIA H100 NVL"), chip("H100-SXM")
    assert nvl is not sxm and nvl.peak_flops("bf16") < sxm.peak_flops("bf16")
    assert nvl.hbm_bandwidth == 3.9e12 and nvl.hbm_marketed_bytes == 94e9
    # no two device names share a row (a sibling never stands in)
    assert len(set(hardware.DEVICE_NAMES.values())) == len(hardware.DEVICE_NAMES)


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
    with pytest.raises(ValueError, match="missing: boost_clock_hz"):
        chip("B300").replace(sm_count=148)  # an SM count alone is not an SM model
    with pytest.raises(ValueError, match="missing: compute_capability"):
        chip("H100").replace(compute_capability=None)
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


# --- memory as the device exposes it (issue 34 item 3; R2's hbm_bytes ERROR) -------------------

#: nvidia-smi's memory.total in MiB, from the sources each row cites (frontier-2026 §2 and the
#: device queries named in the rows): the capacity every calculator reads.
NVIDIA_SMI_MIB = {
    "T4": 15360, "V100": 32768, "A10G": 23028, "L4": 23034, "L40S": 46068, "A100-40GB": 40960,
    "A100-80GB": 81920, "A100-80GB-PCIe": 81920, "H100-SXM": 81559, "H100-PCIe": 81559,
    "H100-NVL": 95830, "GH200": 97871, "H200": 143771, "H200-NVL": 143771, "B200": 183359,
    "GB200": 189471, "B300": 275040, "GB300": 284208, "RTX-4090": 24564, "RTX-5090": 32607,
}  # fmt: skip
#: nvidia-smi minus CUDA's totalGlobalMem (torch's total_memory), MiB: frontier-2026 §2.
CUDA_GAP_MIB = {"H100-SXM": 470, "H200": 615, "B200": 717, "RTX-5090": 490}


@pytest.mark.parametrize("name", sorted(NVIDIA_SMI_MIB))
def test_capacity_is_nvidia_smis_total_in_bytes(name):
    the_chip = chip(name)
    mib = NVIDIA_SMI_MIB[name]
    assert the_chip.hbm_bytes == mib * 2**20
    assert the_chip.hbm_mib == mib
    assert the_chip.hbm_provenance.startswith(f"nvidia-smi memory.total {mib} MiB; ")


def test_h100_capacity_is_what_the_device_exposes_not_80e9():
    # R2: "an H100 exposes 81,559 MiB = 85.5 × 10⁹ B"; the old 80e9 was 6.5 % low.
    h100 = chip("H100-SXM")
    assert h100.hbm_bytes == pytest.approx(85.52e9, rel=1e-3)
    assert h100.hbm_marketed_bytes == 80e9
    assert h100.hbm_bytes / h100.hbm_marketed_bytes == pytest.approx(1.0695, rel=1e-3)


@pytest.mark.parametrize("the_chip", chips(), ids=lambda c: c.name)
def test_every_row_says_which_capacity_it_holds(the_chip):
    assert the_chip.hbm_marketed_bytes is not None
    assert len(the_chip.hbm_provenance) > 30
    # What a device reports is near its marketed size: between the marketed decimal GB and
    # marketed GiB (+ 1 %), never a different part's memory.
    ratio = the_chip.hbm_bytes / the_chip.hbm_marketed_bytes
    assert 0.95 < ratio < 1.08, ratio
    if the_chip.name not in NVIDIA_SMI_MIB:
        # no nvidia-smi total for this row: the row says what it holds instead
        assert "not found" in the_chip.hbm_provenance


def test_cuda_sees_less_than_the_driver_reports():
    gaps = {}
    for the_chip in chips():
        if the_chip.hbm_cuda_bytes is not None:
            gap = (the_chip.hbm_bytes - the_chip.hbm_cuda_bytes) / 2**20
            assert 0 < gap < 1024, (the_chip.name, gap)
            gaps[the_chip.name] = gap
    assert {name: gaps[name] for name in CUDA_GAP_MIB} == pytest.approx(CUDA_GAP_MIB, abs=0.1)
    with pytest.raises(ValueError, match="CUDA never sees more memory"):
        chip("H100").replace(hbm_cuda_bytes=chip("H100").hbm_bytes + 1)


def test_h200_l2_is_what_torch_reports():
    # ACHAT: torch reports L2_cache_size=60MB on an H200 (the row had assumed the H100's 50).
    assert chip("H200").l2_bytes == 60 * 2**20
    assert chip("H100-SXM").l2_bytes == 50 * 2**20


# --- non-tensor (CUDA-core) peaks (issue 34 items 2 and 4; R3 finding 11) ----------------------


@pytest.mark.parametrize(
    ("name", "precision", "expected"),
    [
        ("H100-SXM", "fp16", 133.8e12),  # GLENN-H100's VFMA column (H100 whitepaper table)
        ("H100-SXM", "bf16", 133.8e12),
        ("H100-SXM", "fp32", 67e12),  # the fp32 column is already the CUDA-core rate
        ("H100-SXM", "fp64", 34e12),  # the datasheet's CUDA-core FP64
        ("A100-80GB", "fp16", 78e12),  # A100 whitepaper Table 1
        ("A100-80GB", "bf16", 39e12),
        ("A100-40GB", "fp64", 9.7e12),
        ("V100", "fp16", 31.4e12),
        ("T4", "fp32", 8.1e12),
        ("MI300X", "fp64", 81.7e12),  # ROCm: vector FP64
    ],
)
def test_non_tensor_peaks_are_the_sourced_ones(name, precision, expected):
    the_chip = chip(name)
    assert the_chip.peak_flops(precision, tensor_cores=False) == pytest.approx(expected)
    assert the_chip.ridge_point(precision, tensor_cores=False) == pytest.approx(
        expected / the_chip.hbm_bandwidth
    )
    assert precision in the_chip.vector_precisions


def test_h100_non_tensor_fp16_is_132_sms_times_512_per_clock_at_boost():
    # 128 FP32 lanes × 2 (FMA) × 2 (half2) per SM per clock at 1.98 GHz; 7.4× below the tensor
    # peak (R3 finding 11: "7.4× lower").
    h100 = chip("H100-SXM")
    fp16_per_clock = 132 * 128 * 2 * 2
    assert h100.peak_flops("fp16", tensor_cores=False) == pytest.approx(
        fp16_per_clock * 1.98e9, rel=1e-3
    )
    ratio = h100.peak_flops("bf16") / h100.peak_flops("bf16", tensor_cores=False)
    assert ratio == pytest.approx(7.4, abs=0.05)


def test_peak_flops_without_the_argument_is_unchanged():
    for the_chip in chips():
        for precision in the_chip.precisions:
            assert the_chip.peak_flops(precision) == the_chip.peak_flops_per_s[precision]
            assert the_chip.peak_flops(precision, tensor_cores=True) == the_chip.peak_flops(
                precision
            )
        for precision in the_chip.vector_precisions:
            rate = the_chip.peak_flops(precision, tensor_cores=False)
            assert rate <= the_chip.peak_flops_per_s.get(precision, rate)


@pytest.mark.parametrize(
    ("name", "precision"),
    [("H100-PCIe", "fp16"), ("T4", "fp16"), ("B200", "bf16"), ("TPU-v5e", "bf16"),
     ("TPU-v5e", "fp32"), ("H100-SXM", "fp8")],
)  # fmt: skip
def test_a_missing_non_tensor_rate_is_an_error_not_a_guess(name, precision):
    the_chip = chip(name)
    with pytest.raises(ValueError, match="no sourced non-tensor") as info:
        the_chip.peak_flops(precision, tensor_cores=False)
    assert "non-tensor rates it has:" in str(info.value)
    with pytest.raises(ValueError, match="no sourced non-tensor"):
        the_chip.ridge_point(precision, tensor_cores=False)


def test_tensor_cores_is_a_real_flag_and_vector_rates_are_validated():
    with pytest.raises(TypeError, match="tensor_cores='no' must be True or False"):
        chip("H100").peak_flops("bf16", tensor_cores="no")
    # a what-if copy with a measured peak below the table's non-tensor rate is still a chip
    assert chip("H100").replace(peak_flops_per_s={"bf16": 50e12}).peak_flops("bf16") == 50e12
    with pytest.raises(ValueError, match="vector_flops_per_s key='fp12'"):
        chip("H100").replace(vector_flops_per_s={"fp12": 1e12})
    with pytest.raises(TypeError):
        chip("H100").vector_flops_per_s["fp16"] = 1.0


# --- rows without an SM model (AMD CUs, Blackwell Ultra, TPUs) --------------------------------


@pytest.mark.parametrize("name", ["MI300X", "MI325X", "MI355X", "B300", "GB300", "TPU-v5e"])
def test_rows_without_sms_say_why_instead_of_computing(name):
    the_chip = chip(name)
    assert not the_chip.is_gpu and the_chip.sm_count is None
    with pytest.raises(ValueError, match=f"{name} has no SMs in the table") as info:
        the_chip.require_sm_model("occupancy")
    assert the_chip.no_sm_model in str(info.value) and "occupancy" in str(info.value)
    with pytest.raises(ValueError, match="has no SMs"):
        the_chip.shared_memory_bandwidth()
    # the roofline needs no SMs: peaks and ridges still work
    assert the_chip.ridge_point("bf16") > 0


def test_amd_rows_count_compute_units_not_sms():
    assert "304 compute units (CUs" in chip("MI300X").no_sm_model
    assert "256 compute units (CUs" in chip("MI355X").no_sm_model
    assert chip("MI300X").compute_capability is None and chip("MI300X").sm_arch is None
    # Blackwell Ultra keeps its compute capability without an SM model
    assert chip("B300").sm_arch == chip("GB300").sm_arch == "sm_103"
    assert chip("H100").require_sm_model() is chip("H100")


def _sm_calculators():
    from gpuperf import asynchrony, inference, parallelism, tiling, warpspec

    return [
        pytest.param(lambda c: tiling.waves(1000, c), id="tiling.waves"),
        pytest.param(lambda c: tiling.occupancy(c, 256, 64, 48 * 1024), id="tiling.occupancy"),
        pytest.param(lambda c: parallelism.peak_decomposition(c), id="peak_decomposition"),
        pytest.param(lambda c: parallelism.dram_latency(c), id="dram_latency"),
        pytest.param(lambda c: inference.split_kv(1, 8, 8, 4096, 128, c), id="split_kv"),
        pytest.param(lambda c: asynchrony.tile_overlap(c, 128, 128, 64, 4096), id="tile_overlap"),
        pytest.param(lambda c: warpspec.softmax_pingpong(c, 128), id="softmax_pingpong"),
    ]


@pytest.mark.parametrize("calculator", _sm_calculators())
@pytest.mark.parametrize("name", ["MI300X", "B300"])
def test_sm_calculators_refuse_a_row_without_sms_with_a_clear_error(calculator, name):
    with pytest.raises(ValueError, match=name):
        calculator(chip(name))


def test_nccl_takes_blackwell_ultra_by_its_compute_capability_and_refuses_amd():
    """NCCL's tuner row follows the compute capability, which B300/GB300 have (10.3) although
    their rows have no SM model; an AMD part runs RCCL, not NCCL."""
    from gpuperf import nccl

    assert nccl.ll_max_bus_bandwidth(chip("B300")) == nccl.ll_max_bus_bandwidth(chip("B200"))
    with pytest.raises(ValueError, match="MI300X"):
        nccl.ll_max_bus_bandwidth(chip("MI300X"))


# --- FP6/FP4 and the special-function table ----------------------------------------------------


def test_fp6_and_fp4_peaks_where_a_part_has_them():
    assert gpuperf.units.bytes_per_element("fp6") == 0.75
    for name in ("B200", "GB200"):
        c = chip(name)  # BW-DS: "FP8/FP6 Tensor Core" is one row
        assert c.peak_flops("fp6") == c.peak_flops("fp8")
        assert c.peak_flops("fp4") == 2 * c.peak_flops("fp8")
    assert chip("GB200").peak_flops("fp4") == 10e15  # NVL72: 720 PF dense / 72 GPUs
    assert chip("MI355X").peak_flops("fp6") == chip("MI355X").peak_flops("fp4") == 10.1e15
    assert chip("GB300").peak_flops("fp4") == 15e15  # NV-BU: "15 PetaFLOPS dense NVFP4"
    for name in ("B300", "GB300", "H100", "A100"):
        assert "fp6" not in chip(name).precisions  # not found (Blackwell Ultra) or none


def test_special_function_rates_are_sourced_and_consistent():
    rates = {name: rate for name, (rate, _) in hardware.SPECIAL_FUNCTION_OPS_PER_S.items()}
    # NV-SMX: Blackwell Ultra doubles SFU throughput over Blackwell (10.7 vs 5 T exp/s)
    assert rates["B300"] / rates["B200"] == rates["GB300"] / rates["GB200"] == 2.14
    # FA4: Blackwell kept Hopper's SFU count; 16/clk/SM (FA3's H100 rate) at GB200's SMs and
    # clock gives NVIDIA's 5 T/s, and the HGX B200's within 8 %.
    per_sm = rates["H100-SXM"] / (132 * 1.83e9)
    assert per_sm == pytest.approx(16, rel=0.01)
    gb200, b200 = chip("GB200"), chip("B200")
    assert rates["GB200"] == pytest.approx(16 * gb200.sm_count * gb200.boost_clock_hz, rel=0.01)
    assert rates["B200"] == pytest.approx(16 * b200.sm_count * b200.boost_clock_hz, rel=0.08)
    bib = (ROOT / "references.bib").read_text()
    for _, source in hardware.SPECIAL_FUNCTION_OPS_PER_S.values():
        assert f"{{{source}," in bib
