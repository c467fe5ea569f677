"""PyTorch's out= argument: the result written into a given tensor, which is returned."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.dtype import can_cast
from ..core.errors import ArgumentError, DeviceError, DTypeError, ShrewTypeError
from ..core.fields import AnyTensor
from ..core.grad_mode import is_grad_enabled, no_grad

if TYPE_CHECKING:
    from .._tensor import Tensor


def write_out(op: str, result: Any, out: Tensor | None) -> Any:
    """result, or out holding it: out takes result's shape (resized as PyTorch resizes it)
    and keeps its own dtype, which result's must be castable to; out= is outside autograd,
    so it is refused where a gradient would be lost, as PyTorch refuses it."""
    if out is None:
        return result
    if isinstance(result, tuple):  # (values, indices): out is a pair too
        return type(result)(*(write_out(op, r, o) for r, o in zip(result, out)))
    if not isinstance(out, AnyTensor):
        raise ShrewTypeError(f"{op}: out must be a Tensor, got {type(out).__name__}")
    if out.device != result.device:
        raise DeviceError(f"{op}: out is on {out.device} but the result is on {result.device}")
    if not can_cast(result.dtype, out.dtype):
        raise DTypeError(f"{op}: result type {result.dtype} can't be cast to the desired "
                         f"output type {out.dtype}")
    if is_grad_enabled() and (out.requires_grad or result.requires_grad):
        raise ArgumentError(f"{op}(): functions with out=... arguments don't support automatic "
                            "differentiation, but one of the arguments requires grad.")
    with no_grad():
        if out.shape == result.shape:
            out.copy_(result)
        else:
            out.data = result.to(out.dtype)  # resized to result's shape, as set_data
    return out
