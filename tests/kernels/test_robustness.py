"""Issue 15 for the kernels: NaN/inf like torch, no silent autograd cut, feasibility before
compiling, grids within CUDA's axis limits, int64 offsets (the big-tensor cases run on a GPU)."""

from __future__ import annotations

import math

import pytest
import torch

from gpuperf import kernels as K  # noqa: N812
from gpuperf.kernels import _common
from gpuperf.kernels.copy import copy_cost
from gpuperf.kernels.divergence import MAX_ITERS
from gpuperf.kernels.flash_attention import FlashConfig, _flash_grid, attention_ref
from gpuperf.kernels.flash_attention import _check_config as flash_check_config
from gpuperf.kernels.fusion import sin2cos2_cost
from gpuperf.kernels.softmax import softmax_cost, softmax_ref
from gpuperf.kernels.transpose import _transpose_grid, transpose_cost, transpose_ref

from .conftest import DEVICE, assert_close, randn

NAN, INF = float("nan"), float("inf")
SOFTMAXES = {"fused": K.softmax, "online": lambda x: K.softmax_online(x, BLOCK_N=16)}


def t(*values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype, device=DEVICE)


# ---------------------------------------------------------------------------------- NaN and inf


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_relu_keeps_nan_like_torch(dtype):
    x = t(NAN, -0.0, INF, -INF, -2.0, 3.0, dtype=dtype)
    out = K.relu(x)
    want = torch.relu(x)
    assert torch.isnan(out[0]), "relu(nan) must be nan, as torch.relu"
    torch.testing.assert_close(out, want, equal_nan=True)


def test_gelu_keeps_nan():
    out = K.gelu(t(NAN, 1.0))
    assert torch.isnan(out[0]) and not torch.isnan(out[1])


@pytest.mark.parametrize("kernel", SOFTMAXES)
@pytest.mark.parametrize(
    "row",
    [(1.0, NAN, 2.0), (1.0, INF, 2.0), (INF, INF, 1.0), (NAN, -INF, 0.0), (-INF, 1.0, INF)],
)
def test_softmax_row_with_nan_or_inf_is_nan_like_torch(kernel, row):
    # 40 columns so the online kernel streams three blocks of 16 and the odd value sits in one.
    x = torch.zeros(3, 40, device=DEVICE)
    x[1, 17 : 17 + len(row)] = t(*row)
    out = SOFTMAXES[kernel](x)
    want = torch.softmax(x, dim=-1)
    assert torch.isnan(want[1]).all()  # torch: the whole row is NaN
    torch.testing.assert_close(out, want, equal_nan=True)
    assert torch.isfinite(out[0]).all() and torch.isfinite(out[2]).all()


@pytest.mark.parametrize("kernel", SOFTMAXES)
def test_softmax_minus_inf_entries_and_fully_masked_rows(kernel):
    x = torch.randn(3, 40, device=DEVICE)
    x[0, ::3] = -INF  # partly masked: as torch
    x[1] = -INF  # fully masked: the course gives 0 where torch gives NaN (documented)
    out = SOFTMAXES[kernel](x)
    torch.testing.assert_close(out[0], torch.softmax(x[0], dim=-1))
    assert (out[1] == 0).all()
    assert torch.isnan(torch.softmax(x[1], dim=-1)).all()
    torch.testing.assert_close(out, softmax_ref(x))


def test_softmax_ref_states_the_same_conventions():
    x = torch.tensor([[1.0, NAN, 2.0], [-INF, -INF, -INF], [1.0, INF, 0.0]])
    out = softmax_ref(x)
    assert torch.isnan(out[0]).all() and (out[1] == 0).all() and torch.isnan(out[2]).all()


def test_flash_attention_nan_reaches_only_its_rows():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 20, 16, generator=g).to(DEVICE) for _ in range(3))
    q[0, 3, 5] = NAN
    with torch.no_grad():
        o = K.flash_attention(q, k, v, BLOCK_M=16, BLOCK_N=16)
    assert torch.isnan(o[0, 3]).all()
    rows = [i for i in range(20) if i != 3]
    torch.testing.assert_close(o[0, rows], attention_ref(q, k, v)[0, rows])


# ---------------------------------------------------------------------------------- autograd

NO_BACKWARD = {
    "vector_add": lambda x: K.vector_add(x, x),
    "relu": K.relu,
    "gelu": K.gelu,
    "sin2cos2_fused": K.sin2cos2_fused,
    "copy_coalesced": K.copy_coalesced,
    "copy_strided": lambda x: K.copy_strided(x, 2),
    "copy_misaligned": lambda x: K.copy_misaligned(x, 1),
    "softmax": K.softmax,
    "softmax_online": K.softmax_online,
    "divergence_split": K.divergence_split,
    "divergence_uniform": K.divergence_uniform,
    "transpose_naive": K.transpose_naive,
    "transpose_tiled": K.transpose_tiled,
    "matmul": lambda x: K.matmul(x, x),
    "matmul_naive": lambda x: K.matmul_naive(x, x),
}


@pytest.mark.parametrize("name", NO_BACKWARD)
def test_launchers_without_backward_refuse_inputs_that_require_grad(name):
    x = torch.randn(16, 16, device=DEVICE, requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"{name.split('_')[0]}.* has no backward pass"):
        NO_BACKWARD[name](x)
    with torch.no_grad():  # the same call is fine where no graph is being built
        out = NO_BACKWARD[name](x)
    assert not out.requires_grad
    NO_BACKWARD[name](x.detach())


def test_flash_attention_supports_autograd():
    q = torch.randn(1, 20, 16, device=DEVICE, requires_grad=True)
    o = K.flash_attention(q, q.detach(), q.detach(), BLOCK_M=16, BLOCK_N=16)
    assert o.requires_grad
    o.sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()


# ---------------------------------------------------------------------------------- flags, dtypes


def test_flags_must_be_bools():
    q = torch.randn(1, 8, 16, device=DEVICE)
    with pytest.raises(TypeError, match=r"is_causal='no' must be True or False"):
        K.flash_attention(q, q, q, "no")
    with pytest.raises(TypeError, match=r"is_causal='no'"):
        K.FlashAttention.apply(q, q, q, "no")
    with pytest.raises(TypeError, match=r"is_causal=1"):
        K.FlashAttentionTorch.apply(q, q, q, 1)
    with pytest.raises(TypeError, match=r"tf32='yes'"):
        K.matmul(q[0], q[0].T, tf32="yes")
    with pytest.raises(TypeError, match=r"autotune=None"):
        K.matmul(q[0], q[0].T, autotune=None)
    with pytest.raises(TypeError, match=r"fused=None"):
        softmax_cost(4, 4, fused=None)
    with pytest.raises(TypeError, match=r"fused='no'"):
        sin2cos2_cost(4, fused="no")


def test_flash_attention_torch_rejects_int64_and_mixed_dtypes():
    q = torch.randn(1, 8, 16)
    with pytest.raises(TypeError, match=r"q.dtype=torch.int64 is not supported"):
        K.FlashAttentionTorch.apply(q.long(), q.long(), q.long(), False)
    with pytest.raises(TypeError, match=r"k.dtype=torch.float16 but q.dtype=torch.float32"):
        K.FlashAttentionTorch.apply(q, q.half(), q, False)
    with pytest.raises(TypeError, match=r"v.dtype=torch.float64 but q.dtype=torch.float32"):
        K.FlashAttentionTorch.apply(q, q, q.double(), False)
    o = K.FlashAttentionTorch.apply(q.double(), q.double(), q.double(), False)  # fp64 is fine
    assert o.dtype == torch.float64


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: transpose_cost(-3, -5), r"m=-3 must be an integer ≥ 1"),
        (lambda: transpose_cost(3, 0), r"n=0 must be an integer ≥ 1"),
        (lambda: copy_cost(10, stride=0), r"stride=0 must be an integer ≥ 1"),
        (lambda: copy_cost(10, stride=-8), r"stride=-8"),
        (lambda: copy_cost(10, stride=math.nan), r"stride=nan"),
        (lambda: copy_cost(10, stride=2.5), r"stride=2.5"),
        (lambda: copy_cost(0), r"n_out=0"),
        (lambda: sin2cos2_cost(3.5), r"n=3.5 must be an integer"),
        (lambda: sin2cos2_cost(True), r"n=True"),
    ],
)
def test_cost_helpers_validate(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_cost_helpers_still_count():
    assert transpose_cost(3, 5).bytes == 2 * 3 * 5 * 4
    assert copy_cost(10, stride=2.0).bytes_read == 10 * 8
    assert sin2cos2_cost(4.0).bytes == 2 * 4 * 4


# ---------------------------------------------------------------------------------- feasibility


def x2(*shape, dtype=torch.float32):
    return torch.randn(*shape, device=DEVICE).to(dtype)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: K.matmul(x2(8, 8), x2(8, 8), num_stages=1000),
            r"num_stages=1000 must be an integer in 1–8",
        ),
        (lambda: K.matmul(x2(8, 8), x2(8, 8), num_warps=64), r"num_warps=64 .* ≤ 32"),
        (
            # fp32 256×256×64 over 32 warps: 3·(256·64 + 64·256)·4 B = 384 KiB of staged tiles
            lambda: K.matmul(
                x2(8, 8), x2(8, 8), BLOCK_M=256, BLOCK_N=256, BLOCK_K=64, num_warps=32
            ),
            r"needs about 393216 bytes \(384 KiB\) of shared memory per block; .* allows",
        ),
        (
            lambda: K.matmul(
                x2(8, 8, dtype=torch.float16),
                x2(8, 8, dtype=torch.float16),
                BLOCK_M=256,
                BLOCK_N=256,
                BLOCK_K=256,
                num_warps=16,
                num_stages=4,
            ),
            r"256×256×256 fp16 tiles with num_stages=4 needs about 1048576 bytes",
        ),
        (
            lambda: K.matmul(x2(8, 8), x2(8, 8), BLOCK_M=256, BLOCK_N=256, num_warps=4),
            r"256×256 fp32 accumulator over 4 warps is 512 registers per thread",
        ),
        (
            lambda: K.matmul_naive(x2(8, 8), x2(8, 8), BLOCK_N=1024, BLOCK_K=1024),
            r"BLOCK_K×BLOCK_N = 1024×1024 = 1048576 elements .* at most 16384",
        ),
        (
            lambda: K.divergence_split(x2(64), iters=20000),
            rf"iters=20000 must be an integer in 1–{MAX_ITERS}",
        ),
        (
            lambda: K.flash_attention(
                x2(1, 8, 256), x2(1, 8, 256), x2(1, 8, 256), BLOCK_M=256, BLOCK_N=256
            ),
            r"BLOCK_M=256, BLOCK_N=256, d=256 over 4 warps keeps 1536 fp32 values per thread",
        ),
        (
            lambda: K.flash_attention(
                x2(1, 8, 256),
                x2(1, 8, 256),
                x2(1, 8, 256),
                BLOCK_M=16,
                BLOCK_N=256,
                num_warps=32,
                num_stages=2,
            ),
            r"K and V tiles of 256×256 with num_stages=2 .* needs about 1064960 bytes",
        ),
        (
            lambda: K.flash_attention(x2(1, 8, 16), x2(1, 8, 16), x2(1, 8, 16), num_stages=9),
            r"num_stages=9 must be an integer in 1–8",
        ),
    ],
)
def test_infeasible_launches_are_refused_before_compiling(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_shared_memory_limit_without_gpu_is_the_largest_course_target():
    limit, source = _common.shared_memory_limit()
    if DEVICE == "cpu":
        assert limit == 227 * 1024 and "H100" in source
    else:
        assert limit >= 48 * 1024


def test_flash_config_estimates():
    cfg = FlashConfig(64, 64, 4, 2)
    # K and V: 2 stages × 2 × 64×64 fp16, plus one 64×64 Q tile
    assert cfg.shared_memory_bytes(64, 2) == 2 * 2 * 64 * 64 * 2 + 64 * 64 * 2
    assert cfg.live_per_thread(64) == (2 * 64 * 64 + 64 * 64) // 128
    assert cfg.live_per_thread(40) == cfg.live_per_thread(64)  # d rounds up to BLOCK_D
    assert flash_check_config(cfg, 256, torch.float16) == cfg  # d=256 at 64×64 is allowed


# ---------------------------------------------------------------------------------- grids


def test_grids_are_one_dimensional_and_fold_what_used_to_overflow_axis_1():
    # transpose_tiled((1, 4194432)) used a (1, 65538) grid: over axis 1's 65,535 on a GPU.
    assert _transpose_grid(1, 4_194_432, 64, 64) == (65_538,)
    assert _transpose_grid(4_194_432, 1, 1, 16) == (4_194_432,)  # naive: one program per row
    # FlashAttention with batch·heads = 70,000 used (blocks, 70000): now one axis.
    assert _flash_grid(100, 70_000, 64) == (2 * 70_000,)
    assert _flash_grid(1, 1, 64) == (1,)


def test_check_grid_limits():
    assert _common.check_grid((2**31 - 1,), "k") == (2**31 - 1,)
    with pytest.raises(ValueError, match=r"grid axis 0 would launch 2147483648 programs"):
        _common.check_grid((2**31,), "k")
    with pytest.raises(ValueError, match=r"axis 1 would launch 65536 .* at most 65535"):
        _common.check_grid((1, 65_536), "k")
    with pytest.raises(ValueError, match=r"grid axis 0"):
        _transpose_grid(2**20, 2**20, 16, 16)
    with pytest.raises(ValueError, match=r"flash_attention: grid axis 0"):
        _flash_grid(2**16, 2**22, 16)


def test_folded_grids_compute_the_right_tiles(gen):
    # Several tiles on both axes, not multiples of the block: the unfolding must cover each once.
    x = randn(gen, 37, 70)
    assert_close(K.transpose_tiled(x, BLOCK_M=16, BLOCK_N=32), transpose_ref(x))
    assert_close(K.transpose_naive(x, BLOCK_N=16), transpose_ref(x))
    q, k, v = (randn(gen, 3, 2, 37, 16) for _ in range(3))
    with torch.no_grad():
        o = K.flash_attention(q, k, v, True, BLOCK_M=16, BLOCK_N=16)
    assert_close(o, attention_ref(q, k, v, True))


# ---------------------------------------------------------------------------------- GPU only

gpu = pytest.mark.skipif(DEVICE != "cuda", reason="needs a CUDA GPU (and the memory)")


def _free_bytes() -> int:
    return torch.cuda.mem_get_info()[0] if DEVICE == "cuda" else 0


@pytest.mark.gpu
@gpu
def test_gpu_vector_add_and_relu_past_2_31_elements():
    n = 2**31 + 4096
    if _free_bytes() < 4 * n * 2 + (1 << 30):
        pytest.skip("not enough GPU memory for three 4 GiB fp16 vectors")
    x = torch.ones(n, dtype=torch.float16, device="cuda")
    out = K.vector_add(x, x)
    assert out[-4096:].eq(2).all() and out[:4096].eq(2).all()
    del out
    x[-1] = -1
    r = K.relu(x)
    assert r[-1] == 0 and r[-2] == 1
    torch.cuda.synchronize()


@pytest.mark.gpu
@gpu
def test_gpu_copy_strided_past_2_31():
    n = 2**31 + 64
    if _free_bytes() < n * 2 * 2 + (1 << 30):
        pytest.skip("not enough GPU memory")
    x = torch.zeros(n, device="cuda", dtype=torch.float16)
    picked = x[:: 2**20]
    picked.copy_(torch.arange(picked.numel(), device="cuda").remainder(2048).half())
    out = K.copy_strided(x, 2**20)  # the last elements read sit past 2³¹
    torch.testing.assert_close(out, x[:: 2**20])


@pytest.mark.gpu
@gpu
def test_gpu_softmax_past_2_31_elements():
    rows, cols = 131_074, 16_384  # the shape that faulted with int32 offsets
    if _free_bytes() < 2 * rows * cols * 2 + (1 << 30):
        pytest.skip("not enough GPU memory")
    x = torch.zeros(rows, cols, dtype=torch.float16, device="cuda")
    x[-1, 0] = 10.0
    out = K.softmax(x)
    assert torch.isfinite(out[-1]).all() and out[-1, 0] > out[-1, 1]
    torch.testing.assert_close(out[-2].float().sum(), torch.tensor(1.0, device="cuda"))


@pytest.mark.gpu
@gpu
def test_gpu_transpose_and_matmul_naive_with_many_column_tiles():
    x = torch.randn(1, 4_194_432, device="cuda")
    torch.testing.assert_close(K.transpose_tiled(x), transpose_ref(x))
    torch.testing.assert_close(K.transpose_naive(x, BLOCK_N=16), transpose_ref(x))
    a, b = torch.randn(1, 16, device="cuda"), torch.randn(16, 4_194_432, device="cuda")
    assert_close(K.matmul_naive(a, b, BLOCK_N=16), a @ b)


@pytest.mark.gpu
@gpu
def test_gpu_flash_attention_with_more_than_65535_batch_heads():
    q, k, v = (torch.randn(70_000, 1, 32, 16, device="cuda") for _ in range(3))
    with torch.no_grad():
        o = K.flash_attention(q, k, v, True, BLOCK_M=16, BLOCK_N=16)
    assert_close(o, attention_ref(q, k, v, True))
