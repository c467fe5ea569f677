"""PyTorch's whole-tensor tests: is_tensor, is_floating_point, is_complex, isclose,
allclose and equal."""
from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import ArgumentError, DTypeError, ShrewTypeError
from ..core.fields import AnyTensor
from .common import same_device
from .elementwise.composed import isfinite, isnan, logical_and, logical_or
from .shape.composed import broadcast_shapes

if TYPE_CHECKING:
    from .._tensor import Tensor


def is_tensor(obj: object) -> builtins.bool:
    """Whether obj is a shrew Tensor (Parameters included)."""
    return isinstance(obj, AnyTensor)


def _tensor(op: str, value: object) -> Tensor:
    if not isinstance(value, AnyTensor):
        raise ShrewTypeError(f"{op}(): argument 'input' must be Tensor, not "
                             f"{type(value).__name__}")
    return value


def is_floating_point(input: Tensor) -> builtins.bool:  # noqa: A002  (torch's name)
    return _tensor("is_floating_point", input).dtype.is_floating_point


def is_complex(input: Tensor) -> builtins.bool:  # noqa: A002
    """Whether input's dtype is complex64 or complex128."""
    return _tensor("is_complex", input).dtype.is_complex


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05,  # noqa: A002
            atol: float = 1e-08, equal_nan: builtins.bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other| elementwise, as PyTorch: equal values
    (infinities included) are close, NaN only to NaN with equal_nan; both tensors must
    have the same dtype."""
    a, b = _tensor("isclose", input), _tensor("isclose", other)
    if a.dtype is not b.dtype:
        raise DTypeError(f"isclose: input is {a.dtype} but other is {b.dtype}; convert one "
                         f"with .to(dtype) first")
    if rtol < 0 or atol < 0:
        raise ArgumentError(f"isclose: rtol and atol must be >= 0, got rtol={rtol}, atol={atol}")
    same_device("isclose", a, b)
    broadcast_shapes(a.shape, b.shape)  # a ShapeError naming both shapes
    a, b = a.detach(), b.detach()
    close = a == b
    if not a.dtype.is_floating_point:
        if rtol == 0 and atol == 0:
            return close
        a, b = a.double(), b.double()
    with np.errstate(invalid="ignore"):  # inf - inf: those are decided by a == b
        near = logical_and(logical_and(isfinite(a), isfinite(b)),
                           (a - b).abs() <= atol + rtol * b.abs())
    close = logical_or(close, near)
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05,  # noqa: A002
             atol: float = 1e-08, equal_nan: builtins.bool = False) -> builtins.bool:
    """isclose(...).all() as a Python bool."""
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input: Tensor, other: Tensor) -> builtins.bool:  # noqa: A002
    """True when both have the same shape and the same values (after type promotion, as
    PyTorch); NaN is never equal."""
    a, b = _tensor("equal", input), _tensor("equal", other)
    same_device("equal", a, b)
    if a.shape != b.shape:
        return False
    return builtins.bool((a.detach() == b.detach()).all().item())

