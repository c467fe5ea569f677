"""Binomial draws on the device, exactly, by splitting on order statistics.

Bin(n, p) counts how many of n uniforms fall below p.  The k-th smallest of them, V, is
Beta(k, n + 1 - k); given V the others are uniform on either side of it.  So with
k = ceil(n / 2): if V < p, at least k fell below p, and the count among the n - k above V
is Bin(n - k, (p - V) / (1 - V)); else the count among the k - 1 below V is
Bin(k - 1, p / V).  Each round halves every count at once (a Beta draw from two gamma
draws, _gamma_sampler), so log2(n) rounds leave counts small enough to sum as Bernoulli
draws.  Everything stays on the tensors' device; the only host reads are one "any count
still large?" per round."""
from __future__ import annotations

import shrew
from ..ops.elementwise.recorded import where
from .._tensor import Tensor
from ._gamma_sampler import standard_gamma

_SMALL = 16  # counts up to this are summed from Bernoulli draws


def binomial(total_count: Tensor, probs: Tensor) -> Tensor:
    """Bin(total_count, probs) draws (elementwise, same shape), in probs' dtype."""
    with shrew.no_grad():
        n = total_count.detach().to(dtype=probs.dtype)
        p = probs.detach().clamp(min=0.0, max=1.0)
        count = shrew.zeros_like(p)
        while n.numel() and bool((n > _SMALL).any()):
            large = n > _SMALL
            k = ((n + 1) * 0.5).floor().clamp(min=1.0)
            g1 = standard_gamma(k)
            g2 = standard_gamma((n + 1 - k).clamp(min=1.0))
            v = g1 / (g1 + g2)  # the k-th smallest of n uniforms
            below = v < p
            count = count + where(large & below, k, 0.0)
            above_p = ((p - v) / (1 - v)).clamp(min=0.0, max=1.0)
            under_p = where(v > 0, p / v, 0.0).clamp(min=0.0, max=1.0)
            n = where(large, where(below, n - k, k - 1), n)
            p = where(large, where(below, above_p, under_p), p)
        trials = shrew.arange(_SMALL, dtype=p.dtype, device=p.device)
        u = shrew.rand(tuple(p.shape) + (_SMALL,), dtype=p.dtype, device=p.device)
        hits = (u < p.unsqueeze(-1)) & (trials < n.unsqueeze(-1))
        return count + hits.to(p.dtype).sum(-1)
