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


# The float32 copies of one piece: 1 MiB a piece keeps them in cache and small beside the
# 16-bit arrays (a transformer's GELU gradient widened whole held 12 MiB of them).
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


def _joined(parts: list, dtype: np.dtype) -> Any:
    """The pieces' results (each an array, None, or a tuple of those) joined along dim 0
    and rounded to dtype."""
    first = parts[0]
    if isinstance(first, tuple):
        return tuple(_joined([p[i] for p in parts], dtype) for i in range(len(first)))
    if first is None:
        return None
    if len(parts) == 1:
        return first.astype(dtype, order="K")
    out = np.empty((sum(p.shape[0] for p in parts),) + first.shape[1:], dtype)
    start = 0
    for p in parts:
        out[start:start + p.shape[0]] = p
        start += p.shape[0]
    return out


def call(fn: Callable, dtype: np.dtype, lead: tuple, *args: Any) -> Any:
    """fn(*args) with every 16-bit array argument widened to float32 and the float32
    arrays of its result rounded to dtype, or NotImplemented where fn declines.  fn must
    be independent along dim 0 of `lead` (the shape of its main input): the call runs in
    pieces of that dim, so that the float32 copies stay small; arrays of another rank or
    leading size (a mask broadcast over it) go whole into each piece; lead () runs it
    whole."""
    parts = []
    for rows in _pieces(args, lead):
        got = fn(*(_piece(a, rows, lead) for a in args))
        if got is NotImplemented:
            return NotImplemented
        parts.append(got)
    return _joined(parts, dtype)
