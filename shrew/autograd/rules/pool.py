"""Gradient rules of the pool family (ops/pool.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...backends.kernels import avg_pool_divisor
from ...core.shape import numel
from ...ops.conv import col2im
from ...ops.creation import new_tensor
from ...ops.index.recorded import scatter_add_unchecked
from .common import fast_gradient

if TYPE_CHECKING:
    from ..._tensor import Tensor


def max_pool2d_grad(x: Tensor, kernel: tuple, stride: tuple, dilation: tuple, index: Tensor,
                    g: Tensor) -> Tensor:
    """Each output's gradient added at its maximum's place in the input plane (a 2-d or
    3-d pool: the index is flat in the plane either way)."""
    fast = fast_gradient(x._backend, "max_pool2d_backward", g._data, index._data, x.shape,
                         kernel, stride, dilation)
    if fast is not None:
        return fast
    n, c = x.shape[:2]
    # Explicit sizes, not -1, which is ambiguous for an empty batch.
    per_plane = numel(g.shape[2:])
    flat_g = g.reshape(n, c, per_plane)
    flat_idx = index.reshape(n, c, per_plane)
    return scatter_add_unchecked((n, c, numel(x.shape[2:])), 2, flat_idx,
                                 flat_g).reshape(*x.shape)


def avg_pool2d_grad(x: Tensor, kernel: tuple, stride: tuple, padding: tuple, ceil_mode: bool,
                    count_include_pad: bool, divisor_override: int | None,
                    g: Tensor) -> Tensor:
    """Each output's gradient over its divisor, spread over its window's taps (col2im);
    taps in the padding, or past the input on the right (ceil_mode), are dropped."""
    fast = fast_gradient(x._backend, "avg_pool2d_backward", g._data, x.shape, kernel, stride,
                         padding, ceil_mode, count_include_pad, divisor_override)
    if fast is not None:
        return fast
    (n, c, *sizes), out = x.shape, g.shape[2:]
    divisor = avg_pool_divisor(tuple(sizes), kernel, stride, padding, out, count_include_pad,
                               divisor_override)
    if (divisor == divisor.flat[0]).all():
        scaled = g * (1.0 / float(divisor.flat[0]))
    else:
        scaled = g / new_tensor(g, divisor, g.dtype, g.device, False)
    k, length = numel(kernel), numel(out)
    cols = scaled.reshape(n, c, 1, length).expand(n, c, k, length).reshape(n, c * k, length)
    # The image the windows tile: x, widened on the right where a ceil_mode window ends
    # past x and its padding, so that col2im finds exactly `out` windows in it.
    extra = [max(0, (o - 1) * s + kk - size - 2 * p) for o, s, kk, size, p
             in zip(out, stride, kernel, sizes, padding)]
    grad = col2im(cols, (n, c, *(size + e for size, e in zip(sizes, extra))), kernel, stride,
                  padding)
    if not any(extra):
        return grad
    return grad[(slice(None), slice(None)) + tuple(slice(None, size) for size in sizes)]
