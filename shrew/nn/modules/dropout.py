"""The dropout layers: each applies its function of shrew.nn.functional while training."""
from __future__ import annotations

from collections.abc import Callable

from ...core.errors import ShrewValueError
from ..._tensor import Tensor
from .. import functional as F
from .module import Module


__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class Dropout(Module):
    """Zeroes elements with probability p while training; the identity in eval()."""

    function: Callable[..., Tensor] = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ShrewValueError(f"{type(self).__name__}: p must lie in [0, 1], got {p!r}")
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return type(self).function(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zeroes whole channels of [N, C, L] (or [C, L]) while training."""

    function = staticmethod(F.dropout1d)


class Dropout2d(Dropout):
    """Zeroes whole channels of [N, C, H, W] (or [C, H, W]) while training."""

    function = staticmethod(F.dropout2d)


class Dropout3d(Dropout):
    """Zeroes whole channels of [N, C, D, H, W] (or [C, D, H, W]) while training."""

    function = staticmethod(F.dropout3d)


class AlphaDropout(Dropout):
    """Alpha dropout for SELU networks (keeps mean and variance) while training."""

    function = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels while training."""

    function = staticmethod(F.feature_alpha_dropout)
