"""Multinomial(total_count, probs= or logits=): category counts over total_count draws."""
from __future__ import annotations

from typing import Any

import shrew
from ..core.shape import Size
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from . import constraints
from ._probs_or_logits import CategoricalProbsLogits
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(CategoricalProbsLogits, Distribution):
    """The counts of each of K categories in total_count independent Categorical draws
    (event_shape (K,)).  total_count is one int for the whole batch, as in torch; log_prob
    does not need it (any counts are scored)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(*self._categorical_shapes(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new.probs,
                                 validate_args=False)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        sample_shape = Size(sample_shape)
        with shrew.no_grad():
            # total_count category draws per member, counted along the last dim
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            draws = draws.movedim(0, -1)
            counts = shrew.zeros(self._extended_shape(sample_shape), dtype=draws.dtype,
                                 device=draws.device)
            counts = counts.scatter_add(-1, draws, shrew.ones_like(draws))
            return counts.to(self.probs.dtype)

    def entropy(self) -> Tensor:
        # H = n H(categorical) - log n! + sum_k E[log x_k!], each x_k ~ Binomial(n, p_k)
        n = float(self.total_count)
        term1 = n * self._categorical.entropy() - shrew.lgamma(
            shrew.full((), n + 1, dtype=self.probs.dtype, device=self.probs.device))
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = shrew.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum((0, -1))
        return term1 + term2

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = shrew.lgamma(value.sum(-1) + 1)
        log_factorial_xs = shrew.lgamma(value + 1).sum(-1)
        # a count of 0 of an impossible category contributes 0, not 0 * -inf
        logits = where((value == 0) & (logits == -float("inf")), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
