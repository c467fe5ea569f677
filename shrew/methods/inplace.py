"""Tensor's in-place methods and operators (ops/inplace.py: views, versions, rebased
history): copy_, add_, zero_, the random fills, x += y, ..."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..ops import inplace as _inplace
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
        return _inplace.write_(self, "lerp_", lambda x: x + (end - x) * weight,
                               sources=(end, weight))

    def uniform_(self: Any, a: Scalar = 0.0, b: Scalar = 1.0) -> Tensor:
        return _inplace.random_(self, "uniform_", lambda u: u * float(b - a) + float(a))

    def normal_(self: Any, mean: Scalar = 0.0, std: Scalar = 1.0) -> Tensor:
        return _inplace.normal_(self, mean, std)

    def bernoulli_(self: Any, p: Scalar | Tensor = 0.5) -> Tensor:
        return _inplace.random_(self, "bernoulli_", lambda u: (u < p).to_dtype(self.dtype))

    def exponential_(self: Any, lambd: Scalar = 1.0) -> Tensor:
        return _inplace.random_(self, "exponential_", lambda u: (1.0 - u).log() * (-1 / lambd))

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
