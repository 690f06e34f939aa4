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
fused kernels recompute GELU rather than save it (seed 002; Dao et al. 2022).

Limits: identical layers; the peak ignores the gradient buffers and the transient workspace of
each kernel; the pointwise model assumes the backward kernel is memory-bound and fused.
:func:`saved_tensor_bytes` measures, rather than models, the bytes autograd keeps for backward.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import hardware
from ._validate import MAX_PRODUCT, name_string, positive_float, positive_int, show
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


__all__ = [
    "BACKWARD_PER_FORWARD",
    "Checkpointing",
    "RecomputeOrStore",
    "SavedTensors",
    "best_checkpoint_every",
    "checkpointing",
    "recompute_or_store",
    "saved_tensor_bytes",
]
