"""Measured numbers from published benchmarks, each with its source and method.

The course never invents a measurement. Where a reader has no GPU, a "measure it" cell shows
these instead, labelled with who measured them, how, and on what. Values are SI (FLOP/s, bytes/s,
seconds); ``source`` is a key of the book's ``references.bib``. Peak (datasheet) numbers live in
:mod:`gpuperf.hardware`, never here.

First-party measurements of the course's own kernels (:func:`course_kernels`) live here too,
each with the device, driver and software versions and the gpuperf commit that produced them.

Most system-level figures (PCIe, NVLink, EFA, storage) were measured on one AWS p5 cluster of
H100 nodes for the Smol Training Playbook (seed 001); treat them as one well-documented sample,
not as universal constants.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from ._validate import (
    instance,
    name_string,
    optional,
    positive_float,
    positive_int,
    sequence,
    show,
)
from .hardware import chip as lookup_chip
from .units import GB, GiB, format_bandwidth, format_flops, format_seconds

_T = 1e12
_US = 1e-6
__all__ = [
    "COURSE_KERNELS_FILE",
    "GB",
    "H100_GEMM",
    "H100_GEMM_SOURCE",
    "KERNELS_SCHEMA",
    "LATENCY_BOUND_BELOW_BYTES",
    "MEASUREMENTS",
    "NVBANDWIDTH_H100_LOCAL_COPY",
    "STREAM_READ_SWEEPS",
    "GemmMeasurement",
    "GiB",
    "KernelMeasurement",
    "Measurement",
    "OccupancySweep",
    "Provenance",
    "course_kernel",
    "course_kernels",
    "find",
    "gemm_range",
    "load_kernels",
    "measurements",
    "stream_read_sweep",
    "training_mfus",
]


@dataclass(frozen=True)
class Measurement:
    """One measured quantity. ``low``/``high`` give the range when the source reports one."""

    quantity: str
    value: float
    unit: str
    chip: str | None
    method: str
    source: str
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        for name in ("quantity", "unit", "method", "source"):
            name_string(name, getattr(self, name))
        optional("chip", self.chip, name_string)
        value = positive_float("value", self.value, bounded=False)
        low = optional("low", self.low, positive_float, bounded=False)
        high = optional("high", self.high, positive_float, bounded=False)
        if (low is not None and low > value) or (high is not None and high < value):
            raise ValueError(
                f"low={low!r} ≤ value={value!r} ≤ high={high!r} must hold: the range brackets "
                "the reported value"
            )

    def fraction_of(self, reference: float) -> float:
        """The measurement as a fraction of a reference (e.g. the datasheet peak)."""
        return self.value / positive_float("reference", reference)


@dataclass(frozen=True)
class GemmMeasurement:
    """Achieved FLOP/s of one matmul shape on one chip, per data type / kernel."""

    m: int
    n: int
    k: int
    flops_per_s: MappingProxyType

    def __post_init__(self) -> None:
        for name in ("m", "n", "k"):
            positive_int(name, getattr(self, name))
        rates = self.flops_per_s
        if not isinstance(rates, Mapping) or not rates:
            raise TypeError(f"flops_per_s={show(rates)} must be a non-empty mapping")
        for key, value in rates.items():
            name_string("flops_per_s key", key)
            positive_float(f"flops_per_s[{key!r}]", value)
        object.__setattr__(self, "flops_per_s", MappingProxyType(dict(rates)))


def _gemm(m: int, n: int, k: int, *tflops: float) -> GemmMeasurement:
    columns = ("fp64", "tf32", "fp16", "bf16", "fp8-te", "fp8-scaled-e5m2", "fp8-scaled-e4m3")
    return GemmMeasurement(
        m, n, k, MappingProxyType(dict(zip(columns, [t * _T for t in tflops], strict=True)))
    )


#: H100 80GB torch.matmul / Transformer Engine / torch._scaled_mm on Llama-70B training shapes,
#: SemiAnalysis GEMM benchmark as reported in the Smol Training Playbook (seed 000). The "fp32"
#: column of the source runs on TF32 tensor cores, so it is keyed ``tf32`` here.
H100_GEMM: tuple[GemmMeasurement, ...] = (
    _gemm(16384, 8192, 1280, 51.5, 364.5, 686.5, 714.5, 837.6, 1226.7, 1209.7),
    _gemm(16384, 1024, 8192, 56.1, 396.1, 720.0, 757.7, 547.3, 1366.2, 1329.7),
    _gemm(16384, 8192, 7168, 49.5, 356.5, 727.1, 752.9, 1120.8, 1464.6, 1456.6),
    _gemm(16384, 3584, 8192, 51.0, 373.3, 732.2, 733.0, 952.9, 1445.7, 1370.3),
    _gemm(8192, 8192, 8192, 51.4, 372.7, 724.9, 729.4, 1029.1, 1404.4, 1397.5),
)
H100_GEMM_SOURCE = "PLAYBOOK"


def gemm_range(dtype: str = "bf16") -> tuple[float, float]:
    """(min, max) achieved FLOP/s over the H100 GEMM shapes for one column."""
    try:
        if not isinstance(dtype, str):
            raise KeyError(dtype)
        values = [g.flops_per_s[dtype] for g in H100_GEMM]
    except KeyError:
        raise ValueError(
            f"dtype={dtype!r} is not a column of H100_GEMM; valid: "
            f"{', '.join(H100_GEMM[0].flops_per_s)}"
        ) from None
    return min(values), max(values)


#: nvbandwidth ``device_local_copy`` on 8 H100s (one value per GPU, GB/s). A copy reads and
#: writes, so ~1519 GB/s of copy is ~3.04 TB/s of HBM traffic: 91 % of 3.35 TB/s.
NVBANDWIDTH_H100_LOCAL_COPY: tuple[float, ...] = tuple(
    v * GB for v in (1519.07, 1518.93, 1519.07, 1519.60, 1519.13, 1518.86, 1519.13, 1519.33)
)

_M = Measurement
MEASUREMENTS: tuple[Measurement, ...] = (
    # --- HBM / device memory ---------------------------------------------------------------
    _M("HBM copy, per direction (read = write)", 1519 * GB, "B/s", "H100-SXM",
       "nvbandwidth device_local_copy, ≥ 1 MB buffers", "PLAYBOOK", 1518.86 * GB, 1519.60 * GB),
    _M("HBM copy, read + write", 3038 * GB, "B/s", "H100-SXM",
       "nvbandwidth device_local_copy, both directions summed", "PLAYBOOK"),
    _M("device-to-device copy", 239.6 * GB, "B/s", "T4", "CUDA bandwidthTest", "ROUTERGAO"),
    # PTsolvers' JuliaCon 2023 workshop (issue 7): perftest.jl divides its effective throughput
    # T_eff (bytes read + written) by 1355 GB/s, "the memcopy measured BW" of its A100 40GB.
    _M("memcopy kernel (measured reference)", 1355 * GB, "B/s", "A100-40GB",
       "memcopy kernel, effective throughput (bytes read + written)", "PTSOLVERS"),
    # FastIceFlo's scripts/memcopy.cu times A = B + C on 2^28 doubles per array, counts 3 × 8 B
    # per element and divides by 1024³, so its "GB/s" are GiB/s; its
    # output/EffectiveMemoryThroughput.md names the cards: Tesla A100 SXM4 40GB and Tesla V100
    # SXM2 16GB. 1536 GiB/s is 1.65e12 B/s, above the 40 GB card's 1555 GB/s datasheet: the test
    # suite lists this record as the one known excess; never read it as a fraction of that peak.
    _M("memcopy kernel (effective throughput)", 1536 * GiB, "B/s", "A100-40GB",
       "A = B + C kernel (2 reads + 1 write), reported in GiB/s", "FASTICE"),
    _M("memcopy kernel (effective throughput)", 785 * GiB, "B/s", "V100",
       "A = B + C kernel (2 reads + 1 write), reported in GiB/s", "FASTICE"),
    _M("stream read", 1942 * GB, "B/s", "H100-PCIe", "gpu-stream read kernel", "GPUBENCH"),
    # Triton's tutorials (01 vector add, 03 matmul below) print their benchmark tables from the
    # docs build without naming the GPU (read 2025; each rebuild changes the numbers). The
    # A100-80GB is an inference, not the source's statement: 1684 GB/s is above the A100-40GB's
    # 1555 GB/s datasheet bandwidth, and the tutorial's fp8 matmul (~155 TFLOP/s) is slower than
    # its fp16 one, so the GPU has no native fp8 (not Hopper). Pages say "inferred".
    _M("Triton vector add", 1684 * GB, "B/s", "A100-80GB",
       "Triton tutorial 01, N = 2^27 fp32, 3 × 4 B per element", "TRITON-VA"),
    _M("HBM load latency", 404e-9, "s", "A100-80GB", "pointer chase", "GPUBENCH"),
    _M("HBM load latency", 375e-9, "s", "H100-PCIe", "pointer chase", "GPUBENCH"),
    _M("L2 bandwidth", 5.5 * _T, "B/s", "H100-PCIe", "Chips and Cheese microbenchmark",
       "CNC-H100"),
    # The playbook's memory-hierarchy overview of the H100 (SXM5, its figure after Aleksa Gordić):
    # "L2 cache ... on H100 this is 50 MB, bandwidth ~13 TB/s" (seed 000). An approximate figure
    # quoted there, with no benchmark described: the course reads it as "about 13 TB/s".
    _M("L2 bandwidth", 13 * _T, "B/s", "H100-SXM",
       "approximate figure in the playbook's H100 SXM5 memory-hierarchy overview",
       "PLAYBOOK"),
    # --- matmul throughput ---------------------------------------------------------------------
    _M("bf16 matmul, Llama-70B shapes", 729.4 * _T, "FLOP/s", "H100-SXM",
       "SemiAnalysis GEMM benchmark, 8192³ (range over 5 shapes)", "PLAYBOOK",
       714.5 * _T, 757.7 * _T),
    _M("bf16 matmul with wrongly chosen sm_75 kernels", 500 * _T, "FLOP/s", "H100-SXM",
       "PyTorch picked Turing kernels on an H100; ~720 TFLOP/s once fixed", "PLAYBOOK"),
    _M("bf16 matmul, best shape (MAMF)", 794.5 * _T, "FLOP/s", "H100-SXM",
       "Stas Bekman's mamf-finder, torch 2.7, 2048×2048×13312", "STAS"),
    _M("bf16 matmul, best shape (MAMF)", 271.2 * _T, "FLOP/s", "A100-80GB",
       "mamf-finder", "STAS"),
    _M("bf16 matmul, best shape (MAMF)", 1745 * _T, "FLOP/s", "B200", "mamf-finder", "STAS"),
    _M("fp16 matmul 4096³, cuBLAS", 219.7 * _T, "FLOP/s", "A100-80GB",
       "Triton tutorial 03 benchmark (Triton kernel: 220.0)", "TRITON-MM"),
    # --- model FLOPs utilisation -------------------------------------------------------------
    _M("Llama 3 405B training MFU", 0.41, "fraction", "H100-SXM",
       "16,384 GPUs; 400 TFLOP/s per GPU (38–43 % across configurations)", "LLAMA3",
       0.38, 0.43),
    _M("DeepSeek-V3 training MFU", 0.25, "fraction", None,
       "H800 GPUs (an H100 with reduced NVLink, not in the chip table); as reported in the "
       "Smol Training Playbook (MoE communication limits it)", "PLAYBOOK",
       0.20, 0.30),
    _M("SmolLM3 training MFU", 0.30, "fraction", "H100-SXM", "384 H100s", "PLAYBOOK"),
    _M("PaLM 540B training MFU", 0.462, "fraction", None, "6144 TPU v4 chips", "PALM"),
    _M("GPT training MFU with FlashAttention-2", 0.72, "fraction", "A100-80GB",
       "225 TFLOP/s per A100", "FA2"),
    _M("FlashAttention-3 forward, fp16, best case", 740 * _T, "FLOP/s", "H100-SXM",
       "FA3 paper's attention benchmark (75 % of the dense peak); its FP8 forward reaches "
       "close to 1.2 PFLOP/s", "FA3"),
    # FlashAttention-4's abstract: up to 1613 TFLOP/s (their "71 % utilization") for the BF16
    # forward pass on a B200, up to 1.3× cuDNN 9.13 and 2.7× Triton; the authors' Together AI
    # blog post gives 1605 TFLOP/s for the same claim. The paper's figure is kept.
    # tritonbench at one shape (batch 4, 16 heads, N = 4096, d = 128), from the test plan of
    # pytorch/benchmark commit ff65cb6 (2024-07-23): Triton's tutorial FlashAttention-2 kernel
    # 458.359 TFLOP/s and FlashAttention-3 590.233. The commit names no GPU and no data type;
    # FA3 runs only on Hopper, so the chip is left unnamed rather than guessed.
    _M("Triton tutorial FA-2 forward, tritonbench, B4 H16 N4096 d128", 458.359 * _T, "FLOP/s",
       None, "tritonbench --op flash_attention --d-head 128 on an unnamed Hopper GPU, "
       "pytorch/benchmark commit ff65cb6", "PTBENCH-FA3"),
    _M("FA3 forward, tritonbench, B4 H16 N4096 d128", 590.233 * _T, "FLOP/s", None,
       "tritonbench --op flash_attention --d-head 128 on an unnamed Hopper GPU, "
       "pytorch/benchmark commit ff65cb6", "PTBENCH-FA3"),
    # pytorch issue 142132 (2024-12-05): tritonbench on "eligible H100" (SXM or PCIe not said),
    # torch 2.6.0.dev20241204+cu124, shape (1, 24, 4608, 128): SDPA's default of the time
    # (FlashAttention-2, cuDNN being opt-in since 2.5.1) 329.483 TFLOP/s, cuDNN 9.1.0 631.338,
    # FlashAttention-3 631.827.
    _M("SDPA default (FA-2) forward, tritonbench, B1 H24 N4608 d128", 329.483 * _T,
       "FLOP/s", None, "tritonbench --op flash_attention --native-sdpa on an H100 (variant not "
       "named), torch 2.6.0.dev20241204", "PT-142132"),
    _M("cuDNN 9.1 attention forward, tritonbench, B1 H24 N4608 d128", 631.338 * _T, "FLOP/s",
       None, "tritonbench --op flash_attention on an H100 (variant not named), torch "
       "2.6.0.dev20241204", "PT-142132"),
    _M("FA3 forward, tritonbench, B1 H24 N4608 d128", 631.827 * _T, "FLOP/s", None,
       "tritonbench --op flash_attention on an H100 (variant not named), torch "
       "2.6.0.dev20241204", "PT-142132"),
    _M("FlashAttention-4 forward, bf16, best case", 1613 * _T, "FLOP/s", "B200",
       "FA4 paper's attention benchmark; up to 1.3× cuDNN 9.13 and 2.7× Triton on the same "
       "B200 (the authors' blog post reports 1605 TFLOP/s)", "FA4"),
    _M("FA4 bf16 forward speed over cuDNN 9.13 attention", 1.3, "×", "B200",
       "up to, on the same B200 (FA4 paper's abstract)", "FA4"),
    _M("FA4 bf16 forward speed over Triton attention", 2.7, "×", "B200",
       "up to, on the same B200 (FA4 paper's abstract)", "FA4"),
    _M("FA4 bf16 forward, best case, as the authors' blog post gives it", 1605 * _T, "FLOP/s",
       "B200", "the Together AI blog post's figure for the paper's claim (the paper: 1613)",
       "FA4-BLOG"),
    # --- decoding at batch 1 (tokens per second of one sequence) -------------------------------
    # gpt-fast's README (commit 0f925b5): Llama-2-7B, batch 1, a 5-token prompt, one A100-80GB
    # power-limited to 330 W, compiled with torch.compile (mode "reduce-overhead": CUDA graphs).
    _M("Llama-2-7B decode, bf16 weights, compiled", 104.9, "token/s", "A100-80GB",
       "gpt-fast, batch 1, torch.compile + CUDA graphs; 1397 GB/s of weights read", "GPT-FAST"),
    _M("Llama-2-7B decode, int8 weights, compiled", 155.58, "token/s", "A100-80GB",
       "gpt-fast, batch 1, int8 weight-only quantization; 1069 GB/s", "GPT-FAST"),
    _M("Llama-2-7B decode, int4 weights, compiled", 196.80, "token/s", "A100-80GB",
       "gpt-fast, batch 1, int4 weight-only quantization, groups of 32; 863 GB/s", "GPT-FAST"),
    _M("Llama-2-7B decode, bf16, eager", 25.5, "token/s", "A100-80GB",
       "the blog's starting point: plain PyTorch, CPU-overhead bound", "PT-GPTFAST"),
    # --- serving systems, as their authors report them (speedups are ratios, not rates) -------
    _M("Sarathi-Serve serving capacity over vLLM, Mistral-7B", 2.6, "×", None,
       "chunked prefill with stall-free batching, one A100 (OSDI '24 abstract; up to 3.7× for "
       "Yi-34B on two A100s)", "SARATHI"),
    _M("DistServe goodput over colocated serving", 4.48, "×", None,
       "up to; prefill/decode disaggregation, the authors' blog post", "DISTSERVE"),
    _M("SGLang throughput over prior systems", 6.4, "×", None,
       "up to; end to end across the paper's language and multimodal workloads, with all of "
       "SGLang's optimisations (RadixAttention's prefix reuse is one of them; arXiv v2)",
       "SGLANG"),
    _M("DeepSeek-V3 MTP second-token acceptance", 0.875, "fraction", None,
       "85 % to 90 % across generation topics, the report's section 5.4.3; midpoint given",
       "DSV3-MTP", 0.85, 0.90),
    _M("DeepSeek-V3 MTP decoding speed", 1.8, "×", None,
       "tokens per second with the MTP module drafting one token, the report's section 5.4.3",
       "DSV3-MTP"),
    _M("Megakernel share of HBM bandwidth, Llama-3.2-1B batch 1", 0.78, "fraction", "H100-SXM",
       "Hazy Research's one-kernel forward pass (the No Bubbles post)", "HAZY"),
    _M("vLLM and SGLang share of HBM bandwidth, Llama-3.2-1B batch 1", 0.50, "fraction",
       "H100-SXM", "at most, as the No Bubbles post reports them", "HAZY"),
    _M("Megakernel speedup over vLLM and SGLang, Llama-3.2-1B batch 1", 1.5, "×", "H100-SXM",
       "over 1.5×, a lower bound as the No Bubbles post states it", "HAZY"),
    # Horace He: PyTorch eager manages about 280 thousand operations per second on tiny tensors.
    _M("PyTorch eager time per operation, tiny tensors", 1 / 280e3, "s", None,
       "280 thousand operations per second (the blog's overhead example)", "HORACE-BRRR"),
    # --- host link ---------------------------------------------------------------------------
    _M("CPU → GPU copy", 14.2 * GB, "B/s", "H100-SXM",
       "nvbandwidth host_to_device; bottleneck is a PCIe Gen4 x8 switch uplink (15.75 GB/s)",
       "PLAYBOOK"),
    _M("CPU ↔ GPU round-trip latency", 1.4 * _US, "s", "H100-SXM",
       "nvbandwidth host_device_latency_sm (pointer chase)", "PLAYBOOK"),
    _M("pinned host → device copy", 26 * GB, "B/s", "A100-40GB", "PCIe Gen4", "DELLA"),
    _M("host → device copy", 9.7 * GB, "B/s", "T4", "PCIe Gen3, bandwidthTest", "ROUTERGAO"),
    # --- GPU to GPU inside a node (AWS p5, 8 × H100) -------------------------------------------
    _M("GPU → GPU through the CPU", 3.24 * GB, "B/s", "H100-SXM", "NCCL SendRecv, no P2P",
       "PLAYBOOK"),
    _M("GPU → GPU over EFA (GPUDirect RDMA)", 38.16 * GB, "B/s", "H100-SXM",
       "NCCL SendRecv, 4 EFA NICs per GPU", "PLAYBOOK"),
    _M("GPU → GPU over NVLink 4", 364.93 * GB, "B/s", "H100-SXM",
       "NCCL SendRecv, one direction", "PLAYBOOK"),
    # Seed 001 prints "786 GB/s ... 900 GB/s 的 85%"; 786/900 is 87.3 %, an arithmetic slip in
    # the source (tests/test_measurements.py checks every "N % of X" a method quotes).
    _M("GPU ↔ GPU over NVLink 4, both directions", 786 * GB, "B/s", "H100-SXM",
       "nvbandwidth memcpy CE, 87 % of 900 GB/s (the playbook's text says 85 %, a slip)",
       "PLAYBOOK"),
    _M("all-reduce bus bandwidth in one node (NVLS)", 480 * GB, "B/s", "H100-SXM",
       "NCCL all_reduce_perf with NVLink SHARP", "PLAYBOOK"),
    # Seed 001 (the playbook's in-node section) runs all_to_all_perf on one node and states
    # 340 GB/s twice (result and TL;DR). Its multi-node paragraph quotes 344 GB/s for one node as
    # the first point of the scaling series; the course uses the dedicated single-node test's
    # 340 GB/s everywhere, and the scaling series only for 2 nodes and beyond.
    _M("all-to-all bus bandwidth in one node", 340 * GB, "B/s", "H100-SXM",
       "NCCL alltoall_perf in one node, no NVLS acceleration", "PLAYBOOK"),
    # --- across nodes --------------------------------------------------------------------------
    _M("send/recv between nodes", 42.5 * GB, "B/s", "H100-SXM",
       "NCCL SendRecv, 2–4 nodes (21 GB/s at ≥ 5 nodes until NCCL_NCHANNELS_PER_NET_PEER=2)",
       "PLAYBOOK", 42 * GB, 43 * GB),
    _M("all-reduce bus bandwidth, 3–16 nodes", 335 * GB, "B/s", "H100-SXM",
       "NCCL all_reduce_perf; 479 GB/s at 2 nodes", "PLAYBOOK", 320 * GB, 350 * GB),
    _M("all-to-all bus bandwidth, 2 nodes", 81 * GB, "B/s", "H100-SXM",
       "NCCL alltoall_perf, 2 nodes; 45–58 GB/s on more nodes", "PLAYBOOK"),
    _M("all-reduce latency, one node", 12.9 * _US, "s", "H100-SXM", "NCCL all_reduce_perf",
       "PLAYBOOK"),
    _M("all-reduce latency, 2 nodes", 55.5 * _US, "s", "H100-SXM", "NCCL all_reduce_perf",
       "PLAYBOOK"),
    _M("all-reduce latency, 16 nodes", 235 * _US, "s", "H100-SXM", "NCCL all_reduce_perf",
       "PLAYBOOK"),
    # --- storage -----------------------------------------------------------------------------
    _M("local NVMe RAID 0 (8 × 3.5 TB) read throughput", 26.59 * GiB, "B/s", None,
       "gdsio, 337K IOPS", "PLAYBOOK"),
    _M("WekaFS network file system throughput", 4.21 * GiB, "B/s", None, "gdsio, 51K IOPS",
       "PLAYBOOK"),
    _M("FSx Lustre throughput", 1.13 * GiB, "B/s", None, "gdsio", "PLAYBOOK"),
)  # fmt: skip


@dataclass(frozen=True)
class OccupancySweep:
    """A streaming kernel's bandwidth measured at rising occupancy (see
    :data:`STREAM_READ_SWEEPS`). ``threads_per_sm[i]`` resident threads per SM, each with
    ``bytes_per_thread`` in flight, drew ``bytes_per_s[i]``."""

    chip: str
    method: str
    source: str
    bytes_per_thread: int
    threads_per_sm: tuple[int, ...]
    bytes_per_s: tuple[float, ...]

    def __post_init__(self) -> None:
        for name in ("chip", "method", "source"):
            name_string(name, getattr(self, name))
        positive_int("bytes_per_thread", self.bytes_per_thread)
        threads = sequence("threads_per_sm", self.threads_per_sm, positive_int)
        rates = sequence("bytes_per_s", self.bytes_per_s, positive_float)
        if len(threads) != len(rates):
            raise ValueError(
                f"threads_per_sm has {len(threads)} entries and bytes_per_s {len(rates)}: "
                "one bandwidth per occupancy"
            )
        object.__setattr__(self, "threads_per_sm", threads)
        object.__setattr__(self, "bytes_per_s", rates)


def _sweep(chip: str, method: str, *gbps: float) -> OccupancySweep:
    # Two blocks per SM (a shared-memory spoiler allows no more) of 32, 64, ..., 1024 threads.
    threads = tuple(2 * block for block in range(32, 1025, 32))
    return OccupancySweep(chip, method, "GPUBENCH", 8, threads, tuple(v * GB for v in gbps))


#: gpu-benches' gpu-stream ``read`` kernel (each thread loads one 8-byte double, one load in
#: flight, and exits), swept from 3 % to 100 % occupancy: the H100 PCIe run of the README (CUDA
#: 11.7) and the H200 run of gpu-stream/h200.txt (commit fd7091f, 2023-12-13; 132 SMs).
STREAM_READ_SWEEPS: tuple[OccupancySweep, ...] = (
    _sweep("H100-PCIe", "gpu-stream read, 2 blocks per SM, 8 B per thread",
           96, 189, 277, 368, 449, 533, 612, 702, 764, 841, 908, 985, 1045, 1116, 1179, 1261,
           1300, 1362, 1416, 1473, 1527, 1578, 1624, 1680, 1714, 1759, 1795, 1837, 1871, 1897,
           1919, 1942),
    _sweep("H200", "gpu-stream read, 2 blocks per SM, 8 B per thread",
           123, 244, 361, 485, 588, 702, 805, 935, 1009, 1116, 1208, 1314, 1395, 1488, 1571,
           1707, 1739, 1821, 1901, 1996, 2057, 2141, 2205, 2297, 2336, 2408, 2463, 2539, 2587,
           2655, 2708, 2756),
)  # fmt: skip


def stream_read_sweep(chip: str) -> OccupancySweep:
    """The occupancy sweep of :data:`STREAM_READ_SWEEPS` measured on ``chip`` (name or alias)."""
    name = lookup_chip(chip).name
    for sweep in STREAM_READ_SWEEPS:
        if sweep.chip == name:
            return sweep
    raise ValueError(
        f"chip={chip!r}: no occupancy sweep measured on {name}; measured on: "
        f"{', '.join(s.chip for s in STREAM_READ_SWEEPS)}"
    )


#: nvbandwidth's device_local_copy on an H100 node (HBM → HBM, ~1,519 GB/s): "latency-bound below
#: 1 MB; from 1 MB on, reads and writes sustain about 1,500 GB/s" (seed 001; seed 000). A plateau
#: reached, not a half-bandwidth point: it bounds n½ = t₀·W from above
#: (:func:`gpuperf.memory.latency_upper_bound`), it does not give it. Measured on device-local
#: copies only, not on the host link.
LATENCY_BOUND_BELOW_BYTES = 1e6


def measurements(chip: str | None = None, unit: str | None = None) -> tuple[Measurement, ...]:
    """Measurements, optionally for one chip (name or alias) and/or one unit ("B/s", ...)."""
    name = lookup_chip(chip).name if chip is not None else None
    units = {m.unit for m in MEASUREMENTS}
    if unit is not None and (not isinstance(unit, str) or unit not in units):
        raise ValueError(f"unit={unit!r} is not used here; valid: {', '.join(sorted(units))}")
    return tuple(
        m
        for m in MEASUREMENTS
        if (name is None or m.chip == name) and (unit is None or m.unit == unit)
    )


def training_mfus() -> tuple[Measurement, ...]:
    """The published training runs' MFUs: the rows chapter 1 compares a run with. Selected by
    name, not by unit, as other rows are fractions too (an acceptance rate, a bandwidth share)."""
    return tuple(m for m in MEASUREMENTS if "training MFU" in m.quantity)


def find(quantity: str, chip: str | None = None) -> Measurement:
    """The one measurement whose quantity contains ``quantity`` (case-insensitive)."""
    if not isinstance(quantity, str) or not quantity:
        raise TypeError(
            f"quantity={quantity!r} must be a non-empty string (part of a measurement's "
            "quantity, e.g. 'HBM copy')"
        )
    needle = quantity.lower()
    found = [m for m in measurements(chip) if needle in m.quantity.lower()]
    if len(found) != 1:
        names = "; ".join(m.quantity for m in (found or measurements(chip)))
        raise KeyError(f"{len(found)} measurements match {quantity!r}; candidates: {names}")
    return found[0]


# ----------------------------------------------------------------------------------------------
# First-party measurements: the course's own kernels, timed on a real GPU
#
# ``python -m gpuperf.bench --json PATH`` writes one JSON document per run: a ``provenance``
# object (the chip and the software it ran) and one record per case. The run shipped with the
# package was made on an H100 SXM on 2026-11-22 (``measured/*.json``); it is one run on one card,
# so differences under ~5 % are noise. Records keep the bench's own key names (``GBps``,
# ``TFLOPs``); :class:`KernelMeasurement` exposes them in SI-free, lower-case fields.

#: The schema name a kernels JSON document carries; a list of records alone is accepted too.
KERNELS_SCHEMA = "gpuperf.bench/1"
#: The packaged first-party run (relative to this module).
COURSE_KERNELS_FILE = "measured/h100-sxm-2026-11-22-kernels.json"
_PROVENANCE_FIELDS = ("chip", "device", "driver", "cuda", "torch", "triton", "numpy", "date",
                      "commit")  # fmt: skip
_RECORD_KEYS = {
    "case": "case",
    "us": "us",
    "torch_us": "torch_us",
    "speed_vs_torch": "speed_vs_torch",
    "GBps": "gbps",
    "TFLOPs": "tflops",
    "torch_TFLOPs": "torch_tflops",
    "frac_copy_bw": "frac_copy_bw",
    "rel_err": "rel_err",
}


@dataclass(frozen=True)
class Provenance:
    """Where and with what a first-party run was measured. ``chip`` is a key of the hardware
    table; ``device`` is the name the driver reports; ``commit`` is gpuperf's git commit."""

    chip: str
    device: str
    driver: str
    cuda: str
    torch: str
    triton: str
    numpy: str
    date: str
    commit: str
    method: str = ""

    def __post_init__(self) -> None:
        for name in _PROVENANCE_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(
                    f"provenance {name}={value!r} must be a non-empty string; a first-party "
                    "measurement needs all of " + ", ".join(_PROVENANCE_FIELDS)
                )
        if not isinstance(self.method, str):
            raise TypeError(f"method={show(self.method)} must be a string")

    @property
    def chip_name(self) -> str | None:
        """The hardware table's name for the chip (``chip`` may be a key, an alias or the name
        the driver reports), or None for a chip the table lacks."""
        from .hardware import chip_from_device_name

        try:
            return lookup_chip(self.chip).name
        except (KeyError, ValueError, TypeError):
            found = chip_from_device_name(self.chip)
            return found.name if found is not None else None

    def in_words(self) -> str:
        """'measured on an NVIDIA H100 80GB HBM3, driver …, torch …, Triton …, 2026-11-22'."""
        return (
            f"measured on an {self.device} (driver {self.driver}, CUDA {self.cuda}), torch "
            f"{self.torch}, Triton {self.triton}, numpy {self.numpy}, gpuperf {self.commit}, "
            f"{self.date}"
        )


def _optional_number(case: str, key: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{case!r}: {key}={value!r} must be a number or absent")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{case!r}: {key}={value!r} must be finite and ≥ 0")
    return number


@dataclass(frozen=True)
class KernelMeasurement:
    """One case of a first-party run. Times in microseconds (medians); ``gbps``/``tflops`` the
    achieved rate (GB/s, TFLOP/s); ``frac_copy_bw`` the achieved bandwidth over the copy
    bandwidth measured in the same run; ``speed_vs_torch`` = ``torch_us / us`` (> 1: the course's
    kernel is faster); ``rel_err`` = ‖out − ref‖ / ‖ref‖. A field the run did not record is
    ``None`` — including ``us`` for accuracy-only rows, which the bench stores as 0."""

    case: str
    us: float | None
    provenance: Provenance
    torch_us: float | None = None
    speed_vs_torch: float | None = None
    gbps: float | None = None
    tflops: float | None = None
    torch_tflops: float | None = None
    frac_copy_bw: float | None = None
    rel_err: float | None = None

    def __post_init__(self) -> None:
        name_string("case", self.case)
        instance("provenance", self.provenance, Provenance)
        for name in ("us", "torch_us", "speed_vs_torch", "gbps", "tflops", "torch_tflops"):
            optional(name, getattr(self, name), positive_float)  # a time or a rate: > 0
        for name in ("frac_copy_bw", "rel_err"):  # 0 is a possible ratio, an exact result
            optional(name, getattr(self, name), positive_float, allow_zero=True, bounded=False)

    @property
    def seconds(self) -> float | None:
        """The median time in seconds (SI), or None for an accuracy-only row."""
        return None if self.us is None else self.us * _US

    @property
    def bytes_per_s(self) -> float | None:
        return None if self.gbps is None else self.gbps * GB

    @property
    def flops_per_s(self) -> float | None:
        return None if self.tflops is None else self.tflops * _T

    def in_words(self, name: str | None = None) -> str:
        """The record as a sentence, e.g. "the course's vector add on an H100-SXM: 2.99 TB/s,
        99 % of a measured copy". ``name`` replaces the case label."""
        optional("name", name, name_string)
        parts = []
        if self.gbps is not None:
            parts.append(format_bandwidth(self.bytes_per_s))
        if self.tflops is not None:
            parts.append(format_flops(self.flops_per_s))
        if self.frac_copy_bw is not None:
            # rounded down: a first-party number never claims more than was measured
            parts.append(f"{math.floor(self.frac_copy_bw * 100)} % of a measured copy")
        if self.speed_vs_torch is not None:
            parts.append(f"{self.speed_vs_torch:.2f}× torch's speed")
        if self.us is not None:
            parts.append(f"{format_seconds(self.seconds)} median")
        if not parts and self.rel_err is not None:
            parts.append(f"relative error {self.rel_err:.1e}")
        chip_name = self.provenance.chip_name or self.provenance.device
        return f"the course's {name or self.case} on an {chip_name}: " + ", ".join(parts)


def _record(raw: object, provenance: Provenance) -> KernelMeasurement:
    if not isinstance(raw, dict) or not isinstance(raw.get("case"), str) or not raw["case"]:
        raise ValueError(f"a kernels record needs a non-empty 'case' string; got {raw!r}")
    case = raw["case"]
    unknown = set(raw) - set(_RECORD_KEYS)
    if unknown:
        raise ValueError(
            f"{case!r}: unknown keys {sorted(unknown)}; valid: {', '.join(_RECORD_KEYS)}"
        )
    if "us" not in raw:
        raise ValueError(f"{case!r}: no 'us' (median time in µs)")
    values = {
        field: _optional_number(case, key, raw.get(key))
        for key, field in _RECORD_KEYS.items()
        if key != "case"
    }
    if values["us"] == 0:
        values["us"] = None  # accuracy-only row: the bench records no time as 0
    return KernelMeasurement(case=case, provenance=provenance, **values)


def load_kernels(source: str | os.PathLike | dict | list) -> tuple[KernelMeasurement, ...]:
    """Records of a kernels JSON document (a path, or the parsed document).

    The document is ``{"schema": "gpuperf.bench/1", "provenance": {...}, "records": [...]}``,
    as ``python -m gpuperf.bench --json`` writes it. A first-party number is never shown without
    where it was measured, so a document without complete provenance is rejected.
    """
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"source={source!r}: no such file")
        data = json.loads(path.read_text(encoding="utf-8"))
    elif isinstance(source, dict | list):
        data = source
    else:
        raise TypeError(
            f"source={source!r} must be a path or a parsed kernels document (dict), "
            f"not {type(source).__name__}"
        )
    if not isinstance(data, dict) or "provenance" not in data or "records" not in data:
        raise ValueError(
            "a kernels document is a JSON object with 'schema', 'provenance' and 'records'; "
            "a bare list of records has no provenance and is not accepted"
        )
    if data.get("schema") != KERNELS_SCHEMA:
        raise ValueError(f"schema={data.get('schema')!r}; this gpuperf reads {KERNELS_SCHEMA!r}")
    raw = data["provenance"]
    if not isinstance(raw, dict):
        raise ValueError(f"provenance={raw!r} must be an object")
    fields = {*_PROVENANCE_FIELDS, "method"}
    missing = [f for f in _PROVENANCE_FIELDS if f not in raw]
    if missing:
        raise ValueError(f"provenance lacks {missing}; needed: {', '.join(_PROVENANCE_FIELDS)}")
    provenance = Provenance(**{k: v for k, v in raw.items() if k in fields})
    if not isinstance(data["records"], list) or not data["records"]:
        raise ValueError("records must be a non-empty list")
    return tuple(_record(r, provenance) for r in data["records"])


@functools.cache
def course_kernels() -> tuple[KernelMeasurement, ...]:
    """The course's own kernels measured on an H100 SXM (2026-11-22), with provenance."""
    text = resources.files(__package__).joinpath(COURSE_KERNELS_FILE).read_text(encoding="utf-8")
    return load_kernels(json.loads(text))


def course_kernel(case: str) -> KernelMeasurement:
    """The one first-party record whose case contains ``case`` (case-insensitive)."""
    if not isinstance(case, str) or not case:
        raise TypeError(f"case={case!r} must be a non-empty string, e.g. 'vector_add'")
    records = course_kernels()
    exact = [r for r in records if r.case.lower() == case.lower()]
    found = exact or [r for r in records if case.lower() in r.case.lower()]
    if len(found) != 1:
        names = "; ".join(r.case for r in (found or records))
        raise KeyError(f"{len(found)} first-party records match {case!r}; candidates: {names}")
    return found[0]
