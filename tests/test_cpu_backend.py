"""The CPU backend's primitives, called directly through the Backend protocol."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shrew.backends.base import PRIMITIVES, UNARY_FNS, Backend
from shrew.backends.cpu import CPUBackend, factory
from support import seeds

F16, F32, F64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")


@pytest.fixture
def be():
    return CPUBackend()


def test_implements_the_protocol(be):
    assert isinstance(be, Backend)
    assert not [p for p in PRIMITIVES if not callable(getattr(be, p, None))]
    assert be.device == "cpu"
    assert {F16, F32, F64, np.dtype("int32"), np.dtype("int64"), np.dtype("bool")} <= be.dtypes
    assert factory.device_count() == 1
    with pytest.raises(RuntimeError):
        factory(1)


def test_host_transfer_copies(be):
    a = np.arange(6.0).reshape(2, 3)
    x = be.from_numpy(a.T)
    a[0, 0] = 100
    back = be.to_numpy(x)
    assert back.flags.c_contiguous and back[0, 0] == 0 and back.shape == (3, 2)
    back[0, 0] = 5
    assert be.to_numpy(x)[0, 0] == 0
    assert be.full((2,), 3, np.dtype("int32")).dtype == np.int32
    np.testing.assert_array_equal(be.arange(4, F32), [0, 1, 2, 3])


def test_layout_primitives(be):
    x = be.from_numpy(np.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_array_equal(be.to_numpy(be.transpose(x, 0, 2)),
                                  np.arange(24.0).reshape(2, 3, 4).swapaxes(0, 2))
    np.testing.assert_array_equal(be.to_numpy(be.narrow(x, 1, 1, 2)), be.to_numpy(x)[:, 1:3])
    c = be.contiguous(be.transpose(x, 1, 2))
    assert c.flags.c_contiguous and c.shape == (2, 4, 3)
    e = be.expand(be.from_numpy(np.arange(3.0).reshape(1, 3)), (4, 3))
    assert e.shape == (4, 3)
    np.testing.assert_array_equal(be.to_numpy(be.cat([x, x], 2)).shape, (2, 3, 8))
    p = be.pad(be.from_numpy(np.ones((1, 2))), [(1, 0), (0, 2)], 7.0)
    np.testing.assert_array_equal(be.to_numpy(p), [[7, 7, 7, 7], [1, 1, 7, 7]])
    cast = be.cast(be.from_numpy(np.array([-1.7, 1.7])), np.dtype("int64"))
    np.testing.assert_array_equal(cast, [-1, 1])


@pytest.mark.parametrize("dtype", [F16, F32, F64])
@pytest.mark.parametrize("fn", [fn for fn in UNARY_FNS if fn != "bitwise_not"])  # float fns
def test_unary_keeps_dtype_and_input(be, fn, dtype):
    a = (np.abs(np.random.default_rng(0).standard_normal(5)) + 0.1).astype(dtype)
    keep = a.copy()
    out = be.unary(fn, a)
    assert out.dtype == dtype and out.shape == a.shape
    np.testing.assert_array_equal(a, keep)


@pytest.mark.parametrize("dtype", [F16, F32])
def test_scalar_arguments_never_upcast(be, dtype):
    x = be.from_numpy(np.array([1.0, 2.0], dtype=dtype))
    assert be.affine(x, 2.5, 0.1).dtype == dtype
    assert be.affine(x, 1, 0.5).dtype == dtype and be.affine(x, 3.0, 0).dtype == dtype
    assert be.powf(x, 1.5).dtype == dtype
    assert be.clamp(x, 0.5, 1.5).dtype == dtype
    np.testing.assert_allclose(be.affine(x, 2.5, 0.1).astype(float), [2.6, 5.1], rtol=1e-3)


def test_reductions(be):
    i = np.array([[1, 2], [3, 4]], dtype=np.int32)
    assert be.reduce("sum", i, (0, 1), False).dtype == np.int64
    assert be.reduce("sum", np.array([True, True]), (0,), False) == 2
    assert be.reduce("max", i, (1,), True).shape == (2, 1)
    assert be.reduce("mean", np.ones((2, 3), dtype=F16), (1,), False).dtype == F16
    np.testing.assert_array_equal(be.arg_reduce("argmax", np.array([[1, 3, 3]]), 1, False), [1])
    assert be.arg_reduce("argmin", np.array([[1.0, 0.0]]), 1, True).dtype == np.int64


@settings(max_examples=60, deadline=None)
@given(lead=st.lists(st.integers(1, 9), min_size=0, max_size=3), line=st.integers(1, 40),
       fn=st.sampled_from(["max", "min"]), keepdim=st.booleans(), seed=seeds,
       dtype=st.sampled_from([F16, F32, F64]))
def test_max_and_min_along_the_last_dim_are_numpys(lead, line, fn, keepdim, seed, dtype):
    """Along a short last dim the extremes are taken over a transposed copy (numpy's
    line-by-line reduction is slow there): numpy's values and NaNs either way."""
    be = CPUBackend()
    x = np.random.default_rng(seed).standard_normal((*lead, line)).astype(dtype)
    if x.size > 3:
        x.flat[3] = np.nan
    want = (np.max if fn == "max" else np.min)(x, axis=-1, keepdims=keepdim)
    got = be.reduce(fn, x, (x.ndim - 1,), keepdim)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(be.reduce(fn, x.T, (x.ndim - 1,), keepdim),
                                  (np.max if fn == "max" else np.min)(x.T, axis=-1,
                                                                      keepdims=keepdim))


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("log", [True, False])
def test_small_softmax_gradients_are_the_core_rules_calls(be, dtype, log):
    """Where oneDNN does not serve, softmax_backward makes the core rule's calls itself:
    the bits of the rule run as Tensor operations (create_graph records it)."""
    import shrew
    x = np.random.default_rng(2).standard_normal((64, 10)).astype(dtype)
    x[3] = np.nan
    g = np.random.default_rng(3).standard_normal(x.shape).astype(dtype)
    got = be.softmax_backward(g, be.softmax(x, 1, log), 1, log)
    sx = shrew.tensor(x, requires_grad=True)
    y = sx.log_softmax(1) if log else sx.softmax(1)
    want = shrew.autograd.grad(y, sx, shrew.tensor(g), create_graph=True)[0].numpy()
    bits = np.dtype(f"i{np.dtype(dtype).itemsize}")
    assert np.array_equal(got.view(bits), want.view(bits))
    half = be.softmax_backward(g.astype(F16), x.astype(F16), 1, log)  # widened (cpu/widened.py):
    assert half.dtype == F16                                           # float32, rounded once
    assert be.softmax_backward(g[0, 0], x[0, 0], 0, log) is NotImplemented   # 0-d


def test_matmul_broadcasts_batch_dims(be):
    a, b = np.ones((2, 1, 3, 4)), np.ones((5, 4, 2))
    assert be.matmul(a, b).shape == (2, 5, 3, 2)
    assert be.matmul(np.ones((3, 4)), np.ones((6, 4, 2))).shape == (6, 3, 2)


@st.composite
def geometry(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    h = draw(st.integers(max(1, kernel[0] - 2 * padding[0]), 6))
    w = draw(st.integers(max(1, kernel[1] - 2 * padding[1]), 6))
    return (draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w), kernel, stride, padding


@given(geo=geometry(), seed=seeds)
def test_im2col_and_col2im_are_adjoint(geo, seed):
    be = CPUBackend()
    shape, kernel, stride, padding = geo
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    cols = be.im2col(x, kernel, stride, padding)
    ho = (shape[2] + 2 * padding[0] - kernel[0]) // stride[0] + 1
    wo = (shape[3] + 2 * padding[1] - kernel[1]) // stride[1] + 1
    assert cols.shape == (shape[0], shape[1] * kernel[0] * kernel[1], ho * wo)
    # A column is one window, channel-major then kernel row then kernel column.
    padded = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    col = cols[:, :, 0]
    np.testing.assert_array_equal(col.reshape(shape[0], shape[1], *kernel),
                                  padded[:, :, :kernel[0], :kernel[1]])
    c = rng.standard_normal(cols.shape)
    back = be.col2im(c, shape, kernel, stride, padding)
    assert back.shape == shape
    np.testing.assert_allclose((cols * c).sum(), (x * back).sum(), rtol=1e-10, atol=1e-10)


@given(geo=geometry(), seed=seeds)
def test_max_pool_indices_point_at_the_maxima(geo, seed):
    be = CPUBackend()
    shape, kernel, stride, padding = geo
    padding = tuple(min(p, k // 2) for p, k in zip(padding, kernel))
    if any(k > s + 2 * p for k, s, p in zip(kernel, shape[2:], padding)):
        return
    x = np.random.default_rng(seed).standard_normal(shape)
    values, index = be.max_pool2d(x, kernel, stride, padding, (1, 1), False)
    assert index.dtype == np.int64 and values.shape == index.shape
    flat = x.reshape(shape[0], shape[1], -1)
    picked = np.take_along_axis(flat, index.reshape(shape[0], shape[1], -1), -1)
    np.testing.assert_array_equal(picked.reshape(values.shape), values)
    assert index.min() >= 0 and index.max() < shape[2] * shape[3]


def test_avg_pool_counts_padding(be):
    out = be.avg_pool2d(np.ones((1, 1, 1, 1)), (3, 3), (1, 1), (1, 1), False, True, None)
    np.testing.assert_allclose(out, [[[[1 / 9]]]])
    assert be.avg_pool2d(np.ones((1, 1, 4, 4), dtype=F32), (2, 2), (2, 2), (0, 0), False, True,
                          None).dtype == F32


def test_gather_and_scatter_add(be):
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([[3, 0], [1, 1]])
    np.testing.assert_array_equal(be.gather(x, 1, idx), [[3, 0], [5, 5]])
    out = be.scatter_add((2, 4), 1, idx, np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(out, [[2, 0, 0, 1], [0, 7, 0, 0]])
    ints = be.scatter_add((3,), 0, np.array([0, 0, 2]), np.array([1, 2, 3], dtype=np.int32))
    assert ints.dtype == np.int32 and ints.tolist() == [3, 0, 3]


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), seed=seeds,
       dtype=st.sampled_from([F16, F32, F64]))
def test_scatter_add_of_one_index_per_line_stores_each_term(shape, seed, dtype):
    """An index of size 1 along dim (a cross-entropy's targets) hits each target at most
    once: stored, not summed, with -0.0 made +0.0 as a sum from zero would."""
    be = CPUBackend()
    rng = np.random.default_rng(seed)
    dim = int(rng.integers(0, len(shape)))
    index_shape = list(shape)
    index_shape[dim] = 1
    index = rng.integers(0, shape[dim], index_shape)
    src = rng.standard_normal(index_shape).astype(dtype)
    src.flat[0] = -0.0
    want = np.zeros(shape, np.float64)
    np.put_along_axis(want, index, src.astype(np.float64), dim)
    got = be.scatter_add(tuple(shape), dim, index, src)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want.astype(dtype))
    assert not np.signbit(got[got == 0]).any()


def test_scatter_add_is_deterministic_and_accurate(be):
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 3, 20000)
    src = rng.standard_normal(20000).astype(F32)
    a = be.scatter_add((3,), 0, idx, src)
    b = be.scatter_add((3,), 0, idx, src)
    assert a.dtype == F32
    np.testing.assert_array_equal(a, b)
    exact = np.zeros(3)
    np.add.at(exact, idx, src.astype(np.float64))
    np.testing.assert_allclose(a, exact, rtol=1e-6)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_embedding_gradients_scatter_whole_rows(be, dtype):
    """An index along dim 0 that is the same across the row (an embedding's gradient) takes
    the rows path: PyTorch's embedding backward to a float sum's rounding, the same bits
    run to run, +0.0 for a word whose only token brings -0.0, untouched words zero."""
    import torch
    rng = np.random.default_rng(3)
    tokens = rng.integers(0, 50, 700)
    tokens[tokens == 7] = 8   # word 7 never appears
    tokens[0], tokens[1:][tokens[1:] == 9] = 9, 10   # word 9 once, at token 0
    g = rng.standard_normal((700, 16)).astype(dtype)
    g[0] = -0.0
    index = np.broadcast_to(tokens[:, None], (700, 16))
    got = be.scatter_add((50, 16), 0, index, g)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, be.scatter_add((50, 16), 0, index, g))
    weight = torch.zeros(50, 16, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.embedding(torch.from_numpy(tokens), weight).backward(
        torch.from_numpy(g.astype(np.float64)))
    np.testing.assert_allclose(got, weight.grad.numpy(), rtol=1e-5 if dtype == F32 else 1e-12,
                               atol=1e-5 if dtype == F32 else 1e-12)
    same = torch.zeros(50, 16, dtype=weight.dtype if dtype == F64 else torch.float32,
                       requires_grad=True)   # in g's own dtype: the same bits
    torch.nn.functional.embedding(torch.from_numpy(tokens), same).backward(torch.from_numpy(g))
    np.testing.assert_array_equal(got.view(f"i{dtype.itemsize}"),
                                  same.grad.numpy().view(f"i{dtype.itemsize}"))
    assert not np.signbit(got[9]).any() and not got[7].any()
    wider = np.concatenate([g, np.full((700, 3), np.nan, dtype)], axis=1)   # src may be larger
    np.testing.assert_array_equal(be.scatter_add((50, 16), 0, index, wider), got)


@given(rows=st.integers(0, 60), targets=st.integers(1, 6),
       width=st.lists(st.integers(0, 20), min_size=1, max_size=2), seed=seeds)
def test_row_scatters_match_a_float64_sum_and_torchs_bits(rows, targets, width, seed):
    """Any shape of whole-row scatter, empty ones included, against np.add.at in float64,
    and bit for bit against PyTorch's index_add_ (which adds each target's rows in index
    order): few targets, so many rows share one (past _ROUNDS), narrow rows and wide."""
    import torch
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, targets, rows)
    shape = (targets, *width)
    index = np.broadcast_to(tokens.reshape((rows,) + (1,) * len(width)), (rows, *width))
    src = rng.standard_normal((rows, *width)).astype(F32)
    want = np.zeros(shape)
    np.add.at(want, tokens, src.astype(np.float64))
    got = CPUBackend().scatter_add(shape, 0, index, src)
    assert got.shape == shape and got.dtype == F32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    torchs = torch.zeros(shape).index_add_(0, torch.from_numpy(tokens), torch.from_numpy(src))
    np.testing.assert_array_equal(got.view(np.int32), torchs.numpy().view(np.int32))


def test_rng(be):
    be.manual_seed(5)
    a = be.rand((100,), F32)
    assert a.dtype == F32 and a.min() >= 0 and a.max() < 1
    state = be.get_rng_state()
    b = be.randn((3,), F64)
    be.set_rng_state(state)
    np.testing.assert_array_equal(be.randn((3,), F64), b)
    be.manual_seed(5)
    np.testing.assert_array_equal(be.rand((100,), F32), a)
    fresh = CPUBackend()
    fresh.manual_seed(5)
    np.testing.assert_array_equal(fresh.rand((100,), F32), a)


def test_copy_in_place(be):
    dst = be.full((2, 2), 0.0, F32)
    be.copy_(dst, np.ones((2, 2), dtype=F32))
    np.testing.assert_array_equal(dst, np.ones((2, 2)))


WHERE_SHAPES = [((256, 1024), (256, 1024), ()), ((256, 1024), (), (256, 1024)),
                ((1, 1024), (256, 1), (256, 1024)), ((256, 1024), (1024,), (256, 1)),
                ((200, 100), (100, 200), (200, 100))]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "bool"])
@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=str)
@settings(max_examples=5)
@given(seed=seeds)
def test_large_where_selects_exactly_what_numpy_does(dtype, shapes, seed):
    # Large operands take the branch-free bit select: the same bits as numpy.where, for
    # nan, infinities and -0.0 too, with broadcasting and transposed operands.
    rng = np.random.default_rng(seed)
    cond = rng.standard_normal(shapes[0]) > 0
    a, b = ((rng.standard_normal(s) * 3).astype(dtype) for s in shapes[1:])
    if a.dtype.kind == "f" and a.size >= 4:
        a.reshape(-1)[:4] = [np.nan, np.inf, -0.0, -np.inf]
    if a.shape == (100, 200):
        a = a.T  # a strided view
    got, want = CPUBackend().where(cond, a, b), np.where(cond, a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("zero", [0.0, -0.0], ids=["+0", "-0"])
@pytest.mark.parametrize("shapes", [((256, 1024), (256, 1024)), ((256, 1), (1, 1024)),
                                    ((1024,), (256, 1024)), ((256, 1024), (1024,))], ids=str)
def test_large_where_against_a_zero_scalar(dtype, zero, shapes):
    # where(cond, a, 0) and where(cond, 0, b) (relu's and dropout's backward) take a
    # one-AND select against +0; -0.0 must keep its sign bit, so it takes the general one.
    rng = np.random.default_rng(0)
    cond = rng.standard_normal(shapes[0]) > 0
    x = (rng.standard_normal(shapes[1]) * 3).astype(dtype)
    if x.dtype.kind == "f":
        x.reshape(-1)[:4] = [np.nan, np.inf, -0.0, -np.inf]
    z = np.array(zero, dtype=dtype)
    for a, b in ((x, z), (z, x)):
        got, want = CPUBackend().where(cond, a, b), np.where(cond, a, b)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("cond", [np.bool_(True), np.bool_(False), np.array(True)],
                         ids=["numpy-true", "numpy-false", "0-d"])
def test_large_where_with_a_scalar_condition(cond):
    # A 0-d comparison's storage can be a numpy scalar (np.bool_): the bit select must
    # still take it (as where(scalar-params test, big, big) in shrew.distributions does).
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(1 << 15), rng.standard_normal(1 << 15)
    np.testing.assert_array_equal(CPUBackend().where(cond, a, b), np.where(cond, a, b))
