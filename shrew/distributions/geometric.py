"""Geometric(probs= or logits=): the number of failures before the first success."""
from __future__ import annotations

from typing import Any

import shrew
import shrew.nn.functional as F
from ..core.shape import Size
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from . import constraints
from ._probs_or_logits import (BinaryProbsLogits, expand_given_probs_or_logits,
                               given_probs_or_logits)
from ._scalar_params import batch_shape_of
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Geometric"]


class Geometric(BinaryProbsLogits, Distribution):
    """P(k) = (1 - p)^k p for k = 0, 1, 2, ... with p = probs (or sigmoid(logits))."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        name, given = given_probs_or_logits(probs, logits)
        (param,) = broadcast_all(given)
        setattr(self, name, param)  # shadows that lazy property; the other stays lazy
        super().__init__(batch_shape_of((given,), param), validate_args=validate_args)
        if self._validate_args and probs is not None:
            # p = 0 never succeeds: beyond unit_interval, torch asks for p > 0
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{value[~valid]}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        expand_given_probs_or_logits(self, new, batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return shrew.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = shrew.finfo(self.probs.dtype).tiny
        with shrew.no_grad():
            u = shrew.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()  # inversion of the CDF

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 at k = 0: 0 * log(0) is 0, not nan
        probs = where((probs == 1) & (value == 0), shrew.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs
