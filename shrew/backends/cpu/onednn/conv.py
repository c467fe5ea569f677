"""Convolution forward, backward-data and backward-weights (stride, padding, dilation,
groups) on oneDNN's direct kernels, 2-d ([N, C, H, W]) or 3-d ([N, C, D, H, W]): the
sizes' tuples have one entry per spatial dim.  float32, and bfloat16 (float32
accumulation, each result rounded once to bfloat16, as PyTorch's CPU convolutions in
that dtype) where the CPU has oneDNN's bfloat16 kernels."""
from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ....core.shape import window_counts
from .binding import (ARG_DIFF_DST, ARG_DIFF_SRC, ARG_DIFF_WEIGHTS, ARG_DST, ARG_SRC,
                      ARG_WEIGHTS, CONVOLUTION_DIRECT, F32, FORWARD_TRAINING, Dims, Handle,
                      Runtime)
from .matmul import data_type
from .primitive import Layout, Primitive, create_pd, execute, with_mds


# -- convolution ---------------------------------------------------------------------------
def _conv_params(x_hw: Sequence[int], w_hw: Sequence[int], out_hw: Sequence[int],
                 stride: Sequence[int], padding: Sequence[int],
                 dilation: Sequence[int]) -> tuple[ctypes.Array[ctypes.c_int64], ...]:
    """oneDNN's strides, dilates (dilation - 1), padding_l and padding_r (the right or
    bottom padding that makes the output size come out as out_hw: PyTorch's floor)."""
    right = [(o - 1) * s + (k - 1) * d + 1 - i - p
             for i, k, o, s, p, d in zip(x_hw, w_hw, out_hw, stride, padding, dilation)]
    return (Dims(*stride), Dims(*(d - 1 for d in dilation)), Dims(*padding), Dims(*right))


def _weights_shape(w_shape: tuple, groups: int) -> tuple:
    o, c, *kernel = w_shape
    return w_shape if groups == 1 else (groups, o // groups, c, *kernel)


def conv_output_hw(x_hw: Sequence[int], w_hw: Sequence[int], stride: Sequence[int],
                   padding: Sequence[int], dilation: Sequence[int]) -> tuple:
    return window_counts(x_hw, w_hw, stride, padding, dilation)


def _conv_key(kind: str, x_shape: Sequence[int], w_shape: Sequence[int], stride: Sequence[int],
              padding: Sequence[int], dilation: Sequence[int], groups: int,
              dtype: int) -> tuple:
    return (kind, tuple(x_shape), tuple(w_shape), tuple(stride), tuple(padding),
            tuple(dilation), groups, dtype)


def _conv_forward_pd(runtime: Runtime, x_shape: tuple, w_shape: tuple, y_shape: tuple,
                     params: tuple, groups: int, dtype: int) -> Handle | None:
    lib = runtime.lib
    return with_mds(lib, (x_shape, _weights_shape(w_shape, groups), y_shape), True,
                    lambda x_md, w_md, y_md: create_pd(
                         lib.dnnl_convolution_forward_primitive_desc_create, runtime.engine,
                         FORWARD_TRAINING, CONVOLUTION_DIRECT, x_md, w_md, None, y_md,
                         *params, None), dtype)


def _make_conv(kind: str, x_shape: tuple, w_shape: tuple, stride: Sequence[int],
               padding: Sequence[int], dilation: Sequence[int], groups: int,
               dtype: int) -> Callable[[Runtime], Primitive | None]:
    """make(runtime) for the cache: the forward, backward-data or backward-weights primitive
    (every argument of oneDNN data type dtype)."""
    y_shape = (x_shape[0], w_shape[0],
               *conv_output_hw(x_shape[2:], w_shape[2:], stride, padding, dilation))
    params = _conv_params(x_shape[2:], w_shape[2:], y_shape[2:], stride, padding, dilation)
    gw_shape = _weights_shape(w_shape, groups)
    x_desc, gw_desc, y_desc = (s if dtype == F32 else Layout(s, dtype)
                               for s in (x_shape, gw_shape, y_shape))

    def make(runtime: Runtime) -> Primitive | None:
        lib = runtime.lib
        fwd = _conv_forward_pd(runtime, x_shape, w_shape, y_shape, params, groups, dtype)
        if fwd is None:
            return None
        if kind == "forward":
            return Primitive(runtime, fwd, {ARG_SRC: x_desc, ARG_WEIGHTS: gw_desc,
                                            ARG_DST: y_desc})
        if kind == "backward_data":
            pd = with_mds(lib, (x_shape, gw_shape, y_shape), True,
                          lambda dx_md, w_md, dy_md: create_pd(
                               lib.dnnl_convolution_backward_data_primitive_desc_create,
                               runtime.engine, CONVOLUTION_DIRECT, dx_md, w_md, dy_md,
                               *params, fwd, None), dtype)
            descs = {ARG_DIFF_DST: y_desc, ARG_WEIGHTS: gw_desc, ARG_DIFF_SRC: x_desc}
        else:
            pd = with_mds(lib, (x_shape, gw_shape, y_shape), True,
                          lambda x_md, dw_md, dy_md: create_pd(
                               lib.dnnl_convolution_backward_weights_primitive_desc_create,
                               runtime.engine, CONVOLUTION_DIRECT, x_md, dw_md, None, dy_md,
                               *params, fwd, None), dtype)
            descs = {ARG_SRC: x_desc, ARG_DIFF_DST: y_desc, ARG_DIFF_WEIGHTS: gw_desc}
        if pd is None:
            lib.dnnl_primitive_desc_destroy(fwd)
            return None
        return Primitive(runtime, pd, descs, hint=fwd)
    return make


def conv2d(x: np.ndarray, w: np.ndarray, stride: Sequence[int] = (1, 1),
           padding: Sequence[int] = (0, 0), dilation: Sequence[int] = (1, 1),
           groups: int = 1) -> Any:  # y, or NotImplemented
    """x [N, C, H, W] cross-correlated with w [O, C/groups, kh, kw], zero padding ->
    [N, O, Ho, Wo] (x's dtype), or NotImplemented; likewise with a depth for 3-d."""
    dtype = data_type(x, w)
    if dtype is None:
        return NotImplemented
    key = _conv_key("forward", x.shape, w.shape, stride, padding, dilation, groups, dtype)
    make = _make_conv("forward", x.shape, w.shape, stride, padding, dilation, groups, dtype)
    out_hw = conv_output_hw(x.shape[2:], w.shape[2:], stride, padding, dilation)
    y = np.empty((x.shape[0], w.shape[0], *out_hw), dtype=x.dtype)
    ran = execute(key, make, {ARG_SRC: np.ascontiguousarray(x),
                              ARG_WEIGHTS: np.ascontiguousarray(w), ARG_DST: y})
    return y if ran else NotImplemented


def conv2d_backward_data(g: np.ndarray, w: np.ndarray, x_shape: Sequence[int],
                         stride: Sequence[int] = (1, 1), padding: Sequence[int] = (0, 0),
                         dilation: Sequence[int] = (1, 1),
                         groups: int = 1) -> Any:  # dx, or NotImplemented
    """d(loss)/dx of conv2d, [N, C, H, W] = x_shape, given g = d(loss)/d(output); or
    NotImplemented."""
    dtype = data_type(g, w)
    if dtype is None or 0 in x_shape:
        return NotImplemented
    key = _conv_key("backward_data", x_shape, w.shape, stride, padding, dilation, groups,
                    dtype)
    make = _make_conv("backward_data", tuple(x_shape), w.shape, stride, padding, dilation,
                      groups, dtype)
    dx = np.empty(x_shape, dtype=w.dtype)
    ran = execute(key, make, {ARG_DIFF_DST: np.ascontiguousarray(g),
                              ARG_WEIGHTS: np.ascontiguousarray(w), ARG_DIFF_SRC: dx})
    return dx if ran else NotImplemented


def conv2d_backward_weights(x: np.ndarray, g: np.ndarray, w_shape: Sequence[int],
                            stride: Sequence[int] = (1, 1), padding: Sequence[int] = (0, 0),
                            dilation: Sequence[int] = (1, 1),
                            groups: int = 1) -> Any:  # dw, or NotImplemented
    """d(loss)/dw of conv2d, of shape w_shape [O, C/groups, kh, kw], given g; or
    NotImplemented."""
    dtype = data_type(x, g)
    if dtype is None or 0 in w_shape:
        return NotImplemented
    key = _conv_key("backward_weights", x.shape, w_shape, stride, padding, dilation, groups,
                    dtype)
    make = _make_conv("backward_weights", x.shape, tuple(w_shape), stride, padding, dilation,
                      groups, dtype)
    dw = np.empty(w_shape, dtype=x.dtype)
    ran = execute(key, make, {ARG_SRC: np.ascontiguousarray(x),
                              ARG_DIFF_DST: np.ascontiguousarray(g), ARG_DIFF_WEIGHTS: dw})
    return dw if ran else NotImplemented

