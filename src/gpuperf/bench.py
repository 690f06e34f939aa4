"""Measure course kernels on a real GPU against their roofline floor.

Every line prints the bound first, then the measurement: ``floor 41 µs (HBM), measured 47 µs,
87 % of roofline``. The floor is ``max(FLOPs / peak, bytes / bandwidth)`` from the kernel's cost
model, with peak and bandwidth from the chip table (:mod:`gpuperf.hardware`) or from ceilings
measured once on this GPU (a large device-to-device copy and a large ``torch.matmul``), which
are the roofs a kernel can actually reach. Timings come from ``triton.testing.do_bench``.

With no CUDA GPU nothing can be measured: :func:`main` says so and exits non-zero, and every
function that would time something raises :class:`NoGPUError`. Nothing here invents a number.

Targets the harness reports against (to be verified on a GPU, see :data:`TARGETS`).
Run: ``python -m gpuperf.bench [--chip A100] [--table-ceilings]``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from .cost import OpCost
from .runtime import has_cuda_gpu, require
from .units import format_bandwidth, format_flops, format_seconds

NO_GPU_MESSAGE = (
    "No CUDA GPU is present, so nothing can be measured here: gpuperf never simulates or "
    "invents a timing. Run this on a GPU (e.g. Colab: Runtime → Change runtime type → T4 GPU); "
    "the roofline floors are available without a GPU from gpuperf.roofline."
)

#: What the harness checks on a GPU: (description, fraction, what it is a fraction of).
TARGETS = (
    ("memory-bound kernels", 0.85, "of the measured copy bandwidth"),
    ("fp16 matmul at 4096³", 0.90, "of torch.matmul on A100/H100"),
    ("FlashAttention-2 forward, N=4096, d=64", 0.70, "of torch's scaled_dot_product_attention"),
)


class NoGPUError(RuntimeError):
    """Raised instead of returning a number when there is no GPU to measure on."""


@dataclass(frozen=True)
class Floor:
    """The roofline lower bound on a kernel's time: max(FLOPs / peak, bytes / bandwidth)."""

    time_s: float
    bound: str  # "HBM" or "compute"
    t_math_s: float
    t_memory_s: float
    source: str  # "chip table: A100-80GB" or "measured ceilings"


def roofline_floor(
    op: OpCost,
    peak_flops_per_s: float,
    bandwidth_bytes_per_s: float,
    source: str = "",
) -> Floor:
    """Floor for ``op`` given a math peak and a memory bandwidth (both > 0)."""
    if peak_flops_per_s <= 0 or bandwidth_bytes_per_s <= 0:
        raise ValueError(
            f"peak_flops_per_s={peak_flops_per_s!r} and bandwidth_bytes_per_s="
            f"{bandwidth_bytes_per_s!r} must be > 0"
        )
    t_math = op.flops / peak_flops_per_s
    t_mem = op.bytes / bandwidth_bytes_per_s
    bound = "compute" if t_math > t_mem else "HBM"
    return Floor(max(t_math, t_mem), bound, t_math, t_mem, source)


def chip_floor(op: OpCost, chip_name: str, precision: str) -> Floor:
    """Floor from the chip table: ``precision``'s dense peak and the HBM bandwidth."""
    from .hardware import chip

    c = chip(chip_name)
    return roofline_floor(op, c.peak_flops(precision), c.hbm_bandwidth, f"chip table: {c.name}")


@dataclass(frozen=True)
class Measurement:
    """One kernel measured against its floor."""

    name: str
    op: OpCost
    floor: Floor
    measured_s: float

    @property
    def fraction_of_roofline(self) -> float:
        return self.floor.time_s / self.measured_s

    @property
    def achieved_bandwidth(self) -> float:
        return self.op.bytes / self.measured_s

    @property
    def achieved_flops_per_s(self) -> float:
        return self.op.flops / self.measured_s

    def format(self) -> str:
        rate = (
            format_flops(self.achieved_flops_per_s)
            if self.floor.bound == "compute"
            else format_bandwidth(self.achieved_bandwidth)
        )
        return (
            f"{self.name}: floor {format_seconds(self.floor.time_s)} ({self.floor.bound}), "
            f"measured {format_seconds(self.measured_s)}, "
            f"{100 * self.fraction_of_roofline:.0f} % of roofline ({rate})"
        )


def format_table(measurements: list[Measurement]) -> str:
    """One line per kernel, floor first."""
    return "\n".join(m.format() for m in measurements)


def _require_gpu() -> None:
    if not has_cuda_gpu():
        raise NoGPUError(NO_GPU_MESSAGE)


def measure_seconds(fn: Callable[[], object], *, warmup_ms: int = 25, rep_ms: int = 100) -> float:
    """Median time of ``fn()`` in seconds with ``triton.testing.do_bench`` (GPU only)."""
    _require_gpu()
    testing = require("triton.testing", "pip install triton")
    ms = testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median")
    return float(ms) * 1e-3


@dataclass(frozen=True)
class Ceilings:
    """Roofs measured on this GPU: device copy bandwidth and torch.matmul fp16 FLOP/s."""

    copy_bandwidth: float
    matmul_flops_per_s: float


def measure_ceilings(copy_bytes: int = 1 << 30, matmul_n: int = 8192) -> Ceilings:
    """A large device-to-device copy and a large fp16 ``torch.matmul``, timed once (GPU only)."""
    _require_gpu()
    import torch

    src = torch.empty(copy_bytes // 2, dtype=torch.float16, device="cuda")
    dst = torch.empty_like(src)
    t_copy = measure_seconds(lambda: dst.copy_(src))
    a = torch.randn(matmul_n, matmul_n, dtype=torch.float16, device="cuda")
    b = torch.randn_like(a)
    t_mm = measure_seconds(lambda: a @ b)
    return Ceilings(2 * src.numel() * 2 / t_copy, 2 * matmul_n**3 / t_mm)


def _cases() -> list[tuple[str, OpCost, str, Callable[[], Callable[[], object]]]]:
    """(name, cost, precision, setup) per kernel; setup allocates and returns the callable."""
    import torch

    from . import cost, kernels
    from .kernels.flash_attention import attention_cost
    from .kernels.fusion import sin2cos2_cost

    n = 1 << 26
    mm = 4096
    b, h, s, d = 4, 16, 4096, 64

    def vec(fn, dtype=torch.float32, inputs=1):
        def setup():
            xs = [torch.randn(n, device="cuda", dtype=dtype) for _ in range(inputs)]
            return lambda: fn(*xs)

        return setup

    def matmul_setup(fn):
        def setup():
            x = torch.randn(mm, mm, device="cuda", dtype=torch.float16)
            y = torch.randn(mm, mm, device="cuda", dtype=torch.float16)
            return lambda: fn(x, y)

        return setup

    def attn_setup(fn):
        def setup():
            q, k, v = (
                torch.randn(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3)
            )
            return lambda: fn(q, k, v)

        return setup

    sdpa = torch.nn.functional.scaled_dot_product_attention
    return [
        (
            "vector_add fp32",
            cost.elementwise(n, "fp32", n_inputs=2),
            "fp32",
            vec(kernels.vector_add, inputs=2),
        ),
        ("relu fp16", cost.elementwise(n, "fp16"), "fp16", vec(kernels.relu, torch.float16)),
        ("gelu fp32", cost.elementwise(n, "fp32", flops_per_element=8), "fp32", vec(kernels.gelu)),
        (
            "sin²+cos² unfused (torch)",
            sin2cos2_cost(n, fused=False),
            "fp32",
            vec(kernels.sin2cos2_unfused),
        ),
        ("sin²+cos² fused", sin2cos2_cost(n), "fp32", vec(kernels.sin2cos2_fused)),
        ("copy coalesced fp32", OpCost(0, 4 * n, 4 * n), "fp32", vec(kernels.copy_coalesced)),
        (
            "softmax fp32 4096×4096",
            cost.softmax(4096, 4096, "fp32"),
            "fp32",
            lambda: (lambda x: lambda: kernels.softmax(x))(torch.randn(4096, 4096, device="cuda")),
        ),
        (
            "matmul fp16 4096³",
            cost.matmul(mm, mm, mm, "fp16"),
            "fp16",
            matmul_setup(lambda x, y: kernels.matmul(x, y, autotune=True)),
        ),
        (
            "torch.matmul fp16 4096³",
            cost.matmul(mm, mm, mm, "fp16"),
            "fp16",
            matmul_setup(torch.matmul),
        ),
        (
            "FlashAttention-2 fwd fp16 N=4096 d=64",
            attention_cost(b, h, s, d, "fp16"),
            "fp16",
            attn_setup(lambda q, k, v: kernels.FlashAttention.apply(q, k, v, False)),
        ),
        (
            "torch SDPA fwd fp16 N=4096 d=64",
            attention_cost(b, h, s, d, "fp16"),
            "fp16",
            attn_setup(sdpa),
        ),
    ]


def _progress(items, enabled: bool):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None
    if not enabled:
        yield from items
        return
    if tqdm is not None:
        yield from tqdm(items, desc="measuring", file=sys.stderr)
        return
    total = len(items)
    for i, item in enumerate(items, 1):
        bar = "#" * (20 * i // total)
        print(f"\r[{bar:<20}] {i}/{total} {item[0][:40]:<40}", end="", file=sys.stderr)
        yield item
    print(file=sys.stderr)


def run(
    chip_name: str | None = None, *, measured_ceilings: bool = True, progress: bool = True
) -> list[Measurement]:
    """Measure every course kernel on this GPU (raises :class:`NoGPUError` without one)."""
    _require_gpu()
    import torch

    from .hardware import chip, chip_from_device_name

    the_chip = (
        chip(chip_name) if chip_name else chip_from_device_name(torch.cuda.get_device_name())
    )
    ceilings = measure_ceilings() if measured_ceilings else None
    if ceilings is None and the_chip is None:
        raise ValueError(
            f"GPU {torch.cuda.get_device_name()!r} is not in the chip table; pass chip_name "
            "or use measured_ceilings=True"
        )
    out = []
    for name, op, precision, setup in _progress(_cases(), progress):
        if ceilings is not None:
            peak = (
                ceilings.matmul_flops_per_s
                if precision == "fp16"
                else (the_chip.peak_flops(precision) if the_chip else ceilings.matmul_flops_per_s)
            )
            floor = roofline_floor(op, peak, ceilings.copy_bandwidth, "measured ceilings")
        else:
            floor = chip_floor(op, the_chip.name, precision)
        out.append(Measurement(name, op, floor, measure_seconds(setup())))
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m gpuperf.bench``: the floor-first table, or a clear no-GPU message (exit 1)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m gpuperf.bench", description=__doc__)
    parser.add_argument("--chip", help="chip table row to use (default: detected)")
    parser.add_argument(
        "--table-ceilings",
        action="store_true",
        help="use the chip table's peaks instead of ceilings measured on this GPU",
    )
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if not has_cuda_gpu():
        print(NO_GPU_MESSAGE, file=sys.stderr)
        return 1
    results = run(
        args.chip, measured_ceilings=not args.table_ceilings, progress=not args.no_progress
    )
    print(format_table(results))
    print("\nTargets (check against the lines above):")
    for what, fraction, of in TARGETS:
        print(f"  {what}: ≥ {fraction:.0%} {of}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
