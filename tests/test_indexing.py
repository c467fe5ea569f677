"""Indexing (x[key], x[key] = v) and the index functions against PyTorch (values and
gradients, float64) and numpy (values), with hypothesis-generated shapes and keys."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew.ops.index import recorded as index_ops
from support import check_grad, device_or_fail

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True)


# -- keys: the same key for shrew, torch and numpy -----------------------------------------------
@st.composite
def keyed(draw, allow_repeats=True):
    """(shape, key as (kind, value) entries) for a tensor of 1-4 dims.  Advanced indices
    have a common length or 1, so that several of them usually broadcast together."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    common = draw(st.integers(0, 3))
    entries, dim, ellipsis_used = [], 0, False
    for _ in range(draw(st.integers(1, len(shape) + 1))):
        if dim >= len(shape):
            entries.append(("none", None))
            continue
        size = shape[dim]
        kind = draw(st.sampled_from(("int", "slice", "slice", "none", "list", "tensor",
                                     "tensor", "int32", "mask", "ellipsis", "scalar_tensor",
                                     "range")))
        if kind == "int":
            entries.append(("int", draw(st.integers(-size, size - 1))))
        elif kind == "slice":
            start = draw(st.none() | st.integers(-size - 1, size + 1))
            stop = draw(st.none() | st.integers(-size - 1, size + 1))
            entries.append(("slice", slice(start, stop, draw(st.none() | st.integers(1, 3)))))
        elif kind == "none":
            entries.append(("none", None))
            continue
        elif kind == "ellipsis":
            if ellipsis_used:
                continue
            ellipsis_used = True
            entries.append(("ellipsis", Ellipsis))
            dim = len(shape) - (len(shape) - dim) // 2  # the rest split around it
            continue
        elif kind == "mask":
            entries.append(("mask", draw(st.lists(st.booleans(), min_size=size,
                                                  max_size=size))))
        elif kind == "scalar_tensor":
            entries.append(("scalar_tensor", draw(st.integers(-size, size - 1))))
        elif kind == "range":  # a Python range, a sequence of indices (consecutive: unique)
            n = min(draw(st.sampled_from((common, 1))), size)
            start = draw(st.integers(-size, size - n))
            entries.append(("range", (start, start + n)))
        else:
            n = draw(st.sampled_from((common, 1)))
            if not allow_repeats:
                n = min(n, size)
            values = draw(st.lists(st.integers(-size, size - 1), min_size=n, max_size=n,
                                   unique_by=None if allow_repeats else lambda i, s=size: i % s))
            entries.append((kind, values))
        dim += 1
    return shape, entries


def _key(entries, lib):
    out = []
    for kind, v in entries:
        if kind in ("int", "slice", "none", "ellipsis"):
            out.append(v)
        elif kind == "list":
            out.append(list(v))
        elif kind == "range":
            out.append(range(*v))
        elif kind == "mask":
            out.append(lib.tensor(v, dtype=lib.bool))
        elif kind == "scalar_tensor":
            out.append(lib.tensor(v))
        else:
            out.append(lib.tensor(v, dtype=lib.int32 if kind == "int32" else lib.int64))
    return tuple(out)


def _values(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@SETTINGS
@given(keyed())
def test_getitem_values_and_gradients_match_torch(case):
    shape, entries = case
    data = _values(shape)
    leaf_t = torch.tensor(data, requires_grad=True)
    try:
        want = leaf_t[_key(entries, torch)]
    except IndexError:  # torch refuses it (advanced indices that do not broadcast): so must we
        with pytest.raises(IndexError):
            shrew.tensor(data)[_key(entries, shrew)]
        return
    x = shrew.tensor(data, requires_grad=True)
    got = x[_key(entries, shrew)]
    assert got.shape == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.detach().numpy())
    w = _values(tuple(want.shape), seed=1)
    (want * torch.tensor(w)).sum().backward()  # repeated indices accumulate
    store = (got * shrew.tensor(w)).sum().backward()
    np.testing.assert_allclose(store[x].numpy(), leaf_t.grad.numpy(), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(keyed())
def test_getitem_without_ints_among_advanced_indices_matches_numpy(case):
    shape, entries = case
    if any(k in ("int", "scalar_tensor") for k, _ in entries):
        return  # numpy counts ints as advanced indices, torch applies them first
    data = _values(shape)
    key = tuple(np.array(v, dtype=bool) if k == "mask" else
                np.array(v, dtype=np.int64) if k in ("tensor", "int32") else
                range(*v) if k == "range" else v for k, v in entries)
    try:
        want = data[key]
    except IndexError:
        return
    np.testing.assert_array_equal(shrew.tensor(data)[_key(entries, shrew)].numpy(), want)


@SETTINGS
@given(keyed(allow_repeats=False), st.booleans())
def test_setitem_matches_torch_and_is_recorded(case, scalar):
    shape, entries = case
    data = _values(shape)
    try:
        target = torch.tensor(data)[_key(entries, torch)]
    except IndexError:
        return
    if len(set(_positions(shape, entries))) != target.numel():
        return  # a repeated target: torch leaves the winner undefined
    value = 2.5 if scalar else _values(tuple(target.shape)[1:], seed=2)
    leaf_t = torch.tensor(data, requires_grad=True)
    value_t = value if scalar else torch.tensor(value, requires_grad=True)
    x_t = leaf_t * 1
    x_t[_key(entries, torch)] = value_t
    leaf = shrew.tensor(data, requires_grad=True)
    value_s = value if scalar else shrew.tensor(value, requires_grad=True)
    x = leaf * 1
    x[_key(entries, shrew)] = value_s
    np.testing.assert_array_equal(x.numpy(), x_t.detach().numpy())
    w = _values(shape, seed=3)
    (x_t * torch.tensor(w)).sum().backward()
    store = (x * shrew.tensor(w)).sum().backward()
    np.testing.assert_array_equal(store[leaf].numpy(), leaf_t.grad.numpy())
    if not scalar:
        np.testing.assert_allclose(store[value_s].numpy(), value_t.grad.numpy(), atol=1e-12)


def _positions(shape, entries):
    return torch.arange(int(np.prod(shape))).reshape(shape)[_key(entries, torch)].flatten() \
        .tolist()


@SETTINGS
@given(keyed())
def test_index_put_accumulates_repeated_indices_as_torch(case):
    shape, entries = case
    if any(k not in ("tensor", "list", "int32", "mask") for k, _ in entries):
        return
    data = _values(shape)
    key_t = tuple(torch.tensor(v, dtype=torch.bool if k == "mask" else torch.int64)
                  for k, v in entries)
    try:
        target = torch.tensor(data)[key_t]
    except IndexError:
        return
    values = _values(tuple(target.shape), seed=4)
    want = torch.tensor(data).index_put(key_t, torch.tensor(values), accumulate=True)
    key_s = tuple(shrew.tensor(v, dtype=shrew.bool if k == "mask" else shrew.int64)
                  for k, v in entries)
    got = shrew.tensor(data).index_put(key_s, shrew.tensor(values), accumulate=True)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_dim_placement_of_separated_advanced_indices():
    x = torch.arange(120.0).reshape(2, 3, 4, 5)
    s = shrew.tensor(x.numpy())
    for key in [(0, slice(None), [0, 1]), ([0, 1], slice(None), [1, 2]),
                (slice(None), [0, 1], [1, 2]), (slice(None), [[0], [1]], slice(None), [1, 2]),
                (None, [1, 0], Ellipsis, [4]), ([1], None, [2]), (True, 1), (False,),
                (Ellipsis, torch.tensor([True, False, True, False, True]))]:
        sk = tuple(shrew.tensor(k.numpy()) if isinstance(k, torch.Tensor) else k for k in key)
        np.testing.assert_array_equal(s[sk].numpy(), x[key].numpy(), err_msg=str(key))


# -- the index functions against torch --------------------------------------------------------
def _pair(shape, seed=0, grad=True):
    v = _values(shape, seed)
    return torch.tensor(v, requires_grad=grad), shrew.tensor(v, requires_grad=grad)


def _same(fn_t, fn_s, *inputs):
    """fn on torch and shrew leaves of the same values: outputs and gradients agree."""
    ts = [torch.tensor(v, requires_grad=True) for v in inputs]
    ss = [shrew.tensor(v, requires_grad=True) for v in inputs]
    want, got = fn_t(*ts), fn_s(*ss)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    w = _values(tuple(want.shape), seed=9)
    grads_t = torch.autograd.grad((want * torch.tensor(w)).sum(), ts, allow_unused=True)
    store = (got * shrew.tensor(w)).sum().backward()
    for t_grad, s in zip(grads_t, ss):
        g = store.get(s)
        if t_grad is None:
            assert g is None or not np.any(g.numpy())
        else:
            np.testing.assert_allclose(g.numpy(), t_grad.numpy(), rtol=1e-10, atol=1e-12)


IDX = [[2, 0, 2], [1, 1, 0]]


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_values_and_gradients_match_torch(reduce, include_self):
    # integer-valued inputs with repeats: ties for amax/amin, zeros for prod
    rng = np.random.default_rng(1)
    x = rng.integers(-2, 3, (3, 4)).astype(np.float64)
    if not include_self:
        # torch's rule still counts the left-out x as a tie for amax/amin (and then drops
        # its share); shrew splits among src only, so keep x off src's values here
        x += 0.5
    src = rng.integers(-2, 3, (2, 3)).astype(np.float64)  # torch cannot differentiate more
    for index in (IDX, [[0, 0, 0], [0, 2, 0]]):
        _same(lambda a, b, i=index: a.scatter_reduce(0, torch.tensor(i), b, reduce,
                                                     include_self=include_self),
              lambda a, b, i=index: a.scatter_reduce(0, shrew.tensor(i), b, reduce,
                                                     include_self=include_self), x, src)


@pytest.mark.parametrize("reduce", ["sum", "prod", "amax", "amin"])
def test_scatter_reduce_gradcheck(reduce):
    rng = np.random.default_rng(2)
    x = shrew.tensor(rng.uniform(0.5, 2, (3, 4)), requires_grad=True)
    src = shrew.tensor(rng.uniform(0.5, 2, (2, 3)), requires_grad=True)
    index = shrew.tensor(IDX)
    check_grad(lambda a, b: a.scatter_reduce(0, index, b, reduce), x, src)


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")  # still torch's API
def test_scatter_forms_match_torch():
    x = _values((3, 4))
    src = _values((2, 3), seed=1)
    idx_t, idx_s = torch.tensor(IDX), shrew.tensor(IDX)
    _same(lambda a, b: a.scatter(0, idx_t, b), lambda a, b: a.scatter(0, idx_s, b), x, src)
    _same(lambda a, b: a.scatter_add(0, idx_t, b), lambda a, b: a.scatter_add(0, idx_s, b),
          x, src)
    # a src larger than the index: only the index's extent of it is used (torch computes
    # these values but cannot differentiate them)
    wide = _values((3, 5), seed=7)
    for name in ("scatter", "scatter_add"):
        want = getattr(torch.tensor(x), name)(0, idx_t, torch.tensor(wide))
        got = getattr(shrew.tensor(x), name)(0, idx_s, shrew.tensor(wide))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    check_grad(lambda a, b: a.scatter_add(0, idx_s, b), shrew.tensor(x, requires_grad=True),
               shrew.tensor(wide, requires_grad=True))
    _same(lambda a: a.scatter(1, idx_t, 1.5), lambda a: a.scatter(1, idx_s, 1.5), x)
    _same(lambda a: torch.scatter(a, 1, idx_t, value=-2.0),
          lambda a: shrew.scatter(a, 1, idx_s, value=-2.0), x)
    for reduce in ("add", "multiply"):
        want = torch.tensor(x).scatter(0, idx_t, torch.tensor(src), reduce=reduce)
        got = shrew.tensor(x).scatter(0, idx_s, shrew.tensor(src), reduce=reduce)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_gather_with_an_index_smaller_than_the_input_matches_torch():
    _same(lambda a: torch.gather(a, 1, torch.tensor([[0, 3], [1, 1]])),
          lambda a: shrew.gather(a, 1, shrew.tensor([[0, 3], [1, 1]])), _values((3, 4)))


def test_index_functions_match_torch():
    x, src = _values((4, 3)), _values((2, 3), seed=1)
    i_t, i_s = torch.tensor([3, -4 + 4]), shrew.tensor([3, 0])
    _same(lambda a: a.index_select(0, i_t), lambda a: a.index_select(0, i_s), x)
    _same(lambda a: a.index_select(1, torch.tensor([2, 2, 0])),
          lambda a: a.index_select(1, shrew.tensor([2, 2, 0])), x)
    _same(lambda a, b: a.index_add(0, torch.tensor([1, 1]), b, alpha=2.0),
          lambda a, b: a.index_add(0, shrew.tensor([1, 1]), b, alpha=2.0), x, src)
    _same(lambda a, b: a.index_copy(0, i_t, b), lambda a, b: a.index_copy(0, i_s, b), x, src)
    _same(lambda a: a.index_fill(1, torch.tensor([0, 2]), 7.0),
          lambda a: a.index_fill(1, shrew.tensor([0, 2]), 7.0), x)
    _same(lambda a, v: a.index_fill(0, torch.tensor([1, 3, 1]), v),
          lambda a, v: a.index_fill(0, shrew.tensor([1, 3, 1]), v), x, np.array(2.0))
    mask = _values((4, 3), seed=5) > 0
    _same(lambda a: a.masked_fill(torch.tensor(mask[None]), 1.0),  # broadcasts x too
          lambda a: a.masked_fill(shrew.tensor(mask[None]), 1.0), x)
    _same(lambda a: a.masked_fill(torch.tensor(mask), -1.0),
          lambda a: a.masked_fill(shrew.tensor(mask), -1.0), x)
    _same(lambda a, v: a.masked_fill(torch.tensor(mask[0]), v),
          lambda a, v: a.masked_fill(shrew.tensor(mask[0]), v), x, np.array(3.0))
    _same(lambda a: a.masked_select(torch.tensor(mask)),
          lambda a: a.masked_select(shrew.tensor(mask)), x)
    _same(lambda a, b: a.masked_scatter(torch.tensor(mask), b),
          lambda a, b: a.masked_scatter(shrew.tensor(mask), b), x, _values((4, 4), seed=6))
    _same(lambda a: a.take(torch.tensor([[0, -1], [5, 5]])),
          lambda a: a.take(shrew.tensor([[0, -1], [5, 5]])), x)
    _same(lambda a: torch.take_along_dim(a, torch.tensor([[0], [2], [1], [0]]), 1),
          lambda a: shrew.take_along_dim(a, shrew.tensor([[0], [2], [1], [0]]), 1), x)
    _same(lambda a: torch.take_along_dim(a, torch.tensor([[0, 2, 1]]), 0),
          lambda a: shrew.take_along_dim(a, shrew.tensor([[0, 2, 1]]), 0), x)
    _same(lambda a: torch.take_along_dim(a, torch.tensor([11, 0])),
          lambda a: shrew.take_along_dim(a, shrew.tensor([11, 0])), x)
    with pytest.raises(RuntimeError):  # as torch: no wrapping without a dim
        shrew.take_along_dim(shrew.tensor(x), shrew.tensor([-1]))
    _same(lambda a: torch.take_along_dim(a, torch.tensor([[-1], [0], [-3], [2]]), 1),
          lambda a: shrew.take_along_dim(a, shrew.tensor([[-1], [0], [-3], [2]]), 1), x)
    for accumulate in (False, True):
        index = [0, -1, 4] if not accumulate else [0, 4, 4]
        _same(lambda a, b, i=index, acc=accumulate: a.put(torch.tensor(i), b, accumulate=acc),
              lambda a, b, i=index, acc=accumulate: a.put(shrew.tensor(i), b, accumulate=acc),
              x, np.array([1.0, 2.0, 3.0]))


def test_nonzero_argwhere_and_where_match_torch():
    data = np.array([[0, 1.5, 0], [2, 0, -1]])
    t, s = torch.tensor(data), shrew.tensor(data)
    np.testing.assert_array_equal(s.nonzero().numpy(), t.nonzero().numpy())
    np.testing.assert_array_equal(shrew.argwhere(s).numpy(), torch.argwhere(t).numpy())
    for got, want in zip(shrew.where(s > 0), torch.where(t > 0)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for got, want in zip(s.nonzero(as_tuple=True), t.nonzero(as_tuple=True)):
        assert got.dtype == shrew.int64
        np.testing.assert_array_equal(got.numpy(), want.numpy())


# -- in place ---------------------------------------------------------------------------------
def test_in_place_forms_write_and_record_like_torch():
    base = _values((4, 3))
    src = _values((2, 3), seed=1)
    cases = [
        ("index_add_", (0, [1, 1]), {"alpha": 0.5}),
        ("index_copy_", (0, [3, 0]), {}),
        ("scatter_", (0, [[0, 1, 2], [3, 3, 0]]), {}),
        ("scatter_add_", (0, [[0, 1, 2], [3, 3, 0]]), {}),
    ]
    for name, (dim, index), kwargs in cases:
        lt, ls = torch.tensor(base, requires_grad=True), shrew.tensor(base, requires_grad=True)
        bt, bs = torch.tensor(src, requires_grad=True), shrew.tensor(src, requires_grad=True)
        xt, xs = lt * 2, ls * 2
        assert getattr(xs, name)(dim, shrew.tensor(index), bs, **kwargs) is xs
        getattr(xt, name)(dim, torch.tensor(index), bt, **kwargs)
        np.testing.assert_allclose(xs.numpy(), xt.detach().numpy(), err_msg=name)
        (xt * xt).sum().backward()
        store = (xs * xs).sum().backward()
        np.testing.assert_allclose(store[ls].numpy(), lt.grad.numpy(), err_msg=name)
        np.testing.assert_allclose(store[bs].numpy(), bt.grad.numpy(), err_msg=name)


def test_masked_fill_and_put_in_place_without_grad_write_into_the_same_memory():
    x = shrew.zeros(2, 3)
    row = x[0]  # a view of x's memory on the cpu
    x.masked_fill_(shrew.tensor([True, False, True]), 4.0)
    x.put_(shrew.tensor([4]), shrew.tensor([9.0]))
    x[1, 0] = 1
    assert x.tolist() == [[4.0, 0.0, 4.0], [1.0, 9.0, 4.0]]
    assert row.tolist() == [4.0, 0.0, 4.0]


def test_writing_a_requires_grad_value_into_a_plain_tensor_records_it():
    w = shrew.tensor([1.0, 2.0], requires_grad=True)
    x = shrew.zeros(3)
    x[[0, 2]] = w * 3
    assert not x.is_leaf and x.requires_grad
    store = (x * shrew.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert store[w].tolist() == [3.0, 300.0]


# -- bad input: a clear error, nothing written ---------------------------------------------------
def _unchanged_after(x, write, error, *words):
    before = x.numpy().copy()
    with pytest.raises(error) as info:
        write()
    for w in words:
        assert w in str(info.value)
    np.testing.assert_array_equal(x.numpy(), before)


def test_bad_writes_raise_before_writing():
    x = shrew.tensor(_values((3, 4)))
    _unchanged_after(x, lambda: x.__setitem__((slice(None), 0), shrew.ones(4)),
                     shrew.ShapeError, "[4]", "[3]")
    _unchanged_after(x, lambda: x.__setitem__(shrew.tensor([True, False]), 1.0),
                     IndexError, "mask", "[2]")
    _unchanged_after(x, lambda: x.__setitem__(shrew.tensor([0.0]), 1.0), IndexError,
                     "float")
    _unchanged_after(x, lambda: x.__setitem__([0, 3], 1.0), IndexError, "3", "out of range")
    _unchanged_after(x, lambda: x.index_fill_(1, shrew.tensor([4]), 0.0), IndexError,
                     "index_fill", "4")
    _unchanged_after(x, lambda: x.masked_fill_(shrew.tensor([[True]] * 4), 0.0),
                     shrew.ShapeError, "masked_fill")
    _unchanged_after(x, lambda: x.masked_fill_(shrew.tensor([[[True]]]), 0.0),
                     shrew.ShapeError, "masked_fill_", "[1, 3, 4]")
    _unchanged_after(x, lambda: x.scatter_(0, shrew.tensor([[0, 5]]), 1.0), RuntimeError,
                     "scatter", "5")
    _unchanged_after(x, lambda: x.put_(shrew.tensor([12]), shrew.tensor([1.0])), IndexError,
                     "put", "12")
    for error in (IndexError, shrew.ShrewError):
        with pytest.raises(error):
            x[3]
    leaf = shrew.tensor(_values((3,)), requires_grad=True)
    _unchanged_after(leaf, lambda: leaf.__setitem__(0, 1.0), shrew.ShrewError, "leaf")
    with shrew.no_grad():
        leaf[0] = 1.0  # allowed, as in torch
    assert leaf.tolist()[0] == 1.0


def test_negative_step_is_refused_as_torch_does():
    with pytest.raises(ValueError, match="step"):
        shrew.ones(3)[::-1]


# -- devices: the same results, and no device read for an uploaded index -------------------
@pytest.fixture
def opencl():
    index_ops.raise_deferred()
    yield device_or_fail("opencl")
    index_ops.deferred.clear()


def test_indexing_on_opencl_matches_cpu(opencl):
    data = _values((3, 4, 5)).astype(np.float32)
    for key in [(slice(None), [0, -1], [[1], [2]]), (shrew.tensor([True, False, True]),),
                (Ellipsis, slice(1, None, 2)), ([2, 0], None, 3)]:
        dev_key = tuple(k.to(opencl) if isinstance(k, shrew.Tensor) else k for k in key)
        np.testing.assert_array_equal(shrew.tensor(data, device=opencl)[dev_key].numpy(),
                                      shrew.tensor(data)[key].numpy())
    cpu_index = shrew.tensor([2, -3])  # a cpu index for a device tensor, as torch allows
    np.testing.assert_array_equal(shrew.tensor(data, device=opencl)[:, cpu_index].numpy(),
                                  data[:, [2, 1]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        index = [[0, 2, 0, 1, 2]]
        got = shrew.tensor(data[0], device=opencl).scatter_reduce(
            0, shrew.tensor(index, device=opencl), shrew.tensor(data[1], device=opencl), reduce)
        want = shrew.tensor(data[0]).scatter_reduce(0, shrew.tensor(index),
                                                     shrew.tensor(data[1]), reduce)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_an_uploaded_index_costs_no_device_read(opencl, monkeypatch):
    x = shrew.tensor(_values((4, 5)).astype(np.float32), device=opencl)
    rows = shrew.tensor([3, -1, 0], device=opencl)
    backend = shrew.backends.registry.get_backend(opencl)

    def refuse(_):
        raise AssertionError("a device read")
    want = x.numpy()
    monkeypatch.setattr(backend, "to_numpy", refuse)
    y = x[rows, 1:]
    x[rows] = 0.0
    x.index_add_(1, shrew.tensor([0, 4], device=opencl), shrew.ones(4, 2, device=opencl))
    monkeypatch.undo()
    assert not index_ops.deferred
    want[[3, 0]] = 0.0
    want[:, [0, 4]] += 1.0
    assert y.shape == (3, 4)
    np.testing.assert_array_equal(x.numpy(), want)
