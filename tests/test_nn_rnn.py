"""RNN, LSTM, GRU, their cells and nn.utils.rnn agree with PyTorch given the same
state_dict: outputs, final states and gradients (float64), padded and packed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew import nn
from shrew.nn.utils import rnn as rnn_utils

torch = pytest.importorskip("torch")


def load(ours, theirs):
    state = theirs.state_dict()
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: v.detach().numpy() for k, v in state.items()})
    return ours.double()


def pair(data, grad=True):
    return (shrew.tensor(data, requires_grad=grad), torch.tensor(data, requires_grad=grad))


def close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def as_tuple(state):
    return state if isinstance(state, tuple) else (state,)


def loss_of(out, states, weights):
    """A scalar that every output and final state feeds, so that all gradients count."""
    total = (out * weights[0]).sum()
    for s, w in zip(states, weights[1:]):
        total = total + (s * w).sum()
    return total


def check_run(ours, theirs, x, tx, hx=None, thx=None, params=True):
    out, state = ours(x, hx) if hx is not None else ours(x)
    ref, tstate = theirs(tx, thx) if thx is not None else theirs(tx)
    close(out, ref)
    for s, t in zip(as_tuple(state), as_tuple(tstate)):
        close(s, t)
    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(out.shape)] + [rng.standard_normal(s.shape)
                                                  for s in as_tuple(state)]
    grads = loss_of(out, as_tuple(state), [shrew.tensor(w) for w in weights]).backward()
    loss_of(ref, as_tuple(tstate), [torch.tensor(w) for w in weights]).backward()
    close(grads[x], tx.grad, 1e-9)
    if params:
        for (name, p), tp in zip(ours.named_parameters(), theirs.parameters()):
            np.testing.assert_allclose(grads[p].numpy(), tp.grad.numpy(), rtol=1e-9,
                                       atol=1e-10, err_msg=name)


LAYERS = [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "batch_first": True}),
    ("LSTM", {}), ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "batch_first": True}), ("LSTM", {"bias": False}),
    ("GRU", {}), ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
]


@pytest.mark.parametrize("name,options", LAYERS)
@pytest.mark.parametrize("train", [False, True])
def test_layers_match_torch(name, options, train):
    r = np.random.default_rng(0)
    theirs = getattr(torch.nn, name)(4, 5, dropout=0.0, **options).double().train(train)
    ours = load(getattr(nn, name)(4, 5, dropout=0.0, **options), theirs).train(train)
    shape = (2, 6, 4) if options.get("batch_first") else (6, 2, 4)
    (x, tx) = pair(r.standard_normal(shape))
    check_run(ours, theirs, x, tx)


@pytest.mark.parametrize("name,options", [LAYERS[2], LAYERS[5], LAYERS[8]])
def test_initial_states_and_unbatched_input(name, options):
    r = np.random.default_rng(2)
    theirs = getattr(torch.nn, name)(4, 5, **options).double()
    ours = load(getattr(nn, name)(4, 5, **options), theirs)
    layers = theirs.num_layers * (2 if theirs.bidirectional else 1)
    out_size = options.get("proj_size") or 5
    (h, th) = pair(r.standard_normal((layers, 2, out_size)))
    shape = (2, 3, 4) if options.get("batch_first") else (3, 2, 4)
    (x, tx) = pair(r.standard_normal(shape))
    if name == "LSTM":
        (c, tc) = pair(r.standard_normal((layers, 2, 5)))
        check_run(ours, theirs, x, tx, (h, c), (th, tc), params=False)
    else:
        check_run(ours, theirs, x, tx, h, th, params=False)
    (u, tu) = pair(r.standard_normal((3, 4)))
    out, state = ours(u)
    ref, tstate = theirs(tu)
    close(out, ref)
    for s, t in zip(as_tuple(state), as_tuple(tstate)):
        close(s, t)


@pytest.mark.parametrize("name,options", LAYERS)
@settings(max_examples=3, deadline=None)
@given(lengths=st.lists(st.integers(1, 5), min_size=1, max_size=4))
def test_packed_sequences_match_torch(name, options, lengths):
    r = np.random.default_rng(sum(lengths))
    theirs = getattr(torch.nn, name)(3, 4, **options).double()
    ours = load(getattr(nn, name)(3, 4, **options), theirs)
    bf = options.get("batch_first", False)
    shape = (len(lengths), max(lengths), 3) if bf else (max(lengths), len(lengths), 3)
    (x, tx) = pair(r.standard_normal(shape))
    packed = rnn_utils.pack_padded_sequence(x, lengths, batch_first=bf, enforce_sorted=False)
    tpacked = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=bf,
                                                      enforce_sorted=False)
    assert packed.batch_sizes.tolist() == tpacked.batch_sizes.tolist()
    out, state = ours(packed)
    ref, tstate = theirs(tpacked)
    padded, lens = rnn_utils.pad_packed_sequence(out, batch_first=bf, padding_value=-1.0)
    tpadded, tlens = torch.nn.utils.rnn.pad_packed_sequence(ref, batch_first=bf,
                                                            padding_value=-1.0)
    close(padded, tpadded)
    assert lens.tolist() == tlens.tolist() == lengths
    for s, t in zip(as_tuple(state), as_tuple(tstate)):
        close(s, t)
    w = np.random.default_rng(3).standard_normal(padded.shape)
    grads = (padded * shrew.tensor(w)).sum().backward()
    (tpadded * torch.tensor(w)).sum().backward()
    close(grads[x], tx.grad, 1e-9)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(name):
    r = np.random.default_rng(4)
    theirs = getattr(torch.nn, name)(3, 5).double()
    ours = load(getattr(nn, name)(3, 5), theirs)
    (x, tx) = pair(r.standard_normal((2, 3)))
    hx = [pair(r.standard_normal((2, 5))) for _ in range(2 if name == "LSTMCell" else 1)]
    ours_hx = tuple(h for h, _ in hx) if name == "LSTMCell" else hx[0][0]
    theirs_hx = tuple(t for _, t in hx) if name == "LSTMCell" else hx[0][1]
    for args, targs in [((x,), (tx,)), ((x, ours_hx), (tx, theirs_hx))]:
        out, ref = as_tuple(ours(*args)), as_tuple(theirs(*targs))
        for o, t in zip(out, ref):
            close(o, t)
    grads = sum((o * o).sum() for o in out).backward()
    sum((t * t).sum() for t in ref).backward()
    for (n, p), tp in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(grads[p].numpy(), tp.grad.numpy(), rtol=1e-9, err_msg=n)
    (u, tu) = pair(r.standard_normal(3))
    for o, t in zip(as_tuple(ours(u)), as_tuple(theirs(tu))):
        close(o, t)
    assert repr(ours) == repr(theirs)


def test_parameter_names_init_and_repr():
    shrew.manual_seed(0)
    lstm = nn.LSTM(10, 20, num_layers=2, bidirectional=True, proj_size=5, dropout=0.5)
    theirs = torch.nn.LSTM(10, 20, num_layers=2, bidirectional=True, proj_size=5, dropout=0.5)
    assert [n for n, _ in lstm.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [p.shape for p in lstm.parameters()] == [tuple(p.shape) for p in theirs.parameters()]
    assert max(np.abs(p.numpy()).max() for p in lstm.parameters()) <= 1 / np.sqrt(20)
    assert repr(lstm) == repr(theirs)
    assert repr(nn.RNN(3, 4, nonlinearity="relu", batch_first=True)) == repr(
        torch.nn.RNN(3, 4, nonlinearity="relu", batch_first=True))
    lstm.train()
    out, _ = lstm(shrew.randn(4, 2, 10))  # dropout between the layers runs
    assert out.shape == (4, 2, 10)


def test_pad_sequence_matches_torch():
    r = np.random.default_rng(5)
    seqs = [r.standard_normal((n, 2)) for n in (3, 1, 4)]
    for bf in (False, True):
        for side in ("right", "left"):
            ours = rnn_utils.pad_sequence([shrew.tensor(s) for s in seqs], batch_first=bf,
                                          padding_value=7.0, padding_side=side)
            theirs = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs],
                                                     batch_first=bf, padding_value=7.0,
                                                     padding_side=side)
            close(ours, theirs)
    packed = rnn_utils.pack_sequence([shrew.tensor(s) for s in seqs], enforce_sorted=False)
    tpacked = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs],
                                               enforce_sorted=False)
    close(packed.data, tpacked.data)
    padded, lengths = rnn_utils.pad_packed_sequence(packed, total_length=6)
    assert padded.shape == (6, 3, 2) and lengths.tolist() == [3, 1, 4]


def test_bad_input_is_named():
    lstm = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(shrew.ShapeError, match=r"LSTM: input must be \[T, N, 3\]"):
        lstm(shrew.randn(5, 2, 4))
    with pytest.raises(shrew.ShapeError, match=r"LSTM: h_0 must be \[2, 2, 4\], got \[1, 2, 4\]"):
        lstm(shrew.randn(5, 2, 3), (shrew.zeros(1, 2, 4), shrew.zeros(2, 2, 4)))
    with pytest.raises(shrew.ShrewError, match=r"LSTM: hx must be a pair \(h_0, c_0\)"):
        lstm(shrew.randn(5, 2, 3), shrew.zeros(2, 2, 4))
    # a list of the two states is taken, as torch takes it (detach(states) returns one)
    out, _ = lstm(shrew.randn(5, 2, 3), [shrew.zeros(2, 2, 4), shrew.zeros(2, 2, 4)])
    assert out.shape == (5, 2, 4)
    with pytest.raises(shrew.ShrewError, match="not sorted in decreasing order"):
        rnn_utils.pack_padded_sequence(shrew.randn(4, 2, 3), [2, 4])
    with pytest.raises(shrew.ShapeError, match=r"lengths \[0, 4\] must lie in \[1, 4\]"):
        rnn_utils.pack_padded_sequence(shrew.randn(4, 2, 3), [0, 4], enforce_sorted=False)
    with pytest.raises(shrew.ShrewError, match="proj_size must be smaller"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(shrew.ShapeError, match=r"GRUCell: hidden state must be \[2, 4\]"):
        nn.GRUCell(3, 4)(shrew.randn(2, 3), shrew.randn(3, 4))


def test_gradients_pass_gradcheck():
    from shrew.testing import gradcheck
    shrew.manual_seed(0)
    for layer in (nn.LSTM(2, 3, bidirectional=True, proj_size=2), nn.GRU(2, 3, num_layers=2)):
        layer.double()
        x = shrew.tensor(np.random.default_rng(6).standard_normal((3, 2, 2)), requires_grad=True)
        assert gradcheck(lambda t, layer=layer: layer(t)[0], [x])
