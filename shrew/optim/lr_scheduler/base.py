"""The base of every schedule, LRScheduler, and the helpers the schedules share."""
from __future__ import annotations

from typing import Any

from ...core.errors import ShrewTypeError, ShrewValueError
from ..optimizer import Optimizer


def _lrs(optimizer: Optimizer) -> list[float]:
    return [group["lr"] for group in optimizer.param_groups]


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """A value for each parameter group: one list entry per group, or one value for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ShrewValueError(f"lr_scheduler: expected {len(optimizer.param_groups)} values "
                                  "for "
                                  f"{name}, got {len(value)}")
        return list(value)
    return [value] * len(optimizer.param_groups)


def _check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise ShrewTypeError(f"lr_scheduler: {type(optimizer).__name__} is not a shrew Optimizer")


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
                    raise ShrewValueError(f"{type(self).__name__}: param_groups[{i}] has no "
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
