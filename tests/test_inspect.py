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
    assert tile_reports.TileReport.from_report(fresh) == tile_reports.tile_report(*key)
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
def test_register_hungry_tiles_are_explained_not_compiled(
    kernel, target, settings, why, monkeypatch, tmp_path
):
    """Such tiles made ptxas run for minutes (> 150 s for this FlashAttention on sm_75): the
    course model explains them without starting the compiler (no cache to answer from)."""

    def no_compiler(jobs):
        raise AssertionError(f"the compiler was started for {jobs}")

    monkeypatch.setenv("GPUPERF_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(gi, "_MEMORY", {})
    monkeypatch.setattr(gi, "_run_worker", no_compiler)
    report = gi.compile_kernel(kernel, target, **settings)
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


# Captured from the real compile of the course matmul, fp16, sm_90, BLOCK 128×256×64, 4 warps,
# 3 stages (Triton 3.9.0): ``cuobjdump -res-usage`` and a few lines of ``cuobjdump -sass``
# (whitespace and encodings trimmed).
# ptxas -v said for that cubin: "1024 bytes stack frame, 2200 bytes spill stores, 1688 bytes
# spill loads" and "Used 255 registers". The spills live in STACK; LOCAL stays 0.
_SPILLING_RES_USAGE = """
Resource usage:
 Common:
  GLOBAL:0
 Function _matmul_kernel:
  REG:255 STACK:1024 SHARED:1024 LOCAL:0 CONSTANT[0]:592 TEXTURE:0 SURFACE:0 SAMPLER:0
"""
_SPILLING_SASS = """
    /*0120*/  STL [R1], RZ ;
    /*3ac0*/  STL.64 [R1+0x3f0], R156 ;
    /*3ec0*/  LDL.LU.64 R32, [R1] ;
    /*4a30*/  LDL.LU R159, [R1+0x3f8] ;
    /*4580*/  HGMMA.64x256x16.F32 R32, gdesc[UR12].tnspB, R32, gsb0 ;
"""


def test_spills_are_read_from_the_stack_frame_not_local():
    # The old parser read LOCAL:0 and reported no spills for this heavily spilling kernel.
    usage = gi._parse_resource_usage(_SPILLING_RES_USAGE)
    assert usage == {"reg": 255, "stack": 1024, "local": 0}
    assert gi._spill_traffic(_SPILLING_SASS) == (4 + 8, 8 + 4)
    found = gi._spills_from(_SPILLING_RES_USAGE, _SPILLING_SASS)
    assert found == {"registers": 255, "spill": 1024, "spill_stores": 12, "spill_loads": 12}


_SPILLING_PTXAS_LOG = """
ptxas-blackwell info    : Compiling entry function '_matmul_kernel' for 'sm_90a'
ptxas-blackwell info    : Function properties for _matmul_kernel
    1024 bytes stack frame, 2200 bytes spill stores, 1688 bytes spill loads
ptxas-blackwell info    : Used 255 registers, used 1 barriers, 1024 bytes cumulative stack size
"""


def test_ptxas_log_decides_when_it_is_for_the_same_compile():
    assert gi._parse_ptxas_log(_SPILLING_PTXAS_LOG) == {
        "registers": 255,
        "stack": 1024,
        "stores": 2200,
        "loads": 1688,
    }
    assert gi._parse_ptxas_log("ptxas fatal   : Unsupported .version 9.4") is None
    found = gi._spills_from(_SPILLING_RES_USAGE, _SPILLING_SASS, _SPILLING_PTXAS_LOG)
    assert found == {"registers": 255, "spill": 1024, "spill_stores": 2200, "spill_loads": 1688}
    # A log from another compile (other register count) is ignored: the SASS is counted.
    other = _SPILLING_PTXAS_LOG.replace("Used 255", "Used 254")
    assert gi._spills_from(_SPILLING_RES_USAGE, _SPILLING_SASS, other)["spill_stores"] == 12
    # A local array, not a spill: ptxas reports a stack frame with no spill stores.
    array = "16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nUsed 40 registers"
    usage = "  REG:40 STACK:16 SHARED:0 LOCAL:0"
    assert gi._spills_from(usage, "STL [R1], R4 ;", array)["spill"] == 0


def test_a_stack_frame_without_spill_stores_is_not_a_spill():
    usage = "  REG:40 STACK:16 SHARED:0 LOCAL:0 CONSTANT[0]:400"
    sass = "        /*0010*/   LDG.E.128 R4, desc[UR4][R2.64] ;\n  STG.E [R2], R4 ;"
    assert gi._spills_from(usage, sass) == {
        "registers": 40,
        "spill": 0,
        "spill_stores": 0,
        "spill_loads": 0,
    }


def test_spill_widths_follow_the_instruction_suffix():
    sass = "STL.128 [R1], R4 ;\nSTL.U8 [R1+0x10], R8 ;\nLDL.LU.128 R4, [R1] ;\nLDL.S16 R9, [R1] ;"
    assert gi._spill_traffic(sass) == (16 + 1, 16 + 2)


def test_a_spilling_tile_compiles_to_a_nonzero_spill():
    # A real compile (about 15 s uncached): 128×256 fp32 accumulators over 128 threads is 256
    # per thread, more than the 255 registers a thread can have, so ptxas must spill.
    r = gi.compile_kernel(
        "matmul", "sm_90", dtype="fp16", num_warps=4, num_stages=3,
        BLOCK_M=128, BLOCK_N=256, BLOCK_K=64,
    )  # fmt: skip
    assert r.compiled and r.registers_per_thread == 255, r.summary()
    assert r.spill_bytes and r.spill_bytes >= 4 * (128 * 256 // 128 - 255), r.summary()
    assert r.spill_store_bytes > 0 and r.spill_load_bytes > 0
    # ptxas -v on this compile (Triton 3.9.0): 1024 B stack frame, 2200 B spill stores.
    if r.triton_version == "3.9.0":
        assert (r.spill_bytes, r.spill_store_bytes, r.spill_load_bytes) == (1024, 2200, 1688)
    small = gi.compile_kernel(
        "matmul", "sm_90", dtype="fp16", num_warps=4, num_stages=3,
        BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
    )  # fmt: skip
    assert small.spill_bytes == 0 and small.spill_store_bytes == 0, small.summary()


def test_a_local_array_in_the_stack_frame_is_not_counted_as_a_spill():
    # sin2cos2_fused on sm_75 (Triton 3.9.0): a 32-byte stack frame (cuobjdump STACK:32) with
    # STL/LDL to it (128 B of stores in the SASS): libdevice's sin/cos argument reduction keeps a
    # .local array there. ptxas -v: "32 bytes stack frame, 0 bytes spill stores". Counting the
    # SASS alone would call that a spill; the report follows ptxas.
    r = gi.compile_kernel("sin2cos2_fused", "sm_75", dtype="fp16")
    assert r.compiled and r.registers_per_thread < 255, r.summary()
    assert (r.spill_bytes, r.spill_store_bytes, r.spill_load_bytes) == (0, 0, 0), r.summary()


# ---------------------------------------------------------------------- the stored records


@pytest.fixture(scope="module")
def stored():
    records = gi._stored_records()
    if not records:
        pytest.skip(
            f"no compiler records stored for Triton {gi._triton_version()} (written by "
            ".ci/store-compiles): every compile check compiles afresh"
        )
    return records


def _request_of(job: dict) -> dict:
    """The ``compile_many`` request that makes ``job`` again."""
    spec = {**gi.KERNELS, **gi.ARCH_KERNELS}[job["kernel"]]
    overrides = {k: v for k, v in job["constexprs"].items() if k in spec.constexprs}
    fixed = {k: job[k] for k in ("kernel", "target", "dtype", "num_warps", "num_stages")}
    return {**fixed, **overrides}


def test_no_stored_record_is_stale(stored):
    """A record answers only the compile it came from. One whose kernel source, request
    (inspect's KERNELS) or record format has changed since would never be used again: refresh
    the file instead, so CI does not silently go back to compiling for minutes."""
    stale = set()
    for key, record in stored.items():
        request = _request_of(record["job"])
        job = gi._job(
            request.pop("kernel"), request.pop("target"), request.pop("dtype"),
            request.pop("num_warps"), request.pop("num_stages"), request,
        )  # fmt: skip
        if job != record["job"] or gi._key(job) != key:
            stale.add(record["job"]["module"])
    assert not stale, (
        f"stored compiler records of {sorted(stale)} predate their kernels' source: run "
        f".ci/store-compiles and commit src/gpuperf/compiled/{gi._store_path().name}"
    )


@pytest.mark.slow  # compiles
def test_stored_records_are_what_the_compiler_builds(stored):
    """Recompile a sample of the stored records, caches bypassed: the smallest record (fewest
    PTX instructions, so the quickest compile) of every kernel module, and the smallest one that
    spills registers (the ptxas path of the record)."""

    def size(key: str) -> int:
        return sum(count for _, count in stored[key]["raw"]["ptx_instructions"])

    sample = {}
    for key in sorted(stored, key=size):
        sample.setdefault(stored[key]["job"]["module"], key)
    spilling = [k for k in sorted(stored, key=size) if stored[k]["raw"].get("spill")]
    keys = sorted({*sample.values(), *spilling[:1]})
    jobs = [stored[k]["job"] for k in keys]
    fresh = gi.compile_many([_request_of(job) for job in jobs], fresh=True)
    version = {"triton_version": gi._triton_version()}
    for key, job, report in zip(keys, jobs, fresh, strict=True):
        assert report == gi._report(job, {**stored[key]["raw"], **version}), report.summary()
