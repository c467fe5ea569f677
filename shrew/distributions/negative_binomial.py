"""NegativeBinomial(total_count, probs= or logits=)."""
from __future__ import annotations

from typing import Any

import shrew
import shrew.nn.functional as F
from ..core.shape import Size
from .._tensor import Tensor
from . import constraints
from ._poisson_sampler import poisson
from ._probs_or_logits import (BinaryProbsLogits, ProbsOrLogitsParam,
                               given_probs_or_logits)
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbsLogits, ProbsOrLogitsParam, Distribution):
    """The number of successes (each of probability probs) before total_count failures.
    Samples are Poisson draws at Gamma(total_count, exp(-logits)) rates, on the device."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        name, given = given_probs_or_logits(probs, logits)
        total_count, param = broadcast_all(total_count, given)
        self.total_count = total_count.type_as(param)
        self._hold_param(name, param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_param_into(new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self) -> Gamma:
        # unvalidated: total_count may be 0
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with shrew.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return poisson(rate)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * F.logsigmoid(-self.logits)
                                 + value * F.logsigmoid(self.logits))
        log_normalization = (-shrew.lgamma(self.total_count + value) + shrew.lgamma(1.0 + value)
                             + shrew.lgamma(self.total_count))
        # total_count = 0 and value = 0 has probability 1 (lgamma(0) is infinite)
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
