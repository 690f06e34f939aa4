"""Checks of kernel outputs: compare with the reference and say *where* it is wrong.

A kernel that is wrong only in its last, partial block forgot a mask; one that wrote nothing
past a row has a wrong grid; an attention output that is the right one times a constant per row
never rescaled its accumulator. :func:`check_tensor` and :func:`check_attention` name the rows,
columns and blocks that differ and the likely slip. :func:`padded` puts a kernel's tensors inside
larger buffers filled with NaN, so an unmasked load or store lands in the padding instead of
crashing the process, and :func:`check_padding` turns a write into the padding into "check the
mask on your store".

Shapes are compared before anything is converted, so an answer of the wrong size (a stride-0
view of 2**28 elements) is never expanded. torch is imported only when a tensor is handed in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validate import positive_int, real_number, show
from .answers import answered
from .feedback import (
    CheckError,
    _error_text,
    _fmt,
    _is_tensor,
    _mapping,
    _name,
    _text,
    _tolerance,
    _type_name,
)

if TYPE_CHECKING:
    import torch

__all__ = ["check_attention", "check_padding", "check_tensor", "padded"]

#: Largest block size a check accepts (a Triton block is far smaller).
MAX_BLOCK = 2**31
#: Most elements on each side :func:`padded` adds, and most elements it copies: 2**24 and 2**26
#: (a lab's inputs are thousands of elements; the buffer is allocated at once).
MAX_PAD, MAX_PADDED_ELEMENTS = 2**24, 2**26


def _shape_of(value: Any) -> tuple[int, ...] | None:
    """The shape of a numpy array or torch tensor, read without converting it (else None)."""
    kind = type(value)
    if kind is np.ndarray:
        return value.shape
    if kind.__module__ == "torch" and kind.__name__ in ("Tensor", "Parameter"):
        return tuple(value.shape)
    return None


def _to_numpy(name: str, value: Any, shape: tuple[int, ...] | None = None) -> np.ndarray | None:
    """``value`` as a float64 array; ``None`` if ``shape`` is given and the value's differs.

    Shapes are compared *before* converting: converting a stride-0 view
    (``torch.zeros(1).expand(2**28)``: one number in memory, 2**28 as seen) to float64 would
    allocate all of it, so an answer of the wrong size is never expanded.
    """
    answered(name, value)
    if shape is not None and _shape_of(value) not in (None, tuple(shape)):
        return None
    if hasattr(value, "detach"):  # a torch tensor, possibly on a GPU or requiring grad
        try:
            value = value.detach().float().cpu().numpy()
        except Exception as error:
            raise CheckError(
                f"`{name}` could not be read as numbers ({_error_text(error)})."
            ) from None
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise CheckError(
            f"`{name}` should be an array or tensor, not {_type_name(value)}."
        ) from None
    return None if shape is not None and array.shape != tuple(shape) else array


def _reference_array(name: str, value: Any) -> np.ndarray:
    """A reference (the instructor's, never the student's) as a float64 array; ``ValueError``
    naming it if it is not real numbers."""
    message = f"{name}={show(value)} must be a numpy array, a tensor or a number (real numbers)"
    if value is None or value is Ellipsis or isinstance(value, str | bytes | Mapping):
        raise ValueError(message)
    if _is_tensor(value):
        if value.is_complex() or value.device.type == "meta":
            raise ValueError(f"{message}, on a device that holds values")
        value = value.detach().float().cpu().numpy()
    try:
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":  # object (ragged, huge ints), complex, strings
            raise ValueError(message)
        return array.astype(float)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(message) from None


def _describe(value: Any) -> str:
    """A tensor as its dtype, shape and device (its values would flood a message), else its
    shortened repr."""
    if _is_tensor(value):
        return f"<{value.dtype} tensor of shape {tuple(value.shape)} on {value.device.type}>"
    return show(value)


def _shape_text(value: Any) -> str:
    shape = _shape_of(value)
    if shape is None:
        shape = np.shape(np.asarray(value, dtype=float))  # small: a list of the student's
    return str(tuple(int(n) for n in shape))


def _runs(indices: np.ndarray) -> str:
    """'3, 7..9' style summary of sorted integer indices (first few runs only)."""
    runs, start = [], indices[0]
    prev = start
    for i in indices[1:]:
        if i != prev + 1:
            runs.append((start, prev))
            start = i
        prev = i
    runs.append((start, prev))
    text = ", ".join(f"{a}" if a == b else f"{a}..{b}" for a, b in runs[:3])
    return text + (", ..." if len(runs) > 3 else "")


def check_tensor(
    name: str,
    actual: Any,
    expected: Any,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-5,
    block: int | Sequence[int] | None = None,
) -> None:
    """Compare a kernel output with the reference and say *where* it is wrong.

    ``block`` is the kernel's block size (``BLOCK`` for 1-D, ``(BLOCK_M, BLOCK_N)`` for 2-D): when
    everything inside the first full blocks is right and only the ragged edge is wrong, the
    message points at the mask. ``expected`` is the reference (an array, a tensor or a number);
    ``atol`` and ``rtol`` (at most 1) are finite and ≥ 0.
    """
    name = _name("name", name)
    want = _reference_array("expected", expected)
    atol, rtol = _tolerance("atol", atol), _tolerance("rtol", rtol)
    blocks = _blocks(block, want.ndim)
    got = _to_numpy(name, actual, want.shape)
    if got is None:
        raise CheckError(
            f"`{name}` has shape {_shape_text(actual)}; expected {tuple(want.shape)}: check how "
            "you allocate the output and the grid."
        )
    if not np.all(np.isfinite(got[np.isfinite(want)])):
        bad = np.argwhere(~np.isfinite(got) & np.isfinite(want))
        first = tuple(int(i) for i in bad[0])
        where = (
            "" if not first else f", the first at index {first if len(first) > 1 else first[0]}"
        )
        raise CheckError(
            f"`{name}` has NaN or infinite values ({len(bad)} of them{where}): a load past the "
            "end of a tensor without a mask reads the NaN padding the check puts there, so check "
            "the masks on your loads (and `other=`); else look for a division by zero, an "
            "exponential of a large number (subtract the maximum first) or a masked load "
            "without `other=`."
        )
    wrong = ~np.isclose(got, want, atol=atol, rtol=rtol)
    if not wrong.any():
        return
    n_wrong = int(wrong.sum())
    worst = float(np.max(np.abs(got - want)))
    summary = (
        f"{n_wrong} of {want.size} values of `{name}` are wrong (largest error about {worst:.1g})"
    )
    if got.ndim == 1:
        idx = np.flatnonzero(wrong)
        message = f"{summary}, at indices {_runs(idx)}"
        edge = _edge(blocks[0] if blocks else None, 0, want.shape[0])
        if edge is not None and idx.min() >= edge:
            message += (
                f": everything before index {edge} is right, so the last, partial block is "
                "wrong: check the mask on your loads and stores."
            )
        elif not np.any(got[idx]):
            message += ": your kernel wrote nothing there; check the grid and the offsets."
        raise CheckError(message + ".")
    if got.ndim == 2:
        rows = np.flatnonzero(wrong.any(axis=1))
        cols = np.flatnonzero(wrong.any(axis=0))
        message = f"{summary}, in rows {_runs(rows)} and columns {_runs(cols)}"
        if blocks is not None:
            edge_m = _edge(blocks[0], 0, want.shape[0])
            edge_n = _edge(blocks[1], 0, want.shape[1])
            if (edge_n is not None and cols.min() >= edge_n) or (
                edge_m is not None and rows.min() >= edge_m
            ):
                where = (
                    f"column {edge_n}"
                    if edge_n is not None and cols.min() >= edge_n
                    else (f"row {edge_m}")
                )
                zero = not np.any(got[wrong])
                what = "wrote nothing" if zero else "is wrong only"
                message += (
                    f": your kernel {what} past {where}, in the last, partial tile: check the "
                    "masks on the loads and the store."
                )
        raise CheckError(message + ".")
    raise CheckError(summary + ".")


def _blocks(block: Any, ndim: int) -> tuple[int, ...] | None:
    """``block`` as one positive int per axis (an int applies to every axis), or None."""
    if block is None:
        return None
    items = [block] * max(ndim, 1) if isinstance(block, int | np.integer) else block
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise ValueError(f"block={show(block)} must be a positive int or one per axis")
    if any(
        isinstance(b, bool) or not isinstance(b, int | np.integer) or not 1 <= b <= MAX_BLOCK
        for b in items
    ):
        raise ValueError(f"block={show(block)}: every block size must be an int in 1 … 2**31")
    if ndim in (1, 2) and len(items) != ndim:
        raise ValueError(
            f"block={show(block)} has {len(items)} sizes for a {ndim}-D tensor: give {ndim}"
        )
    return tuple(int(b) for b in items)


def _edge(block: Any, axis_start: int, size: int) -> int | None:
    """Start of the last partial block along an axis, or None if the size is a multiple."""
    if block is None:
        return None
    block = int(block)
    if size % block == 0:
        return None
    return axis_start + (size // block) * block


def check_attention(
    name: str,
    actual: Any,
    expected: Any,
    *,
    block_m: int | None = None,
    lse: Any = None,
    lse_expected: Any = None,
    max_scores: Any = None,
    atol: float = 1e-4,
    rtol: float = 1e-4,
    rows: str = "query",
    slips: Mapping[str, Any] | None = None,
) -> None:
    """Compare an attention output (or gradient) of shape (..., seq, d) with the reference and
    say which rows and which blocks of ``block_m`` rows are wrong, and the likely slip.

    ``lse``/``lse_expected`` (shape (..., seq)) check the saved logsumexp L = m + log ℓ too;
    ``max_scores`` (the row maxima of the scaled scores) lets the message tell "you stored m,
    not m + log ℓ" apart from other mistakes. ``rows`` names what a row is ("query", "key").
    ``slips`` maps an explanation to the output a known mistake produces (for instance attention
    computed with the padding keys left unmasked); an answer equal to one of them gets that
    explanation instead of a guess.
    """
    name = _name("name", name)
    if block_m is not None:
        block_m = positive_int("block_m", block_m, maximum=MAX_BLOCK)
    atol, rtol = _tolerance("atol", atol), _tolerance("rtol", rtol)
    rows = _text("rows", rows, empty=False)
    want = _reference_array("expected", expected)
    if want.ndim < 2 or want.size == 0:
        raise ValueError(
            f"expected has shape {tuple(want.shape)}; check_attention needs a non-empty "
            "(..., seq, d) array"
        )
    known_slips = {}
    for explanation, slip_output in _mapping("slips", slips or {}, empty=True).items():
        label = f"slips[{show(explanation)}]"
        _text(f"{label} (its key)", explanation, empty=False)
        slip = _reference_array(label, slip_output)
        if slip.shape != want.shape:
            raise ValueError(f"{label} has shape {slip.shape}; expected {want.shape}")
        known_slips[explanation] = slip
    lse_want = None if lse_expected is None else _reference_array("lse_expected", lse_expected)
    if lse_want is not None and lse_want.shape != want.shape[:-1]:
        raise ValueError(
            f"lse_expected has shape {lse_want.shape}; expected {want.shape[:-1]} (the output's "
            "shape without its last dim)"
        )
    maxima = None if max_scores is None else _reference_array("max_scores", max_scores)
    if maxima is not None and (lse_want is None or maxima.shape != lse_want.shape):
        raise ValueError(
            f"max_scores has shape {maxima.shape}: it needs lse_expected, with the same shape"
        )
    got = _to_numpy(name, actual, want.shape)
    if got is None:
        raise CheckError(
            f"`{name}` has shape {_shape_text(actual)}; expected {tuple(want.shape)} "
            "(batch, heads, seq, d): allocate the output like q."
        )
    seq = want.shape[-2]
    flat_got = got.reshape(-1, seq, want.shape[-1])
    flat_want = want.reshape(-1, seq, want.shape[-1])
    lead = want.shape[:-2]

    def where(row_mask: np.ndarray) -> str:
        heads = np.flatnonzero(row_mask.any(axis=1))
        positions = np.flatnonzero(row_mask.any(axis=0))
        first = tuple(int(i) for i in np.unravel_index(heads[0], lead)) if lead else ()
        text = f"{rows} rows {_runs(positions)}"
        if block_m:
            text += f" (row blocks {_runs(np.unique(positions // int(block_m)))} of {block_m})"
        if lead:
            text += f", in {len(heads)} of {flat_want.shape[0]} (batch, head) slices, the first "
            text += f"{first}"
        return text

    bad = ~np.isfinite(flat_got) & np.isfinite(flat_want)
    if bad.any():
        raise CheckError(
            f"`{name}` has NaN or infinite values in {where(bad.any(axis=2))}: subtract the "
            "running max before exp, divide by ℓ only once at the end, and mask keys past the "
            "end of the sequence with -inf (not the query rows' padding with NaN)."
        )
    wrong = ~np.isclose(flat_got, flat_want, atol=atol, rtol=rtol)
    if wrong.any() and not np.any(flat_got):
        raise CheckError(
            f"`{name}` is all zeros: nothing was computed or stored; write the loop over the "
            "blocks and store (or return) the result."
        )
    if wrong.any():
        for explanation, slip_output in known_slips.items():
            slip = slip_output.reshape(flat_want.shape)
            if np.allclose(flat_got, slip, atol=atol, rtol=rtol):
                raise CheckError(
                    f"`{name}` is wrong ({int(wrong.any(axis=2).sum())} of "
                    f"{wrong.shape[0] * wrong.shape[1]} rows): {explanation}"
                )
        wrong_rows = wrong.any(axis=2)
        worst = float(np.max(np.abs(flat_got - flat_want)))
        message = (
            f"{int(wrong_rows.sum())} of {wrong_rows.size} rows of `{name}` are wrong (largest "
            f"error about {worst:.1g}), {where(wrong_rows)}"
        )
        positions = np.flatnonzero(wrong_rows.any(axis=0))
        edge = _edge(block_m, 0, seq)
        # each wrong row a constant multiple of the right one? (and one constant for all?)
        scaled, factors = True, []
        for h, r in zip(*np.nonzero(wrong_rows), strict=True):
            g, w = flat_got[h, r], flat_want[h, r]
            big = np.abs(w) > 1e-3 * (np.abs(w).max() + 1e-30)
            ratio = g[big] / w[big]
            constant = ratio.size >= 2 and np.allclose(ratio, ratio[0], rtol=1e-3)
            if not constant or abs(ratio[0]) < 1e-6:
                scaled = False
                break
            factors.append(float(ratio[0]))
        one_factor = scaled and np.allclose(factors, factors[0], rtol=1e-3)
        if edge is not None and positions.min() >= edge:
            message += (
                f": only the last, partial block of rows (from row {edge}) is wrong: check the "
                "masks on the loads and the store."
            )
        elif one_factor and wrong_rows.all():
            message += (
                f": everything is {_fmt(factors[0])}× the reference, a constant factor: look for "
                f"a missing or extra scale (1/√d = {_fmt(1 / math.sqrt(want.shape[-1]))} here)."
            )
        elif scaled:
            message += (
                ": each wrong row is the right row times a constant, so the weights do not sum "
                "to 1: rescale the accumulator by exp(m_old − m_new) whenever the max grows, "
                "and divide by ℓ once at the end."
            )
        else:
            message += (
                ": check the running max and sum updates, that every key block is visited, "
                "and that keys past the end of the sequence (and, causal, above the diagonal) "
                "get -inf scores."
            )
        raise CheckError(message)
    if lse_want is None:
        return None
    if lse is None:
        raise CheckError(
            f"`{name}` is right but the logsumexp L is missing: return (or save) "
            "L = m + log ℓ, one float32 per query row, shaped like q without its last dim."
        )
    lse_got = _to_numpy("L", lse, lse_want.shape)
    if lse_got is None:
        raise CheckError(
            f"`{name}` is right, but L has shape {_shape_text(lse)}; expected "
            f"{tuple(lse_want.shape)} (q's shape without its last dim)."
        )
    if np.all(np.isnan(lse_got)):
        raise CheckError(
            f"`{name}` is right, but L was never written (it is still NaN): store "
            "m_i + log(l_i) for every query row, the backward pass needs it."
        )
    lse_wrong = ~np.isclose(lse_got, lse_want, atol=atol, rtol=rtol)
    if lse_wrong.any():
        message = f"`{name}` is right, but {int(lse_wrong.sum())} of {lse_want.size} values of L "
        message += "are wrong"
        if maxima is not None:
            m = maxima
            if np.allclose(lse_got, m, atol=atol, rtol=rtol):
                raise CheckError(message + ": L is the running max m; add log ℓ (L = m + log ℓ).")
            if np.allclose(lse_got, lse_want - m, atol=atol, rtol=rtol):
                raise CheckError(message + ": L is log ℓ; add the running max m (L = m + log ℓ).")
        raise CheckError(
            message + ": L = m + log ℓ with the final running max m and sum ℓ of each row "
            "(natural log, scores already multiplied by 1/√d)."
        )
    return None


# --------------------------------------------------------------------------- guarded kernel inputs


def padded(tensor: torch.Tensor, pad: int, *, fill: float = float("nan")) -> torch.Tensor:
    """A copy of ``tensor`` that lives in the middle of a larger buffer filled with ``fill``.

    Hand these to a student's kernel instead of bare tensors: a load or store up to ``pad``
    elements past either end of the tensor (a missing mask) stays inside the buffer, so it reads
    NaN (which :func:`check_tensor` reports as a mask problem) or writes into the padding (which
    :func:`check_padding` reports), instead of corrupting memory and killing the process. The copy
    is contiguous, on the same device and of the same dtype (floating point only, at most 2**26
    elements). ``pad`` is an int in 0 … 2**24; ``fill`` a real number (NaN by default).
    """
    if not _is_tensor(tensor) or not tensor.is_floating_point() or tensor.device.type == "meta":
        raise ValueError(
            f"tensor={_describe(tensor)} must be a floating-point torch tensor that holds values"
        )
    import torch

    pad = positive_int("pad", pad, minimum=0, maximum=MAX_PAD)
    fill = real_number("fill", fill)
    largest = float(torch.finfo(tensor.dtype).max)
    if math.isfinite(fill) and abs(fill) > largest:
        raise ValueError(
            f"fill={show(fill)} does not fit in {tensor.dtype}: at most {largest:.3g} in size "
            "(or NaN, or ±inf)"
        )
    n = tensor.numel()
    if n > MAX_PADDED_ELEMENTS:
        raise ValueError(f"tensor has {n} elements; padded() copies at most 2**26")
    buffer = torch.full((n + 2 * pad,), fill, dtype=tensor.dtype, device=tensor.device)
    buffer[pad : pad + n] = tensor.detach().reshape(-1)
    view = buffer[pad : pad + n].view(tensor.shape)
    view._gpuperf_padding = (buffer, pad, fill)
    return view


def check_padding(name: str, tensor: torch.Tensor) -> None:
    """Fail if a kernel wrote into the padding around ``tensor`` (made by :func:`padded`);
    ``name`` is what the message calls it."""
    name = _name("name", name)
    padding = getattr(tensor, "_gpuperf_padding", None) if _is_tensor(tensor) else None
    if padding is None:
        raise ValueError(f"tensor={_describe(tensor)} was not made by padded(): nothing to check")
    import torch

    buffer, pad, fill = padding
    n = tensor.numel()
    before, after = buffer[:pad], buffer[pad + n :]
    if math.isnan(fill):
        changed_before = int((~torch.isnan(before)).sum())
        changed_after = int((~torch.isnan(after)).sum())
    else:
        changed_before = int((before != fill).sum())
        changed_after = int((after != fill).sum())
    if changed_after or changed_before:
        where = "past the end" if changed_after else "before the start"
        raise CheckError(
            f"your kernel wrote {changed_after + changed_before} values {where} of `{name}`: "
            "check the mask on your store (offsets must stay below the number of elements)."
        )
