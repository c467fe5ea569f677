"""torch.special's counterpart: the functions of ops/special.py under their torch.special
names, and the ones that are other ops of shrew (erf, expit, logsumexp, softmax, ...)."""
from __future__ import annotations

from ._tensor import Tensor
from .ops.elementwise.composed import round  # noqa: A004  (torch's name)
from .ops.norm import log_softmax_function as log_softmax, softmax_function as softmax
from .ops.special import (
    airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, chebyshev_polynomial_t,
    chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w, digamma, entr,
    erf, erfc, erfcx, erfinv, exp2, expit, expm1, log1p, logit, logsumexp, xlogy,
    hermite_polynomial_h, hermite_polynomial_he, i0, i0e, i1, i1e,
    igamma as gammainc, igammac as gammaincc, laguerre_polynomial_l, legendre_polynomial_p,
    lgamma as gammaln, log_ndtr, modified_bessel_i0, modified_bessel_i1, modified_bessel_k0,
    modified_bessel_k1, mvlgamma as multigammaln, ndtr, ndtri, polygamma,
    scaled_modified_bessel_k0, scaled_modified_bessel_k1, shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w, sinc, spherical_bessel_j0, xlog1py, zeta)

psi = digamma

__all__ = [
    "Tensor", "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
    "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1",
    "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
    "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma",
    "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
