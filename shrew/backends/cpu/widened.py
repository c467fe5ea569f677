"""float16 and bfloat16 calls of the cpu backend's float32 fast paths: the 16-bit inputs
widened to float32 (exactly), the float32 path run on them, and its results rounded once
to the 16-bit dtype, as PyTorch's CPU kernels compute those dtypes (in float32, "opmath").

Why: under autocast the matrix products and attention run in bfloat16, and without this
their fused calls (attention, its gradient, GELU's gradient) declined and the core's
compositions ran instead, keeping more intermediates alive (a bfloat16 transformer step
then peaked above its float32 one).  Here the arrays a recorded op saves for backward (the
attention weights) stay 16-bit, which is where autocast's memory saving comes from; the
float32 copies live only for the call.  Values within the 16-bit dtype's rounding of the
float32 path's; float32 calls never come here, so theirs are unchanged.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..kernels import LOW_PRECISION


def low_dtype(*arrays: Any) -> np.dtype | None:
    """The 16-bit float dtype all of the arrays share (None entries skipped), or None where
    any has another dtype (or they mix float16 and bfloat16)."""
    dtypes = {a.dtype for a in arrays if a is not None}
    if len(dtypes) != 1:
        return None
    dtype = dtypes.pop()
    return dtype if dtype in LOW_PRECISION else None


# The float32 copies of one piece: 1 MiB a piece keeps them small beside the 16-bit
# arrays (a transformer's GELU gradient widened whole held 12 MiB of them).  Half that
# took 2 MiB off the bfloat16 transformer step's peak (0.59x float32's, not 0.62x) but
# made the step 3% slower.
PIECE_ELEMENTS = 1 << 18


def _pieces(args: tuple, lead: tuple) -> list:
    """The slices of dim 0 that call() runs one at a time: whole where there is no
    leading dim or the largest array is smaller than two pieces."""
    largest = max(a.size for a in args if isinstance(a, np.ndarray))
    count = min(lead[0], largest // PIECE_ELEMENTS) if lead else 1
    if count < 2:
        return [slice(None)]
    bounds = np.linspace(0, lead[0], count + 1).astype(int)
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def _piece(x: Any, rows: slice, lead: tuple) -> Any:
    """x's part in the piece `rows` of dim 0: sliced where x shares the call's leading dim
    (and rank), else whole (a mask broadcast over it)."""
    if isinstance(x, np.ndarray) and x.shape[:1] == lead[:1] and x.ndim == len(lead):
        x = x[rows]
    if isinstance(x, np.ndarray) and x.dtype in LOW_PRECISION:
        # order="K" keeps x's memory order (attention's heads interleaved in their rows)
        return x.astype(np.float32, order="K")
    return x


def _rounded(got: Any, dtype: np.dtype) -> Any:
    """A whole call's result (an array, None, or a tuple of those) rounded to dtype."""
    if isinstance(got, tuple):
        return tuple(_rounded(g, dtype) for g in got)
    return None if got is None else got.astype(dtype, order="K")


def _store(out: Any, got: Any, rows: slice, length: int, dtype: np.dtype) -> Any:
    """One piece's result rounded into its rows of `out` (made, `length` rows long, by the
    first piece): only one piece's float32 results are alive at a time."""
    if isinstance(got, tuple):
        return tuple(_store(o, g, rows, length, dtype)
                     for o, g in zip(out or (None,) * len(got), got))
    if got is None:
        return None
    if out is None:   # in the piece's memory order (attention's heads interleaved)
        out = np.empty_like(got, dtype, shape=(length,) + got.shape[1:])
    out[rows] = got
    return out


def call(fn: Callable, dtype: np.dtype, lead: tuple, *args: Any) -> Any:
    """fn(*args) with every 16-bit array argument widened to float32 and the float32
    arrays of its result rounded to dtype, or NotImplemented where fn declines.  fn must
    be independent along dim 0 of `lead` (the shape of its main input), each result as
    long as that dim: the call runs in pieces of that dim, so that the float32 copies
    stay small; arrays of another rank or leading size (a mask broadcast over it) go whole
    into each piece; lead () runs it whole."""
    pieces = _pieces(args, lead)
    out = None
    for rows in pieces:
        got = fn(*(_piece(a, rows, lead) for a in args))
        if got is NotImplemented:
            return NotImplemented
        if len(pieces) == 1:
            return _rounded(got, dtype)
        out = _store(out, got, rows, lead[0], dtype)
    return out


def elementwise(fn: Callable, dtype: np.dtype, name: str, *arrays: np.ndarray) -> Any:
    """call() for fn(name, *arrays), elementwise over arrays of one shape: in pieces of
    their flattened elements (any array's leading dim may be too short to split)."""
    shape = arrays[0].shape
    flat = [a.reshape(-1) for a in arrays]
    out = call(lambda *pieces: fn(name, *pieces), dtype, flat[0].shape, *flat)
    return out if out is NotImplemented else out.reshape(shape)
