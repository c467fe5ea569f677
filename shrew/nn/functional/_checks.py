"""Argument checks shared by the functional modules."""
from __future__ import annotations

from ...core.errors import ShrewTypeError
from ..._tensor import Tensor


def tensor_arg(op: str, name: str, x: object) -> Tensor:
    """x itself, or a ShrewError naming op and argument when x is not a Tensor."""
    if not isinstance(x, Tensor):
        raise ShrewTypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    return x
