"""Chapter 3.8's frontier: the stored compiler facts and the budgets they are explained by.

The stored facts are checked against a fresh compile (they cannot drift from the compiler),
against what each case must show (warp specialisation only where asked, multicast and
cta_group::2 only in the Gluon probes), and against independent derivations: the register split
from the register file, the cp.async split from the tile, the 2-CTA shape from the probe's
descriptors, the tensor-memory columns from the accumulator. The PTX readers are checked on
hand-written listings.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpuperf import inspect as gi
from gpuperf import warpspec as ws
from gpuperf.hardware import TENSOR_MEMORY_PER_SM, chip
from gpuperf.inspect import KERNELS

# --- the PTX readers ---------------------------------------------------------------------------

LISTING = """
.visible .entry k(
)
.reqntid 384
.maxnreg 168
{
	mov.u32 	%r1, %tid.x;
	@%p1 bra 	$L__BB0_4;
	setmaxnreg.dec.sync.aligned.u32 	40;
$L__BB0_2:
	@%p2 TMA_LOAD [%r2], [%rd1, {%r3, %r4}], [%r5];
	@%p3 bra 	$L__BB0_2;
	bra.uni 	$L__BB0_9;
$L__BB0_4:
	setmaxnreg.inc.sync.aligned.u32 	232;
	cp.async.cg.shared.global [%r6], [%rd2], 16;
$L__BB0_5:
	cp.async.cg.shared.global [%r6], [%rd2], 16;
	elect.sync 	%r9|%p7, -1;
	mov.b32 	%r10, 136316048;
	@%p7 tcgen05.mma.cta_group::1.kind::f16 [ %r2 + 0 ], %rd3, %rd4, %r10, %p8;
	wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r1}, %rd5, %rd6, 1, 1, 1, 1, 1;
	@%p4 bra 	$L__BB0_5;
$L__BB0_9:
	ret;
}
""".replace("TMA_LOAD", "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes")


def test_facts_read_a_hand_written_listing():
    f = ws.CompiledFacts("listing", "sm_90", *ws.facts(LISTING, 1024))
    assert (f.threads, f.max_registers) == (384, 168)
    assert f.registers("dec") == (40,) and f.registers("inc") == (232,)
    # the producer reaches only its TMA loop; the consumer its MMAs (and not the producer's code)
    assert f.partitions == (
        ("dec", 40, 1, (("TMA load", 1),)),
        ("inc", 232, 1, (("MMA", 2),)),
    )
    assert (f.cp_async_in_loop, f.cp_async_outside_loop) == (1, 1)
    # 136316048: M/16 = 8 in bits 24–28, N/8 = 16 in bits 17–22 (a 128 × 128 MMA), and format
    # bits below 17 that the shape ignores
    assert 136316048 == (128 // 16) << 24 | (128 // 8) << 17 | 0x490
    assert f.mma_shapes == ((1, 128, 128, 1),)
    assert f.elected_mma == (1, 1)
    assert f.shared_memory_bytes == 1024
    with pytest.raises(TypeError, match="ptx=3"):
        ws.facts(3)


# --- the stored compiles -----------------------------------------------------------------------


def test_stored_cases_cover_every_target():
    assert set(ws.COMPILED) == {(c, t) for c, spec in ws.CASES.items() for t in spec["targets"]}
    with pytest.raises(KeyError, match="two_cta_mma: sm_100"):
        ws.compiled("two_cta_mma", "sm_90")


def test_course_matmul_copies_four_per_k_step_and_eight_in_the_prologue():
    spec = KERNELS["matmul"]
    bm, bn, bk = (spec.constexprs[n] for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
    threads = 32 * spec.num_warps
    per_step = (bm + bn) * bk * 2 // 16 // threads  # fp16 panels in 16-byte copies per thread
    f = ws.compiled("matmul", "sm_80")
    assert f.cp_async_in_loop == per_step == 4
    assert f.cp_async_outside_loop == (spec.num_stages - 1) * per_step == 8


def test_warp_specialisation_splits_producer_and_consumers_on_hopper():
    plain = ws.compiled("matmul_tma", "sm_90")
    split = ws.compiled("matmul_tma_ws", "sm_90")
    assert plain.setmaxnreg == () and plain.partitions == ()
    assert split.threads == 3 * ws.WARPGROUP_THREADS  # 1 producer + 2 consumer warpgroups
    budget = ws.register_split(consumers=2, producer_registers=split.registers("dec")[0])
    assert split.max_registers == budget.uniform_registers == 168
    assert budget.consumer_registers in split.registers("inc")
    producer, consumers = split.partitions
    assert producer[:2] == ("dec", 40) and dict(producer[3]) == {"TMA load": 3}
    assert consumers[:3] == ("inc", 232, 2) and "TMA load" not in dict(consumers[3])


def test_blackwell_issues_mma_from_one_thread_of_a_small_partition():
    split = ws.compiled("matmul_tma_ws", "sm_100")
    kinds = {k: (a, r) for a, r, _n, found in split.partitions for k, _c in found}
    assert kinds["MMA"] == ("dec", 24) and kinds["TMA load"] == ("dec", 24)
    assert kinds["TMEM load"] == ("inc", 256)  # the epilogue reads the accumulator
    assert split.elected_mma[0] == split.elected_mma[1] > 0


def test_tensor_memory_columns_are_the_accumulators():
    for case in ("matmul", "matmul_tma"):
        f = ws.compiled(case, "sm_100")
        ((group, m, n, _count),) = f.mma_shapes
        assert (group, m) == (1, 128)
        assert f.tmem_columns == (ws.tensor_memory(n).columns,)
    assert ws.tensor_memory(128).bytes == 128 * 128 * 4
    lanes, columns, _ = TENSOR_MEMORY_PER_SM[(10, 0)]
    assert lanes * columns * 4 == 256 * 1024


def test_only_gluon_asks_for_multicast_and_the_pair():
    for t in ("sm_90", "sm_100"):
        cluster = ws.compiled("matmul_tma_cluster", t)
        assert cluster.cluster_barriers > 0 and cluster.multicast_loads == 0
        assert ws.compiled("tma_multicast", t).multicast_loads == 1
    for case, spec in ws.CASES.items():
        for t in spec["targets"]:
            shapes = ws.compiled(case, t).mma_shapes
            assert all(g == 1 for g, *_ in shapes) or case == "two_cta_mma"
    pair = ws.compiled("two_cta_mma", "sm_100")
    # the probe's descriptors: A 256 × 64 over the pair, B 64 × 128 → one 256 × 128 MMA shape
    assert [(g, m, n) for g, m, n, _c in pair.mma_shapes] == [(2, 256, 128)]
    assert pair.elected_mma[0] == pair.elected_mma[1]


def test_stored_facts_are_what_the_compiler_builds():
    if gi._triton_version() != ws.TRITON_VERSION:
        pytest.skip("the stored facts were compiled with another Triton version")
    wanted = [("matmul", "sm_80"), ("matmul_tma_ws", "sm_90"), ("two_cta_mma", "sm_100")]
    fresh = ws.compile_facts(wanted)
    for key in wanted:
        assert fresh[key] == ws.COMPILED[key], key


@pytest.mark.parametrize(
    "cases, error, message",
    [
        ("matmul", TypeError, r"cases='matmul' must be a list or tuple"),
        ([], ValueError, r"cases=\[\] must hold at least 1 item"),
        ([("matmul", "sm_80")] * 12, ValueError, r"at most 11, got 12"),
        ([("matmul", "sm_80"), 7], TypeError, r"cases\[1\]=7 must be a \(case, target\) pair"),
        (["matmul", "sm_80"], TypeError, r"cases\[0\]='matmul' must be a \(case, target\) pair"),
        ([("matmul",)], ValueError, r"cases\[0\]=\('matmul',\) must be a .* got 1 items"),
        ([(3, "sm_80")], TypeError, r"cases\[0\]\[0\]=3 must be a string"),
        (
            [("mm", "sm_80")],
            ValueError,
            r"cases\[0\]\[0\]='mm' is not a compiled case; cases: matmul,",
        ),
        (
            [("matmul", "sm_90")],
            ValueError,
            r"cases\[0\]\[1\]='sm_90' is not a target of case 'matmul'; "
            r"its targets: sm_80, sm_100",
        ),
    ],
)
def test_compile_facts_refuses_bad_cases_before_compiling(monkeypatch, cases, error, message):
    def never(*args, **kwargs):
        raise AssertionError("the compiler started on a refused argument")

    monkeypatch.setattr(ws, "_compile_facts", never)
    with pytest.raises(error, match=message):
        ws.compile_facts(cases)


def test_compile_facts_passes_checked_pairs_to_the_compiler(monkeypatch):
    seen = []
    monkeypatch.setattr(ws, "_compile_facts", lambda cases: seen.append(cases) or {})
    ws.compile_facts([["matmul", "sm_100"], ("two_cta_mma", "sm_100")])
    ws.compile_facts()
    assert seen == [(("matmul", "sm_100"), ("two_cta_mma", "sm_100")), None]


# --- the budgets -------------------------------------------------------------------------------


def test_register_split_from_the_register_file():
    r = ws.register_split(consumers=2, producer_registers=40)
    assert r.threads == 384
    assert r.uniform_registers == (65536 // 384) // 8 * 8 == 168
    assert r.consumer_registers == (65536 // 128 - 40) // 2 // 8 * 8 == 232
    assert 128 * (40 + 2 * 232) <= 65536
    assert r.accumulator_registers(128, 256) == 128  # a 128×256 fp32 tile over two warpgroups
    one = ws.register_split(consumers=1, producer_registers=24)
    assert one.consumer_registers == 256  # capped by setmaxnreg's 256
    with pytest.raises(ValueError, match="producer_registers=36 must be a multiple of 8"):
        ws.register_split(2, 36)
    with pytest.raises(ValueError, match="consumers=8"):
        ws.register_split(8, 24)


def test_tensor_memory_budget():
    t = ws.tensor_memory(256, buffers=2)
    assert t.columns == 512 and t.fraction == 1.0
    assert ws.tensor_memory(16).columns == 32  # at least 32 columns
    assert ws.tensor_memory(128, accumulator_bytes=2).columns == 64
    with pytest.raises(ValueError, match="tensor memory has 512"):
        ws.tensor_memory(512, buffers=2)
    with pytest.raises(ValueError, match="has no tensor memory; chips that do: B200"):
        ws.tensor_memory(128, chip_name="H100-SXM")


def test_cluster_sharing_divides_the_shared_panels():
    alone = ws.cluster_operand_bytes(128, 128, 64)
    assert alone.alone_bytes == alone.shared_bytes == (128 + 128) * 64 * 2
    pair = ws.cluster_operand_bytes(128, 128, 64, cluster_m=2)  # the 2-CTA MMA: B split in two
    assert pair.shared_bytes == 128 * 64 * 2 + 128 * 64 * 2 / 2
    square = ws.cluster_operand_bytes(128, 128, 64, cluster_m=2, cluster_n=2)
    assert square.reduction == pytest.approx(2.0)
    assert square.intensity == pytest.approx(2 * alone.intensity)
    with pytest.raises(ValueError, match="must be ≤ 16 CTAs"):
        ws.cluster_operand_bytes(128, 128, 64, 8, 4)


def test_pingpong_is_fa3s_half():
    h100 = chip("H100-SXM")
    p = ws.softmax_pingpong(h100, 128)
    # FA3 §3.1: 989 TFLOPS of matmul against 3.9 TFLOPS of exp; 4·d = 512 matmul FLOPs per
    # exponential at d = 128, so the exponentials take about half the matmul time.
    assert p.ratio == pytest.approx(h100.peak_flops("bf16") / (512 * 3.9e12))
    assert p.ratio == pytest.approx(0.5, abs=0.01)
    assert p.pingpong_s == p.matmul_s and p.speedup == pytest.approx(1 + p.ratio)
    assert p.tensor_busy_pingpong == 1.0
    with pytest.raises(ValueError, match="no sourced special-function rate; known: H100-SXM"):
        ws.softmax_pingpong("A100-80GB", 128)


# --- the exponential wall (FlashAttention-4) -----------------------------------------------------


def test_exp_balance_matches_the_hand_derivation():
    # frontier-2026.md §5: per score 4d = 512 tensor FLOPs and one exp2. B200: 512 / 2.25 PF
    # = 0.228 ns against 1 / 5 T = 0.200 ns (88 %); GB300: 512 / 2.5 PF against 1 / 10.7 T (46 %).
    b200 = ws.exp_balance("B200", 128, "bf16", seq_len=1)
    assert b200.matmul_s == pytest.approx(512 / 2.25e15)
    assert b200.exp_s == pytest.approx(1 / 5e12)
    assert b200.ratio == pytest.approx(0.88, abs=0.005)
    assert ws.exp_balance("GB300", 128).ratio == pytest.approx(0.46, abs=0.005)
    assert ws.exp_balance("H100-SXM", 128).ratio == pytest.approx(0.5, abs=0.01)  # FA3
    assert b200.fraction_to_balance == 0  # the SFUs keep up at d = 128 in bf16 ...
    d64 = ws.exp_balance("B200", 64)  # ... not at d = 64: 1 − (256 / 2.25 PF) · 5 T
    assert d64.fraction_to_balance == pytest.approx(1 - 256 / 2.25e15 * 5e12)
    # Emulated: 6 FP32 ops each at 75 TF / 2 = 37.5 T ops/s.
    assert d64.emulated_s == pytest.approx(6 * 8192**2 / 37.5e12)
    assert d64.exp_time_s(d64.fraction_to_balance) == pytest.approx(d64.matmul_s)
    f = d64.best_fraction
    assert (
        (1 - f) * d64.exp_s == pytest.approx(f * d64.emulated_s) == pytest.approx(d64.best_exp_s)
    )


def test_exp_balance_scales_with_the_scores_not_the_ratio():
    a, b = ws.exp_balance("B200", 128, seq_len=1024), ws.exp_balance("B200", 128)
    assert b.matmul_s / a.matmul_s == pytest.approx(64) and b.ratio == pytest.approx(a.ratio)


def test_exp2_emulated_is_fa4s_polynomial():
    x = np.linspace(-30, 0, 300_001, dtype=np.float32)
    got, ref = ws.exp2_emulated(x), np.exp2(x.astype(np.float64))
    rel = np.abs(got - ref) / ref
    assert rel.max() < 1e-4  # a degree-3 minimax fit on [0, 1): about 2^-13.5
    assert ws.exp2_emulated([0.0, 1.0, -1.0, 3.0]).tolist() == [1.0, 2.0, 0.5, 8.0]
    assert ws.exp2_emulated(-200.0) == pytest.approx(2.0**-127)  # clamped


@pytest.mark.parametrize(
    "kwargs", [{"chip_name": "A100-80GB"}, {"head_dim": 0}, {"precision": "fp9"}, {"seq_len": 0}]
)
def test_exp_balance_refuses_bad_input(kwargs):
    args = {"chip_name": "B200", "head_dim": 128} | kwargs
    with pytest.raises((ValueError, KeyError)) as err:
        ws.exp_balance(**args)
    assert str(next(iter(kwargs.values()))) in str(err.value)


# --- arch-specific targets -----------------------------------------------------------------------


def test_refused_names_are_read_from_a_ptxas_log():
    log = (
        "ptxas k.ptx, line 9; error   : Instruction 'wgmma.fence' not supported on .target "
        "'sm_90'\nptxas k.ptx, line 12; error   : Instruction 'wgmma.fence' not supported on "
        ".target 'sm_90'\nptxas k.ptx, line 40; error   : Feature '.kind::f16' not supported on "
        ".target 'sm_100'\nptxas fatal   : Ptx assembly aborted due to errors\n"
    )
    assert ws.refused_on_plain_target(log) == (("wgmma.fence",), (".kind::f16",))
    assert ws.refused_on_plain_target("") == ((), ())
    with pytest.raises(TypeError, match="ptxas_log=3"):
        ws.refused_on_plain_target(3)


def test_plain_targets_refuse_the_hopper_and_blackwell_instructions():
    hopper, blackwell = ws.PLAIN_TARGET["sm_90"], ws.PLAIN_TARGET["sm_100"]
    assert hopper[:3] == ("sm_90a", True, False) and blackwell[:3] == ("sm_100a", True, False)
    assert any(name.startswith("wgmma.mma_async") for name in hopper[3])
    assert "tcgen05.mma" in blackwell[3] and "setmaxnreg.inc" in hopper[3]
    # the register hand-offs the stored compiles hold are among the instructions refused
    for target, row in ws.PLAIN_TARGET.items():
        used = {f"setmaxnreg.{action}" for (action, _n), _count in
                ws.compiled("matmul_tma_ws", target).setmaxnreg}  # fmt: skip
        assert used and used <= set(row[3]), target


def test_stored_plain_target_facts_are_what_ptxas_says():
    if gi._triton_version() != ws.TRITON_VERSION:
        pytest.skip("the stored facts were compiled with another Triton version")
    assert ws.plain_target_facts() == ws.PLAIN_TARGET


@pytest.mark.parametrize("targets", [("sm_80",), "sm_90", (), ("sm_90",) * 3])
def test_plain_target_facts_refuses_bad_targets_before_compiling(monkeypatch, targets):
    monkeypatch.setattr(ws, "_plain_target_facts", lambda t: pytest.fail("compiled"))
    with pytest.raises((TypeError, ValueError), match="targets"):
        ws.plain_target_facts(targets)
