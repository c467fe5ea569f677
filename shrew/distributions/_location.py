"""What the families centred on `loc` share."""
from __future__ import annotations

from .._tensor import Tensor

__all__ = ["MeanAndModeAtLoc"]


class MeanAndModeAtLoc:
    """mean and mode of a family whose density is symmetric and peaks at `loc` (on the
    line, the circle, or in R^n): both are loc itself."""
    loc: Tensor

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc
