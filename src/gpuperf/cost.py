"""Cost models: how many FLOPs an operation does and how many bytes it must move.

An :class:`OpCost` is the input to every roofline question. Its *arithmetic intensity*,
FLOPs / bytes, decides whether the operation is limited by the chip's math units or by its memory
(Williams, Waterman & Patterson 2009; "How to Scale Your Model", ch. 1). The byte counts here are
the *compulsory* HBM traffic of an ideal implementation: every input read once, every output
written once, nothing spilled. Real kernels move at least this much; where an implementation
moves more (a softmax hand-written as five ops, standard attention, tiles re-read from HBM), the
model for that implementation lives beside it (``fused=False`` below, :mod:`gpuperf.attention`,
:mod:`gpuperf.tiling`).

Counting conventions, stated once:

* a multiply-add is **2 FLOPs**; a matmul of (M, K) by (K, N) is 2·M·N·K FLOPs (the exact
  M·N·(2K − 1) differs by under 1/K);
* an elementwise op costs ``flops_per_element`` per output element (ReLU 1, GELU ~8, see docs);
* bytes are ``elements × bytes_per_element(precision)``; ``fp4`` counts half a byte.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validate import flag, positive_float, positive_int, show
from .units import bytes_per_element, check_precision


@dataclass(frozen=True)
class OpCost:
    """FLOPs and HBM bytes of one operation (or a sequence, via ``+``)."""

    flops: float
    bytes_read: float
    bytes_written: float
    name: str = ""

    def __post_init__(self) -> None:
        for label in ("flops", "bytes_read", "bytes_written"):
            object.__setattr__(
                self, label, positive_float(label, getattr(self, label), allow_zero=True)
            )
        if not isinstance(self.name, str):
            raise TypeError(f"name={show(self.name)} must be a string")
        if self.bytes_read + self.bytes_written == 0:
            raise ValueError(
                "an OpCost must move at least one byte: bytes_read + bytes_written > 0"
            )

    @property
    def bytes(self) -> float:
        """Total HBM traffic: bytes read plus bytes written."""
        return self.bytes_read + self.bytes_written

    @property
    def intensity(self) -> float:
        """Arithmetic intensity in FLOP/byte."""
        return self.flops / self.bytes

    def __add__(self, other: OpCost) -> OpCost:
        if not isinstance(other, OpCost):
            return NotImplemented
        name = " + ".join(n for n in (self.name, other.name) if n)
        return OpCost(
            self.flops + other.flops,
            self.bytes_read + other.bytes_read,
            self.bytes_written + other.bytes_written,
            name,
        )

    def times(self, count: int) -> OpCost:
        """The same operation repeated ``count`` times (e.g. per layer × layers)."""
        count = positive_int("count", count)
        return OpCost(
            self.flops * count, self.bytes_read * count, self.bytes_written * count, self.name
        )


def elementwise(
    n: int,
    precision: str = "fp32",
    *,
    flops_per_element: float = 1,
    n_inputs: int = 1,
    n_outputs: int = 1,
    name: str = "elementwise",
) -> OpCost:
    """An elementwise op over ``n`` elements: reads ``n_inputs`` tensors, writes ``n_outputs``.

    ReLU in fp32 reads 4 B, writes 4 B and does 1 FLOP per element: intensity 1/8 FLOP/B; in fp16
    it is 1/4 (seed 002, p. 16). Comparisons and transcendental functions count as 1 FLOP each
    unless ``flops_per_element`` says otherwise.
    """
    n = positive_int("n", n)
    flops_per_element = positive_float("flops_per_element", flops_per_element, allow_zero=True)
    n_inputs = positive_int("n_inputs", n_inputs, minimum=0)
    n_outputs = positive_int("n_outputs", n_outputs)
    if not isinstance(name, str):
        raise TypeError(f"name={show(name)} must be a string")
    size = bytes_per_element(precision)
    return OpCost(n * flops_per_element, n_inputs * n * size, n_outputs * n * size, name)


def dot(n: int, precision: str = "bf16") -> OpCost:
    """Dot product of two length-``n`` vectors: N multiplies and N − 1 adds over 2N + 1 elements.

    Intensity (2N − 1) / ((2N + 1)·bytes) → 1/2 FLOP/B for bf16 as N → ∞ ("How to Scale Your
    Model", ch. 1): a dot product is memory-bound on every chip.
    """
    n = positive_int("n", n)
    size = bytes_per_element(precision)
    return OpCost(2 * n - 1, 2 * n * size, size, "dot")


def _operand(value: str | None, name: str, default: str) -> str:
    """An operand's storage precision: ``default`` when ``None`` (``""`` is an error)."""
    return default if value is None else check_precision(value, name)


def matmul(
    m: int,
    n: int,
    k: int,
    precision: str = "bf16",
    *,
    a_precision: str | None = None,
    b_precision: str | None = None,
    out_precision: str | None = None,
) -> OpCost:
    """C[m, n] = A[m, k] · B[k, n]: 2·m·n·k FLOPs; reads A and B once, writes C once.

    Each operand may have its own storage precision (``precision`` is the default for all three):
    int8 weights with bf16 activations are ``matmul(B, F, D, "bf16", b_precision="int8")``. With a
    token batch B = m much smaller than D = k and F = n, the intensity 2BDF / (2BD + 2DF + 2BF)
    ≈ B for bf16, which is why the batch size decides whether a matmul is compute-bound.
    """
    m, n, k = positive_int("m", m), positive_int("n", n), positive_int("k", k)
    # ``is None``, not ``or``: an empty string is a bad precision, not "use the default".
    precision = check_precision(precision)
    a = bytes_per_element(_operand(a_precision, "a_precision", precision))
    b = bytes_per_element(_operand(b_precision, "b_precision", precision))
    c = bytes_per_element(_operand(out_precision, "out_precision", precision))
    return OpCost(2.0 * m * n * k, a * m * k + b * k * n, c * m * n, f"matmul {m}×{k}·{k}×{n}")


def batched_matmul(
    batch: int,
    m: int,
    n: int,
    k: int,
    precision: str = "bf16",
    *,
    shared_b: bool = False,
    a_precision: str | None = None,
    b_precision: str | None = None,
    out_precision: str | None = None,
) -> OpCost:
    """``batch`` independent matmuls (``torch.bmm``); with ``shared_b`` all use one B.

    With a different B per example (m = 1: int8[B, D] × int8[B, D, F]) the weights dominate the
    traffic and the intensity is ≈ 2 whatever the batch (seed 004, problem 4).
    """
    batch = positive_int("batch", batch)
    shared_b = flag("shared_b", shared_b)
    one = matmul(
        m,
        n,
        k,
        precision,
        a_precision=a_precision,
        b_precision=b_precision,
        out_precision=out_precision,
    )
    b_bytes = bytes_per_element(_operand(b_precision, "b_precision", precision)) * k * n
    a_bytes = one.bytes_read - b_bytes
    b_total = b_bytes if shared_b else b_bytes * batch
    return OpCost(
        one.flops * batch, a_bytes * batch + b_total, one.bytes_written * batch, "batched matmul"
    )


# The hand-written five-op softmax of Triton's fused-softmax tutorial ("naive_softmax"), line by
# line, as (elements read, elements written) per row element, plus per-row reads/writes. Eager
# torch.softmax is not this: it is one kernel, the one-pass (fused=True) model.
#   x_max = x.max(dim=1)        read MN, write M
#   z = x - x_max[:, None]      read MN + M, write MN
#   numerator = torch.exp(z)    read MN, write MN
#   denominator = numerator.sum read MN, write M
#   ret = numerator / denom     read MN + M, write MN
_UNFUSED_READS_PER_ELEMENT, _UNFUSED_READS_PER_ROW = 5, 2
_UNFUSED_WRITES_PER_ELEMENT, _UNFUSED_WRITES_PER_ROW = 3, 2
#: max-compare, subtract, exp, add, divide.
SOFTMAX_FLOPS_PER_ELEMENT = 5


def softmax(rows: int, cols: int, precision: str = "fp32", *, fused: bool = True) -> OpCost:
    """Row softmax of a (rows, cols) matrix.

    ``fused=True`` (the default) is one kernel that keeps the row on chip: read once, write once.
    That is what eager ``torch.softmax`` runs, as well as a fused Triton softmax. ``fused=False``
    is a *hand-written five-op softmax* (max, subtract, exp, sum, divide as separate PyTorch
    ops, each a kernel that round-trips through HBM): 5·MN + 2M elements read and 3·MN + 2M
    written, as Triton's fused-softmax tutorial counts its ``naive_softmax``, about 4× the
    one-pass traffic.
    """
    rows, cols = positive_int("rows", rows), positive_int("cols", cols)
    fused = flag("fused", fused)
    size = bytes_per_element(precision)
    flops = SOFTMAX_FLOPS_PER_ELEMENT * rows * cols
    if fused:
        return OpCost(flops, rows * cols * size, rows * cols * size, "softmax (one pass)")
    elements = rows * cols
    reads = _UNFUSED_READS_PER_ELEMENT * elements + _UNFUSED_READS_PER_ROW * rows
    writes = _UNFUSED_WRITES_PER_ELEMENT * elements + _UNFUSED_WRITES_PER_ROW * rows
    return OpCost(flops, reads * size, writes * size, "softmax (hand-written, five ops)")


#: mean (1 add), variance (sub, mul, add), normalise (sub, mul), affine (mul, add).
LAYERNORM_FLOPS_PER_ELEMENT = 8


def layernorm(rows: int, cols: int, precision: str = "bf16", *, affine: bool = True) -> OpCost:
    """LayerNorm over the last dimension, fused: read x (and γ, β), write y.

    About 8 FLOPs per element and 2 bytes moved per element in bf16: intensity ≈ 2, memory-bound
    on every GPU, which is why normalisation shows up in profiles once matmuls are fast.
    """
    rows, cols = positive_int("rows", rows), positive_int("cols", cols)
    affine = flag("affine", affine)
    size = bytes_per_element(precision)
    params = 2 * cols * size if affine else 0
    return OpCost(
        LAYERNORM_FLOPS_PER_ELEMENT * rows * cols,
        rows * cols * size + params,
        rows * cols * size,
        "layernorm",
    )


def attention_flops(
    batch: int, heads: int, seq_len: int, head_dim: int, causal: bool = False
) -> float:
    """Matmul FLOPs of attention's forward pass: S = QKᵀ and O = PV, 2·N²·d each, per head.

    4·batch·heads·N²·d, halved for a causal mask (FlashAttention-2 paper's count). Softmax's
    ~5·N² FLOPs per head are left out, as the papers do: they run on slower units but are few.
    """
    batch, heads = positive_int("batch", batch), positive_int("heads", heads)
    seq_len, head_dim = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    causal = flag("causal", causal)
    flops = 4.0 * batch * heads * seq_len * seq_len * head_dim
    return flops / 2 if causal else flops


def attention(
    batch: int,
    heads: int,
    seq_len: int,
    head_dim: int,
    precision: str = "bf16",
    *,
    causal: bool = False,
) -> OpCost:
    """Attention forward with compulsory traffic only: read Q, K, V once, write O once.

    This is the floor FlashAttention approaches. Standard attention also writes and re-reads
    the N×N score matrix: see :func:`gpuperf.attention.hbm_traffic_standard`.
    """
    flops = attention_flops(batch, heads, seq_len, head_dim, causal)
    batch, heads = positive_int("batch", batch), positive_int("heads", heads)
    seq_len, head_dim = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    elements = batch * heads * seq_len * head_dim
    size = bytes_per_element(precision)
    return OpCost(flops, 3 * elements * size, elements * size, "attention")


@dataclass(frozen=True)
class TrainingFlops:
    """Model FLOPs of training on ``tokens`` tokens (forward + backward)."""

    dense_flops: float
    attention_flops: float

    def __post_init__(self) -> None:
        for label in ("dense_flops", "attention_flops"):
            object.__setattr__(
                self, label, positive_float(label, getattr(self, label), allow_zero=True)
            )

    @property
    def total(self) -> float:
        return self.dense_flops + self.attention_flops


def transformer_training_flops(
    n_params: float,
    n_tokens: float,
    *,
    n_layers: int | None = None,
    seq_len: int | None = None,
    d_model: int | None = None,
) -> TrainingFlops:
    """6·N FLOPs per token for the weights, plus 12·L·T·d per token for attention scores.

    Forward is 2·N per token (a multiply-add per parameter), backward twice that: 6·N·tokens
    (Kaplan et al. 2020). PaLM (Chowdhery et al. 2022, App. B) adds 12·L·T·d per token for the
    QKᵀ and PV matmuls, forward and backward; pass ``n_layers``, ``seq_len`` (T) and ``d_model``
    to include it. This is *model* FLOPs: recomputation is not counted, as MFU requires.
    """
    n_params = positive_float("n_params", n_params)
    n_tokens = positive_float("n_tokens", n_tokens)
    given = [x is not None for x in (n_layers, seq_len, d_model)]
    if any(given) and not all(given):
        raise ValueError("pass all of n_layers, seq_len and d_model to count attention, or none")
    attn = 0.0
    if all(given):
        n_layers = positive_int("n_layers", n_layers)
        seq_len = positive_int("seq_len", seq_len)
        d_model = positive_int("d_model", d_model)
        attn = 12.0 * n_layers * seq_len * d_model * n_tokens
    return TrainingFlops(6.0 * n_params * n_tokens, attn)


@dataclass(frozen=True)
class MFU:
    """Model FLOPs utilisation: achieved model FLOP/s over the chips' dense peak."""

    achieved_flops_per_s: float
    peak_flops_per_s: float

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "achieved_flops_per_s",
            positive_float("achieved_flops_per_s", self.achieved_flops_per_s, allow_zero=True),
        )
        object.__setattr__(
            self, "peak_flops_per_s", positive_float("peak_flops_per_s", self.peak_flops_per_s)
        )

    @property
    def mfu(self) -> float:
        return self.achieved_flops_per_s / self.peak_flops_per_s


def mfu(
    model_flops_per_s: float,
    chip: object,
    precision: str = "bf16",
    *,
    n_chips: int = 1,
) -> MFU:
    """MFU of a run that sustains ``model_flops_per_s`` in total over ``n_chips`` chips.

    Always against the *dense* peak: quoting H100's sparse 1979 TFLOP/s would halve the MFU.
    Llama 3 405B: 430 TFLOP/s per H100 → 43 %.
    """
    from .hardware import chip as lookup

    achieved = positive_float("model_flops_per_s", model_flops_per_s)
    n_chips = positive_int("n_chips", n_chips)
    return MFU(achieved, lookup(chip).peak_flops(precision) * n_chips)


def training_mfu(
    tokens_per_s: float,
    n_params: float,
    chip: object,
    precision: str = "bf16",
    *,
    n_chips: int = 1,
    n_layers: int | None = None,
    seq_len: int | None = None,
    d_model: int | None = None,
) -> MFU:
    """MFU from training throughput: model FLOPs per token × tokens/s over the dense peak."""
    tokens_per_s = positive_float("tokens_per_s", tokens_per_s)
    per_token = transformer_training_flops(
        n_params, 1, n_layers=n_layers, seq_len=seq_len, d_model=d_model
    ).total
    return mfu(per_token * tokens_per_s, chip, precision, n_chips=n_chips)


__all__ = [
    "LAYERNORM_FLOPS_PER_ELEMENT",
    "MFU",
    "SOFTMAX_FLOPS_PER_ELEMENT",
    "OpCost",
    "TrainingFlops",
    "attention",
    "attention_flops",
    "batched_matmul",
    "dot",
    "elementwise",
    "layernorm",
    "matmul",
    "mfu",
    "softmax",
    "training_mfu",
    "transformer_training_flops",
]
