"""Matrix products (matmul.cl on OpenCL, cuBLAS on CUDA)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.autocast import autocast_op
from ...core import op as O
from ...backends.base import fast_path
from ...core.dtype import check_float
from ...core.errors import type_name
from ...core.errors import DTypeError, ShapeError, ShrewTypeError, sparse_unsupported
from ...core.fields import AnyTensor, record
from ...core.shape import broadcast_shapes, fmt
from ..common import same_device
from ..sparse.coo import SparseTensor
from ..sparse.products import mm as sparse_mm
from ..elementwise.recorded import add_bias

if TYPE_CHECKING:
    from ..._tensor import Tensor


def _sparse_matmul(x: object, other: object) -> Tensor:
    """A product with a sparse COO operand (ops/sparse), dense where both operands are."""
    if isinstance(x, SparseTensor):
        return x @ other
    if isinstance(other, SparseTensor) and isinstance(x, AnyTensor) and x.ndim == 2:
        return sparse_mm(other.t(), x.t()).t()  # dense @ sparse = (sparse^T @ dense^T)^T
    bad = other if isinstance(x, AnyTensor) else x
    if isinstance(bad, SparseTensor):
        raise sparse_unsupported("matmul of a sparse tensor and a non-matrix")
    raise ShrewTypeError(f"matmul: both operands must be tensors, got {type_name(bad)}")


@autocast_op("matmul")
def matmul(x: Tensor, other: Tensor) -> Tensor:
    if not isinstance(other, AnyTensor) or not isinstance(x, AnyTensor):
        return _sparse_matmul(x, other)
    same_device("matmul", x, other)
    a, b = x, other
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: both operands need at least one dim, got "
                         f"{fmt(a.shape)} @ {fmt(b.shape)}")
    if a.dtype is not b.dtype:
        raise DTypeError(f"matmul: operands must share a dtype, got {a.dtype} @ {b.dtype}")
    if a.dtype.is_complex:
        from ..complex import arith  # four real products
        return arith.matmul(a, b)
    check_float(a.dtype, "matmul")
    if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        raise ShapeError(f"matmul: inner dimensions differ: {fmt(a.shape)} @ {fmt(b.shape)} "
                         f"({a.shape[-1]} != {b.shape[-2 if b.ndim > 1 else 0]})")
    squeeze = []
    if a.ndim == 1:
        a = a.reshape(1, a.shape[0])
        squeeze.append(-2)
    if b.ndim == 1:
        b = b.reshape(b.shape[0], 1)
        squeeze.append(-1)
    try:
        batch = broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
    except ShapeError:
        raise ShapeError(f"matmul: batch dims of {fmt(x.shape)} @ {fmt(other.shape)} "
                         f"do not broadcast") from None
    out = record(a._backend.matmul(a._data, b._data), a._backend, O.Matmul(a, b), a, b)
    if squeeze:
        keep = batch + tuple(s for i, s in zip((-2, -1), out.shape[-2:]) if i not in squeeze)
        out = out.reshape(*keep)
    return out


def linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    """x @ w.T + b of x [M, K] or [K] and w [N, K] (F.linear checks the shapes and folds
    x's leading dims).  Where x is 2-d, b is given, all three share x's float dtype and
    backend, and the backend has base.FastLinear's linear: one call, recorded as one
    Linear node; otherwise (or where the backend declines) a transpose, a product and
    add_bias."""
    backend = x._backend
    if (x.ndim == 2 and b is not None and x.dtype is w.dtype is b.dtype and w._backend is backend
            and b._backend is backend and x.dtype.is_floating_point):
        data = fast_path(backend, "linear", x._data, w._data, b._data)
        if data is not NotImplemented:
            return record(data, backend, O.Linear(x, w, b), x, w, b)
    y = matmul(x, w.transpose(0, 1))
    return y if b is None else add_bias(y, b)
