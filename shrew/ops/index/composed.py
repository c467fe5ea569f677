"""torch's functions that index with tensors (scatter, scatter_reduce, index_select,
index_add/copy/fill, take, put, masks, nonzero), written with the primitives of index.py:
gather and scatter, whose gradients make all of them differentiable."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.autocast import autocast_op
from ...core.dtype import bool_, float64, int64
from ...core.errors import type_name
from ...core.errors import ArgumentError, DTypeError, ShapeError, ShrewIndexError
from ...core.fields import AnyTensor, wrap
from ...core.shape import broadcast_shapes, fmt, normalize_dim, numel
from ..common import constant, number, same_device
from ..creation import tensor
from ..elementwise.recorded import where as elementwise_where
from ..inplace import check_overlap, write_
from .recorded import (check_range, known_range, scatter_add_shape,
                    scatter_unchecked)
from .recorded import gather as gather_checked

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import Scalar


# -- indices as users give them ---------------------------------------------------------------
def wrapped_index(op: str, index: Tensor, size: int, dim: int) -> Tensor:
    """An integer index tensor with negative entries counted from the end (as torch's
    indexing, take and put do), checked to lie in [-size, size) by check_range; an index
    known to hold no negative entry comes back as it is, without a kernel."""
    check_range(op, index, size, dim, wraps=True, error=ShrewIndexError)
    index = index.to_dtype(int64)
    data = index._data
    if isinstance(data, np.ndarray):
        if numel(index.shape) == 0 or data.min() >= 0:
            return index
        return wrap(np.where(data < 0, data + size, data), index._backend)
    known = known_range(index)
    if known is not None and known[0] >= 0:
        return index
    return elementwise_where(index < 0, index + size, index)


def index_tensor(op: str, index: object, like: Tensor) -> Tensor:
    """An integer index given as a tensor, a list or a number, as a tensor on like's device;
    other dtypes are refused as torch refuses them."""
    if not isinstance(index, AnyTensor):
        host = np.asarray(index)
        if host.size == 0:
            host = host.astype(np.int64)
        if host.dtype.kind not in "iu":
            raise ShrewIndexError(f"{op}: indices must be integers, got {index!r}")
        index = tensor(host.astype(np.int64), device=like.device)
    elif op == "index" and index.device == "cpu":  # x[key] takes cpu indices, as in torch
        index = index.to(like.device)
    same_device(op, like, index)
    if index.dtype.category != 1 or index.dtype is bool_:
        # x[key] raises IndexError for these in torch, the functions a dtype error
        error = ShrewIndexError if op == "index" else DTypeError
        raise error(f"{op}: index tensors must be integer (int64, int32, ...), got "
                    f"{index.dtype}")
    return index


def _index_1d(op: str, index: object, x: Tensor, dim: int) -> Tensor:
    """The index of index_select, index_add, index_copy and index_fill: 0-d or 1-d."""
    index = index_tensor(op, index, x)
    if index.ndim > 1:
        raise ShrewIndexError(f"{op}: index must be 0-d or 1-d, got {fmt(index.shape)}")
    indexing = op in ("index_fill", "index_copy")  # torch's IndexError; the others RuntimeError
    check_range(op, index, x.shape[dim] if x.ndim else 1, dim,
                error=ShrewIndexError if indexing else ArgumentError)
    return index.reshape(-1)


def _along(index: Tensor, dim: int, shape: tuple[int, ...]) -> Tensor:
    """A 1-d index laid along dim of `shape` (its length in place of shape[dim]), broadcast
    over the other dims: the index that gather and scatter take for one index per slice."""
    lined = [1] * len(shape)
    lined[dim] = index.shape[0]
    full_shape = list(shape)
    full_shape[dim] = index.shape[0]
    return index.reshape(*lined).expand(*full_shape)


# -- gather, scatter and their torch forms ------------------------------------------------------
def scatter_into(op: str, dst: Tensor, dim: int, index: object, src: Tensor | Scalar,
                 reduce: str) -> Tensor:
    """torch's scatter rules: index, src and dst have as many dims; index is no larger
    than src in any dim (only that part of src is used), nor than dst off dim; src has
    dst's dtype (a number is made so)."""
    if dst.ndim == 0:  # torch treats a 0-d operand as 1-d
        return scatter_into(op, dst.reshape(1), dim, _as_1d(index), _as_1d(src),
                            reduce).reshape()
    d = normalize_dim(dim, dst.ndim, op)
    given = index_tensor(op, index, dst)
    index = given.to_dtype(int64)
    if not isinstance(src, AnyTensor):
        src = constant(index.shape, src, dst.dtype, dst._backend)
    same_device(op, dst, src)
    if src.dtype != dst.dtype:
        raise DTypeError(f"{op}: src ({src.dtype}) must have the dtype of self ({dst.dtype})")
    if numel(index.shape) == 0:  # torch ignores an empty index, whatever its shape
        return dst.contiguous()
    if not index.ndim == src.ndim == dst.ndim:
        raise ShapeError(f"{op}: index {fmt(index.shape)}, src {fmt(src.shape)} and self "
                         f"{fmt(dst.shape)} must have as many dims")
    for i, si in enumerate(index.shape):
        if si > src.shape[i] or (i != d and si > dst.shape[i]):
            raise ShapeError(f"{op}: index {fmt(index.shape)} is larger than src "
                             f"{fmt(src.shape)} or than self {fmt(dst.shape)} in dim {i}")
    check_range(op, given, dst.shape[d], d)
    for i, si in enumerate(index.shape):
        if si < src.shape[i]:
            src = src.narrow(i, 0, si)
    return scatter_unchecked(dst, d, index, src, reduce)


def _as_1d(value: Any) -> Any:
    return value.reshape(-1) if isinstance(value, AnyTensor) and value.ndim == 0 else value


_TORCH_SCATTER_REDUCE = {None: "none", "add": "sum", "multiply": "prod"}


def scatter(x: Tensor, dim: int, index: Tensor, src: Tensor | Scalar | None = None, *,
            value: Scalar | None = None, reduce: str | None = None) -> Tensor:
    """torch.scatter: x with src (a tensor or a number, or value=) written at index along
    dim; reduce="add" or "multiply" combines instead."""
    if reduce not in _TORCH_SCATTER_REDUCE:
        raise ArgumentError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
    given = value if src is None else src
    if given is None:
        raise ArgumentError("scatter: needs src or value")
    return scatter_into("scatter", x, dim, index, given, _TORCH_SCATTER_REDUCE[reduce])


@autocast_op("scatter_add")
def scatter_add(x: Tensor | Sequence[int], dim: int, index: Tensor, src: Tensor) -> Tensor:
    """torch.scatter_add(x, dim, index, src): x with src added at index along dim.  Given a
    shape in place of x, zeros of that shape with index and src of one shape (the adjoint of
    gather, as gradient rules use it)."""
    if isinstance(x, AnyTensor):
        return scatter_into("scatter_add", x, dim, index, src, "sum")
    return scatter_add_shape(x, dim, index, src)


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}


def scatter_reduce(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """torch.scatter_reduce: src combined into x at index along dim by sum, prod, mean,
    amax or amin; include_self=False leaves x's own values out where src lands."""
    if reduce not in _IDENTITY:
        raise ArgumentError(f"scatter_reduce: reduce must be one of {', '.join(_IDENTITY)}, "
                            f"got {reduce!r}")
    op = "scatter_reduce"
    if x.ndim == 0:
        return scatter_reduce(x.reshape(1), dim, _as_1d(index), _as_1d(src), reduce,
                              include_self=include_self).reshape()
    d = normalize_dim(dim, x.ndim, op)
    index = index_tensor(op, index, x)
    base = x
    if not include_self:  # the identity where src lands, so that only src counts there
        identity = _IDENTITY[reduce]
        if not x.dtype.is_floating_point and np.isinf(identity):
            info = np.iinfo(x.dtype.np) if x.dtype is not bool_ else None
            identity = (info.min if identity < 0 else info.max) if info else identity > 0
        base = scatter_into(op, x, d, index, identity, "none")
    if reduce != "mean":
        return scatter_into(op, base, d, index, src, reduce)
    total = scatter_into(op, base, d, index, src, "sum")
    ones = constant(index.shape, 1, x.dtype, x._backend)
    count = scatter_into(op, constant(x.shape, int(include_self), x.dtype, x._backend),
                         d, index, ones, "sum")
    count = elementwise_where(count == 0, 1, count)
    if x.dtype.is_floating_point:
        return total / count
    return (total.to_dtype(float64) / count.to_dtype(float64)).floor().to_dtype(x.dtype)


def gather(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """torch.gather: x's entries at index along dim; index has x's number of dims and is no
    larger than x off dim (a 0-d operand counts as 1-d)."""
    if x.ndim == 0:
        return gather_checked(x.reshape(1), dim, _as_1d(index)).reshape(*index.shape)
    return gather_checked(x, dim, index_tensor("gather", index, x))


def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of x along dim at a 0-d or 1-d index, in its order."""
    if x.ndim == 0:
        return index_select(x.reshape(1), dim, index).reshape(*_as_1d(index).shape[1:])
    d = normalize_dim(dim, x.ndim, "index_select")
    index = _index_1d("index_select", index, x, d)
    return gather_checked(x, d, _along(index.to_dtype(int64), d, x.shape), range_checked=True)


def _index_write(op: str, x: Tensor, dim: int, index: Tensor, source: Tensor,
                 reduce: str) -> Tensor:
    """index_add and index_copy: source's slices along dim written at a 1-d index."""
    if x.ndim == 0:
        return _index_write(op, x.reshape(1), dim, index, source.reshape(-1),
                            reduce).reshape()
    d = normalize_dim(dim, x.ndim, op)
    index = _index_1d(op, index, x, d).to_dtype(int64)
    want = x.shape[:d] + (index.shape[0],) + x.shape[d + 1:]
    if source.shape != want and not (source.ndim == 0 and numel(want) == 1):
        raise ShapeError(f"{op}: source must have shape {fmt(want)} (self {fmt(x.shape)} "
                         f"with the index's length in dim {d}), got {fmt(source.shape)}")
    return scatter_into(op, x, d, _along(index, d, x.shape), source.reshape(*want), reduce)


def index_add(x: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha: Scalar = 1) -> Tensor:
    return _index_write("index_add", x, dim, index, source if alpha == 1 else source * alpha,
                        "sum")


@autocast_op("index_copy")
def index_copy(x: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    return _index_write("index_copy", x, dim, index, source, "none")


def index_fill(x: Tensor, dim: int, index: Tensor, value: Tensor | Scalar) -> Tensor:
    """x with value in the slices along dim at a 1-d index.  A 0-d tensor value gets the
    gradient of every filled entry once, however often the index names it."""
    if x.ndim == 0:
        return index_fill(x.reshape(1), dim, index, value).reshape()
    d = normalize_dim(dim, x.ndim, "index_fill")
    index = _index_1d("index_fill", index, x, d).to_dtype(int64)
    lined = _along(index, d, x.shape)
    hit = scatter_unchecked(constant(x.shape, False, bool_, x._backend), d, lined,
                            constant(lined.shape, True, bool_, x._backend), "none")
    return elementwise_where(hit, _filled("index_fill", value, x, ()), x)


def _filled(op: str, value: Tensor | Scalar, x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A number or a 0-d tensor, in x's dtype, broadcast to shape."""
    if isinstance(value, AnyTensor):
        if value.ndim:
            raise ShapeError(f"{op}: value must be a number or a 0-d tensor, got shape "
                             f"{fmt(value.shape)}")
        return value.to(device=x.device, dtype=x.dtype).expand(*shape)
    return constant(shape, number(value), x.dtype, x._backend)


def take(x: Tensor, index: Tensor) -> Tensor:
    """x read as 1-d at index (negative entries count from the end); index's shape."""
    index = index_tensor("take", index, x)
    flat = wrapped_index("take", index.reshape(-1), numel(x.shape), 0)
    return gather_checked(x.reshape(-1), 0, flat, range_checked=True).reshape(*index.shape)


def take_along_dim(x: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """gather with x and indices broadcast together off dim (negative indices count from
    the end); dim=None reads x as 1-d (and refuses negative indices, as torch does)."""
    indices = index_tensor("take_along_dim", indices, x)
    if dim is None:  # torch wraps negative indices only along a dim
        return gather_checked(x.reshape(-1), 0, indices.reshape(-1))
    if x.ndim != indices.ndim:
        raise ShapeError(f"take_along_dim: input {fmt(x.shape)} and indices "
                         f"{fmt(indices.shape)} must have as many dims")
    d = normalize_dim(dim, x.ndim, "take_along_dim")
    x_shape, i_shape = list(x.shape), list(indices.shape)
    x_shape[d] = i_shape[d] = 1
    common = broadcast_shapes("take_along_dim", tuple(x_shape), tuple(i_shape))
    x_shape, i_shape = list(common), list(common)
    x_shape[d], i_shape[d] = x.shape[d], indices.shape[d]
    indices = wrapped_index("take_along_dim", indices, x.shape[d], d)
    return gather_checked(x.expand(*x_shape), d, indices.expand(*i_shape), range_checked=True)


def put(x: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """x read as 1-d with source written (accumulate: added) at index."""
    index = index_tensor("put", index, x)
    if numel(index.shape) != numel(source.shape):
        raise ShapeError(f"put: index {fmt(index.shape)} and source {fmt(source.shape)} "
                         f"must have as many elements")
    if numel(index.shape) and not numel(x.shape):
        raise ShrewIndexError("put: cannot put into an empty tensor")
    flat = wrapped_index("put", index.reshape(-1), numel(x.shape), 0)
    out = scatter_into("put", x.reshape(-1), 0, flat, source.reshape(-1).to_dtype(x.dtype),
                       "sum" if accumulate else "none")
    return out.reshape(*x.shape)


# -- masks -------------------------------------------------------------------------------
def _mask(op: str, mask: object, x: Tensor) -> Tensor:
    if not isinstance(mask, AnyTensor) or mask.dtype is not bool_:
        got = mask.dtype if isinstance(mask, AnyTensor) else type_name(mask)
        raise DTypeError(f"{op}: mask must be a bool tensor, got {got}")
    same_device(op, x, mask)
    return mask


def masked_fill(x: Tensor, mask: Tensor, value: Tensor | Scalar) -> Tensor:
    """x with value (a number or a 0-d tensor) where mask is true, the two broadcast
    together (the in-place form needs their shape to be x's)."""
    mask = _mask("masked_fill", mask, x)
    broadcast_shapes("masked_fill", x.shape, mask.shape)
    return elementwise_where(mask, _filled("masked_fill", value, x, ()), x)


def nonzero(x: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """The coordinates of x's nonzero entries, in C order: [count, ndim] int64, or one
    1-d tensor per dim.  The count decides the shape, so this reads x back to the host."""
    host = x._host()
    coords = np.nonzero(host.reshape(1) if host.ndim == 0 else host)
    if as_tuple:
        return tuple(tensor(c.astype(np.int64), device=x.device) for c in coords)
    stacked = np.stack(coords, axis=1) if host.ndim else np.zeros((len(coords[0]), 0))
    return tensor(stacked.astype(np.int64), device=x.device)


def argwhere(x: Tensor) -> Tensor:
    return nonzero(x)  # type: ignore[return-value]  # as_tuple=False: one tensor


def _mask_positions(op: str, x: Tensor, mask: Tensor) -> tuple[Tensor, tuple[int, ...]]:
    """The flat positions (1-d int64, in C order) where mask is true, with x and mask
    broadcast together to the returned shape."""
    mask = _mask(op, mask, x)
    shape = broadcast_shapes(op, x.shape, mask.shape)
    flat = nonzero(mask.expand(*shape).reshape(-1), as_tuple=True)[0]
    return flat, shape


def masked_select(x: Tensor, mask: Tensor) -> Tensor:
    """x's entries where mask is true (x and mask broadcast together), as a 1-d tensor."""
    flat, shape = _mask_positions("masked_select", x, mask)
    return gather_checked(x.expand(*shape).reshape(-1), 0, flat, range_checked=True)


def masked_scatter(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """x with source's leading entries (in C order) written where mask is true (x and
    mask broadcast together)."""
    flat, shape = _mask_positions("masked_scatter", x, mask)
    if numel(source.shape) < flat.shape[0]:
        raise ShapeError(f"masked_scatter: mask selects {flat.shape[0]} entries but source "
                         f"{fmt(source.shape)} has only {numel(source.shape)}")
    same_device("masked_scatter", x, source)
    if source.dtype != x.dtype:
        raise DTypeError(f"masked_scatter: source ({source.dtype}) must have the dtype of "
                         f"self ({x.dtype})")
    src = source.reshape(-1).narrow(0, 0, flat.shape[0])
    out = x.expand(*shape).contiguous().reshape(-1)
    return scatter_unchecked(out, 0, flat, src, "none").reshape(*shape)


def where(condition: Tensor, input: Tensor | Scalar | None = None,  # noqa: A002  (torch's name)
          other: Tensor | Scalar | None = None) -> Tensor | tuple[Tensor, ...]:
    """torch.where: input where condition, else other; with the condition alone,
    nonzero(condition, as_tuple=True)."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise ArgumentError("where: give both input and other, or neither")
    return elementwise_where(condition, input, other)


# -- writing in place ------------------------------------------------------------------------
def write_into(op: str, dst: Tensor, compute: Callable[[Tensor], Tensor]) -> Tensor:
    """The one way the index ops write in place (x[key] = v, index_put_, scatter_, ...):
    `compute(dst)` builds the new value out of place, checking every argument first, so a
    refused write leaves dst unchanged; shrew's in-place machinery (ops/inplace.write_)
    then stores it in dst's memory (seen through views), bumps its version and, where
    grad is needed, records the write in the graph."""
    # The index ops read dst through views of it (a flattened dst for the scatter), so a
    # recorded write has them read the copy of dst's old values that it keeps anyway.
    return write_(dst, op, compute, reads_copy=True)


# The index writes whose tensor arguments may share no memory with the destination at all,
# as PyTorch's assert_no_overlap (masked_scatter_ and the fills check nothing there).
_NO_OVERLAP = frozenset(("scatter_", "scatter_add_", "scatter_reduce_", "index_add_",
                         "index_copy_", "put_"))


def in_place(op: str, fn: Callable[..., Tensor], dst: Tensor, *args: Any,
             **kwargs: Any) -> Tensor:
    """The `_` form of fn (index_add_, scatter_, ...): fn(dst, ...) written into dst."""
    if op in _NO_OVERLAP:
        check_overlap(dst, op, *args, *kwargs.values(), exact_ok=False)
    return write_into(op, dst, lambda before: fn(before, *args, **kwargs))


def index_reduce(x: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """torch.index_reduce: source's slices along dim combined into x's slices index[i] by
    prod, mean, amax or amin (scatter_reduce with index spread over source's other dims)."""
    op = "index_reduce"
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise ArgumentError(f"{op}: reduce must be one of prod, mean, amax, amin, got "
                            f"{reduce!r}")
    if not isinstance(index, AnyTensor) or index.ndim > 1 or index.dtype.is_floating_point:
        raise ShapeError(f"{op}: index must be a 1-d integer tensor")
    if x.ndim == 0:
        return index_reduce(x.reshape(1), dim, index, source.reshape(-1), reduce,
                            include_self=include_self).reshape(())
    d = normalize_dim(dim, x.ndim, op)
    src = source.reshape(1) if source.ndim == 0 else source
    if src.ndim != x.ndim or src.shape[d] != index.numel() or any(
            s != n for i, (s, n) in enumerate(zip(src.shape, x.shape)) if i != d):
        raise ShapeError(f"{op}: source {fmt(source.shape)} must match input "
                         f"{fmt(x.shape)} off dim {d} and have index's {index.numel()} "
                         f"slices along it")
    spread = index.reshape([-1 if i == d else 1 for i in range(x.ndim)]).expand(*src.shape)
    return scatter_reduce(x, d, spread, src, reduce, include_self=include_self)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:  # noqa: A002
    """nonzero's [count, ndim] coordinates cut or padded with fill_value to exactly `size`
    rows (a shape known in advance; the coordinates are still read back, as nonzero's)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ArgumentError(f"nonzero_static: size must be a non-negative int, got {size!r}")
    coords = nonzero(input)
    assert isinstance(coords, AnyTensor)
    found = coords.shape[0]
    if found >= size:
        return coords.narrow(0, 0, size)
    pad = constant((size - found, coords.shape[1]), int(fill_value), int64, input._backend)
    from ..shape.recorded import cat  # shape imports index
    return cat([coords, pad], 0)
