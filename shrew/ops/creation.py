"""Creation: tensors from Python data, numpy arrays, DLPack, and filled shapes."""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..backends.registry import get_backend
from ..core.dtype import (BY_NUMPY as _BY_NUMPY, DType, as_dtype, from_numpy_dtype,
                     get_default_dtype, int64, result_type)
from ..core.errors import type_name
from ..core.errors import (ArgumentError, DeviceError, DTypeError, ShapeError, ShrewTypeError,
                          ShrewValueError, UnsupportedError)
from ..core.fields import AnyTensor, blank, init_leaf, leaf, wrap
from ..core.shape import INT64_MAX, check_alloc, fmt, numel, shape_arg
from .common import check_device_dtype
from .legacy import check_format
from .index.recorded import note_host_range
from .out import write_out
from .shape.recorded import contiguous

if TYPE_CHECKING:
    from ..backends.base import Backend, Storage
    from .._tensor import Tensor
    from ..typing import DeviceLike, DTypeLike, Scalar, ShapeLike, TensorData


def host_array(data: object, op: str = "tensor", dtype: DTypeLike | None = None) -> np.ndarray:
    """Python data (scalar or nested lists) as a numpy array with torch's dtype inference;
    with a `dtype` to come, floats and complex numbers stay in double precision, so that
    the one cast to it rounds once (tensor([0.1], dtype=float64) holds 0.1, as torch's)."""
    try:
        arr = np.array(_plain(data) if _holds_tensors(data) else data)
    except (ValueError, TypeError) as exc:
        raise ShrewValueError(f"{op}: data is not a rectangular nested list of numbers "
                              f"({exc})") from None
    except OverflowError as exc:
        raise ShrewValueError(f"{op}: a number does not fit in int64 ({exc})") from None
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind in "fc" and dtype is not None:
        return arr
    if arr.dtype.kind == "f":
        return arr.astype(get_default_dtype().np)
    if arr.dtype.kind == "c":  # Python complex numbers: the default complex dtype
        return arr.astype(get_default_dtype().to_complex().np)
    # PyTorch: ValueError for text and for an int past int64, RuntimeError for other objects
    huge = any(type(v) is int and not -INT64_MAX - 1 <= v <= INT64_MAX for v in arr.reshape(-1))
    raise (ShrewValueError if huge or arr.dtype.kind in "US" else DTypeError)(
        f"{op}: cannot make a tensor from data of numpy dtype {arr.dtype} "
        f"(expected numbers, bools or nested lists of them)")


def _foreign(data: object) -> bool:
    """Whether data is another framework's tensor: it has __dlpack__ (torch, CuPy, JAX);
    numpy's arrays, which have it too, take the host path."""
    return hasattr(data, "__dlpack__") and not isinstance(data, (AnyTensor, np.ndarray,
                                                                  np.generic))


def _holds_tensors(data: object) -> bool:
    """Whether nested lists hold tensors, judged by the first elements (as PyTorch infers a
    list's kind): [loss0, loss1] of tensors that require grad, which numpy cannot read."""
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return isinstance(data, AnyTensor) or _foreign(data)


def _plain(data: object) -> object:
    """Nested lists with each tensor (shrew's or another framework's) as its host array."""
    if isinstance(data, (list, tuple)):
        return [_plain(x) for x in data]
    if _foreign(data):
        data = from_foreign(data, "tensor")
    return data._host() if isinstance(data, AnyTensor) else data


def from_foreign(data: Any, op: str) -> Tensor:
    """Another framework's tensor (anything with __dlpack__) as a shrew tensor sharing its
    memory; a torch tensor's graph cannot come along, so one that requires grad is detached."""
    if getattr(data, "requires_grad", False) and callable(getattr(data, "detach", None)):
        data = data.detach()
    try:
        return from_dlpack(data)
    except ShrewTypeError as exc:
        raise ShrewTypeError(f"{op}: cannot convert a {type_name(data)}: {exc}") from None


def init_tensor(t: Tensor, data: TensorData, dtype: DTypeLike | None, device: str | None,
                requires_grad: bool) -> None:
    """Tensor.__init__: a new leaf holding a copy of `data`."""
    backend = get_backend(device)
    if _foreign(data):  # a torch tensor: read through DLPack, without a copy on the way
        data = from_foreign(data, "tensor")
    if isinstance(data, AnyTensor):
        host = data._host()
        inferred = data.dtype
    elif isinstance(data, (np.ndarray, np.generic)):  # numpy scalars keep their dtype too
        host = np.asarray(data)
        inferred = from_numpy_dtype(data.dtype)
    else:
        host = host_array(data, "tensor", dtype)
        inferred = _BY_NUMPY[host.dtype]
    dtype = inferred if dtype is None else as_dtype(dtype)
    if dtype.is_complex:  # a complex tensor is a ComplexTensor (ops/complex/), not a Tensor
        raise DTypeError(f"Tensor: cannot hold {dtype} values; shrew.tensor(data) makes a "
                         f"complex tensor")
    check_device_dtype(backend, dtype, "tensor")
    if requires_grad and not dtype.is_floating_point:
        raise DTypeError(f"tensor: only floating-point tensors can require grad, got {dtype}")
    host = np.asarray(host, dtype=dtype.np)
    data = backend.from_numpy(host)
    init_leaf(t, data, backend, dtype, requires_grad)
    if not isinstance(data, np.ndarray):  # on a device: gather may use it as an index
        note_host_range(t, host)


def new(op: str, data_fn: Callable[[Backend, np.dtype], Storage], shape: Sequence[int],
        dtype: DTypeLike | None, device: DeviceLike | None, requires_grad: bool,
        default: DType | None = None) -> Tensor:
    """A new leaf from `data_fn(backend, numpy dtype)`, its dtype and device checked; the
    dtype is `default`, or else the default float dtype, unless one is given."""
    backend = get_backend(device)
    if dtype is None:
        dtype = get_default_dtype() if default is None else default
    dtype = as_dtype(dtype)
    if dtype.is_complex:  # complex tensors are real pairs (ops/complex/)
        return _complex_new(op, data_fn, shape, dtype, device, requires_grad)
    check_device_dtype(backend, dtype, op)
    if requires_grad and not dtype.is_floating_point:
        raise DTypeError(f"{op}: only floating-point tensors can require grad, got {dtype}")
    check_alloc(op, shape, dtype.np.itemsize, backend.device,
                getattr(backend, "max_alloc_bytes", None))
    try:
        data = data_fn(backend, dtype.np)
    except MemoryError:  # what numpy (and pyopencl) raise: PyTorch's allocator raises this
        size = numel(shape) * dtype.np.itemsize
        raise ShapeError(f"{op}: cannot allocate {fmt(shape)} of {dtype} ({size} bytes) on "
                         f"{backend.device}") from None
    return leaf(data, backend, requires_grad)


def _complex_new(op: str, data_fn: Callable[[Backend, np.dtype], Storage],
                 shape: Sequence[int], dtype: DType, device: DeviceLike | None,
                 requires_grad: bool) -> Tensor:
    """A complex leaf: the fills' real parts from data_fn and imaginary parts 0; rand's and
    randn's two parts drawn each, randn's scaled by sqrt(1/2) (a variance of 1 in all, as
    PyTorch's complex normal)."""
    from .complex import arith
    real = new(op, data_fn, shape, dtype.to_real(), device, False)
    if op in ("zeros", "ones", "full", "empty"):
        return arith.to_dtype(real, dtype).requires_grad_(requires_grad)
    if op not in ("rand", "randn"):
        raise UnsupportedError(f"{op}: complex dtypes are not supported ({dtype})")
    imag = new(op, data_fn, shape, dtype.to_real(), device, False)
    z = arith.pack(real, imag)
    if op == "randn":
        z = arith.make(arith.view_as_real(z) * math.sqrt(0.5))
    return z.requires_grad_(requires_grad)


def full(size: ShapeLike, fill_value: Scalar, *, dtype: DTypeLike | None = None,
         device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """A tensor of `size` filled with `fill_value`; the dtype follows the value (bool,
    int64 or the default float dtype) unless given."""
    shape = shape_arg("full", (size,) if isinstance(size, int) else (tuple(size),))
    if not isinstance(fill_value, numbers.Number):
        raise ShrewTypeError(f"full: fill_value must be a number, got {fill_value!r}")
    if isinstance(fill_value, complex) or (dtype is not None and as_dtype(dtype).is_complex):
        return _complex_full(shape, complex(fill_value), dtype, device, requires_grad)
    return new("full", lambda be, dt: be.full(shape, fill_value, dt), shape, dtype, device,
               requires_grad, result_type(fill_value))


def _complex_full(shape: tuple, value: complex, dtype: DTypeLike | None,
                  device: DeviceLike | None, requires_grad: bool) -> Tensor:
    from .complex import arith
    kind = get_default_dtype().to_complex() if dtype is None else as_dtype(dtype)
    if not kind.is_complex:
        raise DTypeError(f"full: a complex fill_value needs a complex dtype, got {kind}")
    parts = [full(shape, v, dtype=kind.to_real(), device=device) for v in (value.real,
                                                                           value.imag)]
    return arith.pack(*parts).requires_grad_(requires_grad)


def zeros(*args: ShapeLike, size: ShapeLike | None = None, out: Tensor | None = None,
          dtype: DTypeLike | None = None, device: DeviceLike | None = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros (the default float dtype unless given); sizes as ints or one
    sequence."""
    return _filled("zeros", 0, sizes("zeros", args, size), out, dtype, device, requires_grad)


def ones(*args: ShapeLike, size: ShapeLike | None = None, out: Tensor | None = None,
         dtype: DTypeLike | None = None, device: DeviceLike | None = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones (the default float dtype unless given); sizes as ints or one
    sequence."""
    return _filled("ones", 1, sizes("ones", args, size), out, dtype, device, requires_grad)


def empty(*args: ShapeLike, size: ShapeLike | None = None, out: Tensor | None = None,
          dtype: DTypeLike | None = None, device: DeviceLike | None = None,
          requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor in PyTorch; shrew fills it with zeros, so that no stale
    memory is ever read."""
    return _filled("empty", 0, sizes("empty", args, size), out, dtype, device, requires_grad)


def _filled(op: str, value: Scalar, size: Sequence[Any], out: Tensor | None,
            dtype: DTypeLike | None, device: DeviceLike | None,
            requires_grad: bool) -> Tensor:
    """zeros, ones and empty: `size` filled with `value`, or written into `out`, whose
    dtype and device are the result's unless given."""
    shape = shape_arg(op, size)
    if out is not None:
        dtype, device = dtype or out.dtype, device or out.device
    return write_out(op, new(op, lambda be, dt: be.full(shape, value, dt), shape, dtype,
                             device, requires_grad), out)


def full_like(input: Tensor, fill_value: Scalar, *, dtype: DTypeLike | None = None,  # noqa: A002
              device: DeviceLike | None = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """full() with input's shape, and its dtype and device unless others are given;
    memory_format is a layout hint (shrew's tensors are row-major)."""
    check_format("full_like", memory_format)
    return full(input.shape, fill_value, dtype=input.dtype if dtype is None else dtype,
                device=input.device if device is None else device, requires_grad=requires_grad)


def zeros_like(input: Tensor, *, dtype: DTypeLike | None = None,  # noqa: A002
               device: DeviceLike | None = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    return full_like(input, 0, dtype=dtype, device=device, requires_grad=requires_grad,
                     memory_format=memory_format)


def ones_like(input: Tensor, *, dtype: DTypeLike | None = None,  # noqa: A002
              device: DeviceLike | None = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    return full_like(input, 1, dtype=dtype, device=device, requires_grad=requires_grad,
                     memory_format=memory_format)


def empty_like(input: Tensor, *, dtype: DTypeLike | None = None,  # noqa: A002
               device: DeviceLike | None = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """zeros_like: shrew never hands out uninitialised memory."""
    return full_like(input, 0, dtype=dtype, device=device, requires_grad=requires_grad,
                     memory_format=memory_format)


def new_full_like(x: Tensor, size: tuple, fill_value: Scalar, dtype: DTypeLike | None,
                  device: DeviceLike | None, requires_grad: bool, op: str) -> Tensor:
    """Tensor.new_zeros / new_ones / new_empty / new_full: x's dtype and device by default."""
    return full(shape_arg(op, size), fill_value, dtype=x.dtype if dtype is None else dtype,
                device=x.device if device is None else device, requires_grad=requires_grad)


def new_tensor(x: Tensor, data: TensorData, dtype: DTypeLike | None, device: DeviceLike | None,
               requires_grad: bool) -> Tensor:
    """Tensor.new_tensor: a copy of data, in x's dtype and on x's device unless given."""
    return tensor(data, dtype=x.dtype if dtype is None else dtype,
                  device=x.device if device is None else device,
                  requires_grad=requires_grad)


def sizes(op: str, args: tuple, size: ShapeLike | None) -> tuple:
    """The sizes given positionally (ints or one sequence) or as size= (PyTorch's keyword)."""
    if size is None:
        return args
    if args:
        raise ShrewTypeError(f"{op}: sizes given both positionally and as size=")
    return (size,)


def clone(x: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy with its own memory; differentiable.  memory_format is a layout hint (shrew's
    tensors are row-major)."""
    check_format("clone", memory_format)
    return contiguous(x)


def _host(op: str, host: np.ndarray, dtype: DTypeLike | None, device: DeviceLike | None,
          requires_grad: bool, default: DType | None = None) -> Tensor:
    """A leaf holding host values computed in float64 or int64, cast to the dtype."""
    return new(op, lambda be, dt: be.from_numpy(host.astype(dt)), host.shape, dtype, device,
               requires_grad, default)


def arange(start: Scalar, end: Scalar | None = None, step: Scalar = 1, *,
           dtype: DTypeLike | None = None, device: DeviceLike | None = None,
           requires_grad: bool = False) -> Tensor:
    """start, start + step, ... up to but excluding end (arange(n): 0 .. n-1); int64 when
    every bound is an int, else the default float dtype, unless a dtype is given."""
    if end is None:
        start, end = 0, start
    bounds = (start, end, step)
    if not all(isinstance(v, numbers.Real) for v in bounds):
        raise ArgumentError(f"arange: start, end and step must be real numbers, got {bounds}")
    if step == 0 or not all(math.isfinite(v) for v in bounds):
        raise ArgumentError(f"arange: step must be nonzero and bounds finite, got {bounds}")
    if (end - start) * step < 0:
        raise ArgumentError(f"arange: the bounds {start}, {end} are inconsistent with the sign "
                            f"of step {step}")
    n = math.ceil((end - start) / step)
    integral = all(isinstance(v, numbers.Integral) for v in bounds)
    if integral and start == 0 and step == 1:  # the common arange(n): made on the device
        return new("arange", lambda be, dt: be.arange(n, dt), (n,), dtype, device,
                   requires_grad, int64)
    index: np.ndarray = np.arange(n, dtype=np.int64 if integral else np.float64)
    return _host("arange", start + index * step, dtype, device, requires_grad,
                 int64 if integral else None)


def linspace(start: Scalar | Tensor, end: Scalar | Tensor, steps: int, *,
             dtype: DTypeLike | None = None, device: DeviceLike | None = None,
             requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from start to end inclusive (the second half counted
    back from end, as PyTorch, so the last value is exactly end)."""
    return _host("linspace", _linspace("linspace", start, end, steps), dtype, device,
                 requires_grad)


def logspace(start: Scalar | Tensor, end: Scalar | Tensor, steps: int, base: Scalar = 10.0, *,
             dtype: DTypeLike | None = None, device: DeviceLike | None = None,
             requires_grad: bool = False) -> Tensor:
    """base ** linspace(start, end, steps)."""
    exponents = _linspace("logspace", start, end, steps)
    return _host("logspace", np.power(float(base), exponents), dtype, device, requires_grad)


def _linspace(op: str, start: Scalar | Tensor, end: Scalar | Tensor,
              steps: int) -> np.ndarray:
    start, end = _number(start), _number(end)
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 0:
        raise ArgumentError(f"{op}: steps must be a non-negative int, got {steps!r}")
    if not all(isinstance(v, numbers.Real) for v in (start, end)):
        raise ArgumentError(f"{op}: start and end must be real numbers, got {start!r}, {end!r}")
    if steps == 1:
        return np.array([start], dtype=np.float64)
    i = np.arange(steps, dtype=np.float64)
    step = (end - start) / (steps - 1)
    return np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))


def _number(value: Scalar | Tensor) -> Scalar:
    """A one-element tensor bound (linspace(tensor(0.), tensor(1.), 5)) as its number."""
    if isinstance(value, AnyTensor):
        if value.numel() != 1:
            raise ShapeError(f"linspace: a tensor bound must have one element, got shape "
                             f"{list(value.shape)}")
        return value.item()
    return value


def eye(n: int, m: int | None = None, *, dtype: DTypeLike | None = None,
        device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """An [n, m] matrix (m = n by default) with ones on the diagonal."""
    m = n if m is None else m
    if not all(isinstance(v, (int, np.integer)) and v >= 0 for v in (n, m)):
        raise ArgumentError(f"eye: sizes must be non-negative ints, got {n!r}, {m!r}")
    return _host("eye", np.eye(n, m), dtype, device, requires_grad)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: DTypeLike = int64,
                 device: DeviceLike | None = None) -> Tensor:
    """[2, N]: the row and column indices of the lower triangle of a row x col matrix
    (diagonal `offset` and below), row by row."""
    return _triangle("tril_indices", np.tril_indices, row, col, offset, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: DTypeLike = int64,
                 device: DeviceLike | None = None) -> Tensor:
    """[2, N]: the indices of the upper triangle (diagonal `offset` and above)."""
    return _triangle("triu_indices", np.triu_indices, row, col, offset, dtype, device)


def _triangle(op: str, indices: Callable[..., Any], row: int, col: int, offset: int,
              dtype: DTypeLike, device: DeviceLike | None) -> Tensor:
    if not all(isinstance(v, (int, np.integer)) for v in (row, col, offset)) or row < 0 or col < 0:
        raise ArgumentError(f"{op}: row and col must be non-negative ints and offset an int, "
                            f"got {row!r}, {col!r}, {offset!r}")
    host = np.stack(indices(row, offset, col)).astype(np.int64).reshape(2, -1)
    return _host(op, host, dtype, device, False)


def meshgrid(*tensors: Tensor | Sequence[Tensor], indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-d tensors: output i varies along dim i ("ij"), or with the
    first two dims swapped ("xy", as numpy)."""
    ts: list[Tensor] = list(tensors[0] if len(tensors) == 1 and  # type: ignore[arg-type]
                            not isinstance(tensors[0], AnyTensor) else tensors)
    if indexing not in ("ij", "xy"):
        raise ArgumentError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    if not all(isinstance(t, AnyTensor) and t.ndim <= 1 for t in ts):
        raise ShapeError("meshgrid: expects 0-d or 1-d tensors, got "
                         + ", ".join(str(getattr(t, "shape", type(t).__name__)) for t in ts))
    if len({t.dtype for t in ts}) > 1 or len({t.device for t in ts}) > 1:
        raise ArgumentError("meshgrid: expects all tensors on one device with one dtype, got "
                         + ", ".join(f"{t.dtype} on {t.device}" for t in ts))
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = shape[i]
        grids.append(t.reshape(*view).expand(*shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def from_numpy(a: np.ndarray, device: str = "cpu") -> Tensor:
    """A tensor from a numpy array; on the CPU it shares the array's memory."""
    if not isinstance(a, np.ndarray):
        raise ShrewTypeError(f"from_numpy: expected a numpy.ndarray, got {type_name(a)}")
    backend = get_backend(device)
    from_numpy_dtype(a.dtype, "from_numpy")
    if a.dtype.kind == "c" and backend.device == "cpu":
        from .complex import pair
        return pair.share_host(a, backend)
    if backend.device != "cpu":
        return tensor(a, device=device)
    return wrap(a, backend)


def tensor(data: TensorData, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
           requires_grad: bool = False) -> Tensor:
    """The same as ``Tensor(data, ...)``: a new leaf tensor holding a copy of `data`."""
    if _foreign(data):  # a torch tensor: read through DLPack
        data = from_foreign(data, "tensor")
    elif not isinstance(data, (AnyTensor, np.ndarray, np.generic)):
        data = host_array(data, "tensor", dtype)  # Python data, as torch infers its dtype
    if _is_complex_data(data, dtype):
        return _complex_tensor(data, dtype, device, requires_grad)
    t = blank()
    init_tensor(t, data, dtype, device, requires_grad)
    return t


def _is_complex_data(data: Tensor | np.ndarray | np.generic, dtype: DTypeLike | None) -> bool:
    """Whether tensor(data, dtype) makes a complex tensor (ops/complex/pair.py)."""
    if dtype is not None:
        return as_dtype(dtype).is_complex
    return data.dtype.is_complex if isinstance(data, AnyTensor) else data.dtype.kind == "c"


def _complex_tensor(data: Tensor | np.ndarray | np.generic, dtype: DTypeLike | None,
                    device: DeviceLike | None, requires_grad: bool) -> Tensor:
    from .complex import pair
    host = data._host() if isinstance(data, AnyTensor) else np.asarray(data)
    if dtype is None:
        dtype = from_numpy_dtype(host.dtype)
    return pair.from_host(host, get_backend(device), as_dtype(dtype), requires_grad)


DLPACK_DEVICES = {1: "cpu", 2: "cuda"}
"""DLPack device types (kDLCPU, kDLCUDA) and the shrew backend that imports them."""


def from_dlpack(x: Any) -> Tensor:
    """A tensor sharing the memory of `x`: any object with __dlpack__ (a numpy array, a
    PyTorch or CuPy tensor, a shrew tensor), on the shrew device that matches x's."""
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise ShrewTypeError(f"from_dlpack: expected an object with __dlpack__ and "
                             f"__dlpack_device__ (a numpy array, a PyTorch or CuPy tensor), got "
                             f"{type_name(x)}")
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
    except (BufferError, RuntimeError, TypeError) as exc:
        raise ShrewTypeError(f"from_dlpack: cannot import the {type_name(x)}: {exc}") from None
    if from_numpy_dtype(data.dtype, "from_dlpack").is_complex:
        from .complex import pair
        return pair.share_host(data, backend)
    return wrap(data, backend)


def as_tensor(data: Any, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
              ) -> Tensor:
    """torch.as_tensor: `data` itself when it is a tensor of that dtype and device (else
    converted, keeping its graph); a numpy array, or another framework's tensor (anything
    with __dlpack__: torch, CuPy), shares its memory where dtype and device allow; other
    data (numbers, nested lists) is copied, as tensor() copies it."""
    return asarray(data, dtype=dtype, device=device)


def asarray(obj: Any, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
            copy: bool | None = None, requires_grad: bool = False) -> Tensor:
    """torch.asarray: as_tensor, with `copy` (True: always a copy; False: never, refused
    where one is needed; None: only where needed) and `requires_grad`."""
    out = _as_tensor(obj, dtype, device, copy)
    if requires_grad and not out.requires_grad:
        out = (out.detach() if out is obj else out).requires_grad_(True)
    return out


def _as_tensor(obj: Any, dtype: DTypeLike | None, device: DeviceLike | None,
               copy: bool | None) -> Tensor:
    if _foreign(obj):
        obj = from_foreign(obj, "asarray")
    elif isinstance(obj, (np.ndarray, np.generic)):
        obj = from_numpy(np.asarray(obj))  # a numpy scalar: a 0-d array of its own
    elif not isinstance(obj, AnyTensor):
        if copy is False:
            raise ShrewValueError(f"asarray: a {type_name(obj)} cannot be shared without a "
                                  f"copy, but copy=False")
        return tensor(obj, dtype=dtype, device="cpu" if device is None else device)
    want = obj.dtype if dtype is None else as_dtype(dtype)
    where = obj.device if device is None else get_backend(device).device
    if copy is False and (want is not obj.dtype or where != obj.device):
        raise ShrewValueError(f"asarray: converting a {obj.dtype} tensor on {obj.device} to "
                              f"{want} on {where} needs a copy, but copy=False")
    out = obj.to(device=where, dtype=want)
    return clone(out) if copy and out is obj else out


# -- strided and permuted allocation, scalars (torch's less common factories) -------------
def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: DTypeLike | None = None,
                  layout: Any = None, device: DeviceLike | None = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of `size` laid out with `stride` (elements) over memory of its own: a
    strided view of a zero-filled buffer just large enough (shrew never hands out stale
    memory)."""
    from .shape.strided import as_strided  # shape imports creation
    shape, steps = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(shape) != len(steps) or any(s < 0 for s in (*shape, *steps)):
        raise ArgumentError(f"empty_strided: size {list(shape)} and stride {list(steps)} must "
                            f"be non-negative and of equal length")
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, steps))
    storage = zeros(extent, dtype=dtype, device=device)
    out = as_strided(storage, shape, steps, 0)
    return out.requires_grad_(requires_grad) if requires_grad else out


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *,
                   dtype: DTypeLike | None = None, layout: Any = None,
                   device: DeviceLike | None = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """A tensor of `size` whose memory holds its dims in the order physical_layout
    (empty_permuted((2, 3, 4), (0, 2, 1)): dim 1 varies fastest)."""
    shape, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    if sorted(order) != list(range(len(shape))):
        raise ArgumentError(f"empty_permuted: physical_layout {list(order)} must be a "
                            f"permutation of the {len(shape)} dims")
    physical = zeros(tuple(shape[d] for d in order), dtype=dtype, device=device)
    out = physical.permute(*(order.index(d) for d in range(len(shape))))
    return out.requires_grad_(requires_grad) if requires_grad else out


def scalar_tensor(s: Scalar, *, dtype: DTypeLike | None = None, layout: Any = None,
                  device: DeviceLike | None = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """A 0-d tensor holding s, in the default float dtype unless dtype is given."""
    return full((), s, dtype=get_default_dtype() if dtype is None else dtype, device=device,
                requires_grad=requires_grad)


def fill(input: Tensor, value: Scalar | Tensor) -> Tensor:  # noqa: A002
    """A tensor of input's shape, dtype and device filled with value (input.clone().fill_())."""
    return input.clone().fill_(value)
