"""Offline evidence for the Hopper FlashAttention forward on sm_90 (no GPU needed).

Compiled for sm_90 with :mod:`gpuperf.inspect`, the descriptor kernel must show what it was
written for: TMA copies (``cp.async.bulk.tensor``) and warpgroup MMAs (``wgmma``) in the PTX,
no register spills, shared memory within the H100's 227 KiB per block — at the tiles
``hopper_config`` picks for d = 64 and d = 128, causal and not. The portable kernel compiled the
same way has no TMA, which is the difference the Hopper variant adds. On sm_80 the same source
still compiles (descriptors become ordinary loads). Speed is not claimed here: that needs
``python -m gpuperf.bench`` on an H100.
"""

from __future__ import annotations

import pytest

pytest.importorskip("triton")
pytest.importorskip("torch")

from gpuperf import inspect as gi
from gpuperf.kernels.flash_attention_hopper import hopper_config

CASES = [(64, False), (64, True), (128, True)]


def _request(d: int, causal: bool, target: str = "sm_90") -> dict:
    c = hopper_config(d)
    return dict(
        kernel="flash_attention_fwd_hopper",
        target=target,
        dtype="fp16",
        num_warps=c.num_warps,
        num_stages=c.num_stages,
        IS_CAUSAL=causal,
        BLOCK_M=c.BLOCK_M,
        BLOCK_N=c.BLOCK_N,
        BLOCK_D=d,
    )


@pytest.fixture(scope="module")
def reports():
    requests = [_request(d, causal) for d, causal in CASES]
    requests.append(_request(64, False, "sm_80"))
    requests.append(dict(kernel="flash_attention_fwd", target="sm_90", dtype="fp16"))
    return gi.compile_many(requests)


def test_hopper_forward_uses_tma_and_wgmma_without_spills(reports):
    for (d, causal), r in zip(CASES, reports, strict=False):
        where = f"d={d} causal={causal}: {r.summary()}"
        assert r.compiled and r.fits, where
        assert r.shared_memory_bytes <= r.shared_memory_limit_bytes == 227 * 1024, where
        assert r.spill_bytes == 0, where
        assert r.registers_per_thread <= 255, where
        assert any("wgmma" in i for i in r.tensor_core_instructions), where
        assert r.instruction_count("cp.async.bulk.tensor") > 0, where


def test_the_portable_forward_has_no_tma(reports):
    portable = reports[-1]
    assert portable.compiled and portable.fits
    assert portable.instruction_count("cp.async.bulk.tensor") == 0
    assert any("wgmma" in i for i in portable.tensor_core_instructions)


def test_same_source_compiles_for_ampere_without_tma(reports):
    ampere = reports[len(CASES)]
    assert ampere.compiled and ampere.fits, ampere.explanation
    assert ampere.instruction_count("cp.async.bulk.tensor") == 0
    assert any("mma.sync" in i for i in ampere.tensor_core_instructions)


def test_registered_for_sm90_only_not_in_inspect_all():
    # Its sm_90 tiles need 96 KiB of shared memory compiled for a T4 (64 KiB): not a T4 kernel.
    assert "flash_attention_fwd_hopper" in gi.ARCH_KERNELS
    assert "flash_attention_fwd_hopper" not in gi.KERNELS
