"""The elementwise primitives on a numpy-compatible array module: unary, binary, compare,
where, affine, powf and clamp (kernels/elementwise.cl on OpenCL)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..base import Storage
from ..kernels import LOW_PRECISION, accumulator, wrapped

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_A = 0.044715

# Unary and binary functions that are one xp call (PyTorch's name: numpy's).
# Unary functions that are one xp function of the same meaning, looked up first.
_XP_UNARY = {"abs": "abs", "exp": "exp", "log": "log", "sqrt": "sqrt", "tanh": "tanh",
             "sin": "sin", "cos": "cos", "floor": "floor", "ceil": "ceil",
             "round": "round",  # half to even, as PyTorch
             "sign": "sign", "log1p": "log1p", "expm1": "expm1", "log2": "log2",
             "log10": "log10", "exp2": "exp2", "tan": "tan", "asin": "arcsin",
             "acos": "arccos", "atan": "arctan", "sinh": "sinh", "cosh": "cosh",
             "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "trunc": "trunc",
             "bitwise_not": "invert"}
_XP_BINARY = {"pow": "power", "atan2": "arctan2", "maximum": "maximum", "minimum": "minimum",
              "fmod": "fmod", "remainder": "remainder", "floor_divide": "floor_divide",
              "copysign": "copysign", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
              "bitwise_xor": "bitwise_xor"}
# The special functions, by their scipy.special names (airy_ai: the first of airy's four).
_SPECIAL_UNARY = {"lgamma": "gammaln", "digamma": "psi", "erfcx": "erfcx", "ndtri": "ndtri",
                  "log_ndtr": "log_ndtr", "i0": "i0", "i0e": "i0e", "i1": "i1", "i1e": "i1e",
                  "bessel_j0": "j0", "bessel_j1": "j1", "bessel_y0": "y0", "bessel_y1": "y1",
                  "modified_bessel_k0": "k0", "modified_bessel_k1": "k1",
                  "scaled_modified_bessel_k0": "k0e", "scaled_modified_bessel_k1": "k1e"}
_SPECIAL_BINARY = {"igamma": "gammainc", "igammac": "gammaincc", "zeta": "zeta"}


# unary functions exact in any float dtype: no need to widen the 16-bit floats
_IN_DTYPE = frozenset(("neg", "abs", "relu", "sign", "floor", "ceil", "trunc", "round"))


class ElementwisePrimitives:
    """ArrayModuleBackend's elementwise primitives, on ``self.xp``; ``special`` and ``erf``
    are where a subclass (cuda) swaps in its array module's scipy.special."""

    xp: Any

    def unary(self, fn: str, x: Storage) -> Storage:
        if x.dtype in LOW_PRECISION and fn not in _IN_DTYPE:
            # float16 and bfloat16 computed in float32 and rounded once (PyTorch's opmath;
            # numpy would widen bfloat16 to float32 at the first Python-float constant)
            return self.unary(fn, x.astype(np.float32)).astype(x.dtype)
        xp = self.xp
        name = _XP_UNARY.get(fn)
        if name is not None:
            out = getattr(xp, name)(x)
            # (CuPy's round gives bfloat16 as float32)
            return out if out.dtype == x.dtype else out.astype(x.dtype)
        if fn == "neg":
            return -x
        if fn == "square":
            return x * x
        if fn == "relu":
            return xp.maximum(x, x.dtype.type(0))
        if fn == "sigmoid":
            # exp of -|x| never overflows; pick the branch per sign.
            e = xp.exp(-xp.abs(x))
            return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
        if fn == "gelu":
            return (x * 0.5 * (1 + self.erf(x * _INV_SQRT2))).astype(x.dtype, copy=False)
        if fn == "gelu_tanh" or fn == "gelu_tanh_derivative":
            return self._gelu_tanh(x, derivative=fn != "gelu_tanh")
        if fn == "gelu_derivative":  # Phi(x) + x phi(x)
            pdf = xp.exp(x * x * -0.5) * _INV_SQRT_2PI
            return (0.5 * (1 + self.erf(x * _INV_SQRT2)) + x * pdf).astype(x.dtype, copy=False)
        if fn == "silu":
            return x * self.unary("sigmoid", x)
        if fn == "erf":
            return self.erf(x).astype(x.dtype, copy=False)
        if fn == "rsqrt":
            return 1 / xp.sqrt(x)
        if fn == "reciprocal":
            return 1 / x
        if fn in ("erfc", "erfinv"):
            return self.special(fn)(x).astype(x.dtype, copy=False)
        if fn in _SPECIAL_UNARY:
            y = self.special(_SPECIAL_UNARY[fn])(x)
            if fn == "lgamma":  # scipy's gammaln(-inf) is -inf; PyTorch's (and C's) inf
                y = xp.where(xp.isneginf(x), xp.inf, y)
            return y.astype(x.dtype, copy=False)
        if fn == "airy_ai":
            return self.special("airy")(x)[0].astype(x.dtype, copy=False)
        raise NotImplementedError(f"unary function {fn!r}")

    def _gelu_tanh(self, x: Storage, derivative: bool) -> Storage:
        """0.5 x (1 + t) with t = tanh(c (x + a x^3)), or its derivative
        0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2); in place on two temporaries,
        because on a 1M-element activation each extra pass and allocation shows."""
        shape = x.shape
        x = x.reshape(-1)  # a 0-d x would make numpy scalars, which have no out=
        x2 = x * x
        t = x2 * (_GELU_A * _SQRT_2_OVER_PI)
        t += _SQRT_2_OVER_PI
        t *= x
        self.xp.tanh(t, out=t)
        if derivative:
            x2 *= 3 * _GELU_A * _SQRT_2_OVER_PI
            x2 += _SQRT_2_OVER_PI            # c (1 + 3 a x^2)
            x2 *= 1 - t * t
            x2 *= x
            t += 1
            t += x2
        else:
            t += 1
            t *= x
        t *= 0.5
        return t.reshape(shape)

    def special(self, name: str) -> Any:
        """A function of xp's scipy.special (erf, erfc, erfinv, gammaln, j0, ...)."""
        import scipy.special
        return getattr(scipy.special, name)

    def erf(self, x: Storage) -> Storage:
        return self.special("erf")(x)

    def binary(self, fn: str, a: Storage, b: Storage) -> Storage:
        if fn == "add":
            return a + b
        if fn == "sub":
            return a - b
        if fn == "mul":
            return a * b
        if fn == "div":
            return a / b
        if fn == "tanh_backward":
            return a * (1 - b * b)
        if fn == "sigmoid_backward":
            return a * b * (1 - b)
        if fn == "pow" and a.dtype.kind in "iu":
            return self._int_pow(a, b)
        if fn in _XP_BINARY:
            return getattr(self.xp, _XP_BINARY[fn])(a, b)
        if "_polynomial_" in fn:
            return self._orthogonal_polynomial(fn, a, b)
        if fn in _SPECIAL_BINARY:
            y = self.special(_SPECIAL_BINARY[fn])(a, b)
            if fn == "zeta":  # scipy's zeta(s, inf) is 0; PyTorch's NaN
                y = self.xp.where(self.xp.isposinf(b), self.xp.nan, y)
            return y.astype(a.dtype, copy=False)
        raise NotImplementedError(f"binary function {fn!r}")

    def _orthogonal_polynomial(self, fn: str, x: Storage, n: Storage) -> Storage:
        """P_n(x) of one of PyTorch's orthogonal polynomial families by its three-term
        recurrence, run once up to the largest degree with each element kept at its own;
        n truncated to an integer, 0 where it is negative (or infinite, or NaN)."""
        xp = self.xp
        x, n = xp.broadcast_arrays(x, n)
        degree = xp.trunc(xp.where(xp.isfinite(n), n, -1))  # PyTorch's cast: inf, NaN < 0
        kind = fn.rsplit("_", 1)[1]
        one = xp.ones_like(x)
        first = {"t": x, "u": 2 * x, "v": 2 * x - 1, "w": 2 * x + 1, "h": 2 * x, "he": x,
                 "l": 1 - x, "p": x}[kind]
        out = xp.where(degree == 0, one, first)
        previous, current = one, first
        top = int(degree.max()) if degree.size else 0
        for j in range(1, top):  # current = P_j: the next is P_(j+1)
            if kind in ("t", "u", "v", "w"):
                following = 2 * x * current - previous
            elif kind == "h":
                following = 2 * x * current - 2 * j * previous
            elif kind == "he":
                following = x * current - j * previous
            elif kind == "l":
                following = ((2 * j + 1 - x) * current - j * previous) / (j + 1)
            else:
                following = ((2 * j + 1) * x * current - j * previous) / (j + 1)
            out = xp.where(degree == j + 1, following, out)
            previous, current = current, following
        return xp.where(degree < 0, 0, out).astype(x.dtype, copy=False)

    def _int_pow(self, a: Storage, b: Storage) -> Storage:
        """Integer powers; a negative exponent gives 1 for a base of 1, +-1 for -1 and 0
        otherwise, as PyTorch (numpy refuses them)."""
        xp = self.xp
        negative = b < 0
        out = xp.power(a, xp.where(negative, 0, b).astype(b.dtype, copy=False))
        if negative.any():
            one = xp.ones((), a.dtype)
            odd = (b % 2).astype(bool)
            small = xp.where(a == 1, one, xp.where(a == -1, xp.where(odd, -one, one), 0 * one))
            out = xp.where(negative, small, out)
        return out.astype(a.dtype, copy=False)

    def compare(self, fn: str, a: Storage, b: Storage) -> Storage:
        if fn == "eq":
            return a == b
        if fn == "ne":
            return a != b
        if fn == "lt":
            return a < b
        if fn == "le":
            return a <= b
        if fn == "gt":
            return a > b
        if fn == "ge":
            return a >= b
        raise NotImplementedError(f"comparison {fn!r}")

    def where(self, cond: Storage, a: Storage, b: Storage) -> Storage:
        out = self.xp.where(cond, a, b)
        # CuPy's where gives two bfloat16 operands' result as float32
        return out.astype(a.dtype, copy=False) if a.dtype == b.dtype else out

    def affine(self, x: Storage, mul: float, add: float) -> Storage:
        # Python numbers never widen an array under numpy 2's promotion (NEP 50); integers
        # wrap as PyTorch's do.
        if x.dtype in LOW_PRECISION:
            # float16 and bfloat16 (which numpy would widen to float32 for a Python
            # float): computed in float32 and rounded once, as PyTorch's opmath does
            return self._affine(x.astype(np.float32), mul, add).astype(x.dtype)
        if x.dtype.kind in "iu":
            mul, add = wrapped(mul, x.dtype), wrapped(add, x.dtype)
        return self._affine(x, mul, add)

    @staticmethod
    def _affine(x: Storage, mul: float, add: float) -> Storage:
        if add == 0:
            return x * mul
        if mul == 1:
            return x + add
        if mul == -1:
            return add - x  # s - x: one pass, and the same value as -x + s
        return x * mul + add

    def powf(self, x: Storage, exponent: float) -> Storage:
        if exponent == 3:  # PyTorch multiplies a cube out; power() can differ by an ulp
            return x * x * x
        return self.xp.power(x, x.dtype.type(exponent))

    def clamp(self, x: Storage, lo: float | None, hi: float | None) -> Storage:
        if accumulator(x.dtype) != x.dtype:
            # bounds in x's dtype, or numpy would widen bfloat16 to float32 (rounding is
            # monotonic: the same result as comparing in float32 and rounding)
            lo, hi = (None if v is None else x.dtype.type(v) for v in (lo, hi))
        if lo is not None:
            x = self.xp.maximum(x, lo)
        if hi is not None:
            x = self.xp.minimum(x, hi)
        return x
