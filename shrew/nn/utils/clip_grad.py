"""Clipping the gradients of parameters in place (before an optimizer step)."""
from __future__ import annotations

import math
from collections.abc import Iterable

from ...core.errors import ShrewError, ShrewValueError
from ...ops.creation import tensor
from ...ops.reduce import vector_norm
from ...ops.shape.recorded import stack
from ...core.grad_mode import no_grad
from ..._tensor import Tensor


class NonFiniteNormError(ShrewError, RuntimeError):
    """The gradients' norm is nan or inf and error_if_nonfinite was set (a RuntimeError
    too, as PyTorch raises)."""


def _grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in params if p.grad is not None]


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float | str = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their total norm (of all gradients taken as
    one vector) is at most max_norm; returns the total norm before clipping.  `foreach`
    is accepted (PyTorch's kernel choice) and changes nothing."""
    norm_type = float(norm_type)  # "inf" as well as math.inf, as torch
    if norm_type < 0 and norm_type != -math.inf:
        raise ShrewValueError(f"clip_grad_norm_: norm_type must be >= 0 or +-inf, got {norm_type}")
    grads = _grads(parameters)
    if not grads:
        return tensor(0.0)
    device = grads[0].device
    with no_grad():
        norms = [vector_norm(g, norm_type, op="clip_grad_norm_").to(device=device)
                 for g in grads]
        dtype = norms[0].dtype
        total = vector_norm(stack([n.to_dtype(dtype) for n in norms]), norm_type,
                            op="clip_grad_norm_")
        value = total.item()
        if error_if_nonfinite and not math.isfinite(value):
            raise NonFiniteNormError(
                f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is "
                f"non-finite ({value}), so it cannot be clipped; pass "
                f"error_if_nonfinite=False to clip anyway")
        coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.copy_(g * coef.to(device=g.device, dtype=g.dtype))
    return total


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.copy_(g.clamp(-clip_value, clip_value))
