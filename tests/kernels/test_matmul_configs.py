"""``matmul``'s per-device defaults: how they are chosen, and offline proof that each one fits.

Every row of ``DEFAULT_CONFIGS`` is compiled for its chip with :mod:`gpuperf.inspect` (no GPU
needed; results are cached on disk): it must compile, fit the chip's shared memory per block,
stay within 255 registers per thread without spilling, use tensor cores where the row says so,
and use no more shared memory than the launcher's estimate (which is what the feasibility check
and autotune pruning rely on). How fast the rows are is for ``python -m gpuperf.bench`` on a GPU.
"""

from __future__ import annotations

import pytest
import torch

from gpuperf import inspect as gi
from gpuperf.kernels import matmul
from gpuperf.kernels._common import TUNED_WITH_TRITON, pipeline_buffers
from gpuperf.kernels.matmul import (
    AUTOTUNE_CONFIGS,
    DEFAULT_CONFIGS,
    MatmulConfig,
    _check_config,
    _prune_configs,
    default_config,
    device_arch,
)

from .conftest import DEVICE, assert_close, randn

# The dtypes each row list serves (``matmul._unit``); on sm_75 the "mma" rows run fp16 on FMA.
DTYPES = {"mma": {"sm_90": "fp16 bf16", "sm_80": "fp16 bf16", "sm_75": "fp16"}, "fma": "fp32"}
SIZE = {"fp32": 4, "fp16": 2, "bf16": 2}


def _rows():
    for arch in ("sm_90", "sm_80", "sm_75"):
        for unit, configs in DEFAULT_CONFIGS[arch].items():
            dtypes = DTYPES[unit][arch] if unit == "mma" else DTYPES[unit]
            for config in configs:
                for dtype in dtypes.split():
                    yield arch, unit, dtype, config


ROWS = list(_rows())


@pytest.fixture(scope="module")
def compiled():
    requests = [
        dict(
            kernel="matmul",
            target=arch,
            dtype=dtype,
            num_warps=c.num_warps,
            num_stages=c.num_stages,
            BLOCK_M=c.BLOCK_M,
            BLOCK_N=c.BLOCK_N,
            BLOCK_K=c.BLOCK_K,
            GROUP_M=c.GROUP_M,
        )
        for arch, _, dtype, c in ROWS
    ]
    return gi.compile_many(requests)


def test_every_default_configuration_fits_its_chip(compiled):
    assert len(compiled) == len(ROWS)
    for (arch, unit, dtype, config), r in zip(ROWS, compiled, strict=True):
        where = f"{config} {dtype} on {arch}"
        assert r.compiled and r.fits, f"{where}: {r.explanation}"
        assert r.shared_memory_bytes <= r.shared_memory_limit_bytes, where
        assert r.registers_per_thread <= 255, where
        if r.triton_version == TUNED_WITH_TRITON:  # spills depend on the Triton release
            assert r.spill_bytes == 0, f"{where} spills {r.spill_bytes} bytes"
        # The launcher's estimate is what the compiler allocates on sm_80 and for wgmma on
        # sm_90; an upper bound for sm_90's FMA path (cp.async keeps one buffer fewer). On sm_75
        # nothing is pipelined and layout buffers dominate small tiles: only "fits" is claimed.
        estimate = config.shared_memory_bytes(SIZE[dtype], arch)
        got = r.shared_memory_bytes
        if arch == "sm_80" or (arch == "sm_90" and unit == "mma"):
            assert got == estimate, (where, got, estimate)
        elif arch == "sm_90":
            assert got <= estimate, (where, got, estimate)
        if unit == "mma" and arch != "sm_75":
            wanted = "wgmma" if arch == "sm_90" else "mma.sync"
            assert any(wanted in i for i in r.tensor_core_instructions), where


def test_pipeliner_buffers_per_architecture(compiled):
    """What the estimate rests on: sm_90 keeps num_stages buffers, sm_80 num_stages − 1."""
    assert [pipeline_buffers(3, a) for a in ("sm_90", "sm_80", "sm_75", "cpu")] == [3, 2, 1, 3]
    assert pipeline_buffers(1, "sm_80") == 1
    by_key = {(arch, dtype, c): r for (arch, _, dtype, c), r in zip(ROWS, compiled, strict=True)}
    hopper = DEFAULT_CONFIGS["sm_90"]["mma"][0]
    ampere = DEFAULT_CONFIGS["sm_80"]["mma"][0]
    assert (hopper.BLOCK_M, hopper.BLOCK_N, hopper.BLOCK_K, hopper.num_stages) == (128, 256, 64, 3)
    assert (ampere.BLOCK_M, ampere.BLOCK_N, ampere.BLOCK_K, ampere.num_stages) == (128, 128, 32, 4)
    per_stage_h = (128 * 64 + 64 * 256) * 2
    per_stage_a = (128 * 32 + 32 * 128) * 2
    assert by_key[("sm_90", "fp16", hopper)].shared_memory_bytes == 3 * per_stage_h
    assert by_key[("sm_80", "fp16", ampere)].shared_memory_bytes == 3 * per_stage_a


def test_every_row_passes_the_launch_check():
    for arch, _, dtype, config in ROWS:
        torch_dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
        if arch == "sm_90":  # the CPU check uses the H100's limit; other chips are smaller
            assert _check_config(config, torch_dtype[dtype]) == config


@pytest.mark.parametrize(
    ("arch", "m", "n", "dtype", "tf32", "expected"),
    [
        ("sm_90", 4096, 4096, torch.float16, False, (128, 256, 64, 8, 3)),
        ("sm_90", 8192, 8192, torch.bfloat16, False, (128, 256, 64, 8, 3)),
        # 1024²: 128×256 tiles give 32 programs for 132 SMs; the first row filling them wins.
        ("sm_90", 1024, 1024, torch.bfloat16, False, (64, 64, 64, 4, 4)),
        ("sm_90", 4096, 4096, torch.float32, False, (64, 64, 32, 4, 3)),
        # TF32 is fp32 in memory: 128×256×64×3 stages would need 288 KiB, so the next row.
        ("sm_90", 4096, 4096, torch.float32, True, (128, 128, 64, 8, 3)),
        ("sm_80", 4096, 4096, torch.float16, False, (128, 128, 32, 4, 4)),
        # A T4 runs fp16 on FMA too, but from its own rows: 64×64×32 spills in fp16 there.
        ("sm_75", 4096, 4096, torch.float16, False, (64, 64, 16, 4, 2)),
        ("sm_75", 4096, 4096, torch.float32, False, (64, 64, 32, 4, 2)),
        ("sm_75", 4096, 4096, torch.float32, True, (64, 64, 32, 4, 2)),  # no TF32 on a T4
        ("sm_75", 16, 16, torch.float32, False, (32, 64, 32, 4, 2)),
        ("cpu", 100, 100, torch.float32, False, (64, 64, 32, 4, 3)),
    ],
)
def test_default_config_choice(arch, m, n, dtype, tf32, expected):
    c = default_config(m, n, dtype, tf32=tf32, arch=arch)
    assert (c.BLOCK_M, c.BLOCK_N, c.BLOCK_K, c.num_warps, c.num_stages) == expected


def test_default_config_respects_a_smaller_shared_memory():
    # An sm_86 card (99 KiB per block) still gets an sm_80 row that fits it.
    c = default_config(8192, 8192, torch.float16, arch="sm_80", shared_memory_bytes=99 * 1024)
    assert c.shared_memory_bytes(2) <= 99 * 1024
    with pytest.raises(
        ValueError,
        match=r"no default matmul configuration for sm_75 fits shared_memory_bytes=1024",
    ):
        default_config(64, 64, torch.float16, arch="sm_75", shared_memory_bytes=1024)
    with pytest.raises(ValueError, match=r"arch='sm_70' is not one of"):
        default_config(64, 64, arch="sm_70")


def test_this_machine_uses_its_own_row(gen):
    assert device_arch() == ("cpu" if DEVICE == "cpu" else device_arch())
    a, b = randn(gen, 70, 50), randn(gen, 50, 90)
    assert_close(matmul(a, b), a @ b)  # defaults, no flags; fp32 tolerance


def test_given_arguments_replace_the_default(gen):
    a, b = randn(gen, 40, 30), randn(gen, 30, 20)
    out = matmul(a, b, BLOCK_M=16)  # the rest from the default row
    assert_close(out, a @ b)


def test_autotune_pruning_drops_what_cannot_fit():
    import triton

    configs = [
        triton.Config(
            {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": g}, num_warps=w, num_stages=s
        )
        for bm, bn, bk, g, w, s in AUTOTUNE_CONFIGS
    ]
    fp32 = {"a_ptr": torch.empty(1, dtype=torch.float32)}
    fp16 = {"a_ptr": torch.empty(1, dtype=torch.float16)}
    limit = 227 * 1024 if DEVICE == "cpu" else None

    def size(c, element):
        cfg = MatmulConfig(**c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages)
        return cfg.shared_memory_bytes(element)

    kept16, kept32 = _prune_configs(configs, fp16), _prune_configs(configs, fp32)
    assert kept16 and kept32
    assert len(kept32) < len(kept16) <= len(configs)  # fp32 tiles are twice as big
    if limit is not None:
        assert all(size(c, 4) <= limit for c in kept32)
        assert any(size(c, 4) > limit for c in configs)
