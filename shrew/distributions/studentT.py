"""StudentT(df, loc=0, scale=1)."""
from __future__ import annotations

import math
from typing import Any

import shrew
from ..core.shape import Size
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from . import constraints
from ._scalar_params import batch_shape_of
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with df degrees of freedom, shifted by loc and scaled by scale.
    rsample is a Normal draw over the root of a Chi2(df) / df draw, differentiable in all
    three parameters (df through the implicit gamma gradient)."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return where(self.df <= 1, float("nan"), self.loc)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        variance = where(self.df > 2, finite, float("inf"))
        return where(self.df <= 1, float("nan"), variance)

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(batch_shape_of((df, loc, scale), self.df), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        # X ~ Normal(0, 1), Z ~ Chi2(df), Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        X = shrew.randn(shape, dtype=self.df.dtype, device=self.df.device)  # noqa: N806
        Z = self._chi2.rsample(sample_shape)  # noqa: N806
        Y = X * (self.df / Z).sqrt()  # noqa: N806
        return self.loc + self.scale * Y

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)  # noqa: N806
             + shrew.lgamma(0.5 * self.df) - shrew.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - Z

    def entropy(self) -> Tensor:
        lbeta = (shrew.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - shrew.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (shrew.digamma(0.5 * (self.df + 1))
                                         - shrew.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
