"""``Variable``: PyTorch's pre-0.4 autograd wrapper, which old code still calls.  As in
PyTorch, ``Variable(t, requires_grad)`` is a new tensor sharing t's memory, a leaf outside
t's graph, and every tensor is an instance of Variable."""
from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ..core.errors import ShrewTypeError


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: `data` detached (its memory shared), with
    requires_grad set."""

    def __new__(cls, data: Any, requires_grad: bool = False) -> Any:
        if not isinstance(data, Tensor):
            raise ShrewTypeError(f"Variable data has to be a tensor, but got "
                                 f"{type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
