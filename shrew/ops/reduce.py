"""Reductions over dims: sums, means, products, extremes (with their indices), spreads,
logical and counting reductions, and vector norms (reduce.cl on OpenCL; prod runs the
scan primitive, scan.cl)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..core.autocast import autocast_op
from ..core import op as O
from .. import return_types
from ..core.dtype import DType, as_dtype, bfloat16, bool_, check_float, float16, float32, int64
from ..core.errors import ArgumentError, ShapeError, ShrewIndexError, ShrewTypeError
from ..core.fields import AnyTensor, record, wrap
from .out import write_out
from ..core.grad_mode import no_grad
from ..core.shape import fmt, normalize_dim, normalize_dims, numel, reduced_shape
from .common import constant, numpy_keywords
from .elementwise.recorded import where
from .index.recorded import gather
from .elementwise.composed import maximum, minimum
from .scan import scan
from .sparse.coo import SparseTensor

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import Dims, DTypeLike


def _all_if_empty(dim: Dims) -> Dims:
    """PyTorch reads an empty dim list as "every dim"."""
    return None if isinstance(dim, (tuple, list)) and not dim else dim


def _cast(x: Tensor, dtype: DTypeLike | None) -> Tensor:
    return x if dtype is None else x.to_dtype(as_dtype(dtype))


def _widened(x: Tensor) -> Tensor:
    """x in float32 if it is float16 or bfloat16.  The composed statistics (var, std, the
    norms) compute there and round once, as PyTorch's kernels accumulate: their squares
    would otherwise round each, and overflow float16 (65504) on the way to a norm or a
    std it holds."""
    return x.to_dtype(float32) if x.dtype in (float16, bfloat16) else x


def _narrowed(t: Tensor, dtype: DType) -> Tensor:
    return t if t.dtype is dtype else t.to_dtype(dtype)


def _squeezed(t: Tensor, dims: tuple[int, ...], keepdim: bool) -> Tensor:
    """A keepdim result with its reduced dims dropped unless keepdim."""
    return t if keepdim else t.reshape(*reduced_shape(t.shape, dims, False))


def reduce(fn: str, x: Tensor, dim: Dims, keepdim: bool, recorded: str | None = None
           ) -> Tensor:
    """The backend's reduce `fn` over dim, recorded as Reduce(recorded or fn): amax and amin
    compute max and min but keep their own names, for their own gradient rule."""
    dims = normalize_dims(_all_if_empty(dim), x.ndim, fn)
    if fn == "mean":
        check_float(x.dtype, "mean")
    if fn in ("max", "min") and 0 in (x.shape[d] for d in dims):
        raise ShrewIndexError(f"{fn}: cannot reduce over a zero-size dim (shape "
                              f"{fmt(x.shape)}, dim {dim})")
    if fn == "sum" and x.dtype is bool_:
        x = x.to_dtype(int64)
    if not dims:  # a 0-d tensor: nothing to reduce
        return x if fn != "sum" or x.dtype.is_floating_point else x.to_dtype(int64)
    data = x._backend.reduce(fn, x._data, dims, bool(keepdim))
    return record(data, x._backend, O.Reduce(recorded or fn, x, dims, bool(keepdim)), x)


@autocast_op("sum")
@numpy_keywords
def sum(x: Tensor, dim: Dims = None, keepdim: bool = False, *,  # noqa: A001
        dtype: DTypeLike | None = None) -> Tensor:
    if isinstance(x, SparseTensor):  # torch.sum of a sparse tensor: torch.sparse.sum
        return x.sum(dim, keepdim, dtype)
    x = _cast(x, dtype)
    if x.dtype.is_complex:
        from .complex import arith
        return arith.reduce("sum", x, dim, keepdim)
    return reduce("sum", x, dim, keepdim)


@numpy_keywords
def mean(x: Tensor, dim: Dims = None, keepdim: bool = False, *,
         dtype: DTypeLike | None = None) -> Tensor:
    x = _cast(x, dtype)
    if x.dtype.is_complex:
        from .complex import arith
        return arith.reduce("mean", x, dim, keepdim)
    return reduce("mean", x, dim, keepdim)


@numpy_keywords
def nansum(x: Tensor, dim: Dims = None, keepdim: bool = False, *,
           dtype: DTypeLike | None = None) -> Tensor:
    x = _cast(x, dtype)
    return reduce("sum", where(x != x, 0, x) if x.dtype.is_floating_point else x, dim,
                  keepdim)


@numpy_keywords
def nanmean(x: Tensor, dim: Dims = None, keepdim: bool = False, *,
            dtype: DTypeLike | None = None) -> Tensor:
    x = _cast(x, dtype)
    check_float(x.dtype, "nanmean")
    present = reduce("sum", x == x, dim, keepdim).to_dtype(x.dtype)
    return nansum(x, dim, keepdim) / present


@autocast_op("prod")
@numpy_keywords
def prod(x: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: DTypeLike | None = None) -> Tensor:
    """The product along one dim (or of every element), by the scan primitive: its last
    running product.  Integers and bools multiply in int64, as PyTorch."""
    x = _cast(x, dtype)
    if not x.dtype.is_floating_point:
        x = x.to_dtype(int64)
    if dim is None:
        out = prod(x.reshape(-1), 0)
        return out.reshape(*[1] * x.ndim) if keepdim else out
    d = normalize_dim(dim, x.ndim, "prod")
    if x.ndim == 0:
        return x
    with no_grad():
        n = x.shape[d]
        last = scan("prod", x, d).narrow(d, n - 1, 1) if n else \
            constant(reduced_shape(x.shape, (d,), True), 1, x.dtype, x._backend)
    out = last if keepdim else last.reshape(*reduced_shape(x.shape, (d,), False))
    return record(out._data, x._backend, O.Prod(x, d, bool(keepdim)), x)


# -- extremes ----------------------------------------------------------------------------
@numpy_keywords
def amax(x: Tensor, dim: Dims = (), keepdim: bool = False) -> Tensor:
    return reduce("max", x, dim, keepdim, "amax")


@numpy_keywords
def amin(x: Tensor, dim: Dims = (), keepdim: bool = False) -> Tensor:
    return reduce("min", x, dim, keepdim, "amin")


@numpy_keywords
def aminmax(x: Tensor, *, dim: int | None = None, keepdim: bool = False) -> return_types.aminmax:
    return return_types.aminmax(amin(x, () if dim is None else dim, keepdim),
                                amax(x, () if dim is None else dim, keepdim))


@numpy_keywords
def max(x: Tensor, dim: Any = None, keepdim: bool = False, *,  # noqa: A001
        out: Any = None) -> Any:
    return write_out("max", extreme("max", x, dim, keepdim), out)


@numpy_keywords
def min(x: Tensor, dim: Any = None, keepdim: bool = False, *,  # noqa: A001
        out: Any = None) -> Any:
    return write_out("min", extreme("min", x, dim, keepdim), out)


def extreme(fn: str, x: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """max / min in PyTorch's three forms: of every element (ties share the gradient); along
    a dim, as (values, indices) where the gradient goes to the index; or elementwise of two
    tensors."""
    if isinstance(dim, AnyTensor):  # torch.max(a, b) is maximum(a, b)
        return (maximum if fn == "max" else minimum)(x, dim)
    if dim is None:
        return reduce(fn, x, None, False)
    d = normalize_dim(dim, x.ndim, fn)
    result = return_types.max if fn == "max" else return_types.min
    if x.ndim == 0:
        return result(x.reshape(), constant((), 0, int64, x._backend))
    indices = arg_reduce(f"arg{fn}", x, d, True)
    values = gather(x, d, indices, range_checked=True)
    return result(_squeezed(values, (d,), keepdim), _squeezed(indices, (d,), keepdim))


def arg_reduce(fn: str, x: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    if dim is None:
        flat = arg_reduce(fn, x.reshape(-1), 0, False)
        return flat.reshape(*[1] * x.ndim) if keepdim else flat
    d = normalize_dim(dim, x.ndim, fn)
    if x.ndim == 0:
        return constant((), 0, int64, x._backend)
    if x.shape[d] == 0:
        raise ShrewIndexError(f"{fn}: cannot reduce over a zero-size dim (shape {fmt(x.shape)})")
    return wrap(x._backend.arg_reduce(fn, x._data, d, bool(keepdim)), x._backend)


@numpy_keywords
def argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return arg_reduce("argmax", x, dim, keepdim)


@numpy_keywords
def argmin(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return arg_reduce("argmin", x, dim, keepdim)


# -- spread ----------------------------------------------------------------------------
def _var_mean(op: str, x: Tensor, dim: Any, unbiased: bool | None, keepdim: bool,
              correction: float | None) -> tuple[Tensor, Tensor]:
    """(variance, mean) over dims, dividing by N - correction (Bessel's by default)."""
    if isinstance(dim, bool):  # var(True): PyTorch's (unbiased) overload
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise ArgumentError(f"{op}: give unbiased= or correction=, not both")
    check_float(x.dtype, op)
    dims = normalize_dims(_all_if_empty(dim), x.ndim, op)
    c = correction if correction is not None else float(unbiased is not False)
    wide = _widened(x)
    mean = wide.mean(dims, keepdim=True)
    deviation = wide - mean
    squares = (deviation * deviation).sum(dims, keepdim=keepdim)
    # By N - correction, or by 0 where that is not positive, as PyTorch: inf, or nan for
    # 0 / 0.
    divisor = numel(x.shape[d] for d in dims) - c
    var = squares / constant((), divisor if divisor > 0 else 0, wide.dtype, x._backend)
    return var, _squeezed(mean, dims, keepdim)


@numpy_keywords
def var(x: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    return _narrowed(_var_mean("var", x, dim, unbiased, keepdim, correction)[0], x.dtype)


@numpy_keywords
def std(x: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    var = _var_mean("std", x, dim, unbiased, keepdim, correction)[0]
    return _narrowed(_sqrt_zero_safe(var), x.dtype)


@numpy_keywords
def var_mean(x: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: float | None = None) -> tuple[Tensor, Tensor]:
    var, mean = _var_mean("var_mean", x, dim, unbiased, keepdim, correction)
    return _narrowed(var, x.dtype), _narrowed(mean, x.dtype)


@numpy_keywords
def std_mean(x: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: float | None = None) -> tuple[Tensor, Tensor]:
    var, mean = _var_mean("std_mean", x, dim, unbiased, keepdim, correction)
    return _narrowed(_sqrt_zero_safe(var), x.dtype), _narrowed(mean, x.dtype)


def _sqrt_zero_safe(var: Tensor) -> Tensor:
    """sqrt(var) whose gradient is 0 where var is 0 (all the deviations are 0 there), as
    PyTorch's std, not sqrt's 0 * inf = nan."""
    zero = var == 0
    return where(zero, var, where(zero, 1.0, var).sqrt())


@autocast_op("logsumexp")
@numpy_keywords
def logsumexp(x: Tensor, dim: Dims, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over dims, shifted by the (constant) maximum so nothing overflows;
    integers compute in float32, as PyTorch."""
    if not x.dtype.is_floating_point:
        x = x.to_dtype(float32)
    dims = normalize_dims(_all_if_empty(dim), x.ndim, "logsumexp")
    keep = reduced_shape(x.shape, dims, True)
    if numel(x.shape) == 0:
        shift = constant(keep, 0, x.dtype, x._backend)
    else:
        shift = reduce("max", x.detach(), dims, True)
        shift = where(shift.abs() == math.inf, 0, shift)  # all -inf (or an inf): no shift
    out = (x - shift).exp().sum(dims, keepdim=True).log() + shift
    return _squeezed(out, dims, keepdim)


# -- logical and counting --------------------------------------------------------------
@numpy_keywords
def all(x: Tensor, dim: Dims = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    dims = normalize_dims(dim, x.ndim, "all")
    zeros = reduce("sum", x == 0, dims, keepdim)
    return zeros == 0


@numpy_keywords
def any(x: Tensor, dim: Dims = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    dims = normalize_dims(dim, x.ndim, "any")
    return reduce("sum", x != 0, dims, keepdim) > 0


@numpy_keywords
def count_nonzero(x: Tensor, dim: Dims = None) -> Tensor:
    return reduce("sum", x != 0, _all_if_empty(dim), False)


# -- vector norms ------------------------------------------------------------------------
@autocast_op("linalg_vector_norm")
@numpy_keywords
def vector_norm(x: Tensor, ord: float = 2, dim: Dims = None, keepdim: bool = False, *,  # noqa: A002
                dtype: DTypeLike | None = None, op: str = "linalg.vector_norm") -> Tensor:
    """(sum |x|^ord)^(1/ord) over dims; ord = inf / -inf: the largest / smallest |x|;
    ord = 0: the count of nonzeros."""
    x = _cast(x, dtype)
    check_float(x.dtype, op)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise ShrewTypeError(f"{op}: ord must be a number, got {ord!r}")
    dims = normalize_dims(_all_if_empty(dim), x.ndim, op)
    if ord in (math.inf, -math.inf):
        return reduce("max" if ord > 0 else "min", x.abs(), dims, keepdim)
    with no_grad():
        a = _widened(x).abs()
        value = (a != 0).to_dtype(a.dtype).sum(dims, keepdim=keepdim) if ord == 0 else \
            a.sum(dims, keepdim=keepdim) if ord == 1 else \
            (a * a).sum(dims, keepdim=keepdim).sqrt() if ord == 2 else \
            a.powf(ord).sum(dims, keepdim=keepdim).powf(1.0 / ord)
        value = _narrowed(value, x.dtype)
    return record(value._data, x._backend, O.VectorNorm(x, float(ord), dims, bool(keepdim)), x)


@autocast_op("norm")
@numpy_keywords
def norm(x: Tensor, p: Any = "fro", dim: Dims = None, keepdim: bool = False,
         dtype: DTypeLike | None = None) -> Tensor:
    """torch.norm: a vector norm of order p over dims (all of them by default); "fro" is
    the 2-norm over those dims."""
    if p is None or p == "fro":
        p = 2
    if p == "nuc":  # the nuclear norm of the matrices in dim (the last two of a 2-d input)
        if dim is None and x.ndim != 2:
            raise ArgumentError(f"norm: p='nuc' needs a 2-d input or two dims, got input "
                                f"{fmt(x.shape)}")
        from .linalg.composed import matrix_norm  # linalg builds on the reductions
        dims = (-2, -1) if dim is None else dim
        return matrix_norm(_cast(x, dtype), "nuc", dims, keepdim)  # type: ignore[arg-type]
    if isinstance(p, str):
        raise ArgumentError(f"norm: p={p!r} is a matrix norm; use shrew.linalg.matrix_norm")
    return vector_norm(x, p, dim, keepdim, dtype=dtype, op="norm")


@numpy_keywords
def linalg_norm(x: Tensor, ord: Any = None, dim: Dims = None, keepdim: bool = False, *,  # noqa: A002
                dtype: DTypeLike | None = None) -> Tensor:
    """linalg.norm for vectors and the Frobenius norm: ord=None is the 2-norm of the
    flattened tensor (or over dim); "fro" needs two dims."""
    two_dims = isinstance(dim, (tuple, list)) and len(dim) == 2 or (dim is None and x.ndim == 2)
    if ord is None:
        return vector_norm(x, 2, dim, keepdim, dtype=dtype, op="linalg.norm")
    if ord == "fro" and two_dims:
        return vector_norm(x, 2, dim if dim is not None else (0, 1), keepdim, dtype=dtype,
                           op="linalg.norm")
    # (matrix orders over two dims were taken by ops/linalg/composed.linalg_norm)
    if dim is None and x.ndim != 1:
        raise ShapeError(f"linalg.norm: with ord={ord!r} and dim=None the input must be 1-D or "
                         f"2-D, got shape {fmt(x.shape)}")
    if two_dims or isinstance(ord, str):
        raise ArgumentError(f"linalg.norm: ord={ord!r} is a matrix norm: it needs two dims "
                            f"(dim=(d0, d1), or a 2-D input), got dim={dim!r} of shape "
                            f"{fmt(x.shape)}")
    return vector_norm(x, ord, dim, keepdim, dtype=dtype, op="linalg.norm")
