"""Elementwise functions (GELU, relu's gradient) and the row-wise normalisations (softmax,
log-softmax, layer norm) on large float32 arrays, and the in-place add of a broadcast
bfloat16 bias."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .binding import (ARG_DIFF_DST, ARG_DIFF_SCALE, ARG_DIFF_SHIFT, ARG_DIFF_SRC, ARG_DST,
                      ARG_MEAN, ARG_SCALE, ARG_SHIFT, ARG_SRC, ARG_SRC_1, ARG_VARIANCE,
                      BACKWARD, BACKWARD_DATA, BF16, BINARY_ADD, BINARY_LE, BINARY_MUL,
                      BINARY_SUB, EXP, FORWARD_INFERENCE, FORWARD_TRAINING, LINEAR,
                      NORMALIZATION_FLAGS_NONE, REDUCTION_SUM, SOFTMAX, SOFTMAX_LOG, USE_SCALE,
                      USE_SHIFT, Handle, Runtime, check, post_op_arg)
from .. import bits16, thresholds
from .matmul import BFLOAT16, data_type, serves
from .primitive import (Layout, Primitive, create_pd, execute, layout_md, post_ops_attr,
                        usable, with_mds)


def _forward_only(shapes: tuple[tuple, ...], create: Callable[..., int],
                  more: dict | None = None) -> Callable[[Runtime], Primitive | None]:
    """make(runtime) for a forward primitive over plain memory of `shapes` (source,
    destination, then any statistics), whose descriptor create(&pd, runtime, *memory
    descriptors) makes; `more` maps any further argument (DNNL_ARG_*: a normalisation's
    scale and shift) to its shape."""
    def make(runtime: Runtime) -> Primitive | None:
        pd = with_mds(runtime.lib, shapes, False,
                      lambda *mds: create_pd(create, runtime, *mds))
        if pd is None:
            return None
        args = dict(zip((ARG_SRC, ARG_DST, ARG_MEAN, ARG_VARIANCE), shapes))
        return Primitive(runtime, pd, {**args, **(more or {})})
    return make


def large_float32(x: np.ndarray) -> bool:
    """Whether oneDNN's elementwise path takes x: switched on and loaded, float32, and at
    least MIN_ELEMENTWISE_SIZE elements (cpu/thresholds.py).  Callers check it
    before a pass that only prepares such a call."""
    return usable(x) and x.size >= thresholds.MIN_ELEMENTWISE_SIZE


def eltwise(x: np.ndarray, alg: int) -> Any:  # y, or NotImplemented
    """alg (GELU_TANH, GELU_ERF) applied to every element of a float32 x, or NotImplemented."""
    if not large_float32(x):
        return NotImplemented
    shape = (x.size,)
    make = _forward_only(
        (shape, shape), lambda pd, rt, src, dst: rt.lib.dnnl_eltwise_forward_primitive_desc_create(
            pd, rt.engine, FORWARD_INFERENCE, alg, src, dst, 0.0, 0.0, None))
    y = np.empty(x.shape, dtype=np.float32)
    ran = execute(("eltwise", alg, shape), make, {ARG_SRC: np.ascontiguousarray(x), ARG_DST: y})
    return y if ran else NotImplemented


def _with_hint(shapes: tuple[tuple, ...], forward: Callable[..., Handle | None],
               backward: Callable[..., Handle | None],
               args: dict) -> Callable[[Runtime], Primitive | None]:
    """make(runtime) for a backward primitive over plain memory of `shapes`:
    forward(runtime, *memory descriptors) makes the descriptor of the forward primitive
    that oneDNN wants as a hint, backward(runtime, hint, *memory descriptors) the
    primitive's; `args` maps each argument (DNNL_ARG_*) it runs on to its shape."""
    def make(runtime: Runtime) -> Primitive | None:
        lib = runtime.lib

        def create(*mds: Handle) -> tuple[Handle | None, Handle | None]:
            fwd = forward(runtime, *mds)
            return (None, None) if fwd is None else (fwd, backward(runtime, fwd, *mds))
        fwd, pd = with_mds(lib, shapes, False, create)
        if pd is None:
            if fwd is not None:
                lib.dnnl_primitive_desc_destroy(fwd)
            return None
        return Primitive(runtime, pd, args, hint=fwd)
    return make


def _diff_src(key: tuple, make: Callable[[Runtime], Primitive | None], shape: tuple,
              inputs: dict, outputs: dict | None = None) -> Any:  # dx, or NotImplemented
    """Run the backward primitive for `key` on `inputs` (argument -> numpy array, made
    C-contiguous) into a new float32 gradient of `shape` (and into `outputs`, argument ->
    a new C-contiguous array, where it writes more); NotImplemented where oneDNN has no
    implementation."""
    dx = np.empty(shape, dtype=np.float32)
    buffers = {arg: np.ascontiguousarray(a) for arg, a in inputs.items()}
    buffers[ARG_DIFF_SRC] = dx
    if outputs:
        buffers.update(outputs)
    return dx if execute(key, make, buffers) else NotImplemented


def eltwise_backward(g: np.ndarray, x: np.ndarray, alg: int) -> Any:  # dx, or NotImplemented
    """g times the derivative of alg (GELU_TANH, GELU_ERF) at x, elementwise, for float32 g
    and x of one shape, in one pass (oneDNN's eltwise backward); or NotImplemented."""
    if not (large_float32(x) and usable(g) and g.shape == x.shape):
        return NotImplemented
    return _eltwise_backward(g, x, alg)


def _eltwise_backward(g: np.ndarray, x: np.ndarray, alg: int) -> Any:
    """eltwise_backward's oneDNN call, on arrays it takes."""
    shape = (x.size,)
    make = _with_hint(
        (shape, shape),
        lambda rt, src, diff: create_pd(rt.lib.dnnl_eltwise_forward_primitive_desc_create,
                                        rt.engine, FORWARD_TRAINING, alg, src, diff, 0.0,
                                        0.0, None),
        lambda rt, fwd, src, diff: create_pd(
            rt.lib.dnnl_eltwise_backward_primitive_desc_create, rt.engine, alg, diff, diff,
            src, 0.0, 0.0, fwd, None),
        {ARG_SRC: shape, ARG_DIFF_DST: shape, ARG_DIFF_SRC: shape})
    return _diff_src(("eltwise_backward", alg, shape), make, x.shape,
                     {ARG_SRC: x, ARG_DIFF_DST: g})


def _binary(runtime: Runtime, alg: int, shapes: tuple[tuple, tuple],
            post_ops: Callable[[Handle, tuple[Handle, Handle]], tuple[int, ...]],
            more: dict) -> Primitive | None:
    """oneDNN's binary primitive alg(src, src_1) over plain float32 memory of `shapes`
    (src and dst: the first; src_1: the second, broadcast), followed by the post-ops that
    post_ops(post-ops handle, (src's, src_1's memory descriptors)) appends (returning
    each append's status); `more` maps the post-ops' own arguments to their shapes."""
    lib = runtime.lib
    with post_ops_attr(lib) as (attr, ops):
        def create(src: Handle, src_1: Handle) -> Handle | None:
            for status in (*post_ops(ops, (src, src_1)),
                           lib.dnnl_primitive_attr_set_post_ops(attr, ops)):
                check(status, "post_ops")
            return create_pd(lib.dnnl_binary_primitive_desc_create, runtime.engine,
                             alg, src, src_1, src, attr)
        pd = with_mds(lib, shapes, False, create)
    if pd is None:
        return None
    return Primitive(runtime, pd, {ARG_SRC: shapes[0], ARG_SRC_1: shapes[1],
                                   ARG_DST: shapes[0], **more})


def _relu_backward_primitive(runtime: Runtime, n: int) -> Primitive | None:
    """oneDNN's binary primitive for relu's gradient over n elements: x <= 0 as 1 or 0
    (0 for a NaN x), then the post-ops 1 - that, times g, plus 0."""
    lib = runtime.lib
    return _binary(runtime, BINARY_LE, ((n,), (1,)), lambda ops, mds: (
        lib.dnnl_post_ops_append_eltwise(ops, LINEAR, -1.0, 1.0),
        lib.dnnl_post_ops_append_binary(ops, BINARY_MUL, mds[0]),
        lib.dnnl_post_ops_append_eltwise(ops, LINEAR, 1.0, 0.0)), {_RELU_G: (n,)})


_RELU_G = post_op_arg(1, ARG_SRC_1)   # g, the second post-op's operand
_ZERO = np.zeros(1, np.float32)


def relu_backward(g: np.ndarray, x: np.ndarray) -> Any:  # dx, or NotImplemented
    """relu's gradient for float32 g and x of one shape, in one pass: g * 1 + 0 where x > 0
    or is NaN, else g * 0 + 0, which is +0 for a finite g (PyTorch's threshold_backward)
    and NaN for an infinite or NaN one (callers check g); or NotImplemented.  The + 0
    also makes a passed g of -0.0 +0.0, where PyTorch keeps -0.0: oneDNN 3.2 has no
    select, and every product that zeroes g carries its sign."""
    if not (large_float32(x) and usable(g) and g.shape == x.shape):
        return NotImplemented
    dx = np.empty(x.shape, dtype=np.float32)
    buffers = {ARG_SRC: np.ascontiguousarray(x), ARG_SRC_1: _ZERO, ARG_DST: dx,
               _RELU_G: np.ascontiguousarray(g)}
    ran = execute(("relu_backward", x.size),
                  lambda runtime: _relu_backward_primitive(runtime, x.size), buffers)
    return dx if ran else NotImplemented


# A bfloat16 sum comes out subnormal (which oneDNN's bfloat16 store flushes to zero, where
# PyTorch keeps it) only where an operand's magnitude is below 2^-118 (bit pattern 0x480):
# two larger ones are multiples of 2^-125, so their sum is 0 or normal.
_TINY_BFLOAT16 = 0x480


def add_into(dst: np.ndarray, src: np.ndarray) -> bool:
    """dst += src in place, for a C-contiguous bfloat16 dst of at least
    MIN_ELEMENTWISE_SIZE elements and a bfloat16 src that broadcasts to it without
    growing it (a bias [1, C, 1, 1]), in one pass of oneDNN's binary add: the float32 sum
    rounded once, as PyTorch's bfloat16 add.  False, dst untouched, where it does not
    serve: another dtype or layout, no bfloat16 kernels, or an operand holding a
    magnitude small enough for the sum to come out subnormal."""
    if (data_type(dst, src) != BF16 or dst.size < thresholds.MIN_ELEMENTWISE_SIZE
            or not dst.flags.c_contiguous or src.ndim > dst.ndim
            or np.may_share_memory(dst, src)):   # (numpy's += copies such a src first)
        return False
    src_shape = (1,) * (dst.ndim - src.ndim) + src.shape
    if any(s not in (1, d) for s, d in zip(src_shape, dst.shape)):
        return False
    src = np.ascontiguousarray(src)
    if bits16.holds(src, below=_TINY_BFLOAT16) or bits16.holds(dst, below=_TINY_BFLOAT16):
        return False
    key = ("add_into", dst.shape, src_shape)
    buffers = {ARG_SRC: dst, ARG_SRC_1: src, ARG_DST: dst}
    return execute(key, lambda runtime: _make_add(runtime, dst.shape, src_shape), buffers)


def _make_add(runtime: Runtime, shape: tuple, src_shape: tuple) -> Primitive | None:
    """oneDNN's bfloat16 binary add of a [src_shape] broadcast onto [shape], for the cache."""
    descs = {ARG_SRC: Layout(shape, BF16), ARG_SRC_1: Layout(src_shape, BF16),
             ARG_DST: Layout(shape, BF16)}
    lib = runtime.lib
    mds = {arg: layout_md(lib, layout) for arg, layout in descs.items()}
    try:
        pd = create_pd(lib.dnnl_binary_primitive_desc_create, runtime.engine, BINARY_ADD,
                       mds[ARG_SRC], mds[ARG_SRC_1], mds[ARG_DST], None)
    finally:
        for md in mds.values():
            lib.dnnl_memory_desc_destroy(md)
    return None if pd is None else Primitive(runtime, pd, descs)


def to_bfloat16(x: np.ndarray) -> Any:  # a bfloat16 copy, or NotImplemented
    """A C-contiguous float32 x of at least MIN_ELEMENTWISE_SIZE elements rounded to
    bfloat16 (to nearest, ties to even) by oneDNN's reorder, on both threads (1M elements:
    0.05 ms against numpy's 0.42 on a Zen 4); NotImplemented where oneDNN has no bfloat16
    kernels for this CPU.  The reorder flushes a subnormal to zero and keeps a NaN's
    payload, where PyTorch and ml_dtypes round the one and give 0x7fc0 for the other:
    callers make sure x holds neither (cpu/backend.py's cast)."""
    if not takes_to_bfloat16(x):
        return NotImplemented
    n = x.size
    out = np.empty(x.shape, BFLOAT16)
    ran = execute(("to_bfloat16", n), lambda runtime: _reorder(runtime, n),
                  {ARG_SRC: x.reshape(n), ARG_DST: out.reshape(n)})
    return out if ran else NotImplemented


def takes_to_bfloat16(x: np.ndarray) -> bool:
    """Whether to_bfloat16 serves x: a C-contiguous float32 x of at least
    MIN_ELEMENTWISE_SIZE elements, on a CPU with oneDNN bfloat16 kernels."""
    return large_float32(x) and x.flags.c_contiguous and serves(BFLOAT16)


def _reorder(runtime: Runtime, n: int) -> Primitive | None:
    """oneDNN's reorder of n float32 elements to bfloat16."""
    lib = runtime.lib
    descs = {ARG_SRC: Layout((n,)), ARG_DST: Layout((n,), BF16)}
    src, dst = (layout_md(lib, layout) for layout in descs.values())
    try:
        pd = create_pd(lib.dnnl_reorder_primitive_desc_create, src, runtime.engine, dst,
                       runtime.engine, None)
    finally:
        lib.dnnl_memory_desc_destroy(src)
        lib.dnnl_memory_desc_destroy(dst)
    return None if pd is None else Primitive(runtime, pd, descs, inputs=frozenset({ARG_SRC}))


def eltwise_derivative(x: np.ndarray, alg: int) -> Any:  # dx, or NotImplemented
    """The derivative of alg (GELU_TANH, GELU_ERF) at every element of a float32 x, as
    oneDNN's eltwise backward with an output gradient of ones; or NotImplemented."""
    if not large_float32(x):
        return NotImplemented
    return _eltwise_backward(np.ones(x.shape, np.float32), x, alg)


def _rows(x: np.ndarray, axis: int) -> tuple | None:
    """x's shape as [rows, x.shape[axis]] where axis is its innermost dim of size > 1."""
    if math.prod(x.shape[axis + 1:]) != 1:
        return None
    return (x.size // x.shape[axis], x.shape[axis])


def softmax(x: np.ndarray, axis: int, out: np.ndarray | None = None) -> Any:  # y, or NotImplemented
    """softmax of a float32 x along axis, where every later dim has size 1, into `out`
    (C-contiguous, x itself allowed) where given; else NotImplemented.  oneDNN does not
    carry a NaN to the rest of its row as PyTorch does: callers check.  (Its log-softmax
    is not used: its logarithm is about ten ulps off, 1e-6 absolute where the
    log-probabilities are near 0.)"""
    # Along the innermost dim only: oneDNN's kernel for an outer one is its slow
    # reference code (measured 30x numpy's time on [8, 4, 128, 128] along dim 1).
    shape = _rows(x, axis) if large_float32(x) else None
    if shape is None:
        return NotImplemented
    make = _forward_only(
        (shape, shape), lambda pd, rt, src, dst: rt.lib.dnnl_softmax_forward_primitive_desc_create(
            pd, rt.engine, FORWARD_INFERENCE, SOFTMAX, src, dst, 1, None))  # along rows
    y = np.empty(x.shape, dtype=np.float32) if out is None else out
    ran = execute(("softmax", shape), make, {ARG_SRC: np.ascontiguousarray(x), ARG_DST: y})
    return y if ran else NotImplemented


def log_softmax(x: np.ndarray, axis: int) -> Any:  # y, or NotImplemented
    """log_softmax of a float32 x along axis (its innermost dim, as for softmax) as
    PyTorch's and numpy's code compute it, (x - max) - log(sum(exp(x - max))), where every
    row's max is finite; else NotImplemented (numpy's code carries a NaN, an infinity or a
    row masked whole through its row as PyTorch does).  Four passes, the last three on
    oneDNN's threads: numpy's max; exp(x - max) (a subtraction with an exp post-op, into
    the output); its sum along the rows (a reduction); (x - max) - log(sum), the sums'
    logarithms numpy's (a subtraction with a subtraction post-op).  About 3x numpy's
    speed on a word model's [700, 2000] logits.  (oneDNN's own log-softmax is about ten
    ulps off near 0: its logarithm.)"""
    shape = _rows(x, axis) if large_float32(x) else None
    if shape is None:
        return NotImplemented
    rows, cols = shape
    given = x.shape
    x = np.ascontiguousarray(x).reshape(shape)
    top = x.max(axis=1, keepdims=True)
    if not np.isfinite(top).all():
        return NotImplemented
    y = np.empty(shape, np.float32)
    sums = np.empty((rows, 1), np.float32)
    # As [1, rows, cols] against [1, rows, 1]: oneDNN's fast binary kernel broadcasts a
    # post-op's operand along the channels (dim 1), not along dim 0.
    wide, narrow = (1, rows, cols), (1, rows, 1)
    ran = (execute(("log_softmax exp", shape), lambda runtime: _binary(
               runtime, BINARY_SUB, (wide, narrow), lambda ops, mds: (
                   runtime.lib.dnnl_post_ops_append_eltwise(ops, EXP, 0.0, 0.0),), {}),
               {ARG_SRC: x, ARG_SRC_1: top, ARG_DST: y})
           and execute(("log_softmax sum", shape), lambda runtime: _row_sums(runtime, shape),
                       {ARG_SRC: y, ARG_DST: sums}))
    if not ran:
        return NotImplemented
    logs = np.log(sums)
    ran = execute(("log_softmax", shape), lambda runtime: _binary(
        runtime, BINARY_SUB, (wide, narrow), lambda ops, mds: (
            runtime.lib.dnnl_post_ops_append_binary(ops, BINARY_SUB, mds[1]),),
        {_LOGS: narrow}), {ARG_SRC: x, ARG_SRC_1: top, ARG_DST: y, _LOGS: logs})
    return y.reshape(given) if ran else NotImplemented


_LOGS = post_op_arg(0, ARG_SRC_1)   # log_softmax's log(sum), its post-op's operand


def _row_sums(runtime: Runtime, shape: tuple) -> Primitive | None:
    """oneDNN's sum of each row of a [rows, cols] array into [rows, 1]."""
    rows = (shape[0], 1)
    pd = with_mds(runtime.lib, (shape, rows), False, lambda src, dst: create_pd(
        runtime.lib.dnnl_reduction_primitive_desc_create, runtime.engine, REDUCTION_SUM,
        src, dst, 0.0, 0.0, None))
    return None if pd is None else Primitive(runtime, pd, {ARG_SRC: shape, ARG_DST: rows})


def layer_norm(x: np.ndarray, eps: float) -> Any:  # (y, mean, variance), or NotImplemented
    """(y, mean, variance) of a float32 x [rows, cols] standardised along its rows (biased
    variance, no scale or shift): y = (x - mean) / sqrt(variance + eps); or NotImplemented."""
    return _layer_norm(x, eps, None) if large_float32(x) else NotImplemented


_AFFINE = USE_SCALE | USE_SHIFT   # a layer norm's weight and bias


def layer_norm_affine(x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
                      eps: float) -> Any:  # (y, mean, variance), or NotImplemented
    """(y, mean, variance) of a float32 x [rows, cols] standardised along its rows (biased
    variance), then scaled and shifted column by column: y = (x - mean) /
    sqrt(variance + eps) * weight + bias, weight and bias [cols], in one pass (oneDNN's
    layer norm with scale and shift); or NotImplemented."""
    if not (x.ndim == 2 and large_float32(x) and usable(weight, bias)
            and weight.shape == bias.shape == x.shape[1:]):
        return NotImplemented
    return _layer_norm(x, eps, (weight, bias))


def _layer_norm(x: np.ndarray, eps: float, affine: tuple | None) -> Any:
    """oneDNN's layer-norm forward of x [rows, cols], with (weight, bias) where given."""
    rows, cols = (x.shape[0],), (x.shape[1],)
    flags = NORMALIZATION_FLAGS_NONE if affine is None else _AFFINE

    def create(pd: Any, rt: Runtime, src: Handle, dst: Handle, stat: Handle,
               _: Handle) -> int:
        # forward_training: the statistics are outputs (inference would expect them given)
        return rt.lib.dnnl_layer_normalization_forward_primitive_desc_create(
            pd, rt.engine, FORWARD_TRAINING, src, dst, stat, eps, flags, None)
    y = np.empty(x.shape, dtype=np.float32)
    mean, var = np.empty(rows, dtype=np.float32), np.empty(rows, dtype=np.float32)
    buffers = {ARG_SRC: np.ascontiguousarray(x), ARG_DST: y, ARG_MEAN: mean,
               ARG_VARIANCE: var}
    more = None
    if affine is not None:
        more = {ARG_SCALE: cols, ARG_SHIFT: cols}
        buffers.update({ARG_SCALE: np.ascontiguousarray(affine[0]),
                        ARG_SHIFT: np.ascontiguousarray(affine[1])})
    ran = execute(("layer_norm", flags, x.shape, float(eps)),
                  _forward_only((x.shape, x.shape, rows, rows), create, more), buffers)
    return (y, mean, var) if ran else NotImplemented


def softmax_backward(g: np.ndarray, y: np.ndarray, axis: int, log: bool) -> Any:
    """d(loss)/dx of y = softmax(x) (log-softmax where `log`) along axis, the innermost dim
    as for softmax, given g = d(loss)/dy: y (g - sum(g y)), or g - exp(y) sum(g), along the
    rows in one pass; or NotImplemented."""
    if not (large_float32(y) and usable(g) and g.shape == y.shape):
        return NotImplemented
    shape = _rows(y, axis)
    if shape is None:
        return NotImplemented
    alg = SOFTMAX_LOG if log else SOFTMAX
    make = _with_hint(
        (shape, shape),
        lambda rt, dst, diff: create_pd(rt.lib.dnnl_softmax_forward_primitive_desc_create,
                                        rt.engine, FORWARD_TRAINING, alg, dst, dst, 1, None),
        lambda rt, fwd, dst, diff: create_pd(
            rt.lib.dnnl_softmax_backward_primitive_desc_create, rt.engine, alg, diff, diff,
            dst, 1, fwd, None),
        {ARG_DST: shape, ARG_DIFF_DST: shape, ARG_DIFF_SRC: shape})
    return _diff_src(("softmax_backward", alg, shape), make, y.shape,
                     {ARG_DST: y, ARG_DIFF_DST: g})


def standardized_backward(g: np.ndarray, y: np.ndarray) -> Any:  # [rows, cols], or NotImplemented
    """g - mean(g) - y mean(g y) along the rows of float32 [rows, cols] arrays, where y is
    standardised along its rows (mean 0, variance 1): the gradient of a layer norm without
    its 1/std.  oneDNN's layer-norm backward, given y as its source with mean 0, variance 1
    and epsilon 0, computes exactly that, in one pass; or NotImplemented."""
    if not (large_float32(y) and usable(g) and g.shape == y.shape and y.ndim == 2):
        return NotImplemented
    rows = (y.shape[0],)
    make = _layer_norm_backward(y.shape, 0.0, NORMALIZATION_FLAGS_NONE, BACKWARD_DATA,
                                {ARG_SRC: y.shape, ARG_MEAN: rows, ARG_VARIANCE: rows,
                                 ARG_DIFF_DST: y.shape, ARG_DIFF_SRC: y.shape})
    return _diff_src(("standardized_backward", y.shape), make, y.shape,
                     {ARG_SRC: y, ARG_MEAN: np.zeros(rows, np.float32),
                      ARG_VARIANCE: np.ones(rows, np.float32), ARG_DIFF_DST: g})


def layer_norm_affine_backward(g: np.ndarray, x: np.ndarray, mean: np.ndarray,
                               variance: np.ndarray, weight: np.ndarray,
                               eps: float) -> Any:  # (dx, dweight, dbias), or NotImplemented
    """The gradients of y = layer_norm_affine(x, weight, bias, eps) given g = d(loss)/dy
    [rows, cols] and the forward's mean and variance [rows]: dx, dweight = the sum over
    rows of g (x - mean) / sqrt(variance + eps), dbias = the sum over rows of g, in one
    pass (oneDNN's layer-norm backward with diff scale and shift); or NotImplemented."""
    if not (x.ndim == 2 and large_float32(x) and usable(g, mean, variance, weight)
            and g.shape == x.shape and weight.shape == x.shape[1:]
            and mean.shape == variance.shape == x.shape[:1]):
        return NotImplemented
    rows, cols = (x.shape[0],), (x.shape[1],)
    make = _layer_norm_backward(x.shape, eps, _AFFINE, BACKWARD,
                                {ARG_SRC: x.shape, ARG_MEAN: rows, ARG_VARIANCE: rows,
                                 ARG_SCALE: cols, ARG_SHIFT: cols, ARG_DIFF_DST: x.shape,
                                 ARG_DIFF_SRC: x.shape, ARG_DIFF_SCALE: cols,
                                 ARG_DIFF_SHIFT: cols})
    dweight, dbias = np.empty(cols, np.float32), np.empty(cols, np.float32)
    # The primitive takes a shift argument, which no gradient depends on: zeros serve.
    dx = _diff_src(("layer_norm_affine_backward", x.shape, float(eps)), make, x.shape,
                   {ARG_SRC: x, ARG_MEAN: mean, ARG_VARIANCE: variance, ARG_SCALE: weight,
                    ARG_SHIFT: np.zeros(cols, np.float32), ARG_DIFF_DST: g},
                   {ARG_DIFF_SCALE: dweight, ARG_DIFF_SHIFT: dbias})
    return NotImplemented if dx is NotImplemented else (dx, dweight, dbias)


def _layer_norm_backward(shape: tuple, eps: float, flags: int, prop: int,
                         args: dict) -> Callable[[Runtime], Primitive | None]:
    """make(runtime) for oneDNN's layer-norm backward over x [rows, cols] of `shape` with
    these flags and prop kind (BACKWARD_DATA: dx only; BACKWARD: the scale's and shift's
    gradients too), on `args` (DNNL_ARG_* -> shape)."""
    rows = (shape[0],)

    def forward(rt: Runtime, src: Handle, diff: Handle, stat: Handle) -> Handle | None:
        return create_pd(rt.lib.dnnl_layer_normalization_forward_primitive_desc_create,
                         rt.engine, FORWARD_TRAINING, src, src, stat, eps, flags, None)

    def backward(rt: Runtime, fwd: Handle, src: Handle, diff: Handle,
                 stat: Handle) -> Handle | None:
        return create_pd(rt.lib.dnnl_layer_normalization_backward_primitive_desc_create,
                         rt.engine, prop, diff, diff, src, stat, eps, flags, fwd, None)
    return _with_hint((shape, shape, rows), forward, backward, args)
