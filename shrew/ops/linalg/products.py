"""Matrix and vector products composed from matmul, the layout ops and elementwise
arithmetic (issue 16): mm, bmm, mv, dot, inner, outer, the add* family with beta and
alpha, tensordot, kron, cross, matrix_power and multi_dot.  Gradients come from their
parts; every backend runs them."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...core.autocast import autocast_op
from ...core.errors import ArgumentError, ShapeError, ShrewTypeError, not_a_tensor
from ...core.fields import AnyTensor
from ...core.shape import broadcast_shapes, fmt, normalize_dim
from ..shape.composed import diag_embed
from ..shape.recorded import cat, expand, narrow, permute
from .decompositions import inv_ex
from .matmul import matmul
from ..sparse.coo import SparseTensor
from ..sparse.products import addmm as sparse_addmm

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import Scalar


def _need(op: str, ndims: Sequence[int], *tensors: Any) -> None:
    for t, n in zip(tensors, ndims):
        if not isinstance(t, AnyTensor):
            raise not_a_tensor(op, "every operand", t)
        if t.ndim != n:
            shown = ", ".join(fmt(x.shape) for x in tensors)
            raise ShapeError(f"{op}: expects {'-d, '.join(map(str, ndims))}-d tensors, "
                             f"got {shown}")


def _inner_sizes(op: str, x: Tensor, other: Tensor) -> None:
    if x.shape[-1] != other.shape[-2 if other.ndim > 1 else 0]:
        raise ShapeError(f"{op}: inner dimensions differ: {fmt(x.shape)} and "
                         f"{fmt(other.shape)}")


@autocast_op("mm")
def mm(x: Tensor, mat2: Tensor) -> Tensor:
    if isinstance(x, SparseTensor) or isinstance(mat2, SparseTensor):
        return matmul(x, mat2)  # a sparse operand (ops/sparse)
    _need("mm", (2, 2), x, mat2)
    _inner_sizes("mm", x, mat2)
    return matmul(x, mat2)


@autocast_op("bmm")
def bmm(x: Tensor, mat2: Tensor) -> Tensor:
    _need("bmm", (3, 3), x, mat2)
    if x.shape[0] != mat2.shape[0]:
        raise ShapeError(f"bmm: batch sizes differ: {fmt(x.shape)} and {fmt(mat2.shape)}")
    _inner_sizes("bmm", x, mat2)
    return matmul(x, mat2)


@autocast_op("mv")
def mv(x: Tensor, vec: Tensor) -> Tensor:
    _need("mv", (2, 1), x, vec)
    _inner_sizes("mv", x, vec)
    return matmul(x, vec)


@autocast_op("dot")
def dot(x: Tensor, other: Tensor) -> Tensor:
    _need("dot", (1, 1), x, other)
    if x.shape != other.shape:
        raise ShapeError(f"dot: vectors differ in length: {fmt(x.shape)} and "
                         f"{fmt(other.shape)}")
    return (x * other).sum()


@autocast_op("inner")
def inner(x: Tensor, other: Tensor) -> Tensor:
    """Sum over the last dims of both (a plain product when either is 0-d)."""
    if x.ndim == 0 or other.ndim == 0:
        return x * other
    return tensordot(x, other, ([-1], [-1]))


@autocast_op("outer")
def outer(x: Tensor, vec2: Tensor) -> Tensor:
    _need("outer", (1, 1), x, vec2)
    return x.reshape(-1, 1) * vec2.reshape(1, -1)


def _scaled_sum(op: str, x: Tensor, product: Tensor, beta: Scalar, alpha: Scalar) -> Tensor:
    """beta * x + alpha * product, x broadcast to the product; beta = 0 ignores x's
    values (nan and inf included), as torch does."""
    try:
        broadcast_shapes(op, x.shape, product.shape)
    except ShapeError:
        raise ShapeError(f"{op}: input {fmt(x.shape)} does not broadcast to the product's "
                         f"shape {fmt(product.shape)}") from None
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return expand(scaled, (product.shape,))
    return (x if beta == 1 else x * beta) + scaled


@autocast_op("addmm")
def addmm(x: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Scalar = 1,
          alpha: Scalar = 1) -> Tensor:
    if isinstance(mat1, SparseTensor):
        return sparse_addmm(x, mat1, mat2, beta=beta, alpha=alpha)
    return _scaled_sum("addmm", x, mm(mat1, mat2), beta, alpha)


@autocast_op("addmv")
def addmv(x: Tensor, mat: Tensor, vec: Tensor, *, beta: Scalar = 1, alpha: Scalar = 1,
          ) -> Tensor:
    return _scaled_sum("addmv", x, mv(mat, vec), beta, alpha)


@autocast_op("addr")
def addr(x: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Scalar = 1, alpha: Scalar = 1,
         ) -> Tensor:
    return _scaled_sum("addr", x, outer(vec1, vec2), beta, alpha)


@autocast_op("baddbmm")
def baddbmm(x: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Scalar = 1,
            alpha: Scalar = 1) -> Tensor:
    return _scaled_sum("baddbmm", x, bmm(batch1, batch2), beta, alpha)


@autocast_op("addbmm")
def addbmm(x: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Scalar = 1,
           alpha: Scalar = 1) -> Tensor:
    return _scaled_sum("addbmm", x, bmm(batch1, batch2).sum(0), beta, alpha)


@autocast_op("tensordot")
def tensordot(a: Tensor, b: Tensor, dims: int | Sequence[Any] = 2) -> Tensor:
    """Contract the last `dims` dims of a with the first of b, or the listed dim pairs."""
    if isinstance(dims, int):
        if not 0 <= dims <= min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: dims {dims} is out of range for {fmt(a.shape)} "
                             f"and {fmt(b.shape)}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        da = [normalize_dim(d, a.ndim, "tensordot") for d in da]
        db = [normalize_dim(d, b.ndim, "tensordot") for d in db]
    if len(da) != len(db):
        raise ShapeError(f"tensordot: dims {da} of {fmt(a.shape)} and {db} of "
                         f"{fmt(b.shape)} differ in number")
    for i, j in zip(da, db):  # a size-1 dim broadcasts against its partner, as in torch
        if a.shape[i] == b.shape[j]:
            continue
        if a.shape[i] != 1 and b.shape[j] != 1:
            raise ShapeError(f"tensordot: dim {i} of {fmt(a.shape)} and dim {j} of "
                             f"{fmt(b.shape)} differ in size")
        a, b = (a, b.sum(j, keepdim=True)) if a.shape[i] == 1 else (a.sum(i, keepdim=True), b)
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    lhs = permute(a, (free_a + da,)).reshape(-1, k)
    rhs = permute(b, (db + free_b,)).reshape(k, -1)
    out_shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    if not a.dtype.is_floating_point:  # matmul is float-only; ints multiply and sum
        return (lhs.unsqueeze(-1) * rhs.unsqueeze(0)).sum(1).reshape(*out_shape)
    return matmul(lhs, rhs).reshape(*out_shape)


@autocast_op("kron")
def kron(x: Tensor, other: Tensor) -> Tensor:
    n = max(x.ndim, other.ndim)
    a = x.reshape(*(1,) * (n - x.ndim), *x.shape)
    b = other.reshape(*(1,) * (n - other.ndim), *other.shape)
    # a's dims interleaved with b's: [a0, 1, a1, 1, ...] * [1, b0, 1, b1, ...]
    prod = a.reshape(*[v for s in a.shape for v in (s, 1)]) * \
        b.reshape(*[v for s in b.shape for v in (1, s)])
    return prod.reshape(*[sa * sb for sa, sb in zip(a.shape, b.shape)])


@autocast_op("cross")
def cross(x: Tensor, other: Tensor, dim: int | None = None, op: str = "cross") -> Tensor:
    """The 3-vector cross product along dim (torch.cross: the first dim of size 3 when
    dim is None; linalg.cross passes -1)."""
    shape = broadcast_shapes(op, x.shape, other.shape)
    if dim is None:
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise ShapeError(f"{op}: no dim of size 3 in {fmt(x.shape)} and {fmt(other.shape)}")
    d = normalize_dim(dim, len(shape), op)
    if shape[d] != 3 or x.shape[d - len(shape)] != 3 or other.shape[d - len(shape)] != 3:
        raise ShapeError(f"{op}: dim {dim} must have size 3 in both {fmt(x.shape)} and "
                         f"{fmt(other.shape)}")
    a, b = expand(x, (shape,)), expand(other, (shape,))
    a1, a2, a3 = (narrow(a, d, i, 1) for i in range(3))
    b1, b2, b3 = (narrow(b, d, i, 1) for i in range(3))
    return cat([a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1], d)


def linalg_cross(x: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    return cross(x, other, dim, "linalg.cross")


def matrix_power(x: Tensor, n: int) -> Tensor:
    """x multiplied by itself n times (by repeated squaring); n = 0 gives identities, a
    negative n the power -n of x's inverse."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"matrix_power: expects square matrices, got {fmt(x.shape)}")
    if not isinstance(n, int) or isinstance(n, bool):
        raise ShrewTypeError(f"matrix_power: n must be an int, got {n!r}")
    if n < 0:
        x, n = inv_ex(x, check_errors=True, op="matrix_power").inverse, -n
    if n == 0:
        return diag_embed(x.diagonal(0, -2, -1) * 0 + 1)
    result, square = None, x
    while n:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    assert result is not None
    return result


@autocast_op("multi_dot")
def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """Matrices multiplied left to right; the first may be a row vector, the last a column."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ArgumentError(f"multi_dot: expects at least 2 tensors, got {len(tensors)}")
    for i, t in enumerate(tensors):
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, len(tensors) - 1))
        if not ok:
            raise ShapeError(f"multi_dot: tensor {i} has shape {fmt(t.shape)}; the first and "
                             f"last must be 1-d or 2-d, the others 2-d")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


@autocast_op("chain_matmul")
def chain_matmul(*matrices: Tensor) -> Tensor:
    if len(matrices) == 1:
        return matrices[0]
    _need("chain_matmul", (2,) * len(matrices), *matrices)
    return multi_dot(matrices)
