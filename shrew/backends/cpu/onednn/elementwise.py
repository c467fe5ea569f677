"""Elementwise functions (GELU) and the row-wise normalisations (softmax, layer norm) on
large float32 arrays."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .binding import (ARG_DIFF_DST, ARG_DIFF_SRC, ARG_DST, ARG_MEAN, ARG_SRC, ARG_VARIANCE,
                      FORWARD_INFERENCE,
                      FORWARD_TRAINING, NORMALIZATION_FLAGS_NONE, SOFTMAX, Handle, Runtime)
from .primitive import Primitive, create_pd, execute, usable, with_mds

# -- elementwise and normalisations ----------------------------------------------------------
MIN_ELEMENTWISE_SIZE = 1 << 15
"""Below this many elements numpy's passes cost less than a call into oneDNN."""


def _forward_only(shapes: tuple[tuple, ...],
                  create: Callable[..., int]) -> Callable[[Runtime], Primitive | None]:
    """make(runtime) for a forward primitive over plain memory of `shapes` (source,
    destination, then any statistics), whose descriptor create(&pd, runtime, *memory
    descriptors) makes."""
    def make(runtime: Runtime) -> Primitive | None:
        pd = with_mds(runtime.lib, shapes, False,
                      lambda *mds: create_pd(create, runtime, *mds))
        if pd is None:
            return None
        args = (ARG_SRC, ARG_DST, ARG_MEAN, ARG_VARIANCE)
        return Primitive(runtime, pd, dict(zip(args, shapes)))
    return make


def _large_float32(x: np.ndarray) -> bool:
    return usable(x) and x.size >= MIN_ELEMENTWISE_SIZE


def eltwise(x: np.ndarray, alg: int) -> Any:  # y, or NotImplemented
    """alg (GELU_TANH, GELU_ERF) applied to every element of a float32 x, or NotImplemented."""
    if not _large_float32(x):
        return NotImplemented
    shape = (x.size,)
    make = _forward_only(
        (shape, shape), lambda pd, rt, src, dst: rt.lib.dnnl_eltwise_forward_primitive_desc_create(
            pd, rt.engine, FORWARD_INFERENCE, alg, src, dst, 0.0, 0.0, None))
    y = np.empty(x.shape, dtype=np.float32)
    ran = execute(("eltwise", alg, shape), make, {ARG_SRC: np.ascontiguousarray(x), ARG_DST: y})
    return y if ran else NotImplemented


def eltwise_derivative(x: np.ndarray, alg: int) -> Any:  # dx, or NotImplemented
    """The derivative of alg (GELU_TANH, GELU_ERF) at every element of a float32 x, as
    oneDNN's eltwise backward with an output gradient of ones; or NotImplemented."""
    if not _large_float32(x):
        return NotImplemented
    shape = (x.size,)

    def make(runtime: Runtime) -> Primitive | None:
        lib = runtime.lib

        def create(src_md: Handle, diff_md: Handle) -> tuple[Handle | None, Handle | None]:
            fwd = create_pd(lib.dnnl_eltwise_forward_primitive_desc_create, runtime.engine,
                            FORWARD_TRAINING, alg, src_md, diff_md, 0.0, 0.0, None)
            if fwd is None:
                return None, None
            return fwd, create_pd(lib.dnnl_eltwise_backward_primitive_desc_create,
                                  runtime.engine, alg, diff_md, diff_md, src_md, 0.0, 0.0, fwd,
                                  None)
        fwd, pd = with_mds(lib, (shape, shape), False, create)
        if pd is None:
            if fwd is not None:
                lib.dnnl_primitive_desc_destroy(fwd)
            return None
        return Primitive(runtime, pd, {ARG_SRC: shape, ARG_DIFF_DST: shape, ARG_DIFF_SRC: shape},
                         hint=fwd)
    dx = np.empty(x.shape, dtype=np.float32)
    ran = execute(("eltwise_derivative", alg, shape), make,
                  {ARG_SRC: np.ascontiguousarray(x), ARG_DIFF_DST: np.ones(x.shape, np.float32),
                   ARG_DIFF_SRC: dx})
    return dx if ran else NotImplemented


def softmax(x: np.ndarray, axis: int) -> Any:  # y, or NotImplemented
    """softmax of a float32 x along axis, where every later dim has size 1; else
    NotImplemented.  oneDNN does not carry a NaN to the rest of its row as PyTorch does:
    callers check.  (Its log-softmax is not used: its logarithm is about ten ulps off,
    1e-6 absolute where the log-probabilities are near 0.)"""
    # Along the innermost dim only: oneDNN's kernel for an outer one is its slow
    # reference code (measured 30x numpy's time on [8, 4, 128, 128] along dim 1).
    if not _large_float32(x) or math.prod(x.shape[axis + 1:]) != 1:
        return NotImplemented
    shape = (x.size // x.shape[axis], x.shape[axis])
    make = _forward_only(
        (shape, shape), lambda pd, rt, src, dst: rt.lib.dnnl_softmax_forward_primitive_desc_create(
            pd, rt.engine, FORWARD_INFERENCE, SOFTMAX, src, dst, 1, None))  # along rows
    y = np.empty(x.shape, dtype=np.float32)
    ran = execute(("softmax", shape), make, {ARG_SRC: np.ascontiguousarray(x), ARG_DST: y})
    return y if ran else NotImplemented


def layer_norm(x: np.ndarray, eps: float) -> Any:  # (y, mean, variance), or NotImplemented
    """(y, mean, variance) of a float32 x [rows, cols] standardised along its rows (biased
    variance, no scale or shift): y = (x - mean) / sqrt(variance + eps); or NotImplemented."""
    if not _large_float32(x):
        return NotImplemented
    rows = (x.shape[0],)

    def create(pd: Any, rt: Runtime, src: Handle, dst: Handle, stat: Handle,
               _: Handle) -> int:
        # forward_training: the statistics are outputs (inference would expect them given)
        return rt.lib.dnnl_layer_normalization_forward_primitive_desc_create(
            pd, rt.engine, FORWARD_TRAINING, src, dst, stat, eps, NORMALIZATION_FLAGS_NONE,
            None)
    y = np.empty(x.shape, dtype=np.float32)
    mean, var = np.empty(rows, dtype=np.float32), np.empty(rows, dtype=np.float32)
    ran = execute(("layer_norm", x.shape, float(eps)),
                  _forward_only((x.shape, x.shape, rows, rows), create),
                  {ARG_SRC: np.ascontiguousarray(x), ARG_DST: y, ARG_MEAN: mean,
                   ARG_VARIANCE: var})
    return (y, mean, var) if ran else NotImplemented
