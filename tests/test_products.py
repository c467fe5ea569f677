"""Products composed from matmul (ops/linalg/products.py, issue 16) against PyTorch: values,
gradients (against torch's and float64 finite differences) and errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew.testing import gradcheck

CASES = {
    "mm": lambda m, a, b, c, v, w, B1, B2, s: m.mm(a, b),
    "mv": lambda m, a, b, c, v, w, B1, B2, s: m.mv(a, v),
    "dot": lambda m, a, b, c, v, w, B1, B2, s: m.dot(v, v * 2),
    "vdot": lambda m, a, b, c, v, w, B1, B2, s: m.vdot(v, v + 1),
    "outer": lambda m, a, b, c, v, w, B1, B2, s: m.outer(w, v),
    "ger": lambda m, a, b, c, v, w, B1, B2, s: m.ger(w, v),
    "addmm": lambda m, a, b, c, v, w, B1, B2, s: m.addmm(c, a, b, beta=0.5, alpha=2),
    "addmm_beta0": lambda m, a, b, c, v, w, B1, B2, s: m.addmm(c[0], a, b, beta=0),
    "addmv": lambda m, a, b, c, v, w, B1, B2, s: m.addmv(w, a, v, alpha=-1),
    "addr": lambda m, a, b, c, v, w, B1, B2, s: m.addr(a, w, v, beta=2, alpha=3),
    "bmm": lambda m, a, b, c, v, w, B1, B2, s: m.bmm(B1, B2),
    "baddbmm": lambda m, a, b, c, v, w, B1, B2, s: m.baddbmm(c, B1, B2, beta=2),
    "addbmm": lambda m, a, b, c, v, w, B1, B2, s: m.addbmm(c, B1, B2, alpha=0.5),
    "tensordot_int": lambda m, a, b, c, v, w, B1, B2, s: m.tensordot(a, b, 1),
    "tensordot_lists": lambda m, a, b, c, v, w, B1, B2, s: m.tensordot(B1, B2, ([0, 2], [0, 1])),
    "inner": lambda m, a, b, c, v, w, B1, B2, s: m.inner(B1, a),
    "kron": lambda m, a, b, c, v, w, B1, B2, s: m.kron(a, B1),
    "cross": lambda m, a, b, c, v, w, B1, B2, s: m.cross(s, s * s, dim=1),
    "linalg.cross": lambda m, a, b, c, v, w, B1, B2, s: m.linalg.cross(s, s + 1),
    "matrix_power0": lambda m, a, b, c, v, w, B1, B2, s: m.matrix_power(s, 0),
    "matrix_power5": lambda m, a, b, c, v, w, B1, B2, s: m.linalg.matrix_power(s, 5),
    "multi_dot": lambda m, a, b, c, v, w, B1, B2, s: m.linalg.multi_dot([v, b, c.T, w]),
    "chain_matmul": lambda m, a, b, c, v, w, B1, B2, s: m.chain_matmul(a, b, c.T),
    "matmul": lambda m, a, b, c, v, w, B1, B2, s: m.linalg.matmul(B1, b),
}
SHAPES = [(3, 4), (4, 5), (3, 5), (4,), (3,), (2, 3, 4), (2, 4, 5), (2, 3, 3)]


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("name", sorted(CASES))
def test_products_match_torch(name):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in SHAPES]
    xs = [shrew.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    got, want = CASES[name](shrew, *xs), CASES[name](torch, *ts)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-10)
    weight = rng.standard_normal(tuple(got.shape))
    grads = (got * shrew.tensor(weight)).sum().backward()
    (want * torch.tensor(weight)).sum().backward()
    for x, t in zip(xs, ts):
        if t.grad is None:
            continue
        try:
            got_grad = grads[x].numpy()
        except KeyError:  # not reached (addmm's beta=0 ignores input): torch gives zeros
            got_grad = np.zeros(t.shape)
        np.testing.assert_allclose(got_grad, t.grad.numpy(), rtol=1e-9, atol=1e-9)
    assert gradcheck(lambda *args: CASES[name](shrew, *args), xs, directions=3)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_tensordot_any_dims(data):
    nd = data.draw(st.integers(1, 3))
    shared = data.draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd))
    k = data.draw(st.integers(0, nd))
    a_free = data.draw(st.lists(st.integers(1, 3), max_size=2))
    b_free = data.draw(st.lists(st.integers(1, 3), max_size=2))
    rng = np.random.default_rng(1)
    a = rng.standard_normal(a_free + shared[:k])
    b = rng.standard_normal(shared[:k] + b_free)
    got = shrew.tensordot(shrew.tensor(a), shrew.tensor(b), k)
    want = torch.tensordot(torch.tensor(a), torch.tensor(b), k)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)


def test_tensordot_broadcasts_size_one_dims():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((1, 1, 3)), rng.standard_normal((2, 1, 2))
    dims = ([0, 1], [2, 0])
    got = shrew.tensordot(shrew.tensor(a), shrew.tensor(b), dims)
    np.testing.assert_allclose(got.numpy(), torch.tensordot(torch.tensor(a), torch.tensor(b),
                                                            dims).numpy(), atol=1e-12)


@pytest.mark.parametrize("call, words", [
    (lambda a: shrew.mm(a, a), ["mm", "[2, 3]"]),
    (lambda a: shrew.bmm(a, a), ["bmm", "[2, 3]"]),
    (lambda a: shrew.dot(a[0], a[0, :2]), ["dot", "[3]", "[2]"]),
    (lambda a: shrew.cross(a, a, dim=0), ["cross", "size 3"]),
    (lambda a: shrew.cross(a[:, :2], a[:, :2]), ["cross", "no dim of size 3"]),
    (lambda a: shrew.addmm(a.reshape(-1), a, a.T), ["addmm", "[6]"]),
    (lambda a: shrew.matrix_power(a, 2), ["matrix_power", "[2, 3]"]),
    (lambda a: shrew.linalg.multi_dot([a]), ["multi_dot"]),
    (lambda a: shrew.tensordot(a, a, ([0], [1])), ["tensordot", "[2, 3]"]),
    (lambda a: shrew.tensordot(a, a, ([0, 1], [1])), ["tensordot", "number"]),
])
def test_errors_name_the_op(call, words):
    with pytest.raises(shrew.ShrewError) as info:
        call(shrew.zeros(2, 3))
    for w in words:
        assert w in str(info.value)


def test_rmatmul_called_directly_and_by_python():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((4, 2)), rng.standard_normal((2, 3))
    got = shrew.tensor(b).__rmatmul__(shrew.tensor(a))
    np.testing.assert_allclose(got.numpy(), torch.tensor(b).__rmatmul__(torch.tensor(a)).numpy(),
                               rtol=1e-12)
    assert shrew.tensor(b).__rmatmul__([[1.0, 2.0]]) is NotImplemented
    with pytest.raises(TypeError):
        [[1.0, 2.0]] @ shrew.tensor(b)  # noqa: B018
