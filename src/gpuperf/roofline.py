"""The roofline model: is an operation limited by math or by moving bytes?

An operation with F FLOPs and B bytes of traffic needs at least T_math = F / peak FLOP/s and
T_comms = B / bandwidth. If the two overlap perfectly it takes max(T_math, T_comms); if they do
not overlap at all, T_math + T_comms. The two bounds are never more than 2× apart. Which one wins
depends only on the operation's arithmetic intensity F / B against the chip's *ridge point*
peak / bandwidth (Williams et al. 2009; "How to Scale Your Model", ch. 1; seed 004).

The same algebra works for any link: HBM inside a chip, or the link between two chips when a
matmul is split across them (a *network roofline*, :func:`split_matmul_time_bounds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ._validate import positive_float, positive_int, real_array, show
from .cost import OpCost, matmul
from .hardware import Chip, chip
from .units import bytes_per_element, check_precision


def _bandwidth(the_chip: Chip, bandwidth: float | None) -> float:
    if bandwidth is None:
        return the_chip.hbm_bandwidth
    return positive_float("bandwidth", bandwidth)


def ridge_point(chip_name: str | Chip, precision: str, bandwidth: float | None = None) -> float:
    """FLOP/byte at which compute and memory time are equal: peak / bandwidth.

    H100-SXM bf16 ≈ 295 FLOP/B; TPU v5e bf16 ≈ 240 FLOP/B.
    """
    the_chip = chip(chip_name)
    return the_chip.peak_flops(precision) / _bandwidth(the_chip, bandwidth)


def attainable_flops(
    intensity: float | np.ndarray,
    chip_name: str | Chip,
    precision: str,
    bandwidth: float | None = None,
) -> float | np.ndarray:
    """The roof: min(peak, bandwidth × intensity) FLOP/s, for a number or an array of them."""
    the_chip = chip(chip_name)
    peak = the_chip.peak_flops(precision)
    bw = _bandwidth(the_chip, bandwidth)
    values = np.asarray(real_array("intensity", intensity, allow_zero=False))
    result = np.minimum(peak, bw * values)
    return float(result) if result.ndim == 0 else result


@dataclass(frozen=True)
class TimeBounds:
    """Lower and upper bounds on an operation's run time on one chip.

    Stores what went in (FLOPs, bytes, the peak and bandwidth used); every time is derived.
    """

    flops: float
    n_bytes: float
    peak_flops_per_s: float
    bandwidth: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "flops", positive_float("flops", self.flops, allow_zero=True))
        for label in ("n_bytes", "peak_flops_per_s", "bandwidth"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label)))

    @property
    def t_math_s(self) -> float:
        """Time the math units need: FLOPs / peak."""
        return self.flops / self.peak_flops_per_s

    @property
    def t_comms_s(self) -> float:
        """Time the memory (or link) needs: bytes / bandwidth."""
        return self.n_bytes / self.bandwidth

    @property
    def lower_s(self) -> float:
        """Perfect overlap of math and data movement: max(T_math, T_comms)."""
        return max(self.t_math_s, self.t_comms_s)

    @property
    def upper_s(self) -> float:
        """No overlap at all: T_math + T_comms (at most 2× the lower bound)."""
        return self.t_math_s + self.t_comms_s

    @property
    def bound(self) -> Literal["compute", "memory"]:
        """Which term dominates; a tie counts as compute-bound (the math units are saturated)."""
        return "compute" if self.t_math_s >= self.t_comms_s else "memory"

    @property
    def intensity(self) -> float:
        return self.flops / self.n_bytes

    @property
    def ridge_point(self) -> float:
        return self.peak_flops_per_s / self.bandwidth

    @property
    def attainable_flops_per_s(self) -> float:
        """FLOP/s at the lower bound: min(peak, bandwidth × intensity)."""
        return self.flops / self.lower_s if self.flops else 0.0


def time_bounds(
    op: OpCost,
    chip_name: str | Chip,
    precision: str,
    *,
    bandwidth: float | None = None,
) -> TimeBounds:
    """T_math = FLOPs / peak(precision) and T_comms = bytes / bandwidth for ``op`` on a chip.

    ``precision`` picks the math rate (bf16 tensor cores, fp32 CUDA cores, ...); the bytes come
    from the cost model, which already knows the storage precision of each operand. Pass
    ``bandwidth`` to use another link than HBM (L2, PCIe, NVLink).
    """
    if not isinstance(op, OpCost):
        raise TypeError(f"op must be a gpuperf.cost.OpCost, got {type(op).__name__}")
    the_chip = chip(chip_name)
    return TimeBounds(
        flops=op.flops,
        n_bytes=op.bytes,
        peak_flops_per_s=the_chip.peak_flops(precision),
        bandwidth=_bandwidth(the_chip, bandwidth),
    )


def _stored(value: str | None, name: str, default: str) -> str:
    """A storage precision: ``default`` when ``None`` (an empty string is an error)."""
    return default if value is None else check_precision(value, name)


def critical_batch_size(
    chip_name: str | Chip,
    precision: str = "bf16",
    *,
    weight_precision: str | None = None,
    activation_precision: str | None = None,
    out_precision: str | None = None,
    d: int | None = None,
    f: int | None = None,
) -> float:
    """Token batch B above which X[B, D] · W[D, F] is compute-bound on HBM bandwidth.

    ``precision`` is the math rate; each operand is stored in its own precision (default: the
    math precision). For B ≪ D, F the weights dominate the traffic, the intensity is
    2B / bytes(W) and the matmul is compute-bound when B > ridge × bytes(W) / 2:

    * bf16 everywhere: B > ridge (TPU v5e: 240, H100: ≈ 295);
    * int8 weights, bf16 math: B > ridge / 2 (TPU v5e: 120) — seed 004, problems 1, 2 and 5.

    Given ``d`` and ``f`` the exact threshold is returned, solving
    2BDF = ridge · (a·BD + w·DF + o·BF) for B; ``math.inf`` if the matmul can never be
    compute-bound at that size (small D and F).
    """
    the_chip = chip(chip_name)
    ridge = the_chip.ridge_point(precision)
    precision = check_precision(precision)
    w = bytes_per_element(_stored(weight_precision, "weight_precision", precision))
    activation = _stored(activation_precision, "activation_precision", precision)
    a = bytes_per_element(activation)
    o = bytes_per_element(_stored(out_precision, "out_precision", activation))
    if d is None and f is None:
        return ridge * w / 2
    if d is None or f is None:
        raise ValueError("pass both d and f for the exact critical batch, or neither")
    d, f = positive_int("d", d), positive_int("f", f)
    denominator = 2.0 * d * f - ridge * (a * d + o * f)
    if denominator <= 0:
        return math.inf
    return ridge * w * d * f / denominator


def matmul_flops_vs_batch(
    batch: np.ndarray,
    d: int,
    f: int,
    chip_name: str | Chip,
    precision: str = "bf16",
    *,
    weight_precision: str | None = None,
) -> np.ndarray:
    """Roofline FLOP/s of X[B, D] · W[D, F] for each B in ``batch`` (exact byte counts).

    The curve of seed 004's problem 3: it rises linearly with B until the critical batch, then
    stays flat at the peak.
    """
    d, f = positive_int("d", d), positive_int("f", f)
    batch = np.asarray(batch, dtype=object) if isinstance(batch, list | tuple) else batch
    batch = np.asarray(batch)
    if batch.ndim != 1 or batch.size == 0:
        raise ValueError(f"batch={show(batch)} must be a non-empty 1-D array of batch sizes")
    values = []
    for i, b in enumerate(batch.tolist()):
        size = positive_int(f"batch[{i}]", b)
        op = matmul(size, f, d, precision, b_precision=weight_precision)
        values.append(time_bounds(op, chip_name, precision).attainable_flops_per_s)
    return np.array(values)


def _link_bandwidth(the_chip: Chip, link_bandwidth: float | None) -> float:
    if link_bandwidth is not None:
        return positive_float("link_bandwidth", link_bandwidth)
    # The link one chip sends over to its peer: one ICI link on a TPU torus, all of NVLink
    # through the NVSwitches on a GPU (Chip.pairwise_link_bandwidth).
    pairwise = the_chip.pairwise_link_bandwidth()
    if pairwise is None:
        raise ValueError(
            f"{the_chip.name} has no chip-to-chip link in the table; pass link_bandwidth= "
            "(bytes/s per direction), e.g. the host link"
        )
    return pairwise


def split_matmul_time_bounds(
    b: int,
    d: int,
    f: int,
    chip_name: str | Chip,
    precision: str = "bf16",
    *,
    n_chips: int = 2,
    link_bandwidth: float | None = None,
) -> TimeBounds:
    """Network roofline of X[B, D] · W[D, F] with D split evenly over ``n_chips`` chips.

    Each chip multiplies its D/n slice (2·B·D·F / n FLOPs), then the partial sums of shape
    [B, F] are added across chips. A ring all-reduce sends 2(n − 1)/n · B·F elements per chip
    over its link (for two chips: each sends its B·F partial sum once). The comms time uses
    the link, not HBM: the result is compute-bound when D > (n − 1)·bytes·peak / link bandwidth,
    i.e. D > 2·peak / bandwidth for two chips in bf16 (seed 004's example link of 4.5e10 B/s on a
    TPU v5e: D > 8755).

    ``link_bandwidth=None`` uses :meth:`Chip.pairwise_link_bandwidth`: one ICI link on a TPU
    (50 GB/s per direction on a v5e), all of NVLink on a GPU. A collective that drives several
    links at once (a bidirectional ring, a 2D torus) passes its own figure.
    """
    the_chip = chip(chip_name)
    b, d, f = positive_int("b", b), positive_int("d", d), positive_int("f", f)
    n_chips = positive_int("n_chips", n_chips, minimum=2)
    size = bytes_per_element(precision)
    return TimeBounds(
        flops=2.0 * b * d * f / n_chips,
        n_bytes=2.0 * (n_chips - 1) / n_chips * b * f * size,
        peak_flops_per_s=the_chip.peak_flops(precision),
        bandwidth=_link_bandwidth(the_chip, link_bandwidth),
    )


def critical_split_dim(
    chip_name: str | Chip,
    precision: str = "bf16",
    *,
    n_chips: int = 2,
    link_bandwidth: float | None = None,
) -> float:
    """Contraction size D above which a D-split matmul is compute-bound on the link.

    (n − 1) · bytes · peak / link bandwidth; independent of B and F. The default link is the
    pairwise one (:meth:`Chip.pairwise_link_bandwidth`): for two TPU v5e chips one 50 GB/s ICI
    link, so D > 7,880 (not the 1,970 that all four links would give).
    """
    the_chip = chip(chip_name)
    n_chips = positive_int("n_chips", n_chips, minimum=2)
    size = bytes_per_element(precision)
    return (
        (n_chips - 1)
        * size
        * the_chip.peak_flops(precision)
        / _link_bandwidth(the_chip, link_bandwidth)
    )


__all__ = [
    "TimeBounds",
    "attainable_flops",
    "critical_batch_size",
    "critical_split_dim",
    "matmul_flops_vs_batch",
    "ridge_point",
    "split_matmul_time_bounds",
    "time_bounds",
]
