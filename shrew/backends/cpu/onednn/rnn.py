"""A recurrent layer's whole time loop on oneDNN's RNN primitives (the ones PyTorch's CPU
LSTM runs): LSTM, GRU (oneDNN's linear-before-reset GRU, which is PyTorch's formulation)
and the vanilla RNN (tanh, relu), one direction of one layer, float32, forward for
training and backward; base.FastRecurrent's rnn_layer and rnn_layer_backward.

PyTorch's weights are oneDNN's without a transposition: weight_ih [G*H, I] is the ldgoi
layout of oneDNN's [1, 1, I, G, H] weights (and weight_hh likewise).  The LSTM's gates come
in oneDNN's order (input, forget, cell, output) and its two biases enter summed, so they
are read in place; a GRU's gates (r, z, n) are oneDNN's (u, r, o) with the first two
swapped (u is z), which costs a copy, and its bias is oneDNN's four: the summed update
and reset biases, then b_in and b_hn apart.  The primitive picks its own weight layouts
(reordered from ldgoi, and its gradients back into it, by primitive.Primitive); the
states and sequences stay plain (tnc, ldnc)."""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .binding import BACKWARD, FORWARD_TRAINING, Handle, Runtime, load
from .primitive import Primitive, create_pd, execute, usable, using, with_mds

# DNNL_ARG_* of the RNN primitives (dnnl_types.h): layer, iteration, cell-state slots.
SRC_LAYER, SRC_ITER, SRC_ITER_C = 1, 2, 3
DST_LAYER, DST_ITER, DST_ITER_C = 17, 18, 19
WEIGHTS_LAYER, WEIGHTS_ITER, BIAS = 33, 34, 41
WORKSPACE = 64
DIFF = 128  # DNNL_ARG_DIFF_x = DIFF + x
LEFT2RIGHT, RIGHT2LEFT = 1, 2  # dnnl_rnn_direction_t
DIFF_WEIGHTS_OVERWRITE = 0x1  # dnnl_rnn_flags_t: the weights' gradients are written, not added
LDGOI = 31  # dnnl_abdec (dnnl_format_tag_t): PyTorch's [G*H, I] weights seen as [1, 1, I, G, H]
ELTWISE = {"rnn_tanh": 0x21, "rnn_relu": 0x20}  # dnnl_eltwise_tanh, dnnl_eltwise_relu
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
_FORWARD_INPUTS = frozenset((SRC_LAYER, SRC_ITER, SRC_ITER_C, WEIGHTS_LAYER, WEIGHTS_ITER, BIAS))
_BACKWARD_INPUTS = _FORWARD_INPUTS | {DST_LAYER, DST_ITER, DST_ITER_C, DIFF + DST_LAYER,
                                      DIFF + DST_ITER, DIFF + DST_ITER_C}
_declared: set = set()


def _declare(lib: ctypes.CDLL) -> None:
    """The RNN functions' types, once (dnnl.h)."""
    if _declared:
        return
    h, out, c_int = Handle, ctypes.POINTER(Handle), ctypes.c_int
    flags, real = ctypes.c_uint, ctypes.c_float
    table = {
        "dnnl_lstm_forward_primitive_desc_create": [out, h, c_int, c_int] + [h] * 11 + [flags, h],
        "dnnl_lstm_backward_primitive_desc_create": ([out, h, c_int, c_int] + [h] * 22
                                                     + [flags, h, h]),
        "dnnl_lbr_gru_forward_primitive_desc_create": [out, h, c_int, c_int] + [h] * 7 + [flags, h],
        "dnnl_lbr_gru_backward_primitive_desc_create": ([out, h, c_int, c_int] + [h] * 14
                                                        + [flags, h, h]),
        "dnnl_vanilla_rnn_forward_primitive_desc_create": ([out, h, c_int, c_int, c_int]
                                                           + [h] * 7 + [flags, real, real, h]),
        "dnnl_vanilla_rnn_backward_primitive_desc_create": ([out, h, c_int, c_int, c_int]
                                                            + [h] * 14
                                                            + [flags, real, real, h, h]),
    }
    for name, argtypes in table.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = ctypes.c_int, argtypes
    _declared.add(True)


def _shapes(mode: str, steps: int, batch: int, width: int, hidden: int) -> dict:
    """Each argument's shape: sequences tnc, states ldnc, weights ldigo, bias ldgo."""
    gates = GATES[mode]
    state = (1, 1, batch, hidden)
    bias_gates = gates + (mode == "gru")  # the linear-before-reset GRU's fourth bias
    shapes = {SRC_LAYER: (steps, batch, width), SRC_ITER: state,
              WEIGHTS_LAYER: (1, 1, width, gates, hidden),
              WEIGHTS_ITER: (1, 1, hidden, gates, hidden), BIAS: (1, 1, bias_gates, hidden),
              DST_LAYER: (steps, batch, hidden), DST_ITER: state}
    if mode == "lstm":
        shapes.update({SRC_ITER_C: state, DST_ITER_C: state})
    return shapes


_ORDER = (SRC_LAYER, SRC_ITER, SRC_ITER_C, WEIGHTS_LAYER, WEIGHTS_ITER, BIAS, DST_LAYER,
          DST_ITER, DST_ITER_C)
_WEIGHTS = (WEIGHTS_LAYER, WEIGHTS_ITER)


def _descriptors(lib: ctypes.CDLL, shapes: dict, body: Any) -> Any:
    """body(md) with md(arg) the memory descriptor of an argument (None for one the mode
    has not): plain, except the weights' (and their gradients'), left to the primitive."""
    args = [a for a in _ORDER if a in shapes]
    plain = [shapes[a] for a in args if a not in _WEIGHTS]
    chosen = [shapes[a] for a in args if a in _WEIGHTS]

    def with_plain(*plain_mds: Handle) -> Any:
        def with_chosen(*chosen_mds: Handle) -> Any:
            found = dict(zip([a for a in args if a not in _WEIGHTS], plain_mds))
            found.update(zip([a for a in args if a in _WEIGHTS], chosen_mds))
            return body(found.get)
        return with_mds(lib, chosen, True, with_chosen)
    return with_mds(lib, plain, False, with_plain)


def _forward_pd(runtime: Runtime, mode: str, direction: int, md: Any) -> Handle | None:
    lib = runtime.lib
    if mode == "lstm":
        return create_pd(lib.dnnl_lstm_forward_primitive_desc_create, runtime.engine,
                         FORWARD_TRAINING, direction, md(SRC_LAYER), md(SRC_ITER),
                         md(SRC_ITER_C), md(WEIGHTS_LAYER), md(WEIGHTS_ITER), None, None,
                         md(BIAS), md(DST_LAYER), md(DST_ITER), md(DST_ITER_C), 0, None)
    if mode == "gru":
        return create_pd(lib.dnnl_lbr_gru_forward_primitive_desc_create, runtime.engine,
                         FORWARD_TRAINING, direction, md(SRC_LAYER), md(SRC_ITER),
                         md(WEIGHTS_LAYER), md(WEIGHTS_ITER), md(BIAS), md(DST_LAYER),
                         md(DST_ITER), 0, None)
    return create_pd(lib.dnnl_vanilla_rnn_forward_primitive_desc_create, runtime.engine,
                     FORWARD_TRAINING, ELTWISE[mode], direction, md(SRC_LAYER), md(SRC_ITER),
                     md(WEIGHTS_LAYER), md(WEIGHTS_ITER), md(BIAS), md(DST_LAYER),
                     md(DST_ITER), 0, 0.0, 0.0, None)


def _backward_pd(runtime: Runtime, mode: str, direction: int, md: Any,
                 hint: Handle) -> Handle | None:
    lib = runtime.lib
    if mode == "lstm":
        return create_pd(lib.dnnl_lstm_backward_primitive_desc_create, runtime.engine, BACKWARD,
                         direction, md(SRC_LAYER), md(SRC_ITER), md(SRC_ITER_C),
                         md(WEIGHTS_LAYER), md(WEIGHTS_ITER), None, None, md(BIAS),
                         md(DST_LAYER), md(DST_ITER), md(DST_ITER_C),
                         md(SRC_LAYER), md(SRC_ITER), md(SRC_ITER_C), md(WEIGHTS_LAYER),
                         md(WEIGHTS_ITER), None, None, md(BIAS), md(DST_LAYER),
                         md(DST_ITER), md(DST_ITER_C), DIFF_WEIGHTS_OVERWRITE, hint, None)
    if mode == "gru":
        return create_pd(lib.dnnl_lbr_gru_backward_primitive_desc_create, runtime.engine,
                         BACKWARD, direction, md(SRC_LAYER), md(SRC_ITER), md(WEIGHTS_LAYER),
                         md(WEIGHTS_ITER), md(BIAS), md(DST_LAYER), md(DST_ITER),
                         md(SRC_LAYER), md(SRC_ITER), md(WEIGHTS_LAYER), md(WEIGHTS_ITER),
                         md(BIAS), md(DST_LAYER), md(DST_ITER), DIFF_WEIGHTS_OVERWRITE,
                         hint, None)
    return create_pd(lib.dnnl_vanilla_rnn_backward_primitive_desc_create, runtime.engine,
                     BACKWARD, ELTWISE[mode], direction, md(SRC_LAYER), md(SRC_ITER),
                     md(WEIGHTS_LAYER), md(WEIGHTS_ITER), md(BIAS), md(DST_LAYER),
                     md(DST_ITER), md(SRC_LAYER), md(SRC_ITER), md(WEIGHTS_LAYER),
                     md(WEIGHTS_ITER), md(BIAS), md(DST_LAYER), md(DST_ITER),
                     DIFF_WEIGHTS_OVERWRITE, 0.0, 0.0, hint, None)


def _make(mode: str, direction: int, shapes: dict, backward: bool) -> Any:
    """make(runtime) for the forward (training) or backward primitive."""
    def make(runtime: Runtime) -> Primitive | None:
        _declare(runtime.lib)

        def create(md: Any) -> tuple:
            fwd = _forward_pd(runtime, mode, direction, md)
            if fwd is None or not backward:
                return fwd, None
            return fwd, _backward_pd(runtime, mode, direction, md, fwd)
        fwd, bwd = _descriptors(runtime.lib, shapes, create)
        tags = {a: LDGOI for a in _WEIGHTS}
        if not backward:
            return None if fwd is None else Primitive(runtime, fwd, shapes,
                                                      inputs=_FORWARD_INPUTS, tags=tags)
        if bwd is None:
            if fwd is not None:
                runtime.lib.dnnl_primitive_desc_destroy(fwd)
            return None
        args = dict(shapes)
        args.update({DIFF + a: s for a, s in shapes.items()})
        tags.update({DIFF + a: LDGOI for a in _WEIGHTS})
        return Primitive(runtime, bwd, args, hint=fwd, inputs=_BACKWARD_INPUTS, tags=tags)
    return make


def _gate_order(w: np.ndarray, mode: str) -> np.ndarray:
    """w's gate blocks (rows, or a bias's entries) from PyTorch's order into oneDNN's, or
    back: the same for an LSTM or RNN; a GRU's (r, z, n) and oneDNN's (u, r, o), u = z,
    swap their first two (a swap is its own inverse)."""
    if mode != "gru":
        return np.ascontiguousarray(w)
    third = w.shape[0] // 3
    # (concatenate keeps a transposed w's column-major order: oneDNN reads rows)
    return np.ascontiguousarray(np.concatenate([w[third:2 * third], w[:third],
                                                w[2 * third:]]))


def _bias(mode: str, b_ih: np.ndarray | None, b_hh: np.ndarray | None,
          hidden: int) -> np.ndarray:
    """oneDNN's bias [G', H]: b_ih + b_hh for an LSTM or RNN; for the linear-before-reset
    GRU the summed update and reset biases, then b_in and b_hn apart (its fourth gate)."""
    gates = GATES[mode]
    b_ih = np.zeros(gates * hidden, np.float32) if b_ih is None else b_ih
    b_hh = np.zeros(gates * hidden, np.float32) if b_hh is None else b_hh
    if mode != "gru":
        return (b_ih + b_hh).reshape(gates, hidden)
    r, z = (b_ih + b_hh)[:2 * hidden].reshape(2, hidden)
    return np.stack([z, r, b_ih[2 * hidden:], b_hh[2 * hidden:]])


def _key(mode: str, shapes: dict, reverse: bool, backward: bool) -> tuple:
    return ("rnn_backward" if backward else "rnn", mode, reverse, shapes[SRC_LAYER],
            shapes[DST_LAYER])


def rnn_layer(mode: str, x: np.ndarray, h0: np.ndarray, c0: np.ndarray | None,
              w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray | None,
              b_hh: np.ndarray | None, reverse: bool) -> Any:
    """(y [T, N, H], h_n [N, H], c_n [N, H] or None, ws) of one direction of one layer
    over x [T, N, I] from h0 (and an LSTM's c0); ws holds the workspace and the weights
    and bias as oneDNN read them, for the backward.  Or NotImplemented (not float32,
    oneDNN off or declining)."""
    if mode not in GATES or not usable(x, h0, w_ih, w_hh):
        return NotImplemented
    (steps, batch, width), hidden = x.shape, h0.shape[-1]
    shapes = _shapes(mode, steps, batch, width, hidden)
    weights = {WEIGHTS_LAYER: _gate_order(w_ih, mode), WEIGHTS_ITER: _gate_order(w_hh, mode),
               BIAS: _bias(mode, b_ih, b_hh, hidden)}
    y = np.empty((steps, batch, hidden), np.float32)
    h_n = np.empty((batch, hidden), np.float32)
    buffers = {SRC_LAYER: np.ascontiguousarray(x),
               SRC_ITER: np.ascontiguousarray(h0).reshape(shapes[SRC_ITER]),
               DST_LAYER: y, DST_ITER: h_n.reshape(shapes[DST_ITER]), **weights}
    c_n = None
    if mode == "lstm":
        c_n = np.empty((batch, hidden), np.float32)
        buffers[SRC_ITER_C] = np.ascontiguousarray(c0).reshape(shapes[SRC_ITER_C])
        buffers[DST_ITER_C] = c_n.reshape(shapes[DST_ITER_C])
    make = _make(mode, RIGHT2LEFT if reverse else LEFT2RIGHT, shapes, False)
    with using(_key(mode, shapes, reverse, False), make) as prim:
        if prim is None:
            return NotImplemented
        workspace = np.empty(prim.workspace, np.uint8)
        buffers[WORKSPACE] = workspace
        prim.run(buffers)
    return y, h_n, c_n, (workspace, weights)


def rnn_layer_backward(mode: str, gy: np.ndarray, gh: np.ndarray, gc: np.ndarray | None,
                       x: np.ndarray, h0: np.ndarray, c0: np.ndarray | None, y: np.ndarray,
                       h_n: np.ndarray, c_n: np.ndarray | None, ws: tuple,
                       reverse: bool) -> Any:
    """(dx, dh0, dc0 or None, dw_ih, dw_hh, db_ih, db_hh) of rnn_layer given the gradients
    of its y, h_n and c_n and its ws; or NotImplemented."""
    # Not `usable`: oneDNN switched off since the forward must still give its gradient.
    if mode not in GATES or load() is None:
        return NotImplemented
    workspace, weights = ws
    (steps, batch, width), hidden = x.shape, h0.shape[-1]
    shapes = _shapes(mode, steps, batch, width, hidden)
    dx = np.empty(x.shape, np.float32)
    dh0 = np.empty((batch, hidden), np.float32)
    dw_layer = np.empty(weights[WEIGHTS_LAYER].shape, np.float32)  # ldgoi, as the weights
    dw_iter = np.empty(weights[WEIGHTS_ITER].shape, np.float32)
    dbias = np.empty(weights[BIAS].shape, np.float32)
    buffers = {SRC_LAYER: np.ascontiguousarray(x),
               SRC_ITER: np.ascontiguousarray(h0).reshape(shapes[SRC_ITER]),
               DST_LAYER: np.ascontiguousarray(y),
               DST_ITER: np.ascontiguousarray(h_n).reshape(shapes[DST_ITER]),
               **weights, WORKSPACE: workspace,
               DIFF + SRC_LAYER: dx, DIFF + SRC_ITER: dh0.reshape(shapes[SRC_ITER]),
               DIFF + WEIGHTS_LAYER: dw_layer, DIFF + WEIGHTS_ITER: dw_iter, DIFF + BIAS: dbias,
               DIFF + DST_LAYER: np.ascontiguousarray(gy),
               DIFF + DST_ITER: np.ascontiguousarray(gh).reshape(shapes[DST_ITER])}
    dc0 = None
    if mode == "lstm":
        dc0 = np.empty((batch, hidden), np.float32)
        buffers.update({SRC_ITER_C: np.ascontiguousarray(c0).reshape(shapes[SRC_ITER_C]),
                        DST_ITER_C: np.ascontiguousarray(c_n).reshape(shapes[DST_ITER_C]),
                        DIFF + SRC_ITER_C: dc0.reshape(shapes[SRC_ITER_C]),
                        DIFF + DST_ITER_C: np.ascontiguousarray(gc).reshape(shapes[DST_ITER_C])})
    make = _make(mode, RIGHT2LEFT if reverse else LEFT2RIGHT, shapes, True)
    if not execute(_key(mode, shapes, reverse, True), make, buffers):
        return NotImplemented
    if mode == "gru":  # (du, dr, do, du') -> PyTorch's (dr, dz, dn) of b_ih and of b_hh
        du, dr, do, du_hidden = dbias
        db_ih, db_hh = np.concatenate([dr, du, do]), np.concatenate([dr, du, du_hidden])
    else:  # both biases entered summed: one gradient, in two arrays
        db_ih = dbias.reshape(-1)
        db_hh = db_ih.copy()
    return (dx, dh0, dc0, _gate_order(dw_layer, mode), _gate_order(dw_iter, mode), db_ih,
            db_hh)
