"""Convolutions: im2col and col2im, conv2d (a backend fast path, else im2col and one GEMM)
and conv1d (conv.cl on OpenCL and CUDA; backends/folded_conv.py on cpu and cuda)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import op as O
from ..backends.base import fast_path
from ..dtype import check_float
from ..errors import DTypeError, ShapeError
from ..factory import AnyTensor, record
from ..shape import conv_output_size, fmt, pair
from .common import same_device

if TYPE_CHECKING:
    from ..backends.base import Backend, Storage
    from ..tensor import Tensor
    from ..typing import IntOrPair


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
    check_input("im2col", x)
    kernel, stride, padding, _ = _conv_geometry("im2col", x.shape, kernel, stride, padding)
    data = x._backend.im2col(x._data, kernel, stride, padding)
    return record(data, x._backend, O.Im2Col(x, kernel, stride, padding), x)


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
    return record(data, cols._backend, O.Col2Im(cols, shape, kernel, stride, padding), cols)


def check_input(op: str, x: Tensor, layout: str = "[N, C, H, W]") -> None:
    """A floating-point tensor with as many dims as `layout` names."""
    if not isinstance(x, AnyTensor) or x.ndim != layout.count(",") + 1:
        raise ShapeError(f"{op}: input must be a {layout} tensor, got "
                         f"{fmt(x.shape) if isinstance(x, AnyTensor) else type(x).__name__}")
    check_float(x.dtype, op)


def _check_conv(op: str, x: Tensor, weight: Tensor, x_layout: str, w_layout: str) -> None:
    """Input and weight of a convolution: dims as the layouts say, channels, dtype, device."""
    check_input(op, x, x_layout)
    if not isinstance(weight, AnyTensor) or weight.ndim != x.ndim:
        got = fmt(weight.shape) if isinstance(weight, AnyTensor) else type(weight).__name__
        raise ShapeError(f"{op}: weight must be {w_layout}, got {got}")
    same_device(op, x, weight)
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
    return record(out, be, O.Conv2d(x, weight, stride, padding), x, weight)


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
    return record(out, be, O.Conv1d(x, weight, stride, padding), x, weight)


def _single(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ShapeError(f"conv1d: {name} must be an int >= {minimum}, got {value!r}")
    return value
