"""Run the PyTorch profiler on a function and read its table.

``torch.profiler`` records every ATen operator (``aten::mm``, ``aten::softmax``, ...) the host
thread runs and, on a GPU, every kernel the device runs. Its ``key_averages().table()`` groups
the events by name; the columns mean (seed 003's glossary, in our words — see :data:`GLOSSARY`):

* *Self* time excludes the operators an operator calls; *total* time includes them, so
  total = self + Σ callees' totals.
* *CPU* times are host time: Python, the dispatcher, argument checks, and *launching* kernels.
  CUDA calls are asynchronous, so a launch returns before the kernel has run.
* *CUDA* (device) times are what the GPU spent running the kernels an operator launched.

CPU-bound vs GPU-bound: if the host spends longer issuing work than the device spends doing it,
the GPU idles between kernels (many tiny kernels, Python overhead) and a faster GPU would not
help; :func:`bound_in_words` makes that comparison. Two sums of the table would mislead it:

* **Host time waiting is not host time issuing.** A synchronisation (``torch.cuda.synchronize()``,
  ``.item()``, ``.cpu()``) blocks the host until the GPU is done, and the profiler books that
  wait as the *Self CPU* of a runtime event (``cudaDeviceSynchronize``,
  ``cudaStreamSynchronize``, ``cudaEventSynchronize``; :data:`HOST_WAIT_EVENTS`). Counted as
  host work, a GPU-bound step would read CPU-bound: the host seems busy exactly as long as the
  GPU was. :attr:`Profile.host_issue_s` leaves those rows out (:attr:`Profile.host_wait_s` holds
  them), and :func:`profile`'s own synchronisation at the end is one of them.
* **A kernel appears twice.** ``key_averages()`` has a row for the kernel (a device event) and
  books the same time as *Self CUDA* of the operator that launched it; the device total sums the
  device events only, as the table's own "Self CUDA time total" does.

It is a first look, not a timeline: overlap and idle gaps are seen in a trace
(``prof.export_chrome_trace``) or in Nsight Systems.

:func:`profile` returns the table *and* the numbers behind it as :class:`ProfileRow` objects, so a
notebook can print the table (timings vary run to run) and assert on its structure. torch is
imported lazily.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ._validate import MAX_PRODUCT, choice, flag, name_string, positive_float, positive_int, show
from .runtime import require

__all__ = [
    "GLOSSARY",
    "HOST_WAIT_EVENTS",
    "Profile",
    "ProfileRow",
    "bound_in_words",
    "is_host_wait",
    "profile",
]

#: Profiler rows whose Self CPU is the host *waiting* for the device, not issuing work: the CUDA
#: (and ROCm) runtime's synchronisations, and the ATen op behind ``.item()``.
HOST_WAIT_EVENTS: tuple[str, ...] = (
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "hipDeviceSynchronize",
    "hipStreamSynchronize",
    "hipEventSynchronize",
    "aten::_local_scalar_dense",
)


def is_host_wait(name: str) -> bool:
    """Whether a profiler row called ``name`` is the host waiting for the device."""
    name_string("name", name)
    return name in HOST_WAIT_EVENTS


#: Column of ``key_averages().table()`` → what it measures and how to read it.
GLOSSARY: tuple[tuple[str, str], ...] = (
    ("Name", "the ATen operator (aten::…) or, on a GPU, the kernel it launched"),
    ("Self CPU", "host time inside this operator itself, not counting the operators it calls: "
                 "argument checks, dispatch, kernel launches"),
    ("Self CPU %", "Self CPU as a share of all host time recorded"),
    ("CPU total", "host wall time from entering to leaving the operator, callees included"),
    ("CPU total %", "CPU total as a share of all host time recorded"),
    ("CPU time avg", "CPU total / # of Calls: the host cost of one call"),
    ("Self CUDA", "device time of the kernels this operator launched itself; kernels are leaves, "
                  "so this is where the GPU's time goes"),
    ("Self CUDA %", "Self CUDA as a share of all device time recorded"),
    ("CUDA total", "device time of every kernel launched by the operator and its callees"),
    ("CUDA time avg", "CUDA total / # of Calls"),
    ("# of Calls", "how many times the operator ran while the profiler was on"),
)  # fmt: skip


@dataclass(frozen=True)
class ProfileRow:
    """One line of the profiler table, times in seconds (device times are 0 on a CPU).

    ``on_device``: the row is a device event (a kernel, a copy, a memset), not a host operator
    or a runtime call; only those rows make up the device's time.
    """

    name: str
    calls: int
    self_cpu_s: float
    cpu_total_s: float
    self_device_s: float
    device_total_s: float
    on_device: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"name={show(self.name)} must be a string")
        positive_int("calls", self.calls, minimum=0, maximum=MAX_PRODUCT)
        for label in ("self_cpu_s", "cpu_total_s", "self_device_s", "device_total_s"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label), True))
        object.__setattr__(self, "on_device", flag("on_device", self.on_device))

    @property
    def host_wait(self) -> bool:
        """Whether this row's Self CPU is the host waiting (:data:`HOST_WAIT_EVENTS`)."""
        return self.name in HOST_WAIT_EVENTS


@dataclass(frozen=True)
class Profile:
    """What :func:`profile` measured: the printed table and the rows behind it.

    ``self_cpu_total_s`` sums Self CPU over every row (the table's "Self CPU time total", waits
    included); ``self_device_total_s`` sums Self CUDA over the device events only (the table's
    "Self CUDA time total"). :attr:`host_issue_s` is the host time :attr:`bound` compares.
    """

    device: str
    steps: int
    rows: tuple[ProfileRow, ...]
    table: str
    self_cpu_total_s: float
    self_device_total_s: float

    def __post_init__(self) -> None:
        choice("device", self.device, ("cpu", "cuda"))
        if not isinstance(self.rows, tuple) or not all(
            isinstance(r, ProfileRow) for r in self.rows
        ):
            raise TypeError(f"rows={show(self.rows)} must be a tuple of ProfileRow")
        positive_int("steps", self.steps, maximum=MAX_PRODUCT)
        if not isinstance(self.table, str):
            raise TypeError(f"table={show(self.table)} must be a string")
        for label in ("self_cpu_total_s", "self_device_total_s"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label), True))

    def row(self, name: str) -> ProfileRow:
        """The row called ``name`` (e.g. ``"aten::mm"``); ``KeyError`` lists the names."""
        for r in self.rows:
            if r.name == name:
                return r
        rows = ", ".join(r.name for r in self.rows)
        raise KeyError(f"name={show(name)}: no row {show(name)}; rows: {rows}")

    @property
    def host_wait_s(self) -> float:
        """Self CPU of the rows where the host waits for the device (:data:`HOST_WAIT_EVENTS`)."""
        return sum(r.self_cpu_s for r in self.rows if r.host_wait)

    @property
    def host_issue_s(self) -> float:
        """Host time spent issuing work: all Self CPU but the waits."""
        return max(0.0, self.self_cpu_total_s - self.host_wait_s)

    @property
    def bound(self) -> str:
        """CPU- or GPU-bound: the host's *issuing* time against the device's time."""
        return bound_in_words(self.host_issue_s, self.self_device_total_s)


def bound_in_words(host_s: float, device_s: float) -> str:
    """Compare the host's time *issuing* work with the device's time (seed 003's rule of thumb).

    No device time → nothing ran on a GPU. Host > device → CPU-bound: the GPU waits for the
    host to issue work. Otherwise GPU-bound: the kernels themselves take the time. ``host_s``
    must leave out the host's waits for the device (:attr:`Profile.host_issue_s`): a
    synchronised GPU-bound step spends about the device's time waiting.
    """
    host_s = positive_float("host_s", host_s, allow_zero=True)
    device_s = positive_float("device_s", device_s, allow_zero=True)
    if device_s == 0:
        return "no GPU activity recorded: everything ran on the CPU"
    if host_s == 0:
        return "GPU-bound: the host recorded no time issuing work, the device did all of it"
    ratio = host_s / device_s
    if ratio > 1:
        return f"CPU-bound: the host spent {ratio:.3g}× the device time issuing work"
    return f"GPU-bound: the device was busy {1 / ratio:.3g}× as long as the host"


#: Trace lines libkineto prints on every profiler start/stop (not errors); filtered out.
_KINETO_CHATTER = ("USDT:",)


@contextlib.contextmanager
def _filtered_native_stderr() -> Iterator[None]:
    """Send the C++ profiler's fd-2 chatter to a temporary file; re-emit anything else.

    libkineto writes ``USDT: ... profiler_start`` lines straight to file descriptor 2, below
    Python's ``sys.stderr``, so they would appear as a stderr stream in every notebook cell.
    Lines that are not this chatter (real warnings or errors) are written to ``sys.stderr``.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real fd 2 (unusual embedded interpreters)
        yield
        return
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            text = capture.read().decode("utf-8", errors="replace")
            kept = [line for line in text.splitlines() if not line.startswith(_KINETO_CHATTER)]
            if kept:
                sys.stderr.write("\n".join(kept) + "\n")


def profile(
    fn: Callable[..., Any],
    *args: Any,
    steps: int = 3,
    warmup: int = 1,
    sort_by: str | None = None,
    row_limit: int = 12,
    **kwargs: Any,
) -> Profile:
    """Run ``fn(*args, **kwargs)`` ``warmup`` times unprofiled, then ``steps`` times profiled.

    Profiles CUDA too when a GPU is present (and synchronises before stopping, so every kernel
    is counted: that wait is a ``cudaDeviceSynchronize`` row, which :attr:`Profile.bound` leaves
    out of the host's time). ``sort_by`` defaults to self device time on a GPU, self CPU time
    otherwise.
    """
    if not callable(fn):
        raise TypeError(f"fn={show(fn)} must be callable")
    if sort_by is not None:
        name_string("sort_by", sort_by)
    torch = require("torch", "pip install torch")
    profiler = require("torch.profiler", "pip install torch")
    steps = positive_int("steps", steps)
    warmup = positive_int("warmup", warmup, minimum=0)
    row_limit = positive_int("row_limit", row_limit)
    on_gpu = torch.cuda.is_available()
    activities = [profiler.ProfilerActivity.CPU]
    if on_gpu:
        activities.append(profiler.ProfilerActivity.CUDA)
    for _ in range(warmup):
        fn(*args, **kwargs)
    if on_gpu:
        torch.cuda.synchronize()
    with _filtered_native_stderr(), profiler.profile(activities=activities) as prof:
        for _ in range(steps):
            fn(*args, **kwargs)
        if on_gpu:
            torch.cuda.synchronize()
    averages = prof.key_averages()
    sort_by = sort_by or ("self_cuda_time_total" if on_gpu else "self_cpu_time_total")
    return _profile_from_averages(
        averages,
        device="cuda" if on_gpu else "cpu",
        steps=steps,
        table=averages.table(sort_by=sort_by, row_limit=row_limit),
    )


def _on_device(event: Any) -> bool:
    """A device event (kernel, copy, memset) of ``key_averages()``, not a user annotation."""
    kind = getattr(event, "device_type", None)
    kind = getattr(kind, "name", str(kind)).rsplit(".", 1)[-1]
    return kind not in ("CPU", "None") and not getattr(event, "is_user_annotation", False)


def _profile_from_averages(averages: Any, *, device: str, steps: int, table: str) -> Profile:
    """A :class:`Profile` from the rows of ``key_averages()`` (times in microseconds there)."""
    rows = tuple(
        ProfileRow(
            name=event.key,
            calls=int(event.count),
            self_cpu_s=event.self_cpu_time_total * 1e-6,
            cpu_total_s=event.cpu_time_total * 1e-6,
            self_device_s=float(getattr(event, "self_device_time_total", 0.0)) * 1e-6,
            device_total_s=float(getattr(event, "device_time_total", 0.0)) * 1e-6,
            on_device=_on_device(event),
        )
        for event in averages
    )
    return Profile(
        device=device,
        steps=steps,
        rows=tuple(sorted(rows, key=lambda r: -(r.self_device_s or r.self_cpu_s))),
        table=table,
        self_cpu_total_s=sum(r.self_cpu_s for r in rows),
        self_device_total_s=sum(r.self_device_s for r in rows if r.on_device),
    )
