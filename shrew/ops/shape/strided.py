"""Strided views (O.AsStrided): step slices, diagonal, unfold, expand with grad and
as_strided, each sharing its input's memory on every backend (backend.as_strided), as
PyTorch's views do.

The op reads `size` with element `stride` from `offset` elements after x's first element,
in x's memory.  Backward (PyTorch's as_strided_backward) adds the gradient into that memory
at the positions read, then reads it back at x's own positions (x_strides); an expand's
gradient is the cheaper sum over its broadcast dims.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...core import op as O
from ...core.errors import ArgumentError, ShapeError, ShrewTypeError
from ...core.fields import AnyTensor, view, wrap
from ...core.shape import fmt, normalize_dim, numel
from ..index.recorded import gather, scatter_add_unchecked

if TYPE_CHECKING:
    from ..._tensor import Tensor


def elem_strides(data: Any) -> tuple[int, ...]:
    """x's strides in elements (numpy's and CuPy's are in bytes; a CLStorage's are not)."""
    strides = getattr(data, "strides", ())
    if hasattr(data, "__array_interface__") or hasattr(data, "__cuda_array_interface__"):
        return tuple(st // data.dtype.itemsize for st in strides)
    return tuple(strides)


def _positions(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> np.ndarray:
    """The memory position of each element of a (shape, strides, offset) view, C order."""
    pos = np.full(shape, offset, dtype=np.int64)
    for d, (n, st) in enumerate(zip(shape, strides)):
        pos += (np.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (len(shape) - d - 1))
    return pos.reshape(-1)


def strided(x: Tensor, size: tuple[int, ...], stride: tuple[int, ...], offset: int,
            name: str = "AsStridedBackward0") -> Tensor:
    """The view of x's memory (checked by the caller: every element inside it)."""
    op = O.AsStrided(x, size, stride, offset, elem_strides(x._data), name)
    if name == "ExpandBackward0":  # (numpy's broadcast_to: read-only, refused to write)
        data = x._backend.expand(x._backend.reshape(x._data, (1,) * (len(size) - x.ndim)
                                                    + x.shape), size)
    else:
        data = x._backend.as_strided(x._data, size, stride, offset)
    return view(data, x._backend, op, x)


def replay(x: Tensor, op: O.AsStrided) -> Tensor:
    """op taken again from x (ops/inplace: a rebuilt base, or positions): a view where x
    has the recorded layout, else the same elements read through x's positions."""
    if op.name == "ExpandBackward0":
        return x.expand(*op.size)
    now = elem_strides(x._data)
    if all(a == b for n, a, b in zip(x.shape, now, op.x_strides) if n > 1):
        return strided(x, op.size, op.stride, op.offset, op.name)
    flat = x.reshape(numel(x.shape))
    x_pos, out_pos = _positions(x.shape, op.x_strides, 0), _positions(op.size, op.stride,
                                                                     op.offset)
    low, span = _span(x_pos, out_pos)
    memory = scatter_add_unchecked((span,), 0, _index(x, x_pos - low), flat)
    return gather(memory, 0, _index(x, out_pos - low), range_checked=True).reshape(*op.size)


def _span(x_pos: np.ndarray, out_pos: np.ndarray) -> tuple[int, int]:
    """(lowest position, length) of the memory both sets of positions lie in."""
    low = int(min(x_pos.min(initial=0), out_pos.min(initial=0)))
    return low, int(max(x_pos.max(initial=0), out_pos.max(initial=0))) - low + 1


def _index(like: Tensor, positions: np.ndarray) -> Tensor:
    return wrap(like._backend.from_numpy(np.ascontiguousarray(positions)), like._backend)


def strided_grad(op: O.AsStrided, g: Tensor) -> Tensor:
    """x's gradient: g added into memory at the positions read, read back at x's."""
    from ...autograd.rules.common import sum_to_shape  # (autograd imports the ops)
    x = op.x
    if op.name == "ExpandBackward0":
        return sum_to_shape(g, x.shape)
    x_pos = _positions(x.shape, op.x_strides, 0)
    out_pos = _positions(op.size, op.stride, op.offset)
    low, span = _span(x_pos, out_pos)
    memory = scatter_add_unchecked((span,), 0, _index(g, out_pos - low),
                                   g.reshape(numel(g.shape)))
    grad = gather(memory, 0, _index(g, x_pos - low), range_checked=True).reshape(*x.shape)
    counts = np.bincount(x_pos - low, minlength=span)[x_pos - low]
    if counts.size and counts.max() > 1:  # x itself overlaps: share as PyTorch does
        grad = grad / _index(g, counts.reshape(x.shape)).to_dtype(g.dtype)
    return grad


# -- the views -------------------------------------------------------------------------------
def step_slice(x: Tensor, dim: int, start: int, n: int, step: int) -> Tensor:
    """x[..., start:start + n * step:step] along dim (n entries, all in range)."""
    strides = elem_strides(x._data)
    size = x.shape[:dim] + (n,) + x.shape[dim + 1:]
    stride = strides[:dim] + (strides[dim] * step,) + strides[dim + 1:]
    return strided(x, size, stride, start * strides[dim] if n else 0, "SliceBackward0")


def diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The entries x[..., i, i + offset] of the dim1 x dim2 planes, as a last dim."""
    if x.ndim < 2:
        raise ShapeError(f"diagonal: needs at least 2 dims, got {fmt(x.shape)}")
    d1, d2 = normalize_dim(dim1, x.ndim, "diagonal"), normalize_dim(dim2, x.ndim, "diagonal")
    if d1 == d2:
        raise ShapeError(f"diagonal: dim1 and dim2 cannot be the same dim, but got dim1 = "
                         f"dim2 = {dim1}")
    strides = elem_strides(x._data)
    rows, cols = x.shape[d1], x.shape[d2]
    n = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    start = (offset * strides[d2] if offset >= 0 else -offset * strides[d1]) if n else 0
    keep = [d for d in range(x.ndim) if d not in (d1, d2)]
    size = tuple(x.shape[d] for d in keep) + (n,)
    stride = tuple(strides[d] for d in keep) + (strides[d1] + strides[d2],)
    return strided(x, size, stride, start, "DiagonalBackward0")


def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of `size` entries along `dimension`, `step` apart, as a new last dim."""
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (dimension, size, step)):
        raise ShrewTypeError(f"unfold: dimension, size and step must be ints, got "
                             f"{dimension!r}, {size!r}, {step!r}")
    d = normalize_dim(dimension, max(x.ndim, 1), "unfold")
    length = x.shape[d] if x.ndim else 1
    if size > length:
        raise ShapeError(f"unfold: maximum size for tensor at dimension {d} is {length} but "
                         f"size is {size}")
    if size < 0:
        raise ShapeError(f"unfold: size is {size} but must be >= 0")
    if step <= 0:
        raise ArgumentError(f"unfold: step is {step} but must be > 0")
    if x.ndim == 0:  # PyTorch: the one window, [size]
        return strided(x, (size,), (1,), 0, "UnfoldBackward0")
    strides = elem_strides(x._data)
    shape = x.shape
    windows = (length - size) // step + 1
    out_size = shape[:d] + (windows,) + shape[d + 1:] + (size,)
    out_stride = strides[:d] + (strides[d] * step,) + strides[d + 1:] + (strides[d],)
    return strided(x, out_size, out_stride, 0, "UnfoldBackward0")


def as_strided(x: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """PyTorch's as_strided: `size` read with `stride` from `storage_offset` elements into
    the memory x is a view of (x's own offset when None)."""
    from ..inplace import memory_root  # (inplace imports the shape ops)
    if not isinstance(x, AnyTensor):
        raise ShrewTypeError(f"as_strided: expects a Tensor, got {type(x).__name__}")
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride) or not all(isinstance(v, int) and not isinstance(v, bool)
                                           for v in size + stride):
        raise ShapeError(f"as_strided: mismatch in length of strides and shape (size "
                         f"{size}, stride {stride})")
    if any(v < 0 for v in size + stride):
        raise ShapeError(f"as_strided: negative sizes or strides are not supported, got "
                         f"size {size}, stride {stride}")
    root = memory_root(x)
    own = storage_offset_of(x, root)
    at = own if storage_offset is None else int(storage_offset)
    if at < 0:
        raise ShapeError(f"as_strided: storage_offset must be non-negative, got {at}")
    extent = _extent(root)
    need = at + sum((n - 1) * st for n, st in zip(size, stride)) + 1 if numel(size) else 0
    if need > extent:
        raise ShapeError(f"as_strided: setStorage: sizes {list(size)}, strides {list(stride)},"
                         f" storage offset {at} need a storage of {need} elements, out of "
                         f"bounds for the storage of {extent} elements")
    return strided(x, size, stride, at - own)


def storage_offset_of(x: Tensor, root: Tensor) -> int:
    """x's first element's position in the memory of the root of its views."""
    from ..inplace import _layout  # (inplace imports the shape ops)
    return (_layout(x._data)[0] - _layout(root._data)[0]) // x._data.dtype.itemsize


def _extent(root: Tensor) -> int:
    """The number of elements in the root's memory."""
    strides = elem_strides(root._data)
    if not numel(root.shape):
        return 0
    return sum((n - 1) * st for n, st in zip(root.shape, strides)) + 1
