"""Learning-rate schedules, as torch.optim.lr_scheduler: each changes `group["lr"]` (and,
for OneCycleLR / CyclicLR, the momentum or beta1) of its optimizer's parameter groups.

The schedules update recursively from the groups' current values, as PyTorch's do, so
that several of them chained on one optimizer (ChainedScheduler) compose the same way;
`step(epoch)` uses the closed form where there is one."""
from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..errors import ShrewError
from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "CosineAnnealingWarmRestarts", "OneCycleLR", "CyclicLR", "LambdaLR",
           "MultiplicativeLR", "LinearLR", "ConstantLR", "PolynomialLR", "SequentialLR",
           "ChainedScheduler", "ReduceLROnPlateau"]


def _lrs(optimizer: Optimizer) -> list[float]:
    return [group["lr"] for group in optimizer.param_groups]


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """A value for each parameter group: one list entry per group, or one value for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ShrewError(f"lr_scheduler: expected {len(optimizer.param_groups)} values for "
                             f"{name}, got {len(value)}")
        return list(value)
    return [value] * len(optimizer.param_groups)


def _check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise ShrewError(f"lr_scheduler: {type(optimizer).__name__} is not a shrew Optimizer")


class LRScheduler:
    """The base: remembers each group's `initial_lr` (`base_lrs`), counts `last_epoch`
    and on `step()` writes `get_lr()` into the groups.  Construction takes the first step
    (to epoch 0), as PyTorch's."""

    _is_initial = False  # True during the construction step
    _unsaved: tuple[str, ...] = ("optimizer",)  # attributes state_dict leaves out

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise ShrewError(f"{type(self).__name__}: param_groups[{i}] has no "
                                     f"'initial_lr', needed to resume at last_epoch="
                                     f"{last_epoch} (load the optimizer's state first)")
        self.base_lrs: list[float] = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The groups' learning rates for `last_epoch` (each schedule defines it)."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates the last step set."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to `epoch`) and update the groups' learning rates."""
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = _lrs(self.optimizer)

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer (and functions, which cannot be saved)."""
        return {k: v for k, v in self.__dict__.items() if k not in self._unsaved}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state_dict()."""
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch)."""

    _unsaved = ("optimizer", "lr_lambdas")

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.lr_lambdas: list[Callable[[int], float]] = _per_group("lr_lambda", optimizer,
                                                                   lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise ShrewError(f"{type(self).__name__}: lr_lambda must be a function, got "
                                 f"{type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """As the base's, with the attributes of callable objects among the lambdas (plain
        functions and lambdas are not saved: None)."""
        state = super().state_dict()
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(vars(fn))
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas", [None] * len(self.lr_lambdas))
        super().load_state_dict(state)
        for fn, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                vars(fn).update(attrs)


class MultiplicativeLR(LambdaLR):
    """lr = previous lr * lr_lambda(epoch), from epoch 1 on."""

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return _lrs(self.optimizer)
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, _lrs(self.optimizer))]


class StepLR(LRScheduler):
    """lr = initial_lr * gamma ** (epoch // step_size)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if not isinstance(step_size, int) or step_size <= 0:
            raise ShrewError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size:
            return _lrs(self.optimizer)
        return [lr * self.gamma for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = initial_lr * gamma ** (number of milestones reached)."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return _lrs(self.optimizer)
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        reached = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [b * self.gamma ** reached for b in self.base_lrs]

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        # a checkpoint gives the milestones back as a plain dict (perhaps with str keys)
        self.milestones = Counter({int(k): v for k, v in self.milestones.items()})


class ConstantLR(LRScheduler):
    """lr = initial_lr * factor until total_iters, then initial_lr."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0 <= factor <= 1:
            raise ShrewError(f"ConstantLR: factor must be in [0, 1], got {factor!r}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in _lrs(self.optimizer)]
        if self.last_epoch != self.total_iters:
            return _lrs(self.optimizer)
        return [lr * (1.0 / self.factor) for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        done = self.last_epoch >= self.total_iters
        return [b * (self.factor + done * (1 - self.factor)) for b in self.base_lrs]


class LinearLR(LRScheduler):
    """lr goes linearly from initial_lr * start_factor to initial_lr * end_factor over
    total_iters epochs."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1:
            raise ShrewError(f"LinearLR: start_factor must be in (0, 1], got {start_factor!r}")
        if not 0 <= end_factor <= 1:
            raise ShrewError(f"LinearLR: end_factor must be in [0, 1], got {end_factor!r}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in _lrs(self.optimizer)]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [lr * ratio for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        span = self.end_factor - self.start_factor
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [b * (self.start_factor + span * done) for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = initial_lr * gamma ** epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return _lrs(self.optimizer)
        return [lr * self.gamma for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        return [b * self.gamma ** self.last_epoch for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ** power."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        t, n = self.last_epoch, self.total_iters
        factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * factor for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [b * (1.0 - done) ** self.power for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, going
    back up after T_max (SGDR without restarts), computed recursively as PyTorch does."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, n, low = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _lrs(self.optimizer)
        if self._step_count == 1 and t > 0:  # resumed at an epoch: the closed form
            return [low + (b - low) * (1 + math.cos(t * math.pi / n)) / 2 for b in self.base_lrs]
        if (t - 1 - n) % (2 * n) == 0:  # at the trough the recursion would divide by zero
            return [lr + (b - low) * (1 - math.cos(math.pi / n)) / 2
                    for b, lr in zip(self.base_lrs, _lrs(self.optimizer))]
        ratio = (1 + math.cos(math.pi * t / n)) / (1 + math.cos(math.pi * (t - 1) / n))
        return [ratio * (lr - low) + low for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        t, n, low = self.last_epoch, self.T_max, self.eta_min
        return [low + (b - low) * (1 + math.cos(math.pi * t / n)) / 2 for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every T_i epochs, T_i growing by T_mult after each restart."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,  # noqa: N803
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ShrewError(f"CosineAnnealingWarmRestarts: T_0 must be a positive int, "
                             f"got {T_0!r}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ShrewError(f"CosineAnnealingWarmRestarts: T_mult must be an int >= 1, "
                             f"got {T_mult!r}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        low = self.eta_min
        return [low + (b - low) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for b in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or jump to a (possibly fractional) epoch."""
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ShrewError(f"CosineAnnealingWarmRestarts.step: epoch must be >= 0, "
                             f"got {epoch!r}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = _lrs(self.optimizer)


class _MomentumCycling:
    """For OneCycleLR and CyclicLR: writes a momentum into each group, as `momentum` or as
    beta1 of `betas` (whichever the optimizer has)."""

    optimizer: Optimizer

    def _set_up_momentum(self, base_momentum: Any, max_momentum: Any, fresh: bool) -> None:
        defaults = self.optimizer.defaults
        if "momentum" not in defaults and "betas" not in defaults:
            raise ShrewError(f"{type(self).__name__}: cycle_momentum needs an optimizer with "
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
                raise ShrewError(f"OneCycleLR: total_steps must be a positive int, "
                                 f"got {total_steps!r}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                if not isinstance(value, int) or value <= 0:
                    raise ShrewError(f"OneCycleLR: {name} must be a positive int, got {value!r}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ShrewError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ShrewError(f"OneCycleLR: pct_start must be a float in [0, 1], got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ShrewError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', "
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
            raise ShrewError(f"OneCycleLR: stepped {step} times, more than total_steps="
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
            raise ShrewError(f"CyclicLR: mode must be 'triangular', 'triangular2' or "
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


class _Composite(LRScheduler):
    """A schedule made of other schedulers (SequentialLR, ChainedScheduler): its state
    dict holds theirs under "_schedulers"."""

    _unsaved = ("optimizer", "_schedulers")
    _schedulers: list[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        """As the base's, with each part's state dict under "_schedulers"."""
        return {**super().state_dict(), "_schedulers": [s.state_dict() for s in self._schedulers]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        parts = state.pop("_schedulers")
        super().load_state_dict(state)
        for s, saved in zip(self._schedulers, parts):
            s.load_state_dict(saved)


class SequentialLR(_Composite):
    """Runs `schedulers` one after another, switching at each of `milestones`."""

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler],
                 milestones: list[int], last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        _check_parts("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ShrewError(f"SequentialLR: needs one milestone fewer than schedulers, got "
                             f"{len(schedulers)} schedulers and {len(milestones)} milestones")
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.optimizer = optimizer
        self.last_epoch = last_epoch + 1
        self._step_count = 0
        # Each part took its construction step already: undo those and restart from the
        # first part's epoch 0, as PyTorch does.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        _undo_construction_step(self._schedulers)
        part = self._schedulers[bisect_right(self._milestones, 0)]
        part._initial_step()
        self._last_lr = part.get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        """Advance one epoch in the scheduler whose turn it is (restarting it at 0 on
        its milestone)."""
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        part = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            part._update_lr(0)
        else:
            part.step()
        self._last_lr = part.get_last_lr()


def _check_parts(name: str, optimizer: Optimizer, schedulers: Sequence[Any]) -> None:
    if not schedulers:
        raise ShrewError(f"{name}: needs at least one scheduler")
    for i, s in enumerate(schedulers):
        if isinstance(s, ReduceLROnPlateau) or not isinstance(s, LRScheduler):
            raise ShrewError(f"{name}: scheduler {i} is a {type(s).__name__}; only epoch "
                             f"schedules (not ReduceLROnPlateau) can be combined")
        if s.optimizer is not optimizer:
            raise ShrewError(f"{name}: scheduler {i} ({type(s).__name__}) belongs to another "
                             f"optimizer")


def _undo_construction_step(schedulers: Sequence[Any]) -> None:
    for s in schedulers:
        if isinstance(s, _Composite):
            _undo_construction_step(s._schedulers)
        else:
            s.last_epoch -= 1


class ChainedScheduler(_Composite):
    """Steps every scheduler in `schedulers` on each step, so their factors multiply."""

    def __init__(self, schedulers: Sequence[LRScheduler],
                 optimizer: Optimizer | None = None) -> None:
        if not schedulers:
            raise ShrewError("ChainedScheduler: needs at least one scheduler")
        optimizer = optimizer or schedulers[0].optimizer
        _check_parts("ChainedScheduler", optimizer, schedulers)
        self._schedulers, self.optimizer = list(schedulers), optimizer
        self._last_lr = _lrs(optimizer)

    def step(self) -> None:  # type: ignore[override]
        """Step each scheduler in turn."""
        for s in self._schedulers:
            s.step()
        self._last_lr = _lrs(self.optimizer)


class ReduceLROnPlateau(LRScheduler):
    """Multiplies lr by `factor` once the metric passed to step() has not improved for
    `patience` epochs (then waits `cooldown` epochs); never below `min_lr`."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0.0,
                 eps: float = 1e-8) -> None:
        _check_optimizer(optimizer)
        if factor >= 1.0:
            raise ShrewError(f"ReduceLROnPlateau: factor must be < 1, got {factor!r}")
        if mode not in ("min", "max"):
            raise ShrewError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ShrewError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', "
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
