"""What crosses the sandbox wall: plain data, encoded so that decoding can never run code.

The trusted grader never holds a student's object. It asks the sandboxed notebook for values
(``add_intensity``), and for the results of calling the student's functions (``roof(x, 'T4',
'fp16')``); the answers come back over a pipe as one JSON document per line. This module is
that encoding, used on both sides:

* numbers, strings, ``None``, ``...``, bytes, lists, tuples (named tuples too: they come back
  as named tuples with the same fields), dicts, sets, slices, ranges, numpy arrays and scalars,
  torch tensors, and the plain values a check passes or reads back (a ``torch.dtype`` such as
  ``torch.float16``, a ``torch.device``, a numpy dtype or scalar type, the built-in types
  ``int``/``float``/...) travel by value (arrays as ``.npy`` bytes read with
  ``allow_pickle=False``: an object array or a pickle cannot cross);
* anything else (a function, a class, an object of the student's, a tensor that is part of an
  autograd graph) stays in the sandbox and crosses as a numbered handle, :class:`Handle`; the
  grader's proxy for it forwards attribute access, calls, indexing, ``len``, ``float`` and
  iteration back to the sandbox.

Decoding is pure data construction: ``json.loads``, ``numpy.load(allow_pickle=False)`` and, for a
named tuple, :func:`collections.namedtuple` on field names checked to be identifiers. A hostile
sandbox can send wrong answers or garbage (a :class:`WireError`), never code. Everything is
bounded so that an answer cannot exhaust the grader's memory: one message is at most
:data:`MAX_MESSAGE_BYTES` (a few hundred MB of Python objects at worst), nesting at most
:data:`MAX_DEPTH` levels, and an array or tensor at most :data:`MAX_ELEMENTS` elements *as
shaped*, so a stride-0 view (``torch.zeros(1).expand(2**28)``: one number in memory, 2**28 as
seen) is refused before anything is expanded. What is lazy (a ``range``, a view) is counted
as shaped against one budget of :data:`MAX_ELEMENTS` per message, so neither
``range(40_000_000)`` (53 bytes on the wire) nor a list of a hundred small ranges can turn into
gigabytes when a check converts it.
"""

from __future__ import annotations

import base64
import builtins
import collections
import functools
import io
import json
import keyword
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import show

#: Largest message either side accepts (bytes of one JSON line). The labs' answers and the
#: tensors a test hands to a kernel are a few kB to a few hundred kB.
MAX_MESSAGE_BYTES = 8 * 2**20
#: Deepest nesting of containers that is encoded by value.
MAX_DEPTH = 32
#: Most elements an array or tensor may have as shaped (a view counts its full shape).
MAX_ELEMENTS = 2**21
#: Array dtype kinds that may cross: bool, integers, floats, complex, strings.
ARRAY_KINDS = "biufcSU"
#: Built-in types that cross by name (``dtype=float``).
BUILTIN_TYPES = ("int", "float", "bool", "complex", "str", "bytes")
_BUILTIN_TYPES = tuple(getattr(builtins, name) for name in BUILTIN_TYPES)

_DEVICE = re.compile(r"[a-z]{1,16}(:[0-9]{1,4})?")
_NUMPY_DTYPE = re.compile(r"[<>|=]?[a-zA-Z][0-9]{0,2}")


class WireError(ValueError):
    """A message that is not valid grading data (malformed, too big or too deep)."""


@dataclass(frozen=True)
class Handle:
    """An object that stays on the sandbox side: its number there and what it is."""

    id: int
    type_name: str
    is_callable: bool

    def __post_init__(self) -> None:
        if type(self.id) is not int or not 1 <= self.id <= 2**53:
            raise ValueError(f"id={show(self.id)} must be a handle number from 1 to 2**53")
        if not isinstance(self.type_name, str):
            raise TypeError(f"type_name={show(self.type_name)} must be a string")
        if not isinstance(self.is_callable, bool):
            raise TypeError(f"is_callable={show(self.is_callable)} must be True or False")


def _npy(array: np.ndarray) -> str:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _check_elements(shape: Any) -> None:
    count = math.prod(int(n) for n in shape)
    if count > MAX_ELEMENTS:
        raise WireError(
            f"an array of shape {tuple(shape)} has {count} elements, over the limit of "
            f"{MAX_ELEMENTS}"
        )


def _from_npy(text: str) -> np.ndarray:
    try:
        array = np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)
    except Exception as error:  # malformed bytes, object arrays
        raise WireError(f"not an array: {error}") from None
    if type(array) is not np.ndarray or array.dtype.kind not in ARRAY_KINDS:
        raise WireError(f"an array of dtype {array.dtype} cannot cross")
    _check_elements(array.shape)
    return array


def _is_namedtuple(value: Any) -> bool:
    fields = getattr(type(value), "_fields", None)
    return type(fields) is tuple and all(type(f) is str for f in fields)


@functools.lru_cache(maxsize=256)
def _namedtuple(name: str, fields: tuple[str, ...]) -> type:
    for word in (name, *fields):
        if not word.isidentifier() or keyword.iskeyword(word) or word.startswith("_"):
            raise WireError(f"{word!r} is not a valid named-tuple name")
    if len(set(fields)) != len(fields) or len(fields) > 256 or len(name) > 100:
        raise WireError(f"bad named-tuple fields {fields!r}")
    return collections.namedtuple(name, fields)


def _torch_kind(kind: type) -> str | None:
    """``"tensor"``, ``"size"``, ``"dtype"``, ``"device"`` for torch's types, else None
    (without importing torch: a notebook that never imports it sends none of them)."""
    if kind.__module__ != "torch":
        return None
    return {
        "Tensor": "tensor",
        "Parameter": "tensor",
        "Size": "size",
        "dtype": "dtype",
        "device": "device",
    }.get(kind.__name__)


def encode(value: Any, make_handle: Callable[[Any], Handle] | None = None, depth: int = 0) -> Any:
    """``value`` as JSON-ready data; objects that are not data become handles made by
    ``make_handle`` (a callable; ``None``: an error). ``depth`` (0 … :data:`MAX_DEPTH`) is how
    deep ``value`` already sits in the message."""
    if make_handle is not None and not callable(make_handle):
        raise TypeError(f"make_handle={show(make_handle)} must be a callable or None")
    if type(depth) is not int or not 0 <= depth <= MAX_DEPTH + 1:
        raise ValueError(f"depth={show(depth)} must be an int from 0 to {MAX_DEPTH}")
    return _encode(value, make_handle, depth)


def _encode(value: Any, make_handle: Callable[[Any], Handle] | None, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise WireError(f"nested deeper than {MAX_DEPTH} levels")
    kind = type(value)

    def inner(item: Any) -> Any:
        return _encode(item, make_handle, depth + 1)

    if value is None or kind in (bool, str, float):
        return value  # floats as JSON numbers: repr round-trips them, NaN and ±inf included
    if kind is int:
        return value if abs(value) < 2**63 else {"~": "bigint", "v": str(value)}
    if value is Ellipsis:
        return {"~": "ellipsis"}
    if kind is complex:
        return {"~": "complex", "v": [value.real, value.imag]}
    if kind is bytes:
        return {"~": "bytes", "v": base64.b64encode(value).decode("ascii")}
    if kind in (list, tuple, set, frozenset):
        items = sorted(value, key=repr) if kind in (set, frozenset) else value
        return {"~": kind.__name__, "v": [inner(v) for v in items]}
    if isinstance(value, tuple) and _is_namedtuple(value):
        fields = list(kind._fields)
        return {"~": "namedtuple", "name": kind.__name__, "fields": fields,
                "v": [inner(v) for v in tuple.__iter__(value)]}  # fmt: skip
    if kind is dict:
        return {"~": "dict", "v": [[inner(k), inner(v)] for k, v in value.items()]}
    if kind is slice:
        return {"~": "slice", "v": [inner(value.start), inner(value.stop), inner(value.step)]}
    if kind is range:
        return {"~": "range", "v": [inner(value.start), inner(value.stop), inner(value.step)]}
    if kind is type and value in _BUILTIN_TYPES:
        return {"~": "type", "v": value.__name__}
    if kind is np.ndarray and value.dtype.kind in ARRAY_KINDS:
        return {"~": "ndarray", "v": _npy(value)}
    if isinstance(value, np.generic) and value.dtype.kind in ARRAY_KINDS:
        return {"~": "npscalar", "v": _npy(np.asarray(value))}
    if isinstance(value, np.dtype) and value.isbuiltin == 1 and value.kind in ARRAY_KINDS:
        return {"~": "npdtype", "v": value.str}
    if (
        isinstance(value, type)
        and issubclass(value, np.generic)
        and np.dtype(value).isbuiltin == 1
        and np.dtype(value).kind in ARRAY_KINDS
    ):
        return {"~": "nptype", "v": np.dtype(value).str}
    torch_kind = _torch_kind(kind)
    if torch_kind == "size":
        return {"~": "tuple", "v": [int(v) for v in value]}
    if torch_kind == "dtype":
        return {"~": "dtype", "v": str(value).removeprefix("torch.")}
    if torch_kind == "device":
        return {"~": "device", "v": str(value)}
    if torch_kind == "tensor":
        return _encode_tensor(value, make_handle)
    if make_handle is None:
        raise WireError(f"a {kind.__name__} cannot be sent by value")
    handle = make_handle(value)
    if not isinstance(handle, Handle):
        raise TypeError(f"make_handle returned {show(handle)}, not a Handle")
    return {"~": "handle", "id": handle.id, "type": handle.type_name, "call": handle.is_callable}


def _encode_tensor(value: Any, make_handle: Callable[[Any], Handle] | None) -> Any:
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
        offset = value.storage_offset() - base.storage_offset()
        view = [list(value.shape), list(value.stride()), offset]
        value_data = base
    else:
        value_data = value
    _check_elements(value.shape)
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


def decode(
    data: Any,
    resolve_handle: Callable[[Handle], Any] | None = None,
    *,
    device: Any = None,
    depth: int = 0,
) -> Any:
    """Inverse of :func:`encode`: data only; handles go through ``resolve_handle`` (a callable;
    ``None``: a handle is an error). ``device`` is where tensors from a GPU go (``None``: the
    CPU); ``depth`` (0 … :data:`MAX_DEPTH`) how deep ``data`` sits in its message. Lazy values
    (ranges, tensor views) may hold :data:`MAX_ELEMENTS` elements as shaped in all."""
    if resolve_handle is not None and not callable(resolve_handle):
        raise TypeError(f"resolve_handle={show(resolve_handle)} must be a callable or None")
    if type(depth) is not int or not 0 <= depth <= MAX_DEPTH + 1:
        raise ValueError(f"depth={show(depth)} must be an int from 0 to {MAX_DEPTH}")
    if device is not None and type(device).__name__ != "device" and not isinstance(device, str):
        raise TypeError(f"device={show(device)} must be a torch device, its name or None")
    return _decode(data, resolve_handle, device, depth, [MAX_ELEMENTS])


def _spend(budget: list[int], count: int, what: str) -> None:
    """Take ``count`` elements of a message's budget for lazy values, or refuse the message."""
    if count > budget[0]:
        raise WireError(
            f"{what} of {count} elements is over the limit of {MAX_ELEMENTS} elements as shaped "
            "in one message"
        )
    budget[0] -= count


def _decode(
    data: Any,
    resolve_handle: Callable[[Handle], Any] | None,
    device: Any,
    depth: int,
    budget: list[int],
) -> Any:
    if depth > MAX_DEPTH:
        raise WireError(f"nested deeper than {MAX_DEPTH} levels")
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is not dict or "~" not in data:
        raise WireError(f"unexpected {type(data).__name__} in a message: {show(data)}")
    kind, raw = data["~"], data.get("v")

    def inner(item: Any) -> Any:
        return _decode(item, resolve_handle, device, depth + 1, budget)

    try:
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
        if kind == "namedtuple":
            cls = _namedtuple(str(data["name"]), tuple(str(f) for f in data["fields"]))
            return cls(*[inner(v) for v in raw])
        if kind == "dict":
            return {inner(k): inner(v) for k, v in raw}
        if kind in ("slice", "range"):
            start, stop, step = (inner(v) for v in raw)
            if kind == "range":
                lazy = range(int(start), int(stop), int(step))
                _spend(budget, len(lazy), "a range")
                return lazy
            return slice(start, stop, step)
        if kind == "type" and raw in BUILTIN_TYPES:
            return getattr(builtins, raw)
        if kind in ("npdtype", "nptype"):
            if type(raw) is not str or not _NUMPY_DTYPE.fullmatch(raw):
                raise WireError(f"not a numpy dtype: {raw!r}")
            dtype = np.dtype(raw)
            if dtype.kind not in ARRAY_KINDS:
                raise WireError(f"a numpy dtype {raw!r} cannot cross")
            return dtype if kind == "npdtype" else dtype.type
        if kind == "ndarray":
            return _from_npy(raw)
        if kind == "npscalar":
            return _from_npy(raw)[()]
        if kind == "dtype":
            import torch

            dtype = getattr(torch, str(raw), None) if str(raw).isidentifier() else None
            if not isinstance(dtype, torch.dtype):
                raise WireError(f"unknown torch dtype {raw!r}")
            return dtype
        if kind == "device":
            import torch

            if type(raw) is not str or not _DEVICE.fullmatch(raw):
                raise WireError(f"not a device: {raw!r}")
            return torch.device(raw)
        if kind == "tensor":
            return _decode_tensor(data, raw, device, budget)
        if kind == "handle":
            if resolve_handle is None:
                raise WireError("a handle where only data is allowed")
            return resolve_handle(Handle(int(data["id"]), str(data["type"]), bool(data["call"])))
    except WireError:
        raise
    except Exception as error:
        raise WireError(f"malformed {kind!r} value: {type(error).__name__}: {error}") from None
    raise WireError(f"unknown value kind {kind!r}")


def _decode_tensor(data: dict[str, Any], raw: Any, device: Any, budget: list[int]) -> Any:
    import torch

    dtype = getattr(torch, str(data["dtype"]).removeprefix("torch."), None)
    if not isinstance(dtype, torch.dtype):
        raise WireError(f"unknown tensor dtype {data['dtype']!r}")
    tensor = torch.from_numpy(_from_npy(raw).copy()).to(dtype)
    if device is not None and data.get("device", "cpu") != "cpu":
        tensor = tensor.to(device)
    view = data.get("view")
    if view is not None:
        size, stride, offset = [int(n) for n in view[0]], [int(n) for n in view[1]], int(view[2])
        if offset < 0 or any(n < 0 for n in size + stride):
            raise WireError(f"bad tensor view {view!r}")
        _check_elements(size)  # before the view exists: shapes are compared, never expanded
        _spend(budget, math.prod(size), "a tensor view")
        tensor = tensor.as_strided(size, stride, offset)  # checked against the buffer
    if data.get("grad") and tensor.is_floating_point() and tensor.is_leaf:
        tensor.requires_grad_()
    return tensor


def dumps(message: dict[str, Any]) -> bytes:
    """One message (a dict) as one line of JSON (NaN and infinity allowed)."""
    if type(message) is not dict:
        raise TypeError(f"message={show(message)} must be a dict (one message)")
    try:
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
    except RecursionError:
        raise WireError("a message nested too deeply to encode") from None
    except (TypeError, ValueError) as error:  # a value that is not JSON: not encoded data
        raise WireError(f"message={show(message)} holds what JSON cannot hold: {error}") from None
    if len(line) > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {len(line)} bytes is over the {MAX_MESSAGE_BYTES}-byte limit")
    return line


def loads(line: bytes) -> dict[str, Any]:
    """Parse one line; anything but a JSON object is a :class:`WireError` (never another
    exception: a reply nested deeply enough to exhaust the parser's stack is one too)."""
    if not isinstance(line, bytes | bytearray):
        raise TypeError(f"line={show(line)} must be bytes (one line of the protocol)")
    if len(line) > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {len(line)} bytes is over the {MAX_MESSAGE_BYTES}-byte limit")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise WireError(f"not JSON: {type(error).__name__}: {str(error)[:200]}") from None
    if type(message) is not dict:
        raise WireError("a message must be a JSON object")
    return message


__all__ = ["Handle", "WireError", "decode", "dumps", "encode", "loads"]
