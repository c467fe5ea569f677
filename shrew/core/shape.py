"""Shape arithmetic: broadcasting, dim normalisation, and the checks that go with them."""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from .errors import ShapeError, ShrewIndexError, ShrewTypeError

MAX_DIMS = 64  # numpy's limit on dims (PyTorch's is the same order); more is refused, not hit
INT64_MAX = 2 ** 63 - 1
# No allocation may ask for more bytes than this (256 TiB, past any machine's memory): the
# request is refused with its size, rather than left to numpy's or pyopencl's own errors.
MAX_BYTES = 2 ** 48


class Size(tuple):
    """A tensor's shape: a tuple of ints (Tensor.shape, Tensor.size()) with torch.Size's
    extras."""

    __slots__ = ()

    def numel(self) -> int:
        return math.prod(self)

    def __repr__(self) -> str:
        return f"shrew.Size({list(self)})"


LARGE_NUMEL = 1 << 14
"""Elements from which a tensor's shape is a LargeSize."""


class LargeSize(Size):
    """The Size of LARGE_NUMEL elements or more, as the tensors' shared Sizes are made
    (core/fields.py): backward frees such activations early (autograd/engine.py), and
    telling them by their shape's type reads no cold memory per node, as their arrays'
    sizes would."""

    __slots__ = ()


def fmt(shape: Iterable[object]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def numel(shape: Iterable[int]) -> int:
    return math.prod(shape)


def _is_size(s: object) -> bool:
    return isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_))


def shape_arg(op: str, shape: Sequence[Any]) -> tuple[int, ...]:
    """The sizes of a creation op (`zeros(2, 3)` or `zeros((2, 3))`), checked as PyTorch
    checks them: ints (TypeError otherwise: 2.5, None, a string), each within int64
    (TypeError, as torch's unpacking), non-negative (RuntimeError), at most MAX_DIMS."""
    if len(shape) == 1 and not _is_size(shape[0]):
        if not isinstance(shape[0], Sequence) or isinstance(shape[0], str):
            raise ShrewTypeError(f"{op}: size must be ints or a sequence of ints, got "
                                 f"{shape[0]!r}")
        shape = tuple(shape[0])
    if not all(_is_size(s) for s in shape):
        raise ShrewTypeError(f"{op}: size must be ints, got {tuple(shape)!r}")
    sizes = tuple(int(s) for s in shape)
    check_sizes(op, sizes)
    return sizes


def check_sizes(op: str, sizes: tuple[int, ...]) -> None:
    """Ints that PyTorch accepts as a shape: each in int64, non-negative, <= MAX_DIMS dims."""
    if any(s > INT64_MAX for s in sizes):
        raise ShrewTypeError(f"{op}: a size does not fit in int64, got {fmt(sizes)}")
    if any(s < 0 for s in sizes):
        raise ShapeError(f"{op}: sizes must be non-negative, got {fmt(sizes)}")
    if len(sizes) > MAX_DIMS:
        raise ShapeError(f"{op}: {len(sizes)} dims, more than the {MAX_DIMS} a tensor may have")


def check_alloc(op: str, shape: Sequence[int], itemsize: int, device: str = "",
                limit: int | None = None) -> None:
    """Refuse, before allocating, a shape whose bytes overflow int64, pass MAX_BYTES, or
    pass `limit`, the largest buffer `device` allocates (where its backend says)."""
    count = numel(shape)
    if count > INT64_MAX or count * itemsize > INT64_MAX:
        raise ShapeError(f"{op}: the size of {fmt(shape)} overflows int64 "
                         f"({count} elements of {itemsize} bytes)")
    if count * itemsize > MAX_BYTES:
        raise ShapeError(f"{op}: {fmt(shape)} needs {count * itemsize} bytes, more than "
                         f"any device has (limit {MAX_BYTES} bytes)")
    if limit is not None and count * itemsize > limit:
        raise ShapeError(f"{op}: {fmt(shape)} needs {count * itemsize} bytes, more than "
                         f"{device} allocates at once ({limit} bytes)")


def broadcast_shapes(op: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """numpy's broadcasting of several shapes, or a ShapeError naming them all."""
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        size = 1
        for s in shapes:
            d = s[i] if -i <= len(s) else 1
            if d != 1:
                if size != 1 and size != d:
                    shown = " and ".join(fmt(s) for s in shapes)
                    raise ShapeError(f"{op}: shapes {shown} do not broadcast")
                size = d
        out.append(size)
    return tuple(out)


def normalize_dim(dim: object, ndim: int, op: str, extra: int = 0) -> int:
    """A dim in [-ndim-extra, ndim+extra) as a non-negative int (extra=1 for unsqueeze)."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise ShrewTypeError(f"{op}: dim must be an int, got {dim!r}")
    size = ndim + extra
    lo, hi = -max(size, 1), max(size, 1) - 1
    if not lo <= dim <= hi:
        raise ShrewIndexError(f"{op}: dim {dim} is out of range for a {ndim}-d tensor "
                              f"(expected {lo} to {hi})")
    return dim % max(size, 1)


def normalize_dims(dims: int | Iterable[int] | None, ndim: int, op: str) -> tuple[int, ...]:
    """None -> every dim; an int or a tuple of ints -> sorted distinct non-negative dims."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(sorted(normalize_dim(d, ndim, op) for d in dims))
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: dim {tuple(dims)} names a dim twice")
    return out if ndim else ()  # a 0-d tensor accepts dim 0 / -1 but has no dim to index


def reduced_shape(shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def broadcast_dims(grad_shape: Sequence[int], shape: Sequence[int]) -> tuple[int, ...]:
    """The dims of grad_shape that broadcasting added or stretched from `shape`."""
    lead = len(grad_shape) - len(shape)
    return tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and grad_shape[lead + i] != 1)


def infer_reshape(op: str, old: Sequence[int], new: Iterable[Any]) -> tuple[int, ...]:
    """Resolve one -1 in `new` and check that the element count is unchanged."""
    new = tuple(new)
    if not all(_is_size(s) for s in new):
        raise ShrewTypeError(f"{op}: sizes must be ints, got {new!r}")
    new = tuple(int(s) for s in new)
    if len(new) > MAX_DIMS:
        raise ShapeError(f"{op}: {len(new)} dims, more than the {MAX_DIMS} a tensor may have")
    if new.count(-1) > 1:
        raise ShapeError(f"{op}: only one dim may be -1, got {fmt(new)}")
    if any(s < -1 for s in new):
        raise ShapeError(f"{op}: invalid size in {fmt(new)}")
    total = numel(old)
    if -1 in new:
        known = numel(s for s in new if s != -1)
        if known == 0 or total % known:
            raise ShapeError(f"{op}: cannot reshape {fmt(old)} ({total} elements) to {fmt(new)}")
        new = tuple(total // known if s == -1 else s for s in new)
    if numel(new) != total:
        raise ShapeError(f"{op}: cannot reshape {fmt(old)} ({total} elements) to {fmt(new)} "
                         f"({numel(new)} elements)")
    return new


def pair(value: Any, name: str, op: str, minimum: int) -> tuple[int, ...]:
    """An int or a pair of ints as a pair, each at least `minimum`."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    value = tuple(value)
    if len(value) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ShapeError(f"{op}: {name} must be an int or a pair of ints, got {value!r}")
    if any(v < minimum for v in value):
        raise ShapeError(f"{op}: {name} must be >= {minimum}, got {value}")
    return value


def ntuple(value: Any, dims: int, name: str, op: str, minimum: int) -> tuple[int, ...]:
    """An int or a `dims`-tuple of ints as a `dims`-tuple, each at least `minimum` (pair
    is the 2-d case; the 3-d convolutions and pools take triples)."""
    if dims == 2:
        return pair(value, name, op, minimum)
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * dims
    value = tuple(value)
    if len(value) != dims or not all(isinstance(v, int) and not isinstance(v, bool)
                                     for v in value):
        raise ShapeError(f"{op}: {name} must be an int or a tuple of {dims} ints, got {value!r}")
    if any(v < minimum for v in value):
        raise ShapeError(f"{op}: {name} must be >= {minimum}, got {value}")
    return value


def window_count(size: int, kernel: int, stride: int = 1, padding: int = 0, dilation: int = 1,
                 ceil_mode: bool = False) -> int:
    """How many windows conv and pool place along one dim (PyTorch's output size): floor (or,
    with ceil_mode, ceil) of the padded span over the stride, plus one; a ceil_mode window
    that would start past the input and its left padding is dropped.  May be < 1 for a
    too-small input."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def window_counts(sizes: Iterable[int], kernel: Iterable[int], stride: Iterable[int],
                  padding: Iterable[int], dilation: Iterable[int] | None = None,
                  ceil_mode: bool = False) -> tuple[int, ...]:
    """window_count per dim: the output's spatial sizes (no dilation when None)."""
    dilations = repeat(1) if dilation is None else dilation
    return tuple(window_count(n, k, s, p, d, ceil_mode)
                 for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilations))


def conv_output_size(op: str, size: int, kernel: int, stride: int, padding: int) -> int:
    padded = size + 2 * padding
    if kernel > padded:
        raise ShapeError(f"{op}: kernel size {kernel} is larger than the padded input "
                         f"size {padded} (input {size}, padding {padding})")
    return window_count(size, kernel, stride, padding)


def pool_window_counts(size: int, kernel: int, stride: int, padding: int, out: int,
                       count_include_pad: bool) -> list[int]:
    """Per window along one dim, how many taps avg_pool's divisor counts: those inside the
    padded input (count_include_pad), or only those inside the input itself.  A 2-d or
    3-d window's divisor is the product of its dims' counts."""
    counts = []
    for i in range(out):
        start = i * stride - padding
        end = min(start + kernel, size + padding)
        if not count_include_pad:
            start, end = max(start, 0), min(end, size)
        counts.append(end - start)
    return counts
