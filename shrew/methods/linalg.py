"""Tensor's product methods beyond matmul: one-line calls into shrew/ops/linalg/products.py (a
mixin, so that _tensor.py stays short)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ops.linalg import decompositions as _d
from ..ops.linalg import composed as _lc
from ..ops.linalg import products as _p
from ..ops.linalg import factorizations as _f

if TYPE_CHECKING:
    from .. import return_types
    from .._tensor import Tensor
    from ..typing import Scalar


class LinalgMethods:
    """Mixed into Tensor; every method's first argument is the Tensor itself."""

    __slots__ = ()

    def mm(self: Any, mat2: Tensor) -> Tensor:
        return _p.mm(self, mat2)

    def bmm(self: Any, mat2: Tensor) -> Tensor:
        return _p.bmm(self, mat2)

    def mv(self: Any, vec: Tensor) -> Tensor:
        return _p.mv(self, vec)

    def dot(self: Any, other: Tensor) -> Tensor:
        return _p.dot(self, other)

    vdot = dot  # (real dtypes only: no conjugate to take)

    def inner(self: Any, other: Tensor) -> Tensor:
        return _p.inner(self, other)

    def outer(self: Any, vec2: Tensor) -> Tensor:
        return _p.outer(self, vec2)

    ger = outer

    def addmm(self: Any, mat1: Tensor, mat2: Tensor, *, beta: Scalar = 1,
              alpha: Scalar = 1) -> Tensor:
        return _p.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self: Any, mat: Tensor, vec: Tensor, *, beta: Scalar = 1,
              alpha: Scalar = 1) -> Tensor:
        return _p.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def addr(self: Any, vec1: Tensor, vec2: Tensor, *, beta: Scalar = 1,
             alpha: Scalar = 1) -> Tensor:
        return _p.addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def baddbmm(self: Any, batch1: Tensor, batch2: Tensor, *,
                beta: Scalar = 1, alpha: Scalar = 1) -> Tensor:
        return _p.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm(self: Any, batch1: Tensor, batch2: Tensor, *,
               beta: Scalar = 1, alpha: Scalar = 1) -> Tensor:
        return _p.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def kron(self: Any, other: Tensor) -> Tensor:
        return _p.kron(self, other)

    def cross(self: Any, other: Tensor, dim: int | None = None) -> Tensor:
        return _p.cross(self, other, dim)

    def matrix_power(self: Any, n: int) -> Tensor:
        return _p.matrix_power(self, n)

    # -- decompositions and solvers (ops/linalg/decompositions.py, ops/linalg/composed.py) --------
    def inverse(self: Any) -> Tensor:
        return _d.inverse(self)

    def det(self: Any) -> Tensor:
        return _d.det(self, op="det")

    def logdet(self: Any) -> Tensor:
        return _d.logdet(self)

    def slogdet(self: Any) -> return_types.slogdet:
        return _d.torch_slogdet(self)

    def cholesky(self: Any, upper: bool = False) -> Tensor:
        return _d.torch_cholesky(self, upper)

    def cholesky_solve(self: Any, input2: Tensor, upper: bool = False) -> Tensor:
        return _lc.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self: Any, upper: bool = False) -> Tensor:
        return _lc.cholesky_inverse(self, upper)

    def qr(self: Any, some: bool = True) -> return_types.qr:
        return _d.torch_qr(self, some)

    def svd(self: Any, some: bool = True,
            compute_uv: bool = True) -> return_types.svd:
        return _d.torch_svd(self, some, compute_uv)

    def pinverse(self: Any, rcond: float = 1e-15) -> Tensor:
        return _lc.pinverse(self, rcond)

    # factorisations composed step by step (ops/linalg/factorizations.py)
    matrix_exp = _f.matrix_exp
    triangular_solve = _f.triangular_solve
    geqrf = _f.geqrf
    ormqr = _f.ormqr
    lu = _f.torch_lu

    def lu_solve(self: Any, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
        return _f.torch_lu_solve(self, LU_data, LU_pivots)
