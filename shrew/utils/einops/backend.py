"""The einops backend for shrew tensors (mirrors einops' own torch backend)."""
from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from einops._backends import AbstractBackend

from ..._tensor import Tensor
from ...core.dtype import int64
from ...core.errors import UnsupportedError
from ...ops.creation import arange, from_numpy
from ...ops.linalg.einsum import einsum
from ...ops.shape.recorded import cat, stack

# einops' reductions with a multi-dim form in shrew; the others reduce one dim at a time.
_MULTI_DIM = {"min": "amin", "max": "amax", "sum": "sum", "mean": "mean"}


class ShrewBackend(AbstractBackend):
    """Found by einops' ``get_backend`` for any :class:`Tensor`."""

    framework_name = "shrew"

    def is_appropriate_type(self, tensor: Any) -> bool:
        return isinstance(tensor, Tensor)

    def from_numpy(self, x: np.ndarray) -> Tensor:
        tensor = from_numpy(x)
        if self.is_float_type(tensor):
            tensor.requires_grad_(True)
        return tensor

    def to_numpy(self, x: Tensor) -> np.ndarray:
        return np.asarray(x.detach().cpu().numpy())

    def arange(self, start: int, stop: int) -> Tensor:
        return arange(start, stop, dtype=int64)

    def reduce(self, x: Tensor, operation: str, axes: Sequence[int]) -> Tensor:
        if operation in _MULTI_DIM:
            return getattr(x, _MULTI_DIM[operation])(dim=tuple(axes))
        if operation in ("any", "all", "prod"):
            for axis in sorted(axes, reverse=True):
                x = getattr(x, operation)(dim=axis)
            return x
        raise UnsupportedError(f"einops reduce: unknown reduction {operation!r} "
                               f"(use min, max, sum, mean, prod, any or all)")

    def transpose(self, x: Tensor, axes: Sequence[int]) -> Tensor:
        return x.permute(*axes)

    def stack_on_zeroth_dimension(self, tensors: list[Tensor]) -> Tensor:
        return stack(tensors)

    def add_axes(self, x: Tensor, n_axes: int, pos2len: dict[int, int]) -> Tensor:
        # expand, not tile: repeat's new axes stay broadcast views as in torch
        sizes = [-1] * n_axes
        for position, length in pos2len.items():
            x = x.unsqueeze(position)
            sizes[position] = length
        return x.expand(*sizes)

    def tile(self, x: Tensor, repeats: Sequence[int]) -> Tensor:
        return x.repeat(*repeats)

    def concat(self, tensors: list[Tensor], axis: int) -> Tensor:
        return cat(tensors, dim=axis)

    def add_axis(self, x: Tensor, new_position: int) -> Tensor:
        return x.unsqueeze(new_position)

    def is_float_type(self, x: Tensor) -> bool:
        return x.dtype.is_floating_point

    def layers(self) -> ModuleType:
        from . import layers
        return layers

    def einsum(self, pattern: str, *x: Tensor) -> Tensor:
        return einsum(pattern, *x)


def _alias_layers() -> None:
    """Make ``from einops.layers.shrew import Rearrange`` work, as for einops' frameworks."""
    from . import layers
    sys.modules.setdefault("einops.layers.shrew", layers)


_alias_layers()
