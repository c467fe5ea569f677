"""torch.optim.swa_utils: stochastic weight averaging and exponential moving averages of a
model (AveragedModel), the SWA learning-rate schedule (SWALR) and update_bn, which
recomputes BatchNorm statistics for the averaged weights."""
from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..core.dtype import int64
from ..core.errors import ShrewValueError
from ..core.grad_mode import no_grad
from ..ops.creation import tensor
from .._tensor import Tensor
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler.base import LRScheduler, _per_group
from .optimizer import Optimizer

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]

MultiAvgFn = Callable[[Sequence[Tensor], Sequence[Tensor], Any], None]
AvgFn = Callable[[Tensor, Tensor, Any], Tensor]


def _check_decay(decay: float) -> None:
    if not 0.0 <= decay <= 1.0:
        raise ShrewValueError(f"Invalid decay value {decay} provided. Please provide a value "
                              f"in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """An update ema <- decay * ema + (1 - decay) * current, for lists of tensors."""
    _check_decay(decay)

    def ema_update(ema_params: Sequence[Tensor], current: Sequence[Tensor], _: Any) -> None:
        with no_grad():
            for p_ema, p_model in zip(ema_params, current):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """An update averaged <- running mean with current, counting num_averaged models."""
    def swa_update(averaged: Sequence[Tensor], current: Sequence[Tensor],
                   num_averaged: Any) -> None:
        with no_grad():
            for p_avg, p_model in zip(averaged, current):
                p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """ema, current, n -> decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """averaged, current, n -> the running mean of n + 1 models."""
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and buffers, with use_buffers) are the average
    of those passed to update_parameters: the running mean (SWA) by default, or avg_fn /
    multi_avg_fn's update (get_ema_multi_avg_fn for an EMA).  state_dict: `n_averaged`,
    then `module.*`, as PyTorch's."""

    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ShrewValueError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64,
                                                  device="cpu" if device is None else device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> Iterable[Tensor]:
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    def update_parameters(self, model: Module) -> None:
        """Fold model's current weights into the average (the first call copies them)."""
        mine = [p.detach() for p in self._tensors(self.module)]
        theirs = [p.detach().to(q.device) for p, q in zip(self._tensors(model), mine)]
        count = int(self.n_averaged.item())
        with no_grad():
            if count == 0:
                for p_avg, p_model in zip(mine, theirs):
                    p_avg.copy_(p_model)
            elif self.avg_fn is not None:
                for p_avg, p_model in zip(mine, theirs):
                    p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged.to(p_avg.device)))
            else:
                update = self.multi_avg_fn or get_swa_multi_avg_fn()
                update(mine, theirs, self.n_averaged.to(mine[0].device) if mine else count)
            if not self.use_buffers:
                # The buffers (BatchNorm's statistics) follow the source model.
                for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                    b_avg.copy_(b_model.detach().to(b_avg.device))
            self.n_averaged.add_(1)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to swa_lr over anneal_epochs steps ("cos" or
    "linear"), then hold it."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | Sequence[float],
                 anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ShrewValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead "
                                  f"got {anneal_strategy}")
        self.anneal_func: Callable[[float], float] = (
            self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ShrewValueError(f"anneal_epochs must be equal or greater than 0, got "
                                  f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        # As torch: undo the previous step's blend to find the lr the schedule started from.
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """One pass over loader in train mode with cumulative BatchNorm statistics
    (momentum=None), so that the running statistics fit the averaged weights."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and module.running_mean is not None:
            with no_grad():
                module.running_mean.zero_()
                module.running_var.fill_(1)  # type: ignore[union-attr]
                module.num_batches_tracked.zero_()  # type: ignore[union-attr]
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)
