"""logcumsumexp (ops/scan.py, the scan primitive's "logsumexp") against PyTorch: values
over a wide range (no overflow), infinities, gradients against torch's and float64
finite differences, second order, and its errors; and the other log-sum-exp along a dim,
shrew.softmax / log_softmax, with dtype= as PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import shrew
from shrew.testing import gradcheck


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
                  elements=st.floats(-800, 800)), st.data())
def test_logcumsumexp_matches_torch(a, data):
    dim = data.draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    x, t = shrew.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    got, want = x.logcumsumexp(dim), torch.logcumsumexp(t, dim)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    weight = np.random.default_rng(0).standard_normal(a.shape)
    grads = (got * shrew.tensor(weight)).sum().backward()
    (want * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(grads[x].numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_logcumsumexp_infinities_and_float32():
    v = [-float("inf"), float("inf"), 1.0, -float("inf")]
    np.testing.assert_array_equal(shrew.logcumsumexp(shrew.tensor(v), 0).numpy(),
                                  torch.logcumsumexp(torch.tensor(v), 0).numpy())
    a = np.random.default_rng(1).standard_normal((4, 50)).astype(np.float32) * 100
    np.testing.assert_allclose(shrew.tensor(a).logcumsumexp(1).numpy(),
                               torch.tensor(a).logcumsumexp(1).numpy(), rtol=1e-6)


def test_logcumsumexp_gradcheck_first_and_second_order():
    x = shrew.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda x: shrew.logcumsumexp(x, 1), [x])
    t = torch.tensor(x.numpy(), requires_grad=True)
    g = np.random.default_rng(3).standard_normal((3, 4))
    (gx,) = shrew.autograd.grad((shrew.logcumsumexp(x, 1) * shrew.tensor(g)).sum(), [x],
                                create_graph=True)
    (gt,) = torch.autograd.grad((torch.logcumsumexp(t, 1) * torch.tensor(g)).sum(), [t],
                                create_graph=True)
    (ggx,) = shrew.autograd.grad((gx * gx).sum(), [x])
    (ggt,) = torch.autograd.grad((gt * gt).sum(), [t])
    np.testing.assert_allclose(ggx.numpy(), ggt.numpy(), rtol=1e-9, atol=1e-12)


def test_logcumsumexp_errors():
    with pytest.raises(shrew.DTypeError, match="logcumsumexp.*int64"):
        shrew.logcumsumexp(shrew.tensor([1, 2]), 0)
    with pytest.raises(shrew.ShrewError, match="logcumsumexp"):
        shrew.ones(2, 3).logcumsumexp(2)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_functions_and_methods_take_dtype(name):
    a = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    want = getattr(torch, name)(torch.tensor(a), 1, dtype=torch.float64)
    for got in (getattr(shrew, name)(shrew.tensor(a), 1, dtype=shrew.float64),
                getattr(shrew.tensor(a), name)(dim=1, dtype=shrew.float64)):
        assert got.dtype is shrew.float64
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
