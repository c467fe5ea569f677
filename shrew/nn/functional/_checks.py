"""Argument checks shared by the functional modules."""
from __future__ import annotations

from ...core.errors import not_a_tensor
from ..._tensor import Tensor


def tensor_arg(op: str, name: str, x: object) -> Tensor:
    """x itself, or a ShrewError naming op and argument when x is not a Tensor (as
    PyTorch, a layer converts nothing: a torch tensor or an array is named, with the fix)."""
    if not isinstance(x, Tensor):
        hint = "; convert it with shrew.as_tensor(x)" if hasattr(x, "__dlpack__") or \
            hasattr(x, "__array_interface__") else ""
        raise not_a_tensor(op, name, x, hint)
    return x
