"""Distances as functions: pairwise_distance, cosine_similarity and pdist."""
from __future__ import annotations

from ...core.autocast import autocast_op
from ...core.errors import ArgumentError, ShapeError
from ...core.shape import fmt, normalize_dim
from ...ops.creation import triu_indices
from ...ops.reduce import vector_norm
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dim (broadcasting x1 and x2)."""
    _tensor("pairwise_distance", "x2", x2)
    return vector_norm(_tensor("pairwise_distance", "x1", x1) - x2 + eps, p, -1, keepdim,
                       op="pairwise_distance")


@autocast_op("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / (max(||x1||, eps) max(||x2||, eps)) along dim, x1 and x2 broadcast."""
    _tensor("cosine_similarity", "x1", x1)
    _tensor("cosine_similarity", "x2", x2)
    d = normalize_dim(dim, max(x1.ndim, x2.ndim), "cosine_similarity")
    d = d - max(x1.ndim, x2.ndim)  # count from the end: x1 and x2 may differ in rank
    n1 = vector_norm(x1, 2, d, op="cosine_similarity").clamp(min=eps)
    n2 = vector_norm(x2, 2, d, op="cosine_similarity").clamp(min=eps)
    return (x1 * x2).sum(d) / (n1 * n2)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002
    """The p-norm distances between every pair of rows i < j of input [N, M], in row-major
    order of the pairs (the condensed upper triangle)."""
    x = _tensor("pdist", "input", input)
    if x.ndim != 2:
        raise ShapeError(f"pdist: only supports 2-d tensors, got {fmt(x.shape)}")
    if p < 0:
        raise ArgumentError(f"pdist: only supports non-negative p values, got {p}")
    rows, cols = triu_indices(x.shape[0], x.shape[0], 1, device=x.device)
    return vector_norm(x[rows] - x[cols], p, -1, op="pdist")
