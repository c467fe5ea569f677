"""Nodes that read none of an input's values (a cast, an add, a subtraction, a view) hold
that input graph_only (core/fields.py): its memory goes once nothing else reads it, as
PyTorch's autograd keeps only what a node saves; gradients, retain_grad, hooks and
in-place writes see the tensor itself while it lives."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch

import shrew


def _storage_freed(make):
    """Build a graph with make(x) -> (intermediate, result); whether the intermediate's
    tensor is gone once only the graph of the result refers to it."""
    x = shrew.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4), requires_grad=True)
    mid, out = make(x)
    ref = weakref.ref(mid)
    del mid
    gc.collect()
    return ref() is None, x, out


@pytest.mark.parametrize("name, make", [
    ("cast", lambda x: ((m := x * 2.0), m.float())),
    ("add", lambda x: ((m := x * 2.0), m + x)),
    ("sub", lambda x: ((m := x * 2.0), x - m)),
    ("reshape then add", lambda x: ((m := x * 2.0), m.reshape(12) + x.reshape(12))),
    ("transpose then cast", lambda x: ((m := x * 2.0), m.t().float())),
])
def test_value_free_nodes_let_their_input_go(name, make):
    freed, x, out = _storage_freed(make)
    assert freed, f"{name}: the graph kept the intermediate alive"
    out.sum().backward()
    tx = torch.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4), requires_grad=True)
    _, t_out = make(tx)
    t_out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name, make", [
    ("mul", lambda x: ((m := x * 2.0), m * x)),
    ("exp", lambda x: ((m := x * 2.0), m.sin())),
])
def test_nodes_that_save_their_input_keep_it(name, make):
    freed, x, out = _storage_freed(make)
    assert not freed


def test_retain_grad_and_hooks_after_the_consumer_was_recorded():
    x = shrew.tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = x * 3.0
    z = (h + x).to(shrew.float64) - h  # add, cast and sub all hold h graph_only
    h.retain_grad()  # after the consumers were recorded, as PyTorch allows
    seen = []
    h.register_hook(lambda g: seen.append(g.numpy().copy()))
    (z * z).sum().backward()
    tx = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    th = tx * 3.0
    tz = (th + tx).to(torch.float64) - th
    th.retain_grad()
    (tz * tz).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), th.grad.numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], th.grad.numpy())


def test_an_in_place_write_after_a_cast_is_allowed_and_right():
    # A cast saves nothing, so writing into its input afterwards is fine (PyTorch too).
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2.0
        y = h.to(lib.float64)
        h.mul_(5.0)
        (y * y).sum().backward(retain_graph=True)
        h.sum().backward()
        return x.grad.numpy()
    np.testing.assert_allclose(run(shrew), run(torch))


def test_a_second_backward_through_a_freed_add_still_says_so():
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    y = (h + 1.0 * h).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_autocast_does_not_keep_the_float32_source_of_a_cast():
    lin, norm = shrew.nn.Linear(8, 8), shrew.nn.LayerNorm(8)
    x = shrew.randn(4, 8, requires_grad=True)
    with shrew.autocast("cpu", dtype=shrew.bfloat16):
        h = norm(x)                                    # float32 under autocast
        ref = weakref.ref(h)
        y = lin(h)                                     # casts h to bfloat16
        del h
    gc.collect()
    assert y.dtype is shrew.bfloat16 and ref() is None
    y.float().sum().backward()
    assert x.grad is not None and lin.weight.grad.dtype is shrew.float32


def _storage_less(t):
    """t without its values: what backward sees of a node whose tensor died while its
    consumers hold it graph_only."""
    from shrew.core.fields import snapshot
    return snapshot(t, None)


def test_rules_said_to_ignore_their_output_never_read_it(monkeypatch):
    """Every conformance case with a gradient, backpropagated with each node's own tensor
    stripped of its values wherever core.op.reads_output says the rule does not read it:
    a rule that did would fail on the missing storage."""
    from shrew.autograd import engine
    from shrew.core.op import reads_output
    from shrew.testing.conformance.cases import CASES
    from shrew.testing.conformance.harness import DEFAULT_LAYOUT, check_gradients

    original = engine.input_grads
    stripped = []

    def strict(y, op, g):
        if not reads_output(op):
            stripped.append(type(op).__name__)
            y = _storage_less(y)
        return original(y, op, g)

    monkeypatch.setattr(engine, "input_grads", strict)
    for case in CASES:
        if case.grad:
            check_gradients("cpu", case, case.samples[0], DEFAULT_LAYOUT)
    # The fused nodes the nn layers record (Linear, LayerNorm, Attention: the cpu
    # backend's fast paths, from 32k elements), float32 and under autocast.
    block = shrew.nn.TransformerBlock(64, 2, causal=True)
    x = shrew.randn(4, 128, 64, requires_grad=True)
    for enabled in (False, True):
        with shrew.autocast("cpu", dtype=shrew.bfloat16, enabled=enabled):
            y = block(x)
        y.float().sum().backward()
    assert {"Binary", "Unary", "Attention", "Linear", "LayerNorm", "ToDtype", "Reshape",
            "Conv2d", "Gather"} <= set(stripped), set(stripped)


def test_backward_frees_each_activation_once_its_gradient_is_through():
    # The engine's order of nodes is their last holder: taken off it as they run, a sin's
    # input goes once the sin's gradient is computed, not when backward ends (from
    # core.shape.LARGE_NUMEL elements: smaller ones go at the end).
    x = shrew.tensor(np.linspace(-1.0, 1.0, 1 << 14), requires_grad=True)
    a = x.sin()
    b = a.sin()
    c = b.sin()
    later = [weakref.ref(b), weakref.ref(c)]
    alive_when_a_was_reached = []
    a.register_hook(lambda g: alive_when_a_was_reached.append([r() is not None
                                                               for r in later]))
    loss = c.sum()
    del b, c
    loss.backward()
    assert alive_when_a_was_reached == [[False, False]]
    np.testing.assert_allclose(
        x.grad.numpy(), np.cos(np.sin(np.sin(x.detach().numpy()))) * np.cos(
            np.sin(x.detach().numpy())) * np.cos(x.detach().numpy()), rtol=1e-6)


def test_a_nodes_own_values_go_before_its_gradient_when_its_rule_ignores_them(monkeypatch):
    # GELU's gradient reads its input, not its output: the output is freed before the
    # gradient is made (PyTorch's autograd never holds it); exp's reads its output, kept.
    from shrew.autograd import engine
    from shrew.core import op as O
    original = engine.input_grads
    outputs_alive = {}

    def spy(node, op, g):
        if type(op) is O.Unary:
            outputs_alive[op.fn] = refs[op.fn]() is not None
        return original(node, op, g)

    monkeypatch.setattr(engine, "input_grads", spy)
    x = shrew.randn(128, 128, requires_grad=True)
    y = shrew.nn.functional.gelu(x * 2.0)
    z = (x * 3.0).exp()
    refs = {"gelu": weakref.ref(y), "exp": weakref.ref(z)}
    loss = y.sum() + z.sum()
    del y, z
    loss.backward()
    assert outputs_alive == {"gelu": False, "exp": True}
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    (torch.nn.functional.gelu(tx * 2.0).sum() + (tx * 3.0).exp().sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_second_backward_with_retain_graph_keeps_every_activation():
    x = shrew.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = shrew.nn.functional.gelu(x.sin()).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-6)
