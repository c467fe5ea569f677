"""Module-level tensor functions: creation, cat, where, convolution, pooling, scatter."""
from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import op as O
from .backends.base import fast_path
from .backends.registry import get_backend
from .dtype import (DType, as_dtype, bool_, check_float, float32, from_numpy_dtype, int64,
                    result_type)
from .errors import DeviceError, DTypeError, ShapeError, ShrewError
from .shape import broadcast_shapes, conv_output_size, fmt, normalize_dim, pair
from .tensor import (Tensor, _check_device_dtype, _check_index_range, _checked_index, _constant,
                     _record, _same_device, _wrap)

if TYPE_CHECKING:
    from .backends.base import Backend, Storage
    from .typing import DTypeLike, IntOrPair, Scalar, ShapeLike, TensorData


# -- creation --------------------------------------------------------------------------
def _shape_arg(op: str, shape: Sequence[Any]) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    if not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
               for s in shape):
        raise ShapeError(f"{op}: shape must be non-negative ints, got {shape}")
    return tuple(int(s) for s in shape)


def _new(op: str, data_fn: Callable[[Backend, np.dtype], Storage], shape: Sequence[int],
         dtype: DTypeLike | None, device: str, requires_grad: bool,
         default: DType = float32) -> Tensor:
    backend = get_backend(device)
    dtype = default if dtype is None else as_dtype(dtype)
    _check_device_dtype(backend, dtype, op)
    if requires_grad and not dtype.is_floating_point:
        raise DTypeError(f"{op}: only floating-point tensors can require grad, got {dtype}")
    t = _wrap(data_fn(backend, dtype.np), backend)
    t.requires_grad = bool(requires_grad)
    return t


def tensor(data: TensorData, dtype: DTypeLike | None = None, device: str = "cpu",
           requires_grad: bool = False) -> Tensor:
    """The same as ``Tensor(data, ...)``: a new leaf tensor holding a copy of `data`."""
    return Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def full(shape: ShapeLike, value: Scalar, dtype: DTypeLike | None = None, device: str = "cpu",
         requires_grad: bool = False) -> Tensor:
    """A tensor of `shape` filled with `value`; the dtype follows the value unless given."""
    shape = _shape_arg("full", (shape,) if isinstance(shape, int) else (tuple(shape),))
    if not isinstance(value, numbers.Number):
        raise ShrewError(f"full: value must be a number, got {value!r}")
    default = result_type(value) if dtype is None else float32  # (unused with a dtype)
    return _new("full", lambda be, dt: be.full(shape, value, dt), shape, dtype, device,
                requires_grad, default)


def zeros(*shape: ShapeLike, dtype: DTypeLike | None = None, device: str = "cpu",
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros (float32 unless a dtype is given); `shape` as ints or one sequence."""
    shape = _shape_arg("zeros", shape)
    return _new("zeros", lambda be, dt: be.full(shape, 0, dt), shape, dtype, device, requires_grad)


def ones(*shape: ShapeLike, dtype: DTypeLike | None = None, device: str = "cpu",
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones (float32 unless a dtype is given); `shape` as ints or one sequence."""
    shape = _shape_arg("ones", shape)
    return _new("ones", lambda be, dt: be.full(shape, 1, dt), shape, dtype, device, requires_grad)


def zeros_like(t: Tensor, dtype: DTypeLike | None = None) -> Tensor:
    """Zeros of t's shape on t's device, in t's dtype unless another is given."""
    return zeros(t.shape, dtype=dtype or t.dtype, device=t.device)


def ones_like(t: Tensor, dtype: DTypeLike | None = None) -> Tensor:
    """Ones of t's shape on t's device, in t's dtype unless another is given."""
    return ones(t.shape, dtype=dtype or t.dtype, device=t.device)


def _random(draw: str, shape: tuple, dtype: DTypeLike | None, device: str,
            requires_grad: bool) -> Tensor:
    """A floating-point tensor from the device generator's primitive `draw` (rand, randn)."""
    shape = _shape_arg(draw, shape)
    dtype = float32 if dtype is None else as_dtype(dtype)
    check_float(dtype, draw)
    return _new(draw, lambda be, dt: getattr(be, draw)(shape, dt), shape, dtype, device,
                requires_grad)


def rand(*shape: ShapeLike, dtype: DTypeLike | None = None, device: str = "cpu",
         requires_grad: bool = False) -> Tensor:
    """Uniform in [0, 1) from the device's seeded generator."""
    return _random("rand", shape, dtype, device, requires_grad)


def randn(*shape: ShapeLike, dtype: DTypeLike | None = None, device: str = "cpu",
          requires_grad: bool = False) -> Tensor:
    """Standard normal from the device's seeded generator."""
    return _random("randn", shape, dtype, device, requires_grad)


def arange(n: int, dtype: DTypeLike | None = None, device: str = "cpu",
           requires_grad: bool = False) -> Tensor:
    """0, 1, ..., n-1 (int64 unless a dtype is given)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ShrewError(f"arange: n must be a non-negative int, got {n!r}")
    return _new("arange", lambda be, dt: be.arange(int(n), dt), (n,), dtype, device,
                requires_grad, int64)


def eye(n: int, m: int | None = None, dtype: DTypeLike | None = None, device: str = "cpu",
        requires_grad: bool = False) -> Tensor:
    """An [n, m] matrix (m = n by default) with ones on the diagonal."""
    m = n if m is None else m
    if not all(isinstance(v, (int, np.integer)) and v >= 0 for v in (n, m)):
        raise ShrewError(f"eye: sizes must be non-negative ints, got {n!r}, {m!r}")
    dtype = float32 if dtype is None else as_dtype(dtype)
    return _new("eye", lambda be, dt: be.from_numpy(np.eye(n, m, dtype=dt)), (n, m), dtype,
                device, requires_grad)


def from_numpy(a: np.ndarray, device: str = "cpu") -> Tensor:
    """A tensor from a numpy array; on the CPU it shares the array's memory."""
    if not isinstance(a, np.ndarray):
        raise ShrewError(f"from_numpy: expected a numpy array, got {type(a).__name__}")
    backend = get_backend(device)
    from_numpy_dtype(a.dtype, "from_numpy")
    if backend.device != "cpu":
        return Tensor(a, device=device)
    return _wrap(a, backend)


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
    return _wrap(data, backend)


def manual_seed(seed: int) -> None:
    """Make rand, randn and dropout reproducible on every backend."""
    from .backends.registry import manual_seed as seed_all
    seed_all(seed)


# -- joining and selecting ------------------------------------------------------------------
def cat(tensors: Iterable[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dim; they agree elsewhere and promote to one dtype."""
    tensors = tuple(tensors)
    if not tensors:
        raise ShrewError("cat: needs at least one tensor")
    if not all(isinstance(t, Tensor) for t in tensors):
        raise ShrewError("cat: every element must be a Tensor")
    _same_device("cat", *tensors)
    first = tensors[0]
    if any(t.ndim != first.ndim for t in tensors) or first.ndim == 0:
        raise ShapeError(f"cat: tensors need the same number (>= 1) of dims, got "
                         f"{', '.join(fmt(t.shape) for t in tensors)}")
    d = normalize_dim(dim, first.ndim, "cat")
    for t in tensors:
        if any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape)) if i != d):
            raise ShapeError(f"cat: shapes {', '.join(fmt(t.shape) for t in tensors)} differ "
                             f"outside dim {d}")
    dtype = result_type(*[(t.dtype, t.ndim) for t in tensors])
    tensors = tuple(t.to_dtype(dtype) for t in tensors)
    data = first._backend.cat([t._data for t in tensors], d)
    return _record(data, first._backend, O.Cat(tensors, d), *tensors)


def stack(tensors: Iterable[Tensor], dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim."""
    tensors = tuple(tensors)
    if not tensors:
        raise ShrewError("stack: needs at least one tensor")
    d = normalize_dim(dim, tensors[0].ndim, "stack", extra=1)
    return cat([t.unsqueeze(d) for t in tensors], d)


def where(cond: Tensor, a: Tensor | Scalar, b: Tensor | Scalar) -> Tensor:
    """Elementwise cond ? a : b, broadcasting all three; a and b may be numbers."""
    if not isinstance(cond, Tensor) or cond.dtype is not bool_:
        got = cond.dtype if isinstance(cond, Tensor) else type(cond).__name__
        raise DTypeError(f"where: condition must be a bool tensor, got {got}")
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
    operands = [(x.dtype, x.ndim) if isinstance(x, Tensor) else x for x in (a, b)]
    dtype = result_type(*operands) if like is not None else result_type(a, b)
    backend = cond._backend
    a, b = (x.to_dtype(dtype) if isinstance(x, Tensor) else
            _constant((), x, dtype, backend) for x in (a, b))
    _same_device("where", cond, a, b)
    broadcast_shapes("where", cond.shape, a.shape, b.shape)
    data = backend.where(cond._data, a._data, b._data)
    return _record(data, backend, O.WhereCond(cond, a, b), a, b)


def scatter_add(shape: Sequence[int], dim: int, index: Tensor, src: Tensor) -> Tensor:
    """zeros(shape) with src added at index along dim (the adjoint of gather)."""
    shape = tuple(shape)
    d = normalize_dim(dim, len(shape), "scatter_add")
    index = _checked_index("scatter_add", index, src, d)
    if index.shape != src.shape or index.ndim != len(shape):
        raise ShapeError(f"scatter_add: index {fmt(index.shape)} and src {fmt(src.shape)} must "
                         f"have one shape with the output's {len(shape)} dims")
    if any(i != d and si > so for i, (si, so) in enumerate(zip(index.shape, shape))):
        raise ShapeError(f"scatter_add: index {fmt(index.shape)} is larger than output "
                         f"{fmt(shape)} outside dim {d}")
    _check_index_range("scatter_add", index, shape[d], d)
    return scatter_add_unchecked(shape, d, index, src)


def scatter_add_unchecked(shape: tuple[int, ...], dim: int, index: Tensor, src: Tensor) -> Tensor:
    """scatter_add of arguments already known good: for gradient rules whose int64 index
    was checked when it was made (gather's) or comes from a kernel (max_pool2d's).  The
    range check costs two reductions and a device-to-host sync."""
    data = src._backend.scatter_add(shape, dim, index._data, src._data)
    return _record(data, src._backend, O.ScatterAdd(src, dim, index), src)


# -- convolution and pooling ------------------------------------------------------------------
def _conv_geometry(op: str, image_shape: Sequence[int], kernel: Any, stride: Any, padding: Any,
                   ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Validated (kernel, stride, padding, output size) pairs for an [N, C, H, W] image."""
    kernel = pair(kernel, "kernel_size", op, 1)
    stride = pair(stride, "stride", op, 1)
    padding = pair(padding, "padding", op, 0)
    out = tuple(conv_output_size(op, image_shape[2 + i], kernel[i], stride[i], padding[i])
                for i in range(2))
    return kernel, stride, padding, out


def im2col(x: Tensor, kernel: IntOrPair, stride: IntOrPair = 1, padding: IntOrPair = 0) -> Tensor:
    """[N, C, H, W] -> [N, C*kh*kw, Ho*Wo]: every kernel window as a column."""
    _check_input("im2col", x)
    kernel, stride, padding, _ = _conv_geometry("im2col", x.shape, kernel, stride, padding)
    data = x._backend.im2col(x._data, kernel, stride, padding)
    return _record(data, x._backend, O.Im2Col(x, kernel, stride, padding), x)


def col2im(cols: Tensor, shape: Sequence[int], kernel: IntOrPair, stride: IntOrPair = 1,
           padding: IntOrPair = 0) -> Tensor:
    """The adjoint of im2col: sums the columns back into an image of `shape`."""
    shape = tuple(shape)
    if len(shape) != 4:
        raise ShapeError(f"col2im: shape must be [N, C, H, W], got {fmt(shape)}")
    kernel, stride, padding, (ho, wo) = _conv_geometry("col2im", shape, kernel, stride, padding)
    expect = (shape[0], shape[1] * kernel[0] * kernel[1], ho * wo)
    if cols.shape != expect:
        raise ShapeError(f"col2im: columns must be {fmt(expect)} for image {fmt(shape)}, "
                         f"got {fmt(cols.shape)}")
    data = cols._backend.col2im(cols._data, shape, kernel, stride, padding)
    return _record(data, cols._backend, O.Col2Im(cols, shape, kernel, stride, padding), cols)


def _check_input(op: str, x: Tensor, layout: str = "[N, C, H, W]") -> None:
    """A floating-point tensor with as many dims as `layout` names."""
    if not isinstance(x, Tensor) or x.ndim != layout.count(",") + 1:
        raise ShapeError(f"{op}: input must be a {layout} tensor, got "
                         f"{fmt(x.shape) if isinstance(x, Tensor) else type(x).__name__}")
    check_float(x.dtype, op)


def _check_conv(op: str, x: Tensor, weight: Tensor, x_layout: str, w_layout: str) -> None:
    """Input and weight of a convolution: dims as the layouts say, channels, dtype, device."""
    _check_input(op, x, x_layout)
    if not isinstance(weight, Tensor) or weight.ndim != x.ndim:
        got = fmt(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise ShapeError(f"{op}: weight must be {w_layout}, got {got}")
    _same_device(op, x, weight)
    if weight.shape[1] != x.shape[1]:
        raise ShapeError(f"{op}: input has {x.shape[1]} channels but weight "
                         f"{fmt(weight.shape)} expects {weight.shape[1]}")
    if weight.dtype is not x.dtype:
        raise DTypeError(f"{op}: input and weight dtypes differ ({x.dtype}, {weight.dtype})")


def conv2d(x: Tensor, weight: Tensor, stride: IntOrPair = 1, padding: IntOrPair = 0) -> Tensor:
    """2-d cross-correlation (no bias): the backend's conv2d where it has one (base.FastConv),
    else im2col and one batched GEMM."""
    _check_conv("conv2d", x, weight, "[N, C, H, W]", "[out, in, kh, kw]")
    kernel, stride, padding, (ho, wo) = _conv_geometry("conv2d", x.shape, weight.shape[2:],
                                                       stride, padding)
    be = x._backend
    out = _conv2d_data(be, x._data, weight._data, stride, padding, (ho, wo))
    return _record(out, be, O.Conv2d(x, weight, stride, padding), x, weight)


def _conv2d_data(be: Backend, x: Storage, w: Storage, stride: tuple[int, ...],
                 padding: tuple[int, ...], out_hw: tuple[int, ...]) -> Storage:
    """The forward of a validated 2-d convolution on storage: the backend's conv2d where it
    has one and takes this geometry (base.FastConv), else im2col and one batched GEMM."""
    out = fast_path(be, "conv2d", x, w, stride, padding)
    if out is NotImplemented:
        (n, _, _, _), (o, c, kh, kw) = x.shape, w.shape
        cols = be.im2col(x, (kh, kw), stride, padding)
        out = be.reshape(be.matmul(be.reshape(w, (o, c * kh * kw)), cols), (n, o, *out_hw))
    return out


def conv1d(x: Tensor, weight: Tensor, stride: int = 1, padding: int = 0) -> Tensor:
    """1-d cross-correlation (no bias): a 2-d one with a height of 1."""
    _check_conv("conv1d", x, weight, "[N, C, L]", "[out, in, k]")
    stride = _single(stride, "stride", 1)
    padding = _single(padding, "padding", 0)
    lo = conv_output_size("conv1d", x.shape[2], weight.shape[2], stride, padding)
    be = x._backend
    n, c, length = x.shape
    o, k = weight.shape[0], weight.shape[2]
    x4 = be.reshape(x._data, (n, c, 1, length))
    w4 = be.reshape(weight._data, (o, c, 1, k))
    out = be.reshape(_conv2d_data(be, x4, w4, (1, stride), (0, padding), (1, lo)), (n, o, lo))
    return _record(out, be, O.Conv1d(x, weight, stride, padding), x, weight)


def _single(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ShapeError(f"conv1d: {name} must be an int >= {minimum}, got {value!r}")
    return value


def _pool_geometry(op: str, x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None,
                   padding: IntOrPair) -> tuple[tuple[int, ...], ...]:
    _check_input(op, x)
    kernel = pair(kernel_size, "kernel_size", op, 1)
    stride = kernel if stride is None else pair(stride, "stride", op, 1)
    padding = pair(padding, "padding", op, 0)
    if any(p * 2 > k for p, k in zip(padding, kernel)):
        raise ShapeError(f"{op}: padding {padding} must be at most half the kernel {kernel}")
    for i in range(2):
        conv_output_size(op, x.shape[2 + i], kernel[i], stride[i], padding[i])
    return kernel, stride, padding


def max_pool2d(x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: IntOrPair = 0) -> Tensor:
    """The maximum of each window of a [N, C, H, W] input (stride defaults to the kernel;
    padding counts as -inf)."""
    kernel, stride, padding = _pool_geometry("max_pool2d", x, kernel_size, stride, padding)
    values, indices = x._backend.max_pool2d(x._data, kernel, stride, padding)
    index = _wrap(indices, x._backend)
    return _record(values, x._backend, O.MaxPool2d(x, kernel, stride, padding, index), x)


def avg_pool2d(x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: IntOrPair = 0) -> Tensor:
    """The mean of each window of a [N, C, H, W] input (stride defaults to the kernel;
    padded zeros count in the mean)."""
    kernel, stride, padding = _pool_geometry("avg_pool2d", x, kernel_size, stride, padding)
    data = x._backend.avg_pool2d(x._data, kernel, stride, padding)
    return _record(data, x._backend, O.AvgPool2d(x, kernel, stride, padding), x)


def standardize(x: Tensor, ndims: int, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the last `ndims` dims, with the biased variance:
    layer_norm without its weight and bias, as one fused kernel."""
    if not isinstance(x, Tensor):
        raise ShrewError(f"standardize: input must be a Tensor, got {type(x).__name__}")
    check_float(x.dtype, "standardize")
    if isinstance(ndims, bool) or not isinstance(ndims, int) or not 1 <= ndims <= x.ndim:
        raise ShapeError(f"standardize: ndims must be an int from 1 to {x.ndim} for input "
                         f"{fmt(x.shape)}, got {ndims!r}")
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not eps >= 0:
        raise ShrewError(f"standardize: eps must be a number >= 0, got {eps!r}")
    dims = tuple(range(x.ndim - ndims, x.ndim))
    backend = x._backend
    if 0 in x.shape:  # nothing to normalise
        keep = tuple(1 if d in dims else s for d, s in enumerate(x.shape))
        data, rstd = backend.full(x.shape, 0, x.dtype.np), backend.full(keep, 1, x.dtype.np)
    else:
        data, rstd = backend.standardize(x._data, dims, float(eps))
    op = O.Standardize(x, dims, float(eps), _wrap(rstd, backend))
    return _record(data, backend, op, x)
