"""Tensor's elementwise methods and operators (ops/elementwise/)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from ..ops.elementwise import recorded as _elementwise
from ..ops.elementwise import composed as _pointwise
from ..ops.elementwise.recorded import binary as _binary
from ..ops.elementwise.recorded import compare as _compare
from ..ops.elementwise.recorded import unary as _unary
from ..ops.elementwise import numeric as _numeric

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import Scalar

    Operand: TypeAlias = Tensor | Scalar


class ElementwiseMethods:
    """Unary math, arithmetic with broadcasting and scalars, comparisons, logical and
    bitwise ops."""

    __slots__ = ()

    # -- unary (one kernel each) --------------------------------------------------------
    def neg(self: Any) -> Tensor: return _unary("neg", self)
    def negative(self: Any) -> Tensor: return _unary("neg", self)
    def abs(self: Any) -> Tensor: return _unary("abs", self)
    def absolute(self: Any) -> Tensor: return _unary("abs", self)
    def exp(self: Any) -> Tensor: return _unary("exp", self)
    def exp2(self: Any) -> Tensor: return _unary("exp2", self)
    def expm1(self: Any) -> Tensor: return _unary("expm1", self)
    def log(self: Any) -> Tensor: return _unary("log", self)
    def log1p(self: Any) -> Tensor: return _unary("log1p", self)
    def log2(self: Any) -> Tensor: return _unary("log2", self)
    def log10(self: Any) -> Tensor: return _unary("log10", self)
    def sqrt(self: Any) -> Tensor: return _unary("sqrt", self)
    def rsqrt(self: Any) -> Tensor: return _unary("rsqrt", self)
    def reciprocal(self: Any) -> Tensor: return _unary("reciprocal", self)
    def square(self: Any) -> Tensor: return _unary("square", self)
    def relu(self: Any) -> Tensor: return _unary("relu", self)
    def sigmoid(self: Any) -> Tensor: return _unary("sigmoid", self)
    def tanh(self: Any) -> Tensor: return _unary("tanh", self)
    def silu(self: Any) -> Tensor: return _unary("silu", self)
    def sin(self: Any) -> Tensor: return _unary("sin", self)
    def cos(self: Any) -> Tensor: return _unary("cos", self)
    def tan(self: Any) -> Tensor: return _unary("tan", self)
    def asin(self: Any) -> Tensor: return _unary("asin", self)
    def arcsin(self: Any) -> Tensor: return _unary("asin", self)
    def acos(self: Any) -> Tensor: return _unary("acos", self)
    def arccos(self: Any) -> Tensor: return _unary("acos", self)
    def atan(self: Any) -> Tensor: return _unary("atan", self)
    def arctan(self: Any) -> Tensor: return _unary("atan", self)
    def sinh(self: Any) -> Tensor: return _unary("sinh", self)
    def cosh(self: Any) -> Tensor: return _unary("cosh", self)
    def asinh(self: Any) -> Tensor: return _unary("asinh", self)
    def arcsinh(self: Any) -> Tensor: return _unary("asinh", self)
    def acosh(self: Any) -> Tensor: return _unary("acosh", self)
    def arccosh(self: Any) -> Tensor: return _unary("acosh", self)
    def atanh(self: Any) -> Tensor: return _unary("atanh", self)
    def arctanh(self: Any) -> Tensor: return _unary("atanh", self)
    def erf(self: Any) -> Tensor: return _unary("erf", self)
    def erfc(self: Any) -> Tensor: return _unary("erfc", self)
    def erfinv(self: Any) -> Tensor: return _unary("erfinv", self)
    def floor(self: Any) -> Tensor: return _unary("floor", self)
    def ceil(self: Any) -> Tensor: return _unary("ceil", self)
    def trunc(self: Any) -> Tensor: return _unary("trunc", self)
    def fix(self: Any) -> Tensor: return _unary("trunc", self)
    def sign(self: Any) -> Tensor: return _unary("sign", self)
    def sgn(self: Any) -> Tensor: return _unary("sign", self)
    def bitwise_not(self: Any) -> Tensor: return _unary("bitwise_not", self)
    def __neg__(self: Any) -> Tensor: return _unary("neg", self)
    def __pos__(self: Any) -> Tensor: return self.positive()
    def __abs__(self: Any) -> Tensor: return _unary("abs", self)
    def __invert__(self: Any) -> Tensor: return _unary("bitwise_not", self)

    # -- unary compositions ---------------------------------------------------------------
    def round(self: Any, decimals: int = 0) -> Tensor:
        return _pointwise.round(self, decimals=decimals)

    def frac(self: Any) -> Tensor: return _pointwise.frac(self)
    def signbit(self: Any) -> Tensor: return _pointwise.signbit(self)
    def isnan(self: Any) -> Tensor: return _pointwise.isnan(self)
    def isinf(self: Any) -> Tensor: return _pointwise.isinf(self)
    def isposinf(self: Any) -> Tensor: return _pointwise.isposinf(self)
    def isneginf(self: Any) -> Tensor: return _pointwise.isneginf(self)
    def isfinite(self: Any) -> Tensor: return _pointwise.isfinite(self)
    def logical_not(self: Any) -> Tensor: return _pointwise.logical_not(self)

    def logit(self: Any, eps: float | None = None) -> Tensor:
        return _pointwise.logit(self, eps)

    def nan_to_num(self: Any, nan: float = 0.0, posinf: float | None = None,
                   neginf: float | None = None) -> Tensor:
        return _pointwise.nan_to_num(self, nan, posinf, neginf)

    def gelu(self: Any, approximate: str = "none") -> Tensor:
        return _elementwise.gelu(self, approximate)

    # -- arithmetic (broadcasting, with Python numbers) ------------------------------------
    def __add__(self: Any, o: Operand) -> Tensor: return _binary("add", self, o)
    def __radd__(self: Any, o: Operand) -> Tensor: return _binary("add", self, o, True)
    def __sub__(self: Any, o: Operand) -> Tensor: return _binary("sub", self, o)
    def __rsub__(self: Any, o: Operand) -> Tensor: return _binary("sub", self, o, True)
    def __mul__(self: Any, o: Operand) -> Tensor: return _binary("mul", self, o)
    def __rmul__(self: Any, o: Operand) -> Tensor: return _binary("mul", self, o, True)
    def __truediv__(self: Any, o: Operand) -> Tensor: return _binary("div", self, o)
    def __rtruediv__(self: Any, o: Operand) -> Tensor: return _binary("div", self, o, True)
    def __floordiv__(self: Any, o: Operand) -> Tensor: return _binary("floor_divide", self, o)
    def __rfloordiv__(self: Any, o: Operand) -> Tensor:
        return _binary("floor_divide", self, o, True)
    def __mod__(self: Any, o: Operand) -> Tensor: return _binary("remainder", self, o)
    def __rmod__(self: Any, o: Operand) -> Tensor: return _binary("remainder", self, o, True)
    def __pow__(self: Any, exponent: Operand) -> Tensor: return _elementwise.pow(self, exponent)
    def __rpow__(self: Any, base: Operand) -> Tensor: return _elementwise.rpow(self, base)
    def __and__(self: Any, o: Operand) -> Tensor: return _binary("bitwise_and", self, o)
    def __rand__(self: Any, o: Operand) -> Tensor: return _binary("bitwise_and", self, o, True)
    def __or__(self: Any, o: Operand) -> Tensor: return _binary("bitwise_or", self, o)
    def __ror__(self: Any, o: Operand) -> Tensor: return _binary("bitwise_or", self, o, True)
    def __xor__(self: Any, o: Operand) -> Tensor: return _binary("bitwise_xor", self, o)
    def __rxor__(self: Any, o: Operand) -> Tensor: return _binary("bitwise_xor", self, o, True)

    def add(self: Any, other: Operand, *, alpha: Scalar = 1) -> Tensor:
        return _pointwise.add(self, other, alpha=alpha)

    def sub(self: Any, other: Operand, *, alpha: Scalar = 1) -> Tensor:
        return _pointwise.sub(self, other, alpha=alpha)

    subtract = sub

    def mul(self: Any, other: Operand) -> Tensor: return _binary("mul", self, other)
    def multiply(self: Any, other: Operand) -> Tensor: return _binary("mul", self, other)

    def div(self: Any, other: Operand, *, rounding_mode: str | None = None) -> Tensor:
        return _pointwise.div(self, other, rounding_mode=rounding_mode)

    divide = div

    def true_divide(self: Any, other: Operand) -> Tensor: return _binary("div", self, other)
    def floor_divide(self: Any, other: Operand) -> Tensor:
        return _binary("floor_divide", self, other)
    def remainder(self: Any, other: Operand) -> Tensor: return _binary("remainder", self, other)
    def fmod(self: Any, other: Operand) -> Tensor: return _binary("fmod", self, other)
    def pow(self: Any, exponent: Operand) -> Tensor: return _elementwise.pow(self, exponent)

    def powf(self: Any, exponent: Scalar) -> Tensor:
        return _elementwise.powf(self, exponent)

    def atan2(self: Any, other: Tensor) -> Tensor: return _binary("atan2", self, other)
    def arctan2(self: Any, other: Tensor) -> Tensor: return _binary("atan2", self, other)
    def maximum(self: Any, other: Tensor) -> Tensor: return _binary("maximum", self, other)
    def minimum(self: Any, other: Tensor) -> Tensor: return _binary("minimum", self, other)
    def fmax(self: Any, other: Tensor) -> Tensor: return _pointwise.fmax(self, other)
    def fmin(self: Any, other: Tensor) -> Tensor: return _pointwise.fmin(self, other)
    def hypot(self: Any, other: Tensor) -> Tensor: return _pointwise.hypot(self, other)
    def copysign(self: Any, other: Operand) -> Tensor: return _binary("copysign", self, other)
    def xlogy(self: Any, other: Operand) -> Tensor: return _pointwise.xlogy(self, other)

    def lerp(self: Any, end: Tensor, weight: Operand) -> Tensor:
        return _pointwise.lerp(self, end, weight)

    def addcmul(self: Any, tensor1: Tensor, tensor2: Tensor, *, value: Scalar = 1) -> Tensor:
        return _pointwise.addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self: Any, tensor1: Tensor, tensor2: Tensor, *, value: Scalar = 1) -> Tensor:
        return _pointwise.addcdiv(self, tensor1, tensor2, value=value)

    def affine(self: Any, mul: Scalar, add: Scalar) -> Tensor:
        """self * mul + add, in one kernel."""
        return _elementwise.affine(self, mul, add)

    def clamp(self: Any, min: Operand | None = None, max: Operand | None = None) -> Tensor:  # noqa: A002
        return _elementwise.clamp(self, min, max)

    clip = clamp

    def clamp_min(self: Any, min: Operand) -> Tensor:  # noqa: A002
        return _elementwise.clamp(self, min, None)

    def clamp_max(self: Any, max: Operand) -> Tensor:  # noqa: A002
        return _elementwise.clamp(self, None, max)

    def where(self: Any, condition: Tensor, y: Operand) -> Tensor:
        """condition ? self : y."""
        return _elementwise.where(condition, self, y)

    # -- logical and bitwise ----------------------------------------------------------------
    def logical_and(self: Any, other: Tensor) -> Tensor:
        return _pointwise.logical_and(self, other)

    def logical_or(self: Any, other: Tensor) -> Tensor:
        return _pointwise.logical_or(self, other)

    def logical_xor(self: Any, other: Tensor) -> Tensor:
        return _pointwise.logical_xor(self, other)

    def bitwise_and(self: Any, o: Operand) -> Tensor: return _binary("bitwise_and", self, o)
    def bitwise_or(self: Any, o: Operand) -> Tensor: return _binary("bitwise_or", self, o)
    def bitwise_xor(self: Any, o: Operand) -> Tensor: return _binary("bitwise_xor", self, o)

    # -- comparisons: bool tensors, never differentiable ------------------------------------
    def __eq__(self: Any, o: object) -> Tensor:  # type: ignore[override]  # elementwise
        return _compare("eq", self, o)

    def __ne__(self: Any, o: object) -> Tensor:  # type: ignore[override]  # elementwise
        return _compare("ne", self, o)

    def __lt__(self: Any, o: Operand) -> Tensor: return _compare("lt", self, o)
    def __le__(self: Any, o: Operand) -> Tensor: return _compare("le", self, o)
    def __gt__(self: Any, o: Operand) -> Tensor: return _compare("gt", self, o)
    def __ge__(self: Any, o: Operand) -> Tensor: return _compare("ge", self, o)

    def eq(self: Any, o: Operand) -> Tensor: return _compare("eq", self, o)
    def ne(self: Any, o: Operand) -> Tensor: return _compare("ne", self, o)
    def lt(self: Any, o: Operand) -> Tensor: return _compare("lt", self, o)
    def le(self: Any, o: Operand) -> Tensor: return _compare("le", self, o)
    def gt(self: Any, o: Operand) -> Tensor: return _compare("gt", self, o)
    def ge(self: Any, o: Operand) -> Tensor: return _compare("ge", self, o)

    # the rarer elementwise functions (ops/elementwise/numeric.py), as torch's methods
    bitwise_left_shift = _numeric.bitwise_left_shift
    bitwise_right_shift = _numeric.bitwise_right_shift
    positive = _numeric.positive
    deg2rad = _numeric.deg2rad
    rad2deg = _numeric.rad2deg
    frexp = _numeric.frexp
    ldexp = _numeric.ldexp
    logaddexp = _numeric.logaddexp
    logaddexp2 = _numeric.logaddexp2
    heaviside = _numeric.heaviside
    gcd = _numeric.gcd
    lcm = _numeric.lcm
    nextafter = _numeric.nextafter
    float_power = _numeric.float_power

    def __rdiv__(self: Any, other: Operand) -> Tensor:
        """other / self (Python 2's name, kept by torch)."""
        return self.__rtruediv__(other)
