"""Gamma(concentration, rate)."""
from __future__ import annotations

from typing import Any

import shrew
from .._tensor import Tensor
from . import constraints
from ._gamma_sampler import rsample_standard_gamma
from ._scalar_params import batch_shape_of, expand_params
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """The gamma distribution, density rate^a x^(a-1) exp(-rate x) / Gamma(a) with
    a = concentration.  rsample is differentiable in both parameters (the concentration
    through the implicit gradient of the gamma CDF, see _gamma_sampler)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(batch_shape_of((concentration, rate), self.concentration),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return expand_params(self, Gamma, ("concentration", "rate"), batch_shape, _instance)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = rsample_standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # keep draws off zero (the log density there is -inf), as torch does, in place so
        # the gradient path is untouched
        value.detach().clamp_(min=shrew.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value: Tensor) -> Tensor:
        value = shrew.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (shrew.xlogy(self.concentration, self.rate)
                + shrew.xlogy(self.concentration - 1, value)
                - self.rate * value - shrew.lgamma(self.concentration))

    def entropy(self) -> Tensor:
        return (self.concentration - self.rate.log() + shrew.lgamma(self.concentration)
                + (1.0 - self.concentration) * shrew.digamma(self.concentration))

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x, y = natural_params
        return shrew.lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return shrew.igamma(self.concentration, self.rate * value)
