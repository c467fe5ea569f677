"""HalfCauchy(scale): |X| for X ~ Cauchy(0, scale)."""
from __future__ import annotations

import math
from typing import Any

import shrew
from .._tensor import Tensor
from . import constraints
from ._folded import FoldedAtZero
from .cauchy import Cauchy
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(FoldedAtZero):
    """The half-Cauchy distribution: a Cauchy(0, scale) folded onto x >= 0 (infinite
    mean)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base_dist: Cauchy

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        return shrew.full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                          device=self.scale.device)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance
