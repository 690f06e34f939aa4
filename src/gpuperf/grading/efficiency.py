"""Grade efficiency on a CPU: the bytes a student's kernel requests, counted in the interpreter.

A correct kernel can still be wasteful — a tiled matmul that reloads its A panel, a
FlashAttention kernel that re-reads Q on every key block. :func:`check_traffic` counts what
the student's launch requests from global memory (:mod:`gpuperf.counting`) and fails with the
excess and the load line that requested the most when it is above what the algorithm needs.
It never times anything: the count is the same on every CPU, so the grade is.

Where nothing can be counted the check grades nothing: on a GPU (kernels are compiled, not
interpreted) and where the launch ran in another process. The class grader
(:mod:`gpuperf.classroom`) runs students' code in a sandbox, where this process sees no launch,
so it does not run efficiency cases at all rather than let them pass silently: each row's notes
say "efficiency not graded by the class grader (counted only in otter/notebook runs)" and the
case's points are left out of the score and the maximum for every student
(:mod:`gpuperf.classroom.tester`). Correctness is graded there as everywhere; efficiency only
where the interpreter runs in the checking process (otter, Colab's CPU runtime, a laptop).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .._validate import name_string, positive_float, show
from .feedback import CheckError
from .running import call

__all__ = ["check_traffic"]

KINDS = ("read", "written", "total")


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
    from ..runtime import interpreting

    if not interpreting():  # compiled for a GPU: nothing to count here
        return call(name, launch)
    from ..counting import counting

    with counting() as launches:
        result = call(name, launch)
    if not launches:  # the launch ran in another process (a sandbox): not counted here
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
    if path.endswith(".py") and "ipykernel" not in path:
        return f" of {os.path.basename(path)}"
    return ""
