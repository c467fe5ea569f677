"""Reductions, scans, sorting and selection against PyTorch: values, indices, gradients and
errors, on hypothesis-drawn shapes and dims with ties, NaNs and empty dims."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import shrew

torch = pytest.importorskip("torch")


@st.composite
def arrays(draw, min_dims=0, min_side=0, ties=True, nans=False):
    """A float64 array: small integers (many ties) or normal draws; NaNs sprinkled in."""
    shape = tuple(draw(st.lists(st.integers(min_side, 4), min_size=min_dims, max_size=3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    v = rng.integers(-2, 3, shape).astype(np.float64) if ties else rng.standard_normal(shape)
    if nans and v.size and draw(st.booleans()):
        v[rng.random(shape) < 0.3] = np.nan
    return np.asarray(v)


def a_dim(draw, v, tuples=True, none=True):
    nd = max(v.ndim, 1)
    options = [st.integers(-nd, nd - 1)]
    if none:
        options.append(st.none())
    if tuples and v.ndim:
        options.append(st.lists(st.integers(0, v.ndim - 1), min_size=1, max_size=v.ndim,
                                unique=True).map(tuple))
    return draw(st.one_of(*options))


def _pair(v, grad=True):
    return (shrew.tensor(v, requires_grad=grad and v.dtype.kind == "f"),
            torch.tensor(v, requires_grad=grad and v.dtype.kind == "f"))


def _outputs(out):
    return list(out) if isinstance(out, tuple) else [out]


def compare(s_fn, t_fn, *values, grad=True, indices=True, rtol=1e-10, atol=1e-12):
    """Every output of s_fn equals t_fn's (shape, dtype kind, values with NaNs; integer
    outputs exactly unless indices=False), and so do the gradients of the float outputs."""
    pairs = [_pair(np.asarray(v), grad) for v in values]
    s_out = _outputs(s_fn(*[p[0] for p in pairs]))
    t_out = _outputs(t_fn(*[p[1] for p in pairs]))
    assert len(s_out) == len(t_out)
    for s, t in zip(s_out, t_out):
        assert s.shape == tuple(t.shape), (s.shape, t.shape)
        assert s.dtype.is_floating_point == t.dtype.is_floating_point, (s.dtype, t.dtype)
        if s.dtype.is_floating_point:
            np.testing.assert_allclose(s.numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
        elif indices or t.dtype == torch.bool:
            np.testing.assert_array_equal(s.numpy(), t.numpy())
    diff_outs = [(s, t) for s, t in zip(s_out, t_out) if t.requires_grad]
    if not grad or not diff_outs or any(np.isnan(np.asarray(v, dtype=float)).any()
                                        for v in values):
        return  # PyTorch's gradients at NaN inputs are artefacts of its formulas
    rng = np.random.default_rng(0)
    s_loss, t_loss = 0, 0
    for s, t in diff_outs:
        c = rng.standard_normal(s.shape)
        s_loss = s_loss + (s * shrew.tensor(c)).sum()
        t_loss = t_loss + (t * torch.tensor(c)).sum()
    s_store = s_loss.backward()
    t_loss.backward()
    for (s_leaf, t_leaf) in pairs:
        if t_leaf.grad is None:  # PyTorch's "no gradient", as for a count of nonzeros
            assert not s_store[s_leaf].numpy().any()
        else:
            np.testing.assert_allclose(s_store[s_leaf].numpy(), t_leaf.grad.numpy(),
                                       rtol=max(rtol, 1e-9), atol=atol)


def _tdim(dim):
    return {"dim": dim}


# -- reductions over dims ----------------------------------------------------------------------
OVER_DIMS = ["sum", "mean", "nansum", "nanmean", "amax", "amin", "logsumexp", "count_nonzero",
             "all", "any", "var", "std"]


@pytest.mark.parametrize("name", OVER_DIMS)
@given(data=st.data())
def test_reductions_over_dims(name, data):
    v = data.draw(arrays(nans=name.startswith("nan") or name in ("sum", "amax", "std")))
    dim = a_dim(data.draw, v)
    keep = {} if name == "count_nonzero" else {"keepdim": data.draw(st.booleans())}
    if name in ("amax", "amin") and (0 in v.shape):
        return  # torch and shrew both refuse; test_errors below
    if name == "logsumexp" and dim is None:
        dim = tuple(range(v.ndim))
    # ties break amax's gradient evenly in both
    if name in ("var", "std") and math.prod(v.shape) <= 1:
        return  # N - 1 <= 0: test_var_std_mean_with_correction
    compare(lambda x: getattr(shrew, name)(x, **_tdim(dim), **keep),
            lambda x: getattr(torch, name)(x, **_tdim(dim), **keep), v)


@given(data=st.data())
def test_var_std_mean_with_correction(data):
    v = data.draw(arrays(ties=False))
    dim = a_dim(data.draw, v)
    correction = data.draw(st.sampled_from([0, 1, 2, 0.5]))
    keepdim = data.draw(st.booleans())
    reduced = math.prod(v.shape) if dim is None else \
        math.prod(v.shape[d] for d in ((dim,) if isinstance(dim, int) else dim)) if v.ndim else 1
    # With N - correction <= 0 PyTorch's gradient divides by N - correction, its value by 0
    grad = reduced - correction > 0
    for name in ("var", "std", "var_mean", "std_mean"):
        compare(lambda x, n=name: getattr(shrew, n)(x, **_tdim(dim), correction=correction,
                                                     keepdim=keepdim),
                lambda x, n=name: getattr(torch, n)(x, **_tdim(dim), correction=correction,
                                                     keepdim=keepdim), v, grad=grad)
    compare(lambda x: x.var(unbiased=False), lambda x: x.var(unbiased=False), v)


def test_keyword_aliases_and_dtype():
    v = np.arange(12.0).reshape(3, 4)
    compare(lambda x: x.sum(axis=1, keepdims=True), lambda x: x.sum(axis=1, keepdims=True), v)
    compare(lambda x: shrew.mean(x, axis=(0, 1), dtype=shrew.float32),
            lambda x: torch.mean(x, axis=(0, 1), dtype=torch.float32), v, rtol=1e-6)
    i = np.arange(6).reshape(2, 3)
    compare(lambda x: x.sum(dtype=shrew.float64), lambda x: x.sum(dtype=torch.float64), i)
    compare(lambda x: x.mean(1, dtype=shrew.float64), lambda x: x.mean(1, dtype=torch.float64), i)
    compare(lambda x: x.prod(1), lambda x: x.prod(1), i.astype(np.int32))
    compare(lambda x: x.cumsum(0), lambda x: x.cumsum(0), i.astype(np.int32))
    compare(lambda x: x.cumsum(1), lambda x: x.cumsum(1), i.astype(bool))


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, math.inf, -math.inf, 0])
@given(data=st.data())
def test_vector_norm(ord, data):
    v = data.draw(arrays(ties=ord in (math.inf, -math.inf, 0), min_side=1))
    dim = a_dim(data.draw, v)
    keepdim = data.draw(st.booleans())
    compare(lambda x: shrew.linalg.vector_norm(x, ord, dim, keepdim),
            lambda x: torch.linalg.vector_norm(x, ord, dim, keepdim), v)


def test_norms():
    v = np.random.default_rng(1).standard_normal((3, 4))
    compare(lambda x: x.norm(), lambda x: x.norm(), v)
    compare(lambda x: x.norm(1, dim=1, keepdim=True), lambda x: x.norm(1, dim=1, keepdim=True), v)
    compare(lambda x: shrew.norm(x, "fro", dim=(0, 1)), lambda x: torch.norm(x, "fro", dim=(0, 1)),
            v)
    compare(lambda x: shrew.linalg.norm(x), lambda x: torch.linalg.norm(x), v)
    compare(lambda x: shrew.linalg.norm(x, "fro"), lambda x: torch.linalg.norm(x, "fro"), v)
    compare(lambda x: shrew.linalg.norm(x, 3, dim=1), lambda x: torch.linalg.norm(x, 3, dim=1), v)
    compare(lambda x: shrew.linalg.norm(x[0], math.inf),
            lambda x: torch.linalg.norm(x[0], math.inf), v)
    for p in (2, 0.5, -1, math.inf):  # at zero, the subgradient 0 (not nan) as PyTorch
        compare(lambda x, p=p: x.norm(p), lambda x, p=p: x.norm(p), np.array([0.0, 0.0, 2.0]))
        compare(lambda x, p=p: x.norm(p), lambda x, p=p: x.norm(p), np.zeros(3))


# -- along one dim -------------------------------------------------------------------------
ALONG = {
    "prod": (lambda m, x, d, k: m.prod(x, d, keepdim=k), True),
    "cumsum": (lambda m, x, d, k: m.cumsum(x, d), True),
    "cumprod": (lambda m, x, d, k: m.cumprod(x, d), True),
    "cummax": (lambda m, x, d, k: m.cummax(x, d), True),
    "cummin": (lambda m, x, d, k: m.cummin(x, d), True),
    "sort": (lambda m, x, d, k: m.sort(x, dim=d, descending=k, stable=True), True),
    "argsort": (lambda m, x, d, k: m.argsort(x, dim=d, descending=k, stable=True), True),
    "max": (lambda m, x, d, k: m.max(x, d, keepdim=k), True),
    "min": (lambda m, x, d, k: m.min(x, d, keepdim=k), True),
    "argmax": (lambda m, x, d, k: m.argmax(x, d, keepdim=k), True),
    "median": (lambda m, x, d, k: m.median(x, d, keepdim=k), False),
    "nanmedian": (lambda m, x, d, k: m.nanmedian(x, d, keepdim=k), False),
    "kthvalue": (lambda m, x, d, k: m.kthvalue(x, 1 + x.shape[d] // 2 if x.ndim else 1, d, k),
                 False),
    "topk": (lambda m, x, d, k: m.topk(x, (x.shape[d] + 1) // 2 if x.ndim else 1, d, largest=k),
             False),
    "mode": (lambda m, x, d, k: m.mode(x, d, keepdim=k), False),
    "diff": (lambda m, x, d, k: m.diff(x, 1 + k, d), True),
}
REFUSE_EMPTY = {"max", "min", "argmax", "median", "nanmedian", "kthvalue", "mode"}


@pytest.mark.parametrize("name", sorted(ALONG))
@given(data=st.data())
def test_along_one_dim(name, data):
    call, exact_indices = ALONG[name]
    ties = data.draw(st.booleans())
    nans = name not in ("mode",)  # torch's mode of NaNs is unspecified
    v = data.draw(arrays(ties=ties, nans=nans, min_dims=1 if name == "diff" else 0))
    dim = a_dim(data.draw, v, tuples=False, none=False)
    flag = data.draw(st.booleans())
    if v.ndim and v.shape[dim] == 0 and name in REFUSE_EMPTY:
        with pytest.raises(shrew.ShrewError, match=name):
            call(shrew, shrew.tensor(v), dim, flag)
        return
    # index-ambiguous ops: gradient and indices only where no ties can pick another element
    unambiguous = exact_indices or not (ties or np.isnan(v).any())
    compare(lambda x: call(shrew, x, dim, flag), lambda x: call(torch, x, dim, flag), v,
            grad=unambiguous, indices=unambiguous)
    if not exact_indices:  # then the indices at least point at the values
        out = call(shrew, shrew.tensor(v), dim, flag)
        d = dim % max(v.ndim, 1)
        idx = out.indices if flag or name in ("topk",) or not v.ndim else out.indices.unsqueeze(d)
        vals = out.values if flag or name in ("topk",) or not v.ndim else out.values.unsqueeze(d)
        got = shrew.tensor(v).gather(d, idx) if v.ndim else shrew.tensor(v)
        np.testing.assert_array_equal(got.numpy(), vals.numpy())


@given(v=arrays(nans=True))
def test_global_median_prod_and_extremes(v):
    if v.size:
        for name in ("median", "nanmedian", "max", "min"):
            compare(lambda x, n=name: getattr(x, n)(), lambda x, n=name: getattr(x, n)(), v)
    compare(lambda x: x.prod(), lambda x: x.prod(), v)
    compare(lambda x: shrew.aminmax(x) if v.size else x.sum(),
            lambda x: torch.aminmax(x) if v.size else x.sum(), v)


@given(a=arrays(nans=True, min_dims=1), b=arrays(nans=True, min_dims=1))
def test_max_min_of_two_tensors(a, b):
    b = b.reshape(-1)[: a.shape[-1]]
    if b.size != a.shape[-1]:
        b = np.resize(np.append(b, 1.0), a.shape[-1])
    for name in ("max", "min"):
        compare(lambda x, y, n=name: getattr(shrew, n)(x, y),
                lambda x, y, n=name: getattr(torch, n)(x, y), a, b)


@pytest.mark.parametrize("name", ["max", "min", "maximum", "minimum"])
def test_max_min_of_two_are_maximum_minimum_with_torchs_gradients(name):
    # One code path (ops/elementwise/composed.py's maximum / minimum); ties share the gradient, and
    # at a NaN (no order) both sides get it, as torch's formula gives.
    nan = float("nan")
    a = np.array([1.0, 2.0, nan, 3.0, nan, -0.0])
    b = np.array([1.0, 3.0, 1.0, 2.0, nan, 0.0])
    (x, tx), (y, ty) = _pair(a), _pair(b)
    out, t_out = getattr(shrew, name)(x, y), getattr(torch, name)(tx, ty)
    np.testing.assert_array_equal(out.numpy(), t_out.detach().numpy())
    c = np.arange(1.0, 7.0)
    grads = (out * shrew.tensor(c)).sum().backward()
    (t_out * torch.tensor(c)).sum().backward()
    np.testing.assert_array_equal(grads[x].numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(grads[y].numpy(), ty.grad.numpy())


def test_cumprod_and_prod_gradients_with_zeros_match_torch():
    v = np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [1.5, -2.0, 0.0, 4.0, 0.5]])
    for dim in (0, 1):
        compare(lambda x, d=dim: x.cumprod(d), lambda x, d=dim: x.cumprod(d), v)
        compare(lambda x, d=dim: x.prod(d), lambda x, d=dim: x.prod(d), v)


# -- unique, searching, counting -----------------------------------------------------------
@given(v=arrays(), flags=st.tuples(st.booleans(), st.booleans()))
def test_unique(v, flags):
    inverse, counts = flags
    compare(lambda x: shrew.unique(x, return_inverse=inverse, return_counts=counts),
            lambda x: torch.unique(x, return_inverse=inverse, return_counts=counts), v,
            grad=False)
    compare(lambda x: x.unique_consecutive(return_inverse=inverse, return_counts=counts),
            lambda x: x.unique_consecutive(return_inverse=inverse, return_counts=counts), v,
            grad=False)


@given(v=arrays(min_dims=1, min_side=1), flags=st.tuples(st.booleans(), st.booleans()),
       data=st.data())
def test_unique_slices_along_dim(v, flags, data):
    inverse, counts = flags
    dim = data.draw(st.integers(-v.ndim, v.ndim - 1))
    for name in ("unique", "unique_consecutive"):
        compare(lambda x, name=name: getattr(shrew, name)(x, dim=dim, return_inverse=inverse,
                                                          return_counts=counts),
                lambda x, name=name: getattr(torch, name)(x, dim=dim, return_inverse=inverse,
                                                          return_counts=counts), v, grad=False)


@given(seq=arrays(min_dims=1, min_side=1), v=arrays(), right=st.booleans())
def test_searchsorted_and_bucketize(seq, v, right):
    boundaries = np.sort(seq.reshape(-1))
    compare(lambda s, x: shrew.searchsorted(s, x, right=right),
            lambda s, x: torch.searchsorted(s, x, right=right), boundaries, v)
    compare(lambda s, x: shrew.bucketize(x, s, right=right, out_int32=True),
            lambda s, x: torch.bucketize(x, s, right=right, out_int32=True), boundaries, v)
    rows = np.sort(np.stack([seq.reshape(-1)] * 2), axis=-1)
    values = np.stack([boundaries[:3]] * 2) + 0.5
    compare(lambda s, x: shrew.searchsorted(s, x, side="right" if right else "left"),
            lambda s, x: torch.searchsorted(s, x, side="right" if right else "left"), rows, values)


@given(v=arrays(nans=False), bins=st.integers(1, 6), bounds=st.sampled_from([(0, 0), (-1, 1.5)]))
def test_histc_and_bincount(v, bins, bounds):
    compare(lambda x: x.histc(bins, *bounds), lambda x: x.histc(bins, *bounds), v, grad=False)
    ints = np.abs(v.reshape(-1)).astype(np.int64)
    compare(lambda x: x.bincount(minlength=2), lambda x: x.bincount(minlength=2), ints)
    for w in (v.reshape(-1) * 0.5, ints * 3):
        compare(lambda x, w: x.bincount(w), lambda x, w: x.bincount(w), ints, w, grad=False)


# -- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("call, match", [
    (lambda x: x.amax(0), "max: cannot reduce over a zero-size dim"),
    (lambda x: x.max(0), "argmax: cannot reduce over a zero-size dim"),
    (lambda x: x.median(0), "median: cannot reduce over a zero-size dim"),
    (lambda x: x.topk(2, 1), "topk: k=2 is out of range"),
    (lambda x: x.kthvalue(0, 1), "kthvalue: k=0 is out of range"),
    (lambda x: x.cumsum(2), "cumsum: dim 2 is out of range"),
    (lambda x: x.sort(-3), "sort: dim -3 is out of range"),
    (lambda x: x.var(0, True, correction=1), "var: give unbiased= or correction="),
    (lambda x: x.long().mean(), "mean: needs a floating-point tensor"),
    (lambda x: x.histc(3, 2, 1), "histc: max"),
    (lambda x: shrew.linalg.norm(x.reshape(0, 1, 1), "nuc"), "linalg.norm: .*must be 1-D or 2-D"),
    (lambda x: shrew.linalg.norm(x, "nuc", dim=0), "linalg.norm: ord='nuc' is a matrix norm"),
    (lambda x: shrew.bincount(x), "bincount: needs a 1-D integer tensor"),
    (lambda x: shrew.unique(x, dim=2), "unique: dim 2 is out of range"),
    (lambda x: shrew.unique(x.reshape(1, 0), dim=0), r"unique: input \[1, 0\] has zero-sized"),
    (lambda x: shrew.searchsorted(x, x, side="middle"), "searchsorted: side"),
])
def test_errors_name_the_op_and_culprit(call, match):
    with pytest.raises(shrew.ShrewError, match=match):
        call(shrew.zeros(0, 1))


def test_return_types_are_named_tuples():
    x = shrew.tensor([[3.0, 1.0, 2.0]])
    values, indices = x.max(1)
    assert x.max(1).values.tolist() == [3.0] and x.max(dim=1)[1].tolist() == [0]
    assert x.sort().indices.tolist() == [[1, 2, 0]] and values.tolist() == [3.0]
    assert indices.dtype is shrew.int64
    assert shrew.aminmax(x).min.item() == 1.0
    assert isinstance(x.topk(2), shrew.return_types.topk)
