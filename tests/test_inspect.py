"""Offline compilation of every course kernel for sm_75 / sm_80 / sm_90, with no GPU present."""

from __future__ import annotations

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
    r = gi.compile_kernel(
        "matmul", "sm_75", dtype="fp16", BLOCK_M=256, BLOCK_N=256, BLOCK_K=64, num_stages=4
    )
    assert not r.fits
    assert "65536 bytes (64 KiB)" in r.explanation and "T4" in r.explanation
    assert "Traceback" not in r.explanation
    assert "does not fit" in r.summary()


def test_bad_requests_are_rejected():
    with pytest.raises(KeyError, match=r"unknown kernel 'nope'; known: .*matmul"):
        gi.compile_kernel("nope")
    with pytest.raises(ValueError, match="target='sm_70' must be one of sm_75, sm_80, sm_90"):
        gi.compile_kernel("matmul", "sm_70")
    with pytest.raises(ValueError, match="has no meta-parameter BLOCK_Q"):
        gi.compile_kernel("matmul", BLOCK_Q=16)
    with pytest.raises(ValueError, match="num_warps=3 must be a power of two"):
        gi.compile_kernel("matmul", num_warps=3)


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
