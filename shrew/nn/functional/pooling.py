"""Pooling as functions, with PyTorch's arguments: max, average, adaptive and unpooling in
1-d, 2-d and 3-d (unfold and fold: fold.py).

The 2-d and 3-d max and average pools are the ops of ops/pool.py (pool.cl); everything else here
is composed from them and other ops, so gradients come from the ops it is made of: a 1-d
pool is a 2-d one of height 1, an unbatched input gets a batch of one, an adaptive pool
whose windows all have one size is a plain pool, and otherwise an average is a product
with averaging matrices and a max a gather of the windows' taps; unpooling is a scatter."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.autocast import autocast_op
from ...core.dtype import int64
from ...core.errors import ShapeError
from ...ops.creation import arange, new_tensor, zeros
from ...ops.shape.recorded import cat
from ...ops.pool import avg_pool2d as _avg_pool2d
from ...ops.pool import avg_pool3d as _avg_pool3d
from ...ops.pool import is_default_stride, window_pair
from ...ops.pool import max_pool2d as _max_pool2d
from ...ops.pool import max_pool3d as _max_pool3d
from ...core.shape import fmt
from ..._tensor import Tensor
from ._checks import tensor_arg

if TYPE_CHECKING:
    from ...typing import IntOrPair

Pooled = Tensor | tuple[Tensor, ...]  # values, or (values, indices)


# -- shapes: 1-d as 2-d, unbatched as a batch of one ----------------------------------------
def _batched(op: str, x: Any, dims: int) -> tuple[Tensor, bool]:
    """x with a batch dim (whether one was added), or a ShapeError unless x has `dims`
    spatial dims after [N, C] or [C]."""
    if tensor_arg(op, "input", x).ndim not in (dims + 1, dims + 2):
        layout = ", ".join({1: "L", 2: "HW", 3: "DHW"}[dims])
        raise ShapeError(f"{op}: input must be [N, C, {layout}] or [C, {layout}], got "
                         f"{fmt(x.shape)}")
    return (x.unsqueeze(0), True) if x.ndim == dims + 1 else (x, False)


def _unbatch(y: Pooled, added: bool) -> Pooled:
    if not added:
        return y
    return tuple(t.squeeze(0) for t in y) if isinstance(y, tuple) else y.squeeze(0)


def _as_2d(y: Pooled) -> Pooled:
    """A 1-d pool's [N, C, 1, L] result(s) as [N, C, L]."""
    return tuple(t.squeeze(2) for t in y) if isinstance(y, tuple) else y.squeeze(2)


def _one(op: str, name: str, value: Any) -> int:
    """A 1-d size given as an int or a 1-sequence."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if not isinstance(value, int) or isinstance(value, bool):
        raise ShapeError(f"{op}: {name} must be an int or a 1-tuple, got {value!r}")
    return value


def _line(op: str, kernel_size: Any, stride: Any, padding: Any,
          dilation: Any = 1) -> tuple[tuple[int, int], tuple[int, int] | None,
                                      tuple[int, int], tuple[int, int]]:
    """A 1-d pool's kernel, stride, padding and dilation as a 2-d pool's, of height 1."""
    stride = None if is_default_stride(stride) else _one(op, "stride", stride)
    return ((1, _one(op, "kernel_size", kernel_size)), None if stride is None else (1, stride),
            (0, _one(op, "padding", padding)), (1, _one(op, "dilation", dilation)))


# -- max and average pooling ------------------------------------------------------------------
def max_pool2d(input: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,  # noqa: A002
               padding: IntOrPair = 0, dilation: IntOrPair = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Pooled:
    """The maximum of each window of [N, C, H, W] or [C, H, W] (stride defaults to the
    kernel; padding is -inf, at most half the kernel); with return_indices also each
    maximum's flat h*W+w index in its input plane (max_unpool2d's input)."""
    x, added = _batched("max_pool2d", input, 2)
    return _unbatch(_max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode,
                                return_indices), added)


def max_pool1d(input: Tensor, kernel_size: int, stride: int | None = None,  # noqa: A002
               padding: int = 0, dilation: int = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Pooled:
    """The maximum of each window of [N, C, L] or [C, L]; indices are positions in L."""
    x, added = _batched("max_pool1d", input, 1)
    kernel, stride_2d, padding_2d, dilation_2d = _line("max_pool1d", kernel_size, stride,
                                                       padding, dilation)
    y = _max_pool2d(x.unsqueeze(2), kernel, stride_2d, padding_2d, dilation_2d, ceil_mode,
                    return_indices)
    return _unbatch(_as_2d(y), added)


def avg_pool2d(input: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,  # noqa: A002
               padding: IntOrPair = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window of [N, C, H, W] or [C, H, W]: the sum over divisor_override
    if given, else over the window's taps in the padded input (count_include_pad, the
    default) or in the input alone."""
    x, added = _batched("avg_pool2d", input, 2)
    y = _avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                    divisor_override)
    return y.squeeze(0) if added else y


def avg_pool1d(input: Tensor, kernel_size: int, stride: int | None = None,  # noqa: A002
               padding: int = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each window of [N, C, L] or [C, L]."""
    x, added = _batched("avg_pool1d", input, 1)
    kernel, stride_2d, padding_2d, _ = _line("avg_pool1d", kernel_size, stride, padding)
    y = _avg_pool2d(x.unsqueeze(2), kernel, stride_2d, padding_2d, ceil_mode,
                    count_include_pad).squeeze(2)
    return y.squeeze(0) if added else y


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Pooled:
    """The maximum of each window of [N, C, D, H, W] or [C, D, H, W]; with return_indices
    also each maximum's flat d*H*W + h*W + w index in its input volume (max_unpool3d's
    input)."""
    x, added = _batched("max_pool3d", input, 3)
    return _unbatch(_max_pool3d(x, kernel_size, stride, padding, dilation, ceil_mode,
                                return_indices), added)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window of [N, C, D, H, W] or [C, D, H, W], as avg_pool2d's."""
    x, added = _batched("avg_pool3d", input, 3)
    y = _avg_pool3d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                    divisor_override)
    return y.squeeze(0) if added else y


# -- adaptive pooling ---------------------------------------------------------------------------
def _adaptive_sizes(op: str, x: Tensor, output_size: Any, dims: int) -> tuple[int, ...]:
    """The output size per spatial dim (None keeps the input's), checked."""
    if isinstance(output_size, int) and not isinstance(output_size, bool):
        output_size = (output_size,) * dims
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else ()
    if len(sizes) != dims or not all(s is None or (isinstance(s, int) and not isinstance(
            s, bool) and s >= 1) for s in sizes):
        raise ShapeError(f"{op}: output_size must be {dims} int(s) >= 1 or None, got "
                         f"{output_size!r}")
    spatial = x.shape[-dims:]
    if 0 in spatial:
        raise ShapeError(f"{op}: input {fmt(x.shape)} has an empty spatial dim")
    return tuple(size if s is None else s for s, size in zip(sizes, spatial))


def _bounds(size: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive windows along one dim: [floor(i*size/out), ceil((i+1)*size/out))."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def _averaging(x: Tensor, size: int, out: int) -> Tensor:
    """[out, size]: row i averages window i's entries (x's dtype and device)."""
    rows = np.zeros((out, size))   # float64, rounded once to x's dtype
    for i, (start, end) in enumerate(_bounds(size, out)):
        rows[i, start:end] = 1.0 / (end - start)
    return new_tensor(x, rows, None, None, False)


def _window_taps(x: Tensor, sizes: tuple[int, ...], out: tuple[int, ...]) -> Tensor:
    """[*out, k] int64: the flat (row-major) positions in a plane of `sizes` of each
    adaptive window's taps, k the most any window has; a smaller window repeats its last
    tap along each dim, which comes after its first maximum and so never changes which
    tap wins."""
    dims = len(sizes)
    flat: Any = np.zeros((1,) * 2 * dims, dtype=np.int64)
    for i, (size, o) in enumerate(zip(sizes, out)):
        bounds = _bounds(size, o)
        k = max(end - start for start, end in bounds)
        along = np.array([[min(start + t, end - 1) for t in range(k)] for start, end in bounds])
        shape = [1] * 2 * dims
        shape[i], shape[dims + i] = o, k   # windows on dim i, taps on dim dims + i
        flat = flat + (along * math.prod(sizes[i + 1:])).reshape(shape)
    taps = flat.reshape(*out, -1)
    return new_tensor(x, taps.astype(np.int64), int64, None, False)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """The mean of each of output_size windows of [N, C, H, W] or [C, H, W], window i of a
    dim spanning [floor(i*L/out), ceil((i+1)*L/out))."""
    x, added = _batched("adaptive_avg_pool2d", input, 2)
    (oh, ow), (h, w) = _adaptive_sizes("adaptive_avg_pool2d", x, output_size, 2), x.shape[2:]
    if h % oh == 0 and w % ow == 0:   # windows of one size that tile the input
        y = _avg_pool2d(x, (h // oh, w // ow))
    else:
        y = _averaging(x, h, oh) @ x @ _averaging(x, w, ow).transpose(0, 1)
    return y.squeeze(0) if added else y


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """adaptive_avg_pool2d of [N, C, L] or [C, L] along L."""
    _batched("adaptive_avg_pool1d", input, 1)
    size = _adaptive_sizes("adaptive_avg_pool1d", input, _one("adaptive_avg_pool1d",
                                                              "output_size", output_size), 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size[0])).squeeze(-2)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """adaptive_avg_pool2d of [N, C, D, H, W] or [C, D, H, W]: the mean over each of
    output_size windows, a dim's windows as adaptive_avg_pool2d's."""
    x, added = _batched("adaptive_avg_pool3d", input, 3)
    out, sizes = _adaptive_sizes("adaptive_avg_pool3d", x, output_size, 3), x.shape[2:]
    if all(size % o == 0 for size, o in zip(sizes, out)):   # windows of one size that tile
        y = _avg_pool3d(x, tuple(size // o for size, o in zip(sizes, out)))
    else:
        (od, oh, ow), (d, h, w) = out, sizes
        # depth averaged as a product along the last dim, then height and width as 2-d's
        y = (x.transpose(2, 4) @ _averaging(x, d, od).transpose(0, 1)).transpose(2, 4)
        y = _averaging(x, h, oh) @ y @ _averaging(x, w, ow).transpose(0, 1)
    return y.squeeze(0) if added else y


def adaptive_max_pool2d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Pooled:
    """The maximum of each of output_size windows of [N, C, H, W] or [C, H, W] (windows as
    adaptive_avg_pool2d's); with return_indices also its flat h*W+w index in the plane."""
    return _adaptive_max("adaptive_max_pool2d", input, output_size, return_indices, 2)


def adaptive_max_pool3d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Pooled:
    """adaptive_max_pool2d of [N, C, D, H, W] or [C, D, H, W]; indices are flat
    d*H*W + h*W + w positions in the volume."""
    return _adaptive_max("adaptive_max_pool3d", input, output_size, return_indices, 3)


def _adaptive_max(op: str, input: Any, output_size: Any,  # noqa: A002
                  return_indices: bool, dims: int) -> Pooled:
    x, added = _batched(op, input, dims)
    out, sizes = _adaptive_sizes(op, x, output_size, dims), x.shape[2:]
    if all(size % o == 0 for size, o in zip(sizes, out)):   # windows of one size that tile
        pool = _max_pool3d if dims == 3 else _max_pool2d
        return _unbatch(pool(x, tuple(size // o for size, o in zip(sizes, out)),
                             return_indices=return_indices), added)
    taps = _window_taps(x, sizes, out)                            # [*out, k]
    n, c, k = x.shape[0], x.shape[1], taps.shape[-1]
    windows = x.reshape(n, c, math.prod(sizes)).index_select(
        2, taps.reshape(math.prod(out) * k))
    values, arg = windows.reshape(n, c, *out, k).max(-1)
    if not return_indices:
        return _unbatch(values, added)
    index = taps.expand(n, c, *out, k).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    return _unbatch((values, index), added)


def adaptive_max_pool1d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Pooled:
    """adaptive_max_pool2d of [N, C, L] or [C, L] along L; indices are positions in L."""
    _batched("adaptive_max_pool1d", input, 1)
    size = _adaptive_sizes("adaptive_max_pool1d", input, _one("adaptive_max_pool1d",
                                                              "output_size", output_size), 1)
    y = adaptive_max_pool2d(input.unsqueeze(-2), (1, size[0]), return_indices)
    return tuple(t.squeeze(-2) for t in y) if isinstance(y, tuple) else y.squeeze(-2)


# -- unpooling ---------------------------------------------------------------------------------
def _unpool_size(op: str, x: Tensor, kernel: Sequence[int], stride: Sequence[int],
                 padding: Sequence[int], output_size: Any) -> tuple[int, ...]:
    """PyTorch's unpooled size: (in - 1) * stride - 2 * padding + kernel per dim, or
    output_size (the whole shape or its spatial dims) within a stride of that."""
    dims = len(kernel)
    default = tuple((size - 1) * s - 2 * p + k for size, k, s, p
                    in zip(x.shape[-dims:], kernel, stride, padding))
    if output_size is None:
        return default
    sizes = tuple(output_size)
    if len(sizes) == dims + 2:
        sizes = sizes[2:]
    if len(sizes) != dims or not all(d - s < size < d + s for size, d, s
                                     in zip(sizes, default, stride)):
        raise ShapeError(f"{op}: output_size {output_size!r} must give {dims} sizes, each "
                         f"within a stride {tuple(stride)} of {default}")
    return sizes


@autocast_op("max_unpool2d")
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: IntOrPair,  # noqa: A002
                 stride: IntOrPair | None = None, padding: IntOrPair = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    """The inverse of max_pool2d(return_indices=True): zeros of the unpooled size with each
    value of [N, C, H, W] (or [C, H, W]) at its flat index in its plane."""
    return _max_unpool("max_unpool2d", input, indices, kernel_size, stride, padding,
                       output_size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    """The inverse of max_pool3d(return_indices=True): zeros of the unpooled size with each
    value of [N, C, D, H, W] (or [C, D, H, W]) at its flat index in its volume."""
    return _max_unpool("max_unpool3d", input, indices, kernel_size, stride, padding,
                       output_size, 3)


def _max_unpool(op: str, input: Any, indices: Any, kernel_size: Any,  # noqa: A002
                stride: Any, padding: Any, output_size: Any, dims: int) -> Tensor:
    x, added = _batched(op, input, dims)
    kernel = window_pair(kernel_size, "kernel_size", op, 1, dims)
    stride = kernel if is_default_stride(stride) else window_pair(stride, "stride", op, 1,
                                                                  dims)
    padding = window_pair(padding, "padding", op, 0, dims)
    index = tensor_arg(op, "indices", indices)
    if index.shape != input.shape or index.dtype.name != "int64":
        raise ShapeError(f"{op}: indices must be int64 of the input's shape {fmt(input.shape)},"
                         f" got {index.dtype.name} {fmt(index.shape)}")
    sizes = _unpool_size(op, x, kernel, stride, padding, output_size)
    n, c = x.shape[:2]
    plane = math.prod(x.shape[2:])
    flat = zeros(n, c, math.prod(sizes), dtype=x.dtype, device=x.device)
    y = flat.scatter(2, index.reshape(n, c, plane), x.reshape(n, c, plane))
    y = y.reshape(n, c, *sizes)
    return y.squeeze(0) if added else y


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: int,  # noqa: A002
                 stride: int | None = None, padding: int = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    """The inverse of max_pool1d(return_indices=True) on [N, C, L] or [C, L]."""
    op = "max_unpool1d"
    _batched(op, input, 1)
    kernel, stride_2d, padding_2d, _ = _line(op, kernel_size, stride, padding)
    stride_2d = stride_2d or kernel
    size = _unpool_size(op, input, kernel[1:], stride_2d[1:], padding_2d[1:], output_size)
    y = max_unpool2d(input.unsqueeze(-2), tensor_arg(op, "indices", indices).unsqueeze(-2),
                     kernel, stride_2d, padding_2d, (1, size[0]))
    return y.squeeze(-2)


def _fractional_starts(samples: Tensor, size: int, pool: int, out: int) -> Tensor:
    """Each output's window start along one dim, from uniform samples u [N, C, 1]: PyTorch's
    pseudo-random sequence floor((i + u) alpha) - floor(u alpha), alpha = (size - pool) /
    (out - 1), and the last window flush with the end."""
    if out == 1:
        return (samples * 0 + (size - pool)).to_dtype(int64)
    alpha = (size - pool) / (out - 1)
    i = arange(out - 1, dtype=samples.dtype, device=samples.device)
    starts = ((i + samples) * alpha).floor() - (samples * alpha).floor()
    last = (samples * 0 + (size - pool))
    return cat([starts, last], -1).to_dtype(int64)


def fractional_max_pool2d(input: Tensor, kernel_size: IntOrPair,  # noqa: A002
                          output_size: IntOrPair | None = None,
                          output_ratio: float | tuple[float, float] | None = None,
                          return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Pooled:
    """Max over kernel_size windows at pseudo-random, increasing starts that give
    output_size (or input size * output_ratio) outputs per plane (Graham's fractional
    max-pooling); [N, C, H, W] or [C, H, W].  The samples are drawn per plane from the
    device's generator unless _random_samples [N, C, 2] is given; with return_indices
    also each maximum's flat h*W+w index."""
    op = "fractional_max_pool2d"
    x, added = _batched(op, input, 2)
    kh, kw = window_pair(kernel_size, "kernel_size", op, 1)
    n, c, h, w = x.shape
    if output_size is not None:
        oh, ow = window_pair(output_size, "output_size", op, 1)
    elif output_ratio is not None:
        rh, rw = (output_ratio, output_ratio) if isinstance(output_ratio, (int, float)) else \
            output_ratio
        if not (0 < rh < 1 and 0 < rw < 1):
            raise ShapeError(f"{op}: output_ratio must be in (0, 1), got {output_ratio}")
        oh, ow = int(h * rh), int(w * rw)
    else:
        raise ShapeError(f"{op}: give output_size or output_ratio")
    if oh + kh - 1 > h or ow + kw - 1 > w:
        raise ShapeError(f"{op}: output size ({oh}, {ow}) with kernel ({kh}, {kw}) is too "
                         f"large for input {fmt(x.shape)}")
    if _random_samples is None:
        from ...ops.random import rand  # random imports shape ops
        samples = rand(n, c, 2, dtype=x.dtype, device=x.device)
    else:
        samples = _random_samples.to_dtype(x.dtype)
        if samples.shape != (n, c, 2):
            raise ShapeError(f"{op}: _random_samples must be [{n}, {c}, 2], got "
                             f"{fmt(samples.shape)}")
    rows = _fractional_starts(samples.narrow(2, 1, 1), h, kh, oh)   # [N, C, oh]
    cols = _fractional_starts(samples.narrow(2, 0, 1), w, kw, ow)   # [N, C, ow]
    rows = rows.unsqueeze(-1) + arange(kh, device=x.device)         # [N, C, oh, kh]
    cols = cols.unsqueeze(-1) + arange(kw, device=x.device)         # [N, C, ow, kw]
    flat = rows.reshape(n, c, oh, 1, kh, 1) * w + cols.reshape(n, c, 1, ow, 1, kw)
    flat = flat.reshape(n, c, oh, ow, kh * kw)
    windows = x.reshape(n, c, 1, 1, h * w).expand(n, c, oh, ow, h * w) \
        .gather(-1, flat)
    values, which = windows.max(-1)
    if not return_indices:
        return _unbatch(values, added)
    return _unbatch((values, flat.gather(-1, which.unsqueeze(-1)).squeeze(-1)), added)
