"""ContinuousBernoulli(probs= or logits=): the density proportional to
p^x (1 - p)^(1 - x) on [0, 1] (Loaiza-Ganem and Cunningham, 2019)."""
from __future__ import annotations

import math
import numbers
from typing import Any

import shrew
import shrew.nn.functional as F
from ..core.shape import Size
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from . import constraints
from ._probs_or_logits import ProbsOrLogitsParam, given_probs_or_logits
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ProbsOrLogitsParam, ExponentialFamily):
    """Density C(p) p^x (1 - p)^(1 - x) on [0, 1], C(p) = logit(p) / (2p - 1) (2 at
    p = 1/2).  The closed forms divide by 2p - 1: for p inside `lims` they are replaced
    by their Taylor expansions around 1/2.  rsample inverts the CDF."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        name, given = given_probs_or_logits(probs, logits)
        (param,) = broadcast_all(given)
        if name == "probs":
            # validated before clamping, which would hide values outside [0, 1]
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(param).all()):
                raise ValueError("The parameter probs has invalid values")
            param = clamp_probs(param)
        self._hold_param(name, param)
        batch_shape = Size() if isinstance(given, numbers.Number) else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        self._expand_param_into(new, batch_shape)
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        """probs, moved off the unstable region (where the Taylor forms are used instead)
        so that the closed forms stay finite there too."""
        return where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self) -> Tensor:
        """log C(p) = log|logit p| - log|2p - 1|; near 1/2, with d = (p - 1/2)^2,
        log 2 + 4/3 d + 104/45 d^2."""
        cut = self._cut_probs()
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - (2.0 * cut - 1.0).abs().log()
        d = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * d) * d
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        variances = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                     + 1.0 / ((-cut).log1p() - cut.log()).pow(2))
        d = (self.probs - 0.5).pow(2)
        # 1/12 - eta^2/240 + eta^4/6048 with eta = logit p = 4x + 16x^3/3, x = p - 1/2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 + 128.0 / 945.0 * d) * d
        return where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with shrew.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = shrew.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-F.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, 0.0, where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        inverted = (((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
                    / (cut.log() - (-cut).log1p()))
        return where(self._outside_unstable_region(), inverted, value)

    def entropy(self) -> Tensor:
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return (self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm()
                - log_probs0)

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.logits,)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        """log((e^x - 1) / x); near 0, x/2 + x^2/24 - x^4/2880."""
        (x,) = natural_params
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(outside, x, self._lims[0] - 0.5)
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)
