"""Inference cost model: the KV cache, and why decoding one token at a time is memory-bound.

A decoder generates text one token per step. Each step (*decode*) runs every weight matrix on
one new token per sequence and attends from that token to every earlier one, whose keys and
values were kept from earlier steps: the **KV cache**. Its size is

    KV bytes = 2 · layers · kv_heads · head_dim · bytes/element · tokens · batch

(the 2 is K and V). Per generated token a decode step reads, from HBM, every weight once (shared
by the whole batch) and the whole KV cache of every sequence (not shared). Counting FLOPs the
usual way (2 per multiply-add) gives two intensities that behave differently:

* **weight matmuls**: 2·params·batch FLOPs over params·bytes: about ``2·batch / bytes`` FLOP/B.
  They become compute-bound only when the batch reaches the chip's ridge point
  (:func:`gpuperf.roofline.critical_batch_size`; "How to Scale Your Model", ch. 1, seed 004);
* **decode attention**: 4·context·head_dim FLOPs per query head over the cache it reads,
  2·context·head_dim·bytes per KV head: about ``2·group / bytes`` FLOP/B, where
  ``group = heads / kv_heads``. Batch does not appear: every sequence reads its own cache.
  Only sharing a KV head among more query heads raises it — multi-query attention (MQA, one KV
  head, Shazeer 2019) and grouped-query attention (GQA, a few, Ainslie et al. 2023) cut the
  cache and the bytes per token by the group size.

*Prefill* processes a whole prompt at once: the weights are read once for ``batch · prompt``
tokens, so prefill sits far to the right of the ridge, while decode sits far to its left.

**Split-KV ("Flash-Decoding", Dao et al. 2023).** A decode-attention kernel that gives each
(sequence, KV head) one CTA launches ``batch · kv_heads`` CTAs: at batch 1 with 8 KV heads,
8 CTAs on a GPU of over a hundred SMs, so most SMs idle while the few busy ones stream the
cache. Splitting the context into chunks gives each CTA one chunk; it returns a partial result
(running max m, sum ℓ, normalised output o) and a second, small kernel combines the splits
with the logsumexp rescaling of the online softmax. :func:`split_kv` counts the CTAs, waves
(:func:`gpuperf.tiling.waves`) and the extra bytes of the combine step;
:mod:`gpuperf.kernels.decode_attention` implements it.

**The LM head.** The weights a step reads are the layers' *and* the output projection to the
vocabulary (the LM head, vocab × d_model), which every decode step reads in full; the
embedding table is only looked up (one row per token), so it costs memory, not traffic.
:attr:`DecoderConfig.step_weight_params` counts the first, :attr:`DecoderConfig.total_params`
everything held in HBM.

**Fewer bytes per weight and per cached token.** ``weight_bytes_per_param`` stores the weights
in fewer bytes than the compute precision (weight-only quantization, dequantized on the fly):
:func:`quantized_bytes_per_weight` counts the bits and the per-group scales. ``kv_precision``
stores the cache in fewer bytes. Both shrink the bytes of a memory-bound step and move its
intensity right; the FLOPs do not change.

**Multi-head latent attention** (MLA, DeepSeek-V2/V3) caches one compressed latent vector of
``kv_lora_rank`` plus a decoupled RoPE key of ``rope_head_dim`` per token and layer, shared by
all heads (:class:`MLAConfig`, :func:`mla_decode_attention_cost`): the cache shrinks to
(d_c + d_R) elements per token and layer, and, with the up-projections absorbed into the query
and the output, decode attention does 2·heads·(2·d_c + d_R) FLOPs per cached token against
(d_c + d_R)·bytes — an intensity near the ridge point, where GQA's stays near 2·group/bytes.

Limits: equal context lengths in a batch; activations, norms and the embedding lookup are left
out of the traffic (small next to the weights and the cache for the sizes shown). Times are
roofline lower bounds, max(T_math, T_memory), not measurements. Model shapes here are the
caller's; the chapter's :data:`ILLUSTRATIVE` model is a made-up shape of a common size, not a
published one. Paging, continuous batching, chunked prefill, prefix caching, speculative
decoding, mixtures of experts and launch overhead are in :mod:`gpuperf.serving`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validate import choice, flag, name_string, positive_float, positive_int, show
from .cost import OpCost
from .hardware import Chip, chip
from .units import bytes_per_element, check_precision

#: Phases of generation: ``"verify"`` is a speculative-decoding step that runs several drafted
#: tokens per sequence through the model at once (:mod:`gpuperf.serving`).
PHASES = ("prefill", "decode", "verify")
#: Default keys/values per CTA step of the split-KV kernel (its BLOCK_N).
DEFAULT_BLOCK_N = 64
#: The combine step's partial results are fp32 (4 bytes): output, running max and running sum.
PARTIAL_BYTES = 4


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def attention_kind(n_heads: int, n_kv_heads: int) -> str:
    """``"MHA"`` (one KV head per query head), ``"MQA"`` (one KV head) or ``"GQA"``."""
    n_heads, n_kv_heads = _heads(n_heads, n_kv_heads)
    if n_kv_heads == n_heads:
        return "MHA"
    return "MQA" if n_kv_heads == 1 else "GQA"


def _heads(n_heads: object, n_kv_heads: object) -> tuple[int, int]:
    n_heads = positive_int("n_heads", n_heads)
    n_kv_heads = positive_int("n_kv_heads", n_kv_heads)
    if n_heads % n_kv_heads:
        raise ValueError(
            f"n_heads={n_heads} must be a multiple of n_kv_heads={n_kv_heads}: each KV head "
            "serves a whole group of query heads (valid n_kv_heads: divisors of n_heads)"
        )
    return n_heads, n_kv_heads


# --------------------------------------------------------------------------------- the KV cache


def kv_bytes_per_token(
    n_layers: int, n_kv_heads: int, head_dim: int, precision: str = "bf16"
) -> float:
    """Bytes of K and V one token adds to the cache: 2 · layers · kv_heads · head_dim · bytes."""
    n_layers = positive_int("n_layers", n_layers)
    n_kv_heads = positive_int("n_kv_heads", n_kv_heads)
    head_dim = positive_int("head_dim", head_dim)
    return 2.0 * n_layers * n_kv_heads * head_dim * bytes_per_element(precision)


def kv_cache_bytes(
    n_layers: int,
    n_kv_heads: int,
    head_dim: int,
    tokens: int,
    batch: int = 1,
    precision: str = "bf16",
) -> float:
    """Size of the KV cache: 2 · layers · kv_heads · head_dim · bytes · tokens · batch."""
    per_token = kv_bytes_per_token(n_layers, n_kv_heads, head_dim, precision)
    return per_token * positive_int("tokens", tokens) * positive_int("batch", batch)


@dataclass(frozen=True)
class DecoderConfig:
    """The shapes of a decoder-only transformer that set its inference cost.

    ``weight_params`` counts the attention projections (Q and O: d_model × heads·head_dim;
    K and V: d_model × kv_heads·head_dim) and the MLP (three d_model × d_ff matrices when
    ``gated_mlp``, two otherwise) of every layer; the embedding table and the LM head
    (``vocab_size`` × d_model each, one matrix if ``tied_embeddings``) are counted separately,
    norms and biases not at all. ``vocab_size=0`` leaves the vocabulary out entirely.
    """

    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int
    gated_mlp: bool = True
    name: str = "decoder"
    vocab_size: int = 0
    tied_embeddings: bool = False

    def __post_init__(self) -> None:
        for label in ("n_layers", "d_model", "head_dim", "d_ff"):
            object.__setattr__(self, label, positive_int(label, getattr(self, label)))
        object.__setattr__(
            self, "vocab_size", positive_int("vocab_size", self.vocab_size, minimum=0)
        )
        object.__setattr__(self, "tied_embeddings", flag("tied_embeddings", self.tied_embeddings))
        n_heads, n_kv_heads = _heads(self.n_heads, self.n_kv_heads)
        object.__setattr__(self, "n_heads", n_heads)
        object.__setattr__(self, "n_kv_heads", n_kv_heads)
        object.__setattr__(self, "gated_mlp", flag("gated_mlp", self.gated_mlp))
        name_string("name", self.name)

    @property
    def group_size(self) -> int:
        """Query heads per KV head (1 for MHA, ``n_heads`` for MQA)."""
        return self.n_heads // self.n_kv_heads

    @property
    def attention_kind(self) -> str:
        return attention_kind(self.n_heads, self.n_kv_heads)

    @property
    def weight_params(self) -> float:
        """Weights of the transformer layers only (no embedding, LM head, norms or biases)."""
        attn = self.d_model * self.head_dim * (2 * self.n_heads + 2 * self.n_kv_heads)
        mlp = (3 if self.gated_mlp else 2) * self.d_model * self.d_ff
        return float(self.n_layers) * (attn + mlp)

    @property
    def lm_head_params(self) -> float:
        """The output projection to the vocabulary: vocab_size × d_model (read every step)."""
        return float(self.vocab_size) * self.d_model

    @property
    def embedding_params(self) -> float:
        """The input embedding table: vocab_size × d_model (looked up, one row per token)."""
        return float(self.vocab_size) * self.d_model

    @property
    def step_weight_params(self) -> float:
        """Weights a decode step reads in full: the layers and the LM head."""
        return self.weight_params + self.lm_head_params

    @property
    def total_params(self) -> float:
        """Every weight held in memory: layers, embedding, and the LM head unless tied."""
        head = 0.0 if self.tied_embeddings else self.lm_head_params
        return self.weight_params + self.embedding_params + head

    def weight_bytes(self, precision: str = "bf16") -> float:
        """Bytes of the layers' weights (see :meth:`step_weight_bytes`, :meth:`total_bytes`)."""
        return self.weight_params * bytes_per_element(precision)

    def step_weight_bytes(self, precision: str = "bf16") -> float:
        """Bytes of weights one decode step reads: layers and LM head."""
        return self.step_weight_params * bytes_per_element(precision)

    def total_bytes(self, precision: str = "bf16") -> float:
        """Bytes of every weight held in HBM (:attr:`total_params`)."""
        return self.total_params * bytes_per_element(precision)

    def kv_bytes_per_token(self, precision: str = "bf16") -> float:
        return kv_bytes_per_token(self.n_layers, self.n_kv_heads, self.head_dim, precision)

    def with_kv_heads(self, n_kv_heads: int) -> DecoderConfig:
        """The same model with another number of KV heads (MHA, GQA or MQA)."""
        n_heads, n_kv_heads = _heads(self.n_heads, n_kv_heads)
        return DecoderConfig(
            self.n_layers, self.d_model, n_heads, n_kv_heads, self.head_dim, self.d_ff,
            self.gated_mlp, self.name, self.vocab_size, self.tied_embeddings,
        )  # fmt: skip


#: An illustrative model, not any published model's configuration: 32 layers, d_model 4096,
#: 32 query heads of 128, 8 KV heads (GQA, group 4), a gated MLP of width 12288 — about six
#: billion layer weights — and a vocabulary of 128,000 tokens with an untied embedding and LM
#: head. Every number the chapter derives from it is a consequence of these chosen shapes.
ILLUSTRATIVE = DecoderConfig(
    n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, head_dim=128, d_ff=12288,
    gated_mlp=True, name="illustrative decoder", vocab_size=128_000,
)  # fmt: skip


# ------------------------------------------------------------------------ attention of one step


def decode_attention_cost(
    batch: int,
    n_heads: int,
    n_kv_heads: int,
    context_len: int,
    head_dim: int,
    precision: str = "bf16",
) -> OpCost:
    """One layer's attention for one new token per sequence, against ``context_len`` cached ones.

    FLOPs: q·Kᵀ and p·V, 2·context·head_dim each, per query head: 4·batch·heads·context·d.
    Read: the cache (2·batch·kv_heads·context·d elements) and the queries (batch·heads·d);
    written: the outputs (batch·heads·d). Intensity ≈ 2·(heads/kv_heads)/bytes: independent of
    the batch and of the context.
    """
    batch = positive_int("batch", batch)
    n_heads, n_kv_heads = _heads(n_heads, n_kv_heads)
    context_len = positive_int("context_len", context_len)
    head_dim = positive_int("head_dim", head_dim)
    size = bytes_per_element(precision)
    flops = 4.0 * batch * n_heads * context_len * head_dim
    cache = 2.0 * batch * n_kv_heads * context_len * head_dim * size
    q_or_o = float(batch) * n_heads * head_dim * size
    return OpCost(flops, cache + q_or_o, q_or_o, "decode attention")


# ------------------------------------------------------------------- a whole step on one chip


@dataclass(frozen=True)
class InferenceStep:
    """FLOPs and HBM bytes of one forward step of a decoder on one chip, and its roofline time.

    ``new_tokens`` tokens per sequence are processed (1 for decode, the prompt for prefill) on
    top of ``context_len`` cached tokens. Weights are read once per step; the cache is read
    (decode) and the new tokens' K and V are written.
    """

    phase: str
    batch: int
    new_tokens: int
    context_len: int
    chip_name: str
    precision: str
    weight_bytes: float
    kv_read_bytes: float
    kv_write_bytes: float
    weight_flops: float
    attention_flops: float
    peak_flops_per_s: float
    bandwidth: float

    def __post_init__(self) -> None:
        choice("phase", self.phase, PHASES)
        for label in ("batch", "new_tokens"):
            object.__setattr__(self, label, positive_int(label, getattr(self, label)))
        object.__setattr__(
            self, "context_len", positive_int("context_len", self.context_len, minimum=0)
        )
        name_string("chip_name", self.chip_name)
        check_precision(self.precision)
        for label in ("weight_bytes", "kv_write_bytes", "peak_flops_per_s", "bandwidth"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label)))
        for label in ("kv_read_bytes", "weight_flops", "attention_flops"):
            value = positive_float(label, getattr(self, label), allow_zero=True)
            object.__setattr__(self, label, value)

    @property
    def tokens(self) -> int:
        """Tokens processed this step: batch · new_tokens."""
        return self.batch * self.new_tokens

    @property
    def flops(self) -> float:
        return self.weight_flops + self.attention_flops

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.kv_read_bytes + self.kv_write_bytes

    @property
    def intensity(self) -> float:
        """FLOPs per HBM byte of the whole step."""
        return self.flops / self.bytes

    @property
    def weight_intensity(self) -> float:
        """FLOPs per weight byte: the intensity with no KV cache (≈ 2·tokens / bytes)."""
        return self.weight_flops / self.weight_bytes

    @property
    def ridge_point(self) -> float:
        return self.peak_flops_per_s / self.bandwidth

    @property
    def t_math_s(self) -> float:
        return self.flops / self.peak_flops_per_s

    @property
    def t_memory_s(self) -> float:
        return self.bytes / self.bandwidth

    @property
    def time_s(self) -> float:
        """Roofline lower bound: max(T_math, T_memory)."""
        return max(self.t_math_s, self.t_memory_s)

    @property
    def bound(self) -> str:
        return "compute" if self.t_math_s >= self.t_memory_s else "memory"

    @property
    def bytes_per_token(self) -> float:
        """HBM bytes read and written per token processed: the step's bytes / tokens."""
        return self.bytes / self.tokens

    @property
    def tokens_per_s(self) -> float:
        """Upper bound on tokens processed per second (for decode: generated tokens)."""
        return self.tokens / self.time_s

    @property
    def kv_fraction(self) -> float:
        """Share of the step's bytes that is KV cache (read and written)."""
        return (self.kv_read_bytes + self.kv_write_bytes) / self.bytes


def _config(config: object) -> DecoderConfig:
    if not isinstance(config, DecoderConfig):
        raise TypeError(f"config={show(config)} must be a gpuperf.inference.DecoderConfig")
    return config


def _weight_size(precision: str, weight_bytes_per_param: object) -> float:
    """Bytes per stored weight: the compute precision's, or a quantized format's."""
    if weight_bytes_per_param is None:
        return bytes_per_element(precision)
    return positive_float("weight_bytes_per_param", weight_bytes_per_param, maximum=8.0)


def _step(
    phase: str,
    config: DecoderConfig,
    batch: int,
    new_tokens: int,
    context_len: int,
    the_chip: Chip,
    precision: str,
    kv_precision: str | None,
    weight_bytes_per_param: float | None = None,
) -> InferenceStep:
    kv_precision = precision if kv_precision is None else check_precision(kv_precision)
    per_token = config.kv_bytes_per_token(kv_precision)
    weight_size = _weight_size(precision, weight_bytes_per_param)
    tokens = batch * new_tokens
    # Logits: prefill needs them for each sequence's last token only; decode and verify steps
    # for every token they process.
    logit_tokens = batch if phase == "prefill" else tokens
    # Causal attention of each new token to the context before it and to the new tokens up to
    # itself: Σ over new tokens of (context + i), i = 1..new_tokens.
    attended = new_tokens * context_len + new_tokens * (new_tokens + 1) / 2
    attention_flops = 4.0 * batch * config.n_layers * config.n_heads * config.head_dim * attended
    return InferenceStep(
        phase=phase,
        batch=batch,
        new_tokens=new_tokens,
        context_len=context_len,
        chip_name=the_chip.name,
        precision=precision,
        weight_bytes=config.step_weight_params * weight_size,
        kv_read_bytes=per_token * batch * context_len,
        kv_write_bytes=per_token * tokens,
        weight_flops=2.0 * (config.weight_params * tokens + config.lm_head_params * logit_tokens),
        attention_flops=attention_flops,
        peak_flops_per_s=the_chip.peak_flops(precision),
        bandwidth=the_chip.hbm_bandwidth,
    )


def decode_step(
    config: DecoderConfig,
    batch: int,
    context_len: int,
    chip_name: str | Chip,
    precision: str = "bf16",
    *,
    kv_precision: str | None = None,
    weight_bytes_per_param: float | None = None,
) -> InferenceStep:
    """One decode step: one new token for each of ``batch`` sequences of ``context_len`` tokens.

    Reads all weights once (the layers and the LM head) and every sequence's cache;
    ``kv_precision`` (default: ``precision``) is the cache's storage precision and
    ``weight_bytes_per_param`` (default: ``precision``'s size) the weights' stored size
    (:func:`quantized_bytes_per_weight`); the math runs in ``precision``.
    """
    config = _config(config)
    the_chip = chip(chip_name)
    precision = check_precision(precision)
    batch = positive_int("batch", batch)
    context_len = positive_int("context_len", context_len)
    return _step(
        "decode", config, batch, 1, context_len, the_chip, precision, kv_precision,
        weight_bytes_per_param,
    )  # fmt: skip


def verify_step(
    config: DecoderConfig,
    batch: int,
    new_tokens: int,
    context_len: int,
    chip_name: str | Chip,
    precision: str = "bf16",
    *,
    kv_precision: str | None = None,
    weight_bytes_per_param: float | None = None,
) -> InferenceStep:
    """A speculative-decoding verification: ``new_tokens`` drafted tokens per sequence checked
    in one forward pass on top of ``context_len`` cached ones (weights read once for all)."""
    config = _config(config)
    the_chip = chip(chip_name)
    precision = check_precision(precision)
    batch = positive_int("batch", batch)
    new_tokens = positive_int("new_tokens", new_tokens, 1, MAX_VERIFY_TOKENS)
    context_len = positive_int("context_len", context_len)
    return _step(
        "verify", config, batch, new_tokens, context_len, the_chip, precision, kv_precision,
        weight_bytes_per_param,
    )  # fmt: skip


#: Most drafted tokens one verification step accepts.
MAX_VERIFY_TOKENS = 64


def prefill_step(
    config: DecoderConfig,
    batch: int,
    prompt_len: int,
    chip_name: str | Chip,
    precision: str = "bf16",
    *,
    kv_precision: str | None = None,
    context_len: int = 0,
) -> InferenceStep:
    """Prefill: a whole prompt of ``prompt_len`` tokens per sequence in one step, causal.

    Weights are read once for batch · prompt_len tokens; the prompt's K and V are written to the
    cache; scores stay on chip (a FlashAttention kernel), so attention adds FLOPs, not bytes.
    ``context_len`` tokens of the same sequence already in the cache (an earlier chunk of the
    prompt, or a cached prefix) are read and attended to, not recomputed.
    """
    config = _config(config)
    the_chip = chip(chip_name)
    precision = check_precision(precision)
    batch = positive_int("batch", batch)
    prompt_len = positive_int("prompt_len", prompt_len)
    context_len = positive_int("context_len", context_len, minimum=0)
    return _step(
        "prefill", config, batch, prompt_len, context_len, the_chip, precision, kv_precision
    )


def max_batch(
    config: DecoderConfig,
    context_len: int,
    chip_name: str | Chip,
    precision: str = "bf16",
    *,
    kv_precision: str | None = None,
    weight_bytes_per_param: float | None = None,
) -> int:
    """Largest batch whose weights and KV caches (``context_len`` tokens each) fit in HBM.

    The weights are all of them (:attr:`DecoderConfig.total_params`: layers, embedding, LM
    head). 0 when the weights alone do not fit. Ignores activations and the framework's own
    memory.
    """
    config = _config(config)
    the_chip = chip(chip_name)
    precision = check_precision(precision)
    kv_precision = precision if kv_precision is None else check_precision(kv_precision)
    context_len = positive_int("context_len", context_len)
    weight_size = _weight_size(precision, weight_bytes_per_param)
    free = the_chip.hbm_bytes - config.total_params * weight_size
    if free <= 0:
        return 0
    return int(free // (config.kv_bytes_per_token(kv_precision) * context_len))


# ---------------------------------------------------------------------- quantized weights


def quantized_bytes_per_weight(
    bits: int, group_size: int | None = None, scale_bytes: float = 0.0
) -> float:
    """Stored bytes per weight of a quantized format: bits/8 plus the per-group scales.

    ``group_size`` weights share ``scale_bytes`` of scale (and zero point). int8 per channel:
    ≈ 1 B; int4 with a bf16 scale and a bf16 zero point per 32 weights (gpt-fast's G = 32):
    0.5 + 4/32 = 0.625 B; MXFP4 (an 8-bit scale per 32): 0.53125 B; NVFP4 (an 8-bit scale per
    16): 0.5625 B.
    """
    bits = positive_int("bits", bits, 1, 64)
    size = bits / 8
    if group_size is None:
        positive_float("scale_bytes", scale_bytes, allow_zero=True, maximum=0.0)
        return size
    group_size = positive_int("group_size", group_size, 1, 1 << 20)
    return (
        size
        + positive_float("scale_bytes", scale_bytes, allow_zero=True, maximum=16.0) / group_size
    )


def weight_bound_batch(
    chip_name: str | Chip,
    precision: str = "bf16",
    weight_bytes_per_param: float | None = None,
) -> float:
    """Tokens per step above which the weight matmuls turn compute-bound: ridge · w / 2.

    The weights' intensity is 2 · tokens / w FLOP/byte for ``w`` stored bytes per weight
    (default: ``precision``'s size); the ridge is the chip's peak in ``precision`` over its HBM
    bandwidth. Weight-only quantization shrinks w with the bf16 roof, so the batch falls; W8A8
    (fp8) and W4A4 (NVFP4, :func:`quantized_bytes_per_weight` (4, 16, 1)) raise the roof with it,
    so the batch stays near bf16's.
    """
    the_chip = chip(chip_name)
    precision = check_precision(precision)
    return the_chip.ridge_point(precision) * _weight_size(precision, weight_bytes_per_param) / 2


# -------------------------------------------------------------- multi-head latent attention


@dataclass(frozen=True)
class MLAConfig:
    """The attention shapes of a model with multi-head latent attention (DeepSeek-V2/V3).

    Per token and layer the cache holds one compressed latent of ``kv_lora_rank`` (d_c) and one
    decoupled RoPE key of ``rope_head_dim`` (d_R), shared by all ``n_heads`` heads of
    ``head_dim``. ``source`` names where the shapes come from.
    """

    name: str
    n_layers: int
    n_heads: int
    head_dim: int
    kv_lora_rank: int
    rope_head_dim: int
    source: str

    def __post_init__(self) -> None:
        name_string("name", self.name)
        for label in ("n_layers", "n_heads", "head_dim", "kv_lora_rank", "rope_head_dim"):
            positive_int(label, getattr(self, label))
        name_string("source", self.source)

    def kv_bytes_per_token(self, precision: str = "bf16") -> float:
        """(d_c + d_R) · layers · bytes: the latent and the RoPE key of every layer."""
        return (
            float(self.kv_lora_rank + self.rope_head_dim) * self.n_layers
            * bytes_per_element(precision)
        )  # fmt: skip

    def mha_kv_bytes_per_token(self, precision: str = "bf16") -> float:
        """What multi-head attention with the same heads would cache: 2 · heads · d · layers."""
        return kv_bytes_per_token(self.n_layers, self.n_heads, self.head_dim, precision)


#: DeepSeek-V3 (arXiv:2412.19437, §2.1 and §4.2; config.json): 61 layers, 128 heads of 128,
#: d_c = 512, d_R = 64.
DEEPSEEK_V3 = MLAConfig("DeepSeek-V3", 61, 128, 128, 512, 64, "DSV3")
#: DeepSeek-V2 (arXiv:2405.04434, §2.1 and §3.1.2): 60 layers, 128 heads of 128, d_c = 512,
#: d_R = 64.
DEEPSEEK_V2 = MLAConfig("DeepSeek-V2", 60, 128, 128, 512, 64, "DSV2")


def mla_decode_attention_cost(
    batch: int,
    n_heads: int,
    context_len: int,
    kv_lora_rank: int,
    rope_head_dim: int,
    precision: str = "bf16",
) -> OpCost:
    """One layer's MLA attention for one new token per sequence, up-projections absorbed.

    Each head's query is projected into the latent space, so scores are dot products of length
    d_c + d_R with the cached latents and RoPE keys, and the output is a weighted sum of the
    latents (length d_c), projected up afterwards: 2·(d_c + d_R) + 2·d_c FLOPs per head per
    cached token. Read: the cache, (d_c + d_R) per token, shared by all heads, and the queries;
    written: the per-head latent outputs. Intensity ≈ heads·(4·d_c + 2·d_R)/((d_c + d_R)·bytes).
    """
    batch = positive_int("batch", batch)
    n_heads = positive_int("n_heads", n_heads)
    context_len = positive_int("context_len", context_len)
    d_c = positive_int("kv_lora_rank", kv_lora_rank)
    d_r = positive_int("rope_head_dim", rope_head_dim)
    size = bytes_per_element(precision)
    flops = float(batch) * n_heads * context_len * (2 * (d_c + d_r) + 2 * d_c)
    cache = float(batch) * context_len * (d_c + d_r) * size
    queries = float(batch) * n_heads * (d_c + d_r) * size
    outputs = float(batch) * n_heads * d_c * size
    return OpCost(flops, cache + queries, outputs, "MLA decode attention")


# ----------------------------------------------------------------------------------- split-KV


@dataclass(frozen=True)
class SplitKV:
    """CTAs, waves and combine traffic of a decode-attention kernel with ``num_splits`` splits.

    One CTA per (sequence, KV head, split); it handles the whole group of query heads that
    share the KV head, so the cache is read once. The group's queries, though, are read by
    every split's CTA (:attr:`query_bytes`), as :mod:`gpuperf.counting` counts in the course's
    kernel. ``num_splits = 1`` is the plain kernel. Assumes one CTA per SM at a time.
    """

    batch: int
    n_heads: int
    n_kv_heads: int
    context_len: int
    head_dim: int
    block_n: int
    num_splits: int
    chip_name: str
    sm_count: int
    precision: str = "bf16"

    def __post_init__(self) -> None:
        for label in ("batch", "context_len", "head_dim", "block_n", "num_splits", "sm_count"):
            object.__setattr__(self, label, positive_int(label, getattr(self, label)))
        n_heads, n_kv_heads = _heads(self.n_heads, self.n_kv_heads)
        object.__setattr__(self, "n_heads", n_heads)
        object.__setattr__(self, "n_kv_heads", n_kv_heads)
        name_string("chip_name", self.chip_name)
        check_precision(self.precision)
        if self.num_splits > self.kv_blocks:
            raise ValueError(
                f"num_splits={self.num_splits} must be ≤ {self.kv_blocks}, the number of "
                f"block_n={self.block_n} blocks in context_len={self.context_len} (a split "
                "holds at least one block)"
            )

    @property
    def kv_blocks(self) -> int:
        """BLOCK_N-key blocks in the context."""
        return _cdiv(self.context_len, self.block_n)

    @property
    def chunk_len(self) -> int:
        """Keys per split: the context divided by the splits, rounded up to whole blocks."""
        return _cdiv(self.kv_blocks, self.num_splits) * self.block_n

    @property
    def splits_used(self) -> int:
        """Non-empty splits (rounding chunks up to whole blocks can leave the last ones empty)."""
        return _cdiv(self.context_len, self.chunk_len)

    @property
    def ctas(self) -> int:
        return self.batch * self.n_kv_heads * self.splits_used

    @property
    def plain_ctas(self) -> int:
        """CTAs of the plain kernel: one per (sequence, KV head)."""
        return self.batch * self.n_kv_heads

    @property
    def waves(self) -> int:
        return _cdiv(self.ctas, self.sm_count)

    @property
    def sm_busy_fraction(self) -> float:
        """CTAs / (waves · SMs): the share of SM time the waves keep busy."""
        return self.ctas / (self.waves * self.sm_count)

    @property
    def plain_sm_busy_fraction(self) -> float:
        return self.plain_ctas / (_cdiv(self.plain_ctas, self.sm_count) * self.sm_count)

    @property
    def kv_bytes(self) -> float:
        """The cache the kernel reads (one layer): 2 · batch · kv_heads · context · d · bytes."""
        return (
            2.0 * self.batch * self.n_kv_heads * self.context_len * self.head_dim
            * bytes_per_element(self.precision)
        )  # fmt: skip

    @property
    def combine_bytes(self) -> float:
        """Extra traffic of the combine step: fp32 partials (o, m, ℓ) written, then read.

        0 for the plain kernel, which writes its output directly.
        """
        if self.splits_used == 1:
            return 0.0
        partials = self.batch * self.n_heads * self.splits_used * (self.head_dim + 2)
        return 2.0 * partials * PARTIAL_BYTES

    @property
    def combine_overhead(self) -> float:
        """Combine traffic as a fraction of the cache read."""
        return self.combine_bytes / self.kv_bytes

    @property
    def query_bytes(self) -> float:
        """Queries the split kernel reads: each split's CTA loads its group's queries, so all
        batch · heads · d of them once per split — (splits − 1) · batch · heads · d elements more
        than :func:`decode_attention_cost`, which reads them once (the plain kernel)."""
        return self.splits_used * self._query_bytes_once

    @property
    def _query_bytes_once(self) -> float:
        return float(self.batch) * self.n_heads * self.head_dim * bytes_per_element(self.precision)

    @property
    def split_overhead_bytes(self) -> float:
        """What splitting adds to the plain kernel's traffic: the combine's partials (written,
        then read) and the queries that every split after the first reads again. 0 for one split.
        """
        return self.combine_bytes + self.query_bytes - self._query_bytes_once

    @property
    def split_overhead(self) -> float:
        """:attr:`split_overhead_bytes` as a fraction of the cache read."""
        return self.split_overhead_bytes / self.kv_bytes


def _gpu_chip(chip_name: str | Chip) -> Chip:
    the_chip = chip(chip_name)
    if not the_chip.is_gpu or the_chip.sm_count is None:
        raise ValueError(
            f"chip_name={the_chip.name!r} has no SMs: CTAs and waves are GPU quantities "
            "(choose an NVIDIA chip)"
        )
    return the_chip


def choose_num_splits(
    batch: int,
    n_kv_heads: int,
    context_len: int,
    chip_name: str | Chip,
    block_n: int = DEFAULT_BLOCK_N,
) -> int:
    """Most splits whose CTAs still fit in one wave of the chip's SMs, each split ≥ one block.

    ⌊SMs / (batch · kv_heads)⌋, at least 1 (batch · kv_heads already fills the SMs) and never
    more than the blocks of keys. One more split would start a second, nearly empty wave.
    """
    the_chip = _gpu_chip(chip_name)
    batch = positive_int("batch", batch)
    n_kv_heads = positive_int("n_kv_heads", n_kv_heads)
    context_len = positive_int("context_len", context_len)
    block_n = positive_int("block_n", block_n)
    plain = batch * n_kv_heads
    if plain >= the_chip.sm_count:
        return 1
    blocks = _cdiv(context_len, block_n)
    wanted = min(the_chip.sm_count // plain, blocks)
    chunk_blocks = _cdiv(blocks, wanted)
    return _cdiv(blocks, chunk_blocks)  # drop splits that whole-block chunks leave empty


def split_kv(
    batch: int,
    n_heads: int,
    n_kv_heads: int,
    context_len: int,
    head_dim: int,
    chip_name: str | Chip,
    num_splits: int | None = None,
    block_n: int = DEFAULT_BLOCK_N,
    precision: str = "bf16",
) -> SplitKV:
    """CTAs, waves and combine cost of split-KV decode attention (``num_splits=None``: chosen
    by :func:`choose_num_splits`; 1: the plain one-CTA-per-KV-head kernel)."""
    the_chip = _gpu_chip(chip_name)
    if num_splits is None:
        num_splits = choose_num_splits(batch, n_kv_heads, context_len, the_chip, block_n)
    return SplitKV(
        batch=batch,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        context_len=context_len,
        head_dim=head_dim,
        block_n=block_n,
        num_splits=num_splits,
        chip_name=the_chip.name,
        sm_count=the_chip.sm_count,
        precision=precision,
    )


__all__ = [
    "DEEPSEEK_V2",
    "DEEPSEEK_V3",
    "DEFAULT_BLOCK_N",
    "ILLUSTRATIVE",
    "MAX_VERIFY_TOKENS",
    "PHASES",
    "DecoderConfig",
    "InferenceStep",
    "MLAConfig",
    "SplitKV",
    "attention_kind",
    "choose_num_splits",
    "decode_attention_cost",
    "decode_step",
    "kv_bytes_per_token",
    "kv_cache_bytes",
    "max_batch",
    "mla_decode_attention_cost",
    "prefill_step",
    "quantized_bytes_per_weight",
    "split_kv",
    "verify_step",
    "weight_bound_batch",
]
