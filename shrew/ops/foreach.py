"""torch._foreach_*: an op over a list of tensors at once, as optimizers written for
speed call them (lion-pytorch's foreach Lion, custom Adam variants).

PyTorch fuses each into few kernels; here each is the op on every tensor in turn, with
PyTorch's signatures and results: the out-of-place forms return a tuple of new tensors,
the in-place ones (`_foreach_add_`) write into the given tensors and return that list.
A second operand is a number, a 0-d tensor or a list of numbers or tensors, one per
tensor (a list of another length is a ShapeError).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._tensor import Tensor
from ..core.errors import ShapeError
from .elementwise.composed import maximum, minimum
from .elementwise.recorded import pow as pow_
from .reduce import vector_norm

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp",
          "expm1", "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg",
          "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan",
          "tanh", "trunc")


def _each(op: str, tensors: Sequence[Tensor], other: Any) -> list[Any]:
    """`other` as one operand per tensor: a list as it is (of the same length), else the
    one value for every tensor."""
    if isinstance(other, (list, tuple)):
        if len(other) != len(tensors):
            raise ShapeError(f"_foreach_{op}: {len(tensors)} tensors, but {len(other)} "
                             f"operands")
        return list(other)
    return [other] * len(tensors)


def _functions() -> dict[str, Callable[..., Any]]:
    made: dict[str, Callable[..., Any]] = {}

    def add(name: str, out_of_place: Callable[..., Any], in_place: Callable[..., Any]) -> None:
        def new(self: Sequence[Tensor], *args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
            rows, rest = _rows(name, self, args, kwargs)
            return tuple(out_of_place(t, *a, **rest) for t, *a in rows)

        def written(self: Sequence[Tensor], *args: Any, **kwargs: Any) -> Sequence[Tensor]:
            rows, rest = _rows(name, self, args, kwargs)
            for t, *a in rows:
                in_place(t, *a, **rest)
            return self
        new.__name__, written.__name__ = f"_foreach_{name}", f"_foreach_{name}_"
        made[new.__name__], made[written.__name__] = new, written

    for name in _UNARY:
        add(name, lambda t, n=name: getattr(t, n)(), lambda t, n=name: getattr(t, n + "_")())
    for name in ("add", "sub", "mul", "div", "pow"):
        add(name, lambda t, o, n=name, **k: getattr(t, n)(o, **k),
            lambda t, o, n=name, **k: getattr(t, n + "_")(o, **k))
    add("maximum", _maximum, lambda t, o: t.copy_(_maximum(t, o)))
    add("minimum", _minimum, lambda t, o: t.copy_(_minimum(t, o)))
    add("clamp_min", lambda t, o: t.clamp(min=o), lambda t, o: t.clamp_(min=o))
    add("clamp_max", lambda t, o: t.clamp(max=o), lambda t, o: t.clamp_(max=o))
    add("addcmul", lambda t, a, b, v: t.addcmul(a, b, value=v),
        lambda t, a, b, v: t.addcmul_(a, b, value=v))
    add("addcdiv", lambda t, a, b, v: t.addcdiv(a, b, value=v),
        lambda t, a, b, v: t.addcdiv_(a, b, value=v))
    add("lerp", lambda t, end, w: t.lerp(end, w), lambda t, end, w: t.lerp_(end, w))
    return made


def _rows(name: str, tensors: Sequence[Tensor], args: tuple, kwargs: dict[str, Any]
          ) -> tuple[list[tuple], dict[str, Any]]:
    """Per tensor, its operands (each list argument split, the others repeated; addcmul's
    and addcdiv's `value`, a number, a list of them or a 1-d tensor, last, default 1), and
    the keywords left (alpha)."""
    operands, kwargs = list(args), dict(kwargs)
    if name in ("addcmul", "addcdiv"):
        value = kwargs.pop("value", operands.pop() if len(operands) == 3 else 1)
        if isinstance(value, Tensor) and value.ndim == 1:  # PyTorch's tensor of scalars
            value = value.tolist()
        operands.append(value)
    columns = [_each(name, tensors, a) for a in operands]
    return [(t, *row) for t, *row in zip(tensors, *columns)], kwargs


def _maximum(t: Tensor, other: Any) -> Tensor:
    return maximum(t, other) if isinstance(other, Tensor) else t.clamp(min=other)


def _minimum(t: Tensor, other: Any) -> Tensor:
    return minimum(t, other) if isinstance(other, Tensor) else t.clamp(max=other)


FUNCTIONS = _functions()


_pow_each = FUNCTIONS["_foreach_pow"]


def _foreach_pow(self: Any, exponent: Any) -> tuple[Tensor, ...]:
    """_foreach_pow(tensors, exponent), or _foreach_pow(number, tensors): the number raised
    to each tensor."""
    if isinstance(self, (list, tuple)):
        return _pow_each(self, exponent)
    return tuple(pow_(self, e) for e in exponent)


def _foreach_clone(self: Sequence[Tensor], *, memory_format: Any = None) -> tuple[Tensor, ...]:
    return tuple(t.clone() for t in self)


def _foreach_copy_(self: Sequence[Tensor], src: Sequence[Tensor],
                   non_blocking: bool = False) -> Sequence[Tensor]:
    for t, s in zip(self, _each("copy_", self, src)):
        t.copy_(s)
    return self


def _foreach_zero_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    for t in self:
        t.zero_()
    return self


def _foreach_norm(self: Sequence[Tensor], ord: float = 2, dtype: Any = None  # noqa: A002
                  ) -> tuple[Tensor, ...]:
    return tuple(vector_norm(t, ord, dtype=dtype) for t in self)


def _foreach_powsum(self: Sequence[Tensor], ord: float = 2, dtype: Any = None  # noqa: A002
                    ) -> tuple[Tensor, ...]:
    """The sum of |x| ** ord of each tensor (a norm before its root)."""
    return tuple((t.to(dtype) if dtype is not None else t).abs().pow(ord).sum() for t in self)


def _foreach_max(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    return tuple(t.max() for t in self)


def _foreach_mm(self: Sequence[Tensor], other: Sequence[Tensor]) -> tuple[Tensor, ...]:
    return tuple(a.mm(b) for a, b in zip(self, _each("mm", self, other)))


FUNCTIONS.update({f.__name__: f for f in (_foreach_pow, _foreach_clone, _foreach_copy_,
                                          _foreach_zero_, _foreach_norm, _foreach_powsum,
                                          _foreach_max, _foreach_mm)})
