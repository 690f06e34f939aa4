"""FlashAttention's default tiles fit a T4 (sm_75, 64 KiB per block), forward and backward.

Compiled offline with :mod:`gpuperf.inspect` (cached on disk). The fp32 dK/dV kernel at the
forward's 64×64 tiles needs 80 KiB there, so the backward runs with ``backward_config``'s tiles;
this test is what would catch a default that a Colab T4 cannot launch. sm_80 and sm_90 have
163 and 227 KiB and are covered by tests/test_inspect.py.
"""

from __future__ import annotations

import pytest
import torch

from gpuperf import inspect as gi
from gpuperf.kernels.flash_attention import FlashAttention, FlashConfig, backward_config

DEFAULT = FlashConfig(FlashAttention.BLOCK_M, FlashAttention.BLOCK_N)
DTYPES = {"fp32": torch.float32, "fp16": torch.float16}


def test_backward_config():
    assert backward_config(DEFAULT, torch.float32, "sm_75") == FlashConfig(32, 64, 4, 2)
    for arch in ("sm_80", "sm_90", "cpu"):
        assert backward_config(DEFAULT, torch.float32, arch) == DEFAULT
    assert backward_config(DEFAULT, torch.float16, "sm_75") == DEFAULT


@pytest.fixture(scope="module")
def t4_reports():
    requests = []
    for dtype, torch_dtype in DTYPES.items():
        bwd = backward_config(DEFAULT, torch_dtype, "sm_75")
        for kernel, tiles in (
            ("flash_attention_fwd", DEFAULT),
            ("flash_attention_bwd_dkdv", bwd),
            ("flash_attention_bwd_dq", bwd),
        ):
            requests.append(
                dict(
                    kernel=kernel,
                    target="sm_75",
                    dtype=dtype,
                    num_warps=tiles.num_warps,
                    num_stages=tiles.num_stages,
                    BLOCK_M=tiles.BLOCK_M,
                    BLOCK_N=tiles.BLOCK_N,
                )
            )
    return gi.compile_many(requests)


def test_default_forward_and_backward_fit_a_t4(t4_reports):
    assert len(t4_reports) == 6
    for r in t4_reports:
        where = f"{r.kernel} {r.dtype} {r.constexprs['BLOCK_M']}×{r.constexprs['BLOCK_N']}"
        assert r.compiled and r.fits, f"{where}: {r.explanation}"
        assert r.shared_memory_bytes <= 64 * 1024, where
        assert r.spill_bytes == 0, where
