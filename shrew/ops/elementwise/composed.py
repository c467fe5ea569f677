"""Elementwise ops composed of the elementwise primitives (ops/elementwise/recorded.py): PyTorch's
functions over the Unary and Binary kernels, division modes, lerp, addcmul, the NaN and
infinity tests, logical ops, and the rarer math (hypot, xlogy, logit, ...), whose gradients
follow from their parts."""
from __future__ import annotations

import builtins
import math
import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from ...core.autocast import autocast_op
from ...core.dtype import bool_, finfo
from ...core.errors import not_a_tensor
from ...core.errors import ArgumentError, DTypeError, ShrewTypeError
from ...core.fields import AnyTensor
from ..common import scalar_like
from ..out import write_out
from .recorded import binary, clamp, compare, pow, unary, where  # noqa: F401  (pow: torch.pow)

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import Scalar

    Operand: TypeAlias = Tensor | Scalar


def _tensor(value: object, op: str) -> Tensor:
    if not isinstance(value, AnyTensor):
        raise not_a_tensor(op, "input", value)
    return value


def _unary_function(fn: str, name: str = "") -> Callable[[Tensor], Tensor]:
    """torch.<name>(input): the Unary kernel `fn` as a function."""
    name = name or fn

    def function(input: Tensor) -> Tensor:  # noqa: A002  (torch's argument name)
        return unary(fn, _tensor(input, name))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise {fn} of `input` (torch.{name})."
    return function


def _binary_function(fn: str, name: str = "") -> Callable[[Tensor, Operand], Tensor]:
    """torch.<name>(input, other): the Binary kernel `fn` as a function."""
    name = name or fn

    def function(input: Tensor, other: Operand) -> Tensor:  # noqa: A002
        return binary(fn, _tensor(input, name), other)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise {fn} of `input` and `other`, broadcast (torch.{name})."
    return function


# -- one kernel each -----------------------------------------------------------------------
abs = _unary_function("abs")  # noqa: A001  (torch's names shadow builtins here)
absolute = _unary_function("abs", "absolute")
neg = _unary_function("neg")
negative = _unary_function("neg", "negative")
exp = _unary_function("exp")
log = _unary_function("log")
sqrt = _unary_function("sqrt")
square = _unary_function("square")
relu = _unary_function("relu")
sigmoid = _unary_function("sigmoid")
tanh = _unary_function("tanh")
sin = _unary_function("sin")
cos = _unary_function("cos")
floor = _unary_function("floor")
ceil = _unary_function("ceil")
erf = _unary_function("erf")
erfc = _unary_function("erfc")
erfinv = _unary_function("erfinv")
sign = _unary_function("sign")
sgn = _unary_function("sign", "sgn")  # sign, for real tensors
rsqrt = _unary_function("rsqrt")
reciprocal = _unary_function("reciprocal")
log1p = _unary_function("log1p")
expm1 = _unary_function("expm1")
log2 = _unary_function("log2")
log10 = _unary_function("log10")
exp2 = _unary_function("exp2")
tan = _unary_function("tan")
asin = _unary_function("asin")
arcsin = _unary_function("asin", "arcsin")
acos = _unary_function("acos")
arccos = _unary_function("acos", "arccos")
atan = _unary_function("atan")
arctan = _unary_function("atan", "arctan")
sinh = _unary_function("sinh")
cosh = _unary_function("cosh")
asinh = _unary_function("asinh")
arcsinh = _unary_function("asinh", "arcsinh")
acosh = _unary_function("acosh")
arccosh = _unary_function("acosh", "arccosh")
atanh = _unary_function("atanh")
arctanh = _unary_function("atanh", "arctanh")
trunc = _unary_function("trunc")
fix = _unary_function("trunc", "fix")
bitwise_not = _unary_function("bitwise_not")

mul = _binary_function("mul")
multiply = _binary_function("mul", "multiply")
true_divide = _binary_function("div", "true_divide")
floor_divide = _binary_function("floor_divide")
remainder = _binary_function("remainder")
fmod = _binary_function("fmod")
atan2 = _binary_function("atan2")
arctan2 = _binary_function("atan2", "arctan2")
maximum = _binary_function("maximum")
minimum = _binary_function("minimum")
copysign = _binary_function("copysign")
bitwise_and = _binary_function("bitwise_and")
bitwise_or = _binary_function("bitwise_or")
bitwise_xor = _binary_function("bitwise_xor")


# -- arithmetic with modes and scales ------------------------------------------------------
def _scaled(other: Operand, alpha: Scalar) -> Operand:
    return other if alpha == 1 else other * alpha


def add(input: Tensor, other: Operand, *, alpha: Scalar = 1,  # noqa: A002
        out: Tensor | None = None) -> Tensor:
    """input + alpha * other (written into out when given)."""
    return write_out("add", binary("add", _tensor(input, "add"), _scaled(other, alpha)), out)


def sub(input: Tensor, other: Operand, *, alpha: Scalar = 1) -> Tensor:  # noqa: A002
    """input - alpha * other."""
    return binary("sub", _tensor(input, "sub"), _scaled(other, alpha))


subtract = sub


def div(input: Tensor, other: Operand, *, rounding_mode: str | None = None) -> Tensor:  # noqa: A002
    """input / other: true division (rounding_mode None, a float result), or rounded
    toward zero ("trunc") or toward -inf ("floor"), keeping integer dtypes."""
    x = _tensor(input, "div")
    if rounding_mode is None:
        return binary("div", x, other)
    if rounding_mode == "floor":
        return binary("floor_divide", x, other)
    if rounding_mode != "trunc":
        raise ArgumentError(f"div: rounding_mode must be None, 'trunc' or 'floor', got "
                            f"{rounding_mode!r}")
    integral = not x.dtype.is_floating_point and (
        not other.dtype.is_floating_point if isinstance(other, AnyTensor)
        else isinstance(other, numbers.Integral))
    if not integral:
        return unary("trunc", binary("div", x, other))
    # integers: a - fmod(a, b) is an exact multiple of b, so flooring divides it exactly
    return binary("floor_divide", binary("sub", x, binary("fmod", x, other)), other)


divide = div


@autocast_op("addcmul")
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *,  # noqa: A002
            value: Scalar = 1) -> Tensor:
    """input + value * tensor1 * tensor2."""
    return add(input, binary("mul", _tensor(tensor1, "addcmul"), tensor2), alpha=value)


@autocast_op("addcdiv")
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *,  # noqa: A002
            value: Scalar = 1) -> Tensor:
    """input + value * tensor1 / tensor2 (floats: integer division is refused, as torch)."""
    t1 = _tensor(tensor1, "addcdiv")
    if not t1.dtype.is_floating_point and not _tensor(tensor2, "addcdiv").dtype.is_floating_point:
        raise DTypeError(f"addcdiv: integer division is not supported ({t1.dtype} / "
                         f"{tensor2.dtype}); use addcmul or floats")
    return add(input, binary("div", t1, tensor2), alpha=value)


def lerp(input: Tensor, end: Tensor, weight: Operand) -> Tensor:  # noqa: A002
    """input + weight * (end - input), computed from the nearer end (as PyTorch) so that
    weight 1 gives exactly `end`."""
    start = _tensor(input, "lerp")
    diff = end - start
    if not isinstance(weight, AnyTensor):
        return start + diff * weight if builtins.abs(weight) < 0.5 else end - diff * (1 - weight)
    return where(weight.abs() < 0.5, start + weight * diff, end - diff * (1 - weight))


def _operands(op: str, a: Operand, b: Operand) -> tuple[Tensor, Tensor]:
    """Both operands as tensors: a number becomes a 0-d tensor beside the other."""
    for value in (a, b):
        if not isinstance(value, (AnyTensor, numbers.Number)) or isinstance(value, complex):
            raise ShrewTypeError(f"{op}: operands must be tensors or real numbers, got "
                                 f"{type(value).__name__}")
    if isinstance(a, AnyTensor):
        return a, b if isinstance(b, AnyTensor) else scalar_like(b, a)
    if isinstance(b, AnyTensor):
        return scalar_like(a, b), b
    raise ArgumentError(f"{op}: needs at least one tensor operand")


def hypot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """sqrt(input^2 + other^2), for float tensors."""
    x, y = _tensor(input, "hypot"), _tensor(other, "hypot")
    if not (x.dtype.is_floating_point and y.dtype.is_floating_point):
        raise DTypeError(f"hypot: needs floating-point tensors, got {x.dtype} and {y.dtype}")
    return (x * x + y * y).sqrt()


def xlogy(input: Operand, other: Operand) -> Tensor:  # noqa: A002
    """input * log(other), and 0 where input is 0 (unless other is NaN)."""
    x, y = _operands("xlogy", input, other)
    safe = where((x == 0) & (y == y), 1.0, y)  # y == y: not NaN
    return x * unary("log", safe)


def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    p = _tensor(input, "logit")
    if eps is not None:
        p = clamp(p, eps, 1.0 - eps)
    return unary("log", p / (1.0 - p))


def frac(input: Tensor) -> Tensor:  # noqa: A002
    """The fractional part, input - trunc(input), with input's sign."""
    x = _tensor(input, "frac")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"frac: needs a floating-point tensor, got {x.dtype}")
    return x - unary("trunc", x)


def round(input: Tensor, *, decimals: int = 0,  # noqa: A001
          out: Tensor | None = None) -> Tensor:
    """Round half to even, to `decimals` decimal places (negative: tens, hundreds, ...);
    written into out when given."""
    return write_out("round", _round(_tensor(input, "round"), decimals), out)


def _round(x: Tensor, decimals: int) -> Tensor:
    if decimals == 0 or not x.dtype.is_floating_point:
        return unary("round", x)
    scale = 10.0 ** builtins.abs(decimals)
    if decimals > 0:
        return unary("round", x * scale) / scale
    return unary("round", x / scale) * scale


def fmax(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """maximum, except that a NaN loses to a number."""
    return _nan_ignoring("maximum", _tensor(input, "fmax"), other)


def fmin(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """minimum, except that a NaN loses to a number."""
    return _nan_ignoring("minimum", _tensor(input, "fmin"), other)


def _nan_ignoring(fn: str, a: Tensor, b: Tensor) -> Tensor:
    """a where it wins or ties or b is NaN, else b: PyTorch's fmax / fmin values and, as
    one where, its gradients (a takes g at a tie and where both are NaN; no sharing)."""
    a_wins = a >= b if fn == "maximum" else a <= b
    return where(a_wins | isnan(b), a, b)


def clamp_min(input: Tensor, min: Operand) -> Tensor:  # noqa: A002
    return clamp(_tensor(input, "clamp_min"), min, None)


def clamp_max(input: Tensor, max: Operand) -> Tensor:  # noqa: A002
    return clamp(_tensor(input, "clamp_max"), None, max)


def clip(input: Tensor, min: Operand | None = None, max: Operand | None = None) -> Tensor:  # noqa: A002
    return clamp(_tensor(input, "clip"), min, max)


# -- tests of values: bool tensors -------------------------------------------------------
def signbit(input: Tensor) -> Tensor:  # noqa: A002
    """Whether the sign bit is set (true for -0.0)."""
    x = _tensor(input, "signbit")
    if not x.dtype.is_floating_point:
        return compare("lt", x, 0)
    return compare("lt", binary("copysign", x, 1.0, reflected=True), 0)


def isnan(input: Tensor) -> Tensor:  # noqa: A002
    x = _tensor(input, "isnan")
    return compare("ne", x, x)


def isinf(input: Tensor) -> Tensor:  # noqa: A002
    x = _tensor(input, "isinf")
    if not x.dtype.is_floating_point:
        return compare("ne", x, x)  # all false
    return compare("eq", unary("abs", x), math.inf)


def isposinf(input: Tensor) -> Tensor:  # noqa: A002
    x = _tensor(input, "isposinf")
    return compare("eq", x, math.inf) if x.dtype.is_floating_point else compare("ne", x, x)


def isneginf(input: Tensor) -> Tensor:  # noqa: A002
    x = _tensor(input, "isneginf")
    return compare("eq", x, -math.inf) if x.dtype.is_floating_point else compare("ne", x, x)


def isfinite(input: Tensor) -> Tensor:  # noqa: A002
    x = _tensor(input, "isfinite")
    if not x.dtype.is_floating_point:
        return compare("eq", x, x)  # all true
    return compare("lt", unary("abs", x), math.inf)  # false for NaN too


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,  # noqa: A002
               neginf: float | None = None) -> Tensor:
    """NaN, +inf and -inf replaced by `nan`, `posinf` and `neginf` (by default the
    dtype's largest and lowest finite values)."""
    x = _tensor(input, "nan_to_num")
    if not x.dtype.is_floating_point:
        return x.clone()
    info = finfo(x.dtype)
    x = where(isnan(x), nan, x)
    x = where(compare("eq", x, math.inf), info.max if posinf is None else posinf, x)
    return where(compare("eq", x, -math.inf), info.min if neginf is None else neginf, x)


# -- logical ops: any dtype, nonzero is true; bool results -------------------------------
def _truth(x: Operand, op: str) -> Tensor:
    t = _tensor(x, op)
    return t if t.dtype is bool_ else compare("ne", t, 0)


def logical_not(input: Tensor) -> Tensor:  # noqa: A002
    return unary("bitwise_not", _truth(input, "logical_not"))


def logical_and(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    return binary("bitwise_and", _truth(input, "logical_and"), _truth(other, "logical_and"))


def logical_or(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    return binary("bitwise_or", _truth(input, "logical_or"), _truth(other, "logical_or"))


def logical_xor(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    return binary("bitwise_xor", _truth(input, "logical_xor"), _truth(other, "logical_xor"))
