"""FisherSnedecor(df1, df2): the F distribution."""
from __future__ import annotations

from typing import Any

import shrew
from ..core.shape import Size
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from . import constraints
from ._scalar_params import batch_shape_of
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The ratio of two independent chi-squared variables, each over its degrees of
    freedom; rsample is differentiable in both (through the implicit gamma gradient)."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        # chi2(d) / d is Gamma(d / 2, rate d / 2); both rates doubled cancel in the ratio
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(batch_shape_of((df1, df2), self.df1), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FisherSnedecor:
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return where(self.df2 <= 2, float("nan"), self.df2 / (self.df2 - 2))

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, float("nan"), mode)

    @property
    def variance(self) -> Tensor:
        d1, d2 = self.df1, self.df2
        variance = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return where(d2 <= 4, float("nan"), variance)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = shrew.finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        x2.detach().clamp_(min=tiny)
        ratio = x1 / x2
        ratio.detach().clamp_(min=tiny)
        return ratio

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_norm = shrew.lgamma(half1 + half2) - shrew.lgamma(half1) - shrew.lgamma(half2)
        return (log_norm + half1 * ratio.log() + (half1 - 1) * value.log()
                - (half1 + half2) * (ratio * value).log1p())
