"""Layers with weights (Linear, Conv1d, Conv2d, Embedding), pooling, dropout and the
shape layers (Flatten, Unflatten, Identity)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ShrewError
from ..functions import zeros
from ..shape import normalize_dim
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

if TYPE_CHECKING:
    from ..tensor import Tensor
    from ..typing import IntOrPair


def _default_init(weight: Parameter, bias: Parameter | None) -> None:
    """PyTorch's default for Linear and Conv: kaiming_uniform(a=sqrt(5)), which is
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the bias from the same range."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        bound = 1.0 / math.sqrt(init.fans(weight)[0])
        init.uniform_(bias, -bound, bound)


def _positive(layer: str, **sizes: object) -> None:
    for name, value in sizes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ShrewError(f"{layer}: {name} must be a positive int, got {value!r}")


class Linear(Module):
    """y = x @ weight.T + bias, weight [out_features, in_features]."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        _positive("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(zeros(out_features, in_features))
        self.bias = Parameter(zeros(out_features)) if bias else None
        _default_init(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class _ConvNd(Module):
    def __init__(self, in_channels: int, out_channels: int, kernel: tuple[int, ...],
                 stride: Any, padding: Any, bias: bool) -> None:
        super().__init__()
        _positive(type(self).__name__, in_channels=in_channels, out_channels=out_channels)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel, stride, padding
        self.weight = Parameter(zeros(out_channels, in_channels, *kernel))
        self.bias = Parameter(zeros(out_channels)) if bias else None
        _default_init(self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")


class Conv1d(_ConvNd):
    """[N, C_in, L] -> [N, C_out, L_out]."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, bias: bool = True) -> None:
        _positive("Conv1d", kernel_size=kernel_size)
        super().__init__(in_channels, out_channels, (kernel_size,), stride, padding, bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv1d(x, self.weight, self.bias, self.stride, self.padding)


class Conv2d(_ConvNd):
    """[N, C_in, H, W] -> [N, C_out, H_out, W_out]; kernel_size, stride and padding are
    ints or pairs."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntOrPair,
                 stride: IntOrPair = 1, padding: IntOrPair = 0, bias: bool = True) -> None:
        kernel = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        if len(kernel) != 2:
            raise ShrewError(f"Conv2d: kernel_size must be an int or a pair, got {kernel_size!r}")
        _positive("Conv2d", kernel_height=kernel[0], kernel_width=kernel[1])
        super().__init__(in_channels, out_channels, kernel, stride, padding, bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding)


class Embedding(Module):
    """A table of num_embeddings vectors, looked up by integer index; weights ~ N(0, 1)."""

    def __init__(self, num_embeddings: int, embedding_dim: int) -> None:
        super().__init__()
        _positive("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        self.weight = init.normal_(Parameter(zeros(num_embeddings, embedding_dim)))

    def forward(self, idx: Tensor) -> Tensor:
        return F.embedding(idx, self.weight)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, {self.weight.shape[1]}"


class _Pool2d(Module):
    def __init__(self, kernel_size: IntOrPair, stride: IntOrPair | None = None,
                 padding: IntOrPair = 0) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_Pool2d):
    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool2d):
    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class Dropout(Module):
    """Zeroes elements with probability p while training; the identity in eval()."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ShrewError(f"{type(self).__name__}: p must lie in [0, 1], got {p!r}")
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    """Flatten dims start_dim..end_dim (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim `dim` into `unflattened_size` (one entry may be -1)."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        d = normalize_dim(self.dim, x.ndim, "Unflatten")
        return x.reshape(*x.shape[:d], *self.unflattened_size, *x.shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments, as PyTorch's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input
