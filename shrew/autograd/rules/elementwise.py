"""Gradient rules of the elementwise family (ops/elementwise/recorded.py): the Binary functions
beyond add, sub, mul and div, and every Unary function."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...core.errors import StateError, UnsupportedError
from ...ops.creation import zeros_like
from ...ops.elementwise.recorded import binary, unary, where
from .common import fast_gradient

if TYPE_CHECKING:
    from ..._tensor import Tensor

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_LN2, _LN10 = math.log(2.0), math.log(10.0)
_GELU_A = 0.044715


def binary_grads(fn: str, a: Tensor, b: Tensor, y: Tensor,
                 g: Tensor) -> tuple[Tensor | None, Tensor | None]:
    """d/da and d/db of the Binary functions beyond the four arithmetic ones, times g."""
    match fn:
        case "pow":  # b a^(b-1), and y log(a), taken as 0 where a = 0 and b >= 0 (as torch)
            ga = where(b == 0, 0.0, g * b * a.pow(b - 1.0)) if a.requires_grad else None
            gb = None
            if b.requires_grad:
                gb = where((a == 0) & (b >= 0), 0.0, g * y * a.log())
            return ga, gb
        case "atan2":
            r = a * a + b * b
            return g * b / r, -(g * a) / r
        case "maximum" | "minimum":
            # As torch: ties share g equally, a side gets none only where it loses, so
            # with a NaN (no order) both sides get g.
            a_loses, b_loses = (a < b, a > b) if fn == "maximum" else (a > b, a < b)
            tie = a == b
            half = g * 0.5
            return (where(tie, half, where(a_loses, 0.0, g)),
                    where(tie, half, where(b_loses, 0.0, g)))
        case "fmod":
            return g, -g * (a / b).trunc()
        case "remainder":
            return g, -g * a.floor_divide(b)
        case "floor_divide":  # piecewise constant
            return zeros_like(a), zeros_like(b)
        case "copysign":  # y / a is +-1 (0 where a = 0); b gets none
            return where(a == 0, 0.0, g * (y / a)), zeros_like(b)
        case "tanh_backward":  # a (1 - b^2): second derivatives of tanh
            return binary("tanh_backward", g, b), g * a * b * -2.0
        case "sigmoid_backward":  # a b (1 - b)
            return binary("sigmoid_backward", g, b), g * a * (1.0 - b * 2.0)
        case "igamma" | "igammac":  # d/dx: the gamma density x^(a-1) e^-x / Gamma(a)
            _not_differentiable(fn, a, "input")
            density = ((a - 1.0) * b.log() - b - unary("lgamma", a)).exp()
            return None, g * density if fn == "igamma" else -(g * density)
        case "zeta":  # d/dq zeta(s, q) = -s zeta(s + 1, q)
            _not_differentiable(fn, a, "input")
            return None, -(g * a * binary("zeta", a + 1.0, b))
    raise StateError(f"backward: no gradient rule for binary {fn!r}")


def _not_differentiable(fn: str, x: Tensor, name: str) -> None:
    """Raise where PyTorch has no derivative: igamma's, igammac's and zeta's first argument."""
    if x.requires_grad:
        raise UnsupportedError(f"{fn}: the derivative for '{fn}: {name}' is not implemented")


def unary_grad(fn: str, x: Tensor, y: Tensor, g: Tensor) -> Tensor:
    """d/dx of each Unary function, times g."""
    match fn:
        case "neg":
            return -g
        case "abs":
            return g * x.sign()
        case "exp":
            return g * y
        case "log":
            return g / x
        case "sqrt":
            return g / (y * 2.0)
        case "square":
            return g * x * 2.0
        case "relu":
            fast = fast_gradient(x._backend, "unary_backward", fn, g._data, x._data)
            if fast is not None:
                return fast
            return where(x <= 0, 0.0, g)   # PyTorch's threshold_backward: a NaN x passes g
        case "sigmoid":
            return binary("sigmoid_backward", g, y)
        case "tanh":
            return binary("tanh_backward", g, y)
        case "gelu" | "gelu_tanh":
            fast = fast_gradient(x._backend, "unary_backward", fn, g._data, x._data)
            if fast is not None:
                return fast
            return g * unary(fn + "_derivative", x)
        case "gelu_derivative":  # d/dx (Phi + x phi) = phi (2 - x^2)
            pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
            return g * pdf * (2.0 - x * x)
        case "gelu_tanh_derivative":
            # With t = tanh(u), u = c (x + a x^3): (1 - t^2) (u' - x t u'^2 + 3 a c x^2).
            # 1 - t^2 as 4 / (e^u + e^-u)^2: no cancellation where t is near +-1.
            u = (x + x * x * x * _GELU_A) * _SQRT_2_OVER_PI
            sech2 = 4.0 / (u.exp() + (-u).exp()).square()
            du = (x * x * (3 * _GELU_A) + 1.0) * _SQRT_2_OVER_PI
            inner = du - x * u.tanh() * du * du + x * x * (3 * _GELU_A * _SQRT_2_OVER_PI)
            return g * sech2 * inner
        case "silu":
            s = x.sigmoid()
            return g * s * (x * (1.0 - s) + 1.0)
        case "sin":
            return g * x.cos()
        case "cos":
            return -(g * x.sin())
        case "erf":
            return g * (x * x * -1.0).exp() * _TWO_OVER_SQRT_PI
        case "erfc":
            return g * (x * x * -1.0).exp() * -_TWO_OVER_SQRT_PI
        case "erfinv":  # 1 / erf'(y) = sqrt(pi) / 2 exp(y^2)
            return g * (y * y).exp() * (1.0 / _TWO_OVER_SQRT_PI)
        case "rsqrt":  # -x^(-3/2) / 2 = -y^3 / 2
            return g * y * y * y * -0.5
        case "reciprocal":
            return -(g * y * y)
        case "log1p":
            return g / (x + 1.0)
        case "expm1":
            return g * (y + 1.0)
        case "log2":
            return g / (x * _LN2)
        case "log10":
            return g / (x * _LN10)
        case "exp2":
            return g * y * _LN2
        case "tan":
            return g * (y * y + 1.0)
        case "asin":
            return g * (1.0 - x * x).rsqrt()
        case "acos":
            return -(g * (1.0 - x * x).rsqrt())
        case "atan":
            return g / (x * x + 1.0)
        case "sinh":
            return g * x.cosh()
        case "cosh":
            return g * x.sinh()
        case "asinh":
            return g * (x * x + 1.0).rsqrt()
        case "acosh":
            return g * (x * x - 1.0).rsqrt()
        case "atanh":
            return g / (1.0 - x * x)
        case "lgamma":
            return g * unary("digamma", x)
        case "digamma":  # polygamma(1, x) = zeta(2, x)
            return g * binary("zeta", x, 2.0, reflected=True)
        case "erfcx":  # 2 x erfcx(x) - 2 / sqrt(pi)
            return g * (x * y * 2.0 - _TWO_OVER_SQRT_PI)
        case "ndtri":  # 1 / Phi'(y) = sqrt(2 pi) e^(y^2 / 2)
            return g * (y * y * 0.5).exp() * _SQRT_2PI
        case "log_ndtr":  # Phi'(x) / Phi(x) = e^(-x^2 / 2 - log Phi(x)) / sqrt(2 pi)
            return g * (x * x * -0.5 - y).exp() * _INV_SQRT_2PI
        case "i0":
            return g * unary("i1", x)
        case "i0e":  # I1e(x) - sign(x) I0e(x)
            return g * (unary("i1e", x) - x.sign() * y)
        case "i1" | "i1e":  # I0 - I1 / x (scaled: I0e - I1e (sign(x) + 1 / x)); 1/2 at 0
            zero = x == 0
            ratio = y / where(zero, 1.0, x)
            if fn == "i1":
                slope = unary("i0", x) - ratio
            else:
                slope = unary("i0e", x) - ratio - x.sign() * y
            return g * where(zero, 0.5, slope)
        case "floor" | "ceil" | "round" | "sign" | "trunc":
            return zeros_like(x)
    raise StateError(f"backward: no gradient rule for unary {fn!r}")
