"""Offline compilation of every course kernel for sm_75 / sm_80 / sm_90, with no GPU present."""

from __future__ import annotations

import time
from importlib.metadata import version

import pytest

pytest.importorskip("triton")
pytest.importorskip("torch")

from gpuperf import inspect as gi

TRITON = tuple(int(x) for x in version("triton").split(".")[:2])
TENSOR_CORE_KERNELS = {
    "matmul",
    "flash_attention_fwd",
    "flash_attention_bwd_dkdv",
    "flash_attention_bwd_dq",
}


@pytest.fixture(scope="module")
def reports():
    return {(r.kernel, r.target): r for r in gi.inspect_all(dtype="fp16")}


def test_every_kernel_compiles_for_every_target(reports):
    assert len(reports) == len(gi.KERNELS) * len(gi.TARGETS)
    for (kernel, target), r in reports.items():
        assert r.compiled and r.fits, f"{kernel} on {target}: {r.explanation}"
        assert 0 <= r.shared_memory_bytes <= r.shared_memory_limit_bytes
        assert 1 <= r.registers_per_thread <= 255
        assert 0 < r.occupancy <= 1
        assert r.limited_by


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
@pytest.mark.parametrize("kernel", sorted(TENSOR_CORE_KERNELS))
def test_tensor_cores_on_ampere_and_hopper(reports, kernel, target):
    r = reports[(kernel, target)]
    assert r.tensor_cores, r.summary()
    wanted = "wgmma" if target == "sm_90" else "mma.sync"
    assert any(wanted in i for i in r.tensor_core_instructions), r.tensor_core_instructions


@pytest.mark.skipif(TRITON < (3, 4), reason="Triton < 3.4 still emitted mma on sm_75")
@pytest.mark.parametrize("kernel", sorted(TENSOR_CORE_KERNELS))
def test_no_tensor_cores_on_t4(reports, kernel):
    assert not reports[(kernel, "sm_75")].tensor_cores


def test_elementwise_kernels_never_use_tensor_cores(reports):
    for (kernel, _), r in reports.items():
        if kernel not in TENSOR_CORE_KERNELS:
            assert not r.tensor_cores, r.summary()


def test_tiled_transpose_goes_through_shared_memory(reports):
    for target in gi.TARGETS:
        assert reports[("transpose_tiled", target)].shared_memory_bytes > 0
        assert reports[("transpose_naive", target)].shared_memory_bytes == 0
        assert reports[("vector_add", target)].shared_memory_bytes == 0


def test_bf16_matmul_compiles_for_sm80():
    r = gi.compile_kernel("matmul", "sm_80", dtype="bf16")
    assert r.compiled and any("bf16" in i for i in r.tensor_core_instructions)


def test_tile_too_big_for_a_t4_is_explained_not_a_traceback():
    # One fp32 stage of 256×256×64 panels is 128 KiB: over a T4's 64 KiB whatever the compiler
    # does, so it is answered by the course model, labelled as such, without compiling.
    r = gi.compile_kernel(
        "matmul", "sm_75", dtype="fp32", BLOCK_M=256, BLOCK_N=256, BLOCK_K=64, num_stages=4
    )
    assert not r.fits and not r.compiled and r.modelled
    assert "65536 bytes (64 KiB)" in r.explanation and "T4" in r.explanation
    assert "course model, not compiled" in r.explanation
    assert "Traceback" not in r.explanation
    assert "does not fit" in r.summary()


def test_matmul_is_compiled_as_the_jit_sees_contiguous_tensors():
    # Unit inner strides are the constant 1 and sizes/strides divisible by 16, as Triton's JIT
    # specialises a call on contiguous 4096 × 4096 tensors: 16-byte cp.async copies into
    # shared memory, pipelined with num_stages - 1 buffers of one A and one B panel each.
    r = gi.compile_kernel(
        "matmul", "sm_80", dtype="fp16", num_warps=4, num_stages=3,
        BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
    )  # fmt: skip
    assert r.constexprs["stride_ak"] == r.constexprs["stride_bn"] == 1
    panel_bytes = (64 * 32 + 32 * 64) * 2
    assert r.shared_memory_bytes == (3 - 1) * panel_bytes
    assert r.instruction_count("cp.async.cg.shared.global") > 0
    assert r.registers_per_thread < 128, r.summary()
    assert r.fits and r.tensor_cores


def test_stored_tile_table_is_what_the_compiler_builds():
    from gpuperf.widgets import tile_reports

    if gi._triton_version() != tile_reports.TRITON_VERSION:
        pytest.skip("the stored table was compiled with another Triton version")
    key = ("sm_80", 256, 256, 64)  # fits: Triton allocates 2 of the 3 stages' buffers
    target, bm, bn, bk = key
    fresh = gi.compile_kernel(
        "matmul", target, dtype=tile_reports.DTYPE, num_warps=tile_reports.NUM_WARPS,
        num_stages=tile_reports.NUM_STAGES, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
    )  # fmt: skip
    assert tile_reports.entry(fresh) == tuple(tile_reports.REPORTS[key])
    assert tile_reports.tile_report(*key).fits


def test_sine_is_libdevice_fma_code_not_the_special_function_unit():
    # Chapter 3.5: tl.sin / tl.cos compile to libdevice's accurate sinf / cosf.
    r = gi.compile_kernel("divergence_split", "sm_80", dtype="fp32")
    assert r.instruction_count("sin.approx") == r.instruction_count("cos.approx") == 0
    assert r.instruction_count("fma") > 16 * 20  # dozens of FMAs per call, 16 calls
    assert sum(count for _, count in r.ptx_instructions) > r.instruction_count("fma")


def test_bad_requests_are_rejected():
    with pytest.raises(KeyError, match=r"unknown kernel 'nope'; known: .*matmul"):
        gi.compile_kernel("nope")
    with pytest.raises(ValueError, match="target='sm_70' must be one of sm_75, sm_80, sm_90"):
        gi.compile_kernel("matmul", "sm_70")
    with pytest.raises(ValueError, match="has no meta-parameter BLOCK_Q"):
        gi.compile_kernel("matmul", BLOCK_Q=16)
    with pytest.raises(ValueError, match="num_warps=3 must be a power of two"):
        gi.compile_kernel("matmul", num_warps=3)


@pytest.mark.parametrize(
    ("kernel", "settings", "error", "message"),
    [
        # 0 is a bad value, not a request for the default.
        ("matmul", {"num_warps": 0}, ValueError, r"num_warps=0 must be a power of two"),
        ("matmul", {"num_stages": 0}, ValueError, r"num_stages=0 must be an integer ≥ 1 and ≤ 8"),
        ("matmul", {"num_stages": 1000}, ValueError, r"num_stages=1000"),
        ("matmul", {"BLOCK_M": 48}, ValueError, r"BLOCK_M=48 must be a power of two ≥ 16"),
        ("divergence_split", {"ITERS": 20000}, ValueError, r"ITERS=20000 must be .* ≤ 256"),
        ("flash_attention_fwd", {"IS_CAUSAL": "no"}, TypeError, r"IS_CAUSAL='no'"),
    ],
)
def test_nonsense_settings_are_refused_before_compiling(kernel, settings, error, message):
    with pytest.raises(error, match=message):
        gi.compile_kernel(kernel, "sm_80", **settings)


@pytest.mark.parametrize(
    ("kernel", "target", "settings", "why"),
    [
        ("flash_attention_fwd", "sm_75", {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_D": 256}, "1536"),
        ("matmul_naive", "sm_80", {"BLOCK_N": 1024, "BLOCK_K": 1024}, "1048576 elements"),
    ],
)
def test_register_hungry_tiles_are_explained_in_seconds_not_compiled(
    kernel, target, settings, why
):
    """Such tiles made ptxas run for minutes (> 150 s for this FlashAttention on sm_75)."""
    start = time.perf_counter()
    report = gi.compile_kernel(kernel, target, **settings)
    assert time.perf_counter() - start < 30
    assert not report.compiled and not report.fits and report.modelled
    assert why in report.explanation and "not compiled (course model)" in report.explanation


def test_table_lists_every_report(reports):
    text = gi.table(list(reports.values()))
    assert text.count("\n") == len(reports) + 1
    assert "wgmma" in text and "no (FMA)" in text


def test_coalesced_copy_compiles_to_vector_loads_and_strided_copy_does_not():
    # Chapter 3, coalescing: with unit stride (and sizes a multiple of 16, as the JIT
    # specialises them) each thread moves 16 bytes per instruction; a runtime stride
    # forces one scalar load per element.
    coalesced = gi.compile_kernel("copy_coalesced", "sm_80", dtype="fp32")
    strided = gi.compile_kernel("copy", "sm_80", dtype="fp32")
    assert dict(coalesced.global_accesses).get("ld.global.v4.b32", 0) > 0
    assert coalesced.load_vector_width == 4
    assert strided.load_vector_width == 1
    assert all(".v" not in name for name, _ in strided.global_accesses)


def test_fma_tile_with_too_many_accumulators_is_labelled_as_a_model_row():
    # sm_75: tl.dot becomes FMAs; 256×256 outputs over 128 threads is 512 accumulators each.
    r = gi.compile_kernel(
        "matmul", "sm_75", dtype="fp16", num_warps=4, num_stages=3,
        BLOCK_M=256, BLOCK_N=256, BLOCK_K=16,
    )  # fmt: skip
    assert r.modelled and not r.compiled and not r.fits
    assert r.explanation.startswith("not compiled (course model)")
    assert "512 fp32 accumulators" in r.explanation and "255 registers" in r.explanation
