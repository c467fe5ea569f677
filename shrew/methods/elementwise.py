"""Tensor's elementwise methods and operators (ops/elementwise.py, ops/pointwise.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ops import elementwise as _elementwise
from ..ops import pointwise as _pointwise
from ..ops.elementwise import binary as _binary
from ..ops.elementwise import compare as _compare
from ..ops.elementwise import unary as _unary

if TYPE_CHECKING:
    from ..tensor import Tensor
    from ..typing import Scalar

    Operand = Tensor | Scalar


class ElementwiseMethods:
    """Unary math, arithmetic with broadcasting and scalars, comparisons, logical and
    bitwise ops.  Methods annotate `self: Tensor`: Tensor is the only class using this."""

    __slots__ = ()

    # -- unary (one kernel each) --------------------------------------------------------
    def neg(self: Tensor) -> Tensor: return _unary("neg", self)
    def negative(self: Tensor) -> Tensor: return _unary("neg", self)
    def abs(self: Tensor) -> Tensor: return _unary("abs", self)
    def absolute(self: Tensor) -> Tensor: return _unary("abs", self)
    def exp(self: Tensor) -> Tensor: return _unary("exp", self)
    def exp2(self: Tensor) -> Tensor: return _unary("exp2", self)
    def expm1(self: Tensor) -> Tensor: return _unary("expm1", self)
    def log(self: Tensor) -> Tensor: return _unary("log", self)
    def log1p(self: Tensor) -> Tensor: return _unary("log1p", self)
    def log2(self: Tensor) -> Tensor: return _unary("log2", self)
    def log10(self: Tensor) -> Tensor: return _unary("log10", self)
    def sqrt(self: Tensor) -> Tensor: return _unary("sqrt", self)
    def rsqrt(self: Tensor) -> Tensor: return _unary("rsqrt", self)
    def reciprocal(self: Tensor) -> Tensor: return _unary("reciprocal", self)
    def square(self: Tensor) -> Tensor: return _unary("square", self)
    def relu(self: Tensor) -> Tensor: return _unary("relu", self)
    def sigmoid(self: Tensor) -> Tensor: return _unary("sigmoid", self)
    def tanh(self: Tensor) -> Tensor: return _unary("tanh", self)
    def silu(self: Tensor) -> Tensor: return _unary("silu", self)
    def sin(self: Tensor) -> Tensor: return _unary("sin", self)
    def cos(self: Tensor) -> Tensor: return _unary("cos", self)
    def tan(self: Tensor) -> Tensor: return _unary("tan", self)
    def asin(self: Tensor) -> Tensor: return _unary("asin", self)
    def arcsin(self: Tensor) -> Tensor: return _unary("asin", self)
    def acos(self: Tensor) -> Tensor: return _unary("acos", self)
    def arccos(self: Tensor) -> Tensor: return _unary("acos", self)
    def atan(self: Tensor) -> Tensor: return _unary("atan", self)
    def arctan(self: Tensor) -> Tensor: return _unary("atan", self)
    def sinh(self: Tensor) -> Tensor: return _unary("sinh", self)
    def cosh(self: Tensor) -> Tensor: return _unary("cosh", self)
    def asinh(self: Tensor) -> Tensor: return _unary("asinh", self)
    def arcsinh(self: Tensor) -> Tensor: return _unary("asinh", self)
    def acosh(self: Tensor) -> Tensor: return _unary("acosh", self)
    def arccosh(self: Tensor) -> Tensor: return _unary("acosh", self)
    def atanh(self: Tensor) -> Tensor: return _unary("atanh", self)
    def arctanh(self: Tensor) -> Tensor: return _unary("atanh", self)
    def erf(self: Tensor) -> Tensor: return _unary("erf", self)
    def erfc(self: Tensor) -> Tensor: return _unary("erfc", self)
    def erfinv(self: Tensor) -> Tensor: return _unary("erfinv", self)
    def floor(self: Tensor) -> Tensor: return _unary("floor", self)
    def ceil(self: Tensor) -> Tensor: return _unary("ceil", self)
    def trunc(self: Tensor) -> Tensor: return _unary("trunc", self)
    def fix(self: Tensor) -> Tensor: return _unary("trunc", self)
    def sign(self: Tensor) -> Tensor: return _unary("sign", self)
    def sgn(self: Tensor) -> Tensor: return _unary("sign", self)
    def bitwise_not(self: Tensor) -> Tensor: return _unary("bitwise_not", self)
    def __neg__(self: Tensor) -> Tensor: return _unary("neg", self)
    def __abs__(self: Tensor) -> Tensor: return _unary("abs", self)
    def __invert__(self: Tensor) -> Tensor: return _unary("bitwise_not", self)

    # -- unary compositions ---------------------------------------------------------------
    def round(self: Tensor, decimals: int = 0) -> Tensor:
        return _pointwise.round(self, decimals=decimals)

    def frac(self: Tensor) -> Tensor: return _pointwise.frac(self)
    def signbit(self: Tensor) -> Tensor: return _pointwise.signbit(self)
    def isnan(self: Tensor) -> Tensor: return _pointwise.isnan(self)
    def isinf(self: Tensor) -> Tensor: return _pointwise.isinf(self)
    def isposinf(self: Tensor) -> Tensor: return _pointwise.isposinf(self)
    def isneginf(self: Tensor) -> Tensor: return _pointwise.isneginf(self)
    def isfinite(self: Tensor) -> Tensor: return _pointwise.isfinite(self)
    def logical_not(self: Tensor) -> Tensor: return _pointwise.logical_not(self)

    def logit(self: Tensor, eps: float | None = None) -> Tensor:
        return _pointwise.logit(self, eps)

    def nan_to_num(self: Tensor, nan: float = 0.0, posinf: float | None = None,
                   neginf: float | None = None) -> Tensor:
        return _pointwise.nan_to_num(self, nan, posinf, neginf)

    def gelu(self: Tensor, approximate: str = "none") -> Tensor:
        return _elementwise.gelu(self, approximate)

    # -- arithmetic (broadcasting, with Python numbers) ------------------------------------
    def __add__(self: Tensor, o: Operand) -> Tensor: return _binary("add", self, o)
    def __radd__(self: Tensor, o: Operand) -> Tensor: return _binary("add", self, o, True)
    def __sub__(self: Tensor, o: Operand) -> Tensor: return _binary("sub", self, o)
    def __rsub__(self: Tensor, o: Operand) -> Tensor: return _binary("sub", self, o, True)
    def __mul__(self: Tensor, o: Operand) -> Tensor: return _binary("mul", self, o)
    def __rmul__(self: Tensor, o: Operand) -> Tensor: return _binary("mul", self, o, True)
    def __truediv__(self: Tensor, o: Operand) -> Tensor: return _binary("div", self, o)
    def __rtruediv__(self: Tensor, o: Operand) -> Tensor: return _binary("div", self, o, True)
    def __floordiv__(self: Tensor, o: Operand) -> Tensor: return _binary("floor_divide", self, o)
    def __rfloordiv__(self: Tensor, o: Operand) -> Tensor:
        return _binary("floor_divide", self, o, True)
    def __mod__(self: Tensor, o: Operand) -> Tensor: return _binary("remainder", self, o)
    def __rmod__(self: Tensor, o: Operand) -> Tensor: return _binary("remainder", self, o, True)
    def __pow__(self: Tensor, exponent: Operand) -> Tensor: return _elementwise.pow(self, exponent)
    def __rpow__(self: Tensor, base: Scalar) -> Tensor: return _elementwise.rpow(self, base)
    def __and__(self: Tensor, o: Operand) -> Tensor: return _binary("bitwise_and", self, o)
    def __rand__(self: Tensor, o: Operand) -> Tensor: return _binary("bitwise_and", self, o, True)
    def __or__(self: Tensor, o: Operand) -> Tensor: return _binary("bitwise_or", self, o)
    def __ror__(self: Tensor, o: Operand) -> Tensor: return _binary("bitwise_or", self, o, True)
    def __xor__(self: Tensor, o: Operand) -> Tensor: return _binary("bitwise_xor", self, o)
    def __rxor__(self: Tensor, o: Operand) -> Tensor: return _binary("bitwise_xor", self, o, True)

    def add(self: Tensor, other: Operand, *, alpha: Scalar = 1) -> Tensor:
        return _pointwise.add(self, other, alpha=alpha)

    def sub(self: Tensor, other: Operand, *, alpha: Scalar = 1) -> Tensor:
        return _pointwise.sub(self, other, alpha=alpha)

    subtract = sub

    def mul(self: Tensor, other: Operand) -> Tensor: return _binary("mul", self, other)
    def multiply(self: Tensor, other: Operand) -> Tensor: return _binary("mul", self, other)

    def div(self: Tensor, other: Operand, *, rounding_mode: str | None = None) -> Tensor:
        return _pointwise.div(self, other, rounding_mode=rounding_mode)

    divide = div

    def true_divide(self: Tensor, other: Operand) -> Tensor: return _binary("div", self, other)
    def floor_divide(self: Tensor, other: Operand) -> Tensor:
        return _binary("floor_divide", self, other)
    def remainder(self: Tensor, other: Operand) -> Tensor: return _binary("remainder", self, other)
    def fmod(self: Tensor, other: Operand) -> Tensor: return _binary("fmod", self, other)
    def pow(self: Tensor, exponent: Operand) -> Tensor: return _elementwise.pow(self, exponent)

    def powf(self: Tensor, exponent: Scalar) -> Tensor:
        return _elementwise.powf(self, exponent)

    def atan2(self: Tensor, other: Tensor) -> Tensor: return _binary("atan2", self, other)
    def arctan2(self: Tensor, other: Tensor) -> Tensor: return _binary("atan2", self, other)
    def maximum(self: Tensor, other: Tensor) -> Tensor: return _binary("maximum", self, other)
    def minimum(self: Tensor, other: Tensor) -> Tensor: return _binary("minimum", self, other)
    def fmax(self: Tensor, other: Tensor) -> Tensor: return _pointwise.fmax(self, other)
    def fmin(self: Tensor, other: Tensor) -> Tensor: return _pointwise.fmin(self, other)
    def hypot(self: Tensor, other: Tensor) -> Tensor: return _pointwise.hypot(self, other)
    def copysign(self: Tensor, other: Operand) -> Tensor: return _binary("copysign", self, other)
    def xlogy(self: Tensor, other: Operand) -> Tensor: return _pointwise.xlogy(self, other)

    def lerp(self: Tensor, end: Tensor, weight: Operand) -> Tensor:
        return _pointwise.lerp(self, end, weight)

    def addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Scalar = 1) -> Tensor:
        return _pointwise.addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Scalar = 1) -> Tensor:
        return _pointwise.addcdiv(self, tensor1, tensor2, value=value)

    def affine(self: Tensor, mul: Scalar, add: Scalar) -> Tensor:
        """self * mul + add, in one kernel."""
        return _elementwise.affine(self, mul, add)

    def clamp(self: Tensor, min: Operand | None = None, max: Operand | None = None) -> Tensor:  # noqa: A002
        return _elementwise.clamp(self, min, max)

    clip = clamp

    def clamp_min(self: Tensor, min: Operand) -> Tensor:  # noqa: A002
        return _elementwise.clamp(self, min, None)

    def clamp_max(self: Tensor, max: Operand) -> Tensor:  # noqa: A002
        return _elementwise.clamp(self, None, max)

    def where(self: Tensor, condition: Tensor, y: Operand) -> Tensor:
        """condition ? self : y."""
        return _elementwise.where(condition, self, y)

    # -- logical and bitwise ----------------------------------------------------------------
    def logical_and(self: Tensor, other: Tensor) -> Tensor:
        return _pointwise.logical_and(self, other)

    def logical_or(self: Tensor, other: Tensor) -> Tensor:
        return _pointwise.logical_or(self, other)

    def logical_xor(self: Tensor, other: Tensor) -> Tensor:
        return _pointwise.logical_xor(self, other)

    def bitwise_and(self: Tensor, o: Operand) -> Tensor: return _binary("bitwise_and", self, o)
    def bitwise_or(self: Tensor, o: Operand) -> Tensor: return _binary("bitwise_or", self, o)
    def bitwise_xor(self: Tensor, o: Operand) -> Tensor: return _binary("bitwise_xor", self, o)

    # -- comparisons: bool tensors, never differentiable ------------------------------------
    def __eq__(self: Tensor, o: object) -> Tensor:  # type: ignore[override]  # elementwise
        return _compare("eq", self, o)

    def __ne__(self: Tensor, o: object) -> Tensor:  # type: ignore[override]  # elementwise
        return _compare("ne", self, o)

    def __lt__(self: Tensor, o: Operand) -> Tensor: return _compare("lt", self, o)
    def __le__(self: Tensor, o: Operand) -> Tensor: return _compare("le", self, o)
    def __gt__(self: Tensor, o: Operand) -> Tensor: return _compare("gt", self, o)
    def __ge__(self: Tensor, o: Operand) -> Tensor: return _compare("ge", self, o)

    def eq(self: Tensor, o: Operand) -> Tensor: return _compare("eq", self, o)
    def ne(self: Tensor, o: Operand) -> Tensor: return _compare("ne", self, o)
    def lt(self: Tensor, o: Operand) -> Tensor: return _compare("lt", self, o)
    def le(self: Tensor, o: Operand) -> Tensor: return _compare("le", self, o)
    def gt(self: Tensor, o: Operand) -> Tensor: return _compare("gt", self, o)
    def ge(self: Tensor, o: Operand) -> Tensor: return _compare("ge", self, o)
