"""Gradient rules of the scan family (ops/scan.py), and the reversed and shifted scans they
are built from, which also give prod's gradient (autograd/engine.py's Reduce) and det's
(rules/linalg.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...ops.common import constant
from ...ops.creation import arange
from ...ops.elementwise.recorded import where
from ...ops.index.recorded import gather
from ...ops.scan import scan
from ...ops.shape.recorded import cat

if TYPE_CHECKING:
    from ..._tensor import Tensor


def cumsum_grad(g: Tensor, dim: int) -> Tensor:
    """cumsum's gradient: the reversed running sum of g (x_j reaches every y_i, i >= j)."""
    return reverse(scan("sum", reverse(g, dim), dim), dim)


def _log_share(w: Tensor, y: Tensor) -> Tensor:
    """log(w) - y where w > 0 and -inf elsewhere, never touching log(0) or y there: their
    infinite or NaN derivatives would leak into second derivatives through a product
    with zero."""
    positive = w > 0
    return where(positive, where(positive, w, 1.0).log() - y, float("-inf"))


def logcumsumexp_grad(x: Tensor, y: Tensor, g: Tensor, dim: int) -> Tensor:
    """d/dx_j of sum_i g_i y_i for y = logcumsumexp(x): sum over i >= j of
    g_i exp(x_j - y_i).  Computed stably for each sign of g as exp(x_j + the reversed
    logcumsumexp of log|g_i| - y_i), so no exp(-y_i) overflows; it is Tensor code, so it
    serves second order too."""
    def part(weights: Tensor) -> Tensor:
        later = reverse(scan("logsumexp", reverse(_log_share(weights, y), dim), dim), dim)
        return (x + later).exp()

    return part(g) - part(-g)


def reverse(x: Tensor, dim: int) -> Tensor:
    """x with dim in reverse order, differentiably (a gather)."""
    n = x.shape[dim]
    index = (arange(n, device=x.device) * -1 + (n - 1)).reshape(
        *[n if i == dim else 1 for i in range(x.ndim)]).expand(*x.shape)
    return gather(x, dim, index, range_checked=True)


def shifted_in(x: Tensor, dim: int, value: float) -> Tensor:
    """x moved one step along dim: `value` enters at the start, the last element leaves."""
    n = x.shape[dim]
    first = constant([1 if i == dim else s for i, s in enumerate(x.shape)], value, x.dtype,
                     x._backend)
    return cat([first, x.narrow(dim, 0, n - 1)], dim)


def cumprod_grad(x: Tensor, g: Tensor, dim: int) -> Tensor:
    """cumprod's gradient, sum over j >= i of g_j * prod(x_k for k <= j, k != i), right
    where x has zeros (PyTorch's rule; no division): row i of an n x n table is the line
    with x_i replaced by 1, and its running products are those partial products.  It costs
    n * n per line, and is itself differentiable, so it serves second order too."""
    xt, gt = x.transpose(dim, -1), g.transpose(dim, -1)
    n = xt.shape[-1]
    i, j = arange(n, device=x.device).reshape(n, 1), arange(n, device=x.device).reshape(1, n)
    table = where(i == j, 1, xt.unsqueeze(-2))
    partial = scan("prod", table, table.ndim - 1)
    return where(j >= i, partial * gt.unsqueeze(-2), 0).sum(-1).transpose(dim, -1)


def products_of_others(x: Tensor, dim: int) -> Tensor:
    """For each element, the product of the other elements of its line: the gradient of
    prod, right where x has zeros (no division)."""
    before = shifted_in(scan("prod", x, dim), dim, 1.0)
    after = reverse(shifted_in(scan("prod", reverse(x, dim), dim), dim, 1.0), dim)
    return before * after
