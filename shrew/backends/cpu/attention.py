"""Scaled dot-product attention in one call each way (base.FastAttention) for the cpu
backend: MKL's batched products and oneDNN's softmax, on float32 arrays large enough for
oneDNN's softmax.

What it saves over the core's composition (measured in a transformer training step,
benchmarks/README.md): the scale rides on the products (GEMM's alpha), the mask is added
into the scores in place and the softmax overwrites them, and each result is written where
the next step reads it: with heads interleaved ([N, L, H, E] memory seen as [N, H, L, E])
where the query's heads are, so that merging the heads, or the projections' gradients,
need no copy.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import mkl, onednn


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


def _takes(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> bool:
    """Whether q, k and v fit (float32, one batch shape) and the scores are large enough
    for oneDNN's softmax, with MKL and oneDNN both serving."""
    batch = q.shape[:-2]
    return (q.dtype == k.dtype == v.dtype == np.float32 and q.ndim >= 2
            and k.shape[:-2] == v.shape[:-2] == batch and q.shape[-1] == k.shape[-1]
            and k.shape[-2] == v.shape[-2] and 0 not in q.shape + k.shape + v.shape
            and math.prod(batch) * q.shape[-2] * k.shape[-2] >= onednn.MIN_ELEMENTWISE_SIZE
            and mkl.available() and onednn.available())


def forward(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray | None,
            scale: float) -> Any:
    """(softmax(q k^T scale + bias) v, the softmax), or NotImplemented."""
    if not _takes(q, k, v) or (bias is not None and bias.dtype != np.float32):
        return NotImplemented
    batch, length, keys = q.shape[:-2], q.shape[-2], k.shape[-2]
    weights = np.empty(batch + (length, keys), np.float32)
    if mkl.matmul(q, k.swapaxes(-1, -2), weights, scale) is NotImplemented:
        return NotImplemented
    if bias is not None:
        np.add(weights, bias, out=weights)
    # A NaN (a row masked whole, a NaN input) goes to the core, whose softmax carries it
    # through its row as PyTorch's does.
    if (onednn.softmax(weights, weights.ndim - 1, weights) is NotImplemented
            or mkl.has_nan(weights)):
        return NotImplemented
    out = _empty_like(q, batch + (length, v.shape[-1]))
    if mkl.matmul(weights, v, out) is NotImplemented:
        return NotImplemented
    return out, weights


def backward(g: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray,
             weights: np.ndarray, scale: float, need: tuple, joined: bool = False) -> Any:
    """(dq, dk, dv) of forward's output given its gradient g (None where `need` says so),
    or NotImplemented: dv = w^T g; ds = softmax's gradient of g v^T; dq = ds k scale,
    dk = ds^T q scale.  joined (the packed form: q, k and v [N, H, T, D] are views of one
    [N, T, 3HD] array, side by side): that array's whole gradient, the three written into
    their places in one buffer."""
    need_q, need_k, need_v = need
    if not _takes(q, k, v) or g.dtype != np.float32 or g.shape != q.shape[:-1] + v.shape[-1:]:
        return NotImplemented
    outs: list[np.ndarray | None]
    if joined:
        if q.ndim != 4 or not all(need) or not q.shape == k.shape == v.shape:
            return NotImplemented
        n, heads, length, width = q.shape
        joint = np.empty((n, length, 3 * heads * width), np.float32)
        outs = [joint[..., i * heads * width:(i + 1) * heads * width]
                .reshape(n, length, heads, width).transpose(0, 2, 1, 3) for i in range(3)]
    else:
        outs = [_empty_like(x, x.shape) if wanted else None for x, wanted in zip((q, k, v), need)]
    ds: np.ndarray | None = None
    if need_q or need_k:
        dw = mkl.matmul(g, v.swapaxes(-1, -2))
        got = NotImplemented if dw is NotImplemented else \
            onednn.softmax_backward(dw, weights, weights.ndim - 1, False)
        if got is NotImplemented:
            return NotImplemented
        ds = got
    products = ((ds, k, scale), (None if ds is None else ds.swapaxes(-1, -2), q, scale),
                (weights.swapaxes(-1, -2), g, 1.0))
    for out, (lhs, rhs, alpha) in zip(outs, products):
        if out is not None:
            assert lhs is not None   # ds exists where dq or dk is wanted
            if mkl.matmul(lhs, rhs, out, alpha) is NotImplemented:
                return NotImplemented
    return joint if joined else tuple(outs)
