"""The convolution lowering on conv.cl for OpenCL and CUDA: the im2col and col2im
primitives over 2 or 3 spatial dims (output allocation and launch arguments, written once
for both backends)."""
from __future__ import annotations

import math

import numpy as np

from ...core.shape import window_counts
from ..base import Storage
from . import KernelLaunches, window_output

_i64 = np.int64


def window_geometry(c: int, h: int, w: int, kernel: tuple, stride: tuple,
                    padding: tuple) -> tuple:
    """The window Geometry (common.h) of an [N, C, H, W] image:
    c, h, w, kh, kw, sh, sw, ph, pw, ho, wo."""
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    return (c, h, w, kh, kw, sh, sw, ph, pw, *window_output(h, w, kernel, stride, padding))


def volume_geometry(sizes: tuple, kernel: tuple, stride: tuple, padding: tuple,
                    out: tuple) -> tuple:
    """The Volume geometry (common.h) of a 3-d window over [D, H, W] = sizes with output
    size `out`: d, h, w, kd, kh, kw, sd, sh, sw, pd, ph, pw, do, ho, wo (after c)."""
    return (*sizes, *kernel, *stride, *padding, *out)


class ConvLaunches(KernelLaunches):
    """im2col and col2im on conv.cl."""

    def _window_meta(self, c: int, h: int, w: int, kernel: tuple, stride: tuple, padding: tuple,
                     operand: Storage) -> tuple:
        """The window Geometry (common.h) followed by the strided operand's layout."""
        geometry = window_geometry(c, h, w, kernel, stride, padding)
        return self._meta(geometry + self._layout(operand)), geometry[-2], geometry[-1]

    def im2col(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple) -> Storage:
        if len(kernel) == 3:
            return self._im2col3d(x, kernel, stride, padding)
        n, c, h, w = x.shape
        meta, ho, wo = self._window_meta(c, h, w, kernel, stride, padding, x)
        out = self._empty((n, c * kernel[0] * kernel[1], ho * wo), x.dtype)
        if out.size:
            rows = n * out.shape[1]  # conv.cl: one row of cols per work-item
            self._launch_1d("conv", x.dtype, "im2col", rows, _i64(rows), meta, self._arg(x),
                            self._arg(out))
        return out

    def col2im(self, cols: Storage, shape: tuple, kernel: tuple, stride: tuple, padding: tuple
               ) -> Storage:
        if len(kernel) == 3:
            return self._col2im3d(cols, shape, kernel, stride, padding)
        n, c, h, w = shape
        meta, _, _ = self._window_meta(c, h, w, kernel, stride, padding, cols)
        out = self._empty(tuple(shape), cols.dtype)
        if out.size:
            runs = out.size // w  # conv.cl: one image row per work-item
            self._launch_1d("conv", cols.dtype, "col2im", runs, _i64(runs), meta,
                            self._arg(cols), self._arg(out))
        return out

    def _im2col3d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple) -> Storage:
        n, c, *sizes = x.shape
        out_size = window_counts(sizes, kernel, stride, padding)
        meta = self._meta((c, *volume_geometry(tuple(sizes), kernel, stride, padding, out_size))
                          + self._layout(x))
        out = self._empty((n, c * math.prod(kernel), math.prod(out_size)), x.dtype)
        if out.size:
            rows = n * out.shape[1]  # conv.cl: one row of cols per work-item
            self._launch_1d("conv", x.dtype, "im2col3d", rows, _i64(rows), meta, self._arg(x),
                            self._arg(out))
        return out

    def _col2im3d(self, cols: Storage, shape: tuple, kernel: tuple, stride: tuple,
                  padding: tuple) -> Storage:
        _, c, *sizes = shape
        out_size = window_counts(sizes, kernel, stride, padding)
        meta = self._meta((c, *volume_geometry(tuple(sizes), kernel, stride, padding, out_size))
                          + self._layout(cols))
        out = self._empty(tuple(shape), cols.dtype)
        if out.size:
            self._launch_1d("conv", cols.dtype, "col2im3d", out.size, _i64(out.size), meta,
                            self._arg(cols), self._arg(out))
        return out
