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

import ml_dtypes
import numpy as np

LOW_PRECISION = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def low_dtype(*arrays: Any) -> np.dtype | None:
    """The 16-bit float dtype all of the arrays share (None entries skipped), or None where
    any has another dtype (or they mix float16 and bfloat16)."""
    dtypes = {a.dtype for a in arrays if a is not None}
    if len(dtypes) != 1:
        return None
    dtype = dtypes.pop()
    return dtype if dtype in LOW_PRECISION else None


def _widen(x: Any) -> Any:
    # order="K" keeps x's memory order (attention's heads interleaved in their rows).
    if isinstance(x, np.ndarray) and x.dtype in LOW_PRECISION:
        return x.astype(np.float32, order="K")
    return x


def _narrow(result: Any, dtype: np.dtype) -> Any:
    """Each float32 array of result (an array, or a tuple or list of arrays and Nones)
    rounded to dtype; NotImplemented and None pass."""
    if isinstance(result, (tuple, list)):
        return tuple(_narrow(r, dtype) for r in result)
    if isinstance(result, np.ndarray) and result.dtype == np.float32:
        return result.astype(dtype, order="K")
    return result


def call(fn: Callable, dtype: np.dtype, *args: Any) -> Any:
    """fn(*args) with every array argument widened to float32 and every float32 array of
    its result rounded to dtype (NotImplemented where fn declines)."""
    return _narrow(fn(*(_widen(a) for a in args)), dtype)
