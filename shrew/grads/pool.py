"""Gradient rules of the pool family (ops/pool.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..backends.base import fast_path
from ..factory import wrap
from ..grad_mode import is_grad_enabled
from ..ops.conv import col2im
from ..ops.index import scatter_add_unchecked

if TYPE_CHECKING:
    from ..tensor import Tensor


def max_pool2d_grad(x: Tensor, kernel: tuple[int, int], stride: tuple[int, int],
                    index: Tensor, g: Tensor) -> Tensor:
    """g added at each window's saved argmax; a plain backward asks the backend's
    FastPool first."""
    if not is_grad_enabled():
        data = fast_path(x._backend, "max_pool2d_backward", g._data, index._data,
                         x.shape, kernel, stride)
        if data is not NotImplemented:
            return wrap(data, x._backend)
    n, c, h, w = x.shape
    # Explicit sizes, not -1, which is ambiguous for an empty batch.
    flat_g = g.reshape(n, c, g.shape[2] * g.shape[3])
    flat_idx = index.reshape(n, c, g.shape[2] * g.shape[3])
    grad = scatter_add_unchecked((n, c, h * w), 2, flat_idx, flat_g)
    return grad.reshape(n, c, h, w)


def avg_pool2d_grad(x: Tensor, kernel: tuple[int, int], stride: tuple[int, int],
                    padding: tuple[int, int], g: Tensor) -> Tensor:
    """g / k spread over each window: col2im of the repeated columns."""
    n, c = x.shape[:2]
    k = kernel[0] * kernel[1]
    length = g.shape[2] * g.shape[3]
    spread = (g * (1.0 / k)).reshape(n, c, 1, length).expand(n, c, k, length)
    cols = spread.reshape(n, c * k, length)
    return col2im(cols, x.shape, kernel, stride, padding)
