"""Gradient rules of the linalg family (ops/linalg.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import op as O
from ..shape import numel
from .common import sum_to_shape

if TYPE_CHECKING:
    from ..tensor import Tensor


def matmul_rhs_grad(a: Tensor, b: Tensor, g: Tensor) -> Tensor:
    """a^T @ g summed to b's shape.  A plain matrix b shared by a batch of a's gets one
    GEMM over the folded batch, not a batch of products summed afterwards."""
    if b.ndim == 2:
        k, n = b.shape
        rows = numel(a.shape[:-1])  # explicit: -1 is ambiguous for an empty a
        a2, g2 = a.reshape(rows, k), g.reshape(rows, n)
        if type(b._op) is O.Transpose:
            # b = w.T (as in linear): compute (g^T a)^T, so that the Transpose rule hands
            # w a C-contiguous gradient; a transposed one makes every later elementwise
            # pass over it (optimizer step, accumulation) walk memory against its grain.
            return (g2.transpose(0, 1) @ a2).transpose(0, 1)
        return a2.transpose(0, 1) @ g2
    return sum_to_shape(a.transpose(-1, -2) @ g, b.shape)
