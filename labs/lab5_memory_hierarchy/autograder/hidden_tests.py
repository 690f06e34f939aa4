"""Hidden checks of lab 5 (autograder only; the master's ``# HIDDEN`` cells run them).

Each ``qN(env)`` takes the student's answers, and nothing else, from the notebook namespace
``env``: numpy, the reference measurements and every cost model are imported here, so a notebook
that redefines ``np`` or ``REF_LATENCY`` cannot change what its answers are compared with. The
fits are checked on timings *predicted* by the model, never on invented measurements. The
persistent copy kernel runs on inputs inside padded buffers (:func:`gpuperf.grading.padded`), so
a missing mask is reported as one instead of corrupting memory, on a grid of P programs that the
check chooses.
"""

import numpy as np
import torch

from gpuperf import collectives, measurements, memory
from gpuperf.grading import (
    answer,
    call,
    check_close,
    check_padding,
    check_sector_efficiency,
    check_tensor,
    check_traffic,
    check_true,
    integrity_check,
    padded,
)
from gpuperf.kernels.copy import copy_cost
from gpuperf.runtime import DEVICE

#: Value the padding around an output starts with: anything else there was written by the kernel.
GUARD = -31337.0


def q1(env):
    integrity_check()
    warp_sectors = answer(env, "warp_sectors")
    sector_efficiency = answer(env, "sector_efficiency")
    for args in [(8, 0, 4), (3, 5, 2), (16, 3, 1), (1, 3, 8), (2, 1, 16), (64, 0, 4)]:
        ref = memory.coalescing(stride=args[0], offset=args[1], element_bytes=args[2])
        check_close(
            f"warp_sectors{args}", call("warp_sectors", warp_sectors, *args), ref.transactions
        )
        check_close(
            f"sector_efficiency{args}",
            call("sector_efficiency", sector_efficiency, *args),
            ref.efficiency,
        )


def q2(env):
    integrity_check()
    copy_bytes = answer(env, "copy_bytes")
    for n, stride, size, precision in [
        (4096, 1, 4, "fp32"),
        (777, 2, 2, "fp16"),
        (5000, 64, 4, "fp32"),
        (100, 4, 4, "fp32"),
    ]:
        ref = copy_cost(n, precision, stride=stride)
        check_close(
            f"copy_bytes({n}, {stride}, {size})",
            call("copy_bytes", copy_bytes, n, stride, size),
            ref.bytes_read + ref.bytes_written,
            unit="B",
        )
    strided, coalesced = (copy_cost(2**20, "fp32", stride=s) for s in (8, 1))
    check_close(
        "predicted_slowdown",
        answer(env, "predicted_slowdown"),
        (strided.bytes_read + strided.bytes_written)
        / (coalesced.bytes_read + coalesced.bytes_written),
    )


def _copy_case(kernel, n, programs, block, seed):
    """Inputs, guarded output, reference and the launch on the fixed grid (programs,)."""
    x = padded(torch.randn(n, generator=torch.Generator().manual_seed(seed)).to(DEVICE), 2 * block)
    out = padded(torch.zeros(n, device=DEVICE), 2 * block, fill=GUARD)
    want = x.clone()  # before the kernel can write into x
    return out, want, lambda: kernel[(programs,)](x, out, n, BLOCK_SIZE=block)


def q3(env):
    integrity_check()
    kernel = answer(env, "_persistent_copy_kernel")
    for seed, (n, programs, block) in enumerate(
        [(2, 5, 32), (999, 3, 64), (4096, 8, 128), (6000, 2, 256), (12_345, 6, 128)]
    ):
        out, want, launch = _copy_case(kernel, n, programs, block, seed)
        call("_persistent_copy_kernel", launch)
        check_padding(f"out (n={n}, {programs} programs)", out)
        check_tensor(f"persistent copy of {n} elements by {programs} programs", out, want,
                     block=block)  # fmt: skip
    x = torch.randn(3000, generator=torch.Generator().manual_seed(9)).to(DEVICE)
    want = x.clone()
    check_tensor(
        "persistent_copy(x, 5) (your launcher)",
        call("persistent_copy", answer(env, "persistent_copy"), x, 5, BLOCK_SIZE=64),
        want,
        block=64,
    )


def q3_traffic(env):
    # Efficiency (counted in Triton's interpreter by otter, the notebook and the class grader),
    # on the fixed grid of P programs chosen here: each load and store of a grid-stride loop over
    # blocks uses whole 32-byte sectors (all but the ragged last block's), and x is read once, 4
    # bytes per fp32 element. A kernel whose lanes each own a contiguous chunk is correct, but its
    # neighbouring lanes are a chunk apart (13 elements here): one sector per lane, 1/8 used.
    integrity_check()
    kernel = answer(env, "_persistent_copy_kernel")
    n, programs, block = 12_345, 4, 256
    out, want, launch = _copy_case(kernel, n, programs, block, 100)
    check_sector_efficiency(
        "_persistent_copy_kernel",
        launch,
        0.9,
        kind="both",
        what=f"a grid-stride loop over blocks uses whole sectors: {programs} programs of {block} "
        f"lanes cover {programs * block:,} consecutive elements per iteration",
    )
    check_traffic(
        "_persistent_copy_kernel",
        launch,
        {"x_ptr": 4 * n},
        kind="read",
        what=f"one read of each of the {n:,} fp32 elements of x",
    )
    check_padding(f"out (n={n}, {programs} programs)", out)  # a lean kernel must also be correct
    check_tensor(f"persistent copy of {n} elements by {programs} programs", out, want, block=block)


def q4(env):
    integrity_check()
    # check data: model-predicted times with a fixed ±3 % pattern of "noise" (not measurements)
    sizes = np.geomspace(1e3, 1e9, 13)
    times = memory.transfer_time(sizes, 900e9, 5e-6) * (1 + 0.03 * np.sin(np.arange(13)))
    ref = memory.fit_transfer_model(sizes, times)
    fit = call("fit_latency_bandwidth", answer(env, "fit_latency_bandwidth"), sizes, times)
    check_true(
        isinstance(fit, tuple) and len(fit) == 2,
        "fit_latency_bandwidth should return the tuple (latency_s, bandwidth)",
    )
    check_close("latency_s (noisy check data)", fit[0], ref.latency_s, rtol=1e-4, unit="s")
    check_close("bandwidth (noisy check data)", fit[1], ref.bandwidth, rtol=1e-4, unit="B/s")


def q5(env):
    integrity_check()
    t0 = measurements.find("CPU ↔ GPU round-trip latency", "H100-SXM").value
    w = measurements.find("CPU → GPU copy", "H100-SXM").value
    check_close(
        "n_90",
        answer(env, "n_90"),
        9 * memory.half_bandwidth_size(w, t0),
        unit="B",
        hints={1 / 9: "solve n / (t0 + n/W) = 0.9 W for n"},
    )
    check_close(
        "batching_speedup",
        answer(env, "batching_speedup"),
        1000 * memory.transfer_time(4096, w, t0) / memory.transfer_time(4_096_000, w, t0),
    )
    # the 1 MB threshold is the device-local copy's (nvbandwidth device_local_copy), not the
    # host link's: it bounds that copy's t0 from above, t0 <= 1 MB / W_local
    w_local = measurements.find("HBM copy, per direction", "H100-SXM").value
    check_close(
        "local_copy_max_latency_s",
        answer(env, "local_copy_max_latency_s"),
        measurements.LATENCY_BOUND_BELOW_BYTES / w_local,
        unit="s",
        hints={
            w_local / w: "divide by the device-local copy's bandwidth (W_local), not the host "
            "link's: the 1 MB was measured on the HBM-to-HBM copy"
        },
    )


def q6(env):
    integrity_check()
    ring_allreduce_time = answer(env, "ring_allreduce_time")
    for message_bytes, ranks, link_bandwidth, step_latency_s in [
        (2e9, 2, 450e9, 1e-6),
        (3e6, 1024, 50e9, 2e-6),
        (1e3, 64, 300e9, 0.0),
        (7.5e8, 5, 25e9, 5e-6),
    ]:
        ref = collectives.collective_time(
            "all-reduce", message_bytes, ranks, link_bandwidth, step_latency_s
        )
        check_close(
            f"ring_allreduce_time({message_bytes:g}, {ranks}, {link_bandwidth:g}, "
            f"{step_latency_s:g})",
            call(
                "ring_allreduce_time",
                ring_allreduce_time,
                message_bytes,
                ranks,
                link_bandwidth,
                step_latency_s,
            ),
            ref.time_s,
            unit="s",
        )
    allreduce_algbw = answer(env, "allreduce_algbw")
    for bus_bandwidth, ranks in [(335e9, 128), (100e9, 2), (230e9, 16)]:
        check_close(
            f"allreduce_algbw({bus_bandwidth:g}, {ranks})",
            call("allreduce_algbw", allreduce_algbw, bus_bandwidth, ranks),
            collectives.algorithm_bandwidth(bus_bandwidth, "all-reduce", ranks),
            unit="B/s",
        )
    t0 = measurements.find("all-reduce latency, one node", "H100-SXM").value
    busbw = measurements.find("all-reduce bus bandwidth in one node", "H100-SXM").value
    check_close(
        "n_half_node",
        answer(env, "n_half_node"),
        collectives.half_bandwidth_message_bytes(t0, busbw, "all-reduce", 8),
        unit="B",
        hints={1.75: "n½ = t₀ · algbw: the message moves at the algorithm bandwidth, not busbw"},
    )
