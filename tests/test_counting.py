"""gpuperf.counting: what the interpreter counts, checked against the course's own cost models.

Each course kernel is counted on a small, awkward shape (partial blocks, sizes that are not
multiples of the tiles) and its requested bytes and ``tl.dot`` FLOPs are compared with the
formula its chapter teaches (gpuperf.cost, tiling, attention, inference) — an independent check
of every traffic formula in the book. Where the kernel does more or less than the formula on
purpose (two-pass online softmax, masked edge tiles), the test derives the difference.
"""

from __future__ import annotations

import math

import pytest

from gpuperf.runtime import configure_triton

configure_triton()
torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from gpuperf import attention, cost, inference, tiling  # noqa: E402
from gpuperf import counting as cnt  # noqa: E402
from gpuperf.kernels import (  # noqa: E402
    copy_strided,
    decode_attention_plain,
    decode_attention_split,
    matmul,
    matmul_naive,
    sin2cos2_fused,
    sin2cos2_unfused,
    softmax,
    softmax_online,
    transpose_naive,
    transpose_tiled,
    vector_add,
)
from gpuperf.kernels.copy import copy_cost  # noqa: E402
from gpuperf.kernels.flash_attention import (  # noqa: E402
    FlashConfig,
    _flash_backward,
    _flash_forward,
)
from gpuperf.kernels.fusion import sin2cos2_cost  # noqa: E402
from gpuperf.kernels.transpose import transpose_cost  # noqa: E402
from gpuperf.kernels.vector_add import vector_add_cost  # noqa: E402
from gpuperf.runtime import interpreting  # noqa: E402

pytestmark = pytest.mark.skipif(not interpreting(), reason="counting needs Triton's interpreter")


def _g():
    return torch.Generator().manual_seed(35)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=_g()).to(dtype)


def cdiv(a, b):
    return -(-a // b)


# ----------------------------------------------------------------------- item 1: one launch


def test_vector_add_counts_requested_bytes_and_leaves_results_unchanged():
    n = 3000  # three programs of 1024, the last one partial
    x, y = randn(n), randn(n) + 1
    plain = vector_add(x, y, BLOCK_SIZE=1024)
    c = cnt.count(vector_add, x, y, BLOCK_SIZE=1024)
    assert torch.equal(c.result, plain)  # counting only observes
    launch = c.launch
    assert launch.grid == (3, 1, 1) and launch.programs == 3
    model = vector_add_cost(n, "fp32")
    assert (launch.bytes_read, launch.bytes_written) == (model.bytes_read, model.bytes_written)
    assert launch.unique_bytes == launch.bytes  # nothing is read twice
    assert launch.sector_efficiency == 1.0
    loads = [s for s in launch.sites if s.kind == "load"]
    assert [s.tensor for s in loads] == ["x_ptr", "y_ptr"]
    assert all(s.executions == 3 and s.elements == n and s.element_bytes == 4 for s in loads)
    assert all(s.where.startswith("vector_add.py:") and "tl.load" in s.code for s in loads)
    # one fp32 add per lane, masked lanes included (the interpreter and a GPU compute them)
    assert launch.elementwise_flops == 3 * 1024 and launch.dot_flops == 0
    assert "not DRAM traffic" in launch.table()


def test_sectors_lines_and_efficiency_of_a_strided_copy():
    # fp32, stride 2: each 32-byte sector holds 4 useful elements → 8 bytes fetched per element.
    n_out, stride = 2048, 2
    x = randn(n_out * stride)
    launch = cnt.count(copy_strided, x, stride, BLOCK_SIZE=512).launch
    load = next(s for s in launch.sites if s.kind == "load")
    assert load.bytes == n_out * 4
    assert load.sectors == n_out * 4 * stride // 32
    assert load.lines == n_out * 4 * stride // 128
    assert load.sector_efficiency == pytest.approx(1 / stride)
    # the coalescing chapter's model of fetched bytes (gpuperf.kernels.copy.copy_cost)
    assert load.sector_bytes == copy_cost(n_out, "fp32", stride=stride).bytes_read
    # stride 8 and more: one sector per element, 4/32 used (the model caps at one sector)
    launch = cnt.count(copy_strided, randn(4096), 16, BLOCK_SIZE=256).launch
    load = next(s for s in launch.sites if s.kind == "load")
    assert load.sector_efficiency == pytest.approx(4 / 32)
    assert load.sector_bytes == copy_cost(256, "fp32", stride=16).bytes_read


def test_transposes_move_the_same_bytes_with_different_sector_efficiency():
    m, n = 48, 40  # awkward for 32×32 tiles
    x = randn(m, n)
    model = transpose_cost(m, n, "fp32")
    naive = cnt.count(transpose_naive, x, BLOCK_N=16).launch
    tiled = cnt.count(transpose_tiled, x, BLOCK_M=16, BLOCK_N=16).launch
    for launch in (naive, tiled):
        assert (launch.bytes_read, launch.bytes_written) == (model.bytes_read, model.bytes_written)
        assert launch.unique_bytes == launch.bytes
    store = next(s for s in naive.sites if s.kind == "store")
    assert store.sector_efficiency == pytest.approx(4 / 32)  # column writes: a sector each
    tstore = next(s for s in tiled.sites if s.kind == "store")
    assert tstore.sector_efficiency > 0.45  # 16 contiguous fp32 = two full sectors per row
    assert naive.sector_bytes > 2 * tiled.sector_bytes


def test_count_refuses_what_it_cannot_count():
    with pytest.raises(ValueError, match="launched no Triton kernel"):
        cnt.count(sin2cos2_unfused, randn(100))  # five torch kernels, no Triton launch
    with pytest.raises(TypeError, match="callable"):
        cnt.count(42)
    c = cnt.count(vector_add, randn(64), randn(64))
    with pytest.raises(KeyError, match="sites"):
        c.launch.site(1)
    with cnt.counting() as launches:
        vector_add(randn(64), randn(64))
        vector_add(randn(64), randn(64))
    assert len(launches) == 2
    with pytest.raises(ValueError, match="2 launches"):
        _ = cnt.Counted(None, tuple(launches)).launch
    with pytest.raises(TypeError, match="LaunchCount"):
        cnt.total([])


def test_hooks_are_removed_after_the_block():
    from triton.runtime import interpreter as interp

    before = dict(interp.interpreter_builder.__dict__)
    with cnt.counting():
        vector_add(randn(64), randn(64))
    assert dict(interp.interpreter_builder.__dict__).keys() == before.keys()
    with cnt.counting() as launches:
        pass
    assert launches == []


def test_strict_counting_refuses_an_access_outside_every_tensor_before_it_happens():
    import triton
    import triton.language as tl

    @triton.jit
    def shifted_copy(x_ptr, y_ptr, shift, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs + shift, tl.load(x_ptr + offs))

    x, y = torch.ones(16), torch.zeros(16)
    with cnt.counting(strict=True) as launches:  # inside y: counted as usual
        shifted_copy[(1,)](x, y, 0, BLOCK=16)
    assert launches[0].bytes == 2 * 64 and torch.equal(y, x)
    y = torch.zeros(16)
    with pytest.raises(Exception, match="store touches 4 element"), cnt.counting(strict=True):
        shifted_copy[(1,)](x, y, 4, BLOCK=16)  # the last 4 lanes land past y's end
    assert torch.equal(y, torch.zeros(16))  # refused before anything was written
    with cnt.counting() as launches:  # not strict: the same launch into a larger buffer runs
        big = torch.zeros(32)
        shifted_copy[(1,)](x, big[:16], 4, BLOCK=16)
    assert torch.equal(big[4:20], torch.ones(16))


def test_a_launch_crosses_processes_as_checked_plain_data():
    import json

    launch = cnt.count(vector_add, randn(100), randn(100), BLOCK_SIZE=64).launch
    data = json.loads(json.dumps(launch.as_data()))  # plain JSON: what a pipe carries
    assert cnt.LaunchCount.from_data(data) == launch
    for bad in ([], [1], {**data, "grid": 3}, {**data, "grid": "x"}, {**data, "sites": [["load"]]},
                {**data, "sites": [[1, 2]]}, {**data, "x": 1}, {**data, "unique_bytes_read": -1},
                {**data, "dot_flops": -1}, {**data, "kernel": ""}):  # fmt: skip
        with pytest.raises((TypeError, ValueError)):
            cnt.LaunchCount.from_data(bad)
    assert cnt.received(launch) is False  # no counting() block open: nothing to add it to
    with cnt.counting() as launches:
        assert cnt.received(launch) is True
    assert launches == [launch]
    with pytest.raises(TypeError, match="LaunchCount"):
        cnt.received(data)
    site = cnt.SiteCount("load", "<cell 3>", 7, "x = tl.load(p)", "p", 4, 1, 4, 16, 1, 1, 16)
    assert site.where == "cell 3 line 7"
    assert cnt.cell_file(3) == "<cell 3>" and cnt.cell_number("<cell 3>") == 3
    assert cnt.cell_number("kernel.py") is None and cnt.cell_number("<cell x>") is None


# ------------------------------------------------- item 4: the chapters' formulas, counted


def test_fused_sin2cos2_reads_once_and_writes_once():
    n = 1000
    for dtype, precision in ((torch.float32, "fp32"), (torch.float16, "fp16")):
        launch = cnt.count(sin2cos2_fused, randn(n, dtype=dtype), BLOCK_SIZE=256).launch
        model = sin2cos2_cost(n, precision, fused=True)
        assert (launch.bytes_read, launch.bytes_written) == (model.bytes_read, model.bytes_written)
        assert launch.special_ops == 2 * 4 * 256  # sin and cos on every lane of four blocks


@pytest.mark.parametrize("shape", [(7, 300), (3, 17)])
def test_softmax_fused_matches_cost_softmax_and_online_reads_twice(shape):
    rows, cols = shape
    x = randn(rows, cols)
    model = cost.softmax(rows, cols, "fp32", fused=True)
    fused = cnt.count(softmax, x).launch
    assert (fused.bytes_read, fused.bytes_written) == (model.bytes_read, model.bytes_written)
    online = cnt.count(softmax_online, x, BLOCK_N=128).launch
    # two passes over each row (max/sum, then normalise): twice the one-pass model's reads
    assert online.bytes_read == 2 * model.bytes_read
    assert online.bytes_written == model.bytes_written
    assert online.unique_bytes_read == model.bytes_read


@pytest.mark.parametrize(
    ("m", "n", "k", "bm", "bn", "bk"),
    [(48, 40, 36, 16, 16, 16), (64, 64, 64, 32, 16, 32), (33, 17, 50, 16, 32, 16)],
)
def test_tiled_matmul_bytes_and_flops_match_gpuperf_tiling(m, n, k, bm, bn, bk):
    a, b = randn(m, k), randn(k, n)
    launch = cnt.count(matmul, a, b, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk).launch
    t = tiling.tiled_matmul(m, n, k, bm, bn, bk, "fp32")
    assert launch.dot_flops == t.executed_flops  # whole tiles, padding included
    assert launch.bytes_read == t.hbm_bytes_read  # masked edges request nothing
    assert launch.bytes_written == t.hbm_bytes_written
    # each A element once per column of tiles, each B element once per row of tiles
    assert launch.bytes_read == 4 * (m * k * t.tiles_n + k * n * t.tiles_m)
    assert launch.unique_bytes == 4 * (m * k + k * n + m * n)
    assert launch.programs == t.tiles


def test_naive_matmul_reads_b_once_per_row_and_a_once_per_column_block():
    m, n, k, bn = 9, 40, 33, 16
    launch = cnt.count(matmul_naive, randn(m, k), randn(k, n), BLOCK_N=bn).launch
    assert launch.dot_flops == 0  # FMA only, no tl.dot
    # B: every program reads a K × BLOCK_N panel → all of B once per row of C (m times), as
    # naive_matmul_hbm_bytes counts; A: one row per program, shared by its BLOCK_N outputs.
    b_bytes = 4 * k * n * m
    a_bytes = 4 * m * k * cdiv(n, bn)
    assert launch.bytes_read == a_bytes + b_bytes
    naive = tiling.naive_matmul_hbm_bytes(m, n, k, "fp32")
    assert naive - 4 * m * n == 4 * 2 * m * n * k  # the formula: n reads of each A element
    assert launch.bytes_read < naive  # the course kernel reuses its A row across BLOCK_N


@pytest.mark.parametrize("causal", [False, True])
def test_flash_forward_bytes_match_hbm_traffic_flash(causal):
    batch_heads, seq, d, bm, bn = 2, 80, 24, 32, 16  # seq and d not multiples of the blocks
    q, k, v = (randn(batch_heads, seq, d) for _ in range(3))
    launch = cnt.count(_flash_forward, q, k, v, causal, FlashConfig(bm, bn)).launch
    flash = attention.hbm_traffic_flash(
        seq, d, 1, "fp32", batch=batch_heads, version=2, block_r=bm, block_c=bn
    )
    bd = max(16, 1 << (d - 1).bit_length())
    t_r = cdiv(seq, bm)
    if not causal:
        assert launch.bytes_read == flash.bytes_read
        assert launch.bytes_written == flash.bytes_written
        # two dots of (BM × BD) by (BD × BN) per (query block, key block): padded tiles
        assert launch.dot_flops == batch_heads * t_r * cdiv(seq, bn) * 2 * (2 * bm * bn * bd)
        ratio = launch.dot_flops / cost.attention_flops(1, batch_heads, seq, d)
        assert ratio == pytest.approx(t_r * bm * cdiv(seq, bn) * bn * bd / (seq * seq * d))
    else:  # key blocks above the diagonal are skipped: fewer reads than the dense formula
        assert launch.bytes_written == flash.bytes_written
        assert launch.bytes_read < flash.bytes_read
        kv_read = sum(
            min(bn, seq - j * bn)
            for i in range(t_r)
            for j in range(cdiv(min(seq, (i + 1) * bm), bn))
        )
        assert launch.bytes_read == 4 * batch_heads * (seq * d + 2 * kv_read * d)
    # the N × N scores never reach global memory: unique bytes are Q, K, V, O and the logsumexp
    assert launch.unique_bytes == 4 * batch_heads * (4 * seq * d + seq)


def test_flash_bytes_grow_as_n_squared_d_squared_over_m_by_counting():
    # Θ(N²d²/M): doubling the query block halves the K/V streaming term.
    d, seq = 16, 128
    q, k, v = (randn(1, seq, d) for _ in range(3))
    reads = {}
    for bm in (16, 32, 64):
        reads[bm] = cnt.count(_flash_forward, q, k, v, False, FlashConfig(bm, 16)).launch
    stream = {bm: r.bytes_read - 4 * seq * d for bm, r in reads.items()}
    assert stream[16] == 2 * stream[32] == 4 * stream[64] == 4 * 2 * seq * d * cdiv(seq, 16)


def test_flash_backward_does_seven_tile_matmuls_per_tile_pair():
    bh, seq, d, bm, bn = 1, 48, 16, 16, 16
    q, k, v, do = (randn(bh, seq, d) for _ in range(4))
    config = FlashConfig(bm, bn)
    o, lse = _flash_forward(q, k, v, False, config)
    with cnt.counting() as launches:
        _flash_backward(q, k, v, o, lse, do, False, config)
    dkdv, dq = launches
    forward = cost.attention_flops(1, bh, seq, d)  # 4·N²·d, the chapters' count
    # dK/dV kernel: S, dV, dP, dK (4 matmuls); dQ kernel recomputes S and dP, then dQ (3):
    # 7 × 2·N²·d = 3.5 × the forward — the chapter's 2.5× counts the paper's 5 matmuls.
    assert dkdv.dot_flops == 2 * forward
    assert dq.dot_flops == 1.5 * forward
    assert (dkdv.dot_flops + dq.dot_flops) / forward == 3.5
    t_c, t_r = cdiv(seq, bn), cdiv(seq, bm)
    # dK/dV: K, V once; Q, dO (fp32) and L, Δ streamed once per key block
    assert dkdv.bytes_read == 4 * bh * (2 * seq * d + t_c * (2 * seq * d + 2 * seq))
    assert dkdv.bytes_written == 4 * bh * 2 * seq * d
    # dQ: Q, dO, L, Δ once; K, V streamed once per query block
    assert dq.bytes_read == 4 * bh * (2 * seq * d + 2 * seq + t_r * 2 * seq * d)
    assert dq.bytes_written == 4 * bh * seq * d


@pytest.mark.parametrize("num_splits", [1, 3])
def test_decode_attention_reads_the_cache_once_and_the_combine_matches_split_kv(num_splits):
    batch, heads, kv_heads, ctx, d = 2, 4, 2, 100, 24
    q = randn(batch, heads, d)
    kc, vc = randn(batch, kv_heads, ctx, d), randn(batch, kv_heads, ctx, d) * 0.5
    with cnt.counting() as launches:
        if num_splits == 1:
            decode_attention_plain(q, kc, vc, BLOCK_N=16)
        else:
            decode_attention_split(q, kc, vc, num_splits=num_splits, BLOCK_N=16)
    model = inference.decode_attention_cost(batch, heads, kv_heads, ctx, d, "fp32")
    split = launches[0]
    assert split.kernel == "_decode_split_kernel"
    # the cache once (the model's reads), and the group's queries once per split: each split's
    # program loads them again — (splits − 1)·B·H·d more elements than the model counts
    q_bytes = batch * heads * d * 4
    assert split.bytes_read == model.bytes_read + (num_splits - 1) * q_bytes
    assert split.unique_bytes_read == model.bytes_read
    plan = inference.split_kv(batch, heads, kv_heads, ctx, d, "H100", num_splits, 16, "fp32")
    # SplitKV counts those queries (fixed by counting): the cache once, the queries per split
    assert split.bytes_read == plan.kv_bytes + plan.query_bytes
    assert split.bytes_read + plan.combine_bytes == model.bytes_read + plan.split_overhead_bytes
    if num_splits == 1:
        assert len(launches) == 1 and split.bytes_written == model.bytes_written
        assert plan.combine_bytes == 0
    else:
        combine = launches[1]
        partials = split.bytes_written  # fp32 o, m, ℓ per (sequence, head, split)
        assert combine.bytes_read == partials
        assert combine.bytes_written == model.bytes_written
        assert partials + combine.bytes_read == plan.combine_bytes
    # FLOPs: two dots per key block, the group's 2 queries padded to BLOCK_G = 16 rows and
    # d = 24 to BLOCK_D = 32: the padded tiles are what tl.dot executes
    assert split.dot_flops == batch * kv_heads * cdiv(ctx, 16) * 2 * (2 * 16 * 16 * 32)
    assert split.dot_flops > model.flops


# ------------------------------------------------------------------- item 3: the roofline


def test_roofline_place_from_counts_on_any_chip():
    n = 4096
    c = cnt.count(vector_add, randn(n), randn(n), BLOCK_SIZE=1024)
    from gpuperf.hardware import chip

    h100 = chip("H100")
    p = cnt.roofline_place(c, "H100", "fp32")
    assert p.bound == "memory" and p.measured_s is None and p.fraction_of_floor is None
    assert p.bytes == 3 * n * 4 and p.flops == n
    assert p.floor_s == pytest.approx(3 * n * 4 / h100.hbm_bandwidth)
    assert p.intensity == pytest.approx(1 / 12)
    assert p.ridge == pytest.approx(h100.peak_flops("fp32") / h100.hbm_bandwidth)
    text = p.format()
    assert "not DRAM traffic" in text and "not measured" in text
    # a time measured on a GPU sits beside the floor (here a value handed in, never shown
    # as a measurement of anything: the format is what is tested)
    q = cnt.roofline_place(c.launch, "A100", "fp32", measured_s=1e-3)
    assert q.fraction_of_floor == pytest.approx(q.floor_s / 1e-3)
    assert "measured by gpuperf.bench" in q.format()
    u = cnt.roofline_place(c.launch, "T4", unique=True)
    assert u.bytes == c.launch.unique_bytes
    with pytest.raises(TypeError, match="LaunchCount"):
        cnt.roofline_place("vector_add", "H100")
    with pytest.raises(ValueError, match="measured_s"):
        cnt.roofline_place(c, "H100", measured_s=-1.0)
    # a matmul's counted dot FLOPs on the tensor-core roof
    m = cnt.count(matmul, randn(64, 64, dtype=torch.float16), randn(64, 64, dtype=torch.float16))
    pm = cnt.roofline_place(m, "H100", "fp16")
    assert pm.ridge == pytest.approx(h100.peak_flops("fp16") / h100.hbm_bandwidth)


def test_measure_if_gpu_returns_none_without_a_gpu():
    assert cnt.measure_if_gpu(lambda: vector_add(randn(64), randn(64))) is None
    with pytest.raises(TypeError, match="callable"):
        cnt.measure_if_gpu(3)


def test_counting_refuses_when_kernels_are_compiled(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(RuntimeError, match="interpreter"), cnt.counting():
        pass


def test_overhead_is_small_against_the_interpreter():
    import time

    x, y = randn(1 << 15), randn(1 << 15)

    def best(f):
        times = []
        for _ in range(3):
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
        return min(times)

    vector_add(x, y)
    plain = best(lambda: vector_add(x, y, BLOCK_SIZE=1024))
    counted = best(lambda: cnt.count(vector_add, x, y, BLOCK_SIZE=1024))
    assert counted < 4 * plain + 0.05, (plain, counted)  # stated: ≈ 1.1–1.8× measured
    assert math.isfinite(counted)


def test_l2_model_shows_why_grouped_launch_order_helps():
    a, b = randn(128, 32), randn(32, 128)
    dram = {}
    for group_m in (1, 4):
        with cnt.counting(trace=True) as launches:
            matmul(a, b, BLOCK_M=16, BLOCK_N=16, BLOCK_K=32, GROUP_M=group_m)
        launch = launches[0]
        model = cnt.l2_model(launch, 16 * 1024, 8)
        assert model.unique_bytes_read <= model.dram_bytes_read <= model.requested_bytes_read
        dram[group_m] = model.dram_bytes_read
        # a cache that holds everything fetches each line once: the unique bytes
        assert cnt.l2_model(launch, 1 << 30, 8).dram_bytes_read == launch.unique_bytes_read
    assert dram[4] < dram[1]  # a wave of 8 programs: 8 tiles in a row vs a 4 × 2 block
    with pytest.raises(ValueError, match="trace"):
        cnt.l2_model(cnt.count(vector_add, randn(64), randn(64)).launch, 1 << 20, 4)
