"""Scans along one dim: cumsum, cumprod, logcumsumexp, cummax, cummin, and diff (scan.cl on
OpenCL and CUDA; the backends' `scan` and `arg_scan` primitives)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.autocast import autocast_op
from ..core import op as O
from .. import return_types
from ..core.dtype import as_dtype, bool_, check_float, int64
from ..core.errors import ArgumentError
from ..core.fields import AnyTensor, record, wrap
from ..core.shape import normalize_dim
from .common import constant, numpy_keywords, scalar_like
from .index.recorded import gather
from .shape.recorded import cat

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import DTypeLike


def _line_op(x: Tensor, dim: int, op: str) -> tuple[Tensor, int]:
    """x with at least one dim (a 0-d tensor scans as one element), and dim normalised."""
    d = normalize_dim(dim, x.ndim, op)
    return (x.reshape(1) if x.ndim == 0 else x), d


_SCAN_OPS = {"sum": "cumsum", "prod": "cumprod", "logsumexp": "logcumsumexp"}


def scan(fn: str, x: Tensor, dim: int, dtype: DTypeLike | None = None) -> Tensor:
    """The running sum, product or log-sum-exp along dim; integers and bools sum and
    multiply in int64 (log-sum-exp takes floating-point tensors only, as PyTorch)."""
    op = _SCAN_OPS[fn]
    if dtype is not None:
        x = x.to_dtype(as_dtype(dtype))
    if fn == "logsumexp":
        check_float(x.dtype, op)
    elif not x.dtype.is_floating_point:
        x = x.to_dtype(int64)
    line, d = _line_op(x, dim, op)
    data = line._backend.scan(fn, line._data, d) if line.numel() else line._data
    out = record(data, x._backend, O.Scan(fn, line, d), line)
    return out.reshape() if x.ndim == 0 else out


@autocast_op("cumsum")
@numpy_keywords
def cumsum(x: Tensor, dim: int, *, dtype: DTypeLike | None = None) -> Tensor:
    return scan("sum", x, dim, dtype)


@autocast_op("cumprod")
@numpy_keywords
def cumprod(x: Tensor, dim: int, *, dtype: DTypeLike | None = None) -> Tensor:
    return scan("prod", x, dim, dtype)


@numpy_keywords
def logcumsumexp(x: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(x))) along dim, without overflow (a running logaddexp)."""
    return scan("logsumexp", x, dim)


def _arg_scan(fn: str, x: Tensor, dim: int) -> Any:
    """(running extreme, its index): the values come from gather, so the gradient goes to
    the index, as PyTorch's cummax / cummin."""
    line, d = _line_op(x, dim, f"cum{fn}")
    if line.numel():
        indices = wrap(line._backend.arg_scan(fn, line._data, d), line._backend)
    else:
        indices = constant(line.shape, 0, int64, line._backend)
    values = gather(line, d, indices, range_checked=True)
    if x.ndim == 0:
        values, indices = values.reshape(), indices.reshape()
    result = return_types.cummax if fn == "max" else return_types.cummin
    return result(values, indices)


@numpy_keywords
def cummax(x: Tensor, dim: int) -> return_types.cummax:
    return _arg_scan("max", x, dim)


@numpy_keywords
def cummin(x: Tensor, dim: int) -> return_types.cummin:
    return _arg_scan("min", x, dim)


@numpy_keywords
def diff(x: Tensor, n: int = 1, dim: int = -1, prepend: Any = None,
         append: Any = None) -> Tensor:
    """The n-th forward difference along dim (bools: whether neighbours differ)."""
    if x.ndim == 0:
        raise ArgumentError("diff: expects a tensor with at least one dim, got a 0-d tensor")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ArgumentError(f"diff: n must be a non-negative int, got {n!r}")
    d = normalize_dim(dim, x.ndim, "diff")
    parts = []
    for extra in (prepend, x, append):
        if extra is None:
            continue
        if not isinstance(extra, AnyTensor):  # a number: one slice of it along dim
            extra = scalar_like(extra, x).expand(
                *[1 if i == d else s for i, s in enumerate(x.shape)])
        parts.append(extra)
    x = cat(parts, d) if len(parts) > 1 else x
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        later, earlier = x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1)
        x = (later != earlier) if x.dtype is bool_ else later - earlier
    return x
