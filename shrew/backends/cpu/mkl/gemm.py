"""MKL's GEMMs for the cpu backend's float32 and float64 matrix products.

``matmul(a, b)`` takes numpy's matmul semantics (batch dims broadcast, 1-d operands
promoted) for float32 and float64 operands and returns ``NotImplemented`` where it does not
serve (switched off, MKL not loadable, another dtype, an empty or too large dimension):
the caller then runs numpy.  Operands are read in place wherever BLAS can address them
(row- or column-major matrices, any batch strides: one ``cblas_?gemm_batch_strided`` call
where the matrices are evenly spaced, else one ``cblas_?gemm_batch`` call over their
addresses); anything else is copied first.  MKL runs with ``MKL_DYNAMIC`` off on a fixed
thread count, so the same inputs give the same bits.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .library import INT_MAX, NO_TRANS, ROW_MAJOR, TRANS, Runtime, load, switch


def _layout(x: np.ndarray) -> tuple | None:
    """(transpose flag, leading dimension) under which BLAS reads x's last two dims where
    they lie, or None.  A dimension of size 1 may have any stride."""
    r, c = x.shape[-2:]
    s0, s1 = x.strides[-2:]
    size = x.itemsize
    if (c == 1 or s1 == size) and (r == 1 or (s0 % size == 0 and s0 >= c * size)):
        return NO_TRANS, s0 // size if r > 1 else c
    if (r == 1 or s0 == size) and (c == 1 or (s1 % size == 0 and s1 >= r * size)):
        return TRANS, s1 // size if c > 1 else r
    return None


def _addressable(x: np.ndarray) -> tuple:
    """(x, its layout) where BLAS can read x in place (its batch strides too: whole
    elements, not negative), else (a C-contiguous copy, its layout)."""
    layout = _layout(x)
    if (layout is not None and x.flags.aligned and layout[1] <= INT_MAX
            and all(s >= 0 and s % x.itemsize == 0 for s in x.strides[:-2])):
        return x, layout
    x = np.ascontiguousarray(x)
    return x, _layout(x)


def _row_major(out: np.ndarray) -> int | None:
    """The leading dimension under which BLAS writes out's last two dims, row-major, in
    place, or None (its batch strides must be whole elements, not negative, too)."""
    layout = _layout(out)
    if (layout is None or layout[0] != NO_TRANS or not out.flags.aligned
            or not out.flags.writeable or layout[1] > INT_MAX
            or any(s < 0 or s % out.itemsize for s in out.strides[:-2])):
        return None
    return layout[1]


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None,
           alpha: float = 1.0, beta: float = 0.0) -> np.ndarray:
    """alpha * (a @ b) on MKL (numpy's matmul semantics), or NotImplemented; `out`, where
    given, is an array of the result's shape and dtype whose matrices are row-major (any
    leading dimension and batch strides: a transposed view of a buffer laid out for the
    caller's next step), and receives it, plus beta times what it held (2-d only)."""
    if not switch.on or a.dtype != b.dtype or (beta and (out is None or a.ndim != 2
                                                         or b.ndim != 2)):
        return NotImplemented
    runtime = load()
    if runtime is None or a.ndim == 0 or b.ndim == 0 or a.dtype not in runtime.gemm:
        return NotImplemented
    if a.ndim == b.ndim == 2:   # most products: without the batch bookkeeping below
        (m, k), (k_b, n) = a.shape, b.shape
        ldc = n if out is None else _row_major(out)
        if k != k_b or not m * n * k or max(m, n, k) > INT_MAX or ldc is None:
            return NotImplemented
        (a, (trans_a, lda)), (b, (trans_b, ldb)) = _addressable(a), _addressable(b)
        result = np.empty((m, n), a.dtype) if out is None else out
        runtime.gemm[a.dtype](ROW_MAJOR, trans_a, trans_b, m, n, k, alpha, a.ctypes.data,
                              lda, b.ctypes.data, ldb, beta, result.ctypes.data, ldc)
        return result
    return _batched(runtime, a, b, out, alpha)


def addmm(bias: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """bias + a @ b for 2-d a and b and a bias [N] of their dtype, as PyTorch's addmm on
    MKL makes it: the result filled with the bias, then one GEMM adding the product into
    it (beta = 1), so that the bias joins the sums inside the GEMM; or NotImplemented.
    (A product rounded, then a bias added in a pass of its own: other bits, and on
    mlp_step's [256, 1024] layers about 8% slower.)"""
    if not (a.ndim == b.ndim == 2 and bias.shape == b.shape[1:] and bias.dtype == a.dtype
            and switch.on):
        return NotImplemented
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    out[...] = bias
    return matmul(a, b, out, 1.0, 1.0)


def _batched(runtime: Runtime, a: np.ndarray, b: np.ndarray, out: np.ndarray | None,
             alpha: float) -> Any:
    """matmul of operands with batch dims or a 1-d operand."""
    squeeze = [d for d, x in ((-2, a), (-1, b)) if x.ndim == 1]
    a = a[None, :] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    (m, k), (k_b, n) = a.shape[-2:], b.shape[-2:]
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return NotImplemented   # numpy raises its error
    count = math.prod(batch)
    if k != k_b or not m * n * k * count or max(m, n, k, count) > INT_MAX:
        return NotImplemented
    (a, (trans_a, lda)), (b, (trans_b, ldb)) = _addressable(a), _addressable(b)
    if out is None:
        result = np.empty(batch + (m, n), a.dtype)
    else:   # a view with a 1-d operand's squeezed dims restored
        result = out[(Ellipsis,) + tuple(None if d in squeeze else slice(None)
                                         for d in (-2, -1))]
    ldc = _row_major(result)
    if ldc is None:
        return NotImplemented
    operands = (np.broadcast_to(a, batch + (m, k)), np.broadcast_to(b, batch + (k, n)), result)
    if count == 1:
        runtime.gemm[a.dtype](ROW_MAJOR, trans_a, trans_b, m, n, k, alpha, a.ctypes.data,
                              lda, b.ctypes.data, ldb, 0.0, result.ctypes.data, ldc)
    elif ((steps := _even_steps(batch, operands)) is not None
          and steps[2] >= ldc * m):   # evenly spaced matrices
        # (MKL refuses results closer than ldc * m apart: one head's [T, D] of a [1, T,
        # H*D] buffer seen as [1, H, T, D] is D after the last: those take the list below)
        sa, sb, sc = steps
        runtime.gemm_batch[a.dtype](ROW_MAJOR, trans_a, trans_b, m, n, k, alpha,
                                    a.ctypes.data, lda, sa, b.ctypes.data, ldb, sb, 0.0,
                                    result.ctypes.data, ldc, sc, count)
    else:   # one call over a list of each operand's matrices
        pa, pb, pc = (_matrix_addresses(x, batch) for x in operands)
        runtime.gemm_pointers(a.dtype, trans_a, trans_b, m, n, k, alpha, pa, pb, pc,
                              lda, ldb, ldc, count)
    for d in squeeze:
        result = result.squeeze(d)
    return result if out is None else out


def _even_steps(batch: tuple, operands: tuple) -> tuple | None:
    """Each operand's step in elements from one matrix to the next, where every operand's
    matrices over the batch dims are evenly spaced in row-major order of those dims
    (contiguous batches, broadcast ones: step 0); else None."""
    dims = [d for d in range(len(batch)) if batch[d] > 1]
    steps = []
    for x in operands:
        strides = [x.strides[d] for d in dims]
        if any(outer != inner * batch[d] for outer, inner, d in
               zip(strides, strides[1:], dims[1:])):
            return None
        step = strides[-1] // x.itemsize if strides else 0
        if step > INT_MAX:
            return None
        steps.append(step)
    return tuple(steps)


def _matrix_addresses(x: np.ndarray, batch: tuple) -> np.ndarray:
    """The address of each of x's matrices over the batch dims, in row-major order."""
    offsets = np.zeros((), np.int64)
    for size, stride in zip(batch, x.strides[:len(batch)]):
        offsets = (offsets[..., None] + np.arange(size, dtype=np.int64) * stride)
    return (offsets.reshape(-1) + x.ctypes.data).astype(np.uintp)
