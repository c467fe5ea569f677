"""``torch.autocast``: a region (context manager or decorator) in which the ops of
PyTorch's autocast lists run in a lower-precision dtype, or in float32, per
``shrew/core/autocast.py``'s table; and ``custom_fwd``/``custom_bwd`` for autograd
Functions."""
from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from ..backends import registry
from ..core import autocast as _ac
from ..core.dtype import DType, as_dtype, bfloat16, float16, float32
from ..core.errors import DeviceError, ShrewValueError

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

_F = TypeVar("_F", bound=Callable[..., Any])

# The dtypes a region may cast to, per device type (PyTorch's: cpu takes bfloat16 and
# float16; cuda also float32).  Another dtype warns and leaves the region disabled.
_SUPPORTED = {"cpu": (bfloat16, float16), "cuda": (float16, bfloat16, float32),
              "opencl": (float16, bfloat16)}


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast works for `device_type` (cpu, cuda, opencl and registered
    backends: shrew's policy needs nothing from the device)."""
    return device_type in _SUPPORTED or device_type in registry.backend_names()


def _check_device_type(device_type: Any) -> str:
    if not isinstance(device_type, str):
        raise ShrewValueError(f"autocast: expected `device_type` of type `str`, got: "
                              f"`{type(device_type)}`")
    if not is_autocast_available(device_type):
        known = ", ".join(sorted(set(_SUPPORTED) | set(registry.backend_names())))
        raise DeviceError(f"autocast: unknown device type {device_type!r} (expected one "
                          f"of {known})")
    return device_type


class autocast:  # noqa: N801  (PyTorch's name)
    """``with autocast("cpu"):`` or ``@autocast("cpu")``: inside, the listed ops of
    `device_type`'s tensors run in `dtype` (default: get_autocast_dtype(device_type):
    bfloat16 on cpu, float16 on cuda and opencl) or float32.  Regions nest; an inner
    ``enabled=False`` turns autocast off inside.  `cache_enabled` keeps one cast of each
    float32 weight (a leaf that requires grad) for the outermost region."""

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device = _check_device_type(device_type)
        self.fast_dtype: DType = (_ac.get_dtype(self.device) if dtype is None
                                  else as_dtype(dtype))
        self._enabled = bool(enabled)
        self._cache_enabled = _ac.is_cache_enabled() if cache_enabled is None else bool(
            cache_enabled)
        allowed = _SUPPORTED.get(self.device, (float16, bfloat16))
        if self._enabled and self.fast_dtype not in allowed:
            names = ", ".join(str(d) for d in allowed)
            warnings.warn(f"In {self.device} autocast, but the target dtype "
                          f"{self.fast_dtype} is not supported ({names} are). Disabling "
                          f"autocast.", stacklevel=2)
            self._enabled = False
        self._prev: list[tuple] = []

    def __enter__(self) -> None:
        self._prev.append((_ac.is_enabled(self.device), _ac.get_dtype(self.device),
                           _ac.is_cache_enabled(), _ac.swap_suspended(False)))
        _ac.set_enabled(self.device, self._enabled)
        _ac.set_dtype(self.device, self.fast_dtype)
        _ac.set_cache_enabled(self._cache_enabled)
        _ac.increment_nesting()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if _ac.decrement_nesting() == 0:
            _ac.clear_cache()  # the outermost region's casts of weights go
        enabled, dtype, cache, suspended = self._prev.pop()
        _ac.set_enabled(self.device, enabled)
        _ac.set_dtype(self.device, dtype)
        _ac.set_cache_enabled(cache)
        _ac.swap_suspended(suspended)

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def in_region(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)
        return in_region  # type: ignore[return-value]


def _deprecated(old: str, device_type: str) -> None:
    warnings.warn(f"`{old}(args...)` is deprecated. Please use `torch.amp.autocast("
                  f"'{device_type}', args...)` instead.", FutureWarning, stacklevel=3)


class CPUAutocast(autocast):
    """``torch.cpu.amp.autocast``: autocast("cpu", ...) with bfloat16 by default."""

    def __init__(self, enabled: bool = True, dtype: Any = bfloat16,
                 cache_enabled: bool = True) -> None:
        _deprecated("torch.cpu.amp.autocast", "cpu")
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class CUDAAutocast(autocast):
    """``torch.cuda.amp.autocast``: autocast("cuda", ...) with float16 by default."""

    def __init__(self, enabled: bool = True, dtype: Any = float16,
                 cache_enabled: bool = True) -> None:
        _deprecated("torch.cuda.amp.autocast", "cuda")
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def _cast_inputs(value: Any, dtype: DType, device_type: str) -> Any:
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        if (value.dtype.is_floating_point and value.device.type == device_type):
            return value.to_dtype(dtype)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, dtype, device_type) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, dtype, device_type) for k, v in value.items()}
    return value


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str,
               cast_inputs: Any = None) -> Any:
    """Decorate an autograd Function's forward: it remembers the autocast state for
    custom_bwd; with `cast_inputs`, inside an enabled region the forward runs with
    autocast off and its floating inputs of `device_type` cast to that dtype."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type,
                                 cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = _ac.get_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = _ac.is_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = _ac.is_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                target = as_dtype(cast_inputs)
                return fwd(*_cast_inputs(args, target, device_type),
                           **_cast_inputs(kwargs, target, device_type))
        return fwd(*args, **kwargs)
    return decorated


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorate an autograd Function's backward: it runs with the autocast state its
    forward ran under (custom_fwd recorded it)."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorated


def cuda_custom_fwd(fwd: Callable[..., Any] | None = None, *, cast_inputs: Any = None) -> Any:
    """``torch.cuda.amp.custom_fwd``: custom_fwd(device_type="cuda")."""
    return custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def cuda_custom_bwd(bwd: Callable[..., Any] | None = None) -> Any:
    """``torch.cuda.amp.custom_bwd``: custom_bwd(device_type="cuda")."""
    return custom_bwd(bwd, device_type="cuda")


# -- torch.* state functions (torch.get_autocast_dtype & co) ------------------------------

def get_autocast_dtype(device_type: str) -> DType:
    """The dtype autocast regions of `device_type` cast to."""
    return _ac.get_dtype(_check_device_type(device_type))


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    _ac.set_dtype(_check_device_type(device_type), as_dtype(dtype))


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for `device_type` in this thread (None: "cuda", as
    PyTorch's torch.is_autocast_enabled() without an argument)."""
    return _ac.is_enabled("cuda" if device_type is None else _check_device_type(device_type))


def set_autocast_enabled(*args: Any) -> None:
    """set_autocast_enabled(device_type, enabled), or set_autocast_enabled(enabled) for
    "cuda" (PyTorch's older form)."""
    if len(args) == 1:
        _ac.set_enabled("cuda", bool(args[0]))
    elif len(args) == 2:
        _ac.set_enabled(_check_device_type(args[0]), bool(args[1]))
    else:
        raise ShrewValueError(f"set_autocast_enabled: expected (device_type, enabled) or "
                              f"(enabled), got {len(args)} arguments")


def get_autocast_cpu_dtype() -> DType:
    return _ac.get_dtype("cpu")


def get_autocast_gpu_dtype() -> DType:
    return _ac.get_dtype("cuda")


def set_autocast_cpu_dtype(dtype: Any) -> None:
    _ac.set_dtype("cpu", as_dtype(dtype))


def set_autocast_gpu_dtype(dtype: Any) -> None:
    _ac.set_dtype("cuda", as_dtype(dtype))


def is_autocast_cpu_enabled() -> bool:
    return _ac.is_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _ac.set_enabled("cpu", enabled)


is_autocast_cache_enabled = _ac.is_cache_enabled
set_autocast_cache_enabled = _ac.set_cache_enabled
clear_autocast_cache = _ac.clear_cache
autocast_increment_nesting = _ac.increment_nesting
autocast_decrement_nesting = _ac.decrement_nesting

TORCH_NAMES = ("get_autocast_dtype", "set_autocast_dtype", "is_autocast_enabled",
               "set_autocast_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
               "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cpu_enabled",
               "set_autocast_cpu_enabled", "is_autocast_cache_enabled",
               "set_autocast_cache_enabled", "clear_autocast_cache",
               "autocast_increment_nesting", "autocast_decrement_nesting")
