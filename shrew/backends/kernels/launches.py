"""The primitives that OpenCL and CUDA both run from the shared kernel files (conv.cl,
pool.cl, index.cl, scan.cl, sort.cl): output allocation and launch arguments, written once.

A backend mixes `SharedLaunches` in and supplies these hooks:
- ``_empty(shape, dtype)`` and ``full(shape, value, dtype)``: new C-contiguous storage, and
  ``contiguous(x)``, a C-contiguous copy of x;
- ``_layout(x)``: x's strides in elements, then the offset of its first element, as the
  kernels read them from meta;
- ``_meta(values)``: a device int64 array holding `values` (the backends cache it by value);
- ``_arg(x)``: what a kernel parameter gets for storage x (a buffer or a device array);
- ``_launch_1d(family, dtype, name, n, *args)``: kernel `name` of `family` on n work-items.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..base import SCATTER_REDUCE_FNS
from . import compute_dtype, max_pool_fill, pool_geometry, window_geometry

_i64, _i32 = np.int64, np.int32


class SharedLaunches:
    """im2col, col2im, max_pool2d, avg_pool2d, gather, scatter_add, scatter, scan, arg_scan
    and argsort on the shared kernels."""

    _empty: Any
    full: Any
    contiguous: Any
    _layout: Any
    _meta: Any
    _arg: Any
    _launch_1d: Any

    def _window_meta(self, c, h, w, kernel, stride, padding, operand):
        """The window Geometry (common.h) followed by the strided operand's layout."""
        geometry = window_geometry(c, h, w, kernel, stride, padding)
        return self._meta(geometry + self._layout(operand)), geometry[-2], geometry[-1]

    # -- convolution lowering (conv.cl) ----------------------------------------------------
    def im2col(self, x, kernel, stride, padding):
        n, c, h, w = x.shape
        meta, ho, wo = self._window_meta(c, h, w, kernel, stride, padding, x)
        out = self._empty((n, c * kernel[0] * kernel[1], ho * wo), x.dtype)
        if out.size:
            rows = n * out.shape[1]  # conv.cl: one row of cols per work-item
            self._launch_1d("conv", x.dtype, "im2col", rows, _i64(rows), meta, self._arg(x),
                            self._arg(out))
        return out

    def col2im(self, cols, shape, kernel, stride, padding):
        n, c, h, w = shape
        meta, _, _ = self._window_meta(c, h, w, kernel, stride, padding, cols)
        out = self._empty(tuple(shape), cols.dtype)
        if out.size:
            runs = out.size // w  # conv.cl: one image row per work-item
            self._launch_1d("conv", cols.dtype, "col2im", runs, _i64(runs), meta,
                            self._arg(cols), self._arg(out))
        return out

    # -- pooling (pool.cl) -----------------------------------------------------------------
    def _pool_meta(self, x, kernel, stride, padding, dilation=(1, 1), ceil_mode=False,
                   count_include_pad=True, divisor_override=None):
        """pool.cl's meta for x, and the output shape."""
        n, c, h, w = x.shape
        geometry = pool_geometry(c, h, w, kernel, stride, padding, dilation, ceil_mode)
        avg = (int(count_include_pad), divisor_override or 0)
        return self._meta(geometry + avg + self._layout(x)), (n, c, *geometry[9:11])

    def max_pool2d(self, x, kernel, stride, padding, dilation, ceil_mode):
        meta, shape = self._pool_meta(x, kernel, stride, padding, dilation, ceil_mode)
        values = self._empty(shape, x.dtype)
        indices = self._empty(shape, np.dtype(np.int64))
        if values.size:
            # The fill rounded to x's dtype first (as numpy would), passed as the kernel's CT.
            fill = compute_dtype(x.dtype).type(x.dtype.type(max_pool_fill(x.dtype)))
            self._launch_1d("pool", x.dtype, "max_pool2d", values.size, _i64(values.size),
                            meta, fill, self._arg(x), self._arg(values), self._arg(indices))
        return values, indices

    def avg_pool2d(self, x, kernel, stride, padding, ceil_mode, count_include_pad,
                   divisor_override):
        meta, shape = self._pool_meta(x, kernel, stride, padding, (1, 1), ceil_mode,
                                      count_include_pad, divisor_override)
        out = self._empty(shape, x.dtype)
        if out.size:
            self._launch_1d("pool", x.dtype, "avg_pool2d", out.size, _i64(out.size), meta,
                            self._arg(x), self._arg(out))
        return out

    # -- indexing (index.cl) ---------------------------------------------------------------
    def gather(self, x, dim, index):
        out = self._empty(index.shape, x.dtype)
        if out.size:
            meta = self._meta(index.shape + self._layout(index) + self._layout(x))
            self._launch_1d("index", x.dtype, "gather", out.size, _i64(out.size),
                            _i32(index.ndim), _i32(dim), _i64(x.shape[dim]), meta,
                            self._arg(x), self._arg(index), self._arg(out))
        return out

    def scatter_add(self, shape, dim, index, src):
        out = self.full(tuple(shape), 0, src.dtype)
        if index.size:
            lines = index.size // index.shape[dim]  # index.cl: one work-item per line along dim
            meta = self._meta(index.shape + self._layout(index) + self._layout(src)
                              + self._layout(out))
            self._launch_1d("index", src.dtype, "scatter_add", lines, _i64(lines),
                            _i32(index.ndim), _i32(dim), _i64(shape[dim]), meta,
                            self._arg(index), self._arg(src), self._arg(out))
        return out

    def scatter(self, dst, dim, index, src, reduce):
        out = self.contiguous(dst)
        if index.size:
            lines = index.size // index.shape[dim]  # index.cl: one work-item per line along dim
            meta = self._meta(index.shape + self._layout(index) + self._layout(src)
                              + self._layout(out))
            self._launch_1d("index", dst.dtype, "scatter", lines, _i64(lines),
                            _i32(index.ndim), _i32(dim), _i64(dst.shape[dim]),
                            _i32(SCATTER_REDUCE_FNS.index(reduce)), meta, self._arg(index),
                            self._arg(src), self._arg(out))
        return out

    # -- scans and sorting (scan.cl, sort.cl) ----------------------------------------------
    def _along(self, family, name, x, dim, out_dtype, items, *scalars):
        """out = kernel `name` over x along dim, one work-item per line or per element."""
        out = self._empty(x.shape, out_dtype)
        if out.size:
            meta = self._meta(x.shape + self._layout(x) + self._layout(out))
            self._launch_1d(family, x.dtype, name, items, _i64(items), _i32(x.ndim), _i32(dim),
                            *scalars, meta, self._arg(x), self._arg(out))
        return out

    def scan(self, fn, x, dim):
        lines = x.size // x.shape[dim] if x.size else 0
        return self._along("scan", f"scan_{fn}", x, dim, x.dtype, lines)

    def arg_scan(self, fn, x, dim):
        lines = x.size // x.shape[dim] if x.size else 0
        return self._along("scan", f"arg_scan_{fn}", x, dim, np.dtype(np.int64), lines)

    def argsort(self, x, dim, descending):
        return self._along("sort", "argsort", x, dim, np.dtype(np.int64), x.size,
                           _i32(descending))
