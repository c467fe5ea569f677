"""The matrix products of scaled dot-product attention in one call each way
(base.FastAttention), batched, for float32 arrays: on oneDNN's matmul where vendor.py
makes it the faster library (CPUs not Intel's: 0.8-0.9x MKL's time on a transformer's
heads on a Zen 4), else on MKL's batched GEMMs.  The cpu backend (cpu/backend.py) runs
them around oneDNN's softmax and its gradient.

What it saves over the core's composition (measured in a transformer training step,
benchmarks/README.md): the scale rides on the products (GEMM's alpha), the mask is added
into the scores in place and the softmax overwrites them, and each result is written where
the next step reads it: with heads interleaved ([N, L, H, E] memory seen as [N, H, L, E])
where the query's heads are, so that merging the heads, or the projections' gradients,
need no copy.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import vendor
from .mkl.gemm import matmul as mkl_matmul


def _product(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None,
             alpha: float = 1.0) -> Any:
    """alpha * (a @ b), into `out` where given, on the library vendor.py chooses (MKL
    where oneDNN declines), or NotImplemented."""
    got = vendor.onednn_f32_product(a, b, None, out, alpha)
    return mkl_matmul(a, b, out, alpha) if got is NotImplemented else got


def _heads_interleaved(x: np.ndarray) -> bool:
    """Whether x [N, H, T, E] lies with its heads inside its rows ([N, T, H, E] memory),
    as the heads of a projection's output are."""
    return x.ndim == 4 and x.strides[1] < x.strides[2]


def _empty_like(layout: np.ndarray, shape: tuple) -> np.ndarray:
    """An empty float32 array of `shape`, with heads interleaved where `layout`'s are."""
    if not _heads_interleaved(layout):
        return np.empty(shape, np.float32)
    n, h, t, e = shape
    return np.empty((n, t, h, e), np.float32).transpose(0, 2, 1, 3)


def scores(q: np.ndarray, k: np.ndarray, bias: np.ndarray | None, scale: float) -> Any:
    """q k^T scale + bias, the bias added in place, or NotImplemented."""
    weights = np.empty(q.shape[:-2] + (q.shape[-2], k.shape[-2]), np.float32)
    if _product(q, k.swapaxes(-1, -2), weights, scale) is NotImplemented:
        return NotImplemented
    if bias is not None:
        np.add(weights, bias, out=weights)
    return weights


def weighted_values(weights: np.ndarray, v: np.ndarray, q: np.ndarray) -> Any:
    """weights v, laid out as q's heads are, or NotImplemented."""
    out = _empty_like(q, q.shape[:-2] + (q.shape[-2], v.shape[-1]))
    if _product(weights, v, out) is NotImplemented:
        return NotImplemented
    return out


def weights_gradient(g: np.ndarray, v: np.ndarray) -> Any:
    """g v^T, the gradient of the softmax's output, or NotImplemented."""
    return _product(g, v.swapaxes(-1, -2))


def gradient_buffers(q: np.ndarray, k: np.ndarray, v: np.ndarray, need: tuple,
                     joined: bool) -> tuple | None:
    """(the arrays dq, dk and dv are written into, None where `need` says so; the joint
    array or None), or None where joined does not fit.  joined (the packed form: q, k and v
    [N, H, T, D] are views of one [N, T, 3HD] array, side by side): that array's whole
    gradient, the three written into their places in one buffer."""
    if not joined:
        return [_empty_like(x, x.shape) if wanted else None
                for x, wanted in zip((q, k, v), need)], None
    if q.ndim != 4 or not all(need) or not q.shape == k.shape == v.shape:
        return None
    n, heads, length, width = q.shape
    joint = np.empty((n, length, 3 * heads * width), np.float32)
    outs = [joint[..., i * heads * width:(i + 1) * heads * width]
            .reshape(n, length, heads, width).transpose(0, 2, 1, 3) for i in range(3)]
    return outs, joint


def input_gradients(buffers: tuple, ds: np.ndarray | None, q: np.ndarray, k: np.ndarray,
                    g: np.ndarray, weights: np.ndarray, scale: float) -> Any:
    """dq = ds k scale, dk = ds^T q scale, dv = w^T g, into gradient_buffers' arrays (ds:
    the softmax's input gradient, None where neither dq nor dk is wanted); the joint array
    where there is one, else (dq, dk, dv); or NotImplemented."""
    outs, joint = buffers
    products = ((ds, k, scale), (None if ds is None else ds.swapaxes(-1, -2), q, scale),
                (weights.swapaxes(-1, -2), g, 1.0))
    for out, (lhs, rhs, alpha) in zip(outs, products):
        if out is not None:
            assert lhs is not None   # ds exists where dq or dk is wanted
            if _product(lhs, rhs, out, alpha) is NotImplemented:
                return NotImplemented
    return tuple(outs) if joint is None else joint
