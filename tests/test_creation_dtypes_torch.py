"""Creation ops, dtypes, casts and type promotion against PyTorch."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew

DTYPES = ("float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32",
          "int64", "bool")


def same(ours, theirs, rtol=1e-6):
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    got = ours.numpy().astype(np.float64)
    want = theirs.to(torch.float64).numpy() if theirs.dtype == torch.bfloat16 else \
        theirs.numpy().astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


# -- dtypes and promotion -----------------------------------------------------------------
@pytest.mark.parametrize("a, b", itertools.product(DTYPES, DTYPES))
def test_promote_types_and_can_cast(a, b):
    ta, tb = getattr(torch, a), getattr(torch, b)
    assert shrew.promote_types(a, b).name == str(torch.promote_types(ta, tb))[6:]
    assert shrew.can_cast(getattr(shrew, a), getattr(shrew, b)) == torch.can_cast(ta, tb)


TENSORS = st.tuples(st.sampled_from(DTYPES), st.sampled_from([(), (2,)]))
NUMBERS = st.sampled_from([2, -1, 2.5, True])


def operand(spec, framework):
    if not isinstance(spec, tuple):
        return spec
    dtype, shape = spec
    return framework.zeros(shape, dtype=getattr(framework, dtype))


@settings(max_examples=300, deadline=None)
@given(a=TENSORS, b=st.one_of(TENSORS, NUMBERS))
def test_result_type_matches_torch(a, b):
    want = torch.result_type(operand(a, torch), operand(b, torch))
    assert shrew.result_type(operand(a, shrew), operand(b, shrew)).name == str(want)[6:]


def test_dtype_attributes_and_info():
    for name in DTYPES:
        ours, theirs = getattr(shrew, name), getattr(torch, name)
        assert ours.is_floating_point == theirs.is_floating_point
        assert ours.is_complex is False and ours.itemsize == theirs.itemsize
        assert shrew.zeros(2, dtype=ours).element_size() == theirs.itemsize
        if ours.is_floating_point:
            f, tf = shrew.finfo(ours), torch.finfo(theirs)
            for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                         "dtype"):
                assert getattr(f, attr) == getattr(tf, attr), (name, attr)
        elif name != "bool":
            i, ti = shrew.iinfo(ours), torch.iinfo(theirs)
            assert (i.bits, i.max, i.min, i.dtype) == (ti.bits, ti.max, ti.min, ti.dtype)
    assert (shrew.half, shrew.float, shrew.double) == (shrew.float16, shrew.float32,
                                                       shrew.float64)
    assert (shrew.short, shrew.int, shrew.long) == (shrew.int16, shrew.int32, shrew.int64)
    with pytest.raises(shrew.DTypeError, match="finfo"):
        shrew.finfo(shrew.int32)


def test_default_dtype_drives_float_creation_and_scalars():
    assert shrew.get_default_dtype() is shrew.float32
    try:
        shrew.set_default_dtype(shrew.float64)
        torch.set_default_dtype(torch.float64)
        i = shrew.tensor([1, 2])
        for ours, theirs in ((shrew.tensor([1.5]), torch.tensor([1.5])),
                             (shrew.zeros(2), torch.zeros(2)), (shrew.rand(2), torch.rand(2)),
                             (shrew.arange(0, 1, 0.25), torch.arange(0, 1, 0.25)),
                             (shrew.full((2,), 1.5), torch.full((2,), 1.5)),
                             (i * 2.5, torch.tensor([1, 2]) * 2.5),
                             (i / 2, torch.tensor([1, 2]) / 2),
                             (i.exp(), torch.tensor([1, 2]).exp())):
            assert ours.dtype.name == str(theirs.dtype)[6:]
        with pytest.raises(shrew.DTypeError, match="set_default_dtype"):
            shrew.set_default_dtype(shrew.int64)
    finally:
        shrew.set_default_dtype(shrew.float32)
        torch.set_default_dtype(torch.float32)


# -- casts ---------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["float", "double", "half", "bfloat16", "long", "int",
                                    "short", "char", "byte", "bool"])
def test_cast_methods(method):
    values = np.array([[-2.75, 0.0, 1.5], [3.25, 100.0, -0.5]])
    ours, theirs = getattr(shrew.tensor(values), method)(), getattr(torch.tensor(values), method)()
    if method == "byte":  # negative floats to uint8 are undefined behaviour in C: skip them
        ours, theirs = ours[:, 1:], theirs[:, 1:]
    same(ours, theirs)


def test_to_forms_and_type():
    x = shrew.tensor([1.5, -2.0], requires_grad=True)
    assert x.to(shrew.float64).dtype is shrew.float64
    assert x.to("cpu", shrew.int64).dtype is shrew.int64
    assert x.to(device="cpu", dtype=shrew.float16).dtype is shrew.float16
    assert x.to(shrew.zeros(1, dtype=shrew.int32)).dtype is shrew.int32
    assert x.to(shrew.float32) is x and x.to(shrew.float32, copy=True) is not x
    y = x.to("cpu", non_blocking=True, copy=True, memory_format=None)
    assert y is not x and np.array_equal(y.detach().numpy(), x.detach().numpy())
    y.sum().backward()  # the copy is differentiable
    assert np.array_equal(x.grad.numpy(), [1.0, 1.0])
    assert x.type() == "torch.FloatTensor" and x.type(shrew.int16).dtype is shrew.int16
    assert x.type("torch.DoubleTensor").dtype is shrew.float64
    assert x.is_floating_point() and not x.long().is_floating_point()
    with pytest.raises(shrew.ShrewError, match="unexpected keyword"):
        x.to(devise="cpu")


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "bfloat16"])
def test_new_dtypes_compute_as_torch(dtype):
    values = np.array([[1, 7, 3], [4, 0, 9]]) if dtype != "bfloat16" else \
        np.array([[1.5, -7.25, 3.0], [0.1, 2.0, 9.5]])
    ours = shrew.tensor(values, dtype=dtype)
    theirs = torch.tensor(values, dtype=getattr(torch, dtype))
    for fn in (lambda t: t + t, lambda t: t * 3, lambda t: t - 2, lambda t: t.sum(),
               lambda t: t.max(), lambda t: t.abs(), lambda t: t * t * t * t,
               lambda t: t.float(), lambda t: t > 2, lambda t: shrew_or_torch(t).maximum(t, t)):
        same(fn(ours), fn(theirs), rtol=1e-2)


def shrew_or_torch(t):
    return shrew if isinstance(t, shrew.Tensor) else torch


# -- creation --------------------------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs", [
    ((5,), {}), ((2, 9), {}), ((1, 4, 0.5), {}), ((10, 0, -3), {}), ((0.5, 2.1, 0.3), {}),
    ((1, 7, 2), {"dtype": "float32"}), ((5,), {"dtype": "float64"}), ((-3, 3), {"dtype": "int8"}),
    ((0, 1, 0.1), {}), ((3,), {"dtype": "bfloat16"})])
def test_arange(args, kwargs):
    ours = shrew.arange(*args, **{k: getattr(shrew, v) for k, v in kwargs.items()})
    same(ours, torch.arange(*args, **{k: getattr(torch, v) for k, v in kwargs.items()}))


@pytest.mark.parametrize("start, end, steps", [(0, 1, 5), (-2.5, 3, 7), (3, -1, 1), (0, 1, 0),
                                               (1, 10, 10), (-1, 1, 100)])
@pytest.mark.parametrize("dtype", [None, "float64", "int64"])
def test_linspace_and_logspace(start, end, steps, dtype):
    ours = shrew.linspace(start, end, steps, dtype=None if dtype is None else getattr(shrew, dtype))
    theirs = torch.linspace(start, end, steps,
                            dtype=None if dtype is None else getattr(torch, dtype))
    same(ours, theirs)
    if dtype != "int64":
        ours = shrew.logspace(start, end, steps, base=2.0,
                              dtype=None if dtype is None else getattr(shrew, dtype))
        theirs = torch.logspace(start, end, steps, base=2.0,
                                dtype=None if dtype is None else getattr(torch, dtype))
        same(ours, theirs, rtol=1e-5)


def test_like_and_new_functions():
    x = shrew.ones(2, 3, dtype=shrew.float64)
    tx = torch.ones(2, 3, dtype=torch.float64)
    for ours, theirs in (
            (shrew.full_like(x, 7), torch.full_like(tx, 7)),
            (shrew.zeros_like(x, dtype=shrew.int32), torch.zeros_like(tx, dtype=torch.int32)),
            (shrew.ones_like(x, device="cpu"), torch.ones_like(tx, device="cpu")),
            (shrew.empty_like(x), torch.zeros_like(tx)),  # shrew's empty is zeroed
            (x.new_zeros(4), tx.new_zeros(4)), (x.new_ones((2, 2)), tx.new_ones((2, 2))),
            (x.new_full((3,), 2.5), tx.new_full((3,), 2.5)),
            (x.new_tensor([1, 2]), tx.new_tensor([1, 2])),
            (x.new_empty(2, 1).new_zeros(2), tx.new_empty(2, 1).new_zeros(2)),
            (shrew.empty(2, 3), torch.zeros(2, 3)), (shrew.eye(2, 4), torch.eye(2, 4)),
            (shrew.eye(3, dtype=shrew.int64), torch.eye(3, dtype=torch.int64)),
            (shrew.zeros((2, 3)), torch.zeros((2, 3))), (shrew.ones([2]), torch.ones([2])),
            (shrew.full([2], True), torch.full([2], True)),
            (shrew.full((1,), 3), torch.full((1,), 3))):
        same(ours, theirs)
    assert shrew.zeros_like(x, requires_grad=True).requires_grad
    assert shrew.rand_like(x).dtype is shrew.float64 and shrew.randn_like(x).shape == (2, 3)


def test_clone_copies_and_is_differentiable():
    x = shrew.tensor([1.0, 2.0], requires_grad=True)
    y = shrew.clone(x)
    assert y is not x and y.requires_grad
    (y * 3).sum().backward()
    assert np.array_equal(x.grad.numpy(), [3.0, 3.0])
    assert x.clone().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("row, col, offset", [(3, 3, 0), (4, 2, 1), (2, 5, -1), (0, 3, 0),
                                              (3, 4, 5)])
def test_triangle_indices(row, col, offset):
    same(shrew.tril_indices(row, col, offset), torch.tril_indices(row, col, offset))
    same(shrew.triu_indices(row, col, offset), torch.triu_indices(row, col, offset))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    a, b, c = shrew.arange(3.0), shrew.tensor([1.5, 2.5]), shrew.tensor([7.0])
    ta, tb, tc = torch.arange(3.0), torch.tensor([1.5, 2.5]), torch.tensor([7.0])
    for ours, theirs in zip(shrew.meshgrid(a, b, c, indexing=indexing),
                            torch.meshgrid(ta, tb, tc, indexing=indexing)):
        same(ours, theirs)
    for ours, theirs in zip(shrew.meshgrid([a, b], indexing=indexing),
                            torch.meshgrid([ta, tb], indexing=indexing)):
        same(ours, theirs)


def test_random_creation():
    shrew.manual_seed(0)
    r = shrew.randint(3, 9, (1000,))
    assert r.dtype is shrew.int64 and r.min().item() >= 3 and r.max().item() == 8
    assert shrew.randint(5, size=(2, 3), dtype=shrew.int16).dtype is shrew.int16
    p = shrew.randperm(50)
    assert sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))
    mean, std = shrew.zeros(2, 3), shrew.full((3,), 2.0)
    assert shrew.normal(mean, std).shape == (2, 3)
    assert shrew.normal(1.0, std).shape == (3,) and shrew.normal(mean).shape == (2, 3)
    draws = shrew.normal(5.0, 0.5, (4000,))
    assert abs(draws.mean().item() - 5.0) < 0.05
    shrew.manual_seed(4)
    first = shrew.randint(0, 100, (8,)).tolist()
    shrew.manual_seed(4)
    assert shrew.randint(0, 100, (8,)).tolist() == first


def test_creation_errors():
    with pytest.raises(shrew.ShrewError, match="arange"):
        shrew.arange(0, 5, 0)
    with pytest.raises(shrew.ShrewError, match="arange.*sign"):
        shrew.arange(0, 5, -1)
    with pytest.raises(shrew.ShrewError, match="linspace.*steps"):
        shrew.linspace(0, 1, -2)
    with pytest.raises(shrew.ShrewError, match="randint"):
        shrew.randint(5, 2, (3,))
    with pytest.raises(shrew.ShapeError, match="meshgrid"):
        shrew.meshgrid(shrew.zeros(2, 2))
    with pytest.raises(shrew.ShrewError, match="meshgrid.*dtype"):
        shrew.meshgrid(shrew.zeros(2), shrew.arange(2))
    with pytest.raises(shrew.ShrewError, match="meshgrid.*indexing"):
        shrew.meshgrid(shrew.zeros(2), indexing="ab")
    with pytest.raises(shrew.ShrewError, match="tril_indices"):
        shrew.tril_indices(-1, 2)
    with pytest.raises(shrew.ShrewError, match="full.*fill_value"):
        shrew.full((2,), "x")
