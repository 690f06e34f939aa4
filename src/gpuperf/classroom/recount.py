"""Count a student's kernel in a sandbox of its own: efficiency graded without trusting the
student's process.

The class grader's efficiency cases (``run_hidden("q1_traffic", ...)``: a hidden test that calls
:func:`gpuperf.grading.check_traffic` or :func:`~gpuperf.grading.check_sector_efficiency`) need
the bytes the kernel requests. Counted in the submission's own sandbox, those numbers would come
from a process that the student's code runs in, and can rewrite. So, per submission:

1. the trusted tester takes the kernel's source from the submission's cells and checks that it
   is Triton and nothing else (:func:`gpuperf.classroom.kernel_source.kernel_source`);
2. a second sandbox (:class:`CountingSandbox`), started before any of the student's cells run,
   holds only trusted code: :func:`launch` defines the checked functions there — nothing else
   of the notebook — in a namespace with Triton's modules, the literal constants they read and
   ten built-ins, and runs the launch the *test* chose (grid, tensors, constexprs) under
   :func:`gpuperf.counting.counting` with ``strict=True``, which refuses every load or store
   outside the kernel's tensor arguments before it happens;
3. the test's kernel (:class:`CountedKernel`) sends the launch there, copies what the kernel
   wrote back into the test's tensors (the test then checks them, as for any case) and hands
   the counts, rebuilt and checked field by field (:meth:`gpuperf.counting.LaunchCount.from_data`),
   to the check's ``counting()`` block (:func:`gpuperf.counting.received`).

The checked source can call only Triton's language on its arguments, and touch only their
memory, so it cannot reach the counter: the counts are the kernel's own. What is graded is the
kernel as its source defines it, launched as the test launches it — the lab's statement of the
question — whatever the notebook did with the name at run time (correctness cases still grade
the notebook's own objects).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import json
import linecache
import os
from collections.abc import Callable
from typing import Any

from .._validate import instance, name_string, show
from .kernel_source import BUILTINS, KernelSource, KernelSourceError

#: What the counting sandbox runs first (trusted code only): the launcher, and everything it
#: imports, loaded before any student cell runs anywhere.
PRELUDE = "from gpuperf.classroom.recount import launch as _gpuperf_launch, _prepare\n_prepare()"


def _prepare() -> None:
    """Import what :func:`launch` needs (the interpreter, Triton, the counter) now. Counting
    needs the interpreter even where a GPU is visible (a fallback sandbox on a GPU machine):
    the arguments arrive as CPU tensors, and counts do not depend on the machine."""
    os.environ["TRITON_INTERPRET"] = "1"  # before Triton is first imported in this process
    import triton
    import triton.language  # noqa: F401
    from triton.runtime import interpreter  # noqa: F401

    from .. import counting

    counting._check_interpreter()


@functools.cache
def _kernels(spec_json: str) -> dict[str, Any]:
    """The checked functions of ``spec`` (as JSON), defined alone in a namespace of their own."""
    from ..counting import cell_file

    spec = json.loads(spec_json)
    namespace: dict[str, Any] = {
        "__builtins__": {name: getattr(builtins, name) for name in BUILTINS},
        "__name__": "submission_kernels",
    }
    import triton

    for alias, path in spec["modules"]:
        namespace[str(alias)] = (
            triton.jit if path == "triton.jit" else importlib.import_module(path)
        )
    for name, value in spec["constants"]:
        if not isinstance(value, int | float | str | bool):
            raise TypeError(f"constant {name!r}={show(value)} must be a literal")
        namespace[str(name)] = value
    trees = {}
    for index, source in spec["cells"]:
        filename = cell_file(int(index))
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        trees[int(index)] = ast.parse(source, filename)
    for name, cell, line in spec["functions"]:
        (node,) = [
            n for n in trees[cell].body
            if isinstance(n, ast.FunctionDef) and n.name == name and n.lineno == line
        ]  # fmt: skip
        module = ast.Module(body=[node], type_ignores=[])
        exec(compile(module, cell_file(cell), "exec"), namespace)
    return namespace


def _grid(grid: Any) -> tuple[int, ...]:
    grid = tuple(grid) if isinstance(grid, tuple | list) else (grid,)
    if not 1 <= len(grid) <= 3 or not all(
        isinstance(g, int) and not isinstance(g, bool) and g >= 1 for g in grid
    ):
        raise ValueError(f"grid={show(grid)} must be 1 to 3 positive program counts")
    return grid


def launch(spec: dict[str, Any], grid: list[int], /, *args: Any, **kwargs: Any) -> list[dict]:
    """In the counting sandbox: launch ``spec``'s kernel on ``grid`` with the test's arguments,
    strictly counted; the launches as plain data."""
    from ..counting import counting

    source = KernelSource.from_data(spec)
    grid = _grid(grid)
    _prepare()
    kernel = _kernels(json.dumps(source.as_data(), sort_keys=True))[source.kernel]
    with counting(strict=True) as launches:
        kernel[grid](*args, **kwargs)
    return [x.as_data() for x in launches]


class CountingSandbox:
    """A submission's second sandbox, where its kernels run from their checked source.

    ``start`` is a function returning a fresh, not yet started
    :class:`~gpuperf.classroom.student.Notebook` (its own scratch folder in the fallback
    sandbox). :meth:`start` runs :data:`PRELUDE` in it; call it before the student's cells run.
    """

    def __init__(self, start: Callable[[], Any]) -> None:
        if not callable(start):
            raise TypeError(f"start={show(start)} must make a Notebook (a callable)")
        self._make = start
        self.notebook: Any = None
        self.failure = ""

    def start(self, budget_end: float) -> None:
        """Start it and load the launcher; a failure is kept (:attr:`failure`) and reported by
        every launch, never raised here."""
        if self.notebook is not None:
            return
        self.notebook = self._make()
        notes = self.notebook.run_cells([PRELUDE], budget_end)
        if notes:
            self.failure = f"the counting sandbox did not start: {'; '.join(notes)}"

    def launch(
        self, source: KernelSource, grid: tuple[int, ...], args: tuple, kwargs: dict
    ) -> Any:
        """Run one launch there; its answer (launches as data, untrusted until rebuilt). The
        launcher is fetched again each time: a sandbox restarted (the box kills both of a
        submission's sandboxes when one of them runs out of time) replays the prelude."""
        if self.notebook is None or self.failure:
            raise RuntimeError(self.failure or "the counting sandbox was not started")
        launcher = self.notebook.get("_gpuperf_launch")
        return launcher(source.as_data(), list(grid), *args, **kwargs)

    def stop(self) -> None:
        if self.notebook is not None:
            self.notebook.stop()


class CountedKernel:
    """The test's stand-in for a student's ``@triton.jit`` kernel in an efficiency case:
    ``kernel[grid](*args, **kwargs)`` runs the checked source in the counting sandbox."""

    def __init__(
        self, name: str, source: KernelSource | KernelSourceError, sandbox: CountingSandbox
    ) -> None:
        self.name = name_string("name", name)
        if not isinstance(source, KernelSource | KernelSourceError):
            raise TypeError(f"source={show(source)} must be a KernelSource or why there is none")
        self.source = source
        self.sandbox = instance("sandbox", sandbox, CountingSandbox)

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        return functools.partial(self._launch, _grid(grid))

    def _launch(self, grid: tuple[int, ...], *args: Any, **kwargs: Any) -> None:
        from ..counting import LaunchCount, received

        if isinstance(self.source, KernelSourceError):
            raise self.source
        data = self.sandbox.launch(self.source, grid, args, kwargs)
        if not isinstance(data, list):
            raise RuntimeError(f"the counting sandbox answered {show(data)}, not launches")
        for item in data:
            received(LaunchCount.from_data(item))

    def __repr__(self) -> str:
        return f"<{self.name}: the submission's kernel, counted in a sandbox of its own>"


__all__ = ["PRELUDE", "CountedKernel", "CountingSandbox", "launch"]
