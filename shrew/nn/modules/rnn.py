"""Recurrent layers: RNN, LSTM, GRU and their single-step cells, as torch.nn has them
(arguments, parameter names, initialisation, results).

Each layer and direction is one recorded op: a backend's whole-layer call where it has
one (base.FastRecurrent: oneDNN's RNN primitives on the cpu, for unpacked float32 input);
else one GEMM multiplies all the input steps by weight_ih up front (adding both biases
there, except a GRU's bias_hh) and ops/rnn.py's loop runs, per step a product by
weight_hh and one fused cell kernel (base.Backend's rnn_cell), forward and backward.  A
cell's single step is that loop's one step.  An LSTM with proj_size, and every layer
where FUSED is False, runs step by step on recorded Tensor operations instead.  Backward
with create_graph=True through a fused op runs the layer again composed step by step from
the op's inputs (`recomposed`) and differentiates that, so second derivatives work
everywhere."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ...core import op as O
from ...core.errors import type_name
from ...core.errors import ShapeError, ShrewValueError
from ...ops.creation import zeros
from ...ops.rnn import recurrent, recurrent_layer
from ...ops.shape.recorded import cat, stack
from ...core.shape import fmt
from ...typing import DeviceLike, DTypeLike
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from .module import Module, place
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, select_rows


__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


State = tuple[Tensor, ...]  # (h,) or, for an LSTM, (h, c)


# -- one time step, given x @ weight_ih.T + bias_ih (`gx`) ---------------------------------
def _split(t: Tensor, parts: int) -> list[Tensor]:
    size = t.shape[-1] // parts
    return [t.narrow(-1, i * size, size) for i in range(parts)]


def _hidden_product(h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    return F.linear(h, w_hh, b_hh)


def _rnn_tanh_step(gx: Tensor, state: State, w: Sequence[Tensor | None]) -> State:
    return ((gx + _hidden_product(state[0], w[0], w[1])).tanh(),)  # type: ignore[arg-type]


def _rnn_relu_step(gx: Tensor, state: State, w: Sequence[Tensor | None]) -> State:
    return ((gx + _hidden_product(state[0], w[0], w[1])).relu(),)  # type: ignore[arg-type]


def _lstm_step(gx: Tensor, state: State, w: Sequence[Tensor | None]) -> State:
    """Gates in PyTorch's order (input, forget, cell, output); w[2] is the projection
    weight_hr (None without proj_size)."""
    h, c = state
    i, f, g, o = _split(gx + _hidden_product(h, w[0], w[1]), 4)  # type: ignore[arg-type]
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w[2] is not None:
        h = F.linear(h, w[2])
    return h, c


def _gru_step(gx: Tensor, state: State, w: Sequence[Tensor | None]) -> State:
    """Gates in PyTorch's order (reset, update, new); the reset gate scales the hidden
    product including its bias, as PyTorch (and cuDNN) compute it."""
    h = state[0]
    xr, xz, xn = _split(gx, 3)
    hr, hz, hn = _split(_hidden_product(h, w[0], w[1]), 3)  # type: ignore[arg-type]
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return (n + z * (h - n),)


def _input_products(mode: str, x: Tensor, w_ih: Tensor, b_ih: Tensor | None,
                    hidden: list[Tensor | None]) -> tuple[Tensor, list[Tensor | None]]:
    """(x @ weight_ih.T + bias_ih for every row of x, the weights left for each step).
    Except in a GRU (whose reset gate scales the hidden product with its bias), bias_hh
    joins bias_ih here, once for the whole sequence, instead of once per step."""
    w_hh, b_hh, w_hr = hidden
    if mode == "GRU" or b_hh is None or b_ih is None:
        return F.linear(x, w_ih, b_ih), hidden
    return F.linear(x, w_ih, b_ih + b_hh), [w_hh, None, w_hr]


FUSED = True
"""Whether layers and cells run their time loop as one fused op (ops/rnn.py)."""
_CELL_MODES = {"RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu", "LSTM": "lstm", "GRU": "gru"}
_NN_MODES = {cell: mode for mode, cell in _CELL_MODES.items()}


def recomposed(op: O.Recurrent | O.RecurrentLayer) -> Tensor:
    """A fused recurrent node's packed result (outputs, h_n, then an LSTM's c_n) computed
    again from its inputs by the composed steps, recorded: backward with create_graph=True
    differentiates through it (autograd/rules/rnn.py)."""
    mode = _NN_MODES[op.mode]
    state: State = (op.h0,) if op.c0 is None else (op.h0, op.c0)
    hidden: list[Tensor | None] = [op.w_hh, op.b_hh, None]
    if isinstance(op, O.RecurrentLayer):
        steps, batch = op.x.shape[:2]
        gx, hidden = _input_products(mode, op.x.reshape(steps * batch, op.x.shape[2]),
                                     op.w_ih, op.b_ih, hidden)
        sizes = [batch] * steps
    else:
        gx, sizes = op.gx, list(op.batch_sizes)
    out, state = _run(_STEPS[mode], gx, sizes, state, hidden, op.reverse)
    return cat([out, *state], 0)


def _fusable(first: Tensor, more: Sequence[Tensor | None], w_hr: Tensor | None) -> bool:
    """Whether the fused paths apply: FUSED on, no projection, a non-empty input, and
    tensors of one dtype and device (else _run composes, and reports any mismatch)."""
    return (FUSED and w_hr is None and 0 not in first.shape
            and all(t is None or (t.dtype is first.dtype and t._backend is first._backend)
                    for t in more))


def _unpack(y: Tensor, rows: int, state: State) -> tuple[Tensor, State]:
    """(outputs, final states) from a fused op's packed result (ops/rnn.py)."""
    batch = state[0].shape[0]
    return y.narrow(0, 0, rows), tuple(y.narrow(0, rows + i * batch, batch)
                                       for i in range(len(state)))


def _fused(mode: str, gx: Tensor, batch_sizes: list[int], state: State,
           rest: Sequence[Tensor | None], reverse: bool) -> tuple[Tensor, State] | None:
    """_run's result from one fused loop (ops/rnn.py: rnn_cell per step), or None where
    it does not apply (_fusable)."""
    w_hh, b_hh, w_hr = rest
    if w_hh is None or not batch_sizes or not _fusable(gx, (*state, w_hh, b_hh), w_hr):
        return None
    c0 = state[1] if mode == "LSTM" else None
    y = recurrent(_CELL_MODES[mode], gx, tuple(batch_sizes), state[0], c0, w_hh, b_hh,
                  reverse)
    return _unpack(y, gx.shape[0], state)


def _whole_layer(mode: str, data: Tensor, steps: int, state: State, w_ih: Tensor,
                 b_ih: Tensor | None, rest: Sequence[Tensor | None],
                 reverse: bool) -> tuple[Tensor, State] | None:
    """_run's result for unpacked steps from one backend call (base.FastRecurrent:
    oneDNN's RNN primitives on the cpu), or None where it does not apply or the backend
    declines."""
    w_hh, b_hh, w_hr = rest
    if (w_hh is None or not steps
            or not _fusable(data, (*state, w_ih, b_ih, w_hh, b_hh), w_hr)):
        return None
    x = data.reshape(steps, data.shape[0] // steps, data.shape[1])
    c0 = state[1] if mode == "LSTM" else None
    y = recurrent_layer(_CELL_MODES[mode], x, state[0], c0, w_ih, w_hh, b_ih, b_hh, reverse)
    return None if y is None else _unpack(y, data.shape[0], state)


_Step = Callable[[Tensor, State, Sequence["Tensor | None"]], State]
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_STEPS: dict[str, _Step] = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step,
                            "LSTM": _lstm_step, "GRU": _gru_step}


def _split_steps(x: Tensor, sizes: list[int]) -> list[Tensor]:
    """x's rows cut into consecutive pieces of `sizes` rows, by halving: a narrow's
    backward pads its gradient to the full input, so cutting T pieces straight off x
    would cost T full-size gradients; halving costs log T of them."""
    if len(sizes) == 1:
        return [x]
    half = len(sizes) // 2
    head = sum(sizes[:half])
    return (_split_steps(x.narrow(0, 0, head), sizes[:half]) +
            _split_steps(x.narrow(0, head, x.shape[0] - head), sizes[half:]))


def _run(step: _Step, gx: Tensor, batch_sizes: list[int], state: State,
         weights: Sequence[Tensor | None], reverse: bool) -> tuple[Tensor, State]:
    """Run one direction of one layer over packed steps.  gx holds the input products of
    every step one after another (batch_sizes[t] rows at step t); only the first
    batch_sizes[t] rows of the state advance at step t, the others keep their value (a
    finished sequence keeps its last state; going backwards, one not yet started keeps
    its initial state).  Returns the outputs in gx's layout and the final state."""
    batch = state[0].shape[0]
    inputs = _split_steps(gx, batch_sizes)
    outputs: list[Tensor] = [state[0]] * len(batch_sizes)
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    for t in order:
        b = batch_sizes[t]
        active = tuple(s if b == batch else s.narrow(0, 0, b) for s in state)
        new = step(inputs[t], active, weights)
        outputs[t] = new[0]
        state = tuple(n if b == batch else cat([n, s.narrow(0, b, batch - b)], 0)
                      for n, s in zip(new, state))
    return cat(outputs, 0), state


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU: parameters weight_ih_l{k}[_reverse],
    weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} (and weight_hr_l{k} for an LSTM with
    proj_size), all U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) at first."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0) -> None:
        super().__init__()
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(mode, mode)
        for arg, value, least in (("input_size", input_size, 1), ("hidden_size", hidden_size, 1),
                                  ("num_layers", num_layers, 1), ("proj_size", proj_size, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ShrewValueError(f"{name}: {arg} must be an int >= {least}, got {value!r}")
        if not 0.0 <= dropout <= 1.0:
            raise ShrewValueError(f"{name}: dropout must lie in [0, 1], got {dropout!r}")
        if proj_size and (mode != "LSTM" or proj_size >= hidden_size):
            raise ShrewValueError(f"{name}: proj_size must be smaller than hidden_size "
                                  f"({hidden_size}) and is only for LSTM, got {proj_size}")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        self._name = name
        directions = 2 if bidirectional else 1
        out_size = proj_size or hidden_size
        gates = _GATES[mode] * hidden_size
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes: list[tuple[str, tuple[int, ...]]] = [
                    ("weight_ih", (gates, layer_input)), ("weight_hh", (gates, out_size))]
                if bias:
                    shapes += [("bias_ih", (gates,)), ("bias_hh", (gates,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for base, shape in shapes:
                    setattr(self, base + suffix, Parameter(zeros(*shape)))
                    self._flat_weights_names.append(base + suffix)
        self.reset_parameters()

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch packs the weights for cuDNN here; shrew reads them as
        they are."""

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _weights(self, layer: int, direction: int) -> tuple[Tensor, Tensor | None,
                                                            list[Tensor | None]]:
        """(weight_ih, bias_ih, [weight_hh, bias_hh, weight_hr]) of one layer/direction."""
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = vars(self).get
        return (vars(self)["weight_ih" + suffix], get("bias_ih" + suffix),
                [get("weight_hh" + suffix), get("bias_hh" + suffix), get("weight_hr" + suffix)])

    def _initial_state(self, hx: Any, batch: int, like: Tensor, batched: bool) -> list[Tensor]:
        """The initial states, each [layers * directions, N, size]: hx, or zeros."""
        layers = self.num_layers * (2 if self.bidirectional else 1)
        sizes = [self.proj_size or self.hidden_size]
        if self.mode == "LSTM":
            sizes.append(self.hidden_size)
            if hx is not None and not (isinstance(hx, (tuple, list)) and len(hx) == 2):
                raise ShrewValueError("LSTM: hx must be a pair (h_0, c_0): a tuple or list")
        if hx is None:
            return [zeros(layers, batch, s, dtype=like.dtype, device=like.device)
                    for s in sizes]
        states = list(hx) if isinstance(hx, (tuple, list)) else [hx]
        out = []
        for name, s, size in zip(("h_0", "c_0"), states, sizes):
            expected = (layers, batch, size) if batched else (layers, size)
            if not isinstance(s, Tensor) or s.shape != expected:
                got = fmt(s.shape) if isinstance(s, Tensor) else type_name(s)
                raise ShapeError(f"{self._name}: {name} must be {fmt(expected)}, got {got}")
            out.append(s if batched else s.unsqueeze(1))
        return out

    def forward(self, input: Tensor | PackedSequence, hx: Any = None) -> tuple[Any, Any]:
        packed = input if isinstance(input, PackedSequence) else None
        if packed is not None:
            data, batch_sizes = packed.data, [int(b) for b in packed.batch_sizes.tolist()]
            batch, batched = batch_sizes[0], True
        else:
            assert isinstance(input, Tensor)
            batched = input.ndim == 3
            if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
                raise ShapeError(f"{self._name}: input must be [T, N, {self.input_size}] "
                                 f"({'[N, T, ...]' if self.batch_first else 'time first'}) or "
                                 f"unbatched [T, {self.input_size}], got {fmt(input.shape)}")
            x = input if batched else input.unsqueeze(1)
            if batched and self.batch_first:
                x = x.transpose(0, 1)
            steps, batch = x.shape[:2]
            data, batch_sizes = x.reshape(steps * batch, x.shape[2]), [batch] * steps
        if packed is not None and data.shape[-1] != self.input_size:
            raise ShapeError(f"{self._name}: packed data must be [*, {self.input_size}], got "
                             f"{fmt(data.shape)}")
        initial = self._initial_state(hx, batch, data, batched)
        if packed is not None:  # hx comes in the caller's batch order, the rows sorted
            initial = [select_rows(s, packed.sorted_indices, 1) for s in initial]
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        finals: list[list[Tensor]] = [[] for _ in initial]
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                data = F.dropout(data, self.dropout)
            outs = []
            for direction in range(directions):
                w_ih, b_ih, rest = self._weights(layer, direction)
                index = layer * directions + direction
                start = tuple(s[index] for s in initial)
                got = None if packed is not None else _whole_layer(
                    self.mode, data, len(batch_sizes), start, w_ih, b_ih, rest, bool(direction))
                if got is None:
                    gx, rest = _input_products(self.mode, data, w_ih, b_ih, rest)
                    got = (_fused(self.mode, gx, batch_sizes, start, rest, bool(direction))
                           or _run(step, gx, batch_sizes, start, rest, bool(direction)))
                out, state = got
                outs.append(out)
                for kept, s in zip(finals, state):
                    kept.append(s)
            data = outs[0] if directions == 1 else cat(outs, -1)
        final = [stack(f, 0) for f in finals]
        if packed is not None:
            final = [select_rows(s, packed.unsorted_indices, 1) for s in final]
            output: Any = packed._replace(data=data)
        else:
            output = data.reshape(len(batch_sizes), batch, data.shape[-1])
            if not batched:
                output, final = output.squeeze(1), [s.squeeze(1) for s in final]
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, (tuple(final) if self.mode == "LSTM" else final[0])

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).
    forward(input, h_0=None) -> (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ShrewValueError("RNN: nonlinearity must be 'tanh' or 'relu', got "
                                  f"{nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional)
        place(self, device, dtype)


class LSTM(RNNBase):
    """Long short-term memory; forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n)).
    With proj_size > 0 the hidden state is projected to proj_size by weight_hr."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size)
        place(self, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit; forward(input, h_0=None) -> (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional)
        place(self, device, dtype)


class RNNCellBase(Module):
    """One step of a recurrent layer: weight_ih, weight_hh, bias_ih, bias_hh."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, bias: bool) -> None:
        super().__init__()
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.bias = bias
        gates = _GATES[mode] * hidden_size
        self.weight_ih = Parameter(zeros(gates, input_size))
        self.weight_hh = Parameter(zeros(gates, hidden_size))
        self.bias_ih = Parameter(zeros(gates)) if bias else None
        self.bias_hh = Parameter(zeros(gates)) if bias else None
        bound = 1.0 / math.sqrt(hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _step(self, input: Tensor, hx: State | None) -> State:
        name = type(self).__name__
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ShapeError(f"{name}: input must be [N, {self.input_size}] or "
                             f"[{self.input_size}], got {fmt(input.shape)}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        count = 2 if self.mode == "LSTM" else 1
        if hx is None:
            hx = tuple(zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
                       for _ in range(count))
        else:
            expected = (x.shape[0], self.hidden_size) if batched else (self.hidden_size,)
            for s in hx:
                if s.shape != expected:
                    raise ShapeError(f"{name}: hidden state must be {fmt(expected)} for input "
                                     f"{fmt(input.shape)}, got {fmt(s.shape)}")
            hx = hx if batched else tuple(s.unsqueeze(0) for s in hx)
        gx, rest = _input_products(self.mode, x, self.weight_ih, self.bias_ih,
                                   [self.weight_hh, self.bias_hh, None])
        got = _fused(self.mode, gx, [x.shape[0]], hx, rest, False)
        new = got[1] if got is not None else _STEPS[self.mode](gx, hx, rest)
        return new if batched else tuple(s.squeeze(0) for s in new)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            text += ", bias=False"
        if self.mode == "RNN_RELU":
            text += ", nonlinearity='relu'"
        return text


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu); forward(input, hx=None)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh",
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ShrewValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got "
                                  f"{nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, bias)
        place(self, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(input, None if hx is None else (hx,))[0]


class LSTMCell(RNNCellBase):
    """One LSTM step; forward(input, (h, c)=None) -> (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, bias)
        place(self, device, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        h, c = self._step(input, hx)
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step; forward(input, hx=None) -> h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__("GRU", input_size, hidden_size, bias)
        place(self, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(input, None if hx is None else (hx,))[0]
