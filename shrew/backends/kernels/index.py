"""Indexing on index.cl for OpenCL and CUDA: the gather, scatter_add and scatter
primitives (output allocation and launch arguments, written once for both backends)."""
from __future__ import annotations

import numpy as np

from ..base import SCATTER_REDUCE_FNS, Storage
from . import KernelLaunches

_i64, _i32 = np.int64, np.int32


class IndexLaunches(KernelLaunches):
    """gather, scatter_add and scatter on index.cl (no atomics: one work-item per output,
    or per line of the index along dim)."""

    def gather(self, x: Storage, dim: int, index: Storage) -> Storage:
        out = self._empty(index.shape, x.dtype)
        if out.size:
            meta = self._meta(index.shape + self._layout(index) + self._layout(x))
            self._launch_1d("index", x.dtype, "gather", out.size, _i64(out.size),
                            _i32(index.ndim), _i32(dim), _i64(x.shape[dim]), meta,
                            self._arg(x), self._arg(index), self._arg(out))
        return out

    def scatter_add(self, shape: tuple, dim: int, index: Storage, src: Storage) -> Storage:
        return self._scatter_into(self.full(tuple(shape), 0, src.dtype), dim, index, src, "sum")

    def scatter(self, dst: Storage, dim: int, index: Storage, src: Storage, reduce: str) -> Storage:
        return self._scatter_into(self.contiguous(dst), dim, index, src, reduce)

    def _scatter_into(self, out: Storage, dim: int, index: Storage, src: Storage,
                      reduce: str) -> Storage:
        """index.cl's scatter on `out`, a fresh C-contiguous array: scatter_add is its "sum"
        on zeros."""
        if index.size:
            lines = index.size // index.shape[dim]  # index.cl: one work-item per line along dim
            meta = self._meta(index.shape + self._layout(index) + self._layout(src)
                              + self._layout(out))
            self._launch_1d("index", out.dtype, "scatter", lines, _i64(lines),
                            _i32(index.ndim), _i32(dim), _i64(out.shape[dim]),
                            _i32(SCATTER_REDUCE_FNS.index(reduce)), meta, self._arg(index),
                            self._arg(src), self._arg(out))
        return out
