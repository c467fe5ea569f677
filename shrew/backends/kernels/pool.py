"""Pooling on pool.cl for OpenCL and CUDA: the max_pool2d and avg_pool2d primitives over 2
or 3 spatial dims (output allocation and launch arguments, written once for both
backends; a 3-d pool runs pool.cl's max_pool3d or avg_pool3d)."""
from __future__ import annotations

import numpy as np

from ...core.shape import window_counts
from ..base import Storage
from . import KernelLaunches, compute_dtype, max_pool_fill
from .conv import volume_geometry

_i64 = np.int64


def pool_geometry(c: int, h: int, w: int, kernel: tuple, stride: tuple, padding: tuple,
                  dilation: tuple, ceil_mode: bool) -> tuple:
    """The window Geometry (common.h) of a pooling, with PyTorch's output size (ceil_mode),
    followed by the dilation: c, h, w, kh, kw, sh, sw, ph, pw, ho, wo, dh, dw."""
    out = window_counts((h, w), kernel, stride, padding, dilation, ceil_mode)
    return (c, h, w, *kernel, *stride, *padding, *out, *dilation)


class PoolLaunches(KernelLaunches):
    """max_pool2d and avg_pool2d on pool.cl."""

    def _pool_meta(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   dilation: tuple, ceil_mode: bool = False,
                   count_include_pad: bool = True,
                   divisor_override: int | None = None) -> tuple:
        """pool.cl's meta for x (the Geometry of a 2-d pool, the Volume of a 3-d one), and
        the output shape."""
        n, c, *sizes = x.shape
        out = window_counts(sizes, kernel, stride, padding, dilation, ceil_mode)
        if len(kernel) == 3:
            geometry = (c, *volume_geometry(tuple(sizes), kernel, stride, padding, out),
                        *dilation)
        else:
            h, w = sizes
            geometry = pool_geometry(c, h, w, kernel, stride, padding, dilation, ceil_mode)
        avg = (int(count_include_pad), divisor_override or 0)
        return self._meta(geometry + avg + self._layout(x)), (n, c, *out)

    def max_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   dilation: tuple, ceil_mode: bool) -> tuple:
        meta, shape = self._pool_meta(x, kernel, stride, padding, dilation, ceil_mode)
        values = self._empty(shape, x.dtype)
        indices = self._empty(shape, np.dtype(np.int64))
        if values.size:
            # The fill rounded to x's dtype first (as numpy would), passed as the kernel's CT.
            fill = compute_dtype(x.dtype).type(x.dtype.type(max_pool_fill(x.dtype)))
            name = "max_pool3d" if len(kernel) == 3 else "max_pool2d"
            self._launch_1d("pool", x.dtype, name, values.size, _i64(values.size),
                            meta, fill, self._arg(x), self._arg(values), self._arg(indices))
        return values, indices

    def avg_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   ceil_mode: bool, count_include_pad: bool,
                   divisor_override: int | None) -> Storage:
        meta, shape = self._pool_meta(x, kernel, stride, padding, (1,) * len(kernel),
                                      ceil_mode, count_include_pad, divisor_override)
        out = self._empty(shape, x.dtype)
        if out.size:
            name = "avg_pool3d" if len(kernel) == 3 else "avg_pool2d"
            self._launch_1d("pool", x.dtype, name, out.size, _i64(out.size), meta,
                            self._arg(x), self._arg(out))
        return out
