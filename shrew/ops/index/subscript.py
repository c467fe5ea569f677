"""x[key] and x[key] = value, with torch's rules.

A key is a tuple of entries, each consuming dims of x from the left: an int selects (and
drops the dim; negative counts from the end), a slice keeps a range with a positive step
(a view, as every basic index),
None inserts a dim of 1, Ellipsis stands for as many full slices as needed, and the rest
are advanced indices: integer tensors, lists and 0-d tensors on a device (an integer 0-d
tensor on the cpu selects like an int, as in torch), bool masks (each covering as many
dims as it has, read back to the host for their true positions) and bool scalars (a new
dim of 1 or 0).  Advanced indices broadcast together to one shape B, which takes the place
of the dims they index when those are adjacent, and goes first when a slice, None or
Ellipsis separates them (ints do not: torch applies them first).

Reading gathers from x with a flat index into the indexed dims (gather's gradient adds
repeated entries back up).  Writing finds the flat position of every entry the key names
by reading the same key from arange(x.numel()), then scatters the value there (index_put
with accumulate adds).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.dtype import bool_, int64
from ...core.errors import ShapeError, ShrewIndexError, ShrewTypeError, ShrewValueError
from ...core.fields import AnyTensor
from ...core.shape import broadcast_shapes, fmt, numel
from ..creation import arange, tensor
from ..common import constant, number
from .recorded import gather, scatter_unchecked
from .composed import index_tensor, nonzero, write_into, wrapped_index
from ..inplace import check_overlap, shares_memory
from ...core.grad_mode import no_grad
from ..shape.recorded import narrow
from ..shape.strided import step_slice

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import Index, Scalar


def getitem(x: Tensor, key: Index) -> Tensor:
    out, advanced = _basic(x, key)
    if advanced:
        return _advanced(out, advanced)
    return out if out is not x else x.reshape(*x.shape)


def setitem(x: Tensor, key: Index, value: Tensor | Scalar) -> None:
    if isinstance(value, AnyTensor) and shares_memory(x, value):
        # PyTorch's rules: x[basic key] = v is copy_ into that view (a partial overlap is
        # refused, the same view is not); with tensors in the key, any overlap is refused
        with no_grad():
            region, advanced = _basic(x, key)
        if advanced:
            check_overlap(x, "__setitem__", value, exact_ok=False)
        else:
            check_overlap(region, "__setitem__", value)
    write_into("__setitem__", x, lambda before: _put(before, key, value, False))


def index_put(x: Tensor, indices: tuple[Tensor | None, ...] | list[Tensor | None],
              values: Tensor | Scalar, accumulate: bool = False) -> Tensor:
    """x with values written (accumulate: added) at the advanced index `indices`, one
    tensor (or None, a full slice) per leading dim."""
    if not isinstance(indices, (tuple, list)):
        raise ShrewTypeError(f"index_put: indices must be a tuple of tensors, got "
                             f"{type(indices).__name__}")
    key = tuple(slice(None) if i is None else i for i in indices)
    return _put(x, key, values, accumulate)


def index_put_(x: Tensor, indices: tuple[Tensor | None, ...] | list[Tensor | None],
               values: Tensor | Scalar, accumulate: bool = False) -> Tensor:
    check_overlap(x, "index_put_", values, *indices, exact_ok=False)
    return write_into("index_put_", x, lambda before: index_put(before, indices, values,
                                                                accumulate))


def _put(x: Tensor, key: Index, value: Tensor | Scalar, accumulate: bool) -> Tensor:
    """x with value (broadcast to the shape x[key] has) written or added at x[key]."""
    positions = getitem(arange(numel(x.shape), dtype=int64, device=x.device).reshape(*x.shape),
                        key)
    if isinstance(value, AnyTensor):
        value = value.to(device=x.device, dtype=x.dtype)
        while value.ndim > positions.ndim and value.shape[0] == 1:  # as torch: leading 1s
            value = value.reshape(*value.shape[1:])
        if not _broadcasts_to(value.shape, positions.shape):
            raise ShapeError(f"__setitem__: a value of shape {fmt(value.shape)} cannot be "
                             f"written into x[key] of shape {fmt(positions.shape)}")
        value = value.expand(*positions.shape)
    else:
        value = constant(positions.shape, number(value), x.dtype, x._backend)
    # positions, read from an arange with a checked key, are in range by construction
    out = scatter_unchecked(x.reshape(-1), 0, positions.reshape(-1), value.reshape(-1),
                            "sum" if accumulate else "none")
    return out.reshape(*x.shape)


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    return len(shape) <= len(target) and all(
        s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


# -- reading a key -------------------------------------------------------------------------
def _entries(x: Tensor, key: Index) -> list[Any]:
    """The key as a list of entries, Ellipsis expanded; masks and bool scalars marked."""
    items = list(key) if isinstance(key, tuple) else [key]
    entries: list[Any] = []
    for k in items:
        if isinstance(k, AnyTensor) and k.dtype is bool_:
            entries.append(("mask", k))
        elif isinstance(k, (bool, np.bool_)):
            entries.append(("flag", bool(k)))
        elif isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype == np.bool_:
            entries.append(("mask", tensor(np.asarray(k), device=x.device)))
        elif isinstance(k, AnyTensor) and k.ndim == 0 and k.device == "cpu" \
                and k.dtype.category == 1:
            entries.append(int(k.item()))
        elif isinstance(k, (AnyTensor, list, np.ndarray)):
            entries.append(("index", index_tensor("index", k, x)))
        elif isinstance(k, (tuple, range)):  # a sequence in the key: an index, as in PyTorch
            entries.append(("index", index_tensor("index", list(k), x)))
        elif k is None or k is Ellipsis or isinstance(k, slice) or \
                isinstance(k, (int, np.integer)):
            entries.append(k)
        else:
            raise ShrewIndexError(f"index: unsupported index {k!r} (use ints, slices, None, "
                                  f"Ellipsis, integer or bool tensors and lists)")
    used = sum(_dims_used(e) for e in entries)
    if sum(e is Ellipsis for e in entries) > 1:
        raise ShrewIndexError("index: an index can only have a single Ellipsis")
    if used > x.ndim:
        raise ShrewIndexError(f"index: too many indices for a tensor of dimension {x.ndim} "
                              f"(the key uses {used})")
    if Ellipsis in entries:
        at = entries.index(Ellipsis)
        entries[at:at + 1] = [slice(None)] * (x.ndim - used)
    return entries


def _dims_used(e: Any) -> int:
    if e is None or e is Ellipsis or (isinstance(e, tuple) and e[0] == "flag"):
        return 0
    if isinstance(e, tuple) and e[0] == "mask":
        return int(e[1].ndim)
    return 1


def _basic(x: Tensor, key: Index) -> tuple[Tensor, list[tuple[int, Tensor]]]:
    """x with the ints, slices and Nones of key applied, and the advanced indices as
    (dim of the result, int64 index with no negative entry)."""
    out, dim = x, 0
    advanced: list[tuple[int, Tensor]] = []
    for e in _entries(x, key):
        if e is None:
            out = out.unsqueeze(dim)
            dim += 1
        elif isinstance(e, slice):
            out = _slice(out, dim, e)
            dim += 1
        elif isinstance(e, (int, np.integer)):
            size = out.shape[dim]
            if not -size <= e < size:
                raise ShrewIndexError(f"index: {e} is out of range for dim {dim} of size "
                                      f"{size}")
            out = narrow(out, dim, int(e) % size, 1).squeeze(dim)
        elif e[0] == "flag":  # a new dim of 1, all of it (True) or none of it (False)
            out = out.unsqueeze(dim)
            advanced.append((dim, tensor(np.arange(int(e[1])), device=x.device)))
            dim += 1
        elif e[0] == "mask":
            mask = e[1]
            if mask.shape != out.shape[dim:dim + mask.ndim]:
                raise ShrewIndexError(f"index: the shape of the mask {fmt(mask.shape)} does "
                                      f"not match the shape {fmt(out.shape)} of the indexed "
                                      f"tensor at dim {dim}")
            coords = nonzero(mask.to(device=x.device), as_tuple=True)
            for j, coord in enumerate(coords):  # a tuple
                advanced.append((dim + j, coord))
            dim += mask.ndim
        else:
            advanced.append((dim, wrapped_index("index", e[1], out.shape[dim], dim)))
            dim += 1
    return out, advanced


def _slice(x: Tensor, dim: int, s: slice) -> Tensor:
    """x[..., start:stop:step] along dim: a narrow, or with a step a strided view of x's
    memory (a view in PyTorch too; a negative step is refused as PyTorch refuses it)."""
    if s.step is not None and s.step <= 0:
        raise ShrewValueError(f"index: step must be greater than zero, got {s.step}")
    start, stop, step = s.indices(x.shape[dim])
    n = len(range(start, stop, step))
    if step == 1 or n <= 1:
        return narrow(x, dim, min(start, x.shape[dim]), n)
    return step_slice(x, dim, start, n, step)


def _advanced(x: Tensor, advanced: list[tuple[int, Tensor]]) -> Tensor:
    """x indexed at the broadcast advanced indices: one gather along one dim (the indexed
    dims, moved together and merged), with the flat index into them."""
    dims = [d for d, _ in advanced]
    try:
        shape = broadcast_shapes("index", *(i.shape for _, i in advanced))
    except ShapeError:
        shapes = ", ".join(fmt(i.shape) for _, i in advanced)
        raise ShrewIndexError(f"index: the indexing tensors could not be broadcast "
                              f"together, with shapes {shapes}") from None
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    first = dims[0] if adjacent else 0
    rest = [d for d in range(x.ndim) if d not in dims]
    order = dims + rest
    moved = x.permute(*order) if order != list(range(x.ndim)) else x
    sizes = [x.shape[d] for d in dims]
    tail = moved.shape[len(dims):]
    merged = moved.reshape(math.prod(sizes), *tail)
    flat = None
    for (_, index), stride in zip(advanced, _strides(sizes)):
        term = index.expand(*shape) if stride == 1 else index.expand(*shape) * stride
        flat = term if flat is None else flat + term
    assert flat is not None
    count = numel(shape)
    lined = flat.reshape(count, *([1] * len(tail))).expand(count, *tail)
    out = gather(merged, 0, lined, range_checked=True).reshape(*shape, *tail)
    if first == 0:
        return out
    # the broadcast dims go back where the indexed dims were
    b = len(shape)
    perm = list(range(b, b + first)) + list(range(b)) + list(range(b + first, out.ndim))
    return out.permute(*perm)


def _strides(sizes: list[int]) -> list[int]:
    return [math.prod(sizes[i + 1:]) for i in range(len(sizes))]

