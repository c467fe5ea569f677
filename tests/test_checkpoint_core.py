"""checkpoint / checkpoint_sequential: same gradients as the plain run, bit for bit, with
intermediates dropped after forward and the RNG replayed in backward."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import shrew
from shrew.core import op as O
from shrew.backends.registry import get_backend


def _params(seed=0):
    rng = np.random.default_rng(seed)
    w1 = shrew.tensor(rng.standard_normal((4, 8)), dtype=shrew.float32, requires_grad=True)
    w2 = shrew.tensor(rng.standard_normal((8, 3)), dtype=shrew.float32, requires_grad=True)
    x = shrew.tensor(rng.standard_normal((5, 4)), dtype=shrew.float32, requires_grad=True)
    return x, w1, w2


def _block(h, w, scale):
    """Uses a parameter passed in, a Python number, and a random mask (dropout-like)."""
    mask = (shrew.rand(h.shape[0], w.shape[1]) > 0.3).to_dtype(h.dtype)
    return ((h @ w).gelu() * mask) * scale


def _run(use_checkpoint, seed=0):
    x, w1, w2 = _params(seed)
    shrew.manual_seed(123)
    h = x.tanh()
    if use_checkpoint:
        h = shrew.checkpoint(_block, h, w1, 2.0)
        assert isinstance(h.op, O.Checkpoint)
    else:
        h = _block(h, w1, 2.0)
    loss = (h @ w2).square().mean()
    grads = loss.backward()
    leaves = (x, w1, w2)
    return loss.item(), [grads[t].numpy() for t in leaves], [t.grad.numpy() for t in leaves]


def test_checkpoint_gradients_equal_plain_ones_bit_for_bit():
    plain_loss, plain, plain_acc = _run(False)
    ck_loss, ck, ck_acc = _run(True)
    assert plain_loss == ck_loss
    for a, b in zip(plain + plain_acc, ck + ck_acc):
        np.testing.assert_array_equal(a, b)


def test_checkpoint_uses_a_captured_parameter():
    w = shrew.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=shrew.float64, requires_grad=True)
    x = shrew.tensor([[0.3, 0.7]], dtype=shrew.float64, requires_grad=True)
    out = shrew.checkpoint(lambda t: (t @ w).sin(), x)          # w is read, not passed
    store = out.sum().backward()
    c = np.cos(x.numpy() @ w.numpy())
    np.testing.assert_allclose(store[w].numpy(), x.numpy().T @ c, rtol=1e-12)
    np.testing.assert_allclose(store[x].numpy(), c @ w.numpy().T, rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), store[w].numpy())


def test_checkpoint_input_that_is_not_a_leaf():
    a = shrew.tensor([1.0, 2.0], dtype=shrew.float64, requires_grad=True)
    mid = a * 3.0
    out = shrew.checkpoint(lambda t: t.square(), mid)
    out.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * 3.0 * mid.numpy())


@pytest.mark.parametrize("case", ["same_arg_twice", "arg_and_closure", "non_leaf_twice",
                                  "closure_non_leaf_also_used_outside"])
def test_a_tensor_reaching_the_function_several_ways_gets_every_gradient(case):
    def run(use_checkpoint):
        x = shrew.tensor([0.5, -1.5], dtype=shrew.float64, requires_grad=True)
        wrap = shrew.checkpoint if use_checkpoint else (lambda f, *a: f(*a))
        if case == "same_arg_twice":
            out = wrap(lambda a, b: a.sin() * b, x, x)
        elif case == "arg_and_closure":
            out = wrap(lambda a: a.exp() * x, x)
        elif case == "non_leaf_twice":
            mid = x * 3.0
            out = wrap(lambda a, b: a * b.cos(), mid, mid)
        else:
            h = x.exp()
            out = wrap(lambda a: a * h, x) + h
        return out.sum().backward()[x].numpy()

    plain = run(False)
    if case == "closure_non_leaf_also_used_outside":
        # Used inside and outside the segment: the sum's order may differ, so not bit-exact.
        np.testing.assert_allclose(run(True), plain, rtol=1e-14)
        v = np.array([0.5, -1.5])
        np.testing.assert_allclose(plain, np.exp(v) * v + np.exp(v) + np.exp(v), rtol=1e-12)
        return
    np.testing.assert_array_equal(run(True), plain)
    v = np.array([0.5, -1.5])
    expect = {"same_arg_twice": np.cos(v) * v + np.sin(v), "arg_and_closure": np.exp(v) * (v + 1),
              "non_leaf_twice": 3 * (np.cos(3 * v) - 3 * v * np.sin(3 * v))}[case]
    np.testing.assert_allclose(plain, expect, rtol=1e-12)


def test_intermediates_are_dropped_after_forward_and_recomputed_in_backward():
    inner = []

    def fn(t):
        h = t.exp()
        inner.append(weakref.ref(h))
        return (h * 2.0).sin()

    x = shrew.tensor(np.linspace(0, 1, 8), requires_grad=True)
    out = shrew.checkpoint(fn, x)
    gc.collect()
    assert len(inner) == 1 and inner[0]() is None      # the forward's intermediates are gone
    out.sum().backward()
    assert len(inner) == 2                              # recomputed once in backward
    gc.collect()
    assert inner[1]() is None
    v = x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(2 * np.exp(v)) * 2 * np.exp(v), rtol=1e-6)


def test_plain_run_keeps_the_intermediates():
    # The contrast for the test above: without checkpoint the graph holds them.
    inner = []

    def fn(t):
        h = t.exp()
        inner.append(weakref.ref(h))
        return (h * 2.0).sin()

    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    out = fn(x)
    gc.collect()
    assert inner[0]() is not None
    del out


def test_in_recomputation_is_true_only_while_recomputing():
    seen = []

    def fn(t):
        seen.append(shrew.in_recomputation())
        return t * 2.0

    x = shrew.tensor([1.0], requires_grad=True)
    out = shrew.checkpoint(fn, x)
    out.sum().backward()
    assert seen == [False, True] and not shrew.in_recomputation()


def test_backward_leaves_the_rng_where_forward_left_it():
    backend = get_backend("cpu")
    x = shrew.tensor([1.0, 2.0, 3.0], requires_grad=True)
    shrew.manual_seed(9)
    out = shrew.checkpoint(lambda t: t * shrew.rand(3), x)
    state = backend.get_rng_state()
    out.sum().backward()
    after_backward = shrew.rand(4).numpy()
    backend.set_rng_state(state)
    np.testing.assert_array_equal(shrew.rand(4).numpy(), after_backward)


def test_checkpoint_without_grad_just_runs_the_function():
    x = shrew.tensor([1.0, 2.0])
    out = shrew.checkpoint(lambda t: t * 2.0, x)
    assert out.op is None and out.tolist() == [2.0, 4.0]
    y = shrew.tensor([1.0], requires_grad=True)
    with shrew.no_grad():
        z = shrew.checkpoint(lambda t: t * 2.0, y)
    assert not z.requires_grad


def test_checkpoint_with_tuple_outputs():
    x = shrew.tensor([0.5, 1.5], dtype=shrew.float64, requires_grad=True)
    a, b = shrew.checkpoint(lambda t: (t.exp(), t.square()), x)
    (a.sum() + b.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.5]) + 2 * np.array([0.5, 1.5]))


def test_checkpoint_rejects_double_backward_and_bad_outputs():
    x = shrew.tensor([1.0], requires_grad=True)
    out = shrew.checkpoint(lambda t: t.exp(), x)
    with pytest.raises(shrew.ShrewError, match="create_graph"):
        out.sum().backward(create_graph=True)
    with pytest.raises(shrew.ShrewError, match="checkpoint.*tensor"):
        shrew.checkpoint(lambda t: 3, x)


class _Seq:
    """Something with children(), as a Sequential module has."""

    def __init__(self, fns):
        self._fns = fns

    def children(self):
        return iter(self._fns)


@pytest.mark.parametrize("segments", [1, 2, 3, 10])
@pytest.mark.parametrize("as_module", [False, True])
def test_checkpoint_sequential_matches_the_plain_chain(segments, as_module):
    rng = np.random.default_rng(2)
    ws = [shrew.tensor(rng.standard_normal((3, 3)), requires_grad=True) for _ in range(5)]
    fns = [lambda t, w=w: (t @ w).tanh() for w in ws]
    x_np = rng.standard_normal((2, 3))

    x = shrew.tensor(x_np, requires_grad=True)
    h = x
    for f in fns:
        h = f(h)
    plain = h.sum().backward()

    x2 = shrew.tensor(x_np, requires_grad=True)
    out = shrew.checkpoint_sequential(_Seq(fns) if as_module else fns, segments, x2)
    ck = out.sum().backward()
    np.testing.assert_array_equal(ck[x2].numpy(), plain[x].numpy())
    for w in ws:
        np.testing.assert_array_equal(ck[w].numpy(), plain[w].numpy())


def test_checkpoint_sequential_validates():
    x = shrew.tensor([1.0], requires_grad=True)
    with pytest.raises(shrew.ShrewError, match="at least one"):
        shrew.checkpoint_sequential([], 1, x)
    with pytest.raises(shrew.ShrewError, match="segments"):
        shrew.checkpoint_sequential([lambda t: t], 0, x)
