"""A layer's bias on MKL's threads, as matrix-vector work with vectors of ones: its
gradient (sum_around: sums over every dim but one run, as gemv) and its add
(add_broadcast_: a rank-1 update, ger).  Each declines where it does not serve: MKL off or
not loaded, other dtypes or layouts, arrays below SUM_MIN_SIZE (cpu/thresholds.py)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import thresholds
from .library import INT_MAX, NO_TRANS, ROW_MAJOR, TRANS, load, switch


def sum_around(x: np.ndarray, dims: tuple, keepdim: bool) -> Any:
    """x summed over `dims`, all of its dims but one run of kept ones (a layer's bias
    gradient: [N, T, D] over N and T, [N, C, H, W] over N, H and W), as matrix-vector
    products with vectors of ones on MKL's threads: x viewed as [before, kept, after],
    one product sums `after` away, another `before`.  NotImplemented where it does not
    serve: x not C-contiguous and large, float32 or float64, or the kept dims not one run.
    numpy sums over the outer dims one row after another on one thread; the products'
    rounding is no worse."""
    if not (thresholds.SUM_MIN_SIZE <= x.size <= INT_MAX and dims and switch.on
            and x.flags.c_contiguous and x.flags.aligned):
        return NotImplemented   # (every sum asks: the cheap tests first)
    kept = [d for d in range(x.ndim) if d not in dims]
    around = _around(x.shape, kept)
    if around is None:
        return NotImplemented
    runtime = load()
    if runtime is None or x.dtype not in runtime.gemv:
        return NotImplemented
    gemv = runtime.gemv[x.dtype]
    before, after = around
    middle = x.size // (before * after)
    partial = x
    if after > 1:   # each [before * middle] row summed over its `after` columns
        partial = np.empty(before * middle, x.dtype)
        gemv(ROW_MAJOR, NO_TRANS, before * middle, after, 1.0, x.ctypes.data, after,
             _ones(after, x.dtype).ctypes.data, 1, 0.0, partial.ctypes.data, 1)
    shape = tuple(n if d in kept else 1 for d, n in enumerate(x.shape)) if keepdim else \
        tuple(x.shape[d] for d in kept)
    if before == 1:
        return partial.reshape(shape)
    out = np.empty(shape, x.dtype)   # the [before, middle] rows summed
    gemv(ROW_MAJOR, TRANS, before, middle, 1.0, partial.ctypes.data, middle,
         _ones(before, x.dtype).ctypes.data, 1, 0.0, out.ctypes.data, 1)
    return out


def add_broadcast_(dst: np.ndarray, src: np.ndarray) -> bool:
    """dst += src in place, src broadcasting along dst's other dims (a layer's bias: [1, N]
    into [M, N], [1, C, 1, 1] into [N, C, H, W]), as one rank-1 update on MKL's threads:
    dst viewed as [rows, cols] += x y^T, the bias in x or y and ones in the other.  Each
    element gets bias * 1 added, one rounding: numpy's bits.  False where it does not
    serve: dst not C-contiguous and large, src's sized dims not one run, other dtypes."""
    if not (switch.on and thresholds.SUM_MIN_SIZE <= dst.size <= INT_MAX and dst.dtype == src.dtype
            and dst.ndim == src.ndim and dst.flags.c_contiguous and dst.flags.writeable
            and dst.flags.aligned):
        return False
    sized = [d for d in range(src.ndim) if src.shape[d] != 1]
    around = _around(dst.shape, sized)
    if not around or any(src.shape[d] != dst.shape[d] for d in sized) \
            or np.may_share_memory(dst, src):
        return False
    runtime = load()
    if runtime is None or dst.dtype not in runtime.ger:
        return False
    bias = np.ascontiguousarray(src).reshape(-1)
    before, after = around
    if after == 1:    # the bias along the rows' last dims: ones (rows) x bias (cols)
        rows, cols, x, y = before, bias.size, _ones(before, dst.dtype), bias
    else:             # along a middle dim: the bias repeated (rows) x ones (cols)
        rows, cols = before * bias.size, after
        x, y = (np.tile(bias, before) if before > 1 else bias), _ones(after, dst.dtype)
    runtime.ger[dst.dtype](ROW_MAJOR, rows, cols, 1.0, x.ctypes.data, 1, y.ctypes.data, 1,
                           dst.ctypes.data, cols)
    return True


def _around(shape: tuple, run: list) -> tuple[int, int] | None:
    """(the size of shape's dims before `run`, that of those after it) where `run` is one
    unbroken, non-empty run of dims; else None."""
    if not run or run[-1] - run[0] + 1 != len(run):
        return None
    return math.prod(shape[:run[0]]), math.prod(shape[run[-1] + 1:])


_ONES: dict = {}


def _ones(n: int, dtype: np.dtype) -> np.ndarray:
    """A read-only vector of n ones, kept per (n, dtype): a few sizes recur in training."""
    key = (n, dtype)
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) >= 64:
            _ONES.clear()
        ones = _ONES[key] = np.ones(n, dtype)
        ones.flags.writeable = False
    return ones
