"""pixel_shuffle and pixel_unshuffle as functions: channels to space and back, by reshapes."""
from __future__ import annotations

from ...core.errors import ShapeError
from ...core.shape import fmt
from ..._tensor import Tensor
from ._checks import tensor_arg as _tensor


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """[*, C r^2, H, W] -> [*, C, H r, W r]: channel blocks become r x r pixel blocks."""
    x, r = _tensor("pixel_shuffle", "input", input), upscale_factor
    if x.ndim < 3 or r < 1 or x.shape[-3] % (r * r):
        raise ShapeError(f"pixel_shuffle: input must be [*, C * {r}^2, H, W], got "
                         f"{fmt(x.shape)}")
    *lead, c, h, w = x.shape
    k = len(lead)
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    y = y.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """[*, C, H r, W r] -> [*, C r^2, H, W]: the inverse of pixel_shuffle."""
    x, r = _tensor("pixel_unshuffle", "input", input), downscale_factor
    if x.ndim < 3 or r < 1 or x.shape[-1] % r or x.shape[-2] % r:
        raise ShapeError(f"pixel_unshuffle: input must be [*, C, H * {r}, W * {r}], got "
                         f"{fmt(x.shape)}")
    *lead, c, h, w = x.shape
    k = len(lead)
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    y = y.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """[N, C, *] with its channels, seen as [groups, C / groups], transposed (ShuffleNet)."""
    x = _tensor("channel_shuffle", "input", input)
    if x.ndim < 3 or groups <= 0 or x.shape[1] % groups:
        raise ShapeError(f"channel_shuffle: input must be [N, C, *] with C divisible by "
                         f"groups={groups}, got {fmt(x.shape)}")
    n, c, *rest = x.shape
    return x.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(x.shape)
