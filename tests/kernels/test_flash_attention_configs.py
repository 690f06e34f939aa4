"""FlashAttention's default tiles fit a T4 (sm_75, 64 KiB per block) without spilling registers.

On a T4 Triton turns every ``tl.dot`` into FMAs held in registers, so the portable 64×64 / 4 warps
spills in all six kernels (forward, dK/dV, dQ; fp16 and fp32) and the fp32 dK/dV kernel at 64×64
needs 80 KiB of shared memory. ``T4_CONFIGS`` gives each kernel its own tiles; they are compiled
here offline with :mod:`gpuperf.inspect` (cached on disk), together with every larger tile of
the grid they were chosen from, which must spill or not fit (else a larger default exists).
They are also run through the launcher in the interpreter, to show that forward and backward
with three different tiles still compute attention and its gradients. sm_80 and sm_90 are
covered by tests/test_inspect.py. How fast the T4 tiles are is for a GPU to measure.
"""

from __future__ import annotations

import importlib

import pytest
import torch

from gpuperf import inspect as gi
from gpuperf.kernels._common import TUNED_WITH_TRITON
from gpuperf.kernels.flash_attention import (
    T4_CONFIGS,
    FlashConfig,
    FlashDefaults,
    _backward_config,
    attention_ref,
    default_configs,
    flash_attention,
)
from gpuperf.tolerances import tolerance

from .conftest import DEVICE

# The module (gpuperf.kernels re-exports a function of the same name).
fa = importlib.import_module("gpuperf.kernels.flash_attention")

PORTABLE = FlashConfig(64, 64, 4, 2)
DTYPES = {"fp32": torch.float32, "fp16": torch.float16}
KERNELS = {
    "forward": "flash_attention_fwd",
    "dkdv": "flash_attention_bwd_dkdv",
    "dq": "flash_attention_bwd_dq",
}
#: The grid T4_CONFIGS were chosen from (2 stages): see the comment above T4_CONFIGS.
GRID = [(bm, bn, w) for bm in (16, 32, 64) for bn in (16, 32, 64) for w in (4, 8)]


def _request(kernel: str, dtype: str, c: FlashConfig) -> dict:
    return dict(
        kernel=KERNELS[kernel],
        target="sm_75",
        dtype=dtype,
        num_warps=c.num_warps,
        num_stages=c.num_stages,
        BLOCK_M=c.BLOCK_M,
        BLOCK_N=c.BLOCK_N,
    )


def test_default_configs_by_device():
    for arch in ("sm_80", "sm_90", "cpu"):
        for dtype in (*DTYPES.values(), torch.bfloat16):
            assert default_configs(dtype, arch) == FlashDefaults(PORTABLE, PORTABLE, PORTABLE)
    assert default_configs(torch.float32, "sm_75") is T4_CONFIGS["fp32"]
    assert default_configs(torch.float16, "sm_75") is T4_CONFIGS["fp16"]
    assert default_configs(torch.bfloat16, "sm_75") is T4_CONFIGS["fp16"]
    assert T4_CONFIGS["fp16"] == FlashDefaults(
        FlashConfig(64, 32, 8, 2), FlashConfig(32, 64, 8, 2), FlashConfig(64, 16, 8, 2)
    )
    assert T4_CONFIGS["fp32"] == FlashDefaults(
        FlashConfig(64, 64, 8, 2), FlashConfig(64, 32, 8, 2), FlashConfig(64, 32, 8, 2)
    )


def test_backward_config():
    """Tiles given by the caller: the backward keeps them, halving BLOCK_M where dK/dV would not
    fit a T4 in fp32."""
    assert _backward_config(PORTABLE, torch.float32, "sm_75") == FlashConfig(32, 64, 4, 2)
    for arch in ("sm_80", "sm_90", "cpu"):
        assert _backward_config(PORTABLE, torch.float32, arch) == PORTABLE
    assert _backward_config(PORTABLE, torch.float16, "sm_75") == PORTABLE


@pytest.fixture(scope="module")
def t4_reports():
    keys, requests = [], []
    for dtype in DTYPES:
        defaults = T4_CONFIGS[dtype]
        for kernel in KERNELS:
            chosen = getattr(defaults, kernel)
            keys.append((dtype, kernel, "default"))
            requests.append(_request(kernel, dtype, chosen))
            for bm, bn, w in GRID:
                if bm * bn > chosen.BLOCK_M * chosen.BLOCK_N:
                    keys.append((dtype, kernel, "larger"))
                    requests.append(_request(kernel, dtype, FlashConfig(bm, bn, w, 2)))
    return list(zip(keys, gi.compile_many(requests), strict=True))


def test_default_forward_and_backward_fit_a_t4_without_spilling(t4_reports):
    defaults = [r for (_, _, what), r in t4_reports if what == "default"]
    assert len(defaults) == 6
    for r in defaults:
        where = f"{r.kernel} {r.dtype} {r.constexprs['BLOCK_M']}×{r.constexprs['BLOCK_N']}"
        assert r.compiled and r.fits, f"{where}: {r.explanation}"
        assert r.shared_memory_bytes <= 64 * 1024, where
        assert r.registers_per_thread <= 255, where
        if r.triton_version == TUNED_WITH_TRITON:  # spills depend on the Triton release
            assert r.spill_bytes == 0 and r.spill_store_bytes == 0, (
                f"{where} spills {r.spill_bytes} B"
            )


def test_no_larger_tile_of_the_grid_fits_without_spilling(t4_reports):
    larger = [r for (_, _, what), r in t4_reports if what == "larger"]
    assert len(larger) == 14  # 2 per kernel, none for the fp32 forward, 6 for the fp16 dQ
    if larger[0].triton_version != TUNED_WITH_TRITON:
        pytest.skip(
            f"the tiles were chosen with Triton {TUNED_WITH_TRITON}'s register allocation; "
            f"Triton {larger[0].triton_version} allocates differently"
        )
    for r in larger:
        where = f"{r.kernel} {r.dtype} {r.constexprs['BLOCK_M']}×{r.constexprs['BLOCK_N']}"
        assert r.compiled, f"{where}: {r.explanation}"
        assert not r.fits or r.spill_bytes > 0, f"{where} fits without spilling: a larger default"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("is_causal", [False, True])
def test_t4_defaults_compute_attention_and_its_gradients(monkeypatch, dtype, is_causal):
    """The launcher as on a T4 (three different tiles), run here in the interpreter."""
    monkeypatch.setattr(fa, "device_arch", lambda: "sm_75")
    g = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(1, 2, 90, 32, generator=g).to(dtype).to(DEVICE).requires_grad_(True)
        for _ in range(3)
    )
    o = flash_attention(q, k, v, is_causal)
    assert o.grad_fn.configs == (default_configs(dtype).dkdv, default_configs(dtype).dq)
    do = torch.randn_like(o)
    grads = torch.autograd.grad(o, (q, k, v), do)
    o_ref = attention_ref(q, k, v, is_causal)
    grads_ref = torch.autograd.grad(o_ref, (q, k, v), do)
    rtol, atol = tolerance(dtype)
    for name, got, want in zip(
        ("O", "dQ", "dK", "dV"), (o, *grads), (o_ref, *grads_ref), strict=True
    ):
        assert not torch.isnan(got).any(), f"NaN in {name}"
        torch.testing.assert_close(
            got.float(), want.float(), rtol=rtol, atol=atol, msg=f"{name} differs"
        )


def test_given_tiles_replace_the_t4_defaults(monkeypatch):
    monkeypatch.setattr(fa, "device_arch", lambda: "sm_75")
    q = torch.randn(1, 40, 16, device=DEVICE, requires_grad=True)
    o = flash_attention(q, q, q, BLOCK_M=64)  # the rest from the T4 fp32 forward: 64, 8 warps
    wanted = _backward_config(FlashConfig(64, 64, 8, 2), torch.float32, "sm_75")
    assert wanted == FlashConfig(32, 64, 8, 2)
    assert o.grad_fn.configs == (wanted, wanted)
    assert fa.FlashAttention.BLOCK_M is None  # restored after the call
