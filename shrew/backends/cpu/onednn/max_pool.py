"""max_pool2d for the cpu backend on oneDNN's pooling (pool.py): the forward, and the
backward through the workspace the forward left.

oneDNN's max pooling in plain layout keeps a workspace: each window's offset of its
maximum (uint8, row-major, the first of equal maxima, as PyTorch and numpy's path take).
The forward returns it for the backend to make shrew's int64 index from
(ArrayModuleBackend.window_index), and remembers it beside that index: the backward,
handed the same index array, routes the gradient with oneDNN's backward (about a third of
numpy's store by index on cnn_step's shapes); handed any other, it declines.  The memory
is a small table keyed by the index array's identity, checked through a weak reference,
so an index that is gone is never mistaken for a new one; an entry goes with its index
(a second backward of a retained graph reads it again: the fallback's sum of overlapping
windows rounds otherwise), and the table is bounded (RECENT entries), so that an index
kept long (a graph never differentiated) holds nothing for long.

bfloat16 (where oneDNN has its AVX512 kernels, matmul.data_type) takes the same two
primitives, which only compare values and route the gradient: PyTorch's bits, but for
what oneDNN's bfloat16 stores flush to zero (a subnormal maximum, a subnormal gradient)
and a NaN it skips; inputs holding those are declined (bits16.holds).  Its backward
serves windows that do not overlap (each input element gets at most one gradient, no
sum to round), as cnn_step's (kernel 2, stride 2).
"""
from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from .. import bits16
from ..mkl import has_nan
from ..thresholds import MIN_ELEMENTWISE_SIZE
from . import pool
from .binding import BF16, F32, POOL_MAX
from .matmul import data_type

RECENT = 32
_LOWEST_FLOAT32 = np.finfo(np.float32).min
_NEGATIVE_INFINITY_BITS = 0xFF80   # bfloat16's
_workspaces: OrderedDict = OrderedDict()   # id(index) -> (weakref(index), geometry, workspace)
_lock = threading.Lock()


def forward(x: np.ndarray, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
            ceil_mode: bool) -> Any:  # (values, offsets [N, C, Ho, Wo] uint8), or NotImplemented
    """The values and each window's offset of its maximum, for a large float32 or
    bfloat16 input.  oneDNN skips a NaN where PyTorch's maximum is NaN; in float32 it gives
    a window of -inf the lowest float, in bfloat16 -inf but its first tap's offset, which
    may lie in the padding; its bfloat16 store flushes a subnormal maximum: such inputs,
    and dilation or ceil_mode, which the binding does not take, are declined."""
    dtype = data_type(x)
    if (any(d != 1 for d in dilation) or ceil_mode or math.prod(kernel) > 255
            or dtype is None or x.size < MIN_ELEMENTWISE_SIZE):
        return NotImplemented
    if has_nan(x) if dtype == F32 else bits16.holds(x, nan=True,
                                                      below=bits16.SMALLEST_NORMAL):
        return NotImplemented
    got = pool.pool2d(x, POOL_MAX, kernel, stride, padding)
    if got is NotImplemented:
        return NotImplemented
    values, workspace = got
    if workspace is None or workspace.size != values.size or _lowest(values, dtype, padding):
        return NotImplemented
    return values, workspace.reshape(values.shape)


def _lowest(values: np.ndarray, dtype: int, padding: tuple) -> bool:
    """Whether a window came out lowest where PyTorch's is -inf (float32), or -inf with
    padding about (bfloat16: its offset may name a padded tap)."""
    if dtype == F32:
        return bool(values.min() <= _LOWEST_FLOAT32)
    # -inf's pattern is the largest but NaNs' as unsigned, and no NaN got here
    return any(padding) and bool(values.view(np.uint16).max() == _NEGATIVE_INFINITY_BITS)


def remember(index: np.ndarray, x_shape: tuple, kernel: tuple, stride: tuple,
             padding: tuple, offsets: np.ndarray) -> None:
    """Keep forward's offsets for the backwards that will be handed `index` (every one of
    them: a graph kept with retain_graph=True is differentiated again, and must give the
    same numbers), until the index goes."""
    key = id(index)

    def gone(ref: weakref.ref) -> None:
        with _lock:
            if key in _workspaces and _workspaces[key][0] is ref:
                del _workspaces[key]
    entry = (weakref.ref(index, gone), (x_shape, kernel, stride, padding), offsets)
    with _lock:
        _workspaces[key] = entry
        _workspaces.move_to_end(key)
        while len(_workspaces) > RECENT:
            _workspaces.popitem(last=False)


def backward(g: np.ndarray, index: np.ndarray, x_shape: tuple, kernel: tuple,
             stride: tuple, dilation: tuple) -> Any:  # dx, or NotImplemented
    """max_pool2d's gradient through oneDNN, where `index` came from `forward` (its
    offsets remembered) and g is float32, or bfloat16 without subnormals on windows that
    do not overlap; else NotImplemented."""
    with _lock:
        entry = _workspaces.get(id(index))
    if entry is None or entry[0]() is not index or any(d != 1 for d in dilation):
        return NotImplemented
    shape, kernel_was, stride_was, padding = entry[1]
    if (shape, kernel_was, stride_was) != (tuple(x_shape), kernel, stride) \
            or g.shape != index.shape:
        return NotImplemented
    dtype = data_type(g)
    if dtype != F32 and (dtype != BF16 or any(k > s for k, s in zip(kernel, stride))
                         or bits16.holds(g, below=bits16.SMALLEST_NORMAL)):
        return NotImplemented
    return pool.pool2d_backward(g, x_shape, POOL_MAX, kernel, stride, padding, entry[2])
