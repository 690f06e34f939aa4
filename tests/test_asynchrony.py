"""Chapter 3.8: the instruction families, the stored compile table and the overlap model.

The stored counts are checked three ways: against a fresh compile (the table cannot drift from
the compiler), against what each architecture must and must not contain (mma.sync only on
sm_80, wgmma only on sm_90, tcgen05 only on sm_100, TMA only in the descriptor kernel), and
against an independent derivation of the static MMA counts from the tile and instruction
shapes. The overlap model is checked against the roofline's own numbers (math/load = intensity
over ridge), its closed forms, and its limits (speedup ≤ 2, reached only at balance).
"""

from __future__ import annotations

import pytest

from gpuperf import asynchrony as ga
from gpuperf.hardware import chip
from gpuperf.units import bytes_per_element

# --- instruction families -------------------------------------------------------------------


def test_family_counts_sorts_opcodes_and_keeps_every_family():
    pairs = [
        ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 3),
        ("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", 2),
        ("wgmma.wait_group.sync.aligned", 1),
        ("tcgen05.mma.cta_group::1.kind::f16", 4),
        ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", 1),
        ("tcgen05.ld.sync.aligned.32x32b.x64.b32", 2),
        ("cp.async.cg.shared.global", 12),
        ("cp.async.commit_group", 6),  # bookkeeping, not a copy
        ("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes", 5),
        ("mbarrier.try_wait.parity.shared::cta.b64", 7),
        ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", 8),
        ("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64", 2),
        ("tcgen05.wait::ld.sync.aligned", 1),
        ("tensormap.replace.tile.box_dim.shared::cta.b1024.b32", 3),
        ("fence.proxy.tensormap::generic.acquire.gpu", 1),
        ("fma.rn.f32", 100),
    ]
    counts = ga.family_counts(pairs)
    assert counts == {
        "mma_sync": 3,
        "wgmma": 2,
        "wgmma_sync": 1,
        "tcgen05_mma": 4,
        "tmem": 4,
        "tcgen05_commit": 2,
        "cp_async": 12,
        "tma": 5,
        "mbarrier": 7,
        "tensormap": 4,
        "ldmatrix": 8,
    }
    assert ga.cluster_count(pairs) == 2 + 5  # the commit and the TMA copy name shared::cluster
    assert ga.family_counts([]) == dict.fromkeys(ga.FAMILY_KEYS, 0)


def test_family_counts_rejects_nonsense():
    with pytest.raises(TypeError, match="opcode, count"):
        ga.family_counts(42)
    with pytest.raises(ValueError, match="count=-1"):
        ga.family_counts([("mbarrier.init", -1)])
    with pytest.raises(ValueError, match="count=-2"):
        ga.cluster_count([("x.shared::cluster", -2)])
    with pytest.raises(TypeError, match="opcode, count"):
        ga.cluster_count(None)


def test_mma_shape_and_flops_from_the_opcode():
    assert ga.mma_shape("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == (16, 8, 16)
    assert ga.mma_shape("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == (64, 128, 16)
    assert ga.mma_flops("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 2 * 16 * 8 * 16
    with pytest.raises(ValueError, match="keeps its shape in a descriptor"):
        ga.mma_shape("tcgen05.mma.cta_group::1.kind::f16")
    with pytest.raises(TypeError, match="instruction=3"):
        ga.mma_shape(3)


# --- the stored compile table ---------------------------------------------------------------


def test_pairs_are_checked_not_converted():
    pairs = {"mbarrier.init.shared::cta.b64": 2, "tcgen05.commit.shared::cluster.b64": 3}
    assert ga.family_counts(pairs)["mbarrier"] == 2  # a mapping opcode → count works too
    assert ga.cluster_count(pairs) == 3
    for bad, match in [
        ([("mbarrier.init", "7")], "count='7'"),  # int("7") would have passed it
        ([("mbarrier.init", 2.5)], "count=2.5"),  # int(2.5) would have made it 2
        ([("mbarrier.init", True)], "count=True"),
        ([("mbarrier.init", ga.MAX_INSTRUCTIONS + 1)], f"≤ {ga.MAX_INSTRUCTIONS}"),
    ]:
        with pytest.raises(ValueError, match=match):
            ga.family_counts(bad)
    with pytest.raises(TypeError, match="opcode 3 is not a non-empty string"):
        ga.cluster_count([(3, 1)])
    with pytest.raises(TypeError, match="ptx_instructions='mbarrier'"):
        ga.family_counts("mbarrier")


def test_mma_shape_refuses_shapes_no_instruction_has():
    with pytest.raises(ValueError, match="m0n8k16"):
        ga.mma_shape("mma.sync.aligned.m0n8k16.row.col.f32.f16.f16.f32")
    with pytest.raises(ValueError, match=f"from 1 to {ga.MAX_MMA_DIM}"):
        ga.mma_flops("wgmma.mma_async.sync.aligned.m64n512k16.f32.f16.f16")


def test_entry_checks_the_row_it_builds():
    from types import SimpleNamespace

    good = SimpleNamespace(
        compiled=True,
        fits=True,
        explanation="",
        ptx_instructions=(("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4),),
        shared_memory_bytes=4096,
        registers_per_thread=64,
        tensor_core_instructions=("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",),
    )
    row = ga._entry(good)
    assert row[0][ga.FAMILY_KEYS.index("mma_sync")] == 4 and row[1:3] == (4096, 64)
    for field, bad in [("shared_memory_bytes", -1), ("registers_per_thread", 300),
                       ("tensor_core_instructions", "mma"), ("ptx_instructions", 5)]:  # fmt: skip
        with pytest.raises(TypeError, match=f"report=.* is not a usable CompileReport.*{field}"):
            ga._entry(SimpleNamespace(**{**vars(good), field: bad}))
    with pytest.raises(ValueError, match="not a compiled, fitting CompileReport"):
        ga._entry(SimpleNamespace(**{**vars(good), "fits": False}))


def test_stored_table_covers_every_case_and_target():
    assert ga.TRITON_VERSION
    assert set(ga.COUNTS) == {(k, t) for k in ga.CASES for t in ga.TARGETS}
    with pytest.raises(KeyError, match="targets sm_80, sm_90, sm_100"):
        ga.stored("matmul", "sm_75")
    with pytest.raises(KeyError, match="unknown family"):
        ga.stored("matmul", "sm_80").count("hmma")
    with pytest.raises(KeyError, match="unknown family"):
        ga.stored("matmul", "sm_80").opcodes_of("hmma")


def test_only_blackwell_names_the_cluster_window():
    for kernel in ga.CASES:
        assert ga.stored(kernel, "sm_80").cluster_instructions == 0
        assert ga.stored(kernel, "sm_90").cluster_instructions == 0
        b = ga.stored(kernel, "sm_100")
        # tcgen05.commit arrives on an mbarrier addressed in the cluster window.
        assert b.cluster_instructions == b.count("tcgen05_commit") > 0


@pytest.mark.parametrize("kernel", list(ga.CASES))
def test_each_architecture_uses_its_own_tensor_core_instruction(kernel):
    a, h, b = (ga.stored(kernel, t) for t in ("sm_80", "sm_90", "sm_100"))
    assert a.count("mma_sync") > 0 and a.count("wgmma") == a.count("tcgen05_mma") == 0
    assert h.count("wgmma") > 0 and h.count("mma_sync") == h.count("tcgen05_mma") == 0
    assert h.count("wgmma_sync") > 0  # wgmma is asynchronous: its results are waited for
    assert b.count("tcgen05_mma") > 0 and b.count("mma_sync") == b.count("wgmma") == 0
    assert b.count("tmem") > 0  # the accumulator lives in tensor memory: alloc, ld, st
    assert a.count("tmem") == h.count("tmem") == 0
    for row in (a, h, b):  # nothing from a newer generation, and no TMA without descriptors
        assert row.count("tma") == 0 or kernel == "flash_attention_fwd_hopper"


def test_tma_appears_only_where_the_source_uses_descriptors_and_the_target_has_it():
    hopper = {t: ga.stored("flash_attention_fwd_hopper", t) for t in ga.TARGETS}
    assert hopper["sm_90"].count("tma") > 0 and hopper["sm_100"].count("tma") > 0
    assert hopper["sm_90"].count("mbarrier") > 0  # TMA copies complete on an mbarrier
    # On sm_80 the same descriptors become per-thread cp.async copies.
    assert hopper["sm_80"].count("tma") == 0 and hopper["sm_80"].count("cp_async") > 0
    # The descriptors are written by the kernel itself (tensormap.*), only where TMA is used.
    assert hopper["sm_90"].count("tensormap") > 0 and hopper["sm_80"].count("tensormap") == 0
    loads = hopper["sm_90"].opcodes_of("tma")
    assert any("mbarrier::complete_tx" in name for name in loads), loads  # loads land on a barrier
    # The course matmul (pointer loads) stays with cp.async on every target.
    for t in ga.TARGETS:
        assert ga.stored("matmul", t).count("tma") == 0
        assert ga.stored("matmul", t).count("cp_async") > 0


def test_static_mma_counts_follow_from_tile_and_instruction_shapes():
    # matmul: a 128×128×32 tile per K step over 8 warps (ga.CASES uses the inspect defaults).
    from gpuperf.inspect import KERNELS

    spec = KERNELS["matmul"]
    bm, bn, bk = (spec.constexprs[n] for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
    warps = spec.num_warps
    a = ga.stored("matmul", "sm_80")
    m, n, k = ga.mma_shape(a.tensor_core_instructions[0])
    # Each warp issues its share of the tile's instructions once per K step in the loop body.
    assert a.count("mma_sync") == (bm * bn * bk) // (m * n * k) // warps
    h = ga.stored("matmul", "sm_90")
    m, n, k = ga.mma_shape(h.tensor_core_instructions[0])
    warpgroups = bm // m  # each warpgroup owns m rows of the tile
    assert warps // warpgroups == 4  # so a warpgroup is four warps
    assert h.count("wgmma") == (bm * bn * bk) // (m * n * k) // warpgroups


def test_stored_table_is_what_the_compiler_builds():
    from gpuperf import inspect as gi

    if gi._triton_version() != ga.TRITON_VERSION:
        pytest.skip("the stored table was compiled with another Triton version")
    wanted = [
        r
        for r in ga._requests()
        if (r["kernel"], r["target"])
        in {("matmul", "sm_100"), ("flash_attention_fwd_hopper", "sm_90")}
    ]
    assert len(wanted) == 2
    for request, report in zip(wanted, gi.compile_many(wanted), strict=True):
        key = (request["kernel"], request["target"])
        assert ga._entry(report) == tuple(ga.COUNTS[key]), key


def test_counts_table_is_markdown_with_one_column_per_target():
    text = ga.counts_table("flash_attention_fwd_hopper").data
    assert text.splitlines()[0] == "| instructions in the PTX | sm_80 | sm_90a | sm_100a |"
    assert "`cp.async.bulk.tensor (TMA)`" in text


def test_ptx_targets_are_the_ones_triton_writes():
    """Review 2026-12 (R2): wgmma, setmaxnreg and tcgen05 exist only for the architecture-
    specific targets; the page named sm_90 and sm_100 without the suffix Triton compiles for."""
    assert set(ga.PTX_TARGETS) == set(ga.TARGETS)
    compiler = pytest.importorskip("triton.backends.nvidia.compiler")
    for target, ptx in ga.PTX_TARGETS.items():
        assert compiler.sm_arch_from_capability(int(target.removeprefix("sm_"))) == ptx


def test_sm100_is_an_inspect_target_on_request_only():
    from gpuperf import inspect as gi

    assert gi.ARCH_TARGETS["sm_100"] == ("B200", 100)
    assert "sm_100" not in gi.TARGETS  # inspect_all stays sm_75/80/90
    with pytest.raises(ValueError, match="sm_75, sm_80, sm_90, sm_100"):
        gi.compile_kernel("matmul", "sm_70")


# --- the overlap model ----------------------------------------------------------------------


def test_overlap_times_from_the_chip_table():
    h100 = chip("H100-SXM")
    r = ga.tile_overlap(h100, 128, 128, 64, 4096)
    assert r.steps == 4096 // 64
    assert r.bytes_per_step == (128 + 128) * 64 * bytes_per_element("fp16")
    assert r.flops_per_step == 2 * 128 * 128 * 64
    assert r.load_s == pytest.approx(r.bytes_per_step * h100.sm_count / h100.hbm_bandwidth)
    assert r.math_s == pytest.approx(r.flops_per_step * h100.sm_count / h100.peak_flops("fp16"))
    # math/load is the tile's intensity over the chip's ridge point (an independent route).
    assert r.math_s / r.load_s == pytest.approx(r.intensity / h100.ridge_point("fp16"))
    assert r.intensity == pytest.approx(2 * 128 * 128 / (256 * 2))
    assert r.bound == "memory"


def test_overlap_closed_forms_and_limits():
    r = ga.tile_overlap("A100-80GB", 256, 256, 64, 4096)
    assert r.serial_s == pytest.approx(r.steps * (r.load_s + r.math_s))
    slow = max(r.load_s, r.math_s)
    assert r.overlapped_s == pytest.approx(r.load_s + r.math_s + (r.steps - 1) * slow)
    assert 1 < r.speedup < 2
    assert r.tensor_busy_overlapped > r.tensor_busy_serial
    # One step: nothing to overlap with.
    one = ga.tile_overlap("A100-80GB", 256, 256, 64, 64)
    assert one.steps == 1 and one.speedup == pytest.approx(1.0)
    # Ragged K: the last partial step counts in full.
    assert ga.tile_overlap("A100-80GB", 64, 64, 64, 65).steps == 2


def test_speedup_approaches_two_only_at_balance():
    h100 = chip("H100-SXM")
    # Pick the reuse that balances a 128×128 tile on the H100: load/math = ridge/intensity.
    ratio = h100.ridge_point("fp16") / (2 * 128 * 128 / (256 * 2))
    best = min(range(1, ga.MAX_REUSE + 1), key=lambda r: abs(ratio / r - 1))
    balanced = ga.tile_overlap(h100, 128, 128, 64, 1 << 20, reuse=best)
    assert balanced.speedup > 1.8
    for reuse in (1, 4 * best):  # far from balance on either side
        lopsided = ga.tile_overlap(h100, 128, 128, 64, 1 << 20, reuse=reuse)
        assert lopsided.speedup < balanced.speedup
    assert ga.tile_overlap(h100, 128, 128, 64, 1 << 20, reuse=4 * best).bound == "math"
    # Reuse divides only the load.
    base = ga.tile_overlap(h100, 128, 128, 64, 4096)
    shared = ga.tile_overlap(h100, 128, 128, 64, 4096, reuse=4)
    assert shared.load_s == pytest.approx(base.load_s / 4)
    assert shared.math_s == base.math_s


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(block_m=48), ValueError, "block_m=48 must be a power of two ≥ 16"),
        (dict(block_k=512), ValueError, "block_k=512"),
        (dict(k=0), ValueError, "k=0 must be an integer ≥ 1"),
        (dict(reuse=0), ValueError, "reuse=0"),
        (dict(reuse=True), ValueError, "reuse=True"),
        (dict(precision="fp12"), ValueError, "fp12"),
        (dict(chip_name="H300"), KeyError, "H300"),
    ],
)
def test_overlap_rejects_bad_arguments(kwargs, error, match):
    args = dict(chip_name="H100-SXM", block_m=128, block_n=128, block_k=64, k=4096)
    with pytest.raises(error, match=match):
        ga.tile_overlap(**{**args, **kwargs})


def test_a_chip_without_the_precision_is_an_error():
    with pytest.raises((KeyError, ValueError), match="fp8"):
        ga.tile_overlap("A100-80GB", 128, 128, 64, 4096, "fp8")


# --- the explorer and its figure ----------------------------------------------------------


def test_schedule_respects_dependencies():
    from gpuperf.widgets.asynchrony import _schedule

    for chip_name, reuse in (("H100-SXM", 1), ("H100-SXM", 8), ("A100-80GB", 2)):
        r = ga.tile_overlap(chip_name, 128, 128, 64, 4096, reuse=reuse)
        s = _schedule(r, 6)
        loads, maths = s["async_load"], s["async_math"]
        for i in range(6):
            assert maths[i][0] >= loads[i][0] + loads[i][1] - 1e-15  # data before math
            if i:
                assert maths[i][0] >= maths[i - 1][0] + maths[i - 1][1] - 1e-15
                assert loads[i][0] >= loads[i - 1][0] + loads[i - 1][1] - 1e-15
        end = maths[-1][0] + maths[-1][1]
        six = ga.tile_overlap(chip_name, 128, 128, 64, 6 * 64, reuse=reuse)
        assert end == pytest.approx(six.overlapped_s)
        sync_end = s["sync_math"][-1][0] + s["sync_math"][-1][1]
        assert sync_end == pytest.approx(six.serial_s)


def test_view_draws_the_calculators_schedule():
    pytest.importorskip("matplotlib")
    from gpuperf.widgets.asynchrony import SHOWN_STEPS, _OverlapView

    view = _OverlapView()
    status = view.update("B200", (256, 128), 64, 2)
    r = view.last
    assert r.chip_name == "B200" and r.reuse == 2
    scale = SHOWN_STEPS * (r.load_s + r.math_s)
    last = view.bars["async_math"][-1]
    finish = last.get_x() + last.get_width()
    assert finish == pytest.approx(
        ga.tile_overlap("B200", 256, 128, 64, SHOWN_STEPS * 64, reuse=2).overlapped_s / scale
    )
    assert view.end.get_xdata()[0] == pytest.approx(finish)
    assert f"({r.speedup:.2f}×)" in status and "B200" in status


def test_explorer_and_figure():
    pytest.importorskip("ipywidgets")
    import matplotlib.pyplot as plt

    from gpuperf.widgets.asynchrony import overlap_explorer, overlap_figure

    explorer = overlap_explorer()
    text = explorer.step(chip_name="a100", tile=(256, 256), reuse=4)
    assert "A100-80GB" in text and "256 × 256" in text
    with pytest.raises(ValueError, match="reuse"):
        explorer.step(reuse=3)
    figure = overlap_figure("H100-SXM", (128, 128), 64, reuse=4)
    assert figure in map(plt.figure, plt.get_fignums())  # a pyplot figure: plt.show() shows it
    plt.close(figure)
    open_before = plt.get_fignums()
    with pytest.raises(ValueError, match="tile"):
        overlap_figure(tile=(128,))
    assert plt.get_fignums() == open_before, "a refused argument must not leave a figure behind"


def test_explorer_steps_blit(needless_full_redraws):
    """Only the bars move, blitted on a cached background: no step redraws the whole figure."""
    pytest.importorskip("ipywidgets")
    from gpuperf.widgets.asynchrony import CHIPS, REUSES, overlap_explorer

    steps = [{"chip_name": name, "reuse": reuse} for name in CHIPS for reuse in REUSES]
    assert needless_full_redraws(overlap_explorer(), steps) == []
