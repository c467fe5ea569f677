"""The rarer elementwise functions of torch, composed of the elementwise primitives: integer
arithmetic (gcd, lcm, the bit shifts), a float's parts and neighbours (frexp, ldexp,
nextafter), log-space addition, heaviside, float_power, angle units, positive, rsub.
Their gradients, where torch has them, follow from their parts."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from ...core.dtype import bool_, float64, get_default_dtype, int32, result_type
from ...core.errors import DTypeError, ShrewTypeError
from ...core.grad_mode import no_grad
from .composed import _operands, _tensor, maximum
from .recorded import unary, where

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import Scalar

    Operand: TypeAlias = Tensor | Scalar


def _integers(op: str, a: Tensor, b: Tensor) -> None:
    for t in (a, b):
        if t.dtype.is_floating_point or t.dtype is bool_:
            raise DTypeError(f"{op}: needs integer tensors, got {a.dtype} and {b.dtype}")


def gcd(input: Operand, other: Operand) -> Tensor:  # noqa: A002
    """The greatest common divisor, elementwise, of integer tensors (gcd(0, 0) = 0): Euclid's
    algorithm, one remainder per step until every pair is done."""
    a, b = _operands("gcd", input, other)
    _integers("gcd", a, b)
    dtype = result_type(a, b)
    a, b = a.to_dtype(dtype).abs(), b.to_dtype(dtype).abs()
    a, b = a.broadcast_to(np.broadcast_shapes(a.shape, b.shape)), b
    with no_grad():
        while bool((b != 0).any()):
            going = b != 0
            a, b = where(going, b, a), where(going, a % where(going, b, 1), 0)
    return a + 0 * b  # b: broadcast to the common shape


def lcm(input: Operand, other: Operand) -> Tensor:  # noqa: A002
    """The least common multiple, elementwise (0 where either is 0)."""
    a, b = _operands("lcm", input, other)
    _integers("lcm", a, b)
    g = gcd(a, b)
    return (a // where(g == 0, 1, g) * b).abs()


def _shift(op: str, input: Operand, other: Operand, left: bool) -> Tensor:  # noqa: A002
    a, b = _operands(op, input, other)
    _integers(op, a, b)
    dtype = result_type(a, b)
    a, b = a.to_dtype(dtype), b.to_dtype(dtype)
    bits = np.iinfo(dtype.np).bits
    beyond = (b < 0) | (b >= bits)  # torch: 0, or -1 for a negative number shifted right
    p = where(beyond, 0, b)
    # 2**p overflows a signed dtype at p = bits - 1: multiply (divide) by 2**(p-1), then 2
    half, last = 2 ** where(p > 0, p - 1, 0), where(p > 0, 2, 1)
    if left:  # wraps modulo 2**bits, as the shift does
        return where(beyond, 0, a * half * last).to_dtype(dtype)
    return where(beyond, where(a < 0, -1, 0), a // half // last).to_dtype(dtype)


def bitwise_left_shift(input: Operand, other: Operand) -> Tensor:  # noqa: A002
    """input << other, elementwise, for integer tensors (0 where other is out of range)."""
    return _shift("bitwise_left_shift", input, other, left=True)


def bitwise_right_shift(input: Operand, other: Operand) -> Tensor:  # noqa: A002
    """input >> other (arithmetic: the sign is kept), elementwise, for integer tensors."""
    return _shift("bitwise_right_shift", input, other, left=False)


def _float(op: str, x: Tensor) -> Tensor:
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: needs a floating-point tensor, got {x.dtype}")
    return x


def frexp(input: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    """(mantissa, exponent) with input = mantissa * 2**exponent and 0.5 <= |mantissa| < 1
    (0 and 0 for 0; inf and NaN keep their value with exponent 0); the exponent is int32."""
    from ...return_types import frexp as frexp_result
    x = _float("frexp", _tensor(input, "frexp"))
    with no_grad():
        finite = x.isfinite() & (x != 0)
        safe = where(finite, x, 1.0)
        e = unary("floor", unary("log2", safe.abs())) + 1
        m = safe / unary("exp2", e)
        big = m.abs() >= 1  # log2 rounded up: one step too low
        m, e = where(big, m / 2, m), where(big, e + 1, e)
        small = m.abs() < 0.5
        m, e = where(small, m * 2, m), where(small, e - 1, e)
        e = where(finite, e, 0)
        exponent = e.to_dtype(int32)
        half = (e * -0.5).floor()  # 2**-e in two factors: one would overflow for subnormals
    # mantissa = x * 2**-e: its gradient is 2**-e (e is piecewise constant), as torch's
    mantissa = where(finite, x * unary("exp2", half) * unary("exp2", -e - half), x)
    return frexp_result(mantissa, exponent)


def ldexp(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """input * 2**other (a float result, the default dtype for integer input)."""
    x, e = _operands("ldexp", input, other)
    if not x.dtype.is_floating_point:
        x = x.to_dtype(get_default_dtype())
    return x * unary("exp2", e.to_dtype(x.dtype))


def nextafter(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The next float after input in the direction of other (other where they are equal)."""
    x, y = _operands("nextafter", input, other)
    dtype = result_type(x, y)
    if not dtype.is_floating_point:
        raise DTypeError(f"nextafter: needs floating-point tensors, got {x.dtype} and {y.dtype}")
    x, y = x.to_dtype(dtype), y.to_dtype(dtype)
    info = np.finfo(dtype.np)
    digits, tiny = int(info.nmant) + 1, float(info.smallest_subnormal)
    with no_grad():
        mantissa, exponent = frexp(x.detach())
        up = y > x
        away = up == (x > 0)  # moving away from zero
        e = exponent.to_dtype(dtype) - digits
        # toward zero from a power of two, the spacing below is half the one above
        e = where(~away & (mantissa.abs() == 0.5), e - 1, e)
        step = maximum(unary("exp2", e), tiny)
        step = where(x == 0, tiny, step)
        out = x + where(up, step, -step)
        out = where(x.isinf(), x.sign() * float(info.max), out)
        out = where((x == y) | y.isnan(), y, where(x.isnan(), x, out))
    # torch's gradient: 1 for input, 0 for other (a step to the neighbouring float)
    return where(x.isfinite(), out + (x - x.detach()), out)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """log(exp(input) + exp(other)) without overflow: max + log1p(exp(-|input - other|))."""
    a, b = _operands("logaddexp", input, other)
    same = a == b  # also both inf: their difference would be NaN
    d = where(same, 0.0, a - b)
    return maximum(a, b) + unary("log1p", unary("exp", -d.abs()))


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """log2(2**input + 2**other) without overflow."""
    a, b = _operands("logaddexp2", input, other)
    same = a == b
    d = where(same, 0.0, a - b)
    return maximum(a, b) + unary("log1p", unary("exp2", -d.abs())) / math.log(2)


def heaviside(input: Tensor, values: Tensor) -> Tensor:  # noqa: A002
    """0 where input < 0, values where input == 0, 1 where input > 0."""
    x, v = _tensor(input, "heaviside"), _tensor(values, "heaviside")
    if x.dtype is not v.dtype:
        raise DTypeError(f"heaviside: input is {x.dtype} but values is {v.dtype}; they must "
                         f"have the same dtype")
    return where(x == 0, v, (x > 0).to_dtype(x.dtype))


def float_power(input: Operand, exponent: Operand) -> Tensor:  # noqa: A002
    """input ** exponent in float64."""
    x, e = _operands("float_power", input, exponent)
    return x.to_dtype(float64) ** e.to_dtype(float64)


def deg2rad(input: Tensor) -> Tensor:  # noqa: A002
    """Degrees to radians (the default float dtype for integer input)."""
    x = _tensor(input, "deg2rad")
    if x.dtype is bool_:
        raise DTypeError("deg2rad: not implemented for bool tensors")
    if not x.dtype.is_floating_point:
        x = x.to_dtype(get_default_dtype())
    return x * (math.pi / 180)


def rad2deg(input: Tensor) -> Tensor:  # noqa: A002
    """Radians to degrees (the default float dtype for integer input)."""
    x = _tensor(input, "rad2deg")
    if x.dtype is bool_:
        raise DTypeError("rad2deg: not implemented for bool tensors")
    if not x.dtype.is_floating_point:
        x = x.to_dtype(get_default_dtype())
    return x * (180 / math.pi)


def positive(input: Tensor) -> Tensor:  # noqa: A002
    """input itself (refused for bool, as torch)."""
    x = _tensor(input, "positive")
    if x.dtype is bool_:
        raise ShrewTypeError("positive: the + operator does not support bool tensors")
    return x


def rsub(input: Operand, other: Operand, alpha: Scalar = 1) -> Tensor:  # noqa: A002
    """other - alpha * input."""
    a, b = _operands("rsub", input, other)
    return b - (a if alpha == 1 else a * alpha)

