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


# --- one transformer layer: the 34 + 5·a·s/h count and the recompute modes --------------------


def test_activation_terms_add_up_to_34_and_5():
    terms = recompute.layer_activation_terms()
    assert sum(t.sbh_bytes for t in terms) == 34
    assert sum(t.as2b_bytes for t in terms) == 5
    assert sum(t.sbh_bytes for t in terms if t.tensor_parallel) == 24
    assert sum(t.sbh_bytes for t in terms if not t.tensor_parallel) == 10
    # Selective drops exactly the score-sized tensors; full keeps exactly the 2·sbh input.
    assert all(t.selective == (t.as2b_bytes > 0) for t in terms)
    assert [t.sbh_bytes for t in terms if t.layer_input] == [2]
    # Every score-sized tensor is split by tensor parallelism (heads are split).
    assert all(t.tensor_parallel for t in terms if t.as2b_bytes)


def _closed_form(s, b, h, a, t, sp, mode):
    # The closed forms per mode and parallelism, written independently of the term table.
    if mode == "full":
        return 2 * s * b * h / (t if sp else 1)
    scores = 0 if mode == "selective" else 5 * a * s / h
    if sp:
        return s * b * h * (34 + scores) / t
    return s * b * h * (10 + 24 / t + scores / t)


@pytest.mark.parametrize("mode", ["none", "selective", "full"])
@pytest.mark.parametrize("sp", [False, True])
@pytest.mark.parametrize(
    ("s", "b", "h", "a", "t"),
    [(2048, 1, 4096, 32, 1), (2048, 4, 12288, 96, 8), (4096, 2, 5120, 40, 4), (96, 3, 60, 6, 2)],
)
def test_layer_activations_match_the_closed_forms(s, b, h, a, t, sp, mode):
    plan = recompute.layer_activations(s, b, h, a, t, sp, mode)
    assert plan.activation_bytes == pytest.approx(_closed_form(s, b, h, a, t, sp, mode))
    assert plan.baseline_bytes == pytest.approx(_closed_form(s, b, h, a, t, sp, "none"))
    assert plan.bytes_per_sbh == pytest.approx(plan.activation_bytes / (s * b * h))


def test_worked_numbers_by_hand():
    # s = 2048, b = 1, h = 4096, a = 32: 5·a·s/h = 80, so 114 bytes per s·b·h element.
    plan = recompute.layer_activations(2048, 1, 4096, 32)
    assert plan.bytes_per_sbh == 114
    assert plan.activation_bytes == 114 * 2048 * 4096  # 956,301,312 B ≈ 0.96 GB per layer
    selective = recompute.layer_activations(2048, 1, 4096, 32, mode="selective")
    assert selective.activation_bytes == 34 * 2048 * 4096
    assert selective.memory_saving == pytest.approx(114 / 34)
    full = recompute.layer_activations(2048, 1, 4096, 32, mode="full")
    assert full.activation_bytes == 2 * 2048 * 4096 and full.memory_saving == 57


def test_layer_flops_are_the_matmuls_of_the_layer():
    from gpuperf import cost

    s, b, h, a = 1024, 2, 768, 12
    tokens = s * b
    dense = sum(
        cost.matmul(tokens, n, k).flops for n, k in ((3 * h, h), (h, h), (4 * h, h), (h, 4 * h))
    )
    attention = cost.attention_flops(b, a, s, h // a)
    assert recompute.layer_forward_flops(s, b, h) == pytest.approx(dense + attention)
    for t in (1, 4):
        none = recompute.layer_activations(s, b, h, a, t, mode="none")
        sel = recompute.layer_activations(s, b, h, a, t, mode="selective")
        full = recompute.layer_activations(s, b, h, a, t, mode="full")
        assert none.forward_flops == pytest.approx((dense + attention) / t)
        assert none.recompute_flops == 0 and none.compute_overhead == 0
        assert full.compute_overhead == pytest.approx(1 / 3)
        assert full.step_flops == pytest.approx(4 * none.forward_flops)
        # Selective (Megatron's checkpointed core attention): QKᵀ and ·V again, all of
        # attention's forward matmul FLOPs.
        assert sel.recompute_flops == pytest.approx(attention / t)
        ratio = s / h  # 4bs²h / (72bsh² + 12bs²h) = (s/h) / (18 + 3 s/h)
        assert sel.compute_overhead == pytest.approx(ratio / (18 + 3 * ratio))


def test_peak_and_the_mode_that_fits_a_budget():
    args = (2048, 1, 4096, 32)
    plans = {m: recompute.layer_activations(*args, mode=m) for m in recompute.RECOMPUTE_MODES}
    a_none = plans["none"].activation_bytes
    assert plans["none"].peak_bytes(32) == 32 * a_none
    assert plans["full"].peak_bytes(32) == 31 * 2 * 2048 * 4096 + a_none
    assert plans["selective"].peak_bytes(32) == 31 * plans["selective"].activation_bytes + a_none
    fit = recompute.recompute_mode_for_budget
    assert fit(32 * a_none, 32, *args) == "none"
    assert fit(32 * a_none - 1, 32, *args) == "selective"
    assert fit(plans["selective"].peak_bytes(32) - 1, 32, *args) == "full"
    assert fit(plans["full"].peak_bytes(32) - 1, 32, *args) is None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"heads": 5}, "heads=5 must divide hidden=64"),
        ({"tensor_parallel": 3}, "tensor_parallel=3 must divide heads=8"),
        ({"seq_len": 6, "tensor_parallel": 4, "sequence_parallel": True}, "must divide seq_len=6"),
        ({"mode": "attention"}, "mode='attention' is not one of"),
        ({"sequence_parallel": "yes"}, "sequence_parallel='yes' must be True or False"),
        ({"micro_batch": 0}, "micro_batch=0 must be an integer ≥ 1"),
    ],
)
def test_layer_activations_reject_bad_arguments(kwargs, match):
    args = {"seq_len": 16, "micro_batch": 2, "hidden": 64, "heads": 8, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        recompute.layer_activations(**args)


@pytest.mark.parametrize("mode", ["none", "selective", "full"])
def test_measured_saved_bytes_equal_the_term_table(mode):
    """An independent check: autograd's own saved tensors, counted, equal the model's bytes.

    The only extra tensors are LayerNorm's per-token mean and 1/σ (4 × s·b values), which the
    16-bit formula leaves out; with full recomputation the layer keeps its input alone.
    """
    torch = pytest.importorskip("torch")
    s, b, h, a = 12, 3, 32, 4
    torch.manual_seed(0)
    layer = recompute.transformer_layer(h, a, mode, dtype=torch.bfloat16)
    x = torch.randn(s, b, h, dtype=torch.bfloat16, requires_grad=True)
    saved = recompute.saved_tensor_bytes(layer, x, exclude=list(layer.parameters()))
    _, mean, _ = torch.native_layer_norm(x.detach(), (h,), None, None, 1e-5)
    stats = 0 if mode == "full" else 4 * s * b * mean.element_size()
    model = recompute.layer_activations(s, b, h, a, mode=mode)
    assert saved.n_bytes == model.activation_bytes + stats


def test_recomputing_modes_give_the_same_gradients():
    torch = pytest.importorskip("torch")
    from gpuperf.tolerances import tolerance

    s, b, h, a = 10, 2, 16, 4
    x = torch.randn(s, b, h)
    grads = {}
    for mode in recompute.RECOMPUTE_MODES:
        torch.manual_seed(1)
        layer = recompute.transformer_layer(h, a, mode)
        xi = x.clone().requires_grad_(True)
        torch.manual_seed(2)  # same dropout masks in every mode (checkpoint replays the RNG)
        layer(xi).square().sum().backward()
        grads[mode] = (xi.grad, layer.qkv.weight.grad)
    rtol, atol = tolerance("fp32")
    for mode in ("selective", "full"):
        for got, want in zip(grads[mode], grads["none"], strict=True):
            torch.testing.assert_close(got, want, rtol=rtol, atol=atol)
    with pytest.raises(ValueError, match="hidden=8192 must be an integer"):
        recompute.transformer_layer(8192, 64)


def test_selective_overhead_reconciles_with_the_papers_2_7_percent():
    # Korthikanti et al. 2022, §5: selective recomputation costs GPT-3 (h = 12288, s = 2048,
    # L = 96) 2.7 % and MT-NLG (h = 20480, L = 105) 1.6 % FLOPs; Appendix A computes it as
    # hardware FLOPs (Eq. 8) over model FLOPs (Eq. 7), with the evaluation's v = 51,200.
    def paper(s, h, n, v=51200):  # Eq. 8 / Eq. 7 − 1, written out independently
        return (1 + s / (3 * h) + v / (12 * h * n)) / (1 + s / (6 * h) + v / (12 * h * n)) - 1

    for h, n, quoted in [(12288, 96, 0.027), (20480, 105, 0.016)]:
        model = recompute.model_flops_per_iteration(2048, h, n)
        hardware = recompute.hardware_flops_per_iteration(2048, h, n)
        assert hardware / model - 1 == pytest.approx(paper(2048, h, n))
        assert round(hardware / model - 1, 3) == quoted
        # Eq. 7 is three times the forward matmuls of every layer plus the logits' 2·s·h·v.
        forward = n * recompute.layer_forward_flops(2048, 1, h) + 2 * 2048 * h * 51200
        assert model == pytest.approx(3 * forward)
        # Eq. 8 adds 12·s²·h per layer: three times the 4·s²·h the course (and torch) count.
        added = (hardware - model) / n
        assert added == pytest.approx(12 * 2048**2 * h)
        assert added == pytest.approx(3 * recompute.selective_recompute_flops(2048, 1, h))
    # Eq. 9's approximation 1 + s/(6h) overstates GPT-3's ratio slightly.
    assert paper(2048, 12288, 96) < 2048 / (6 * 12288)
    # Counted with 4bs²h over a training step, the course's overhead is a third of 4s/(24h+4s).
    s, h, a = 2048, 12288, 96
    per_forward = 4 * s / (24 * h + 4 * s)
    plan = recompute.layer_activations(s, 1, h, a, mode="selective")
    assert plan.recompute_flops / plan.forward_flops == pytest.approx(per_forward)
    assert plan.compute_overhead == pytest.approx(per_forward / 3)
    assert recompute.model_flops_per_iteration(2048, h, 96, micro_batch=4) == pytest.approx(
        4 * recompute.model_flops_per_iteration(2048, h, 96)
    )
    with pytest.raises(ValueError, match="vocab_size"):
        recompute.model_flops_per_iteration(2048, h, 96, vocab_size=0)


@pytest.mark.parametrize("early_stop", [False, True])
def test_recomputed_flops_counted_by_torch(early_stop):
    """An independent count: torch's FlopCounterMode over forward + backward, minus the same
    without recomputation, is what the backward pass re-ran. PyTorch's non-reentrant checkpoint
    stops recomputing once every saved tensor is rebuilt, so it skips the product with V."""
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import set_checkpoint_early_stop
    from torch.utils.flop_counter import FlopCounterMode

    s, b, h, a = 16, 2, 32, 4
    flops = {}
    for mode in recompute.RECOMPUTE_MODES:
        torch.manual_seed(0)
        layer = recompute.transformer_layer(h, a, mode)
        x = torch.randn(s, b, h, requires_grad=True)
        with set_checkpoint_early_stop(early_stop), FlopCounterMode(display=False) as counter:
            layer(x).sum().backward()
        flops[mode] = counter.get_total_flops()
    selective = recompute.selective_recompute_flops(s, b, h, early_stop=early_stop)
    assert flops["selective"] - flops["none"] == selective
    assert selective == (2 if early_stop else 4) * b * s * s * h
    if not early_stop:
        plan = recompute.layer_activations(s, b, h, a, mode="selective")
        assert flops["selective"] - flops["none"] == plan.recompute_flops
    full = recompute.layer_activations(s, b, h, a, mode="full")
    assert flops["full"] - flops["none"] == full.recompute_flops == full.forward_flops


MODERN_SBH = 2 + 2 + 4 + 2 + 2 + 2 + 2 + 4 * 2 * 8 / 3  # 37⅓: see the term table


def test_the_other_rows_of_the_activation_table():
    flash = recompute.layer_activation_terms("gpt", "flash")
    assert sum(t.sbh_bytes for t in flash) == 34 and sum(t.as2b_bytes for t in flash) == 0
    assert [t.asb_bytes for t in flash if t.asb_bytes] == [4]  # one fp32 log-sum-exp per row
    assert not any(t.selective for t in flash)
    modern = recompute.layer_activation_terms("modern")
    assert sum(t.sbh_bytes for t in modern) == pytest.approx(MODERN_SBH)
    assert sum(t.as2b_bytes for t in modern) == 2  # probabilities only: no dropout
    assert sum(t.sbh_bytes for t in modern if not t.tensor_parallel) == 8
    assert [t.sbh_bytes for t in modern if t.layer_input] == [2]
    modern_flash = recompute.layer_activation_terms("modern", "flash")
    assert sum(t.sbh_bytes for t in modern_flash) == pytest.approx(MODERN_SBH)
    assert sum(t.asb_bytes for t in modern_flash) == 4


@pytest.mark.parametrize("t", [1, 4])
def test_flash_and_modern_closed_forms(t):
    s, b, h, a = 4096, 2, 6144, 48
    flash = recompute.layer_activations(s, b, h, a, t, attention="flash")
    assert flash.activation_bytes == pytest.approx(s * b * h * (10 + 24 / t) + 4 * a * s * b / t)
    assert flash.recompute_flops == pytest.approx(2 * b * s * s * h / t)  # FA's own QKᵀ again
    selective = recompute.layer_activations(s, b, h, a, t, mode="selective", attention="flash")
    assert selective.activation_bytes == flash.activation_bytes
    assert selective.recompute_flops == flash.recompute_flops
    standard_selective = recompute.layer_activations(s, b, h, a, t, mode="selective")
    assert flash.recompute_flops == standard_selective.recompute_flops / 2
    modern = recompute.layer_activations(s, b, h, a, t, block="modern")
    split = MODERN_SBH - 8
    assert modern.activation_bytes == pytest.approx(
        s * b * h * (8 + split / t) + 2 * a * s * s * b / t
    )
    assert modern.forward_flops == recompute.layer_forward_flops(s, b, h) / t


@pytest.mark.parametrize("mode", ["none", "selective", "full"])
@pytest.mark.parametrize(("block", "attention"), [("gpt", "flash"), ("modern", "standard"),
                                                  ("modern", "flash")])  # fmt: skip
def test_measured_saved_bytes_of_the_other_rows(block, attention, mode):
    """Autograd's saved tensors equal the model for FlashAttention (torch's CPU flash kernel) and
    the modern block; the extra tensors are the norms' per-token fp32 statistics."""
    torch = pytest.importorskip("torch")
    s, b, h, a = 12, 3, 48, 4
    torch.manual_seed(0)
    layer = recompute.transformer_layer(
        h, a, mode, block=block, attention=attention, dtype=torch.bfloat16, max_seq_len=16
    )
    x = torch.randn(s, b, h, dtype=torch.bfloat16, requires_grad=True)
    excluded = [*layer.parameters(), *layer.buffers()]
    saved = recompute.saved_tensor_bytes(layer, x, exclude=excluded)
    if mode == "full":
        stats = 0
    elif block == "gpt":  # LayerNorm: mean and 1/σ per token, two norms, in the input's dtype
        stats = 4 * s * b * 2
    else:  # RMSNorm: one fp32 1/rms per token, two norms
        stats = 2 * s * b * 4
    model = recompute.layer_activations(s, b, h, a, mode=mode, block=block, attention=attention)
    assert saved.n_bytes == model.activation_bytes + stats


def test_modern_block_gradients_agree_across_modes_and_attentions():
    torch = pytest.importorskip("torch")
    from gpuperf.tolerances import tolerance

    s, b, h, a = 10, 2, 24, 4
    x = torch.randn(s, b, h)
    grads = {}
    for attention in recompute.ATTENTIONS:
        for mode in recompute.RECOMPUTE_MODES:
            torch.manual_seed(1)
            layer = recompute.transformer_layer(
                h, a, mode, block="modern", attention=attention, max_seq_len=16
            )
            xi = x.clone().requires_grad_(True)
            layer(xi).square().sum().backward()
            grads[attention, mode] = xi.grad
    rtol, atol = tolerance("fp32")
    for grad in grads.values():
        torch.testing.assert_close(grad, grads["standard", "none"], rtol=rtol, atol=atol)


def test_the_fused_rms_norm_matches_torch_and_its_gradient_is_right():
    torch = pytest.importorskip("torch")
    from gpuperf.recompute import _rms_norm_function

    rms_norm = _rms_norm_function(torch)
    x = torch.randn(5, 3, 12, dtype=torch.float64, requires_grad=True)
    w = torch.randn(12, dtype=torch.float64, requires_grad=True)
    reference = torch.nn.functional.rms_norm(x, (12,), w, eps=1e-6)
    torch.testing.assert_close(rms_norm(x, w), reference)
    assert torch.autograd.gradcheck(rms_norm, (x, w))


def test_offloading_by_hand():
    from gpuperf import hardware

    h100 = chip("H100-SXM")
    s, b, h, a = 2048, 1, 4096, 32
    plan = recompute.activation_offload(s, b, h, a, "H100-SXM", attention="flash")
    kept = s * b * h * 34 + 4 * a * s * b
    assert plan.bytes_per_layer == kept
    assert plan.link_bandwidth == h100.host_link_bandwidth == hardware.pcie_bandwidth(5)
    forward = 24 * b * s * h * h + 4 * b * s * s * h
    assert plan.forward_time_s == pytest.approx(forward / h100.peak_flops("bf16"))
    assert plan.transfer_time_s == pytest.approx(kept / hardware.pcie_bandwidth(5))
    assert not plan.hidden and plan.exposed_time_s > 0
    c2c = recompute.activation_offload(
        s, b, h, a, "H100-SXM", hardware.NVLINK_C2C_BIDIRECTIONAL / 2, attention="flash"
    )
    assert c2c.hidden and c2c.exposed_time_s == 0
    assert c2c.break_even_bandwidth == pytest.approx(kept / plan.forward_time_s)
    # per layer the verdict does not depend on the micro-batch
    assert recompute.activation_offload(
        s, 8, h, a, "H100-SXM", attention="flash"
    ).transfer_over_forward == pytest.approx(plan.transfer_over_forward)
    # at 40 % of the peak the layer runs 2.5× longer: 2.5× more time to hide the copy
    slow = recompute.activation_offload(s, b, h, a, "H100-SXM", attention="flash", utilization=0.4)
    assert slow.transfer_over_forward == pytest.approx(plan.transfer_over_forward * 0.4)
    full = recompute.activation_offload(s, b, h, a, "H100-SXM", mode="full")
    assert full.bytes_per_layer == 2 * s * b * h


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: recompute.layer_activation_terms("llama"), "block='llama' is not one of"),
        (lambda: recompute.layer_activations(16, 1, 64, 8, attention="xformers"), "attention="),
        (lambda: recompute.transformer_layer(64, 4, block="modern"), "multiple of 3"),
        (lambda: recompute.transformer_layer(48, 16, block="modern"), "must be even"),
        (lambda: recompute.transformer_layer(48, 4, block="modern", dropout=0.1), "no dropout"),
        (lambda: recompute.selective_recompute_flops(16, 1, 64, early_stop="no"), "early_stop="),
        (lambda: recompute.activation_offload(16, 1, 64, 8, "TPU-v5e"), "host-link bandwidth"),
        (lambda: recompute.activation_offload(16, 1, 64, 8, "H100", utilization=1.5), "utiliz"),
    ],
)
def test_new_arguments_are_checked(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_mode_words_never_confuse_keeping_everything_with_nothing_fitting():
    # Issue 34 (R1 #7): the "cheapest fit" column showed the mode "none" (no recomputation: it
    # fits) beside "none fits" (nothing fits). The words for the modes and for None differ.
    words = {mode: recompute.mode_in_words(mode) for mode in (*recompute.RECOMPUTE_MODES, None)}
    assert len(set(words.values())) == len(words)
    assert words["none"] == "no recomputation" and words[None] == "nothing fits"
    assert not any("none" in w for w in words.values())
    fits = recompute.recompute_mode_for_budget(20e9, 32, 2048, 1, 4096, 32, 8, True)
    assert fits == "none" and recompute.mode_in_words(fits) == "no recomputation"
    with pytest.raises(ValueError, match="mode='some'"):
        recompute.mode_in_words("some")


# --- checkpoint policies of the modern block, and MLA's up-projections -------------------------


def test_checkpoint_policies_by_hand():
    s, b, h, a = 2048, 1, 4096, 32
    sbh = s * b * h
    lse = 4 * a * s * b  # FlashAttention's fp32 log-sum-exp
    f = 8 / 3  # SwiGLU width over h
    kept = {
        p: recompute.checkpoint_policy(s, b, h, a, p).activation_bytes
        for p in recompute.CHECKPOINT_POLICIES
    }
    # the modern block keeps (37 1/3)·sbh; norms' outputs 2 + 2, SiLU output and product 2f each
    assert kept["save everything"] == pytest.approx((16 + 8 * f) * sbh + lse)
    assert kept["save everything"] - kept["recompute norms"] == pytest.approx(4 * sbh)
    assert kept["save everything"] - kept["recompute norms and SwiGLU"] == pytest.approx(
        (4 + 4 * f) * sbh
    )
    # the op-list policy keeps the input, QKV (6), attention output (2), W_O's output (2), gate
    # and up (2f each), W_down's output (2) and the log-sum-exp
    assert kept["save matmul and attention outputs"] == pytest.approx(
        (2 + 6 + 2 + 2 + 4 * f + 2) * sbh + lse
    )
    assert kept["recompute everything"] == 2 * sbh
    full = recompute.checkpoint_policy(s, b, h, a, "recompute everything")
    assert full.compute_overhead == pytest.approx(1 / 3)
    for p in recompute.CHECKPOINT_POLICIES[:-1]:
        assert recompute.checkpoint_policy(s, b, h, a, p).recompute_matmul_flops == 0


def test_op_list_policy_reruns_no_matmul_in_torch():
    # torch's selective checkpoint with aten.mm and the attention op saved re-runs no matmul in
    # the backward pass; recomputing everything re-runs one forward (FlopCounterMode, on a CPU).
    torch = pytest.importorskip("torch")
    import functools

    from torch.utils.checkpoint import (
        checkpoint,
        create_selective_checkpoint_contexts,
        set_checkpoint_early_stop,
    )
    from torch.utils.flop_counter import FlopCounterMode

    s, b, h, a = 16, 2, 48, 4
    layer = recompute.transformer_layer(
        h, a, block="modern", attention="flash", device="cpu", max_seq_len=s
    )
    aten = torch.ops.aten
    attention_ops = [
        getattr(aten, name).default
        for name in ("_scaled_dot_product_flash_attention_for_cpu",)
        if hasattr(aten, name)
    ]
    save = functools.partial(
        create_selective_checkpoint_contexts, [aten.mm.default, *attention_ops]
    )

    def step(context_fn=None):
        x = torch.randn(s, b, h, requires_grad=True)
        with FlopCounterMode(display=False) as counter:
            if context_fn is None:
                out = layer.body(x)
            else:
                out = checkpoint(layer.body, x, use_reentrant=False, context_fn=context_fn)
            out.sum().backward()
        return counter.get_total_flops()

    plain = step()
    assert step(save) == plain
    nothing_saved = functools.partial(create_selective_checkpoint_contexts, [])
    with set_checkpoint_early_stop(False):  # else the unneeded W_down is skipped
        again = step(nothing_saved) - plain
    # every projection again, 24·b·s·h², and the attention op if torch's counter counts it
    assert again in (24 * b * s * h * h, recompute.layer_forward_flops(s, b, h))


def test_up_projection_recompute_by_hand():
    # DeepSeek-V3: latent KV of rank 512 → keys of 128 heads × 128, bf16
    r = recompute.up_projection_recompute(4096, 512, 128 * 128)
    assert r.bytes_saved == 4096 * 16384 * 2
    assert r.flops_added == 2 * 4096 * 512 * 16384
    assert r.flops_per_byte == 512


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: recompute.checkpoint_policy(2048, 1, 4096, 32, "remat"), "policy='remat'"),
        (lambda: recompute.checkpoint_policy(2048, 1, 4096, 0), "heads=0"),
        (lambda: recompute.up_projection_recompute(10, 512, 256), "rank=512 must be below"),
        (lambda: recompute.up_projection_recompute(10, 8, 64, "int3"), "int3"),
    ],
)
def test_policy_arguments_are_named(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_grouped_query_attention_shrinks_k_v_and_their_projections():
    s, b, h, a = 2048, 1, 4096, 32
    sbh = s * b * h
    mha = recompute.checkpoint_policy(s, b, h, a)
    assert recompute.checkpoint_policy(s, b, h, a, kv_heads=a) == mha
    for g in (8, 1):
        gqa = recompute.checkpoint_policy(s, b, h, a, kv_heads=g)
        # K and V: 2 bytes each per s·b·h element with all heads; g/a of that with g heads
        assert mha.activation_bytes - gqa.activation_bytes == pytest.approx(4 * sbh * (1 - g / a))
        # the K and V projections, 2·b·s·h·(h·g/a) FLOPs each, forward and backward (3×)
        assert mha.step_flops - gqa.step_flops == pytest.approx(
            3 * 4 * b * s * h * h * (1 - g / a)
        )
        full = recompute.checkpoint_policy(s, b, h, a, "recompute everything", kv_heads=g)
        assert full.activation_bytes == 2 * sbh
    with pytest.raises(ValueError, match="kv_heads=5 must divide heads=32"):
        recompute.checkpoint_policy(s, b, h, a, kv_heads=5)
    with pytest.raises(ValueError, match="kv_heads=64"):
        recompute.checkpoint_policy(s, b, h, a, kv_heads=64)
