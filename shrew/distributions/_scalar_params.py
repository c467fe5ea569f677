"""The shape bookkeeping that every distribution with broadcast scalar parameters shares:
numbers give an empty batch shape, tensors their broadcast shape; expand() expands each."""
from __future__ import annotations

import numbers
from typing import Any

from ..core.shape import Size
from .distribution import Distribution


def batch_shape_of(raw: tuple[Any, ...], broadcast: Any) -> Size:
    """Size() when every raw parameter was a number, else the broadcast tensor's shape."""
    if all(isinstance(v, numbers.Number) for v in raw):
        return Size()
    return Size(broadcast.shape)


def expand_params(dist: Any, cls: type, names: tuple[str, ...], batch_shape: Any,
                  _instance: Any = None) -> Any:
    """A copy of `dist` (of class `cls`) with each parameter in `names` expanded to
    batch_shape, validation carried over."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    for name in names:
        setattr(new, name, getattr(dist, name).expand(batch_shape))
    # every such family inherits its __init__ chain from Distribution
    Distribution.__init__(new, batch_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new
