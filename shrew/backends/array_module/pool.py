"""Pooling on a numpy-compatible array module: the max_pool2d and avg_pool2d primitives
(kernels/pool.cl on OpenCL and CUDA), and the optional max_pool2d_backward of
base.FastPool, over 2 or 3 spatial dims."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...core.shape import window_counts
from ..base import Storage
from ..kernels import LOW_PRECISION, accumulator, avg_pool_divisor, max_pool_fill
from .index import flat_offsets, store_distinct


def windows(xp: Any, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
            dilation: tuple, out: tuple, fill: float) -> Storage:
    """A strided view [N, C, *out, *kernel] of the pooling windows' taps (no copy of the
    windows), over the 2 or 3 spatial dims of x: x padded with `fill` on the left by
    `padding` and on the right as far as the last (ceil_mode) window reaches, taps
    `dilation` apart."""
    dims = len(kernel)
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    right = [max(p, (o - 1) * s + span - size - p) for size, o, s, span, p
             in zip(x.shape[2:], out, stride, spans, padding)]
    if any(padding) or any(right):
        x = xp.pad(x, ((0, 0), (0, 0), *zip(padding, right)), mode="constant",
                   constant_values=fill)
    view = xp.lib.stride_tricks.sliding_window_view(x, spans, axis=tuple(range(2, 2 + dims)))
    origins = tuple(slice(None, s * (o - 1) + 1, s) for o, s in zip(out, stride))
    taps = tuple(slice(None, None, d) for d in dilation)
    return view[(slice(None), slice(None)) + origins + taps]


def plane_strides(sizes: tuple) -> tuple[int, ...]:
    """Each spatial dim's step in a flat index into a plane of `sizes` (row-major): (W, 1)
    for [H, W], (H*W, W, 1) for [D, H, W]."""
    return tuple(int(np.prod(sizes[i + 1:], dtype=np.int64)) for i in range(len(sizes)))


class PoolPrimitives:
    """ArrayModuleBackend's pooling primitives, on ``self.xp``, for 2 or 3 spatial dims."""

    xp: Any

    def max_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   dilation: tuple, ceil_mode: bool) -> tuple:
        xp = self.xp
        dims, sizes = len(kernel), x.shape[2:]
        out = window_counts(sizes, kernel, stride, padding, dilation, ceil_mode)
        fill = max_pool_fill(x.dtype)
        win = windows(xp, x, kernel, stride, padding, dilation, out, fill)
        # [*kernel, N, C, *out]: each tap offset's plane
        offsets = win.transpose(*range(2 + dims, 2 + 2 * dims), *range(2 + dims))
        if all(d * (k - 1) < s for k, s, d in zip(kernel, stride, dilation)):
            # Windows that do not overlap: one strided copy (no bigger than x) makes every
            # offset's plane contiguous, so the passes below run on numpy's fast path.
            offsets = xp.ascontiguousarray(offsets)
        offsets = [offsets[tap] for tap in np.ndindex(*kernel)]
        kk = len(offsets)
        # Branch-free: the maximum first (np.maximum propagates NaN), then the first
        # offset in row-major window order that attains it (a NaN matches a NaN), as
        # argmax would: arg = the number of leading offsets that do not match.
        values = offsets[0].copy()
        for candidate in offsets[1:]:
            xp.maximum(values, candidate, out=values)
        # (bfloat16's numpy kind is "V")
        nan = (x.dtype.kind == "f" or x.dtype in LOW_PRECISION) and bool(xp.isnan(values).any())
        arg = xp.zeros(values.shape, dtype=np.uint8 if kk < 256 else np.int64)
        missed = None
        for candidate in offsets[:-1]:
            miss = candidate != values
            if nan:
                miss &= ~xp.isnan(candidate)
            missed = miss if missed is None else xp.logical_and(missed, miss, out=missed)
            arg += missed
        index = self.window_index(arg, kernel, stride, padding, dilation, sizes)
        if any(padding) or ceil_mode:
            # A window whose maximum is the fill value (all -inf, say) may have matched it
            # on padding.  Its first tap inside the plane attains the maximum too, and is
            # the one to name, as PyTorch does: the gradient must land inside the input.
            first = 0
            for i, (origin, d, step) in enumerate(zip(
                    self._window_origins(out, stride, padding), dilation,
                    plane_strides(sizes))):
                tap = xp.where(origin < 0, origin + (-origin + d - 1) // d * d, origin)
                first = first + (tap * step).reshape([-1 if j == i else 1
                                                      for j in range(dims)])
            index = xp.where(values == fill, first, index)
        return values, index

    def window_index(self, arg: Storage, kernel: tuple, stride: tuple, padding: tuple,
                     dilation: tuple, sizes: tuple) -> Storage:
        """max_pool2d's int64 index from `arg` [N, C, *out], each window's offset in
        row-major order (prod(kernel) of them): the flat index, in an input plane of
        spatial `sizes`, of the window's origin plus the offset's (a small table looked up
        per output)."""
        xp = self.xp
        dims, steps = len(kernel), plane_strides(sizes)
        table = np.zeros(kernel, dtype=np.int64)
        for i, (k, d, step) in enumerate(zip(kernel, dilation, steps)):
            table += (np.arange(k, dtype=np.int64) * d * step).reshape(
                [-1 if j == i else 1 for j in range(dims)])
        # Each output's window origin, a plane [*out] made first: one full-size add (whose
        # broadcast numpy runs over whole planes) instead of one per spatial dim.
        origins = 0
        for i, (origin, step) in enumerate(zip(
                self._window_origins(arg.shape[2:], stride, padding), steps)):
            origins = origins + (origin * step).reshape([-1 if j == i else 1
                                                         for j in range(dims)])
        index = xp.take(xp.asarray(table.ravel()), arg)
        index += origins
        return index

    def _window_origins(self, out: tuple, stride: tuple, padding: tuple) -> tuple:
        """Per spatial dim, the input position of each output's window origin (negative
        inside the padding)."""
        return tuple(self.xp.arange(n, dtype=np.int64) * s - p
                     for n, s, p in zip(out, stride, padding))

    def max_pool2d_backward(self, g: Storage, index: Storage, shape: tuple, kernel: tuple,
                            stride: tuple, dilation: tuple) -> Storage:  # base.FastPool
        # Windows that do not overlap send each input element at most one gradient, so
        # scatter_add's store serves without its check that no target repeats.
        if any(d * (k - 1) >= s for k, s, d in zip(kernel, stride, dilation)):
            return NotImplemented
        n, c = shape[:2]
        plane, per_plane = int(np.prod(shape[2:])), int(np.prod(index.shape[2:]))  # N may be 0
        flat = flat_offsets(self.xp, (n, c, plane), 2, index.reshape(n, c, per_plane))
        out = self.xp.zeros(n * c * plane, dtype=g.dtype)
        return store_distinct(out, flat, g).reshape(shape)

    def avg_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   ceil_mode: bool, count_include_pad: bool,
                   divisor_override: int | None) -> Storage:
        xp = self.xp
        sizes, taps = x.shape[2:], tuple(range(-len(kernel), 0))
        out = window_counts(sizes, kernel, stride, padding, ceil_mode=ceil_mode)
        win = windows(xp, x, kernel, stride, padding, (1,) * len(kernel), out, 0)
        acc = accumulator(x.dtype)
        if divisor_override is None and count_include_pad and not ceil_mode:
            # every window's divisor prod(kernel)
            return win.mean(axis=taps, dtype=acc).astype(x.dtype, copy=False)
        total = win.sum(axis=taps, dtype=acc)
        divisor = avg_pool_divisor(sizes, kernel, stride, padding, out,
                                   count_include_pad, divisor_override)
        # Divided in float64 and rounded once to x's dtype (integers truncate, as mean's).
        return (total / xp.asarray(divisor)).astype(x.dtype, copy=False)
