"""bfloat16 and float16 matrix products on oneDNN's matmul primitive: the 16-bit operands
read as they lie, products accumulated in float32 and each result rounded once to the
operands' dtype, as PyTorch's CPU mm, addmm and linear compute them through oneDNN; and
float32 products where the cpu backend runs them here rather than on MKL (vendor.py).

The other way, the cpu backend's widened product (a float32 copy of each operand, a
float32 GEMM, a float32 result rounded), costs three passes and the copies' memory beside
the GEMM.  Its values are the same up to the order of the float32 sums: within one
16-bit rounding of each other.

Operands: numpy's matmul semantics for 2-d and batched ones (batch dims broadcast), each
matrix row- or column-major with any leading dimension, batch strides that keep the
matrices apart (a transposed view such as linear's w.T, or attention heads interleaved in
the rows of one buffer, is read in place; anything else is copied first).  oneDNN
implements bfloat16 on CPUs with AVX512 (natively with AVX512-BF16 or AMX) and float16 on
CPUs with AVX512-FP16 or AMX-FP16; elsewhere it has no implementation but its reference
one, element by element, and the call declines (serves), as it does for any geometry it
would serve only with that.
"""
from __future__ import annotations

import ctypes
import math
from typing import Any

import ml_dtypes
import numpy as np

from .. import thresholds
from .binding import (ARG_BIAS, ARG_DST, ARG_SRC, ARG_WEIGHTS, BF16, F16, F32, LINEAR,
                      QUERY_IMPL_INFO_STR, Handle, Runtime, available, check, load)
from .primitive import Layout, Primitive, create_pd, execute, layout_md, post_ops_attr, usable

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
DATA_TYPES = {BFLOAT16: BF16, np.dtype(np.float16): F16, np.dtype(np.float32): F32}
"""The numpy dtypes this module takes, with their oneDNN data types."""

_INPUTS = frozenset((ARG_SRC, ARG_WEIGHTS, ARG_BIAS))


def matmul(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None,
           out: np.ndarray | None = None, alpha: float = 1.0) -> Any:
    """alpha * (a @ b) (+ bias, [N], added to every row before the one rounding) for
    bfloat16, float16 or float32 a [..., M, K] and b [..., K, N] of one dtype, in that
    dtype, into `out` where given (the result's shape and dtype, any strides that keep its
    elements apart: attention's heads interleaved in the rows of one buffer); or
    NotImplemented where oneDNN does not serve it (switched off or not loaded, another
    dtype, a 1-d operand, an empty dim, fewer multiply-adds than MATMUL_MIN_WORK, or for
    float32 F32_MATMUL_MIN_WORK (cpu/thresholds.py), an `out` it cannot address, no
    implementation but the reference one)."""
    dtype = DATA_TYPES.get(a.dtype)
    if (dtype is None or b.dtype != a.dtype or a.ndim < 2 or b.ndim < 2
            or a.shape[-1] != b.shape[-2] or not (a.size and b.size)
            or (bias is not None and (bias.dtype != a.dtype or bias.shape != b.shape[-1:]))
            or (out is not None and (out.dtype != a.dtype or not out.flags.writeable))
            or not serves(a.dtype)):
        return NotImplemented
    ndim = max(a.ndim, b.ndim)
    a_shape = (1,) * (ndim - a.ndim) + a.shape
    b_shape = (1,) * (ndim - b.ndim) + b.shape
    if any(p != q and 1 not in (p, q) for p, q in zip(a_shape[:-2], b_shape[:-2])):
        return NotImplemented   # batch dims that do not broadcast: numpy raises its error
    batch = tuple(max(p, q) for p, q in zip(a_shape[:-2], b_shape[:-2]))
    least = thresholds.F32_MATMUL_MIN_WORK if dtype == F32 else thresholds.MATMUL_MIN_WORK
    if math.prod(batch + a_shape[-2:] + b_shape[-1:]) < least:
        return NotImplemented
    out_shape = batch + (a_shape[-2], b_shape[-1])
    if out is None:
        out = np.empty(out_shape, a.dtype)
        out_strides = None
    else:
        out_strides = _element_strides(out) if out.shape == out_shape else None
        if out_strides is None or not _row_major(out_strides):
            return NotImplemented
    a, a_strides = _addressable(a.reshape(a_shape))
    b, b_strides = _addressable(b.reshape(b_shape))
    buffers = {ARG_SRC: a, ARG_WEIGHTS: b, ARG_DST: out}
    if bias is not None:
        buffers[ARG_BIAS] = np.ascontiguousarray(bias)
    # (a key of plain tuples: Layouts would cost their hashing on every call)
    key = ("matmul", dtype, a_shape, a_strides, b_shape, b_strides, bias is not None,
           out_strides, float(alpha))
    ran = execute(key, lambda runtime: _make(runtime, *key[1:]), buffers)
    return out if ran else NotImplemented


_kernels: dict = {}   # dnnl data type -> whether this CPU has a matmul kernel for it


def serves(dtype: np.dtype) -> bool:
    """Whether oneDNN serves products of `dtype` now: switched on and loaded, and a kernel
    other than the reference one for it on this CPU (asked once, on a small product, so
    that a dtype without one, float16 on most CPUs, declines before any cache entry)."""
    code = DATA_TYPES.get(dtype)
    runtime = load() if code is not None and available() else None
    if runtime is None or code is None:
        return False
    if code not in _kernels:
        shape = (16, 16)
        probe = _make(runtime, code, shape, (16, 1), shape, (16, 1), False)
        _kernels[code] = probe is not None
        if probe is not None:
            probe.close()
    return _kernels[code]


def data_type(*arrays: np.ndarray) -> int | None:
    """The oneDNN data type of the arrays of a call of a primitive that computes in
    float32 and rounds its result once (convolution, pooling, eltwise, binary): F32 for
    float32 (usable), BF16 for bfloat16 where oneDNN has bfloat16 products on this CPU
    (serves: its other bfloat16 kernels need the same instruction sets, AVX512); None for
    anything else, float16 too: it has no float16 kernels but its reference ones without
    AVX512-FP16, and each geometry it declined would take a cache entry."""
    if usable(*arrays):
        return F32
    dtype = arrays[0].dtype
    if (dtype == BFLOAT16 and all(a.dtype == dtype and a.size for a in arrays)
            and serves(dtype)):
        return BF16
    return None


def _row_major(strides: tuple) -> bool:
    """Whether a result with these element strides has row-major matrices (the only
    kind of destination oneDNN's fast matmul kernels write)."""
    return strides[-1] == 1


def _make(runtime: Runtime, dtype: int, a_shape: tuple, a_strides: tuple, b_shape: tuple,
          b_strides: tuple, bias: bool, out_strides: tuple | None = None,
          alpha: float = 1.0) -> Primitive | None:
    """The matmul primitive over exactly these layouts (no reorders), the result scaled
    by alpha (an eltwise post-op on the float32 sums, before the one rounding), for the
    cache; None where oneDNN has no implementation but its reference one."""
    batch = tuple(max(p, q) for p, q in zip(a_shape[:-2], b_shape[:-2]))
    descs = {ARG_SRC: Layout(a_shape, dtype, a_strides),
             ARG_WEIGHTS: Layout(b_shape, dtype, b_strides),
             ARG_DST: Layout(batch + (a_shape[-2], b_shape[-1]), dtype, out_strides)}
    if bias:
        descs[ARG_BIAS] = Layout((1,) * (len(b_shape) - 1) + b_shape[-1:], dtype)
    lib = runtime.lib
    mds = {arg: layout_md(lib, layout) for arg, layout in descs.items()}
    try:
        with post_ops_attr(lib) as (attr, ops):
            if alpha != 1.0:
                for status in (lib.dnnl_post_ops_append_eltwise(ops, LINEAR, alpha, 0.0),
                               lib.dnnl_primitive_attr_set_post_ops(attr, ops)):
                    check(status, "post_ops")
            pd = create_pd(lib.dnnl_matmul_primitive_desc_create, runtime.engine,
                           mds[ARG_SRC], mds[ARG_WEIGHTS], mds.get(ARG_BIAS), mds[ARG_DST],
                           attr if alpha != 1.0 else None)
    finally:
        for md in mds.values():
            lib.dnnl_memory_desc_destroy(md)
    if pd is None:
        return None
    if _implementation(lib, pd).startswith("ref"):   # element by element: far slower than
        lib.dnnl_primitive_desc_destroy(pd)           # the widened float32 GEMM
        return None
    return Primitive(runtime, pd, descs, inputs=_INPUTS)


def _implementation(lib: ctypes.CDLL, pd: Handle) -> str:
    """The name of the implementation oneDNN picked (brg:avx512_core_bf16, gemm:jit, ...)."""
    name = ctypes.c_char_p()
    check(lib.dnnl_primitive_desc_query(pd, QUERY_IMPL_INFO_STR, 0, ctypes.byref(name)),
          "primitive_desc_query")
    return (name.value or b"").decode()


def _addressable(x: np.ndarray) -> tuple[np.ndarray, tuple]:
    """(x, its strides in elements) where oneDNN can read x in place: every matrix row- or
    column-major, batch strides whole elements and not negative, no broadcast (0-stride)
    dim; else (a C-contiguous copy, its strides).  A dim of size 1 gets the stride a
    contiguous layout would give it (its own never moves the address)."""
    strides = _element_strides(x)
    if strides is None or not _matrix_layout(x.shape[-2:], strides[-2:]):
        x = np.ascontiguousarray(x)
        strides = _element_strides(x)
    assert strides is not None
    return x, strides


def _element_strides(x: np.ndarray) -> tuple | None:
    """x's strides in elements, each size-1 dim's replaced by the one a row-major layout
    gives it (the next dim's stride times its size: the stride never moves the address,
    and oneDNN picks its kernels by the layout it sees); None where a stride is negative,
    not a whole element or 0 on a dim of size > 1, or where two elements share an address
    (oneDNN rejects such a descriptor): the dims taken by stride must nest, each at least
    the span of those inside it."""
    size = x.itemsize
    if not x.flags.aligned or any(s < 0 or s % size for s in x.strides):
        return None
    moving = sorted((s // size, n) for n, s in zip(x.shape, x.strides) if n > 1)
    span = 1
    for stride, n in moving:
        if stride < span:
            return None
        span = stride * n
    out: list[int] = []
    inner = 1   # the next dim's stride times its size
    for n, s in zip(reversed(x.shape), reversed(x.strides)):
        out.append(s // size if n > 1 else inner)
        inner = out[-1] * n
    return tuple(reversed(out))


def _matrix_layout(shape: tuple, strides: tuple) -> bool:
    """Whether a [rows, cols] matrix with these element strides is row-major (stride 1
    along a row) or column-major, with a leading dimension that keeps rows (or columns)
    apart."""
    (rows, cols), (s0, s1) = shape, strides
    return (s1 == 1 and s0 >= cols) or (s0 == 1 and s1 >= rows)
