"""Convolutions: im2col and col2im, conv2d (a backend fast path, else im2col and one GEMM)
and conv1d (conv.cl on OpenCL and CUDA; backends/array_module/folded_conv.py on cpu and
cuda).

Dilation and groups run as one call where the backend's conv2d takes them (base.FastConv:
oneDNN on cpu), recorded as one Conv2d; elsewhere they are compositions of plain
convolutions with shape ops, so their gradients come from the ops they are made of: a
dilated kernel is the kernel with zeros between its taps, groups are convolutions of
channel slices concatenated.  A transposed convolution is a convolution of the
stride-dilated, padded input with the flipped, transposed kernel."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.autocast import autocast_op
from ..core import op as O
from ..backends.base import fast_path
from ..core.dtype import check_float
from ..core.errors import type_name
from ..core.errors import ArgumentError, DTypeError, ShapeError
from ..core.fields import AnyTensor, record
from ..core.shape import conv_output_size, fmt, pair
from .common import same_device
from .shape.recorded import cat

if TYPE_CHECKING:
    from ..backends.base import Backend, Storage
    from .._tensor import Tensor
    from ..typing import IntOrPair

    IntOrOne = int | tuple[int, ...]  # a 1-d size: an int or a 1-tuple


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
                         f"{fmt(x.shape) if isinstance(x, AnyTensor) else type_name(x)}")
    check_float(x.dtype, op)


def _check_conv(op: str, x: Tensor, weight: Tensor, x_layout: str, w_layout: str,
                groups: int = 1) -> None:
    """Input and weight of a convolution: dims as the layouts say, channels, dtype, device."""
    check_input(op, x, x_layout)
    if not isinstance(weight, AnyTensor) or weight.ndim != x.ndim:
        got = fmt(weight.shape) if isinstance(weight, AnyTensor) else type_name(weight)
        raise ShapeError(f"{op}: weight must be {w_layout}, got {got}")
    same_device(op, x, weight)
    if weight.shape[1] * groups != x.shape[1]:
        raise ShapeError(f"{op}: input has {x.shape[1]} channels but weight "
                         f"{fmt(weight.shape)} with groups={groups} expects "
                         f"{weight.shape[1] * groups}")
    if weight.shape[0] % groups:
        raise ShapeError(f"{op}: weight {fmt(weight.shape)} has {weight.shape[0]} output "
                         f"channels, not a multiple of groups={groups}")
    if weight.dtype is not x.dtype:
        raise DTypeError(f"{op}: input and weight dtypes differ ({x.dtype}, {weight.dtype})")


@autocast_op("conv2d")
def conv2d(x: Tensor, weight: Tensor, stride: IntOrPair = 1, padding: IntOrPair = 0,
           dilation: IntOrPair = 1, groups: int = 1) -> Tensor:
    """2-d cross-correlation (no bias): the backend's conv2d where it has one and takes the
    geometry (base.FastConv), else im2col and one batched GEMM, dilation and groups by
    composition."""
    groups = _groups("conv2d", groups)
    _check_conv("conv2d", x, weight, "[N, C, H, W]", "[out, in/groups, kh, kw]", groups)
    dilation = pair(dilation, "dilation", "conv2d", 1)
    spans = [d * (k - 1) + 1 for d, k in zip(dilation, weight.shape[2:])]
    _, stride, padding, out_hw = _conv_geometry("conv2d", x.shape, spans, stride, padding)
    be = x._backend
    if groups > 1 or dilation != (1, 1):
        out = fast_path(be, "conv2d", x._data, weight._data, stride, padding, dilation, groups)
        if out is NotImplemented:
            return _composed_conv(x, weight, stride, padding, dilation, groups)
    else:
        out = _conv2d_data(be, x._data, weight._data, stride, padding, out_hw)
    return record(out, be, O.Conv2d(x, weight, stride, padding, dilation, groups), x, weight)


def _conv2d_data(be: Backend, x: Storage, w: Storage, stride: tuple[int, ...],
                 padding: tuple[int, ...], out_hw: tuple[int, ...]) -> Storage:
    """The forward of a validated 2-d convolution on storage: the backend's conv2d where it
    has one and takes this geometry (base.FastConv), else im2col and one batched GEMM."""
    out = fast_path(be, "conv2d", x, w, stride, padding, (1, 1), 1)
    if out is NotImplemented:
        (n, _, _, _), (o, c, kh, kw) = x.shape, w.shape
        cols = be.im2col(x, (kh, kw), stride, padding)
        out = be.reshape(be.matmul(be.reshape(w, (o, c * kh * kw)), cols), (n, o, *out_hw))
    return out


@autocast_op("conv1d")
def conv1d(x: Tensor, weight: Tensor, stride: IntOrOne = 1, padding: IntOrOne = 0,
           dilation: IntOrOne = 1, groups: int = 1) -> Tensor:
    """1-d cross-correlation (no bias): a 2-d one with a height of 1."""
    groups = _groups("conv1d", groups)
    _check_conv("conv1d", x, weight, "[N, C, L]", "[out, in/groups, k]", groups)
    stride = _single(stride, "stride", 1)
    padding = _single(padding, "padding", 0)
    dilation = _single(dilation, "dilation", 1)
    if groups > 1 or dilation != 1:
        y = conv2d(x.unsqueeze(2), weight.unsqueeze(2), (1, stride), (0, padding),
                   (1, dilation), groups)
        return y.squeeze(2)
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


def _groups(op: str, groups: Any) -> int:
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ShapeError(f"{op}: groups must be an int >= 1, got {groups!r}")
    return groups


def _composed_conv(x: Tensor, weight: Tensor, stride: Any, padding: Any,
                   dilation: tuple[int, ...], groups: int) -> Tensor:
    """A grouped and/or dilated 2-d convolution where the backend's conv2d does not take
    it: each group's channel slice convolved with its slice of the kernel (dilated by
    zeros between taps), concatenated on channels."""
    for dim, d in ((2, dilation[0]), (3, dilation[1])):
        weight = dilate(weight, dim, d)
    if groups == 1:
        return conv2d(x, weight, stride, padding)
    c, o = x.shape[1] // groups, weight.shape[0] // groups
    return cat([conv2d(x.narrow(1, g * c, c), weight.narrow(0, g * o, o), stride, padding)
                for g in range(groups)], 1)


def dilate(t: Tensor, dim: int, factor: int) -> Tensor:
    """`t` with factor - 1 zeros between consecutive entries along `dim` (size k becomes
    (k - 1) * factor + 1): each entry gets zeros after it, and the trailing ones are cut."""
    if factor == 1 or t.shape[dim] == 0:
        return t
    size = t.shape[dim]
    spread = t.unsqueeze(dim + 1).pad([0, 0] * (t.ndim - dim - 1) + [0, factor - 1])
    spread = spread.reshape(*t.shape[:dim], size * factor, *t.shape[dim + 1:])
    return spread.narrow(dim, 0, (size - 1) * factor + 1)


def flip(t: Tensor, dims: Sequence[int]) -> Tensor:
    """`t` reversed along each of `dims` (kernel-sized dims: one narrow per entry)."""
    for dim in dims:
        t = cat([t.narrow(dim, i, 1) for i in reversed(range(t.shape[dim]))], dim)
    return t


@autocast_op("conv_transpose2d")
def conv_transpose2d(x: Tensor, weight: Tensor, stride: IntOrPair = 1, padding: IntOrPair = 0,
                     output_padding: IntOrPair = 0, groups: int = 1,
                     dilation: IntOrPair = 1) -> Tensor:
    """The adjoint of conv2d with respect to its input (no bias): x [N, C_in, H, W] and
    weight [C_in, C_out/groups, kh, kw] give [N, C_out, H_out, W_out] with
    H_out = (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1."""
    op = "conv_transpose2d"
    groups = _groups(op, groups)
    check_input(op, x)
    if not isinstance(weight, AnyTensor) or weight.ndim != 4:
        got = fmt(weight.shape) if isinstance(weight, AnyTensor) else type_name(weight)
        raise ShapeError(f"{op}: weight must be [in, out/groups, kh, kw], got {got}")
    same_device(op, x, weight)
    if weight.dtype is not x.dtype:
        raise DTypeError(f"{op}: input and weight dtypes differ ({x.dtype}, {weight.dtype})")
    if weight.shape[0] != x.shape[1] or x.shape[1] % groups:
        raise ShapeError(f"{op}: input has {x.shape[1]} channels but weight "
                         f"{fmt(weight.shape)} with groups={groups} expects {weight.shape[0]} "
                         f"(a multiple of groups)")
    stride = pair(stride, "stride", op, 1)
    padding = pair(padding, "padding", op, 0)
    output_padding = pair(output_padding, "output_padding", op, 0)
    dilation = pair(dilation, "dilation", op, 1)
    for i in range(2):
        if output_padding[i] >= max(stride[i], dilation[i]):
            raise ShapeError(f"{op}: output_padding {output_padding} must be smaller than "
                             f"stride {stride} or dilation {dilation}")
        size = ((x.shape[2 + i] - 1) * stride[i] - 2 * padding[i]
                + dilation[i] * (weight.shape[2 + i] - 1) + output_padding[i] + 1)
        if size < 1:
            raise ShapeError(f"{op}: input {fmt(x.shape)} and weight {fmt(weight.shape)} give "
                             f"an empty output (stride {stride}, padding {padding})")
    spread = dilate(dilate(x, 2, stride[0]), 3, stride[1])
    edge = [dilation[i] * (weight.shape[2 + i] - 1) - padding[i] for i in range(2)]
    spread = spread.pad([edge[1], edge[1] + output_padding[1],
                         edge[0], edge[0] + output_padding[0]])
    c_in, c_out, kh, kw = weight.shape
    kernel = weight.reshape(groups, c_in // groups, c_out, kh, kw).transpose(1, 2)
    kernel = flip(kernel.reshape(groups * c_out, c_in // groups, kh, kw), (2, 3))
    return conv2d(spread, kernel, 1, 0, dilation, groups)


@autocast_op("conv_transpose1d")
def conv_transpose1d(x: Tensor, weight: Tensor, stride: IntOrOne = 1, padding: IntOrOne = 0,
                     output_padding: IntOrOne = 0, groups: int = 1,
                     dilation: IntOrOne = 1) -> Tensor:
    """conv_transpose2d of [N, C_in, L] with weight [C_in, C_out/groups, k], height 1."""
    check_input("conv_transpose1d", x, "[N, C, L]")
    if not isinstance(weight, AnyTensor) or weight.ndim != 3:
        got = fmt(weight.shape) if isinstance(weight, AnyTensor) else type_name(weight)
        raise ShapeError(f"conv_transpose1d: weight must be [in, out/groups, k], got {got}")
    args = [_single(v, name, low) for v, name, low in ((stride, "stride", 1),
            (padding, "padding", 0), (output_padding, "output_padding", 0),
            (dilation, "dilation", 1))]
    y = conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), (1, args[0]), (0, args[1]),
                         (0, args[2]), groups, (1, args[3]))
    return y.squeeze(2)


def same_padding(op: str, kernel: Sequence[int], dilation: Sequence[int],
                 stride: Sequence[int]) -> tuple[list[int], list[int]]:
    """padding='same': the (symmetric padding, extra right-side padding) per spatial dim
    keeping the size at stride 1; the odd pixel of an even total goes to the right, as
    PyTorch."""
    if any(s != 1 for s in stride):
        raise ArgumentError(f"{op}: padding='same' needs stride 1, got stride {tuple(stride)}")
    total = [d * (k - 1) for k, d in zip(kernel, dilation)]
    return [t // 2 for t in total], [t % 2 for t in total]
