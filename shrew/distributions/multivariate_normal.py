"""MultivariateNormal(loc, covariance_matrix= | precision_matrix= | scale_tril=)."""
from __future__ import annotations

import math
from typing import Any

import shrew
from ..core.shape import Size
from .._tensor import Tensor
from . import constraints
from ._location import MeanAndModeAtLoc
from ._scale_matrix import ScaleTrilMatrices, given_scale_matrix
from .distribution import Distribution

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    """Matrix-vector products broadcast over the batch dims of both."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:  # noqa: N803 (torch's name)
    """x^T (L L^T)^-1 x for a lower Cholesky factor L: |L^-1 x|^2, by a triangular
    solve, broadcast over the batch dims of both."""
    batch = shrew.broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    n = bx.shape[-1]
    L = bL.expand(tuple(batch) + (n, n))  # noqa: N806
    x = bx.expand(tuple(batch) + (n,))
    solved = shrew.linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return solved.pow(2).sum(-1)


class MultivariateNormal(MeanAndModeAtLoc, ScaleTrilMatrices, Distribution):
    """The multivariate normal with mean `loc` (..., n), parameterised by exactly one of a
    covariance matrix, a precision matrix, or a lower-triangular scale_tril with positive
    diagonal (the Cholesky factor of the covariance), each (..., n, n)."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        name, matrix = given_scale_matrix(covariance_matrix, precision_matrix, scale_tril)
        if matrix.ndim < 2:
            which = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{which} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = shrew.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        self._hold_scale_matrix(name, matrix, batch_shape)
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._factor_scale_matrix(name, matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        self._expand_held_matrices_into(new, cov_shape)
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape,
                                                validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape)

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = shrew.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)  # noqa: N806
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self) -> Tensor:
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det  # noqa: N806
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
