"""Gradient rules of the index family (ops/index/recorded.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...ops.creation import zeros_like
from ...ops.elementwise.recorded import where
from ...ops.index.recorded import scatter_unchecked as scatter
from .common import InputGrads

if TYPE_CHECKING:
    from ..._tensor import Tensor


def scatter_grads(dst: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, y: Tensor,
                  g: Tensor) -> InputGrads:
    """Scatter's rules, as torch defines them: a store passes g to the entries it kept and
    to every src entry; prod divides the result by each factor (a lone zero factor gets
    the product of the others instead); amax/amin split g evenly among tied maxima."""
    if reduce == "none":
        return ((dst, scatter(g, dim, index, zeros_like(src), "none")), (src, g.gather(dim, index)))
    if reduce == "sum":
        return ((dst, g), (src, g.gather(dim, index)))
    if reduce == "prod":
        dst_nonzero = where(dst == 0, 1.0, dst)
        without_dst = scatter(dst_nonzero, dim, index, src, "prod") / dst_nonzero
        src_zero = src == 0
        zeros_at = scatter(zeros_like(dst), dim, index, src_zero.to_dtype(dst.dtype), "sum")
        lone_zero = where(src_zero, zeros_at.gather(dim, index) == 1, False)
        others = scatter(dst, dim, index, where(lone_zero, 1.0, src), "prod")
        grad_src = where(lone_zero, (g * others).gather(dim, index),
                         (g * y).gather(dim, index) / where(src_zero, 1.0, src))
        return ((dst, g * without_dst), (src, grad_src))
    dst_is = (dst == y).to_dtype(g.dtype)  # amax, amin: the entries equal to the result
    src_is = (src == y.gather(dim, index)).to_dtype(g.dtype)
    share = g / scatter(dst_is, dim, index, src_is, "sum")
    return ((dst, dst_is * share), (src, src_is * share.gather(dim, index)))
