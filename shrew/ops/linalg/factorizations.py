"""LU with partial pivoting, Householder QR in LAPACK's compact form (geqrf, ormqr,
householder_product), the matrix exponential and the low-rank SVD, as compositions of
recorded operations: one elimination (or reflection) step per column, so they run on every
backend and their gradients come from autograd (the pivot order is a gather, fixed by the
values, as LAPACK's is).

The pivots follow LAPACK's getrf: 1-based int32, row j swapped with row pivots[j] - 1 at
step j; LU packs L's multipliers below the diagonal and U on and above it."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ... import return_types as R
from ...core.dtype import int32, int64
from ...core.errors import ArgumentError, DTypeError, ShapeError
from ...core.fields import AnyTensor
from ...core.grad_mode import no_grad
from ...core.shape import fmt
from ..creation import arange, eye, zeros
from ..elementwise.recorded import where
from ..shape.recorded import cat, stack
from .composed import solve_triangular
from .decompositions import solve, svd

if TYPE_CHECKING:
    from ..._tensor import Tensor


def _matrices(op: str, A: Tensor, square: bool = False) -> None:  # noqa: N803
    if not isinstance(A, AnyTensor) or A.ndim < 2:
        raise ShapeError(f"{op}: A must be a batch of matrices [..., m, n], got "
                         f"{fmt(A.shape) if isinstance(A, AnyTensor) else type(A).__name__}")
    if not A.dtype.is_floating_point:
        raise DTypeError(f"{op}: A must be float32 or float64, got {A.dtype}")
    if square and A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{op}: A must be square, got {fmt(A.shape)}")


def _swap(x: Tensor, dim: int, j: int, p: Tensor) -> Tensor:
    """x with entries (rows, for dim=-2) j and p (one per batch) exchanged along dim."""
    size = x.shape[dim]
    at = arange(size, device=x.device)
    pb = p.unsqueeze(-1)
    idx = where(at == j, pb, where(at == pb, j, at))  # [..., size]
    if dim == -1:
        return x.gather(-1, idx)
    return x.gather(-2, idx.unsqueeze(-1).expand(*x.shape))


def _eliminate(A: Tensor, pivot: bool) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """(L [.., m, k], U [.., k, n], pivots [.., k] 0-based) of A with partial pivoting."""
    m, n = A.shape[-2:]
    k = min(m, n)
    work, lower = A, A.narrow(-1, 0, 0)
    pivots = []
    for j in range(k):
        if pivot:
            with no_grad():
                p = work.narrow(-2, j, m - j).select(-1, j).abs().argmax(-1) + j
            work, lower = _swap(work, -2, j, p), _swap(lower, -2, j, p)
        else:
            p = zeros(A.shape[:-2], dtype=int64, device=A.device) + j
        pivots.append(p)
        head = work.narrow(-2, j, 1)                       # [.., 1, n]
        diag = head.narrow(-1, j, 1)                        # [.., 1, 1]
        below = work.narrow(-2, j + 1, m - j - 1)           # [.., m-j-1, n]
        safe = where(diag == 0, 1.0, diag)
        factors = where(diag == 0, 0.0, below.narrow(-1, j, 1) / safe)  # [.., m-j-1, 1]
        work = cat([work.narrow(-2, 0, j + 1), below - factors * head], -2)
        column = cat([zeros(*A.shape[:-2], j, 1, dtype=A.dtype, device=A.device),
                      (diag * 0 + 1), factors], -2)
        lower = cat([lower, column], -1)
    upper = work.narrow(-2, 0, k).triu()
    return lower, upper, stack(pivots, -1) if pivots else \
        zeros(*A.shape[:-2], 0, dtype=int64, device=A.device)


def _permutation(pivots: Tensor, m: int) -> Tensor:
    """P [.., m, m] with A = P L U from the 0-based sequential row swaps."""
    order = arange(m, device=pivots.device).expand(*pivots.shape[:-1], m)
    for j in range(pivots.shape[-1]):
        order = _swap(order, -1, j, pivots.select(-1, j))
    # row order[i] of A became row i: P[order[i], i] = 1
    rows = arange(m, device=pivots.device).reshape(m, 1)
    return (order.unsqueeze(-2) == rows)


def lu_factor_ex(A: Tensor, *, pivot: bool = True,  # noqa: N803
                 check_errors: bool = False) -> R.linalg_lu_factor_ex:
    """(LU, pivots, info): A = P L U packed in one matrix, LAPACK's 1-based pivots, and
    info > 0 where U has a zero on its diagonal (the first such column, 1-based)."""
    _matrices("linalg.lu_factor_ex", A)
    m, n = A.shape[-2:]
    lower, upper, pivots = _eliminate(A, pivot)
    k = min(m, n)
    if m >= n:
        packed = lower.tril(-1) + cat([upper, zeros(*A.shape[:-2], m - k, n, dtype=A.dtype,
                                                     device=A.device)], -2)
    else:
        packed = upper + cat([lower.tril(-1), zeros(*A.shape[:-2], m, n - k, dtype=A.dtype,
                                                     device=A.device)], -1)
    with no_grad():
        zero = upper.diagonal(0, -2, -1) == 0
        first = where(zero, arange(1, k + 1, device=A.device), k + 1).amin(-1) if k else \
            zeros(A.shape[:-2], dtype=int64, device=A.device)
        info = where(first > k, 0, first).to_dtype(int32)
    if check_errors and info.numel() and bool((info > 0).any()):
        raise ArgumentError("linalg.lu_factor_ex: U is singular (a zero pivot)")
    return R.linalg_lu_factor_ex(packed, (pivots + 1).to_dtype(int32), info)


def lu_factor(A: Tensor, *, pivot: bool = True) -> R.linalg_lu_factor:  # noqa: N803
    """(LU, pivots) of A = P L U (see lu_factor_ex)."""
    packed, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return R.linalg_lu_factor(packed, pivots)


def lu(A: Tensor, *, pivot: bool = True) -> R.linalg_lu:  # noqa: N803
    """(P, L, U) with A = P L U: L unit lower-trapezoidal [.., m, k], U upper [.., k, n]."""
    _matrices("linalg.lu", A)
    lower, upper, pivots = _eliminate(A, pivot)
    m = A.shape[-2]
    perm = _permutation(pivots, m).to_dtype(A.dtype) if pivot else \
        eye(m, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], m, m)
    return R.linalg_lu(perm, lower, upper)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,  # noqa: N803
              unpack_pivots: bool = True) -> R.lu_unpack:
    """(P, L, U) from lu_factor's packed LU and pivots."""
    _matrices("lu_unpack", LU_data)
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    if unpack_data:
        ones = eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        lower = LU_data.narrow(-1, 0, k).tril(-1) + ones
        upper = LU_data.narrow(-2, 0, k).triu()
    else:
        lower = upper = zeros(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_pivots:
        if LU_pivots.dtype.is_floating_point or LU_pivots.shape[-1] != k:
            raise ShapeError(f"lu_unpack: LU_pivots must be an integer tensor [..., {k}], got "
                             f"{LU_pivots.dtype} {fmt(LU_pivots.shape)}")
        perm = _permutation(LU_pivots.to_dtype(int64) - 1, m).to_dtype(LU_data.dtype)
    else:
        perm = zeros(0, dtype=LU_data.dtype, device=LU_data.device)
    return R.lu_unpack(perm, lower, upper)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,  # noqa: N803
             adjoint: bool = False) -> Tensor:
    """X with A X = B (X A = B if not left; A^H in place of A with adjoint), A given by
    lu_factor's LU and pivots."""
    _matrices("linalg.lu_solve", LU, square=True)
    perm, lower, upper = lu_unpack(LU, pivots)
    if left and not adjoint:    # P L U X = B
        y = solve_triangular(lower, perm.mT @ B, upper=False, unitriangular=True)
        return solve_triangular(upper, y, upper=True)
    if left:                    # U^T L^T P^T X = B
        y = solve_triangular(upper.mT, B, upper=False)
        return perm @ solve_triangular(lower.mT, y, upper=True, unitriangular=True)
    if not adjoint:             # X P L U = B
        y = solve_triangular(upper, B, upper=True, left=False)
        return solve_triangular(lower, y, upper=False, left=False, unitriangular=True) @ perm.mT
    # X U^T L^T P^T = B
    y = solve_triangular(lower.mT, B @ perm, upper=True, left=False, unitriangular=True)
    return solve_triangular(upper.mT, y, upper=False, left=False)


def torch_lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:  # noqa: N803
    """torch.lu: (LU, pivots) or (LU, pivots, infos)."""
    packed, pivots, info = lu_factor_ex(A, pivot=pivot)
    return (packed, pivots, info) if get_infos else (packed, pivots)


def torch_lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
    """torch.lu_solve(b, LU_data, LU_pivots): X with A X = b."""
    return lu_solve(LU_data, LU_pivots, b)


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True,  # noqa: N803
                     transpose: bool = False,
                     unitriangular: bool = False) -> R.triangular_solve:
    """(X, a copy of A) with op(A) X = b for triangular A (op: transposed if asked)."""
    coefficient = A.mT if transpose else A
    x = solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return R.triangular_solve(x, A.clone())


# -- Householder reflections ---------------------------------------------------------------
def householder_product(A: Tensor, tau: Tensor) -> Tensor:  # noqa: N803
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with v_i = (0, .., 1,
    A[i+1:, i]) (LAPACK's orgqr)."""
    _matrices("linalg.householder_product", A)
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if n > m or k > n or tau.shape[:-1] != A.shape[:-2]:
        raise ShapeError(f"linalg.householder_product: A [..., m, n] needs m >= n >= k and tau "
                         f"[..., k], got A {fmt(A.shape)} and tau {fmt(tau.shape)}")
    q = eye(m, n, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], m, n)
    for i in reversed(range(k)):
        v = _reflector(A, i)                                   # [.., m, 1]
        t = tau.narrow(-1, i, 1).unsqueeze(-1)                  # [.., 1, 1]
        q = q - t * v @ (v.mT @ q)
    return q


def _reflector(A: Tensor, i: int) -> Tensor:  # noqa: N803
    """v_i [.., m, 1]: zeros above i, 1 at i, A's column i below."""
    m = A.shape[-2]
    col = A.narrow(-1, i, 1)
    return cat([zeros(*A.shape[:-2], i, 1, dtype=A.dtype, device=A.device),
                col.narrow(-2, i, 1) * 0 + 1, col.narrow(-2, i + 1, m - i - 1)], -2)


def geqrf(input: Tensor) -> R.geqrf:  # noqa: A002
    """(a, tau): A's QR in LAPACK's compact form (R on and above the diagonal, the
    reflectors' tails below; Q = householder_product(a, tau))."""
    _matrices("geqrf", input)
    m, n = input.shape[-2:]
    work, taus = input, []
    for j in range(min(m, n)):
        col = work.narrow(-1, j, 1)
        alpha = col.narrow(-2, j, 1)                                # [.., 1, 1]
        tail = col.narrow(-2, j + 1, m - j - 1)
        norm = (alpha * alpha + (tail * tail).sum(-2, keepdim=True)).sqrt()
        trivial = (tail * tail).sum(-2, keepdim=True) == 0          # H = I (dlarfg)
        beta = where(alpha >= 0, -norm, norm)
        safe_beta = where(trivial, 1.0, beta)
        tau = where(trivial, 0.0, (beta - alpha) / safe_beta)
        v_tail = where(trivial, 0.0, tail / where(trivial, 1.0, alpha - beta))
        v = cat([zeros(*input.shape[:-2], j, 1, dtype=input.dtype, device=input.device),
                 alpha * 0 + 1, v_tail], -2)
        rest = work.narrow(-1, j + 1, n - j - 1)
        rest = rest - tau * v @ (v.mT @ rest)
        new_col = cat([col.narrow(-2, 0, j), where(trivial, alpha, beta), v_tail], -2)
        work = cat([work.narrow(-1, 0, j), new_col, rest], -1)
        taus.append(tau.reshape(*input.shape[:-2]))
    tau_all = stack(taus, -1) if taus else zeros(*input.shape[:-2], 0, dtype=input.dtype,
                                                   device=input.device)
    return R.geqrf(work, tau_all)


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,  # noqa: A002
          transpose: bool = False) -> Tensor:
    """Q other (other Q if not left; Q^T if transpose), Q the m x m product of geqrf's
    reflectors in input and tau."""
    _matrices("ormqr", input)
    m, n = input.shape[-2:]
    full = cat([input, zeros(*input.shape[:-2], m, max(m - n, 0), dtype=input.dtype,
                             device=input.device)], -1) if m > n else input.narrow(-1, 0, m)
    q = householder_product(full, tau)
    q = q.mT if transpose else q
    return q @ other if left else other @ q


# -- the matrix exponential ---------------------------------------------------------------
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)


def matrix_exp(A: Tensor) -> Tensor:  # noqa: N803
    """exp(A) of square matrices: Higham's scaling and squaring with the degree-13 Pade
    approximant (all in recorded products and one solve, so it is differentiable)."""
    _matrices("linalg.matrix_exp", A, square=True)
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    with no_grad():
        norm = float(A.abs().sum(-2).amax().item())  # the 1-norm, largest over the batch
    s = max(0, math.ceil(math.log2(norm / 5.371920351148152))) if norm > 0 else 0
    a = A / (2 ** s)
    ident = eye(n, dtype=A.dtype, device=A.device).expand(*A.shape)
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
             + b[1] * ident)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * ident
    out = solve(v - u, v + u)
    for _ in range(s):
        out = out @ out
    return out


# -- low-rank SVD and PCA -------------------------------------------------------------------
def svd_lowrank(A: Tensor, q: int | None = 6, niter: int = 2,  # noqa: N803
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """(U, S, V) of rank q approximating A - M: the q leading singular triplets, computed
    exactly (PyTorch's randomised method approximates these same ones)."""
    _matrices("svd_lowrank", A)
    q = 6 if q is None else q
    if not 0 <= q <= min(A.shape[-2:]):
        raise ArgumentError(f"svd_lowrank: q={q} must be in [0, {min(A.shape[-2:])}] for A "
                            f"{fmt(A.shape)}")
    x = A if M is None else A - M
    u, s, vh = svd(x, full_matrices=False)
    return u.narrow(-1, 0, q), s.narrow(-1, 0, q), vh.narrow(-2, 0, q).mT


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,  # noqa: N803
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """svd_lowrank of A with each column's mean taken off (center=True); q defaults to
    min(6, m, n)."""
    _matrices("pca_lowrank", A)
    q = min(6, *A.shape[-2:]) if q is None else q
    return svd_lowrank(A - A.mean(-2, keepdim=True) if center else A, q, niter)
