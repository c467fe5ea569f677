"""Convolution on a numpy-compatible array module: the im2col and col2im primitives
(kernels/conv.cl on OpenCL), and the optional conv2d and conv2d_backward of base.FastConv,
which fold the batch into the GEMMs (folded_conv.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base import Storage
from ..kernels import accumulator, window_output
from . import folded_conv
from .pool import windows

_CACHE_BYTES = 1 << 19  # scratch per block of a blocked loop: fits a core's L2 cache


class ConvPrimitives:
    """ArrayModuleBackend's convolution primitives, on ``self.xp``; every product goes
    through the backend's ``gemm``."""

    xp: Any

    if TYPE_CHECKING:  # what the backend supplies
        def gemm(self, a: Storage, b: Storage, out: Storage | None = None) -> Storage: ...

    def im2col(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple) -> Storage:
        n, c, h, w = x.shape
        win = windows(self.xp, x, kernel, stride, padding, (1, 1),
                      window_output(h, w, kernel, stride, padding), 0)
        ho, wo = win.shape[2:4]
        # [N, C, Ho, Wo, kh, kw] -> [N, C, kh, kw, Ho, Wo]: one strided copy.
        cols = win.transpose(0, 1, 4, 5, 2, 3)
        return self.xp.ascontiguousarray(cols).reshape(n, c * kernel[0] * kernel[1], ho * wo)

    def col2im(self, cols: Storage, shape: tuple, kernel: tuple, stride: tuple, padding: tuple
               ) -> Storage:
        xp = self.xp
        n, c, h, w = shape
        (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
        hp, wp = h + 2 * ph, w + 2 * pw
        ho, wo = window_output(h, w, kernel, stride, padding)
        cols = cols.reshape(n, c, kh, kw, ho, wo)
        out = xp.zeros((n, c, hp, wp), dtype=cols.dtype)
        # Vectorised adds in a fixed order (deterministic), never per pixel, in two passes:
        # down, rows[., j, i + sh*y, x] += cols[., i, j, y, x] (kh adds whose (y, x) planes
        # are contiguous runs when sh == 1), then across, out[., y, j + sw*x] += rows[., j,
        # y, x] (kw adds): kh + kw short-row adds, not kh*kw of them.  A few samples at a
        # time, so that `rows` stays in cache.
        step = max(1, _CACHE_BYTES // (c * kw * hp * wo * cols.itemsize))
        for n0 in range(0, n, step):
            part = cols[n0:n0 + step]
            rows = xp.zeros((part.shape[0], c, kw, hp, wo), dtype=cols.dtype)
            for i in range(kh):
                rows[:, :, :, i:i + sh * ho:sh] += part[:, :, i]
            dst = out[n0:n0 + step]
            for j in range(kw):
                dst[:, :, :, j:j + sw * wo:sw] += rows[:, :, j]
        return out[:, :, ph:ph + h, pw:pw + w]

    # -- convolution in one call each way (optional, see base.FastConv) -------------------
    # The batch is folded into the GEMMs (folded_conv) when their depth, C*kw, is at least
    # this; below it the layout's transposes cost more than they save, and these decline
    # (NotImplemented), so that the core runs its lowering: im2col, a batched GEMM, col2im.
    conv_fold_min_depth = 32

    # Dilated and grouped convolutions decline: the core composes them of plain ones.
    def conv2d(self, x: Storage, w: Storage, stride: tuple, padding: tuple, dilation: tuple,
               groups: int) -> Storage:
        if not self._folds(w, dilation, groups):
            return NotImplemented
        wide = accumulator(x.dtype)
        if wide != x.dtype:  # float16 and bfloat16 accumulate in float32, rounded once
            out = folded_conv.conv2d(self.xp, self.gemm, x.astype(wide), w.astype(wide),
                                     stride, padding)
            return out.astype(x.dtype)
        return folded_conv.conv2d(self.xp, self.gemm, x, w, stride, padding)

    def conv2d_backward(self, x: Storage, w: Storage, g: Storage, stride: tuple, padding: tuple,
                        dilation: tuple, groups: int, need_x: bool, need_w: bool) -> tuple:
        if not self._folds(w, dilation, groups):
            return NotImplemented
        wide = accumulator(x.dtype)
        if wide != x.dtype:
            grads = folded_conv.conv2d_backward(self.xp, self.gemm, x.astype(wide),
                                                w.astype(wide), g.astype(wide), stride,
                                                padding, need_x, need_w)
            return tuple(None if d is None else d.astype(x.dtype) for d in grads)
        return folded_conv.conv2d_backward(self.xp, self.gemm, x, w, g, stride, padding,
                                          need_x, need_w)

    def _folds(self, w: Storage, dilation: tuple, groups: int) -> bool:
        return (dilation == (1, 1) and groups == 1
                and w.shape[1] * w.shape[3] >= self.conv_fold_min_depth)
