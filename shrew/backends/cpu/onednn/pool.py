"""Max and average pooling, forward and backward, in plain nchw (or ncdhw) layout."""
from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ....core.shape import window_counts
from .binding import (ARG_DIFF_DST, ARG_DIFF_SRC, ARG_DST, ARG_SRC, ARG_WORKSPACE, F32,
                      FORWARD_TRAINING, POOL_MAX, Dims, OneDNNError, Runtime)
from .matmul import data_type
from .primitive import Layout, Primitive, create_pd, using, with_mds

# -- pooling -------------------------------------------------------------------------------
def _pool_params(x_hw: Sequence[int], out_hw: Sequence[int], kernel: Sequence[int],
                 stride: Sequence[int],
                 padding: Sequence[int]) -> tuple[ctypes.Array[ctypes.c_int64], ...]:
    right = [(o - 1) * s + k - i - p
             for i, k, o, s, p in zip(x_hw, kernel, out_hw, stride, padding)]
    return (Dims(*stride), Dims(*kernel), Dims(*(0 for _ in kernel)), Dims(*padding),
            Dims(*right))


def _make_pool(backward: bool, alg: int, x_shape: tuple, y_shape: tuple, kernel: Sequence[int],
               stride: Sequence[int], padding: Sequence[int],
               dtype: int = F32) -> Callable[[Runtime], Primitive | None]:
    """make(runtime) for the cache: the forward or backward pooling primitive, every
    argument of oneDNN data type dtype (F32, or BF16: the values only compared, or the
    gradient only routed, so in bfloat16 no rounding happens)."""
    params = _pool_params(x_shape[2:], y_shape[2:], kernel, stride, padding)
    x_desc, y_desc = (s if dtype == F32 else Layout(s, dtype) for s in (x_shape, y_shape))

    def make(runtime: Runtime) -> Primitive | None:
        lib = runtime.lib
        fwd = with_mds(lib, (x_shape, y_shape), False, lambda x_md, y_md: create_pd(
            lib.dnnl_pooling_forward_primitive_desc_create, runtime.engine,
            FORWARD_TRAINING, alg, x_md, y_md, *params, None), dtype)
        if fwd is None:
            return None
        if not backward:
            return Primitive(runtime, fwd, {ARG_SRC: x_desc, ARG_DST: y_desc})
        pd = with_mds(lib, (x_shape, y_shape), False, lambda dx_md, dy_md: create_pd(
            lib.dnnl_pooling_backward_primitive_desc_create, runtime.engine, alg, dx_md,
            dy_md, *params, fwd, None), dtype)
        if pd is None:
            lib.dnnl_primitive_desc_destroy(fwd)
            return None
        return Primitive(runtime, pd, {ARG_DIFF_DST: y_desc, ARG_DIFF_SRC: x_desc},
                         hint=fwd)
    return make


def _data_type(x: np.ndarray, alg: int) -> int | None:
    """x's oneDNN data type where this module takes it: float32, and bfloat16 for max
    pooling only (which compares and routes, where average pooling would round its sums
    in oneDNN's way)."""
    dtype = data_type(x)
    return dtype if dtype == F32 or alg == POOL_MAX else None


def pool_output_hw(x_hw: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
                   padding: Sequence[int]) -> tuple:
    return window_counts(x_hw, kernel, stride, padding)


def pool2d(x: np.ndarray, alg: int, kernel: Sequence[int], stride: Sequence[int],
           padding: Sequence[int]) -> Any:  # (y, workspace), or NotImplemented
    """(y, workspace) of pooling x [N, C, H, W] (or [N, C, D, H, W]) with alg (POOL_MAX:
    padding never wins; POOL_AVG_INCLUDE / POOL_AVG_EXCLUDE: whether padded zeros count in
    the divisor), or NotImplemented.  The workspace, an opaque uint8 array (None for
    average pooling), is what pool2d_backward needs to route a max pooling's gradient.
    float32, or for POOL_MAX bfloat16 where oneDNN has kernels for it (matmul.data_type;
    max_pool.py says which inputs give PyTorch's bits); y in x's dtype."""
    dtype = _data_type(x, alg)
    if dtype is None:
        return NotImplemented
    y_shape = (*x.shape[:2], *pool_output_hw(x.shape[2:], kernel, stride, padding))
    key = ("pool", alg, x.shape, tuple(kernel), tuple(stride), tuple(padding), dtype)
    with using(key, _make_pool(False, alg, x.shape, y_shape, kernel, stride, padding,
                               dtype)) as prim:
        if prim is None:
            return NotImplemented
        y = np.empty(y_shape, dtype=x.dtype)
        buffers = {ARG_SRC: np.ascontiguousarray(x), ARG_DST: y}
        workspace = None
        if prim.workspace:
            workspace = buffers[ARG_WORKSPACE] = np.empty(prim.workspace, dtype=np.uint8)
        prim.run(buffers)
    return y, workspace


def pool2d_backward(g: np.ndarray, x_shape: Sequence[int], alg: int, kernel: Sequence[int],
                    stride: Sequence[int], padding: Sequence[int],
                    workspace: np.ndarray | None = None) -> Any:  # dx, or NotImplemented
    """d(loss)/dx [N, C, H, W] = x_shape of pool2d, given g = d(loss)/d(output) and, for
    POOL_MAX, pool2d's workspace; or NotImplemented.  dx in g's dtype (as pool2d's)."""
    dtype = _data_type(g, alg)
    if dtype is None or 0 in x_shape:
        return NotImplemented
    x_shape = tuple(x_shape)
    key = ("pool_backward", alg, x_shape, tuple(kernel), tuple(stride), tuple(padding), dtype)
    with using(key, _make_pool(True, alg, x_shape, g.shape, kernel, stride, padding,
                               dtype)) as prim:
        if prim is None:
            return NotImplemented
        dx = np.empty(x_shape, dtype=g.dtype)
        buffers = {ARG_DIFF_DST: np.ascontiguousarray(g), ARG_DIFF_SRC: dx}
        if prim.workspace:
            if workspace is None or workspace.nbytes != prim.workspace:
                raise OneDNNError("pool2d_backward: max pooling needs pool2d's workspace")
            buffers[ARG_WORKSPACE] = workspace
        prim.run(buffers)
    return dx

