"""unfold and fold as functions: sliding blocks to columns (im2col) and back (col2im); a
dilated kernel spans more taps, every dilation-th one kept."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...core.errors import ShapeError
from ...core.shape import fmt, pair, window_counts
from ...ops.conv import col2im, dilate, im2col
from ..._tensor import Tensor
from ._checks import tensor_arg
from .pooling import _batched

if TYPE_CHECKING:
    from ...typing import IntOrPair


def _patch_args(op: str, kernel_size: Any, dilation: Any, padding: Any,
                stride: Any) -> tuple[tuple[int, ...], ...]:
    return (pair(kernel_size, "kernel_size", op, 1), pair(dilation, "dilation", op, 1),
            pair(padding, "padding", op, 0), pair(stride, "stride", op, 1))


def unfold(input: Tensor, kernel_size: IntOrPair, dilation: IntOrPair = 1,  # noqa: A002
           padding: IntOrPair = 0, stride: IntOrPair = 1) -> Tensor:
    """Every sliding block of [N, C, H, W] (or [C, H, W]) as a column: [N, C*kh*kw, L],
    channel-major, L the blocks in row-major order."""
    x, added = _batched("unfold", input, 2)
    kernel, dilation, padding, stride = _patch_args("unfold", kernel_size, dilation, padding,
                                                    stride)
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    cols = im2col(x, spans, stride, padding)
    if dilation != (1, 1):   # keep every dilation-th tap of the spanning window
        n, c, length = x.shape[0], x.shape[1], cols.shape[2]
        cols = cols.reshape(n, c, *spans, length)[:, :, ::dilation[0], ::dilation[1]]
        cols = cols.reshape(n, c * kernel[0] * kernel[1], length)
    return cols.squeeze(0) if added else cols


def fold(input: Tensor, output_size: IntOrPair, kernel_size: IntOrPair,  # noqa: A002
         dilation: IntOrPair = 1, padding: IntOrPair = 0, stride: IntOrPair = 1) -> Tensor:
    """The adjoint of unfold: columns [N, C*kh*kw, L] (or [C*kh*kw, L]) summed back into
    an [N, C, *output_size] image, overlapping blocks added."""
    op = "fold"
    if tensor_arg(op, "input", input).ndim not in (2, 3):
        raise ShapeError(f"{op}: input must be [N, C*kh*kw, L] or [C*kh*kw, L], got "
                         f"{fmt(input.shape)}")
    cols, added = (input.unsqueeze(0), True) if input.ndim == 2 else (input, False)
    kernel, dilation, padding, stride = _patch_args(op, kernel_size, dilation, padding, stride)
    size = pair(output_size, "output_size", op, 1)
    (n, ckk, length), kk = cols.shape, kernel[0] * kernel[1]
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    blocks = window_counts(size, kernel, stride, padding, dilation)
    if ckk % kk or min(blocks) < 1 or math.prod(blocks) != length:
        raise ShapeError(f"{op}: input {fmt(input.shape)} must be [N, C*{kk}, {blocks[0]}*"
                         f"{blocks[1]}] for output_size {size}, kernel {kernel}, dilation "
                         f"{dilation}, padding {padding}, stride {stride}")
    c = ckk // kk
    if dilation != (1, 1):   # zeros between the taps: the spanning window's columns
        spread = cols.reshape(n, c, *kernel, length)
        spread = dilate(dilate(spread, 2, dilation[0]), 3, dilation[1])
        cols = spread.reshape(n, c * spans[0] * spans[1], length)
    y = col2im(cols, (n, c, *size), spans, stride, padding)
    return y.squeeze(0) if added else y
