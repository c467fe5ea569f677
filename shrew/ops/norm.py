"""Normalisations along dims, each one fused kernel: softmax and log_softmax, and
standardize (the core of layer_norm) (norm.cl on OpenCL and CUDA); and layer norm with
its weight and bias, one call where a backend has base.FastNorm."""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

from ..core.autocast import autocast_op
from ..core import op as O
from ..backends.base import fast_path
from ..core.dtype import FLOAT, as_dtype, check_float, float32
from ..core.errors import not_a_tensor
from ..core.errors import ShapeError, ShrewTypeError
from ..core.fields import AnyTensor, record, wrap
from ..core.shape import fmt, normalize_dim
from .elementwise.recorded import add_bias
from .sparse.coo import SparseTensor
from .sparse.products import log_softmax as sparse_log_softmax, softmax as sparse_softmax

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import DTypeLike


@autocast_op("softmax")
def softmax(x: Tensor, dim: int, log: bool = False, dtype: DTypeLike | None = None) -> Tensor:
    """exp(x) normalised to sum to 1 along dim (its log with `log`), computed stably for any
    magnitude; in `dtype` if given (x is cast first, as PyTorch)."""
    name = "log_softmax" if log else "softmax"
    if dtype is not None:
        x = x.to_dtype(as_dtype(dtype))
    d = normalize_dim(dim, x.ndim, name)
    x = x if x.dtype.category == FLOAT else x.to_dtype(float32)
    if x.ndim == 0:  # one element along its only "dim"
        return softmax(x.reshape(1), 0, log).reshape()
    if 0 in x.shape:  # nothing to normalise, and no max to subtract
        data = x._backend.full(x.shape, 0, x.dtype.np)
    else:
        data = x._backend.softmax(x._data, d, log)
    return record(data, x._backend, O.Softmax(x, d, log), x)


def softmax_function(input: Tensor, dim: int, dtype: DTypeLike | None = None) -> Tensor:  # noqa: A002
    """shrew.softmax (torch.softmax); of a sparse tensor, torch.sparse.softmax."""
    if isinstance(input, SparseTensor):
        return sparse_softmax(input, dim, dtype)
    return softmax(input, dim, False, dtype)


def log_softmax_function(input: Tensor, dim: int,  # noqa: A002
                         dtype: DTypeLike | None = None) -> Tensor:
    """shrew.log_softmax (torch.log_softmax); of a sparse tensor, torch.sparse.log_softmax."""
    if isinstance(input, SparseTensor):
        return sparse_log_softmax(input, dim, dtype)
    return softmax(input, dim, True, dtype)


def _norm_dims(op: str, x: Tensor, ndims: int, eps: float) -> tuple[int, ...]:
    """The last `ndims` dims of x, once x, ndims and eps are checked."""
    if not isinstance(x, AnyTensor):
        raise not_a_tensor(op, "input", x)
    check_float(x.dtype, op)
    if isinstance(ndims, bool) or not isinstance(ndims, int) or not 1 <= ndims <= x.ndim:
        raise ShapeError(f"{op}: ndims must be an int from 1 to {x.ndim} for input "
                         f"{fmt(x.shape)}, got {ndims!r}")
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):  # (any sign: PyTorch's)
        raise ShrewTypeError(f"{op}: eps must be a number, got {eps!r}")
    return tuple(range(x.ndim - ndims, x.ndim))


def standardize(x: Tensor, ndims: int, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the last `ndims` dims, with the biased variance:
    layer_norm without its weight and bias, as one fused kernel."""
    return _standardize(x, _norm_dims("standardize", x, ndims, eps), eps)


def _standardize(x: Tensor, dims: tuple[int, ...], eps: float) -> Tensor:
    backend = x._backend
    if 0 in x.shape:  # nothing to normalise
        keep = tuple(1 if d in dims else s for d, s in enumerate(x.shape))
        data, rstd = backend.full(x.shape, 0, x.dtype.np), backend.full(keep, 1, x.dtype.np)
    else:
        data, rstd = backend.standardize(x._data, dims, float(eps))
    op = O.Standardize(x, dims, float(eps), wrap(rstd, backend))
    return record(data, backend, op, x)


def layer_norm_affine(x: Tensor, ndims: int, weight: Tensor, bias: Tensor,
                      eps: float = 1e-5) -> Tensor:
    """standardize(x, ndims, eps) * weight + bias: layer_norm with its weight and bias.
    Where weight and bias have the shape of the last `ndims` dims and x's dtype and device
    and the backend has base.FastNorm's layer_norm, one call, recorded as one LayerNorm
    node; otherwise (or where the backend declines) the composition of standardize, a
    product and add_bias."""
    dims = _norm_dims("layer_norm", x, ndims, eps)
    backend = x._backend
    norm_shape = x.shape[x.ndim - ndims:]
    got = NotImplemented
    if (isinstance(weight, AnyTensor) and isinstance(bias, AnyTensor)
            and weight.shape == bias.shape == norm_shape and 0 not in x.shape
            and weight.dtype is bias.dtype is x.dtype
            and weight._backend is backend and bias._backend is backend):
        got = fast_path(backend, "layer_norm", x._data, weight._data, bias._data, ndims,
                        float(eps))
    if got is NotImplemented:
        return add_bias(_standardize(x, dims, eps) * weight, bias)
    data, mean, rstd = got
    op = O.LayerNorm(x, weight, bias, dims, float(eps), wrap(mean, backend),
                     wrap(rstd, backend))
    return record(data, backend, op, x, weight, bias)
