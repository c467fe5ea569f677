"""Poisson draws on the device, exactly (Ahrens and Dieter's gamma splitting).

The arrivals of a unit-rate Poisson process before time `rate` number Poisson(rate).  The
m-th arrival time X is Gamma(m): if X < rate, m arrivals came before X and the rest in
the remaining rate - X; else the first m - 1 arrivals are uniform on (0, X), so
Bin(m - 1, rate / X) of them fall before rate (_binomial_sampler).  With m = 7/8 of the
rate each round leaves about an eighth of it, for every element at once; small rates are
then counted directly, adding exponential gaps until they pass the rate.  Host reads: one
"anything left?" per round."""
from __future__ import annotations

import shrew
from ..core.errors import StateError
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from ._binomial_sampler import binomial
from ._gamma_sampler import standard_gamma

_SMALL = 16.0  # rates up to this are counted gap by gap
_ROUNDS_PER_CHECK = 8
_MAX_GAPS = 4000  # a rate of 16 passes 100 gaps with probability below 1e-40


def poisson(rate: Tensor) -> Tensor:
    """Poisson(rate) draws (elementwise), in rate's dtype and on its device."""
    with shrew.no_grad():
        remaining = rate.detach()
        count = shrew.zeros_like(remaining)
        large = remaining > _SMALL
        while remaining.numel() and bool(large.any()):
            m = (0.875 * remaining).floor().clamp(min=1.0)
            arrival = standard_gamma(m)  # the m-th arrival time
            before = arrival < remaining
            within = binomial(m - 1, (remaining / arrival).clamp(max=1.0))
            count = count + where(large, where(before, m, within), 0.0)
            remaining = where(large, where(before, remaining - arrival, 0.0), remaining)
            large = remaining > _SMALL
        elapsed = shrew.zeros_like(remaining)
        waiting = remaining > 0
        for gap in range(1, _MAX_GAPS + 1):
            u = shrew.rand(remaining.shape, dtype=remaining.dtype, device=remaining.device)
            elapsed = elapsed - (-u).log1p()  # plus an Exp(1) gap
            waiting = waiting & (elapsed < remaining)
            count = count + waiting.to(count.dtype)
            if gap % _ROUNDS_PER_CHECK == 0 and not bool(waiting.any()):
                return count
        raise StateError("poisson: counting did not finish; are some rates nan?")
