"""Normalisations along dims, each one fused kernel: softmax and log_softmax, and
standardize (the core of layer_norm) (norm.cl on OpenCL and CUDA)."""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

from .. import op as O
from ..dtype import FLOAT, as_dtype, check_float, float32
from ..errors import ShapeError, ShrewError
from ..factory import AnyTensor, record, wrap
from ..shape import fmt, normalize_dim

if TYPE_CHECKING:
    from ..tensor import Tensor
    from ..typing import DTypeLike


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
    """shrew.softmax (torch.softmax)."""
    return softmax(input, dim, False, dtype)


def log_softmax_function(input: Tensor, dim: int,  # noqa: A002
                         dtype: DTypeLike | None = None) -> Tensor:
    """shrew.log_softmax (torch.log_softmax)."""
    return softmax(input, dim, True, dtype)


def standardize(x: Tensor, ndims: int, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the last `ndims` dims, with the biased variance:
    layer_norm without its weight and bias, as one fused kernel."""
    if not isinstance(x, AnyTensor):
        raise ShrewError(f"standardize: input must be a Tensor, got {type(x).__name__}")
    check_float(x.dtype, "standardize")
    if isinstance(ndims, bool) or not isinstance(ndims, int) or not 1 <= ndims <= x.ndim:
        raise ShapeError(f"standardize: ndims must be an int from 1 to {x.ndim} for input "
                         f"{fmt(x.shape)}, got {ndims!r}")
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not eps >= 0:
        raise ShrewError(f"standardize: eps must be a number >= 0, got {eps!r}")
    dims = tuple(range(x.ndim - ndims, x.ndim))
    backend = x._backend
    if 0 in x.shape:  # nothing to normalise
        keep = tuple(1 if d in dims else s for d, s in enumerate(x.shape))
        data, rstd = backend.full(x.shape, 0, x.dtype.np), backend.full(keep, 1, x.dtype.np)
    else:
        data, rstd = backend.standardize(x._data, dims, float(eps))
    op = O.Standardize(x, dims, float(eps), wrap(rstd, backend))
    return record(data, backend, op, x)
