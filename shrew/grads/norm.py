"""Gradient rules of the norm family (ops/norm.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..grad_mode import is_grad_enabled

if TYPE_CHECKING:
    from ..tensor import Tensor


def standardize_grad(x: Tensor, dims: tuple[int, ...], eps: float, rstd: Tensor, y: Tensor,
                     g: Tensor) -> Tensor:
    """From the saved output y and 1/std: (g - mean(g) - y mean(g y)) / std."""
    if is_grad_enabled():  # create_graph: rstd's own dependence on x counts too
        centred = x - x.mean(dims, keepdim=True)
        rstd = (centred.square().mean(dims, keepdim=True) + eps).powf(-0.5)
    mean_g = g.mean(dims, keepdim=True)
    mean_gy = (g * y).mean(dims, keepdim=True)
    return (g - mean_g - y * mean_gy) * rstd
