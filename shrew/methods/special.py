"""Tensor's special-function methods (ops/special.py) and their in-place forms."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ops import inplace as _inplace
from ..ops import special as _special

if TYPE_CHECKING:
    from .._tensor import Tensor


class SpecialMethods:
    """lgamma, digamma, polygamma, mvlgamma, igamma, igammac, i0, sinc, and their `_` forms."""

    __slots__ = ()

    def lgamma(self: Any) -> Tensor: return _special.lgamma(self)
    def digamma(self: Any) -> Tensor: return _special.digamma(self)
    def polygamma(self: Any, n: int) -> Tensor: return _special.polygamma(n, self)
    def mvlgamma(self: Any, p: int) -> Tensor: return _special.mvlgamma(self, p)
    def igamma(self: Any, other: Tensor) -> Tensor: return _special.igamma(self, other)
    def igammac(self: Any, other: Tensor) -> Tensor: return _special.igammac(self, other)

    def lgamma_(self: Any) -> Tensor: return _inplace.write_(self, "lgamma_", _special.lgamma)
    def digamma_(self: Any) -> Tensor: return _inplace.write_(self, "digamma_", _special.digamma)

    def polygamma_(self: Any, n: int) -> Tensor:
        return _inplace.write_(self, "polygamma_", lambda x: _special.polygamma(n, x))

    def mvlgamma_(self: Any, p: int) -> Tensor:
        return _inplace.write_(self, "mvlgamma_", lambda x: _special.mvlgamma(x, p))

    def igamma_(self: Any, other: Tensor) -> Tensor:
        return _inplace.write_(self, "igamma_", lambda x: _special.igamma(x, other),
                               sources=(other,))

    def igammac_(self: Any, other: Tensor) -> Tensor:
        return _inplace.write_(self, "igammac_", lambda x: _special.igammac(x, other),
                               sources=(other,))
