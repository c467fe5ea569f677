"""register_post_accumulate_grad_hook: "this leaf's gradient is final" during backward."""
from __future__ import annotations

import numpy as np
import pytest

import shrew
import shrew.nn as nn
from shrew.autograd.hooks import register_post_accumulate_grad_hook


def _mlp():
    shrew.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))


def test_hooks_fire_as_soon_as_each_gradient_is_final():
    """The last layer's gradients are final before the first layer's are even computed:
    that is what lets DistributedDataParallel overlap communication with backward."""
    model = _mlp()
    params = list(model.named_parameters())
    seen = []

    def hook(name):
        def record(p, grads):
            # At this point p.grad and the store hold p's whole gradient of this backward.
            assert grads[p] is p.grad
            seen.append((name, [n for n, q in params if q.grad is not None]))
        return record

    handles = [register_post_accumulate_grad_hook(p, hook(n)) for n, p in params]
    x = shrew.randn(5, 4)
    grads = model(x).square().sum().backward()
    order = [name for name, _ in seen]
    assert sorted(order) == sorted(n for n, _ in params)
    assert order.index("4.weight") < order.index("2.weight") < order.index("0.weight")
    ready_when_last_layer_done = dict(seen)["4.weight"]
    assert "0.weight" not in ready_when_last_layer_done
    # Gradients are those of a backward without hooks.
    for h in handles:
        h.remove()
    plain = _mlp()
    plain_grads = plain(x).square().sum().backward()
    for (_, p), q in zip(params, plain.parameters()):
        np.testing.assert_array_equal(grads[p].numpy(), plain_grads[q].numpy())


def test_a_leaf_used_many_times_fires_once_with_the_summed_gradient():
    w = shrew.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    register_post_accumulate_grad_hook(w, lambda t, g: calls.append(t.grad.tolist()))
    ((w * 3.0).sum() + (w * w).sum() + w.exp().sum()).backward()
    assert len(calls) == 1
    np.testing.assert_allclose(calls[0], 3.0 + 2 * np.array([1.0, 2.0]) + np.exp([1.0, 2.0]),
                               rtol=1e-6)
    w.grad = None
    (w * 2.0).sum().backward()       # every backward, after accumulation into .grad
    assert calls[-1] == [2.0, 2.0] and len(calls) == 2


def test_hooks_and_accumulation_across_backward_calls():
    w = shrew.tensor([1.0], requires_grad=True)
    calls = []
    handle = register_post_accumulate_grad_hook(w, lambda t, g: calls.append(t.grad.item()))
    (w * 2.0).sum().backward()
    (w * 3.0).sum().backward()
    assert calls == [2.0, 5.0]       # post-accumulate: the running .grad
    handle.remove()
    handle.remove()                  # removing twice is harmless
    (w * 3.0).sum().backward()
    assert calls == [2.0, 5.0]


def test_checkpointed_segments_fire_once_in_the_outer_backward():
    model = _mlp()
    calls = []
    for p in model.parameters():
        register_post_accumulate_grad_hook(p, lambda t, g: calls.append(t.id))
    x = shrew.randn(3, 4)
    shrew.checkpoint_sequential(model, 2, x).sum().backward()
    assert sorted(calls) == sorted(p.id for p in model.parameters())


def test_a_hook_can_replace_the_stored_gradient():
    w = shrew.tensor([1.0, 1.0], requires_grad=True)

    def halve(t, grads):
        t.grad = t.grad * 0.5
        grads.insert(t, t.grad)

    register_post_accumulate_grad_hook(w, halve)
    grads = (w * 4.0).sum().backward()
    assert grads[w].tolist() == [2.0, 2.0] and w.grad.tolist() == [2.0, 2.0]


def test_errors():
    x = shrew.tensor([1.0], requires_grad=True)
    with pytest.raises(shrew.ShrewError, match="leaf tensor that requires grad"):
        register_post_accumulate_grad_hook(x * 2.0, lambda t, g: None)
    with pytest.raises(shrew.ShrewError, match="leaf tensor that requires grad"):
        register_post_accumulate_grad_hook(shrew.ones(1), lambda t, g: None)
    with pytest.raises(shrew.ShrewError, match="hook must be callable"):
        register_post_accumulate_grad_hook(x, 3)
