"""backward(): the engine's contract (depth, what it visits, memory, retain/create graph)."""
from __future__ import annotations

import gc
import inspect
import sys
import threading
import time
import weakref

import numpy as np
import pytest

import shrew
from shrew.autograd import engine as backprop
from shrew.core import op as O


@pytest.fixture
def shallow_stack():
    """Run the test body with little headroom above the current Python stack depth, so
    that any recursion proportional to graph depth fails loudly."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 150)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def test_a_chain_of_100k_ops_backpropagates_iteratively(shallow_stack):
    x = shrew.tensor([0.5, -1.0], dtype=shrew.float64, requires_grad=True)
    y = x
    start = time.perf_counter()
    for _ in range(50_000):
        y = y * 1.00001          # Affine
        y = y.neg()              # Unary
    grads = y.sum().backward()
    elapsed = time.perf_counter() - start
    # (-1.00001)^50000 per element, computed independently.
    np.testing.assert_allclose(grads[x].numpy(), np.full(2, 1.00001 ** 50_000), rtol=1e-9)
    assert elapsed < 30


def test_dropping_a_deep_retained_graph_does_not_crash():
    x = shrew.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.sum().backward(retain_graph=True)
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None
    assert x.grad.item() == 1.0


def test_backward_visits_only_tensors_that_need_grad(monkeypatch):
    visited = []
    original = backprop.input_grads

    def spy(y, op, g):
        visited.append(y.id)
        return original(y, op, g)

    monkeypatch.setattr(backprop, "input_grads", spy)
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    a = shrew.tensor([3.0, 4.0])
    const = (a.exp() * 2.0).sin()          # needs no grad: never visited
    assert not const.requires_grad and const.is_leaf
    hidden = x * const
    loss = hidden.sum()
    unused = (x * 5.0).sum()                # needs grad but does not lead to loss
    grads = loss.backward()
    assert visited == [loss.id, hidden.id]
    assert unused.id not in visited
    assert len(grads) == 1 and x in grads and a not in grads and const not in grads
    np.testing.assert_allclose(x.grad.numpy(), np.sin(np.exp([3.0, 4.0]) * 2), rtol=1e-5)


def test_gradients_of_consumed_intermediates_are_freed(monkeypatch):
    """When a node runs its gradient rule, the gradients of nodes already processed must
    be gone (each intermediate gradient is freed once consumed)."""
    seen = []
    original = backprop.input_grads

    def spy(y, op, g):
        # Everything recorded before the previous node must be dead by now (except the
        # root's seed gradient, which the caller of the engine holds).
        alive = [i for i, ref in enumerate(seen[:-1]) if i and ref() is not None]
        assert not alive, f"gradients of nodes {alive} are still alive"
        seen.append(weakref.ref(g))
        return original(y, op, g)

    monkeypatch.setattr(backprop, "input_grads", spy)
    x = shrew.tensor(np.linspace(-1, 1, 6), requires_grad=True)
    y = x
    for _ in range(6):
        y = y.sin() * 0.5 + 0.1          # Unary, Affine, Affine: each rule makes a new tensor
    grads = y.sum().backward()
    assert len(seen) == 19
    assert len(grads) == 1 and grads[x].shape == (6,)


def test_grad_store_holds_leaves_and_retained_tensors_only():
    x = shrew.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = shrew.tensor([0.5], requires_grad=True)
    h = x * w
    h2 = h.exp()
    h2.retain_grad()
    loss = h2.sum()
    grads = loss.backward()
    assert len(grads) == 3
    assert x in grads and w in grads and h2 in grads and h not in grads and loss not in grads
    assert h.grad is None and loss.grad is None
    np.testing.assert_allclose(h2.grad.numpy(), np.ones(3))
    np.testing.assert_allclose(grads[h2].numpy(), np.ones(3))
    np.testing.assert_allclose(grads[w].numpy(), [(np.exp(0.5 * np.arange(1, 4)) *
                                                   np.arange(1, 4)).sum()], rtol=1e-6)


def test_grad_store_api():
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    y = shrew.tensor([3.0, 4.0], requires_grad=True)
    other = shrew.tensor([1.0], requires_grad=True)
    grads = (x * y).sum().backward()
    np.testing.assert_array_equal(grads[x].numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(grads.get(y).numpy(), [1.0, 2.0])
    assert grads.get(other) is None
    assert grads.get(other, "dflt") == "dflt"
    assert x in grads and y in grads and other not in grads
    assert len(grads) == 2
    with pytest.raises(KeyError):
        grads[other]
    assert {t.id for t in grads} == {x.id, y.id}
    assert isinstance(grads, shrew.GradStore)


def test_grad_accumulates_across_calls_but_grad_store_does_not():
    x = shrew.tensor([1.0, -2.0], requires_grad=True)
    g1 = (x * 3.0).sum().backward()
    g2 = (x * x).sum().backward()
    np.testing.assert_array_equal(g1[x].numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(g2[x].numpy(), [2.0, -4.0])
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, -1.0])
    x.grad = None
    (x.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_fan_out_gradients_add_up():
    x = shrew.tensor([0.5, 2.0], dtype=shrew.float64, requires_grad=True)
    y = x * x + x.exp() + x            # 2x + e^x + 1
    y.sum().backward()
    v = np.array([0.5, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * v + np.exp(v) + 1, rtol=1e-12)


def test_saved_tensors_are_released_after_backward():
    x = shrew.tensor(np.ones(4), requires_grad=True)
    h = x.exp()
    ref = weakref.ref(h)
    loss = (h * 2.0).sum()
    del h
    gc.collect()
    assert ref() is not None        # the graph keeps it
    loss.backward()
    gc.collect()
    assert ref() is None            # released by backward
    assert isinstance(loss.op, O.Released)
    with pytest.raises(shrew.ShrewError, match="retain_graph=True"):
        loss.backward()


def test_retain_graph_keeps_saved_tensors_and_allows_a_second_backward():
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    ref = weakref.ref(h)
    loss = (h * h).sum()
    del h
    first = loss.backward(retain_graph=True)
    gc.collect()
    assert ref() is not None
    second = loss.backward()
    np.testing.assert_allclose(first[x].numpy(), second[x].numpy())
    np.testing.assert_allclose(x.grad.numpy(), 2 * second[x].numpy())
    with pytest.raises(shrew.ShrewError, match="freed by an earlier backward"):
        loss.backward()


def test_second_backward_through_a_shared_subgraph_says_why():
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    shared = x.sin()
    a, b = shared.sum(), (shared * 2.0).sum()
    a.backward()
    with pytest.raises(shrew.ShrewError, match="retain_graph"):
        b.backward()


def test_broadcasting_is_reduced_in_backward():
    a = np.arange(3.0).reshape(3, 1)
    b = np.arange(4.0).reshape(1, 4) + 1
    bias = np.array([0.5, -0.5, 1.0, 2.0])
    x = shrew.tensor(a, requires_grad=True)
    y = shrew.tensor(b, requires_grad=True)
    z = shrew.tensor(bias, requires_grad=True)
    w = shrew.tensor(np.arange(24.0).reshape(2, 3, 4))
    (((x * y) + z) * w).sum().backward()
    wsum = w.numpy().sum(0)
    np.testing.assert_allclose(x.grad.numpy(), (wsum * b).sum(1, keepdims=True))
    np.testing.assert_allclose(y.grad.numpy(), (wsum * a).sum(0, keepdims=True))
    np.testing.assert_allclose(z.grad.numpy(), w.numpy().sum((0, 1)))
    assert x.grad.shape == (3, 1) and y.grad.shape == (1, 4) and z.grad.shape == (4,)


def test_backward_with_an_explicit_gradient():
    x = shrew.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(shrew.tensor([1.0, 0.0, -1.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.0, -6.0])
    with pytest.raises(shrew.ShrewError, match=r"\[3\]"):
        (x * 2.0).backward(shrew.tensor([1.0, 2.0]))


def test_an_explicit_gradient_takes_the_tensors_dtype(other_device):
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    (x * 2.0).backward(shrew.tensor([1.0, 3.0], dtype=shrew.float64))
    assert x.grad.dtype is shrew.float32
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 6.0])
    y = shrew.tensor([1.0], requires_grad=True)
    (y * 2.0).backward(shrew.tensor([1]))
    assert y.grad.dtype is shrew.float32 and y.grad.item() == 2.0
    with pytest.raises(shrew.DeviceError, match="backward.*othercpu:0"):
        (y * 2.0).backward(shrew.tensor([1.0], device=other_device))


def test_backward_of_a_single_element_and_of_a_leaf():
    x = shrew.tensor([[2.0]], requires_grad=True)
    (x * 3.0).backward()                 # one element, not 0-d: allowed
    np.testing.assert_array_equal(x.grad.numpy(), [[3.0]])
    leaf = shrew.tensor(4.0, requires_grad=True)
    grads = leaf.backward()
    assert grads[leaf].item() == 1.0 and leaf.grad.item() == 1.0


@pytest.mark.parametrize("name, fn, shapes", [
    ("sum", lambda x: x.sum(0), [(0, 3)]),
    ("matmul", lambda a, b: a @ b, [(0, 3), (3, 2)]),
    ("matmul_k0", lambda a, b: a @ b, [(2, 0), (0, 2)]),
    ("cat", lambda a, b: shrew.cat([a, b]), [(0, 3), (2, 3)]),
    ("conv2d", lambda a, b: shrew.conv2d(a, b, 1, 1), [(0, 2, 3, 3), (2, 2, 2, 2)]),
    ("conv1d", lambda a, b: shrew.conv1d(a, b), [(0, 2, 5), (3, 2, 2)]),
    ("max_pool2d", lambda a: shrew.max_pool2d(a, 2), [(0, 1, 4, 4)]),
    ("avg_pool2d", lambda a: shrew.avg_pool2d(a, 2), [(0, 1, 4, 4)]),
    ("gather", lambda a: a.gather(1, shrew.zeros(2, 0, dtype=shrew.int64)), [(2, 3)]),
])
def test_zero_size_tensors_backpropagate(name, fn, shapes):
    xs = [shrew.zeros(*s, requires_grad=True) for s in shapes]
    grads = fn(*xs).sum().backward()
    for x in xs:
        assert grads[x].shape == x.shape
    if name == "cat":
        np.testing.assert_array_equal(grads[xs[1]].numpy(), np.ones((2, 3)))
    else:
        assert not any(grads[x].numpy().any() for x in xs)


# -- second derivatives -------------------------------------------------------------------
def test_hessian_vector_product_of_a_quadratic_form():
    rng = np.random.default_rng(0)
    a_np, x_np, v_np = rng.standard_normal((4, 4)), rng.standard_normal(4), rng.standard_normal(4)
    a = shrew.tensor(a_np)
    x = shrew.tensor(x_np, requires_grad=True)
    f = (x @ (a @ x))
    g = f.backward(create_graph=True)[x]
    np.testing.assert_allclose(g.numpy(), (a_np + a_np.T) @ x_np, rtol=1e-12)
    assert g.requires_grad
    hv = (g * shrew.tensor(v_np)).sum().backward()[x]
    np.testing.assert_allclose(hv.numpy(), (a_np + a_np.T) @ v_np, rtol=1e-12)


def test_hessian_vector_product_of_a_tanh_mlp():
    rng = np.random.default_rng(1)
    w1, b1, w2 = rng.standard_normal((5, 3)), rng.standard_normal(5), rng.standard_normal(5)
    x_np, v_np = rng.standard_normal(3), rng.standard_normal(3)
    x = shrew.tensor(x_np, requires_grad=True)
    out = (shrew.tensor(w2) * (shrew.tensor(w1) @ x + shrew.tensor(b1)).tanh()).sum()
    g = out.backward(create_graph=True)[x]
    t = np.tanh(w1 @ x_np + b1)
    np.testing.assert_allclose(g.numpy(), w1.T @ (w2 * (1 - t ** 2)), rtol=1e-12)
    hv = (g * shrew.tensor(v_np)).sum().backward()[x]
    hessian = w1.T @ np.diag(w2 * -2 * t * (1 - t ** 2)) @ w1
    np.testing.assert_allclose(hv.numpy(), hessian @ v_np, rtol=1e-10, atol=1e-12)


def test_third_derivative():
    x = shrew.tensor(1.5, dtype=shrew.float64, requires_grad=True)
    y = x ** 4.0
    (d1,) = [y.backward(create_graph=True)[x]]
    d2 = d1.backward(create_graph=True)[x]
    d3 = d2.backward()[x]
    assert d1.item() == pytest.approx(4 * 1.5 ** 3)
    assert d2.item() == pytest.approx(12 * 1.5 ** 2)
    assert d3.item() == pytest.approx(24 * 1.5)


def test_create_graph_retains_the_graph_by_default():
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp()).sum()
    y.backward(create_graph=True)
    y.backward()                      # the graph is still there
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)


# -- recording rules -----------------------------------------------------------------------
def test_leaf_and_requires_grad_flags():
    x = shrew.tensor([1.0], requires_grad=True)
    c = shrew.tensor([2.0])
    y = x * c
    assert x.is_leaf and x.requires_grad and x.op is None
    assert not y.is_leaf and y.requires_grad and isinstance(y.op, O.Binary)
    z = c * 2.0
    assert z.is_leaf and not z.requires_grad
    d = y.detach()
    assert d.is_leaf and not d.requires_grad
    np.testing.assert_array_equal(d.numpy(), y.numpy())
    assert not (x > 0).requires_grad and not x.argmax().requires_grad
    assert not x.to_dtype(shrew.int64).requires_grad


def test_detach_blocks_gradient():
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    (x * x.detach()).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0])


def test_no_grad_records_nothing():
    x = shrew.tensor([1.0], requires_grad=True)
    with shrew.no_grad():
        y = x * 2.0 + x.exp()
        assert not shrew.is_grad_enabled()
        with shrew.enable_grad():
            z = x * 3.0
    assert shrew.is_grad_enabled()
    assert y.is_leaf and not y.requires_grad
    assert z.requires_grad

    @shrew.no_grad()
    def f(t):
        return t * 2.0

    assert not f(x).requires_grad and shrew.is_grad_enabled()


def test_no_grad_is_thread_local():
    x = shrew.tensor([1.0], requires_grad=True)
    entered, checked = threading.Event(), threading.Event()
    results = {}

    def quiet():
        with shrew.no_grad():
            entered.set()
            checked.wait(10)
            results["quiet"] = (x * 2.0).requires_grad

    def loud():
        entered.wait(10)
        results["enabled"] = shrew.is_grad_enabled()
        results["loud"] = (x * 2.0).requires_grad
        checked.set()

    threads = [threading.Thread(target=quiet), threading.Thread(target=loud)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert results == {"quiet": False, "enabled": True, "loud": True}
    assert shrew.is_grad_enabled()


def test_backward_works_in_a_thread_while_another_is_in_no_grad():
    x = shrew.tensor([2.0], requires_grad=True)
    out = {}

    def work():
        out["g"] = (x * x).sum().backward()[x].item()

    with shrew.no_grad():
        t = threading.Thread(target=work)
        t.start()
        t.join(20)
    assert out["g"] == 4.0


def test_every_nodes_inputs_are_the_fields_its_variant_names():
    """op.inputs() is a fast accessor made per variant (core/op.py): for every node of a graph
    through many variants it is the TENSORS fields, in order (Cat, Checkpoint and
    CustomFunction keep their own)."""
    import shrew.nn.functional as F
    x = shrew.randn(2, 3, 4, 4, requires_grad=True)
    w = shrew.randn(5, 3, 3, 3, requires_grad=True)
    y = F.max_pool2d(F.conv2d(x, w, padding=1).relu(), 2)
    z = y.flatten(1)
    z = shrew.cat([z * 2.0, (z + 1.0).tanh(), z @ shrew.randn(20, 20)], dim=1)
    z = F.layer_norm(F.softmax(z, dim=1), (60,)).clamp(-1, 1)
    z = shrew.where(z > 0, z, z.sigmoid()).gather(1, shrew.tensor([[0, 3], [5, 7]]))
    loss = (z.pow(2.0).sum(0) / z.shape[0]).sum()
    seen = set()
    for node in backprop.topological_order(loss):
        op = node._op
        if op is None:
            continue
        seen.add(type(op))
        expected = op.xs if type(op) is O.Cat else tuple(getattr(op, n) for n in op.TENSORS)
        got = op.inputs()
        assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected)), \
            type(op).__name__
    assert len(seen) >= 12, seen


NARROW_PATTERNS = {
    # name: f(x) using several narrows of x (and x itself), as torch and shrew both spell it
    "chunks": lambda t, x: t.cat([c * float(i + 1) for i, c in enumerate(x.chunk(3, 1))], 1),
    "overlapping": lambda t, x: x.narrow(1, 0, 4).sin() + x.narrow(1, 2, 4) * x.narrow(1, 1, 4),
    "x and its slices": lambda t, x: (x * 2.0).sum(1, keepdim=True) + x.narrow(1, 1, 2).exp(),
    "full-width narrow first": lambda t, x: x.narrow(1, 0, 6) * 3.0 + x.narrow(1, 0, 6)
                                            .narrow(1, 2, 3).sum(1, keepdim=True),
    "split of a product": lambda t, x: t.cat(
        list(reversed((x @ x.transpose(0, 1) * 0.5).split([1, 2, 1], 1))), 1),
}


@pytest.mark.parametrize("name", sorted(NARROW_PATTERNS))
def test_several_narrows_of_one_tensor_match_torch(name):
    """The engine adds each narrow's gradient into the slice of the gradient it builds for
    their input (in place, where it made that gradient itself): values as torch's, and the
    non-leaf input's retained .grad, and second order (create_graph records no in-place
    add) as well."""
    import torch
    fn = NARROW_PATTERNS[name]
    base = np.random.default_rng(3).standard_normal((4, 6))
    xs, xt = shrew.tensor(base, requires_grad=True), torch.tensor(base, requires_grad=True)
    ys, yt = xs * 1.0, xt * 1.0  # a non-leaf, its gradient retained
    ys.retain_grad()
    yt.retain_grad()
    out_s, out_t = fn(shrew, ys), fn(torch, yt)
    cot = np.random.default_rng(4).standard_normal(tuple(out_t.shape))
    out_s.backward(shrew.tensor(cot), retain_graph=True)
    out_t.backward(torch.tensor(cot), retain_graph=True)
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ys.grad.numpy(), yt.grad.numpy(), rtol=1e-12, atol=1e-12)
    (gs,) = shrew.autograd.grad((fn(shrew, xs) ** 2).sum(), xs, create_graph=True)
    (gt,) = torch.autograd.grad((fn(torch, xt) ** 2).sum(), xt, create_graph=True)
    (hs,) = shrew.autograd.grad(gs.sum(), xs)
    (ht,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(hs.numpy(), ht.numpy(), rtol=1e-10, atol=1e-12)


def test_narrow_gradients_go_into_the_slice_in_place(monkeypatch):
    """chunk(3)'s backward pads one slice's gradient and adds the other two into it in
    place: one full-size buffer, not three padded copies and two sums."""
    calls = []
    real = backprop._add_into_slice
    monkeypatch.setattr(backprop, "_add_into_slice",
                        lambda *a: calls.append(real(*a)) or calls[-1])
    x = shrew.randn(4, 6, requires_grad=True)
    shrew.cat([c * 2.0 for c in x.chunk(3, 1)], 1).sum().backward()
    assert sorted(calls) == [False, True, True]
    np.testing.assert_array_equal(x.grad.numpy(), np.full((4, 6), 2.0, np.float32))
