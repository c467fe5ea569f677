"""Every Op variant's gradient against float64 finite differences (shrew.testing.gradcheck).

Shapes come from hypothesis: broadcasting, keepdim, negative dims, size-1 dims, and
non-contiguous operands (a Transpose or Narrow view of the leaf).  GRADCHECKED maps each
variant to the tests that check it; test_every_variant_has_a_gradcheck keeps it complete.
"""
from __future__ import annotations

import operator
from operator import methodcaller
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import shrew
from shrew.core import op as O
from shrew.backends.base import SPECIAL_UNARY_FNS, UNARY_FNS
from shrew.backends.cpu import CPUBackend
from shrew.ops.elementwise.recorded import unary
from shrew.ops.index.recorded import scatter_unchecked
from shrew.testing import gradcheck
from support import (Input, broadcast_pairs, check_grad, layouts, numpy_attention,
                     numpy_layer_norm, seeds, shapes)

GRADCHECKED: dict = defaultdict(list)


def covers(*variants):
    """Record that the decorated test gradchecks these Op variants."""
    def deco(fn):
        for v in variants:
            GRADCHECKED[v].append(fn.__name__)
        return fn
    return deco


def test_every_variant_has_a_gradcheck():
    missing = [v.__name__ for v in O.VARIANTS if v not in GRADCHECKED]
    assert not missing, f"Op variants without a gradcheck test: {missing}"
    module = globals()
    for names in GRADCHECKED.values():
        for name in names:
            assert name in module and callable(module[name]), name


def test_every_unary_fn_has_a_gradcheck():
    # the special functions: tests/test_special_torch.py, against torch and finite differences
    assert set(UNARY_CALLS) == set(UNARY_FNS) - INTEGER_ONLY - set(SPECIAL_UNARY_FNS)


# -- elementwise -----------------------------------------------------------------------
BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
          "div": operator.truediv}


@covers(O.Binary)
@pytest.mark.parametrize("fn", sorted(BINARY))
@given(pair=broadcast_pairs(), seed=seeds, la=layouts, lb=layouts)
def test_binary(fn, pair, seed, la, lb):
    a = Input(pair[0], seed, la)
    b = Input(pair[1], seed + 1, lb, away_from_zero=fn == "div")
    op = BINARY[fn]
    out = op(a.view(a.leaf), b.view(b.leaf))
    assert isinstance(out.op, O.Binary) and out.op.fn == fn
    assert out.shape == np.broadcast_shapes(pair[0], pair[1])
    check_grad(op, a, b)


@pytest.mark.parametrize("fn", sorted(BINARY))
def test_binary_with_one_side_constant(fn):
    a = Input((2, 3), 1)
    const = shrew.tensor(np.random.default_rng(2).uniform(1, 2, (3,)))
    check_grad(lambda x: BINARY[fn](x, const), a)
    check_grad(lambda x: BINARY[fn](const, x), Input((2, 3), 3, away_from_zero=True))


@pytest.mark.parametrize("op", [lambda x: x / 2.5, lambda x: 2.5 / x, lambda x: 3.0 - x,
                                lambda x: x * -1.5 + 0.25, lambda x: -x])
def test_scalar_operands(op):
    check_grad(op, Input((2, 3), 4, away_from_zero=True))


UNARY_CALLS = {
    "neg": lambda x: -x, "abs": lambda x: x.abs(), "exp": lambda x: x.exp(),
    "log": lambda x: x.log(), "sqrt": lambda x: x.sqrt(), "square": lambda x: x.square(),
    "relu": lambda x: x.relu(), "sigmoid": lambda x: x.sigmoid(), "tanh": lambda x: x.tanh(),
    "gelu": lambda x: x.gelu(), "gelu_tanh": lambda x: x.gelu(approximate="tanh"),
    "silu": lambda x: x.silu(), "sin": lambda x: x.sin(), "cos": lambda x: x.cos(),
    "floor": lambda x: x.floor(), "ceil": lambda x: x.ceil(), "round": lambda x: x.round(),
    "erf": lambda x: x.erf(), "sign": lambda x: x.sign(),
    "gelu_derivative": lambda x: unary("gelu_derivative", x),
    "gelu_tanh_derivative": lambda x: unary("gelu_tanh_derivative", x),
    **{fn: methodcaller(fn) for fn in (
        "rsqrt", "reciprocal", "log1p", "expm1", "log2", "log10", "exp2", "tan", "atan", "sinh",
        "cosh", "asinh", "erfc", "trunc")},
    # functions with a domain inside (-1, 1) or above 1: the input is mapped there first
    **{fn: lambda x, _fn=fn: getattr((x.tanh() * 0.9), _fn)()
       for fn in ("asin", "acos", "atanh", "erfinv")},
    "acosh": lambda x: (x.square() + 1.5).acosh(),
}
INTEGER_ONLY = {"bitwise_not"}  # no gradient: tests/test_elementwise_torch.py checks it
POSITIVE_DOMAIN = {"log", "sqrt", "rsqrt", "log1p", "log2", "log10"}
KINK_AT_ZERO = {"abs", "relu", "sign", "reciprocal"}


@covers(O.Unary)
@pytest.mark.parametrize("fn", sorted(UNARY_CALLS))
@given(shape=shapes(0, 3), seed=seeds, layout=layouts)
def test_unary(fn, shape, seed, layout):
    x = Input(shape, seed, layout, positive=fn in POSITIVE_DOMAIN,
              away_from_zero=fn in KINK_AT_ZERO)
    call = UNARY_CALLS[fn]
    out = call(x.view(x.leaf))
    assert isinstance(out.op, O.Unary) and out.op.fn == fn
    check_grad(call, x)


# -- reductions ----------------------------------------------------------------------
@st.composite
def reduce_args(draw):
    shape = draw(shapes(1, 3))
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        dim = None
    elif kind == "int":
        dim = draw(st.integers(-len(shape), len(shape) - 1))
    else:
        picked = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True))
        dim = tuple(d - len(shape) if draw(st.booleans()) else d for d in picked)
    return shape, dim, draw(st.booleans())


@covers(O.Reduce)
@pytest.mark.parametrize("fn", ["sum", "mean", "max", "min"])
@given(args=reduce_args(), seed=seeds, layout=layouts)
def test_reduce(fn, args, seed, layout):
    shape, dim, keepdim = args
    x = Input(shape, seed, layout)
    method = {"max": "amax", "min": "amin"}.get(fn, fn)  # max(dim) gives (values, indices)
    call = lambda t: getattr(t, method)(dim, keepdim=keepdim)  # noqa: E731
    expect = getattr(np, {"sum": "sum", "mean": "mean", "max": "amax", "min": "amin"}[fn])(
        x.value, axis=dim, keepdims=keepdim)
    out = call(x.view(x.leaf))
    assert out.shape == np.shape(expect)
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-12, atol=1e-12)
    check_grad(call, x)


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_ties_share_the_gradient(fn):
    data = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    if fn == "min":
        data = -data
    x = shrew.tensor(data, requires_grad=True)
    getattr(x, "a" + fn)(dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5, 0], [0.25] * 4])

    y = shrew.tensor(data, requires_grad=True)
    g = getattr(y, fn)().backward()[y]
    expect = (data == getattr(data, fn)()).astype(float)
    np.testing.assert_allclose(g.numpy(), expect / expect.sum())

    z = shrew.tensor(data, requires_grad=True)
    w = shrew.tensor([[1.0], [10.0]])
    (getattr(z, "a" + fn)(dim=-1, keepdim=True) * w).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [[0, 0.5, 0.5, 0], [2.5] * 4])


def test_max_ties_across_several_dims():
    x = shrew.tensor(np.ones((2, 3, 2)), requires_grad=True)
    x.amax(dim=(0, 2)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3, 2), 0.25))


# -- prod, vector norms, scans (ops/reduce.py, ops/scan.py) ---------------------------------
@st.composite
def line_args(draw):
    """A shape of 1 to 3 dims, a dim of it, and where to put zeros (none, one or two)."""
    shape = draw(shapes(1, 3, 1, 4))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    zeros = draw(st.lists(st.integers(0, 2**31 - 1), max_size=2))
    return shape, dim, zeros


def _with_zeros(x, zeros):
    """x's values with the leaf entries named by `zeros` (mod its size) set to 0."""
    values = x.leaf.numpy().copy()
    for z in zeros:
        values.flat[z % values.size] = 0.0
    x.leaf = shrew.tensor(values, requires_grad=True)
    return x


@covers(O.Prod)
@given(args=line_args(), seed=seeds, layout=layouts, keepdim=st.booleans())
def test_prod_with_zeros(args, seed, layout, keepdim):
    shape, dim, zeros = args
    x = _with_zeros(Input(shape, seed, layout), zeros)
    check_grad(lambda t: t.prod(dim, keepdim=keepdim), x)
    check_grad(lambda t: t.prod(), x)


@covers(O.Scan)
@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
@given(args=line_args(), seed=seeds, layout=layouts)
def test_cumsum_cumprod_with_zeros(fn, args, seed, layout):
    shape, dim, zeros = args
    x = _with_zeros(Input(shape, seed, layout), zeros)
    check_grad(lambda t: getattr(t, fn)(dim), x)


@covers(O.VectorNorm)
@pytest.mark.parametrize("ord", [1, 2, 3, 0.5, -1.5])
@given(args=reduce_args(), seed=seeds, layout=layouts)
def test_vector_norm(ord, args, seed, layout):
    shape, dim, keepdim = args
    x = Input(shape, seed, layout, away_from_zero=ord < 1)
    check_grad(lambda t: shrew.linalg.vector_norm(t, ord, dim, keepdim), x)


def test_vector_norm_of_zero_has_a_zero_gradient():
    x = shrew.zeros(2, 3, dtype=shrew.float64, requires_grad=True)
    for ord in (1, 2, 3):
        assert shrew.linalg.vector_norm(x, ord, dim=1).sum().backward()[x].tolist() == \
            [[0.0] * 3] * 2


# -- matmul -----------------------------------------------------------------------------
@st.composite
def matmul_shapes(draw):
    m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
    ba, bb = draw(broadcast_pairs(0, 2))
    a = (k,) if draw(st.integers(0, 3)) == 0 else ba + (m, k)
    b = (k,) if draw(st.integers(0, 3)) == 0 else bb + (k, n)
    return a, b


def np_matmul_shape(a, b):
    return np.matmul(np.zeros(a), np.zeros(b)).shape


@covers(O.Matmul)
@given(sh=matmul_shapes(), seed=seeds, la=layouts, lb=layouts)
def test_matmul(sh, seed, la, lb):
    a, b = Input(sh[0], seed, la), Input(sh[1], seed + 7, lb)
    out = a.view(a.leaf) @ b.view(b.leaf)
    assert out.shape == np_matmul_shape(*sh)
    np.testing.assert_allclose(out.numpy(), np.matmul(a.value, b.value), rtol=1e-12, atol=1e-12)
    check_grad(operator.matmul, a, b)


@pytest.mark.parametrize("sa, sb", [((3,), (3,)), ((3,), (2, 3, 4)), ((2, 1, 2, 3), (3,)),
                                    ((1, 2, 3), (4, 3, 2)), ((4, 1, 2, 3), (5, 3, 1))])
def test_matmul_fixed_shapes(sa, sb):
    check_grad(operator.matmul, Input(sa, 1), Input(sb, 2))


# -- views and layout ------------------------------------------------------------------
@covers(O.Contiguous)
@given(shape=shapes(1, 3), seed=seeds, layout=layouts)
def test_contiguous(shape, seed, layout):
    x = Input(shape, seed, layout)
    out = x.view(x.leaf).contiguous()
    assert isinstance(out.op, O.Contiguous)
    assert out.numpy().flags.c_contiguous
    check_grad(lambda t: t.contiguous() * 2.0, x)


@st.composite
def reshape_targets(draw):
    shape = draw(shapes(0, 3))
    n = int(np.prod(shape))
    target = draw(st.sampled_from([(-1,), tuple(reversed(shape)), (1,) + shape, (n, 1),
                                   (1, -1), shape + (1,)]))
    return shape, target


@covers(O.Reshape)
@given(args=reshape_targets(), seed=seeds, layout=layouts)
def test_reshape(args, seed, layout):
    shape, target = args
    x = Input(shape, seed, layout)
    out = x.view(x.leaf).reshape(*target)
    np.testing.assert_array_equal(out.numpy(), x.value.reshape(target))
    check_grad(lambda t: t.reshape(*target).square(), x)


@covers(O.Transpose)
@given(shape=shapes(2, 4), seed=seeds, layout=layouts, data=st.data())
def test_transpose(shape, seed, layout, data):
    x = Input(shape, seed, layout)
    nd = len(shape)
    d0 = data.draw(st.integers(-nd, nd - 1))
    d1 = data.draw(st.integers(-nd, nd - 1))
    out = x.view(x.leaf).transpose(d0, d1)
    np.testing.assert_array_equal(out.numpy(), np.swapaxes(x.value, d0, d1))
    check_grad(lambda t: t.transpose(d0, d1).square(), x)


@st.composite
def narrow_args(draw):
    shape = draw(shapes(1, 3, max_side=4))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[dim]
    start = draw(st.integers(-size, size - 1))
    pos = start % size
    length = draw(st.integers(0, size - pos))
    return shape, dim, start, length


@covers(O.Narrow)
@given(args=narrow_args(), seed=seeds, layout=layouts)
def test_narrow(args, seed, layout):
    shape, dim, start, length = args
    x = Input(shape, seed, layout)
    out = x.view(x.leaf).narrow(dim, start, length)
    pos = start % shape[dim]
    np.testing.assert_array_equal(out.numpy(),
                                  np.take(x.value, range(pos, pos + length), axis=dim))
    check_grad(lambda t: t.narrow(dim, start, length).square(), x)


@covers(O.AsStrided)
@given(shape=shapes(2, 3, max_side=4), seed=seeds, layout=layouts, data=st.data())
def test_strided_views(shape, seed, layout, data):
    """Step slices, diagonals, unfold and as_strided (issue 30), of non-contiguous inputs."""
    x = Input(shape, seed, layout)
    step = data.draw(st.integers(1, 3))
    size = data.draw(st.integers(0, shape[-1]))
    offset = data.draw(st.integers(-2, 2))
    for view in (lambda t: t[..., 1::step], lambda t: t.diagonal(offset, 0, -1),
                 lambda t: t.unfold(-1, size, step),
                 lambda t: t.as_strided(t.shape[:-1] + (1,), t.stride(), t.storage_offset()
                                        + t.stride(-1) * (t.shape[-1] - 1))):
        check_grad(lambda t, view=view: view(t).square(), x)


@given(shape=shapes(0, 3), seed=seeds, layout=layouts, data=st.data())
def test_unsqueeze_squeeze_flatten(shape, seed, layout, data):
    x = Input(shape, seed, layout)
    nd = len(shape)
    d = data.draw(st.integers(-nd - 1, nd))
    out = x.view(x.leaf).unsqueeze(d)
    assert out.shape == np.expand_dims(x.value, d).shape
    check_grad(lambda t: t.unsqueeze(d).square(), x)
    check_grad(lambda t: t.unsqueeze(d).squeeze(d).square(), x)
    check_grad(lambda t: t.squeeze().square(), x)
    if nd:
        s = data.draw(st.integers(-nd, nd - 1))
        flat = x.view(x.leaf).flatten(s)
        assert flat.shape == x.value.shape[:s % nd] + (int(np.prod(x.value.shape[s % nd:])),)
        check_grad(lambda t: t.flatten(s).square(), x)


@given(shape=shapes(1, 4), seed=seeds, layout=layouts, data=st.data())
def test_permute(shape, seed, layout, data):
    x = Input(shape, seed, layout)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    np.testing.assert_array_equal(x.view(x.leaf).permute(*perm).numpy(),
                                  np.transpose(x.value, perm))
    np.testing.assert_array_equal(x.view(x.leaf).T.numpy(), x.value.T)
    weights = shrew.tensor(np.random.default_rng(seed).standard_normal(
        np.transpose(x.value, perm).shape))
    check_grad(lambda t: t.permute(*perm) * weights, x)


@given(pair=broadcast_pairs(), seed=seeds)
def test_expand(pair, seed):
    small, big = sorted(pair, key=len)
    target = np.broadcast_shapes(small, big)
    x = Input(small, seed)
    out = x.leaf.expand(*target)
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(x.value, target))
    weights = shrew.tensor(np.random.default_rng(seed).standard_normal(target))
    check_grad(lambda t: t.expand(*target) * weights, x)


@pytest.mark.parametrize("key", [
    0, -1, slice(1, None), (slice(None), 1), (Ellipsis, -2), (None, 1, Ellipsis),
    (1, slice(0, 2), None), (slice(None), slice(1, 3), 0), Ellipsis, (slice(5, 9),),
])
def test_getitem(key):
    x = Input((3, 4, 2), 5, "transpose")
    out = x.view(x.leaf)[key]
    np.testing.assert_array_equal(out.numpy(), x.value[key])
    weights = shrew.tensor(np.random.default_rng(0).standard_normal(out.shape))
    check_grad(lambda t: t[key] * weights, x)


# -- scalar-parameter ops ---------------------------------------------------------------
@covers(O.Affine)
@given(shape=shapes(0, 3), seed=seeds, layout=layouts,
       mul=st.floats(-3, 3), add=st.floats(-3, 3))
def test_affine(shape, seed, layout, mul, add):
    x = Input(shape, seed, layout)
    out = x.view(x.leaf).affine(mul, add)
    assert isinstance(out.op, O.Affine)
    np.testing.assert_allclose(out.numpy(), x.value * mul + add, rtol=1e-12, atol=1e-12)
    check_grad(lambda t: t.affine(mul, add).square(), x)


@covers(O.Powf)
@given(shape=shapes(0, 3), seed=seeds, layout=layouts,
       exponent=st.sampled_from([-2.5, -1.0, 0.5, 1.0, 1.5, 2.0, 3.0]))
def test_powf(shape, seed, layout, exponent):
    x = Input(shape, seed, layout, positive=True)
    out = x.view(x.leaf) ** exponent
    assert isinstance(out.op, O.Powf)
    np.testing.assert_allclose(out.numpy(), x.value ** exponent, rtol=1e-12)
    check_grad(lambda t: t.powf(exponent), x)


@pytest.mark.parametrize("exponent", [2.0, 3.0, -1.0])
def test_powf_integer_exponent_on_negative_base(exponent):
    check_grad(lambda t: t ** exponent, Input((2, 3), 3, away_from_zero=True))


def test_powf_zero_exponent_has_zero_gradient_everywhere():
    # d/dx x**0 is 0, also at x = 0 (PyTorch's convention), not 0 * 0**-1 = nan.
    x = shrew.tensor([0.0, 2.0, -1.0], requires_grad=True)
    (x ** 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])


@covers(O.Clamp)
@pytest.mark.parametrize("lo, hi", [(-0.3, None), (None, 0.4), (-0.5, 0.5)])
@given(shape=shapes(0, 3), seed=seeds, layout=layouts)
def test_clamp(lo, hi, shape, seed, layout):
    x = Input(shape, seed, layout)
    out = x.view(x.leaf).clamp(lo, hi)
    assert isinstance(out.op, O.Clamp)
    np.testing.assert_array_equal(out.numpy(), np.clip(x.value, lo, hi))
    check_grad(lambda t: t.clamp(lo, hi), x)


# -- selection and joining ------------------------------------------------------------
@st.composite
def where_shapes(draw):
    full = draw(shapes(0, 3))

    def partner():
        drop = draw(st.integers(0, len(full)))
        return tuple(1 if draw(st.booleans()) else s for s in full[drop:])

    return partner(), partner(), full


@covers(O.WhereCond)
@given(sh=where_shapes(), seed=seeds, la=layouts, lb=layouts)
def test_where(sh, seed, la, lb):
    cshape, ashape, bshape = sh
    cond_np = np.random.default_rng(seed).random(cshape) > 0.5
    cond = shrew.tensor(cond_np)
    a, b = Input(ashape, seed + 1, la), Input(bshape, seed + 2, lb)
    out = shrew.where(cond, a.view(a.leaf), b.view(b.leaf))
    np.testing.assert_array_equal(out.numpy(), np.where(cond_np, a.value, b.value))
    check_grad(lambda x, y: shrew.where(cond, x, y), a, b)
    check_grad(lambda x: shrew.where(cond, x, 0.5), a)
    check_grad(lambda y: shrew.where(cond, -1.0, y), b)


@covers(O.Cat)
@given(shape=shapes(1, 3), seed=seeds, data=st.data())
def test_cat(shape, seed, data):
    nd = len(shape)
    dim = data.draw(st.integers(-nd, nd - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    assume(sum(sizes) > 0)
    inputs = []
    for i, s in enumerate(sizes):
        piece = list(shape)
        piece[dim] = s
        inputs.append(Input(piece, seed + i, data.draw(layouts) if s else "plain",
                            requires_grad=i != 1))
    out = shrew.cat([i.view(i.leaf) for i in inputs], dim)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([i.value for i in inputs], dim))
    check_grad(lambda *xs: shrew.cat(list(xs), dim), *inputs)


@covers(O.Gather)
@given(shape=shapes(1, 3, max_side=4), seed=seeds, layout=layouts, data=st.data())
def test_gather(shape, seed, layout, data):
    nd = len(shape)
    dim = data.draw(st.integers(-nd, nd - 1))
    ishape = tuple(data.draw(st.integers(1, 4)) if i == dim % nd else
                   data.draw(st.integers(1, s)) for i, s in enumerate(shape))
    index_np = np.random.default_rng(seed).integers(0, shape[dim], ishape)
    index = shrew.tensor(index_np)
    x = Input(shape, seed, layout)
    out = x.view(x.leaf).gather(dim, index)
    sl = tuple(slice(0, s) if i != dim % nd else slice(None) for i, s in enumerate(ishape))
    np.testing.assert_array_equal(out.numpy(),
                                  np.take_along_axis(x.value[sl], index_np, axis=dim))
    check_grad(lambda t: t.gather(dim, index), x)


@covers(O.Scatter)
@pytest.mark.parametrize("reduce", ["none", "sum", "prod", "amax", "amin"])
def test_scatter(reduce):
    rng = np.random.default_rng(3)
    dst = shrew.tensor(rng.uniform(0.5, 2, (3, 4)), requires_grad=True)
    src = shrew.tensor(rng.uniform(0.5, 2, (2, 4)), requires_grad=True)
    index = shrew.tensor([[2, 0, 1, 2], [1, 1, 0, 0]])  # distinct targets in each column
    check_grad(lambda d, s: scatter_unchecked(d, 0, index, s, reduce), dst, src)


@covers(O.ScatterAdd)
@given(shape=shapes(1, 3, max_side=4), seed=seeds, data=st.data())
def test_scatter_add(shape, seed, data):
    nd = len(shape)
    dim = data.draw(st.integers(-nd, nd - 1))
    ishape = tuple(data.draw(st.integers(1, 4)) if i == dim % nd else
                   data.draw(st.integers(1, s)) for i, s in enumerate(shape))
    index_np = np.random.default_rng(seed).integers(0, shape[dim], ishape)
    src = Input(ishape, seed)
    out = shrew.scatter_add(shape, dim, shrew.tensor(index_np), src.leaf)
    expect = np.zeros(shape)
    for pos in np.ndindex(*ishape):
        target = list(pos)
        target[dim % nd] = index_np[pos]
        expect[tuple(target)] += src.value[pos]
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-12, atol=1e-12)
    check_grad(lambda s: shrew.scatter_add(shape, dim, shrew.tensor(index_np), s), src)


@st.composite
def pad_args(draw):
    shape = draw(shapes(1, 3))
    k = draw(st.integers(1, len(shape)))
    pads = []
    for i in range(k):
        size = shape[len(shape) - 1 - i]
        lo = draw(st.integers(-size, 2))
        hi = draw(st.integers(-(size + min(lo, 0)), 2))
        pads += [lo, hi]
    return shape, tuple(pads)


def np_pad(x, pads, value):
    """torch.nn.functional.pad's semantics in numpy: last dim first, negative crops."""
    for i in range(len(pads) // 2):
        axis = x.ndim - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        width = [(0, 0)] * x.ndim
        width[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, width, constant_values=value)
        sl = [slice(None)] * x.ndim
        sl[axis] = slice(-min(lo, 0), x.shape[axis] + min(hi, 0))
        x = x[tuple(sl)]
    return x


@covers(O.Pad)
@given(args=pad_args(), seed=seeds, layout=layouts, value=st.sampled_from([0.0, -1.5]))
def test_pad(args, seed, layout, value):
    shape, pads = args
    x = Input(shape, seed, layout)
    out = x.view(x.leaf).pad(pads, value)
    np.testing.assert_array_equal(out.numpy(), np_pad(x.value, pads, value))
    assume(out.numel() > 0)
    check_grad(lambda t: t.pad(pads, value).square(), x)


# -- dtype and device -----------------------------------------------------------------
@covers(O.ToDtype)
@pytest.mark.parametrize("mid", [shrew.float32, shrew.float16])
@given(shape=shapes(0, 3), seed=seeds, layout=layouts)
def test_to_dtype(mid, shape, seed, layout):
    x = Input(shape, seed, layout)
    out = x.view(x.leaf).to_dtype(mid)
    assert isinstance(out.op, O.ToDtype) and out.dtype is mid
    # A quadratic through the low-precision round trip: central differences are exact up
    # to rounding, so a large eps keeps rounding noise out of the numeric gradient.
    fn = lambda t: (t.to_dtype(mid) * 0.5).to_dtype(shrew.float64).square()  # noqa: E731
    check_grad(fn, x, eps=0.25, atol=1e-2, rtol=1e-2)
    store = fn(x.view(x.leaf)).sum().backward()
    assert store[x.leaf].dtype is shrew.float64


def test_to_dtype_gradient_is_cast_back():
    x = shrew.tensor([1.0, 2.0], dtype=shrew.float32, requires_grad=True)
    y = (x.to_dtype(shrew.float64) * shrew.tensor([3.0, 4.0], dtype=shrew.float64)).sum()
    y.backward()
    assert x.grad.dtype is shrew.float32
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])


@covers(O.ToDevice)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=shapes(0, 3), seed=seeds, layout=layouts)
def test_to_device(other_device, shape, seed, layout):
    x = Input(shape, seed, layout)
    moved = x.view(x.leaf).to(other_device)
    assert moved.device == other_device and isinstance(moved.op, O.ToDevice)
    check_grad(lambda t: t.to(other_device).tanh().to("cpu"), x)
    store = x.leaf.to(other_device).square().sum().backward()
    assert store[x.leaf].device == "cpu"
    np.testing.assert_allclose(store[x.leaf].numpy(), 2 * x.leaf.numpy())


def test_gradient_of_a_leaf_on_another_device(other_device):
    w = shrew.tensor(np.arange(3.0), device=other_device, requires_grad=True)
    loss = (w.to("cpu") * shrew.tensor([1.0, 2.0, 3.0], dtype=shrew.float64)).sum()
    loss.backward()
    assert w.grad.device == other_device
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0, 3.0])


# -- convolution and pooling ---------------------------------------------------------
@st.composite
def conv2d_args(draw):
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 1)), draw(st.integers(0, 1)))
    size = tuple(draw(st.integers(max(1, k - 2 * p), 5)) for k, p in zip(kernel, padding))
    return (n, c) + size, (o, c) + kernel, stride, padding


def np_conv2d(x, w, stride, padding):
    """Direct cross-correlation by explicit window sums."""
    (sh, sw), (ph, pw) = stride, padding
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    ho, wo = (h - kh) // sh + 1, (wd - kw) // sw + 1
    out = np.zeros((n, o, ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = x[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


@covers(O.Conv2d)
@given(args=conv2d_args(), seed=seeds, layout=layouts)
def test_conv2d(args, seed, layout):
    xs, ws, stride, padding = args
    x, w = Input(xs, seed, layout), Input(ws, seed + 1)
    out = shrew.conv2d(x.view(x.leaf), w.leaf, stride, padding)
    assert isinstance(out.op, O.Conv2d)
    np.testing.assert_allclose(out.numpy(), np_conv2d(x.value, w.value, stride, padding),
                               rtol=1e-10, atol=1e-12)
    check_grad(lambda a, b: shrew.conv2d(a, b, stride, padding), x, w)


@covers(O.Conv1d)
@given(seed=seeds, layout=layouts, n=st.integers(1, 2), c=st.integers(1, 3),
       o=st.integers(1, 2), k=st.integers(1, 3), stride=st.integers(1, 3),
       padding=st.integers(0, 2), extra=st.integers(0, 4))
def test_conv1d(seed, layout, n, c, o, k, stride, padding, extra):
    length = max(1, k - 2 * padding) + extra
    x, w = Input((n, c, length), seed, layout), Input((o, c, k), seed + 1)
    out = shrew.conv1d(x.view(x.leaf), w.leaf, stride, padding)
    assert isinstance(out.op, O.Conv1d)
    expect = np_conv2d(x.value[:, :, None], w.value[:, :, None], (1, stride), (0, padding))[:, :, 0]
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-10, atol=1e-12)
    check_grad(lambda a, b: shrew.conv1d(a, b, stride, padding), x, w)


def test_conv_gradient_of_one_operand_only():
    x, w = Input((1, 2, 4, 4), 1), Input((3, 2, 2, 2), 2, requires_grad=False)
    check_grad(lambda a: shrew.conv2d(a, w.leaf, 1, 1), x)
    x2 = Input((1, 2, 4, 4), 3, requires_grad=False)
    check_grad(lambda b: shrew.conv2d(x2.leaf, b, 2, 0), Input((3, 2, 2, 2), 4))
    check_grad(lambda b: shrew.conv1d(x2.leaf[:, :, 0], b, 1, 1), Input((3, 2, 3), 5))


@st.composite
def pool_args(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = draw(st.sampled_from([None, (1, 1), (2, 1), (1, 2), (2, 2)]))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    size = tuple(draw(st.integers(max(1, k - 2 * p), 5)) for k, p in zip(kernel, padding))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) + size
    return shape, kernel, stride, padding


def np_pool(x, kernel, stride, padding, kind):
    stride = kernel if stride is None else stride
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    fill = -np.inf if kind == "max" else 0.0
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=fill)
    ho, wo = (x.shape[2] - kh) // sh + 1, (x.shape[3] - kw) // sw + 1
    out = np.zeros(x.shape[:2] + (ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = x[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
            out[:, :, i, j] = patch.max((2, 3)) if kind == "max" else patch.sum((2, 3)) / (kh * kw)
    return out


@covers(O.MaxPool2d)
@given(args=pool_args(), seed=seeds, layout=layouts)
def test_max_pool2d(args, seed, layout):
    shape, kernel, stride, padding = args
    x = Input(shape, seed, layout)
    out = shrew.max_pool2d(x.view(x.leaf), kernel, stride, padding)
    assert isinstance(out.op, O.MaxPool2d)
    np.testing.assert_array_equal(out.numpy(), np_pool(x.value, kernel, stride, padding, "max"))
    check_grad(lambda t: shrew.max_pool2d(t, kernel, stride, padding), x)


@covers(O.AvgPool2d)
@given(args=pool_args(), seed=seeds, layout=layouts)
def test_avg_pool2d(args, seed, layout):
    shape, kernel, stride, padding = args
    x = Input(shape, seed, layout)
    out = shrew.avg_pool2d(x.view(x.leaf), kernel, stride, padding)
    assert isinstance(out.op, O.AvgPool2d)
    np.testing.assert_allclose(out.numpy(), np_pool(x.value, kernel, stride, padding, "avg"),
                               rtol=1e-12, atol=1e-12)
    check_grad(lambda t: shrew.avg_pool2d(t, kernel, stride, padding), x)


@covers(O.Im2Col)
@given(args=conv2d_args(), seed=seeds, layout=layouts)
def test_im2col(args, seed, layout):
    xs, ws, stride, padding = args
    x = Input(xs, seed, layout)
    kernel = ws[2:]
    out = shrew.im2col(x.view(x.leaf), kernel, stride, padding)
    assert isinstance(out.op, O.Im2Col)
    # im2col followed by a GEMM with the flattened weight is the convolution.
    w = np.random.default_rng(seed).standard_normal(ws)
    via_cols = np.einsum("ok,nkl->nol", w.reshape(ws[0], -1), out.numpy())
    np.testing.assert_allclose(via_cols.reshape(np_conv2d(x.value, w, stride, padding).shape),
                               np_conv2d(x.value, w, stride, padding), rtol=1e-10, atol=1e-12)
    check_grad(lambda t: shrew.im2col(t, kernel, stride, padding), x)


@covers(O.Col2Im)
@given(args=conv2d_args(), seed=seeds)
def test_col2im(args, seed):
    xs, ws, stride, padding = args
    kernel = ws[2:]
    cols_shape = shrew.im2col(shrew.zeros(*xs), kernel, stride, padding).shape
    cols = Input(cols_shape, seed)
    out = shrew.col2im(cols.leaf, xs, kernel, stride, padding)
    assert isinstance(out.op, O.Col2Im) and out.shape == xs
    # The adjoint identity <im2col(x), c> == <x, col2im(c)> with an independent x.
    x = np.random.default_rng(seed + 1).standard_normal(xs)
    lhs = (shrew.im2col(shrew.tensor(x), kernel, stride, padding).numpy() * cols.value).sum()
    np.testing.assert_allclose(lhs, (x * out.numpy()).sum(), rtol=1e-10, atol=1e-10)
    check_grad(lambda c: shrew.col2im(c, xs, kernel, stride, padding), cols)


# -- decompositions and solvers (ops/linalg/decompositions.py) ------------------------------------
ROUTINES = {
    "solve": lambda m, t: shrew.linalg.solve(m, t),
    "det": lambda m, t: shrew.linalg.det(m),
    "slogdet": lambda m, t: shrew.linalg.slogdet(m).logabsdet,
    "cholesky": lambda m, t: shrew.linalg.cholesky(m),
    "qr": lambda m, t: shrew.linalg.qr(t).R.square(),
    "svd": lambda m, t: shrew.linalg.svd(m).U.square(),
    "eigh": lambda m, t: shrew.linalg.eigh(m).eigenvectors.square(),
    "pinv": lambda m, t: shrew.linalg.pinv(m),
}


@covers(O.Solve, O.Decomposition)
@pytest.mark.parametrize("routine", ROUTINES)
@given(n=st.integers(1, 4), seed=seeds, layout=layouts)
def test_decompositions(routine, n, seed, layout):
    """On symmetric positive-definite matrices whose eigenvalues lie well apart (diag(1..n)
    plus a bounded rank-one term), where every routine's gradient is defined."""
    x = Input((2, n, n), seed, layout)

    def call(t):
        v = t[..., 0].tanh()
        steps = shrew.arange(1, n + 1, dtype=t.dtype)
        m = shrew.diag(steps) + 0.3 * v.unsqueeze(-1) * v.unsqueeze(-2)
        return ROUTINES[routine](m, t)
    check_grad(call, x)


# -- fused normalisations ----------------------------------------------------------------
@covers(O.Softmax)
@pytest.mark.parametrize("log", [False, True])
@given(shape=shapes(0, 3), seed=seeds, layout=layouts, data=st.data())
def test_softmax(log, shape, seed, layout, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1) if shape else st.just(0))
    x = Input(shape, seed, layout)
    call = (lambda t: t.log_softmax(dim)) if log else (lambda t: t.softmax(dim))
    out = call(x.view(x.leaf))
    assert not shape or isinstance(out.op, O.Softmax) and out.op.log == log  # 0-d: a Reshape
    v = x.value - x.value.max(axis=dim, keepdims=True) if shape else x.value - x.value
    expect = v - np.log(np.exp(v).sum(axis=dim, keepdims=True)) if shape else v
    np.testing.assert_allclose(out.numpy(), expect if log else np.exp(expect), rtol=1e-12,
                               atol=1e-12)
    check_grad(call, x)


@covers(O.Standardize)
@given(shape=shapes(1, 3, min_side=2), seed=seeds, layout=layouts, data=st.data())
def test_standardize(shape, seed, layout, data):
    ndims = data.draw(st.integers(1, len(shape)))
    x = Input(shape, seed, layout)
    call = lambda t: shrew.standardize(t, ndims, eps=1e-3)  # noqa: E731
    out = call(x.view(x.leaf))
    assert isinstance(out.op, O.Standardize)
    axes = tuple(range(len(shape) - ndims, len(shape)))
    centred = x.value - x.value.mean(axis=axes, keepdims=True)
    expect = centred / np.sqrt((centred ** 2).mean(axis=axes, keepdims=True) + 1e-3)
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-12, atol=1e-12)
    check_grad(call, x)


@covers(O.LayerNorm)
@given(shape=shapes(1, 3, min_side=2), seed=seeds, layout=layouts, data=st.data())
def test_layer_norm(shape, seed, layout, data):
    """The cpu backend's base.FastNorm runs on oneDNN (float32) only: a numpy one makes
    the LayerNorm node on float64 here, and its rule (the core's composition) is checked."""
    ndims = data.draw(st.integers(1, len(shape)))
    x = Input(shape, seed, layout)
    w, b = Input(shape[-ndims:], seed + 1, layout), Input(shape[-ndims:], seed + 2)
    call = lambda t, u, v: shrew.nn.functional.layer_norm(  # noqa: E731
        t, shape[-ndims:], u, v, eps=1e-3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CPUBackend, "layer_norm", numpy_layer_norm)
        out = call(x.view(x.leaf), w.view(w.leaf), b.leaf)
        assert isinstance(out.op, O.LayerNorm)
        axes = tuple(range(len(shape) - ndims, len(shape)))
        centred = x.value - x.value.mean(axis=axes, keepdims=True)
        expect = centred / np.sqrt((centred ** 2).mean(axis=axes, keepdims=True) + 1e-3)
        np.testing.assert_allclose(out.numpy(), expect * w.value + b.value, rtol=1e-12,
                                   atol=1e-12)
        check_grad(call, x, w, b)


@covers(O.Attention)
@given(batch=shapes(0, 2, min_side=1), length=st.integers(1, 4), keys=st.integers(1, 4),
       width=st.integers(1, 3), seed=seeds, layout=layouts, data=st.data())
def test_attention(batch, length, keys, width, seed, layout, data):
    """The cpu backend's base.FastAttention runs on MKL and oneDNN (float32) only: a numpy
    one makes the Attention node on float64 here, and its rule (the core's composition,
    with a float mask, causal or not) is checked."""
    causal = data.draw(st.booleans())
    q = Input(batch + (length, width), seed, layout)
    k = Input(batch + (keys, width), seed + 1, layout)
    v = Input(batch + (keys, data.draw(st.integers(1, 3))), seed + 2)
    mask = None if causal else shrew.tensor(
        np.random.default_rng(seed).standard_normal((length, keys)))
    call = lambda a, b, c: shrew.nn.functional.scaled_dot_product_attention(  # noqa: E731
        a, b, c, attn_mask=mask, is_causal=causal and length <= keys, scale=0.7)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CPUBackend, "attention", numpy_attention)
        out = call(q.view(q.leaf), k.view(k.leaf), v.leaf)
        assert isinstance(out.op, O.Attention)
        check_grad(call, q, k, v)


@covers(O.Attention)
@given(n=st.integers(1, 2), length=st.integers(1, 4), heads=st.integers(1, 2),
       width=st.integers(1, 2), seed=seeds, causal=st.booleans())
def test_packed_self_attention(n, length, heads, width, seed, causal):
    """The packed form (MultiheadAttention's q/k/v in one [N, T, 3E] projection): one node
    whose rule gives the projection's whole gradient."""
    from shrew.ops.attention import fused_self_attention
    qkv = Input((n, length, 3 * heads * width), seed)
    mask = shrew.nn.functional.attention.attention_bias(
        shrew.nn.functional.attention.causal_mask(length, length, "cpu"),
        shrew.float64, "test") if causal else None
    call = lambda t: fused_self_attention(t, heads, mask, 0.6)  # noqa: E731
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CPUBackend, "attention", numpy_attention)
        out = call(qkv.leaf)
        assert isinstance(out.op, O.Attention) and out.op.heads == heads
        check_grad(call, qkv)


@covers(O.Linear)
@given(lead=shapes(0, 2, min_side=1), k=st.integers(1, 4), n=st.integers(1, 4), seed=seeds,
       layout=layouts)
def test_linear(lead, k, n, seed, layout):
    """F.linear with a bias: one Linear node (base.FastLinear, which the cpu backend has),
    its rule checked against finite differences, and its recorded form (create_graph)
    by gradgradcheck."""
    x = Input(lead + (k,), seed, layout)
    w, b = Input((n, k), seed + 1, layout), Input((n,), seed + 2)
    call = lambda t, u, v: shrew.nn.functional.linear(t, u, v)  # noqa: E731
    out = call(x.view(x.leaf), w.view(w.leaf), b.leaf)
    node = out.op.x.op if len(lead) > 1 else out.op   # 3-d x: folded, then unfolded
    assert isinstance(node, O.Linear) == (len(lead) > 0)
    np.testing.assert_allclose(out.numpy(), x.value @ w.value.T + b.value, rtol=1e-12,
                               atol=1e-12)
    check_grad(call, x, w, b)
    assert shrew.autograd.gradgradcheck(
        lambda t, u, v: call(x.view(t), w.view(u), v).tanh(), (x.leaf, w.leaf, b.leaf))


def test_fused_normalisations_on_empty_and_0d_tensors():
    assert shrew.tensor(3.0).softmax(0).item() == 1.0
    assert shrew.tensor(3.0).log_softmax(-1).item() == 0.0
    for t in (shrew.zeros(0, 3, requires_grad=True), shrew.zeros(3, 0, requires_grad=True)):
        assert t.softmax(1).shape == t.shape and t.log_softmax(0).shape == t.shape
        assert shrew.standardize(t, 1).shape == t.shape
        (t.softmax(1).sum() + shrew.standardize(t, 1).sum()).backward()
        assert t.grad.shape == t.shape
    ints = shrew.tensor([1, 2, 3]).softmax(0)  # integers are promoted, as by exp
    assert ints.dtype is shrew.float32


# -- checkpoint ------------------------------------------------------------------------
@covers(O.Checkpoint)
@given(seed=seeds, layout=layouts, n=st.integers(1, 3))
def test_checkpoint(seed, layout, n):
    x, w = Input((n, 3), seed, layout), Input((3, 2), seed + 1)
    bias = shrew.tensor(np.random.default_rng(seed).standard_normal(2), requires_grad=True)

    def block(a, b):
        return ((a @ b) + bias).tanh() * 2.0

    out = shrew.checkpoint(block, x.view(x.leaf), w.leaf)
    assert isinstance(out.op, O.Checkpoint)
    check_grad(lambda a, b: shrew.checkpoint(block, a, b), x, w)
    # The captured parameter's gradient matches the plain run's.
    plain = block(x.view(x.leaf), w.leaf).sum().backward()[bias]
    ckpt = shrew.checkpoint(block, x.view(x.leaf), w.leaf).sum().backward()[bias]
    np.testing.assert_array_equal(ckpt.numpy(), plain.numpy())


# -- custom functions (autograd/function.py) ------------------------------------------------
class _ScaledSinCos(shrew.autograd.Function):
    """Two outputs, a non-tensor argument, a saved input: sin(a) * k and cos(a) * b."""

    @staticmethod
    def forward(ctx, a, k, b):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a.sin() * k, a.cos() * b

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        a, b = ctx.saved_tensors
        ga = g_sin * a.cos() * ctx.k - g_cos * a.sin() * b
        return ga, None, (g_cos * a.cos()).sum(0) if ctx.needs_input_grad[2] else None


@covers(O.CustomFunction)
@given(seed=seeds, layout=layouts, n=st.integers(1, 3))
def test_custom_function(seed, layout, n):
    x, b = Input((n, 3), seed, layout), Input((3,), seed + 1)
    out = _ScaledSinCos.apply(x.view(x.leaf), 1.5, b.leaf)
    assert isinstance(out[0].op, O.CustomFunction) and out[1].op.output_index == 1
    check_grad(lambda a, c: _ScaledSinCos.apply(a, 1.5, c), x, b)
    # Inside a checkpoint: recomputed in backward, same gradients.
    check_grad(lambda a, c: shrew.checkpoint(lambda p, q: _ScaledSinCos.apply(p, 1.5, q)[0]
                                             * _ScaledSinCos.apply(p, 1.5, q)[1], a, c),
               x, b)


def test_checkpoint_with_several_outputs():
    x = Input((2, 3), 1)

    def fn(t):
        return t.exp(), (t * 3.0).sin()

    check_grad(lambda t: shrew.checkpoint(fn, t), x)


# -- second order ----------------------------------------------------------------------
def gradient_fn(op, cotangent_seed=0):
    """x -> d/dx sum(op(x) * c), built with create_graph so it can be gradchecked."""
    def fn(*xs):
        with shrew.enable_grad():
            ins = [x if x.requires_grad else x.detach().requires_grad_() for x in xs]
            for x in ins:
                x.retain_grad()  # a view of the checked leaf is not a leaf itself
            y = op(*ins)
            c = shrew.tensor(np.random.default_rng(cotangent_seed).standard_normal(y.shape))
            store = (y * c).sum().backward(create_graph=True)
            return tuple(store[x] for x in ins)
    return fn


SECOND_ORDER = {
    **{fn: UNARY_CALLS[fn] for fn in ("exp", "log", "sqrt", "square", "sigmoid", "tanh",
                                      "gelu", "gelu_tanh", "silu", "sin", "cos", "erf",
                                      "gelu_derivative", "gelu_tanh_derivative")},
    "mul": lambda a: a * a.exp(),
    "div": lambda a: a.exp() / (a.square() + 1.0),
    "powf": lambda a: a.abs() ** 2.5,
    "mean_sq": lambda a: a.square().mean(dim=0) * a.sum(),
    "max": lambda a: a.amax(dim=-1).square(),
    "prod": lambda a: a.prod(1) * a.sum(),
    "prod_with_a_zero": lambda a: shrew.cat([a, a[:, :1] * 0.0], 1).prod(1).square(),
    "cumprod": lambda a: a.cumprod(1) * a.sin(),
    "cumprod_with_a_zero": lambda a: shrew.cat([a[:, :1] * 0.0, a], 1).cumprod(1).square(),
    "cumsum": lambda a: a.cumsum(0).square(),
    "vector_norm": lambda a: shrew.linalg.vector_norm(a, 2, 1) * a.sum(),
    "vector_norm_3": lambda a: shrew.linalg.vector_norm(a, 3, 0).square(),
    "logsumexp_var_std": lambda a: a.logsumexp(1) * a.var(0).sum() + a.std(1),
    "sort_topk": lambda a: a.sort(1).values.square() + a.topk(2, 1).values.sum(),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_elementwise(name):
    x = Input((2, 3), 21, "transpose", positive=name in POSITIVE_DOMAIN,
              away_from_zero=name == "powf")
    check_grad(gradient_fn(SECOND_ORDER[name]), x)


def test_second_order_matmul_and_conv():
    check_grad(gradient_fn(lambda a, b: (a @ b).tanh()), Input((2, 3), 1), Input((3, 2), 2))
    check_grad(gradient_fn(lambda a, b: shrew.conv2d(a, b, 1, 1).square()),
               Input((1, 2, 3, 3), 3), Input((2, 2, 2, 2), 4))
    check_grad(gradient_fn(lambda a, b: shrew.conv1d(a, b, 2, 1).square()),
               Input((1, 2, 5), 5), Input((2, 2, 3), 6))


SECOND_ORDER_STRUCTURAL = {
    "max_pool2d": lambda a: shrew.max_pool2d(a.square(), 2, 1, 1),
    "avg_pool2d": lambda a: shrew.avg_pool2d(a.square(), (2, 3), 1, (1, 0)),
    "gather": lambda a: a.square().gather(
        3, shrew.tensor(np.array([[[[2, 0], [1, 1], [0, 2]]] * 2]))),
    "views": lambda a: (a.transpose(2, 3).narrow(2, 1, 2).pad((1, 0, 0, 1)) * a.sum()),
    "cat_where_clamp": lambda a: shrew.cat([shrew.where(a > 0, a.exp(), a.square()), a], 1)
    .clamp(-0.5, 2.0) * a.mean(),
    "reduce_max": lambda a: a.amax(dim=(1, 3), keepdim=True) * a.sin(),
    "softmax": lambda a: a.softmax(2) * a.log_softmax(3),
    "standardize": lambda a: shrew.standardize(a.square(), 2, eps=1e-2) * a,
    "layer_norm": lambda a: shrew.nn.functional.layer_norm(a, 3, a[0, 0, 0], a[0, 1, 1]),
    "im2col": lambda a: shrew.col2im(shrew.im2col(a, 2, 1, 1).tanh(), a.shape, 2, 1, 1),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER_STRUCTURAL))
def test_second_order_structural(name):
    check_grad(gradient_fn(SECOND_ORDER_STRUCTURAL[name]), Input((1, 2, 3, 3), 31, "narrow"))


def test_gradcheck_catches_a_wrong_gradient(monkeypatch):
    # The harness itself must be able to fail: break the sin rule and watch it.
    from shrew.autograd import engine as backprop
    original = backprop.unary_grad

    def wrong(fn, x, y, g):
        return original("cos" if fn == "sin" else fn, x, y, g)

    monkeypatch.setattr(backprop, "unary_grad", wrong)
    x = Input((3,), 1)
    assert not gradcheck(lambda t: t.sin(), [x.leaf], raise_exception=False)
    with pytest.raises(shrew.ShrewError, match="gradcheck"):
        gradcheck(lambda t: t.sin(), [x.leaf], directions=3)


# -- the harness itself -------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["transpose", "narrow"])
def test_layouts_hand_ops_non_contiguous_operands(layout):
    x = Input((3, 4), 0, layout)
    assert not np.asarray(x.view(x.leaf)).flags.c_contiguous
    np.testing.assert_array_equal(x.view(x.leaf).numpy(), x.value)


def test_larger_shapes_in_random_direction_mode():
    """Shapes too big for a full Jacobian: random directional derivatives instead."""
    a, b = Input((4, 16, 24), 1, "transpose"), Input((24, 8), 2)
    check_grad(lambda x, y: (x @ y).tanh().sum(1), a, b, directions=8)
    x, w = Input((2, 3, 12, 10), 3, "narrow"), Input((4, 3, 3, 3), 4)
    check_grad(lambda p, q: shrew.max_pool2d(shrew.conv2d(p, q, (2, 1), 1).gelu(), 2), x, w,
               directions=8)
    check_grad(lambda p: shrew.avg_pool2d(p, 3, 2, 1).sum((2, 3)), x, directions=8)


@covers(O.Recurrent)
@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_recurrent(mode):
    """One layer's fused time loop (float64: never oneDNN's RecurrentLayer), its input and
    initial state against finite differences; the weights are fixed."""
    shrew.manual_seed(0)
    layer = getattr(shrew.nn, mode)(3, 2, dtype=shrew.float64)
    x = shrew.tensor(np.random.default_rng(1).standard_normal((4, 2, 3)), requires_grad=True)
    h0 = shrew.tensor(np.random.default_rng(2).standard_normal((1, 2, 2)), requires_grad=True)
    state = (h0, h0 * 0.5) if mode == "LSTM" else h0
    assert "Recurrent" in _kinds(layer(x, state)[0])
    gradcheck(lambda a, h: layer(a, (h, h * 0.5) if mode == "LSTM" else h)[0], (x, h0))


@covers(O.RecurrentLayer)
@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_recurrent_layer_matches_the_fused_loop(mode):
    """oneDNN's whole-layer RNN (float32 only, so no gradcheck of its own) gives the
    gradients of the fused loop that test_recurrent checks, to float32 precision."""
    from shrew.backends.cpu import switches
    results = []
    for onednn in (True, False):
        with switches.use_onednn(onednn):
            shrew.manual_seed(0)
            layer = getattr(shrew.nn, mode)(3, 4)
            x = shrew.tensor(np.random.default_rng(1).standard_normal((5, 2, 3)).astype(
                np.float32), requires_grad=True)
            y = layer(x)[0]
            kinds = _kinds(y)
            (y * y).sum().backward()
            results.append((kinds, x.grad.numpy(), [p.grad.numpy() for p in layer.parameters()]))
    (fused_kinds, gx, gp), (loop_kinds, fx, fp) = results
    if switches.onednn_active():
        assert "RecurrentLayer" in fused_kinds and "RecurrentLayer" not in loop_kinds
    np.testing.assert_allclose(gx, fx, rtol=1e-4, atol=1e-5)
    for a, b in zip(gp, fp):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _kinds(y):
    """The Op variants' names in y's graph."""
    from shrew.autograd.diagnostics import _graph
    return {type(t.op).__name__ for t in _graph(y) if t.op is not None}
