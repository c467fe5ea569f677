"""Normalisation layers: LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm (batch and
instance norm: batchnorm.py, instancenorm.py)."""
from __future__ import annotations

from collections.abc import Sequence

from ...core.errors import ShrewValueError
from ...ops.creation import ones, zeros
from ...typing import DeviceLike, DTypeLike
from ..._tensor import Tensor
from .. import functional as F
from .module import Module, place
from ..parameter import Parameter


__all__ = ["LayerNorm", "GroupNorm", "LocalResponseNorm", "RMSNorm"]


class LayerNorm(Module):
    """Normalise over the trailing normalized_shape dims; weight 1 and bias 0 at first."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                 else tuple(normalized_shape))
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        self.weight = Parameter(ones(*shape)) if elementwise_affine else None
        self.bias = Parameter(zeros(*shape)) if elementwise_affine and bias else None
        place(self, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """group_norm over num_groups groups of channels; weight 1 and bias 0 per channel."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, *, bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        if num_groups < 1 or num_channels % num_groups:
            raise ShrewValueError(f"GroupNorm: num_channels {num_channels} must be divisible by "
                                  f"num_groups {num_groups}")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        self.weight = Parameter(ones(num_channels)) if affine else None
        self.bias = Parameter(zeros(num_channels)) if affine and bias else None
        place(self, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """rms_norm over the trailing normalized_shape dims; weight 1 at first."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                 else tuple(normalized_shape))
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        self.weight = Parameter(ones(*shape)) if elementwise_affine else None
        place(self, device, dtype)

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
