"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay
(PyTorch's formulas)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.errors import ShrewValueError
from .optimizer import Optimizer, refuse_differentiable

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import Params, Step


class SGD(Optimizer):
    """g = grad + weight_decay * p; buf = g at first, then momentum * buf + (1 - dampening) * g;
    p -= lr * (g + momentum * buf if nesterov else buf), or lr * g without momentum."""

    def __init__(self, params: Params, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        # foreach / fused choose PyTorch kernels; shrew has one update path, so they are
        # accepted and change nothing.
        refuse_differentiable("SGD", differentiable)
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov,
                                  "maximize": maximize})

    def check(self, group: dict[str, Any]) -> None:
        super().check(group)
        if not group["momentum"] >= 0:
            raise ShrewValueError(f"SGD: momentum must be >= 0, got {group['momentum']!r}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ShrewValueError("SGD: nesterov momentum needs momentum > 0 and dampening == 0, "
                                  f"got momentum={group['momentum']!r}, "
                                  f"dampening={group['dampening']!r}")

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.detach().clone()
            else:  # in place, as PyTorch's: the buffer stays one tensor (shrew.compile reads
                buf.mul_(momentum).add_(grad, alpha=1.0 - group["dampening"])  # it in place)
            grad = grad + buf * momentum if group["nesterov"] else buf
        return grad, -group["lr"]
