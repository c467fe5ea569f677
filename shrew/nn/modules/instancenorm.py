"""Instance normalisation: InstanceNorm1d, InstanceNorm2d, InstanceNorm3d."""
from __future__ import annotations

from ...core.errors import ShapeError
from ...core.shape import fmt
from ...typing import DeviceLike, DTypeLike
from ..._tensor import Tensor
from .. import functional as F
from .batchnorm import _PerChannelNorm


__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_PerChannelNorm):
    """instance_norm of batched or unbatched input; optional affine weights and running
    statistics (used in eval() when track_running_stats)."""

    spatial = 0
    momentum: float  # an instance norm always has one
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, *,
                 bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, bias,
                         device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        name = type(self).__name__
        if x.ndim not in (self.spatial + 1, self.spatial + 2):
            raise ShapeError(f"{name}: input must have {self.spatial} spatial dims after "
                             f"[N, C] or [C], got {fmt(x.shape)}")
        batched = x.ndim == self.spatial + 2
        y = x if batched else x.unsqueeze(0)
        if y.shape[1] != self.num_features and self.affine:
            raise ShapeError(f"{name}: input {fmt(x.shape)} has {y.shape[1]} channels, "
                             f"expected {self.num_features}")
        # num_batches_tracked stays 0, as PyTorch's instance norms leave it.
        out = F.instance_norm(y, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum,
                              self.eps)
        return out if batched else out.squeeze(0)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of [N, C, L] or [C, L]."""

    spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of [N, C, H, W] or [C, H, W]."""

    spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of [N, C, D, H, W] or [C, D, H, W]."""

    spatial = 3
