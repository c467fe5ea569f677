"""Tensor's special-function methods (ops/special.py) and their in-place forms."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ops import inplace as _inplace
from ..ops import special as _special
from ..ops.elementwise import composed as _pointwise

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import Scalar


class SpecialMethods:
    """lgamma, digamma, polygamma, mvlgamma, igamma, igammac, i0, sinc, and their `_` forms
    (and those of erf, erfc, erfinv, exp2, expm1, log1p, logit and xlogy)."""

    __slots__ = ()

    def lgamma(self: Any) -> Tensor: return _special.lgamma(self)
    def digamma(self: Any) -> Tensor: return _special.digamma(self)
    def polygamma(self: Any, n: int) -> Tensor: return _special.polygamma(n, self)
    def mvlgamma(self: Any, p: int) -> Tensor: return _special.mvlgamma(self, p)
    def igamma(self: Any, other: Tensor) -> Tensor: return _special.igamma(self, other)
    def igammac(self: Any, other: Tensor) -> Tensor: return _special.igammac(self, other)
    def i0(self: Any) -> Tensor: return _special.i0(self)
    def sinc(self: Any) -> Tensor: return _special.sinc(self)

    def lgamma_(self: Any) -> Tensor: return _inplace.write_(self, "lgamma_", _special.lgamma)
    def digamma_(self: Any) -> Tensor: return _inplace.write_(self, "digamma_", _special.digamma)
    def i0_(self: Any) -> Tensor: return _inplace.write_(self, "i0_", _special.i0)
    def sinc_(self: Any) -> Tensor: return _inplace.write_(self, "sinc_", _special.sinc)

    def polygamma_(self: Any, n: int) -> Tensor:
        return _inplace.write_(self, "polygamma_", lambda x: _special.polygamma(n, x))

    def mvlgamma_(self: Any, p: int) -> Tensor:
        return _inplace.write_(self, "mvlgamma_", lambda x: _special.mvlgamma(x, p))

    def igamma_(self: Any, other: Tensor) -> Tensor:
        return _inplace.write_(self, "igamma_", lambda x: _special.igamma(x, other),
                               sources=(other,))

    # the in-place forms of torch.special's other functions
    def erf_(self: Any) -> Tensor: return _inplace.write_(self, "erf_", _special.erf)
    def erfc_(self: Any) -> Tensor: return _inplace.write_(self, "erfc_", _special.erfc)
    def erfinv_(self: Any) -> Tensor: return _inplace.write_(self, "erfinv_", _special.erfinv)
    def exp2_(self: Any) -> Tensor: return _inplace.write_(self, "exp2_", _special.exp2)
    def expm1_(self: Any) -> Tensor: return _inplace.write_(self, "expm1_", _special.expm1)
    def log1p_(self: Any) -> Tensor: return _inplace.write_(self, "log1p_", _special.log1p)

    def logit_(self: Any, eps: float | None = None) -> Tensor:
        return _inplace.write_(self, "logit_", lambda x: _special.logit(x, eps))

    def xlogy_(self: Any, other: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "xlogy_", lambda x: _pointwise.xlogy(x, other),
                               sources=(other,))

    def igammac_(self: Any, other: Tensor) -> Tensor:
        return _inplace.write_(self, "igammac_", lambda x: _special.igammac(x, other),
                               sources=(other,))
