"""torch.linalg's counterpart.

Products (ops/linalg/products.py): matmul, cross, multi_dot, matrix_power.  Decompositions and
solvers (ops/linalg/decompositions.py, one backend primitive each): solve, inv, det, slogdet,
cholesky, qr, svd, svdvals, eigh, eigvalsh.  Composed from those (ops/linalg/composed.py):
matrix_norm, norm's matrix orders, cond, matrix_rank, pinv, lstsq, solve_triangular."""
from __future__ import annotations

from .core.errors import LinAlgError
from .ops.linalg.matmul import matmul
from .ops.linalg.products import linalg_cross as cross, matrix_power, multi_dot

# -- vector norms (ops/reduce.py) and matrix norms (ops/linalg/composed.py) ---------------------
from .ops.reduce import vector_norm
from .ops.linalg.composed import linalg_norm as norm, matrix_norm

# -- decompositions and solvers -----------------------------------------------------------------
from .ops.linalg.decompositions import (cholesky, cholesky_ex, det, eigh, eigvalsh, inv, inv_ex, qr,
                                 slogdet, solve, solve_ex, svd, svdvals)
from .ops.linalg.composed import (cond, diagonal, lstsq, matrix_rank, pinv, solve_triangular,
                                  tensorinv, tensorsolve, vander, vecdot)
from .ops.linalg.factorizations import (householder_product, lu, lu_factor,  # noqa: E402
                                        lu_factor_ex, lu_solve, matrix_exp)

__all__ = ["matmul", "cross", "multi_dot", "matrix_power", "norm", "vector_norm",
           "matrix_norm", "LinAlgError", "cholesky", "cholesky_ex", "det", "eigh", "eigvalsh",
           "inv", "inv_ex", "qr", "slogdet", "solve", "solve_ex", "svd", "svdvals", "cond",
           "lstsq", "matrix_rank", "pinv", "solve_triangular", "diagonal", "tensorinv",
           "tensorsolve", "vander", "vecdot", "householder_product", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "matrix_exp"]
