"""Max and average pooling, forward and backward, in plain nchw (or ncdhw) layout."""
from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ....core.shape import window_counts
from .binding import (ARG_DIFF_DST, ARG_DIFF_SRC, ARG_DST, ARG_SRC, ARG_WORKSPACE,
                      FORWARD_TRAINING, Dims, OneDNNError, Runtime)
from .primitive import Primitive, create_pd, usable, using, with_mds

# -- pooling -------------------------------------------------------------------------------
def _pool_params(x_hw: Sequence[int], out_hw: Sequence[int], kernel: Sequence[int],
                 stride: Sequence[int],
                 padding: Sequence[int]) -> tuple[ctypes.Array[ctypes.c_int64], ...]:
    right = [(o - 1) * s + k - i - p
             for i, k, o, s, p in zip(x_hw, kernel, out_hw, stride, padding)]
    return (Dims(*stride), Dims(*kernel), Dims(*(0 for _ in kernel)), Dims(*padding),
            Dims(*right))


def _make_pool(backward: bool, alg: int, x_shape: tuple, y_shape: tuple, kernel: Sequence[int],
               stride: Sequence[int],
               padding: Sequence[int]) -> Callable[[Runtime], Primitive | None]:
    params = _pool_params(x_shape[2:], y_shape[2:], kernel, stride, padding)

    def make(runtime: Runtime) -> Primitive | None:
        lib = runtime.lib
        fwd = with_mds(lib, (x_shape, y_shape), False, lambda x_md, y_md: create_pd(
            lib.dnnl_pooling_forward_primitive_desc_create, runtime.engine,
            FORWARD_TRAINING, alg, x_md, y_md, *params, None))
        if fwd is None:
            return None
        if not backward:
            return Primitive(runtime, fwd, {ARG_SRC: x_shape, ARG_DST: y_shape})
        pd = with_mds(lib, (x_shape, y_shape), False, lambda dx_md, dy_md: create_pd(
            lib.dnnl_pooling_backward_primitive_desc_create, runtime.engine, alg, dx_md,
            dy_md, *params, fwd, None))
        if pd is None:
            lib.dnnl_primitive_desc_destroy(fwd)
            return None
        return Primitive(runtime, pd, {ARG_DIFF_DST: y_shape, ARG_DIFF_SRC: x_shape},
                         hint=fwd)
    return make


def pool_output_hw(x_hw: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
                   padding: Sequence[int]) -> tuple:
    return window_counts(x_hw, kernel, stride, padding)


def pool2d(x: np.ndarray, alg: int, kernel: Sequence[int], stride: Sequence[int],
           padding: Sequence[int]) -> Any:  # (y, workspace), or NotImplemented
    """(y, workspace) of pooling x [N, C, H, W] (or [N, C, D, H, W]) with alg (POOL_MAX:
    padding never wins; POOL_AVG_INCLUDE / POOL_AVG_EXCLUDE: whether padded zeros count in
    the divisor), or NotImplemented.  The workspace, an opaque uint8 array (None for
    average pooling), is what pool2d_backward needs to route a max pooling's gradient."""
    if not usable(x):
        return NotImplemented
    y_shape = (*x.shape[:2], *pool_output_hw(x.shape[2:], kernel, stride, padding))
    key = ("pool", alg, x.shape, tuple(kernel), tuple(stride), tuple(padding))
    with using(key, _make_pool(False, alg, x.shape, y_shape, kernel, stride, padding)) as prim:
        if prim is None:
            return NotImplemented
        y = np.empty(y_shape, dtype=np.float32)
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
    POOL_MAX, pool2d's workspace; or NotImplemented."""
    if not usable(g) or 0 in x_shape:
        return NotImplemented
    x_shape = tuple(x_shape)
    key = ("pool_backward", alg, x_shape, tuple(kernel), tuple(stride), tuple(padding))
    with using(key, _make_pool(True, alg, x_shape, g.shape, kernel, stride, padding)) as prim:
        if prim is None:
            return NotImplemented
        dx = np.empty(x_shape, dtype=np.float32)
        buffers = {ARG_DIFF_DST: np.ascontiguousarray(g), ARG_DIFF_SRC: dx}
        if prim.workspace:
            if workspace is None or workspace.nbytes != prim.workspace:
                raise OneDNNError("pool2d_backward: max pooling needs pool2d's workspace")
            buffers[ARG_WORKSPACE] = workspace
        prim.run(buffers)
    return dx

