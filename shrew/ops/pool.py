"""Pooling: max_pool2d and avg_pool2d over [N, C, H, W] inputs (pool.cl on OpenCL and
CUDA)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import op as O
from ..errors import ShapeError
from ..factory import record, wrap
from ..shape import conv_output_size, pair
from .conv import check_input

if TYPE_CHECKING:
    from ..tensor import Tensor
    from ..typing import IntOrPair


def _pool_geometry(op: str, x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None,
                   padding: IntOrPair) -> tuple[tuple[int, ...], ...]:
    check_input(op, x)
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
    index = wrap(indices, x._backend)
    return record(values, x._backend, O.MaxPool2d(x, kernel, stride, padding, index), x)


def avg_pool2d(x: Tensor, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: IntOrPair = 0) -> Tensor:
    """The mean of each window of a [N, C, H, W] input (stride defaults to the kernel;
    padded zeros count in the mean)."""
    kernel, stride, padding = _pool_geometry("avg_pool2d", x, kernel_size, stride, padding)
    data = x._backend.avg_pool2d(x._data, kernel, stride, padding)
    return record(data, x._backend, O.AvgPool2d(x, kernel, stride, padding), x)
