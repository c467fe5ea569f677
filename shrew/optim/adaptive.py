"""Per-coordinate adaptive step sizes without Adam's bias correction: RMSprop, Adagrad and
Adadelta (PyTorch's formulas)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.errors import ShrewValueError
from ..ops.creation import full, zeros_like
from .optimizer import Optimizer, refuse_differentiable

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import Params, Step


class RMSprop(Optimizer):
    """v = alpha * v + (1 - alpha) * g^2; divide g by sqrt(v) + eps (sqrt(v - mean(g)^2)
    when centered), through a momentum buffer when momentum > 0."""

    def __init__(self, params: Params, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        refuse_differentiable("RMSprop", differentiable)
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps,
                                  "weight_decay": weight_decay, "momentum": momentum,
                                  "centered": centered, "maximize": maximize})

    def check(self, group: dict[str, Any]) -> None:
        super().check(group)
        for key in ("alpha", "momentum"):
            if not group[key] >= 0:
                raise ShrewValueError(f"RMSprop: {key} must be >= 0, got {group[key]!r}")

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        alpha = group["alpha"]
        if not state:
            state.update(step=0, square_avg=zeros_like(grad))
        state["step"] += 1
        v = state["square_avg"] = state["square_avg"] * alpha + grad * grad * (1.0 - alpha)
        if group["centered"]:
            mean = state.get("grad_avg", zeros_like(grad))
            mean = state["grad_avg"] = mean + (grad - mean) * (1.0 - alpha)
            v = v - mean * mean
        avg = v.sqrt() + group["eps"]
        if group["momentum"] > 0:
            buf = state.get("momentum_buffer", zeros_like(grad))
            state["momentum_buffer"] = buf * group["momentum"] + grad / avg
            return state["momentum_buffer"], -group["lr"]
        return grad / avg, -group["lr"]


class Adagrad(Optimizer):
    """s += g^2; p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)."""

    def __init__(self, params: Params, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        refuse_differentiable("Adagrad", differentiable)
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "eps": eps, "maximize": maximize})
        # As torch.optim.Adagrad, the accumulators exist from the start (state_dict shows them).
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p.id] = {"step": 0, "sum": full(
                    p.shape, group["initial_accumulator_value"], dtype=p.dtype, device=p.device)}

    def check(self, group: dict[str, Any]) -> None:
        super().check(group)
        for key in ("lr_decay", "initial_accumulator_value"):
            if not group[key] >= 0:
                raise ShrewValueError(f"Adagrad: {key} must be >= 0, got {group[key]!r}")

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        if not state:  # a group added later with add_param_group
            state.update(step=0, sum=full(p.shape, group["initial_accumulator_value"],
                                          dtype=p.dtype, device=p.device))
        state["step"] += 1
        clr = group["lr"] / (1.0 + (state["step"] - 1) * group["lr_decay"])
        s = state["sum"] = state["sum"] + grad * grad
        return grad / (s.sqrt() + group["eps"]), -clr


class Adadelta(Optimizer):
    """v = rho * v + (1 - rho) * g^2; delta = sqrt(u + eps) / sqrt(v + eps) * g;
    u = rho * u + (1 - rho) * delta^2; p -= lr * delta."""

    def __init__(self, params: Params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        refuse_differentiable("Adadelta", differentiable)
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize})

    def check(self, group: dict[str, Any]) -> None:
        super().check(group)
        if not 0.0 <= group["rho"] <= 1.0:
            raise ShrewValueError(f"Adadelta: rho must be in [0, 1], got {group['rho']!r}")

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        rho, eps = group["rho"], group["eps"]
        if not state:
            state.update(step=0, square_avg=zeros_like(grad), acc_delta=zeros_like(grad))
        state["step"] += 1
        v = state["square_avg"] = state["square_avg"] * rho + grad * grad * (1.0 - rho)
        delta = (state["acc_delta"] + eps).sqrt() / (v + eps).sqrt() * grad
        state["acc_delta"] = state["acc_delta"] * rho + delta * delta * (1.0 - rho)
        return delta, -group["lr"]
