"""Schedules made of other schedulers: SequentialLR and ChainedScheduler."""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from ...core.errors import ShrewTypeError, ShrewValueError
from ..optimizer import Optimizer
from .base import LRScheduler, _check_optimizer, _lrs
from .plateau import ReduceLROnPlateau


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
            raise ShrewValueError(f"SequentialLR: needs one milestone fewer than schedulers, got "
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
        raise ShrewValueError(f"{name}: needs at least one scheduler")
    for i, s in enumerate(schedulers):
        if isinstance(s, ReduceLROnPlateau) or not isinstance(s, LRScheduler):
            raise ShrewTypeError(f"{name}: scheduler {i} is a {type(s).__name__}; only epoch "
                                 f"schedules (not ReduceLROnPlateau) can be combined")
        if s.optimizer is not optimizer:
            raise ShrewTypeError(f"{name}: scheduler {i} ({type(s).__name__}) belongs to another "
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
            raise ShrewValueError("ChainedScheduler: needs at least one scheduler")
        optimizer = optimizer or schedulers[0].optimizer
        _check_parts("ChainedScheduler", optimizer, schedulers)
        self._schedulers, self.optimizer = list(schedulers), optimizer
        self._last_lr = _lrs(optimizer)

    def step(self) -> None:  # type: ignore[override]
        """Step each scheduler in turn."""
        for s in self._schedulers:
            s.step()
        self._last_lr = _lrs(self.optimizer)
