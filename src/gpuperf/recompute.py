"""Recomputation: trade FLOPs for memory (and sometimes for time).

Training keeps every activation the backward pass needs from the forward pass to the backward
pass. *Activation checkpointing* keeps only the input of each segment of layers and runs the
segment's forward again during the backward, when its activations are needed (Chen et al. 2016,
"Training deep nets with sublinear memory cost"). Two models, each small enough to check by hand:

**Memory vs compute of checkpointing.** A stack of ``L`` identical layers, each saving ``A`` bytes
of activations for its backward, of which ``B`` bytes are its input. Checkpointing every ``k``
layers keeps ⌈L/k⌉ segment inputs and, while one segment's backward runs, that segment's
recomputed activations::

    stored between forward and backward = ⌈L/k⌉·B            (no checkpointing: L·A)
    peak during backward                = (⌈L/k⌉ − 1)·B + k·A  (a segment's input is one of its A)
    extra FLOPs                         = L·F_fwd           (one more forward of every layer)

With backward ≈ 2 × forward, a training step costs 3·L·F_fwd, so recomputing everything adds
one third (the ``1 + 1/3`` of the literature); ``k ≈ √(L·B/A)`` minimises the peak.

**Recompute or store one pointwise result.** Storing an elementwise op's output for the backward
costs an HBM write in the forward and a read in the backward, 2·n·bytes; recomputing it inside the
backward kernel (which already reads the op's input) costs n·FLOPs_per_element on the CUDA cores.
Recomputing wins when ``n·f / peak_fp32 < 2·n·bytes / bandwidth``, i.e. when the op's intensity
``f / (2·bytes)`` is below the ridge point: true for every activation function on every GPU in
:mod:`gpuperf.hardware`. This is why FlashAttention recomputes the attention matrix, and why
fused kernels recompute GELU rather than save it (Stanford CS336's lecture on GPUs; Dao et al.
2022).

**What one transformer layer keeps, and what selective recomputation drops.** Counting, tensor by
tensor, what the backward pass of a standard transformer layer (pre-LayerNorm, multi-head
attention with ``a`` heads, a 4h GELU MLP, dropout after the attention probabilities and after
each sub-block) needs, on ``b`` sequences of ``s`` tokens of width ``h``, with 16-bit activations
and 1-byte dropout masks, gives (:func:`layer_activation_terms` lists every tensor)::

    bytes per layer = s·b·h·(34 + 5·a·s/h)

The 5·a·s²·b part is the attention-score matrices (softmax output, its dropout mask, the dropout
output): quadratic in ``s``. Tensor parallelism over ``t`` GPUs shards 24 of the 34 (and all of
the scores) across the GPUs; sequence parallelism shards the remaining 10 along the sequence, so
everything is divided by ``t`` (Korthikanti et al. 2022, "Reducing Activation Recomputation in
Large Transformer Models", the source of this count). *Selective* recomputation drops only the
score matrices and, in the backward pass, runs the checkpointed core attention again from the
kept Q, K and V: QKᵀ, softmax, dropout (its mask replayed from the saved random state) and the
product with V — two matmuls, 4·b·s²·h FLOPs, as Megatron-LM's checkpointed region does (the
paper's §5 and Figure 3, the FLOPs in its Appendix A; PyTorch's non-reentrant checkpoint stops
early and skips the product with V, :func:`selective_recompute_flops`). Its cost is
4s/(72h + 12s) of a training step. The paper's own figures (2.7 % for GPT-3, 1.6 % for MT-NLG,
§5) are Appendix A's hardware FLOPs over its model FLOPs, Eq. 8 over Eq. 7
(:func:`model_flops_per_iteration`, :func:`hardware_flops_per_iteration`), whose attention term
grows from s/(6h) to s/(3h): 12·b·s²·h per layer, three times the 4·b·s²·h above. *Full*
recomputation keeps only the layer's input (2·s·b·h bytes) and runs the whole forward again
(+1/3 of a training step's matmul FLOPs). :func:`layer_activations` returns the bytes and the
FLOPs of each mode,
:func:`recompute_mode_for_budget` the cheapest mode that fits a memory budget, and
:func:`transformer_layer` builds the layer in torch so that :func:`saved_tensor_bytes` can check
the count against what autograd really keeps; the practice of recomputing activations is also
the CS336 lecture's.

**Two rows the formula's assumptions leave out.** The count assumes dropout, a 4h GELU MLP,
LayerNorm and an attention that materialises its scores. *FlashAttention* (Dao et al. 2022)
never stores the 5·a·s²·b: it keeps Q, K, V, its output and one fp32 log-sum-exp per query row
and head (4·a·s·b bytes) and recomputes the scores tile by tile in its own backward (QKᵀ again,
2·b·s²·h FLOPs, half of what selective recomputation re-runs), so selective recomputation has
nothing left to drop. A *modern block* (Llama-style: RMSNorm, rotary embeddings, a SwiGLU MLP of
width f = 8h/3, no dropout, no biases) keeps 12 + 4 + 8·f/h = 37⅓ bytes per s·b·h element plus
2·a·s²·b of softmax output (no dropout masks or dropout outputs); its matmul FLOPs equal the GPT
layer's (three f-wide matmuls, 6·b·s·h·f = 16·b·s·h² at f = 8h/3). ``block`` and ``attention``
select the four combinations; :func:`layer_activation_terms` lists every tensor of each.

**Offloading instead of recomputing.** A layer's kept activations can be copied to host memory
during the forward pass and back during the backward (:func:`activation_offload`): free if the
copy hides behind the layer's compute, i.e. if bytes / host-link bandwidth ≤ the layer's FLOPs /
the chip's peak. Per layer the ratio is independent of the batch: 34·P / (B·(24h + 4s)) with the
scores dropped (P the peak, B the link's bandwidth per direction), so at h = 4096, s = 2048 on an
H100 PCIe Gen5 (63 GB/s per direction) cannot hide it, while NVLink-C2C (450 GB/s per direction
on a Grace Hopper superchip) can.

**Recomputation chosen op by op.** ``torch.compile``'s min-cut partitioner and selective
activation checkpointing (SAC) policies recompute single ops, not layers. :func:`checkpoint_policy`
counts what a modern layer with FlashAttention keeps under five such policies (recompute the
norms; the norms and the SwiGLU; save only matmul and attention outputs; everything) and the
FLOPs each adds, with grouped-query attention's smaller K and V (``kv_heads``);
:func:`up_projection_recompute` prices rebuilding a low-rank up-projection (DeepSeek-V3's MLA) in
FLOPs per byte freed.

Limits: identical layers; :func:`layer_activations` counts multi-head attention only
(:func:`checkpoint_policy` takes grouped-query attention's ``kv_heads``); the peak ignores the
gradient buffers and the transient workspace of each kernel; the pointwise model assumes the
backward kernel is memory-bound and fused; the offload model assumes the copies overlap
perfectly with compute and ignores their share of HBM bandwidth.
:func:`saved_tensor_bytes` measures, rather than models, the bytes autograd keeps for backward.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import hardware
from ._validate import (
    MAX_PRODUCT,
    choice,
    flag,
    name_string,
    positive_float,
    positive_int,
    sequence,
    show,
)
from .hardware import Chip
from .units import bytes_per_element, check_precision

#: Backward FLOPs per forward FLOP of a layer (gradients w.r.t. inputs and weights).
BACKWARD_PER_FORWARD = 2.0

#: Most layers :func:`best_checkpoint_every` searches (it tries ~2·√L candidates): 10**9.
MAX_LAYERS = 10**9


def _non_negative(obj: object, labels: tuple[str, ...]) -> None:
    for label in labels:
        object.__setattr__(obj, label, positive_float(label, getattr(obj, label), True))


@dataclass(frozen=True)
class Checkpointing:
    """Activation memory and recompute FLOPs of an L-layer stack checkpointed every ``k`` layers.

    ``stored_bytes`` = ⌈L/k⌉·B (no checkpointing, k = 0: L·A); ``peak_bytes`` = (⌈L/k⌉ − 1)·B +
    k·A adds one segment's recomputed activations (its input counted once);
    ``recompute_flops`` = L·F_fwd (0 without checkpointing);
    ``step_flops`` = (1 + BACKWARD_PER_FORWARD)·L·F_fwd + recompute_flops.
    """

    n_layers: int
    every: int
    activation_bytes_per_layer: float
    input_bytes_per_layer: float
    forward_flops_per_layer: float
    stored_bytes: float
    peak_bytes: float
    baseline_bytes: float
    recompute_flops: float
    step_flops: float

    def __post_init__(self) -> None:
        positive_int("n_layers", self.n_layers, maximum=MAX_PRODUCT)
        positive_int("every", self.every, minimum=0, maximum=MAX_PRODUCT)
        _non_negative(
            self,
            ("forward_flops_per_layer", "stored_bytes", "recompute_flops", "step_flops"),
        )
        for label in (
            "activation_bytes_per_layer",
            "input_bytes_per_layer",
            "peak_bytes",
            "baseline_bytes",
        ):
            object.__setattr__(self, label, positive_float(label, getattr(self, label)))

    @property
    def memory_saving(self) -> float:
        """Activation memory without checkpointing over the peak with it (≥ 1 is a saving)."""
        return self.baseline_bytes / self.peak_bytes

    @property
    def compute_overhead(self) -> float:
        """Extra FLOPs over a step without recomputation: 1/3 when backward = 2 × forward."""
        if self.every == 0:
            return 0.0
        # recompute / step = L·F / ((1 + backward)·L·F), independent of F: layers with no
        # FLOPs (F = 0) give the same 1/3 as the limit F → 0, not 0/0.
        return 1 / (1 + BACKWARD_PER_FORWARD)


def checkpointing(
    n_layers: int,
    activation_bytes_per_layer: float,
    input_bytes_per_layer: float,
    forward_flops_per_layer: float,
    every: int = 1,
) -> Checkpointing:
    """Memory and FLOPs of checkpointing every ``every`` layers (``every=0``: no checkpointing).

    A GPT MLP block (d → 4d → d, GELU) on b·s tokens saves 9·b·s·d values (its input, the 4d
    pre-activation and the 4d GELU output) and its input is b·s·d: checkpointing every block keeps
    1/9 of the activations for one third more FLOPs.
    """
    n_layers = positive_int("n_layers", n_layers)
    every = positive_int("every", every, minimum=0)
    if every > n_layers:
        raise ValueError(f"every={every} must be ≤ n_layers={n_layers} (0 = no checkpointing)")
    activation = positive_float("activation_bytes_per_layer", activation_bytes_per_layer)
    boundary = positive_float("input_bytes_per_layer", input_bytes_per_layer)
    if boundary > activation:
        raise ValueError(
            f"input_bytes_per_layer={boundary:g} must be ≤ activation_bytes_per_layer="
            f"{activation:g}: a layer's input is one of the activations it saves"
        )
    flops = positive_float("forward_flops_per_layer", forward_flops_per_layer, allow_zero=True)
    baseline = n_layers * activation
    if every == 0:
        stored = peak = baseline
        recompute = 0.0
    else:
        stored = math.ceil(n_layers / every) * boundary
        peak = stored - boundary + every * activation
        recompute = n_layers * flops
    return Checkpointing(
        n_layers=n_layers,
        every=every,
        activation_bytes_per_layer=activation,
        input_bytes_per_layer=boundary,
        forward_flops_per_layer=flops,
        stored_bytes=float(stored),
        peak_bytes=float(peak),
        baseline_bytes=float(baseline),
        recompute_flops=float(recompute),
        step_flops=float((1 + BACKWARD_PER_FORWARD) * n_layers * flops + recompute),
    )


def best_checkpoint_every(
    n_layers: int, activation_bytes_per_layer: float, input_bytes_per_layer: float
) -> int:
    """The ``every`` in 1..L with the lowest peak memory (≈ √(L·B/A)); ties go to the larger.

    peak(k) = (⌈L/k⌉ − 1)·B + k·A. For each value q of ⌈L/k⌉ the smallest k with that q,
    ⌈L/q⌉, has the lowest peak, and ⌈L/k⌉ takes under 2·√L values, so only ~2·√L candidates
    are compared: exact, and fast up to :data:`MAX_LAYERS` layers.
    """
    n_layers = positive_int("n_layers", n_layers, maximum=MAX_LAYERS)
    # Validates A and B (and B ≤ A) with checkpointing's own messages.
    checkpointing(n_layers, activation_bytes_per_layer, input_bytes_per_layer, 0, 1)
    activation = float(activation_bytes_per_layer)
    boundary = float(input_bytes_per_layer)
    root = math.isqrt(n_layers)
    small = np.arange(1, root + 1, dtype=np.int64)
    candidates = np.unique(np.concatenate([small, -(-n_layers // np.arange(1, root + 2))]))
    candidates = candidates[(candidates >= 1) & (candidates <= n_layers)]
    # The same float expression as checkpointing()'s peak, so ties break identically.
    peaks = -(-n_layers // candidates) * boundary - boundary + candidates * activation
    return int(candidates[peaks == peaks.min()].max())


@dataclass(frozen=True)
class RecomputeOrStore:
    """Time to keep a pointwise result for the backward: store it (HBM) or recompute it (math)."""

    chip_name: str
    n_elements: int
    precision: str
    flops_per_element: float
    store_bytes: float
    store_time_s: float
    recompute_flops: float
    recompute_time_s: float

    def __post_init__(self) -> None:
        name_string("chip_name", self.chip_name)
        positive_int("n_elements", self.n_elements)
        check_precision(self.precision)
        for label in ("flops_per_element", "store_bytes", "store_time_s", "recompute_flops",
                      "recompute_time_s"):  # fmt: skip
            object.__setattr__(self, label, positive_float(label, getattr(self, label)))

    @property
    def recompute_wins(self) -> bool:
        return self.recompute_time_s < self.store_time_s

    @property
    def speedup(self) -> float:
        """Store time over recompute time (> 1: recomputing is faster)."""
        return self.store_time_s / self.recompute_time_s


def recompute_or_store(
    n_elements: int,
    flops_per_element: float,
    chip: str | Chip,
    precision: str = "bf16",
    math_precision: str = "fp32",
) -> RecomputeOrStore:
    """Store (write + read 2·n·bytes over HBM) versus recompute (n·f FLOPs at the CUDA-core rate).

    ``math_precision`` is the rate the recomputation runs at (``fp32``: pointwise math runs on the
    CUDA cores, not the Tensor Cores). GELU (~8 FLOPs) on 2²⁶ bf16 values on an H100: storing
    moves 268 MB (~80 µs), recomputing costs 0.5 GFLOP (~8 µs).
    """
    n_elements = positive_int("n_elements", n_elements)
    flops_per_element = positive_float("flops_per_element", flops_per_element)
    found = hardware.chip(chip)
    precision = check_precision(precision)
    math_precision = check_precision(math_precision, "math_precision")
    store_bytes = 2.0 * n_elements * bytes_per_element(precision)
    recompute_flops = float(n_elements * flops_per_element)
    return RecomputeOrStore(
        chip_name=found.name,
        n_elements=n_elements,
        precision=precision,
        flops_per_element=flops_per_element,
        store_bytes=store_bytes,
        store_time_s=store_bytes / found.hbm_bandwidth,
        recompute_flops=recompute_flops,
        recompute_time_s=recompute_flops / found.peak_flops(math_precision),
    )


@dataclass(frozen=True)
class SavedTensors:
    """What autograd kept for the backward during one forward call (measured, not modelled)."""

    n_bytes: int
    n_tensors: int
    output: Any
    #: Shape of one tensor per distinct storage, largest storage first.
    shapes: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        positive_int("n_bytes", self.n_bytes, minimum=0, maximum=MAX_PRODUCT)
        positive_int("n_tensors", self.n_tensors, minimum=0, maximum=MAX_PRODUCT)
        message = f"shapes={show(self.shapes)} must be a tuple of shapes (tuples of ints ≥ 0)"
        if not isinstance(self.shapes, tuple | list) or not all(
            isinstance(shape, tuple | list) for shape in self.shapes
        ):
            raise ValueError(message)
        shapes = tuple(
            tuple(positive_int("shapes entry", d, minimum=0) for d in shape)
            for shape in self.shapes
        )
        object.__setattr__(self, "shapes", shapes)


def saved_tensor_bytes(
    fn: Callable[..., Any], *args: Any, exclude: Iterable[Any] = ()
) -> SavedTensors:
    """Run ``fn(*args)`` and count the bytes of the distinct tensors autograd saves for backward.

    Uses ``torch.autograd.graph.saved_tensors_hooks``: every tensor an op saves passes through
    the pack hook; tensors sharing storage are counted once, and tensors whose storage belongs
    to ``exclude`` (pass the model's parameters: weights are not activations) are skipped. This
    is honest on a CPU too: it counts what autograd holds, not what an allocator reports.
    """
    from .runtime import require

    if not callable(fn):
        raise TypeError(f"fn={show(fn)} must be callable")
    torch = require("torch", "pip install torch")

    def tensor(name: str, value: object) -> Any:
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name}={show(value)} must be a torch.Tensor (a parameter)")
        return value

    exclude = sequence("exclude", exclude, tensor, minimum=0)
    excluded = {t.untyped_storage().data_ptr() for t in exclude}
    storages: dict[int, tuple[int, tuple[int, ...]]] = {}

    def pack(tensor: Any) -> Any:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in excluded:
            storages[storage.data_ptr()] = (storage.nbytes(), tuple(tensor.shape))
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        output = fn(*args)
    saved = sorted(storages.values(), reverse=True)
    return SavedTensors(
        sum(n for n, _ in saved), len(saved), output, tuple(shape for _, shape in saved)
    )


# --- one transformer layer: what it keeps, and what each recompute mode drops ----------------

#: The recompute modes of :func:`layer_activations`: keep everything, drop the attention-score
#: matrices (selective), keep only the layer's input (full).
RECOMPUTE_MODES: tuple[str, ...] = ("none", "selective", "full")


@dataclass(frozen=True)
class ActivationTerm:
    """One tensor a transformer layer keeps for its backward pass.

    Its size is ``sbh_bytes``·s·b·h + ``as2b_bytes``·a·s²·b + ``asb_bytes``·a·s·b bytes (16-bit
    values: 2 bytes per element; dropout masks: 1 byte; FlashAttention's fp32 log-sum-exp: 4
    bytes per query row and head, its only ``asb`` term). ``tensor_parallel``: split across the
    ``t`` GPUs of tensor
    parallelism (heads or the 4h MLP width are split); otherwise every GPU holds it all, unless
    sequence parallelism splits it along the sequence. ``selective``: dropped (and recomputed)
    by selective recomputation. ``layer_input``: the one tensor full recomputation keeps.
    """

    block: str
    tensor: str
    needed_by: str
    sbh_bytes: float
    as2b_bytes: float
    tensor_parallel: bool
    selective: bool = False
    layer_input: bool = False
    asb_bytes: float = 0.0

    def __post_init__(self) -> None:
        for label in ("block", "tensor", "needed_by"):
            name_string(label, getattr(self, label))
        _non_negative(self, ("sbh_bytes", "as2b_bytes", "asb_bytes"))
        for label in ("tensor_parallel", "selective", "layer_input"):
            object.__setattr__(self, label, flag(label, getattr(self, label)))


_ATTN, _MLP, _NORM = "attention", "MLP", "LayerNorm"
#: The layer, in forward order: x → LN1 → QKV → QKᵀ → softmax → dropout → ·V → projection →
#: dropout → + x → LN2 → fc1 (h → 4h) → GELU → fc2 (4h → h) → dropout → + (residual adds keep
#: nothing: their gradient passes straight through).
_TERMS: tuple[ActivationTerm, ...] = (
    ActivationTerm(_NORM, "LN1 input (the layer's input x)", "LN1's backward", 2, 0, False,
                   layer_input=True),
    ActivationTerm(_ATTN, "LN1 output (input of the QKV projection)", "grad of W_QKV", 2, 0,
                   False),
    ActivationTerm(_ATTN, "Q and K", "QKᵀ's backward", 4, 0, True),
    ActivationTerm(_ATTN, "softmax output (a·s² scores per sequence)", "softmax's backward", 0,
                   2, True, selective=True),
    ActivationTerm(_ATTN, "attention-dropout mask (1 byte per score)", "dropout's backward", 0,
                   1, True, selective=True),
    ActivationTerm(_ATTN, "attention-dropout output (probabilities)", "grad of V", 0, 2, True,
                   selective=True),
    ActivationTerm(_ATTN, "V", "grad of the probabilities", 2, 0, True),
    ActivationTerm(_ATTN, "attention output (input of the projection)", "grad of W_O", 2, 0,
                   True),
    ActivationTerm(_ATTN, "projection-dropout mask (1 byte)", "dropout's backward", 1, 0, False),
    ActivationTerm(_NORM, "LN2 input", "LN2's backward", 2, 0, False),
    ActivationTerm(_MLP, "LN2 output (input of fc1)", "grad of W_1", 2, 0, False),
    ActivationTerm(_MLP, "fc1 output (GELU input, 4h wide)", "GELU's backward", 8, 0, True),
    ActivationTerm(_MLP, "GELU output (input of fc2, 4h wide)", "grad of W_2", 8, 0, True),
    ActivationTerm(_MLP, "MLP-dropout mask (1 byte)", "dropout's backward", 1, 0, False),
)  # fmt: skip


#: FlashAttention keeps no score-sized tensor: its backward recomputes the scores tile by tile
#: from Q, K and one fp32 log-sum-exp per query row and head (its dropout mask is replayed from
#: the random-number state, not stored).
_FLASH_LSE = ActivationTerm(_ATTN, "log-sum-exp of each score row (fp32, FlashAttention)",
                            "FlashAttention's backward", 0, 0, True, asb_bytes=4)  # fmt: skip
_RMS = "RMSNorm"
#: SwiGLU width over h: 8/3 keeps the MLP's weights and FLOPs equal to a 4h GELU MLP's.
SWIGLU_WIDTH = 8 / 3
_F = 2 * SWIGLU_WIDTH  # 16-bit bytes of one f-wide tensor per s·b·h element: 16/3
#: A Llama-style block: x → RMSNorm → QKV → RoPE(Q, K) → softmax(QKᵀ)·V → projection → + x →
#: RMSNorm → SiLU(x·W_gate) ⊙ (x·W_up) → ·W_down → + (no dropout, no biases).
_MODERN_TERMS: tuple[ActivationTerm, ...] = (
    ActivationTerm(_RMS, "RMSNorm1 input (the layer's input x)", "RMSNorm1's backward", 2, 0,
                   False, layer_input=True),
    ActivationTerm(_ATTN, "RMSNorm1 output (input of the QKV projection)", "grad of W_QKV", 2, 0,
                   False),
    ActivationTerm(_ATTN, "Q and K after the rotary embedding", "QKᵀ's backward", 4, 0, True),
    ActivationTerm(_ATTN, "softmax output = probabilities (no dropout)",
                   "softmax's backward and grad of V", 0, 2, True, selective=True),
    ActivationTerm(_ATTN, "V", "grad of the probabilities", 2, 0, True),
    ActivationTerm(_ATTN, "attention output (input of the projection)", "grad of W_O", 2, 0,
                   True),
    ActivationTerm(_RMS, "RMSNorm2 input", "RMSNorm2's backward", 2, 0, False),
    ActivationTerm(_MLP, "RMSNorm2 output (input of W_gate and W_up)", "grads of W_gate, W_up",
                   2, 0, False),
    ActivationTerm(_MLP, "gate x·W_gate (SiLU input, 8h/3 wide)", "SiLU's backward", _F, 0,
                   True),
    ActivationTerm(_MLP, "SiLU output (8h/3 wide)", "the product's backward", _F, 0, True),
    ActivationTerm(_MLP, "up x·W_up (8h/3 wide)", "the product's backward", _F, 0, True),
    ActivationTerm(_MLP, "SiLU(gate) ⊙ up (input of W_down, 8h/3 wide)", "grad of W_down", _F,
                   0, True),
)  # fmt: skip

#: Transformer blocks :func:`layer_activation_terms` knows: GPT-2/3 style and Llama style.
BLOCKS: tuple[str, ...] = ("gpt", "modern")
#: Attention implementations: scores materialised in HBM, or FlashAttention.
ATTENTIONS: tuple[str, ...] = ("standard", "flash")


def _flash(terms: tuple[ActivationTerm, ...]) -> tuple[ActivationTerm, ...]:
    """``terms`` with the score-sized tensors replaced by FlashAttention's log-sum-exp."""
    kept = [t for t in terms if not t.as2b_bytes]
    first = next(i for i, t in enumerate(terms) if t.as2b_bytes)
    return (*kept[:first], _FLASH_LSE, *kept[first:])


def layer_activation_terms(
    block: str = "gpt", attention: str = "standard"
) -> tuple[ActivationTerm, ...]:
    """Every tensor one transformer layer keeps for its backward pass, in forward order.

    ``block="gpt"``, ``attention="standard"`` (the defaults) is the layer of Korthikanti et al.:
    Σ ``sbh_bytes`` = 34 and Σ ``as2b_bytes`` = 5, so a layer keeps s·b·h·(34 + 5·a·s/h) bytes;
    of the 34, the ``tensor_parallel`` terms add up to 24 (Q, K, V, the attention output and the
    two 4h MLP tensors) and the rest to 10. ``attention="flash"`` replaces the three score-sized
    tensors by FlashAttention's fp32 log-sum-exp (4·a·s·b bytes). ``block="modern"`` (RMSNorm,
    RoPE, SwiGLU of width 8h/3, no dropout): 37⅓·s·b·h + 2·a·s²·b, of which 29⅓ are split by
    tensor parallelism and 8 are not. Not counted: the norms' per-token statistics (LayerNorm's
    mean and 1/σ, RMSNorm's 1/rms: fp32, 1 or 2 values per token, negligible next to h) and the
    weights (parameters, not activations).
    """
    block = choice("block", block, BLOCKS)
    attention = choice("attention", attention, ATTENTIONS)
    terms = _TERMS if block == "gpt" else _MODERN_TERMS
    return _flash(terms) if attention == "flash" else terms


@dataclass(frozen=True)
class LayerActivations:
    """Activation bytes (per GPU) and matmul FLOPs of one transformer layer in one recompute mode.

    ``activation_bytes``: what the layer keeps from its forward to its backward pass;
    ``baseline_bytes``: the same without recomputation (mode ``"none"``), same parallelism.
    ``forward_flops``: the layer's forward matmul FLOPs per GPU, (24·b·s·h² + 4·b·s²·h)/t;
    ``recompute_flops``: the matmul FLOPs the backward pass spends redoing forward work
    (standard attention — selective: QKᵀ and the product with V again, 4·b·s²·h/t; full: one
    forward. FlashAttention's own backward recomputes QKᵀ in every mode, 2·b·s²·h/t, on top of
    full recomputation's forward). Pointwise FLOPs (softmax, dropout, activation, norms) are left
    out, as model-FLOP counts leave them out.
    """

    seq_len: int
    micro_batch: int
    hidden: int
    heads: int
    tensor_parallel: int
    sequence_parallel: bool
    mode: str
    activation_bytes: float
    baseline_bytes: float
    forward_flops: float
    recompute_flops: float
    block: str = "gpt"
    attention: str = "standard"

    def __post_init__(self) -> None:
        for label in ("seq_len", "micro_batch", "hidden", "heads", "tensor_parallel"):
            object.__setattr__(self, label, positive_int(label, getattr(self, label)))
        object.__setattr__(
            self, "sequence_parallel", flag("sequence_parallel", self.sequence_parallel)
        )
        object.__setattr__(self, "mode", choice("mode", self.mode, RECOMPUTE_MODES))
        object.__setattr__(self, "block", choice("block", self.block, BLOCKS))
        object.__setattr__(self, "attention", choice("attention", self.attention, ATTENTIONS))
        for label in ("activation_bytes", "baseline_bytes", "forward_flops"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label)))
        _non_negative(self, ("recompute_flops",))

    @property
    def bytes_per_sbh(self) -> float:
        """``activation_bytes`` / (s·b·h): 34 + 5·a·s/h without parallelism or recomputation."""
        return self.activation_bytes / (self.seq_len * self.micro_batch * self.hidden)

    @property
    def memory_saving(self) -> float:
        """Baseline bytes over this mode's bytes (1 for ``"none"``)."""
        return self.baseline_bytes / self.activation_bytes

    @property
    def step_flops(self) -> float:
        """Forward + backward (= BACKWARD_PER_FORWARD × forward) + recomputation, per GPU."""
        return (1 + BACKWARD_PER_FORWARD) * self.forward_flops + self.recompute_flops

    @property
    def compute_overhead(self) -> float:
        """Recompute FLOPs over a step's FLOPs without recomputation (1/3 for full)."""
        return self.recompute_flops / ((1 + BACKWARD_PER_FORWARD) * self.forward_flops)

    def peak_bytes(self, n_layers: int) -> float:
        """Activations at the start of the backward pass of ``n_layers`` such layers, plus what
        the layer being differentiated rebuilds: L·kept + (baseline − kept)."""
        n_layers = positive_int("n_layers", n_layers)
        return n_layers * self.activation_bytes + (self.baseline_bytes - self.activation_bytes)


def layer_forward_flops(seq_len: int, micro_batch: int, hidden: int) -> float:
    """Matmul FLOPs of one layer's forward pass (all GPUs together): 24·b·s·h² + 4·b·s²·h.

    QKV projection 2·bs·h·3h, output projection 2·bs·h·h, fc1 and fc2 2·bs·h·4h each (24·bsh²);
    QKᵀ and probabilities·V 2·b·s²·h each (4·bs²h, :func:`gpuperf.cost.attention_flops`). The
    modern block's SwiGLU (three matmuls of 2·bs·h·8h/3) costs the same 16·bsh² as the GELU MLP.
    """
    s = positive_int("seq_len", seq_len)
    b = positive_int("micro_batch", micro_batch)
    h = positive_int("hidden", hidden)
    return 24.0 * b * s * h * h + 4.0 * b * s * s * h


def selective_recompute_flops(
    seq_len: int,
    micro_batch: int,
    hidden: int,
    tensor_parallel: int = 1,
    *,
    early_stop: bool = False,
) -> float:
    """Matmul FLOPs per GPU that selective recomputation re-runs in the backward pass.

    Megatron-LM checkpoints the core attention — QKᵀ, softmax, dropout and the product with V —
    and re-runs the whole region: 2·b·s²·h for QKᵀ plus 2·b·s²·h for ·V, 4·b·s²·h/t
    (Korthikanti et al. 2022, §5 and Figure 3 for the region, Appendix A for its FLOPs; the
    default, and what :func:`layer_activations` counts).
    PyTorch's non-reentrant ``torch.utils.checkpoint`` stops recomputing as soon as every tensor
    the backward needs is rebuilt (``early_stop=True``, its default behaviour): the region's
    output is not among them, so the product with V is skipped and 2·b·s²·h/t remains.
    """
    s = positive_int("seq_len", seq_len)
    b = positive_int("micro_batch", micro_batch)
    h = positive_int("hidden", hidden)
    t = positive_int("tensor_parallel", tensor_parallel)
    matmuls = 1 if flag("early_stop", early_stop) else 2
    return matmuls * 2.0 * b * s * s * h / t


#: The vocabulary of Korthikanti et al.'s evaluation (§6: v = 51,200 for every model).
PAPER_VOCAB_SIZE = 51200


def _iteration_flops(
    seq_len: int, hidden: int, n_layers: int, vocab_size: int, micro_batch: int, attention: float
) -> float:
    s = positive_int("seq_len", seq_len)
    h = positive_int("hidden", hidden)
    n = positive_int("n_layers", n_layers)
    v = positive_int("vocab_size", vocab_size)
    b = positive_int("micro_batch", micro_batch)
    return 72.0 * b * n * s * h * h * (1 + attention * s / h + v / (12.0 * h * n))


def model_flops_per_iteration(
    seq_len: int,
    hidden: int,
    n_layers: int,
    vocab_size: int = PAPER_VOCAB_SIZE,
    micro_batch: int = 1,
) -> float:
    """Model FLOPs of one training iteration, Korthikanti et al. 2022, Appendix A, Eq. 7.

    72·B·L·s·h²·(1 + s/(6h) + v/(12·h·L)): each layer's forward matmuls, 24·B·s·h² + 4·B·s²·h,
    and the logits' 2·B·s·h·v, times three for the forward and the backward pass. Matmuls only,
    as :func:`layer_forward_flops` counts them. ``vocab_size`` defaults to the paper's 51,200.
    """
    return _iteration_flops(seq_len, hidden, n_layers, vocab_size, micro_batch, 1 / 6)


def hardware_flops_per_iteration(
    seq_len: int,
    hidden: int,
    n_layers: int,
    vocab_size: int = PAPER_VOCAB_SIZE,
    micro_batch: int = 1,
) -> float:
    """FLOPs of one iteration with selective recomputation as the paper counts them (Eq. 8).

    72·B·L·s·h²·(1 + s/(3h) + v/(12·h·L)): Eq. 7 with its attention term s/(6h) doubled. The
    difference from :func:`model_flops_per_iteration` is 12·B·L·s²·h, three times the
    2·B·s²·h + 2·B·s²·h per layer that the appendix's text says selective recomputation adds
    (:func:`selective_recompute_flops`). The paper's "2.7 %" (GPT-3) and "1.6 %" (MT-NLG) of §5
    are this over Eq. 7, minus one; Eq. 9 approximates the ratio as 1 + s/(6h).
    """
    return _iteration_flops(seq_len, hidden, n_layers, vocab_size, micro_batch, 1 / 3)


def layer_activations(
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    mode: str = "none",
    *,
    block: str = "gpt",
    attention: str = "standard",
) -> LayerActivations:
    """Bytes one transformer layer keeps per GPU, and its FLOPs, in recompute ``mode``.

    Sums :func:`layer_activation_terms` (``block``, ``attention``): with tensor parallelism
    ``t`` the ``tensor_parallel`` terms are divided by t; with ``sequence_parallel`` all terms
    are. In closed form for the default GPT layer with standard attention, with tensor
    parallelism alone / with sequence parallelism too::

        none       s·b·h·(10 + 24/t + 5·a·s/(h·t))   /   s·b·h·(34 + 5·a·s/h)/t
        selective  s·b·h·(10 + 24/t)                 /   34·s·b·h/t
        full       2·s·b·h                           /   2·s·b·h/t

    With ``attention="flash"`` the 5·a·s/h becomes 4·a/h (the log-sum-exp) and selective keeps
    what none keeps: there is no score matrix left to drop. ``heads`` must divide ``hidden``
    and ``tensor_parallel`` must divide ``heads`` (each GPU gets whole heads); with
    ``sequence_parallel``, ``tensor_parallel`` must divide ``seq_len``.
    """
    s = positive_int("seq_len", seq_len)
    b = positive_int("micro_batch", micro_batch)
    h = positive_int("hidden", hidden)
    a = positive_int("heads", heads)
    t = positive_int("tensor_parallel", tensor_parallel)
    sp = flag("sequence_parallel", sequence_parallel)
    mode = choice("mode", mode, RECOMPUTE_MODES)
    terms = layer_activation_terms(block, attention)
    if h % a:
        raise ValueError(f"heads={a} must divide hidden={h} (head dim = hidden / heads)")
    if a % t:
        raise ValueError(f"tensor_parallel={t} must divide heads={a} (whole heads per GPU)")
    if sp and s % t:
        raise ValueError(
            f"tensor_parallel={t} must divide seq_len={s} with sequence_parallel=True"
        )

    def size(term: ActivationTerm) -> float:
        n_bytes = (
            term.sbh_bytes * s * b * h
            + term.as2b_bytes * a * s * s * b
            + term.asb_bytes * a * s * b
        )
        return n_bytes / t if (term.tensor_parallel or sp) else n_bytes

    baseline = sum(size(term) for term in terms)
    forward = layer_forward_flops(s, b, h) / t
    # FlashAttention's backward recomputes QKᵀ (2·b·s²·h) in every mode; standard attention's
    # backward reads the stored probabilities instead.
    own = 2.0 * b * s * s * h / t if attention == "flash" else 0.0
    if mode == "none":
        kept, recompute_flops = baseline, own
    elif mode == "selective":
        kept = sum(size(term) for term in terms if not term.selective)
        # The checkpointed core attention runs again: QKᵀ and the product with V, 2·b·s²·h
        # FLOPs each (softmax and dropout are pointwise). With FlashAttention nothing is dropped.
        recompute_flops = own if attention == "flash" else selective_recompute_flops(s, b, h, t)
    else:
        kept = sum(size(term) for term in terms if term.layer_input)
        recompute_flops = forward + own
    return LayerActivations(
        seq_len=s,
        micro_batch=b,
        hidden=h,
        heads=a,
        tensor_parallel=t,
        sequence_parallel=sp,
        mode=mode,
        activation_bytes=float(kept),
        baseline_bytes=float(baseline),
        forward_flops=float(forward),
        recompute_flops=float(recompute_flops),
        block=block,
        attention=attention,
    )


#: Checkpoint policies of :func:`checkpoint_policy`, for the modern block with FlashAttention:
#: what a selective-activation-checkpoint (SAC) policy, or a compiler, recomputes.
CHECKPOINT_POLICIES: tuple[str, ...] = (
    "save everything",
    "recompute norms",
    "recompute norms and SwiGLU",
    "save matmul and attention outputs",
    "recompute everything",
)
_NORM_OUTPUTS = ("RMSNorm1 output", "RMSNorm2 output")
_SWIGLU_OUTPUTS = ("SiLU output", "SiLU(gate) ⊙ up")


@dataclass(frozen=True)
class PolicyActivations:
    """What one modern layer (RMSNorm, RoPE, SwiGLU, FlashAttention) keeps under a checkpoint
    ``policy`` (:data:`CHECKPOINT_POLICIES`), and what its backward pass redoes.

    ``activation_bytes`` / ``baseline_bytes``: kept with the policy / with nothing recomputed;
    ``recompute_matmul_flops``: matmul FLOPs the policy adds to a step (0 unless the whole
    forward runs again; FlashAttention's own recomputation of QKᵀ is in every policy and not
    counted here); ``recomputed_values``: elements the backward rebuilds with pointwise ops
    (norms, rotary embedding, residual add, SiLU, the gate product) — memory-bound work that a
    compiler fuses into the backward kernels that read their inputs anyway;
    ``step_flops``: the layer's forward + backward matmul FLOPs without recomputation.
    """

    policy: str
    activation_bytes: float
    baseline_bytes: float
    recompute_matmul_flops: float
    recomputed_values: float
    step_flops: float
    heads: int
    kv_heads: int

    def __post_init__(self) -> None:
        choice("policy", self.policy, CHECKPOINT_POLICIES)
        object.__setattr__(self, "heads", positive_int("heads", self.heads))
        object.__setattr__(self, "kv_heads", positive_int("kv_heads", self.kv_heads))
        for label in ("activation_bytes", "baseline_bytes", "step_flops"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label)))
        _non_negative(self, ("recompute_matmul_flops", "recomputed_values"))

    @property
    def saved_fraction(self) -> float:
        """Share of the baseline's activation bytes the policy does not keep."""
        return 1 - self.activation_bytes / self.baseline_bytes

    @property
    def compute_overhead(self) -> float:
        """Added matmul FLOPs over a step's matmul FLOPs."""
        return self.recompute_matmul_flops / self.step_flops


def checkpoint_policy(
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    policy: str = "save everything",
    *,
    kv_heads: int | None = None,
) -> PolicyActivations:
    """Bytes one modern layer (``block="modern"``, ``attention="flash"``) keeps under a
    checkpoint ``policy``, and what the backward redoes (one GPU, no parallelism).

    * ``"recompute norms"``: the two RMSNorm outputs are rebuilt from their kept inputs (what
      DeepSeek-V3 and Megatron's ``layernorm`` recompute module do): −4·s·b·h bytes.
    * ``"recompute norms and SwiGLU"``: also the SiLU output and the gate product, rebuilt from
      the kept gate and up projections (the activation function of an MLP or MoE expert):
      −(4 + 2·2f/h)·s·b·h with f = 8h/3.
    * ``"save matmul and attention outputs"``: the op-list policy of
      ``torch.utils.checkpoint.create_selective_checkpoint_contexts`` (``aten.mm`` and the
      attention op ``MUST_SAVE``, everything else ``PREFER_RECOMPUTE``) around the whole layer:
      it keeps the layer's input and every listed op's output — the Q, K, V projections before
      the rotary embedding (the same bytes as after), the attention output and log-sum-exp, the
      output projection (instead of the residual sum: the same bytes), gate, up, and also the
      down projection's output, which no backward formula reads (PyTorch's docs warn that a save
      policy can keep tensors the gradient does not need): 2·s·b·h more than the previous row.
    * ``"recompute everything"``: full recomputation, the layer's input only and one forward
      more.

    ``kv_heads`` (grouped-query attention, g key/value heads shared by the ``heads`` query heads;
    default: as many as ``heads``) shrinks the kept K and V, and the K and V projections, by
    g/a: the layer keeps 4·(1 − g/a)·s·b·h bytes fewer in every policy but the last, and its
    forward runs 4·b·s·h²·(1 − g/a) fewer matmul FLOPs.
    """
    s = positive_int("seq_len", seq_len)
    b = positive_int("micro_batch", micro_batch)
    h = positive_int("hidden", hidden)
    a = positive_int("heads", heads)
    policy = choice("policy", policy, CHECKPOINT_POLICIES)
    g = a if kv_heads is None else positive_int("kv_heads", kv_heads, maximum=a)
    if a % g:
        raise ValueError(f"kv_heads={g} must divide heads={a} (each K/V head serves a group)")
    shrink = 1 - g / a  # share of K and V (and of their projections) that GQA removes
    plan = layer_activations(s, b, h, a, block="modern", attention="flash")
    terms = layer_activation_terms("modern", "flash")
    sbh = float(s * b * h)
    f_values = SWIGLU_WIDTH * sbh  # values of one 8h/3-wide tensor

    def dropped(prefixes: tuple[str, ...]) -> float:
        found = [t for t in terms if t.tensor.startswith(prefixes)]
        assert len(found) == len(prefixes), prefixes  # the terms are named as listed
        return sum(t.sbh_bytes for t in found) * sbh

    gqa_bytes = 4 * shrink * sbh  # K (after the rotary embedding) and V, 2 bytes each
    forward = plan.forward_flops - 4.0 * b * s * h * h * shrink
    baseline = plan.baseline_bytes - gqa_bytes
    flops, values = 0.0, 0.0
    if policy == "save everything":
        kept = baseline
    elif policy == "recompute norms":
        kept, values = baseline - dropped(_NORM_OUTPUTS), 2 * sbh
    elif policy == "recompute norms and SwiGLU":
        kept = baseline - dropped(_NORM_OUTPUTS + _SWIGLU_OUTPUTS)
        values = 2 * sbh + 2 * f_values
    elif policy == "save matmul and attention outputs":
        kept = baseline - dropped(_NORM_OUTPUTS + _SWIGLU_OUTPUTS) + 2 * sbh  # + W_down's output
        # norms (2), rotary Q and K (1 + g/a), residual sum (1), SiLU and the product (2 · f)
        values = (4 + g / a) * sbh + 2 * f_values
    else:
        full = layer_activations(s, b, h, a, mode="full", block="modern", attention="flash")
        kept, flops = full.activation_bytes, forward
        values = 0.0  # the whole forward: counted as matmul FLOPs, its pointwise ops left out
    return PolicyActivations(
        policy=policy,
        activation_bytes=float(kept),
        baseline_bytes=float(baseline),
        recompute_matmul_flops=float(flops),
        recomputed_values=float(values),
        step_flops=(1 + BACKWARD_PER_FORWARD) * forward,
        heads=a,
        kv_heads=g,
    )


@dataclass(frozen=True)
class UpProjectionRecompute:
    """Recomputing a low-rank up-projection (rank → width) instead of keeping its output, for
    ``tokens`` tokens: ``bytes_saved`` (the output, ``width`` values per token) and
    ``flops_added`` (2·rank·width per token, the matmul again). ``flops_per_byte`` = rank /
    bytes per value: the arithmetic spent per byte of memory freed."""

    tokens: int
    rank: int
    width: int
    bytes_saved: float
    flops_added: float

    def __post_init__(self) -> None:
        for label in ("tokens", "rank", "width"):
            object.__setattr__(self, label, positive_int(label, getattr(self, label)))
        for label in ("bytes_saved", "flops_added"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label)))

    @property
    def flops_per_byte(self) -> float:
        return self.flops_added / self.bytes_saved


def up_projection_recompute(
    tokens: int, rank: int, width: int, precision: str = "bf16"
) -> UpProjectionRecompute:
    """Memory freed and FLOPs added by recomputing the output of an up-projection from a kept
    ``rank``-wide input, as DeepSeek-V3 does for MLA's up-projections: its latent KV of rank
    512 is projected to keys and values of 128 heads × 128 (DeepSeek-V3 report, §3.2.3)."""
    n = positive_int("tokens", tokens)
    r = positive_int("rank", rank)
    w = positive_int("width", width)
    if r >= w:
        raise ValueError(f"rank={r} must be below width={w}: an up-projection widens")
    size = bytes_per_element(check_precision(precision))
    return UpProjectionRecompute(n, r, w, float(n * w * size), 2.0 * n * r * w)


#: How a table names a recompute mode, and the answer "no mode fits" (``None``), so that the mode
#: ``"none"`` (keep every activation) never reads as "nothing fits".
_MODE_WORDS = {
    "none": "no recomputation",
    "selective": "selective recomputation",
    "full": "full recomputation",
    None: "nothing fits",
}


def mode_in_words(mode: str | None) -> str:
    """A recompute mode (or :func:`recompute_mode_for_budget`'s ``None``) in words for a table.

    ``"none"`` is "no recomputation" (everything is kept, and it fits); ``None`` is "nothing
    fits" (not even full recomputation).
    """
    if mode is not None:
        mode = choice("mode", mode, RECOMPUTE_MODES)
    return _MODE_WORDS[mode]


def recompute_mode_for_budget(
    budget_bytes: float,
    n_layers: int,
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    *,
    block: str = "gpt",
    attention: str = "standard",
) -> str | None:
    """The cheapest mode (fewest recompute FLOPs: none, selective, full) whose activation peak
    for ``n_layers`` layers (:meth:`LayerActivations.peak_bytes`) fits in ``budget_bytes``;
    ``None`` if even full recomputation does not fit (a smaller micro-batch or more
    parallelism is needed). ``block`` and ``attention`` as in :func:`layer_activations`."""
    budget = positive_float("budget_bytes", budget_bytes)
    n_layers = positive_int("n_layers", n_layers)
    for mode in RECOMPUTE_MODES:
        plan = layer_activations(
            seq_len, micro_batch, hidden, heads, tensor_parallel, sequence_parallel, mode,
            block=block, attention=attention,
        )  # fmt: skip
        if plan.peak_bytes(n_layers) <= budget:
            return mode
    return None


def transformer_layer(
    hidden: int,
    heads: int,
    mode: str = "none",
    *,
    block: str = "gpt",
    attention: str = "standard",
    dropout: float | None = None,
    max_seq_len: int = 4096,
    dtype: Any = None,
    device: Any = None,
) -> Any:
    """A small transformer layer (``torch.nn.Module``) that keeps exactly the tensors of
    :func:`layer_activation_terms` (``block``, ``attention``), for measuring them with
    :func:`saved_tensor_bytes`.

    It takes ``(seq, batch, hidden)`` input. ``block="gpt"``: pre-LayerNorm, GELU MLP, dropout
    (default ``dropout`` 0.1) written as ``torch.where(keep, x/(1−p), 0)`` with a boolean
    ``keep`` mask, so a mask costs 1 byte per element on every device
    (``torch.nn.functional.dropout`` keeps a mask in the input's dtype on a CPU).
    ``block="modern"``: RMSNorm (a fused function that keeps its input and one fp32 1/rms per
    token, as fused kernels do), rotary embeddings (their cos/sin tables are buffers of
    ``max_seq_len`` rows, excluded like weights), a SwiGLU MLP of width 8·hidden/3 (``hidden``
    a multiple of 3), no dropout and no biases. ``attention="flash"`` runs
    ``torch.nn.functional.scaled_dot_product_attention`` without dropout (FlashAttention
    replays its dropout mask from the random state rather than storing it); on a CPU torch's
    flash kernel keeps Q, K, V, the output and the fp32 log-sum-exp, exactly the model.
    ``mode`` applies :mod:`torch.utils.checkpoint`: ``"selective"`` wraps scores → softmax →
    (dropout →) ·V (nothing with ``attention="flash"``: there is no score matrix to drop),
    ``"full"`` the whole layer. Besides the model's tensors autograd keeps the norms'
    per-token statistics: LayerNorm's mean and 1/σ (4 tensors of s·b fp32 values per layer),
    RMSNorm's 1/rms (2). Sizes: ``hidden`` ≤ 4096 (it is a measuring device, not a model).
    """
    from .runtime import require

    hidden = positive_int("hidden", hidden, maximum=4096)
    heads = positive_int("heads", heads, maximum=hidden)
    mode = choice("mode", mode, RECOMPUTE_MODES)
    block = choice("block", block, BLOCKS)
    attention = choice("attention", attention, ATTENTIONS)
    p = 0.1 if dropout is None and block == "gpt" else 0.0
    if dropout is not None:
        p = positive_float("dropout", dropout, allow_zero=True, maximum=0.99)
    if block == "modern" and p:
        raise ValueError(f"dropout={dropout!r}: the modern block has no dropout (pass None or 0)")
    max_seq_len = positive_int("max_seq_len", max_seq_len, maximum=65536)
    if hidden % heads:
        raise ValueError(f"heads={heads} must divide hidden={hidden}")
    head_dim = hidden // heads
    if block == "modern" and hidden % 3:
        raise ValueError(
            f"hidden={hidden} must be a multiple of 3 for block='modern' (the SwiGLU width "
            "8·hidden/3 must be a whole number)"
        )
    if block == "modern" and head_dim % 2:
        raise ValueError(
            f"heads={heads}: the head size hidden/heads = {head_dim} must be even for the "
            "rotary embedding (block='modern')"
        )
    torch = require("torch", "pip install torch")
    if dtype is not None and (not isinstance(dtype, torch.dtype) or not dtype.is_floating_point):
        raise TypeError(f"dtype={show(dtype)} must be a floating torch.dtype or None")
    if device is not None:
        try:
            device = torch.device(device)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(f"device={show(device)} must be a torch device, e.g. 'cpu'") from None
    checkpoint = require("torch.utils.checkpoint", "pip install torch").checkpoint
    functional = torch.nn.functional
    options = {"dtype": dtype, "device": device}
    rms_norm = _rms_norm_function(torch)

    def drop(x: Any) -> Any:
        # keep: bool, 1 byte per element, the only tensor where() saves for its backward
        keep = torch.rand(x.shape, device=x.device) >= p
        return torch.where(keep, x * (1.0 / (1.0 - p)), torch.zeros((), dtype=x.dtype))

    def core(q: Any, k: Any, v: Any) -> Any:
        # q, k, v: (batch·heads, seq, head_dim); scores and probabilities: (b·a, s, s)
        scores = torch.bmm(q, k.transpose(1, 2)) * head_dim**-0.5
        probabilities = torch.softmax(scores, dim=-1)
        return torch.bmm(drop(probabilities) if block == "gpt" else probabilities, v)

    def attend(q: Any, k: Any, v: Any) -> Any:
        """q, k, v: (s, b, a, d), contiguous; returns the (s, b, hidden) attention output."""
        s, b = q.shape[:2]
        if attention == "flash":
            # (b, a, s, d) views; torch's CPU kernel returns its output in q's memory order,
            # so the projection's input below is a view of the output it keeps, not a copy.
            o = functional.scaled_dot_product_attention(
                *(t.permute(1, 2, 0, 3) for t in (q, k, v))
            )
            return o.permute(2, 0, 1, 3).reshape(s, b, hidden)
        qs, ks, vs = (t.permute(1, 2, 0, 3).reshape(b * heads, s, head_dim) for t in (q, k, v))
        if mode == "selective":
            o = checkpoint(core, qs, ks, vs, use_reentrant=False)
        else:
            o = core(qs, ks, vs)
        return o.reshape(b, heads, s, head_dim).permute(2, 0, 1, 3).reshape(s, b, hidden)

    class GPTLayer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = torch.nn.LayerNorm(hidden, **options)
            self.qkv = torch.nn.Linear(hidden, 3 * hidden, **options)
            self.proj = torch.nn.Linear(hidden, hidden, **options)
            self.ln2 = torch.nn.LayerNorm(hidden, **options)
            self.fc1 = torch.nn.Linear(hidden, 4 * hidden, **options)
            self.fc2 = torch.nn.Linear(4 * hidden, hidden, **options)

        def body(self, x: Any) -> Any:
            s, b, _ = x.shape
            q, k, v = (
                t.reshape(s, b, heads, head_dim).contiguous()
                for t in self.qkv(self.ln1(x)).split(hidden, dim=-1)
            )
            x = x + drop(self.proj(attend(q, k, v)))
            mlp = self.fc2(functional.gelu(self.fc1(self.ln2(x))))
            return x + drop(mlp)

        def forward(self, x: Any) -> Any:
            if mode == "full":
                return checkpoint(self.body, x, use_reentrant=False)
            return self.body(x)

    class ModernLayer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            width = hidden * 8 // 3
            self.norm1 = torch.nn.Parameter(torch.ones(hidden, **options))
            self.norm2 = torch.nn.Parameter(torch.ones(hidden, **options))
            self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False, **options)
            self.proj = torch.nn.Linear(hidden, hidden, bias=False, **options)
            self.gate = torch.nn.Linear(hidden, width, bias=False, **options)
            self.up = torch.nn.Linear(hidden, width, bias=False, **options)
            self.down = torch.nn.Linear(width, hidden, bias=False, **options)
            # Rotary tables (max_seq_len, 1, 1, head_dim): positions only, shared by layers.
            inverse = 10000.0 ** (-torch.arange(0, head_dim, 2, device=device) / head_dim)
            angles = torch.outer(torch.arange(max_seq_len, device=device), inverse)
            angles = torch.cat((angles, angles), dim=-1)[:, None, None, :]
            self.register_buffer("cos", angles.cos().to(dtype or torch.float32))
            self.register_buffer("sin", angles.sin().to(dtype or torch.float32))

        def rope(self, x: Any) -> Any:
            # x: (s, b, a, d). Multiplying by the tables saves only the tables (buffers).
            s = x.shape[0]
            half = x.shape[-1] // 2
            rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
            return x * self.cos[:s] + rotated * self.sin[:s]

        def body(self, x: Any) -> Any:
            s, b, _ = x.shape
            if s > max_seq_len:
                raise ValueError(f"seq_len={s} exceeds max_seq_len={max_seq_len}")
            q, k, v = (
                t.reshape(s, b, heads, head_dim)
                for t in self.qkv(rms_norm(x, self.norm1)).split(hidden, dim=-1)
            )
            x = x + self.proj(attend(self.rope(q), self.rope(k), v.contiguous()))
            y = rms_norm(x, self.norm2)
            return x + self.down(functional.silu(self.gate(y)) * self.up(y))

        def forward(self, x: Any) -> Any:
            if mode == "full":
                return checkpoint(self.body, x, use_reentrant=False)
            return self.body(x)

    return GPTLayer() if block == "gpt" else ModernLayer()


def _rms_norm_function(torch: Any) -> Callable[[Any, Any], Any]:
    """RMSNorm as a fused autograd function: keeps its input and one fp32 1/rms per token
    (torch's own ``rms_norm`` keeps fp32 copies of a 16-bit input on a CPU)."""

    class RMSNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, weight: Any) -> Any:
            wide = torch.promote_types(x.dtype, torch.float32)  # fp32, or fp64 for fp64 input
            inverse_rms = torch.rsqrt(x.to(wide).square().mean(-1, keepdim=True) + 1e-6)
            ctx.save_for_backward(x, weight, inverse_rms)
            return (x.to(wide) * inverse_rms).to(x.dtype) * weight

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            # y = x̂·w with x̂ = x·r, r = 1/√(mean(x²) + ε):
            # dx = r·(g_x̂ − x̂·mean(g_x̂·x̂)), g_x̂ = g·w; dw = Σ_tokens g·x̂
            x, weight, inverse_rms = ctx.saved_tensors
            wide = inverse_rms.dtype
            normalized = x.to(wide) * inverse_rms
            grad_normalized = grad.to(wide) * weight.to(wide)
            mean = (grad_normalized * normalized).mean(-1, keepdim=True)
            grad_x = inverse_rms * (grad_normalized - normalized * mean)
            grad_weight = (grad.to(wide) * normalized).reshape(-1, x.shape[-1]).sum(0)
            return grad_x.to(x.dtype), grad_weight.to(weight.dtype)

    return RMSNorm.apply


# --- offloading activations to the host instead of recomputing them --------------------------


@dataclass(frozen=True)
class ActivationOffload:
    """One layer's kept activations copied to the host in the forward pass and back in the
    backward pass, against the time of that layer's work (per GPU).

    ``bytes_per_layer`` cross the host link once each way; the copy to the host must hide behind
    the layer's forward (``forward_time_s`` = forward FLOPs / (peak × ``utilization``)) and the
    copy back behind its backward (twice as long), so the forward is the binding side.
    """

    chip_name: str
    link: str
    mode: str
    bytes_per_layer: float
    link_bandwidth: float
    forward_flops: float
    peak_flops_per_s: float
    utilization: float

    def __post_init__(self) -> None:
        for label in ("chip_name", "link"):
            name_string(label, getattr(self, label))
        object.__setattr__(self, "mode", choice("mode", self.mode, RECOMPUTE_MODES))
        for label in ("bytes_per_layer", "link_bandwidth", "forward_flops", "peak_flops_per_s"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label)))
        object.__setattr__(
            self, "utilization", positive_float("utilization", self.utilization, maximum=1.0)
        )

    @property
    def transfer_time_s(self) -> float:
        """bytes / link bandwidth: one direction (to the host, or back)."""
        return self.bytes_per_layer / self.link_bandwidth

    @property
    def forward_time_s(self) -> float:
        """The layer's forward matmul FLOPs at ``utilization`` × the chip's peak."""
        return self.forward_flops / (self.peak_flops_per_s * self.utilization)

    @property
    def transfer_over_forward(self) -> float:
        """transfer time / forward time: ≤ 1 means the copy can hide behind the compute."""
        return self.transfer_time_s / self.forward_time_s

    @property
    def hidden(self) -> bool:
        return self.transfer_over_forward <= 1.0

    @property
    def exposed_time_s(self) -> float:
        """Copy time that does not hide behind the forward (0 when ``hidden``)."""
        return max(0.0, self.transfer_time_s - self.forward_time_s)

    @property
    def break_even_bandwidth(self) -> float:
        """The host-link bandwidth (bytes/s per direction) at which the copy just hides."""
        return self.bytes_per_layer / self.forward_time_s


def activation_offload(
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    chip: str | Chip,
    link_bandwidth: float | None = None,
    *,
    mode: str = "none",
    block: str = "gpt",
    attention: str = "standard",
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    precision: str = "bf16",
    utilization: float = 1.0,
) -> ActivationOffload:
    """Can a layer's kept activations go to host memory and back without costing time?

    The bytes are :func:`layer_activations` in ``mode`` (``"none"``: everything the layer keeps;
    ``"full"``: only the layer's input, the checkpoint); ``link_bandwidth`` is bytes/s per
    direction (default: the chip's host link, e.g. PCIe Gen5 x16, 63 GB/s, for an H100;
    :data:`gpuperf.hardware.NVLINK_C2C_BIDIRECTIONAL` / 2 for a Grace Hopper superchip). The
    compute time is the layer's forward matmul FLOPs at ``utilization`` (≤ 1) × the chip's
    ``precision`` peak: at the peak (the default) the test is the hardest; a layer running at 40 %
    of the peak hides 2.5× more. Per layer bytes/FLOPs does not depend on the micro-batch, so
    neither does the verdict.
    """
    the_chip = hardware.chip(chip)
    plan = layer_activations(
        seq_len, micro_batch, hidden, heads, tensor_parallel, sequence_parallel, mode,
        block=block, attention=attention,
    )  # fmt: skip
    precision = check_precision(precision)
    if link_bandwidth is None:
        if the_chip.host_link_bandwidth is None:
            raise ValueError(
                f"chip={the_chip.name!r} has no host-link bandwidth in the table: pass "
                "link_bandwidth (bytes/s per direction)"
            )
        bandwidth, link = the_chip.host_link_bandwidth, the_chip.host_link
    else:
        bandwidth = positive_float("link_bandwidth", link_bandwidth)
        link = f"{bandwidth / 1e9:g} GB/s per direction"
    return ActivationOffload(
        chip_name=the_chip.name,
        link=link,
        mode=mode,
        bytes_per_layer=plan.activation_bytes,
        link_bandwidth=bandwidth,
        forward_flops=plan.forward_flops,
        peak_flops_per_s=the_chip.peak_flops(precision),
        utilization=positive_float("utilization", utilization, maximum=1.0),
    )


__all__ = [
    "ATTENTIONS",
    "BACKWARD_PER_FORWARD",
    "BLOCKS",
    "CHECKPOINT_POLICIES",
    "PAPER_VOCAB_SIZE",
    "RECOMPUTE_MODES",
    "SWIGLU_WIDTH",
    "ActivationOffload",
    "ActivationTerm",
    "Checkpointing",
    "LayerActivations",
    "PolicyActivations",
    "RecomputeOrStore",
    "SavedTensors",
    "UpProjectionRecompute",
    "activation_offload",
    "best_checkpoint_every",
    "checkpoint_policy",
    "checkpointing",
    "hardware_flops_per_iteration",
    "layer_activation_terms",
    "layer_activations",
    "layer_forward_flops",
    "mode_in_words",
    "model_flops_per_iteration",
    "recompute_mode_for_budget",
    "recompute_or_store",
    "saved_tensor_bytes",
    "selective_recompute_flops",
    "transformer_layer",
    "up_projection_recompute",
]
