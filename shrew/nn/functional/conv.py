"""The convolutions as functions: conv1d, conv2d and their transposes, with PyTorch's
padding forms (a size, 'valid', 'same') and an optional bias."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.autocast import autocast_op
from ...ops.conv import conv1d as _conv1d
from ...ops.conv import conv2d as _conv2d
from ...ops.conv import conv_transpose1d as _conv_transpose1d
from ...ops.conv import conv_transpose2d as _conv_transpose2d
from ...ops.conv import same_padding
from ...ops.elementwise.recorded import add_bias
from ...core.errors import ArgumentError
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor
from .linear import _check_bias

if TYPE_CHECKING:
    from ...typing import IntOrPair

    IntOrOne = int | tuple[int, ...]  # a 1-d size: an int or a 1-tuple


@autocast_op("conv1d")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrOne = 1,
           padding: IntOrOne | str = 0, dilation: IntOrOne = 1, groups: int = 1) -> Tensor:
    """1-d convolution of [N, C_in, L] with w [C_out, C_in/groups, k], plus an optional
    bias; padding is a size, 'valid' (none) or 'same' (the output keeps the length)."""
    x, w, b = input, weight, bias  # torch's parameter names, short names below
    _check_bias("conv1d", b, _tensor("conv1d", "weight", w).shape[0])
    if _tensor("conv1d", "input", x).ndim == 2:  # unbatched [C, L]
        return conv1d(x.unsqueeze(0), w, b, stride, padding, dilation, groups).squeeze(0)
    x, pads = _resolve_padding("conv1d", x, w, stride, padding, dilation, 1)
    y = _conv1d(x, w, stride, pads[0], dilation, groups)
    return y if b is None else add_bias(y, b.reshape(-1, 1))


@autocast_op("conv2d")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrPair = 1,
           padding: IntOrPair | str = 0, dilation: IntOrPair = 1, groups: int = 1) -> Tensor:
    """2-d convolution of [N, C_in, H, W] with w [C_out, C_in/groups, kh, kw], plus an
    optional bias; padding is an int, a pair, 'valid' or 'same'."""
    x, w, b = input, weight, bias  # torch's parameter names, short names below
    _check_bias("conv2d", b, _tensor("conv2d", "weight", w).shape[0])
    if _tensor("conv2d", "input", x).ndim == 3:  # unbatched [C, H, W]
        return conv2d(x.unsqueeze(0), w, b, stride, padding, dilation, groups).squeeze(0)
    x, pads = _resolve_padding("conv2d", x, w, stride, padding, dilation, 2)
    y = _conv2d(x, w, stride, pads, dilation, groups)
    return y if b is None else add_bias(y, b.reshape(-1, 1, 1))


def _resolve_padding(op: str, x: Tensor, w: Tensor, stride: object, padding: object,
                     dilation: object, dims: int) -> tuple[Tensor, tuple]:
    """Numeric padding per spatial dim for padding given as a size, 'valid' or 'same';
    for 'same' with an odd total the input gets the extra column on its right here."""
    if not isinstance(padding, str):
        return x, (padding,) if dims == 1 else padding  # type: ignore[return-value]
    if padding == "valid":
        return x, (0,) * dims
    if padding != "same":
        raise ArgumentError(f"{op}: padding must be a size, 'valid' or 'same', got {padding!r}")
    symmetric, extra = same_padding(op, w.shape[2:], _per_dim(dilation, dims),
                                     _per_dim(stride, dims))
    if any(extra):
        x = x.pad([p for e in reversed(extra) for p in (0, e)])
    return x, tuple(symmetric)


def _per_dim(value: object, dims: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims


@autocast_op("conv_transpose1d")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: IntOrOne = 1, padding: IntOrOne = 0, output_padding: IntOrOne = 0,
                     groups: int = 1, dilation: IntOrOne = 1) -> Tensor:
    """The transposed 1-d convolution of [N, C_in, L] with w [C_in, C_out/groups, k],
    plus an optional bias."""
    x, w, b = input, weight, bias  # torch's parameter names, short names below
    _tensor("conv_transpose1d", "weight", w)
    if _tensor("conv_transpose1d", "input", x).ndim == 2:  # unbatched [C, L]
        return conv_transpose1d(x.unsqueeze(0), w, b, stride, padding, output_padding, groups,
                                dilation).squeeze(0)
    y = _conv_transpose1d(x, w, stride, padding, output_padding, groups, dilation)
    _check_bias("conv_transpose1d", b, y.shape[1])
    return y if b is None else y + b.reshape(1, -1, 1)


@autocast_op("conv_transpose2d")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: IntOrPair = 1, padding: IntOrPair = 0, output_padding: IntOrPair = 0,
                     groups: int = 1, dilation: IntOrPair = 1) -> Tensor:
    """The transposed 2-d convolution of [N, C_in, H, W] with w [C_in, C_out/groups, kh, kw],
    plus an optional bias."""
    x, w, b = input, weight, bias  # torch's parameter names, short names below
    _tensor("conv_transpose2d", "weight", w)
    if _tensor("conv_transpose2d", "input", x).ndim == 3:  # unbatched [C, H, W]
        return conv_transpose2d(x.unsqueeze(0), w, b, stride, padding, output_padding, groups,
                                dilation).squeeze(0)
    y = _conv_transpose2d(x, w, stride, padding, output_padding, groups, dilation)
    _check_bias("conv_transpose2d", b, y.shape[1])
    return y if b is None else y + b.reshape(1, -1, 1, 1)



