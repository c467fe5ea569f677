"""Sorting and selection: sort, argsort, topk, msort, kthvalue, median, nanmedian, mode,
unique, unique_consecutive, searchsorted, bucketize, histc, bincount.

One primitive, a stable argsort along one dim (sort.cl on OpenCL and CUDA); values come
from gather, so their gradient goes to the elements they were taken from.  Ops whose
result size depends on the data (unique, bincount) read that size back to the host, as
PyTorch does."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import return_types
from ..core.dtype import check_float, float32, float64, int32, int64
from ..core.errors import type_name
from ..core.errors import ArgumentError, DTypeError, ShapeError, ShrewIndexError
from ..core.fields import AnyTensor, wrap
from ..core.shape import fmt, normalize_dim
from .common import constant, numpy_keywords, same_device, scalar_like
from .creation import arange
from .elementwise.recorded import where
from .index.recorded import gather, scatter_add_unchecked
from .index.composed import index_select

if TYPE_CHECKING:
    from .._tensor import Tensor


def sorting_indices(x: Tensor, dim: int, descending: bool = False) -> Tensor:
    """int64 indices that sort x stably along (normalised) dim; NaN is the largest."""
    if x.numel() == 0:
        return constant(x.shape, 0, int64, x._backend)
    return wrap(x._backend.argsort(x._data, dim, bool(descending)), x._backend)


def _along(x: Tensor, dim: int, op: str) -> tuple[Tensor, int]:
    """x with at least one dim (a 0-d tensor sorts as one element), and dim normalised."""
    return (x.reshape(1) if x.ndim == 0 else x), normalize_dim(dim, x.ndim, op)


def _taken(result: Any, line: Tensor, d: int, indices: Tensor, like: Tensor,
           keepdim: bool = True) -> Any:
    """result(values, indices) of `line` at `indices` along d, shaped back for a 0-d input
    and with d dropped unless keepdim."""
    values = gather(line, d, indices, range_checked=True)
    if like.ndim == 0:
        return result(values.reshape(), indices.reshape())
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return result(values, indices)


@numpy_keywords
def sort(x: Tensor, dim: int = -1, descending: bool = False, *,
         stable: bool | None = False) -> return_types.sort:
    """Sorted along dim, with where each value came from; always stable (equal elements
    keep their order), which also meets stable=False's contract."""
    line, d = _along(x, dim, "sort")
    return _taken(return_types.sort, line, d, sorting_indices(line, d, descending), x)


@numpy_keywords
def argsort(x: Tensor, dim: int = -1, descending: bool = False, *,
            stable: bool = False) -> Tensor:
    line, d = _along(x, dim, "argsort")
    indices = sorting_indices(line, d, descending)
    return indices.reshape() if x.ndim == 0 else indices


def msort(x: Tensor) -> Tensor:
    return sort(x, 0).values


def _check_k(op: str, k: Any, low: int, n: int, x: Tensor, d: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or not low <= k <= n:
        raise ArgumentError(f"{op}: k={k!r} is out of range for dim {d} of size {n} "
                            f"(shape {fmt(x.shape)}; expected {low} to {n})")


@numpy_keywords
def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> return_types.topk:  # noqa: A002  (PyTorch's name)
    """The k largest (or smallest) along dim, in order (also when sorted=False)."""
    line, d = _along(x, dim, "topk")
    _check_k("topk", k, 0, line.shape[d], x, d)
    indices = sorting_indices(line, d, descending=largest).narrow(d, 0, k)
    return _taken(return_types.topk, line, d, indices, x)


@numpy_keywords
def kthvalue(x: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> return_types.kthvalue:
    """The k-th smallest along dim (k from 1), NaN counting as the largest."""
    line, d = _along(x, dim, "kthvalue")
    _check_k("kthvalue", k, 1, line.shape[d], x, d)
    indices = sorting_indices(line, d).narrow(d, k - 1, 1)
    return _taken(return_types.kthvalue, line, d, indices, x, keepdim)


def _at_sorted_position(result: Any, x: Tensor, dim: int, keepdim: bool, op: str,
                        skip_nan: bool) -> Any:
    """The lower median along dim: the element at sorted position (n - 1) // 2, or a NaN
    where the line has one; skip_nan: the lower median of the line's other elements."""
    line, d = _along(x, dim, op)
    n = line.shape[d]
    if n == 0:
        raise ShrewIndexError(f"{op}: cannot reduce over a zero-size dim (shape {fmt(x.shape)}, "
                              f"dim {dim})")
    if n >= 1 << 24:
        raise ShapeError(f"{op}: dim {dim} of size {n} is longer than 2**24, which this "
                         f"implementation's float32 position arithmetic supports")
    nans = (line != line).sum(d, keepdim=True)
    if skip_nan:  # the lower median of the n - nans numbers, sorted first (all NaN: a NaN)
        position = (((nans * -1 + (n - 1)).to_dtype(float32) * 0.5).floor()
                    .to_dtype(int64).clamp(min=0))
    else:  # the first NaN, which sorts after every number
        position = where(nans > 0, nans * -1 + n, (n - 1) // 2)
    indices = gather(sorting_indices(line, d), d, position, range_checked=True)
    return _taken(result, line, d, indices, x, keepdim)


def _median_of_all(x: Tensor, skip_nan: bool, op: str) -> Tensor:
    """The median of every element: ties share the gradient equally, as PyTorch."""
    if x.numel() == 0:
        return scalar_like(float("nan"), x) if x.dtype.is_floating_point else \
            _raise_empty(op, x)
    value = _at_sorted_position(return_types.median, x.detach().reshape(-1), 0, False, op,
                                skip_nan).values
    hit = x == value
    share = hit.sum().to_dtype(x.dtype)
    # value + (what is gathered - value) / share is exactly the value, and spreads its
    # gradient over the elements equal to it.
    return value + where(hit, x - value, 0).sum() / share if x.dtype.is_floating_point \
        else value


def _raise_empty(op: str, x: Tensor) -> Tensor:
    raise ShapeError(f"{op}: the input is empty (shape {fmt(x.shape)})")


@numpy_keywords
def median(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    if dim is None:
        return _median_of_all(x, False, "median")
    return _at_sorted_position(return_types.median, x, dim, keepdim, "median", False)


@numpy_keywords
def nanmedian(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    if dim is None:
        return _median_of_all(x, True, "nanmedian")
    return _at_sorted_position(return_types.nanmedian, x, dim, keepdim, "nanmedian", True)


@numpy_keywords
def mode(x: Tensor, dim: int = -1, keepdim: bool = False) -> return_types.mode:
    """The most frequent value along dim (the smallest of equally frequent ones) and the
    last index holding it.  Counts compare every pair of a line: n * n per line."""
    line, d = _along(x, dim, "mode")
    n = line.shape[d]
    if n == 0:
        raise ShrewIndexError(f"mode: cannot reduce over a zero-size dim (shape {fmt(x.shape)})")
    row = line.transpose(d, -1).detach()  # [..., n]
    counts = (row.unsqueeze(-1) == row.unsqueeze(-2)).sum(-1)
    frequent = counts == counts.amax(-1, keepdim=True)
    value = where(frequent, row, row.amax(-1, keepdim=True)).amin(-1, keepdim=True)
    last = where(row == value, arange(n, device=x.device), -1).amax(-1, keepdim=True)
    indices = last.transpose(d, -1)
    return _taken(return_types.mode, line, d, indices, x, keepdim)


# -- searching -----------------------------------------------------------------------------
def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,  # noqa: A002
                 right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None) -> Tensor:
    """Where each value would be inserted into the sorted last dim to keep it sorted: the
    count of entries below it (right / side="right": at or below it).  Counted by
    comparing every pair, so no data-dependent control flow."""
    seq = sorted_sequence
    if side is not None:
        if side not in ("left", "right") or (side == "left" and right):
            raise ArgumentError(f"searchsorted: side must be 'left' or 'right' and agree with "
                                f"right={right}, got side={side!r}")
        right = side == "right"
    if not isinstance(seq, AnyTensor) or seq.ndim == 0:
        raise ShapeError("searchsorted: sorted_sequence must be a tensor with at least one dim")
    if sorter is not None:
        seq = seq.gather(-1, sorter)
    values = input if isinstance(input, AnyTensor) else scalar_like(input, seq)
    same_device("searchsorted", seq, values)
    if seq.ndim > 1 and (values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]):
        raise ShapeError(f"searchsorted: sorted_sequence {fmt(seq.shape)} and input "
                         f"{fmt(values.shape)} must agree in every dim but the last")
    v = values.unsqueeze(-1)
    s = seq.unsqueeze(-2) if seq.ndim > 1 else seq
    below = (s <= v) if right else (s < v)
    count = below.sum(-1)
    return count.to_dtype(int32) if out_int32 else count


def bucketize(input: Tensor, boundaries: Tensor, *, out_int32: bool = False,  # noqa: A002
              right: bool = False) -> Tensor:
    if not isinstance(boundaries, AnyTensor) or boundaries.ndim != 1:
        raise ShapeError("bucketize: boundaries must be a 1-D tensor")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# -- counting ------------------------------------------------------------------------------
def histc(x: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """Counts of x in `bins` equal bins over [min, max] (the data's range when they are
    equal); elements outside are ignored."""
    check_float(x.dtype, "histc")
    if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
        raise ArgumentError(f"histc: bins must be a positive int, got {bins!r}")
    if min > max:
        raise ArgumentError(f"histc: max ({max}) must be larger than min ({min})")
    flat = x.detach().reshape(-1)
    lo, hi = scalar_like(min, flat), scalar_like(max, flat)
    if min == max and flat.numel():
        lo, hi = flat.amin(), flat.amax()
    degenerate = lo == hi
    lo, hi = where(degenerate, lo - 1, lo), where(degenerate, hi + 1, hi)
    inside = where(flat >= lo, flat <= hi, False)
    flat = where(inside, flat, lo)  # NaN and outliers counted nowhere, and never cast
    position = ((flat - lo) * bins / (hi - lo)).floor().to_dtype(int64).clamp(0, bins - 1)
    counts = where(inside, 1, 0).to_dtype(x.dtype)
    return scatter_add_unchecked((bins,), 0, where(inside, position, 0), counts)


def bincount(x: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ... occurs in a 1-D non-negative integer tensor (summing
    weights instead of ones); the length is read back from the device."""
    if not isinstance(x, AnyTensor) or x.ndim != 1 or x.dtype.category != 1:
        raise DTypeError(f"bincount: needs a 1-D integer tensor, got "
                         f"{x.dtype if isinstance(x, AnyTensor) else type_name(x)}"
                         f"{' of shape ' + fmt(x.shape) if isinstance(x, AnyTensor) else ''}")
    if weights is not None and (not isinstance(weights, AnyTensor) or weights.shape != x.shape):
        raise ShapeError(f"bincount: weights must be a tensor of the input's shape {fmt(x.shape)}")
    length = minlength
    if x.numel():
        low, high = int(x.amin().item()), int(x.amax().item())
        if low < 0:
            raise ArgumentError(f"bincount: the input must be non-negative, found {low}")
        length = max(length, high + 1)
    if weights is None or not x.numel():  # counts (PyTorch's too for an empty input)
        src = constant(x.shape, 1, int64, x._backend)
    else:  # weights sum in their float dtype; integer weights in float64, as PyTorch
        src = weights.detach()
        src = src if src.dtype.is_floating_point else src.to_dtype(float64)
    return scatter_add_unchecked((length,), 0, x.to_dtype(int64), src)


# -- unique --------------------------------------------------------------------------------
def _runs(values: Tensor, order: Tensor | None, inverse_shape: tuple[int, ...],
          return_inverse: bool, return_counts: bool) -> Any:
    """The first row of each run of equal rows of `values` (dim 0: elements of a 1-D
    tensor, or slices), which is the input taken in `order` (None: its own order), with
    the run each input row belongs to and the runs' lengths, as unique returns them."""
    n = values.shape[0]
    if n:
        changes = values.narrow(0, 1, n - 1) != values.narrow(0, 0, n - 1)
        if changes.ndim > 1:  # slices differ where any of their elements does
            changes = changes.flatten(1).any(1)
        starts_host = np.concatenate([[True], changes.numpy()])
    else:
        starts_host = np.zeros(0, dtype=bool)
    positions = np.flatnonzero(starts_host)  # the one read-back: the result's size
    backend = values._backend
    firsts = wrap(backend.from_numpy(positions.astype(np.int64)), backend)
    out: list[Tensor] = [index_select(values, 0, firsts)]
    if return_inverse:
        run = wrap(backend.from_numpy(np.cumsum(starts_host, dtype=np.int64) - 1), backend)
        if order is not None:  # each run id back to where its row came from
            run = scatter_add_unchecked((n,), 0, order, run)
        out.append(run.reshape(*inverse_shape))
    if return_counts:
        lengths = np.diff(np.append(positions, n)).astype(np.int64)
        out.append(wrap(backend.from_numpy(lengths), backend))
    return out


def _slices(op: str, x: Tensor, dim: int) -> tuple[Tensor, int]:
    """x's slices along dim as rows, each flattened to one dim, and dim normalised."""
    d = normalize_dim(dim, x.ndim, op)
    if x.numel() == 0 and x.shape[d] != 0:
        raise ShapeError(f"{op}: input {fmt(x.shape)} has zero-sized dims other than "
                         f"dim={dim}, so its slices cannot be compared")
    moved = x.detach().movedim(d, 0)
    return moved.reshape(moved.shape[0], math.prod(moved.shape[1:])), d


def _lexicographic_order(rows: Tensor) -> Tensor:
    """The order that sorts 2-D `rows` lexicographically: stable sorts by each column,
    last column first (one argsort per column)."""
    order = arange(rows.shape[0], device=rows.device)
    for column in reversed(range(rows.shape[1])):
        key = gather(rows.select(1, column), 0, order, range_checked=True)
        order = gather(order, 0, sorting_indices(key, 0), range_checked=True)
    return order


def _unique(op: str, x: Tensor, dim: int | None, sort: bool, return_inverse: bool,
            return_counts: bool) -> Any:
    """unique's (sort) and unique_consecutive's work: of elements, or of slices along dim."""
    if dim is None:
        flat = x.detach().reshape(-1)
        order = sorting_indices(flat, 0) if sort else None
        values = flat if order is None else gather(flat, 0, order, range_checked=True)
        out = _runs(values, order, x.shape, return_inverse, return_counts)
    else:
        rows, d = _slices(op, x, dim)
        order = _lexicographic_order(rows) if sort else None
        values = rows if order is None else index_select(rows, 0, order)
        out = _runs(values, order, (rows.shape[0],), return_inverse, return_counts)
        moved_shape = (out[0].shape[0], *(s for i, s in enumerate(x.shape) if i != d))
        out[0] = out[0].reshape(*moved_shape).movedim(0, d)
    return out[0] if len(out) == 1 else tuple(out)


def unique(x: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct elements, or with dim the distinct slices along dim, ascending (slices
    in lexicographic order; also when sorted=False)."""
    return _unique("unique", x, dim, True, return_inverse, return_counts)


def unique_consecutive(x: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """The first element (or with dim, slice along dim) of each run of equal neighbours."""
    return _unique("unique_consecutive", x, dim, False, return_inverse, return_counts)
