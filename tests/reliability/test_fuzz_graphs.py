"""Fuzz: random small graphs over every Op variant, checked against gradcheck.

The table has one generator per variant of shrew.core.op.VARIANTS.  A generator draws its
parameters for operands picked from the tensors built so far and returns the operand
indices and a function that applies the op to them; a program is a list of such steps,
replayed on fresh float64 leaves by gradcheck.  Some draws are invalid on purpose (dims
out of range, a narrow of a 0-d tensor, pads that crop too much): those must raise a
ShrewError, and anything else (another exception, a crash) fails the test.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

import shrew
from shrew.core import op as O
from shrew.backends.base import (BINARY_FNS, REDUCE_FNS, SPECIAL_BINARY_FNS, SPECIAL_UNARY_FNS,
                                 UNARY_FNS)
from shrew.autograd.diagnostics import _graph, op_name
from shrew.testing import gradcheck
from shrew.testing.conformance.calls import SinTimes
from shrew.testing.conformance.cases import UNARY_DOMAIN
from shrew.ops.elementwise.recorded import binary, unary
from shrew.backends.cpu import CPUBackend
from support import numpy_attention, numpy_layer_norm, shapes

OTHER = "othercpu:0"  # the second device that tests/conftest.py's other_device registers
seeds = st.integers(0, 2**31 - 1)
floats = st.floats(-2.0, 2.0, allow_nan=False).map(lambda v: round(v, 3))


# -- helpers --------------------------------------------------------------------------------
def _pick(draw, pool, fits=lambda t: True) -> int:
    """The index of a tensor of the pool that `fits` (the newest one when none does)."""
    options = [i for i, t in enumerate(pool) if fits(t)] or [len(pool) - 1]
    return draw(st.sampled_from(options))


def _dim(draw, ndim: int) -> int:
    """A dim, one past either end now and then (an invalid input)."""
    return draw(st.integers(-ndim - 1, ndim))


def _valid_dim(draw, ndim: int) -> int:
    return draw(st.integers(-ndim, ndim - 1))


def _up(x):
    """0-d tensors as shape [1], for ops that need a dim."""
    return x.reshape(1) if x.ndim == 0 else x


def _image(x):
    """x as a [1, 1, H, W] image whose W is x's last dim."""
    return x.reshape(1, 1, -1, x.shape[-1] if x.ndim else 1)


def _window(draw, x):
    """(kernel, stride, padding) that fit the image of x; padding at most half the kernel."""
    _, _, h, w = _image(x).shape
    kernel = (draw(st.integers(1, min(h, 3))), draw(st.integers(1, min(w, 3))))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    return kernel, stride, padding


def _positive(x):
    return x * x + 0.5


# Integer-only functions: never recorded in these float graphs; nor the special functions,
# defined on parts of the line, some without a gradient (tests/test_special_torch.py).
INTEGER_ONLY = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")
FLOAT_BINARY_FNS = tuple(fn for fn in BINARY_FNS
                         if fn not in INTEGER_ONLY and fn not in SPECIAL_BINARY_FNS)
FLOAT_UNARY_FNS = tuple(fn for fn in UNARY_FNS
                        if fn not in INTEGER_ONLY and fn not in SPECIAL_UNARY_FNS)
# the Reduce functions recorded: the backend's, and amax / amin (max and min over dims,
# with their own gradient rule)
RECORDED_REDUCE_FNS = (*REDUCE_FNS, "amax", "amin")
# Binary functions whose right operand must stay away from 0 (and pow's base positive).
NONZERO_RIGHT = ("div", "fmod", "remainder", "floor_divide", "atan2", "copysign")


def _broadcasts(a, b) -> bool:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return True


# -- the table: one generator per variant ----------------------------------------------------
def g_contiguous(draw, pool):
    return (_pick(draw, pool),), lambda x: (x.transpose(0, -1) if x.ndim > 1 else x).contiguous()


def g_binary(draw, pool):
    i = _pick(draw, pool)
    j = _pick(draw, pool, lambda t: _broadcasts(t, pool[i]))
    fn = draw(st.sampled_from(FLOAT_BINARY_FNS))
    if fn == "div":
        return (i, j), lambda a, b: a / _positive(b)
    if fn in NONZERO_RIGHT:
        return (i, j), lambda a, b: getattr(a, fn)(_positive(b))
    if fn == "pow":
        return (i, j), lambda a, b: _positive(a).pow(b)
    if not hasattr(shrew.Tensor, fn):  # tanh_backward, sigmoid_backward: no method
        return (i, j), lambda a, b: binary(fn, a, b)
    return (i, j), lambda a, b: getattr(a, fn)(b)


def g_unary(draw, pool):
    fn = draw(st.sampled_from(FLOAT_UNARY_FNS))
    # Functions defined on (0, inf) or off 0, on (-1, 1), on (1, inf) (the conformance
    # suite's domains): their input is mapped there.
    domain = UNARY_DOMAIN.get(fn)
    if domain in ("positive", "nonzero"):
        return (_pick(draw, pool),), lambda x: getattr(_positive(x), fn)()
    if domain == "unit":
        return (_pick(draw, pool),), lambda x: getattr(x.tanh() * 0.9, fn)()
    if domain == "above_one":
        return (_pick(draw, pool),), lambda x: getattr(_positive(x) + 1.0, fn)()
    if fn == "gelu_tanh":
        return (_pick(draw, pool),), lambda x: x.gelu(approximate="tanh")
    if fn.endswith("_derivative"):  # for gradient rules: no Tensor method
        return (_pick(draw, pool),), lambda x: unary(fn, x)
    return (_pick(draw, pool),), lambda x: getattr(x, fn)()


def g_reduce(draw, pool):
    i = _pick(draw, pool)
    n = pool[i].ndim
    fn = draw(st.sampled_from(RECORDED_REDUCE_FNS))
    if fn in ("max", "min"):  # of every element (max(dim) gives values and indices)
        return (i,), lambda x: getattr(x, fn)()
    dims = st.lists(st.integers(-n, n - 1), min_size=1, max_size=2).map(tuple) if n else st.none()
    dim = draw(st.one_of(st.none(), st.integers(-n - 1, n), dims))
    keepdim = draw(st.booleans())
    return (i,), lambda x: getattr(x, fn)(dim, keepdim)


def g_prod(draw, pool):
    i = _pick(draw, pool)
    n = pool[i].ndim
    dim = draw(st.one_of(st.none(), st.integers(-n - 1, n)))  # out of range sometimes
    keepdim = draw(st.booleans())
    return (i,), lambda x: x.prod(dim, keepdim)


def g_vector_norm(draw, pool):
    i = _pick(draw, pool)
    n = pool[i].ndim
    dim = draw(st.one_of(st.none(), st.integers(-n - 1, n)))
    ord = draw(st.sampled_from([1, 2, 3]))
    return (i,), lambda x: shrew.linalg.vector_norm(x, ord, dim)


def g_scan(draw, pool):
    i = _pick(draw, pool)
    dim = draw(st.integers(-pool[i].ndim - 1, pool[i].ndim))  # out of range sometimes
    fn = draw(st.sampled_from(["cumsum", "cumprod"]))
    return (i,), lambda x: getattr(x, fn)(dim)


def g_softmax(draw, pool):
    i = _pick(draw, pool)
    dim = draw(st.integers(-pool[i].ndim - 1, pool[i].ndim))  # out of range sometimes
    log = draw(st.booleans())
    return (i,), lambda x: x.log_softmax(dim) if log else x.softmax(dim)


def g_standardize(draw, pool):
    i = _pick(draw, pool)
    ndims = draw(st.integers(0, pool[i].ndim + 1))  # out of range sometimes
    return (i,), lambda x: shrew.standardize(x, ndims, eps=0.1)


def g_layer_norm(draw, pool):
    """layer_norm with a weight and a bias: tensors of the pool where they have the
    normalised shape, else constants."""
    i = _pick(draw, pool)
    ndims = draw(st.integers(0, pool[i].ndim + 1))  # out of range sometimes
    tail = pool[i].shape[pool[i].ndim - ndims:] if ndims <= pool[i].ndim else None
    j = _pick(draw, pool, lambda t: t.shape == tail)
    k = _pick(draw, pool, lambda t: t.shape == tail)

    def layer_norm(x, w, b):
        shape = x.shape[x.ndim - ndims:] if ndims <= x.ndim else (1, *x.shape)
        if w.shape != shape:
            w = shrew.full(shape, 1.5, dtype=x.dtype, device=x.device)
        if b.shape != shape:
            b = shrew.full(shape, 0.25, dtype=x.dtype, device=x.device)
        return shrew.nn.functional.layer_norm(x, shape, w, b, eps=0.1)
    return (i, j, k), layer_norm


def g_linear(draw, pool):
    """linear with a bias: a weight [N, K] and a bias [N] of the pool where they fit x's
    last dim K and each other, else constants."""
    i = _pick(draw, pool)
    k = pool[i].shape[-1] if pool[i].ndim else -1
    j = _pick(draw, pool, lambda t: t.ndim == 2 and t.shape[1] == k)
    b = _pick(draw, pool, lambda t: t.ndim == 1)

    def linear(x, w, bias):
        if x.ndim == 0:
            x = x.reshape(1, 1)
        if w.ndim != 2 or w.shape[1] != x.shape[-1]:
            w = (shrew.arange(3 * x.shape[-1], dtype=x.dtype) * 0.1).reshape(3, -1)
        if bias.shape != w.shape[:1]:
            bias = shrew.full(w.shape[:1], 0.25, dtype=x.dtype)
        return shrew.nn.functional.linear(x, w, bias)
    return (i, j, b), linear


def g_attention(draw, pool):
    """scaled_dot_product_attention of three tensors of the pool (mismatched shapes raise),
    causal or not."""
    i, j, k = (_pick(draw, pool) for _ in range(3))
    causal = draw(st.booleans())
    return (i, j, k), lambda q, key, v: shrew.nn.functional.scaled_dot_product_attention(
        q, key, v, is_causal=causal and q.ndim >= 2 and q.shape[-2] <= key.shape[-2])


def g_matmul(draw, pool):
    i = _pick(draw, pool)
    j = _pick(draw, pool, lambda t: t.shape == pool[i].shape)

    def matmul(a, b):
        if a.ndim < 2:
            return a.reshape(1, -1) @ b.reshape(-1, 1)
        return a @ b.transpose(-1, -2)
    return (i, j), matmul


def _spread_spd(x):
    """A symmetric positive-definite matrix (batch) built smoothly from x [..., n]: diag(1, 2,
    ..., n) plus a bounded rank-one term, so its eigenvalues stay apart (decompositions'
    gradients need distinct ones) and it is never near singular."""
    x = _up(x).tanh()
    n = x.shape[-1]
    steps = shrew.arange(1, n + 1, dtype=x.dtype)
    return shrew.diag(steps) + 0.3 * x.unsqueeze(-1) * x.unsqueeze(-2)


def g_solve(draw, pool):
    i = _pick(draw, pool)
    j = _pick(draw, pool, lambda t: t.shape == pool[i].shape)
    return (i, j), lambda a, b: shrew.linalg.solve(_spread_spd(a), _up(b).unsqueeze(-1))


# Each a function of the decomposition that does not depend on the sign of its vectors.
DECOMPOSED = {
    "det": lambda m: shrew.linalg.det(m),
    "slogdet": lambda m: shrew.linalg.slogdet(m).logabsdet,
    "cholesky": lambda m: shrew.linalg.cholesky(m),
    "qr": lambda m: shrew.linalg.qr(m).R.square(),
    "svdvals": lambda m: shrew.linalg.svdvals(m),
    "svd": lambda m: shrew.linalg.svd(m).U.square(),
    "eigh": lambda m: shrew.linalg.eigh(m).eigenvectors.square(),
    "pinv": lambda m: shrew.linalg.pinv(m),
}


def g_decomposition(draw, pool):
    fn = DECOMPOSED[draw(st.sampled_from(sorted(DECOMPOSED)))]
    return (_pick(draw, pool),), lambda x: fn(_spread_spd(x))


def g_reshape(draw, pool):
    where = draw(st.sampled_from(["front", "back", "flat"]))
    return (_pick(draw, pool),), lambda x: (x.reshape(1, *x.shape) if where == "front" else
                                            x.reshape(*x.shape, 1) if where == "back" else
                                            x.reshape(-1))


def g_transpose(draw, pool):
    i = _pick(draw, pool)
    n = max(pool[i].ndim, 2)
    d0, d1 = _dim(draw, n), _dim(draw, n)
    return (i,), lambda x: (x if x.ndim >= 2 else x.reshape(1, -1)).transpose(d0, d1)


def g_narrow(draw, pool):
    i = _pick(draw, pool)
    x = pool[i]
    if x.ndim == 0:
        return (i,), lambda x: x.narrow(0, 0, 1)  # invalid: a 0-d tensor has no dim
    d = _valid_dim(draw, x.ndim)
    start = draw(st.integers(0, x.shape[d] - 1))
    length = draw(st.integers(1, x.shape[d] - start))
    return (i,), lambda x: x.narrow(d, start, length)


def g_affine(draw, pool):
    mul, add = draw(floats), draw(floats)
    return (_pick(draw, pool),), lambda x: x.affine(mul, add)


def g_conv2d(draw, pool):
    i = _pick(draw, pool)
    kernel, stride, padding = _window(draw, pool[i])
    size = kernel[0] * kernel[1]

    def conv(x):
        weight = x.reshape(-1).narrow(0, 0, size).reshape(1, 1, *kernel)
        return shrew.conv2d(_image(x), weight, stride=stride, padding=padding)
    return (i,), conv


def g_conv1d(draw, pool):
    i = _pick(draw, pool)
    length = max(math.prod(pool[i].shape), 1)
    k = draw(st.integers(1, min(length, 3)))
    stride, padding = draw(st.integers(1, 2)), draw(st.integers(0, 1))

    def conv(x):
        weight = x.reshape(-1).narrow(0, 0, k).reshape(1, 1, k)
        return shrew.conv1d(x.reshape(1, 1, -1), weight, stride=stride, padding=padding)
    return (i,), conv


def g_max_pool2d(draw, pool):
    i = _pick(draw, pool)
    kernel, stride, padding = _window(draw, pool[i])
    return (i,), lambda x: shrew.max_pool2d(_image(x), kernel, stride, padding)


def g_avg_pool2d(draw, pool):
    i = _pick(draw, pool)
    kernel, stride, padding = _window(draw, pool[i])
    return (i,), lambda x: shrew.avg_pool2d(_image(x), kernel, stride, padding)


def g_cat(draw, pool):
    i = _pick(draw, pool)
    j = _pick(draw, pool, lambda t: t.shape == pool[i].shape)
    dim = _dim(draw, max(pool[i].ndim, 1))
    return (i, j), lambda a, b: shrew.cat([_up(a), _up(b)], dim)


def g_powf(draw, pool):
    exponent = draw(st.sampled_from([0.0, 0.5, 2.0, 3.0, -1.5]))
    return (_pick(draw, pool),), lambda x: _positive(x).powf(exponent)


def g_clamp(draw, pool):
    lo = draw(st.one_of(st.none(), st.floats(-1.0, 0.0)))
    hi = draw(st.floats(0.0, 1.0) if lo is None else st.one_of(st.none(), st.floats(0.0, 1.0)))
    return (_pick(draw, pool),), lambda x: x.clamp(lo, hi)


def g_where(draw, pool):
    i = _pick(draw, pool)
    j = _pick(draw, pool, lambda t: _broadcasts(t, pool[i]))
    threshold = draw(floats)
    return (i, j), lambda a, b: shrew.where(a > threshold, a, b)


def _index(draw, shape, high):
    """A random int64 index of `shape` with values in [0, high)."""
    return np.random.default_rng(draw(seeds)).integers(0, high, size=shape)


def g_gather(draw, pool):
    i = _pick(draw, pool)
    x = _up(pool[i])
    dim = _valid_dim(draw, x.ndim)
    shape = list(x.shape)
    shape[dim] = draw(st.integers(1, 3))
    index = _index(draw, shape, x.shape[dim])
    return (i,), lambda x: _up(x).gather(dim, shrew.tensor(index))


def g_scatter_add(draw, pool):
    i = _pick(draw, pool)
    x = _up(pool[i])
    dim = _valid_dim(draw, x.ndim)
    out = list(x.shape)
    out[dim] = draw(st.integers(1, 3))
    index = _index(draw, x.shape, out[dim])
    return (i,), lambda x: shrew.scatter_add(out, dim, shrew.tensor(index), _up(x))


def g_scatter(draw, pool):
    i = _pick(draw, pool)
    x = _up(pool[i])
    dim = _valid_dim(draw, x.ndim)
    index = _index(draw, x.shape, x.shape[dim])  # added into x itself (a sum: no ties)
    return (i,), lambda x: _up(x).scatter_add(dim, shrew.tensor(index), _up(x))


def g_pad(draw, pool):
    i = _pick(draw, pool)
    pads = draw(st.lists(st.integers(-1, 2), min_size=2, max_size=2 * max(pool[i].ndim, 1)))
    pads = pads[:len(pads) // 2 * 2]
    value = draw(floats)
    return (i,), lambda x: _up(x).pad(pads, value)


def g_to_dtype(draw, pool):
    """A float32 round trip (see check)."""
    return (_pick(draw, pool),), lambda x: x.to_dtype(shrew.float32).to_dtype(shrew.float64)


def g_to_device(draw, pool):
    return (_pick(draw, pool),), lambda x: x.to(OTHER).to(x.device)


def g_im2col(draw, pool):
    i = _pick(draw, pool)
    kernel, stride, padding = _window(draw, pool[i])
    return (i,), lambda x: shrew.im2col(_image(x), kernel, stride, padding)


def g_col2im(draw, pool):
    i = _pick(draw, pool)
    kernel, stride, padding = _window(draw, pool[i])

    def round_trip(x):
        image = _image(x)
        cols = shrew.im2col(image, kernel, stride, padding)
        return shrew.col2im(cols, image.shape, kernel, stride, padding)
    return (i,), round_trip


def g_custom_function(draw, pool):
    return (_pick(draw, pool),), SinTimes.apply


def g_checkpoint(draw, pool):
    """Another variant's step on one operand, recomputed in backward (not ToDtype's, which
    check replaces)."""
    i = _pick(draw, pool)
    inner = TABLE[draw(st.sampled_from([v for v in O.VARIANTS
                                        if v not in (O.Checkpoint, O.ToDtype)]))]
    indices, fn = inner(draw, [pool[i]])
    return (i,), lambda x: shrew.checkpoint(lambda t: fn(*[t] * len(indices)), x)


def g_as_strided(draw, pool):
    """A strided view: a step slice, a diagonal or a sliding window (Tensor.unfold)."""
    i = _pick(draw, pool)
    x = pool[i]
    if x.ndim == 0:
        return (i,), lambda x: x.diagonal()  # invalid: a diagonal needs two dims
    d = _valid_dim(draw, x.ndim)
    kind = draw(st.sampled_from(["step", "diagonal", "unfold"] if x.ndim >= 2 else
                                ["step", "unfold"]))
    if kind == "step":
        step = draw(st.integers(2, 3))
        key = (slice(None),) * d + (slice(None, None, step),)
        return (i,), lambda x: x[key]
    if kind == "diagonal":
        offset = draw(st.integers(-1, 1))
        return (i,), lambda x: x.diagonal(offset, 0, x.ndim - 1)
    size = draw(st.integers(1, max(1, x.shape[d])))
    step = draw(st.integers(1, 2))
    return (i,), lambda x: x.unfold(d, size, step)


def g_recurrent(draw, pool):
    """One recurrent layer (tanh RNN, LSTM or GRU, fixed weights) over a tensor of the pool
    read as a sequence [T, 1, 1]."""
    i = _pick(draw, pool)
    mode = draw(st.sampled_from(["RNN", "LSTM", "GRU"]))

    def run(x):
        layer = getattr(shrew.nn, mode)(1, 2, dtype=x.dtype, device=x.device)
        with shrew.no_grad():
            for k, p in enumerate(layer.parameters()):
                p.copy_((shrew.arange(p.numel(), dtype=x.dtype) * 0.1 - 0.2 + 0.05 * k)
                        .reshape(p.shape))
        return layer(x.reshape(-1, 1, 1))[0]
    return (i,), run


TABLE = {
    O.Contiguous: g_contiguous, O.AsStrided: g_as_strided, O.Binary: g_binary,
    O.Unary: g_unary, O.Reduce: g_reduce,
    O.Matmul: g_matmul, O.Reshape: g_reshape, O.Transpose: g_transpose, O.Narrow: g_narrow,
    O.Affine: g_affine, O.Conv2d: g_conv2d, O.Conv1d: g_conv1d, O.MaxPool2d: g_max_pool2d,
    O.AvgPool2d: g_avg_pool2d, O.Cat: g_cat, O.Powf: g_powf, O.Clamp: g_clamp,
    O.WhereCond: g_where, O.Gather: g_gather, O.Pad: g_pad, O.ToDtype: g_to_dtype,
    O.ToDevice: g_to_device, O.ScatterAdd: g_scatter_add, O.Scatter: g_scatter,
    O.Im2Col: g_im2col,
    O.Col2Im: g_col2im, O.Softmax: g_softmax, O.Standardize: g_standardize,
    O.LayerNorm: g_layer_norm, O.Attention: g_attention, O.Linear: g_linear,
    O.Checkpoint: g_checkpoint, O.Prod: g_prod, O.VectorNorm: g_vector_norm, O.Scan: g_scan,
    O.CustomFunction: g_custom_function, O.Solve: g_solve, O.Decomposition: g_decomposition,
    O.Recurrent: g_recurrent, O.RecurrentLayer: g_recurrent,
}


# -- building and checking a program ----------------------------------------------------------
def build(draw, leaves, variants):
    """Apply one drawn step per variant to the growing pool; stop at the first step that
    rejects its input with a ShrewError, or after one that made an empty tensor.  Returns
    the steps that ran."""
    pool, steps = list(leaves), []
    for variant in variants:
        indices, fn = TABLE[variant](draw, pool)
        try:
            out = fn(*[pool[i] for i in indices])
        except shrew.ShrewError:
            break  # bad input, reported as it must be
        pool.append(out)
        steps.append((variant, indices, fn))
        if out.numel() == 0:
            break  # the generators draw their parameters for non-empty operands
    return steps


@st.composite
def programs(draw, variants):
    """(leaves, steps): one or two float64 leaves and the steps built on them."""
    rng = np.random.default_rng(draw(seeds))
    leaves = [shrew.tensor(rng.uniform(-2, 2, draw(shapes(0, 3))), requires_grad=True)
              for _ in range(draw(st.integers(1, 2)))]
    return leaves, build(draw, leaves, draw(variants))


def replay(steps, *leaves):
    pool = list(leaves)
    for _, indices, fn in steps:
        pool.append(fn(*[pool[i] for i in indices]))
    return pool[-1]


def _gradients(steps, leaves, seed=0):
    """The leaves' gradients of sum(output * a fixed random cotangent)."""
    out = replay(steps, *leaves)
    cotangent = np.random.default_rng(seed).standard_normal(out.shape)
    store = (out * shrew.tensor(cotangent)).sum().backward(retain_graph=False)
    return [np.zeros(leaf.shape) if store.get(leaf) is None else store.get(leaf).numpy()
            for leaf in leaves]


def check(leaves, steps):
    """gradcheck the program; where its values overflow or grow too large for finite
    differences to mean much, backward still has to run.

    A ToDtype step (a float32 round trip) is too coarse for finite differences, so
    gradcheck runs on the program without it, and the program with it must give that
    program's gradients to float32 precision."""
    out = replay(steps, *leaves)
    if not (np.abs(out.numpy()) < 1e4).all():
        out.sum().backward()
        return
    exact = [(v, i, (lambda x: x) if v is O.ToDtype else fn) for v, i, fn in steps]
    assert gradcheck(lambda *xs: replay(exact, *xs), leaves)
    if any(v is O.ToDtype for v, _, _ in steps):
        for got, want in zip(_gradients(steps, leaves), _gradients(exact, leaves)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@settings(max_examples=max(500, settings().max_examples),
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=programs(st.lists(st.sampled_from(O.VARIANTS), min_size=1, max_size=5)))
def test_random_graphs_match_gradcheck(other_device, program):
    assert other_device == OTHER
    leaves, steps = program
    if steps:
        check(leaves, steps)


_FUNCTIONS = {O.Unary: FLOAT_UNARY_FNS, O.Binary: FLOAT_BINARY_FNS,
              O.Reduce: RECORDED_REDUCE_FNS}
KINDS = [(v, f"{v.__name__}.{fn}" if v in _FUNCTIONS else v.__name__)
         for v in O.VARIANTS for fn in _FUNCTIONS.get(v, [None])
         if v is not O.RecurrentLayer]
"""RecurrentLayer is recorded only where oneDNN runs a whole float32 layer, never in the
float64 programs gradcheck needs (its layers run as Recurrent there); tests/
test_rnn_fused_torch.py checks its values and gradients against PyTorch's."""


@pytest.mark.parametrize("variant, kind", KINDS, ids=[kind for _, kind in KINDS])
def test_each_kind_of_op_is_generated_and_gradchecked(other_device, variant, kind):
    """Every variant (and every function of Unary, Binary, Reduce) can be generated: the
    first program found that records it is gradchecked."""
    def recorded(program):
        leaves, steps = program
        return bool(steps) and kind in {op_name(t.op) for t in _graph(replay(steps, *leaves))}

    leaves, steps = find(programs(st.just([variant])), recorded,
                         settings=settings(database=None, max_examples=1000, derandomize=True,
                                           phases=[Phase.generate]))
    check(leaves, steps)


def test_the_table_covers_every_variant():
    assert set(TABLE) == set(O.VARIANTS) and len(TABLE) == len(O.VARIANTS)


@pytest.fixture(autouse=True)
def _layer_norm_nodes(monkeypatch):
    """The cpu backend's base.FastNorm serves float32 on oneDNN only: a numpy one here
    makes LayerNorm nodes on float64 too, whose rule gradcheck then checks."""
    monkeypatch.setattr(CPUBackend, "layer_norm", numpy_layer_norm)


@pytest.fixture(autouse=True)
def _attention_nodes(monkeypatch):
    """Likewise Attention nodes: the cpu backend's base.FastAttention is float32 only."""
    monkeypatch.setattr(CPUBackend, "attention", numpy_attention)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow in exp chains
        yield
