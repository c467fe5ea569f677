"""Checks and small constructors that every op family shares."""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..core.dtype import DType, result_type
from ..core.errors import DeviceError, DTypeError
from ..core.fields import wrap

if TYPE_CHECKING:
    from ..backends.base import Backend
    from .._tensor import Tensor


F = TypeVar("F", bound=Callable[..., Any])

# PyTorch takes numpy's spelling of these keywords wherever it takes its own.
_NUMPY_KEYWORDS = {"axis": "dim", "keepdims": "keepdim"}


def numpy_keywords(fn: F) -> F:
    """Let `fn` take axis= for dim= and keepdims= for keepdim=, as PyTorch does."""
    @functools.wraps(fn)
    def accepting(*args: Any, **kwargs: Any) -> Any:
        for alias, name in _NUMPY_KEYWORDS.items():
            if alias in kwargs:
                if name in kwargs:
                    raise TypeError(f"{fn.__name__}() got both {name}= and its alias {alias}=")
                kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return accepting  # type: ignore[return-value]


def same_device(op: str, *tensors: Tensor) -> None:
    first = tensors[0]._backend
    for t in tensors[1:]:
        if t._backend is not first:
            devs = " and ".join(dict.fromkeys(x.device for x in tensors))
            raise DeviceError(f"{op}: tensors are on different devices ({devs}); "
                              f"move them with .to(device) first")


def check_device_dtype(backend: Backend, dtype: DType, op: str) -> None:
    if dtype.np not in backend.dtypes:
        supported = ", ".join(sorted(str(d) for d in backend.dtypes))
        raise DTypeError(f"{op}: device {backend.device} does not support {dtype} "
                         f"(it supports {supported})")


def number(value: Any) -> Any:
    """A numpy scalar as the Python number backends expect (numpy scalars would widen)."""
    return value.item() if isinstance(value, np.generic) else value


def constant(shape: Iterable[int], value: Any, dtype: DType, backend: Backend) -> Tensor:
    """A tensor of `shape` filled with `value` on `backend`, recording nothing."""
    if dtype.is_complex:  # its parts, as real pairs (ops/complex/)
        from .complex import arith
        c, part = complex(value), dtype.to_real()
        return arith.pack(constant(shape, c.real, part, backend),
                          constant(shape, c.imag, part, backend))
    return wrap(backend.full(tuple(shape), value, dtype.np), backend)


def scalar_like(value: Any, like: Tensor) -> Tensor:
    """A Python number as a 0-d tensor on `like`'s device, in the promoted dtype."""
    dtype = result_type((like.dtype, like.ndim), value)
    return constant((), value, dtype, like._backend)
