"""Helpers shared by the gradient rules of several op families."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from ...backends.base import fast_path
from ...core.fields import wrap
from ...core.grad_mode import is_grad_enabled
from ...core.shape import broadcast_dims

if TYPE_CHECKING:
    from ..._tensor import Tensor

InputGrads: TypeAlias = "Sequence[tuple[Tensor, Tensor | None]]"
"""What a gradient rule returns: (input, its gradient or None) per input."""


def fast_gradient(backend: Any, name: str, *args: Any) -> Tensor | None:
    """In a plain backward, the backend's optional one-call gradient backend.<name>(*args)
    (base.FastPool, base.FastGrad) as a tensor; None where the backend has no such method
    or declines the call, and under create_graph=True, where the rules stay recorded
    operations so that they can be differentiated again."""
    if is_grad_enabled():
        return None
    data = fast_path(backend, name, *args)
    return None if data is NotImplemented else wrap(data, backend)


def fast_gradients(backend: Any, name: str, *args: Any) -> tuple[Tensor | None, ...] | None:
    """fast_gradient for a method that gives several gradients at once (a tuple of arrays,
    None for one not asked for: base.FastConv's conv2d_backward, base.FastNorm's
    layer_norm_backward, base.FastAttention's attention_backward)."""
    if is_grad_enabled():
        return None
    data = fast_path(backend, name, *args)
    if data is NotImplemented:
        return None
    return tuple(None if d is None else wrap(d, backend) for d in data)


def sum_to_shape(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum a gradient over the dims that broadcasting added or stretched, back to `shape`."""
    if grad.shape == shape:
        return grad
    dims = broadcast_dims(grad.shape, shape)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(*shape)


def cast_like(g: Tensor, x: Tensor) -> Tensor:
    """The gradient in x's dtype and on x's device (for ToDtype / ToDevice / views)."""
    if g.dtype is not x.dtype:
        g = g.to_dtype(x.dtype)
    if g._backend is not x._backend:
        g = g.to(x.device)
    return g.reshape(*x.shape) if g.shape != x.shape else g
