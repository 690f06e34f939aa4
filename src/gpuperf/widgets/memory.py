"""Chapter 5 explorer: how big must a transfer be before bandwidth, not latency, decides its time?

A copy of n bytes over a link with fixed cost ``latency`` and peak ``bandwidth`` takes
``latency + n / bandwidth`` (:func:`gpuperf.memory.transfer_time`); its effective bandwidth
n / time (:func:`gpuperf.memory.effective_bandwidth`) reaches half the peak at
n = latency × bandwidth (:func:`gpuperf.memory.half_bandwidth_size`). Below that size the link
idles most of the time. :func:`transfer_explorer` puts a size slider on that curve, with latency
and bandwidth sliders and presets built from *measured* pairs in :mod:`gpuperf.measurements`;
:func:`transfer_scrubber` is its kernel-free twin. The widget only wires controls to those
calculators.

An all-reduce preset's bandwidth is the rate its message moves at: NCCL measures a *bus*
bandwidth, and the preset converts it to the *algorithm* bandwidth busbw · p / (2(p − 1))
(:func:`gpuperf.memory.allreduce_algorithm_bandwidth`) for its number of GPUs p, so the
half-bandwidth size it shows is t₀ · algbw, the message size at which the collective reaches half
its rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import memory
from .._validate import positive_int
from ..measurements import LATENCY_BOUND_BELOW_BYTES, Measurement, find
from ..runtime import require
from ..scrub import Scrubber, control
from ..units import GB, format_bandwidth, format_bytes, format_seconds
from .live import Explorer, LiveFigure, control_widget, new_figure

__all__ = [
    "GPUS_PER_NODE",
    "TransferPreset",
    "TransferView",
    "presets",
    "transfer_explorer",
    "transfer_scrubber",
]

_SIZES = (1e2, 1e10)
_BANDWIDTH_GB = (1e-4, 1e4)


@dataclass(frozen=True)
class TransferPreset:
    """A link described by two measurements: its fixed cost and its large-transfer bandwidth.

    ``ranks`` is the number of GPUs of an all-reduce preset whose ``bandwidth`` is NCCL's bus
    bandwidth, ``None`` for a point-to-point link whose measured rate is the message rate.
    """

    label: str
    latency: Measurement
    bandwidth: Measurement
    ranks: int | None = None

    def __post_init__(self) -> None:
        if self.ranks is not None:
            positive_int("ranks", self.ranks, minimum=2)

    @property
    def latency_s(self) -> float:
        return self.latency.value

    @property
    def measured_bandwidth_bytes_per_s(self) -> float:
        """The measurement as published (NCCL's bus bandwidth for an all-reduce)."""
        return self.bandwidth.value

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """Bytes/s at which a message moves: the algorithm bandwidth for an all-reduce."""
        if self.ranks is None:
            return self.bandwidth.value
        return memory.allreduce_algorithm_bandwidth(self.bandwidth.value, self.ranks)

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.latency.source, self.bandwidth.source)))


#: GPUs in one node of the cluster the all-reduce presets were measured on (AWS p5: 8 × H100).
GPUS_PER_NODE = 8


def presets() -> tuple[TransferPreset, ...]:
    """Links whose latency *and* bandwidth were both measured (GPU microbenchmarks and the
    Smol Training Playbook's AWS p5 measurements; see :mod:`gpuperf.measurements`)."""
    return (
        TransferPreset(
            "CPU → GPU, H100 node (PCIe)",
            find("CPU ↔ GPU round-trip latency", "H100-SXM"),
            find("CPU → GPU copy", "H100-SXM"),
        ),
        TransferPreset(
            "all-reduce, 8 H100 in one node",
            find("all-reduce latency, one node", "H100-SXM"),
            find("all-reduce bus bandwidth in one node", "H100-SXM"),
            ranks=GPUS_PER_NODE,
        ),
        TransferPreset(
            "all-reduce, 16 H100 nodes",
            find("all-reduce latency, 16 nodes", "H100-SXM"),
            find("all-reduce bus bandwidth, 3–16 nodes", "H100-SXM"),
            ranks=16 * GPUS_PER_NODE,
        ),
        TransferPreset(
            "HBM, A100 (load latency: 80 GB card; A = B + C kernel: 40 GB card)",
            find("HBM load latency", "A100-80GB"),
            find("memcopy kernel (effective throughput)", "A100-40GB"),
        ),
    )


class TransferView:
    """Effective bandwidth vs transfer size (left) and where the time goes (right)."""

    def __init__(self, *, figsize: tuple[float, float] = (9.0, 3.6), dpi: int = 72) -> None:
        self.figure = figure = new_figure(figsize, dpi)
        grid = figure.add_gridspec(1, 2, width_ratios=(3.2, 1))
        left = figure.add_subplot(grid[0])
        right = figure.add_subplot(grid[1])
        figure.subplots_adjust(left=0.08, right=0.97, top=0.9, bottom=0.15, wspace=0.35)
        left.set_xscale("log")
        left.set_yscale("log")
        left.set_xlim(*_SIZES)
        left.set_ylim(*_BANDWIDTH_GB)
        left.set_xlabel("transfer size (bytes)")
        left.set_ylabel("effective bandwidth (GB/s)")
        left.set_title("time = latency + bytes / bandwidth", fontsize=10)
        left.grid(True, which="major", alpha=0.3)
        left.minorticks_off()
        left.axvline(LATENCY_BOUND_BELOW_BYTES, color="0.5", ls="--", lw=1)
        left.annotate(
            "nvbandwidth copies\nlatency-bound below ~1 MB",
            (LATENCY_BOUND_BELOW_BYTES, _BANDWIDTH_GB[0] * 3),
            xytext=(4, 0),
            textcoords="offset points",
            fontsize=7,
            color="0.35",
        )
        self.sizes = np.geomspace(*_SIZES, 240)
        self.latency_region = left.axvspan(_SIZES[0], _SIZES[0], color="tab:red", alpha=0.1)
        (self.curve,) = left.plot([], [], color="tab:blue", lw=2, label="effective bandwidth")
        (self.peak,) = left.plot([], [], color="black", lw=1, ls=":", label="peak bandwidth")
        (self.half,) = left.plot([], [], color="tab:red", lw=1, label="half peak at latency × bw")
        (self.point,) = left.plot([], [], "o", color="tab:orange", ms=9, mec="black")
        left.legend(loc="upper left", fontsize=7)

        right.set_xlim(0, 1)
        right.set_ylim(-0.5, 1.4)
        right.set_yticks([])
        right.set_xlabel("share of the transfer time")
        right.set_title("where the time goes", fontsize=10)
        self.latency_bar = right.barh([0], [0], color="tab:red", alpha=0.6, label="latency")[0]
        self.bytes_bar = right.barh([0], [0], color="tab:blue", alpha=0.6, label="bytes / bw")[0]
        right.legend(loc="upper center", fontsize=7, ncol=1)
        self.animated = [
            self.latency_region,
            self.curve,
            self.peak,
            self.half,
            self.point,
            self.latency_bar,
            self.bytes_bar,
        ]
        self.last: dict[str, float] = {}

    @staticmethod
    def _set_span(patch: Any, start: float, stop: float) -> None:
        if hasattr(patch, "set_x") and hasattr(patch, "set_width"):
            patch.set_x(start)
            patch.set_width(stop - start)
        else:
            patch.set_xy([[start, 0], [start, 1], [stop, 1], [stop, 0], [start, 0]])

    def update(self, n_bytes: float, latency_us: float, bandwidth_gb_s: float) -> str:
        latency_s, bandwidth = latency_us * 1e-6, bandwidth_gb_s * GB
        curve = memory.effective_bandwidth(self.sizes, bandwidth, latency_s)
        self.curve.set_data(self.sizes, curve / GB)
        self.peak.set_data(list(_SIZES), [bandwidth_gb_s] * 2)
        half = memory.half_bandwidth_size(bandwidth, latency_s)
        self.half.set_data([half, half], list(_BANDWIDTH_GB))
        self._set_span(self.latency_region, _SIZES[0], max(_SIZES[0], min(half, _SIZES[1])))
        time_s = float(memory.transfer_time(n_bytes, bandwidth, latency_s))
        achieved = float(memory.effective_bandwidth(n_bytes, bandwidth, latency_s))
        self.point.set_data([n_bytes], [achieved / GB])
        latency_share = latency_s / time_s
        self.latency_bar.set_width(latency_share)
        self.bytes_bar.set_x(latency_share)
        self.bytes_bar.set_width(1 - latency_share)
        self.last = {
            "time_s": time_s,
            "effective_bandwidth": achieved,
            "half_bandwidth_bytes": half,
            "latency_share": latency_share,
        }
        regime = "latency-bound" if n_bytes < half else "bandwidth-bound"
        return (
            f"{format_bytes(n_bytes)} at {format_bandwidth(bandwidth)} with "
            f"{format_seconds(latency_s)} latency: {format_seconds(time_s)}, effective "
            f"{format_bandwidth(achieved)} ({achieved / bandwidth:.0%} of peak), {regime}; "
            f"half the peak needs {format_bytes(half)}."
        )

    def render(self, **values: Any) -> tuple[Any, str]:
        return self.figure, self.update(**values)


def transfer_explorer(preset: int = 0, n_bytes: float = 1e6) -> Explorer:
    """Size × latency × bandwidth sliders (and measured presets) → effective bandwidth."""
    widgets = require("ipywidgets", "pip install ipywidgets")
    links = presets()
    style = {"description_width": "initial"}
    picker = control_widget(
        widgets.Dropdown,
        "preset",
        options=[(link.label, i) for i, link in enumerate(links)],
        value=preset,
        description="measured link",
        style=style,
    )
    chosen = links[picker.value]
    controls = {
        "n_bytes": control_widget(
            widgets.FloatLogSlider, "n_bytes", value=n_bytes, base=10, min=2, max=10,
            step=0.25, description="bytes",
            readout_format=".3g", style=style,
        ),
        "latency_us": widgets.FloatLogSlider(
            value=chosen.latency_s * 1e6, base=10, min=-1, max=3, step=0.05,
            description="latency (µs)", readout_format=".3g", style=style,
        ),
        "bandwidth_gb_s": widgets.FloatLogSlider(
            value=chosen.bandwidth_bytes_per_s / GB, base=10, min=0, max=4, step=0.05,
            description="bandwidth (GB/s)", readout_format=".4g", style=style,
        ),
    }  # fmt: skip
    view = TransferView()
    explorer = Explorer(
        controls,
        view.update,
        LiveFigure(view.figure, view.animated),
        title="Latency vs bandwidth: effective bandwidth of one transfer",
    )

    def on_preset(change: Any) -> None:  # wiring: a preset sets both sliders
        link = links[change["new"]]
        controls["latency_us"].value = link.latency_s * 1e6
        controls["bandwidth_gb_s"].value = link.bandwidth_bytes_per_s / GB

    picker.observe(on_preset, names="value")
    explorer.widget.children = (picker, *explorer.widget.children)
    explorer.view = view
    explorer.preset = picker
    return explorer


def transfer_scrubber(exponents: tuple[float, ...] = tuple(range(2, 11))) -> Scrubber:
    """Kernel-free twin of :func:`transfer_explorer`: measured link × transfer size."""
    view = TransferView(dpi=72)
    links = presets()
    sizes = tuple(float(10**e) for e in exponents)
    return Scrubber(
        lambda link, n_bytes: view.render(
            n_bytes=n_bytes,
            latency_us=links[link].latency_s * 1e6,
            bandwidth_gb_s=links[link].bandwidth_bytes_per_s / GB,
        ),
        [
            control(
                "link", range(len(links)), label="measured link", format=lambda i: links[i].label
            ),
            control(
                "n_bytes",
                sizes,
                label="transfer size",
                format=format_bytes,
                initial=min(sizes, key=lambda s: abs(np.log10(s) - 6)),
            ),
        ],
        alt=(
            "Log-log curve of effective bandwidth against transfer size for a measured link: "
            "flat at the peak for large transfers, falling in proportion to size below the "
            "half-bandwidth size, with the chosen size marked and a bar splitting its time "
            "into latency and bytes over bandwidth."
        ),
    )
