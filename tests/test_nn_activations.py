"""Activation functions and modules agree with PyTorch: values and gradients (float64),
with hypothesis choosing shapes; finite differences check the gradients on their own."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew import nn
from shrew.nn import functional as F
from shrew.testing import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# (name, keyword arguments): each is called as F.name(x, **kw) and torch's F.name(x, **kw).
FUNCTIONS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}),
    ("elu", {"alpha": 0.7}), ("selu", {}), ("celu", {"alpha": 1.5}), ("gelu", {}),
    ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}), ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 3.0}), ("softsign", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("hardswish", {}), ("hardsigmoid", {}),
    ("logsigmoid", {}), ("tanhshrink", {}), ("softshrink", {"lambd": 0.3}),
    ("hardshrink", {"lambd": 0.3}), ("threshold", {"threshold": 0.1, "value": -2.0}),
    ("glu", {"dim": -1}), ("softmin", {"dim": -1}), ("softmax", {"dim": 0}),
    ("log_softmax", {"dim": -1}), ("sigmoid", {}), ("tanh", {}),
]

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(
    lambda s: tuple(s[:-1]) + (2 * s[-1],))  # an even last dim, for glu


def pair(shape, seed, scale=3.0):
    data = np.random.default_rng(seed).standard_normal(shape) * scale
    # Keep values away from the kinks (0, +-lambd, +-3, 6, thresholds), where the
    # one-sided derivatives differ and either choice is a valid subgradient.
    data = np.where(np.abs(data) < 0.05, data + 0.2, data)
    return (shrew.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True))


@pytest.mark.parametrize("name,kwargs", FUNCTIONS)
@settings(max_examples=8, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_functions_match_torch(name, kwargs, shape, seed):
    x, tx = pair(shape, seed)
    out, ref = getattr(F, name)(x, **kwargs), getattr(TF, name)(tx, **kwargs)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = np.random.default_rng(seed + 1).standard_normal(out.shape)
    grads = (out * shrew.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    # PyTorch's CPU backward of hardsigmoid / hardswish multiplies by 1/6 rounded to float32.
    rtol = 1e-7 if name in ("hardsigmoid", "hardswish") else 1e-9
    np.testing.assert_allclose(grads[x].numpy(), tx.grad.numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", [f for f in FUNCTIONS if f[0] not in
                                         ("relu", "relu6", "hardtanh", "hardswish",
                                          "hardsigmoid", "softshrink", "hardshrink",
                                          "threshold")])
def test_smooth_functions_pass_gradcheck(name, kwargs):
    x, _ = pair((3, 4), 7, scale=1.0)
    assert gradcheck(lambda t: getattr(F, name)(t, **kwargs), [x])


def test_extreme_inputs_stay_finite():
    big = shrew.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0], dtype=shrew.float64,
                       requires_grad=True)
    tbig = torch.tensor(big.numpy(), requires_grad=True)
    for name in ("elu", "selu", "celu", "softplus", "mish", "logsigmoid"):
        out, ref = getattr(F, name)(big), getattr(TF, name)(tbig)
        np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
        grad = out.sum().backward()[big].numpy()
        assert np.isfinite(grad).all(), name


MODULES = [
    ("ReLU", (), {"inplace": True}), ("ReLU6", (), {}), ("LeakyReLU", (0.1,), {}),
    ("ELU", (), {"alpha": 0.5}), ("SELU", (), {}), ("CELU", (2.0,), {}),
    ("GELU", (), {"approximate": "tanh"}), ("SiLU", (), {}), ("Mish", (), {}),
    ("Softplus", (), {"beta": 0.5}), ("Softsign", (), {}), ("Hardtanh", (-2.0, 2.0), {}),
    ("Hardswish", (), {}), ("Hardsigmoid", (), {}), ("LogSigmoid", (), {}),
    ("Tanhshrink", (), {}), ("Softshrink", (0.2,), {}), ("Hardshrink", (), {}),
    ("Threshold", (0.5, 9.0), {}), ("GLU", (1,), {}), ("Softmin", (1,), {}),
    ("Softmax", (-1,), {}), ("LogSoftmax", (1,), {}), ("Softmax2d", (), {}),
    ("Sigmoid", (), {}), ("Tanh", (), {}), ("Hardswish", (), {"inplace": True}),
    ("Mish", (), {"inplace": True}), ("SiLU", (), {"inplace": True}),
]


@pytest.mark.parametrize("name,args,kwargs", MODULES)
def test_modules_match_torch(name, args, kwargs):
    x, tx = pair((2, 4, 3, 2), 3)
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    np.testing.assert_allclose(ours(x).numpy(), theirs(tx.clone()).detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("num_parameters", [1, 4])
def test_prelu_learns_its_slopes_like_torch(num_parameters):
    x, tx = pair((3, 4, 5), 4)
    ours = nn.PReLU(num_parameters, init=0.3).double()
    theirs = torch.nn.PReLU(num_parameters, init=0.3).double()
    out, ref = ours(x), theirs(tx)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-12)
    grads = out.square().sum().backward()
    ref.square().sum().backward()
    np.testing.assert_allclose(grads[ours.weight].numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-10)
    np.testing.assert_allclose(grads[x].numpy(), tx.grad.numpy(), rtol=1e-10)
    assert [n for n, _ in ours.named_parameters()] == ["weight"]


def test_softmax_without_dim_warns_and_picks_torchs_dim():
    for shape in [(4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)]:
        x, tx = pair(shape, 5)
        with pytest.warns(UserWarning, match="Implicit dimension"):
            out = F.softmax(x)
        with pytest.warns(UserWarning):
            ref = TF.softmax(tx)
        np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-12)


def test_bad_input_is_named():
    with pytest.raises(shrew.ShapeError, match=r"glu: dim -1 of input \[2, 3\] must have an "
                                               r"even size"):
        F.glu(shrew.randn(2, 3))
    with pytest.raises(shrew.ShapeError, match=r"prelu: weight \[3\] must hold 1 or 4"):
        F.prelu(shrew.randn(2, 4), shrew.randn(3))
    with pytest.raises(shrew.ShapeError, match="Softmax2d"):
        nn.Softmax2d()(shrew.randn(2, 3))
    with pytest.raises(shrew.ShrewError, match="relu: input must be a shrew.Tensor"):
        F.relu([1.0, 2.0])
