"""The divergence model against a per-warp loop and the kernels' branch."""

from __future__ import annotations

import numpy as np
import pytest

from gpuperf import divergence


def _loop_count(paths, warp=32):
    return [len(set(paths[i : i + warp])) for i in range(0, len(paths), warp)]


@pytest.mark.parametrize("period", [1, 2, 3, 8, 16, 32, 64, 1024])
def test_periodic_branch_matches_a_per_warp_loop(period):
    n = 4096
    paths = [(i // period) % 2 for i in range(n)]
    result = divergence.periodic_branch(n, period)
    assert list(result.paths_per_warp) == _loop_count(paths)


def test_period_one_splits_every_warp_and_period_32_none():
    split = divergence.periodic_branch(1 << 16, 1)
    assert (split.mean_paths, split.diverged_fraction, split.simt_efficiency) == (2, 1, 0.5)
    uniform = divergence.periodic_branch(1 << 16, 32)
    assert (uniform.mean_paths, uniform.diverged_fraction, uniform.simt_efficiency) == (1, 0, 1)
    # Period 48: warps straddle a boundary two times in three.
    assert divergence.periodic_branch(96 * 32, 48).diverged_fraction == pytest.approx(1 / 3)


def test_many_paths_in_one_warp():
    result = divergence.warp_divergence(np.arange(64) % 4)  # a 4-way switch on the lane
    assert list(result.paths_per_warp) == [4, 4]
    assert result.simt_efficiency == 0.25


def test_branch_cost_doubles_the_math_not_the_bytes():
    uniform = divergence.branch_cost(1 << 20, iters=8, paths=1)
    split = divergence.branch_cost(1 << 20, iters=8, paths=2)
    assert split.flops == 2 * uniform.flops == 2 * 8 * (1 << 20)
    assert split.bytes == uniform.bytes == 2 * 4 * (1 << 20)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: divergence.warp_divergence(np.zeros(33)), "multiple of warp_size=32"),
        (lambda: divergence.warp_divergence([]), "non-empty"),
        (lambda: divergence.periodic_branch(64, 0), "period=0"),
        (lambda: divergence.periodic_branch(2.5, 1), "n_threads=2.5"),
        (lambda: divergence.branch_cost(64, 8, 0.5), "paths=0.5"),
        (lambda: divergence.branch_cost(64, 0, 1), "iters=0"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_periodic_branch_is_bounded_and_matches_the_per_thread_count():
    for n, period in ((4096, 1), (4096, 24), (4096, 64), (1024, 1000)):
        fast = divergence.periodic_branch(n, period).paths_per_warp
        slow = divergence.warp_divergence((np.arange(n) // period) % 2).paths_per_warp
        assert fast.tolist() == slow.tolist()
    with pytest.raises(
        ValueError, match=r"n_threads=10000000000 must be an integer ≥ 1 and ≤ 67108864"
    ):
        divergence.periodic_branch(10**10, 1)
    with pytest.raises(ValueError, match="n_threads=33 must be a multiple of warp_size=32"):
        divergence.periodic_branch(33, 1)


def test_branch_cost_paths_must_be_a_number_in_range():
    for bad in (True, "2", float("nan"), 0.5, 33):
        with pytest.raises(ValueError, match="paths="):
            divergence.branch_cost(1024, 4, bad)


@pytest.mark.parametrize("period", range(1, 130))
def test_a_warp_diverges_exactly_when_a_path_boundary_falls_inside_it(period):
    """Review 2026-12 (R3, finding 4): the rule is the run length, not the repeat period.

    3.5's answer 4 once said a branch diverges in every warp because its pattern repeats every
    2p threads, "not a multiple of 32". Derived by hand: warp w covers threads 32w … 32w+31 and
    runs both paths iff some multiple of p lies in 32w+1 … 32w+31.
    """
    n = 32 * 2 * 3 * 5 * 7 * 11  # whole warps, many patterns' worth
    fast = divergence.periodic_branch(n, period).paths_per_warp
    by_hand = [
        2 if any(t % period == 0 for t in range(32 * w + 1, 32 * w + 32)) else 1
        for w in range(n // 32)
    ]
    assert fast.tolist() == by_hand
    fraction = divergence.periodic_branch(n, period).diverged_fraction
    if period < 32:  # runs shorter than a warp: a boundary inside every warp
        assert fraction == 1
    if period % 32 == 0:  # boundaries only on warp edges
        assert fraction == 0


def test_the_repeat_period_is_not_the_rule():
    """p = 48 repeats every 96 threads (a multiple of 32) yet splits a third of the warps;
    p = 40 repeats every 80 (not a multiple) and splits 60 %, not all of them."""
    n = 32 * 3 * 5 * 1024  # whole cycles of both patterns (3 and 5 warps)
    assert divergence.periodic_branch(n, 48).diverged_fraction == pytest.approx(1 / 3)
    assert divergence.periodic_branch(n, 40).diverged_fraction == pytest.approx(0.6)
    assert divergence.periodic_branch(n, 24).diverged_fraction == 1
    assert divergence.periodic_branch(n, 96).diverged_fraction == 0


@pytest.mark.parametrize("warpgroups", [1, 2, 3, 4])
def test_roles_of_whole_warpgroups_never_split_a_warp(warpgroups):
    """3.5's warp-specialisation section: a branch on threadIdx.x / 128 is uniform per warp."""
    roles = divergence.warp_divergence(np.arange(128 * warpgroups) // 128)
    assert roles.diverged_fraction == 0
    # Problem 9, by hand: roles of 80 threads split warps 2 (64–95) and 7 (224–255) of 12.
    if warpgroups == 3:
        eighty = divergence.warp_divergence(np.arange(384) // 80)
        assert np.flatnonzero(eighty.paths_per_warp > 1).tolist() == [2, 7]
