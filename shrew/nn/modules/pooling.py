"""Pooling layers: modules holding nn.functional.pooling's arguments, with PyTorch's names
and defaults (Fold and Unfold: fold.py)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ...typing import IntOrPair


__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


class _MaxPool(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.padding, self.dilation = kernel_size, padding, dilation
        self.stride = kernel_size if stride is None else stride
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPool):
    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class MaxPool2d(_MaxPool):
    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class MaxPool3d(_MaxPool):
    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool1d(Module):
    def __init__(self, kernel_size: int, stride: int | None = None, padding: int = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = kernel_size if stride is None else stride
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    def __init__(self, kernel_size: IntOrPair, stride: IntOrPair | None = None,
                 padding: IntOrPair = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = kernel_size if stride is None else stride
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePool(Module):
    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptivePool):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _MaxUnpool(Module):
    """kernel_size, stride and padding kept as tuples of the layer's dims, as PyTorch's."""

    dims = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size, self.padding = self._tuple(kernel_size), self._tuple(padding)
        self.stride = self.kernel_size if stride is None else self._tuple(stride)

    def _tuple(self, value: Any) -> Any:
        return (value,) * self.dims if isinstance(value, int) else value

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    dims = 1

    def forward(self, input: Tensor, indices: Tensor,  # noqa: A002
                output_size: Sequence[int] | None = None) -> Tensor:
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool2d(_MaxUnpool):
    def forward(self, input: Tensor, indices: Tensor,  # noqa: A002
                output_size: Sequence[int] | None = None) -> Tensor:
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool3d(_MaxUnpool):
    dims = 3

    def forward(self, input: Tensor, indices: Tensor,  # noqa: A002
                output_size: Sequence[int] | None = None) -> Tensor:
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)
