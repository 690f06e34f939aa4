"""Hidden checks of lab 1 (autograder only; the master's ``# HIDDEN`` cells run them).

Each ``qN(env)`` takes the student's answers, and nothing else, from the notebook namespace
``env``: references, helpers and constants are imported or defined here, so a notebook that
redefines ``np``, ``OPS`` or ``CHIPS`` cannot change what its answers are compared with. A
reference is computed before the student's function sees its inputs (a function may write into
its arguments).
"""

import numpy as np

from gpuperf import chip, cost, parallelism, roofline
from gpuperf.grading import (
    answer,
    call,
    check_choice,
    check_close,
    check_mapping,
    check_tensor,
    integrity_check,
)

CHIPS = ["A100-80GB", "H100-SXM", "TPU-v5e"]
CHIP_PRECISION = {"T4": "fp16", "A100-80GB": "bf16", "H100-SXM": "bf16"}


def q1(env):
    integrity_check()
    check_close("dot_intensity", answer(env, "dot_intensity"), cost.dot(4096, "bf16").intensity)
    check_close(
        "matmul_intensity",
        answer(env, "matmul_intensity"),
        cost.matmul(4096, 4096, 4096, "bf16").intensity,
    )


def q2(env):
    integrity_check()
    ref = roofline.time_bounds(cost.matmul(256, 8192, 8192, "bf16"), "H100-SXM", "bf16")
    check_close(
        "t_comms_s",
        answer(env, "t_comms_s"),
        ref.t_comms_s,
        unit="s",
        hints={0.5: "bf16 is 2 bytes per element"},
    )
    check_close("lower_s", answer(env, "lower_s"), ref.lower_s, unit="s")
    check_choice("bound", answer(env, "bound"), ref.bound, ["memory", "compute"])


def q3(env):
    integrity_check()
    check_mapping(
        "critical_bf16",
        answer(env, "critical_bf16"),
        {name: roofline.critical_batch_size(name, "bf16") for name in CHIPS},
    )
    check_close(
        "critical_int8_h100",
        answer(env, "critical_int8_h100"),
        roofline.critical_batch_size("H100-SXM", "bf16", weight_precision="int8"),
    )
    check_close(
        "critical_batch('TPU-v5e', 1)",
        call("critical_batch", answer(env, "critical_batch"), "TPU-v5e", 1),
        roofline.critical_batch_size("TPU-v5e", "bf16", weight_precision="int8"),
    )


def q4(env):
    integrity_check()
    roof = answer(env, "roof")
    x = np.logspace(-2, 5, 57)
    want = roofline.attainable_flops(x.copy(), "H100-SXM", "bf16")  # before roof can touch x
    check_tensor(
        "roof(x, 'H100-SXM', 'bf16')", call("roof", roof, x, "H100-SXM", "bf16"), want, rtol=1e-6
    )
    check_tensor(
        "roof(1.0, 'A100-80GB', 'fp32')",
        call("roof", roof, 1.0, "A100-80GB", "fp32"),
        roofline.attainable_flops(1.0, "A100-80GB", "fp32"),
        rtol=1e-6,
    )


def q5(env):
    integrity_check()
    ops = {
        "relu": cost.elementwise(2**24, "bf16"),
        "softmax": cost.softmax(4096, 4096, "bf16"),
        "matmul B=32": cost.matmul(32, 8192, 8192, "bf16"),
        "matmul B=256": cost.matmul(256, 8192, 8192, "bf16"),
        "matmul B=512": cost.matmul(512, 8192, 8192, "bf16"),
        "matmul 8192²": cost.matmul(8192, 8192, 8192, "bf16"),
    }
    check_mapping(
        "verdicts",
        answer(env, "verdicts"),
        {
            (op_name, chip_name): roofline.time_bounds(op, chip_name, precision).bound
            for op_name, op in ops.items()
            for chip_name, precision in CHIP_PRECISION.items()
        },
    )


def q6(env):
    integrity_check()
    h100 = chip("H100-SXM")
    latency_s = parallelism.dram_latency("H100-SXM").value
    check_close(
        "tensor_clock_hz",
        answer(env, "tensor_clock_hz"),
        parallelism.peak_decomposition(h100, "bf16").implied_clock_hz,
        unit="Hz",
    )
    vector = parallelism.memory_parallelism(h100, latency_s, bytes_per_load=16, loads_in_flight=1)
    check_close(
        "bytes_in_flight_per_sm",
        answer(env, "bytes_in_flight_per_sm"),
        vector.bytes_in_flight_per_sm,
        unit="B",
        hints={float(h100.sm_count): "divide the chip's bytes in flight by its number of SMs"},
    )
    check_close("warps_needed", answer(env, "warps_needed"), vector.warps_needed_per_sm)
    scalar = parallelism.memory_parallelism(h100, latency_s, bytes_per_load=4, loads_in_flight=1)
    check_close(
        "min_loads_in_flight",
        answer(env, "min_loads_in_flight"),
        scalar.loads_in_flight_needed_at_full_occupancy,
    )
