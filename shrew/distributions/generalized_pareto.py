"""GeneralizedPareto(loc, scale, concentration)."""
from __future__ import annotations

import math
from typing import Any

import shrew
from ..core.shape import Size
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from . import constraints
from ._scalar_params import batch_shape_of, expand_params
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Survival function (1 + c z)^(-1/c), z = (x - loc) / scale, for concentration c
    (exp(-z) at c = 0): exponential tails at c = 0, heavy ones for c > 0, a bounded
    support [loc, loc - scale / c] for c < 0.  rsample inverts the CDF."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(batch_shape_of((loc, scale, concentration), self.loc),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return expand_params(self, GeneralizedPareto, ("loc", "scale", "concentration"),
                             batch_shape, _instance)

    def _zero_and_safe(self) -> tuple[Tensor, Tensor]:
        """Where the concentration is (close to) 0, and the concentration with 1 there
        (so that the c != 0 forms stay finite where they are not used)."""
        c = self.concentration
        zero = shrew.isclose(c, shrew.zeros_like(c))
        return zero, where(zero, 1.0, c)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = shrew.rand(Size(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, safe = self._zero_and_safe()
        y = 1 / safe + shrew.ones_like(z)
        nonzero = where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - where(zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, safe = self._zero_and_safe()
        return where(zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        zero, safe = self._zero_and_safe()
        log_survival = (-value).log1p()
        nonzero = self.loc + self.scale / safe * (-safe * log_survival).expm1()
        return where(zero, self.loc - self.scale * log_survival, nonzero)

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
