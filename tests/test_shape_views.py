"""Shape and view ops (ops/shape/composed.py, issue 16) against PyTorch: values for
hypothesis-drawn shapes, dims and split sizes; gradients against PyTorch's and float64
finite differences; errors naming the op."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew.testing import gradcheck

SETTINGS = settings(max_examples=25, deadline=None)
shapes = st.lists(st.integers(1, 4), min_size=2, max_size=4)


def pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return (shrew.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True))


def same(got, want):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), atol=1e-12)


def same_with_grad(fn, shape, seed=0):
    """fn(shrew tensor) and fn(torch tensor) agree in value and in the gradient of a
    weighted sum; the shrew gradient also passes a float64 gradcheck."""
    x, y = pair(shape, seed)
    got, want = fn(x), fn(y)
    same(got, want)
    outs = got if isinstance(got, tuple) else (got,)
    touts = want if isinstance(want, (tuple, list)) else (want,)
    weights = [np.random.default_rng(i).standard_normal(tuple(o.shape)) for i, o in enumerate(outs)]
    loss = sum((o * shrew.tensor(w)).sum() for o, w in zip(outs, weights))
    tloss = sum((o * torch.tensor(w)).sum() for o, w in zip(touts, weights))
    grads = loss.backward()
    tloss.backward()
    np.testing.assert_allclose(grads[x].numpy(), y.grad.numpy(), atol=1e-12)
    assert gradcheck(lambda t: fn(t), [shrew.tensor(x.detach().numpy(), requires_grad=True)],
                     directions=4)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_flip_roll_movedim(shape, data):
    nd = len(shape)
    dims = data.draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd,
                              unique_by=lambda d: d % nd))
    shifts = data.draw(st.lists(st.integers(-5, 5), min_size=len(dims), max_size=len(dims)))
    same_with_grad(lambda t: t.flip(dims), shape)
    same_with_grad(lambda t: t.roll(shifts, dims), shape)
    same_with_grad(lambda t: t.roll(shifts[0]), shape)
    dest = data.draw(st.permutations(range(nd)))[:len(dims)]
    same_with_grad(lambda t: t.movedim(dims, dest), shape)


def test_what_makes_a_new_tensor_in_torch_makes_one_where_nothing_moves():
    """roll by whole turns (a size-1 dim, shift % size == 0, no dims), flip of no dims or
    of size-1 dims, pad by zeros or crops, interpolate to the same size: new tensors, as
    PyTorch's, so writing into one leaves the input alone (makemore's MLP once overwrote
    its caller's start token through roll); `+x` is x itself, as PyTorch's."""
    ops = [((2, 1), lambda L, a: a.roll(1, 1)), ((4,), lambda L, a: a.roll(4)),
           ((2, 3), lambda L, a: a.roll((2, -3), (0, 1))), ((1, 4), lambda L, a: a.flip(0)),
           ((4,), lambda L, a: a.flip([])),
           ((2, 3), lambda L, a: L.nn.functional.pad(a, (0, 0))),
           ((2, 3), lambda L, a: L.nn.functional.pad(a, (0, -1))),
           ((1, 2, 3), lambda L, a: L.nn.functional.pad(a, (0, 0), "reflect")),
           ((1, 2, 3), lambda L, a: L.nn.functional.interpolate(a, size=3))]
    for lib in (shrew, torch):
        for shape, op in ops:
            a = lib.zeros(*shape)
            op(lib, a).fill_(9)
            assert (a != 9).all(), lib.__name__
        x = lib.arange(3.0)
        assert +x is x


@SETTINGS
@given(shape=shapes, data=st.data())
def test_splits(shape, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    size = shape[dim]
    step = data.draw(st.integers(1, size + 1))
    same_with_grad(lambda t: t.split(step, dim), shape)
    cuts = sorted(data.draw(st.lists(st.integers(0, size), max_size=3)))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, size])]
    same_with_grad(lambda t: t.split(sizes, dim), shape)
    chunks = data.draw(st.integers(1, 5))
    same_with_grad(lambda t: t.chunk(chunks, dim), shape)
    same_with_grad(lambda t: t.tensor_split(chunks, dim), shape)
    indices = data.draw(st.lists(st.integers(-size - 1, size + 1), max_size=3))
    same_with_grad(lambda t: t.tensor_split(indices, dim), shape)
    same_with_grad(lambda t: t.unbind(dim), shape)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_repeats(shape, data):
    reps = data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape) + 1))
    same_with_grad(lambda t: t.repeat(*reps), shape)
    same_with_grad(lambda t: t.tile(reps[:2]), shape)
    dim = data.draw(st.integers(0, len(shape) - 1))
    same_with_grad(lambda t: t.repeat_interleave(2, dim), shape)
    same_with_grad(lambda t: t.repeat_interleave(3), shape)
    counts = data.draw(st.lists(st.integers(0, 3), min_size=shape[dim], max_size=shape[dim]))
    same_with_grad(lambda t: t.repeat_interleave(
        (shrew if isinstance(t, shrew.Tensor) else torch).tensor(counts), dim), shape)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_diagonals_and_triangles(shape, data):
    nd = len(shape)
    offset = data.draw(st.integers(-5, 5))
    d1 = data.draw(st.integers(-nd, nd - 1))
    d2 = data.draw(st.integers(-nd, nd - 1).filter(lambda d: d % nd != d1 % nd))
    same_with_grad(lambda t: t.diagonal(offset, d1, d2), shape)
    e1 = data.draw(st.integers(-nd - 1, nd))
    e2 = data.draw(st.integers(-nd - 1, nd).filter(lambda d: d % (nd + 1) != e1 % (nd + 1)))
    same_with_grad(lambda t: t.diag_embed(offset, e1, e2), shape)
    same_with_grad(lambda t: t.tril(offset), shape)
    same_with_grad(lambda t: t.triu(offset), shape)
    same_with_grad(lambda t: t[(0,) * (nd - 2)].trace(), shape)
    same_with_grad(lambda t: t[(0,) * (nd - 1)].diag(offset), shape)


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 2)])
def test_stacks(name, shape):
    if name == "column_stack" and len(shape) == 3:
        shape = (2, 3)
    (x, y), (x2, y2) = pair(shape), pair(shape, 1)
    same(getattr(shrew, name)([x, x2]), getattr(torch, name)([y, y2]))
    for n in (1, 2, 3):
        same(getattr(shrew, f"atleast_{n}d")(x), getattr(torch, f"atleast_{n}d")(y))
        same(getattr(shrew, f"atleast_{n}d")(x, x2), getattr(torch, f"atleast_{n}d")(y, y2))


def test_views_and_queries():
    x, y = pair((2, 3, 4))
    same(x.view_as(x.reshape(4, 6)), y.view_as(y.reshape(4, 6)))
    same(x.reshape_as(x.reshape(6, 4)), y.reshape_as(y.reshape(6, 4)))
    same(shrew.broadcast_to(x[0, 0], (5, 4)), torch.broadcast_to(y[0, 0], (5, 4)))
    same(shrew.broadcast_tensors(x, x[0, 0]), torch.broadcast_tensors(y, y[0, 0]))
    same(x.swapaxes(0, 2), y.swapaxes(0, 2))
    same(x.swapdims(1, 2), y.swapdims(1, 2))
    same(x.mT, y.mT)
    same(x[0].t(), y[0].t())
    same(x.unflatten(2, (2, -1)), y.unflatten(2, (2, -1)))
    same(shrew.flatten(x, 1), torch.flatten(y, 1))
    same(x.reshape(1, 2, 1, 12).squeeze((0, 2)), y.reshape(1, 2, 1, 12).squeeze((0, 2)))
    same(x.narrow(1, shrew.tensor(1), 2), y.narrow(1, torch.tensor(1), 2))
    assert shrew.broadcast_shapes((2, 1), 3, (1,)) == torch.broadcast_shapes((2, 1), 3, (1,))
    assert isinstance(x.shape, shrew.Size) and x.size().numel() == 24 == x.nelement()
    assert x.size(-1) == 4 and x.dim() == 3 and shrew.numel(x) == 24
    assert x.element_size() == y.element_size()
    for t, u in [(x, y), (x.transpose(0, 2), y.transpose(0, 2)), (x[:, 1:], y[:, 1:])]:
        assert t.stride() == u.stride() and t.is_contiguous() == u.is_contiguous()


@pytest.mark.parametrize("call, words", [
    (lambda x: x.split([1, 2], 0), ["split", "[1, 2]"]),
    (lambda x: x.chunk(0), ["chunk", "0"]),
    (lambda x: x.diagonal(0, 1, 1), ["diagonal", "same"]),
    (lambda x: x.flip(3), ["flip", "3"]),
    (lambda x: x.repeat(2), ["repeat", "[2, 3]"]),
    (lambda x: x.repeat_interleave(shrew.tensor([1, 2, 3]), 0), ["repeat_interleave", "size 2"]),
    (lambda x: x.roll([1, 2], [0]), ["roll"]),
    (lambda x: x.movedim((0, 0), (0, 1)), ["movedim"]),
    (lambda x: shrew.broadcast_shapes((2,), (3,)), ["broadcast_shapes", "[2]", "[3]"]),
    (lambda x: x.reshape(-1).tril(), ["tril", "[6]"]),
])
def test_errors_name_the_op(call, words):
    x = shrew.zeros(2, 3)
    with pytest.raises(shrew.ShrewError) as info:
        call(x)
    for w in words:
        assert w in str(info.value)
