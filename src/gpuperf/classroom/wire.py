"""What crosses the sandbox wall: plain data, encoded so that decoding can never run code.

The trusted grader never holds a student's object. It asks the sandboxed notebook for values
(``add_intensity``), and for the results of calling the student's functions (``roof(x, 'T4',
'fp16')``); the answers come back over a pipe as one JSON document per line. This module is
that encoding, used on both sides:

* numbers, strings, ``None``, ``...``, bytes, lists, tuples, dicts, sets, numpy arrays and
  scalars and torch tensors travel by value (arrays as ``.npy`` bytes read with
  ``allow_pickle=False``: an object array or a pickle cannot cross);
* anything else (a function, a class, an object of the student's, a tensor that is part of an
  autograd graph) stays in the sandbox and
  crosses as a numbered handle, :class:`Handle`; the grader's proxy for it forwards
  attribute access, calls, indexing, ``len``, ``float`` and iteration back to the sandbox.

Decoding is pure data construction: ``json.loads`` and ``numpy.load(allow_pickle=False)``. A
hostile sandbox can send wrong answers or garbage (a :class:`WireError`), never code. Sizes and
nesting depth are bounded so that a giant answer cannot exhaust the grader.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Largest message either side accepts (bytes of one JSON line).
MAX_MESSAGE_BYTES = 64 * 2**20
#: Deepest nesting of containers that is encoded by value.
MAX_DEPTH = 32


class WireError(ValueError):
    """A message that is not valid grading data (malformed, too big or too deep)."""


@dataclass(frozen=True)
class Handle:
    """An object that stays on the sandbox side: its number there and what it is."""

    id: int
    type_name: str
    is_callable: bool


def _npy(array: np.ndarray) -> str:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _from_npy(text: str) -> np.ndarray:
    try:
        return np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)
    except Exception as error:  # malformed bytes, object arrays
        raise WireError(f"not an array: {error}") from None


def encode(value: Any, make_handle: Callable[[Any], Handle] | None = None, depth: int = 0) -> Any:
    """``value`` as JSON-ready data; objects that are not data become handles (or an error)."""
    if depth > MAX_DEPTH:
        raise WireError(f"nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if value is None or kind in (bool, str):
        return value
    if kind is int:
        return value if abs(value) < 2**63 else {"~": "bigint", "v": str(value)}
    if kind is float:
        return {"~": "float", "v": repr(value)}
    if value is Ellipsis:
        return {"~": "ellipsis"}
    if kind is complex:
        return {"~": "complex", "v": [repr(value.real), repr(value.imag)]}
    if kind is bytes:
        return {"~": "bytes", "v": base64.b64encode(value).decode("ascii")}
    if kind in (list, tuple, set, frozenset):
        items = sorted(value, key=repr) if kind in (set, frozenset) else value
        return {"~": kind.__name__, "v": [encode(v, make_handle, depth + 1) for v in items]}
    if kind is dict:
        return {
            "~": "dict",
            "v": [
                [encode(k, make_handle, depth + 1), encode(v, make_handle, depth + 1)]
                for k, v in value.items()
            ],
        }
    if kind is np.ndarray and value.dtype != object:
        return {"~": "ndarray", "v": _npy(value)}
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return {"~": "npscalar", "v": _npy(np.asarray(value))}
    if kind.__module__ == "torch" and kind.__name__ == "Size":
        return {"~": "tuple", "v": [encode(int(v)) for v in value]}
    if kind.__module__ == "torch" and kind.__name__ in ("Tensor", "Parameter"):
        if value.grad_fn is not None and make_handle is not None:
            # part of an autograd graph the test may inspect (``out.grad_fn.saved_tensors``):
            # it stays in the sandbox; ``.detach()`` through the handle gives its values
            handle = make_handle(value)
            return {"~": "handle", "id": handle.id, "type": handle.type_name, "call": False}
        view = None
        base = value._base
        if base is not None and base.is_contiguous() and base.dtype == value.dtype:
            # a view (e.g. an output with guard cells around it): send the whole buffer and
            # where the view sits in it, so writes past the view's ends are seen too
            view = [
                list(value.shape),
                list(value.stride()),
                value.storage_offset() - base.storage_offset(),
            ]
            value_data = base
        else:
            value_data = value
        tensor = value_data.detach().cpu().contiguous()
        try:
            array = tensor.numpy()
        except TypeError:  # bf16 and friends have no numpy dtype
            array = tensor.float().numpy()
        return {
            "~": "tensor",
            "v": _npy(array),
            "view": view,
            "dtype": str(value.dtype),
            "device": str(value.device),
            "grad": bool(value.requires_grad),
        }
    if make_handle is None:
        raise WireError(f"a {kind.__name__} cannot be sent by value")
    handle = make_handle(value)
    return {"~": "handle", "id": handle.id, "type": handle.type_name, "call": handle.is_callable}


def decode(
    data: Any,
    resolve_handle: Callable[[Handle], Any] | None = None,
    *,
    device: Any = None,
    depth: int = 0,
) -> Any:
    """Inverse of :func:`encode`: data only; handles go through ``resolve_handle``."""
    if depth > MAX_DEPTH:
        raise WireError(f"nested deeper than {MAX_DEPTH} levels")
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is not dict or "~" not in data:
        raise WireError(f"unexpected {type(data).__name__} in a message")
    kind, raw = data["~"], data.get("v")

    def inner(item: Any) -> Any:
        return decode(item, resolve_handle, device=device, depth=depth + 1)

    try:
        if kind == "float":
            return float(raw)
        if kind == "bigint":
            return int(raw)
        if kind == "ellipsis":
            return Ellipsis
        if kind == "complex":
            return complex(float(raw[0]), float(raw[1]))
        if kind == "bytes":
            return base64.b64decode(raw)
        if kind in ("list", "tuple", "set", "frozenset"):
            items = [inner(v) for v in raw]
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[kind](items)
        if kind == "dict":
            return {inner(k): inner(v) for k, v in raw}
        if kind == "ndarray":
            return _from_npy(raw)
        if kind == "npscalar":
            return _from_npy(raw)[()]
        if kind == "tensor":
            import torch

            dtype = getattr(torch, str(data["dtype"]).removeprefix("torch."), None)
            if not isinstance(dtype, torch.dtype):
                raise WireError(f"unknown tensor dtype {data['dtype']!r}")
            tensor = torch.from_numpy(_from_npy(raw).copy()).to(dtype)
            if device is not None and data.get("device", "cpu") != "cpu":
                tensor = tensor.to(device)
            view = data.get("view")
            if view is not None:
                size, stride, offset = ([int(n) for n in view[0]], [int(n) for n in view[1]],
                                        int(view[2]))  # fmt: skip
                if offset < 0 or any(n < 0 for n in size + stride):
                    raise WireError(f"bad tensor view {view!r}")
                tensor = tensor.as_strided(size, stride, offset)  # checked against the buffer
            if data.get("grad") and tensor.is_floating_point() and tensor.is_leaf:
                tensor.requires_grad_()
            return tensor
        if kind == "handle":
            if resolve_handle is None:
                raise WireError("a handle where only data is allowed")
            return resolve_handle(Handle(int(data["id"]), str(data["type"]), bool(data["call"])))
    except WireError:
        raise
    except Exception as error:
        raise WireError(f"malformed {kind!r} value: {type(error).__name__}: {error}") from None
    raise WireError(f"unknown value kind {kind!r}")


def dumps(message: dict[str, Any]) -> bytes:
    """One message as one line of JSON (NaN and infinity allowed, as floats are repr'd)."""
    line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
    if len(line) > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {len(line)} bytes is over the {MAX_MESSAGE_BYTES}-byte limit")
    return line


def loads(line: bytes) -> dict[str, Any]:
    """Parse one line; anything but a JSON object is a :class:`WireError`."""
    if len(line) > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {len(line)} bytes is over the {MAX_MESSAGE_BYTES}-byte limit")
    try:
        message = json.loads(line)
    except ValueError as error:
        raise WireError(f"not JSON: {error}") from None
    if type(message) is not dict:
        raise WireError("a message must be a JSON object")
    return message


__all__ = ["Handle", "WireError", "decode", "dumps", "encode", "loads"]
