"""Serving many sequences: paged KV caches, continuous batching, speculative decoding, launches.

:mod:`gpuperf.inference` prices one decode step on the roofline. A server's throughput also
depends on how many sequences it can keep in a step, how many tokens each weight read yields,
and whether the CPU can launch the step's kernels as fast as the GPU runs them:

* **Paged KV cache** (vLLM's PagedAttention, Kwon et al. 2023). A server that reserves each
  sequence's cache for the longest context it may reach holds memory the sequence never uses.
  Storing the cache in blocks of ``block_tokens`` tokens, allocated as the sequence grows,
  wastes at most one partial block per sequence (:func:`paged_kv`). More sequences fit, so the
  batch, and with it the weight matmuls' intensity, grows.
* **Continuous batching** (Orca's iteration-level scheduling, Yu et al. 2022). A static batch
  runs until its longest sequence is done, so finished sequences leave idle slots; refilling
  each slot as soon as its sequence ends keeps the batch full. :func:`static_batch_occupancy`
  is the share of slot-steps a static batch uses: mean length / longest length.
* **Speculative decoding** (Leviathan et al. 2023). A small draft model proposes γ tokens; the
  target checks all of them in one forward pass (:func:`gpuperf.inference.verify_step`), which at
  small batch costs about one ordinary step, because the step is bound by reading the weights.
  With each drafted token accepted with probability α, a round yields
  (1 − α^(γ+1)) / (1 − α) tokens per read of the target's weights (:func:`speculative_decoding`).
  Both models live in the same HBM: :func:`speculative_max_batch` is the largest batch whose
  two sets of weights and two KV caches fit, and :func:`speculative_at_equal_memory` compares
  it with plain decoding at the larger batch the same memory holds without a draft.
* **Launch overhead and CUDA graphs.** A decode step at batch 1 is hundreds of small kernels
  (:func:`decode_kernels` counts them for a model). Launched one by one from Python, the step
  takes max(GPU time, CPU time to launch them all); captured in a CUDA graph, the whole step is
  one launch (:func:`launch_bound_step`). A graph removes the *host's* time, not the kernel
  boundaries: between two kernels the GPU drains the first and sets up the next, idle for
  :data:`GRAPH_GAP_S_PER_KERNEL` each time even when the launches are queued, so the GPU's side
  of a step is its roofline time plus kernels × that gap, in both modes.

* **Serving as it is done now.** A prompt's prefill in chunks riding on memory-bound decode
  steps (:func:`chunked_prefill`, Sarathi-Serve), or on other GPUs with its KV cache sent over
  a link (:func:`kv_transfer`, DistServe/Splitwise); cached prefixes (:func:`prefix_cache`,
  RadixAttention); a one-layer draft head instead of a draft model
  (:func:`self_speculative_decoding`, EAGLE, DeepSeek-V3's MTP); the experts a mixture-of-
  experts step reads (:func:`moe_decode`, :data:`DEEPSEEK_V3_MOE`); and the whole step as one
  kernel (:attr:`LaunchBoundStep.megakernel_s`, Hazy Research's megakernel).

Limits: roofline lower bounds (nothing here ran); equal context lengths within a step; the
draft's acceptance rate is the caller's, not derived; MoE routing uniform and independent; one
gap per kernel boundary, measured on an H100 under CUDA graphs and used as a stand-in on other
GPUs and for eager launches (whose gap is no smaller).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ._validate import choice, name_string, positive_float, positive_int, show
from .hardware import NETWORK_BANDWIDTH, NVLINK_BIDIRECTIONAL, Chip, chip, pcie_bandwidth
from .inference import (
    DecoderConfig,
    InferenceStep,
    decode_step,
    max_batch,
    prefill_step,
    verify_step,
)
from .units import bytes_per_element, check_precision

#: A draft model for the chapter's speculative-decoding example, chosen for illustration like
#: :data:`gpuperf.inference.ILLUSTRATIVE` (whose vocabulary it shares): 16 layers of width 2048,
#: 16 query heads and 4 KV heads of 128, a gated MLP of 6144 — about a billion weights.
ILLUSTRATIVE_DRAFT = DecoderConfig(
    n_layers=16, d_model=2048, n_heads=16, n_kv_heads=4, head_dim=128, d_ff=6144,
    gated_mlp=True, name="illustrative draft", vocab_size=128_000,
)  # fmt: skip

#: Largest number of sequences the list-based calculators accept.
MAX_SEQUENCES = 1 << 20
#: Largest number of drafted tokens per round.
MAX_DRAFT = 32


def _lengths(name: str, lengths: object) -> np.ndarray:
    """A non-empty 1-D list of token counts ≥ 1, checked element by element."""
    try:
        values = [lengths] if np.isscalar(lengths) else list(lengths)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"{name}={show(lengths)} must be a list of token counts ≥ 1") from None
    if not values or len(values) > MAX_SEQUENCES:
        raise ValueError(f"{name}={show(lengths)} must hold 1 to {MAX_SEQUENCES} token counts")
    return np.array([positive_int(f"{name}[{i}]", v) for i, v in enumerate(values)], dtype=float)


# --------------------------------------------------------------------------- paged KV cache


@dataclass(frozen=True)
class PagedKV:
    """KV memory of a set of sequences: reserved up to ``max_len`` each, or paged in blocks."""

    context_lens: tuple[int, ...]
    max_len: int
    block_tokens: int
    bytes_per_token: float

    def __post_init__(self) -> None:
        positive_int("max_len", self.max_len)
        positive_int("block_tokens", self.block_tokens, 1, self.max_len)
        positive_float("bytes_per_token", self.bytes_per_token)
        lengths = _lengths("context_lens", self.context_lens)
        object.__setattr__(self, "context_lens", tuple(int(n) for n in lengths))
        if lengths.max() > self.max_len:
            raise ValueError(
                f"context_lens holds {int(lengths.max())} tokens, more than max_len={self.max_len}"
            )

    @property
    def used_bytes(self) -> float:
        """The cache the tokens actually fill."""
        return sum(self.context_lens) * self.bytes_per_token

    @property
    def reserved_bytes(self) -> float:
        """Contiguous caches reserved for ``max_len`` tokens each."""
        return len(self.context_lens) * self.max_len * self.bytes_per_token

    @property
    def paged_bytes(self) -> float:
        """Whole blocks of ``block_tokens``: ⌈length / block⌉ blocks per sequence."""
        blocks = sum(math.ceil(n / self.block_tokens) for n in self.context_lens)
        return blocks * self.block_tokens * self.bytes_per_token

    @property
    def reserved_waste(self) -> float:
        """Share of the reserved memory no token uses."""
        return 1 - self.used_bytes / self.reserved_bytes

    @property
    def paged_waste(self) -> float:
        """Share of the paged memory no token uses (the last, partial block of each)."""
        return 1 - self.used_bytes / self.paged_bytes


def paged_kv(
    context_lens: object, max_len: int, block_tokens: int, bytes_per_token: float
) -> PagedKV:
    """KV memory of sequences of ``context_lens`` tokens, reserved or paged.

    ``bytes_per_token`` is a sequence's cache per token
    (:meth:`gpuperf.inference.DecoderConfig.kv_bytes_per_token`); vLLM's default block holds
    16 tokens.
    """
    lengths = _lengths("context_lens", context_lens)
    return PagedKV(
        context_lens=tuple(int(n) for n in lengths),
        max_len=positive_int("max_len", max_len),
        block_tokens=positive_int("block_tokens", block_tokens),
        bytes_per_token=positive_float("bytes_per_token", bytes_per_token),
    )


def static_batch_occupancy(output_lengths: object) -> float:
    """Share of a static batch's slot-steps that produce a token: mean / max of the lengths.

    The batch runs max(lengths) steps with every slot held; a sequence of n tokens uses n of
    them. Continuous batching refills a slot when its sequence ends, keeping it near 1.
    """
    lengths = _lengths("output_lengths", output_lengths)
    return float(lengths.mean() / lengths.max())


# ---------------------------------------------------------------------- speculative decoding


def expected_tokens_per_round(acceptance: float, draft_tokens: int) -> float:
    """Tokens one verification yields: (1 − α^(γ+1)) / (1 − α), γ + 1 when α = 1.

    Drafted token i survives if it and all before it are accepted (probability αⁱ); the target
    always adds one token of its own (the correction, or the next one after a full accept).
    """
    alpha = positive_float("acceptance", acceptance, allow_zero=True, maximum=1.0)
    gamma = positive_int("draft_tokens", draft_tokens, 1, MAX_DRAFT)
    if alpha == 1.0:
        return float(gamma + 1)
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


@dataclass(frozen=True)
class SpeculativeDecoding:
    """One round: γ draft steps, one target verification of γ + 1 tokens per sequence."""

    draft_tokens: int
    acceptance: float
    draft_step_s: float
    verify_s: float
    plain_step_s: float
    batch: int

    def __post_init__(self) -> None:
        positive_int("draft_tokens", self.draft_tokens, 1, MAX_DRAFT)
        positive_float("acceptance", self.acceptance, allow_zero=True, maximum=1.0)
        for name in ("draft_step_s", "verify_s", "plain_step_s"):
            positive_float(name, getattr(self, name))
        positive_int("batch", self.batch)

    @property
    def tokens_per_round(self) -> float:
        """Expected tokens per sequence per round, = per read of the target's weights."""
        return expected_tokens_per_round(self.acceptance, self.draft_tokens)

    @property
    def round_s(self) -> float:
        return self.draft_tokens * self.draft_step_s + self.verify_s

    @property
    def tokens_per_s(self) -> float:
        """Generated tokens per second over the batch."""
        return self.batch * self.tokens_per_round / self.round_s

    @property
    def plain_tokens_per_s(self) -> float:
        return self.batch / self.plain_step_s

    @property
    def speedup(self) -> float:
        """Against plain decoding with the target alone (below 1: speculation does not pay)."""
        return self.tokens_per_s / self.plain_tokens_per_s


def speculative_decoding(
    config: DecoderConfig,
    draft: DecoderConfig,
    draft_tokens: int,
    acceptance: float,
    context_len: int,
    chip_name: str | Chip,
    batch: int = 1,
    precision: str = "bf16",
) -> SpeculativeDecoding:
    """Roofline time of speculative decoding with ``draft`` proposing ``draft_tokens`` (γ)
    tokens per round for the target model ``config`` to verify, each accepted with probability
    ``acceptance``.

    The draft runs γ decode steps; the target one :func:`gpuperf.inference.verify_step` of γ + 1
    tokens per sequence. Plain decoding is one target decode step per token.
    """
    _models(config, draft)
    the_chip = chip(chip_name)
    precision = check_precision(precision)
    gamma = positive_int("draft_tokens", draft_tokens, 1, MAX_DRAFT)
    alpha = positive_float("acceptance", acceptance, allow_zero=True, maximum=1.0)
    batch = positive_int("batch", batch)
    context_len = positive_int("context_len", context_len)
    draft_step = decode_step(draft, batch, context_len, the_chip, precision)
    verify = verify_step(config, batch, gamma + 1, context_len, the_chip, precision)
    plain = decode_step(config, batch, context_len, the_chip, precision)
    return SpeculativeDecoding(gamma, alpha, draft_step.time_s, verify.time_s, plain.time_s, batch)


def draft_head(config: DecoderConfig, layers: int = 1) -> DecoderConfig:
    """The draft of self-speculation: ``layers`` decoder layers of the target's own widths that
    reuse its LM head (EAGLE's draft head, DeepSeek-V3's MTP module; one layer each).

    Both also project the concatenated hidden state and next-token embedding (2·d_model) back
    to d_model: :data:`DRAFT_FUSION_PARAMS_PER_D2` · d_model² more weights, added by
    :func:`self_speculative_decoding`.
    """
    if not isinstance(config, DecoderConfig):
        raise TypeError(f"config={show(config)} must be a gpuperf.inference.DecoderConfig")
    layers = positive_int("layers", layers, 1, config.n_layers)
    return DecoderConfig(
        n_layers=layers, d_model=config.d_model, n_heads=config.n_heads,
        n_kv_heads=config.n_kv_heads, head_dim=config.head_dim, d_ff=config.d_ff,
        gated_mlp=config.gated_mlp, name=f"{config.name}: draft head",
        vocab_size=config.vocab_size, tied_embeddings=True,
    )  # fmt: skip


#: The fusion projection of a draft head, 2·d_model → d_model: 2 · d_model² weights.
DRAFT_FUSION_PARAMS_PER_D2 = 2


def self_speculative_decoding(
    config: DecoderConfig,
    draft_tokens: int,
    acceptance: float,
    context_len: int,
    chip_name: str | Chip,
    batch: int = 1,
    precision: str = "bf16",
    *,
    head_layers: int = 1,
) -> SpeculativeDecoding:
    """Speculative decoding whose draft is a small head on the target's own hidden states
    (:func:`draft_head`), not a separate model: EAGLE (Li et al. 2024) or DeepSeek-V3's
    multi-token prediction module, which drafts one token (γ = 1) at a reported 85–90 %
    acceptance.

    Each draft step reads the head's layer(s), its fusion projection and the LM head, plus the
    head's own one-layer cache; the target verifies γ + 1 tokens as in
    :func:`speculative_decoding`. ``acceptance`` is constant per drafted token (EAGLE's falls
    with the position; DeepSeek-V3 reports only the second token's).
    """
    the_chip = chip(chip_name)
    precision = check_precision(precision)
    gamma = positive_int("draft_tokens", draft_tokens, 1, MAX_DRAFT)
    alpha = positive_float("acceptance", acceptance, allow_zero=True, maximum=1.0)
    batch = positive_int("batch", batch)
    context_len = positive_int("context_len", context_len)
    if not isinstance(config, DecoderConfig):
        raise TypeError(f"config={show(config)} must be a gpuperf.inference.DecoderConfig")
    head = draft_head(config, positive_int("head_layers", head_layers, 1, config.n_layers))
    step = decode_step(head, batch, context_len, the_chip, precision)
    fusion = DRAFT_FUSION_PARAMS_PER_D2 * float(config.d_model) ** 2
    step = replace(
        step,
        weight_bytes=step.weight_bytes + fusion * bytes_per_element(precision),
        weight_flops=step.weight_flops + 2.0 * fusion * batch,
    )
    verify = verify_step(config, batch, gamma + 1, context_len, the_chip, precision)
    plain = decode_step(config, batch, context_len, the_chip, precision)
    return SpeculativeDecoding(gamma, alpha, step.time_s, verify.time_s, plain.time_s, batch)


def _models(config: object, draft: object) -> None:
    for name, model in (("config", config), ("draft", draft)):
        if not isinstance(model, DecoderConfig):
            raise TypeError(f"{name}={show(model)} must be a gpuperf.inference.DecoderConfig")


def speculative_max_batch(
    config: DecoderConfig,
    draft: DecoderConfig,
    context_len: int,
    chip_name: str | Chip,
    precision: str = "bf16",
) -> int:
    """Largest batch that speculative decoding can hold in one chip's HBM: the target's and the
    draft's weights (all of them, as :func:`gpuperf.inference.max_batch` counts them) plus both
    models' KV caches of ``context_len`` tokens per sequence.

    ⌊(HBM − target weights − draft weights) / ((target + draft KV bytes per token) · context)⌋,
    0 when the weights alone do not fit. Like ``max_batch`` it ignores activations, the few
    drafted tokens' cache entries and the framework's own memory, so it is an upper bound.
    """
    _models(config, draft)
    the_chip = chip(chip_name)
    precision = check_precision(precision)
    context_len = positive_int("context_len", context_len)
    weights = (config.total_params + draft.total_params) * bytes_per_element(precision)
    free = the_chip.hbm_bytes - weights
    if free <= 0:
        return 0
    per_token = config.kv_bytes_per_token(precision) + draft.kv_bytes_per_token(precision)
    return int(free // (per_token * context_len))


@dataclass(frozen=True)
class EqualMemory:
    """Speculative and plain decoding compared at equal HBM rather than at equal batch.

    Plain decoding carries neither the draft's weights nor its cache, so more sequences fit:
    ``plain_batch`` is :func:`gpuperf.inference.max_batch` of the target alone.
    """

    speculative: SpeculativeDecoding
    plain_batch: int
    plain_step_s: float

    def __post_init__(self) -> None:
        if not isinstance(self.speculative, SpeculativeDecoding):
            raise TypeError(f"speculative={show(self.speculative)} must be a SpeculativeDecoding")
        positive_int("plain_batch", self.plain_batch)
        positive_float("plain_step_s", self.plain_step_s)

    @property
    def plain_tokens_per_s(self) -> float:
        """Plain decoding's throughput at the largest batch it can hold."""
        return self.plain_batch / self.plain_step_s

    @property
    def speedup(self) -> float:
        """Speculative over plain throughput, each at its own batch (below 1: speculation
        loses)."""
        return self.speculative.tokens_per_s / self.plain_tokens_per_s


def speculative_at_equal_memory(
    config: DecoderConfig,
    draft: DecoderConfig,
    draft_tokens: int,
    acceptance: float,
    context_len: int,
    chip_name: str | Chip,
    batch: int | None = None,
    precision: str = "bf16",
) -> EqualMemory:
    """Speculative decoding at ``batch`` (default: :func:`speculative_max_batch`) against plain
    decoding at the largest batch the same HBM holds without a draft
    (:func:`gpuperf.inference.max_batch`).

    :attr:`SpeculativeDecoding.speedup` compares the two at the *same* batch, which favours
    speculation at large batch: plain decoding could have held more sequences. Speculation buys
    per-sequence latency; it buys throughput only while the verification stays memory-bound.
    """
    _models(config, draft)
    the_chip = chip(chip_name)
    precision = check_precision(precision)
    context_len = positive_int("context_len", context_len)
    most = speculative_max_batch(config, draft, context_len, the_chip, precision)
    if batch is None:
        if most == 0:
            raise ValueError(
                f"the two models' weights do not fit in one {the_chip.name}: no batch to compare"
            )
        batch = most
    batch = positive_int("batch", batch)
    plain_batch = max_batch(config, context_len, the_chip, precision)
    if plain_batch == 0:
        raise ValueError(f"config's weights do not fit in one {the_chip.name}")
    spec = speculative_decoding(
        config, draft, draft_tokens, acceptance, context_len, the_chip, batch, precision
    )
    plain = decode_step(config, plain_batch, context_len, the_chip, precision)
    return EqualMemory(spec, plain_batch, plain.time_s)


# ------------------------------------------------------------------- launches and CUDA graphs

#: Kernels per layer in the course's count of a decode step: two norms, four matmuls (QKV,
#: output, gate and up together, down), rotary embedding, attention, the gated activation and
#: two residual adds. A chosen count, not a trace of any framework: if a program launches more
#: kernels per layer, a per-kernel cost derived from its measured step with this count is too
#: high by the same factor (the product, host time per step, is what a measurement fixes).
KERNELS_PER_LAYER = 11
#: Kernels after the last layer: the final norm, the LM head and sampling.
KERNELS_AFTER_LAYERS = 3
#: GPU time lost at each kernel boundary of a step whose launches are already queued (a CUDA
#: graph): the next kernel's blocks start only after the previous kernel's last block retires
#: and the new kernel is set up. Hazy Research measured about 1.3 µs per kernel on an H100
#: under CUDA graphs (about 2.1 µs without) while decoding Llama-3.2-1B at batch 1, the
#: "bubbles" that kept vLLM and SGLang to at most 50 % of the HBM bandwidth (HAZY, 2025-05-27;
#: the per-kernel figures read through summaries of the post, see references.bib). A stand-in
#: on other GPUs.
GRAPH_GAP_S_PER_KERNEL = 1.3e-6


def decode_kernels(config: DecoderConfig) -> int:
    """Kernels one decode step launches in the course's count: 11 per layer + 3.

    See :data:`KERNELS_PER_LAYER`; the illustrative model's 32 layers launch 355.
    """
    if not isinstance(config, DecoderConfig):
        raise TypeError(f"config={show(config)} must be a gpuperf.inference.DecoderConfig")
    return KERNELS_PER_LAYER * config.n_layers + KERNELS_AFTER_LAYERS


@dataclass(frozen=True)
class LaunchBoundStep:
    """A step of ``kernels`` launches taking ``gpu_s`` of roofline time on the GPU,
    ``cpu_s_per_kernel`` each to launch from the host and ``gap_s_per_kernel`` of GPU idle time
    at each kernel boundary (:data:`GRAPH_GAP_S_PER_KERNEL`)."""

    gpu_s: float
    kernels: int
    cpu_s_per_kernel: float
    gap_s_per_kernel: float = GRAPH_GAP_S_PER_KERNEL

    def __post_init__(self) -> None:
        positive_float("gpu_s", self.gpu_s)
        positive_int("kernels", self.kernels, 1, MAX_KERNELS)
        positive_float("cpu_s_per_kernel", self.cpu_s_per_kernel)
        positive_float("gap_s_per_kernel", self.gap_s_per_kernel, allow_zero=True, maximum=1.0)

    @property
    def gap_s(self) -> float:
        """GPU idle time at the kernel boundaries: kernels × gap (a graph keeps it)."""
        return self.kernels * self.gap_s_per_kernel

    @property
    def gpu_busy_s(self) -> float:
        """The GPU's side of the step with the launches queued: roofline time + boundary gaps."""
        return self.gpu_s + self.gap_s

    @property
    def cpu_s(self) -> float:
        """Host time to launch every kernel of the step one by one."""
        return self.kernels * self.cpu_s_per_kernel

    @property
    def eager_s(self) -> float:
        """Launches are asynchronous and the CPU runs ahead: the slower of the two sets it."""
        return max(self.gpu_busy_s, self.cpu_s)

    @property
    def graph_s(self) -> float:
        """One graph launch replays the step: the host's launches go, the boundaries stay."""
        return max(self.gpu_busy_s, self.cpu_s_per_kernel)

    @property
    def gap_share(self) -> float:
        """Share of the graph step the GPU spends idle at kernel boundaries."""
        return self.gap_s / self.graph_s

    @property
    def cpu_bound(self) -> bool:
        return self.cpu_s > self.gpu_busy_s

    @property
    def break_even_s(self) -> float:
        """The launch cost per kernel at which host and GPU take equally long:
        gpu_busy_s / kernels = gpu_s / kernels + gap."""
        return self.gpu_busy_s / self.kernels

    @property
    def graph_speedup(self) -> float:
        return self.eager_s / self.graph_s

    @property
    def megakernel_s(self) -> float:
        """The whole step as one persistent kernel (a megakernel): one launch, no kernel
        boundaries, so neither the host's launches nor the boundary gaps remain. A lower bound:
        the megakernel's own synchronisation between its stages is not counted."""
        return max(self.gpu_s, self.cpu_s_per_kernel)

    @property
    def megakernel_speedup(self) -> float:
        """What a megakernel gains over the same step captured in a CUDA graph."""
        return self.graph_s / self.megakernel_s


#: Largest number of kernels one step may launch.
MAX_KERNELS = 1 << 20


def launch_bound_step(
    gpu_s: float,
    kernels: int,
    cpu_s_per_kernel: float,
    gap_s_per_kernel: float = GRAPH_GAP_S_PER_KERNEL,
) -> LaunchBoundStep:
    """A step's time launched kernel by kernel (eager) and as one CUDA graph.

    At batch 1 a decode step's GPU time is the time to read the weights
    (:func:`gpuperf.inference.decode_step`); if launching its kernels takes longer, the GPU
    waits for the CPU and the step is *launch-bound*. Either way the GPU idles
    ``gap_s_per_kernel`` at each kernel boundary (default :data:`GRAPH_GAP_S_PER_KERNEL`;
    0 reproduces a model with no gaps, which overstates what a graph gains).
    """
    return LaunchBoundStep(
        gpu_s=positive_float("gpu_s", gpu_s),
        kernels=positive_int("kernels", kernels, 1, MAX_KERNELS),
        cpu_s_per_kernel=positive_float("cpu_s_per_kernel", cpu_s_per_kernel),
        gap_s_per_kernel=positive_float(
            "gap_s_per_kernel", gap_s_per_kernel, allow_zero=True, maximum=1.0
        ),
    )


# ------------------------------------------------------- prefill beside decode: chunks, links


@dataclass(frozen=True)
class MixedStep:
    """One step that runs a decode batch and a chunk of one prompt's prefill together.

    The weights are read once for both (that is the point); FLOPs and cache traffic add up.
    ``decode`` and ``chunk`` are the two parts priced as steps of their own.
    """

    decode: InferenceStep
    chunk: InferenceStep

    def __post_init__(self) -> None:
        for name in ("decode", "chunk"):
            if not isinstance(getattr(self, name), InferenceStep):
                raise TypeError(f"{name}={show(getattr(self, name))} must be an InferenceStep")
        if self.decode.chip_name != self.chunk.chip_name:
            raise ValueError(
                f"decode runs on {self.decode.chip_name!r} and chunk on "
                f"{self.chunk.chip_name!r}: a mixed step runs on one chip"
            )

    @property
    def chunk_tokens(self) -> int:
        return self.chunk.tokens

    @property
    def flops(self) -> float:
        return self.decode.flops + self.chunk.flops

    @property
    def bytes(self) -> float:
        """Weights once, both parts' cache reads and writes."""
        return self.decode.bytes + self.chunk.kv_read_bytes + self.chunk.kv_write_bytes

    @property
    def t_math_s(self) -> float:
        return self.flops / self.decode.peak_flops_per_s

    @property
    def t_memory_s(self) -> float:
        return self.bytes / self.decode.bandwidth

    @property
    def time_s(self) -> float:
        """Roofline lower bound of the mixed step: max(T_math, T_memory)."""
        return max(self.t_math_s, self.t_memory_s)

    @property
    def bound(self) -> str:
        return "compute" if self.t_math_s >= self.t_memory_s else "memory"

    @property
    def extra_s(self) -> float:
        """What the chunk adds to the decode step's time (0 while the step stays memory-bound
        and the chunk's cache writes are small)."""
        return self.time_s - self.decode.time_s

    @property
    def separate_s(self) -> float:
        """The two parts as separate steps: the weights read twice."""
        return self.decode.time_s + self.chunk.time_s

    @property
    def saved_s(self) -> float:
        """Time a mixed step saves over running the two parts one after the other."""
        return self.separate_s - self.time_s


def chunked_prefill(
    config: DecoderConfig,
    batch: int,
    context_len: int,
    chunk_tokens: int,
    chip_name: str | Chip,
    precision: str = "bf16",
    *,
    chunk_context: int = 0,
) -> MixedStep:
    """A decode step of ``batch`` sequences at ``context_len`` with ``chunk_tokens`` prompt
    tokens of one more sequence added (Sarathi-Serve's chunked prefill, Agrawal et al. 2024).

    ``chunk_context`` earlier tokens of that prompt are already cached (earlier chunks). A
    memory-bound decode step has idle FLOP/s: prompt tokens added to it ride on the same weight
    read, nearly free until the step's tokens reach the ridge point (:func:`free_chunk_tokens`).
    """
    the_chip = chip(chip_name)
    decode = decode_step(config, batch, context_len, the_chip, precision)
    chunk = prefill_step(
        config,
        1,
        positive_int("chunk_tokens", chunk_tokens),
        the_chip,
        precision,
        context_len=positive_int("chunk_context", chunk_context, minimum=0),
    )
    return MixedStep(decode, chunk)


def free_chunk_tokens(
    config: DecoderConfig,
    batch: int,
    context_len: int,
    chip_name: str | Chip,
    precision: str = "bf16",
) -> int:
    """Most prompt tokens a decode step can carry and stay memory-bound (T_math ≤ T_memory).

    With a small cache, about the ridge point minus the decode batch in bf16 (the step's tokens,
    not the chunk alone, set the weight matmuls' intensity); more when the decode batch's cache
    reads lengthen the step, fewer as attention adds FLOPs. 0 if the decode step alone is
    compute-bound.
    """
    the_chip = chip(chip_name)
    decode = decode_step(config, batch, context_len, the_chip, precision)
    if decode.t_math_s >= decode.t_memory_s:
        return 0

    def fits(c: int) -> bool:
        step = chunked_prefill(config, batch, context_len, c, the_chip, precision)
        return step.t_math_s <= step.t_memory_s

    if not fits(1):
        return 0
    low, high = 1, 2
    while fits(high):
        low, high = high, high * 2
        if high > MAX_CHUNK:
            return low
    while high - low > 1:  # fits(low), not fits(high)
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low


#: Largest prefill chunk :func:`free_chunk_tokens` searches.
MAX_CHUNK = 1 << 22

#: Links a prefill node may send a prompt's KV cache over to a decode node, bytes/s *per
#: direction*, from :mod:`gpuperf.hardware`'s tables: NVLink within a node (half of NVIDIA's
#: bidirectional figure), PCIe Gen5 x16, and the node-to-node networks of seed 001.
KV_LINKS: dict[str, float] = {
    "NVLink 4 (H100)": NVLINK_BIDIRECTIONAL["NVLink 4"] / 2,
    "NVLink 5 (B200, GB200)": NVLINK_BIDIRECTIONAL["NVLink 5"] / 2,
    "PCIe Gen5 x16": pcie_bandwidth(5, 16),
    **NETWORK_BANDWIDTH,
}


@dataclass(frozen=True)
class KVTransfer:
    """A prompt's KV cache sent from a prefill GPU to a decode GPU (disaggregated serving)."""

    prompt_len: int
    bytes_per_token: float
    link: str
    link_bytes_per_s: float

    def __post_init__(self) -> None:
        positive_int("prompt_len", self.prompt_len)
        positive_float("bytes_per_token", self.bytes_per_token)
        name_string("link", self.link)
        positive_float("link_bytes_per_s", self.link_bytes_per_s)

    @property
    def bytes(self) -> float:
        """layers · 2 · kv_heads · head_dim · bytes · prompt length."""
        return self.bytes_per_token * self.prompt_len

    @property
    def time_s(self) -> float:
        """Bytes over the link's bandwidth per direction (no latency, no overlap)."""
        return self.bytes / self.link_bytes_per_s


def kv_transfer(
    config: DecoderConfig, prompt_len: int, link: str, precision: str = "bf16"
) -> KVTransfer:
    """The KV cache one request's prompt leaves behind, and its time over ``link`` (a key of
    :data:`KV_LINKS`).

    Prefill/decode disaggregation (DistServe, Splitwise) runs the compute-bound prefill and the
    memory-bound decode on different GPUs, so neither phase stalls the other, and pays with this
    transfer once per request.
    """
    if not isinstance(config, DecoderConfig):
        raise TypeError(f"config={show(config)} must be a gpuperf.inference.DecoderConfig")
    link = choice("link", link, tuple(KV_LINKS))
    return KVTransfer(
        prompt_len=positive_int("prompt_len", prompt_len),
        bytes_per_token=config.kv_bytes_per_token(check_precision(precision)),
        link=link,
        link_bytes_per_s=KV_LINKS[link],
    )


# ------------------------------------------------------------------------------ prefix caching


@dataclass(frozen=True)
class PrefixCache:
    """A prompt's prefill with and without its first ``prefix_len`` tokens found in the cache
    (vLLM's automatic prefix caching, SGLang's RadixAttention)."""

    prefix_len: int
    full: InferenceStep
    cached: InferenceStep

    def __post_init__(self) -> None:
        positive_int("prefix_len", self.prefix_len)
        for name in ("full", "cached"):
            if not isinstance(getattr(self, name), InferenceStep):
                raise TypeError(f"{name}={show(getattr(self, name))} must be an InferenceStep")

    @property
    def prefix_kv_bytes(self) -> float:
        """The cache the prefix holds in HBM: bytes not recomputed and not written again."""
        return self.prefix_len * self.full.kv_write_bytes / self.full.tokens

    @property
    def flops_saved(self) -> float:
        """2 · layer weights · prefix + the prefix's own causal attention: FLOPs skipped."""
        return self.full.flops - self.cached.flops

    @property
    def time_saved_s(self) -> float:
        return self.full.time_s - self.cached.time_s

    @property
    def speedup(self) -> float:
        """Prefill (time to first token) without the cache over with it, roofline bounds."""
        return self.full.time_s / self.cached.time_s


def prefix_cache(
    config: DecoderConfig,
    prompt_len: int,
    prefix_len: int,
    chip_name: str | Chip,
    precision: str = "bf16",
) -> PrefixCache:
    """Prefill of a ``prompt_len``-token prompt whose first ``prefix_len`` tokens (a shared
    system prompt, an earlier turn) are already cached: only the rest is computed, attending to
    the cached prefix. At least one token is always computed (its logits start decoding)."""
    the_chip = chip(chip_name)
    prompt_len = positive_int("prompt_len", prompt_len)
    if prompt_len < 2:
        raise ValueError(f"prompt_len={prompt_len} must be ≥ 2: a prefix and one token to compute")
    prefix_len = positive_int("prefix_len", prefix_len, 1, prompt_len - 1)
    full = prefill_step(config, 1, prompt_len, the_chip, precision)
    cached = prefill_step(
        config, 1, prompt_len - prefix_len, the_chip, precision, context_len=prefix_len
    )
    return PrefixCache(prefix_len, full, cached)


# --------------------------------------------------------------------- mixture-of-experts decode


def expected_distinct_experts(n_experts: int, top_k: int, tokens: int) -> float:
    """Expected distinct routed experts a step touches: E · (1 − (1 − k/E)^tokens).

    Assumes uniform, independent routing: each token picks ``top_k`` of ``n_experts`` at random,
    so it misses a given expert with probability 1 − k/E, and all tokens miss it with
    (1 − k/E)^tokens. Real routers are trained to balance load but are not uniform per step;
    skewed routing touches fewer distinct experts.
    """
    e = positive_int("n_experts", n_experts)
    k = positive_int("top_k", top_k, 1, e)
    b = positive_int("tokens", tokens)
    return e * (1.0 - (1.0 - k / e) ** b)


@dataclass(frozen=True)
class MoEConfig:
    """The weights of a mixture-of-experts decoder that set what a decode step reads.

    Every layer has attention (``attention_params_per_layer``); the first ``n_dense_layers``
    have a dense gated MLP of width ``dense_ffn``, the others a router, ``n_shared_experts``
    always-on experts and ``n_routed_experts`` routed ones, ``top_k`` per token, each a gated
    MLP of width ``expert_ffn``. Embedding and LM head are vocab × d_model each (untied).
    """

    name: str
    n_layers: int
    n_dense_layers: int
    d_model: int
    attention_params_per_layer: int
    dense_ffn: int
    n_routed_experts: int
    n_shared_experts: int
    top_k: int
    expert_ffn: int
    vocab_size: int
    source: str

    def __post_init__(self) -> None:
        name_string("name", self.name)
        name_string("source", self.source)
        for label in ("n_layers", "d_model", "attention_params_per_layer", "dense_ffn",
                      "n_routed_experts", "expert_ffn", "vocab_size"):  # fmt: skip
            positive_int(label, getattr(self, label))
        positive_int("n_dense_layers", self.n_dense_layers, 0, self.n_layers - 1)
        positive_int("n_shared_experts", self.n_shared_experts, 0)
        positive_int("top_k", self.top_k, 1, self.n_routed_experts)

    @property
    def moe_layers(self) -> int:
        return self.n_layers - self.n_dense_layers

    @property
    def expert_params(self) -> float:
        """One expert: a gated MLP, 3 · d_model · expert_ffn."""
        return 3.0 * self.d_model * self.expert_ffn

    @property
    def routed_params(self) -> float:
        """Every routed expert of every MoE layer."""
        return self.moe_layers * self.n_routed_experts * self.expert_params

    @property
    def always_read_params(self) -> float:
        """Weights every decode step reads whatever the routing: attention, dense MLPs, shared
        experts, routers and the LM head (the embedding is only looked up)."""
        return (
            self.n_layers * float(self.attention_params_per_layer)
            + self.n_dense_layers * 3.0 * self.d_model * self.dense_ffn
            + self.moe_layers * (self.n_shared_experts * self.expert_params
                                 + self.d_model * self.n_routed_experts)
            + float(self.vocab_size) * self.d_model
        )  # fmt: skip

    @property
    def total_params(self) -> float:
        """Everything held in memory: the always-read weights, all experts, the embedding."""
        return self.always_read_params + self.routed_params + float(self.vocab_size) * self.d_model

    @property
    def active_params(self) -> float:
        """Weights one token uses: the always-read ones and its ``top_k`` experts per layer."""
        return self.always_read_params + self.moe_layers * self.top_k * self.expert_params


def _mla_params(
    d: int, heads: int, q_rank: int, kv_rank: int, nope: int, rope: int, v: int
) -> int:
    """MLA's projections per layer: query down and up, joint KV down (with the RoPE key), KV up,
    output (DeepSeek-V2/V3; norms left out)."""
    return (
        d * q_rank + q_rank * heads * (nope + rope) + d * (kv_rank + rope)
        + kv_rank * heads * (nope + v) + heads * v * d
    )  # fmt: skip


#: DeepSeek-V3 (DSV3-REPO ``inference/configs/config_671B.json``; the report, DSV3): 61 layers,
#: the first 3 dense (width 18432), then 256 routed experts (8 per token) and 1 shared, each of
#: width 2048; d_model 7168; MLA with 128 heads, q_lora_rank 1536, kv_lora_rank 512, head dims
#: 128 (no RoPE) + 64 (RoPE), value 128; vocabulary 129,280. These shapes give 671 B weights and
#: 36.6 B active per token, the report's 671 B and 37 B.
DEEPSEEK_V3_MOE = MoEConfig(
    name="DeepSeek-V3", n_layers=61, n_dense_layers=3, d_model=7168,
    attention_params_per_layer=_mla_params(7168, 128, 1536, 512, 128, 64, 128),
    dense_ffn=18432, n_routed_experts=256, n_shared_experts=1, top_k=8, expert_ffn=2048,
    vocab_size=129_280, source="DSV3-REPO",
)  # fmt: skip


@dataclass(frozen=True)
class MoEDecode:
    """The weights one decode step of an MoE model reads at ``tokens`` tokens per step."""

    config: MoEConfig
    tokens: int
    bytes_per_param: float

    def __post_init__(self) -> None:
        if not isinstance(self.config, MoEConfig):
            raise TypeError(f"config={show(self.config)} must be a gpuperf.serving.MoEConfig")
        positive_int("tokens", self.tokens)
        positive_float("bytes_per_param", self.bytes_per_param, maximum=8.0)

    @property
    def distinct_experts(self) -> float:
        """Expected routed experts touched per MoE layer (:func:`expected_distinct_experts`)."""
        c = self.config
        return expected_distinct_experts(c.n_routed_experts, c.top_k, self.tokens)

    @property
    def expert_bytes(self) -> float:
        c = self.config
        return c.moe_layers * self.distinct_experts * c.expert_params * self.bytes_per_param

    @property
    def always_read_bytes(self) -> float:
        return self.config.always_read_params * self.bytes_per_param

    @property
    def weight_bytes(self) -> float:
        """Weight bytes per step: the always-read weights and every distinct expert once."""
        return self.always_read_bytes + self.expert_bytes

    @property
    def bytes_per_token(self) -> float:
        return self.weight_bytes / self.tokens

    @property
    def tokens_per_expert(self) -> float:
        """Tokens each touched expert multiplies: tokens · k / distinct experts (its batch)."""
        return self.tokens * self.config.top_k / self.distinct_experts


def moe_decode(config: MoEConfig, tokens: int, bytes_per_param: float = 1.0) -> MoEDecode:
    """Weights one MoE decode step reads when it processes ``tokens`` tokens (the batch, or
    batch × verified tokens), each routed to ``top_k`` experts, uniform routing assumed.

    A dense model's step reads all its weights at any batch; an MoE step reads its always-on
    weights plus the experts its tokens touch, from ``top_k`` per layer at one token to all of
    them once E · (1 − (1 − k/E)^tokens) saturates. ``bytes_per_param`` defaults to fp8, the
    precision DeepSeek-V3 is served in.
    """
    if not isinstance(config, MoEConfig):
        raise TypeError(f"config={show(config)} must be a gpuperf.serving.MoEConfig")
    return MoEDecode(
        config,
        positive_int("tokens", tokens),
        positive_float("bytes_per_param", bytes_per_param, maximum=8.0),
    )


__all__ = [
    "DEEPSEEK_V3_MOE",
    "DRAFT_FUSION_PARAMS_PER_D2",
    "GRAPH_GAP_S_PER_KERNEL",
    "ILLUSTRATIVE_DRAFT",
    "KERNELS_AFTER_LAYERS",
    "KERNELS_PER_LAYER",
    "KV_LINKS",
    "MAX_CHUNK",
    "MAX_DRAFT",
    "MAX_KERNELS",
    "MAX_SEQUENCES",
    "EqualMemory",
    "KVTransfer",
    "LaunchBoundStep",
    "MixedStep",
    "MoEConfig",
    "MoEDecode",
    "PagedKV",
    "PrefixCache",
    "SpeculativeDecoding",
    "chunked_prefill",
    "decode_kernels",
    "draft_head",
    "expected_distinct_experts",
    "expected_tokens_per_round",
    "free_chunk_tokens",
    "kv_transfer",
    "launch_bound_step",
    "moe_decode",
    "paged_kv",
    "prefix_cache",
    "self_speculative_decoding",
    "speculative_at_equal_memory",
    "speculative_decoding",
    "speculative_max_batch",
    "static_batch_occupancy",
]
