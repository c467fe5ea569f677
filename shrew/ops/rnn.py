"""A recurrent layer's time loop as one recorded op (core.op.Recurrent): per step one
product of the hidden state by weight_hh and one fused cell (base.Backend's rnn_cell),
called on the storage, with no Tensor, graph node or gradient rule per step.  Its rule
(autograd/rules/rnn.py) runs the loop backwards the same way.

nn.RNN, LSTM and GRU (nn/modules/rnn.py) compute every step's input product x W_ih^T in one
GEMM first and call this once per layer and direction."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..backends.base import fast_path
from ..core import op as O
from ..core.fields import record

if TYPE_CHECKING:
    from .._tensor import Tensor


def step_starts(batch_sizes: tuple[int, ...]) -> list[int]:
    """The first row of each step in the packed layout (steps one after another)."""
    starts, row = [], 0
    for b in batch_sizes:
        starts.append(row)
        row += b
    return starts


def advance(backend: Any, new: Any, old: Any, rows: int) -> Any:
    """The state after a step that moved only its first `rows` rows (packed sequences:
    the others keep their value): new, or new over old's remaining rows."""
    batch = old.shape[0]
    if rows == batch:
        return new
    return backend.cat([new, backend.narrow(old, 0, rows, batch - rows)], 0)


def recurrent(mode: str, gx: Tensor, batch_sizes: tuple[int, ...], h0: Tensor,
              c0: Tensor | None, w_hh: Tensor, b_hh: Tensor | None, reverse: bool) -> Tensor:
    """One direction of one layer: [R + N (+ N), H], the outputs in gx's row layout
    (batch_sizes[t] rows at step t, R in all), then h_n, then an LSTM's c_n.  mode is one
    of base.RNN_CELL_MODES; gx = x W_ih^T + b_ih (with b_hh added too, except for a GRU,
    whose b_hh is passed here: its reset gate scales the hidden product with its bias);
    h0 and c0 (LSTM) the initial states [N, H].  Inputs are already checked (the layer
    does it) and share one backend and float dtype."""
    backend = gx._backend
    keep = any(t is not None and t.requires_grad for t in (gx, h0, c0, w_hh, b_hh))
    weight_t = backend.transpose(w_hh._data, 0, 1)
    bias = None if b_hh is None else b_hh._data
    h = h0._data
    c = None if c0 is None else c0._data
    starts = step_starts(batch_sizes)
    steps = len(batch_sizes)
    outputs: list[Any] = [None] * steps
    saved: list[Any] = [None] * steps
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        rows = batch_sizes[t]
        h_now = h if rows == h.shape[0] else backend.narrow(h, 0, 0, rows)
        gh = backend.matmul(h_now, weight_t)
        if bias is not None:
            gh = backend.binary("add", gh, bias)
        if c is not None:  # an LSTM's cell state
            state = c if rows == c.shape[0] else backend.narrow(c, 0, 0, rows)
        else:
            state = h_now if mode == "gru" else None
        h_new, c_new, ws = backend.rnn_cell(mode, backend.narrow(gx._data, 0, starts[t], rows),
                                            gh, state)
        if keep:
            saved[t] = (h_now, state, ws)
        outputs[t] = h_new
        h = advance(backend, h_new, h, rows)
        if c_new is not None:
            c = advance(backend, c_new, c, rows)
    data = backend.cat(outputs + [h] + ([] if c is None else [c]), 0)
    op = O.Recurrent(mode, gx, h0, c0, w_hh, b_hh, tuple(batch_sizes), reverse, saved)
    return record(data, backend, op, *op.inputs())


def recurrent_layer(mode: str, x: Tensor, h0: Tensor, c0: Tensor | None, w_ih: Tensor,
                    w_hh: Tensor, b_ih: Tensor | None, b_hh: Tensor | None,
                    reverse: bool) -> Tensor | None:
    """One direction of one recurrent layer over x [T, N, I] in one backend call
    (base.FastRecurrent), recorded as one RecurrentLayer node, packed as recurrent's result
    ([T*N + N (+ N), H]); None where the backend has no such call or declines it (the
    caller then computes the input product and runs recurrent)."""
    backend = x._backend
    if getattr(backend, "rnn_layer", None) is None:
        return None
    got = fast_path(backend, "rnn_layer", mode, x._data, h0._data,
                    None if c0 is None else c0._data, w_ih._data, w_hh._data,
                    None if b_ih is None else b_ih._data, None if b_hh is None else b_hh._data,
                    reverse)
    if got is NotImplemented:
        return None
    y, h_n, c_n, ws = got
    steps, batch = x.shape[:2]
    parts = [backend.reshape(y, (steps * batch, y.shape[-1])), h_n]
    data = backend.cat(parts + ([] if c_n is None else [c_n]), 0)
    op = O.RecurrentLayer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse, ws)
    return record(data, backend, op, *op.inputs())
