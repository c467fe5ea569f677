"""Autocast's weight casts are not kept for backward (core/fields.py's recast stand-ins): a
weight's first cast in a region is freed once the product that used it is done, and
backward casts the weight again where a gradient reads it.  The gradients stay PyTorch's
(whose autocast keeps every cast); a weight written between forward and backward is
named, since its old values are gone."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch

import shrew
from shrew.core import autocast as core_autocast
from shrew.core import fields

rng = np.random.default_rng(7)
# bfloat16 against PyTorch's bfloat16 autocast: a few roundings of the 16-bit dtype.
CLOSE = dict(rtol=2e-2, atol=2e-2)


def _pair(*shapes):
    arrays = [rng.standard_normal(s).astype(np.float32) * 0.3 for s in shapes]
    return ([shrew.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def test_a_weight_used_once_leaves_no_cast_behind_after_the_region():
    w = shrew.randn(1024, 1024, requires_grad=True)      # its bfloat16 cast: 2 MiB
    x = shrew.randn(16, 1024, requires_grad=True)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with shrew.autocast("cpu", dtype=shrew.bfloat16):
            y = x @ w
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 0.5 * 2**20, held          # y and x's cast, not w's
    assert not fields.recast_stand_ins and not core_autocast._state.cache
    y.float().sum().backward()
    tw = torch.tensor(w.detach().numpy(), requires_grad=True)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ty = tx @ tw
    ty.float().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **CLOSE)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), **CLOSE)


@pytest.mark.parametrize("retain", [False, True])
def test_gradients_through_recast_weights_match_pytorch(retain):
    (x, w1, b1, w2), (tx, tw1, tb1, tw2) = _pair((8, 32), (64, 32), (64,), (64, 16))
    results = []
    for lib, F, (xx, ww1, bb1, ww2) in ((shrew, shrew.nn.functional, (x, w1, b1, w2)),
                                        (torch, torch.nn.functional, (tx, tw1, tb1, tw2))):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            loss = (F.gelu(F.linear(xx, ww1, bb1)) @ ww2).float().square().mean()
        loss.backward(retain_graph=retain)
        if retain:
            loss.backward()
        results.append([t.grad.numpy() for t in (xx, ww1, bb1, ww2)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, **CLOSE)


def test_a_weight_used_at_every_step_of_a_loop_is_cast_at_most_twice():
    # A recurrent cell's weight: the second use keeps the cast for the rest of the region.
    (h0, w), (th0, tw) = _pair((4, 16), (16, 16))
    casts = []
    original = core_autocast._weight_cast

    def counting(t, dtype):
        casts.append(t)
        return original(t, dtype)

    core_autocast._weight_cast = counting
    try:
        with shrew.autocast("cpu", dtype=shrew.bfloat16):
            h = h0
            for _ in range(6):
                h = (h @ w).tanh()
    finally:
        core_autocast._weight_cast = original
    assert 1 <= sum(t is w for t in casts) <= 2   # (h0, a leaf too, is cast once)
    h.float().sum().backward()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        th = th0
        for _ in range(6):
            th = (th @ tw).tanh()
    th.float().sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), **CLOSE)
    np.testing.assert_allclose(h0.grad.numpy(), th0.grad.numpy(), **CLOSE)


def test_a_second_order_gradient_through_a_recast_weight_matches_pytorch():
    (x, w), (tx, tw) = _pair((4, 8), (8, 8))
    outs = []
    for lib, xx, ww in ((shrew, x, w), (torch, tx, tw)):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            y = (xx @ ww).float().tanh().sum()
        (gx,) = lib.autograd.grad(y, xx, create_graph=True)
        gx.square().sum().backward()
        outs.append(ww.grad.numpy())
    np.testing.assert_allclose(outs[0], outs[1], **CLOSE)


def test_a_weight_written_between_forward_and_backward_is_named():
    w = shrew.randn(8, 8, requires_grad=True)
    x = shrew.randn(4, 8, requires_grad=True)
    with shrew.autocast("cpu", dtype=shrew.bfloat16):
        y = x @ w
    with shrew.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"shape \[8, 8\] was modified by an inplace "
                                           r"operation after autocast cast it"):
        y.float().sum().backward()
    # Where x's gradient is not wanted, w's values are not read: nothing to name.
    x2 = shrew.randn(4, 8)
    with shrew.autocast("cpu", dtype=shrew.bfloat16):
        y2 = x2 @ w
    with shrew.no_grad():
        w.mul_(0.5)
    y2.float().sum().backward()
    assert w.grad is not None
    # cache_enabled=False keeps each cast, as PyTorch's autocast keeps them all.
    with shrew.autocast("cpu", dtype=shrew.bfloat16, cache_enabled=False):
        y3 = x @ w
    with shrew.no_grad():
        w.mul_(2.0)
    y3.float().sum().backward()
    assert x.grad is not None
