"""Batch normalisation (BatchNorm1d, BatchNorm2d, BatchNorm3d) and the per-channel base it
shares with the instance norms."""
from __future__ import annotations

from typing import Any

from ...autograd.checkpoint import in_recomputation
from ...autograd.function import Function
from ...distributed.collectives import all_reduce
from ...core.dtype import int64
from ...core.errors import ShapeError
from ...core.grad_mode import no_grad
from ...core.shape import fmt
from ...ops.creation import full, ones, zeros
from ...ops.shape.recorded import stack
from ...typing import DeviceLike, DTypeLike
from ..._tensor import Tensor
from .. import functional as F
from ..parameter import Parameter
from .module import Module, place


__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _PerChannelNorm(Module):
    """What batch and instance norm share: a per-channel weight and bias (affine), and
    running statistics with their step counter (track_running_stats)."""

    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(self, num_features: int, eps: float, momentum: float | None, affine: bool,
                 track_running_stats: bool, bias: bool, device: DeviceLike | None,
                 dtype: DTypeLike | None) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(ones(num_features)) if affine else None
        self.bias = Parameter(zeros(num_features)) if affine and bias else None
        tracked = track_running_stats
        self.register_buffer("running_mean", zeros(num_features) if tracked else None)
        self.register_buffer("running_var", ones(num_features) if tracked else None)
        self.register_buffer("num_batches_tracked",
                             zeros((), dtype=int64) if tracked else None)
        place(self, device, dtype)


class _BatchNorm(_PerChannelNorm):
    """Per-channel normalisation of [N, C, ...].  Training normalises with the batch's
    statistics and updates the running_mean / running_var buffers (once per step, even
    under checkpoint; momentum=None makes them a cumulative average over
    num_batches_tracked steps); eval() normalises with the buffers.  Without
    track_running_stats there are no buffers and the batch statistics are always used."""

    input_dims: tuple[int, ...] = ()
    layout = ""
    optional_state = ("num_batches_tracked",)
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, *,
                 bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, bias,
                         device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        name = type(self).__name__
        if x.ndim not in self.input_dims:
            raise ShapeError(f"{name}: input must be {self.layout}, got {fmt(x.shape)}")
        if x.shape[1] != self.num_features:
            raise ShapeError(f"{name}: input {fmt(x.shape)} has {x.shape[1]} channels, "
                             f"expected {self.num_features}")
        factor = 0.0 if self.momentum is None else self.momentum
        count = self.num_batches_tracked
        if self.training and count is not None and not in_recomputation():
            with no_grad():
                count.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(count.item())
        use_batch = self.training or self.running_mean is None
        return F.batch_norm(x, self.running_mean if not self.training or
                            self.track_running_stats else None,
                            self.running_var if not self.training or
                            self.track_running_stats else None,
                            self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of [N, C] or [N, C, L]."""

    input_dims = (2, 3)
    layout = "[N, C] or [N, C, L]"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of [N, C, H, W]."""

    input_dims = (4,)
    layout = "[N, C, H, W]"


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of [N, C, D, H, W]."""

    input_dims = (5,)
    layout = "[N, C, D, H, W]"


class _AllReduceSum(Function):
    """Sum over the ranks of the default process group, differentiable: every rank's loss
    depends on the summed statistics, so the gradient of each rank's part is the sum of
    all ranks' gradients."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        out = x.detach().clone()
        all_reduce(out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        out = grad.detach().clone()
        all_reduce(out)
        return out


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation of [N, C, *] whose training statistics are those of the whole
    global batch: each rank's per-channel count, sum and sum of squares are all-reduced over
    shrew.distributed's default group (when it is initialised and has more than one rank),
    forward and backward.  Without a group it is BatchNorm.  process_group must be None or
    the default group (shrew has no subgroups)."""

    input_dims = tuple(range(2, 9))
    layout = "[N, C, *]"

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype)
        self.process_group = process_group

    def forward(self, x: Tensor) -> Tensor:
        from ... import distributed
        if not (self.training and distributed.is_initialized()):
            return super().forward(x)
        distributed.group.check_group("SyncBatchNorm", self.process_group)
        if distributed.get_world_size() == 1:
            return super().forward(x)
        if x.ndim < 2 or x.shape[1] != self.num_features:
            raise ShapeError(f"SyncBatchNorm: input {fmt(x.shape)} must be [N, C, *] with C = "
                             f"{self.num_features}")
        dims = (0, *range(2, x.ndim))
        local = x.numel() // x.shape[1]
        stats = _AllReduceSum.apply(stack([
            x.sum(dims), (x * x).sum(dims),
            full((x.shape[1],), float(local), dtype=x.dtype, device=x.device)]))
        count = float(stats[2, 0].item())
        if count <= 1:
            raise ShapeError(f"SyncBatchNorm: expected more than 1 value per channel in "
                             f"training over all ranks, got input {fmt(x.shape)}")
        mean = stats[0] / count
        var = stats[1] / count - mean * mean
        self._update_running(mean, var, count)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        y = (x - mean.reshape(shape)) * (var + self.eps).rsqrt().reshape(shape)
        if self.weight is not None:
            y = y * self.weight.reshape(shape)
        if self.bias is not None:
            y = y + self.bias.reshape(shape)
        return y

    def _update_running(self, mean: Tensor, var: Tensor, count: float) -> None:
        """The running statistics from the global batch's (its unbiased variance), as
        BatchNorm updates them."""
        if self.running_mean is None or self.running_var is None or in_recomputation():
            return
        with no_grad():
            if self.num_batches_tracked is not None:
                self.num_batches_tracked.add_(1)
            factor = self.momentum if self.momentum is not None else \
                1.0 / float(self.num_batches_tracked.item())  # type: ignore[union-attr]
            self.running_mean.mul_(1 - factor).add_(mean.detach() * factor)
            self.running_var.mul_(1 - factor).add_(var.detach() * (count / (count - 1)) * factor)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """`module` with every BatchNorm in it (itself included) replaced by a SyncBatchNorm
        holding the same parameters, buffers and training mode."""
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted: Module = cls(module.num_features, module.eps, module.momentum,
                                    module.affine, module.track_running_stats, process_group)
            for name in ("weight", "bias"):
                if getattr(module, name, None) is not None:
                    setattr(converted, name, getattr(module, name))
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                setattr(converted, name, getattr(module, name))
            converted.train(module.training)
        else:
            converted = module
        for name, child in list(module.named_children()):
            setattr(converted, name, cls.convert_sync_batchnorm(child, process_group))
        return converted
