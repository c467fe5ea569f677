"""Parameters as one flat vector and back (for optimizers that work on vectors)."""
from __future__ import annotations

from collections.abc import Iterable

from ...core.errors import DeviceError, ShapeError, ShrewError, ShrewValueError
from ...ops.shape.recorded import cat
from ...core.grad_mode import no_grad
from ..._tensor import Tensor


class NotATensorError(ShrewError, TypeError):
    """vector_to_parameters got something other than a Tensor (a TypeError too, as in
    PyTorch)."""


def _params(parameters: Tensor | Iterable[Tensor], op: str) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    devices = {p.device for p in params}
    if len(devices) > 1:
        raise DeviceError(f"{op}: found parameters on different devices: "
                          f"{', '.join(sorted(devices))}")
    return params


def parameters_to_vector(parameters: Tensor | Iterable[Tensor]) -> Tensor:
    """All parameters flattened and joined into one vector (differentiable, as torch's)."""
    params = _params(parameters, "parameters_to_vector")
    if not params:
        raise ShrewValueError("parameters_to_vector: got no parameters")
    return cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Tensor | Iterable[Tensor]) -> None:
    """Write consecutive slices of the vector `vec` into the parameters, in place."""
    if not isinstance(vec, Tensor):
        raise NotATensorError(f"vector_to_parameters: expected a Tensor, but got "
                              f"{type(vec).__name__}")
    params = _params(parameters, "vector_to_parameters")
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.shape[0] != total:
        raise ShapeError(f"vector_to_parameters: the vector must have shape [{total}] (the "
                         f"parameters' total size), got {list(vec.shape)}")
    offset = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec.narrow(0, offset, n).reshape(p.shape))
            offset += n
