"""The Backend protocol on a numpy-compatible array module.

One code path serves numpy (the CPU backend) and CuPy (the CUDA backend): everything here
uses only ``self.xp`` (the array module) and ``self.special`` (its scipy.special), so the
CPU test suite exercises the logic that the CUDA backend runs on a GPU.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import ml_dtypes

from ..core.shape import window_counts
from .base import Storage
from .kernels import avg_pool_divisor, max_pool_fill, window_output, wrapped
from . import folded_conv, linalg_routines

# NaN and inf are data in shrew, as in PyTorch: numpy's floating-point warnings from these
# kernels (log(0), 0/0, ...) would only be noise.  Filtered for this module alone.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=__name__)

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_A = 0.044715
_CACHE_BYTES = 1 << 19  # scratch per block of a blocked loop: fits a core's L2 cache


# Unary and binary functions that are one xp call (PyTorch's name: numpy's).
# Unary functions that are one xp function of the same meaning, looked up first.
_XP_UNARY = {"abs": "abs", "exp": "exp", "log": "log", "sqrt": "sqrt", "tanh": "tanh",
             "sin": "sin", "cos": "cos", "floor": "floor", "ceil": "ceil",
             "round": "round",  # half to even, as PyTorch
             "sign": "sign", "log1p": "log1p", "expm1": "expm1", "log2": "log2",
             "log10": "log10", "exp2": "exp2", "tan": "tan", "asin": "arcsin",
             "acos": "arccos", "atan": "arctan", "sinh": "sinh", "cosh": "cosh",
             "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "trunc": "trunc",
             "bitwise_not": "invert"}
_XP_BINARY = {"pow": "power", "atan2": "arctan2", "maximum": "maximum", "minimum": "minimum",
              "fmod": "fmod", "remainder": "remainder", "floor_divide": "floor_divide",
              "copysign": "copysign", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
              "bitwise_xor": "bitwise_xor"}


class ArrayModuleBackend:
    """Implements every primitive with ``xp`` (numpy or a numpy-compatible module)."""

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

    def cast(self, x: Storage, dtype: np.dtype) -> Storage:
        dtype = np.dtype(dtype)
        if x.dtype.kind not in "iub" and dtype.kind in "iu" and dtype.itemsize < 4:
            # Narrow integers through int64, as cast.cl does, so that a float outside their
            # range wraps (-1.5 -> 255 in uint8) as PyTorch's casts do: the direct cast is
            # undefined in C, and CuPy's gives 0 where numpy's wraps on x86.
            x = x.astype(np.int64)
        return x.astype(dtype)

    # -- elementwise ---------------------------------------------------------------------
    def unary(self, fn: str, x: Storage) -> Storage:
        xp = self.xp
        name = _XP_UNARY.get(fn)
        if name is not None:
            return getattr(xp, name)(x)
        if fn == "neg":
            return -x
        if fn == "square":
            return x * x
        if fn == "relu":
            return xp.maximum(x, x.dtype.type(0))
        if fn == "sigmoid":
            # exp of -|x| never overflows; pick the branch per sign.
            e = xp.exp(-xp.abs(x))
            return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
        if fn == "gelu":
            return (x * 0.5 * (1 + self.erf(x * _INV_SQRT2))).astype(x.dtype, copy=False)
        if fn == "gelu_tanh" or fn == "gelu_tanh_derivative":
            return self._gelu_tanh(x, derivative=fn != "gelu_tanh")
        if fn == "gelu_derivative":  # Phi(x) + x phi(x)
            pdf = xp.exp(x * x * -0.5) * _INV_SQRT_2PI
            return (0.5 * (1 + self.erf(x * _INV_SQRT2)) + x * pdf).astype(x.dtype, copy=False)
        if fn == "silu":
            return x * self.unary("sigmoid", x)
        if fn == "erf":
            return self.erf(x).astype(x.dtype, copy=False)
        if fn == "rsqrt":
            return 1 / xp.sqrt(x)
        if fn == "reciprocal":
            return 1 / x
        if fn in ("erfc", "erfinv"):
            return self.special(fn)(x).astype(x.dtype, copy=False)
        raise NotImplementedError(f"unary function {fn!r}")

    def _gelu_tanh(self, x: Storage, derivative: bool) -> Storage:
        """0.5 x (1 + t) with t = tanh(c (x + a x^3)), or its derivative
        0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2); in place on two temporaries,
        because on a 1M-element activation each extra pass and allocation shows."""
        shape = x.shape
        x = x.reshape(-1)  # a 0-d x would make numpy scalars, which have no out=
        x2 = x * x
        t = x2 * (_GELU_A * _SQRT_2_OVER_PI)
        t += _SQRT_2_OVER_PI
        t *= x
        self.xp.tanh(t, out=t)
        if derivative:
            x2 *= 3 * _GELU_A * _SQRT_2_OVER_PI
            x2 += _SQRT_2_OVER_PI            # c (1 + 3 a x^2)
            x2 *= 1 - t * t
            x2 *= x
            t += 1
            t += x2
        else:
            t += 1
            t *= x
        t *= 0.5
        return t.reshape(shape)

    def special(self, name: str) -> Any:
        """A function of xp's scipy.special (erf, erfc, erfinv)."""
        import scipy.special
        return getattr(scipy.special, name)

    def erf(self, x: Storage) -> Storage:
        return self.special("erf")(x)

    def binary(self, fn: str, a: Storage, b: Storage) -> Storage:
        if fn == "add":
            return a + b
        if fn == "sub":
            return a - b
        if fn == "mul":
            return a * b
        if fn == "div":
            return a / b
        if fn == "tanh_backward":
            return a * (1 - b * b)
        if fn == "sigmoid_backward":
            return a * b * (1 - b)
        if fn == "pow" and a.dtype.kind in "iu":
            return self._int_pow(a, b)
        if fn in _XP_BINARY:
            return getattr(self.xp, _XP_BINARY[fn])(a, b)
        raise NotImplementedError(f"binary function {fn!r}")

    def _int_pow(self, a: Storage, b: Storage) -> Storage:
        """Integer powers; a negative exponent gives 1 for a base of 1, +-1 for -1 and 0
        otherwise, as PyTorch (numpy refuses them)."""
        xp = self.xp
        negative = b < 0
        out = xp.power(a, xp.where(negative, 0, b).astype(b.dtype, copy=False))
        if negative.any():
            one = xp.ones((), a.dtype)
            odd = (b % 2).astype(bool)
            small = xp.where(a == 1, one, xp.where(a == -1, xp.where(odd, -one, one), 0 * one))
            out = xp.where(negative, small, out)
        return out.astype(a.dtype, copy=False)

    def compare(self, fn: str, a: Storage, b: Storage) -> Storage:
        if fn == "eq":
            return a == b
        if fn == "ne":
            return a != b
        if fn == "lt":
            return a < b
        if fn == "le":
            return a <= b
        if fn == "gt":
            return a > b
        if fn == "ge":
            return a >= b
        raise NotImplementedError(f"comparison {fn!r}")

    def where(self, cond: Storage, a: Storage, b: Storage) -> Storage:
        return self.xp.where(cond, a, b)

    def affine(self, x: Storage, mul: float, add: float) -> Storage:
        # Python numbers never widen an array under numpy 2's promotion (NEP 50); integers
        # wrap as PyTorch's do.
        if x.dtype.kind in "iu":
            mul, add = wrapped(mul, x.dtype), wrapped(add, x.dtype)
        if add == 0:
            return x * mul
        if mul == 1:
            return x + add
        if mul == -1:
            return add - x  # s - x: one pass, and the same value as -x + s
        return x * mul + add

    def powf(self, x: Storage, exponent: float) -> Storage:
        if exponent == 3:  # PyTorch multiplies a cube out; power() can differ by an ulp
            return x * x * x
        return self.xp.power(x, x.dtype.type(exponent))

    def clamp(self, x: Storage, lo: float | None, hi: float | None) -> Storage:
        if lo is not None:
            x = self.xp.maximum(x, lo)
        if hi is not None:
            x = self.xp.minimum(x, hi)
        return x

    # -- reductions ----------------------------------------------------------------------
    def reduce(self, fn: str, x: Storage, dims: tuple, keepdim: bool) -> Storage:
        xp = self.xp
        if fn == "sum":
            dtype = np.int64 if x.dtype.kind in "biu" else x.dtype
            return xp.sum(x, axis=dims, keepdims=keepdim, dtype=dtype)
        if fn == "mean":
            if any(x.shape[d] == 0 for d in dims):  # the mean of nothing: nan, without
                shape = xp.sum(x, axis=dims, keepdims=keepdim).shape  # numpy's warning
                return xp.full(shape, xp.nan, dtype=x.dtype)
            return xp.mean(x, axis=dims, keepdims=keepdim, dtype=x.dtype)
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

    # -- scans and sorting (CUDA runs scan.cl and sort.cl instead: kernels/launches.py) ----
    def scan(self, fn: str, x: Storage, dim: int) -> Storage:
        if fn == "logsumexp":  # logaddexp is stable, and infinities pass through
            return self.xp.logaddexp.accumulate(x, axis=dim, dtype=x.dtype)
        accumulate = self.xp.cumsum if fn == "sum" else self.xp.cumprod
        return accumulate(x, axis=dim, dtype=x.dtype)

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
        z = x - self._extreme(xp.max, x, (dim % x.ndim,), True)
        if log:
            z -= xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))
            return z
        xp.exp(z, out=z)
        z /= xp.sum(z, axis=dim, keepdims=True)
        return z

    def standardize(self, x: Storage, dims: tuple, eps: float) -> tuple:
        xp = self.xp
        y = x - xp.mean(x, axis=dims, keepdims=True, dtype=x.dtype)
        var = xp.mean(xp.square(y), axis=dims, keepdims=True, dtype=x.dtype)
        rstd = 1 / xp.sqrt(var + eps)
        y *= rstd
        return y, rstd

    # -- linear algebra, convolution, pooling -----------------------------------------
    def matmul(self, a: Storage, b: Storage) -> Storage:
        return self.gemm(a, b)

    def gemm(self, a: Storage, b: Storage, out: Storage | None = None) -> Storage:
        """matmul, optionally into `out` (C-contiguous, the result's shape and dtype): every
        product of this backend, folded_conv's too, goes through here, where a subclass can
        hand it to another BLAS (the cpu backend's MKL)."""
        return self.xp.matmul(a, b, out=out)

    def linalg(self, fn: str, *arrays: Storage, option: Any = None) -> tuple:
        return linalg_routines.linalg(self.xp, fn, arrays, option)

    def im2col(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple) -> Storage:
        n, c, h, w = x.shape
        win = self._pool_windows(x, kernel, stride, padding, (1, 1),
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
        return folded_conv.conv2d(self.xp, self.gemm, x, w, stride, padding)

    def conv2d_backward(self, x: Storage, w: Storage, g: Storage, stride: tuple, padding: tuple,
                        dilation: tuple, groups: int, need_x: bool, need_w: bool) -> tuple:
        if not self._folds(w, dilation, groups):
            return NotImplemented
        return folded_conv.conv2d_backward(self.xp, self.gemm, x, w, g, stride, padding,
                                          need_x, need_w)

    def _folds(self, w: Storage, dilation: tuple, groups: int) -> bool:
        return (dilation == (1, 1) and groups == 1
                and w.shape[1] * w.shape[3] >= self.conv_fold_min_depth)

    def _pool_windows(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                      dilation: tuple, out_hw: tuple, fill: float) -> Storage:
        """A strided view [N, C, Ho, Wo, kh, kw] of the pooling windows' taps (no copy of
        the windows): x padded with `fill` on the left by `padding` and on the right as
        far as the last (ceil_mode) window reaches, taps `dilation` apart."""
        spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
        right = [max(p, (o - 1) * s + span - size - p) for size, o, s, span, p
                 in zip(x.shape[2:], out_hw, stride, spans, padding)]
        if any(padding) or any(right):
            x = self.xp.pad(x, ((0, 0), (0, 0), (padding[0], right[0]), (padding[1], right[1])),
                            mode="constant", constant_values=fill)
        view = self.xp.lib.stride_tricks.sliding_window_view(x, spans, axis=(2, 3))
        (ho, wo), (sh, sw), (dh, dw) = out_hw, stride, dilation
        return view[:, :, :sh * (ho - 1) + 1:sh, :sw * (wo - 1) + 1:sw, ::dh, ::dw]

    def max_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   dilation: tuple, ceil_mode: bool) -> tuple:
        xp = self.xp
        n, c, h, w = x.shape
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
        out_hw = window_counts((h, w), kernel, stride, padding, dilation, ceil_mode)
        fill = max_pool_fill(x.dtype)
        win = self._pool_windows(x, kernel, stride, padding, dilation, out_hw, fill)
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
        windows = index.shape[2] * index.shape[3]   # not -1: N may be 0
        flat = self._flat_offsets((n, c, h * w), 2, index.reshape(n, c, windows))
        out = self.xp.zeros(n * c * h * w, dtype=g.dtype)
        return self._store_distinct(out, flat, g).reshape(shape)

    def avg_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   ceil_mode: bool, count_include_pad: bool,
                   divisor_override: int | None) -> Storage:
        xp = self.xp
        h, w = x.shape[2:]
        out_hw = window_counts((h, w), kernel, stride, padding, ceil_mode=ceil_mode)
        win = self._pool_windows(x, kernel, stride, padding, (1, 1), out_hw, 0)
        if divisor_override is None and count_include_pad and not ceil_mode:
            return win.mean(axis=(-2, -1), dtype=x.dtype)   # every window's divisor kh*kw
        total = win.sum(axis=(-2, -1), dtype=x.dtype)
        divisor = avg_pool_divisor((h, w), kernel, stride, padding, out_hw,
                                   count_include_pad, divisor_override)
        # Divided in float64 and rounded once to x's dtype (integers truncate, as mean's).
        return (total / xp.asarray(divisor)).astype(x.dtype, copy=False)

    # -- indexing ------------------------------------------------------------------------
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

    def _flat_offsets(self, shape: tuple, dim: int, index: Storage) -> Storage:
        """Every (index, position) as one flat offset into an array of `shape`: the offsets
        of the other dims summed first, by broadcasting one small arange per dim, then
        added to the index in one pass."""
        strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
        base = 0
        for d, size in enumerate(index.shape):
            if d != dim:
                along = [1] * index.ndim
                along[d] = size
                base = base + self.xp.arange(size).reshape(along) * strides[d]
        return (index if strides[dim] == 1 else index * strides[dim]) + base

    @staticmethod
    def _store_distinct(out: Storage, flat: Storage, src: Storage) -> Storage:
        """scatter_add into the flat, zeroed `out` where the offsets `flat` never repeat:
        each sum is a single term, so a plain store is exact."""
        out[flat.ravel()] = src.ravel() + src.dtype.type(0)   # -0.0 -> 0.0, as a sum gives
        return out

    def scatter_add(self, shape: tuple, dim: int, index: Storage, src: Storage) -> Storage:
        xp = self.xp
        # Flat offsets, then a single bincount: deterministic, vectorised, and accumulated
        # in float64 before the final cast.
        flat = self._flat_offsets(shape, dim, index)
        src = src[tuple(slice(0, s) for s in index.shape)]
        size = math.prod(shape)
        if src.dtype.kind == "f" and index.shape[dim] == 1 and flat.size:
            # One index per line along dim (a cross-entropy's target, a gather of one
            # element): the offsets differ in the other dims, so they never repeat.
            return self._store_distinct(xp.zeros(size, dtype=src.dtype), flat,
                                        src).reshape(shape)
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
                return self._store_distinct(out, flat, src).reshape(shape)
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
        flat = self._flat_offsets(dst.shape, dim, index).ravel()
        values = src[tuple(slice(0, s) for s in index.shape)].ravel()
        out = xp.array(dst, copy=True, order="C")
        target = out.reshape(-1)
        if reduce == "none":
            target[flat] = values
        else:
            getattr(xp, self._SCATTER_UFUNCS[reduce]).at(target, flat, values)
        return out

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

