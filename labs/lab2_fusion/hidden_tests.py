"""Hidden checks of lab 2 (autograder only; the master's ``# HIDDEN`` cells run them).

Each ``qN(env)`` takes the student's answers, and nothing else, from the notebook namespace
``env``; torch, the device and every reference are imported here. The kernel runs on inputs
inside NaN-padded buffers (:func:`gpuperf.grading.padded`), so a missing mask is reported as one
instead of corrupting memory. Every reference is computed before the student's code runs on its
inputs: a kernel that writes into its inputs must not change what it is compared with.
"""

import torch
import triton

from gpuperf import cost, roofline
from gpuperf.grading import (
    answer,
    call,
    check_close,
    check_mapping,
    check_padding,
    check_tensor,
    check_traffic,
    check_true,
    integrity_check,
    padded,
)
from gpuperf.runtime import DEVICE

#: Value the padding around an output starts with: anything else there was written by the kernel.
GUARD = -31337.0


def q1(env):
    integrity_check()
    kernel = answer(env, "_axpb_relu_kernel")
    gen = torch.Generator().manual_seed(0)
    for n, block in [(1, 16), (3000, 1024), (4096, 512)]:
        x = padded(torch.randn(n, generator=gen).to(DEVICE), 2 * block)
        b = padded(torch.randn(n, generator=gen).to(DEVICE), 2 * block)
        y = padded(torch.zeros(n, device=DEVICE), 2 * block, fill=GUARD)
        want = torch.relu(-0.7 * x + b)  # before the kernel can write into x or b
        grid = (triton.cdiv(n, block),)
        call(
            "_axpb_relu_kernel",
            lambda x=x, b=b, y=y, n=n, block=block, grid=grid: kernel[grid](
                x, b, y, -0.7, n, BLOCK_SIZE=block
            ),
        )
        check_padding(f"y (n={n})", y)
        check_tensor(f"axpb_relu(-0.7, x, b) with n={n}", y, want, block=block)
    x = torch.randn(4096, generator=gen).to(DEVICE)
    b = torch.randn(4096, generator=gen).to(DEVICE)
    want = torch.relu(2.0 * x + b)  # before the launcher can write into x or b
    check_tensor(
        "axpb_relu(2.0, x, b) (your launcher)",
        call("axpb_relu", answer(env, "axpb_relu"), 2.0, x, b, BLOCK_SIZE=1024),
        want,
        block=1024,
    )


def q1_traffic(env):
    # Efficiency (counted in Triton's interpreter by otter, the notebook and the class grader):
    # the fused kernel reads each element of x and of b once, 4 bytes each in fp32 (masked-off
    # lanes move nothing); a kernel that loads an input twice is still correct but requests more,
    # and loses this case's points, with the excess and the load lines named.
    integrity_check()
    kernel = answer(env, "_axpb_relu_kernel")
    gen = torch.Generator().manual_seed(2)
    n, block = 3000, 512
    x = padded(torch.randn(n, generator=gen).to(DEVICE), 2 * block)
    b = padded(torch.randn(n, generator=gen).to(DEVICE), 2 * block)
    y = padded(torch.zeros(n, device=DEVICE), 2 * block, fill=GUARD)
    want = torch.relu(1.3 * x + b)  # before the kernel can write into x or b
    grid = (triton.cdiv(n, block),)
    check_traffic(
        "_axpb_relu_kernel",
        lambda: kernel[grid](x, b, y, 1.3, n, BLOCK_SIZE=block),
        {"x_ptr": 4 * n, "b_ptr": 4 * n},
        what=f"one read of each of the {n:,} fp32 elements of x and of b",
    )
    check_padding(f"y (n={n})", y)  # a lean kernel must also be a correct one
    check_tensor(f"axpb_relu(1.3, x, b) with n={n}", y, want, block=block)


def q2(env):
    integrity_check()
    unfused_bytes, fused_bytes = answer(env, "unfused_bytes"), answer(env, "fused_bytes")
    for n, precision, size in [(2**20, "fp32", 4), (12345, "fp16", 2)]:
        unfused = (
            cost.elementwise(n, precision)
            + cost.elementwise(n, precision, n_inputs=2)
            + cost.elementwise(n, precision)
        )
        fused = cost.elementwise(n, precision, flops_per_element=3, n_inputs=2)
        check_close(
            f"unfused_bytes({n}, {size})",
            call("unfused_bytes", unfused_bytes, n, size),
            unfused.bytes,
            unit="B",
        )
        check_close(
            f"fused_bytes({n}, {size})",
            call("fused_bytes", fused_bytes, n, size),
            fused.bytes,
            unit="B",
        )
    n = 2**24
    unfused = (
        cost.elementwise(n, "fp32")
        + cost.elementwise(n, "fp32", n_inputs=2)
        + cost.elementwise(n, "fp32")
    )
    fused = cost.elementwise(n, "fp32", flops_per_element=3, n_inputs=2)
    check_close(
        "predicted_speedup",
        answer(env, "predicted_speedup"),
        unfused.bytes / fused.bytes,
        rtol=1e-2,
    )


def q3(env):
    integrity_check()
    check_mapping(
        "fused_intensity",
        answer(env, "fused_intensity"),
        {
            p: cost.elementwise(1000, p, flops_per_element=3, n_inputs=2).intensity
            for p in ["fp32", "fp16"]
        },
    )
    check_mapping(
        "matmul_256_bound",
        answer(env, "matmul_256_bound"),
        {
            p: roofline.time_bounds(cost.matmul(256, 256, 256, p), "T4", p).bound
            for p in ["fp32", "fp16"]
        },
    )


#: Recompute modes, cheapest (fewest recomputed FLOPs) first.
MODES = ("none", "selective", "full")


def _layer_bytes(s, b, h, a, mode):
    # Section 3.3's count, written out here so the check depends on nothing a notebook can patch.
    return {"none": s * b * h * (34 + 5 * a * s / h), "selective": 34 * s * b * h,
            "full": 2 * s * b * h}[mode]  # fmt: skip


def _cheapest(budget, n_layers, s, b, h, a):
    baseline = _layer_bytes(s, b, h, a, "none")
    for mode in MODES:
        kept = _layer_bytes(s, b, h, a, mode)
        if n_layers * kept + (baseline - kept) <= budget:
            return mode
    return None


def q4(env):
    integrity_check()
    layer_bytes = answer(env, "layer_activation_bytes")
    cheapest = answer(env, "cheapest_mode")
    for s, b, h, a in [(2048, 1, 4096, 32), (1000, 3, 768, 12), (8192, 2, 5120, 40)]:
        for mode in MODES:
            check_close(
                f"layer_activation_bytes({s}, {b}, {h}, {a}, {mode!r})",
                call("layer_activation_bytes", layer_bytes, s, b, h, a, mode),
                _layer_bytes(s, b, h, a, mode),
                unit="B",
            )
    shape = (4096, 2, 2048, 16)
    peaks = [
        _layer_bytes(*shape, "none") * 24,
        23 * _layer_bytes(*shape, "selective") + _layer_bytes(*shape, "none"),
        23 * _layer_bytes(*shape, "full") + _layer_bytes(*shape, "none"),
    ]
    for budget in [1.01 * peaks[0], 1.01 * peaks[1], 1.01 * peaks[2], 0.99 * peaks[2]]:
        expected = _cheapest(budget, 24, *shape)
        got = call("cheapest_mode", cheapest, budget, 24, *shape)
        check_true(
            got == expected,
            f"`cheapest_mode({budget:.4g}, 24, {', '.join(map(str, shape))})` = {got!r}; "
            "compare each mode's peak, L·kept + (baseline − kept), with the budget, cheapest "
            "mode first, and return None when even full recomputation does not fit.",
        )
