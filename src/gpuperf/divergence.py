"""Control divergence: what a branch costs when the threads of a warp disagree.

A warp issues one instruction for all 32 lanes (SIMT). If every lane takes the same side of a
branch, only that side runs. If the lanes split, the warp runs each side in turn with the other
lanes masked off, so its time is the sum of the paths any of its lanes takes (seed 002, p. 26;
CUDA Programming Guide, "SIMT Architecture"). Divergence is a compute cost, not a memory one:
the bytes moved do not change, only the instructions issued.

The model here counts, for a given assignment of threads to paths, how many distinct paths each
warp executes; :func:`branch_cost` turns that into FLOPs and bytes for the roofline. It ignores
reconvergence details (independent thread scheduling on Volta+ interleaves the paths but still
issues both) and assumes every path costs the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validate import positive_float, positive_int, show
from .cost import OpCost, elementwise
from .hardware import MAX_THREADS_PER_BLOCK, WARP_SIZE

#: Most threads :func:`periodic_branch` models (it allocates one entry per warp): 2**26 threads,
#: 2M warps, 16 MB — far more than a chart needs, far less than a machine holds.
MAX_THREADS = 2**26


@dataclass(frozen=True)
class WarpDivergence:
    """Paths executed by each warp for one assignment of threads to branch paths."""

    paths_per_warp: np.ndarray

    def __post_init__(self) -> None:
        try:
            paths = np.asarray(self.paths_per_warp)
        except ValueError:  # ragged: numpy cannot make an array of it
            paths = np.asarray([])
        if (
            paths.ndim != 1
            or paths.size == 0
            or not np.issubdtype(paths.dtype, np.integer)
            or np.any(paths < 1)
        ):
            raise ValueError(
                f"paths_per_warp={show(self.paths_per_warp)} must be a non-empty 1-D integer "
                "array of path counts ≥ 1"
            )
        paths = paths.copy()
        paths.setflags(write=False)  # a frozen result: its array cannot be edited either
        object.__setattr__(self, "paths_per_warp", paths)

    @property
    def mean_paths(self) -> float:
        """Average number of paths a warp runs one after the other (1 = no divergence)."""
        return float(self.paths_per_warp.mean())

    @property
    def diverged_fraction(self) -> float:
        """Fraction of warps whose lanes took more than one path."""
        return float((self.paths_per_warp > 1).mean())

    @property
    def simt_efficiency(self) -> float:
        """Useful lane-instructions over issued lane-instructions, for equal-cost paths."""
        return 1.0 / self.mean_paths


def warp_divergence(path_of_thread: object, warp_size: int = WARP_SIZE) -> WarpDivergence:
    """Count the distinct paths in each warp; ``path_of_thread[i]`` is thread i's path id.

    The number of threads must be a multiple of ``warp_size`` (a launch always fills whole
    warps; pad the tail with the path the masked-off lanes would take).
    """
    warp_size = positive_int("warp_size", warp_size, maximum=MAX_THREADS_PER_BLOCK)
    paths = np.asarray(path_of_thread)
    if paths.dtype != bool and not np.issubdtype(paths.dtype, np.integer):
        as_float = (
            paths.astype(float) if np.issubdtype(paths.dtype, np.floating) else np.array([np.nan])
        )
        if not np.all(np.isfinite(as_float)) or np.any(as_float != np.round(as_float)):
            raise ValueError(
                f"path_of_thread={show(path_of_thread)} must hold integer path ids "
                f"(got dtype {paths.dtype})"
            )
        paths = as_float.astype(np.int64)
    if paths.ndim != 1 or paths.size == 0 or paths.size % warp_size:
        raise ValueError(
            f"path_of_thread has {paths.size} entries; it must be a non-empty 1-D array whose "
            f"length is a multiple of warp_size={warp_size}"
        )
    per_warp = np.sort(paths.reshape(-1, warp_size), axis=1)
    distinct = 1 + (np.diff(per_warp, axis=1) != 0).sum(axis=1)
    return WarpDivergence(distinct)


def periodic_branch(n_threads: int, period: int, warp_size: int = WARP_SIZE) -> WarpDivergence:
    """Thread i takes path ``(i // period) % 2``: period 1 splits every warp, ≥ 32 splits none.

    This is the branch of :mod:`gpuperf.kernels.divergence` (period 1 for the split kernel,
    ``BLOCK_SIZE`` for the uniform one).
    """
    n_threads = positive_int("n_threads", n_threads, maximum=MAX_THREADS)
    period = positive_int("period", period)
    warp_size = positive_int("warp_size", warp_size, maximum=MAX_THREADS_PER_BLOCK)
    if n_threads % warp_size:
        raise ValueError(
            f"n_threads={n_threads} must be a multiple of warp_size={warp_size} (a launch "
            "always fills whole warps)"
        )
    # Paths alternate every ``period`` threads, so a warp runs both paths exactly when its first
    # and last lanes fall in different periods: one entry per warp, no per-thread array.
    first = np.arange(0, n_threads, warp_size, dtype=np.int64)
    last = first + warp_size - 1
    return WarpDivergence(1 + (first // period != last // period).astype(np.int64))


def branch_cost(n: int, iters: int, paths: float, precision: str = "fp32") -> OpCost:
    """FLOPs and bytes of the divergence kernels: each element runs ``iters`` operations on
    every path its warp executes (``paths``: 1 uniform, 2 split, or a mean from
    :class:`WarpDivergence`); it reads and writes each element once.
    """
    iters = positive_int("iters", iters)
    paths = positive_float("paths", paths)
    if not 1 <= paths <= WARP_SIZE:
        raise ValueError(f"paths={paths!r} must be between 1 and {WARP_SIZE}")
    return elementwise(n, precision, flops_per_element=paths * iters, name="branch")


__all__ = [
    "MAX_THREADS",
    "WarpDivergence",
    "branch_cost",
    "periodic_branch",
    "warp_divergence",
]
