"""The Adam family: Adam (amsgrad), AdamW, Adamax, NAdam and RAdam (PyTorch's formulas)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import ShrewValueError
from ..ops.creation import zeros_like
from ..ops.elementwise.recorded import where
from .optimizer import Optimizer, refuse_differentiable

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import Params, Step


def _lerp(start: Tensor, end: Tensor, weight: float) -> Tensor:
    """start + weight * (end - start): the running mean of the Adam family."""
    return start + (end - start) * weight


def _moments(grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> tuple[Tensor, Tensor]:
    """Advance the step count and the first and second moments; returns them."""
    beta1, beta2 = group["betas"]
    if "exp_avg" not in state:
        state.update(step=0, exp_avg=zeros_like(grad), exp_avg_sq=zeros_like(grad))
    state["step"] += 1
    m = state["exp_avg"] = _lerp(state["exp_avg"], grad, 1.0 - beta1)
    v = state["exp_avg_sq"] = state["exp_avg_sq"] * beta2 + grad * grad * (1.0 - beta2)
    return m, v


class _AdamFamily(Optimizer):
    """Shared argument checks (betas, eps); the members differ in `update`."""

    def check(self, group: dict[str, Any]) -> None:
        super().check(group)
        self.check_betas(group)


class Adam(_AdamFamily):
    """Adam with bias-corrected moments; weight_decay adds weight_decay * p to the
    gradient (L2 regularisation, as torch.optim.Adam) unless decoupled_weight_decay;
    amsgrad divides by the running maximum of the second moment."""

    def __init__(self, params: Params, lr: float = 1e-3,
                 betas: Sequence[float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        # foreach / fused / capturable pick PyTorch kernels; shrew has one update path.
        refuse_differentiable(type(self).__name__, differentiable)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "maximize": maximize,
                                  "decoupled_weight_decay": decoupled_weight_decay})

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        beta1, beta2 = group["betas"]
        m, v = _moments(grad, group, state)
        t = state["step"]
        if group["amsgrad"]:
            peak = state.get("max_exp_avg_sq")
            v = state["max_exp_avg_sq"] = v if peak is None else where(peak > v, peak, v)
        denom = v.sqrt() / math.sqrt(1.0 - beta2 ** t) + group["eps"]
        return m / denom, -group["lr"] / (1.0 - beta1 ** t)


class AdamW(Adam):
    """Adam with decoupled weight decay: p shrinks by lr * weight_decay * p each step."""

    decoupled = True

    def __init__(self, params: Params, lr: float = 1e-3,
                 betas: Sequence[float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         differentiable=differentiable, decoupled_weight_decay=True)


class Adamax(_AdamFamily):
    """Adam with the infinity norm: u = max(beta2 * u, |g| + eps);
    p -= lr / (1 - beta1^t) * m / u."""

    def __init__(self, params: Params, lr: float = 2e-3,
                 betas: Sequence[float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        refuse_differentiable("Adamax", differentiable)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize})

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        beta1, beta2 = group["betas"]
        if not state:
            state.update(step=0, exp_avg=zeros_like(grad), exp_inf=zeros_like(grad))
        state["step"] += 1
        m = state["exp_avg"] = _lerp(state["exp_avg"], grad, 1.0 - beta1)
        decayed, fresh = state["exp_inf"] * beta2, grad.abs() + group["eps"]
        u = state["exp_inf"] = where(decayed > fresh, decayed, fresh)
        return m / u, -group["lr"] / (1.0 - beta1 ** state["step"])


class NAdam(_AdamFamily):
    """Adam with Nesterov momentum and the momentum-decay schedule of Dozat (2016)."""

    def __init__(self, params: Params, lr: float = 2e-3,
                 betas: Sequence[float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        refuse_differentiable("NAdam", differentiable)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "momentum_decay": momentum_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize})

    def check(self, group: dict[str, Any]) -> None:
        super().check(group)
        if not group["momentum_decay"] >= 0:
            raise ShrewValueError(f"NAdam: momentum_decay must be >= 0, "
                                  f"got {group['momentum_decay']!r}")

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        beta1, beta2 = group["betas"]
        lr, decay = group["lr"], group["momentum_decay"]
        state.setdefault("mu_product", 1.0)
        m, v = _moments(grad, group, state)
        t = state["step"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * decay))
        state["mu_product"] *= mu
        product = state["mu_product"]
        denom = (v / (1.0 - beta2 ** t)).sqrt() + group["eps"]
        step = (grad * ((1.0 - mu) / (1.0 - product))
                + m * (mu_next / (1.0 - product * mu_next)))
        return step / denom, -lr


class RAdam(_AdamFamily):
    """Rectified Adam: plain momentum SGD while the variance estimate is unreliable
    (rho_t <= 5), then Adam scaled by the rectification term."""

    def __init__(self, params: Params, lr: float = 1e-3,
                 betas: Sequence[float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        refuse_differentiable("RAdam", differentiable)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize})

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        beta1, beta2 = group["betas"]
        m, v = _moments(grad, group, state)
        t = state["step"]
        corrected = m / (1.0 - beta1 ** t)
        bias2 = 1.0 - beta2 ** t
        rho_inf = 2.0 / (1.0 - beta2) - 1.0
        rho_t = rho_inf - 2.0 * t * beta2 ** t / bias2
        if rho_t <= 5.0:
            return corrected, -group["lr"]
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                         / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        adaptive = math.sqrt(bias2) / (v.sqrt() + group["eps"])
        return corrected * adaptive, -group["lr"] * rect
