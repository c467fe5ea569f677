"""Indexing on a numpy-compatible array module: the gather, scatter_add and scatter
primitives (kernels/index.cl on OpenCL and CUDA)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..base import Storage


def flat_offsets(xp: Any, shape: tuple, dim: int, index: Storage) -> Storage:
    """Every (index, position) as one flat offset into an array of `shape`: the offsets
    of the other dims summed first, by broadcasting one small arange per dim, then
    added to the index in one pass."""
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    base = 0
    for d, size in enumerate(index.shape):
        if d != dim:
            along = [1] * index.ndim
            along[d] = size
            base = base + xp.arange(size).reshape(along) * strides[d]
    return (index if strides[dim] == 1 else index * strides[dim]) + base


def store_distinct(out: Storage, flat: Storage, src: Storage) -> Storage:
    """scatter_add into the flat, zeroed `out` where the offsets `flat` never repeat:
    each sum is a single term, so a plain store is exact."""
    out[flat.ravel()] = src.ravel() + src.dtype.type(0)   # -0.0 -> 0.0, as a sum gives
    return out


class IndexPrimitives:
    """ArrayModuleBackend's indexing primitives, on ``self.xp``."""

    xp: Any

    def gather(self, x: Storage, dim: int, index: Storage) -> Storage:
        xp = self.xp
        # take_along_axis needs index and x to agree off `dim`; narrow x to index's extent.
        sl = tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(index.shape))
        if index.size and all(step == 0 or index.shape[d] == 1
                              for d, step in enumerate(index.strides) if d != dim):
            # One index per slice, broadcast over the other dims (index_select, x[idx]):
            # take whole slices, without reading the broadcast index entry by entry.
            line = index[tuple(slice(None) if d == dim else 0 for d in range(index.ndim))]
            return xp.take(x[sl], line, axis=dim)
        return xp.take_along_axis(x[sl], index, axis=dim)

    def scatter_add(self, shape: tuple, dim: int, index: Storage, src: Storage) -> Storage:
        xp = self.xp
        # Flat offsets, then a single bincount: deterministic, vectorised, and accumulated
        # in float64 before the final cast.
        flat = flat_offsets(xp, shape, dim, index)
        src = src[tuple(slice(0, s) for s in index.shape)]
        size = math.prod(shape)
        if src.dtype.kind == "f" and index.shape[dim] == 1 and flat.size:
            # One index per line along dim (a cross-entropy's target, a gather of one
            # element): the offsets differ in the other dims, so they never repeat.
            return store_distinct(xp.zeros(size, dtype=src.dtype), flat, src).reshape(shape)
        if src.dtype.kind == "f" and src.dtype.itemsize >= 4 and 0 < flat.size < 2**31:
            # Every target hit at most once (max-pool backward, a one-hot of several):
            # then each sum is a single term and a plain store is exact.  Check that with
            # the output buffer itself as a stamp: store each position's ordinal and read
            # it back; a target hit twice keeps only its last ordinal.
            out = xp.empty(size, dtype=src.dtype)
            stamp = out.view(np.dtype(f"i{src.dtype.itemsize}"))
            flat = flat.ravel()
            ordinal = xp.arange(flat.size, dtype=stamp.dtype)
            stamp[flat] = ordinal
            if xp.array_equal(stamp[flat], ordinal):
                out.fill(0)
                return store_distinct(out, flat, src).reshape(shape)
        if src.dtype.kind == "f":
            out = xp.bincount(flat.ravel(), weights=src.ravel().astype(np.float64), minlength=size)
        else:
            out = xp.zeros(size, dtype=src.dtype)
            xp.add.at(out, flat.ravel(), src.ravel())
        return out.astype(src.dtype, copy=False).reshape(shape)

    # base.scatter: each combine as an unbuffered ufunc.at, which applies repeated targets
    # one after another in index order (a plain store keeps the last).
    _SCATTER_UFUNCS = {"sum": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}

    def scatter(self, dst: Storage, dim: int, index: Storage, src: Storage, reduce: str) -> Storage:
        xp = self.xp
        flat = flat_offsets(xp, dst.shape, dim, index).ravel()
        values = src[tuple(slice(0, s) for s in index.shape)].ravel()
        out = xp.array(dst, copy=True, order="C")
        target = out.reshape(-1)
        if reduce == "none":
            target[flat] = values
        else:
            getattr(xp, self._SCATTER_UFUNCS[reduce]).at(target, flat, values)
        return out
