"""Adam and AdamW (PyTorch's formulas, without amsgrad)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ShrewError
from ..ops.creation import zeros_like
from .optimizer import Optimizer

if TYPE_CHECKING:
    from ..tensor import Tensor
    from .optimizer import Params, Step


class Adam(Optimizer):
    """Adam with bias-corrected moments; weight_decay adds weight_decay * p to the
    gradient (L2 regularisation, as torch.optim.Adam)."""

    decoupled = False

    def __init__(self, params: Params, lr: float = 1e-3,
                 betas: Sequence[float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay})

    def check(self, group: dict[str, Any]) -> None:
        super().check(group)
        name = type(self).__name__
        betas = group["betas"]
        if len(betas) != 2 or not all(0.0 <= b < 1.0 for b in betas):
            raise ShrewError(f"{name}: betas must be two numbers in [0, 1), got {betas!r}")
        if not group["eps"] >= 0:
            raise ShrewError(f"{name}: eps must be >= 0, got {group['eps']!r}")

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        lr, wd, (beta1, beta2) = group["lr"], group["weight_decay"], group["betas"]
        if not state:
            state.update(step=0, exp_avg=zeros_like(p), exp_avg_sq=zeros_like(p))
        state["step"] += 1
        t = state["step"]
        if wd and self.decoupled:
            p.add_(p, alpha=-lr * wd)  # p *= 1 - lr * wd, in place
        elif wd:
            grad = grad + p * wd
        m = state["exp_avg"] = state["exp_avg"] * beta1 + grad * (1.0 - beta1)
        v = state["exp_avg_sq"] = state["exp_avg_sq"] * beta2 + grad.square() * (1.0 - beta2)
        denom = v.sqrt() / math.sqrt(1.0 - beta2 ** t) + group["eps"]
        return m / denom, -lr / (1.0 - beta1 ** t)


class AdamW(Adam):
    """Adam with decoupled weight decay: p shrinks by lr * weight_decay * p each step."""

    decoupled = True

    def __init__(self, params: Params, lr: float = 1e-3,
                 betas: Sequence[float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2) -> None:
        super().__init__(params, lr, betas, eps, weight_decay)
