"""Grade efficiency on a CPU: the bytes a student's kernel requests, counted in the interpreter.

A correct kernel can still be wasteful — a tiled matmul that reloads its A panel, a
FlashAttention kernel that re-reads Q on every key block, a copy whose lanes stride through
memory. :func:`check_traffic` counts what the student's launch requests from global memory
(:mod:`gpuperf.counting`) and fails with the excess and the load line that requested the most
when it is above what the algorithm needs; :func:`check_sector_efficiency` fails when a load or
store uses too little of the 32-byte sectors it touches. Neither times anything: the count is
the same on every CPU, so the grade is.

Both fail when the launch they are given launches no Triton kernel at all (a "kernel" replaced
by a torch expression is not graded as an efficient one). On a GPU, where kernels are compiled
rather than interpreted, nothing can be counted and both only run the launch: grade efficiency
on a CPU. The class grader (:mod:`gpuperf.classroom`) counts too, without trusting the
student's process: it runs the kernel's checked source alone in a sandbox of its own
(:mod:`gpuperf.classroom.recount`) and hands the counts to these checks.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .._validate import name_string, positive_float, show
from .feedback import CheckError
from .running import call

__all__ = ["check_sector_efficiency", "check_traffic"]

KINDS = ("read", "written", "total")
SECTOR_KINDS = ("load", "store", "both")


def check_traffic(
    name: str,
    launch: Any,
    expected_bytes: float | Mapping[str, float],
    *,
    kind: str = "read",
    slack: float = 0.05,
    what: str = "",
) -> Any:
    """Run ``launch()`` (the student's kernel launch) counting its requested bytes; fail if the
    ``kind`` ("read", "written", "total") bytes exceed ``expected_bytes`` by more than ``slack``
    (a fraction). Returns what ``launch()`` returned.

    ``expected_bytes`` is a number, or a mapping from the kernel's pointer arguments
    (``{"a_ptr": …, "b_ptr": …}``) to the bytes each needs: then the message names the tensor
    with the largest excess and every line that accessed it. ``what`` says where the expected
    bytes come from, for the message.
    """
    name = name_string("name", name)
    if isinstance(expected_bytes, Mapping):
        if not expected_bytes:
            raise ValueError("expected_bytes={} must name at least one tensor")
        per_tensor = {
            name_string("tensor", t): positive_float(f"expected_bytes[{t!r}]", b, True)
            for t, b in expected_bytes.items()
        }
        expected = positive_float("expected_bytes", sum(per_tensor.values()))
    else:
        per_tensor = {}
        expected = positive_float("expected_bytes", expected_bytes)
    slack = positive_float("slack", slack, allow_zero=True, maximum=10.0)
    if kind not in KINDS:
        raise ValueError(f"kind={show(kind)} must be one of {', '.join(KINDS)}")
    if not isinstance(what, str):
        raise TypeError(f"what={show(what)} must be a string")
    result, launches = _counted(name, launch)
    if launches is None:  # compiled for a GPU: nothing to count here
        return result
    sites = [
        s
        for x in launches
        for s in x.sites
        if kind == "total" or (s.kind == "store") == (kind == "written") or s.kind == "atomic"
    ]
    got = sum(s.bytes for s in sites)
    if got <= expected * (1 + slack):
        return result
    by_tensor: dict[str, int] = {}
    for s in sites:
        by_tensor[s.tensor] = by_tensor.get(s.tensor, 0) + s.bytes
    if per_tensor:
        culprit = max(by_tensor, key=lambda t: by_tensor[t] - per_tensor.get(t, 0.0))
    else:
        culprit = max(by_tensor, key=lambda t: by_tensor[t])
    lines = [s for s in sites if s.tensor == culprit]
    listed = "; ".join(
        f"line {s.line}{_file(s.file)} `{s.code}` ({s.bytes:,} bytes in {s.executions} executions)"
        for s in lines
    )
    need = f", where {per_tensor[culprit]:,.0f} suffice" if culprit in per_tensor else ""
    because = f" ({what})" if what else ""
    raise CheckError(
        f"`{name}` is correct but requested {got:,} bytes {kind} from global memory where "
        f"{expected:,.0f} suffice{because}: {got / expected:.2f}× the bytes, "
        f"{got - expected:,.0f} more. Most of the excess is `{culprit}`: {by_tensor[culprit]:,} "
        f"bytes{need}, from {listed}. Load each tile once per use and keep it in registers; "
        "move a load out of a loop it does not depend on. (Bytes requested, counted in Triton's "
        "interpreter on the CPU — not DRAM traffic, and not a time.)"
    )


def _file(path: str) -> str:
    from ..counting import cell_number

    cell = cell_number(path)
    if cell is not None:  # the class grader's copy of a notebook cell (gpuperf.classroom.recount)
        return f" of code cell {cell}"
    if path.endswith(".py") and "ipykernel" not in path:
        return f" of {os.path.basename(path)}"
    return ""


_DONE = {"load": "loaded", "store": "stored"}


def _counted(name: str, launch: Any) -> tuple[Any, list | None]:
    """Run ``launch()`` counting its kernel launches: (its result, the launches); fail if it
    launched none. Where kernels are compiled for a GPU nothing can be counted: (result, None)."""
    from ..runtime import interpreting

    if not interpreting():
        return call(name, launch), None
    from ..counting import counting

    with counting() as launches:
        result = call(name, launch)
    if not launches:
        raise CheckError(
            f"`{name}` ran without launching a Triton kernel, so there was nothing to count: "
            "efficiency is graded on the kernel's own loads and stores (write it with "
            "@triton.jit and launch it as kernel[grid](...))"
        )
    return result, list(launches)


def check_sector_efficiency(
    name: str,
    launch: Any,
    minimum: float = 0.9,
    *,
    kind: str = "both",
    what: str = "",
) -> Any:
    """Run ``launch()`` (the student's kernel launch) counting its accesses; fail if any load
    (``kind="load"``), store (``"store"``) or either (``"both"``) uses less than ``minimum`` of
    the bytes of the 32-byte sectors it touches. Returns what ``launch()`` returned.

    The efficiency is counted per program-wide access (:mod:`gpuperf.counting`): a GPU splits
    it warp by warp, which can only touch more sectors, so a kernel that fails here is at least
    as wasteful on the hardware. ``what`` says what the coalesced kernel achieves, for the
    message.
    """
    name = name_string("name", name)
    minimum = positive_float("minimum", minimum, maximum=1.0)
    if kind not in SECTOR_KINDS:
        raise ValueError(f"kind={show(kind)} must be one of {', '.join(SECTOR_KINDS)}")
    if not isinstance(what, str):
        raise TypeError(f"what={show(what)} must be a string")
    result, launches = _counted(name, launch)
    if launches is None:  # compiled for a GPU: nothing to count here
        return result
    kinds = ("load", "store") if kind == "both" else (kind,)
    sites = [s for x in launches for s in x.sites if s.kind in kinds and s.bytes]
    worst = sorted(sites, key=lambda s: s.sector_efficiency)
    poor = [s for s in worst if s.sector_efficiency < minimum]
    if not poor:
        return result
    listed = "; ".join(
        f"line {s.line}{_file(s.file)} `{s.code}`: {s.bytes:,} bytes {_DONE[s.kind]} in "
        f"{s.sectors:,} sectors of 32 bytes ({s.sector_bytes:,} bytes), "
        f"{s.sector_efficiency:.0%} used"
        for s in poor
    )
    because = f" ({what})" if what else ""
    raise CheckError(
        f"`{name}` is correct but wastes the sectors it touches: {listed} — below the "
        f"{minimum:.0%} required{because}. Give consecutive lanes (the elements of one "
        "tl.arange) consecutive addresses: offsets = start + tl.arange(0, BLOCK). (Counted per "
        "program in Triton's interpreter on the CPU: bytes requested, not a time.)"
    )
