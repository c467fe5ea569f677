"""Every OpenCL primitive against the CPU (numpy) backend, on storage directly.

Inputs are drawn by hypothesis: broadcasting shapes, size-1 and zero-size dims, sizes past
a work-group, and views (transposed, narrowed, expanded) read in place by the kernels.
Each failure names the primitive, dtype, shapes and layouts involved.
"""
from __future__ import annotations

import math
import pickle
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import shrew
from shrew.backends import base
from shrew.backends.cpu import CPUBackend
from shrew.backends.opencl import factory

if factory.device_count() == 0:
    pytest.skip("no OpenCL device (pyopencl or a platform is missing)", allow_module_level=True)

CPU = CPUBackend()
pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning",
                                        "ignore:invalid value encountered:RuntimeWarning")


@cache
def ocl():
    return factory(0)


DTYPES = sorted(ocl().dtypes, key=lambda d: d.name)


def _is_float(d):
    return d.kind == "f" or d.name == "bfloat16"  # ml_dtypes' bfloat16 has kind "V"


FLOATS = [d for d in DTYPES if _is_float(d)]
NUMERIC = [d for d in DTYPES if d.kind != "b"]
INT_UNARY = ("neg", "abs", "square", "relu", "sign", "floor", "ceil", "round")


def examples(n):
    return settings(max_examples=n, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def ids(values):
    return [getattr(v, "name", str(v)) for v in values]


# -- comparison --------------------------------------------------------------------------
def tolerance(dtype, loose=False):
    scale = 10 if loose else 1
    return {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2),
            "float32": (1e-5 * scale, 1e-6 * scale),
            "float64": (1e-12 * scale, 1e-12 * scale)}.get(np.dtype(dtype).name, (0, 0))


def check(got, want, what, loose=False, rtol=None, atol=None):
    """Device storage `got` equals numpy `want`; `what` names the primitive and inputs."""
    assert tuple(got.shape) == want.shape and got.dtype == want.dtype, (
        f"{what}: got shape {got.shape} {got.dtype}, want {want.shape} {want.dtype}")
    host = ocl().to_numpy(got)
    assert host.shape == want.shape and host.dtype == want.dtype, f"{what}: to_numpy"
    if want.dtype.kind == "f" or want.dtype.name == "bfloat16":  # (ml_dtypes' kind is "V")
        r, a = tolerance(want.dtype, loose)
        np.testing.assert_allclose(host.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol or r, atol=atol or a, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(host, want, err_msg=what)


# -- inputs ------------------------------------------------------------------------------
def values(rng, shape, dtype, special=False):
    """Random elements: normals, half-integers (ties) or, if `special`, some nan/inf."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(-20, 21, size=shape), dtype)
    x = np.asarray(rng.standard_normal(shape) * 3)
    style = rng.integers(3)
    if style == 1:
        x = np.round(x * 2) / 2
    elif style == 2 and special and x.size:
        x[rng.random(shape) < 0.15] = rng.choice([np.nan, np.inf, -np.inf])
    return np.asarray(x, dtype)


def shapes(min_dims=0, max_dims=4, big=True):
    """Shapes with size-0 and size-1 dims, sometimes one dim longer than a work-group."""
    @st.composite
    def draw_shape(draw):
        shape = draw(st.lists(st.integers(0, 5), min_size=min_dims, max_size=max_dims))
        if big and shape and draw(st.integers(0, 3)) == 0:
            shape[draw(st.integers(0, len(shape) - 1))] = draw(st.integers(257, 700))
        return tuple(shape)
    return draw_shape()


@st.composite
def operand(draw, shape, dtype, special=False):
    """(device storage, numpy reference, label) of `shape`: a fresh array, or a view
    (transposed, narrowed, expanded, or several) of a larger or smaller one."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ndim, base_shape, ops = len(shape), list(shape), []
    if ndim and draw(st.booleans()):
        for d in draw(st.sets(st.integers(0, ndim - 1), min_size=1)):
            base_shape[d] = 1
        ops.append(("expand", tuple(shape)))
    if ndim and draw(st.booleans()):
        d, extra = draw(st.integers(0, ndim - 1)), draw(st.integers(1, 3))
        ops.append(("narrow", d, draw(st.integers(0, extra)), base_shape[d]))
        base_shape[d] += extra
    if ndim >= 2 and draw(st.booleans()):
        d0, d1 = draw(st.sampled_from([(i, j) for i in range(ndim) for j in range(i + 1, ndim)]))
        base_shape[d0], base_shape[d1] = base_shape[d1], base_shape[d0]
        ops.append(("transpose", d0, d1))
    host = values(rng, tuple(base_shape), dtype, special)
    dev, ref = ocl().from_numpy(host), host
    for name, *args in reversed(ops):
        dev, ref = getattr(ocl(), name)(dev, *args), getattr(CPU, name)(ref, *args)
    label = " . ".join(f"{name}{tuple(args)}" for name, *args in reversed(ops)) or "contiguous"
    return dev, ref, f"{shape} [{label}]"


two_shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                               min_side=0, max_side=5)


# -- the protocol ---------------------------------------------------------------------------
def test_implements_every_primitive():
    backend = ocl()
    missing = [name for name in base.PRIMITIVES if not callable(getattr(backend, name, None))]
    assert not missing, f"OpenCLBackend lacks {missing}"
    assert isinstance(backend, base.Backend)
    assert backend.device == "opencl:0"
    assert {np.dtype(t) for t in ("float32", "int32", "int64", "bool")} <= backend.dtypes


def test_factory_errors_name_the_device():
    with pytest.raises(shrew.DeviceError, match="opencl:99: .* working OpenCL device"):
        factory(99)
    assert factory.device_count() >= 1


# -- host transfer, creation, layout -------------------------------------------------------
@examples(30)
@given(shape=shapes(), dtype=st.sampled_from(DTYPES), data=st.data())
def test_round_trip_views_and_contiguous(shape, dtype, data):
    dev, ref, what = data.draw(operand(shape, dtype))
    check(dev, np.array(ref, order="C"), f"from_numpy/view {dtype} {what}")
    copy = ocl().contiguous(dev)
    assert copy.is_contiguous and copy.buffer is not dev.buffer
    check(copy, CPU.contiguous(ref), f"contiguous {dtype} {what}")
    # reshape: merge runs of adjacent dims, then insert size-1 dims
    cuts = sorted(data.draw(st.sets(st.integers(1, max(len(shape) - 1, 1)))))
    new_shape = [math.prod(shape[a:b]) for a, b in zip([0] + cuts, cuts + [len(shape)])]
    for _ in range(data.draw(st.integers(0, 2))):
        new_shape.insert(data.draw(st.integers(0, len(new_shape))), 1)
    new_shape = tuple(new_shape) if shape else tuple(n for n in new_shape if n == 1)
    view = ocl().reshape(dev, new_shape)
    check(view, CPU.reshape(ref, new_shape), f"reshape to {new_shape} {dtype} {what}")
    if np.shares_memory(CPU.reshape(ref, new_shape), ref):   # numpy made a view: so must we
        assert view.buffer is dev.buffer, f"reshape to {new_shape} copied {what}"


def test_views_share_memory_and_from_numpy_takes_any_layout():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = ocl().from_numpy(a.transpose(2, 0, 1))
    check(x, a.transpose(2, 0, 1).copy(), "from_numpy of a transposed array")
    for view in (ocl().transpose(x, 0, 2), ocl().narrow(x, 1, 1, 1),
                 ocl().expand(ocl().narrow(x, 2, 0, 1), (4, 2, 5)), ocl().reshape(x, (6, 4))):
        assert view.buffer is x.buffer
    check(ocl().from_numpy(np.array(2.5, np.float32)), np.array(2.5, np.float32), "from_numpy 0-d")


@examples(15)
@given(shape=shapes(), dtype=st.sampled_from(DTYPES),
       value=st.sampled_from([0, 1, -3, 2.75, True, -0.5]))
def test_full_and_arange(shape, dtype, value):
    check(ocl().full(shape, value, dtype), CPU.full(shape, value, dtype),
          f"full {shape} {value!r} {dtype}")
    n = math.prod(shape)
    if dtype.kind != "b":
        check(ocl().arange(n, dtype), CPU.arange(n, dtype), f"arange {n} {dtype}")


@examples(25)
@given(shapes=st.lists(shapes(min_dims=1, max_dims=3, big=False), min_size=1, max_size=4),
       dim=st.integers(0, 2), dtype=st.sampled_from(DTYPES), data=st.data())
def test_cat(shapes, dim, dtype, data):
    first = shapes[0]
    dim %= len(first)
    parts = [first[:dim] + (s[0],) + first[dim + 1:] for s in shapes]
    drawn = [data.draw(operand(p, dtype)) for p in parts]
    check(ocl().cat([d for d, _, _ in drawn], dim), CPU.cat([r for _, r, _ in drawn], dim),
          f"cat dim={dim} {dtype} {[w for _, _, w in drawn]}")


@examples(25)
@given(shape=shapes(min_dims=1, max_dims=3), dtype=st.sampled_from(DTYPES), data=st.data())
def test_pad(shape, dtype, data):
    dev, ref, what = data.draw(operand(shape, dtype))
    pads = [tuple(data.draw(st.tuples(st.integers(0, 3), st.integers(0, 3)))) for _ in shape]
    value = data.draw(st.sampled_from([0.0, 1.0, -2.0]))
    check(ocl().pad(dev, pads, value), CPU.pad(ref, pads, value),
          f"pad {pads} value={value} {dtype} {what}")


@pytest.mark.parametrize("src", DTYPES, ids=ids(DTYPES))
@examples(8)
@given(shape=shapes(), data=st.data())
def test_cast(src, shape, data):
    dev, ref, what = data.draw(operand(shape, src))
    for dst in DTYPES:
        check(ocl().cast(dev, dst), CPU.cast(ref, dst), f"cast {src}->{dst} {what}")


@examples(15)
@given(shape=shapes(min_dims=1, max_dims=3), dtype=st.sampled_from(DTYPES), data=st.data())
def test_copy_into_a_view(shape, dtype, data):
    src, ref, what = data.draw(operand(shape, dtype))
    # dst: a contiguous window (nonzero offset) of a larger buffer, as the core passes.
    big = ocl().full((2,) + shape, 7, dtype)
    dst = ocl().reshape(ocl().narrow(big, 0, 1, 1), shape)
    ocl().copy_(dst, src)
    want = CPU.full((2,) + shape, 7, dtype)
    CPU.copy_(want[1], ref)
    check(big, want, f"copy_ {dtype} {what}")


# -- elementwise -----------------------------------------------------------------------------
UNARY_CASES = [(fn, d) for d in DTYPES for fn in base.UNARY_FNS
               if _is_float(d) and fn != "bitwise_not" or (d.kind in "iu" and fn in INT_UNARY)]


@pytest.mark.parametrize("fn,dtype", UNARY_CASES, ids=[f"{f}-{d}" for f, d in UNARY_CASES])
@examples(5)
@given(shape=shapes(), data=st.data())
def test_unary(fn, dtype, shape, data):
    # POCL's float tanh saturates at 1 - 2**-24, so its gelu_tanh(-inf) is -inf, not
    # numpy's nan (from -inf * 0): no infinities there (nor in its derivative).
    dev, ref, what = data.draw(operand(shape, dtype,
                                       special=fn not in ("gelu_tanh", "gelu_tanh_derivative")))
    with np.errstate(all="ignore"):
        want = CPU.unary(fn, ref)
    check(ocl().unary(fn, dev), want, f"unary {fn} {dtype} {what}", loose=True)


# The core asks the bitwise fns of integers only, and div, atan2, copysign and the special
# functions of floats only.
BINARY_CASES = [(fn, d) for d in NUMERIC for fn in base.BINARY_FNS
                if (fn not in ("bitwise_and", "bitwise_or", "bitwise_xor") if _is_float(d)
                    else fn not in ("div", "atan2", "copysign", "tanh_backward",
                                    "sigmoid_backward", *base.SPECIAL_BINARY_FNS))]


@pytest.mark.parametrize("fn,dtype", BINARY_CASES, ids=[f"{f}-{d}" for f, d in BINARY_CASES])
@examples(8)
@given(shapes=two_shapes, data=st.data())
def test_binary(fn, dtype, shapes, data):
    (sa, sb), _ = shapes
    a, ra, wa = data.draw(operand(sa, dtype, special=True))
    b, rb, wb = data.draw(operand(sb, dtype, special=True))
    with np.errstate(all="ignore"):
        want = CPU.binary(fn, ra, rb)
    check(ocl().binary(fn, a, b), want, f"binary {fn} {dtype} {wa} with {wb}",
          loose=fn in base.SPECIAL_BINARY_FNS)  # (series and recurrences: as the unary ones)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@examples(10)
@given(shapes=two_shapes, data=st.data())
def test_compare(dtype, shapes, data):
    (sa, sb), _ = shapes
    a, ra, wa = data.draw(operand(sa, dtype, special=True))
    b, rb, wb = data.draw(operand(sb, dtype, special=True))
    for fn in base.COMPARE_FNS:
        check(ocl().compare(fn, a, b), CPU.compare(fn, ra, rb),
              f"compare {fn} {dtype} {wa} with {wb}")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@examples(10)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, min_side=0, max_side=4),
       data=st.data())
def test_where(dtype, shapes, data):
    (sc, sa, sb), _ = shapes
    c, rc, wc = data.draw(operand(sc, np.dtype(bool)))
    a, ra, wa = data.draw(operand(sa, dtype))
    b, rb, wb = data.draw(operand(sb, dtype))
    check(ocl().where(c, a, b), CPU.where(rc, ra, rb), f"where {dtype} cond {wc}, {wa}, {wb}")


@pytest.mark.parametrize("dtype", NUMERIC, ids=ids(NUMERIC))
@examples(10)
@given(shape=shapes(), data=st.data())
def test_affine_and_clamp(dtype, shape, data):
    # The core hands integer arrays only integral scalars (else it casts to float first).
    # (and bounds and factors an unsigned type holds: the core clips clamp's bounds)
    numbers = (st.integers(-3, 3) if dtype.kind == "i" else st.integers(0, 3)
               if dtype.kind == "u"
               else st.sampled_from([0, 1, -2, 0.5, 3.25, -1.5]))
    dev, ref, what = data.draw(operand(shape, dtype, special=True))
    mul, add = data.draw(numbers), data.draw(numbers)
    check(ocl().affine(dev, mul, add), CPU.affine(ref, mul, add),
          f"affine *{mul} +{add} {dtype} {what}")
    lo, hi = data.draw(st.one_of(st.none(), numbers)), data.draw(st.one_of(st.none(), numbers))
    check(ocl().clamp(dev, lo, hi), CPU.clamp(ref, lo, hi), f"clamp [{lo}, {hi}] {dtype} {what}")


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@examples(10)
@given(shape=shapes(), exponent=st.sampled_from([2.0, 0.5, -1.0, 3.0, 1.7, 0.0]), data=st.data())
def test_powf(dtype, shape, exponent, data):
    dev, ref, what = data.draw(operand(shape, dtype, special=True))
    with np.errstate(all="ignore"):
        want = CPU.powf(ref, exponent)
    check(ocl().powf(dev, exponent), want, f"powf {exponent} {dtype} {what}", loose=True)


# -- reductions --------------------------------------------------------------------------------
# Means of bool and of integers narrower than int32 are never asked for (the core averages
# floats only), and numpy's would overflow their own type.
REDUCE_CASES = [(fn, d) for d in DTYPES for fn in base.REDUCE_FNS
                if not (fn == "mean" and (d.kind == "b" or d.kind in "iu" and d.itemsize < 4))]


@pytest.mark.parametrize("fn,dtype", REDUCE_CASES, ids=[f"{f}-{d}" for f, d in REDUCE_CASES])
@examples(8)
@given(shape=shapes(min_dims=1), keepdim=st.booleans(), data=st.data())
def test_reduce(fn, dtype, shape, keepdim, data):
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    if (fn in ("max", "min") or fn == "mean" and dtype.kind != "f") and \
            0 in [shape[d] for d in dims]:   # undefined, or numpy's nan cast to int
        shape = tuple(1 if d in dims and n == 0 else n for d, n in enumerate(shape))
    dev, ref, what = data.draw(operand(shape, dtype, special=fn in ("max", "min")))
    with np.errstate(all="ignore"):
        want = CPU.reduce(fn, ref, dims, keepdim)   # both accumulate float16 in float32
    check(ocl().reduce(fn, dev, dims, keepdim), want,
          f"reduce {fn} dims={dims} keepdim={keepdim} {dtype} {what}",
          rtol=max(1e-4, tolerance(dtype)[0]), atol=max(1e-4, tolerance(dtype)[1]))


@pytest.mark.parametrize("fn", base.ARG_REDUCE_FNS)
@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@examples(10)
@given(shape=shapes(min_dims=1), keepdim=st.booleans(), data=st.data())
def test_arg_reduce(fn, dtype, shape, keepdim, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    shape = shape[:dim] + (max(shape[dim], 1),) + shape[dim + 1:]
    dev, ref, what = data.draw(operand(shape, dtype, special=True))
    check(ocl().arg_reduce(fn, dev, dim, keepdim), CPU.arg_reduce(fn, ref, dim, keepdim),
          f"arg_reduce {fn} dim={dim} keepdim={keepdim} {dtype} {what}")


def test_long_reductions_use_work_groups_and_keep_first_index():
    x = np.zeros((3, 5000), np.float32)
    x[:, 4000] = x[:, 4500] = 2.0          # tie: first wins
    x[1, 100] = np.nan                     # nan wins
    x[2] = np.linspace(-1, 1, 5000)
    dev = ocl().from_numpy(x)
    for fn in base.ARG_REDUCE_FNS:
        check(ocl().arg_reduce(fn, dev, 1, False), CPU.arg_reduce(fn, x, 1, False),
              f"{fn} (3, 5000)")
    for fn in base.REDUCE_FNS:
        check(ocl().reduce(fn, dev, (1,), True), CPU.reduce(fn, x, (1,), True),
              f"reduce {fn} (3, 5000)", rtol=1e-4, atol=1e-4)


# -- linear algebra, convolution, pooling -------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@examples(15)
@given(batch=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, min_side=0, max_side=3),
       mnk=st.tuples(*[st.sampled_from([0, 1, 2, 5, 16, 17, 33]) for _ in range(3)]),
       data=st.data())
def test_matmul(dtype, batch, mnk, data):
    (ba, bb), _ = batch
    m, n, k = mnk
    a, ra, wa = data.draw(operand(ba + (m, k), dtype))
    b, rb, wb = data.draw(operand(bb + (k, n), dtype))
    check(ocl().matmul(a, b), CPU.matmul(ra, rb), f"matmul {dtype} {wa} @ {wb}",
          rtol=1e-4, atol=1e-4)


def test_matmul_large_tiles():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((70, 130)), rng.standard_normal((130, 45))
    for dtype in FLOATS:
        ra, rb = a.astype(dtype), b.astype(dtype)
        got = ocl().matmul(ocl().from_numpy(ra),
                           ocl().transpose(ocl().from_numpy(rb.T.copy()), 0, 1))
        check(got, CPU.matmul(ra, rb), f"matmul {dtype} (70, 130) @ (130, 45) [transposed]",
              rtol=max(1e-4, tolerance(dtype)[0]), atol=max(1e-4, tolerance(dtype)[1]))


@pytest.mark.parametrize("m, k, n, a_transposed", [(3, 40, 50, False), (37, 19, 45, True),
                                                  (37, 19, 45, False), (21, 30, 200, True)])
def test_matmul_strided_b_and_edge_blocks(m, k, n, a_transposed):
    """A b with strided rows (packed, or computed as (b.T @ a.T).T), and edge blocks that
    shift back to overlap their neighbours: right values, and the same bits every run."""
    rng = np.random.default_rng(0)
    ra, rb = rng.standard_normal((2, m, k), np.float32), rng.standard_normal((2, k, n), np.float32)
    be = ocl()
    a = (be.transpose(be.from_numpy(ra.transpose(0, 2, 1).copy()), 1, 2) if a_transposed
         else be.from_numpy(ra))
    b = be.transpose(be.from_numpy(rb.transpose(0, 2, 1).copy()), 1, 2)
    got = be.matmul(a, b)
    check(got, CPU.matmul(ra, rb), f"matmul ({m}, {k}) @ ({k}, {n}) [transposed b]",
          rtol=1e-4, atol=1e-4)
    assert all(np.array_equal(be.to_numpy(got), be.to_numpy(be.matmul(a, b))) for _ in range(3))


windows = st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
                    st.integers(0, 1), st.integers(0, 1))


@pytest.mark.parametrize("dtype", NUMERIC, ids=ids(NUMERIC))
@examples(10)
@given(nchw=st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 7), st.integers(1, 7)),
       window=windows, data=st.data())
def test_im2col_col2im_and_pools(dtype, nchw, window, data):
    kh, kw, sh, sw, ph, pw = window
    n, c, h, w = nchw
    h, w = max(h, kh), max(w, kw)
    geometry = ((kh, kw), (sh, sw), (ph, pw))
    x, rx, what = data.draw(operand((n, c, h, w), dtype, special=True))
    what = f"{dtype} {what} kernel={geometry[0]} stride={geometry[1]} padding={geometry[2]}"
    check(ocl().im2col(x, *geometry), CPU.im2col(rx, *geometry), f"im2col {what}")
    ho, wo = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    cols, rcols, cwhat = data.draw(operand((n, c * kh * kw, ho * wo), dtype))
    check(ocl().col2im(cols, (n, c, h, w), *geometry),
          CPU.col2im(rcols, (n, c, h, w), *geometry), f"col2im {dtype} {cwhat} {what}")
    # pool.cl's own arguments: padding at most half the kernel (as the ops check), dilation
    # (where a window still fits), ceil_mode, and avg_pool2d's divisor choices.
    geometry = ((kh, kw), (sh, sw), (ph, pw)) = ((kh, kw), (sh, sw),
                                                  (min(ph, kh // 2), min(pw, kw // 2)))
    dilation = tuple(d if d * (k - 1) + 1 <= size + 2 * p else 1 for d, k, size, p
                     in zip(data.draw(st.tuples(st.integers(1, 2), st.integers(1, 2))),
                            (kh, kw), (h, w), (ph, pw)))
    ceil_mode, include_pad = data.draw(st.booleans()), data.draw(st.booleans())
    divisor = data.draw(st.sampled_from([None, 3]))
    what += f" dilation={dilation} ceil_mode={ceil_mode}"
    values, indices = ocl().max_pool2d(x, *geometry, dilation, ceil_mode)
    want_values, want_indices = CPU.max_pool2d(rx, *geometry, dilation, ceil_mode)
    check(values, want_values, f"max_pool2d values {what}")
    check(indices, want_indices, f"max_pool2d indices {what}")
    if dtype.kind == "f" or dtype.itemsize >= 4:  # as means: narrow integers never asked for
        avg = (*geometry, ceil_mode, include_pad, divisor)
        with np.errstate(all="ignore"):
            want = CPU.avg_pool2d(rx, *avg)
        check(ocl().avg_pool2d(x, *avg), want, f"avg_pool2d {what} {avg[3:]}")


# -- indexing ------------------------------------------------------------------------------------
@st.composite
def index_case(draw, dtype):
    """(x shape, dim, index storage, index array): index no larger than x off `dim`."""
    shape = draw(shapes(min_dims=1, max_dims=3))
    dim = draw(st.integers(0, len(shape) - 1))
    extent = max(shape[dim], 1)
    shape = shape[:dim] + (extent,) + shape[dim + 1:]
    index_shape = tuple(draw(st.integers(0, n)) if d != dim else draw(st.integers(0, 6))
                        for d, n in enumerate(shape))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    host = rng.integers(0, extent, size=index_shape).astype(np.int64)
    index = ocl().from_numpy(host)
    if len(index_shape) >= 2 and draw(st.booleans()):   # a transposed index view
        host = np.ascontiguousarray(host.swapaxes(0, 1))
        index = ocl().transpose(ocl().from_numpy(host), 0, 1)
        host = host.swapaxes(0, 1)
    return shape, dim, index, host


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
@examples(15)
@given(data=st.data())
def test_gather_and_scatter_add(dtype, data):
    shape, dim, index, rindex = data.draw(index_case(dtype))
    x, rx, what = data.draw(operand(shape, dtype))
    check(ocl().gather(x, dim, index), CPU.gather(rx, dim, rindex),
          f"gather dim={dim} index {rindex.shape} {dtype} {what}")
    # scatter_add reads src[:index.shape] and writes out[:index.shape] off `dim`.
    grow = st.integers(0, 2)
    src, rsrc, what = data.draw(operand(tuple(n + data.draw(grow) for n in rindex.shape), dtype))
    out_shape = tuple(shape[d] if d == dim else n + data.draw(grow)
                      for d, n in enumerate(rindex.shape))
    what = f"scatter_add into {out_shape} dim={dim} index {rindex.shape} {dtype} src {what}"
    got = ocl().scatter_add(out_shape, dim, index, src)
    check(got, CPU.scatter_add(out_shape, dim, rindex, rsrc), what, rtol=1e-5, atol=1e-5)
    again = ocl().scatter_add(out_shape, dim, index, src)
    assert ocl().to_numpy(got).tobytes() == ocl().to_numpy(again).tobytes(), \
        f"{what}: not deterministic"


def test_scatter_add_many_hits_is_bitwise_deterministic():
    rng = np.random.default_rng(1)
    src = rng.standard_normal((4000, 3)).astype(np.float32)
    index = rng.integers(0, 5, size=(4000, 3))
    dev_src, dev_index = ocl().from_numpy(src), ocl().from_numpy(index)
    runs = {ocl().to_numpy(ocl().scatter_add((5, 3), 0, dev_index, dev_src)).tobytes()
            for _ in range(3)}
    assert len(runs) == 1
    check(ocl().scatter_add((5, 3), 0, dev_index, dev_src),
          CPU.scatter_add((5, 3), 0, index, src), "scatter_add (4000, 3) -> (5, 3)",
          rtol=1e-4, atol=1e-4)


# -- random numbers --------------------------------------------------------------------------------
def philox4x32_10(counter, key):
    """Reference Philox4x32-10 on Python ints (Random123's known-answer vectors hold)."""
    c, (k0, k1), mask = list(counter), key, 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & mask, (p0 >> 32) ^ c[3] ^ k1, p0 & mask]
        k0, k1 = (k0 + 0x9E3779B9) & mask, (k1 + 0xBB67AE85) & mask
    return c


def test_philox_reference_and_uniform_bits():
    assert philox4x32_10([0, 0, 0, 0], (0, 0)) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    seed = 0x1234_5678_9ABC_DEF0
    ocl().manual_seed(seed)
    got = ocl().to_numpy(ocl().rand((9,), np.float32))
    words = [w for block in range(3)
             for w in philox4x32_10([block, 0, 0, 0], (seed & 0xFFFFFFFF, seed >> 32))]
    want = np.array([(w >> 8) * 2.0**-24 for w in words[:9]], np.float32)
    np.testing.assert_array_equal(got, want, err_msg="rand float32 vs reference Philox")


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_rng_seed_state_and_distribution(dtype):
    backend = ocl()
    backend.manual_seed(123)
    first = backend.to_numpy(backend.rand((1001,), dtype))
    state = backend.get_rng_state()
    normal = backend.to_numpy(backend.randn((100, 100), dtype))
    backend.set_rng_state(state)
    np.testing.assert_array_equal(backend.to_numpy(backend.randn((100, 100), dtype)), normal)
    backend.manual_seed(123)
    np.testing.assert_array_equal(backend.to_numpy(backend.rand((1001,), dtype)), first)
    assert first.dtype == dtype and normal.dtype == dtype
    first, normal = first.astype(np.float64), normal.astype(np.float64)  # (numpy's bfloat16
    # mean would accumulate in bfloat16)
    assert 0 <= first.min() and first.max() < 1 and abs(first.mean() - 0.5) < 0.05
    assert abs(normal.mean()) < 0.05 and abs(normal.std() - 1) < 0.05
    # No repeated blocks: nearly as many distinct values as 1001 draws from the dtype's
    # 2**UNIFORM_BITS uniform values can give (float16 has only 2048 of them, bfloat16 256).
    values = 2.0 ** (8 if dtype.name == "bfloat16" else {"e": 11, "f": 24, "d": 53}[dtype.char])
    assert len(np.unique(first)) > 0.97 * values * -np.expm1(-1001 / values)
    assert backend.to_numpy(backend.rand((0, 3), dtype)).shape == (0, 3)
    assert pickle.loads(pickle.dumps(state)) == state
