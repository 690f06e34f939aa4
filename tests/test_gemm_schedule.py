"""GEMM schedules against the Stream-K paper's worked figures and a literal walk of its algorithms.

Osama, Merrill, Cecka, Garland, Owens, "Stream-K", PPoPP '23 (arXiv 2301.03598): Figure 1 (a
384 × 384 × 128 GEMM in nine 128 × 128 tiles on a four-SM GPU: data-parallel 75 %, 128 × 64
tiles 90 %), Figure 2b (basic stream-K, 72 iterations per CTA with BLK_K = 4), §5.2 (the
hybrids, Figure 3's 896 × 384 × 128 GEMM).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import chip, gemm_schedule
from gpuperf.gemm_schedule import SCHEDULES, default_fixup_iterations, gemm_schedules

FOUR_SMS = chip("H100-SXM").replace(sm_count=4)  # the paper's hypothetical GPU


def by_name(*args, **kwargs):
    return {s.schedule: s for s in gemm_schedules(*args, **kwargs)}


# --- the paper's figures -------------------------------------------------------------------------


def test_figure_1_data_parallel_ceilings():
    tiles_128 = by_name(384, 384, 128, 128, 128, 4, FOUR_SMS, fixup_iterations=0)
    assert tiles_128["data-parallel"].tiles == 9
    assert tiles_128["data-parallel"].data_parallel_waves == 3
    assert tiles_128["data-parallel"].efficiency == pytest.approx(0.75)  # "cannot achieve more"
    halved = gemm_schedule.gemm_schedule(
        384, 384, 128, 128, 64, 4, FOUR_SMS, "data-parallel", fixup_iterations=0
    )
    assert (halved.tiles, halved.efficiency) == (18, pytest.approx(0.90))


def test_figure_2b_basic_stream_k():
    s = by_name(384, 384, 128, 128, 128, 4, FOUR_SMS, fixup_iterations=0)["stream-K"]
    assert s.iterations_per_tile == 32
    assert s.stream_k_iterations_per_cta == 72  # "a 128 × 128 × 288 work volume"
    assert s.efficiency == pytest.approx(1.0)  # "100% quantization efficiency"
    assert s.peers == 2  # 72 iterations per CTA against 32 per tile: a tile meets ≤ 2 CTAs


def test_section_5_2_hybrids():
    # 896 × 384 in 128 × 128 tiles: 21 tiles on 4 SMs, w = 5 full waves, 1 tile left over.
    h = by_name(896, 384, 128, 128, 128, 4, FOUR_SMS, fixup_iterations=0)["hybrid"]
    assert (h.tiles, h.stream_k_tiles, h.data_parallel_tiles) == (21, 5, 16)  # one wave fewer
    per_tile = h.iterations_per_tile
    assert per_tile < h.stream_k_iterations_per_cta < 2 * per_tile  # "more than one, < two"
    assert h.peers == 2  # "partials from one other contributing CTA"
    # w = 1: CUTLASS's get_blocks (the authors' reference implementation) forms the stream-K
    # wave from "the last full wave and the partial wave": all 5 tiles, 160 / 4 = 40 each.
    one = by_name(640, 128, 128, 128, 128, 4, FOUR_SMS, fixup_iterations=0)
    assert (one["hybrid"].data_parallel_tiles, one["hybrid"].stream_k_tiles) == (0, 5)
    assert one["hybrid"].stream_k_iterations_per_cta == 40 and one["hybrid"].peers == 2
    assert one["hybrid"].makespan_iterations == one["stream-K"].makespan_iterations
    # w = 0 (fewer tiles than SMs): only the partial wave, "data-parallel + one-tile stream-K".
    zero = by_name(384, 128, 128, 128, 128, 4, FOUR_SMS, fixup_iterations=0)["hybrid"]
    assert (zero.tiles, zero.data_parallel_tiles, zero.stream_k_tiles) == (3, 0, 3)
    # w = 2, r = 1: one full wave stays data-parallel, the last full wave + 1 tile are shared.
    two = by_name(1152, 128, 128, 128, 128, 4, FOUR_SMS, fixup_iterations=0)["hybrid"]
    assert (two.tiles, two.data_parallel_tiles, two.stream_k_tiles) == (9, 4, 5)


# --- a literal walk of Algorithm 5 and the waves ------------------------------------------------


def walk(tiles, per_tile, sms, schedule, fixup, ctas):
    """Assign every iteration to a CTA as the paper's algorithms do; return the busiest SM."""
    full, left = divmod(tiles, sms)
    if schedule in ("data-parallel", "persistent"):
        shared = 0
    elif schedule == "stream-K":
        shared = tiles
    else:
        shared = 0 if left == 0 else (left + sms if full >= 1 else left)
    work = [0.0] * sms
    per_cta = math.ceil(shared * per_tile / ctas) if shared else 0
    owners: dict[int, set[int]] = {}
    for it in range(shared * per_tile):  # Algorithm 5, iteration by iteration
        cta = it // per_cta
        work[cta] += 1
        owners.setdefault(it // per_tile, set()).add(cta)
    peers = max((len(c) for c in owners.values()), default=1)
    for t in range(tiles - shared):  # the data-parallel tiles: tile t on SM t mod SMs
        work[t % sms] += per_tile
    return max(work) + fixup * (peers - 1), peers


@settings(max_examples=60, deadline=None)
@given(
    tiles_m=st.integers(1, 12),
    tiles_n=st.integers(1, 12),
    k=st.integers(16, 2048),
    sms=st.integers(1, 40),
    fixup=st.sampled_from([0.0, 1.5, 4.0]),
)
def test_makespan_matches_the_walk(tiles_m, tiles_n, k, sms, fixup):
    gpu = chip("A100-80GB").replace(sm_count=sms)
    m, n = tiles_m * 64, tiles_n * 32
    for s in gemm_schedules(m, n, k, 64, 32, 16, gpu, fixup_iterations=fixup):
        ctas = s.stream_k_ctas
        busiest, peers = walk(s.tiles, s.iterations_per_tile, sms, s.schedule, fixup, ctas)
        assert s.peers == peers
        assert s.makespan_iterations == pytest.approx(busiest)
        assert s.efficiency <= 1 + 1e-12
        if s.stream_k_tiles >= sms:
            assert s.stream_k_ctas == sms  # a tile's worth or more each: every SM works
        elif s.stream_k_tiles:  # the grid the module chose is the best of all grids ≤ SMs
            best = min(
                walk(s.tiles, s.iterations_per_tile, sms, s.schedule, fixup, g)[0]
                for g in range(1, sms + 1)
            )
            assert s.makespan_iterations == pytest.approx(best)


def test_persistent_keeps_the_tail_and_stream_k_removes_it():
    # 2049² × 2048 on an H100 in 256 × 128 × 64 tiles: 153 tiles on 132 SMs, 32 iterations each.
    s = by_name(2049, 2049, 2048, 256, 128, 64, "H100-SXM", fixup_iterations=0)
    dp, pers, sk = s["data-parallel"], s["persistent"], s["stream-K"]
    assert dp.makespan_iterations == pers.makespan_iterations == 2 * 32
    assert sk.stream_k_iterations_per_cta == math.ceil(153 * 32 / 132)
    assert dp.efficiency == pytest.approx(153 / 264)


def test_time_is_iterations_at_the_per_sm_peak():
    h100 = chip("H100-SXM")
    s = gemm_schedule.gemm_schedule(4096, 4096, 4096, 128, 128, 64, h100, "data-parallel")
    per_sm = h100.peak_flops("bf16") / h100.sm_count
    assert s.iteration_s == pytest.approx(2 * 128 * 128 * 64 / per_sm)
    assert s.time_s == pytest.approx(s.makespan_iterations * s.iteration_s)


def test_default_fixup_is_the_bytes_ratio():
    assert default_fixup_iterations(128, 128, 64, "bf16") == pytest.approx(4.0)
    by_hand = 2 * 256 * 128 * 4 / (384 * 64 * 2)  # written + read fp32, over A + B panels
    assert default_fixup_iterations(256, 128, 64, "bf16") == pytest.approx(by_hand)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"schedule": "split-K"},
        {"block_m": 48},
        {"block_k": 3},
        {"k": 0},
        {"fixup_iterations": -1.0},
        {"fixup_iterations": math.nan},
        {"chip": "nope"},
        {"precision": "fp4", "chip": "H100-SXM"},
    ],
)
def test_bad_input_names_the_value(kwargs):
    args = {"m": 256, "n": 256, "k": 256, "block_m": 128, "block_n": 128, "block_k": 64}
    args |= {"chip": "H100-SXM"} | kwargs
    with pytest.raises((ValueError, KeyError)) as err:
        gemm_schedule.gemm_schedule(**args)
    assert any(str(v) in str(err.value) for v in kwargs.values())


def test_schedule_names():
    assert SCHEDULES == ("data-parallel", "persistent", "stream-K", "hybrid")


def test_the_bound_past_a_period_equals_the_walk(monkeypatch):
    # Past _MAX_WALK tiles the module bounds the peers from the tile starts' residues; with a
    # tiny walk limit the bound must still give what the walk gives (many tiles, any grid).
    for tiles, per_tile, per_cta in [(500, 32, 37), (900, 64, 48), (1000, 7, 3), (400, 16, 16)]:
        walked = gemm_schedule._most_peers(tiles, per_tile, per_cta)
        monkeypatch.setattr(gemm_schedule, "_MAX_WALK", 1)
        assert gemm_schedule._most_peers(tiles, per_tile, per_cta) == walked
        monkeypatch.setattr(gemm_schedule, "_MAX_WALK", 2**20)


def test_the_result_refuses_inconsistent_fields():
    good = gemm_schedule.gemm_schedule(2049, 2049, 2048, 256, 128, 64, "H100-SXM")
    assert good.tail_iterations == pytest.approx(good.makespan_iterations - 153 * 32 / 132)
    fields = {f: getattr(good, f) for f in good.__dataclass_fields__}
    for change, message in [
        ({"data_parallel_tiles": 5}, "must equal tiles=153"),
        ({"stream_k_ctas": 0}, "stream_k_ctas=0 must be 0 with no stream-K tiles"),
        ({"stream_k_ctas": 200}, "else 1 to sm_count=132"),
        ({"peers": 3}, "peers=3 must be 38 and 2"),
    ]:
        with pytest.raises(ValueError, match=message):
            gemm_schedule.GemmSchedule(**(fields | change))
