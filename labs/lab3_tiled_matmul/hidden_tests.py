"""Hidden checks of lab 3 (autograder only; the master's ``# HIDDEN`` cells run them).

Each ``qN(env)`` takes the student's answers, and nothing else, from the notebook namespace
``env``; torch, the device and every reference are imported here. The kernel runs on matrices
inside NaN-padded buffers (:func:`gpuperf.grading.padded`), so a missing mask is reported as one
instead of corrupting memory. Every reference is computed before the student's code runs on its
inputs: a kernel that writes into its inputs must not change what it is compared with.
"""

import numpy as np
import torch
import triton

from gpuperf import numerics, tiling
from gpuperf.grading import (
    answer,
    call,
    check_close,
    check_padding,
    check_tensor,
    check_traffic,
    check_true,
    integrity_check,
    padded,
)
from gpuperf.runtime import DEVICE

#: Value the padding around C starts with: anything else there was written by the kernel.
GUARD = -31337.0


def guarded_matmul(kernel, a, b, block_m=32, block_n=32, block_k=16):
    """C = A @ B with the student's kernel on padded copies of A, B and C; returns C."""
    (m, k), n = a.shape, b.shape[1]
    pad = max(block_m, block_n, block_k) * (max(m, n, k) + 1)
    a, b = padded(a, pad), padded(b, pad)
    c = padded(torch.zeros((m, n), device=a.device, dtype=a.dtype), pad, fill=GUARD)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    call(
        "_matmul_kernel",
        lambda: kernel[grid](
            a, b, c, m, n, k,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        ),
    )  # fmt: skip
    check_padding(f"C ({m}×{k}·{k}×{n})", c)
    return c


def q1(env):
    integrity_check()
    kernel = answer(env, "_matmul_kernel")
    gen = torch.Generator().manual_seed(2)
    for m, k, n in [(70, 40, 50), (5, 3, 7)]:
        a = torch.randn(m, k, generator=gen).to(DEVICE)
        b = torch.randn(k, n, generator=gen).to(DEVICE)
        want = a @ b  # the kernel gets padded copies; the reference never meets it
        check_tensor(
            f"tiled_matmul(a, b) for {m}×{k}·{k}×{n}",
            guarded_matmul(kernel, a, b),
            want,
            atol=1e-3,
            rtol=1e-3,
            block=(32, 32),
        )
    a = torch.randn(64, 48, generator=gen).to(DEVICE)
    b = torch.randn(48, 96, generator=gen).to(DEVICE)
    want = a @ b  # before the launcher can write into a or b
    check_tensor(
        "tiled_matmul(a, b, 32, 32, 16) for 64×48·48×96 (your launcher)",
        call("tiled_matmul", answer(env, "tiled_matmul"), a, b, 32, 32, 16),
        want,
        atol=1e-3,
        rtol=1e-3,
        block=(32, 32),
    )


def q1_traffic(env):
    # Efficiency (counted in Triton's interpreter by otter, the notebook and the class grader): the
    # correct kernel requests each A element once per column of tiles and each B element once per
    # row of tiles, as :func:`gpuperf.tiling.tiled_matmul` counts; a kernel that reloads a panel
    # requests more and loses this case's points, with the excess and the load line named.
    integrity_check()
    kernel = answer(env, "_matmul_kernel")
    gen = torch.Generator().manual_seed(3)
    m, k, n, bm, bn, bk = 70, 40, 50, 32, 32, 16
    a = torch.randn(m, k, generator=gen).to(DEVICE)
    b = torch.randn(k, n, generator=gen).to(DEVICE)
    want = a @ b
    pad = max(bm, bn, bk) * (max(m, n, k) + 1)
    a, b = padded(a, pad), padded(b, pad)
    c = padded(torch.zeros((m, n), device=DEVICE), pad, fill=GUARD)
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
    model = tiling.tiled_matmul(m, n, k, bm, bn, bk, "fp32")  # reads: the sum of the two below
    check_traffic(
        "_matmul_kernel",
        lambda: kernel[grid](
            a, b, c, m, n, k,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
        ),
        {"a_ptr": 4 * m * k * model.tiles_n, "b_ptr": 4 * k * n * model.tiles_m},
        what=f"{model.a_reads_per_element} reads of each A element and "
        f"{model.b_reads_per_element} of each B element for {bm}×{bn}×{bk} tiles",
    )  # fmt: skip
    check_padding(f"C ({m}×{k}·{k}×{n})", c)  # a fast kernel must also be a correct one
    check_tensor(f"C for {m}×{k}·{k}×{n}", c, want, atol=1e-3, rtol=1e-3, block=(32, 32))


def q2(env):
    integrity_check()
    smem_bytes, fits = answer(env, "smem_bytes"), answer(env, "fits")
    check_close(
        "smem_bytes(64, 256, 64, 4, 2)",
        call("smem_bytes", smem_bytes, 64, 256, 64, 4, 2),
        tiling.shared_memory_bytes(64, 256, 64, "fp32", 2),
        unit="B",
    )
    for name in ["T4", "A100-80GB", "H100-SXM"]:
        for config in [(128, 128, 64, 2, 4), (128, 256, 64, 2, 3), (64, 64, 32, 4, 2)]:
            precision = {2: "fp16", 4: "fp32"}[config[3]]
            want = tiling.shared_memory_budget(name, *config[:3], precision, config[4]).fits
            got = call("fits", fits, name, *config)
            check_true(
                type(got) in (bool, np.bool_) and bool(got) == bool(want),
                f"fits({name!r}, *{config}) is not right: compare the bytes with "
                "chip(name).shared_memory_per_block_bytes.",
            )
    largest = max(
        2**p
        for p in range(4, 12)
        if tiling.shared_memory_budget("T4", 2**p, 2**p, 32, "fp16", 3).fits
    )
    check_close("largest_square_tile_t4", answer(env, "largest_square_tile_t4"), largest)


def q3(env):
    integrity_check()
    wave_stats = answer(env, "wave_stats")
    for args in [(1000, 3000, 64, 128, "T4"), (4097, 4096, 128, 256, "H100-SXM")]:
        result = call("wave_stats", wave_stats, *args)
        check_true(
            isinstance(result, tuple) and len(result) == 3,
            "wave_stats should return a tuple (tiles, waves, wave_efficiency)",
        )
        ref = tiling.wave_quantization(*args)
        check_close(f"wave_stats{args}[0] (tiles)", result[0], ref.tiles)
        check_close(f"wave_stats{args}[1] (waves)", result[1], ref.waves)
        check_close(f"wave_stats{args}[2] (efficiency)", result[2], ref.wave_efficiency)
    for name, size in [("eff_2048", 2048), ("eff_2049", 2049)]:
        check_close(
            name, answer(env, name), tiling.wave_efficiency(size, size, 256, 128, "H100-SXM")
        )


def q4(env):
    integrity_check()
    format_limits, running_sum = answer(env, "format_limits"), answer(env, "running_sum")
    for name in ["bf16", "fp32", "e5m2", "tf32"]:
        fmt = numerics.FORMATS[name]
        bits = (fmt.exponent_bits, fmt.mantissa_bits)
        result = call("format_limits", format_limits, *bits)
        check_true(
            isinstance(result, tuple) and len(result) == 3,
            "format_limits should return a tuple (largest_finite, smallest_normal, unit_roundoff)",
        )
        check_close(f"format_limits{bits}[0]", result[0], fmt.largest_finite, rtol=1e-9)
        check_close(f"format_limits{bits}[1]", result[1], fmt.smallest_normal, rtol=1e-9)
        check_close(f"format_limits{bits}[2]", result[2], fmt.unit_roundoff, rtol=1e-9)
    # the lab's dot product, rebuilt here: the expected errors come from gpuperf.numerics
    x, y = numerics.dot_inputs(4096, 1, "fp16", seed=5)
    exact = float((x * y).sum())
    acc_errors = answer(env, "acc_errors")
    check_true(
        isinstance(acc_errors, dict) and set(acc_errors) == {"fp16", "fp32"},
        'acc_errors should be a dict with the keys "fp16" and "fp32"',
    )
    for name in ["fp16", "fp32"]:
        expected = abs(numerics.accumulate(x * y, name)[0, -1] - exact) / exact
        check_close(f'acc_errors["{name}"]', acc_errors[name], expected, rtol=0.05)
    # running_sum itself, on a short sum where fp16 stalls: 2048 + 1 rounds back to 2048
    # (fresh inputs for each call: a function may write into its arguments)
    check_close(
        "running_sum(torch.ones(2100), torch.float16)",
        call("running_sum", running_sum, torch.ones(2100, device=DEVICE), torch.float16),
        2048.0,
    )
    check_close(
        "running_sum(torch.ones(2100), torch.float32)",
        call("running_sum", running_sum, torch.ones(2100, device=DEVICE), torch.float32),
        2100.0,
    )
