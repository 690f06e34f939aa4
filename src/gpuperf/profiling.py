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
help; :func:`bound_in_words` makes that comparison. It is a first look, not a timeline: overlap
and idle gaps are seen in a trace (``prof.export_chrome_trace``) or in Nsight Systems.

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

from ._validate import MAX_PRODUCT, choice, name_string, positive_float, positive_int, show
from .runtime import require

__all__ = ["GLOSSARY", "Profile", "ProfileRow", "bound_in_words", "profile"]

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
    """One line of the profiler table, times in seconds (device times are 0 on a CPU)."""

    name: str
    calls: int
    self_cpu_s: float
    cpu_total_s: float
    self_device_s: float
    device_total_s: float

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"name={show(self.name)} must be a string")
        positive_int("calls", self.calls, minimum=0, maximum=MAX_PRODUCT)
        for label in ("self_cpu_s", "cpu_total_s", "self_device_s", "device_total_s"):
            object.__setattr__(self, label, positive_float(label, getattr(self, label), True))


@dataclass(frozen=True)
class Profile:
    """What :func:`profile` measured: the printed table and the rows behind it."""

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
    def bound(self) -> str:
        return bound_in_words(self.self_cpu_total_s, self.self_device_total_s)


def bound_in_words(host_s: float, device_s: float) -> str:
    """Compare host time with device time (seed 003's rule of thumb).

    No device time → nothing ran on a GPU. Host > device → CPU-bound: the GPU waits for the
    host to issue work. Otherwise GPU-bound: the kernels themselves take the time.
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
    is counted). ``sort_by`` defaults to self device time on a GPU, self CPU time otherwise.
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
    rows = tuple(
        ProfileRow(
            name=event.key,
            calls=int(event.count),
            self_cpu_s=event.self_cpu_time_total * 1e-6,
            cpu_total_s=event.cpu_time_total * 1e-6,
            self_device_s=float(getattr(event, "self_device_time_total", 0.0)) * 1e-6,
            device_total_s=float(getattr(event, "device_time_total", 0.0)) * 1e-6,
        )
        for event in averages
    )
    return Profile(
        device="cuda" if on_gpu else "cpu",
        steps=steps,
        rows=tuple(sorted(rows, key=lambda r: -(r.self_device_s or r.self_cpu_s))),
        table=averages.table(sort_by=sort_by, row_limit=row_limit),
        self_cpu_total_s=sum(r.self_cpu_s for r in rows),
        self_device_total_s=sum(r.self_device_s for r in rows),
    )
