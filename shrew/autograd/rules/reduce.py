"""Gradient rules of the reduce family (ops/reduce.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...ops.creation import zeros_like
from ...ops.elementwise.composed import isnan
from ...ops.elementwise.recorded import where
from ...core.shape import numel, reduced_shape

if TYPE_CHECKING:
    from ..._tensor import Tensor


def reduce_grad(fn: str, x: Tensor, dims: tuple[int, ...], y: Tensor, g: Tensor,
                keepdim: bool) -> Tensor:
    """sum and mean spread g back over the reduced dims; the extremes give it to the
    elements equal to the result, ties sharing it equally, as PyTorch's two rules:
    max and min (evenly_distribute_backward) give a NaN result's g to the NaNs; amax and
    amin (scale_grad_by_count) divide g by a count of 0 there, so a slice whose result is
    NaN gets NaN everywhere."""
    keep = tuple(1 if i in dims else s for i, s in enumerate(x.shape))
    if fn == "sum":
        return _expand(g, keep, x.shape)
    if fn == "mean":
        count = max(numel(x.shape[d] for d in dims), 1)  # empty x: empty gradient
        return _expand(g, keep, x.shape) * (1.0 / count)
    y = y.reshape(*keep)
    hit = x == y
    if fn in ("max", "min"):
        if x.dtype.is_floating_point:
            hit = hit | (isnan(x) & isnan(y))
        share = hit.to_dtype(x.dtype).sum(dims, keepdim=True)
        return where(hit, g.reshape(*keep) / share, 0.0)
    share = hit.to_dtype(x.dtype).sum(dims, keepdim=True)
    return g.reshape(*keep) / share * hit.to_dtype(x.dtype)


def _expand(grad: Tensor, keep_shape: tuple[int, ...], shape: tuple[int, ...]) -> Tensor:
    """A reduced gradient (with keepdim dims restored) broadcast back to `shape`."""
    return grad.reshape(*keep_shape).expand(*shape)


def vector_norm_grad(x: Tensor, y: Tensor, g: Tensor, p: float, dims: tuple) -> Tensor:
    """d ||x||_p / dx = sign(x) |x|^(p-1) / ||x||^(p-1), and 0 where the norm is 0 (the
    subgradient PyTorch picks)."""
    keep = reduced_shape(x.shape, dims, True)
    norm, g = y.reshape(*keep), g.reshape(*keep)
    if p == 0:  # a count of nonzeros
        return zeros_like(x)
    if p == 1:
        return g * x.sign()
    zero = norm == 0
    scale = where(zero, 0.0, g / where(zero, 1.0, norm if p == 2 else norm.powf(p - 1)))
    if p == 2:
        return scale * x
    # |x|^(p-1) from 1 where x is 0 (then sign(x) = 0 gives 0, not 0 * inf for p < 1)
    return scale * x.sign() * where(x == 0, 1.0, x.abs()).powf(p - 1)
