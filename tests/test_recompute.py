"""gpuperf.recompute: checkpointing memory/FLOPs, recompute-or-store, and the saved-bytes meter."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuperf import chip, recompute


def test_checkpointing_every_layer_keeps_inputs_only():
    # 8 GPT MLP blocks, b·s = 64 tokens, d = 256, fp32: A = 9·64·256·4, B = 64·256·4.
    b = 64 * 256 * 4
    plan = recompute.checkpointing(8, 9 * b, b, 1e9, every=1)
    assert plan.stored_bytes == 8 * b
    assert plan.baseline_bytes == 8 * 9 * b
    assert plan.peak_bytes == 7 * b + 9 * b  # (⌈L/k⌉ − 1)·B + k·A
    assert plan.recompute_flops == 8e9
    assert plan.compute_overhead == pytest.approx(1 / 3)
    assert plan.step_flops == pytest.approx(4 * 8e9)
    assert plan.memory_saving == pytest.approx(72 / 16)


def test_no_checkpointing_is_the_baseline_and_one_segment_saves_nothing_at_peak():
    none = recompute.checkpointing(12, 10.0, 1.0, 5.0, every=0)
    assert none.stored_bytes == none.peak_bytes == none.baseline_bytes == 120.0
    assert none.recompute_flops == 0 and none.compute_overhead == 0
    whole = recompute.checkpointing(12, 10.0, 1.0, 5.0, every=12)
    assert whole.stored_bytes == 1.0
    assert whole.peak_bytes == whole.baseline_bytes  # recomputing everything at once


def test_best_every_is_near_sqrt_l_b_over_a_and_brute_force_minimal():
    n_layers, a, b = 64, 4.0, 1.0
    best = recompute.best_checkpoint_every(n_layers, a, b)
    peaks = [recompute.checkpointing(n_layers, a, b, 0, k).peak_bytes for k in range(1, 65)]
    assert recompute.checkpointing(n_layers, a, b, 0, best).peak_bytes == min(peaks)
    assert abs(best - math.sqrt(n_layers * b / a)) <= 2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"every": 9}, "every=9 must be ≤ n_layers=8"),
        ({"every": -1}, "every=-1"),
        ({"input_bytes_per_layer": 20.0}, "must be ≤ activation_bytes_per_layer"),
    ],
)
def test_checkpointing_rejects_bad_arguments(kwargs, match):
    args = {
        "n_layers": 8,
        "activation_bytes_per_layer": 10.0,
        "input_bytes_per_layer": 1.0,
        "forward_flops_per_layer": 1.0,
        "every": 1,
        **kwargs,
    }
    with pytest.raises(ValueError, match=match):
        recompute.checkpointing(**args)


def test_recompute_or_store_gelu_on_h100():
    h100 = chip("H100-SXM")
    n = 2**26
    r = recompute.recompute_or_store(n, 8, h100, "bf16")
    assert r.store_bytes == 2 * n * 2
    assert r.store_time_s == pytest.approx(4 * n / h100.hbm_bandwidth)
    assert r.recompute_time_s == pytest.approx(8 * n / h100.peak_flops("fp32"))
    assert r.recompute_wins and r.speedup > 5


def test_recompute_loses_when_the_op_is_expensive():
    # An op with more FLOPs per element than the fp32 ridge point × 2 bytes × 2 loses.
    t4 = chip("T4")
    heavy = 2 * 2 * t4.ridge_point("fp32") * 2
    assert not recompute.recompute_or_store(1024, heavy, t4, "fp16").recompute_wins


def test_recompute_or_store_rejects_unknown_chip():
    with pytest.raises(KeyError):
        recompute.recompute_or_store(10, 1, "no-such-gpu")


def test_saved_tensor_bytes_matches_the_model_for_an_mlp_stack():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    n_layers, tokens, d = 3, 8, 16
    blocks = torch.nn.ModuleList(
        torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))
        for _ in range(n_layers)
    )
    x = torch.randn(tokens, d, requires_grad=True)

    def plain(x):
        for block in blocks:
            x = block(x)
        return x

    def checkpointed(x):
        for block in blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return x

    params = list(blocks.parameters())
    boundary = tokens * d * 4
    full = recompute.saved_tensor_bytes(plain, x, exclude=params)
    ckpt = recompute.saved_tensor_bytes(checkpointed, x, exclude=params)
    assert len(full.shapes) == full.n_tensors and len(ckpt.shapes) == ckpt.n_tensors
    plan = recompute.checkpointing(n_layers, 9 * boundary, boundary, 0, every=1)
    assert full.n_bytes == plan.baseline_bytes
    assert ckpt.n_bytes == plan.stored_bytes
    assert torch.allclose(full.output, ckpt.output)


def test_checkpoint_search_is_exact_and_bounded():
    for n_layers, a, b in ((1, 1.0, 1.0), (7, 9.0, 1.0), (80, 5.0, 5.0), (200, 3.0, 0.5)):
        peaks = {
            k: recompute.checkpointing(n_layers, a, b, 0, k).peak_bytes
            for k in range(1, n_layers + 1)
        }
        best = max(k for k, p in peaks.items() if p == min(peaks.values()))
        assert recompute.best_checkpoint_every(n_layers, a, b) == best
    # A million layers against an independent, vectorised brute force over every k.
    k = np.arange(1, 10**6 + 1)
    peaks = -(-(10**6) // k) * 1e6 - 1e6 + k * 9e6
    assert recompute.best_checkpoint_every(10**6, 9e6, 1e6) == k[peaks == peaks.min()].max()
    with pytest.raises(
        ValueError, match=r"n_layers=1e\+30 must be an integer ≥ 1 and ≤ 1000000000"
    ):
        recompute.best_checkpoint_every(1e30, 9e6, 1e6)


def test_overhead_of_layers_without_flops_is_the_limit():
    assert recompute.checkpointing(12, 9.0, 1.0, 0, 4).compute_overhead == pytest.approx(1 / 3)
    assert recompute.checkpointing(12, 9.0, 1.0, 0, 0).compute_overhead == 0.0
