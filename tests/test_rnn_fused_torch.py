"""The fused recurrent path (ops/rnn.py: one Recurrent op per layer and direction on the
rnn_cell primitive) against torch.nn.RNN/LSTM/GRU with the same weights, on the cpu
backend (oneDNN on and off) and every OpenCL device: outputs, h_n/c_n, the input's and
every parameter's gradient; 2 layers, bidirectional, batch_first, initial states, packed
sequences, dropout between layers in eval, float64 and float32."""
from __future__ import annotations

import numpy as np
import pytest

import shrew
from shrew.autograd.engine import topological_order
from shrew.backends.cpu.onednn import binding as onednn
from shrew.backends.registry import get_backend
from shrew.core import op as O
from shrew.nn.modules import rnn as rnn_module
from shrew.nn.utils import rnn as rnn_utils

from support import device_or_fail, each_device

torch = pytest.importorskip("torch")

DEVICES = ["cpu-onednn", "cpu-numpy", *each_device("opencl")]
LAYERS = {"RNN": {"nonlinearity": "tanh"}, "RNN-relu": {"nonlinearity": "relu"},
          "LSTM": {}, "GRU": {}}
TOL = {np.float64: 1e-9, np.float32: 2e-4}


@pytest.fixture(params=DEVICES)
def device(request):
    """A device string; "cpu-onednn" / "cpu-numpy" are the cpu backend with oneDNN on / off."""
    name = request.param
    if name.startswith("cpu"):
        old = onednn.set_enabled(name == "cpu-onednn")
        yield "cpu"
        onednn.set_enabled(old)
    else:
        yield device_or_fail(name)


def pair(kind, options, dtype, device):
    """(ours, theirs) with torch's initial weights, ours on `device` in `dtype`."""
    cls = kind.split("-")[0]
    theirs = getattr(torch.nn, cls)(**options, **LAYERS[kind])
    theirs = theirs.to(torch.float64 if dtype == np.float64 else torch.float32)
    ours = getattr(shrew.nn, cls)(**options, **LAYERS[kind])
    ours.load_state_dict({k: shrew.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    ours.to(device=device, dtype=shrew.float64 if dtype == np.float64 else shrew.float32)
    return ours, theirs


def states(state):
    return list(state) if isinstance(state, tuple) else [state]


def used_fused(*outputs):
    """Whether a fused loop made them: the core's (Recurrent) or a backend's whole layer
    (RecurrentLayer: oneDNN's on the cpu)."""
    return any(type(t._op) in (O.Recurrent, O.RecurrentLayer)
               for t in topological_order(*outputs))


def compare(ours, theirs, x, hx, dtype, device, packed_lengths=None, batch_first=False):
    """Run both, then backpropagate one loss fed by the output and every final state."""
    tol = TOL[dtype]
    tx = torch.tensor(x, requires_grad=True)
    sx = shrew.tensor(x, device=device, requires_grad=True)
    thx = None if hx is None else tuple(torch.tensor(h, requires_grad=True) for h in hx)
    shx = None if hx is None else tuple(shrew.tensor(h, device=device, requires_grad=True)
                                        for h in hx)
    tin, sin = tx, sx
    if packed_lengths is not None:
        tin = torch.nn.utils.rnn.pack_padded_sequence(tx, packed_lengths,
                                                      batch_first=batch_first,
                                                      enforce_sorted=False)
        sin = rnn_utils.pack_padded_sequence(sx, packed_lengths, batch_first=batch_first,
                                             enforce_sorted=False)
    unwrap = (lambda h: h) if ours.mode == "LSTM" else (lambda h: h[0])
    tout, tstate = theirs(tin, None if thx is None else unwrap(thx))
    sout, sstate = ours(sin, None if shx is None else unwrap(shx))
    if packed_lengths is not None:
        tout = torch.nn.utils.rnn.pad_packed_sequence(tout, batch_first=batch_first)[0]
        sout = rnn_utils.pad_packed_sequence(sout, batch_first=batch_first)[0]
    rng = np.random.default_rng(7)
    weights = [rng.standard_normal(tuple(t.shape)).astype(dtype)
               for t in [tout, *states(tstate)]]
    tloss = sum((t * torch.tensor(w)).sum() for t, w in zip([tout, *states(tstate)], weights))
    sloss = sum((s * shrew.tensor(w, device=device)).sum()
                for s, w in zip([sout, *states(sstate)], weights))
    assert used_fused(sloss)
    for s, t in zip([sout, *states(sstate)], [tout, *states(tstate)]):
        np.testing.assert_allclose(s.cpu().numpy(), t.detach().numpy(), rtol=tol, atol=tol)
    tloss.backward()
    sloss.backward()
    np.testing.assert_allclose(sx.grad.cpu().numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
    for s, t in zip(shx or (), thx or ()):
        np.testing.assert_allclose(s.grad.cpu().numpy(), t.grad.numpy(), rtol=tol, atol=tol)
    ours_params = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(ours_params[name].grad.cpu().numpy(), p.grad.numpy(),
                                   rtol=tol, atol=tol, err_msg=name)


@pytest.mark.parametrize("kind", list(LAYERS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_two_layers_bidirectional_batch_first(device, kind, dtype):
    if np.dtype(dtype) not in get_backend(device).dtypes:
        pytest.skip(f"{device} has no {np.dtype(dtype)}")
    options = dict(input_size=5, hidden_size=6, num_layers=2, bidirectional=True,
                   batch_first=True)
    ours, theirs = pair(kind, options, dtype, device)
    x = np.random.default_rng(0).standard_normal((3, 7, 5)).astype(dtype)
    compare(ours, theirs, x, None, dtype, device)


@pytest.mark.parametrize("kind", list(LAYERS))
def test_initial_states_and_dropout_in_eval(device, kind):
    options = dict(input_size=4, hidden_size=5, num_layers=2, dropout=0.5)
    ours, theirs = pair(kind, options, np.float64, device)
    ours.eval()
    theirs.eval()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 3, 4))
    hx = [rng.standard_normal((2, 3, 5)) for _ in range(2 if kind == "LSTM" else 1)]
    compare(ours, theirs, x, hx, np.float64, device)


@pytest.mark.parametrize("kind", list(LAYERS))
@pytest.mark.parametrize("batch_first", [False, True])
def test_packed_sequences(device, kind, batch_first):
    options = dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True,
                   batch_first=batch_first)
    ours, theirs = pair(kind, options, np.float64, device)
    rng = np.random.default_rng(2)
    lengths = [3, 6, 1, 4]
    x = rng.standard_normal((4, 6, 3) if batch_first else (6, 4, 3))
    hx = [rng.standard_normal((4, 4, 4)) for _ in range(2 if kind == "LSTM" else 1)]
    compare(ours, theirs, x, hx, np.float64, device, lengths, batch_first)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells(device, name):
    theirs = getattr(torch.nn, name)(3, 4).double()
    ours = getattr(shrew.nn, name)(3, 4)
    ours.load_state_dict({k: shrew.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    ours.to(device=device, dtype=shrew.float64)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 3))
    h = [rng.standard_normal((5, 4)) for _ in range(2 if name == "LSTMCell" else 1)]
    tx, th = torch.tensor(x, requires_grad=True), [torch.tensor(v, requires_grad=True) for v in h]
    sx = shrew.tensor(x, device=device, requires_grad=True)
    sh = [shrew.tensor(v, device=device, requires_grad=True) for v in h]
    touts = states(theirs(tx, tuple(th) if len(th) == 2 else th[0]))
    souts = states(ours(sx, tuple(sh) if len(sh) == 2 else sh[0]))
    assert used_fused(*souts)
    sum((s * (i + 1)).sum() for i, s in enumerate(souts)).backward()
    sum((t * (i + 1)).sum() for i, t in enumerate(touts)).backward()
    for s, t in zip(souts, touts):
        np.testing.assert_allclose(s.detach().cpu().numpy(), t.detach().numpy(), rtol=1e-9)
    for s, t in zip([sx, *sh], [tx, *th]):
        np.testing.assert_allclose(s.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)
    ours_params = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(ours_params[name].grad.cpu().numpy(), p.grad.numpy(),
                                   rtol=1e-9, atol=1e-12, err_msg=name)


def test_fused_equals_composed_in_float32():
    """The fused loop and the step-by-step composition (FUSED off) agree."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((9, 4, 6)).astype(np.float32)
    for cls in ("LSTM", "GRU", "RNN"):
        layer = getattr(shrew.nn, cls)(6, 8, num_layers=2, bidirectional=True)
        results = []
        for fused in (True, False):
            old, rnn_module.FUSED = rnn_module.FUSED, fused
            try:
                sx = shrew.tensor(x, requires_grad=True)
                out, _ = layer(sx)
                assert used_fused(out) == fused
                (out * out).sum().backward()
                results.append([out.detach().numpy(), sx.grad.numpy()] +
                               [p.grad.numpy().copy() for p in layer.parameters()])
                layer.zero_grad()
            finally:
                rnn_module.FUSED = old
        for a, b in zip(*results):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cell", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("packed", [False, True])
def test_second_derivatives_through_fused_layers_match_torch(cell, packed):
    """backward(create_graph=True) through a fused layer (one oneDNN call, or the fused
    loop for packed input) recomputes it composed and differentiates that: a gradient
    penalty's gradients are PyTorch's."""
    import torch
    got = []
    for lib in (torch, shrew):
        rng = np.random.default_rng(0)
        layer = getattr(lib.nn, cell)(3, 4, 2, bidirectional=True)
        with lib.no_grad():
            for p in layer.parameters():
                p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)) * 0.5,
                                   dtype=lib.float32))
        x = lib.tensor(rng.standard_normal((5, 2, 3)).astype(np.float32), requires_grad=True)
        y, _ = layer(lib.nn.utils.rnn.pack_padded_sequence(x, [5, 3]) if packed else x)
        if packed:
            y = lib.nn.utils.rnn.pad_packed_sequence(y)[0]
        if lib is shrew:
            kinds = {type(t.op) for t in topological_order(y) if t.op is not None}
            assert (O.Recurrent if packed else O.RecurrentLayer) in kinds
        g, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (g * g).sum().backward()
        got.append([x.grad.numpy()] + [p.grad.numpy() for p in layer.parameters()])
    for want, have in zip(*got):
        np.testing.assert_allclose(have, want, rtol=1e-4, atol=5e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN", "RNN-relu"])
def test_onednn_runs_whole_layers_in_float32(kind):
    """With oneDNN on, an unpacked float32 LSTM, GRU or RNN runs each layer and direction as one
    oneDNN call (a RecurrentLayer node); its gradient still comes after oneDNN is switched
    off in between; with oneDNN off, the core's loop (Recurrent) runs instead."""
    if onednn.load() is None:
        pytest.skip(f"oneDNN is not loadable here: {onednn.load_error()}")
    options = dict(input_size=5, hidden_size=6, num_layers=2, bidirectional=True)
    x = np.random.default_rng(5).standard_normal((4, 3, 5)).astype(np.float32)
    for on in (True, False):
        ours, theirs = pair(kind, options, np.float32, "cpu")
        old = onednn.set_enabled(on)
        try:
            sx = shrew.tensor(x, requires_grad=True)
            out, _ = ours(sx)
            layers = {type(t._op) for t in topological_order(out)}
            assert (O.RecurrentLayer in layers) == on and (O.Recurrent in layers) != on
        finally:
            onednn.set_enabled(old)
        onednn.set_enabled(False)
        try:
            out.sum().backward()
        finally:
            onednn.set_enabled(old)
        tx = torch.tensor(x, requires_grad=True)
        theirs(tx)[0].sum().backward()
        np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=2e-4, atol=2e-5)
