"""Flatten and Unflatten: the shape layers."""
from __future__ import annotations

from collections.abc import Sequence

from ...core.shape import normalize_dim
from ..._tensor import Tensor
from .module import Module


__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten dims start_dim..end_dim (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim `dim` into `unflattened_size` (one entry may be -1)."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        d = normalize_dim(self.dim, x.ndim, "Unflatten")
        return x.reshape(*x.shape[:d], *self.unflattened_size, *x.shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
