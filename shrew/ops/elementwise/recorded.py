"""Elementwise ops: unary functions, arithmetic with broadcasting and scalars, powers,
clamp, comparisons and where (elementwise.cl on OpenCL and CUDA)."""
from __future__ import annotations

import builtins
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core import autocast as _autocast
from ...core.autocast import autocast_op
from ...core import op as O
from ...backends.base import SPECIAL_BINARY_FNS, SPECIAL_UNARY_FNS, fast_path
from ...core.dtype import COMPLEX, FLOAT, INT, bool_, get_default_dtype, result_type, scalar_dtype
from ...core.errors import type_name
from ...core.errors import ArgumentError, DTypeError, DivisionByZeroError, ShrewTypeError
from ...core.fields import AnyTensor, graph_only, record, wrap
from ...core.grad_mode import is_grad_enabled
from ...core.shape import broadcast_shapes, fmt, numel
from ..common import constant, number, same_device, scalar_like
from ..index.recorded import known_range

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import Scalar

# Unary functions that only make sense on floats: an integer input is promoted to the
# default float dtype, as PyTorch does.
_FLOAT_UNARY = frozenset((
    "exp", "log", "sqrt", "sigmoid", "tanh", "gelu", "gelu_tanh", "silu", "sin", "cos", "erf",
    "gelu_derivative", "gelu_tanh_derivative", "rsqrt", "reciprocal", "log1p", "expm1", "log2",
    "log10", "exp2", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "erfc", "erfinv", *SPECIAL_UNARY_FNS))
# Binary functions by the dtypes they take (add, sub, mul, maximum, minimum take any):
# integers are promoted to float
_FLOAT_BINARY = frozenset(("div", "atan2", "copysign", "tanh_backward", "sigmoid_backward",
                           *SPECIAL_BINARY_FNS))
_INT_BINARY = frozenset(("bitwise_and", "bitwise_or", "bitwise_xor"))  # integers and bool
_BOOL_BINARY = _INT_BINARY | {"add", "mul", "maximum", "minimum"}  # the ones bool takes
_AFFINE_FNS = frozenset(("add", "sub", "mul"))
_READS_NO_VALUES = frozenset(("add", "sub"))  # gradients: g, -g (inputs kept graph_only)
# Integer divisions: a zero divisor raises, as PyTorch on cpu (rather than a kernel's 0)
_DIVISIONS = frozenset(("floor_divide", "remainder", "fmod"))


def unary(fn: str, x: Tensor) -> Tensor:
    if _autocast.armed:  # exp, log, ... are in the GPU devices' float32 list
        return _autocast.dispatch(fn, _unary, fn, x)
    return _unary(fn, x)


def _unary(fn: str, x: Tensor) -> Tensor:
    if x.dtype.category != FLOAT:
        if x.dtype.category == COMPLEX:
            from ..complex import arith
            return arith.unary(fn, x)
        if fn in _FLOAT_UNARY:
            x = x.to_dtype(get_default_dtype())
        elif x.dtype is bool_ and fn not in ("abs", "bitwise_not"):
            raise DTypeError(f"{fn}: not supported for bool tensors")
    elif fn == "bitwise_not":
        raise DTypeError(f"bitwise_not: needs an integer or bool tensor, got {x.dtype}")
    data = x._backend.unary(fn, x._data)
    if x.requires_grad and is_grad_enabled():
        return wrap(data, x._backend, O.Unary(fn, x))
    return wrap(data, x._backend)


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    if approximate not in ("none", "tanh"):
        raise ArgumentError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return unary("gelu" if approximate == "none" else "gelu_tanh", x)


def add_bias(y: Tensor, bias: Tensor) -> Tensor:
    """y + bias, for a layer's y that the caller has just made and alone holds (the product
    of a linear layer or a convolution, layer norm's scaled output): where the backend has
    base.FastAccumulate's add_into_, the sum is written into y's buffer, one pass and one
    allocation fewer than a fresh sum, since nothing reads y again (the op that made y
    saves its inputs, not y, and an add's gradient reads no values).  Recorded as the
    Binary add it is.  Otherwise, and for other dtypes or shapes: y + bias."""
    if (bias.dtype is y.dtype and y.dtype.category == FLOAT and bias._backend is y._backend
            and bias.ndim <= y.ndim
            and all(b in (1, n) for b, n in zip(bias.shape[::-1], y.shape[::-1]))):
        be = y._backend
        src = bias._data
        if bias.ndim < y.ndim:
            src = be.reshape(src, (1,) * (y.ndim - bias.ndim) + bias.shape)
        if fast_path(be, "add_into_", y._data, src) is not NotImplemented:
            return record(y._data, be, O.Binary("add", y, bias), y, bias)
    return y + bias


def binary(fn: str, x: Tensor, other: object, reflected: bool = False) -> Tensor:
    """x fn other (other fn x when reflected), broadcasting and promoting as torch does."""
    if type(other) is float and x.dtype.category == FLOAT and fn in _AFFINE_FNS:
        return _float_scalar_affine(fn, x, other, reflected)  # the hot case: x * 1.5
    if not isinstance(other, AnyTensor):
        if not isinstance(other, numbers.Number):
            return NotImplemented
        if isinstance(other, (complex, np.complexfloating)) or x.dtype.category == COMPLEX:
            return _complex_binary(fn, x, other, reflected)
        fast = _scalar_affine(fn, x, other, reflected)
        if fast is not None:
            return fast
        if fn in _DIVISIONS and not reflected and other == 0 and \
                isinstance(other, numbers.Integral) and x.dtype.category == INT:
            raise DivisionByZeroError(f"{fn}: integer division by zero ({x.dtype} tensor of "
                                      f"shape {fmt(x.shape)} by {other!r})")
        other = scalar_like(other, x)
        divisor_checked = not reflected
    else:
        divisor_checked = False
    a, b = (other, x) if reflected else (x, other)
    if a._backend is not b._backend:
        same_device(fn, a, b)
    if a.shape != b.shape:
        broadcast_shapes(fn, a.shape, b.shape)  # raises for shapes that do not broadcast
    if a.dtype is not b.dtype or a.dtype.category != FLOAT:
        if COMPLEX in (a.dtype.category, b.dtype.category):
            return _complex_binary(fn, a, b, False)
        dtype = result_type((a.dtype, a.ndim), (b.dtype, b.ndim))
        if fn in _FLOAT_BINARY and not dtype.is_floating_point:
            dtype = get_default_dtype()
        elif fn in _INT_BINARY and dtype.is_floating_point:
            raise DTypeError(f"{fn}: needs integer or bool tensors, got {a.dtype} and {b.dtype}")
        if dtype is bool_ and fn not in _BOOL_BINARY:
            raise DTypeError(f"{fn}: not supported for bool tensors")
        a, b = a.to_dtype(dtype), b.to_dtype(dtype)
        if fn in _DIVISIONS and dtype.category == INT and not divisor_checked:
            _check_divisor(fn, a, b)
    elif fn in _INT_BINARY:
        raise DTypeError(f"{fn}: needs integer or bool tensors, got {a.dtype} and {b.dtype}")
    data = a._backend.binary(fn, a._data, b._data)
    if (a.requires_grad or b.requires_grad) and is_grad_enabled():
        if fn in _READS_NO_VALUES:
            a, b = graph_only(a), graph_only(b)
        return wrap(data, a._backend, O.Binary(fn, a, b))
    return wrap(data, a._backend)


def _complex_binary(fn: str, x: Any, other: Any, reflected: bool) -> Tensor:
    from ..complex import arith  # complex numbers are pairs of reals: ops/complex/
    return arith.binary(fn, other, x) if reflected else arith.binary(fn, x, other)


def _check_divisor(fn: str, a: Tensor, b: Tensor) -> None:
    """Raise if the integer divisor b holds a 0.  In host memory, a scan of b; on a device, a
    minimum of |b| there and one read-back (none where b is an upload whose values, seen on
    the host, exclude 0).  (|b| of the type's most negative value wraps to itself, not 0.)"""
    if numel(b.shape) == 0:
        return
    data = b._data
    if isinstance(data, np.ndarray):
        zero = not data.all()
    else:
        known = known_range(b)
        if known is not None and (known[0] > 0 or known[1] < 0):
            return
        be = b._backend
        least = be.reduce("min", be.unary("abs", data), tuple(range(b.ndim)), False)
        zero = int(be.to_numpy(least)) == 0
    if zero:
        raise DivisionByZeroError(f"{fn}: integer division by zero ({a.dtype} tensors of "
                                  f"shapes {fmt(a.shape)} and {fmt(b.shape)}: the divisor "
                                  f"holds a 0)")


def _affine_params(fn: str, value: Any, reflected: bool) -> tuple[Any, Any]:
    """(mul, add) such that x * mul + add is x + s, x - s, s - x or x * s."""
    if fn == "mul":
        return value, 0
    if fn == "add":
        return 1, value
    return (-1, value) if reflected else (1, -value)


def _float_scalar_affine(fn: str, x: Tensor, value: float, reflected: bool) -> Tensor:
    """The hot path of x + s, x - s, s - x, x * s for a float tensor and a Python float:
    one Affine, with no checks (the caller made them)."""
    mul: float
    add: float
    if fn == "mul":  # (_affine_params, inlined)
        mul, add = value, 0
    elif fn == "add":
        mul, add = 1, value
    else:
        mul, add = (-1, value) if reflected else (1, -value)
    data = x._backend.affine(x._data, mul, add)
    if x.requires_grad and is_grad_enabled():
        return wrap(data, x._backend, O.Affine(x, mul, add))
    return wrap(data, x._backend)


def _scalar_affine(fn: str, x: Tensor, value: Any, reflected: bool) -> Tensor | None:
    """x + s, x - s, s - x, x * s on a tensor whose dtype holds s: one Affine."""
    kind = scalar_dtype(value)
    if fn not in ("add", "sub", "mul") or kind is bool_ or x.dtype is bool_:
        return None
    if kind.is_floating_point and not x.dtype.is_floating_point:
        return _scalar_affine(fn, x.to_dtype(get_default_dtype()), value, reflected)
    if isinstance(value, complex):
        return None
    return affine(x, *_affine_params(fn, value, reflected))


@autocast_op("pow")
def pow(x: Tensor | Scalar, exponent: Tensor | Scalar) -> Tensor:  # noqa: A001  (torch's name)
    """x ** exponent, either a number: a float tensor with a number exponent is one Powf;
    anything else is the Binary pow, with PyTorch's promotion (int ** int stays integer)."""
    if not isinstance(x, AnyTensor):
        if not isinstance(exponent, AnyTensor):
            raise ArgumentError("pow: needs a tensor base or exponent")
        return rpow(exponent, x)
    if isinstance(exponent, AnyTensor):
        return binary("pow", x, exponent)
    if isinstance(exponent, bool):
        exponent = int(exponent)
    if not isinstance(exponent, numbers.Real):
        raise ShrewTypeError(f"pow: exponent must be a real number or a tensor, got {exponent!r}")
    if x.dtype.is_floating_point or scalar_dtype(exponent).is_floating_point:
        return powf(x, exponent)
    if exponent < 0:
        raise ArgumentError(f"pow: integers to negative integer powers are not allowed "
                            f"({x.dtype} ** {exponent})")
    return binary("pow", x, exponent)


def rpow(x: Tensor, base: Tensor | Scalar) -> Tensor:
    """base ** x for a number base (negative bases too, with integer-valued exponents)."""
    if not isinstance(base, (numbers.Real, AnyTensor)):
        raise ShrewTypeError(f"pow: number ** tensor needs a real base, got {base!r}")
    return binary("pow", x, base, reflected=True)


def powf(x: Tensor, exponent: Scalar) -> Tensor:
    if not isinstance(exponent, numbers.Real) or isinstance(exponent, bool):
        raise ShrewTypeError(f"powf: exponent must be a real number, got {exponent!r}")
    x = x if x.dtype.is_floating_point else x.to_dtype(get_default_dtype())
    exponent = float(exponent)
    return record(x._backend.powf(x._data, exponent), x._backend, O.Powf(x, exponent), x)


def affine(x: Tensor, mul: Scalar, add: Scalar) -> Tensor:
    """x * mul + add, in one kernel."""
    if x.dtype is bool_:
        raise DTypeError("affine: not supported for bool tensors")
    if not x.dtype.is_floating_point and (scalar_dtype(mul).is_floating_point or
                                          scalar_dtype(add).is_floating_point):
        return affine(x.to_dtype(get_default_dtype()), mul, add)
    mul, add = number(mul), number(add)
    return record(x._backend.affine(x._data, mul, add), x._backend, O.Affine(x, mul, add), x)


def clamp(x: Tensor, min: Tensor | Scalar | None = None,  # noqa: A002
          max: Tensor | Scalar | None = None) -> Tensor:  # noqa: A002
    """min(max(x, min), max); with a tensor bound, maximum and minimum (broadcasting)."""
    if min is None and max is None:
        raise ArgumentError("clamp: give at least one of min and max")
    if isinstance(min, AnyTensor) or isinstance(max, AnyTensor):
        return _clamp_tensors(x, min, max)
    return _clamp_numbers(x, min, max)


def _clamp_numbers(x: Tensor, min: Scalar | None, max: Scalar | None) -> Tensor:  # noqa: A002
    for name, v in (("min", min), ("max", max)):
        if v is not None and not isinstance(v, numbers.Real):
            raise ShrewTypeError(f"clamp: {name} must be a number, got {v!r}")
    if x.dtype is bool_:
        raise DTypeError("clamp: not supported for bool tensors")
    if not x.dtype.is_floating_point and any(v is not None and scalar_dtype(v).is_floating_point
                                             for v in (min, max)):
        x = x.to_dtype(get_default_dtype())
    min, max = number(min), number(max)
    if x.dtype.category == INT:  # bounds beyond the type clamp nothing (numpy refuses them)
        info = np.iinfo(x.dtype.np)
        min = None if min is None else builtins.min(builtins.max(min, info.min), info.max)
        max = None if max is None else builtins.min(builtins.max(max, info.min), info.max)
    return record(x._backend.clamp(x._data, min, max), x._backend, O.Clamp(x, min, max), x)


def _clamp_tensors(x: Tensor, lo: Tensor | Scalar | None, hi: Tensor | Scalar | None) -> Tensor:
    """clamp with a tensor bound: maximum and minimum, broadcasting all three."""
    out = x if lo is None else binary("maximum", x, lo)
    return out if hi is None else binary("minimum", out, hi)


def compare(fn: str, x: Tensor, other: object) -> Tensor:
    """Elementwise comparison: a bool tensor, never differentiable."""
    if isinstance(other, np.ndarray) and fn in ("eq", "ne"):  # t == ndarray: torch's tensor
        from ..creation import from_numpy  # (creation builds on elementwise)
        other = from_numpy(other)
    if not isinstance(other, AnyTensor):
        if not isinstance(other, numbers.Number):
            return NotImplemented
        other = scalar_like(other, x)
    same_device(fn, x, other)
    broadcast_shapes(fn, x.shape, other.shape)
    dtype = result_type((x.dtype, x.ndim), (other.dtype, other.ndim))
    a, b = x.to_dtype(dtype), other.to_dtype(dtype)
    return wrap(a._backend.compare(fn, a._data, b._data), a._backend)


def where(cond: Tensor, a: Tensor | Scalar, b: Tensor | Scalar) -> Tensor:
    """Elementwise cond ? a : b, broadcasting all three; a and b may be numbers."""
    if not isinstance(cond, AnyTensor) or cond.dtype is not bool_:
        got = cond.dtype if isinstance(cond, AnyTensor) else type_name(cond)
        raise DTypeError(f"where: condition must be a bool tensor, got {got}")
    like = a if isinstance(a, AnyTensor) else b if isinstance(b, AnyTensor) else None
    operands = [(x.dtype, x.ndim) if isinstance(x, AnyTensor) else x for x in (a, b)]
    dtype = result_type(*operands) if like is not None else result_type(a, b)
    if dtype.category == COMPLEX:
        from ..complex import arith  # a choice between pairs
        return arith.where(cond, a, b, dtype)
    backend = cond._backend
    a, b = (x.to_dtype(dtype) if isinstance(x, AnyTensor) else
            constant((), x, dtype, backend) for x in (a, b))
    same_device("where", cond, a, b)
    broadcast_shapes("where", cond.shape, a.shape, b.shape)
    data = backend.where(cond._data, a._data, b._data)
    return record(data, backend, O.WhereCond(cond, a, b), a, b)

