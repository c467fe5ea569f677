"""VonMises(loc, concentration): the circular normal distribution."""
from __future__ import annotations

import math
from typing import Any

import shrew
from ..core.errors import StateError
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from . import constraints
from ._location import MeanAndModeAtLoc
from ._gamma_sampler import _wide
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

_MAX_ROUNDS = 1000  # each round accepts with probability above 0.65: never reached


def _log_i0(x: Tensor) -> Tensor:
    """log I0(x) for x > 0, from the exponentially scaled Bessel function."""
    return shrew.special.i0e(x).log() + x


def _log_i1(x: Tensor) -> Tensor:
    return shrew.special.i1e(x).log() + x


class VonMises(MeanAndModeAtLoc, Distribution):
    """Density exp(concentration cos(x - loc)) / (2 pi I0(concentration)) on angles;
    loc and values may be any real (read modulo 2 pi), samples lie in [-pi, pi).  mean and
    variance are the circular ones.  Sampled by Best and Fisher's rejection method (1979),
    on the device, in float64 where the device has it."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        validate_args = self.__dict__.get("_validate_args")
        return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                          validate_args=validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_i0(self.concentration))

    @lazy_property
    def _proposal_r(self) -> Tensor:
        """Best and Fisher's r = (1 + rho^2) / (2 rho) of the wrapped-Cauchy envelope
        (1 / kappa + kappa for tiny kappa, where the closed form cancels)."""
        kappa = _wide(self.concentration.detach())
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
        return where(kappa < 1e-5, 1 / kappa + kappa, r)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with shrew.no_grad():
            r = self._proposal_r.expand(shape)
            kappa = _wide(self.concentration.detach()).expand(shape)
            angle = shrew.zeros(shape, dtype=r.dtype, device=r.device)
            done = shrew.zeros(shape, dtype=shrew.bool, device=r.device)
            for _ in range(_MAX_ROUNDS):
                if bool(done.all()):
                    loc = _wide(self.loc.detach())
                    wrapped = (angle + math.pi + loc).remainder(2 * math.pi) - math.pi
                    return wrapped.to(dtype=self.loc.dtype)
                u1, u2, u3 = shrew.rand((3,) + tuple(shape), dtype=r.dtype,
                                        device=r.device).unbind(0)
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                take = accept & ~done
                angle = where(take, (u3 - 0.5).sign() * f.acos(), angle)
                done = done | accept
        raise StateError("VonMises.sample: rejection sampling did not finish; are some "
                         "concentrations nan?")

    @lazy_property
    def variance(self) -> Tensor:
        return 1 - (_log_i1(self.concentration) - _log_i0(self.concentration)).exp()
