"""Helpers shared by the gradient rules of several op families."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

from ..shape import broadcast_dims

if TYPE_CHECKING:
    from ..tensor import Tensor

InputGrads: TypeAlias = "Sequence[tuple[Tensor, Tensor | None]]"
"""What a gradient rule returns: (input, its gradient or None) per input."""


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
