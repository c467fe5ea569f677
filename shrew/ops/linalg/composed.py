"""torch.linalg functions composed from the decompositions (ops/linalg/decompositions.py) and
ordinary ops, so their gradients come from their parts: matrix_norm and linalg.norm's
matrix orders, cond, matrix_rank, pinv (a rule of its own, autograd/rules/linalg.py), lstsq,
solve_triangular, cholesky_solve, cholesky_inverse, and cdist."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...core.autocast import autocast_op
from ...core import op as O
from ... import return_types as R
from ...core.dtype import check_float, finfo
from ...core.errors import type_name
from ...core.errors import ArgumentError, DTypeError, ShapeError, ShrewTypeError
from ...core.fields import AnyTensor, wrap
from ...core.grad_mode import no_grad
from ...core.shape import broadcast_shapes, fmt, normalize_dims
from . import decompositions as D
from ..common import same_device
from ..reduce import linalg_norm as vector_or_frobenius
from ..reduce import vector_norm
from ..shape.composed import diag_embed
from ..shape.recorded import cat

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import DTypeLike

_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


# -- matrix norms -----------------------------------------------------------------------------
@autocast_op("linalg_matrix_norm")
def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple = (-2, -1), keepdim: bool = False,  # noqa: N803, A002
                *, dtype: DTypeLike | None = None, op: str = "linalg.matrix_norm") -> Tensor:
    """The matrix norm `ord` of the matrices in dims `dim`: 'fro', 'nuc' (sum of singular
    values), 2 / -2 (the largest / smallest singular value), 1 / -1 (the largest / smallest
    column sum of |A|), inf / -inf (the same over rows)."""
    if not isinstance(A, AnyTensor):
        raise ShrewTypeError(f"{op}: expects a tensor, got {type_name(A)}")
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        raise ArgumentError(f"{op}: ord must be one of 'fro', 'nuc', inf, -inf, 1, -1, 2, -2; "
                            f"got {ord!r}")
    if A.ndim < 2:
        raise ShapeError(f"{op}: the input must have at least 2 dimensions, got shape "
                         f"{fmt(A.shape)}")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise ArgumentError(f"{op}: dim must be a 2-tuple of ints, got {dim!r}")
    normalize_dims(tuple(dim), A.ndim, op)  # in range, distinct
    rows, cols = (d % A.ndim for d in dim)
    if dtype is not None:
        A = A.to(dtype)
    check_float(A.dtype, op)
    if ord == "fro":
        return vector_norm(A, 2, (rows, cols), keepdim, op=op)
    if ord in (1, -1, math.inf, -math.inf):
        summed, over = (rows, cols) if abs(ord) == 1 else (cols, rows)
        sums = A.abs().sum(summed, keepdim=True)
        out = sums.amax(over, keepdim=True) if ord > 0 else sums.amin(over, keepdim=True)
    else:  # 'nuc', 2, -2: singular values, of the matrices moved to the last two dims
        s = D.svdvals(A.movedim((rows, cols), (-2, -1)))
        s = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        out = s.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (rows, cols))
    return out if keepdim else out.squeeze((rows, cols))


def linalg_norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,  # noqa: N803, A002
                dtype: DTypeLike | None = None) -> Tensor:
    """linalg.norm: a matrix norm where dim has two dims (or dim is None, A is 2-D and ord
    is given), else a vector norm."""
    two_dims = isinstance(dim, (tuple, list)) and len(dim) == 2 or (
        dim is None and ord is not None and isinstance(A, AnyTensor) and A.ndim == 2)
    if two_dims and ord is not None:
        return matrix_norm(A, ord, tuple(dim) if dim is not None else (-2, -1), keepdim,
                           dtype=dtype, op="linalg.norm")
    return vector_or_frobenius(A, ord, dim, keepdim, dtype=dtype)


def cond(A: Tensor, p: Any = None) -> Tensor:  # noqa: N803
    """The condition number: norm(A) norm(A^-1) in norm p; p None / 2 / -2 from the
    singular values alone."""
    if p in (None, 2, -2):
        D.check_matrices("linalg.cond", A, square=False)
        s = D.svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    D.check_matrices("linalg.cond", A)
    return (matrix_norm(A, p, op="linalg.cond")
            * matrix_norm(D.inv_ex(A, op="linalg.cond").inverse, p, op="linalg.cond"))


# -- rank, pseudo-inverse, least squares ------------------------------------------------------
def _cutoff(op: str, s_max: Tensor, shape: tuple, atol: Any, rtol: Any) -> Tensor:
    """max(atol, rtol * s_max) with PyTorch's defaults: rtol = eps * max(m, n) when neither
    is given, 0 when only atol is."""
    if rtol is None:
        rtol = finfo(s_max.dtype).eps * max(shape[-2:]) if atol is None else 0.0
    atol = 0.0 if atol is None else atol
    for name, tol in (("atol", atol), ("rtol", rtol)):
        if not isinstance(tol, (int, float, AnyTensor)) or isinstance(tol, bool):
            raise ShrewTypeError(f"{op}: {name} must be a number or a tensor, got {tol!r}")
    cutoff = s_max * rtol
    if isinstance(atol, AnyTensor):
        return cutoff.maximum(atol.to(s_max.dtype))
    return cutoff.clamp_min(float(atol))


def _magnitudes(op: str, A: Tensor, hermitian: bool) -> Tensor:  # noqa: N803
    D.check_matrices(op, A, square=hermitian)
    return D.eigvalsh(A).abs() if hermitian else D.svdvals(A)


def matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None,  # noqa: N803
                hermitian: bool = False, tol: Any = None) -> Tensor:
    """The number of singular values above max(atol, rtol * the largest), int64."""
    if tol is not None:  # PyTorch's older spelling of atol
        atol, rtol = tol, 0.0
    with no_grad():
        s = _magnitudes("linalg.matrix_rank", A, hermitian)
        if s.shape[-1] == 0:
            return (s.sum(-1) * 0).long()
        cutoff = _cutoff("linalg.matrix_rank", s.amax(-1), A.shape, atol, rtol)
        return (s > cutoff[..., None]).sum(-1)


def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None,  # noqa: N803
         hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse, singular values below max(atol, rtol * the
    largest) taken as zero.  hermitian=True: from eigh of A's lower triangle."""
    op = "linalg.pinv"
    D.check_matrices(op, A, square=hermitian)
    with no_grad():
        if hermitian:
            w, q = D.eigh(A)
            u, s, vh, signed = q, w.abs(), q.mT, w
        else:
            u, s, vh = D.svd(A, full_matrices=False)
            signed = s
        if s.shape[-1] == 0:
            value = A.mT * 0
        else:
            keep = s > _cutoff(op, s.amax(-1), A.shape, atol, rtol)[..., None]
            inverse = (1.0 / signed).where(keep, 0.0)
            value = (vh.mT * inverse[..., None, :]) @ u.mT
    if not D.needs_grad(A):
        return value
    return wrap(value._data, A._backend, O.Decomposition("pinv", A, 0, ()))


@autocast_op("pinverse")
def pinverse(x: Tensor, rcond: float = 1e-15) -> Tensor:
    return pinv(x, rtol=rcond)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *,  # noqa: N803
          driver: str | None = None) -> R.linalg_lstsq:
    """The least-squares (minimum-norm) solution of A X = B, as pinv(A) @ B, with what
    PyTorch's CPU drivers return beside it: rank (not for 'gels'), the singular values
    ('gelsd', 'gelss') and the residuals (m > n, full rank, not 'gelsy'); empty otherwise."""
    op = "linalg.lstsq"
    D.check_matrices(op, A, square=False)
    if not isinstance(B, AnyTensor):
        raise ShrewTypeError(f"{op}: B must be a tensor, got {type_name(B)}")
    same_device(op, A, B)
    if A.dtype is not B.dtype:
        raise DTypeError(f"{op}: A and B must share a dtype, got {A.dtype} and {B.dtype}")
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise ArgumentError(f"{op}: driver must be one of {', '.join(_LSTSQ_DRIVERS)}, got "
                            f"{driver!r}")
    vector = B.ndim == A.ndim - 1
    rhs = B.unsqueeze(-1) if vector else B
    if rhs.ndim < 2 or rhs.shape[-2] != A.shape[-2]:
        raise ShapeError(f"{op}: A {fmt(A.shape)} and B {fmt(B.shape)} do not fit: B needs "
                         f"{A.shape[-2]} rows")
    broadcast_shapes(op, A.shape[:-2], rhs.shape[:-2])
    m, n = A.shape[-2:]
    cutoff = rcond if rcond is not None and rcond > 0 else finfo(A.dtype).eps * max(m, n)
    solution = pinv(A, rtol=cutoff) @ rhs
    with no_grad():
        rank = matrix_rank(A, rtol=cutoff)
        full_rank = bool((rank == min(m, n)).all()) if rank.numel() else True
    # recorded, so that empty residuals require grad where A or B does, as PyTorch's
    empty = A.flatten()[:0] + rhs.flatten()[:0]
    residuals = ((A @ solution - rhs).square().sum(-2)
                 if m > n and full_rank and driver != "gelsy" else empty)
    return R.linalg_lstsq(solution.squeeze(-1) if vector else solution,
                          residuals.squeeze(-1) if vector and residuals.ndim > 1 else residuals,
                          rank if driver != "gels" else empty.detach().long(),
                          D.svdvals(A) if driver in ("gelsd", "gelss") else empty.detach())


# -- triangular and Cholesky solves -------------------------------------------------------------
def _triangle(A: Tensor, upper: bool, unitriangular: bool) -> Tensor:  # noqa: N803
    if not unitriangular:
        return A.triu() if upper else A.tril()
    strict = A.triu(1) if upper else A.tril(-1)
    return strict + diag_embed(A.diagonal(0, -2, -1) * 0 + 1)


@autocast_op("linalg_vecdot")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot products of x and y (broadcast) along dim."""
    return (x * y).sum(dim)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    return A.diagonal(offset, dim1, dim2)


def vander(x: Tensor, N: int | None = None) -> Tensor:  # noqa: N803
    """The powers x^0, x^1, ..., x^(N-1) of x [..., n] along a new last dim (N = n)."""
    if not isinstance(x, AnyTensor):
        raise ShapeError("linalg.vander: x must be a tensor")
    if x.ndim == 0:  # one point, as PyTorch reads it: [1, N]
        if N is None:
            raise ArgumentError("linalg.vander: a 0-d x needs N")
        x = x.reshape(1)
    n = x.shape[-1] if N is None else N
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError(f"linalg.vander: N must be a positive int, got {N!r}")
    column = x.unsqueeze(-1)
    return cat([column * 0 + 1, column.expand(*x.shape, n - 1)], -1).cumprod(-1)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:  # noqa: N803
    """The inverse of A read as a matrix of its first ind dims by the others; its shape is
    A.shape[ind:] + A.shape[:ind]."""
    if isinstance(ind, bool) or not isinstance(ind, int) or ind <= 0:
        raise ArgumentError(f"linalg.tensorinv: ind must be a positive int, got {ind!r}")
    rows, cols = A.shape[:ind], A.shape[ind:]
    if math.prod(rows) != math.prod(cols):
        raise ShapeError(f"linalg.tensorinv: the product of the first {ind} dims of "
                         f"{fmt(A.shape)} must equal that of the others")
    flat = A.reshape(math.prod(rows), math.prod(cols))
    return D.inv_ex(flat, check_errors=True, op="linalg.tensorinv").inverse.reshape(*cols, *rows)


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None) -> Tensor:  # noqa: N803
    """X with tensordot(A, X, X.ndim) = B; dims of A first moved to its end."""
    if dims is not None:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        A = A.movedim(dims, tuple(range(A.ndim - len(dims), A.ndim)))
    rest = A.shape[B.ndim:]
    if math.prod(A.shape[:B.ndim]) != B.numel() or math.prod(rest) != B.numel():
        raise ShapeError(f"linalg.tensorsolve: A {fmt(A.shape)} does not fit B "
                         f"{fmt(B.shape)}: A's first {B.ndim} dims and its others must each "
                         f"hold as many elements as B")
    flat = A.reshape(B.numel(), math.prod(rest))
    return D.solve(flat, B.reshape(B.numel()), left=True).reshape(*rest)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False) -> Tensor:
    """X with A X = B (or X A = B), A's other triangle ignored (its diagonal too, taken as
    ones, with unitriangular=True).  Solved as a general system of the triangle, so a zero
    on the diagonal raises LinAlgError where PyTorch gives infinities."""
    D.check_matrices("linalg.solve_triangular", A)
    if not isinstance(B, AnyTensor) or B.ndim < 2:
        raise ShapeError("linalg.solve_triangular: B must be a batch of matrices, got "
                         f"{fmt(B.shape) if isinstance(B, AnyTensor) else type_name(B)}")
    return D.solve(_triangle(A, upper, unitriangular), B, left=left)


@autocast_op("cholesky_solve")
def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:  # noqa: N803
    """X with (L L^T) X = B, L the lower (or, upper=True, upper) Cholesky factor.  B is
    always a matrix or a batch of them (as PyTorch), broadcast against L's batch: both are
    expanded to it, so that solve never reads B [n, k] beside L [b, n, n] as vectors."""
    op = "cholesky_solve"
    D.check_matrices(op, L)
    if not isinstance(B, AnyTensor):
        raise ShrewTypeError(f"{op}: B must be a tensor, got {type_name(B)}")
    if B.ndim < 2:
        raise ShapeError(f"{op}: B should have at least 2 dimensions, but has {B.ndim} "
                         f"(shape {fmt(B.shape)})")
    batch = broadcast_shapes(op, B.shape[:-2], L.shape[:-2])
    B, L = B.expand(*batch, *B.shape[-2:]), L.expand(*batch, *L.shape[-2:])
    lower = L.mT.tril() if upper else L.tril()
    return D.solve(lower.mT, D.solve(lower, B))


@autocast_op("cholesky_inverse")
def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:  # noqa: N803
    """(L L^T)^-1 from the Cholesky factor L (upper=True: L^T L)."""
    D.check_matrices("cholesky_inverse", L)
    inverse = D.inv(L.triu() if upper else L.tril())
    return inverse @ inverse.mT if upper else inverse.mT @ inverse


# -- pairwise distances -----------------------------------------------------------------------
_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


@autocast_op("cdist")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = _CDIST_MODES[0]) -> Tensor:
    """The p-norm distance between each row of x1 [..., P, M] and each row of x2
    [..., R, M]: [..., P, R].  Always computed from the differences (the accurate way;
    PyTorch's matmul expansion for p = 2 agrees to rounding), with a zero gradient where a
    distance is zero, as PyTorch."""
    op = "cdist"
    for t in (x1, x2):
        if not isinstance(t, AnyTensor):
            raise ShrewTypeError(f"{op}: expects tensors, got {type_name(t)}")
    same_device(op, x1, x2)
    if x1.ndim < 2 or x2.ndim < 2:
        raise ShapeError(f"{op}: x1 and x2 need at least 2 dims, got {fmt(x1.shape)} and "
                         f"{fmt(x2.shape)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"{op}: x1 {fmt(x1.shape)} and x2 {fmt(x2.shape)} differ in their "
                         f"last dim")
    if x1.dtype is not x2.dtype:
        raise DTypeError(f"{op}: x1 and x2 must share a dtype, got {x1.dtype} and {x2.dtype}")
    check_float(x1.dtype, op)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p < 0 or math.isnan(p):
        raise ArgumentError(f"{op}: p must be a non-negative number, got {p!r}")
    if compute_mode not in _CDIST_MODES:
        raise ArgumentError(f"{op}: compute_mode must be one of {', '.join(_CDIST_MODES)}, got "
                            f"{compute_mode!r}")
    broadcast_shapes(op, x1.shape[:-2], x2.shape[:-2])
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1, op=op)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """The p-norm of input - other (broadcast), as one number."""
    return vector_norm(input - other, p)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:  # noqa: A002
    """input with each slice along dim (the sub-tensors input.select(dim, i)) whose p-norm
    exceeds maxnorm scaled down to norm maxnorm (PyTorch's factor maxnorm / (norm + 1e-7))."""
    x = input
    if not x.dtype.is_floating_point:
        raise DTypeError(f"renorm: needs a floating-point tensor, got {x.dtype}")
    if p <= 0:
        raise ArgumentError(f"renorm: non-positive norm not supported, got p={p}")
    if maxnorm < 0:
        raise ArgumentError(f"renorm: expected maxnorm to be >= 0, got {maxnorm}")
    if x.ndim <= 1:
        raise ShapeError(f"renorm: input needs at least 2 dimensions, got {fmt(x.shape)}")
    (d,) = normalize_dims((dim,), x.ndim, "renorm")
    others = tuple(i for i in range(x.ndim) if i != d)
    norms = vector_norm(x, p, others, keepdim=True)
    with no_grad():
        over = norms > maxnorm
    factor = (maxnorm / (norms + 1e-7)).where(over, 1.0)
    return x * factor
