"""Gradient rules of the norm family (ops/norm.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.grad_mode import is_grad_enabled
from ...ops.norm import standardize
from .common import InputGrads, fast_gradient, fast_gradients, sum_to_shape

if TYPE_CHECKING:
    from ..._tensor import Tensor


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


def layer_norm_grads(x: Tensor, weight: Tensor, bias: Tensor, dims: tuple[int, ...],
                     eps: float, mean: Tensor, rstd: Tensor, g: Tensor) -> InputGrads:
    """Of y = x_hat * weight + bias, x_hat = standardize(x): dx is standardize's gradient
    of g * weight, dweight the sum of g x_hat and dbias that of g over the leading dims;
    each only where its input needs it.  In a plain backward one backend call gives all
    three (base.FastNorm); otherwise x_hat is recomputed, recorded under create_graph so
    that the gradients can be differentiated again."""
    dx: Tensor | None
    dweight: Tensor | None
    dbias: Tensor | None
    fast = fast_gradients(x._backend, "layer_norm_backward", g._data, x._data, weight._data,
                          mean._data, rstd._data, len(dims))
    if fast is not None:
        dx, dweight, dbias = fast
    else:
        dx = dweight = dbias = None
        if x.requires_grad or weight.requires_grad:
            x_hat = standardize(x, len(dims), eps)
            if x.requires_grad:
                dx = standardize_grad(x, dims, eps, rstd, x_hat, g * weight)
            if weight.requires_grad:
                dweight = sum_to_shape(g * x_hat, weight.shape)
        if bias.requires_grad:
            dbias = sum_to_shape(g, bias.shape)
    return ((x, dx if x.requires_grad else None),
            (weight, dweight if weight.requires_grad else None),
            (bias, dbias if bias.requires_grad else None))


def softmax_grad(x: Tensor, dim: int, log: bool, y: Tensor, g: Tensor) -> Tensor:
    """From the saved output y: y (g - sum(g y)), or for log-softmax g - exp(y) sum(g)."""
    fast = fast_gradient(x._backend, "softmax_backward", g._data, y._data, dim, log)
    if fast is not None:
        return fast
    if log:
        return g - y.exp() * g.sum(dim, keepdim=True)
    return y * (g - (g * y).sum(dim, keepdim=True))
