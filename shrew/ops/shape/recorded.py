"""Layout ops: reshape, transpose and its kin, narrow and basic indexing, expand, pad,
cat and stack, contiguous (strided views on every backend; pad and cat copy)."""
from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING


from ...core.autocast import autocast_op
from ...core import op as O
from ...core.dtype import bool_, result_type
from ...core.errors import (ArgumentError, ShapeError, ShrewIndexError, ShrewTypeError,
    ShrewValueError)
from ...core.fields import AnyTensor, alias, record, view
from ...core.grad_mode import is_grad_enabled
from ...core.shape import (broadcast_shapes, fmt, infer_reshape, normalize_dim, normalize_dims,
                     numel)
from ..common import same_device
from .strided import strided

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import Dims, Scalar, ShapeLike


def contiguous(x: Tensor) -> Tensor:
    return record(x._backend.contiguous(x._data), x._backend, O.Contiguous(x), x)


def reshape(x: Tensor, shape: tuple[ShapeLike, ...]) -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])
    new = infer_reshape("reshape", x.shape, shape)
    if new == x.shape:
        return x
    return view(x._backend.reshape(x._data, new), x._backend, O.Reshape(x), x)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    d0 = normalize_dim(dim0, x.ndim, "transpose")
    d1 = normalize_dim(dim1, x.ndim, "transpose")
    if d0 == d1:
        return x
    return view(x._backend.transpose(x._data, d0, d1), x._backend, O.Transpose(x, d0, d1), x)


def permute(x: Tensor, dims: tuple[int | Sequence[int], ...]) -> Tensor:
    """Reorder dims; recorded as a sequence of Transpose ops."""
    if len(dims) == 1 and not isinstance(dims[0], int):
        dims = tuple(dims[0])
    perm = [normalize_dim(d, x.ndim, "permute") for d in dims]
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"permute: {tuple(dims)} is not a permutation of the "
                         f"{x.ndim} dims of {fmt(x.shape)}")
    out, current = x, list(range(x.ndim))
    for target, src in enumerate(perm):
        at = current.index(src)
        if at != target:
            out = transpose(out, target, at)
            current[target], current[at] = current[at], current[target]
    return out


def narrow(x: Tensor, dim: int, start: int | Tensor, length: int) -> Tensor:
    if x.ndim == 0:
        raise ShapeError("narrow: cannot narrow a 0-d tensor")
    d = normalize_dim(dim, x.ndim, "narrow")
    size = x.shape[d]
    if isinstance(start, AnyTensor) and start.ndim == 0 and not start.dtype.is_floating_point \
            and start.dtype is not bool_:
        start = int(start.item())  # torch accepts a 0-d integer tensor start
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, length)):
        raise ShrewTypeError(f"narrow: start and length must be ints, got {start!r}, {length!r}")
    start = int(start)  # (for mypy: the check above leaves only ints)
    if not -size <= start <= size:
        raise ShrewIndexError(f"narrow: start {start} is out of range for dim {d} of size {size} "
                              f"(shape {fmt(x.shape)})")
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise ShapeError(f"narrow: [{start}, {start + length}) is out of range for dim {d} "
                         f"of size {size} (shape {fmt(x.shape)})")
    if start == 0 and length == size:
        return x
    return view(x._backend.narrow(x._data, d, start, length), x._backend,
                  O.Narrow(x, d, start, length), x)


def select(x: Tensor, dim: int, index: int) -> Tensor:
    """x's slice at `index` along `dim`, with that dim removed (a narrow, then a reshape)."""
    if x.ndim == 0:
        raise ShapeError("select: cannot select from a 0-d tensor")
    d = normalize_dim(dim, x.ndim, "select")
    size = x.shape[d]
    if isinstance(index, bool) or not isinstance(index, int):
        raise ShrewTypeError(f"select: index must be an int, got {index!r}")
    if not -size <= index < size:
        raise ShrewIndexError(f"select: index {index} is out of range for dim {d} of size "
                              f"{size} (shape {fmt(x.shape)})")
    row = narrow(x, d, index % size, 1)
    return row.reshape(*x.shape[:d], *x.shape[d + 1:])


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    d = normalize_dim(dim, x.ndim, "unsqueeze", extra=1)
    return x.reshape(*x.shape[:d], 1, *x.shape[d:])


def squeeze(x: Tensor, dim: Dims = None) -> Tensor:
    if dim is None:
        return x.reshape(*[s for s in x.shape if s != 1])
    dims = normalize_dims(dim, x.ndim, "squeeze")
    return x.reshape(*[s for i, s in enumerate(x.shape) if not (i in dims and s == 1)])


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if x.ndim == 0:
        return x.reshape(1)
    s = normalize_dim(start_dim, x.ndim, "flatten")
    e = normalize_dim(end_dim, x.ndim, "flatten")
    if s > e:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    return x.reshape(*x.shape[:s], numel(x.shape[s:e + 1]), *x.shape[e + 1:])


def expand(x: Tensor, shape: tuple[ShapeLike, ...]) -> Tensor:
    """Broadcast to `shape` (-1 keeps a dim); recorded as an add of zeros so that the
    gradient sums back over the broadcast dims through the Binary rule."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ShapeError(f"expand: cannot expand {fmt(x.shape)} to fewer dims {fmt(shape)}")
    shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s
                  for i, s in enumerate(shape))
    # (mypy cannot follow `shape` from ints-or-one-sequence to a tuple of ints)
    if any(s < 0 for s in shape) or broadcast_shapes("expand", x.shape, shape) != shape:  # type: ignore[operator, arg-type]
        raise ShapeError(f"expand: cannot expand {fmt(x.shape)} to {fmt(shape)}")
    if shape == x.shape:
        return x
    if not x.requires_grad or not is_grad_enabled():
        view = x._backend.reshape(x._data, (1,) * lead + x.shape)
        return alias(x, x._backend.expand(view, shape))  # x's memory, and its version
    # a view recorded for its gradient (a sum over the broadcast dims); writes are refused
    return strided(x, shape, (), 0, "ExpandBackward0")  # type: ignore[arg-type]


def pad(x: Tensor, pads: Sequence[int], value: Scalar = 0.0) -> Tensor:
    """Constant padding; `pads` as torch.nn.functional.pad (last dim first, negative crops)."""
    pads = tuple(pads)
    if len(pads) % 2 or len(pads) // 2 > x.ndim or \
            not all(isinstance(p, int) and not isinstance(p, bool) for p in pads):
        raise ShapeError(f"pad: pads must be an even number (at most {2 * x.ndim}) of "
                         f"ints, got {pads}")
    per_dim = [(0, 0)] * x.ndim
    for i in range(len(pads) // 2):
        per_dim[x.ndim - 1 - i] = (pads[2 * i], pads[2 * i + 1])
    for d, (lo, hi) in enumerate(per_dim):
        if x.shape[d] + lo + hi < 0:
            raise ShapeError(f"pad: pads {pads} leave dim {d} of {fmt(x.shape)} negative")
    out = x
    grow = tuple((max(lo, 0), max(hi, 0)) for lo, hi in per_dim)
    if any(lo or hi for lo, hi in grow):
        if x.dtype is bool_ or not isinstance(value, numbers.Real):
            raise ArgumentError(f"pad: needs a numeric tensor and value, got {x.dtype}, "
                                f"{value!r}")
        out = record(x._backend.pad(x._data, grow, value), x._backend, O.Pad(x, grow), x)
    for d, (lo, hi) in enumerate(per_dim):
        if lo < 0 or hi < 0:
            start = -min(lo, 0)
            out = narrow(out, d, start, out.shape[d] - start + min(hi, 0))
    return out


@autocast_op("cat")
def cat(tensors: Iterable[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dim; they agree elsewhere and promote to one dtype."""
    tensors = tuple(tensors)
    if not tensors:
        raise ShrewValueError("cat: needs at least one tensor")
    if not all(isinstance(t, AnyTensor) for t in tensors):
        raise ShrewTypeError("cat: every element must be a Tensor")
    same_device("cat", *tensors)
    dtype = result_type(*[(t.dtype, t.ndim) for t in tensors])
    if dtype.is_complex:
        from ..complex import arith  # the pairs joined
        return arith.cat(tensors, dim, dtype)
    shown = ", ".join(fmt(t.shape) for t in tensors)
    # PyTorch's legacy rule: 1-D empty tensors are left out (their dtype still counts)
    tensors = tuple(t for t in tensors if t.shape != (0,)) or tensors[:1]
    first = tensors[0]
    if any(t.ndim != first.ndim for t in tensors) or first.ndim == 0:
        raise ShapeError(f"cat: tensors need the same number (>= 1) of dims, got {shown}")
    d = normalize_dim(dim, first.ndim, "cat")
    for t in tensors:
        if any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape)) if i != d):
            raise ShapeError(f"cat: shapes {shown} differ outside dim {d}")
    tensors = tuple(t.to_dtype(dtype) for t in tensors)
    data = first._backend.cat([t._data for t in tensors], d)
    return record(data, first._backend, O.Cat(tensors, d), *tensors)


@autocast_op("stack")
def stack(tensors: Iterable[Tensor], dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim."""
    tensors = tuple(tensors)
    if not tensors:
        raise ArgumentError("stack: needs at least one tensor")
    d = normalize_dim(dim, tensors[0].ndim, "stack", extra=1)
    return cat([t.unsqueeze(d) for t in tensors], d)
