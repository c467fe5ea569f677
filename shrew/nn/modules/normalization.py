"""Normalisation layers: LayerNorm, BatchNorm1d/2d, GroupNorm, InstanceNorm1d/2d,
RMSNorm, LocalResponseNorm."""
from __future__ import annotations

from collections.abc import Sequence

from ..autograd.checkpoint import in_recomputation
from ..core.dtype import int64
from ..core.errors import ShapeError, ShrewError
from ..ops.creation import ones, zeros
from ..core.grad_mode import no_grad
from ..core.shape import fmt
from .._tensor import Tensor
from . import functional as F
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    """Normalise over the trailing normalized_shape dims; weight 1 and bias 0 at first."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True) -> None:
        super().__init__()
        shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                 else tuple(normalized_shape))
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        self.weight = Parameter(ones(*shape)) if elementwise_affine else None
        self.bias = Parameter(zeros(*shape)) if elementwise_affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class _PerChannelNorm(Module):
    """What batch and instance norm share: a per-channel weight and bias (affine), and
    running statistics with their step counter (track_running_stats)."""

    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(self, num_features: int, eps: float, momentum: float | None, affine: bool,
                 track_running_stats: bool, bias: bool) -> None:
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
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, bias)

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


class GroupNorm(Module):
    """group_norm over num_groups groups of channels; weight 1 and bias 0 per channel."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, *, bias: bool = True) -> None:
        super().__init__()
        if num_groups < 1 or num_channels % num_groups:
            raise ShrewError(f"GroupNorm: num_channels {num_channels} must be divisible by "
                             f"num_groups {num_groups}")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        self.weight = Parameter(ones(num_channels)) if affine else None
        self.bias = Parameter(zeros(num_channels)) if affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(_PerChannelNorm):
    """instance_norm of batched or unbatched input; optional affine weights and running
    statistics (used in eval() when track_running_stats)."""

    spatial = 0
    momentum: float  # an instance norm always has one
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, bias)

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


class RMSNorm(Module):
    """rms_norm over the trailing normalized_shape dims; weight 1 at first."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True) -> None:
        super().__init__()
        shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                 else tuple(normalized_shape))
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        self.weight = Parameter(ones(*shape)) if elementwise_affine else None

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """local_response_norm over `size` neighbouring channels."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x: Tensor) -> Tensor:
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
