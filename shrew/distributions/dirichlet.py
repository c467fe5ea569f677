"""Dirichlet(concentration): a distribution over the probability simplex."""
from __future__ import annotations

from typing import Any

import shrew
import shrew.nn.functional as F
from ..core.shape import Size
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from . import constraints
from ._gamma_sampler import rsample_standard_gamma
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution with concentration (..., K): density
    prod x_i^(a_i - 1) / B(a) on the K-simplex.

    rsample normalises K independent Gamma(a_i, 1) draws, each differentiable through the
    implicit gamma gradient; torch instead differentiates each coordinate through its
    Beta marginal's CDF.  Both are unbiased reparameterisation gradients of the same
    expectations, but a single draw's gradient differs between them."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        concentration = self.concentration.expand(shape)
        gammas = rsample_standard_gamma(concentration)
        draws = gammas / gammas.sum(-1, keepdim=True)
        # keep coordinates inside (0, 1), as torch does
        finfo = shrew.finfo(draws.dtype)
        draws.detach().clamp_(min=finfo.tiny, max=1 - finfo.eps)
        return draws

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (shrew.xlogy(self.concentration - 1.0, value).sum(-1)
                + shrew.lgamma(self.concentration.sum(-1))
                - shrew.lgamma(self.concentration).sum(-1))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # where every concentration is below 1 the density peaks at the largest one's vertex
        all_below_one = (self.concentration < 1).all(-1, keepdim=True)
        vertex = F.one_hot(mode.argmax(-1), concentrationm1.shape[-1]).to(mode.dtype)
        return where(all_below_one, vertex, mode)

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, True)
        return (self.concentration * (con0 - self.concentration)
                / (con0.pow(2) * (con0 + 1)))

    def entropy(self) -> Tensor:
        k = self.concentration.shape[-1]
        a0 = self.concentration.sum(-1)
        return (shrew.lgamma(self.concentration).sum(-1) - shrew.lgamma(a0)
                - (k - a0) * shrew.digamma(a0)
                - ((self.concentration - 1.0) * shrew.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.concentration,)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        (x,) = natural_params
        return shrew.lgamma(x).sum(-1) - shrew.lgamma(x.sum(-1))
