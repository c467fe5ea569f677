"""The scale-matrix parametrisation MultivariateNormal and Wishart share: exactly one of
covariance_matrix, precision_matrix and scale_tril is given and kept (batch-broadcast);
the other two are lazy properties, all three computed from one lower Cholesky factor."""
from __future__ import annotations

from typing import Any

import shrew
from .._tensor import Tensor
from .utils import lazy_property

__all__ = ["ScaleTrilMatrices", "given_scale_matrix", "precision_to_scale_tril"]

_MATRIX_NAMES = ("covariance_matrix", "scale_tril", "precision_matrix")


def given_scale_matrix(covariance_matrix: Tensor | None, precision_matrix: Tensor | None,
                       scale_tril: Tensor | None) -> tuple[str, Tensor]:
    """(name, matrix) of the one matrix given; torch asks for exactly one."""
    given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                       ("precision_matrix", precision_matrix),
                                       ("scale_tril", scale_tril)) if m is not None]
    if len(given) != 1:
        raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                         "scale_tril may be specified.")
    return given[0]


def precision_to_scale_tril(P: Tensor) -> Tensor:  # noqa: N803
    """The lower Cholesky factor of P^-1 without forming the inverse: flip P, take its
    Cholesky factor (an upper factor of P once flipped back), invert that triangle."""
    Lf = shrew.linalg.cholesky(P.flip((-2, -1)))  # noqa: N806
    L_inv = Lf.flip((-2, -1)).mT  # noqa: N806
    eye = shrew.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return shrew.linalg.solve_triangular(L_inv, eye.expand(L_inv.shape), upper=False)


class ScaleTrilMatrices:
    """scale_tril, covariance_matrix and precision_matrix computed on demand from
    `_unbroadcasted_scale_tril` and expanded to `_matrix_shape()` (the class says which);
    the one given to __init__ is held on the instance and shadows its lazy property."""
    _unbroadcasted_scale_tril: Tensor

    def _matrix_shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    def _hold_scale_matrix(self, name: str, matrix: Tensor, batch_shape: Any) -> None:
        """The given matrix broadcast over batch_shape, as self.<name>."""
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))

    def _factor_scale_matrix(self, name: str, matrix: Tensor) -> None:
        """self._unbroadcasted_scale_tril from the given matrix; called after the
        arguments are validated, so that a bad matrix is reported as such rather than as a
        failed Cholesky factorisation."""
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = shrew.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(matrix)

    def _expand_held_matrices_into(self, new: Any, matrix_shape: Any) -> None:
        """Copies onto `new` each of the three matrices this instance holds (given, or
        already computed), expanded to matrix_shape."""
        for name in _MATRIX_NAMES:
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(matrix_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril  # noqa: N806
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return shrew.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())
