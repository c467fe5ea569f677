"""Gradient rule of a recurrent layer's time loop (ops/rnn.py): the loop run backwards on
the storage, one rnn_cell_backward and one product by weight_hh per step, then weight_hh's
(and a GRU's bias_hh's) gradient in one product (one sum) over all the steps."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...backends.base import fast_path
from ...core import op as O
from ...core.errors import StateError
from ...core.fields import wrap
from ...core.grad_mode import is_grad_enabled
from ...ops.rnn import advance, step_starts
from .common import InputGrads

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ..checkpoint import RunBackward


def recorded_grads(op: O.Recurrent | O.RecurrentLayer, g: Tensor,
                   run_backward: RunBackward) -> InputGrads:
    """The gradients of a fused node's inputs under create_graph=True, recorded so that
    they can be differentiated again: the layer computed once more from those inputs by
    its composed steps (nn/modules/rnn.py's recomposed, recorded), then the engine over
    that sub-graph alone (it stops at the node's inputs), recording too."""
    from ...nn.modules.rnn import recomposed  # nn builds on autograd: imported when used
    inputs = [t for t in op.inputs() if t.requires_grad]
    packed = recomposed(op)
    store = run_backward(packed, g, retain_graph=True, create_graph=True, accumulate=False,
                         stop=frozenset(t.id for t in inputs))
    return [(t, store.get(t)) for t in inputs]


def recurrent_grads(op: O.Recurrent, g: Tensor, run_backward: RunBackward) -> InputGrads:
    """((gx, dgx), (h0, dh0), (c0, dc0), (w_hh, dw_hh), (b_hh, db_hh)) from g, the
    gradient of the packed result (outputs, h_n, c_n)."""
    if is_grad_enabled():  # create_graph=True
        return recorded_grads(op, g, run_backward)
    backend, mode, sizes = g._backend, op.mode, op.batch_sizes
    steps, batch, rows = len(sizes), op.h0.shape[0], op.gx.shape[0]
    starts = step_starts(sizes)
    grad = g._data
    dh = backend.contiguous(backend.narrow(grad, 0, rows, batch))
    dc = backend.narrow(grad, 0, rows + batch, batch) if mode == "lstm" else None
    weight = op.w_hh._data
    dgx: list[Any] = [None] * steps
    dgh: list[Any] = [None] * steps
    for t in (range(steps) if op.reverse else range(steps - 1, -1, -1)):
        n = sizes[t]
        _, state, ws = op.saved[t]
        dh_now = dh if n == batch else backend.narrow(dh, 0, 0, n)
        dh_now = backend.binary("add", dh_now, backend.narrow(grad, 0, starts[t], n))
        dc_now = None if dc is None else (dc if n == batch else backend.narrow(dc, 0, 0, n))
        dgx[t], dgh[t], dstate = backend.rnn_cell_backward(mode, dh_now, dc_now, state, ws)
        dh_prev = backend.matmul(dgh[t], weight)
        if mode == "gru":
            dh_prev = backend.binary("add", dh_prev, dstate)
        elif mode == "lstm":
            dc = advance(backend, dstate, dc, n)
        dh = advance(backend, dh_prev, dh, n)
    dgx_all = backend.cat(dgx, 0)
    grads: list[tuple[Tensor, Tensor | None]] = [(op.gx, wrap(dgx_all, backend)),
                                                 (op.h0, wrap(dh, backend))]
    if op.c0 is not None:
        grads.append((op.c0, wrap(dc, backend)))
    need_b = op.b_hh is not None and op.b_hh.requires_grad
    if op.w_hh.requires_grad or need_b:
        dgh_all = backend.cat(dgh, 0) if mode == "gru" else dgx_all
        if op.w_hh.requires_grad:
            hidden = backend.cat([s[0] for s in op.saved], 0)
            dw = backend.matmul(backend.transpose(dgh_all, 0, 1), hidden)
            grads.append((op.w_hh, wrap(dw, backend)))
        if need_b:
            grads.append((op.b_hh, wrap(backend.reduce("sum", dgh_all, (0,), False), backend)))
    return grads


def recurrent_layer_grads(y: Tensor, op: O.RecurrentLayer, g: Tensor,
                          run_backward: RunBackward) -> InputGrads:
    """The gradients of a RecurrentLayer's inputs from the backend's rnn_layer_backward
    (base.FastRecurrent)."""
    if is_grad_enabled():  # create_graph=True
        return recorded_grads(op, g, run_backward)
    backend, data, grad = g._backend, y._data, g._data
    steps, batch = op.x.shape[:2]
    rows, hidden = steps * batch, y.shape[-1]

    def parts(whole: Any) -> tuple:
        """(the outputs [T, N, H], h_n, c_n or None) of a packed array."""
        out = backend.reshape(backend.narrow(whole, 0, 0, rows), (steps, batch, hidden))
        states = [backend.narrow(whole, 0, rows + i * batch, batch)
                  for i in range(2 if op.c0 is not None else 1)]
        return out, states[0], states[1] if len(states) > 1 else None

    gy, gh, gc = parts(grad)
    out, h_n, c_n = parts(data)
    got = fast_path(backend, "rnn_layer_backward", op.mode, gy, gh, gc, op.x._data,
                    op.h0._data, None if op.c0 is None else op.c0._data, out, h_n, c_n, op.ws,
                    op.reverse)
    if got is NotImplemented:
        raise StateError("backward: the backend declined the gradient of a recurrent layer "
                         "it computed forward (base.FastRecurrent's rnn_layer_backward)")
    dx, dh0, dc0, dw_ih, dw_hh, db_ih, db_hh = (None if d is None else wrap(d, backend)
                                                for d in got)
    grads = [(op.x, dx), (op.h0, dh0), (op.w_ih, dw_ih), (op.w_hh, dw_hh)]
    if op.c0 is not None:
        grads.append((op.c0, dc0))
    grads += [(b, d) for b, d in ((op.b_ih, db_ih), (op.b_hh, db_hh)) if b is not None]
    return grads
