"""Stochastic gradient descent with momentum and weight decay (PyTorch's formulas)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ShrewError
from .optimizer import Optimizer

if TYPE_CHECKING:
    from ..tensor import Tensor
    from .optimizer import Params, Step


class SGD(Optimizer):
    """g = grad + weight_decay * p; buf = momentum * buf + g (buf = g at first);
    p = p - lr * buf (or lr * g without momentum)."""

    def __init__(self, params: Params, lr: float, momentum: float = 0.0,
                 weight_decay: float = 0.0) -> None:
        super().__init__(params, {"lr": lr, "momentum": momentum, "weight_decay": weight_decay})

    def check(self, group: dict[str, Any]) -> None:
        super().check(group)
        if not group["momentum"] >= 0:
            raise ShrewError(f"SGD: momentum must be >= 0, got {group['momentum']!r}")

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        if group["weight_decay"]:
            grad = grad + p * group["weight_decay"]
        if group["momentum"]:
            buf = state.get("momentum_buffer")
            grad = grad if buf is None else buf * group["momentum"] + grad
            state["momentum_buffer"] = grad
        return grad, -group["lr"]
