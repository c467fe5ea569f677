"""Convolution with the batch folded into the GEMMs: ArrayModuleBackend's optional
``conv2d`` and ``conv2d_backward`` (conv.py; see base.FastConv).

The core's lowering, im2col to [N, C*kh*kw, Ho*Wo] and a batched GEMM, multiplies N small
matrices and copies rows only Wo long.  Here an image is transposed once to [C, H, W, N],
batch innermost, so that every copy moves runs of Wo*N elements and every GEMM spans the
whole batch:

- the strips: for each kernel column j, input columns j, j + sw, ... of every row of the
  padded input, [C, kw, Hp, Wo, N] (with a row stride sh > 1 the rows are grouped by
  phase, r + sh*q, so that the rows one kernel row reads stay evenly spaced).  As a matrix
  [C*kw, rows*Wo*N], kernel row i reads a window of Ho*Wo*N consecutive columns that
  starts i rows down: the im2col matrix of that kernel row, never built (kw copies of the
  input, not kh*kw).
- forward: out[O, Ho*Wo*N] = sum over i of W[:, :, i, :] @ window(i), then [N, O, Ho, Wo].
- dW[:, :, i, :] = (window(i) @ g[Ho*Wo*N, O])^T.
- dX: W[:, :, i, :]^T @ g is the im2col columns of kernel row i, [C, kw, Ho, Wo*N], and
  kw shifted adds sum them into a [C, Hp, Wp, N] buffer, which is cropped.

Every sum runs over i (and j) in a fixed order: the results repeat bit for bit.  Only
``xp`` calls that CuPy has too.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..kernels import window_output


def _to_chwn(xp: Any, x: Any, padding: tuple) -> Any:
    """[N, C, H, W] -> [C, Hp, Wp, N], zero padded: one strided copy."""
    n, c, h, w = x.shape
    pad_h, pad_w = padding
    out = xp.empty((c, h + 2 * pad_h, w + 2 * pad_w, n), dtype=x.dtype)
    if pad_h or pad_w:
        out[:, :pad_h] = 0
        out[:, pad_h + h:] = 0
        out[:, pad_h:pad_h + h, :pad_w] = 0
        out[:, pad_h:pad_h + h, pad_w + w:] = 0
    out[:, pad_h:pad_h + h, pad_w:pad_w + w] = x.transpose(1, 2, 3, 0)
    return out


def _to_nchw(xp: Any, a: Any) -> Any:
    """[C, H, W, N] -> a C-contiguous [N, C, H, W]."""
    return xp.ascontiguousarray(a.transpose(3, 0, 1, 2))


def _strips(xp: Any, xt: Any, kernel: tuple, stride: tuple, out_hw: tuple) -> tuple:
    """The strips of a [C, Hp, Wp, N] input as a matrix [C*kw, phases*rows*Wo*N], and the
    slice of its columns that each kernel row reads (see the module's docstring)."""
    c, _, _, n = xt.shape
    (kh, kw), (sh, sw), (ho, wo) = kernel, stride, out_hw
    phases, rows = min(sh, kh), (kh - 1) // sh + ho
    s = xp.empty((c, kw, phases, rows, wo, n), dtype=xt.dtype)
    for j in range(kw):
        cols = xt[:, :, j:j + sw * (wo - 1) + 1:sw]
        for r in range(phases):
            # Rows past the input's end lie in no window; they stay unwritten.
            src = cols[:, r::sh][:, :rows]
            s[:, j, r, :src.shape[1]] = src
    run = wo * n
    starts = [((i % sh) * rows + i // sh) * run for i in range(kh)]
    return s.reshape(c * kw, phases * rows * run), [slice(a, a + ho * run) for a in starts]


def conv2d(xp: Any, gemm: Callable, x: Any, w: Any, stride: tuple, padding: tuple) -> Any:
    """x [N, C, H, W] correlated with w [O, C, kh, kw] -> [N, O, Ho, Wo]; gemm(a, b, out=None)
    is the backend's matrix product."""
    o, c, kh, kw = w.shape
    ho, wo = window_output(x.shape[2], x.shape[3], (kh, kw), stride, padding)
    s, windows = _strips(xp, _to_chwn(xp, x, padding), (kh, kw), stride, (ho, wo))
    rows = xp.ascontiguousarray(w.transpose(2, 0, 1, 3)).reshape(kh, o, c * kw)
    out = gemm(rows[0], s[:, windows[0]])
    if kh > 1:
        part = xp.empty_like(out)
        for i in range(1, kh):
            gemm(rows[i], s[:, windows[i]], out=part)
            out += part
    return _to_nchw(xp, out.reshape(o, ho, wo, x.shape[0]))


def conv2d_backward(xp: Any, gemm: Callable, x: Any, w: Any, g: Any, stride: tuple,
                    padding: tuple, need_x: bool, need_w: bool) -> tuple:
    """(dL/dx or None, dL/dw or None) of conv2d, given g = dL/d(output)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    ho, wo = g.shape[2:]
    gx = gw = None
    if need_w:
        s, windows = _strips(xp, _to_chwn(xp, x, padding), (kh, kw), stride, (ho, wo))
        g_rows = xp.ascontiguousarray(g.transpose(2, 3, 0, 1)).reshape(ho * wo * n, o)
        gw = xp.empty((o, c, kh, kw), dtype=w.dtype)
        for i in range(kh):
            gw[:, :, i] = gemm(s[:, windows[i]], g_rows).reshape(c, kw, o).transpose(2, 0, 1)
    if need_x:
        # The columns of kernel row i, W[:, :, i, :]^T @ g, summed back into the padded
        # input by kw shifted adds.
        (sh, sw), (ph, pw) = stride, padding
        g_t = xp.ascontiguousarray(g.transpose(1, 2, 3, 0)).reshape(o, ho * wo * n)
        rows = xp.ascontiguousarray(w.transpose(2, 1, 3, 0)).reshape(kh, c * kw, o)
        dxt = xp.zeros((c, h + 2 * ph, wd + 2 * pw, n), dtype=x.dtype)
        cols = xp.empty((c * kw, ho * wo * n), dtype=x.dtype)
        for i in range(kh):
            gemm(rows[i], g_t, out=cols)
            part = cols.reshape(c, kw, ho, wo, n)
            dst = dxt[:, i:i + sh * (ho - 1) + 1:sh]
            for j in range(kw):
                dst[:, :, j:j + sw * (wo - 1) + 1:sw] += part[:, j]
        gx = _to_nchw(xp, dxt[:, ph:ph + h, pw:pw + wd])
    return gx, gw
