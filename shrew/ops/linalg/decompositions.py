"""The matrix decompositions and solvers of torch.linalg, each one call of the backend's
``linalg`` primitive (backends/base.py: LINALG_FNS): solve and inv, det, slogdet,
cholesky, qr, svd, svdvals, eigh, eigvalsh.  Inputs are batches of matrices [..., m, n]
of float32 or float64.  Their gradients are PyTorch's rules, in autograd/rules/linalg.py."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.autocast import autocast_op
from ...core import op as O
from ... import return_types as R
from ...core.errors import type_name
from ...core.errors import (ArgumentError, DTypeError, LinAlgError, ShapeError, ShrewTypeError,
    UnsupportedError)
from ...core.fields import AnyTensor, record, wrap
from ...core.grad_mode import is_grad_enabled
from ...core.shape import broadcast_shapes, fmt
from ..common import same_device
from ..creation import empty, eye, zeros

if TYPE_CHECKING:
    from ..._tensor import Tensor

_DTYPES = ("float32", "float64")  # LAPACK's real types; PyTorch has no half-precision linalg


def check_matrices(op: str, x: Any, square: bool = True) -> None:
    """x is a float32/float64 tensor of (square) matrices: else the error PyTorch raises."""
    if not isinstance(x, AnyTensor):
        raise ShrewTypeError(f"{op}: expects a tensor, got {type_name(x)}")
    if x.ndim < 2:
        raise ShapeError(f"{op}: the input must have at least 2 dimensions, got shape "
                         f"{fmt(x.shape)}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{op}: expects a batch of square matrices, got shape {fmt(x.shape)}")
    if x.dtype.name not in _DTYPES:
        raise DTypeError(f"{op}: expects a float32 or float64 tensor, got {x.dtype}")


def needs_grad(*xs: Tensor) -> bool:
    return is_grad_enabled() and any(x.requires_grad for x in xs)


def _routine(fn: str, x: Tensor, option: Any = None, differentiable: tuple = ()) -> tuple:
    """The backend's routine fn on x: its outputs as tensors, those at the positions in
    `differentiable` recording a Decomposition when x needs grad."""
    results = x._backend.linalg(fn, x._data, option=option)
    if not differentiable or not needs_grad(x):
        return tuple(wrap(r, x._backend) for r in results)
    saved = tuple(wrap(r, x._backend) for r in results)
    return tuple(wrap(r, x._backend, O.Decomposition(fn, x, i, saved, option))
                 if i in differentiable else saved[i] for i, r in enumerate(results))


def raise_on_info(op: str, info: Tensor, problem: str) -> None:
    """Raise LinAlgError naming the first matrix of the batch that LAPACK refused."""
    flags = info._backend.to_numpy(info._data)
    if flags.any():
        place = f" (batch element {tuple(int(i) for i in np.argwhere(flags)[0])})" \
            if flags.ndim else ""
        raise LinAlgError(f"{op}: the input matrix is {problem}{place}")


# -- solving a @ X = b ------------------------------------------------------------------------
def _is_vector_rhs(a: Tensor, b: Tensor) -> bool:
    """PyTorch's rule: b is a (batch of) vector(s) if it is 1-D or a's shape without its
    last dim."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


@autocast_op("linalg_solve")
def solve_ex(a: Tensor, b: Tensor, *, left: bool = True, check_errors: bool = False,
             op: str = "linalg.solve_ex") -> R.linalg_solve_ex:
    """(X, info): X solves a @ X = b (left) or X @ a = b, info nonzero where a is singular
    (check_errors=True: raise LinAlgError there instead)."""
    check_matrices(op, a)
    if not isinstance(b, AnyTensor):
        raise ShrewTypeError(f"{op}: B must be a tensor, got {type_name(b)}")
    same_device(op, a, b)
    if a.dtype is not b.dtype:
        raise DTypeError(f"{op}: A and B must share a dtype, got {a.dtype} and {b.dtype}")
    vector = _is_vector_rhs(a, b)
    if not vector and b.ndim < 2:
        raise ShapeError(f"{op}: B must be a vector or a batch of matrices, got "
                         f"{fmt(b.shape)}")
    rhs = b.unsqueeze(-1) if vector else b
    if not left and not vector:
        a, rhs = a.mT, rhs.mT  # X a = b is a^T X^T = b^T
    n = a.shape[-1]
    if rhs.shape[-2] != n:
        raise ShapeError(f"{op}: A {fmt(a.shape)} and B {fmt(b.shape)} do not fit: B needs "
                         f"{n} {'rows' if left else 'columns'}")
    try:
        batch = broadcast_shapes(op, a.shape[:-2], rhs.shape[:-2])
    except ShapeError:
        raise ShapeError(f"{op}: the batch dims of A {fmt(a.shape)} and B {fmt(b.shape)} do "
                         f"not broadcast") from None
    a = a.expand(*batch, n, n)
    rhs = rhs.expand(*batch, *rhs.shape[-2:])
    x_data, info_data = a._backend.linalg("solve", a._data, rhs._data)
    x = record(x_data, a._backend, O.Solve(a, rhs), a, rhs)
    if vector:
        x = x.squeeze(-1)
    elif not left:
        x = x.mT
    info = wrap(info_data, a._backend)
    if check_errors:
        raise_on_info(op, info, "singular")
    return R.linalg_solve_ex(x, info)


@autocast_op("linalg_solve")
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803  (torch's names)
    return solve_ex(A, B, left=left, check_errors=True, op="linalg.solve").result


@autocast_op("linalg_inv_ex")
def inv_ex(A: Tensor, *, check_errors: bool = False, op: str = "linalg.inv_ex") -> R.linalg_inv_ex:  # noqa: N803
    """(inverse, info): a @ X = I solved for X; info nonzero where A is singular."""
    check_matrices(op, A)
    identity = eye(A.shape[-1], dtype=A.dtype, device=A.device)
    return R.linalg_inv_ex(*solve_ex(A, identity.expand(*A.shape), check_errors=check_errors,
                                     op=op))


@autocast_op("linalg_inv")
def inv(A: Tensor) -> Tensor:  # noqa: N803
    return inv_ex(A, check_errors=True, op="linalg.inv").inverse


@autocast_op("inverse")
def inverse(x: Tensor) -> Tensor:
    return inv_ex(x, check_errors=True, op="inverse").inverse


# -- determinants -----------------------------------------------------------------------------
def det(A: Tensor, op: str = "linalg.det") -> Tensor:  # noqa: N803
    check_matrices(op, A)
    return _routine("det", A, differentiable=(0,))[0]


def slogdet(A: Tensor, op: str = "linalg.slogdet") -> R.linalg_slogdet:  # noqa: N803
    """(sign, log|det|): sign is +-1, or 0 with log|det| = -inf for a singular matrix.  Both
    record grad, as PyTorch's (the sign's gradient is zero)."""
    check_matrices(op, A)
    return R.linalg_slogdet(*_routine("slogdet", A, differentiable=(0, 1)))


def torch_slogdet(x: Tensor) -> R.slogdet:
    return R.slogdet(*slogdet(x, op="slogdet"))


def logdet(x: Tensor) -> Tensor:
    """log(det): NaN where det < 0, -inf where det = 0 (log of the sign, added)."""
    sign, logabsdet = slogdet(x, op="logdet")
    return logabsdet + sign.log()


# -- factorizations ---------------------------------------------------------------------------
@autocast_op("linalg_cholesky_ex")
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False,  # noqa: N803
                op: str = "linalg.cholesky_ex") -> R.linalg_cholesky_ex:
    """(L, info) with A = L L^T, L lower (or U = L^T with upper=True); info nonzero where
    A is not positive-definite.  Only the lower triangle of A is read."""
    check_matrices(op, A)
    factor, info = _routine("cholesky", A, differentiable=(0,))
    if check_errors:
        raise_on_info(op, info, "not positive-definite")
    return R.linalg_cholesky_ex(factor.mT if upper else factor, info)


@autocast_op("linalg_cholesky")
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    return cholesky_ex(A, upper=upper, check_errors=True, op="linalg.cholesky").L


@autocast_op("cholesky")
def torch_cholesky(x: Tensor, upper: bool = False) -> Tensor:
    return cholesky_ex(x, upper=upper, check_errors=True, op="cholesky").L


_QR_MODES = ("reduced", "complete", "r")


@autocast_op("linalg_qr")
def qr(A: Tensor, mode: str = "reduced", op: str = "linalg.qr") -> R.linalg_qr:  # noqa: N803
    """A = Q R, Q with orthonormal columns, R upper triangular; mode 'r' gives R alone
    (and an empty Q), as PyTorch."""
    check_matrices(op, A, square=False)
    if mode not in _QR_MODES:
        raise ArgumentError(f"{op}: mode must be one of {', '.join(_QR_MODES)}, got {mode!r}")
    q, r = _routine("qr", A, "complete" if mode == "complete" else "reduced",
                    differentiable=(0, 1))
    if mode == "r":
        q = empty(0, dtype=A.dtype, device=A.device)
    return R.linalg_qr(q, r)


@autocast_op("qr")
def torch_qr(x: Tensor, some: bool = True) -> R.qr:
    return R.qr(*qr(x, "reduced" if some else "complete", op="qr"))


@autocast_op("linalg_svd")
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None,  # noqa: N803
        op: str = "linalg.svd") -> R.linalg_svd:
    """A = U diag(S) Vh with S descending.  Singular vectors are unique only up to sign (and
    to rotations within repeated singular values): gradients through U or Vh are defined
    only where the loss does not depend on that choice, as in PyTorch."""
    check_matrices(op, A, square=False)
    if driver is not None:
        raise ArgumentError(f"{op}: driver= is for CUDA's cuSOLVER in PyTorch; shrew takes only "
                            f"driver=None")
    return R.linalg_svd(*_routine("svd", A, bool(full_matrices), differentiable=(0, 1, 2)))


@autocast_op("svd")
def torch_svd(x: Tensor, some: bool = True, compute_uv: bool = True) -> R.svd:
    """torch.svd: (U, S, V) with V, not Vh; compute_uv=False gives the singular values and
    zero U [m, m] and V [n, n], as PyTorch."""
    if not compute_uv:
        check_matrices("svd", x, square=False)
        m, n = x.shape[-2:]
        batch = tuple(x.shape[:-2])
        return R.svd(zeros(*batch, m, m, dtype=x.dtype, device=x.device), svdvals(x),
                     zeros(*batch, n, n, dtype=x.dtype, device=x.device))
    u, s, vh = svd(x, full_matrices=not some, op="svd")
    return R.svd(u, s, vh.mT)


@autocast_op("linalg_svdvals")
def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:  # noqa: N803
    """The singular values, descending.  With grad, computed by the full svd, whose U and Vh
    the gradient needs."""
    check_matrices("linalg.svdvals", A, square=False)
    if driver is not None:
        raise UnsupportedError("linalg.svdvals: shrew takes only driver=None")
    if not needs_grad(A):
        return _routine("svdvals", A)[0]
    u, s, vh = (wrap(r, A._backend) for r in A._backend.linalg("svd", A._data, option=False))
    return wrap(s._data, A._backend, O.Decomposition("svdvals", A, 0, (u, s, vh)))


def _check_uplo(op: str, uplo: str) -> None:
    if uplo not in ("L", "U"):
        raise ArgumentError(f"{op}: UPLO must be 'L' or 'U', got {uplo!r}")


@autocast_op("linalg_eigh")
def eigh(A: Tensor, UPLO: str = "L") -> R.linalg_eigh:  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices, read from
    the UPLO triangle.  Eigenvectors are unique only up to sign (and rotations within a
    repeated eigenvalue's space), so gradients through them are defined only where the loss
    does not depend on that choice, as in PyTorch."""
    check_matrices("linalg.eigh", A)
    _check_uplo("linalg.eigh", UPLO)
    return R.linalg_eigh(*_routine("eigh", A, UPLO, differentiable=(0, 1)))


@autocast_op("linalg_eigvalsh")
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    check_matrices("linalg.eigvalsh", A)
    _check_uplo("linalg.eigvalsh", UPLO)
    if not needs_grad(A):
        return _routine("eigvalsh", A, UPLO)[0]
    return _routine("eigh", A, UPLO, differentiable=(0,))[0]
