"""Gradient rules of the pool family (ops/pool.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...backends.kernels import avg_pool_divisor
from ...ops.conv import col2im
from ...ops.creation import new_tensor
from ...ops.index.recorded import scatter_add_unchecked
from .common import fast_gradient

if TYPE_CHECKING:
    from ..._tensor import Tensor


def max_pool2d_grad(x: Tensor, kernel: tuple, stride: tuple, dilation: tuple, index: Tensor,
                    g: Tensor) -> Tensor:
    """Each output's gradient added at its maximum's place in the input plane."""
    fast = fast_gradient(x._backend, "max_pool2d_backward", g._data, index._data, x.shape,
                         kernel, stride, dilation)
    if fast is not None:
        return fast
    n, c, h, w = x.shape
    # Explicit sizes, not -1, which is ambiguous for an empty batch.
    flat_g = g.reshape(n, c, g.shape[2] * g.shape[3])
    flat_idx = index.reshape(n, c, g.shape[2] * g.shape[3])
    return scatter_add_unchecked((n, c, h * w), 2, flat_idx, flat_g).reshape(n, c, h, w)


def avg_pool2d_grad(x: Tensor, kernel: tuple, stride: tuple, padding: tuple, ceil_mode: bool,
                    count_include_pad: bool, divisor_override: int | None,
                    g: Tensor) -> Tensor:
    """Each output's gradient over its divisor, spread over its window's taps (col2im);
    taps in the padding, or past the input on the right (ceil_mode), are dropped."""
    fast = fast_gradient(x._backend, "avg_pool2d_backward", g._data, x.shape, kernel, stride,
                         padding, ceil_mode, count_include_pad, divisor_override)
    if fast is not None:
        return fast
    n, c, h, w = x.shape
    ho, wo = g.shape[2:]
    divisor = avg_pool_divisor((h, w), kernel, stride, padding, (ho, wo), count_include_pad,
                               divisor_override)
    if (divisor == divisor.flat[0]).all():
        scaled = g * (1.0 / float(divisor.flat[0]))
    else:
        scaled = g / new_tensor(g, divisor, g.dtype, g.device, False)
    k, length = kernel[0] * kernel[1], ho * wo
    cols = scaled.reshape(n, c, 1, length).expand(n, c, k, length).reshape(n, c * k, length)
    # The image the windows tile: x, widened on the right where a ceil_mode window ends
    # past x and its padding, so that col2im finds exactly (ho, wo) windows in it.
    extra = [max(0, (o - 1) * s + kk - size - 2 * p) for o, s, kk, size, p
             in zip((ho, wo), stride, kernel, (h, w), padding)]
    grad = col2im(cols, (n, c, h + extra[0], w + extra[1]), kernel, stride, padding)
    return grad[:, :, :h, :w] if any(extra) else grad
