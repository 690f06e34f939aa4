"""What NCCL does underneath a collective: its three protocols, and the SMs its channels take.

**Protocols.** NCCL moves each step's chunk with one of three protocols, which trade bandwidth
for latency by how the receiver learns that data has arrived (NCCL source, ``device.h`` and
``graph/tuning.cc``, read at commit 5067397 of 2026-06-11):

* **LL** (low latency): every 8-byte store carries 4 bytes of data and a 4-byte flag
  (``union ncclLLFifoLine``). The receiver polls the flag itself, so there is no separate
  synchronisation, but half of every line is flag: at most 50 % of the link carries payload.
* **LL128**: 128-byte lines of sixteen 8-byte words, one of which is the flag
  (``NCCL_LL128_DATAELEMS = NCCL_LL128_LINEELEMS - 1``): 120 bytes of payload per 128,
  93.75 %. It relies on 128-byte stores arriving whole, which NVLink guarantees.
* **Simple**: large chunks, then a memory fence and one flag per chunk: all of the link for
  payload, but each step pays the fence and the round trip of the flag.

NCCL's tuner predicts a collective's time as ``latency + bytes / bandwidth`` per algorithm and
protocol and picks the fastest (:func:`protocol_time`, :func:`fastest_protocol`). Its constants
(:data:`PROTOCOLS`): a base latency per protocol (ring: LL 6.6 µs, LL128 14 µs, Simple 8.4 µs),
a latency per ring step per link type (NVLink: 0.6, 1.9 and 3.4 µs) and a bandwidth factor
against Simple (LL 0.5, LL128 0.92). Small messages go LL, middling ones LL128, large ones Simple.
This module uses those three numbers only; NCCL also caps per-channel rates, models trees, NVLS
and PAT, and corrects for measured effects, none of which is reproduced here.

**Channels take SMs.** NCCL runs a collective as one CTA per *channel* (``NCCL_MAX_CTAS``; at
most ``MAXCHANNELS`` = 64 in ``device.h``), and each CTA occupies an SM for the whole
collective. Compute that overlaps the collective has the remaining SMs only:
:func:`overlap_with_channels` stretches compute by SMs / (SMs − channels) and compares overlap
with running one after the other. DeepSeek-V3 gave 20 of an H800's 132 SMs to communication
(§3.2.2 of its report).

Limits: a model of NCCL's own model, ring algorithm only, no per-channel caps; compute is
assumed to scale with the SMs it gets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ._validate import choice, mapping, name_string, positive_float, positive_int
from .collectives import MODELLED_COLLECTIVES, bus_bandwidth_factor, steps
from .hardware import Chip, chip

#: Link types NCCL's tuner distinguishes, as this module names them.
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

    def __post_init__(self) -> None:
        name_string("name", self.name)
        positive_int("line_bytes", self.line_bytes)
        positive_int("payload_bytes", self.payload_bytes, 1, self.line_bytes)
        positive_float("bandwidth_factor", self.bandwidth_factor, maximum=1.0)
        positive_float("base_latency_s", self.base_latency_s)
        latencies = mapping("step_latency_s", self.step_latency_s, positive_float, keys=HARDWARE)
        object.__setattr__(self, "step_latency_s", MappingProxyType(latencies))
        name_string("flag", self.flag)

    @property
    def payload_fraction(self) -> float:
        """Payload bytes per byte on the wire: 4/8 (LL), 120/128 (LL128), 1 (Simple)."""
        return self.payload_bytes / self.line_bytes


#: NCCL's protocols (line formats from ``device.h``; ring constants from ``graph/tuning.cc``).
PROTOCOLS: Mapping[str, Protocol] = MappingProxyType(
    {
        "LL": Protocol(
            "LL", 8, 4, 0.5, 6.6 * _US,
            {"nvlink": 0.6 * _US, "pci": 1.0 * _US, "network": 2.7 * _US},
            "a 4-byte flag in every 8-byte store",
        ),
        "LL128": Protocol(
            "LL128", 128, 120, 0.92, 14.0 * _US,
            {"nvlink": 1.9 * _US, "pci": 2.5 * _US, "network": 4.0 * _US},
            "one 8-byte flag per 128-byte line",
        ),
        "Simple": Protocol(
            "Simple", 1, 1, 1.0, 8.4 * _US,
            {"nvlink": 3.4 * _US, "pci": 5.7 * _US, "network": 14.0 * _US},
            "a memory fence and one flag per chunk",
        ),
    }
)  # fmt: skip


def _protocol(protocol: object) -> Protocol:
    return PROTOCOLS[choice("protocol", protocol, tuple(PROTOCOLS))]


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
    def bus_bandwidth(self) -> float:
        """The bus bandwidth an nccl-tests run of this size would report."""
        achieved = self.message_bytes / self.time_s
        return achieved * bus_bandwidth_factor(self.collective, self.ranks)


def protocol_time(
    protocol: str,
    collective: str,
    message_bytes: float,
    ranks: int,
    bus_bandwidth: float,
    hardware: str = "nvlink",
) -> ProtocolTime:
    """NCCL's ring estimate for ``protocol``: base + steps · per-step latency, and
    ``bus_bandwidth`` × the protocol's factor converted to algorithm bandwidth.

    ``bus_bandwidth`` is what Simple would reach on large messages (the link, per direction).
    8 NVLink ranks, all-reduce: LL 6.6 + 14 × 0.6 = 15.0 µs, LL128 40.6 µs, Simple 56.0 µs.
    """
    proto = _protocol(protocol)
    hardware = choice("hardware", hardware, HARDWARE)
    n_steps = steps(collective, ranks)
    bus_bandwidth = positive_float("bus_bandwidth", bus_bandwidth)
    factor = bus_bandwidth_factor(collective, ranks)
    return ProtocolTime(
        protocol=proto.name,
        collective=collective,
        message_bytes=positive_float("message_bytes", message_bytes, allow_zero=True),
        ranks=int(ranks),
        latency_s=proto.base_latency_s + n_steps * proto.step_latency_s[hardware],
        algorithm_bandwidth=bus_bandwidth * proto.bandwidth_factor / factor,
    )


def fastest_protocol(
    collective: str,
    message_bytes: float,
    ranks: int,
    bus_bandwidth: float,
    hardware: str = "nvlink",
) -> str:
    """The protocol NCCL's ring model predicts fastest for this message (ties: the first)."""
    times = {
        name: protocol_time(name, collective, message_bytes, ranks, bus_bandwidth, hardware)
        for name in PROTOCOLS
    }
    return min(times, key=lambda name: times[name].time_s)


def protocol_crossover_bytes(
    faster_small: str,
    faster_large: str,
    collective: str,
    ranks: int,
    bus_bandwidth: float,
    hardware: str = "nvlink",
) -> float:
    """Message size above which ``faster_large`` beats ``faster_small``:
    S* = (lat_large − lat_small) / (1/algbw_small − 1/algbw_large); 0 if it always does.

    ``faster_large`` must have more bandwidth than ``faster_small`` (else it never wins on
    large messages, and the pair is refused)."""
    faster_small = choice("faster_small", faster_small, tuple(PROTOCOLS))
    faster_large = choice("faster_large", faster_large, tuple(PROTOCOLS))
    small = protocol_time(faster_small, collective, 0, ranks, bus_bandwidth, hardware)
    large = protocol_time(faster_large, collective, 0, ranks, bus_bandwidth, hardware)
    gain_per_byte = 1 / small.algorithm_bandwidth - 1 / large.algorithm_bandwidth
    extra_latency = large.latency_s - small.latency_s
    if gain_per_byte <= 0:
        raise ValueError(
            f"faster_large={faster_large!r} has no more bandwidth than "
            f"faster_small={faster_small!r}: it never wins on large messages (swap them)"
        )
    return max(0.0, extra_latency / gain_per_byte)


# ----------------------------------------------------------------------------- channels


def _sms(the_chip: Chip) -> int:
    if not the_chip.is_gpu or the_chip.sm_count is None:
        raise ValueError(f"chip_name={the_chip.name!r} has no SMs (choose an NVIDIA GPU)")
    return the_chip.sm_count


@dataclass(frozen=True)
class ChannelOverlap:
    """Compute overlapped with a collective whose ``channels`` CTAs each hold one SM."""

    compute_s: float
    communication_s: float
    channels: int
    sm_count: int

    def __post_init__(self) -> None:
        positive_float("compute_s", self.compute_s, allow_zero=True)
        positive_float("communication_s", self.communication_s, allow_zero=True)
        positive_int("sm_count", self.sm_count)
        positive_int("channels", self.channels, 1, min(MAX_CHANNELS, self.sm_count - 1))

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
    its rate; afterwards it has them all. 20 of 132 SMs stretch compute by 132/112 = 1.18×.
    """
    the_chip = chip(chip_name)
    sms = _sms(the_chip)
    return ChannelOverlap(
        compute_s=positive_float("compute_s", compute_s, allow_zero=True),
        communication_s=positive_float("communication_s", communication_s, allow_zero=True),
        channels=positive_int("channels", channels, 1, min(MAX_CHANNELS, sms - 1)),
        sm_count=sms,
    )


__all__ = [
    "HARDWARE",
    "MAX_CHANNELS",
    "PROTOCOLS",
    "ChannelOverlap",
    "Protocol",
    "ProtocolTime",
    "fastest_protocol",
    "overlap_with_channels",
    "protocol_crossover_bytes",
    "protocol_time",
]
