"""Gradient rules of the linalg family: matmul's (ops/linalg/matmul.py), and the decompositions'
and solvers' (ops/linalg/decompositions.py), PyTorch's rules written as Tensor code, so that with
create_graph=True they are recorded and differentiate again.  Each decomposition's rule is
linear in its output's gradient, so a routine with several outputs (qr, svd, eigh) has
one rule per output and x's gradient is their sum."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import op as O
from ...core.errors import StateError
from ...core.grad_mode import is_grad_enabled, no_grad
from ...ops.linalg import decompositions as D
from ...ops.creation import zeros_like
from ...ops.shape.composed import diag_embed
from .scan import products_of_others
from ...ops.shape.recorded import cat
from ...core.shape import numel
from .common import fast_gradients, sum_to_shape

if TYPE_CHECKING:
    from ..._tensor import Tensor


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


def linear_grads(x: Tensor, w: Tensor, b: Tensor, g: Tensor) -> tuple:
    """Of y = x @ w.T + b (ops/linalg.linear): dx = g @ w, dw = g^T @ x, db = g summed over
    the rows, each only where its input needs it.  In a plain backward one backend call
    gives them (base.FastLinear); otherwise they are Tensor operations, recorded under
    create_graph so that they can be differentiated again."""
    need = (x.requires_grad, w.requires_grad, b.requires_grad)
    fast = fast_gradients(x._backend, "linear_backward", g._data, x._data, w._data, *need)
    if fast is None:
        fast = (g @ w if need[0] else None,
                g.transpose(0, 1) @ x if need[1] else None,
                g.sum(0) if need[2] else None)
    return tuple(zip((x, w, b), fast))


def solve_grads(a: Tensor, b: Tensor, x: Tensor, g: Tensor) -> tuple:
    """X = a^-1 b: gb = a^-T g, ga = -gb X^T."""
    gb = D.solve(a.mT, g)
    return ((a, -(gb @ x.mT)), (b, gb))


def decomposition_grad(op: O.Decomposition, y: Tensor, g: Tensor) -> Tensor:
    """x's gradient from output number op.index (y) of op.fn's routine."""
    x, saved = op.x, op.saved
    if is_grad_enabled() and op.fn in ("qr", "svd", "svdvals", "eigh"):
        saved = _recorded(op)  # create_graph: the outputs' own dependence on x counts
    match op.fn:
        case "det":
            return g[..., None, None] * _cofactors(x)
        case "slogdet" if op.index == 0:  # the sign: piecewise constant
            return zeros_like(x)
        case "slogdet":
            return g[..., None, None] * D.inv(x).mT
        case "cholesky":
            return _cholesky_grad(y, g)
        case "qr":
            return _qr_grad(x, saved[0], saved[1], op.option, g if op.index == 0 else None,
                            g if op.index == 1 else None)
        case "svd" | "svdvals":
            return _svd_grad(x, saved[0], saved[1], saved[2], op.index if op.fn == "svd" else 1,
                             g)
        case "eigh":
            return _eigh_grad(saved[0], saved[1], op.index, g)
        case "pinv":
            return _pinv_grad(x, y, g)
    raise StateError(f"backward: no gradient rule for linalg routine {op.fn!r}")


def _recorded(op: O.Decomposition) -> tuple:
    """op's routine again on x, recorded."""
    match op.fn:
        case "qr":
            return tuple(D.qr(op.x, op.option))
        case "svd":
            return tuple(D.svd(op.x, op.option))
        case "svdvals":
            return tuple(D.svd(op.x, False))
        case _:  # eigh
            return tuple(D.eigh(op.x, op.option))


def _cofactors(x: Tensor) -> Tensor:
    """det(x) x^-T, from the svd x = U S Vh so that a singular x has one too:
    det(U) det(Vh) U diag(prod of the other singular values) Vh."""
    if x.shape[-1] == 0:
        return zeros_like(x)
    u, s, vh = D.svd(x, full_matrices=False)
    with no_grad():
        sign = D.det(u) * D.det(vh)  # +-1: orthogonal factors
    return (u * (products_of_others(s, s.ndim - 1) * sign[..., None])[..., None, :]) @ vh


def _inverse_transpose_right(z: Tensor, r: Tensor) -> Tensor:
    """z r^-T, as (r^-1 z^T)^T."""
    return D.solve(r, z.mT).mT


def _cholesky_grad(lower: Tensor, g: Tensor) -> Tensor:
    """A = L L^T: gA = L^-T phi(L^T gL) L^-1, symmetrized, phi taking the lower triangle
    with its diagonal halved."""
    p = (lower.mT @ g).tril()
    p = p - 0.5 * diag_embed(p.diagonal(0, -2, -1))
    z = D.solve(lower.mT, D.solve(lower.mT, p).mT).mT
    return 0.5 * (z + z.mT)


def _qr_grad(x: Tensor, q: Tensor, r: Tensor, mode: str, gq: Tensor | None,
             gr: Tensor | None) -> Tensor:
    m, n = x.shape[-2:]
    if m > n and mode == "complete":
        raise StateError("linalg.qr: the decomposition is not differentiable with "
                         "mode='complete' when the matrix has more rows than columns")
    gq = zeros_like(q) if gq is None else gq
    gr = zeros_like(r) if gr is None else gr
    if m >= n:
        return _qr_tall_grad(q, r, gq, gr)
    # A = [X | Y] with X = Q R1 square and Y = Q R2: R2 = Q^T Y feeds Q's gradient too
    gx = _qr_tall_grad(q, r[..., :m], gq + x[..., m:] @ gr[..., m:].mT, gr[..., :m])
    return cat([gx, q @ gr[..., m:]], -1)


def _qr_tall_grad(q: Tensor, r: Tensor, gq: Tensor, gr: Tensor) -> Tensor:
    """A = Q R with Q [m, n] and R [n, n] square: from Q^T dA R^-1 = Q^T dQ + dR R^-1, a
    skew-symmetric plus an upper-triangular part, gA = [gQ + Q (M - Q^T gQ)] R^-T with
    M = gR R^T + the strictly lower part of B - B^T, B = Q^T gQ - gR R^T."""
    qtgq, grrt = q.mT @ gq, gr @ r.mT
    b = qtgq - grrt
    m = grrt + (b - b.mT).tril(-1)
    return _inverse_transpose_right(gq + q @ (m - qtgq), r)


def _svd_grad(x: Tensor, u: Tensor, s: Tensor, vh: Tensor, index: int, g: Tensor) -> Tensor:
    """A = U diag(S) Vh (PyTorch's rule; undefined where singular values repeat, and where
    U or Vh's gradient depends on their sign)."""
    m, n = x.shape[-2:]
    k = s.shape[-1]
    u, vh = u[..., :k], vh[..., :k, :]  # full_matrices: the extra vectors are free
    if index == 1:
        return (u * g[..., None, :]) @ vh
    s2 = s * s
    gap = s2[..., None, :] - s2[..., :, None]  # s_j^2 - s_i^2, 1 on the diagonal
    gap = gap + diag_embed(s2 * 0 + 1)
    if index == 0:
        gu = g[..., :k]
        j = u.mT @ gu
        out = u @ (((j - j.mT) * s[..., None, :]) / gap) @ vh
        if m > k:
            out = out + ((gu - u @ j) / s[..., None, :]) @ vh
        return out
    gv = g[..., :k, :].mT
    v = vh.mT
    kk = v.mT @ gv
    out = u @ ((s[..., :, None] * (kk - kk.mT)) / gap) @ vh
    if n > k:
        out = out + u @ ((gv - v @ kk) / s[..., None, :]).mT
    return out


def _eigh_grad(w: Tensor, q: Tensor, index: int, g: Tensor) -> Tensor:
    """A = Q diag(w) Q^T: gA = Q (diag(gw) + (Q^T gQ) / (w_j - w_i), 0 on the diagonal) Q^T."""
    if index == 0:
        return (q * g[..., None, :]) @ q.mT
    gap = w[..., None, :] - w[..., :, None]
    gap = gap + diag_embed(w * 0 + 1)
    inner = (q.mT @ g) / gap
    inner = inner - diag_embed(inner.diagonal(0, -2, -1))
    return q @ inner @ q.mT


def _pinv_grad(a: Tensor, p: Tensor, g: Tensor) -> Tensor:
    """P = pinv(A): gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)."""
    gt = g.mT
    return (-(p.mT @ g @ p.mT) + (gt - a @ (p @ gt)) @ (p @ p.mT)
            + (p.mT @ p) @ (gt - (gt @ p) @ a))
