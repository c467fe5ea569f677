"""The cyclic schedules, which also cycle the momentum: OneCycleLR and CyclicLR."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ...core.errors import ShrewValueError
from ..optimizer import Optimizer
from .base import LRScheduler, _check_optimizer, _per_group


class _MomentumCycling:
    """For OneCycleLR and CyclicLR: writes a momentum into each group, as `momentum` or as
    beta1 of `betas` (whichever the optimizer has)."""

    optimizer: Optimizer

    def _set_up_momentum(self, base_momentum: Any, max_momentum: Any, fresh: bool) -> None:
        defaults = self.optimizer.defaults
        if "momentum" not in defaults and "betas" not in defaults:
            raise ShrewValueError(f"{type(self).__name__}: cycle_momentum needs an optimizer with "
                                  f"momentum or betas")
        self.use_beta1 = "betas" in defaults
        self.base_momentums = _per_group("base_momentum", self.optimizer, base_momentum)
        self.max_momentums = _per_group("max_momentum", self.optimizer, max_momentum)
        if fresh:
            for low, high, group in zip(self.base_momentums, self.max_momentums,
                                        self.optimizer.param_groups):
                self._set_momentum(group, high)
                group["max_momentum"], group["base_momentum"] = high, low

    def _set_momentum(self, group: dict[str, Any], momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum


def _anneal(strategy: str, start: float, end: float, pct: float) -> float:
    if strategy == "cos":
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
    return (end - start) * pct + start


class OneCycleLR(_MomentumCycling, LRScheduler):
    """The 1cycle policy: lr warms up from max_lr / div_factor to max_lr over pct_start of
    the steps, then anneals to initial_lr / final_div_factor; momentum moves the opposite way."""

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ShrewValueError(f"OneCycleLR: total_steps must be a positive int, "
                                      f"got {total_steps!r}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                if not isinstance(value, int) or value <= 0:
                    raise ShrewValueError(f"OneCycleLR: {name} must be a positive int, got "
                                          f"{value!r}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ShrewValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ShrewValueError(f"OneCycleLR: pct_start must be a float in [0, 1], "
                                  f"got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ShrewValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', "
                                  f"got {anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        up = float(pct_start * self.total_steps) - 1
        # (last step of the phase, lr from, lr to, momentum from, momentum to)
        if three_phase:
            self.phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                            "base_momentum", "max_momentum"),
                           (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                            "max_momentum")]
        else:
            self.phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                            "max_momentum")]
        if last_epoch == -1:
            for peak, group in zip(_per_group("max_lr", optimizer, max_lr), optimizer.param_groups):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._set_up_momentum(base_momentum, max_momentum, last_epoch == -1)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ShrewValueError(f"OneCycleLR: stepped {step} times, more than total_steps="
                                  f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_from, lr_to, m_from, m_to) in enumerate(self.phases):
                if step <= end or i == len(self.phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(_anneal(self.anneal_strategy, group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, _anneal(self.anneal_strategy, group[m_from],
                                                          group[m_to], pct))
                    break
                start = end
        return lrs


class CyclicLR(_MomentumCycling, LRScheduler):
    """lr cycles between base_lr and max_lr (triangular, triangular2, exp_range or a
    custom scale_fn); momentum cycles the opposite way between max and base momentum."""

    _unsaved = ("optimizer", "scale_fn")

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float],
                 max_lr: float | list[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float = 0.8, max_momentum: float = 0.9,
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ShrewValueError(f"CyclicLR: mode must be 'triangular', 'triangular2' or "
                                  f"'exp_range' (or give scale_fn), got {mode!r}")
        self.mode, self.gamma = mode, gamma
        if scale_fn is None:
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        else:
            self.scale_mode = scale_mode
        self.scale_fn = scale_fn if scale_fn is not None else self._mode_scale
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._set_up_momentum(base_momentum, max_momentum, last_epoch == -1)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _mode_scale(self, x: float) -> float:
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1.0 / 2.0 ** (x - 1)
        return self.gamma ** x

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale = x / self.step_ratio
        else:
            scale = (x - 1) / (self.step_ratio - 1)
        amplitude = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [low + (high - low) * scale * amplitude
               for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                self._set_momentum(group, high - (high - low) * scale * amplitude)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """As the base's; a custom scale_fn is not saved (pass it again when rebuilding)."""
        return super().state_dict()
