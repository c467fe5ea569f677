"""In-place initialisers, drawn from the tensor's own device generator (shrew.manual_seed
makes them reproducible)."""
from __future__ import annotations

import math

from typing import TypeVar

from ..errors import ShapeError
from ..ops.creation import full
from ..ops.random import rand, randn
from ..grad_mode import no_grad
from ..shape import fmt
from ..tensor import Tensor
from .parameter import assign_

_T = TypeVar("_T", bound=Tensor)


def uniform_(t: _T, a: float = 0.0, b: float = 1.0) -> _T:
    """Fill t in place with U(a, b) samples; returns t."""
    with no_grad():
        assign_(t, rand(*t.shape, dtype=t.dtype, device=t.device) * (b - a) + a)
    return t


def normal_(t: _T, mean: float = 0.0, std: float = 1.0) -> _T:
    """Fill t in place with N(mean, std**2) samples; returns t."""
    with no_grad():
        assign_(t, randn(*t.shape, dtype=t.dtype, device=t.device) * std + mean)
    return t


def constant_(t: _T, value: float) -> _T:
    """Fill t in place with value; returns t."""
    with no_grad():
        assign_(t, full(t.shape, value, dtype=t.dtype, device=t.device))
    return t


def zeros_(t: _T) -> _T:
    """Fill t in place with zeros; returns t."""
    return constant_(t, 0.0)


def ones_(t: _T) -> _T:
    """Fill t in place with ones; returns t."""
    return constant_(t, 1.0)


def fans(t: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight [out, in, *kernel], as PyTorch counts them."""
    if t.ndim < 2:
        raise ShapeError(f"init: fan in and fan out need a weight with at least 2 dims, "
                         f"got shape {fmt(t.shape)}")
    receptive = math.prod(t.shape[2:])
    return t.shape[1] * receptive, t.shape[0] * receptive


def xavier_uniform_(t: _T, gain: float = 1.0) -> _T:
    """Glorot initialisation: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = fans(t)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)


def kaiming_uniform_(t: _T, a: float = 0.0) -> _T:
    """He initialisation for a leaky ReLU of negative slope `a` (fan_in mode)."""
    fan_in, _ = fans(t)
    bound = math.sqrt(2.0 / (1.0 + a * a)) * math.sqrt(3.0 / fan_in)
    return uniform_(t, -bound, bound)
