"""Shape ops composed from the layout primitives of ops/shape/recorded.py (reshape, transpose,
narrow, expand, pad, cat) and gather: splits, flips, rolls, repeats, diagonals, the
*stack family and the atleast_* helpers.  Every one is differentiable through its parts
and runs on every backend with no primitive of its own."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.autocast import autocast_op
from ...core.dtype import bool_
from ...core.errors import ArgumentError, ShapeError, ShrewTypeError
from ...core.fields import AnyTensor, wrap
from ...core.shape import Size, fmt, infer_reshape, normalize_dim, normalize_dims
from ...core.shape import broadcast_shapes as _broadcast
from ..elementwise.recorded import where
from ..index.recorded import gather
from .recorded import cat, contiguous, expand, narrow, pad, permute, reshape, squeeze
from .strided import diagonal

if TYPE_CHECKING:
    from ..._tensor import Tensor


def _is_int(v: object) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _ints(value: int | Sequence[int]) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple (torch accepts either for dims, shifts...)."""
    seq: Any = (value,) if _is_int(value) else tuple(value)  # type: ignore[arg-type]
    return seq


def _tensors(op: str, tensors: Sequence[Any]) -> tuple[Tensor, ...]:
    """A sequence of tensors (torch's *stack take one list; broadcast_tensors varargs)."""
    if len(tensors) == 1 and not isinstance(tensors[0], AnyTensor):
        tensors = tuple(tensors[0])
    if not tensors or not all(isinstance(t, AnyTensor) for t in tensors):
        raise ArgumentError(f"{op}: expects a non-empty sequence of tensors")
    return tuple(tensors)


# -- views of the same elements --------------------------------------------------------------
def view_as(x: Tensor, other: Tensor) -> Tensor:
    return reshape(x, (other.shape,))


def broadcast_to(x: Tensor, shape: Sequence[int]) -> Tensor:
    return expand(x, (tuple(shape),))


def broadcast_shapes(*shapes: int | Sequence[int]) -> Size:
    """The shape that tensors of `shapes` broadcast to (an int stands for a 1-d shape)."""
    as_tuples = [_ints(s) for s in shapes]
    for s in as_tuples:
        if not all(_is_int(v) and v >= 0 for v in s):
            raise ShapeError(f"broadcast_shapes: sizes must be non-negative ints, got {s}")
    return Size(_broadcast("broadcast_shapes", *as_tuples) if as_tuples else ())


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    tensors = _tensors("broadcast_tensors", tensors)
    shape = _broadcast("broadcast_tensors", *[t.shape for t in tensors])
    return tuple(expand(t, (shape,)) for t in tensors)


def movedim(x: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    src, dst = _ints(source), _ints(destination)
    if len(src) != len(dst):
        raise ShapeError(f"movedim: source {src} and destination {dst} differ in length")
    src = tuple(normalize_dim(d, x.ndim, "movedim") for d in src)
    dst = tuple(normalize_dim(d, x.ndim, "movedim") for d in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(f"movedim: repeated dim in source {src} or destination {dst}")
    rest = iter(d for d in range(x.ndim) if d not in src)
    placed = dict(zip(dst, src))
    return permute(x, (tuple(placed[i] if i in placed else next(rest) for i in range(x.ndim)),))


def swapaxes(x: Tensor, axis0: int, axis1: int) -> Tensor:
    return x.transpose(axis0, axis1)


def t(x: Tensor) -> Tensor:
    """Transpose a matrix; a 0-d or 1-d tensor is returned as it is."""
    if x.ndim > 2:
        raise ShapeError(f"t: expects a tensor of at most 2 dims, got {fmt(x.shape)}")
    return x.transpose(0, 1) if x.ndim == 2 else x


def mT(x: Tensor) -> Tensor:  # noqa: N802  (torch's name)
    if x.ndim < 2:
        raise ShapeError(f"mT: needs at least 2 dims, got {fmt(x.shape)}")
    return x.transpose(-2, -1)


def unflatten(x: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    d = normalize_dim(dim, x.ndim, "unflatten")
    sizes = tuple(sizes)
    if not sizes:
        raise ShapeError("unflatten: sizes must be non-empty")
    inner = infer_reshape("unflatten", (x.shape[d],), sizes)
    return x.reshape(*x.shape[:d], *inner, *x.shape[d + 1:])


def _select(x: Tensor, dim: int, index: int) -> Tensor:
    return squeeze(narrow(x, dim, index, 1), dim)


def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    d = normalize_dim(dim, x.ndim, "unbind")
    return tuple(_select(x, d, i) for i in range(x.shape[d]))


def _atleast_shape(shape: tuple[int, ...], n: int) -> tuple[int, ...]:
    """0-d -> [1]*n; 1-d [k] -> [1, k] or [1, k, 1]; 2-d [m, k] -> [m, k, 1]."""
    if len(shape) >= n:
        return shape
    if not shape or n == 1:
        return (1,) * n
    if len(shape) == 1:
        return (1, *shape, 1)[:n]
    return (*shape, 1)


def atleast(n: int, *tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    """atleast_1d/2d/3d: one tensor gives one tensor, several (or a sequence) a tuple."""
    out = tuple(x.reshape(*_atleast_shape(x.shape, n))
                for x in _tensors(f"atleast_{n}d", tensors))
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], AnyTensor) else out


def _atleast_all(n: int, op: str, tensors: Sequence[Tensor]) -> list[Tensor]:
    return [x.reshape(*_atleast_shape(x.shape, n)) for x in _tensors(op, tensors)]


# -- splitting -------------------------------------------------------------------------------
def split(x: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0,
          ) -> tuple[Tensor, ...]:
    """Pieces of split_size along dim (the last may be smaller), or of the listed sizes."""
    if x.ndim == 0:
        raise ShapeError("split: cannot split a 0-d tensor")
    d = normalize_dim(dim, x.ndim, "split")
    size = x.shape[d]
    if _is_int(split_size_or_sections):
        step = int(split_size_or_sections)  # type: ignore[arg-type]
        if step < 0 or (step == 0 and size):
            raise ShapeError(f"split: split_size must be positive, got {step} for dim {d} "
                             f"of size {size}")
        sizes = [min(step, size - s) for s in range(0, size, step)] if size else [0]
    else:
        sizes = list(split_size_or_sections)  # type: ignore[arg-type]
        if not all(_is_int(s) and s >= 0 for s in sizes) or sum(sizes) != size:
            raise ShapeError(f"split: sizes {sizes} must be non-negative ints summing to "
                             f"{size}, the size of dim {d} of {fmt(x.shape)}")
    starts = np.cumsum([0, *sizes[:-1]])
    return tuple(narrow(x, d, int(s), int(n)) for s, n in zip(starts, sizes))


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most `chunks` pieces of ceil(size / chunks) along dim (fewer when they run out)."""
    if not _is_int(chunks) or chunks <= 0:
        raise ShapeError(f"chunk: chunks must be a positive int, got {chunks!r}")
    if x.ndim == 0:
        raise ShapeError("chunk: cannot chunk a 0-d tensor")
    d = normalize_dim(dim, x.ndim, "chunk")
    return split(x, math.ceil(x.shape[d] / chunks), d)


def tensor_split(x: Tensor, indices_or_sections: int | Sequence[int] | Tensor, dim: int = 0,
                 ) -> tuple[Tensor, ...]:
    """n near-equal sections (the first size % n one longer), or pieces between indices."""
    if x.ndim == 0:
        raise ShapeError("tensor_split: cannot split a 0-d tensor")
    d = normalize_dim(dim, x.ndim, "tensor_split")
    size = x.shape[d]
    spec: Any = indices_or_sections
    if isinstance(spec, AnyTensor):
        if spec.ndim > 1 or spec.dtype.is_floating_point:
            raise ArgumentError(f"tensor_split: a tensor indices_or_sections must be a 0-d or "
                                f"1-d integer tensor, got {spec.dtype} {fmt(spec.shape)}")
        spec = spec.tolist()
    if _is_int(spec):
        if spec <= 0:
            raise ShapeError(f"tensor_split: sections must be positive, got {spec}")
        q, r = divmod(size, spec)
        bounds = list(np.cumsum([q + 1] * r + [q] * (spec - r))[:-1])
    else:
        bounds = list(spec)
        if not all(_is_int(b) for b in bounds):
            raise ShapeError(f"tensor_split: indices must be ints, got {bounds}")
    edges = [0] + [min(max(int(b) + size if b < 0 else int(b), 0), size)
                   for b in bounds] + [size]
    return tuple(narrow(x, d, lo, max(hi - lo, 0)) for lo, hi in zip(edges, edges[1:]))


# -- reordering and repeating ----------------------------------------------------------------
def _take(x: Tensor, dim: int, positions: np.ndarray) -> Tensor:
    """x's entries at host-known `positions` along dim (all in range), by one gather."""
    index = wrap(x._backend.from_numpy(np.asarray(positions, dtype=np.int64)), x._backend)
    shape = [1] * x.ndim
    shape[dim] = len(positions)
    full = list(x.shape)
    full[dim] = len(positions)
    index = expand(index.reshape(*shape), (tuple(full),)).contiguous()
    return gather(x, dim, index, range_checked=True)


def flip(x: Tensor, dims: int | Sequence[int]) -> Tensor:
    out = x
    for d in normalize_dims(dims, x.ndim, "flip"):
        if x.shape[d] > 1:
            out = _take(out, d, np.arange(x.shape[d] - 1, -1, -1))
    return x.clone() if out is x else out  # a new tensor, as PyTorch's (no dims, sizes 1)


def fliplr(x: Tensor) -> Tensor:
    if x.ndim < 2:
        raise ShapeError(f"fliplr: needs at least 2 dims, got {fmt(x.shape)}")
    return flip(x, 1)


def flipud(x: Tensor) -> Tensor:
    if x.ndim < 1:
        raise ShapeError("flipud: needs at least 1 dim, got a 0-d tensor")
    return flip(x, 0)


def roll(x: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None,
         ) -> Tensor:
    """Shift entries along dims, wrapping around; with no dims, along the flattened tensor."""
    shift_list = _ints(shifts)
    if dims is None:
        if len(shift_list) != 1:
            raise ShapeError(f"roll: {len(shift_list)} shifts need as many dims")
        return roll(x.reshape(-1), shift_list, 0).reshape(*x.shape)
    dim_list = _ints(dims)
    if len(shift_list) != len(dim_list):
        raise ShapeError(f"roll: shifts {shift_list} and dims {dim_list} differ in length")
    out = x
    for s, dim in zip(shift_list, dim_list):
        d = normalize_dim(dim, x.ndim, "roll")
        size = x.shape[d]
        k = int(s) % size if size else 0
        if k:
            out = cat([narrow(out, d, size - k, k), narrow(out, d, 0, size - k)], d)
    # a new tensor, as PyTorch's, also where every shift is a whole turn (writing into
    # the result must not change x)
    return x.clone() if out is x else out


def repeat(x: Tensor, *sizes: int | Sequence[int]) -> Tensor:
    """Tile x `sizes` times along each dim (new leading dims where sizes is longer)."""
    reps: Any = _ints(sizes[0]) if len(sizes) == 1 else sizes
    if len(reps) < x.ndim or not all(_is_int(r) and r >= 0 for r in reps):
        raise ShapeError(f"repeat: needs at least {x.ndim} non-negative repeats for "
                         f"{fmt(x.shape)}, got {reps}")
    shape = (1,) * (len(reps) - x.ndim) + tuple(x.shape)
    # [r0, s0, r1, s1, ...] by broadcasting, then merge each (r_i, s_i) pair
    inter = [v for r, s in zip(reps, shape) for v in (1, s)]
    target = [v for r, s in zip(reps, shape) for v in (r, s)]
    # copied before the reshape: as in PyTorch the result owns its memory, where a reshape
    # of the expanded view may stay a view of x (a repeat along a new or size-1 dim)
    out = contiguous(expand(x.reshape(*inter), (tuple(target),)))
    return out.reshape(*[int(r) * s for r, s in zip(reps, shape)])


def tile(x: Tensor, dims: Sequence[int]) -> Tensor:
    dims = tuple(dims)
    return repeat(x, (1,) * (x.ndim - len(dims)) + dims)


def repeat_interleave(x: Tensor, repeats: int | Tensor, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each entry along dim (the flattened x without one) `repeats` times."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    d = normalize_dim(dim, x.ndim, "repeat_interleave")
    size = x.shape[d] if x.ndim else 1
    if isinstance(repeats, AnyTensor):
        if repeats.dtype.is_floating_point or repeats.ndim > 1:
            raise ShrewTypeError(f"repeat_interleave: repeats must be an int or a 0-d/1-d integer "
                                 f"tensor, got {repeats.dtype} {fmt(repeats.shape)}")
        counts = np.broadcast_to(repeats.numpy(), (size,)) if repeats.numel() in (1, size) \
            else repeats.numpy()
    elif _is_int(repeats):
        counts = np.full(size, int(repeats))
    else:
        raise ShrewTypeError(f"repeat_interleave: repeats must be an int or a tensor, got "
                             f"{type(repeats).__name__}")
    if counts.shape != (size,) or (counts < 0).any():
        raise ShapeError(f"repeat_interleave: repeats must be non-negative, one per entry "
                         f"of dim {d} (size {size}), got {counts.tolist()}")
    positions = np.repeat(np.arange(size), counts)
    if output_size is not None and output_size != len(positions):
        raise ShapeError(f"repeat_interleave: output_size {output_size} != {len(positions)}")
    return _take(x.reshape(1) if x.ndim == 0 else x, d, positions)


# -- diagonals and triangles -------------------------------------------------------------------
_diagonal_of = diagonal  # (diag's argument `diagonal` hides the function, as in torch)


def diag_embed(x: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices (in dims dim1, dim2 of the result) with x's last dim on their diagonal."""
    if x.ndim < 1:
        raise ShapeError("diag_embed: needs at least 1 dim, got a 0-d tensor")
    n, batch = x.shape[-1], x.shape[:-1]
    # inverse of diagonal's trick: rows [x_i, 0 * n] read flat as n x n put x_i at (i, i)
    rows = pad(x.unsqueeze(-1), (0, n))
    square = narrow(rows.reshape(*batch, n * (n + 1)), -1, 0, n * n).reshape(*batch, n, n)
    k = abs(offset)
    square = pad(square, (k, 0, 0, k) if offset > 0 else (0, k, k, 0))
    out_ndim = x.ndim + 1
    d1 = normalize_dim(dim1, out_ndim, "diag_embed")
    d2 = normalize_dim(dim2, out_ndim, "diag_embed")
    if d1 == d2:
        raise ShapeError(f"diag_embed: dim1 and dim2 are the same dim {d1}")
    return movedim(square, (-2, -1), (d1, d2))


def diag(x: Tensor, diagonal: int = 0) -> Tensor:
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim == 2:
        return _diagonal_of(x, diagonal)
    raise ShapeError(f"diag: expects a 1-d or 2-d tensor, got {fmt(x.shape)}")


@autocast_op("trace")
def trace(x: Tensor) -> Tensor:
    if x.ndim != 2:
        raise ShapeError(f"trace: expects a matrix, got {fmt(x.shape)}")
    return diagonal(x).sum()


def _triangle(op: str, x: Tensor, diagonal: int, lower: bool) -> Tensor:
    if x.ndim < 2:
        raise ShapeError(f"{op}: needs at least 2 dims, got {fmt(x.shape)}")
    rows, cols = x.shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool) if lower else \
        ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    mask = wrap(x._backend.from_numpy(keep), x._backend)
    return where(mask, x, False if x.dtype is bool_ else 0)


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    return _triangle("tril", x, diagonal, True)


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    return _triangle("triu", x, diagonal, False)


# -- joining -----------------------------------------------------------------------------------
def hstack(tensors: Sequence[Tensor]) -> Tensor:
    ts = _atleast_all(1, "hstack", tensors)
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    return cat(_atleast_all(2, "vstack", tensors), 0)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    return cat(_atleast_all(3, "dstack", tensors), 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    return cat([t.reshape(-1, 1) if t.ndim <= 1 else t
                for t in _tensors("column_stack", tensors)], 1)


# -- torch's functional forms (shrew.reshape(x, shape), ...) of the Tensor methods --------------
def atleast_1d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    return atleast(1, *tensors)


def atleast_2d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    return atleast(2, *tensors)


def atleast_3d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    return atleast(3, *tensors)


def reshape_fn(x: Tensor, shape: Sequence[int]) -> Tensor:
    return reshape(x, (tuple(shape),))


def permute_fn(x: Tensor, dims: Sequence[int]) -> Tensor:
    return permute(x, (tuple(dims),))


def numel(x: Tensor) -> int:
    return x.numel()


moveaxis, swapdims, row_stack = movedim, swapaxes, vstack
