"""Tensor's in-place methods and operators (ops/inplace.py: views, versions, rebased
history): copy_, add_, zero_, the random fills, x += y, ..."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.errors import ShrewTypeError, ShrewValueError
from ..ops import inplace as _inplace
from ..ops.elementwise import composed as _composed
from ..ops.elementwise.recorded import unary as _unary

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import Scalar


def _unary_of(fn: str) -> Callable[[Tensor], Tensor]:
    return lambda x: _unary(fn, x)


class InplaceMethods:
    """Writes into a tensor's own memory."""

    __slots__ = ()

    @property
    def _version(self: Any) -> int:
        """How many in-place writes went into this tensor's memory (shared by its views)."""
        return _inplace.version(self)

    def copy_(self: Any, src: Tensor, non_blocking: bool = False) -> Tensor:
        """Write src's values into this tensor's memory (broadcast, moved to its device
        and dtype)."""
        return _inplace.copy_(self, src, non_blocking)

    def add_(self: Any, other: Tensor | Scalar, *, alpha: Scalar = 1) -> Tensor:
        """self += alpha * other in this tensor's memory; other may be self."""
        return _inplace.add_(self, other, alpha)

    def sub_(self: Any, other: Tensor | Scalar, *, alpha: Scalar = 1) -> Tensor:
        return _inplace.sub_(self, other, alpha)

    def mul_(self: Any, other: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "mul_", lambda x: x * other, sources=(other,))

    def div_(self: Any, other: Tensor | Scalar, *, rounding_mode: str | None = None) -> Tensor:
        return _inplace.write_(self, "div_", lambda x: x.div(other, rounding_mode=rounding_mode),
                               sources=(other,))

    def pow_(self: Any, exponent: Scalar) -> Tensor:
        return _inplace.write_(self, "pow_", lambda x: x ** exponent)

    def clamp_(self: Any, min: Scalar | None = None, max: Scalar | None = None) -> Tensor:
        return _inplace.clamp_(self, min, max)

    def clamp_min_(self: Any, min: Scalar) -> Tensor:
        return _inplace.clamp_(self, min, None, "clamp_min_")

    def clamp_max_(self: Any, max: Scalar) -> Tensor:
        return _inplace.clamp_(self, None, max, "clamp_max_")

    def zero_(self: Any) -> Tensor:
        return _inplace.fill_(self, 0, "zero_")

    def fill_(self: Any, value: Scalar | Tensor) -> Tensor:
        return _inplace.fill_(self, value)

    def relu_(self: Any) -> Tensor: return _inplace.write_(self, "relu_", _unary_of("relu"))
    def exp_(self: Any) -> Tensor: return _inplace.write_(self, "exp_", _unary_of("exp"))
    def log_(self: Any) -> Tensor: return _inplace.write_(self, "log_", _unary_of("log"))
    def sqrt_(self: Any) -> Tensor: return _inplace.write_(self, "sqrt_", _unary_of("sqrt"))
    def neg_(self: Any) -> Tensor: return _inplace.write_(self, "neg_", _unary_of("neg"))
    def abs_(self: Any) -> Tensor: return _inplace.write_(self, "abs_", _unary_of("abs"))
    def sigmoid_(self: Any) -> Tensor:
        return _inplace.write_(self, "sigmoid_", _unary_of("sigmoid"))

    def tanh_(self: Any) -> Tensor: return _inplace.write_(self, "tanh_", _unary_of("tanh"))
    def floor_(self: Any) -> Tensor: return _inplace.write_(self, "floor_", _unary_of("floor"))
    def round_(self: Any) -> Tensor: return _inplace.write_(self, "round_", _unary_of("round"))

    def addcmul_(self: Any, tensor1: Tensor, tensor2: Tensor, *, value: Scalar = 1) -> Tensor:
        return _inplace.write_(self, "addcmul_", lambda x: x + tensor1 * tensor2 * value,
                               sources=(tensor1, tensor2))

    def addcdiv_(self: Any, tensor1: Tensor, tensor2: Tensor, *, value: Scalar = 1) -> Tensor:
        return _inplace.write_(self, "addcdiv_", lambda x: x + tensor1 / tensor2 * value,
                               sources=(tensor1, tensor2))

    def lerp_(self: Any, end: Tensor, weight: Scalar | Tensor) -> Tensor:
        # lerp's own formula (from the nearer end: weight 1 gives exactly `end`)
        return _inplace.write_(self, "lerp_", lambda x: _composed.lerp(x, end, weight),
                               sources=(end, weight))

    def uniform_(self: Any, a: Scalar = 0.0, b: Scalar = 1.0, *, generator: Any = None) -> Tensor:
        return _inplace.random_(self, "uniform_", lambda u: u * float(b - a) + float(a),
                                generator)

    def normal_(self: Any, mean: Scalar = 0.0, std: Scalar = 1.0, *,
                generator: Any = None) -> Tensor:
        return _inplace.normal_(self, mean, std, generator)

    def log_normal_(self: Any, mean: Scalar = 1.0, std: Scalar = 2.0, *,
                    generator: Any = None) -> Tensor:
        """exp of normal draws of mean `mean` and standard deviation `std`."""
        return _inplace.normal_(self, mean, std, generator, "log_normal_", lambda v: v.exp())

    def bernoulli_(self: Any, p: Scalar | Tensor = 0.5, *, generator: Any = None) -> Tensor:
        return _inplace.random_(self, "bernoulli_", lambda u: (u < p).to_dtype(self.dtype),
                                generator)

    def exponential_(self: Any, lambd: Scalar = 1.0, *, generator: Any = None) -> Tensor:
        return _inplace.random_(self, "exponential_",
                                lambda u: (-u).log1p() * (-1 / lambd), generator)

    def cauchy_(self: Any, median: Scalar = 0.0, sigma: Scalar = 1.0, *,
                generator: Any = None) -> Tensor:
        """median + sigma * tan(pi (u - 1/2)): the inverse of Cauchy's distribution function."""
        return _inplace.random_(self, "cauchy_", lambda u: ((u - 0.5) * math.pi).tan()
                                * float(sigma) + float(median), generator)

    def geometric_(self: Any, p: Scalar, *, generator: Any = None) -> Tensor:
        """The number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
        if not 0 < p <= 1:
            raise ShrewValueError(f"geometric_: expects p in (0, 1], got p={p!r}")
        return _inplace.random_(self, "geometric_",
                                lambda u: ((-u).log1p() / math.log1p(-p) if p < 1 else u * 0)
                                .floor() + 1, generator)

    def random_(self: Any, *args: int, generator: Any = None, **bounds: int) -> Tensor:
        """random_(), random_(to), random_(from, to) (also from=, to= by keyword):
        integers uniform in [from, to)."""
        if bounds:
            unknown = set(bounds) - {"from", "to"}
            if unknown or args:
                raise ShrewTypeError(f"random_: unexpected arguments {sorted(unknown) or args}")
            args = (bounds.get("from", 0), bounds["to"]) if "to" in bounds else \
                (bounds["from"], None)  # type: ignore[assignment]
        return _inplace.random_integers_(self, args, generator)

    def resize_(self: Any, *sizes: Any, memory_format: Any = None) -> Tensor:
        """This tensor with the given sizes, in place (see ops/inplace.resize_)."""
        return _inplace.resize_(self, sizes[0] if len(sizes) == 1 else sizes)

    def resize_as_(self: Any, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
        return _inplace.resize_(self, tuple(the_template.shape), "resize_as_")

    def __iadd__(self: Any, o: Tensor | Scalar) -> Tensor:
        return _inplace.add_(self, o, 1, "__iadd__")

    def __isub__(self: Any, o: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "__isub__", lambda x: x - o, sources=(o,))

    def __imul__(self: Any, o: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "__imul__", lambda x: x * o, sources=(o,))

    def __itruediv__(self: Any, o: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "__itruediv__", lambda x: x / o, sources=(o,))

    def __ipow__(self: Any, o: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "__ipow__", lambda x: x ** o, sources=(o,))

    def __ifloordiv__(self: Any, o: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "__ifloordiv__", lambda x: x // o, sources=(o,))

    def __imod__(self: Any, o: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "__imod__", lambda x: x % o, sources=(o,))

    def __iand__(self: Any, o: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "__iand__", lambda x: x & o, sources=(o,))

    def __ior__(self: Any, o: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "__ior__", lambda x: x | o, sources=(o,))

    def __ixor__(self: Any, o: Tensor | Scalar) -> Tensor:
        return _inplace.write_(self, "__ixor__", lambda x: x ^ o, sources=(o,))


# The in-place forms of Tensor's elementwise methods (torch's x.op_(...)): each writes
# x.op(...) into x's memory through ops/inplace.write_ (views, versions and autograd as
# every write); the result is cast to x's dtype (x.gt_(y) stores 0 and 1 in a float x).
_WRITES_OF = (
    "absolute", "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
    "arctan2", "arctanh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "ceil", "clip", "copysign", "cos", "cosh", "cumprod", "cumsum", "deg2rad", "divide", "eq",
    "erf", "erfc", "erfinv", "exp2", "expm1", "fix", "floor_divide", "fmod", "frac", "gcd",
    "ge", "greater", "greater_equal", "gt", "heaviside", "hypot", "lcm", "ldexp", "le", "less",
    "less_equal", "log10", "log1p", "log2", "logical_and", "logical_not", "logical_or",
    "logical_xor", "logit", "lt", "multiply", "nan_to_num", "ne", "negative", "nextafter",
    "not_equal", "rad2deg", "reciprocal", "remainder", "renorm", "rsqrt", "sgn", "sign", "sin",
    "sinh", "square", "subtract", "tan", "tril", "triu", "true_divide", "trunc",
    "addmm", "addbmm", "addmv", "addr", "baddbmm", "index_reduce", "float_power",
)


def _write_of(name: str) -> Callable[..., Tensor]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Tensor:
        return _inplace.write_(self, f"{name}_", lambda x: getattr(x, name)(*args, **kwargs),
                               sources=(*args, *kwargs.values()))
    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In-place Tensor.{name}: writes the result into this tensor's memory."
    return method


for _name in _WRITES_OF:
    setattr(InplaceMethods, f"{_name}_", _write_of(_name))
