"""Collectives: what an all-reduce, an all-gather and a reduce-scatter cost, and how to hide them.

Data-parallel training ends every backward pass with an **all-reduce** of the gradients: each of
the p ranks (GPUs) holds a message of S bytes, and each must end with the element-wise sum of
all p messages. Two halves make it up. A **reduce-scatter** leaves rank k with the sum of the
k-th 1/p of the message; an **all-gather** hands every rank's 1/p to every other rank.

**The ring.** Arrange the ranks in a ring and cut the message into p chunks. In each of p − 1
steps every rank sends one chunk (S/p bytes) to its right neighbour and adds the chunk arriving
from its left: after p − 1 steps each rank owns one fully reduced chunk (the reduce-scatter).
p − 1 more steps pass the reduced chunks around (the all-gather). Every rank sends, and receives,
2(p − 1)/p · S bytes in 2(p − 1) steps; a reduce-scatter or an all-gather alone is half of that.

**The α–β model.** With a fixed cost α per step and a link of B bytes/s per direction per rank,

    ring all-reduce:            t = 2(p − 1)·α + 2(p − 1)/p · S/B
    ring all-gather / r-scatter: t =  (p − 1)·α +  (p − 1)/p · S/B
    tree all-reduce:            t = 2⌈log₂ p⌉·α + 2·S/B

The tree is a *double binary tree*, counted here (a model, not a measurement): the message is
split in two halves, each reduced up one binary tree and broadcast back down it, and the trees
are built so that every rank is an inner node of one and a leaf of the other. An inner node
receives two half-messages and sends one on the way up, and the reverse on the way down; a leaf
sends one and receives one, so each rank sends 2·S bytes in all, a factor p/(p − 1) more than
the ring, but its latency grows with log₂ p instead of p. Pipelining the chunks is assumed, so
the depth is paid once. Small messages favour the tree, large ones the ring
(:func:`ring_tree_crossover_bytes`).

**algbw and busbw.** NCCL's tests report two rates for a collective of S bytes that took t
seconds (nccl-tests, doc/PERFORMANCE.md): the *algorithm bandwidth* algbw = S/t, the rate at which
the message moves (the one that gives the time), and the *bus bandwidth*
busbw = algbw · factor, with factor 2(p − 1)/p for an all-reduce and (p − 1)/p for an
all-gather, a reduce-scatter or an all-to-all (:func:`bus_bandwidth_factor`). The factor is the
traffic per rank of the bandwidth-optimal algorithm over S, so busbw can be compared with the
link's B whatever p is. For the same reason the **half-bandwidth size** n½ of a collective, the
message size at which it reaches half its peak rate, is t₀ · algbw, never t₀ · busbw: for a ring
all-reduce n½ = 2(p − 1)α · B·p/(2(p − 1)) = p·α·B (:meth:`CollectiveTime.half_bandwidth_bytes`,
:func:`half_bandwidth_message_bytes`).

**Overlap.** Gradients become ready layer by layer during the backward pass, so frameworks
all-reduce them in buckets while the rest of the backward runs. :func:`bucketed_allreduce`
quantifies the exposed (not hidden) communication of n equal buckets issued in order, one at a
time, as they become ready: small buckets pay t₀ many times; one big bucket cannot start before
the backward ends. :func:`exposed_time` is the one-line version: max(0, comm − overlappable
compute).

**Sharded data parallelism** (ZeRO, Rajbhandari et al. 2020; PyTorch FSDP, Zhao et al. 2023).
:func:`data_parallel_step` lists the collectives one training step needs per ZeRO stage and
times them with :func:`collective_time`. Stages 1 and 2 shard the optimizer state (and the
gradients) and replace the all-reduce by a reduce-scatter of the gradients and an all-gather
of the updated weights: the same bytes, 2Ψ·(p − 1)/p per rank for Ψ bytes of parameters.
Stage 3 (FSDP's full sharding) also shards the weights, so they are gathered before each
layer's forward *and again* before its backward: 3Ψ·(p − 1)/p, 1.5 times the traffic.

**Two levels and in-network reduction.** :func:`hierarchical_allreduce` reduces in two levels:
a reduce-scatter inside each node (fast links), an all-reduce of each GPU's 1/g share across
the nodes (one NIC per GPU), an all-gather inside the node, pipelined over chunks so that both
levels' links work at once. Each NIC then carries 2(n − 1)/n · S/g bytes instead of the
2(p − 1)/p · S of one flat ring through it; NCCL gets the same per-NIC load by running one
ring per NIC. With ``in_network=True`` the switches add
the shares as they pass (InfiniBand SHARP, NVLink SHARP): each GPU sends its share once and
receives the sum once, S/g per NIC, half the ring's bytes.

**Mixture-of-experts all-to-all.** :func:`moe_all_to_all` counts what expert parallelism moves
per layer: every token is sent to the ranks holding its experts (dispatch) and the expert
outputs are sent back (combine); with uniform routing over p ranks a (p − 1)/p share of the
copies leaves the rank.

**NVLink domains.** The GPUs that NVLink switches join reach one another at their full NVLink
rate; beyond the domain, traffic goes through each GPU's NIC. An HGX node is an 8-GPU domain; a
GB200 NVL72 rack is one 72-GPU domain of fifth-generation NVLink (:func:`nvlink_domains`).
:func:`domain_all_to_all` splits an all-to-all's bytes by where they go: of the S bytes a rank
holds for p ranks, (g − 1)/p · S go to the other g − 1 GPUs of its domain over NVLink and
(p − g)/p · S leave it through its NIC, both at once, so the slower share sets the time. An
expert-parallel group that fits in one domain sends nothing through the NICs.

Limits: one flat ring or tree over identical links (or two levels of them); no contention; an
in-switch reduction only where asked for; and, except in :mod:`gpuperf.nccl`, communication
kernels are assumed not to slow the computation they overlap with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from ._validate import choice, flag, name_string, positive_float, positive_int
from .hardware import NETWORK_BANDWIDTH, chip
from .units import bytes_per_element, check_precision

#: Collectives whose bus-bandwidth factor nccl-tests defines (and this module converts).
COLLECTIVES: tuple[str, ...] = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")
#: Collectives the ring / tree cost model covers.
MODELLED_COLLECTIVES: tuple[str, ...] = ("all-reduce", "all-gather", "reduce-scatter")
#: Algorithms of the cost model; ``"tree"`` is an all-reduce algorithm only.
ALGORITHMS: tuple[str, ...] = ("ring", "tree")
#: PyTorch DDP's gradient buckets (``torch/nn/parallel/distributed.py``): ``bucket_cap_mb``
#: defaults to 25 MiB, and with the defaults the *first* bucket — the last layers' gradients,
#: ready first — is capped at ``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES`` = 1 MiB so its
#: all-reduce starts early.
DDP_BUCKET_CAP_BYTES = 25 * 1024**2
DDP_FIRST_BUCKET_BYTES = 1024**2


def _collective(collective: object, options: tuple[str, ...] = COLLECTIVES) -> str:
    return choice("collective", collective, options)


def _ranks(ranks: object) -> int:
    return positive_int("ranks", ranks, minimum=2)


def bus_bandwidth_factor(collective: str, ranks: int) -> float:
    """busbw / algbw as nccl-tests define it: 2(p − 1)/p for an all-reduce, (p − 1)/p otherwise.

    8 ranks: all-reduce 1.75, all-gather / reduce-scatter / all-to-all 0.875. ``ranks`` ≥ 2.
    """
    collective = _collective(collective)
    ranks = _ranks(ranks)
    share = (ranks - 1) / ranks
    return 2 * share if collective == "all-reduce" else share


def algorithm_bandwidth(bus_bandwidth: float, collective: str, ranks: int) -> float:
    """The rate a message moves at, S/t, from a measured bus bandwidth: busbw / factor.

    For an all-reduce this is :func:`gpuperf.memory.allreduce_algorithm_bandwidth`.
    """
    bus_bandwidth = positive_float("bus_bandwidth", bus_bandwidth)
    return bus_bandwidth / bus_bandwidth_factor(collective, ranks)


def bus_bandwidth(algorithm_bandwidth: float, collective: str, ranks: int) -> float:
    """The bus bandwidth NCCL's tests would report for a message rate S/t: algbw · factor."""
    algorithm_bandwidth = positive_float("algorithm_bandwidth", algorithm_bandwidth)
    return algorithm_bandwidth * bus_bandwidth_factor(collective, ranks)


def half_bandwidth_message_bytes(
    latency_s: float, bus_bandwidth: float, collective: str, ranks: int
) -> float:
    """n½ = t₀ · algbw: the message size at which a collective reaches half its peak rate.

    ``latency_s`` is the time of the smallest message (t₀), ``bus_bandwidth`` the large-message
    bus bandwidth. Multiplying t₀ by the bus bandwidth instead overstates n½ by the factor.
    """
    latency_s = positive_float("latency_s", latency_s, allow_zero=True)
    return latency_s * algorithm_bandwidth(bus_bandwidth, collective, ranks)


def time_from_bus_bandwidth(
    message_bytes: float, latency_s: float, bus_bandwidth: float, collective: str, ranks: int
) -> float:
    """t = t₀ + S / algbw for a collective described by two measurements (t₀ and busbw)."""
    message_bytes = positive_float("message_bytes", message_bytes, allow_zero=True)
    latency_s = positive_float("latency_s", latency_s, allow_zero=True)
    return latency_s + message_bytes / algorithm_bandwidth(bus_bandwidth, collective, ranks)


def steps(collective: str, ranks: int, algorithm: str = "ring") -> int:
    """Sequential communication steps: ring 2(p − 1) (all-reduce) or p − 1; tree 2⌈log₂ p⌉."""
    collective = _collective(collective, MODELLED_COLLECTIVES)
    ranks = _ranks(ranks)
    algorithm = choice("algorithm", algorithm, ALGORITHMS)
    if algorithm == "tree":
        if collective != "all-reduce":
            raise ValueError(
                f"algorithm='tree' models an all-reduce only, not collective={collective!r}; "
                "use algorithm='ring'"
            )
        return 2 * (ranks - 1).bit_length()  # 2⌈log₂ p⌉, exact for integers
    return 2 * (ranks - 1) if collective == "all-reduce" else ranks - 1


def traffic_per_byte(collective: str, ranks: int, algorithm: str = "ring") -> float:
    """Bytes each rank sends (and receives) per byte of message.

    Ring: 2(p − 1)/p for an all-reduce, (p − 1)/p for an all-gather or a reduce-scatter (the
    bus-bandwidth factor: the ring is bandwidth-optimal). Double binary tree all-reduce: 2.
    """
    steps(collective, ranks, algorithm)  # validates the combination
    if algorithm == "tree":
        return 2.0
    return bus_bandwidth_factor(collective, ranks)


@dataclass(frozen=True)
class CollectiveTime:
    """The α–β cost of one collective: ``steps``·α + ``traffic_per_byte``·S / B.

    ``link_bandwidth`` is B, bytes/s each rank can send (and receive) at once;
    ``step_latency_s`` is α, the fixed cost of one step.
    """

    collective: str
    algorithm: str
    ranks: int
    message_bytes: float
    link_bandwidth: float
    step_latency_s: float
    steps: int
    traffic_per_byte: float

    def __post_init__(self) -> None:
        _collective(self.collective, MODELLED_COLLECTIVES)
        choice("algorithm", self.algorithm, ALGORITHMS)
        _ranks(self.ranks)
        positive_float("message_bytes", self.message_bytes, allow_zero=True)
        positive_float("link_bandwidth", self.link_bandwidth)
        positive_float("step_latency_s", self.step_latency_s, allow_zero=True)
        positive_int("steps", self.steps)
        positive_float("traffic_per_byte", self.traffic_per_byte)

    @property
    def bytes_per_rank(self) -> float:
        """Bytes each rank sends (and receives)."""
        return self.traffic_per_byte * self.message_bytes

    @property
    def latency_s(self) -> float:
        """The latency term: steps · α."""
        return self.steps * self.step_latency_s

    @property
    def bandwidth_s(self) -> float:
        """The bandwidth term: bytes per rank / B."""
        return self.bytes_per_rank / self.link_bandwidth

    @property
    def time_s(self) -> float:
        return self.latency_s + self.bandwidth_s

    @property
    def algorithm_bandwidth(self) -> float:
        """S / t: the rate the message moves at (0 for an empty message)."""
        return self.message_bytes / self.time_s if self.message_bytes else 0.0

    @property
    def bus_bandwidth(self) -> float:
        """algbw · the nccl-tests factor: what ``all_reduce_perf`` would print as busbw."""
        return self.algorithm_bandwidth * bus_bandwidth_factor(self.collective, self.ranks)

    @property
    def peak_algorithm_bandwidth(self) -> float:
        """The large-message limit of algbw: B / traffic_per_byte."""
        return self.link_bandwidth / self.traffic_per_byte

    @property
    def half_bandwidth_bytes(self) -> float:
        """n½ = latency term × peak algbw (for a ring: p·α·B, whatever the collective)."""
        return self.latency_s * self.peak_algorithm_bandwidth


def collective_time(
    collective: str,
    message_bytes: float,
    ranks: int,
    link_bandwidth: float,
    step_latency_s: float,
    algorithm: str = "ring",
) -> CollectiveTime:
    """α–β time of a ring (or, for an all-reduce, double-binary-tree) collective.

    ``message_bytes`` is S as nccl-tests count it: the whole array (for an all-gather, the
    gathered output; for a reduce-scatter, the input each rank holds). 8 ranks, 1 GB, a
    450 GB/s link, α = 1 µs, ring all-reduce: 14 µs + 1.75 GB / 450 GB/s ≈ 3.90 ms.
    """
    link_bandwidth = positive_float("link_bandwidth", link_bandwidth)
    step_latency_s = positive_float("step_latency_s", step_latency_s, allow_zero=True)
    message_bytes = positive_float("message_bytes", message_bytes, allow_zero=True)
    n_steps = steps(collective, ranks, algorithm)
    return CollectiveTime(
        collective=collective,
        algorithm=algorithm,
        ranks=int(ranks),
        message_bytes=message_bytes,
        link_bandwidth=link_bandwidth,
        step_latency_s=step_latency_s,
        steps=n_steps,
        traffic_per_byte=traffic_per_byte(collective, ranks, algorithm),
    )


def collective_time_curve(
    collective: str,
    sizes: object,
    ranks: int,
    link_bandwidth: float,
    step_latency_s: float,
    algorithm: str = "ring",
) -> np.ndarray:
    """:func:`collective_time`'s ``time_s`` for an array of message sizes (for plots)."""
    single = collective_time(collective, 0, ranks, link_bandwidth, step_latency_s, algorithm)
    array = np.asarray(sizes)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.number) or array.size == 0:
        raise ValueError(f"sizes={sizes!r} must be finite numbers ≥ 0")
    array = array.astype(float)
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(f"sizes={sizes!r} must be finite numbers ≥ 0")
    return single.latency_s + single.traffic_per_byte * array / single.link_bandwidth


def ring_tree_crossover_bytes(ranks: int, link_bandwidth: float, step_latency_s: float) -> float:
    """All-reduce size below which the tree beats the ring: p·α·B·(p − 1 − ⌈log₂ p⌉).

    Equate 2(p − 1)α + 2(p − 1)/p·S/B with 2⌈log₂ p⌉α + 2S/B. For p ≤ 3 the two latency terms
    are equal and the ring is never slower: 0.
    """
    ranks = _ranks(ranks)
    link_bandwidth = positive_float("link_bandwidth", link_bandwidth)
    step_latency_s = positive_float("step_latency_s", step_latency_s, allow_zero=True)
    extra_steps = (ranks - 1) - (ranks - 1).bit_length()
    return max(0, extra_steps) * ranks * step_latency_s * link_bandwidth


def step_latency_from_collective_latency(
    latency_s: float, collective: str, ranks: int, algorithm: str = "ring"
) -> float:
    """α = t₀ / steps: the per-step cost implied if a measured small-message time t₀ were all
    steps of one flat ring (or tree). A derived teaching value, not a measurement of a hop."""
    latency_s = positive_float("latency_s", latency_s, allow_zero=True)
    return latency_s / steps(collective, ranks, algorithm)


def exposed_time(communication_s: float, overlappable_compute_s: float) -> float:
    """Communication left on the critical path: max(0, comm − compute it overlaps with)."""
    communication_s = positive_float("communication_s", communication_s, allow_zero=True)
    overlappable_compute_s = positive_float(
        "overlappable_compute_s", overlappable_compute_s, allow_zero=True
    )
    return max(0.0, communication_s - overlappable_compute_s)


@dataclass(frozen=True)
class BucketedAllReduce:
    """Gradients all-reduced in ``n_buckets`` equal buckets during a backward pass.

    Bucket i (0-based) is ready at (i + 1)·T/n, T = ``backward_s``; buckets are all-reduced one
    at a time in order, each taking ``bucket_time_s`` (c). The last one finishes at
    max(T + c, T/n + n·c) after the backward starts, so the exposed communication is
    max(c, n·c − (n − 1)·T/n): the last bucket is never hidden, and n·t₀ grows with n.
    """

    gradient_bytes: float
    n_buckets: int
    bucket_time_s: float
    backward_s: float

    def __post_init__(self) -> None:
        positive_float("gradient_bytes", self.gradient_bytes)
        positive_int("n_buckets", self.n_buckets)
        positive_float("bucket_time_s", self.bucket_time_s, bounded=False)
        positive_float("backward_s", self.backward_s, allow_zero=True)

    @property
    def bucket_bytes(self) -> float:
        return self.gradient_bytes / self.n_buckets

    @property
    def communication_s(self) -> float:
        """All the all-reduce time, hidden or not: n · c."""
        return self.n_buckets * self.bucket_time_s

    @property
    def finish_s(self) -> float:
        """When the last bucket's all-reduce ends, counted from the start of the backward."""
        n, c, t = self.n_buckets, self.bucket_time_s, self.backward_s
        return max(t + c, t / n + n * c)

    @property
    def exposed_s(self) -> float:
        """Communication time after the backward has finished: finish − T."""
        n, c, t = self.n_buckets, self.bucket_time_s, self.backward_s
        return max(c, n * c - (n - 1) * t / n)

    @property
    def hidden_fraction(self) -> float:
        """Share of the communication that ran under the backward pass."""
        return 1 - self.exposed_s / self.communication_s


def bucketed_allreduce(
    gradient_bytes: float,
    bucket_bytes: float,
    backward_s: float,
    latency_s: float,
    bus_bandwidth: float,
    ranks: int,
) -> BucketedAllReduce:
    """Exposed all-reduce time of gradients sent in buckets of about ``bucket_bytes``.

    n = ⌈gradient_bytes / bucket_bytes⌉ equal buckets; each takes t₀ + (G/n) / algbw with
    algbw = busbw · p / (2(p − 1)) (``latency_s`` = t₀ and ``bus_bandwidth`` measured, e.g.
    by nccl-tests). See :class:`BucketedAllReduce` for the schedule.
    """
    gradient_bytes = positive_float("gradient_bytes", gradient_bytes)
    bucket_bytes = positive_float("bucket_bytes", bucket_bytes)
    backward_s = positive_float("backward_s", backward_s, allow_zero=True)
    n_buckets = math.ceil(gradient_bytes / bucket_bytes)
    if n_buckets > 10**9:
        raise ValueError(
            f"bucket_bytes={bucket_bytes!r} splits gradient_bytes={gradient_bytes!r} into "
            f"{n_buckets} buckets; use at most 10⁹ buckets"
        )
    bucket_time_s = time_from_bus_bandwidth(
        gradient_bytes / n_buckets, latency_s, bus_bandwidth, "all-reduce", ranks
    )
    return BucketedAllReduce(gradient_bytes, n_buckets, bucket_time_s, backward_s)


# ------------------------------------------------------------------ sharded data parallelism

#: ZeRO stages: 0 is plain data parallelism (DDP), 3 shards the weights too (FSDP FULL_SHARD).
ZERO_STAGES: tuple[int, ...] = (0, 1, 2, 3)


def data_parallel_collectives(stage: int) -> tuple[tuple[str, str], ...]:
    """The collectives of one data-parallel training step at ZeRO ``stage``: (collective, why).

    Stage 0 all-reduces the gradients. Stages 1 and 2 keep 1/p of the optimizer state (and of
    the gradients) per rank: a reduce-scatter leaves each rank the summed gradients of its
    shard, and an all-gather hands the updated weights to everyone. Stage 3 keeps 1/p of the
    weights as well, so each layer's weights are all-gathered before its forward and, having
    been freed, again before its backward (Rajbhandari et al. 2020, §7; FSDP FULL_SHARD).
    """
    stage = choice("stage", stage, ZERO_STAGES)
    if stage == 0:
        return (("all-reduce", "gradients, after the backward pass"),)
    if stage in (1, 2):
        return (
            ("reduce-scatter", "gradients: each rank keeps the sum for its shard"),
            ("all-gather", "updated weights, after the optimizer step"),
        )
    return (
        ("all-gather", "weights of each layer, before its forward"),
        ("all-gather", "the same weights again, before its backward"),
        ("reduce-scatter", "gradients, after each layer's backward"),
    )


@dataclass(frozen=True)
class DataParallelStep:
    """The communication of one data-parallel step: one :class:`CollectiveTime` per collective
    of :func:`data_parallel_collectives`, all over the same ranks and link."""

    stage: int
    parts: tuple[CollectiveTime, ...]
    purposes: tuple[str, ...]

    def __post_init__(self) -> None:
        choice("stage", self.stage, ZERO_STAGES)
        if not isinstance(self.parts, tuple) or not all(
            isinstance(part, CollectiveTime) for part in self.parts
        ):
            raise TypeError(f"parts={self.parts!r} must be a tuple of CollectiveTime")
        if not isinstance(self.purposes, tuple) or len(self.purposes) != len(self.parts):
            raise ValueError(f"purposes={self.purposes!r} must name each of the parts")

    @property
    def time_s(self) -> float:
        """The collectives one after the other (none overlapped with compute)."""
        return sum(part.time_s for part in self.parts)

    @property
    def bytes_per_rank(self) -> float:
        return sum(part.bytes_per_rank for part in self.parts)

    @property
    def traffic_per_byte(self) -> float:
        """Bytes each rank sends per byte of parameters: 2(p − 1)/p, or 3(p − 1)/p at stage 3."""
        return sum(part.traffic_per_byte for part in self.parts)


def data_parallel_step(
    parameter_bytes: float,
    ranks: int,
    link_bandwidth: float,
    step_latency_s: float,
    stage: int = 0,
) -> DataParallelStep:
    """α–β time of the collectives of one data-parallel step at ZeRO ``stage`` (ring).

    ``parameter_bytes`` is Ψ, the model's weights (and gradients) in bytes. 2 GB on 8 ranks of
    450 GB/s with α ≈ 0.92 µs: stage 0–2 ≈ 7.79 ms, stage 3 ≈ 11.69 ms (1.5 ×).
    """
    parameter_bytes = positive_float("parameter_bytes", parameter_bytes, allow_zero=True)
    purposes = data_parallel_collectives(stage)
    parts = tuple(
        collective_time(name, parameter_bytes, ranks, link_bandwidth, step_latency_s)
        for name, _ in purposes
    )
    return DataParallelStep(int(stage), parts, tuple(why for _, why in purposes))


# ------------------------------------------------------------- hierarchical and in-network


@dataclass(frozen=True)
class HierarchicalAllReduce:
    """A two-level all-reduce: reduce-scatter in the node, all-reduce across nodes of each
    GPU's 1/g share, all-gather in the node (g = ``gpus_per_node``, n = ``nodes``).

    The levels are pipelined over chunks, as NCCL runs them: the in-node links and the NICs
    work at the same time, so the time is the latency terms plus the *larger* of the two
    levels' bandwidth terms (:attr:`sequential_s` adds them instead).
    """

    message_bytes: float
    gpus_per_node: int
    nodes: int
    intra_bandwidth: float
    inter_bandwidth: float
    intra_latency_s: float
    inter_latency_s: float
    in_network: bool

    def __post_init__(self) -> None:
        positive_float("message_bytes", self.message_bytes, allow_zero=True)
        positive_int("gpus_per_node", self.gpus_per_node, 1, MAX_GPUS_PER_NODE)
        positive_int("nodes", self.nodes, 1)
        if self.gpus_per_node * self.nodes < 2:
            raise ValueError(
                f"gpus_per_node={self.gpus_per_node} × nodes={self.nodes} must be ≥ 2 ranks"
            )
        positive_float("intra_bandwidth", self.intra_bandwidth)
        positive_float("inter_bandwidth", self.inter_bandwidth)
        positive_float("intra_latency_s", self.intra_latency_s, allow_zero=True)
        positive_float("inter_latency_s", self.inter_latency_s, allow_zero=True)
        flag("in_network", self.in_network)

    @property
    def ranks(self) -> int:
        return self.gpus_per_node * self.nodes

    @property
    def share_bytes(self) -> float:
        """Each GPU's share after the in-node reduce-scatter: S / g."""
        return self.message_bytes / self.gpus_per_node

    @property
    def intra_bytes_per_gpu(self) -> float:
        """Bytes each GPU sends inside the node: reduce-scatter + all-gather, 2(g − 1)/g · S."""
        g = self.gpus_per_node
        return 2 * (g - 1) / g * self.message_bytes

    @property
    def inter_bytes_per_gpu(self) -> float:
        """Bytes each GPU's NIC sends across nodes: 2(n − 1)/n · S/g (ring), S/g in-network."""
        if self.nodes == 1:
            return 0.0
        if self.in_network:
            return self.share_bytes
        return 2 * (self.nodes - 1) / self.nodes * self.share_bytes

    @property
    def latency_s(self) -> float:
        """2(g − 1) in-node steps, and 2(n − 1) ring steps across nodes (2 in-network: up to
        the switch and back)."""
        inter_steps = 0 if self.nodes == 1 else 2 if self.in_network else 2 * (self.nodes - 1)
        return (
            2 * (self.gpus_per_node - 1) * self.intra_latency_s
            + inter_steps * self.inter_latency_s
        )

    @property
    def intra_bandwidth_s(self) -> float:
        return self.intra_bytes_per_gpu / self.intra_bandwidth

    @property
    def inter_bandwidth_s(self) -> float:
        return self.inter_bytes_per_gpu / self.inter_bandwidth

    @property
    def time_s(self) -> float:
        """Pipelined: latency + max(in-node bandwidth term, cross-node bandwidth term)."""
        return self.latency_s + max(self.intra_bandwidth_s, self.inter_bandwidth_s)

    @property
    def sequential_s(self) -> float:
        """The three phases one after the other: latency + both bandwidth terms."""
        return self.latency_s + self.intra_bandwidth_s + self.inter_bandwidth_s

    @property
    def bottleneck(self) -> str:
        """The level whose links set the pipelined time: ``"node"`` or ``"network"``."""
        return "network" if self.inter_bandwidth_s > self.intra_bandwidth_s else "node"

    @property
    def algorithm_bandwidth(self) -> float:
        return self.message_bytes / self.time_s if self.time_s else 0.0

    @property
    def bus_bandwidth(self) -> float:
        """What nccl-tests would print: algbw · 2(p − 1)/p over all g·n ranks."""
        return self.algorithm_bandwidth * bus_bandwidth_factor("all-reduce", self.ranks)


#: Largest number of GPUs in one node the model accepts (NVL72 racks have 72).
MAX_GPUS_PER_NODE = 72


def hierarchical_allreduce(
    message_bytes: float,
    gpus_per_node: int,
    nodes: int,
    intra_bandwidth: float,
    inter_bandwidth: float,
    intra_latency_s: float = 0.0,
    inter_latency_s: float = 0.0,
    in_network: bool = False,
) -> HierarchicalAllReduce:
    """Two-level all-reduce of ``message_bytes`` over ``gpus_per_node`` × ``nodes`` GPUs.

    ``intra_bandwidth`` is each GPU's link inside the node (NVLink), ``inter_bandwidth`` its
    NIC, both bytes/s per direction; the latencies are α per ring step at each level.
    ``in_network``: the switches reduce (SHARP), so the cross-node phase sends S/g once.
    """
    return HierarchicalAllReduce(
        message_bytes=positive_float("message_bytes", message_bytes, allow_zero=True),
        gpus_per_node=positive_int("gpus_per_node", gpus_per_node, 1, MAX_GPUS_PER_NODE),
        nodes=positive_int("nodes", nodes, 1),
        intra_bandwidth=positive_float("intra_bandwidth", intra_bandwidth),
        inter_bandwidth=positive_float("inter_bandwidth", inter_bandwidth),
        intra_latency_s=positive_float("intra_latency_s", intra_latency_s, allow_zero=True),
        inter_latency_s=positive_float("inter_latency_s", inter_latency_s, allow_zero=True),
        in_network=flag("in_network", in_network),
    )


# ------------------------------------------------------------------ mixture-of-experts


@dataclass(frozen=True)
class MoEAllToAll:
    """Bytes and time of one MoE layer's dispatch and combine on one rank (uniform routing)."""

    tokens: int
    d_model: int
    copies_per_token: int
    ranks: int
    dispatch_bytes_per_element: float
    combine_bytes_per_element: float
    bandwidth: float

    def __post_init__(self) -> None:
        for name in ("tokens", "d_model", "copies_per_token"):
            positive_int(name, getattr(self, name))
        _ranks(self.ranks)
        positive_float("dispatch_bytes_per_element", self.dispatch_bytes_per_element)
        positive_float("combine_bytes_per_element", self.combine_bytes_per_element)
        positive_float("bandwidth", self.bandwidth)

    @property
    def remote_fraction(self) -> float:
        """Share of the copies whose expert lives on another rank: (p − 1)/p."""
        return (self.ranks - 1) / self.ranks

    @property
    def dispatch_bytes(self) -> float:
        """Bytes this rank sends out: tokens · copies · d_model · bytes · (p − 1)/p."""
        elements = float(self.tokens) * self.copies_per_token * self.d_model
        return elements * self.dispatch_bytes_per_element * self.remote_fraction

    @property
    def combine_bytes(self) -> float:
        """Bytes of expert outputs sent back (the same count, in the combine precision)."""
        elements = float(self.tokens) * self.copies_per_token * self.d_model
        return elements * self.combine_bytes_per_element * self.remote_fraction

    @property
    def bytes(self) -> float:
        return self.dispatch_bytes + self.combine_bytes

    @property
    def time_s(self) -> float:
        """Bytes sent to other ranks over ``bandwidth`` (an all-to-all's busbw)."""
        return self.bytes / self.bandwidth


def moe_all_to_all(
    tokens: int,
    d_model: int,
    copies_per_token: int,
    ranks: int,
    bandwidth: float,
    dispatch_precision: str = "bf16",
    combine_precision: str = "bf16",
) -> MoEAllToAll:
    """Expert-parallel dispatch + combine of one MoE layer for ``tokens`` tokens on one rank.

    ``copies_per_token`` is how many destinations each token is sent to: its top-k experts, or
    fewer when copies bound for one node are sent once and forwarded there. ``bandwidth`` is
    the rate at which a rank sends to the others (nccl-tests' all-to-all busbw).
    """
    return MoEAllToAll(
        tokens=positive_int("tokens", tokens),
        d_model=positive_int("d_model", d_model),
        copies_per_token=positive_int("copies_per_token", copies_per_token),
        ranks=_ranks(ranks),
        dispatch_bytes_per_element=bytes_per_element(
            check_precision(dispatch_precision, "dispatch_precision")
        ),
        combine_bytes_per_element=bytes_per_element(
            check_precision(combine_precision, "combine_precision")
        ),
        bandwidth=positive_float("bandwidth", bandwidth),
    )


# ---------------------------------------------------------------------------- NVLink domains


@dataclass(frozen=True)
class NVLinkDomain:
    """GPUs joined by NVLink switches: ``gpus`` of ``chip_name``, each at its NVLink rate."""

    label: str
    chip_name: str
    gpus: int
    source: str

    def __post_init__(self) -> None:
        name_string("label", self.label)
        chip(self.chip_name)
        positive_int("gpus", self.gpus, 2, MAX_GPUS_PER_NODE)
        name_string("source", self.source)

    @property
    def bandwidth(self) -> float:
        """Each GPU's NVLink bandwidth, bytes/s per direction (the hardware table)."""
        found = chip(self.chip_name).interconnect_bandwidth
        assert found is not None
        return found


@cache
def nvlink_domains() -> tuple[NVLinkDomain, ...]:
    """The NVLink domains the course compares: an HGX H100 node (8 GPUs, NVLink 4; the
    Playbook's AWS p5 nodes), an HGX B200 node (8 GPUs, NVLink 5) and a GB200 NVL72 rack (72
    GPUs in one NVLink 5 domain), as NVIDIA's Blackwell datasheet gives the last two."""
    return (
        NVLinkDomain("HGX H100 (8 GPUs, NVLink 4)", "H100-SXM", 8, "PLAYBOOK"),
        NVLinkDomain("HGX B200 (8 GPUs, NVLink 5)", "B200", 8, "BW-DS"),
        NVLinkDomain("GB200 NVL72 (72 GPUs, NVLink 5)", "GB200", 72, "NVL72-DS"),
    )


@dataclass(frozen=True)
class DomainAllToAll:
    """An all-to-all of ``message_bytes`` per rank over ``domains`` NVLink domains of
    ``gpus_per_domain`` GPUs each (p = g · n ranks; uniform: S/p bytes to every rank)."""

    message_bytes: float
    gpus_per_domain: int
    domains: int
    intra_bandwidth: float
    inter_bandwidth: float | None

    def __post_init__(self) -> None:
        positive_float("message_bytes", self.message_bytes, allow_zero=True)
        positive_int("gpus_per_domain", self.gpus_per_domain, 1, MAX_GPUS_PER_NODE)
        positive_int("domains", self.domains, 1)
        if self.ranks < 2:
            raise ValueError(
                f"gpus_per_domain={self.gpus_per_domain} × domains={self.domains} must be ≥ 2"
            )
        positive_float("intra_bandwidth", self.intra_bandwidth)
        if self.inter_bandwidth is not None:
            positive_float("inter_bandwidth", self.inter_bandwidth)
        elif self.domains > 1:
            raise ValueError(
                f"inter_bandwidth=None: domains={self.domains} > 1 need a NIC bandwidth (bytes/s)"
            )

    @property
    def ranks(self) -> int:
        return self.gpus_per_domain * self.domains

    @property
    def intra_bytes(self) -> float:
        """Bytes a rank sends to the other GPUs of its domain: (g − 1)/p · S."""
        return (self.gpus_per_domain - 1) / self.ranks * self.message_bytes

    @property
    def inter_bytes(self) -> float:
        """Bytes a rank sends out of its domain, through its NIC: (p − g)/p · S."""
        return (self.ranks - self.gpus_per_domain) / self.ranks * self.message_bytes

    @property
    def intra_s(self) -> float:
        return self.intra_bytes / self.intra_bandwidth

    @property
    def inter_s(self) -> float:
        if self.inter_bandwidth is None:
            return 0.0
        return self.inter_bytes / self.inter_bandwidth

    @property
    def time_s(self) -> float:
        """NVLink and the NIC send at once: the larger of the two bandwidth terms."""
        return max(self.intra_s, self.inter_s)

    @property
    def bottleneck(self) -> str:
        """``"network"`` if the NIC's share takes longer, else ``"NVLink"``."""
        return "network" if self.inter_s > self.intra_s else "NVLink"

    @property
    def bus_bandwidth(self) -> float:
        """What nccl-tests would print: S/t · (p − 1)/p."""
        if not self.time_s:
            return 0.0
        return self.message_bytes / self.time_s * bus_bandwidth_factor("all-to-all", self.ranks)


def domain_all_to_all(
    message_bytes: float,
    gpus_per_domain: int,
    domains: int,
    intra_bandwidth: float,
    inter_bandwidth: float | None = None,
) -> DomainAllToAll:
    """All-to-all of ``message_bytes`` per rank over ``domains`` × ``gpus_per_domain`` GPUs.

    ``intra_bandwidth``: each GPU's NVLink, ``inter_bandwidth``: its NIC, both bytes/s per
    direction; one domain needs no NIC. A bandwidth model (no latency, no contention): a
    ceiling for what a real all-to-all reaches.
    """
    inter = None if inter_bandwidth is None else positive_float("inter_bandwidth", inter_bandwidth)
    return DomainAllToAll(
        message_bytes=positive_float("message_bytes", message_bytes, allow_zero=True),
        gpus_per_domain=positive_int("gpus_per_domain", gpus_per_domain, 1, MAX_GPUS_PER_NODE),
        domains=positive_int("domains", domains, 1),
        intra_bandwidth=positive_float("intra_bandwidth", intra_bandwidth),
        inter_bandwidth=inter,
    )


@dataclass(frozen=True)
class Link:
    """A link a rank sends over: ``bandwidth`` bytes/s per direction, from the hardware table."""

    label: str
    bandwidth: float
    source: str

    def __post_init__(self) -> None:
        name_string("label", self.label)
        positive_float("bandwidth", self.bandwidth)
        name_string("source", self.source)


@cache
def links() -> tuple[Link, ...]:
    """Per-rank links of the explorers, every bandwidth read from :mod:`gpuperf.hardware`
    (built once: the chip table is constant, and the explorers ask on every step)."""
    h100, a100 = chip("H100-SXM"), chip("A100-80GB")
    assert h100.interconnect_bandwidth and a100.interconnect_bandwidth
    return (
        Link(
            f"{h100.interconnect}, {h100.name}",
            h100.interconnect_bandwidth,
            "hardware table (per direction)",
        ),
        Link(
            f"{a100.interconnect}, {a100.name}",
            a100.interconnect_bandwidth,
            "hardware table (per direction)",
        ),
        Link(
            "InfiniBand NDR 400G, one NIC per GPU",
            NETWORK_BANDWIDTH["InfiniBand NDR 400G"],
            "hardware.NETWORK_BANDWIDTH (per direction)",
        ),
    )


__all__ = [
    "ALGORITHMS",
    "COLLECTIVES",
    "DDP_BUCKET_CAP_BYTES",
    "DDP_FIRST_BUCKET_BYTES",
    "MAX_GPUS_PER_NODE",
    "MODELLED_COLLECTIVES",
    "ZERO_STAGES",
    "BucketedAllReduce",
    "CollectiveTime",
    "DataParallelStep",
    "DomainAllToAll",
    "HierarchicalAllReduce",
    "Link",
    "MoEAllToAll",
    "NVLinkDomain",
    "algorithm_bandwidth",
    "bucketed_allreduce",
    "bus_bandwidth",
    "bus_bandwidth_factor",
    "collective_time",
    "collective_time_curve",
    "data_parallel_collectives",
    "data_parallel_step",
    "domain_all_to_all",
    "exposed_time",
    "half_bandwidth_message_bytes",
    "hierarchical_allreduce",
    "links",
    "moe_all_to_all",
    "nvlink_domains",
    "ring_tree_crossover_bytes",
    "step_latency_from_collective_latency",
    "steps",
    "time_from_bus_bandwidth",
    "traffic_per_byte",
]
