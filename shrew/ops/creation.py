"""Creation: tensors from Python data, numpy arrays, DLPack, and filled shapes."""
from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..backends.registry import get_backend
from ..dtype import (BY_NUMPY as _BY_NUMPY, DType, as_dtype, float32, from_numpy_dtype, int64,
                     result_type)
from ..errors import DeviceError, DTypeError, ShapeError, ShrewError
from ..factory import AnyTensor, blank, init_leaf, leaf, wrap
from .common import check_device_dtype
from .index import note_host_range

if TYPE_CHECKING:
    from ..backends.base import Backend, Storage
    from ..tensor import Tensor
    from ..typing import DTypeLike, Scalar, ShapeLike, TensorData


def host_array(data: object, op: str = "tensor") -> np.ndarray:
    """Python data (scalar or nested lists) as a numpy array with torch's dtype inference."""
    try:
        arr = np.array(data)
    except (ValueError, TypeError) as exc:
        raise ShapeError(f"{op}: data is not a rectangular nested list of numbers "
                         f"({exc})") from None
    except OverflowError as exc:
        raise DTypeError(f"{op}: a number does not fit in int64 ({exc})") from None
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        return arr.astype(np.float32)
    raise DTypeError(f"{op}: cannot make a tensor from data of numpy dtype {arr.dtype} "
                     f"(expected numbers, bools or nested lists of them)")


def init_tensor(t: Tensor, data: TensorData, dtype: DTypeLike | None, device: str,
                requires_grad: bool) -> None:
    """Tensor.__init__: a new leaf holding a copy of `data`."""
    backend = get_backend(device)
    if isinstance(data, AnyTensor):
        host = data.numpy()
        inferred = data.dtype
    elif isinstance(data, (np.ndarray, np.generic)):  # numpy scalars keep their dtype too
        host = np.asarray(data)
        inferred = from_numpy_dtype(data.dtype)
    else:
        host = host_array(data)
        inferred = _BY_NUMPY[host.dtype]
    dtype = inferred if dtype is None else as_dtype(dtype)
    check_device_dtype(backend, dtype, "tensor")
    if requires_grad and not dtype.is_floating_point:
        raise DTypeError(f"tensor: only floating-point tensors can require grad, got {dtype}")
    host = np.asarray(host, dtype=dtype.np)
    data = backend.from_numpy(host)
    init_leaf(t, data, backend, dtype, requires_grad)
    if not isinstance(data, np.ndarray):  # on a device: gather may use it as an index
        note_host_range(t, host)


def shape_arg(op: str, shape: Sequence[Any]) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    if not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
               for s in shape):
        raise ShapeError(f"{op}: shape must be non-negative ints, got {shape}")
    return tuple(int(s) for s in shape)


def new(op: str, data_fn: Callable[[Backend, np.dtype], Storage], shape: Sequence[int],
        dtype: DTypeLike | None, device: str, requires_grad: bool,
        default: DType = float32) -> Tensor:
    """A new leaf from `data_fn(backend, numpy dtype)`, its dtype and device checked."""
    backend = get_backend(device)
    dtype = default if dtype is None else as_dtype(dtype)
    check_device_dtype(backend, dtype, op)
    if requires_grad and not dtype.is_floating_point:
        raise DTypeError(f"{op}: only floating-point tensors can require grad, got {dtype}")
    return leaf(data_fn(backend, dtype.np), backend, requires_grad)


def full(shape: ShapeLike, value: Scalar, dtype: DTypeLike | None = None, device: str = "cpu",
         requires_grad: bool = False) -> Tensor:
    """A tensor of `shape` filled with `value`; the dtype follows the value unless given."""
    shape = shape_arg("full", (shape,) if isinstance(shape, int) else (tuple(shape),))
    if not isinstance(value, numbers.Number):
        raise ShrewError(f"full: value must be a number, got {value!r}")
    default = result_type(value) if dtype is None else float32  # (unused with a dtype)
    return new("full", lambda be, dt: be.full(shape, value, dt), shape, dtype, device,
               requires_grad, default)


def zeros(*shape: ShapeLike, dtype: DTypeLike | None = None, device: str = "cpu",
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros (float32 unless a dtype is given); `shape` as ints or one sequence."""
    shape = shape_arg("zeros", shape)
    return new("zeros", lambda be, dt: be.full(shape, 0, dt), shape, dtype, device, requires_grad)


def ones(*shape: ShapeLike, dtype: DTypeLike | None = None, device: str = "cpu",
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones (float32 unless a dtype is given); `shape` as ints or one sequence."""
    shape = shape_arg("ones", shape)
    return new("ones", lambda be, dt: be.full(shape, 1, dt), shape, dtype, device, requires_grad)


def zeros_like(t: Tensor, dtype: DTypeLike | None = None) -> Tensor:
    """Zeros of t's shape on t's device, in t's dtype unless another is given."""
    return zeros(t.shape, dtype=dtype or t.dtype, device=t.device)


def ones_like(t: Tensor, dtype: DTypeLike | None = None) -> Tensor:
    """Ones of t's shape on t's device, in t's dtype unless another is given."""
    return ones(t.shape, dtype=dtype or t.dtype, device=t.device)


def arange(n: int, dtype: DTypeLike | None = None, device: str = "cpu",
           requires_grad: bool = False) -> Tensor:
    """0, 1, ..., n-1 (int64 unless a dtype is given)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ShrewError(f"arange: n must be a non-negative int, got {n!r}")
    return new("arange", lambda be, dt: be.arange(int(n), dt), (n,), dtype, device,
               requires_grad, int64)


def eye(n: int, m: int | None = None, dtype: DTypeLike | None = None, device: str = "cpu",
        requires_grad: bool = False) -> Tensor:
    """An [n, m] matrix (m = n by default) with ones on the diagonal."""
    m = n if m is None else m
    if not all(isinstance(v, (int, np.integer)) and v >= 0 for v in (n, m)):
        raise ShrewError(f"eye: sizes must be non-negative ints, got {n!r}, {m!r}")
    dtype = float32 if dtype is None else as_dtype(dtype)
    return new("eye", lambda be, dt: be.from_numpy(np.eye(n, m, dtype=dt)), (n, m), dtype,
               device, requires_grad)


def from_numpy(a: np.ndarray, device: str = "cpu") -> Tensor:
    """A tensor from a numpy array; on the CPU it shares the array's memory."""
    if not isinstance(a, np.ndarray):
        raise ShrewError(f"from_numpy: expected a numpy array, got {type(a).__name__}")
    backend = get_backend(device)
    from_numpy_dtype(a.dtype, "from_numpy")
    if backend.device != "cpu":
        return tensor(a, device=device)
    return wrap(a, backend)


def tensor(data: TensorData, dtype: DTypeLike | None = None, device: str = "cpu",
           requires_grad: bool = False) -> Tensor:
    """The same as ``Tensor(data, ...)``: a new leaf tensor holding a copy of `data`."""
    t = blank()
    init_tensor(t, data, dtype, device, requires_grad)
    return t


DLPACK_DEVICES = {1: "cpu", 2: "cuda"}
"""DLPack device types (kDLCPU, kDLCUDA) and the shrew backend that imports them."""


def from_dlpack(x: Any) -> Tensor:
    """A tensor sharing the memory of `x`: any object with __dlpack__ (a numpy array, a
    PyTorch or CuPy tensor, a shrew tensor), on the shrew device that matches x's."""
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise ShrewError(f"from_dlpack: expected an object with __dlpack__ and "
                         f"__dlpack_device__ (a numpy array, a PyTorch or CuPy tensor), got "
                         f"{type(x).__name__}")
    kind, index = x.__dlpack_device__()
    name = DLPACK_DEVICES.get(int(kind))
    if name is None:
        raise DeviceError(f"from_dlpack: shrew has no device for DLPack device type "
                          f"{int(kind)}; copy the data to the CPU first")
    backend = get_backend(name if name == "cpu" else f"{name}:{index}")
    if not hasattr(backend, "from_dlpack"):
        raise DeviceError(f"from_dlpack: device {backend.device} does not support DLPack")
    try:
        data = backend.from_dlpack(x)
    except (BufferError, RuntimeError) as exc:
        raise ShrewError(f"from_dlpack: cannot import the {type(x).__name__}: {exc}") from None
    from_numpy_dtype(data.dtype, "from_dlpack")
    return wrap(data, backend)
