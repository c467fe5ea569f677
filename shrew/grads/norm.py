"""Gradient rules of the norm family (ops/norm.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..grad_mode import is_grad_enabled
from .common import fast_gradient

if TYPE_CHECKING:
    from ..tensor import Tensor


def standardize_grad(x: Tensor, dims: tuple[int, ...], eps: float, rstd: Tensor, y: Tensor,
                     g: Tensor) -> Tensor:
    """From the saved output y and 1/std: (g - mean(g) - y mean(g y)) / std."""
    fast = fast_gradient(x._backend, "standardize_backward", g._data, y._data, rstd._data,
                         len(dims))
    if fast is not None:
        return fast
    if is_grad_enabled():  # create_graph: rstd's own dependence on x counts too
        centred = x - x.mean(dims, keepdim=True)
        rstd = (centred.square().mean(dims, keepdim=True) + eps).powf(-0.5)
    mean_g = g.mean(dims, keepdim=True)
    mean_gy = (g * y).mean(dims, keepdim=True)
    return (g - mean_g - y * mean_gy) * rstd


def softmax_grad(x: Tensor, dim: int, log: bool, y: Tensor, g: Tensor) -> Tensor:
    """From the saved output y: y (g - sum(g y)), or for log-softmax g - exp(y) sum(g)."""
    fast = fast_gradient(x._backend, "softmax_backward", g._data, y._data, dim, log)
    if fast is not None:
        return fast
    if log:
        return g - y.exp() * g.sum(dim, keepdim=True)
    return y * (g - (g * y).sum(dim, keepdim=True))
