"""Pooling: max_pool2d and avg_pool2d over [N, C, H, W] inputs, and max_pool3d and
avg_pool3d over [N, C, D, H, W], with PyTorch's arguments (pool.cl on OpenCL and CUDA).
A 3-d pool is the 2-d one's primitive and Op given 5-d arrays and sizes with three
entries.  The 1-d, unbatched, adaptive and unpooling forms, and unfold/fold, are
compositions in nn/functional/pooling.py and fold.py."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import op as O
from ..core.errors import ArgumentError, ShapeError, ShrewTypeError
from ..core.fields import record, wrap
from ..core.shape import fmt, ntuple, window_count
from .conv import check_input

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import IntOrPair

PoolGeometry = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def is_default_stride(stride: object) -> bool:
    return stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0)


def window_pair(value: object, name: str, op: str, minimum: int,
                dims: int = 2) -> tuple[int, ...]:
    """A pooling argument as a `dims`-tuple (a pair by default): an int, a 1-sequence
    (every dim alike, as PyTorch's pools take it) or a `dims`-sequence."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    return ntuple(value, dims, name, op, minimum)


def _dims(op: str) -> int:
    """The spatial dims of a pool named op ("max_pool3d": 3)."""
    return 3 if op.endswith("3d") else 2


def pool_geometry(op: str, x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None,
                  padding: IntOrPair, dilation: IntOrPair = 1,
                  ceil_mode: bool = False) -> PoolGeometry:
    """Validated (kernel, stride, padding, dilation) tuples of a 2-d (or, op ending in
    "3d", 3-d) pooling of x, with PyTorch's checks: padding at most half the kernel, at
    least one window per dim."""
    dims = _dims(op)
    check_input(op, x, "[N, C, D, H, W]" if dims == 3 else "[N, C, H, W]")
    kernel = window_pair(kernel_size, "kernel_size", op, 1, dims)
    # PyTorch takes stride=None and an empty stride (its modules' default) as the kernel.
    stride = kernel if is_default_stride(stride) else window_pair(stride, "stride", op, 1,
                                                                  dims)
    padding = window_pair(padding, "padding", op, 0, dims)
    dilation = window_pair(dilation, "dilation", op, 1, dims)
    if any(p * 2 > k for p, k in zip(padding, kernel)):
        raise ShapeError(f"{op}: padding {padding} must be at most half the kernel {kernel}")
    for size, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation):
        out = window_count(size, k, s, p, d, ceil_mode)
        if out < 1:
            raise ShapeError(f"{op}: kernel size {k} with dilation {d} spans more than the "
                             f"padded input size {size + 2 * p} (input {fmt(x.shape)}, "
                             f"padding {padding})")
        # A window wholly in the padding (an input smaller than the dilation) has no
        # element to name; PyTorch names one outside the plane.  Refused here.
        starts = (i * s - p for i in range(out))
        if d > 1 and any(not any(0 <= start + t * d < size for t in range(k))
                         for start in starts if not 0 <= start < size):
            raise ShapeError(f"{op}: a window of kernel {kernel}, dilation {dilation} over "
                             f"input {fmt(x.shape)} with padding {padding} holds only padding")
    return kernel, stride, padding, dilation


def _flag(op: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ShrewTypeError(f"{op}: {name} must be a bool, got {value!r}")
    return value


def max_pool2d(x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: IntOrPair = 0, dilation: IntOrPair = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """The maximum of each window of a [N, C, H, W] input (stride defaults to the kernel;
    padding counts as -inf); with return_indices, also each maximum's flat h*W+w index
    into its input plane."""
    return _max_pool("max_pool2d", x, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """max_pool2d of a [N, C, D, H, W] input; the index is the flat d*H*W + h*W + w."""
    return _max_pool("max_pool3d", x, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _max_pool(op: str, x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: Any, return_indices: bool) -> Tensor | tuple[Tensor, Tensor]:
    ceil_mode = _flag(op, "ceil_mode", ceil_mode)
    kernel, stride, padding, dilation = pool_geometry(op, x, kernel_size, stride, padding,
                                                      dilation, ceil_mode)
    values, indices = x._backend.max_pool2d(x._data, kernel, stride, padding, dilation,
                                            ceil_mode)
    index = wrap(indices, x._backend)
    y = record(values, x._backend, O.MaxPool2d(x, kernel, stride, dilation, index), x)
    return (y, index) if return_indices else y


def avg_pool2d(x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: IntOrPair = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window of a [N, C, H, W] input (stride defaults to the kernel): the
    sum over divisor_override if given, else over the window's size inside the padded
    input (count_include_pad) or inside the input."""
    return _avg_pool("avg_pool2d", x, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """avg_pool2d of a [N, C, D, H, W] input."""
    return _avg_pool("avg_pool3d", x, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def _avg_pool(op: str, x: Tensor, kernel_size: Any, stride: Any, padding: Any,
              ceil_mode: Any, count_include_pad: Any, divisor_override: Any) -> Tensor:
    ceil_mode = _flag(op, "ceil_mode", ceil_mode)
    count_include_pad = _flag(op, "count_include_pad", count_include_pad)
    if divisor_override is not None and (not isinstance(divisor_override, int)
                                         or isinstance(divisor_override, bool)
                                         or divisor_override == 0):
        raise ArgumentError(f"{op}: divisor_override must be a non-zero int, got "
                            f"{divisor_override!r}")
    kernel, stride, padding, _ = pool_geometry(op, x, kernel_size, stride, padding, 1,
                                               ceil_mode)
    if _dims(op) == 3 and any(size < k for size, k in zip(x.shape[2:], kernel)):
        # PyTorch's avg_pool3d (not its 2-d one) wants the kernel inside the unpadded input
        raise ShapeError(f"{op}: input {fmt(x.shape)} is smaller than the kernel {kernel}")
    data = x._backend.avg_pool2d(x._data, kernel, stride, padding, ceil_mode,
                                 count_include_pad, divisor_override)
    return record(data, x._backend, O.AvgPool2d(x, kernel, stride, padding, ceil_mode,
                                                count_include_pad, divisor_override), x)
