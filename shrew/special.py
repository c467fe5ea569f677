"""torch.special's counterpart: the functions of ops/special.py under their torch.special
names, and the ones that are other ops of shrew (erf, expit, logsumexp, softmax, ...)."""
from __future__ import annotations

from .ops.special import (digamma, igamma as gammainc, igammac as gammaincc,
                          lgamma as gammaln, mvlgamma as multigammaln, polygamma, zeta)

psi = digamma

__all__ = ["digamma", "gammainc", "gammaincc", "gammaln", "multigammaln", "polygamma", "psi",
           "zeta"]
