"""Reductions: sum, mean, max, min over dims, and argmax/argmin (reduce.cl on OpenCL)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import op as O
from ..dtype import bool_, check_float, int64
from ..errors import ShapeError
from ..factory import record, wrap
from ..shape import fmt, normalize_dim, normalize_dims
from .common import constant

if TYPE_CHECKING:
    from ..tensor import Tensor
    from ..typing import Dims


def reduce(fn: str, x: Tensor, dim: Dims, keepdim: bool) -> Tensor:
    dims = normalize_dims(dim, x.ndim, fn)
    if fn == "mean":
        check_float(x.dtype, "mean")
    if fn in ("max", "min") and any(x.shape[d] == 0 for d in dims):
        raise ShapeError(f"{fn}: cannot reduce over a zero-size dim (shape "
                         f"{fmt(x.shape)}, dim {dim})")
    if fn == "sum" and x.dtype is bool_:
        x = x.to_dtype(int64)
    if not dims:  # a 0-d tensor: nothing to reduce
        return x if fn != "sum" or x.dtype.is_floating_point else x.to_dtype(int64)
    data = x._backend.reduce(fn, x._data, dims, bool(keepdim))
    return record(data, x._backend, O.Reduce(fn, x, dims, bool(keepdim)), x)


def arg_reduce(fn: str, x: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    if dim is None:
        return arg_reduce(fn, x.reshape(-1), 0, False) if not keepdim else \
            arg_reduce(fn, x.reshape(-1), 0, False).reshape(*[1] * x.ndim)
    d = normalize_dim(dim, x.ndim, fn)
    if x.ndim == 0:
        return constant((), 0, int64, x._backend)
    if x.shape[d] == 0:
        raise ShapeError(f"{fn}: cannot reduce over a zero-size dim (shape {fmt(x.shape)})")
    return wrap(x._backend.arg_reduce(fn, x._data, d, bool(keepdim)), x._backend)
