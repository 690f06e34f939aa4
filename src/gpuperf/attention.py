"""Attention: standard vs FlashAttention HBM traffic, block sizes, and numpy references.

Attention computes S = QKᵀ, P = softmax(S), O = PV for Q, K, V of shape (N, d) per head. The
standard implementation (Algorithm 0 of Dao et al. 2022, arXiv 2205.14135) writes the N × N
matrices S and P to HBM and reads them back: Θ(Nd + N²) HBM accesses and O(N²) memory.
FlashAttention tiles Q, K, V into blocks that fit in on-chip SRAM of M elements and never
materialises S or P; the softmax is computed *online*, block by block, with a running max and
a running sum (Milakov & Gimelshein 2018, arXiv 1805.02867). Theorem 2 of the paper: Θ(N²d²/M)
HBM accesses, with blocks B_c = ⌈M/4d⌉ and B_r = min(⌈M/4d⌉, d) (Algorithm 1). Why a reader
cares: for N ≫ d the N² term dominates standard attention, and removing it is what made long
contexts affordable.

What is counted (elements × bytes_per_element; statistics ℓ, m and the logsumexp in fp32):

* :func:`hbm_traffic_standard`: every HBM read and write of Algorithm 0, 4Nd + 4N² elements;
* :func:`hbm_traffic_flash` ``version=1``: Algorithm 1's loop order (outer loop over K/V
  blocks) with Algorithm 1's blocks (:func:`flash_block_sizes`); ``version=2``:
  FlashAttention-2's (outer loop over Q blocks) with FlashAttention-2's own tiles
  (:func:`fa2_block_sizes`). The two rules differ: Algorithm 1 caps B_r at d, which belongs to
  its proof, while FlashAttention-2 picks B_r, B_c ∈ {64, 128} (Dao 2023, §3.3) and keeps
  128-row query blocks whatever d is, so its count of K/V re-reads, ≈ 2N²d/B_r, grows with d.

Limits: forward pass only; FLOPs are the two matmuls (:func:`gpuperf.cost.attention_flops`),
not the recomputation of the backward pass; no causal block skipping; Algorithm 1's blocks are
whatever its formulas give (real kernels round them to powers of two that fit registers too).
The numpy references compute in float64 and are for checking kernels and walking through the
algorithm, not for speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._cache import pure
from ._validate import (
    MAX_PRODUCT,
    choice,
    flag,
    positive_float,
    positive_int,
    real_number,
    show,
)
from .cost import OpCost, attention_flops
from .units import bytes_per_element, check_precision

#: Precision of the softmax statistics (row max m, row sum ℓ, logsumexp L) kept in HBM.
STATS_PRECISION = "fp32"


#: Which rule chose a :class:`FlashBlocks`: FlashAttention-1's Algorithm 1 or FA-2's tiles.
BLOCK_RULES = ("FA1", "FA2")


@dataclass(frozen=True)
class FlashBlocks:
    """Block sizes for an SRAM of ``sram_elements`` = sram_bytes / bytes per element.

    ``block_c`` rows of K and V per block, ``block_r`` rows of Q and O. ``rule`` says where
    they come from: ``"FA1"``, Algorithm 1 (B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d),
    :func:`flash_block_sizes`), or ``"FA2"``, FlashAttention-2's tiles (:func:`fa2_block_sizes`).
    """

    sram_bytes: int
    head_dim: int
    precision: str
    sram_elements: int
    block_c: int
    block_r: int
    rule: str = "FA1"

    def __post_init__(self) -> None:
        for label in ("sram_bytes", "head_dim", "sram_elements", "block_c", "block_r"):
            positive_int(label, getattr(self, label), maximum=MAX_PRODUCT)
        check_precision(self.precision)
        choice("rule", self.rule, BLOCK_RULES)

    def row_blocks(self, seq_len: int) -> int:
        """T_r = ⌈N / B_r⌉: blocks of Q (and O)."""
        return math.ceil(positive_int("seq_len", seq_len) / self.block_r)

    def col_blocks(self, seq_len: int) -> int:
        """T_c = ⌈N / B_c⌉: blocks of K and V."""
        return math.ceil(positive_int("seq_len", seq_len) / self.block_c)


@pure
def flash_block_sizes(sram_bytes: int, head_dim: int, precision: str = "fp16") -> FlashBlocks:
    """B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d) with M = sram_bytes / bytes_per_element (Algorithm 1).

    100 KiB of fp16 is M = 51,200 elements: d = 64 → (B_c, B_r) = (200, 64); d = 128 → (100, 100).
    """
    sram_bytes = positive_int("sram_bytes", sram_bytes)
    head_dim = positive_int("head_dim", head_dim)
    precision = check_precision(precision)
    elements = math.floor(sram_bytes / bytes_per_element(precision))
    if elements < 4 * head_dim:
        raise ValueError(
            f"sram_bytes={sram_bytes} holds {elements} {precision} elements; need at least "
            f"4·head_dim = {4 * head_dim} (one row each of Q, K, V and O)"
        )
    block_c = math.ceil(elements / (4 * head_dim))
    return FlashBlocks(
        sram_bytes=sram_bytes,
        head_dim=head_dim,
        precision=precision,
        sram_elements=elements,
        block_c=block_c,
        block_r=min(block_c, head_dim),
    )


#: FlashAttention-2's tile heights: B_r and B_c are each 64 or 128 (Dao 2023, §3.3).
FA2_TILE_ROWS = (64, 128)


@pure
def fa2_block_sizes(sram_bytes: int, head_dim: int, precision: str = "fp16") -> FlashBlocks:
    """FlashAttention-2's forward tiles: B_r = 128 query rows, B_c = 128 key rows for d ≤ 64
    and 64 above; 64 × 64 where the Q, K and V tiles of that choice exceed ``sram_bytes``.

    FA2 tunes B_r, B_c ∈ {64, 128} per head dimension and GPU (Dao 2023, §3.3); this is the
    choice of its forward launch template for an A100 (``flash_fwd_launch_template.h``, no
    dropout): 128 × 128 for d ≤ 64, 128 × 64 for d = 96 … 192, and 128 × 64 for d = 256 when
    the tiles, (B_r + 2·B_c)·d elements, fit the shared memory per block, else 64 × 64. B_r does
    *not* shrink with d as Algorithm 1's min(⌈M/4d⌉, d) does. Not modelled: the template's
    64 × 64 for d = 256 on an H100 (two programs per SM) and for causal d ≥ 96 on sm_86/sm_89.
    Raises ``ValueError`` if even 64 × 64 tiles do not fit: FA-2 has no kernel for that SRAM.
    """
    sram_bytes = positive_int("sram_bytes", sram_bytes)
    head_dim = positive_int("head_dim", head_dim)
    precision = check_precision(precision)
    size = bytes_per_element(precision)
    small, large = FA2_TILE_ROWS
    block_r, block_c = large, (large if head_dim <= 64 else small)
    if (block_r + 2 * block_c) * head_dim * size > sram_bytes:
        block_r = block_c = small
    need = (block_r + 2 * block_c) * head_dim * size
    if need > sram_bytes:
        raise ValueError(
            f"sram_bytes={sram_bytes} cannot hold FlashAttention-2's smallest tiles: 64 rows "
            f"each of Q, K and V at d={head_dim} in {precision} need {need} bytes"
        )
    return FlashBlocks(
        sram_bytes=sram_bytes,
        head_dim=head_dim,
        precision=precision,
        sram_elements=math.floor(sram_bytes / size),
        block_c=block_c,
        block_r=block_r,
        rule="FA2",
    )


def _sizes(seq_len: int, head_dim: int, batch: int, heads: int) -> tuple[int, int, int]:
    seq_len, head_dim = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    batch, heads = positive_int("batch", batch), positive_int("heads", heads)
    return seq_len, head_dim, batch * heads


@pure
def hbm_traffic_standard(
    seq_len: int, head_dim: int, precision: str = "fp16", batch: int = 1, heads: int = 1
) -> OpCost:
    """HBM traffic of standard attention, Algorithm 0 of the FlashAttention paper, per head:

    1. read Q, K (2Nd), write S = QKᵀ (N²);
    2. read S (N²), write P = softmax(S) (N²);
    3. read P, V (N² + Nd), write O = PV (Nd).

    Reads 3Nd + 2N², writes 2N² + Nd: 4Nd + 4N² elements, Θ(Nd + N²). FLOPs: 4·N²·d per head.
    """
    n, d, copies = _sizes(seq_len, head_dim, batch, heads)
    size = bytes_per_element(precision)
    read = (3 * n * d + 2 * n * n) * size * copies
    written = (2 * n * n + n * d) * size * copies
    flops = attention_flops(batch, heads, n, d)
    return OpCost(flops, float(read), float(written), "standard attention")


@pure
def hbm_traffic_flash(
    seq_len: int,
    head_dim: int,
    sram_bytes: int,
    precision: str = "fp16",
    batch: int = 1,
    heads: int = 1,
    version: int = 2,
    *,
    block_r: int | None = None,
    block_c: int | None = None,
) -> OpCost:
    """HBM traffic of the FlashAttention forward pass, per head (× batch·heads).

    Blocks come from the version's own rule unless ``block_r``/``block_c`` are given:
    Algorithm 1's :func:`flash_block_sizes` for ``version=1``, FlashAttention-2's tiles
    (:func:`fa2_block_sizes`, B_r = 128 where they fit) for ``version=2``.
    T_r = ⌈N/B_r⌉, T_c = ⌈N/B_c⌉; Q, K, V, O at ``precision``, statistics in fp32 (s = 4 B).

    ``version=1`` (Algorithm 1, outer loop over K/V blocks): initialise O, ℓ, m in HBM
    (write Nd + 2N); read K and V once (2Nd); each of the T_c passes reads all of Q, O, ℓ, m
    (2Nd + 2N) and writes O, ℓ, m back (Nd + 2N). Reads 2Nd + T_c·(2Nd + 2N), writes
    (T_c + 1)·(Nd + 2N): Θ(N²d²/M) since T_c ≈ 4Nd/M.

    ``version=2`` (FlashAttention-2, outer loop over Q blocks): read Q once (Nd); each of the
    T_r Q blocks streams all of K and V (2Nd); write O (Nd) and the logsumexp (N) once.
    Reads Nd + T_r·2Nd, writes Nd + N: ≈ 2N²d/B_r, which with B_r = 128 is N² at d = 64 and
    2N² at d = 128.
    """
    n, d, copies = _sizes(seq_len, head_dim, batch, heads)
    try:
        known = not isinstance(version, bool) and version in (1, 2)
    except (TypeError, ValueError):  # an array: its truth value is ambiguous
        known = False
    if not known:
        raise ValueError(f"version={show(version)} must be 1 or 2")
    rule = flash_block_sizes if version == 1 else fa2_block_sizes
    if block_r is None or block_c is None:
        blocks = rule(sram_bytes, d, precision)
    else:  # both given: the SRAM only has to be a size
        positive_int("sram_bytes", sram_bytes)
    b_r = blocks.block_r if block_r is None else positive_int("block_r", block_r)
    b_c = blocks.block_c if block_c is None else positive_int("block_c", block_c)
    size, stat = bytes_per_element(precision), bytes_per_element(STATS_PRECISION)
    if version == 1:
        passes = math.ceil(n / b_c)
        read = 2 * n * d * size + passes * (2 * n * d * size + 2 * n * stat)
        written = (passes + 1) * (n * d * size + 2 * n * stat)
    else:
        passes = math.ceil(n / b_r)
        read = n * d * size + passes * 2 * n * d * size
        written = n * d * size + n * stat
    flops = attention_flops(batch, heads, n, d)
    return OpCost(
        flops, float(read * copies), float(written * copies), f"flash attention v{version}"
    )


def io_complexity_standard(seq_len: int, head_dim: int) -> float:
    """Theorem 2's standard-attention count, Nd + N² HBM accesses (elements, constants dropped)."""
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    return float(n * d + n * n)


def io_complexity_flash(seq_len: int, head_dim: int, sram_elements: int) -> float:
    """Theorem 2's FlashAttention count, N²d²/M HBM accesses (elements, constants dropped).

    The theorem holds for d ≤ M ≤ Nd; N = 1024, d = 64, M = 51,200 → ≈ 84K vs 1.11M standard.
    """
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    m = positive_int("sram_elements", sram_elements)
    if m < d:
        raise ValueError(f"sram_elements={m} must be ≥ head_dim={d} (Theorem 2 needs d ≤ M)")
    return n * n * d * d / m


#: The implementations :func:`attention_memory` knows.
IMPLEMENTATIONS = ("standard", "flash")


@dataclass(frozen=True)
class AttentionMemory:
    """HBM footprint of one attention forward: inputs, output and intermediates, in bytes."""

    implementation: str
    inputs_bytes: float
    output_bytes: float
    intermediate_bytes: float

    def __post_init__(self) -> None:
        choice("implementation", self.implementation, IMPLEMENTATIONS)
        for label in ("inputs_bytes", "output_bytes", "intermediate_bytes"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label)))

    @property
    def total_bytes(self) -> float:
        return self.inputs_bytes + self.output_bytes + self.intermediate_bytes


def attention_memory(
    seq_len: int,
    head_dim: int,
    precision: str = "fp16",
    batch: int = 1,
    heads: int = 1,
    implementation: str = "standard",
) -> AttentionMemory:
    """Bytes held in HBM: Q, K, V, O plus S and P (standard, 2N²) or the logsumexp (flash, N).

    The standard count matches Algorithm 0, which stores S and P as separate arrays; the flash
    logsumexp is fp32 and is all the backward pass needs besides Q, K, V, O.
    """
    n, d, copies = _sizes(seq_len, head_dim, batch, heads)
    size = bytes_per_element(precision)
    implementation = choice("implementation", implementation, IMPLEMENTATIONS)
    if implementation == "standard":
        extra = 2 * n * n * size
    elif implementation == "flash":
        extra = n * bytes_per_element(STATS_PRECISION)
    else:
        raise ValueError(f"implementation={implementation!r} must be 'standard' or 'flash'")
    return AttentionMemory(
        implementation,
        float(3 * n * d * size * copies),
        float(n * d * size * copies),
        float(extra * copies),
    )


def attention_memory_bytes(
    seq_len: int,
    head_dim: int,
    precision: str = "fp16",
    batch: int = 1,
    heads: int = 1,
    implementation: str = "standard",
) -> float:
    """Total bytes of :func:`attention_memory` (N = 16K, d = 128, fp16, standard: 1.09 GB/head)."""
    return attention_memory(seq_len, head_dim, precision, batch, heads, implementation).total_bytes


# ---------------------------------------------------------------------------------------------
# numpy references


def _scores(name: str, x: object, min_ndim: int = 1) -> np.ndarray:
    """A float64 array with no NaN and no +inf (-inf is a mask and allowed)."""
    array = np.asarray(x)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"{name} must be a numeric array, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real, got dtype {array.dtype}")
    if array.ndim < min_ndim or array.size == 0:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimension(s) and no empty axis, "
            f"got shape {array.shape}"
        )
    array = array.astype(np.float64)
    if np.any(np.isnan(array)) or np.any(array == np.inf):
        raise ValueError(f"{name} must not contain NaN or +inf (-inf is allowed as a mask)")
    return array


def _stable_softmax(x: np.ndarray) -> np.ndarray:
    # Subtract the row max so exp never overflows; a fully masked (-inf) row has no finite max,
    # so shift by 0 there and return zeros: a fully masked row contributes nothing.
    row_max = np.max(x, axis=-1, keepdims=True)
    shift = np.where(np.isfinite(row_max), row_max, 0.0)
    e = np.exp(x - shift)
    total = np.sum(e, axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def softmax(x: object) -> np.ndarray:
    """Numerically stable softmax over the last axis (float64); a row of all -inf gives zeros."""
    return _stable_softmax(_scores("x", x))


def naive_attention(
    q: object, k: object, v: object, causal: bool = False, scale: float | None = None
) -> np.ndarray:
    """softmax(q·kᵀ·scale [+ causal mask])·v for (..., N, d) arrays, in float64.

    ``scale`` defaults to 1/√d. The causal mask lets query i see keys j ≤ i (top-left aligned,
    as ``torch.nn.functional.scaled_dot_product_attention``); a fully masked row gives zeros.
    """
    q, k, v = _scores("q", q, 2), _scores("k", k, 2), _scores("v", v, 2)
    causal = flag("causal", causal)
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(k)) and np.all(np.isfinite(v))):
        raise ValueError("q, k and v must be finite")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"shapes q{q.shape}, k{k.shape}, v{v.shape} do not fit: need q (..., N, d), "
            "k (..., N_k, d), v (..., N_k, d_v)"
        )
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else positive_float("scale", scale)
    scores = (q @ np.swapaxes(k, -1, -2)) * scale  # (..., N, N_k)
    if causal:
        n_q, n_k = scores.shape[-2], scores.shape[-1]
        mask = np.arange(n_k)[None, :] > np.arange(n_q)[:, None]
        scores = np.where(mask, -np.inf, scores)
    return _stable_softmax(scores) @ v


def online_softmax(x: object, block_size: int) -> np.ndarray:
    """Softmax over the last axis, streaming it in blocks of ``block_size`` (float64).

    Pass 1 keeps a running max m and a running sum ℓ of exp(x − m); when a block raises the max,
    the old sum is rescaled by exp(m_old − m_new) (Milakov & Gimelshein 2018, Algorithm 3).
    Pass 2 returns exp(x − m)/ℓ. Equal to :func:`softmax`, including zeros for all -inf rows.
    """
    x = _scores("x", x)
    block_size = positive_int("block_size", block_size)
    shape = (*x.shape[:-1], 1)
    running_max = np.full(shape, -np.inf)
    running_sum = np.zeros(shape)
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]
        new_max = np.maximum(running_max, np.max(block, axis=-1, keepdims=True))
        shift = np.where(np.isfinite(new_max), new_max, 0.0)  # all -inf so far: sum stays 0
        running_sum = running_sum * np.exp(running_max - shift) + np.sum(
            np.exp(block - shift), axis=-1, keepdims=True
        )
        running_max = new_max
    shift = np.where(np.isfinite(running_max), running_max, 0.0)
    e = np.exp(x - shift)
    return np.divide(e, running_sum, out=np.zeros_like(e), where=running_sum > 0)


@dataclass(frozen=True)
class OnlineSoftmaxStep:
    """One block of :func:`online_softmax_steps`: the state before and after folding it in.

    ``rescale`` = exp(max_before − max_after) multiplies the old sum (1.0 while the row has been
    all -inf, 0.0 on the first finite block);
    sum_after = sum_before·rescale + Σ exp(value − max_after).
    """

    index: int
    start: int
    stop: int
    values: tuple[float, ...]
    block_max: float
    max_before: float
    max_after: float
    sum_before: float
    sum_after: float
    rescale: float

    def __post_init__(self) -> None:
        index = positive_int("index", self.index, minimum=0)
        start = positive_int("start", self.start, minimum=0)
        stop = positive_int("stop", self.stop, minimum=start + 1)
        if not isinstance(self.values, tuple | list) or len(self.values) != stop - start:
            raise ValueError(
                f"values={show(self.values)} must be a tuple of the {stop - start} scores in "
                f"[start, stop) = [{start}, {stop})"
            )
        values = tuple(real_number(f"values[{i}]", v) for i, v in enumerate(self.values))
        if any(math.isnan(v) or v == math.inf for v in values):
            raise ValueError(f"values={show(self.values)} must be finite or -inf (a mask)")
        object.__setattr__(self, "values", values)
        for label in ("block_max", "max_before", "max_after"):
            value = real_number(label, getattr(self, label))
            if math.isnan(value) or value == math.inf:
                raise ValueError(f"{label}={value!r} must be finite or -inf (all masked)")
            object.__setattr__(self, label, value)
        for label in ("sum_before", "sum_after"):
            value = positive_float(label, getattr(self, label), allow_zero=True, bounded=False)
            object.__setattr__(self, label, value)
        rescale = positive_float("rescale", self.rescale, allow_zero=True, bounded=False)
        if rescale > 1:
            raise ValueError(f"rescale={rescale!r} must be in [0, 1]")
        object.__setattr__(self, "rescale", rescale)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "stop", stop)


def online_softmax_steps(row: object, block_size: int) -> tuple[OnlineSoftmaxStep, ...]:
    """Walk one row block by block, recording the running max and sum (for a widget).

    The softmax is exp(row − steps[-1].max_after) / steps[-1].sum_after (zeros if that sum is 0).
    """
    x = _scores("row", row)
    if x.ndim != 1:
        raise ValueError(f"row must be 1-D, got shape {x.shape}")
    block_size = positive_int("block_size", block_size)
    steps = []
    running_max, running_sum = -math.inf, 0.0
    for index, start in enumerate(range(0, x.size, block_size)):
        block = x[start : start + block_size]
        block_max = float(np.max(block))
        new_max = max(running_max, block_max)
        if math.isinf(new_max):  # everything so far is masked
            rescale, new_sum = 1.0, 0.0
        else:
            rescale = math.exp(running_max - new_max)
            new_sum = running_sum * rescale + float(np.sum(np.exp(block - new_max)))
        steps.append(
            OnlineSoftmaxStep(
                index=index,
                start=start,
                stop=start + block.size,
                values=tuple(float(value) for value in block),
                block_max=block_max,
                max_before=running_max,
                max_after=new_max,
                sum_before=running_sum,
                sum_after=new_sum,
                rescale=rescale,
            )
        )
        running_max, running_sum = new_max, new_sum
    return tuple(steps)


__all__ = [
    "BLOCK_RULES",
    "FA2_TILE_ROWS",
    "IMPLEMENTATIONS",
    "STATS_PRECISION",
    "AttentionMemory",
    "FlashBlocks",
    "OnlineSoftmaxStep",
    "attention_memory",
    "attention_memory_bytes",
    "fa2_block_sizes",
    "flash_block_sizes",
    "hbm_traffic_flash",
    "hbm_traffic_standard",
    "io_complexity_flash",
    "io_complexity_standard",
    "naive_attention",
    "online_softmax",
    "online_softmax_steps",
    "softmax",
]
