"""Batch normalisation (BatchNorm1d, BatchNorm2d, BatchNorm3d) and the per-channel base it
shares with the instance norms."""
from __future__ import annotations

from ...autograd.checkpoint import in_recomputation
from ...core.dtype import int64
from ...core.errors import ShapeError
from ...core.grad_mode import no_grad
from ...core.shape import fmt
from ...ops.creation import ones, zeros
from ...typing import DeviceLike, DTypeLike
from ..._tensor import Tensor
from .. import functional as F
from ..parameter import Parameter
from .module import Module, place


__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


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
