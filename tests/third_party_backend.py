"""A third-party backend written outside the shrew package, against the documented protocol
only (shrew/backends/base.py): nothing here imports shrew.

Storage is its own `Box` type (not a bare numpy array), so any place where the core touches
storage other than through the protocol shows up as a failure.  It supports fewer dtypes
than the CPU backend (no float16, no int32), which exercises the core's dtype checks.
"""
from __future__ import annotations

import math

import numpy as np

from shrew.backends.array_module import linalg as linalg_routines


class Box:
    """Opaque device storage: the core may read only .shape and .dtype."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = np.asarray(a)

    @property
    def shape(self):
        return tuple(int(s) for s in self.a.shape)

    @property
    def dtype(self):
        return self.a.dtype


def _gelu_tanh_derivative(v):
    c = math.sqrt(2 / math.pi)
    t = np.tanh(c * (v + 0.044715 * v ** 3))
    return 0.5 * (1 + t) + 0.5 * v * (1 - t ** 2) * c * (1 + 3 * 0.044715 * v ** 2)


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


class ToyBackend:
    dtypes = frozenset(np.dtype(t) for t in ("float32", "float64", "int64", "bool"))

    def __init__(self, name: str, index: int = 0):
        self.device = f"{name}:{index}"
        self.calls = 0  # kernels launched, so tests can see work really happens here
        self.manual_seed(0)

    def _box(self, a):
        self.calls += 1
        return Box(np.array(a, order="C"))  # a copy: no storage aliases another

    # -- host transfer and creation
    def from_numpy(self, a):
        return self._box(np.array(a, copy=True))

    def to_numpy(self, x):
        return np.array(x.a, copy=True, order="C")

    def full(self, shape, value, dtype):
        return self._box(np.full(shape, value, dtype=dtype))

    def arange(self, n, dtype):
        return self._box(np.arange(n, dtype=dtype))

    # -- layout
    def reshape(self, x, shape):
        return self._box(x.a.reshape(shape))

    def transpose(self, x, d0, d1):
        return self._box(np.swapaxes(x.a, d0, d1))

    def narrow(self, x, dim, start, length):
        return self._box(np.take(x.a, np.arange(start, start + length), axis=dim))

    def expand(self, x, shape):
        return self._box(np.broadcast_to(x.a, shape))

    def as_strided(self, x, shape, strides, offset):
        # a backend that cannot alias: the strided elements, copied (as narrow copies)
        tricks, item = np.lib.stride_tricks, x.a.dtype.itemsize
        start = tricks.as_strided(x.a, (abs(offset) + 1,), (item if offset >= 0 else -item,))
        view = tricks.as_strided(start[abs(offset):], tuple(shape),
                                 tuple(st * item for st in strides))
        return self._box(view.copy())

    def contiguous(self, x):
        return self._box(x.a.copy())

    def cat(self, xs, dim):
        return self._box(np.concatenate([x.a for x in xs], axis=dim))

    def pad(self, x, pads, value):
        return self._box(np.pad(x.a, pads, constant_values=value))

    def cast(self, x, dtype):
        return self._box(x.a.astype(dtype))

    # -- elementwise
    def unary(self, fn, x):
        a = x.a
        table = {
            "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
            "square": np.square, "relu": lambda v: np.where(v > 0, v, 0).astype(v.dtype),
            "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "tanh": np.tanh,
            "gelu": lambda v: 0.5 * v * (1 + _erf(v / math.sqrt(2))),
            "gelu_tanh": lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                         * (v + 0.044715 * v ** 3))),
            "silu": lambda v: v / (1 + np.exp(-v)), "sin": np.sin, "cos": np.cos,
            "floor": np.floor, "ceil": np.ceil, "round": np.round, "erf": _erf, "sign": np.sign,
            "gelu_derivative": lambda v: (0.5 * (1 + _erf(v / math.sqrt(2)))
                                          + v * np.exp(-v * v / 2) / math.sqrt(2 * math.pi)),
            "gelu_tanh_derivative": _gelu_tanh_derivative,
        }
        return self._box(np.asarray(table[fn](a)).astype(a.dtype))

    def binary(self, fn, a, b):
        op = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[fn]
        return self._box(op(a.a, b.a).astype(np.result_type(a.a, b.a)))

    def compare(self, fn, a, b):
        op = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
              "gt": np.greater, "ge": np.greater_equal}[fn]
        return self._box(op(a.a, b.a))

    def where(self, cond, a, b):
        return self._box(np.where(cond.a, a.a, b.a))

    def affine(self, x, mul, add):
        return self._box((x.a * mul + add).astype(x.a.dtype))

    def powf(self, x, exponent):
        return self._box(np.power(x.a, exponent).astype(x.a.dtype))

    def clamp(self, x, lo, hi):
        a = x.a
        if lo is not None:
            a = np.maximum(a, np.asarray(lo, dtype=a.dtype))
        if hi is not None:
            a = np.minimum(a, np.asarray(hi, dtype=a.dtype))
        return self._box(a)

    # -- reductions
    def reduce(self, fn, x, dims, keepdim):
        a = x.a
        if fn == "sum":
            dtype = np.int64 if a.dtype.kind in "biu" else a.dtype
            return self._box(np.sum(a, axis=dims, keepdims=keepdim, dtype=dtype))
        op = {"mean": np.mean, "max": np.max, "min": np.min}[fn]
        return self._box(np.asarray(op(a, axis=dims, keepdims=keepdim)).astype(a.dtype))

    def arg_reduce(self, fn, x, dim, keepdim):
        op = np.argmax if fn == "argmax" else np.argmin
        return self._box(op(x.a, axis=dim, keepdims=keepdim).astype(np.int64))

    # -- scans and sorting
    def scan(self, fn, x, dim):
        accumulate = np.cumsum if fn == "sum" else np.cumprod
        return self._box(accumulate(x.a, axis=dim, dtype=x.a.dtype))

    def arg_scan(self, fn, x, dim):
        a = x.a
        running = (np.maximum if fn == "max" else np.minimum).accumulate(a, axis=dim)
        positions = np.arange(a.shape[dim]).reshape((-1,) + (1,) * (a.ndim - dim - 1))
        takes_over = (a == running) | (a != a)
        return self._box(np.maximum.accumulate(np.where(takes_over, positions, 0), axis=dim)
                         .astype(np.int64))

    def argsort(self, x, dim, descending):
        if not descending:
            return self._box(np.argsort(x.a, axis=dim, kind="stable").astype(np.int64))
        order = np.flip(np.argsort(np.flip(x.a, axis=dim), axis=dim, kind="stable"), axis=dim)
        return self._box((x.a.shape[dim] - 1 - order).astype(np.int64))

    # -- fused normalisations
    def softmax(self, x, dim, log):
        z = x.a - x.a.max(axis=dim, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=dim, keepdims=True))
        return self._box((z - lse) if log else np.exp(z - lse))

    def standardize(self, x, dims, eps):
        centred = x.a - x.a.mean(axis=dims, keepdims=True)
        rstd = 1 / np.sqrt((centred ** 2).mean(axis=dims, keepdims=True) + eps)
        return self._box(centred * rstd), self._box(rstd.astype(x.a.dtype))

    # -- linear algebra, convolution, pooling
    def matmul(self, a, b):
        return self._box(np.matmul(a.a, b.a))

    def linalg(self, fn, *arrays, option=None):
        results = linalg_routines.linalg(np, fn, tuple(x.a for x in arrays), option)
        return tuple(self._box(r) for r in results)

    @staticmethod
    def _geometry(shape, kernel, stride, padding):
        _, _, h, w = shape
        ho = (h + 2 * padding[0] - kernel[0]) // stride[0] + 1
        wo = (w + 2 * padding[1] - kernel[1]) // stride[1] + 1
        return ho, wo

    def im2col(self, x, kernel, stride, padding):
        n, c = x.shape[:2]
        (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
        ho, wo = self._geometry(x.shape, kernel, stride, padding)
        a = np.pad(x.a, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
        cols = np.empty((n, c, kh, kw, ho, wo), dtype=a.dtype)
        for i in range(kh):
            for j in range(kw):
                cols[:, :, i, j] = a[:, :, i:i + sh * ho:sh, j:j + sw * wo:sw]
        return self._box(cols.reshape(n, c * kh * kw, ho * wo))

    def col2im(self, cols, shape, kernel, stride, padding):
        n, c, h, w = shape
        (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
        ho, wo = self._geometry(shape, kernel, stride, padding)
        out = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=cols.dtype)
        blocks = cols.a.reshape(n, c, kh, kw, ho, wo)
        for i in range(kh):
            for j in range(kw):
                out[:, :, i:i + sh * ho:sh, j:j + sw * wo:sw] += blocks[:, :, i, j]
        return self._box(out[:, :, ph:ph + h, pw:pw + w])

    @staticmethod
    def _pool_out(size, k, s, p, d, ceil_mode):
        out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        return out - 1 if ceil_mode and (out - 1) * s >= size + p else out

    def max_pool2d(self, x, kernel, stride, padding, dilation, ceil_mode):
        n, c, h, w = x.shape
        ho, wo = (self._pool_out(*args, ceil_mode)
                  for args in zip((h, w), kernel, stride, padding, dilation))
        values = np.full((n, c, ho, wo), -np.inf, dtype=x.dtype)
        index = np.zeros((n, c, ho, wo), dtype=np.int64)
        for i in range(ho):
            for j in range(wo):
                r0, c0 = i * stride[0] - padding[0], j * stride[1] - padding[1]
                while r0 < 0:
                    r0 += dilation[0]
                while c0 < 0:
                    c0 += dilation[1]
                index[:, :, i, j] = r0 * w + c0   # a window of -inf names its first tap
                for a in range(kernel[0]):
                    for b in range(kernel[1]):
                        r = i * stride[0] - padding[0] + a * dilation[0]
                        q = j * stride[1] - padding[1] + b * dilation[1]
                        if 0 <= r < h and 0 <= q < w:
                            v = x.a[:, :, r, q]
                            better = (v > values[:, :, i, j]) | (
                                np.isnan(v) & ~np.isnan(values[:, :, i, j]))
                            values[:, :, i, j] = np.where(better, v, values[:, :, i, j])
                            index[:, :, i, j] = np.where(better, r * w + q, index[:, :, i, j])
        return self._box(values), self._box(index)

    def avg_pool2d(self, x, kernel, stride, padding, ceil_mode, count_include_pad,
                   divisor_override):
        n, c, h, w = x.shape
        ho, wo = (self._pool_out(*args, 1, ceil_mode)
                  for args in zip((h, w), kernel, stride, padding))
        out = np.zeros((n, c, ho, wo), dtype=x.dtype)
        for i in range(ho):
            for j in range(wo):
                r0, c0 = i * stride[0] - padding[0], j * stride[1] - padding[1]
                r1, c1 = min(r0 + kernel[0], h + padding[0]), min(c0 + kernel[1], w + padding[1])
                count = (r1 - r0) * (c1 - c0)
                r0, c0, r1, c1 = max(r0, 0), max(c0, 0), min(r1, h), min(c1, w)
                if not count_include_pad:
                    count = (r1 - r0) * (c1 - c0)
                total = x.a[:, :, r0:r1, c0:c1].sum(axis=(2, 3))
                out[:, :, i, j] = total / (divisor_override or count)
        return self._box(out)

    # -- indexing
    def gather(self, x, dim, index):
        sl = tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(index.shape))
        return self._box(np.take_along_axis(x.a[sl], index.a, axis=dim))

    def scatter_add(self, shape, dim, index, src):
        out = np.zeros(shape, dtype=src.dtype)
        for pos in np.ndindex(*index.shape):
            target = list(pos)
            target[dim] = index.a[pos]
            out[tuple(target)] += src.a[pos]
        return self._box(out)

    def scatter(self, dst, dim, index, src, reduce):
        combine = {"none": lambda old, new: new, "sum": np.add, "prod": np.multiply,
                   "amax": np.maximum, "amin": np.minimum}[reduce]
        out = np.array(dst.a, copy=True, order="C")
        for pos in np.ndindex(*index.shape):  # in C order: along dim in index order
            target = list(pos)
            target[dim] = index.a[pos]
            out[tuple(target)] = combine(out[tuple(target)], src.a[pos])
        return self._box(out)

    # -- random numbers
    def manual_seed(self, seed):
        self._rng = np.random.RandomState(seed)

    def rand(self, shape, dtype):
        return self._box(self._rng.random_sample(shape).astype(dtype))

    def randn(self, shape, dtype):
        return self._box(self._rng.standard_normal(shape).astype(dtype))

    def get_rng_state(self):
        return self._rng.get_state()

    def set_rng_state(self, state):
        self._rng.set_state(state)

    def fft(self, x, dims, inverse):
        pairs = x.a[..., 0] + 1j * x.a[..., 1]
        out = (np.fft.ifftn(pairs, axes=dims) * np.prod([pairs.shape[d] for d in dims])
               if inverse else np.fft.fftn(pairs, axes=dims))  # (unnormalised either way)
        return self._box(np.stack([out.real, out.imag], -1).astype(x.a.dtype))

    # -- the recurrent cell step (PyTorch's gate order; ws as base.Backend.rnn_cell says)
    def rnn_cell(self, mode, gx, gh, state):
        pre = gx.a + gh.a
        sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
        if mode in ("rnn_tanh", "rnn_relu"):
            h = self._box(np.tanh(pre) if mode == "rnn_tanh" else np.maximum(pre, 0))
            return h, None, h
        if mode == "lstm":
            i, f, g, o = np.split(pre, 4, axis=1)
            i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
            c = f * state.a + i * g
            ws = np.concatenate([i, f, g, o, np.tanh(c)], axis=1)
            return self._box(o * np.tanh(c)), self._box(c), self._box(ws)
        xr, xz, xn = np.split(gx.a, 3, axis=1)
        hr, hz, hn = np.split(gh.a, 3, axis=1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        return (self._box(n + z * (state.a - n)), None,
                self._box(np.concatenate([r, z, n, hn], axis=1)))

    def rnn_cell_backward(self, mode, dh, dc, state, ws):
        d, w = dh.a, ws.a
        if mode in ("rnn_tanh", "rnn_relu"):
            pre = self._box(d * (1 - w * w) if mode == "rnn_tanh" else np.where(w > 0, d, 0))
            return pre, pre, None
        if mode == "lstm":
            i, f, g, o, tanh_c = np.split(w, 5, axis=1)
            total = d * o * (1 - tanh_c ** 2) + (0 if dc is None else dc.a)
            gates = self._box(np.concatenate([total * g * i * (1 - i),
                                              total * state.a * f * (1 - f),
                                              total * i * (1 - g * g),
                                              d * tanh_c * o * (1 - o)], axis=1))
            return gates, gates, self._box(total * f)
        r, z, n, hn = np.split(w, 4, axis=1)
        dn = d * (1 - z) * (1 - n * n)
        dz = d * (state.a - n) * z * (1 - z)
        dr = dn * hn * r * (1 - r)
        return (self._box(np.concatenate([dr, dz, dn], axis=1)),
                self._box(np.concatenate([dr, dz, dn * r], axis=1)), self._box(d * z))

    # -- in-place
    def copy_(self, dst, src):
        dst.a[...] = src.a

    def add_(self, dst, src, alpha):
        dst.a[...] = dst.a + (alpha * src.a).astype(dst.a.dtype)


def factory(index: int = 0) -> ToyBackend:
    return ToyBackend("toy", index)


factory.device_count = lambda: 2
