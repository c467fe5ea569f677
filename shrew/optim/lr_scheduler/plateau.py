"""ReduceLROnPlateau: lowers lr when a metric stops improving."""
from __future__ import annotations

import math
from typing import Any

from ...core.errors import ShrewValueError
from ..optimizer import Optimizer
from .base import LRScheduler, _check_optimizer, _lrs, _per_group


class ReduceLROnPlateau(LRScheduler):
    """Multiplies lr by `factor` once the metric passed to step() has not improved for
    `patience` epochs (then waits `cooldown` epochs); never below `min_lr`."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0.0,
                 eps: float = 1e-8) -> None:
        _check_optimizer(optimizer)
        if factor >= 1.0:
            raise ShrewValueError(f"ReduceLROnPlateau: factor must be < 1, got {factor!r}")
        if mode not in ("min", "max"):
            raise ShrewValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ShrewValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', "
                                  f"got {threshold_mode!r}")
        self.optimizer, self.factor = optimizer, factor
        self.min_lrs = _per_group("min_lr", optimizer, min_lr)
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.last_epoch = 0
        self._last_lr = _lrs(optimizer)
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0

    def _is_better(self, value: float) -> bool:
        rel, best, th = self.threshold_mode == "rel", self.best, self.threshold
        if self.mode == "min":
            return value < (best * (1.0 - th) if rel else best - th)
        return value > (best * (1.0 + th) if rel else best + th)

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record one epoch's metric (a number or a one-element tensor)."""
        current = float(metrics.item() if hasattr(metrics, "item") else metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs):
                old = float(group["lr"])
                new = max(old * self.factor, floor)
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = _lrs(self.optimizer)
