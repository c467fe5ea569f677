"""Indexing with index tensors, the primitives: gather, its adjoint scatter_add, and
scatter (index.cl on OpenCL and CUDA), with the range checks of their indices.  torch's
index functions built on them are in indexing.py, x[key] in subscript.py."""
from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...core import op as O
from ...core.dtype import int64
from ...core.errors import type_name
from ...core.errors import (ArgumentError, DTypeError, ShapeError, ShrewError, ShrewTypeError)
from ...core.fields import AnyTensor, record
from ...core.shape import fmt, normalize_dim, numel
from ..common import same_device

if TYPE_CHECKING:
    from ...backends.base import Backend, Storage
    from ..._tensor import Tensor

# The range [lo, hi] of each integer tensor uploaded from host data to a device, keyed by
# the id of its allocation (base.Allocation), which its views share; an entry leaves with
# the uploaded tensor, which keeps the allocation (and so its id) alive until then.
_host_ranges: dict[int, tuple[int, int]] = {}
# Range checks of indices computed on a device, waiting for the next read-back:
# (op, dim, lowest allowed, size, error class, backend, device min, device max).
deferred: list[tuple[str, int, int, int, type[ShrewError], Backend, Storage, Storage]] = []
_MAX_DEFERRED = 64  # then they are read back at once, so that the list stays short


def gather(x: Tensor, dim: int, index: Tensor, range_checked: bool = False) -> Tensor:
    """x's entries at `index` along dim.  range_checked: the caller already checked the
    index's range with check_range (on the tensor it derived `index` from)."""
    d = normalize_dim(dim, x.ndim, "gather")
    given, index = index, _checked_index("gather", index, x)
    if index.ndim != x.ndim:
        raise ShapeError(f"gather: index must have as many dims as the input, got index "
                         f"{fmt(index.shape)} for input {fmt(x.shape)}")
    for i, (si, sx) in enumerate(zip(index.shape, x.shape)):
        if i != d and si > sx:
            raise ShapeError(f"gather: index {fmt(index.shape)} is larger than input "
                             f"{fmt(x.shape)} in dim {i}")
    if not range_checked:  # on the given tensor, whose host range may be known
        check_range("gather", given, x.shape[d], d)
    data = x._backend.gather(x._data, d, index._data)
    return record(data, x._backend, O.Gather(x, d, index), x)


def scatter_add_shape(shape: Sequence[int], dim: int, index: Tensor, src: Tensor) -> Tensor:
    """zeros(shape) with src added at index along dim (the adjoint of gather): index and
    src of one shape."""
    shape = tuple(shape)
    d = normalize_dim(dim, len(shape), "scatter_add")
    given, index = index, _checked_index("scatter_add", index, src)
    if index.shape != src.shape or index.ndim != len(shape):
        raise ShapeError(f"scatter_add: index {fmt(index.shape)} and src {fmt(src.shape)} must "
                         f"have one shape with the output's {len(shape)} dims")
    if any(i != d and si > so for i, (si, so) in enumerate(zip(index.shape, shape))):
        raise ShapeError(f"scatter_add: index {fmt(index.shape)} is larger than output "
                         f"{fmt(shape)} outside dim {d}")
    check_range("scatter_add", given, shape[d], d)
    return scatter_add_unchecked(shape, d, index, src)


def scatter_add_unchecked(shape: tuple[int, ...], dim: int, index: Tensor, src: Tensor) -> Tensor:
    """scatter_add of arguments already known good: for gradient rules whose int64 index
    was checked when it was made (gather's) or comes from a kernel (max_pool2d's)."""
    data = src._backend.scatter_add(shape, dim, index._data, src._data)
    return record(data, src._backend, O.ScatterAdd(src, dim, index), src)


def scatter_unchecked(dst: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str) -> Tensor:
    """dst with src combined at index along dim (reduce in base.SCATTER_REDUCE_FNS), for
    arguments already checked: int64 index in range, src of index's shape and dst's dtype."""
    data = dst._backend.scatter(dst._data, dim, index._data, src._data, reduce)
    return record(data, dst._backend, O.Scatter(dst, dim, index, src, reduce), dst, src)


def _checked_index(op: str, index: object, x: Tensor) -> Tensor:
    if not isinstance(index, AnyTensor):
        raise ShrewTypeError(f"{op}: index must be an int64 tensor, got {type_name(index)}")
    same_device(op, x, index)
    if index.dtype.category != 1:
        raise DTypeError(f"{op}: index must be an integer tensor, got {index.dtype}")
    return index.to_dtype(int64)


def _allocation_id(t: Tensor) -> int | None:
    allocation = getattr(t._backend, "allocation", None)
    return None if allocation is None else id(allocation(t._data))


def note_host_range(t: Tensor, host: np.ndarray) -> None:
    """Remember the range of integer tensor `t`, just uploaded from `host` to a device."""
    if host.size and host.dtype.kind in "iu":
        key = _allocation_id(t)
        if key is not None:
            _host_ranges[key] = (int(host.min()), int(host.max()))
            weakref.finalize(t, _host_ranges.pop, key, None)


def known_range(t: Tensor) -> tuple[int, int] | None:
    """The range of t's values noted when it was uploaded (it or the tensor it views)."""
    key = _allocation_id(t) if _host_ranges else None
    return None if key is None else _host_ranges.get(key)


def range_known_now(t: Tensor) -> bool:
    """Whether check_range reads t's range at once (host data, or an upload's noted range)
    rather than with the next read back (an index computed on a device)."""
    return isinstance(t._data, np.ndarray) or known_range(t) is not None


def forget_host_range(t: Tensor) -> None:
    """`t`'s values changed in place (copy_)."""
    key = _allocation_id(t) if _host_ranges else None
    if key is not None:
        _host_ranges.pop(key, None)


def check_range(op: str, index: Tensor, size: int, dim: int, wraps: bool = False,
                error: type[ShrewError] = ArgumentError, now: bool = False) -> None:
    """Indices must lie in [0, size) (in [-size, size) if `wraps`: negative ones count
    from the end).  Checked at once where that needs no device read:
    an index in host memory (the cpu backend), or an upload from host data (or a view of
    one) whose values all lie in range.  An upload with values out of range is checked
    exactly, reading the device (an error, unless the view leaves those values out).  An
    index computed on a device is checked there (a min and a max) and read back with the
    next result read back (raise_deferred); meanwhile the kernels read an entry out of
    range as 0 and write nothing for it; with `now`, it is read at once instead."""
    if numel(index.shape) == 0:
        return
    data = index._data
    known = known_range(index)
    least = -size if wraps else 0
    if isinstance(data, np.ndarray):
        lo, hi = int(data.min()), int(data.max())
    elif known is not None and least <= known[0] and known[1] < size:
        return  # a view of an upload whose every value is in range
    elif known is not None or now:  # (an upload: some value is not; is one in this view?)
        be = index._backend
        dims = tuple(range(index.ndim))
        lo = int(be.to_numpy(be.reduce("min", data, dims, False)))
        hi = int(be.to_numpy(be.reduce("max", data, dims, False)))
    else:
        be = index._backend
        dims = tuple(range(index.ndim))
        deferred.append((op, dim, least, size, error, be, be.reduce("min", data, dims, False),
                         be.reduce("max", data, dims, False)))
        if len(deferred) >= _MAX_DEFERRED:
            raise_deferred()
        return
    if lo < least or hi >= size:
        raise error(_out_of_range(op, lo if lo < least else hi, least, size, dim))


def raise_deferred() -> None:
    """Read back the deferred range checks (Tensor.numpy calls this first while any wait)
    and raise for the first that failed, naming its op."""
    pending = deferred[:]
    deferred.clear()
    for op, dim, least, size, error, be, lo_data, hi_data in pending:
        lo, hi = int(be.to_numpy(lo_data)), int(be.to_numpy(hi_data))
        if lo < least or hi >= size:
            raise error(_out_of_range(op, lo if lo < least else hi, least, size, dim) +
                             f"; an earlier {op} on {be.device}, with indices computed "
                             f"there, is found when a result is read back; its output "
                             f"holds 0 at those indices")


def _out_of_range(op: str, bad: int, least: int, size: int, dim: int) -> str:
    return (f"{op}: index {bad} is out of range for dim {dim} of size {size} "
            f"(indices must lie in [{least}, {size}))")

