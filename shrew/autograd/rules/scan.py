"""Gradient rules of the scan family (ops/scan.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...ops.elementwise.recorded import where
from ...ops.scan import reverse, scan

if TYPE_CHECKING:
    from ..._tensor import Tensor


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
