"""Laplace(loc, scale)."""
from __future__ import annotations

from typing import Any

import shrew
from .._tensor import Tensor
from . import constraints
from ._location import MeanAndModeAtLoc
from ._scalar_params import batch_shape_of, expand_params
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(MeanAndModeAtLoc, Distribution):
    """The Laplace (double exponential) distribution, density exp(-|x - loc| / scale) /
    (2 scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2 ** 0.5) * self.scale

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(batch_shape_of((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        return expand_params(self, Laplace, ("loc", "scale"), batch_shape, _instance)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        finfo = shrew.finfo(self.loc.dtype)
        # u uniform on (-1, 1), kept off -1 so that log1p(-|u|) stays finite
        u = shrew.rand(shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - finfo.eps)
        u = u + (finfo.eps - 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs()
                                                         / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


