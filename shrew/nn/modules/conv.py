"""The convolution layers: Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
ConvTranspose3d, with
PyTorch's stride, padding (sizes, 'valid', 'same'), dilation, groups and padding_mode."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.errors import ShrewTypeError, ShrewValueError, UnsupportedError
from ...ops.conv import same_padding
from ...ops.creation import zeros
from .. import functional as F
from .linear import _default_init, _positive
from .module import Module, place
from ..parameter import Parameter

if TYPE_CHECKING:
    from ...typing import DeviceLike, DTypeLike
from ..._tensor import Tensor


__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(value: Any, dims: int, name: str, layer: str) -> tuple[int, ...]:
    """An int or a `dims`-tuple of ints as a tuple (kernel_size, stride, ...)."""
    out = tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims
    if len(out) != dims or not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
        raise ShrewTypeError(f"{layer}: {name} must be an int or a tuple of {dims} ints, "
                             f"got {value!r}")
    return out


class _ConvNd(Module):
    """The shared constructor: sizes as tuples, the weight [out, in/groups, *kernel] (or
    [in, out/groups, *kernel] when transposed) and PyTorch's default initialisation."""

    def __init__(self, dims: int, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any, padding: Any, dilation: Any, groups: int, bias: bool,
                 padding_mode: str, transposed: bool = False, output_padding: Any = 0) -> None:
        super().__init__()
        layer = type(self).__name__
        _positive(layer, in_channels=in_channels, out_channels=out_channels, groups=groups)
        if in_channels % groups or out_channels % groups:
            raise ShrewValueError(f"{layer}: in_channels {in_channels} and out_channels "
                                  f"{out_channels} must be divisible by groups={groups}")
        if padding_mode not in _PADDING_MODES:
            raise ShrewValueError(f"{layer}: padding_mode must be one of "
                                  f"{', '.join(_PADDING_MODES)}, got {padding_mode!r}")
        if isinstance(padding, str):
            if padding not in ("valid", "same") or transposed:
                allowed = "a size" if transposed else "a size, 'valid' or 'same'"
                raise ShrewValueError(f"{layer}: padding must be {allowed}, got {padding!r}")
        else:
            padding = _tuple(padding, dims, "padding", layer)
        kernel = _tuple(kernel_size, dims, "kernel_size", layer)
        _positive(layer, **{f"kernel_size[{i}]": k for i, k in enumerate(kernel)})
        if transposed and padding_mode != "zeros":
            raise UnsupportedError(f"{layer}: only padding_mode='zeros' is supported, as PyTorch")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel
        self.stride = _tuple(stride, dims, "stride", layer)
        self.padding, self.dilation = padding, _tuple(dilation, dims, "dilation", layer)
        self.output_padding = _tuple(output_padding, dims, "output_padding", layer)
        self.groups, self.padding_mode, self.transposed = groups, padding_mode, transposed
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups))
        self.weight = Parameter(zeros(*shape, *kernel))
        self.bias = Parameter(zeros(out_channels)) if bias else None
        _default_init(self.weight, self.bias)

    def _padded(self, x: Tensor) -> tuple[Tensor, Any]:
        """For padding_mode other than zeros: the input padded by F.pad in that mode, and
        padding 0 for the convolution itself."""
        if self.padding_mode == "zeros" or self.padding == "valid":
            return x, self.padding
        if self.padding == "same":
            symmetric, extra = same_padding(type(self).__name__, self.kernel_size,
                                            self.dilation, self.stride)
            sides = [(p, p + e) for p, e in zip(symmetric, extra)]
        else:
            sides = [(p, p) for p in self.padding]
        pads = [p for lo_hi in reversed(sides) for p in lo_hi]
        return F.pad(x, pads, mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        dims = len(self.kernel_size)
        defaults = {"padding": (0,) * dims, "dilation": (1,) * dims,
                    "output_padding": (0,) * dims, "groups": 1, "padding_mode": "zeros"}
        for name, default in defaults.items():
            if getattr(self, name) != default:   # unquoted, as PyTorch: padding=same
                text += f", {name}={getattr(self, name)}"
        return text + (", bias=False" if self.bias is None else "")


class Conv1d(_ConvNd):
    """[N, C_in, L] -> [N, C_out, L_out]."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros",
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode)
        place(self, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        x, padding = self._padded(x)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    """[N, C_in, H, W] -> [N, C_out, H_out, W_out]; sizes are ints or pairs."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros",
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode)
        place(self, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        x, padding = self._padded(x)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class ConvTranspose1d(_ConvNd):
    """[N, C_in, L] -> [N, C_out, L_out], the adjoint of Conv1d's input gradient."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros",
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, True, output_padding)
        place(self, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)


class ConvTranspose2d(_ConvNd):
    """[N, C_in, H, W] -> [N, C_out, H_out, W_out], the adjoint of Conv2d's input gradient."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros",
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, True, output_padding)
        place(self, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)


class Conv3d(_ConvNd):
    """[N, C_in, D, H, W] -> [N, C_out, D_out, H_out, W_out]; sizes are ints or triples."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros",
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode)
        place(self, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        x, padding = self._padded(x)
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class ConvTranspose3d(_ConvNd):
    """[N, C_in, D, H, W] -> [N, C_out, D_out, H_out, W_out], the adjoint of Conv3d's input
    gradient."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros",
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, True, output_padding)
        place(self, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv_transpose3d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)
