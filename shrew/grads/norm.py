"""Gradient rules of the norm family (ops/norm.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..backends.base import fast_path
from ..factory import wrap
from ..grad_mode import is_grad_enabled

if TYPE_CHECKING:
    from ..tensor import Tensor


def standardize_grad(x: Tensor, dims: tuple[int, ...], eps: float, rstd: Tensor, y: Tensor,
                     g: Tensor) -> Tensor:
    """From the saved output y and 1/std: (g - mean(g) - y mean(g y)) / std."""
    if is_grad_enabled():  # create_graph: rstd's own dependence on x counts too
        centred = x - x.mean(dims, keepdim=True)
        rstd = (centred.square().mean(dims, keepdim=True) + eps).powf(-0.5)
    else:   # a plain backward: the backend's FastGrad, if any
        data = fast_path(x._backend, "standardize_backward", g._data, y._data, rstd._data,
                         len(dims))
        if data is not NotImplemented:
            return wrap(data, x._backend)
    mean_g = g.mean(dims, keepdim=True)
    mean_gy = (g * y).mean(dims, keepdim=True)
    return (g - mean_g - y * mean_gy) * rstd


def softmax_grad(x: Tensor, dim: int, log: bool, y: Tensor, g: Tensor) -> Tensor:
    """From the saved output y: y (g - sum(g y)), or for log-softmax g - exp(y) sum(g)."""
    if not is_grad_enabled():   # a plain backward: the backend's FastGrad, if any
        data = fast_path(x._backend, "softmax_backward", g._data, y._data, dim, log)
        if data is not NotImplemented:
            return wrap(data, x._backend)
    if log:
        return g - y.exp() * g.sum(dim, keepdim=True)
    return y * (g - (g * y).sum(dim, keepdim=True))
