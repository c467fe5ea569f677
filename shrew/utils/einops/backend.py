"""The einops backend for shrew tensors (mirrors einops' own torch backend)."""
from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from einops._backends import AbstractBackend

import shrew

# einops' reductions with a multi-dim form in shrew; the others reduce one dim at a time.
_MULTI_DIM = {"min": "amin", "max": "amax", "sum": "sum", "mean": "mean"}


class ShrewBackend(AbstractBackend):
    """Found by einops' ``get_backend`` for any :class:`shrew.Tensor`."""

    framework_name = "shrew"

    def is_appropriate_type(self, tensor: Any) -> bool:
        return isinstance(tensor, shrew.Tensor)

    def from_numpy(self, x: np.ndarray) -> shrew.Tensor:
        tensor = shrew.from_numpy(x)
        if self.is_float_type(tensor):
            tensor.requires_grad_(True)
        return tensor

    def to_numpy(self, x: shrew.Tensor) -> np.ndarray:
        return np.asarray(x.detach().cpu().numpy())

    def arange(self, start: int, stop: int) -> shrew.Tensor:
        return shrew.arange(start, stop, dtype=shrew.int64)

    def reduce(self, x: shrew.Tensor, operation: str, axes: Sequence[int]) -> shrew.Tensor:
        if operation in _MULTI_DIM:
            return getattr(x, _MULTI_DIM[operation])(dim=tuple(axes))
        if operation in ("any", "all", "prod"):
            for axis in sorted(axes, reverse=True):
                x = getattr(x, operation)(dim=axis)
            return x
        raise shrew.UnsupportedError(f"einops reduce: unknown reduction {operation!r} "
                                     f"(use min, max, sum, mean, prod, any or all)")

    def transpose(self, x: shrew.Tensor, axes: Sequence[int]) -> shrew.Tensor:
        return x.permute(*axes)

    def stack_on_zeroth_dimension(self, tensors: list[shrew.Tensor]) -> shrew.Tensor:
        return shrew.stack(tensors)

    def add_axes(self, x: shrew.Tensor, n_axes: int, pos2len: dict[int, int]) -> shrew.Tensor:
        # expand, not tile: repeat's new axes stay broadcast views as in torch
        sizes = [-1] * n_axes
        for position, length in pos2len.items():
            x = x.unsqueeze(position)
            sizes[position] = length
        return x.expand(*sizes)

    def tile(self, x: shrew.Tensor, repeats: Sequence[int]) -> shrew.Tensor:
        return x.repeat(*repeats)

    def concat(self, tensors: list[shrew.Tensor], axis: int) -> shrew.Tensor:
        return shrew.cat(tensors, dim=axis)

    def add_axis(self, x: shrew.Tensor, new_position: int) -> shrew.Tensor:
        return x.unsqueeze(new_position)

    def is_float_type(self, x: shrew.Tensor) -> bool:
        return x.dtype.is_floating_point

    def layers(self) -> ModuleType:
        from . import layers
        return layers

    def einsum(self, pattern: str, *x: shrew.Tensor) -> shrew.Tensor:
        return shrew.einsum(pattern, *x)


def _alias_layers() -> None:
    """Make ``from einops.layers.shrew import Rearrange`` work, as for einops' frameworks."""
    from . import layers
    sys.modules.setdefault("einops.layers.shrew", layers)


_alias_layers()
