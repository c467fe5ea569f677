"""ArrayModuleBackend: the Backend protocol on a numpy-compatible array module.

One code path serves numpy (the CPU backend) and CuPy (the CUDA backend): everything here
and in the mixins beside it uses only ``self.xp`` (the array module) and ``self.special``
(its scipy.special), so the CPU test suite exercises the logic that the CUDA backend runs
on a GPU.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import ml_dtypes

from ..base import Storage
from ..kernels import accumulator, wrapped
from .linalg import linalg as xp_linalg
from .conv import ConvPrimitives
from .elementwise import ElementwisePrimitives
from .index import IndexPrimitives
from .pool import PoolPrimitives
from .rnn import RnnPrimitives


class ArrayModuleBackend(ElementwisePrimitives, ConvPrimitives, PoolPrimitives,
                         IndexPrimitives, RnnPrimitives):
    """Implements every primitive with ``xp`` (numpy or a numpy-compatible module).

    Which module of this package supplies what:
    - backend.py (here): host transfer and creation, layout, reductions, scans and argsort,
      softmax and standardize, matmul (through ``gemm``) and linalg (linalg.py), random
      numbers, the in-place updates (and base.FastAccumulate), DLPack;
    - elementwise.py: unary, binary, compare, where, affine, powf, clamp;
    - conv.py: im2col, col2im, and base.FastConv's conv2d and conv2d_backward
      (folded_conv.py);
    - pool.py: max_pool2d, avg_pool2d, and base.FastPool's max_pool2d_backward;
    - index.py: gather, scatter_add, scatter;
    - rnn.py: rnn_cell, rnn_cell_backward.
    """

    xp = np
    dtypes = frozenset(np.dtype(t) for t in
                       ("float16", "float32", "float64", "uint8", "int8", "int16", "int32",
                        "int64", "bool", ml_dtypes.bfloat16))

    def __init__(self, device: str):
        self.device = device

    # -- host transfer and creation ----------------------------------------------------
    def from_numpy(self, a: np.ndarray) -> Storage:
        return self.xp.array(a, copy=True, order="C")

    def to_numpy(self, x: Storage) -> np.ndarray:
        return np.array(x, copy=True, order="C")

    def full(self, shape: tuple, value: float, dtype: np.dtype) -> Storage:
        return self.xp.full(shape, wrapped(value, dtype), dtype=dtype)

    def arange(self, n: int, dtype: np.dtype) -> Storage:
        return self.xp.arange(n, dtype=dtype)

    # -- layout --------------------------------------------------------------------------
    def reshape(self, x: Storage, shape: tuple) -> Storage:
        return x.reshape(shape)

    def transpose(self, x: Storage, d0: int, d1: int) -> Storage:
        return self.xp.swapaxes(x, d0, d1)

    def narrow(self, x: Storage, dim: int, start: int, length: int) -> Storage:
        index = [slice(None)] * x.ndim
        index[dim] = slice(start, start + length)
        return x[tuple(index)]

    def expand(self, x: Storage, shape: tuple) -> Storage:
        return self.xp.broadcast_to(x, shape)

    def as_strided(self, x: Storage, shape: tuple, strides: tuple, offset: int) -> Storage:
        tricks = self.xp.lib.stride_tricks
        item = x.dtype.itemsize
        x = self.xp.asarray(x)  # (a 0-d result may be a numpy scalar)
        # an array of one element at x's first element moved by `offset` (either way)
        start = tricks.as_strided(x, (abs(offset) + 1,), (item if offset >= 0 else -item,))
        return tricks.as_strided(start[abs(offset):], tuple(shape),
                                 tuple(st * item for st in strides))

    def contiguous(self, x: Storage) -> Storage:
        return self.xp.array(x, copy=True, order="C")

    def cat(self, xs: Sequence[Storage], dim: int) -> Storage:
        return self.xp.concatenate(xs, axis=dim)

    def pad(self, x: Storage, pads: Sequence[tuple], value: float) -> Storage:
        # a filled array with x written into its middle: numpy's own pad costs several
        # times more, and narrow's gradient (a pad) runs once per narrow in backward
        shape = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, pads))
        out = self.xp.full(shape, value, dtype=x.dtype)
        out[tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape, pads))] = x
        return out

    def fft(self, x: Storage, dims: tuple, inverse: bool) -> Storage:
        # numpy's pocketfft on cpu, cuFFT through cupy.fft on cuda; pairs read as complex
        pairs = self.xp.ascontiguousarray(x)
        if not dims or pairs.size == 0:
            return pairs.copy()
        z = pairs.view(np.complex64 if x.dtype == np.float32 else np.complex128)[..., 0]
        fft = self.xp.fft
        out = fft.ifftn(z, axes=dims, norm="forward") if inverse else fft.fftn(z, axes=dims)
        out = self.xp.ascontiguousarray(out.astype(z.dtype, copy=False))
        return out[..., None].view(x.dtype)

    def cast(self, x: Storage, dtype: np.dtype) -> Storage:
        dtype = np.dtype(dtype)
        if x.dtype.kind not in "iub" and dtype.kind in "iu" and dtype.itemsize < 4:
            # Narrow integers through int64, as cast.cl does, so that a float outside their
            # range wraps (-1.5 -> 255 in uint8) as PyTorch's casts do: the direct cast is
            # undefined in C, and CuPy's gives 0 where numpy's wraps on x86.
            x = x.astype(np.int64)
        return x.astype(dtype)

    # -- reductions ----------------------------------------------------------------------
    def reduce(self, fn: str, x: Storage, dims: tuple, keepdim: bool) -> Storage:
        xp = self.xp
        if fn == "sum":
            dtype = np.dtype(np.int64) if x.dtype.kind in "biu" else x.dtype
            out = xp.sum(x, axis=dims, keepdims=keepdim, dtype=accumulator(dtype))
            return out.astype(dtype, copy=False)
        if fn == "mean":
            if any(x.shape[d] == 0 for d in dims):  # the mean of nothing: nan, without
                shape = xp.sum(x, axis=dims, keepdims=keepdim).shape  # numpy's warning
                return xp.full(shape, xp.nan, dtype=x.dtype)
            out = xp.mean(x, axis=dims, keepdims=keepdim, dtype=accumulator(x.dtype))
            return out.astype(x.dtype, copy=False)
        if fn == "max" or fn == "min":
            return self._extreme(xp.max if fn == "max" else xp.min, x, dims, keepdim)
        raise NotImplementedError(f"reduction {fn!r}")

    # numpy's max and min along a short innermost dim run element by element: 16 us for
    # [256, 10] along dim 1, 4.5 over its transposed copy, whose lines it takes as vectors.
    _SHORT_LINE = 32

    def _extreme(self, reduce: Any, x: Storage, dims: tuple, keepdim: bool) -> Storage:
        """reduce (xp.max or xp.min: exact, NaN-propagating) over dims."""
        xp = self.xp
        line = x.shape[-1] if x.ndim else 0
        if dims == (x.ndim - 1,) and 1 < line <= self._SHORT_LINE and x.size >= 4 * line:
            out = reduce(xp.ascontiguousarray(x.reshape(-1, line).T), axis=0)
            return out.reshape(x.shape[:-1] + ((1,) if keepdim else ()))
        return reduce(x, axis=dims, keepdims=keepdim)

    def arg_reduce(self, fn: str, x: Storage, dim: int, keepdim: bool) -> Storage:
        xp = self.xp
        arg = xp.argmax if fn == "argmax" else xp.argmin
        return arg(x, axis=dim, keepdims=keepdim).astype(np.int64, copy=False)

    # -- scans and sorting (CUDA runs scan.cl and sort.cl instead: kernels/scan.py, sort.py)
    def scan(self, fn: str, x: Storage, dim: int) -> Storage:
        wide = x.astype(accumulator(x.dtype), copy=False)
        if fn == "logsumexp":  # logaddexp is stable, and infinities pass through
            out = self.xp.logaddexp.accumulate(wide, axis=dim, dtype=wide.dtype)
        else:
            accumulate = self.xp.cumsum if fn == "sum" else self.xp.cumprod
            out = accumulate(wide, axis=dim, dtype=wide.dtype)
        return out.astype(x.dtype, copy=False)

    def arg_scan(self, fn: str, x: Storage, dim: int) -> Storage:
        xp = self.xp
        running = (xp.maximum if fn == "max" else xp.minimum).accumulate(
            x, axis=dim)
        # Position r takes over where it equals the running extreme (so the latest of ties)
        # or is NaN (the running extreme stays NaN from its first NaN, and moves to each later one).
        takes_over = (x == running) | (x != x)
        positions = xp.arange(x.shape[dim]).reshape((-1,) + (1,) * (x.ndim - dim - 1))
        return xp.maximum.accumulate(xp.where(takes_over, positions, 0), axis=dim).astype(
            np.int64, copy=False)

    def argsort(self, x: Storage, dim: int, descending: bool) -> Storage:
        xp = self.xp
        if not descending:  # numpy's stable sort puts NaN last, as the largest
            return xp.argsort(x, axis=dim, kind="stable").astype(np.int64, copy=False)
        # Descending and stable: sort the reversed line ascending, read the order backwards
        # (equal elements then come in their original order), and map positions back.
        flipped = xp.flip(x, axis=dim)
        order = xp.flip(xp.argsort(flipped, axis=dim, kind="stable"), axis=dim)
        return (x.shape[dim] - 1 - order).astype(np.int64, copy=False)

    # -- fused normalisations --------------------------------------------------------------
    def softmax(self, x: Storage, dim: int, log: bool) -> Storage:
        xp = self.xp
        wide = x.astype(accumulator(x.dtype), copy=False)
        z = wide - self._extreme(xp.max, wide, (dim % x.ndim,), True)
        if log:
            z -= xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))
        else:
            xp.exp(z, out=z)
            z /= xp.sum(z, axis=dim, keepdims=True)
        return z.astype(x.dtype, copy=False)

    def standardize(self, x: Storage, dims: tuple, eps: float) -> tuple:
        xp = self.xp
        wide = x.astype(accumulator(x.dtype), copy=False)
        y = wide - xp.mean(wide, axis=dims, keepdims=True)
        var = xp.mean(xp.square(y), axis=dims, keepdims=True)
        rstd = 1 / xp.sqrt(var + eps)
        y *= rstd
        return y.astype(x.dtype, copy=False), rstd.astype(x.dtype, copy=False)

    # -- linear algebra (convolution: conv.py, pooling: pool.py) ------------------------
    def matmul(self, a: Storage, b: Storage) -> Storage:
        wide = accumulator(a.dtype)
        if wide == a.dtype:
            return self.gemm(a, b)
        # (numpy's bfloat16 product, ml_dtypes', would come back float32)
        return self.gemm(a.astype(wide), b.astype(wide)).astype(a.dtype)

    def gemm(self, a: Storage, b: Storage, out: Storage | None = None) -> Storage:
        """matmul, optionally into `out` (C-contiguous, the result's shape and dtype): every
        product of this backend, folded_conv's too, goes through here, where a subclass can
        hand it to another BLAS (the cpu backend's MKL)."""
        return self.xp.matmul(a, b, out=out)

    def linalg(self, fn: str, *arrays: Storage, option: Any = None) -> tuple:
        return xp_linalg(self.xp, fn, arrays, option)

    # -- random numbers ------------------------------------------------------------------
    def manual_seed(self, seed: int) -> None:
        self._rng = np.random.Generator(np.random.Philox(seed))

    def _generator(self) -> np.random.Generator:
        if not hasattr(self, "_rng"):
            self.manual_seed(0)
        return self._rng

    def rand(self, shape: tuple, dtype: np.dtype) -> Storage:
        host = self._generator().random(shape, dtype=np.float64).astype(dtype)
        # Rounding to a narrower dtype can reach 1.0; keep the promised [0, 1).
        return self.from_numpy(np.minimum(host, np.nextafter(dtype.type(1), dtype.type(0))))

    def randn(self, shape: tuple, dtype: np.dtype) -> Storage:
        host = self._generator().standard_normal(shape, dtype=np.float64).astype(dtype)
        return self.from_numpy(host)

    def get_rng_state(self) -> Any:
        return self._generator().bit_generator.state

    def set_rng_state(self, state: Any) -> None:
        self._generator().bit_generator.state = state

    # -- in-place ------------------------------------------------------------------------
    def copy_(self, dst: Storage, src: Storage) -> None:
        dst[...] = src

    def add_(self, dst: Storage, src: Storage, alpha: float) -> None:
        dst += src if alpha == 1 else src * alpha

    def add_into_(self, dst: Storage, src: Storage) -> None:  # base.FastAccumulate
        dst += src

    def add_narrow_(self, dst: Storage, src: Storage, dim: int, start: int
                    ) -> None:  # base.FastAccumulate
        part = self.narrow(dst, dim, start, src.shape[dim])  # a view of dst
        part += src

    # -- DLPack (optional capability, see base.DLPack) ------------------------------------
    def to_dlpack(self, x: Storage, *, stream: Any = None,
                  max_version: tuple[int, int] | None = None,
                  dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        return x.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device,
                            copy=copy)

    def dlpack_device(self, x: Storage) -> tuple:
        return x.__dlpack_device__()

    def from_dlpack(self, obj: Any) -> Storage:
        return self.xp.from_dlpack(obj)
