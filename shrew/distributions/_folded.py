"""What HalfNormal and HalfCauchy share: |X| for X of a location-0 family symmetric about
0, whose density, CDF and entropy follow from the base distribution's by the folding."""
from __future__ import annotations

import math
from typing import Any

import shrew
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from .transformed_distribution import TransformedDistribution

__all__ = ["FoldedAtZero"]


class FoldedAtZero(TransformedDistribution):
    """A base distribution with loc 0 folded onto x >= 0 by an AbsTransform; the subclass
    builds the base and gives the moments."""
    base_dist: Any

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return shrew.zeros_like(self.scale)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = shrew.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        # both halves of the base density land on x >= 0; nothing lands below
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
