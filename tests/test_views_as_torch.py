"""Views as PyTorch's (issue 30): random chains of view ops and in-place writes, run on
torch and shrew side by side (cpu and every OpenCL device), comparing the values of every
tensor in the chain, their ``_version`` counters and the gradients of a loss through it."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shrew
from shrew.backends.opencl import factory

DEVICES = ["cpu"] + [f"opencl:{i}" for i in range(factory.device_count())]


class Pair:
    """One tensor of the chain on both sides, and whether torch lets a write into it."""

    def __init__(self, s: Any, t: Any, writable: bool, split: bool = False) -> None:
        self.s, self.t, self.writable = s, t, writable
        self.split = split  # torch refuses grad through a split's view after a write


def _view(data: st.DataObject, p: Pair) -> Pair | None:
    """A random view op that applies to p's shape, on both sides (None: none applies)."""
    shape = tuple(p.t.shape)
    nd = len(shape)
    dims = st.integers(0, nd - 1)
    ops = ["unsqueeze"] + (["slice", "select", "narrow", "transpose", "permute", "unfold",
                           "split", "as_strided", "expand"] if nd else [])
    ops += ["diagonal"] * (nd >= 2)
    op = data.draw(st.sampled_from(ops))
    if nd >= 4 and op in ("unsqueeze", "unfold", "expand"):
        return None
    keep = p.writable
    if op == "slice":
        d = data.draw(dims)
        start = data.draw(st.integers(0, shape[d]))
        stop = data.draw(st.integers(start, shape[d]))
        step = data.draw(st.integers(1, 3))
        key = (slice(None),) * d + (slice(start, stop, step),)
        def f(x: Any) -> Any: return x[key]
    elif op == "select":
        d = data.draw(dims)
        if not shape[d]:
            return None
        i = data.draw(st.integers(-shape[d], shape[d] - 1))
        def f(x: Any) -> Any: return x.select(d, i)
    elif op == "narrow":
        d = data.draw(dims)
        start = data.draw(st.integers(0, shape[d]))
        n = data.draw(st.integers(0, shape[d] - start))
        def f(x: Any) -> Any: return x.narrow(d, start, n)
    elif op == "transpose":
        d0, d1 = data.draw(dims), data.draw(dims)
        def f(x: Any) -> Any: return x.transpose(d0, d1)
    elif op == "permute":
        perm = data.draw(st.permutations(range(nd)))
        def f(x: Any) -> Any: return x.permute(*perm)
    elif op == "unsqueeze":
        d = data.draw(st.integers(-nd - 1, nd))
        def f(x: Any) -> Any: return x.unsqueeze(d)
    elif op == "diagonal":
        d1, d2 = data.draw(st.permutations(range(nd)))[:2]
        off = data.draw(st.integers(-2, 2))
        def f(x: Any) -> Any: return x.diagonal(off, d1, d2)
    elif op == "unfold":
        d = data.draw(dims)
        size = data.draw(st.integers(0, shape[d]))
        step = data.draw(st.integers(1, 3))
        keep = keep and step >= size  # overlapping windows: torch's writes are ill-defined
        def f(x: Any) -> Any: return x.unfold(d, size, step)
    elif op == "split":
        d = data.draw(dims)
        size = data.draw(st.integers(1, max(shape[d], 1)))
        pieces = -(-shape[d] // size) or 1
        i = data.draw(st.integers(0, pieces - 1))
        keep = False  # torch refuses writes into one of several views with grad
        def f(x: Any) -> Any: return x.split(size, d)[i]
    elif op == "as_strided":  # a sub-block of x itself, through x's own strides
        d = data.draw(dims)
        k = data.draw(st.integers(0, shape[d]))
        size = shape[:d] + (shape[d] - k,) + shape[d + 1:]
        def f(x: Any) -> Any:
            return x.as_strided(size, x.stride(), x.storage_offset() + k * x.stride(d))
    else:  # expand: read only
        keep = False
        def f(x: Any) -> Any: return x.unsqueeze(0).expand(2, *shape)
    return Pair(f(p.s), f(p.t), keep, p.split or op == "split")


def _write(data: st.DataObject, p: Pair, sources: list[Pair], device: str) -> None:
    """A random in-place write into p, on both sides."""
    shape = tuple(p.t.shape)
    op = data.draw(st.sampled_from(["mul_", "add_", "copy_", "fill_", "setitem"]))
    c = data.draw(st.floats(-2, 2, allow_nan=False, width=32))
    if op in ("add_", "copy_"):
        w = np.random.default_rng(len(sources)).standard_normal(shape)
        ws = shrew.tensor(w, requires_grad=True)
        wt = torch.tensor(w, requires_grad=True)
        sources.append(Pair(ws, wt, False))
        getattr(p.s, op)(ws.to(device) * 1)
        getattr(p.t, op)(wt * 1)
    elif op == "setitem":
        if not shape:
            return
        key = (slice(None, None, data.draw(st.integers(1, 3))),)
        p.s[key] = c
        p.t[key] = c
    elif op == "mul_":
        p.s.mul_(c)
        p.t.mul_(c)
    else:
        p.s.fill_(c)
        p.t.fill_(c)


def _same(s: Any, t: Any) -> None:
    if s is None and t is not None:  # (shrew leaves no gradient where none reaches a leaf)
        assert not t.any()
        return
    np.testing.assert_allclose(s.detach().cpu().numpy(), t.detach().numpy(), rtol=1e-6,
                               atol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=30, deadline=None, report_multiple_bugs=False,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_chains_of_views_and_writes_match_torch(device: str, data: st.DataObject) -> None:
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    x = np.random.default_rng(0).standard_normal(shape)
    leaf_s = shrew.tensor(x, dtype=shrew.float64, requires_grad=True)
    leaf_t = torch.tensor(x, requires_grad=True)
    chain = [Pair(leaf_s.to(device) * 1, leaf_t * 1, True)]
    sources: list[Pair] = []
    for _ in range(data.draw(st.integers(1, 6))):
        p = chain[data.draw(st.integers(0, len(chain) - 1))]
        if data.draw(st.booleans()):
            if p.split:  # (a leaf of the chain: torch's grad_fn of it may be invalid)
                continue
            made = _view(data, p)
            if made is not None:
                chain.append(made)
        elif p.writable and p.t.numel():
            _write(data, p, sources, device)
    loss_s, loss_t = 0, 0
    for i, p in enumerate(chain):
        _same(p.s, p.t)
        assert p.s._version == p.t._version
        if p.split:
            continue
        loss_s = loss_s + (p.s * (i + 1)).sin().sum()
        loss_t = loss_t + (p.t * (i + 1)).sin().sum()
    loss_s.backward()
    loss_t.backward()
    _same(leaf_s.grad, leaf_t.grad)
    for src in sources:
        _same(src.s.grad, src.t.grad)


@pytest.mark.parametrize("device", DEVICES)
def test_a_step_slice_is_a_view(device: str) -> None:
    """The issue's case: v = a[:, 1::2]; v.mul_(10) changes a, as in PyTorch."""
    a, ta = shrew.arange(24.0).reshape(4, 6).to(device), torch.arange(24.0).reshape(4, 6)
    a[:, 1::2].mul_(10)
    ta[:, 1::2].mul_(10)
    _same(a, ta)
    assert a._version == ta._version == 1


@pytest.mark.parametrize("device", DEVICES)
def test_unfold_diagonal_and_as_strided_share_memory(device: str) -> None:
    a, ta = shrew.arange(24.0).reshape(4, 6).to(device), torch.arange(24.0).reshape(4, 6)
    for f in (lambda x: x.unfold(1, 2, 2), lambda x: x.diagonal(1),
              lambda x: x.as_strided((2, 3), (1, 6), 2), lambda x: torch_or(x).as_strided(
                  x, (3,), (7,))):
        v, tv = f(a), f(ta)
        assert v.stride() == tv.stride() and v.storage_offset() == tv.storage_offset()
        v.add_(1.0)
        tv.add_(1.0)
        _same(a, ta)
        _same(v, tv)


def torch_or(x: Any) -> Any:
    return torch if isinstance(x, torch.Tensor) else shrew


def test_a_tuple_inside_the_key_indexes_as_in_torch() -> None:
    x, tx = shrew.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    _same(x[:, (2, 1)], tx[:, (2, 1)])
    _same(x[(0, 2), 1:], tx[(0, 2), 1:])


def test_view_errors_as_torch() -> None:
    x, tx = shrew.zeros(3, 4), torch.zeros(3, 4)
    for f in (lambda m, t: t[::-1], lambda m, t: t.unfold(1, 5, 1),
              lambda m, t: t.unfold(1, 2, 0), lambda m, t: m.as_strided(t, (4, 4), (4, 1)),
              lambda m, t: t.diagonal(0, 1, 1), lambda m, t: t.expand(2, 3, 4).add_(1)):
        with pytest.raises(Exception) as expected:
            f(torch, tx)
        with pytest.raises(shrew.ShrewError) as got:
            f(shrew, x)
        assert isinstance(got.value, type(expected.value)), (got.value, expected.value)
