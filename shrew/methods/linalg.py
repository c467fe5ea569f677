"""Tensor's product methods beyond matmul: one-line calls into shrew/ops/linalg/products.py (a
mixin, so that _tensor.py stays short)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ops.linalg import decompositions as _d
from ..ops.linalg import composed as _lc
from ..ops.linalg import products as _p

if TYPE_CHECKING:
    from .. import return_types
    from .._tensor import Tensor
    from ..typing import Scalar


class LinalgMethods:
    """Mixed into Tensor; every method's first argument is the Tensor itself."""

    __slots__ = ()

    def mm(self: Tensor, mat2: Tensor) -> Tensor:  # type: ignore[misc]
        return _p.mm(self, mat2)

    def bmm(self: Tensor, mat2: Tensor) -> Tensor:  # type: ignore[misc]
        return _p.bmm(self, mat2)

    def mv(self: Tensor, vec: Tensor) -> Tensor:  # type: ignore[misc]
        return _p.mv(self, vec)

    def dot(self: Tensor, other: Tensor) -> Tensor:  # type: ignore[misc]
        return _p.dot(self, other)

    vdot = dot  # (real dtypes only: no conjugate to take)

    def inner(self: Tensor, other: Tensor) -> Tensor:  # type: ignore[misc]
        return _p.inner(self, other)

    def outer(self: Tensor, vec2: Tensor) -> Tensor:  # type: ignore[misc]
        return _p.outer(self, vec2)

    ger = outer

    def addmm(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Scalar = 1,  # type: ignore[misc]
              alpha: Scalar = 1) -> Tensor:
        return _p.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self: Tensor, mat: Tensor, vec: Tensor, *, beta: Scalar = 1,  # type: ignore[misc]
              alpha: Scalar = 1) -> Tensor:
        return _p.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def addr(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Scalar = 1,  # type: ignore[misc]
             alpha: Scalar = 1) -> Tensor:
        return _p.addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def baddbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *,  # type: ignore[misc]
                beta: Scalar = 1, alpha: Scalar = 1) -> Tensor:
        return _p.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *,  # type: ignore[misc]
               beta: Scalar = 1, alpha: Scalar = 1) -> Tensor:
        return _p.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def kron(self: Tensor, other: Tensor) -> Tensor:  # type: ignore[misc]
        return _p.kron(self, other)

    def cross(self: Tensor, other: Tensor, dim: int | None = None) -> Tensor:  # type: ignore[misc]
        return _p.cross(self, other, dim)

    def matrix_power(self: Tensor, n: int) -> Tensor:  # type: ignore[misc]
        return _p.matrix_power(self, n)

    # -- decompositions and solvers (ops/linalg/decompositions.py, ops/linalg/composed.py) --------
    def inverse(self: Tensor) -> Tensor:  # type: ignore[misc]
        return _d.inverse(self)

    def det(self: Tensor) -> Tensor:  # type: ignore[misc]
        return _d.det(self, op="det")

    def logdet(self: Tensor) -> Tensor:  # type: ignore[misc]
        return _d.logdet(self)

    def slogdet(self: Tensor) -> return_types.slogdet:  # type: ignore[misc]
        return _d.torch_slogdet(self)

    def cholesky(self: Tensor, upper: bool = False) -> Tensor:  # type: ignore[misc]
        return _d.torch_cholesky(self, upper)

    def cholesky_solve(self: Tensor, input2: Tensor, upper: bool = False) -> Tensor:  # type: ignore[misc]
        return _lc.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self: Tensor, upper: bool = False) -> Tensor:  # type: ignore[misc]
        return _lc.cholesky_inverse(self, upper)

    def qr(self: Tensor, some: bool = True) -> return_types.qr:  # type: ignore[misc]
        return _d.torch_qr(self, some)

    def svd(self: Tensor, some: bool = True,  # type: ignore[misc]
            compute_uv: bool = True) -> return_types.svd:
        return _d.torch_svd(self, some, compute_uv)

    def pinverse(self: Tensor, rcond: float = 1e-15) -> Tensor:  # type: ignore[misc]
        return _lc.pinverse(self, rcond)
