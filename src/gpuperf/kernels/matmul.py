"""Tiled matrix multiply ``C = A @ B``: the kernel of the tiling and wave-quantization chapters.

What you learn: a program computes one BLOCK_M×BLOCK_N tile of C, walking K in BLOCK_K steps and
accumulating in fp32. Each A tile is reused BLOCK_N times and each B tile BLOCK_M times, so the
bytes requested fall from M·N·K + M·K·⌈N/BLOCK_N⌉ elements (``matmul_naive``: one row of C at a
time, B read again for every row; counted by :mod:`gpuperf.counting`) to about
M·N·K·(1/BLOCK_N + 1/BLOCK_M) (:mod:`gpuperf.tiling`). ``GROUP_M`` orders programs so
neighbouring programs share A rows in L2; ``num_stages`` pipelines the loads of the next K step
into shared memory while the current step multiplies; ``tl.dot`` becomes tensor-core ``mma``
on sm_80+ (``wgmma`` on sm_90) and FMA on a T4 (Triton ≥ 3.4). FLOPs: 2·M·N·K
(:func:`gpuperf.cost.matmul`). Edges are masked, so any M, N, K works.

Two variants share one reference (:func:`matmul_ref`):

- ``matmul_naive``: one output row per program, FMA only, no reuse — the readable baseline.
- ``matmul``: the tiled kernel, and the course's fast default. Called with no tile arguments it
  picks tiles, warps and stages for the device it runs on (:func:`default_config`, from
  :data:`DEFAULT_CONFIGS`: sm_90, sm_80 and sm_75 rows, and a small interpreter-friendly row on
  the CPU), taking the largest tile that still gives every SM a program and fits the chip's
  shared memory. These rows follow well-known public Triton configurations (128×256×64 with 8
  warps and 3 stages on Hopper, 128×128×32 with 4 warps and 4 stages on Ampere); on a T4 the
  fp16 rows take BLOCK_K = 16, because 64×64×32 spills there. Offline compilation
  (``tests/kernels/test_matmul_configs.py``) proves each row fits its chip without spilling
  registers. How fast they are is measured only by ``python -m gpuperf.bench`` on a GPU.
  ``autotune=True`` times :data:`AUTOTUNE_CONFIGS` once per (M, N, K, dtype) — Triton's
  autotuner adds every tensor argument's dtype to the key — after pruning the configurations
  whose staged tiles cannot fit this device's shared memory. It needs a GPU: without one the
  default configuration is used.

Before compiling, every launch is checked: ``num_warps`` a power of two in 1–32,
``num_stages`` in 1–8, the accumulator within 255 registers per thread, and the staged tiles
within the device's shared memory per block. The estimate is
``buffers·(BLOCK_M·BLOCK_K + BLOCK_K·BLOCK_N)·bytes`` where ``buffers`` is what Triton's
pipeliner keeps (:func:`~gpuperf.kernels._common.pipeline_buffers`), measured by compiling
offline with Triton 3.9 as the JIT specialises a contiguous 4096³ call: ``num_stages`` on sm_90
with ``wgmma`` (128×256×64 fp16, 3 stages: 144 KiB = 3 × 48 KiB), ``num_stages − 1`` where
``cp.async`` pipelines (128×128×32 on sm_80, 4 stages: 48 KiB = 3 × 16 KiB), one on sm_75
(nothing is pipelined there). Without a GPU the sm_90 count and the H100's limit apply.

Row and column offsets are int64: a matrix past 2³¹ elements is addressed correctly. fp32
inputs use IEEE fp32 dot products unless ``tf32=True`` is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from .._validate import choice, optional, positive_int
from ..runtime import has_cuda_gpu, interpreting
from ._common import (
    arch_name,
    block,
    cdiv,
    check_grid,
    check_reference,
    check_shared_memory,
    check_tensor,
    count,
    device_arch,
    flag,
    float_dtype,
    pipeline_buffers,
    precision_of,
    reject_autograd,
    reject_bf16_in_interpreter,
    shared_memory_limit,
    stages,
    warps,
)
from ._common import (
    element_size as _element_size,
)

#: Accumulator registers per thread above which a tile cannot fit (255 registers per thread).
MAX_ACCUMULATOR_PER_THREAD = 255
#: ``matmul_naive`` holds a BLOCK_K×BLOCK_N tile of B in registers: this many elements at most.
MAX_NAIVE_TILE = 16384


def matmul_cost(m: int, n: int, k: int, precision: str = "fp16"):
    from .. import cost

    return cost.matmul(m, n, k, precision)


def matmul_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """fp32-accumulated reference, rounded to a's dtype."""
    _check_shapes(check_reference("a", a, ndim=2), check_reference("b", b, ndim=2))
    return (a.float() @ b.float()).to(a.dtype)  # reads M·K + K·N, writes M·N


@triton.jit
def _matmul_naive_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    # One program per (row m, BLOCK_N columns): every program re-reads all of B.
    # 1-D grid, row fastest: program pid computes row pid % M of column block pid // M.
    pid = tl.program_id(axis=0).to(tl.int64)  # int64: offsets may pass 2³¹
    m = pid % M
    offs_n = (pid // M) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + m * stride_am + offs_k * stride_ak, mask=offs_k < K, other=0.0)
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.sum(a.to(tl.float32)[:, None] * b.to(tl.float32), axis=0)  # FMA, no mma
    c_ptrs = c_ptr + m * stride_cm + offs_n * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=offs_n < N)


@triton.jit
def _matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
):
    # Grouped ordering: GROUP_M tile-rows are swept column by column, so A tiles stay in L2.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)  # int64: may pass 2³¹
    offs_n = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak  # (BM, BK)
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn  # (BK, BN)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


@dataclass(frozen=True)
class MatmulConfig:
    """One launch configuration of ``_matmul_kernel``: tiles, grouping, warps, stages."""

    BLOCK_M: int
    BLOCK_N: int
    BLOCK_K: int
    GROUP_M: int
    num_warps: int
    num_stages: int

    def __post_init__(self) -> None:
        for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
            object.__setattr__(self, name, block(name, getattr(self, name), 16, 256))
        object.__setattr__(self, "GROUP_M", positive_int("GROUP_M", self.GROUP_M, 1, 256))
        object.__setattr__(self, "num_warps", warps(self.num_warps))
        object.__setattr__(self, "num_stages", stages(self.num_stages))

    def shared_memory_bytes(self, element_size: int, arch: str = "sm_90") -> int:
        """Staged A and B tiles: ``pipeline_buffers(num_stages, arch)`` copies of
        (BLOCK_M·BLOCK_K + BLOCK_K·BLOCK_N)·bytes — exact for the default rows (offline)."""
        tile = self.BLOCK_M * self.BLOCK_K + self.BLOCK_K * self.BLOCK_N
        buffers = pipeline_buffers(self.num_stages, arch_name(arch))
        return buffers * tile * _element_size(element_size)

    def accumulator_per_thread(self) -> int:
        """fp32 accumulator registers each thread holds: BLOCK_M·BLOCK_N / (32·num_warps)."""
        return self.BLOCK_M * self.BLOCK_N // (32 * self.num_warps)


def _c(bm: int, bn: int, bk: int, g: int, w: int, s: int) -> MatmulConfig:
    return MatmulConfig(bm, bn, bk, g, w, s)


#: Defaults by device, largest tile first; ``"mma"`` rows serve fp16/bf16 (and fp32 with
#: ``tf32=True``) on tensor cores, ``"fma"`` rows serve IEEE fp32. Public Triton matmul
#: configurations: 128×256×64, 8 warps, 3 stages on Hopper; 128×128×32, 4 warps, 4 stages on
#: Ampere. On a T4 (sm_75) Triton emits no tensor-core instructions: both kinds of row run on FMA,
#: the ``"mma"`` rows serve fp16 there and the ``"fma"`` rows fp32. fp16 operands cost more
#: registers on that path: 64×64×32 with 4 warps compiles (Triton 3.9, offline) to 255 registers
#: and 384 B/thread of spilled registers in fp16 but 120 registers and no spill in fp32, so the
#: T4's fp16 row takes BLOCK_K = 16 (202 registers, no spill, 8 KiB of shared memory).
DEFAULT_CONFIGS: dict[str, dict[str, tuple[MatmulConfig, ...]]] = {
    "sm_90": {
        "mma": (
            _c(128, 256, 64, 8, 8, 3),
            _c(128, 128, 64, 8, 8, 3),
            _c(128, 128, 32, 8, 4, 3),
            _c(64, 128, 64, 8, 4, 4),
            _c(64, 64, 64, 8, 4, 4),
        ),
        "fma": (_c(64, 64, 32, 8, 4, 3), _c(32, 64, 32, 8, 4, 3)),
    },
    "sm_80": {
        "mma": (
            _c(128, 128, 32, 8, 4, 4),
            _c(64, 128, 32, 8, 4, 4),
            _c(64, 64, 32, 8, 4, 4),
        ),
        "fma": (_c(64, 64, 32, 8, 4, 3), _c(32, 64, 32, 8, 4, 3)),
    },
    "sm_75": {
        "mma": (_c(64, 64, 16, 8, 4, 2), _c(32, 64, 32, 8, 4, 2)),  # fp16 (FMA, see above)
        "fma": (_c(64, 64, 32, 8, 4, 2), _c(32, 64, 32, 8, 4, 2)),
    },
    # The interpreter runs a program in ~0.5 ms whatever its size: few, mid-sized tiles. It
    # ignores stages; 3 keeps the shared-memory check what it would be on a GPU.
    "cpu": {
        "mma": (_c(64, 64, 32, 8, 4, 3),),
        "fma": (_c(64, 64, 32, 8, 4, 3),),
    },
}
#: SMs assumed per architecture when picking a tile without a GPU to ask (H100, A100, T4).
_SM_COUNT = {"sm_90": 132, "sm_80": 108, "sm_75": 40, "cpu": 1}

#: Configurations tried by ``autotune=True`` on a GPU; those that cannot fit are pruned first.
AUTOTUNE_CONFIGS = (
    # (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
    (128, 256, 64, 8, 8, 3),
    (256, 128, 64, 8, 8, 3),
    (128, 256, 64, 8, 8, 4),
    (128, 128, 64, 8, 8, 3),
    (128, 128, 64, 8, 4, 4),
    (128, 128, 32, 8, 4, 4),
    (128, 64, 32, 8, 4, 4),
    (64, 128, 32, 8, 4, 4),
    (64, 128, 64, 8, 4, 4),
    (64, 64, 64, 8, 4, 4),
    (64, 64, 32, 8, 4, 4),
    (64, 64, 32, 8, 4, 2),
    (32, 64, 32, 8, 4, 4),
)
_autotuned = None


def _unit(dtype: torch.dtype, tf32: bool, arch: str) -> str:
    """Which row list serves ``dtype``: fp32 uses ``"fma"`` unless TF32 is asked for on a chip
    that has it (not a T4); fp16/bf16 use ``"mma"`` (on a T4 those rows also run on FMA)."""
    if dtype == torch.float32 and (not tf32 or arch == "sm_75"):
        return "fma"
    return "mma"


def default_config(
    m: int,
    n: int,
    dtype: torch.dtype = torch.float16,
    *,
    tf32: bool = False,
    arch: str | None = None,
    shared_memory_bytes: int | None = None,
    sm_count: int | None = None,
) -> MatmulConfig:
    """The configuration ``matmul`` uses when no tile arguments are given.

    From ``DEFAULT_CONFIGS[arch]`` (default: :func:`device_arch`), the largest tile that fits
    ``shared_memory_bytes`` (default: this device's per-block limit) and still launches at least
    one program per SM for an (m, n) output; if none does, the smallest tile that fits.
    """
    from ..hardware import chip

    m, n = positive_int("m", m), positive_int("n", n)
    float_dtype("dtype", dtype)
    tf32 = flag("tf32", tf32)
    arch = device_arch() if arch is None else choice("arch", arch, DEFAULT_CONFIGS)
    optional("shared_memory_bytes", shared_memory_bytes, positive_int, maximum=1 << 30)
    optional("sm_count", sm_count, positive_int, maximum=1 << 16)
    if shared_memory_bytes is None:
        if arch == device_arch():
            shared_memory_bytes = shared_memory_limit()[0]
        else:
            name = {"sm_90": "H100-SXM", "sm_80": "A100-80GB", "sm_75": "T4"}.get(arch, "H100")
            shared_memory_bytes = chip(name).shared_memory_per_block_bytes
    if sm_count is None:
        sm_count = _SM_COUNT[arch]
        if arch != "cpu" and arch == device_arch():
            sm_count = torch.cuda.get_device_properties(0).multi_processor_count
    size = torch.empty((), dtype=dtype).element_size()
    fitting = [
        c
        for c in DEFAULT_CONFIGS[arch][_unit(dtype, tf32, arch)]
        if c.shared_memory_bytes(size, arch) <= shared_memory_bytes
    ]
    if not fitting:
        raise ValueError(
            f"no default matmul configuration for {arch} fits shared_memory_bytes="
            f"{shared_memory_bytes} bytes of shared memory per block"
        )
    for c in fitting:
        if cdiv(m, c.BLOCK_M) * cdiv(n, c.BLOCK_N) >= sm_count:
            return c
    return fitting[-1]


def _prune_configs(configs, named_args, **kwargs):
    """Autotuning: drop configurations whose staged tiles cannot fit this device."""
    limit, _ = shared_memory_limit()
    size = named_args["a_ptr"].element_size()
    kept = [
        c
        for c in configs
        if MatmulConfig(
            **c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages
        ).shared_memory_bytes(size, device_arch())
        <= limit
    ]
    return kept or [min(configs, key=lambda c: c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"])]


def _autotuned_kernel():
    global _autotuned
    if _autotuned is None:
        configs = [
            triton.Config(
                {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": g},
                num_warps=w,
                num_stages=s,
            )
            for bm, bn, bk, g, w, s in AUTOTUNE_CONFIGS
        ]
        # Triton appends every tensor argument's dtype to the key: (M, N, K, dtypes).
        _autotuned = triton.autotune(
            configs=configs,
            key=["M", "N", "K"],
            prune_configs_by={"early_config_prune": _prune_configs},
        )(_matmul_kernel)
    return _autotuned


def _check_config(config: MatmulConfig, dtype: torch.dtype, what: str = "matmul") -> MatmulConfig:
    """Validate a configuration before compiling: bounds, registers, shared memory."""
    block("BLOCK_M", config.BLOCK_M, 16, 256)
    block("BLOCK_N", config.BLOCK_N, 16, 256)
    block("BLOCK_K", config.BLOCK_K, 16, 256)
    count("GROUP_M", config.GROUP_M, 1)
    warps(config.num_warps)
    stages(config.num_stages)
    acc = config.accumulator_per_thread()
    if acc > MAX_ACCUMULATOR_PER_THREAD:
        raise ValueError(
            f"{what}: a {config.BLOCK_M}×{config.BLOCK_N} fp32 accumulator over "
            f"{config.num_warps} warps is {acc} registers per thread; a thread has at most "
            f"{MAX_ACCUMULATOR_PER_THREAD}. Use smaller tiles or more warps."
        )
    size = torch.empty((), dtype=dtype).element_size()
    check_shared_memory(
        what,
        config.shared_memory_bytes(size, device_arch()),
        f"{config.BLOCK_M}×{config.BLOCK_N}×{config.BLOCK_K} {precision_of(dtype)} tiles with "
        f"num_stages={config.num_stages}",
    )
    return config


def _check_operands(a: torch.Tensor, b: torch.Tensor, what: str) -> tuple[int, int, int]:
    check_tensor("a", a, ndim=2, contiguous=False)
    check_tensor("b", b, ndim=2, contiguous=False)
    _check_shapes(a, b)
    reject_bf16_in_interpreter(a, what)
    reject_autograd(what, a, b)
    return a.shape[0], b.shape[1], a.shape[1]


def _check_shapes(a: torch.Tensor, b: torch.Tensor) -> None:
    if a.dtype != b.dtype:
        raise TypeError(f"a.dtype={a.dtype} but b.dtype={b.dtype}; they must match")
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"a has shape {tuple(a.shape)} and b {tuple(b.shape)}: "
            f"a.shape[1]={a.shape[1]} must equal b.shape[0]={b.shape[0]}"
        )


def matmul_naive(
    a: torch.Tensor, b: torch.Tensor, *, BLOCK_N: int = 64, BLOCK_K: int = 64
) -> torch.Tensor:
    """``a @ b`` one output row-block per program, FMA only, no reuse of B across rows."""
    m, n, k = _check_operands(a, b, "matmul_naive")
    BLOCK_N = block("BLOCK_N", BLOCK_N, 16, 1024)
    BLOCK_K = block("BLOCK_K", BLOCK_K, 16, 1024)
    if BLOCK_N * BLOCK_K > MAX_NAIVE_TILE:
        raise ValueError(
            f"matmul_naive: BLOCK_K×BLOCK_N = {BLOCK_K}×{BLOCK_N} = {BLOCK_K * BLOCK_N} elements "
            f"held in registers; at most {MAX_NAIVE_TILE} (128 per thread over 4 warps)"
        )
    grid = check_grid((m * cdiv(n, BLOCK_N),), "matmul_naive")
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    _matmul_naive_kernel[grid](
        a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride(), BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K
    )
    return c


def matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    BLOCK_M: int | None = None,
    BLOCK_N: int | None = None,
    BLOCK_K: int | None = None,
    GROUP_M: int | None = None,
    num_warps: int | None = None,
    num_stages: int | None = None,
    tf32: bool = False,
    autotune: bool = False,
) -> torch.Tensor:
    """``a @ b`` for 2-D fp32/fp16 (bf16 on a GPU) tensors of any shape and strides.

    Accumulates in fp32; the result has a's dtype. Arguments left as ``None`` come from
    :func:`default_config` for this device (tiles for sm_90 / sm_80 / sm_75, or the CPU);
    arguments given replace them. ``tf32=True`` lets fp32 inputs use TF32 tensor cores (sm_80+);
    otherwise fp32 dot products are IEEE fp32. ``autotune=True`` times ``AUTOTUNE_CONFIGS`` on
    a GPU (keyed on M, N, K and dtype). No backward: inputs requiring grad are refused.
    """
    m, n, k = _check_operands(a, b, "matmul")
    tf32, autotune = flag("tf32", tf32), flag("autotune", autotune)
    precision = "tf32" if (tf32 and a.dtype == torch.float32) else "ieee"
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    args = (a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride())
    if autotune and has_cuda_gpu() and not interpreting():
        grid = lambda meta: check_grid(
            (cdiv(m, meta["BLOCK_M"]) * cdiv(n, meta["BLOCK_N"]),), "matmul"
        )
        _autotuned_kernel()[grid](*args, INPUT_PRECISION=precision)
        return c
    base = default_config(m, n, a.dtype, tf32=tf32)
    given = dict(
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    config = _check_config(
        MatmulConfig(**{key: getattr(base, key) if v is None else v for key, v in given.items()}),
        a.dtype,
    )
    grid = check_grid((cdiv(m, config.BLOCK_M) * cdiv(n, config.BLOCK_N),), "matmul")
    _matmul_kernel[grid](
        *args,
        BLOCK_M=config.BLOCK_M,
        BLOCK_N=config.BLOCK_N,
        BLOCK_K=config.BLOCK_K,
        GROUP_M=config.GROUP_M,
        INPUT_PRECISION=precision,
        num_warps=config.num_warps,
        num_stages=config.num_stages,
    )
    return c


__all__ = [
    "AUTOTUNE_CONFIGS",
    "DEFAULT_CONFIGS",
    "MatmulConfig",
    "default_config",
    "matmul",
    "matmul_cost",
    "matmul_naive",
    "matmul_ref",
]
