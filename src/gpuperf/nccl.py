"""What NCCL does underneath a collective: its three protocols, and the SMs its channels take.

**Protocols.** NCCL moves each step's chunk with one of three protocols, which trade bandwidth
for latency by how the receiver learns that data has arrived (NCCL source, ``device.h``,
``device/prims_ll.h`` and ``graph/tuning.cc``, read at commit 5067397 of 2026-06-11):

* **LL** (low latency): 16-byte lines of four 4-byte words, data and flag interleaved
  (``union ncclLLFifoLine {data1, flag1, data2, flag2}``), each line written by one 16-byte
  store (``storeLL``: ``st.volatile.global.v4.u32``). The receiver polls the flags itself, so
  there is no separate synchronisation; each flag sits after its data word, which is safe as
  long as 8-byte pieces arrive whole (the union's comment). Half of every line is flag: at most
  50 % of the link carries payload.
* **LL128**: 128-byte lines of sixteen 8-byte words, one of which is the flag
  (``NCCL_LL128_DATAELEMS = NCCL_LL128_LINEELEMS - 1``): 120 bytes of payload per 128,
  93.75 %. It relies on each 128-byte line arriving whole, so NCCL enables it by default only
  on the paths its tuner trusts to deliver them so (``graph/tuning.cc``).
* **Simple**: large chunks, then a memory fence and one flag per chunk: all of the link for
  payload, but each step pays the fence and the round trip of the flag.

NCCL's tuner predicts a collective's time as ``latency + bytes / bandwidth`` per algorithm and
protocol and picks the fastest (:func:`protocol_time`, :func:`fastest_protocol`). Its constants
(:data:`PROTOCOLS`): a base latency per protocol (ring: LL 6.6 µs, LL128 14 µs, Simple 8.4 µs),
a latency per ring step per link type (NVLink: 0.6, 1.9 and 3.4 µs) and a bandwidth factor
against Simple (LL 0.5, LL128 0.92). Across nodes only the ring's 2(n − 1) inter-node steps of
an all-reduce (n − 1 for the other collectives) pay the network's latency; the steps inside a
node pay the link's, raised to at least the network's post overhead (1 µs on Intel hosts, 2 µs
on AMD; 3× for Simple), and with one GPU per node the network latency is the tree's
(``ncclTopoTuneModel``). The ring's LL bus bandwidth is also capped:
``busBw = min(llMaxBw, 0.5 · busBw)``, with ``llMaxBw`` from the table ``llMaxBws`` — 141 GB/s
for Hopper in one node (:func:`ll_max_bus_bandwidth`). Small messages go LL, middling ones
LL128, large ones Simple. This module uses those numbers only; NCCL also caps LL128's rate per
channel (so it depends on the channel count), adds the network path's own latency
(``latencyInter`` of its topology graph), models trees, NVLS and PAT, and corrects for
measured effects, none of which is reproduced here.

**Whose bandwidth.** The bus bandwidth a caller passes in is an input. NCCL's own is what its
topology search finds: channels × per-channel bandwidth, at most the GPU's NVLink links × the
per-link figure of ``graph/topo.h`` (:data:`NVLINK_BANDWIDTH_PER_LINK`: 20.6 GB/s on Hopper, so
18 links give 370.8 GB/s, below the datasheet's 450 GB/s per direction;
:func:`topology_nvlink_bandwidth`).

**Channels take SMs.** NCCL runs a collective as one CTA per *channel* (``NCCL_MAX_CTAS``; at
most ``MAXCHANNELS`` = 64 in ``device.h``), and each CTA stays resident for the whole
collective. The model assumes each one keeps a whole SM from compute that overlaps the
collective, which then has the remaining SMs only:
:func:`overlap_with_channels` stretches compute by SMs / (SMs − channels) and compares overlap
with running one after the other. DeepSeek-V3 gave 20 of an H800's 132 SMs to communication
(§3.2.2 of its report).

**Copy-engine collectives (NCCL 2.28, October 2025).** A GPU's copy engines are DMA units that
move bytes between memories without an SM. NCCL 2.28.3 (release notes of 2025-10-06) runs
``ncclAllGather``, ``ncclAlltoAll``, ``ncclGather`` and ``ncclScatter`` on them "within a single
(MN)NVL domain" when the buffers are registered in symmetric windows and the communicator's
``CTAPolicy`` is ``NCCL_CTA_POLICY_ZERO``, to "free up SM capacity for the application to do
computation at the same time"; its source takes that path only for one node and CUDA 12.5 or
later, and its example says the path has higher peak bandwidth for large messages and higher
latency for small ones. Collectives that reduce (all-reduce, reduce-scatter) are not among them.
NCCL 2.30.7 (2026) adds hierarchical zero-SM all-gather and all-to-all across nodes (copy
engines inside the node, a CPU proxy across). :func:`copy_engine_collective` checks the
conditions; :func:`overlap_with_channels` with ``channels=0`` is such a collective. The same
2.28.3 release cut NCCL's largest CTA count on Blackwell from 32 to 16
(:data:`BLACKWELL_MAX_CTAS`), halving the SMs a kernel-based collective may take there.

Limits: a model of NCCL's own model, ring algorithm only, no per-channel caps (LL's cap is
per communicator, not per channel); compute is assumed to scale with the SMs it gets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ._validate import choice, mapping, name_string, positive_float, positive_int
from .collectives import MODELLED_COLLECTIVES, bus_bandwidth_factor, steps
from .hardware import Chip, chip

#: Link types NCCL's tuner distinguishes, as this module names them. ``"network"`` as a
#: ``hardware`` argument means one GPU per node: every ring step crosses the network.
HARDWARE: tuple[str, ...] = ("nvlink", "pci", "network")
#: NCCL's upper bound on channels (``MAXCHANNELS`` in ``src/include/device.h``).
MAX_CHANNELS = 64
_US = 1e-6


@dataclass(frozen=True)
class Protocol:
    """One NCCL protocol: its line format and NCCL's tuning constants for the ring algorithm."""

    name: str
    #: Bytes of one line and the payload bytes in it (the rest is the flag); Simple has no
    #: per-line flag, so both are the chunk and the fraction is 1.
    line_bytes: int
    payload_bytes: int
    #: Bus-bandwidth factor against Simple in NCCL's tuner (``graph/tuning.cc``).
    bandwidth_factor: float
    #: ``baseLatencies`` for the ring, seconds.
    base_latency_s: float
    #: ``hwLatencies`` for the ring, seconds per step, by link type.
    step_latency_s: Mapping[str, float]
    flag: str
    #: ``hwLatencies[NET][TREE]``: what the tuner charges a network step when each node holds
    #: one GPU (``ppn == 1``: "latencies are fully exposed").
    one_gpu_per_node_latency_s: float = 0.0

    def __post_init__(self) -> None:
        name_string("name", self.name)
        positive_int("line_bytes", self.line_bytes)
        positive_int("payload_bytes", self.payload_bytes, 1, self.line_bytes)
        positive_float("bandwidth_factor", self.bandwidth_factor, maximum=1.0)
        positive_float("base_latency_s", self.base_latency_s)
        latencies = mapping("step_latency_s", self.step_latency_s, positive_float, keys=HARDWARE)
        object.__setattr__(self, "step_latency_s", MappingProxyType(latencies))
        name_string("flag", self.flag)
        positive_float("one_gpu_per_node_latency_s", self.one_gpu_per_node_latency_s, True)

    @property
    def payload_fraction(self) -> float:
        """Payload bytes per byte on the wire: 8/16 (LL), 120/128 (LL128), 1 (Simple)."""
        return self.payload_bytes / self.line_bytes


#: NCCL's protocols (line formats from ``device.h``; ring constants from ``graph/tuning.cc``).
PROTOCOLS: Mapping[str, Protocol] = MappingProxyType(
    {
        "LL": Protocol(
            "LL", 16, 8, 0.5, 6.6 * _US,
            {"nvlink": 0.6 * _US, "pci": 1.0 * _US, "network": 2.7 * _US},
            "16-byte lines: a 4-byte flag after each 4-byte data word", 5.0 * _US,
        ),
        "LL128": Protocol(
            "LL128", 128, 120, 0.92, 14.0 * _US,
            {"nvlink": 1.9 * _US, "pci": 2.5 * _US, "network": 4.0 * _US},
            "one 8-byte flag per 128-byte line", 8.5 * _US,
        ),
        "Simple": Protocol(
            "Simple", 1, 1, 1.0, 8.4 * _US,
            {"nvlink": 3.4 * _US, "pci": 5.7 * _US, "network": 14.0 * _US},
            "a memory fence and one flag per chunk", 14.0 * _US,
        ),
    }
)  # fmt: skip


def _protocol(protocol: object) -> Protocol:
    return PROTOCOLS[choice("protocol", protocol, tuple(PROTOCOLS))]


_GB = 1e9
#: ``llMaxBws`` of ``graph/tuning.cc`` in bytes/s (NCCL's GB/s are 10⁹ B/s). In one node the row
#: is the GPU generation's and the column the first ("N1"); across nodes the row is the CPU
#: vendor's (Intel and others: row 0, AMD: row 1) and the column 2 nodes ("N2") or more ("N4").
LL_MAX_BUS_BANDWIDTH_ONE_NODE: Mapping[str, float] = MappingProxyType(
    {"Volta": 39.0 * _GB, "Ampere": 87.7 * _GB, "Hopper": 141.0 * _GB, "Blackwell": 282.0 * _GB}
)
LL_MAX_BUS_BANDWIDTH_NODES: Mapping[str, tuple[float, float]] = MappingProxyType(
    {"intel": (39.0 * _GB, 20.4 * _GB), "amd": (22.5 * _GB, 19.0 * _GB)}
)
#: The cap :func:`protocol_time` applies unless told otherwise: an H100 node's.
DEFAULT_LL_MAX_BUS_BANDWIDTH = LL_MAX_BUS_BANDWIDTH_ONE_NODE["Hopper"]
#: ``getNetOverhead`` of ``graph/tuning.cc`` (seconds): the least an in-node ring step costs once
#: the ring leaves the node, by CPU vendor (x86 Intel 1 µs, x86 AMD 2 µs); Simple pays 3×.
NET_OVERHEAD_S: Mapping[str, float] = MappingProxyType({"intel": 1.0 * _US, "amd": 2.0 * _US})
#: ``SMx_NVLINK_BW`` of ``graph/topo.h`` (bytes/s per NVLink link and direction) by NCCL's
#: compute-capability row: the figure its topology search credits one link with.
NVLINK_BANDWIDTH_PER_LINK: Mapping[str, float] = MappingProxyType(
    {"Volta": 20.0 * _GB, "Ampere": 20.0 * _GB, "Hopper": 20.6 * _GB, "Blackwell": 40.1 * _GB}
)
#: Largest node count :func:`ll_max_bus_bandwidth` accepts.
MAX_NODES = 1 << 16


def _generation(the_chip: Chip) -> str:
    """NCCL's compute-capability row: ≥ 10.0 Blackwell, ≥ 9.0 Hopper, ≥ 8.0 Ampere, else Volta."""
    cc = the_chip.compute_capability
    if the_chip.vendor != "NVIDIA" or cc is None:
        raise ValueError(
            f"chip_name={the_chip.name!r} has no CUDA compute capability "
            "(NCCL runs on NVIDIA GPUs)"
        )
    major, minor = cc
    comp_cap = 10 * major + minor
    if comp_cap >= 100:
        return "Blackwell"
    if comp_cap >= 90:
        return "Hopper"
    return "Ampere" if comp_cap >= 80 else "Volta"


def ll_max_bus_bandwidth(
    chip_name: str | Chip = "H100-SXM", nodes: int = 1, cpu_vendor: str = "intel"
) -> float:
    """The most bus bandwidth (bytes/s) NCCL's tuner credits the ring's LL protocol with.

    ``ncclTopoTuneModel`` sets LL's ring bus bandwidth to ``min(llMaxBw, 0.5 · busBw)``. In one
    node ``llMaxBw`` depends on the GPU generation (H100: 141 GB/s, A100: 87.7 GB/s); across
    nodes on the CPU vendor and on 2 nodes or more (Intel: 39 and 20.4 GB/s).
    """
    the_chip = chip(chip_name)
    generation = _generation(the_chip)
    nodes = positive_int("nodes", nodes, 1, MAX_NODES)
    cpu_vendor = choice("cpu_vendor", cpu_vendor, tuple(LL_MAX_BUS_BANDWIDTH_NODES))
    if nodes == 1:
        return LL_MAX_BUS_BANDWIDTH_ONE_NODE[generation]
    return LL_MAX_BUS_BANDWIDTH_NODES[cpu_vendor][0 if nodes == 2 else 1]


@dataclass(frozen=True)
class ProtocolTime:
    """NCCL's prediction for one protocol: ``latency_s + message_bytes / algorithm_bandwidth``."""

    protocol: str
    collective: str
    message_bytes: float
    ranks: int
    latency_s: float
    algorithm_bandwidth: float

    def __post_init__(self) -> None:
        _protocol(self.protocol)
        choice("collective", self.collective, MODELLED_COLLECTIVES)
        positive_int("ranks", self.ranks, 2)
        positive_float("message_bytes", self.message_bytes, allow_zero=True)
        positive_float("latency_s", self.latency_s)
        positive_float("algorithm_bandwidth", self.algorithm_bandwidth)

    @property
    def time_s(self) -> float:
        return self.latency_s + self.message_bytes / self.algorithm_bandwidth

    @property
    def peak_bus_bandwidth(self) -> float:
        """The tuner's bus bandwidth for this protocol: algbw · f (what large messages reach)."""
        return self.algorithm_bandwidth * bus_bandwidth_factor(self.collective, self.ranks)

    @property
    def bus_bandwidth(self) -> float:
        """The bus bandwidth an nccl-tests run of this size would report."""
        achieved = self.message_bytes / self.time_s
        return achieved * bus_bandwidth_factor(self.collective, self.ranks)


def _nodes(nodes: object, ranks: int, hardware: str) -> int:
    """The node count of a ring: ``None`` → 1 (``"network"``: one GPU per node, ``ranks``)."""
    if hardware == "network":
        if nodes is not None and positive_int("nodes", nodes, 1, MAX_NODES) != ranks:
            raise ValueError(
                f"nodes={nodes!r} with hardware='network' must be ranks={ranks} (one GPU per "
                "node); for several GPUs per node give the link inside the node "
                "(hardware='nvlink' or 'pci') and nodes"
            )
        return ranks
    if nodes is None:
        return 1
    nodes = positive_int("nodes", nodes, 1, MAX_NODES)
    if ranks % nodes:
        raise ValueError(
            f"nodes={nodes} must divide ranks={ranks}: the same number of GPUs in every node"
        )
    return nodes


def ring_latency_s(
    protocol: str,
    collective: str,
    ranks: int,
    hardware: str = "nvlink",
    *,
    nodes: int | None = None,
    cpu_vendor: str = "intel",
) -> float:
    """NCCL's ring latency for ``protocol`` (``ncclTopoTuneModel``, ring branch), seconds.

    base + (steps − inter) · max(intra, overhead) + inter · net, where steps is the ring's
    (2(p − 1) for an all-reduce), inter the steps that cross nodes (2(n − 1) for an all-reduce,
    n − 1 otherwise), intra the per-step latency of ``hardware`` inside a node, overhead the
    network's post overhead once the ring leaves the node (:data:`NET_OVERHEAD_S`, 3× for
    Simple) and net the network's per-step latency (the tree's with one GPU per node).
    ``nodes=None`` is one node; ``hardware="network"`` is one GPU per node. In one node:
    base + steps · intra (8 NVLink ranks, all-reduce, LL: 6.6 + 14 × 0.6 = 15.0 µs); 16 nodes of
    8 GPUs, LL: 6.6 + 224 × 1.0 + 30 × 2.7 = 311.6 µs.
    """
    proto = _protocol(protocol)
    hardware = choice("hardware", hardware, HARDWARE)
    cpu_vendor = choice("cpu_vendor", cpu_vendor, tuple(NET_OVERHEAD_S))
    n_steps = steps(collective, ranks)
    n_nodes = _nodes(nodes, int(ranks), hardware)
    if n_nodes == 1:
        return proto.base_latency_s + n_steps * proto.step_latency_s[hardware]
    inter_steps = 2 * (n_nodes - 1) if collective == "all-reduce" else n_nodes - 1
    one_per_node = n_nodes == ranks
    net = proto.one_gpu_per_node_latency_s if one_per_node else proto.step_latency_s["network"]
    overhead = NET_OVERHEAD_S[cpu_vendor] * (3 if proto.name == "Simple" else 1)
    intra = 0.0 if hardware == "network" else max(proto.step_latency_s[hardware], overhead)
    return proto.base_latency_s + (n_steps - inter_steps) * intra + inter_steps * net


def protocol_time(
    protocol: str,
    collective: str,
    message_bytes: float,
    ranks: int,
    bus_bandwidth: float,
    hardware: str = "nvlink",
    ll_max_bandwidth: float = DEFAULT_LL_MAX_BUS_BANDWIDTH,
    *,
    nodes: int | None = None,
    cpu_vendor: str = "intel",
) -> ProtocolTime:
    """NCCL's ring estimate for ``protocol``: :func:`ring_latency_s`, and ``bus_bandwidth`` ×
    the protocol's factor converted to algorithm bandwidth.

    ``bus_bandwidth`` is what Simple would reach on large messages (the link, per direction).
    LL's bus bandwidth is ``min(ll_max_bandwidth, 0.5 · bus_bandwidth)``, as in NCCL's tuner;
    the default cap is an H100 node's 141 GB/s (:func:`ll_max_bus_bandwidth` gives others,
    across nodes too). ``hardware`` is the link inside a node; ``nodes`` spreads the ranks over
    that many nodes (``hardware="network"``: one GPU per node).
    8 NVLink ranks, all-reduce: LL 6.6 + 14 × 0.6 = 15.0 µs, LL128 40.6 µs, Simple 56.0 µs.
    """
    proto = _protocol(protocol)
    latency_s = ring_latency_s(
        proto.name, collective, ranks, hardware, nodes=nodes, cpu_vendor=cpu_vendor
    )
    bus_bandwidth = positive_float("bus_bandwidth", bus_bandwidth)
    ll_max_bandwidth = positive_float("ll_max_bandwidth", ll_max_bandwidth)
    factor = bus_bandwidth_factor(collective, ranks)
    protocol_bus = bus_bandwidth * proto.bandwidth_factor
    if proto.name == "LL":
        protocol_bus = min(ll_max_bandwidth, protocol_bus)
    return ProtocolTime(
        protocol=proto.name,
        collective=collective,
        message_bytes=positive_float("message_bytes", message_bytes, allow_zero=True),
        ranks=int(ranks),
        latency_s=latency_s,
        algorithm_bandwidth=protocol_bus / factor,
    )


def fastest_protocol(
    collective: str,
    message_bytes: float,
    ranks: int,
    bus_bandwidth: float,
    hardware: str = "nvlink",
    ll_max_bandwidth: float = DEFAULT_LL_MAX_BUS_BANDWIDTH,
    *,
    nodes: int | None = None,
    cpu_vendor: str = "intel",
) -> str:
    """The protocol NCCL's ring model predicts fastest for this message (ties: the first)."""
    times = {
        name: protocol_time(
            name, collective, message_bytes, ranks, bus_bandwidth, hardware, ll_max_bandwidth,
            nodes=nodes, cpu_vendor=cpu_vendor,
        )
        for name in PROTOCOLS
    }  # fmt: skip
    return min(times, key=lambda name: times[name].time_s)


def protocol_crossover_bytes(
    faster_small: str,
    faster_large: str,
    collective: str,
    ranks: int,
    bus_bandwidth: float,
    hardware: str = "nvlink",
    ll_max_bandwidth: float = DEFAULT_LL_MAX_BUS_BANDWIDTH,
    *,
    nodes: int | None = None,
    cpu_vendor: str = "intel",
) -> float:
    """Message size above which ``faster_large`` beats ``faster_small``:
    S* = (lat_large − lat_small) / (1/algbw_small − 1/algbw_large); 0 if it always does.

    ``faster_large`` must have more bandwidth than ``faster_small`` (else it never wins on
    large messages, and the pair is refused)."""
    faster_small = choice("faster_small", faster_small, tuple(PROTOCOLS))
    faster_large = choice("faster_large", faster_large, tuple(PROTOCOLS))
    small, large = (
        protocol_time(
            name, collective, 0, ranks, bus_bandwidth, hardware, ll_max_bandwidth,
            nodes=nodes, cpu_vendor=cpu_vendor,
        )
        for name in (faster_small, faster_large)
    )  # fmt: skip
    gain_per_byte = 1 / small.algorithm_bandwidth - 1 / large.algorithm_bandwidth
    extra_latency = large.latency_s - small.latency_s
    if gain_per_byte <= 0:
        raise ValueError(
            f"faster_large={faster_large!r} has no more bandwidth than "
            f"faster_small={faster_small!r}: it never wins on large messages (swap them)"
        )
    return max(0.0, extra_latency / gain_per_byte)


def topology_nvlink_bandwidth(
    chip_name: str | Chip = "H100-SXM", links: int | None = None
) -> float:
    """The most NVLink bus bandwidth NCCL's topology credits one GPU with (bytes/s).

    ``links`` × the per-link figure of ``graph/topo.h`` (:data:`NVLINK_BANDWIDTH_PER_LINK`; the
    sm_86 parts 12 GB/s). NCCL's ring bus bandwidth is channels × per-channel bandwidth, found
    by its search within this. ``links=None`` reads the count from the chip table's
    interconnect ("NVLink 4 (18 links)"): an H100 SXM gets 18 × 20.6 = 370.8 GB/s, against
    the datasheet's 450 GB/s per direction.
    """
    the_chip = chip(chip_name)
    generation = _generation(the_chip)
    if links is None:
        match = re.search(r"\((\d+) links\)", the_chip.interconnect or "")
        if not (the_chip.interconnect or "").startswith("NVLink") or match is None:
            raise ValueError(
                f"chip_name={the_chip.name!r} lists no NVLink link count in the chip table "
                f"(interconnect={the_chip.interconnect!r}); pass links"
            )
        links = int(match.group(1))
    links = positive_int("links", links, 1, MAX_CHANNELS)
    per_link = 12.0 * _GB if the_chip.compute_capability == (8, 6) else None
    return links * (per_link or NVLINK_BANDWIDTH_PER_LINK[generation])


# ----------------------------------------------------------------------------- channels


def _sms(the_chip: Chip) -> int:
    if not the_chip.is_gpu or the_chip.sm_count is None:
        raise ValueError(f"chip_name={the_chip.name!r} has no SMs (choose an NVIDIA GPU)")
    return the_chip.sm_count


# ------------------------------------------------------------------ copy-engine collectives

#: Collectives of NCCL's API, as this module names them.
NCCL_COLLECTIVES: tuple[str, ...] = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "all-to-all",
    "broadcast",
    "reduce",
    "gather",
    "scatter",
)
#: NCCL 2.28.3 release notes (2025-10-06): "To enable the feature for ncclAllGather,
#: ncclAlltoAll, ncclGather, ncclScatter, register buffers into symmetric windows and use the
#: NCCL_CTA_POLICY_ZERO flag"; ``src/ce_coll.cc`` at v2.28.3-1 implements these four.
CE_COLLECTIVES: tuple[str, ...] = ("all-gather", "all-to-all", "gather", "scatter")
#: First general-access release with copy-engine collectives (2.28.1 was early access).
CE_FIRST_VERSION: tuple[int, int, int] = (2, 28, 3)
#: ``src/ce_coll.cc`` at v2.28.3-1: "CE is supported in CUDA 12.5 and later".
CE_MIN_CUDA: tuple[int, int] = (12, 5)
#: NCCL 2.30.7 release notes: "hierarchical zero-SM collectives (AllGather and All2all) that use
#: RMA CPU proxy for inter-node communication and Copy Engines for intra-node communication".
CE_MULTI_NODE_VERSION: tuple[int, int, int] = (2, 30, 7)
CE_MULTI_NODE_COLLECTIVES: tuple[str, ...] = ("all-gather", "all-to-all")
#: ``ncclConfig_t.CTAPolicy`` values (``nccl.h`` at v2.28.3-1): NCCL_CTA_POLICY_DEFAULT 0,
#: _EFFICIENCY 1, _ZERO 2.
CTA_POLICIES: Mapping[str, int] = MappingProxyType({"default": 0, "efficiency": 1, "zero": 2})
#: Largest CTA (channel) count NCCL gives a collective on Blackwell, before and from 2.28.3:
#: "Decreased max CTA count from 32 to 16 on Blackwell ... SM overhead is decreased by 50%"
#: (release notes; ``NCCL_MAX_CTAS=32`` restores the old behaviour).
BLACKWELL_MAX_CTAS: Mapping[str, int] = MappingProxyType({"before 2.28.3": 32, "2.28.3": 16})


def _version(name: str, value: object, length: int) -> tuple[int, ...]:
    if (
        not isinstance(value, tuple)
        or len(value) != length
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        raise ValueError(f"{name}={value!r} must be a tuple of {length} integers ≥ 0")
    return value


@dataclass(frozen=True)
class CopyEngineCheck:
    """Whether NCCL runs ``collective`` on the copy engines (no SM), and what stops it if not."""

    collective: str
    uses_copy_engines: bool
    reasons: tuple[str, ...]

    def __post_init__(self) -> None:
        choice("collective", self.collective, NCCL_COLLECTIVES)
        if not isinstance(self.reasons, tuple) or not all(
            isinstance(r, str) and r for r in self.reasons
        ):
            raise ValueError(f"reasons={self.reasons!r} must be a tuple of non-empty strings")
        if bool(self.uses_copy_engines) == bool(self.reasons) or not isinstance(
            self.uses_copy_engines, bool
        ):
            raise ValueError(
                f"uses_copy_engines={self.uses_copy_engines!r} must be True exactly when "
                f"reasons is empty (reasons={self.reasons!r})"
            )

    @property
    def sms(self) -> str:
        """What the collective's data movement occupies: ``"no SM"`` or ``"SMs (channels)"``."""
        return "no SM" if self.uses_copy_engines else "SMs (channels)"


def copy_engine_collective(
    collective: str,
    nvlink_domains: int = 1,
    symmetric_windows: bool = True,
    cta_policy: str = "zero",
    cuda_version: tuple[int, int] = CE_MIN_CUDA,
    nccl_version: tuple[int, int, int] = CE_FIRST_VERSION,
) -> CopyEngineCheck:
    """NCCL's conditions for a copy-engine (zero-SM) collective, each one that fails named.

    From NCCL 2.28.3: one of :data:`CE_COLLECTIVES`, within one NVLink domain
    (``nvlink_domains == 1``: an HGX node, or a whole multi-node NVLink rack such as a GB200
    NVL72, the "(MN)NVL domain" of the release notes), both buffers registered as symmetric
    windows, ``CTAPolicy`` zero, CUDA ≥ 12.5. From 2.30.7 all-gather and all-to-all also span
    domains (copy engines inside each, a CPU proxy between them). (2.29.2 also switches large
    all-gathers on Blackwell to copy engines by itself; that size threshold is not published,
    so it is not modelled.)
    """
    collective = choice("collective", collective, NCCL_COLLECTIVES)
    domains = positive_int("nvlink_domains", nvlink_domains, 1, MAX_NODES)
    if not isinstance(symmetric_windows, bool):
        raise TypeError(f"symmetric_windows={symmetric_windows!r} must be True or False")
    cta_policy = choice("cta_policy", cta_policy, tuple(CTA_POLICIES))
    cuda = _version("cuda_version", cuda_version, 2)
    version = _version("nccl_version", nccl_version, 3)
    reasons = []
    if version < CE_FIRST_VERSION:
        reasons.append(
            f"NCCL {'.'.join(map(str, version))} predates copy-engine collectives (2.28.3)"
        )
    if collective not in CE_COLLECTIVES:
        reasons.append(
            f"{collective} is not a copy-engine collective (only {', '.join(CE_COLLECTIVES)})"
        )
    if domains > 1 and not (
        version >= CE_MULTI_NODE_VERSION and collective in CE_MULTI_NODE_COLLECTIVES
    ):
        reasons.append(
            f"nvlink_domains={domains}: only within one NVLink domain (across domains from "
            "2.30.7, and then for all-gather and all-to-all only)"
        )
    if not symmetric_windows:
        reasons.append("buffers not registered as symmetric windows (ncclCommWindowRegister)")
    if cta_policy != "zero":
        reasons.append(f"cta_policy={cta_policy!r}: needs NCCL_CTA_POLICY_ZERO")
    if cuda < CE_MIN_CUDA:
        reasons.append(f"CUDA {cuda[0]}.{cuda[1]}: needs 12.5 or later")
    return CopyEngineCheck(collective, not reasons, tuple(reasons))


@dataclass(frozen=True)
class ChannelOverlap:
    """Compute overlapped with a collective whose ``channels`` CTAs each hold one SM
    (``channels=0``: a copy-engine collective, which holds none)."""

    compute_s: float
    communication_s: float
    channels: int
    sm_count: int

    def __post_init__(self) -> None:
        positive_float("compute_s", self.compute_s, allow_zero=True)
        positive_float("communication_s", self.communication_s, allow_zero=True)
        positive_int("sm_count", self.sm_count)
        positive_int("channels", self.channels, 0, min(MAX_CHANNELS, self.sm_count - 1))

    @property
    def sm_fraction(self) -> float:
        """Share of the SMs the collective holds: channels / SMs."""
        return self.channels / self.sm_count

    @property
    def slowdown(self) -> float:
        """How much longer compute takes on the SMs left: SMs / (SMs − channels)."""
        return self.sm_count / (self.sm_count - self.channels)

    @property
    def serial_s(self) -> float:
        """Compute on every SM, then the collective: compute + communication."""
        return self.compute_s + self.communication_s

    @property
    def overlapped_s(self) -> float:
        """Both at once; compute is stretched while the collective runs (and only then).

        If the collective ends first, the rest of the compute gets every SM back.
        """
        stretched = self.compute_s * self.slowdown
        if stretched <= self.communication_s:
            return self.communication_s
        done_meanwhile = self.communication_s / self.slowdown  # compute finished while comm ran
        return self.communication_s + (self.compute_s - done_meanwhile)

    @property
    def gain(self) -> float:
        """serial / overlapped: above 1 when overlapping pays."""
        return self.serial_s / self.overlapped_s if self.overlapped_s else 1.0


def overlap_with_channels(
    compute_s: float, communication_s: float, channels: int, chip_name: str | Chip
) -> ChannelOverlap:
    """Overlap ``compute_s`` of SM work with a collective that holds ``channels`` SMs.

    While the collective runs, compute has SMs − channels SMs and progresses at that share of
    its rate; afterwards it has them all. 20 of 132 SMs stretch compute by 132/112 = 1.18×;
    ``channels=0`` (a copy-engine collective, :func:`copy_engine_collective`) stretches nothing.
    """
    the_chip = chip(chip_name)
    sms = _sms(the_chip)
    return ChannelOverlap(
        compute_s=positive_float("compute_s", compute_s, allow_zero=True),
        communication_s=positive_float("communication_s", communication_s, allow_zero=True),
        channels=positive_int("channels", channels, 0, min(MAX_CHANNELS, sms - 1)),
        sm_count=sms,
    )


__all__ = [
    "BLACKWELL_MAX_CTAS",
    "CE_COLLECTIVES",
    "CE_FIRST_VERSION",
    "CE_MIN_CUDA",
    "CE_MULTI_NODE_COLLECTIVES",
    "CE_MULTI_NODE_VERSION",
    "CTA_POLICIES",
    "DEFAULT_LL_MAX_BUS_BANDWIDTH",
    "HARDWARE",
    "LL_MAX_BUS_BANDWIDTH_NODES",
    "LL_MAX_BUS_BANDWIDTH_ONE_NODE",
    "MAX_CHANNELS",
    "MAX_NODES",
    "NCCL_COLLECTIVES",
    "NET_OVERHEAD_S",
    "NVLINK_BANDWIDTH_PER_LINK",
    "PROTOCOLS",
    "ChannelOverlap",
    "CopyEngineCheck",
    "Protocol",
    "ProtocolTime",
    "copy_engine_collective",
    "fastest_protocol",
    "ll_max_bus_bandwidth",
    "overlap_with_channels",
    "protocol_crossover_bytes",
    "protocol_time",
    "ring_latency_s",
    "topology_nvlink_bandwidth",
]
