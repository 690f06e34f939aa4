"""The sandboxed side: run a student's notebook cell by cell and answer questions about it.

``python -m gpuperf.classroom.runner`` is what runs inside each submission's sandbox
(:mod:`gpuperf.classroom.sandbox`). It reads one request per line on stdin and writes one reply
per line on the original stdout, which it keeps to itself: the notebook's own output (``print``,
tracebacks, anything written to file descriptors 1 and 2) goes to stderr, a pipe the trusted
grader reads (no file the notebook could swap for a link).

Requests, all sent by the trusted grader (:mod:`gpuperf.classroom.tester`):

* ``exec``: run one code cell in an IPython shell (magics work; ``grader.check`` cells are
  skipped by the grader, not here, and the notebook's ``grader`` is a :class:`SkippedGrader`);
* ``get``: the value of a name, by value if it is data, else as a handle (:mod:`.wire`);
* ``call``, ``getattr``, ``getitem``, ``unary``: operate on a handle (call the student's
  function with arguments that the grader chose, read an attribute, ``len``, ``float``, ...);
* ``canary``: :func:`gpuperf.classroom.canary.fingerprint` of the functions as they are now,
  with the grader's random challenge.

Nothing here is trusted: the notebook runs in this very process and can rewrite all of it. The
grader enforces every time limit from outside (it kills the sandbox) and decodes replies as
data only, so a notebook that subverts the runner can at worst send wrong answers.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

from . import wire

MAX_ERROR_CHARS = 2000


class SkippedGrader:
    """The notebook's ``grader`` while the class grader runs it. The tests run outside the
    sandbox, so ``grader.check(...)`` has nothing to do here, and otter (seconds to import) is
    never imported for it: ``gpuperf.grading.lab_grader`` returns this instead."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None

    def __repr__(self) -> str:
        return "<grader: the class grader runs the tests outside this notebook>"


class Runner:
    """The notebook's namespace plus a table of objects handed out as handles."""

    def __init__(self) -> None:
        from IPython.core.interactiveshell import InteractiveShell

        self.shell = InteractiveShell.instance()
        self.shell.run_line_magic("colors", "nocolor")
        self.handles: dict[int, Any] = {}
        # Tensors stay on the CPU: the sandbox has no GPU, and neither has the grader (nor does
        # torch get imported here unless the notebook imports it).
        self.device = None

    def handle(self, value: Any) -> wire.Handle:
        self.handles[len(self.handles) + 1] = value
        return wire.Handle(len(self.handles), type(value).__name__, callable(value))

    def encode(self, value: Any) -> Any:
        return wire.encode(value, self.handle)

    def decode(self, data: Any) -> Any:
        return wire.decode(data, self._resolve, device=self.device)

    def _resolve(self, handle: wire.Handle) -> Any:
        if handle.id not in self.handles:
            raise wire.WireError(f"unknown handle {handle.id}")
        return self.handles[handle.id]

    # ------------------------------------------------------------------------- requests

    def op_exec(self, request: dict[str, Any]) -> dict[str, Any]:
        result = self.shell.run_cell(str(request["source"]), store_history=False)
        sys.stdout.flush()
        error = result.error_before_exec or result.error_in_exec
        return {"ok": error is None, "error": _describe(error) if error is not None else None}

    def op_get(self, request: dict[str, Any]) -> dict[str, Any]:
        name = str(request["name"])
        if name not in self.shell.user_ns:
            return {
                "ok": False,
                "error": {"type": "NameError", "message": f"name {name!r} is not defined"},
            }
        return {"ok": True, "value": self.encode(self.shell.user_ns[name])}

    def op_call(self, request: dict[str, Any]) -> dict[str, Any]:
        target = self.decode(request["target"])
        args = [self.decode(a) for a in request.get("args", [])]
        kwargs = {str(k): self.decode(v) for k, v in request.get("kwargs", {}).items()}
        value = self.encode(target(*args, **kwargs))
        # tensors the call may have written into (a kernel's output argument) go back too
        after = [self.encode(a) if _is_tensor(a) else None for a in args]
        after_kw = {k: self.encode(v) for k, v in kwargs.items() if _is_tensor(v)}
        return {"ok": True, "value": value, "args": after, "kwargs": after_kw}

    def op_getattr(self, request: dict[str, Any]) -> dict[str, Any]:
        target = self.decode(request["target"])
        return {"ok": True, "value": self.encode(getattr(target, str(request["attr"])))}

    def op_getitem(self, request: dict[str, Any]) -> dict[str, Any]:
        target = self.decode(request["target"])
        return {"ok": True, "value": self.encode(target[self.decode(request["key"])])}

    def op_unary(self, request: dict[str, Any]) -> dict[str, Any]:
        functions = {"len": len, "float": float, "int": int, "bool": bool, "list": list}
        target = self.decode(request["target"])
        return {"ok": True, "value": self.encode(functions[str(request["fn"])](target))}

    def op_canary(self, request: dict[str, Any]) -> dict[str, Any]:
        from .canary import fingerprint

        challenge = int(request.get("challenge", 0))
        value = fingerprint(challenge=challenge)
        return {"ok": True, "value": value, "torch": "torch" in sys.modules}

    def serve(self, requests: Any, replies: Any) -> None:
        for line in requests:
            try:
                request = wire.loads(line)
                operation = getattr(self, f"op_{request.get('op')}")
                reply = operation(request)
            except BaseException as error:  # the student's exception is the answer
                if isinstance(error, KeyboardInterrupt | SystemExit) and not _student(error):
                    raise
                reply = {"ok": False, "error": _describe(error)}
            try:
                data = wire.dumps(reply)
            except (wire.WireError, TypeError, ValueError) as error:
                data = wire.dumps({"ok": False, "error": _describe(error)})
            replies.write(data)
            replies.flush()


def _is_tensor(value: Any) -> bool:
    kind = type(value)
    return kind.__module__ == "torch" and kind.__name__ in ("Tensor", "Parameter")


def _student(error: BaseException) -> bool:
    """A KeyboardInterrupt/SystemExit raised by student code (it has a traceback into it)."""
    return error.__traceback__ is not None and error.__traceback__.tb_next is not None


def _describe(error: BaseException) -> dict[str, str]:
    try:
        message = str(error)
    except BaseException:
        message = "(its message could not be printed)"
    return {"type": type(error).__name__[:100], "message": message[:MAX_ERROR_CHARS]}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        print("usage: python -m gpuperf.classroom.runner", file=sys.stderr)
        return 2
    # keep the protocol channel; the notebook gets /dev/null as stdin and stderr (the pipe the
    # grader reads the notebook's output from) as stdout and stderr
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    # Inside the sandbox only (never in a process that imports this module): the notebook's
    # grader does nothing, and otter is never imported.
    import gpuperf.grading

    gpuperf.grading.lab_grader = lambda *args, **kwargs: SkippedGrader()
    try:
        runner = Runner()
    except BaseException:
        traceback.print_exc()
        return 3
    replies.write(wire.dumps({"ok": True, "ready": True}))
    replies.flush()
    runner.serve(iter(requests.readline, b""), replies)
    return 0


__all__ = ["Runner", "SkippedGrader", "main"]


if __name__ == "__main__":
    raise SystemExit(main())
