"""Pooling on a numpy-compatible array module: the max_pool2d and avg_pool2d primitives
(kernels/pool.cl on OpenCL and CUDA), and the optional max_pool2d_backward of
base.FastPool."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...core.shape import window_counts
from ..base import Storage
from ..kernels import accumulator, avg_pool_divisor, max_pool_fill
from .index import flat_offsets, store_distinct


def windows(xp: Any, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
            dilation: tuple, out_hw: tuple, fill: float) -> Storage:
    """A strided view [N, C, Ho, Wo, kh, kw] of the pooling windows' taps (no copy of
    the windows): x padded with `fill` on the left by `padding` and on the right as
    far as the last (ceil_mode) window reaches, taps `dilation` apart."""
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    right = [max(p, (o - 1) * s + span - size - p) for size, o, s, span, p
             in zip(x.shape[2:], out_hw, stride, spans, padding)]
    if any(padding) or any(right):
        x = xp.pad(x, ((0, 0), (0, 0), (padding[0], right[0]), (padding[1], right[1])),
                   mode="constant", constant_values=fill)
    view = xp.lib.stride_tricks.sliding_window_view(x, spans, axis=(2, 3))
    (ho, wo), (sh, sw), (dh, dw) = out_hw, stride, dilation
    return view[:, :, :sh * (ho - 1) + 1:sh, :sw * (wo - 1) + 1:sw, ::dh, ::dw]


class PoolPrimitives:
    """ArrayModuleBackend's pooling primitives, on ``self.xp``."""

    xp: Any

    def max_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   dilation: tuple, ceil_mode: bool) -> tuple:
        xp = self.xp
        n, c, h, w = x.shape
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
        out_hw = window_counts((h, w), kernel, stride, padding, dilation, ceil_mode)
        fill = max_pool_fill(x.dtype)
        win = windows(xp, x, kernel, stride, padding, dilation, out_hw, fill)
        ho, wo = out_hw
        kk = kh * kw
        offsets = win.transpose(4, 5, 0, 1, 2, 3)  # [kh, kw, N, C, Ho, Wo]
        if dh * (kh - 1) < sh and dw * (kw - 1) < sw:
            # Windows that do not overlap: one strided copy (no bigger than x) makes every
            # offset's plane contiguous, so the passes below run on numpy's fast path.
            offsets = xp.ascontiguousarray(offsets)
        offsets = [offsets[k // kw, k % kw] for k in range(kk)]
        # Branch-free: the maximum first (np.maximum propagates NaN), then the first
        # offset in row-major window order that attains it (a NaN matches a NaN), as
        # argmax would: arg = the number of leading offsets that do not match.
        values = offsets[0].copy()
        for candidate in offsets[1:]:
            xp.maximum(values, candidate, out=values)
        nan = x.dtype.kind == "f" and bool(xp.isnan(values).any())
        arg = xp.zeros(values.shape, dtype=np.uint8 if kk < 256 else np.int64)
        missed = None
        for candidate in offsets[:-1]:
            miss = candidate != values
            if nan:
                miss &= ~xp.isnan(candidate)
            missed = miss if missed is None else xp.logical_and(missed, miss, out=missed)
            arg += missed
        index = self.window_index(arg, kernel, stride, padding, dilation, w)
        if ph or pw or ceil_mode:
            rows, cols = self._window_origins(out_hw, stride, padding)
            # A window whose maximum is the fill value (all -inf, say) may have matched it
            # on padding.  Its first tap inside the plane attains the maximum too, and is
            # the one to name, as PyTorch does: the gradient must land inside the input.
            top = xp.where(rows < 0, rows + (-rows + dh - 1) // dh * dh, rows)
            left = xp.where(cols < 0, cols + (-cols + dw - 1) // dw * dw, cols)
            index = xp.where(values == fill, top.reshape(ho, 1) * w + left, index)
        return values, index

    def window_index(self, arg: Storage, kernel: tuple, stride: tuple, padding: tuple,
                     dilation: tuple, width: int) -> Storage:
        """max_pool2d's int64 index from `arg` [N, C, Ho, Wo], each window's offset in
        row-major order (kh * kw of them): the flat index, in an input plane `width` wide,
        of the window's origin plus the offset's (a small table looked up per output)."""
        xp = self.xp
        (kh, kw), (dh, dw) = kernel, dilation
        ho, wo = arg.shape[2:]
        k = xp.arange(kh * kw, dtype=np.int64)
        table = (k // kw) * dh * width + (k % kw) * dw
        rows, cols = self._window_origins((ho, wo), stride, padding)
        index = xp.take(table, arg)
        index += rows.reshape(ho, 1) * width + cols.reshape(1, wo)
        return index

    def _window_origins(self, out_hw: tuple, stride: tuple, padding: tuple) -> tuple:
        """The input row of each output row's window origin, and the input column of each
        output column's (negative inside the padding)."""
        return tuple(self.xp.arange(n, dtype=np.int64) * s - p
                     for n, s, p in zip(out_hw, stride, padding))

    def max_pool2d_backward(self, g: Storage, index: Storage, shape: tuple, kernel: tuple,
                            stride: tuple, dilation: tuple) -> Storage:  # base.FastPool
        # Windows that do not overlap send each input element at most one gradient, so
        # scatter_add's store serves without its check that no target repeats.
        if any(d * (k - 1) >= s for k, s, d in zip(kernel, stride, dilation)):
            return NotImplemented
        n, c, h, w = shape
        per_plane = index.shape[2] * index.shape[3]   # not -1: N may be 0
        flat = flat_offsets(self.xp, (n, c, h * w), 2, index.reshape(n, c, per_plane))
        out = self.xp.zeros(n * c * h * w, dtype=g.dtype)
        return store_distinct(out, flat, g).reshape(shape)

    def avg_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   ceil_mode: bool, count_include_pad: bool,
                   divisor_override: int | None) -> Storage:
        xp = self.xp
        h, w = x.shape[2:]
        out_hw = window_counts((h, w), kernel, stride, padding, ceil_mode=ceil_mode)
        win = windows(xp, x, kernel, stride, padding, (1, 1), out_hw, 0)
        acc = accumulator(x.dtype)
        if divisor_override is None and count_include_pad and not ceil_mode:
            # every window's divisor kh*kw
            return win.mean(axis=(-2, -1), dtype=acc).astype(x.dtype, copy=False)
        total = win.sum(axis=(-2, -1), dtype=acc)
        divisor = avg_pool_divisor((h, w), kernel, stride, padding, out_hw,
                                   count_include_pad, divisor_override)
        # Divided in float64 and rounded once to x's dtype (integers truncate, as mean's).
        return (total / xp.asarray(divisor)).astype(x.dtype, copy=False)
