"""``shrew.masked``: torch.masked's reductions and normalisations of a tensor with a boolean
mask= (True: the element takes part), for strided tensors.  Each fills the masked-out
elements with its operation's identity (0 for sum, 1 for prod, -inf for amax and softmax,
...) and runs the plain operation, as PyTorch's does for strided input, so gradients reach
the masked-in elements only.  A fully masked-out slice gives that identity (sum, prod,
amax, amin, logsumexp, norm) or NaN (mean, var, std, median).  shrew has no MaskedTensor:
mask is a bool (or 0/1) tensor broadcastable to input."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.dtype import as_dtype, bool_, float32, int64
from ..core.errors import DTypeError, ShapeError
from ..core.shape import fmt, normalize_dims
from ..ops.elementwise.recorded import where
from ..ops.elementwise.numeric import logaddexp as _logaddexp
from ..ops.reduce import vector_norm

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import DTypeLike

Dims = int | Sequence[int] | None

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "logsumexp", "logaddexp", "norm", "var", "std", "softmax", "log_softmax",
           "softmin", "normalize"]


def _dims(dim: Dims, ndim: int, op: str) -> tuple[int, ...]:
    """torch.masked's canonical dims: all for None or (), else sorted and checked."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    return tuple(sorted(normalize_dims((dim,) if isinstance(dim, int) else dim,
                                       max(ndim, 1), f"masked.{op}")))


def _mask(input: Tensor, mask: Tensor | None, op: str) -> Tensor | None:  # noqa: A002
    if mask is None:
        return None
    if mask.ndim > input.ndim:
        raise ShapeError(f"masked.{op}: mask {fmt(mask.shape)} has more dims than input "
                         f"{fmt(input.shape)}")
    return mask.to_dtype(bool_).broadcast_to(input.shape)


def _identity(op: str, x: Tensor, ord: float = 2.0) -> float:  # noqa: A002
    floating = x.dtype.is_floating_point
    if op in ("sum", "cumsum"):
        return 0
    if op in ("prod", "cumprod"):
        return 1
    if op in ("amax", "argmax", "logsumexp", "logaddexp"):
        import numpy as np
        return float("-inf") if floating else int(np.iinfo(x.dtype.np).min)
    if op in ("amin", "argmin"):
        import numpy as np
        return float("inf") if floating else int(np.iinfo(x.dtype.np).max)
    if op == "norm":
        return float("inf") if ord == float("-inf") else 0
    return float("nan")  # median


def _filled(op: str, x: Tensor, mask: Tensor | None, ord: float = 2.0) -> Tensor:  # noqa: A002
    m = _mask(x, mask, op)
    return x if m is None else where(m, x, _identity(op, x, ord))


def _sum_dtype(x: Tensor, dtype: DTypeLike | None) -> Any:
    if dtype is not None:
        return as_dtype(dtype)
    return int64 if not x.dtype.is_floating_point else x.dtype


def sum(input: Tensor, dim: Dims = None, *, keepdim: bool = False,  # noqa: A001,A002
        dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    x = _filled("sum", input, mask).to_dtype(_sum_dtype(input, dtype))
    return x.sum(_dims(dim, input.ndim, "sum"), keepdim=keepdim)


def prod(input: Tensor, dim: Dims = None, *, keepdim: bool = False,  # noqa: A002
         dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    out = _filled("prod", input, mask).to_dtype(_sum_dtype(input, dtype))
    for d in reversed(_dims(dim, input.ndim, "prod")):
        out = out.prod(d, keepdim=keepdim) if out.ndim else out
    return out


def cumsum(input: Tensor, dim: int, *, dtype: DTypeLike | None = None,  # noqa: A002
           mask: Tensor | None = None) -> Tensor:
    (d,) = _dims(dim, input.ndim, "cumsum")
    out = _filled("cumsum", input, mask).to_dtype(as_dtype(dtype) if dtype else input.dtype)
    return out.cumsum(d)


def cumprod(input: Tensor, dim: int, *, dtype: DTypeLike | None = None,  # noqa: A002
            mask: Tensor | None = None) -> Tensor:
    (d,) = _dims(dim, input.ndim, "cumprod")
    out = _filled("cumprod", input, mask).to_dtype(as_dtype(dtype) if dtype else input.dtype)
    return out.cumprod(d)


def amax(input: Tensor, dim: Dims = None, *, keepdim: bool = False,  # noqa: A002
         dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    out = _filled("amax", input, mask).amax(_dims(dim, input.ndim, "amax"), keepdim=keepdim)
    return out.to_dtype(as_dtype(dtype)) if dtype else out


def amin(input: Tensor, dim: Dims = None, *, keepdim: bool = False,  # noqa: A002
         dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    out = _filled("amin", input, mask).amin(_dims(dim, input.ndim, "amin"), keepdim=keepdim)
    return out.to_dtype(as_dtype(dtype)) if dtype else out


def argmax(input: Tensor, dim: int | None = None, *, keepdim: bool = False,  # noqa: A002
           dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    out = _filled("argmax", input, mask).argmax(dim, keepdim=keepdim)
    return out.to_dtype(as_dtype(dtype) if dtype else input.dtype)


def argmin(input: Tensor, dim: int | None = None, *, keepdim: bool = False,  # noqa: A002
           dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    out = _filled("argmin", input, mask).argmin(dim, keepdim=keepdim)
    return out.to_dtype(as_dtype(dtype) if dtype else input.dtype)


def mean(input: Tensor, dim: Dims = None, *, keepdim: bool = False,  # noqa: A002
         dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    """The mean of the masked-in elements (NaN where there are none)."""
    out_dtype = as_dtype(dtype) if dtype else input.dtype
    if not out_dtype.is_floating_point:
        raise DTypeError(f"masked.mean: could not infer output dtype: it must be a floating "
                         f"point dtype, got {out_dtype}")
    dims = _dims(dim, input.ndim, "mean")
    m = _mask(input, mask, "mean")
    count = (m.to_dtype(int64) if m is not None else input.new_ones(input.shape, dtype=int64)) \
        .sum(dims, keepdim=keepdim)
    total = sum(input, dim, keepdim=keepdim, dtype=out_dtype, mask=m)
    return total / count


def median(input: Tensor, dim: int = -1, *, keepdim: bool = False,  # noqa: A002
           dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    """The median of the masked-in elements along dim (nanmedian of the rest as NaN)."""
    x = input if input.dtype.is_floating_point else input.to_dtype(float32)
    (d,) = _dims(dim, input.ndim, "median")
    out = _filled("median", x, mask).nanmedian(d, keepdim=keepdim).values
    if input.dtype.is_floating_point:
        return out
    if bool(out.isnan().any()):
        raise ShapeError("masked.median: expects no fully masked out rows if the dtype is not "
                         "floating point")
    return out.to_dtype(as_dtype(dtype) if dtype else input.dtype)


def logsumexp(input: Tensor, dim: Dims = None, *, keepdim: bool = False,  # noqa: A002
              dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    out = _filled("logsumexp", input, mask).logsumexp(_dims(dim, input.ndim, "logsumexp"),
                                                     keepdim=keepdim)
    return out.to_dtype(as_dtype(dtype)) if dtype else out


def logaddexp(input: Tensor, other: Tensor, *, dtype: DTypeLike | None = None,  # noqa: A002
              input_mask: Tensor | None = None, other_mask: Tensor | None = None) -> Tensor:
    out = _logaddexp(_filled("logaddexp", input, input_mask),
                     _filled("logaddexp", other, other_mask))
    return out.to_dtype(as_dtype(dtype) if dtype else input.dtype)


def norm(input: Tensor, ord: float = 2.0, dim: Dims = None, *,  # noqa: A002
         keepdim: bool = False, dtype: DTypeLike | None = None,
         mask: Tensor | None = None) -> Tensor:
    x = _filled("norm", input, mask, ord)
    if dtype:
        x = x.to_dtype(as_dtype(dtype))
    return vector_norm(x, ord, _dims(dim, input.ndim, "norm"), keepdim)


def _std_var(op: str, input: Tensor, dim: Dims, unbiased: bool | None,  # noqa: A002
             correction: float | None, keepdim: bool, dtype: DTypeLike | None,
             mask: Tensor | None, root: bool) -> Tensor:
    if unbiased is not None and correction is not None:
        raise ShapeError(f"masked.{op}: give unbiased or correction, not both")
    c = 1.0 if correction is None and unbiased is None else \
        float(correction) if correction is not None else (1.0 if unbiased else 0.0)
    out_dtype = as_dtype(dtype) if dtype else input.dtype
    if not out_dtype.is_floating_point:
        out_dtype = float32
    dims = _dims(dim, input.ndim, op)
    m = _mask(input, mask, op)
    count = (m.to_dtype(int64) if m is not None else input.new_ones(input.shape, dtype=int64)) \
        .sum(dims, keepdim=True)
    centred = input - sum(input, dim, keepdim=True, dtype=out_dtype, mask=m) / count
    total = sum(centred * centred, dim, keepdim=keepdim, dtype=out_dtype, mask=m)
    count = count.reshape(total.shape).to_dtype(out_dtype)
    if c:
        count = (count - c).clamp_min(0)
    out = (total / count).to_dtype(out_dtype)
    return out.sqrt() if root else out


def var(input: Tensor, dim: Dims = None, unbiased: bool | None = None, *,  # noqa: A002
        correction: float | None = None, keepdim: bool = False,
        dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    return _std_var("var", input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input: Tensor, dim: Dims = None, unbiased: bool | None = None, *,  # noqa: A002
        correction: float | None = None, keepdim: bool = False,
        dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    return _std_var("std", input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _normalised(op: str, fill: str, input: Tensor, dim: int,  # noqa: A002
                dtype: DTypeLike | None, mask: Tensor | None) -> Tensor:
    (d,) = _dims(dim, input.ndim, op)
    x = _filled(fill, input, mask)
    if dtype:
        x = x.to_dtype(as_dtype(dtype))
    if op == "softmax":
        return x.softmax(d)
    if op == "log_softmax":
        return x.log_softmax(d)
    return (-x).softmax(d)


def softmax(input: Tensor, dim: int, *, dtype: DTypeLike | None = None,  # noqa: A002
            mask: Tensor | None = None) -> Tensor:
    """softmax over the masked-in elements (0 at the others)."""
    return _normalised("softmax", "amax", input, dim, dtype, mask)


def log_softmax(input: Tensor, dim: int, *, dtype: DTypeLike | None = None,  # noqa: A002
                mask: Tensor | None = None) -> Tensor:
    return _normalised("log_softmax", "amax", input, dim, dtype, mask)


def softmin(input: Tensor, dim: int, *, dtype: DTypeLike | None = None,  # noqa: A002
            mask: Tensor | None = None) -> Tensor:
    return _normalised("softmin", "amin", input, dim, dtype, mask)


def normalize(input: Tensor, ord: float, dim: int, *, eps: float = 1e-12,  # noqa: A002
              dtype: DTypeLike | None = None, mask: Tensor | None = None) -> Tensor:
    """input (masked-out elements 0) divided by its masked norm along dim (at least eps)."""
    x = _filled("sum", input, mask)
    if dtype:
        x = x.to_dtype(as_dtype(dtype))
    n = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return x / n.clamp_min(eps)
