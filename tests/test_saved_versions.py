"""Backward refuses exactly the programs PyTorch refuses: a tensor saved for backward and
modified in place afterwards (ops/saved.py says which tensors each node saves, as
PyTorch's autograd does).  Each program runs on both libraries; the outcome (refused, or
the gradient) must agree."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew

PROGRAMS = [
    "a=x*1; c=T.ones(2); y=a*c; a.add_(1)",
    "a=x*1; y=a*a; a.add_(1)",
    "a=x*1; w=T.ones(2,requires_grad=True); a.mul_(w); a.add_(1); y=a",
    "a=x*1; w=T.ones(2,requires_grad=True); a[0:1].mul_(w[:1]); a.add_(1); y=a",
    "a=x*1; w=T.ones(2,requires_grad=True); a.mul_(w); a.mul_(2); y=a",
    "a=x*1; c=T.ones(2); y=a/c; a.add_(1)",
    "a=x*1; c=T.ones(2); y=c/a; a.add_(1)",
    "a=x*1; c=T.ones(2,requires_grad=True); y=a/c; y.add_(1)",
    "a=x.reshape(2,1)*1; c=T.ones(1,2); y=a@c; a.add_(1)",
    "a=x.reshape(2,1)*1; c=T.ones(2,2); y=c@a; a.add_(1)",
    "a=x*1; y=a.pow(2); a.add_(1)",
    "a=x*1; y=a**a; a.add_(1)",
    "a=x*1; y=a.relu(); a.add_(1)",
    "a=x*1; y=a.relu(); y.add_(1)",
    "a=x*1; y=a.clamp(0,1); a.add_(1)",
    "a=x*1; y=a[T.tensor([0])]; a.add_(1)",
    "a=x*1; y=a.sum(); a.add_(1)",
    "a=x*1; y=a.exp(); a.add_(1)",
    "a=x*1; y=a.exp(); y.add_(1)",
    "a=x*1; y=a.sigmoid(); y.mul_(2)",
    "a=x*1; y=a.sqrt(); a.add_(1)",
    "a=x*1; y=a.sqrt(); y.add_(1)",
    "a=x*1; y=a.log(); a.add_(1)",
    "a=x*1; y=a.max(); a.add_(1)",
    "a=x*1; y=a.max(); y.add_(1)",
    "a=x*1; y=a.softmax(0); a.add_(1)",
    "a=x*1; y=a.softmax(0); y.add_(1)",
    "a=x*1; y=a.abs(); a.add_(1)",
    "a=x*1; y=a*2; a.add_(1)",
    "a=x*1; y=T.where(a>0,a,a); a.add_(1)",
    "a=x*1; y=a.cumsum(0); a.add_(1)",
    "a=x*1; y=a.prod(); a.add_(1)",
    "a=x*1; y=a.norm(); a.add_(1)",
    "a=x*1; v=a[0:1]; y=v*v; a.mul_(2)",
    "a=x*1; v=a[0:1]; y=a*a; v.mul_(2)",
    "a=x*1; v=a[0:1]; y=v.exp(); v.mul_(2)",
    "a=x*1; a[0:1].mul_(T.tensor([3.])); a[1:].sigmoid_(); y=a*2",
    "a=x*1; y=a.sin(); y.mul_(T.tensor([2.,3.])); y=y+a",
    "a=x*1; y=a.exp(); y.detach().add_(1)",
    "a=x*1; y=a.tanh(); y[0]=5.",
    "a=x*1; y=a*a\nwith T.no_grad(): a.add_(1)",
    "c=T.zeros(2); c.scatter_reduce_(0, T.tensor([0,0]), x*1, 'amax'); c[T.tensor([1])] = 1.; y=c",
    "c=T.zeros(2); c.scatter_(0, T.tensor([1,0]), x*1); c[T.tensor([1])] = 1.; y=c*2",
    "c=T.zeros(2); c[T.tensor([1])] = x[0:1]*3; y=c.exp(); c[T.tensor([0])] = 1.",
]


def _outcome(lib, program):
    x = lib.tensor([0.5, 2.0], requires_grad=True)
    env = {"T": lib, "x": x}
    exec(program, env)  # noqa: S102 - the fixed programs above
    try:
        env["y"].sum().backward()
    except (shrew.ShrewError, RuntimeError) as e:
        assert "modified by an inplace operation" in str(e)
        return "refused"
    return x.grad.detach().numpy()


@pytest.mark.parametrize("program", PROGRAMS)
def test_refuses_exactly_what_torch_refuses(program):
    ours, theirs = _outcome(shrew, program), _outcome(torch, program)
    if isinstance(theirs, str):
        assert isinstance(ours, str), f"torch refuses, shrew gave {ours}"
    else:
        assert not isinstance(ours, str), "shrew refuses a program torch runs"
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)


def test_the_error_names_the_node_the_role_and_the_versions():
    a = shrew.tensor([0.5, 2.0], requires_grad=True) * 1
    y = a.sigmoid()
    y.mul_(2)
    y.add_(1)
    with pytest.raises(shrew.ShrewError, match=r"the output of SigmoidBackward0 \(shape \[2\], "
                       r"shrew.float32\) is at version 1; expected version 0 instead "
                       r"\(last written by mul_\)"):
        y.sum().backward()


# A chain of views (as PyTorch returns them), an in-place op through the last one, then
# a use of the base and of the view: values, versions, gradients and refusals as torch's.
VIEWS = {
    "t": lambda v: v.t() if v.ndim == 2 else v,
    "narrow": lambda v: v.narrow(0, v.shape[0] // 2, (v.shape[0] + 1) // 2),
    "select": lambda v: v[v.shape[0] - 1] if v.ndim > 1 else v,
    "unsqueeze": lambda v: v.unsqueeze(0),
    "view": lambda v: v.reshape(-1) if v.is_contiguous() else v,
    "slice": lambda v: v[::1],
}
WRITES = {
    "mul_": lambda v, T: v.mul_(3.0),
    "add_tensor": lambda v, T: v.add_(T.ones(*v.shape) * 0.5),
    "exp_": lambda v, T: v.exp_(),
    "sigmoid_": lambda v, T: v.sigmoid_(),
    "fill_": lambda v, T: v.fill_(2.0),
    "setitem": lambda v, T: v.__setitem__((0,) * v.ndim, 7.0),  # one element
}


def _view_program(lib, views, write, reuse):
    x = lib.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, requires_grad=True)
    base = x * 1.5
    v = base
    for name in views:
        v = VIEWS[name](v)
    early = base.exp()  # saves its output: a later write to base is refused by torch
    WRITES[write](v, lib)
    if reuse == "base":
        y = (base * base).sum()
    elif reuse == "view":
        y = (v * v).sum()
    else:
        y = (base * base).sum() + early.sum()
    try:
        y.backward()
        grad = x.grad.numpy().copy()
    except (shrew.ShrewError, RuntimeError):
        grad = None
    return base.detach().numpy().copy(), v.detach().numpy().copy(), base._version, grad


@settings(deadline=None, max_examples=40)
@given(views=st.lists(st.sampled_from(sorted(VIEWS)), min_size=1, max_size=3),
       write=st.sampled_from(sorted(WRITES)), reuse=st.sampled_from(["base", "view", "early"]))
def test_in_place_through_views_as_torch(views, write, reuse):
    ours = _view_program(shrew, views, write, reuse)
    theirs = _view_program(torch, views, write, reuse)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)
    assert ours[2] == theirs[2]
    assert (ours[3] is None) == (theirs[3] is None)
    if theirs[3] is not None:
        np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-4, atol=1e-6)


@settings(deadline=None, max_examples=30)
@given(views=st.lists(st.sampled_from(sorted(VIEWS)), min_size=1, max_size=3),
       write=st.sampled_from(sorted(WRITES)), through=st.booleans())
def test_a_view_taken_before_a_write_into_its_base_follows_the_base(views, write, through):
    """PyTorch regenerates a view's node from its base after the base (or another view of
    it) was written: the view's gradient includes the write."""
    def run(lib):
        x = lib.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, requires_grad=True)
        base = x * 1.5
        v = base
        for name in views:
            v = VIEWS[name](v)
        WRITES[write](base[1:] if through else base, lib)
        (v * v).sum().backward()
        return v.detach().numpy().copy(), x.grad.numpy().copy(), v._version

    (sv, sg, sn), (tv, tg, tn) = run(shrew), run(torch)
    np.testing.assert_allclose(sv, tv, rtol=1e-5)
    np.testing.assert_allclose(sg, tg, rtol=1e-4, atol=1e-6)
    assert sn == tn


@pytest.mark.parametrize("dst_requires_grad", [False, True])
@pytest.mark.parametrize("reduce", ["sum", "prod", "amax", "amin", "mean"])
def test_index_writes_that_read_the_old_values_have_torch_gradients(reduce, dst_requires_grad):
    """scatter_reduce_ reads dst's old values for its gradient; the write keeps them."""
    def run(lib):
        x = lib.tensor([0.5, 2.0, -1.0, 3.0], requires_grad=True)
        d = lib.tensor([1.0, 5.0, 2.0], requires_grad=dst_requires_grad)
        dst = d * 1 if dst_requires_grad else d
        dst.scatter_reduce_(0, lib.tensor([0, 2, 2, 0]), x * 1, reduce)
        (dst * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return (dst.detach().numpy(), x.grad.numpy(),
                d.grad.numpy() if dst_requires_grad else None)

    for ours, theirs in zip(run(shrew), run(torch)):
        if theirs is None:
            assert ours is None
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_a_recorded_index_write_copies_the_tensor_once(monkeypatch):
    """The write keeps one copy of the old values (for the nodes that read them), and the
    index op reads that copy: no second clone."""
    base = shrew.tensor(np.arange(6, dtype=np.float32), requires_grad=True) * 1
    backend = base._backend
    calls = []
    original = type(backend).contiguous
    monkeypatch.setattr(type(backend), "contiguous",
                        lambda self, x: calls.append(x.shape) or original(self, x))
    base[shrew.tensor([1, 3])] = shrew.tensor([10.0, 20.0], requires_grad=True)
    assert calls.count((6,)) == 1


def test_expand_shares_memory_and_version_with_its_base_as_torch():
    for lib in (shrew, torch):
        a = lib.zeros(3)
        e = a.expand(2, 3)
        a.add_(1.0)
        assert e._version == a._version == 1
        np.testing.assert_array_equal(e.numpy(), np.ones((2, 3), dtype=np.float32))
        c = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = e * c  # saves e for c's gradient
        a.mul_(2.0)
        with pytest.raises((shrew.ShrewError, RuntimeError), match="inplace operation"):
            y.sum().backward()


@pytest.mark.parametrize("write", [lambda d: d.fill_(1.0), lambda d: d.add_(1.0),
                                   lambda d: d.view(-1).zero_(), lambda d: d.copy_(d * 2)])
def test_writing_into_a_diagonal_writes_the_input_as_in_torch(write):
    """diagonal is a view, as torch's: the write lands in x and bumps x's version."""
    tx = torch.arange(9.0).reshape(3, 3)
    write(tx.diagonal())
    x = shrew.arange(9.0).reshape(3, 3)
    write(x.diagonal())
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
    assert x._version == tx._version == 1


def test_writing_into_an_expand_of_a_tensor_that_requires_grad_is_refused_as_in_torch():
    for lib in (shrew, torch):
        e = (lib.zeros(3, requires_grad=True) * 2).expand(2, 3)
        with pytest.raises((shrew.ShrewError, RuntimeError), match="single memory location"):
            e.add_(1.0)
        with pytest.raises((shrew.ShrewError, RuntimeError), match="leaf|single memory location"):
            lib.zeros(3, requires_grad=True).expand(2, 3).add_(1.0)
