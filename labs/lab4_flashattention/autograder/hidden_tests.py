"""Hidden checks of lab 4 (autograder only; the master's ``# HIDDEN`` cells run them).

Each ``qN(env)`` takes the student's answers, and nothing else, from the notebook namespace
``env``: numpy, torch, the device and the reference ``attention_ref`` are imported here, so a
notebook that redefines ``attention_ref`` cannot change what its answers are compared with. The
forward kernel runs on tensors inside NaN-padded buffers (:func:`gpuperf.grading.padded`), so a
missing mask is reported as one instead of corrupting memory. Every inspection of an autograd
graph (saved tensors) uses a forward pass of its own, and every reference is computed before the
student's code runs on its inputs (a function may write into its arguments).
"""

import math

import numpy as np
import torch
import triton

from gpuperf import attention
from gpuperf.grading import (
    answer,
    call,
    check_attention,
    check_padding,
    check_tensor,
    check_traffic,
    check_true,
    integrity_check,
    padded,
)
from gpuperf.kernels.flash_attention import attention_ref as reference_attention
from gpuperf.runtime import DEVICE

#: Value the padding around an output starts with: anything else there was written by the kernel.
GUARD = -31337.0
KEY_MASK_SLIP = (
    "keys past the end of the sequence get the score 0 instead of -inf, so they take weight "
    "from the real keys: set s to -inf where offs_n >= seq_len (the key mask), before the max"
)


def unmasked_keys_output(q, k, v, block_n=16):
    """The output of a kernel that loads the padding keys as 0 but forgets to mask their scores."""
    n = k.shape[-2]
    pad = (-n) % block_n
    if pad == 0:
        return None
    zeros = torch.zeros(*k.shape[:-2], pad, k.shape[-1], device=k.device, dtype=k.dtype)
    return reference_attention(q, torch.cat([k, zeros], -2), torch.cat([v, zeros], -2))


def guarded_forward(kernel, q, k, v, causal, block_m=16, block_n=16):
    """(o, L) from the student's kernel on padded copies of q, k, v, o and L."""
    batch, heads, n, d = q.shape
    pad = 2 * max(block_m, block_n) * d
    q, k, v = (padded(t.contiguous(), pad) for t in (q, k, v))
    o = padded(torch.zeros_like(q), pad, fill=GUARD)
    lse = padded(torch.full((batch, heads, n), float("nan"), device=q.device), pad, fill=GUARD)
    grid = (triton.cdiv(n, block_m), batch * heads)
    call(
        "_attn_fwd_kernel",
        lambda: kernel[grid](
            q, k, v, o, lse, n, 1.0 / math.sqrt(d), n * d, d,
            IS_CAUSAL=bool(causal), BLOCK_M=block_m, BLOCK_N=block_n, HEAD_DIM=d,
            DOT_PRECISION="ieee",
        ),
    )  # fmt: skip
    check_padding("o", o)
    check_padding("L", lse)
    return o, lse


def q1(env):
    integrity_check()
    online_softmax = answer(env, "online_softmax")
    online_softmax_stats = answer(env, "online_softmax_stats")
    rng = np.random.default_rng(4)
    x = np.concatenate(
        [
            rng.normal(0, 3, (3, 50)),
            rng.choice([-1e4, 1e4], size=(2, 50)) + rng.normal(0, 1, (2, 50)),
            np.linspace(-1e4, 1e4, 50)[None, :],
        ]
    )
    # the references first, from x alone; each call gets its own copy of x
    softmax_ref = attention.softmax(x)
    ell_ref = np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1)
    for block_size in (1, 7, 16, 64):
        check_tensor(
            f"online_softmax(x, {block_size}) (scores up to ±1e4)",
            call("online_softmax", online_softmax, x.copy(), block_size),
            softmax_ref,
            atol=1e-9,
            rtol=1e-7,
        )
        stats = call("online_softmax_stats", online_softmax_stats, x.copy(), block_size)
        check_true(
            isinstance(stats, tuple) and len(stats) == 2,
            "online_softmax_stats should return a tuple (m, ell)",
        )
        check_tensor(f"ell (block_size={block_size})", stats[1], ell_ref, atol=1e-9, rtol=1e-9)


def q2(env):
    integrity_check()
    kernel = answer(env, "_attn_fwd_kernel")
    gen = torch.Generator().manual_seed(2)
    for b, h, n, d, causal in [(2, 1, 33, 32, True), (1, 1, 16, 16, True), (1, 2, 50, 16, False)]:
        q, k, v = (torch.randn(b, h, n, d, generator=gen).to(DEVICE) * 2 for _ in range(3))
        s = q @ k.transpose(-1, -2) / d**0.5
        if causal:
            future = torch.ones(n, n, dtype=torch.bool, device=DEVICE).triu(1)
            s = s.masked_fill(future, float("-inf"))
        want = reference_attention(q, k, v, is_causal=causal)
        slip = None if causal else unmasked_keys_output(q, k, v)
        o, lse = guarded_forward(kernel, q, k, v, causal)  # on padded copies of q, k, v
        check_attention(
            f"o (batch {b}, heads {h}, seq {n}, d {d}, causal={causal})",
            o,
            want,
            block_m=16,
            lse=lse,
            lse_expected=torch.logsumexp(s, dim=-1),
            max_scores=s.amax(dim=-1),
            slips={KEY_MASK_SLIP: slip} if slip is not None else None,
        )
    # the launcher and the autograd wrapper: one forward of their own for each inspection
    q, k, v = (torch.randn(1, 2, 24, 16, generator=gen).to(DEVICE) for _ in range(3))
    want = reference_attention(q, k, v)  # before the launcher can write into q, k or v
    launcher = answer(env, "flash_attention_forward")
    result = call("flash_attention_forward", launcher, q.clone(), k.clone(), v.clone())
    check_true(
        isinstance(result, tuple) and len(result) == 2,
        "flash_attention_forward should return the tuple (o, L)",
    )
    check_attention("o (your launcher)", result[0], want, block_m=16)
    wrapper = answer(env, "LabFlashAttention")
    q_leaf = q.detach().clone().requires_grad_()
    out = call("LabFlashAttention.apply", wrapper.apply, q_leaf, k, v)
    saved = out.grad_fn.saved_tensors if getattr(out, "grad_fn", None) is not None else ()
    check_true(
        len(saved) == 5 and tuple(saved[4].shape) == (1, 2, 24),
        "LabFlashAttention must save q, k, v, o and L (shaped like q without its last dim)",
    )


def q2_traffic(env):
    # Efficiency (counted in Triton's interpreter by otter, the notebook and the class grader): the
    # forward kernel reads Q once, streams K and V once per block of queries and writes O and L
    # once — :func:`gpuperf.attention.hbm_traffic_flash`, no N × N term. A kernel that re-reads Q
    # (or anything else) inside the key loop requests more and loses this case's points.
    integrity_check()
    kernel = answer(env, "_attn_fwd_kernel")
    gen = torch.Generator().manual_seed(4)
    b, h, n, d, block = 1, 2, 50, 16, 16
    q, k, v = (torch.randn(b, h, n, d, generator=gen).to(DEVICE) for _ in range(3))
    want = reference_attention(q, k, v)
    pad = 2 * block * d
    qp, kp, vp = (padded(t.contiguous(), pad) for t in (q, k, v))
    o = padded(torch.zeros_like(q), pad, fill=GUARD)
    lse = padded(torch.full((b, h, n), float("nan"), device=DEVICE), pad, fill=GUARD)
    grid = (triton.cdiv(n, block), b * h)
    flash = attention.hbm_traffic_flash(
        n, d, 1, "fp32", batch=b, heads=h, version=2, block_r=block, block_c=block
    )
    passes, copies = triton.cdiv(n, block), b * h
    need = {
        "q_ptr": 4 * n * d * copies,
        "k_ptr": 4 * passes * n * d * copies,
        "v_ptr": 4 * passes * n * d * copies,
        "o_ptr": 4 * n * d * copies,
        "lse_ptr": 4 * n * copies,
    }
    assert sum(need.values()) == flash.bytes  # the chapter's formula, tensor by tensor
    check_traffic(
        "_attn_fwd_kernel",
        lambda: kernel[grid](
            qp, kp, vp, o, lse, n, 1.0 / math.sqrt(d), n * d, d,
            IS_CAUSAL=False, BLOCK_M=block, BLOCK_N=block, HEAD_DIM=d, DOT_PRECISION="ieee",
        ),
        need,
        kind="total",
        what="Q once, K and V once per block of queries, O and L written once: "
        "gpuperf.attention.hbm_traffic_flash",
    )  # fmt: skip
    check_padding("o", o)
    check_attention(f"o (batch {b}, heads {h}, seq {n}, d {d})", o, want, block_m=16)


def q3(env):
    integrity_check()
    backward = answer(env, "flash_attention_backward")
    gen = torch.Generator().manual_seed(5)
    for b, h, n, d, causal in [(2, 1, 33, 32, True), (1, 2, 24, 16, False)]:
        q, k, v, do = (torch.randn(b, h, n, d, generator=gen).to(DEVICE) for _ in range(4))
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
        o = reference_attention(qg, kg, vg, is_causal=causal)  # a forward of its own
        o.backward(do)
        s = q @ k.transpose(-1, -2) / d**0.5
        if causal:
            future = torch.ones(n, n, dtype=torch.bool, device=DEVICE).triu(1)
            s = s.masked_fill(future, float("-inf"))
        grads = call(
            "flash_attention_backward",
            backward,
            q, k, v, o.detach(), torch.logsumexp(s, dim=-1), do, causal,
        )  # fmt: skip
        check_true(
            isinstance(grads, tuple) and len(grads) == 3,
            "flash_attention_backward should return the tuple (dq, dk, dv)",
        )
        for name, got, want, what in [
            ("dv", grads[2], vg.grad, "key"),
            ("dq", grads[0], qg.grad, "query"),
            ("dk", grads[1], kg.grad, "key"),
        ]:
            check_attention(
                f"{name} (batch {b}, heads {h}, seq {n}, d {d}, causal={causal})",
                got,
                want,
                block_m=16,
                rows=what,
                atol=1e-4,
                rtol=1e-3,
            )


def _split_partials(scores, v, bounds):
    """(m, ell, o) of the chunks scores[:, a:b] for (a, b) in bounds, computed here."""
    m, ell, o = [], [], []
    for a, b in bounds:
        block = scores[:, a:b]
        m_s = block.max(axis=1)
        p = np.exp(block - m_s[:, None])
        m.append(m_s)
        ell.append(p.sum(axis=1))
        o.append(p @ v[a:b] / p.sum(axis=1, keepdims=True))
    return np.stack(m, 1), np.stack(ell, 1), np.stack(o, 1)


def q4(env):
    integrity_check()
    combine_splits = answer(env, "combine_splits")
    rng = np.random.default_rng(44)
    x = np.concatenate(
        [
            rng.normal(0, 3, (2, 60)),
            rng.choice([-1e4, 1e4], size=(2, 60)) + rng.normal(0, 1, (2, 60)),  # exp overflows
            np.linspace(-1e4, 1e4, 60)[None, :],  # every chunk's max differs by thousands
        ]
    )
    v = rng.normal(0, 1, (60, 5))
    want = attention.softmax(x) @ v
    cases = {
        "one chunk": [(0, 60)],
        "chunks of unequal length": [(0, 7), (7, 30), (30, 31), (31, 60)],
        "60 chunks of one key": [(i, i + 1) for i in range(60)],
    }
    for name, bounds in cases.items():
        got = call("combine_splits", combine_splits, *_split_partials(x, v, bounds))
        check_tensor(f"combine_splits ({name}, scores up to ±1e4)", got, want, atol=1e-9,
                     rtol=1e-7)  # fmt: skip
    # the order of the chunks must not matter
    m, ell, o = _split_partials(x, v, [(0, 13), (13, 40), (40, 60)])
    order = [2, 0, 1]
    got = call("combine_splits", combine_splits, m[:, order], ell[:, order], o[:, order])
    check_tensor("combine_splits (chunks in another order)", got, want, atol=1e-9, rtol=1e-7)
