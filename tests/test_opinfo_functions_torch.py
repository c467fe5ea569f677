"""The torch functions added for PyTorch's OpInfo entries (issue 30) against torch: values,
dtypes and gradients (autograd's against torch's, and float64 finite differences)."""
# ruff: noqa: B023  (the lambdas made in loops are called within their own iteration)
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
import shrew.nn.functional as F
from tests.support import broadcast_pairs, check_grad, seeds, shapes


def _pair(array, grad=False):
    """The same float64 values as a torch and a shrew tensor."""
    t = torch.tensor(array, requires_grad=grad)
    s = shrew.tensor(np.asarray(array), requires_grad=grad)
    return t, s


def _close(ours, theirs, atol=1e-10):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close(a, b, atol)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(np.asarray(ours.detach().numpy(), dtype=np.float64),
                               theirs.detach().double().numpy(), atol=atol, rtol=1e-6)


def _grads_match(fn_torch, fn_shrew, *arrays):
    """Values and the gradients of a weighted sum of the outputs agree with torch's."""
    pairs = [_pair(a, grad=True) for a in arrays]
    out_t = fn_torch(*[t for t, _ in pairs])
    out_s = fn_shrew(*[s for _, s in pairs])
    outs_t = out_t if isinstance(out_t, (tuple, list)) else (out_t,)
    outs_s = out_s if isinstance(out_s, (tuple, list)) else (out_s,)
    _close(outs_s, outs_t)
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(tuple(o.shape)) for o in outs_t]
    loss_t = sum((o * torch.tensor(w)).sum() for o, w in zip(outs_t, weights)
                 if o.requires_grad)
    grads_t = torch.autograd.grad(loss_t, [t for t, _ in pairs], allow_unused=True)
    loss_s = sum((o * shrew.tensor(w)).sum() for o, w in zip(outs_s, weights)
                 if o.requires_grad)
    store = loss_s.backward()
    for (_, s), g in zip(pairs, grads_t):
        ours = store.get(s)
        if g is None or ours is None:  # no path: the other side's gradient is all zeros
            other = g if ours is None else ours
            assert other is None or not np.any(other.numpy())
        else:
            np.testing.assert_allclose(ours.numpy(), g.numpy(), atol=1e-9, rtol=1e-7)


# -- elementwise ---------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(broadcast_pairs(), seeds)
def test_log_space_addition_matches_torch(pair, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(s) * 3 for s in pair)
    for name in ("logaddexp", "logaddexp2"):
        _grads_match(getattr(torch, name), getattr(shrew, name), a, b)


def test_log_space_addition_of_equal_and_infinite_values():
    a = np.array([1.0, 2.0])
    _grads_match(torch.logaddexp, shrew.logaddexp, a, a.copy())  # ties: half each way
    inf = np.array([-np.inf, np.inf, -np.inf, 3.0])
    other = np.array([-np.inf, np.inf, 1.0, np.inf])
    for name in ("logaddexp", "logaddexp2"):
        _close(getattr(shrew, name)(shrew.tensor(inf), shrew.tensor(other)),
               getattr(torch, name)(torch.tensor(inf), torch.tensor(other)))


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg", "sinc", "positive"])
def test_unary_functions_match_torch(name):
    x = np.array([[0.0, 1.5, -2.25], [3.0, -0.5, 1e-3]])
    _grads_match(getattr(torch, name), getattr(shrew, name), x)
    assert getattr(shrew.tensor(x), name)().shape == (2, 3)


def test_float_power_ldexp_heaviside_rsub_match_torch():
    x = np.array([0.5, 1.5, 2.0, 3.0])
    e = np.array([2.0, -1.0, 0.5, 3.0])
    _grads_match(torch.float_power, shrew.float_power, x, e)
    _grads_match(lambda a, b: torch.rsub(a, b, alpha=2), lambda a, b: shrew.rsub(a, b, alpha=2),
                 x, e)
    t, s = _pair(x)
    _close(shrew.ldexp(s, shrew.tensor([1, 2, -1, 0])), torch.ldexp(t, torch.tensor([1, 2, -1, 0])))
    v = np.array([0.0, 0.5, -1.0, 0.0])
    _close(shrew.heaviside(shrew.tensor(v), shrew.tensor(x)),
           torch.heaviside(torch.tensor(v), torch.tensor(x)))
    _close(shrew.tensor(x).__rdiv__(2.0), torch.tensor(x).__rdiv__(2.0))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frexp_and_nextafter_match_torch_bit_for_bit(dtype):
    x = np.array([0.0, 1.0, -3.5, 1e-40, np.inf, 0.75, 8.0, -1e-310, 5e-324, 65504.0])
    y = np.array([1.0, 0.0, -4.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, -np.inf])
    xt, yt = torch.tensor(x).to(getattr(torch, dtype)), torch.tensor(y).to(getattr(torch, dtype))
    xs, ys = shrew.tensor(xt.numpy()), shrew.tensor(yt.numpy())
    m, e = shrew.frexp(xs)
    mt, et = torch.frexp(xt)
    assert np.array_equal(m.numpy(), mt.numpy()) and np.array_equal(e.numpy(), et.numpy())
    assert e.dtype is shrew.int32
    assert np.array_equal(shrew.nextafter(xs, ys).numpy(), torch.nextafter(xt, yt).numpy())


def test_frexp_and_nextafter_gradients_match_torch():
    x = np.array([0.3, -1.7, 8.0, 5.0])
    _grads_match(lambda a: torch.frexp(a).mantissa, lambda a: shrew.frexp(a).mantissa, x)
    _grads_match(torch.nextafter, shrew.nextafter, x, x[::-1].copy())


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=8), seeds)
def test_gcd_lcm_match_torch(values, seed):
    rng = np.random.default_rng(seed)
    a = np.array(values, dtype=np.int64)
    b = rng.integers(-60, 60, size=a.shape)
    for name in ("gcd", "lcm"):
        ours = getattr(shrew, name)(shrew.tensor(a), shrew.tensor(b))
        assert np.array_equal(ours.numpy(), getattr(torch, name)(torch.tensor(a),
                                                                 torch.tensor(b)).numpy())


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8])
def test_bit_shifts_match_torch(dtype):
    info = np.iinfo(dtype)
    a = np.array([5, info.max, info.min, 1, 3, 0, 7], dtype=dtype)
    bits = info.bits
    b = np.array([0, 1, 1, bits - 1, bits, bits + 3, 2], dtype=dtype)
    for name in ("bitwise_left_shift", "bitwise_right_shift"):
        ours = getattr(shrew, name)(shrew.tensor(a), shrew.tensor(b))
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        assert np.array_equal(ours.numpy(), theirs.numpy()), name


def test_integer_functions_refuse_floats():
    with pytest.raises(shrew.DTypeError, match="gcd"):
        shrew.gcd(shrew.tensor([1.0]), shrew.tensor([2.0]))


# -- arrangements, copies and scatters -------------------------------------------------------
def test_arrangements_match_torch():
    x = np.arange(24.0).reshape(2, 3, 4)
    for k in (-1, 0, 1, 2, 3):
        _grads_match(lambda a: torch.rot90(a, k, (0, 2)), lambda a: shrew.rot90(a, k, (0, 2)), x)
    _grads_match(lambda a: torch.hsplit(a, 3), lambda a: shrew.hsplit(a, 3), x)
    _grads_match(lambda a: torch.vsplit(a, [1]), lambda a: shrew.vsplit(a, [1]), x)
    _grads_match(lambda a: torch.dsplit(a, 2), lambda a: shrew.dsplit(a, 2), x)
    _grads_match(lambda a: torch.split_with_sizes(a, [1, 2], 1),
                 lambda a: shrew.split_with_sizes(a, [1, 2], 1), x)
    x = x[0]
    _grads_match(lambda a: a.sum_to_size(3, 1), lambda a: a.sum_to_size(3, 1), x)
    _grads_match(lambda a, b: torch.block_diag(a, b, a[0, 0]),
                 lambda a, b: shrew.block_diag(a, b, a[0, 0]), x, x[1:, :2])
    _grads_match(lambda a: torch.diagflat(a, -1), lambda a: shrew.diagflat(a, -1), x[:2])
    _grads_match(lambda a, b: torch.cartesian_prod(a, b),
                 lambda a, b: shrew.cartesian_prod(a, b), x[0], x[1, :2])
    for r, rep in ((2, False), (3, True), (5, False)):
        _grads_match(lambda a: torch.combinations(a, r, rep),
                     lambda a: shrew.combinations(a, r, rep), x[0])


def test_unravel_index_matches_torch():
    idx = np.array([[0, 5], [23, -1]])
    ours = shrew.unravel_index(shrew.tensor(idx), (2, 3, 4))
    theirs = torch.unravel_index(torch.tensor(idx), (2, 3, 4))
    for a, b in zip(ours, theirs):
        assert np.array_equal(a.numpy(), b.numpy())
    with pytest.raises(shrew.ArgumentError, match="out of bounds"):
        shrew.unravel_index(shrew.tensor([24]), (2, 3, 4))


@pytest.mark.parametrize("name, args", [
    ("expand_copy", ((2, 3, 4),)), ("diagonal_copy", (0, 1, 2)), ("alias_copy", ()),
    ("as_strided_copy", ((2, 2), (1, 3))), ("narrow_copy", (2, 1, 2)), ("view_copy", ((12,),)),
    ("permute_copy", ((2, 0, 1),)), ("squeeze_copy", ()), ("unsqueeze_copy", (1,)),
    ("transpose_copy", (0, 2)), ("unbind_copy", (2,)), ("unfold_copy", (2, 2, 1)),
    ("split_with_sizes_copy", ([1, 3], 2))])
def test_copies_match_torch_and_own_their_memory(name, args):
    x = np.arange(12.0).reshape(1, 3, 4) if name != "expand_copy" else np.arange(4.0)
    if name == "t_copy":
        x = x[0]
    _grads_match(lambda a: getattr(torch, name)(a, *args),
                 lambda a: getattr(shrew, name)(a, *args), x)
    s = shrew.tensor(x)
    out = getattr(shrew, name)(s, *args)
    first = out[0] if isinstance(out, (tuple, list)) else out
    first.fill_(-1.0)
    assert np.array_equal(s.numpy(), x)  # not a view


def test_scatters_match_torch():
    x = np.arange(24.0).reshape(2, 3, 4)
    _grads_match(lambda a, s: torch.diagonal_scatter(a, s, 1, 1, 2),
                 lambda a, s: shrew.diagonal_scatter(a, s, 1, 1, 2), x, np.ones((2, 3)))
    _grads_match(lambda a, s: torch.select_scatter(a, s, 1, -1),
                 lambda a, s: shrew.select_scatter(a, s, 1, -1), x, np.ones((2, 4)))
    _grads_match(lambda a, s: torch.slice_scatter(a, s, 2, 1, None, 2),
                 lambda a, s: shrew.slice_scatter(a, s, 2, 1, None, 2), x, np.ones((2, 3, 2)))
    with pytest.raises(shrew.ShapeError, match="select_scatter"):
        shrew.select_scatter(shrew.tensor(x), shrew.ones(3), 1, 0)


def test_as_strided_scatter_values_and_src_gradient_match_torch():
    x, src = np.arange(9.0).reshape(3, 3), np.ones((2, 2))
    t, s = _pair(x)
    _close(shrew.as_strided_scatter(s, shrew.tensor(src), (2, 2), (1, 2), 1),
           torch.as_strided_scatter(t, torch.tensor(src), (2, 2), (1, 2), 1))
    check_grad(lambda a, b: shrew.as_strided_scatter(a, b, (2, 2), (1, 2), 1),
               shrew.tensor(x, requires_grad=True), shrew.tensor(src, requires_grad=True))


# -- statistics ------------------------------------------------------------------------------
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantiles_match_torch(interpolation):
    x = np.random.default_rng(1).standard_normal((3, 5))
    q = np.array([0.0, 0.25, 0.5, 0.9, 1.0])
    for dim, keepdim in ((None, False), (1, True), (0, False)):
        _grads_match(lambda a: torch.quantile(a, torch.tensor(q), dim, keepdim,
                                              interpolation=interpolation),
                     lambda a: shrew.quantile(a, shrew.tensor(q), dim, keepdim,
                                              interpolation=interpolation), x)
    x[1, 2] = np.nan
    t, s = _pair(x)
    _close(shrew.quantile(s, 0.3, 1, interpolation=interpolation),
           torch.quantile(t, 0.3, 1, interpolation=interpolation))
    _close(shrew.nanquantile(s, 0.3, 1, interpolation=interpolation),
           torch.nanquantile(t, 0.3, 1, interpolation=interpolation))


def test_cov_corrcoef_match_torch():
    x = np.random.default_rng(2).standard_normal((3, 6))
    fw, aw = torch.tensor([1, 2, 1, 3, 1, 2]), np.random.default_rng(3).random(6)
    _grads_match(lambda a, w: torch.cov(a, correction=0, fweights=fw, aweights=w),
                 lambda a, w: shrew.cov(a, correction=0, fweights=shrew.tensor(fw.numpy()),
                                        aweights=w), x, aw)
    _grads_match(torch.cov, shrew.cov, x)
    _grads_match(torch.corrcoef, shrew.corrcoef, x)
    _grads_match(torch.cov, shrew.cov, x[0])


def test_histograms_match_torch():
    x = np.random.default_rng(4).standard_normal((50, 2))
    w = np.random.default_rng(5).random(50)
    t, s = _pair(x)
    for kwargs in ({}, {"range": (-1.0, 1.0)}, {"density": True}):
        _close(shrew.histogram(s[:, 0], 7, **kwargs), torch.histogram(t[:, 0], 7, **kwargs))
    edges = np.array([-2.0, 0.0, 0.5, 3.0])
    _close(shrew.histogram(s[:, 0], shrew.tensor(edges), weight=shrew.tensor(w)),
           torch.histogram(t[:, 0], torch.tensor(edges), weight=torch.tensor(w)))
    ours = shrew.histogramdd(s, [3, 4], density=True)
    theirs = torch.histogramdd(t, [3, 4], density=True)
    _close(ours.hist, theirs.hist)
    _close(ours.bin_edges, theirs.bin_edges)


def test_isin_matches_torch():
    a, b = np.array([[1.0, 2.0], [3.0, 7.0]]), np.array([7.0, 1.0, 1.0])
    for invert in (False, True):
        ours = shrew.isin(shrew.tensor(a), shrew.tensor(b), invert=invert)
        assert np.array_equal(ours.numpy(), torch.isin(torch.tensor(a), torch.tensor(b),
                                                       invert=invert).numpy())
    assert bool(shrew.isin(shrew.tensor(a), 3.0)[1, 0])


# -- calculus --------------------------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(shapes(1, 3, 2, 5), seeds)
def test_trapezoid_rules_match_torch(shape, seed):
    y = np.random.default_rng(seed).standard_normal(shape)
    x = np.sort(np.random.default_rng(seed + 1).random(shape[-1]))
    _grads_match(torch.trapezoid, shrew.trapezoid, y)
    _grads_match(lambda a, b: torch.trapezoid(a, b), lambda a, b: shrew.trapezoid(a, b), y, x)
    _grads_match(lambda a: torch.trapz(a, dx=0.5, dim=0), lambda a: shrew.trapz(a, dx=0.5, dim=0),
                 y)
    _grads_match(lambda a, b: torch.cumulative_trapezoid(a, b),
                 lambda a, b: shrew.cumulative_trapezoid(a, b), y, x)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_torch(edge_order):
    y = np.random.default_rng(6).standard_normal((4, 5))
    coords = np.cumsum(np.random.default_rng(7).random(5)) + 0.1
    _grads_match(lambda a: torch.gradient(a, edge_order=edge_order),
                 lambda a: shrew.gradient(a, edge_order=edge_order), y)
    _grads_match(lambda a: torch.gradient(a, spacing=(torch.tensor(coords),), dim=1,
                                          edge_order=edge_order),
                 lambda a: shrew.gradient(a, spacing=(shrew.tensor(coords),), dim=1,
                                          edge_order=edge_order), y)
    _grads_match(lambda a: torch.gradient(a, spacing=2.0, dim=(0, 1), edge_order=edge_order),
                 lambda a: shrew.gradient(a, spacing=2.0, dim=(0, 1), edge_order=edge_order), y)


# -- reductions by index, norms, factories -----------------------------------------------------
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_torch(reduce, include_self):
    x = np.random.default_rng(8).standard_normal((4, 3))
    src = np.random.default_rng(9).standard_normal((5, 3))
    index = torch.tensor([0, 2, 0, 3, 2])
    _grads_match(lambda a, b: a.index_reduce(0, index, b, reduce, include_self=include_self),
                 lambda a, b: a.index_reduce(0, shrew.tensor(index.numpy()), b, reduce,
                                             include_self=include_self), x, src)


def test_dist_and_renorm_match_torch():
    a = np.random.default_rng(10).standard_normal((3, 4))
    for p in (1, 2, 3.5, float("inf")):
        _grads_match(lambda x, y: torch.dist(x, y, p), lambda x, y: shrew.dist(x, y, p), a, a[:1])
    _grads_match(lambda x: torch.renorm(x, 2, 0, 1.5), lambda x: shrew.renorm(x, 2, 0, 1.5), a)


def test_strided_factories_match_torch():
    t = torch.empty_strided((2, 3), (1, 2))
    s = shrew.empty_strided((2, 3), (1, 2))
    assert s.shape == (2, 3) and s.stride() == t.stride()
    p = shrew.empty_permuted((2, 3, 4), (0, 2, 1))
    assert p.stride() == torch.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    assert shrew.scalar_tensor(3).dtype is shrew.float32 and shrew.scalar_tensor(3).item() == 3
    f = shrew.fill(shrew.ones(2, 2), 5.0)
    assert f.numpy().tolist() == [[5.0, 5.0], [5.0, 5.0]]
    assert shrew.ones(2).new_empty_strided((2, 2), (2, 1)).dtype is shrew.float32


def test_resize_keeps_memory_order_and_refuses_what_torch_refuses():
    x = shrew.arange(6.0)
    x.resize_(2, 2)
    assert x.numpy().tolist() == [[0.0, 1.0], [2.0, 3.0]] and x._version == 1
    y = shrew.arange(3.0)
    shrew.resize_as_(y, shrew.ones(2, 3))
    assert y.numpy().tolist() == [[0.0, 1.0, 2.0], [0.0, 0.0, 0.0]]
    with pytest.raises(shrew.StateError, match="requires grad"):
        shrew.ones(2, requires_grad=True).resize_(4)
    with pytest.raises(shrew.StateError, match="view"):
        shrew.ones(4)[:2].resize_(1)


def test_tensor_properties_h_and_mh():
    x = np.random.default_rng(11).standard_normal((2, 3, 4))
    _close(shrew.tensor(x[0]).H, torch.tensor(x[0]).H)
    _close(shrew.tensor(x).mH, torch.tensor(x).mH)
    with pytest.raises(shrew.ShapeError, match="matrices"):
        _ = shrew.tensor(x).H


# -- linear algebra ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (5, 3), (3, 5)])
def test_lu_family_matches_torch(shape):
    a = np.random.default_rng(12).standard_normal(shape)
    _grads_match(lambda m: torch.linalg.lu(m), lambda m: shrew.linalg.lu(m), a)
    _grads_match(lambda m: torch.linalg.lu_factor(m), lambda m: shrew.linalg.lu_factor(m), a)
    t, s = _pair(a)
    lu_t, piv_t = torch.linalg.lu_factor(t)
    lu_s, piv_s = shrew.linalg.lu_factor(s)
    assert piv_s.dtype is shrew.int32 and np.array_equal(piv_s.numpy(), piv_t.numpy())
    _close(shrew.lu_unpack(lu_s, piv_s), torch.lu_unpack(lu_t, piv_t))


@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False),
                                           (False, True)])
def test_lu_solve_matches_torch(left, adjoint):
    a = np.random.default_rng(13).standard_normal((3, 3))
    b = np.random.default_rng(14).standard_normal((3, 2) if left else (2, 3))
    _grads_match(lambda m, r: torch.linalg.lu_solve(*torch.linalg.lu_factor(m), r, left=left,
                                                    adjoint=adjoint),
                 lambda m, r: shrew.linalg.lu_solve(*shrew.linalg.lu_factor(m), r, left=left,
                                                    adjoint=adjoint), a, b)


def test_lu_of_a_singular_matrix_reports_info():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    t, s = _pair(a)
    assert shrew.linalg.lu_factor_ex(s).info.item() == torch.linalg.lu_factor_ex(t).info.item()


def test_qr_in_lapack_form_matches_torch():
    a = np.random.default_rng(15).standard_normal((5, 3))
    t, s = _pair(a)
    _close(shrew.geqrf(s), torch.geqrf(t))  # torch has no derivative for geqrf: ours is checked
    check_grad(lambda m: shrew.geqrf(m).a, shrew.tensor(a, requires_grad=True))
    qa, tau = torch.geqrf(t)
    c = np.random.default_rng(16).standard_normal((5, 2))
    for transpose in (False, True):
        _close(shrew.ormqr(shrew.tensor(qa.numpy()), shrew.tensor(tau.numpy()), shrew.tensor(c),
                           transpose=transpose),
               torch.ormqr(qa, tau, torch.tensor(c), transpose=transpose))
    _grads_match(torch.linalg.householder_product, shrew.linalg.householder_product,
                 qa.numpy(), tau.numpy())


@pytest.mark.parametrize("scale", [0.1, 1.0, 30.0])
def test_matrix_exp_matches_torch(scale):
    a = np.random.default_rng(17).standard_normal((2, 4, 4)) * scale
    _grads_match(torch.linalg.matrix_exp, shrew.linalg.matrix_exp, a)
    check_grad(shrew.matrix_exp, shrew.tensor(a[0] * 0.3, requires_grad=True))


def test_triangular_solve_and_low_rank_svd_match_torch():
    a = np.triu(np.random.default_rng(18).standard_normal((3, 3))) + 3 * np.eye(3)
    b = np.random.default_rng(19).standard_normal((3, 2))
    for upper, transpose in ((True, False), (True, True)):
        _grads_match(lambda m, r: torch.triangular_solve(r, m, upper, transpose),
                     lambda m, r: shrew.triangular_solve(r, m, upper, transpose), a, b)
    m = np.random.default_rng(20).standard_normal((6, 4))
    u, s, v = shrew.svd_lowrank(shrew.tensor(m), q=2)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(m)[1][:2])
    assert u.shape == (6, 2) and v.shape == (4, 2)
    _, s_pca, _ = shrew.pca_lowrank(shrew.tensor(m))
    np.testing.assert_allclose(s_pca.numpy(), torch.pca_lowrank(torch.tensor(m))[1].numpy(),
                               rtol=1e-6)


# -- torch.masked ---------------------------------------------------------------------------
@pytest.mark.parametrize("name, kwargs", [
    ("sum", {"dim": 1}), ("prod", {"dim": 1}), ("amax", {"dim": 0}), ("amin", {}),
    ("mean", {"dim": 1}), ("norm", {"ord": 2.0, "dim": 1}), ("var", {"dim": 1}),
    ("std", {"dim": 0, "unbiased": False}), ("logsumexp", {"dim": 1}),
    ("softmax", {"dim": 1}), ("log_softmax", {"dim": 1}), ("softmin", {"dim": 0}),
    ("normalize", {"ord": 2.0, "dim": 1}), ("cumsum", {"dim": 1}), ("cumprod", {"dim": 1}),
    ("median", {"dim": 1}), ("argmax", {"dim": 1}), ("argmin", {"dim": 0})])
def test_masked_functions_match_torch(name, kwargs):
    x = np.random.default_rng(21).standard_normal((3, 4))
    mask = np.array([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1]], dtype=bool)
    if name in ("argmax", "argmin", "median", "var", "std", "mean"):
        mask[1, 1] = True  # torch's answer for an all-masked row is NaN or undefined
    fn_t = getattr(torch.masked, name)
    fn_s = getattr(shrew.masked, name)
    if name in ("argmax", "argmin"):
        t, s = _pair(x)
        assert np.array_equal(fn_s(s, mask=shrew.tensor(mask), **kwargs).numpy(),
                              fn_t(t, mask=torch.tensor(mask), **kwargs).numpy())
        return
    _grads_match(lambda a: fn_t(a, mask=torch.tensor(mask), **kwargs),
                 lambda a: fn_s(a, mask=shrew.tensor(mask), **kwargs), x)


# -- nn.functional -----------------------------------------------------------------------------
def test_new_functionals_match_torch():
    rng = np.random.default_rng(22)
    x = rng.standard_normal((5, 3))
    _grads_match(torch.nn.functional.pdist, F.pdist, x)
    _grads_match(lambda a: torch.nn.functional.pdist(a, 1.5), lambda a: F.pdist(a, 1.5), x)
    img = rng.standard_normal((2, 6, 2, 2))
    _grads_match(lambda a: torch.nn.functional.channel_shuffle(a, 3),
                 lambda a: F.channel_shuffle(a, 3), img)
    a, b, w, bias = (rng.standard_normal(s) for s in ((4, 3), (4, 2), (5, 3, 2), (5,)))
    _grads_match(torch.nn.functional.bilinear, F.bilinear, a, b, w, bias)
    _grads_match(lambda v: torch.nn.functional.rrelu(v, 0.1, 0.3),
                 lambda v: F.rrelu(v, 0.1, 0.3), x)
    target = np.array([[2, 0, -1], [1, 2, 0], [-1, 1, 1], [2, -1, 0], [0, 1, 2]])
    for reduction in ("none", "mean", "sum"):
        _grads_match(lambda v: torch.nn.functional.multilabel_margin_loss(
                         v, torch.tensor(target), reduction=reduction),
                     lambda v: F.multilabel_margin_loss(v, shrew.tensor(target),
                                                        reduction=reduction), x)
    anchor, pos, neg = (rng.standard_normal((4, 3)) for _ in range(3))
    for swap in (False, True):
        _grads_match(lambda p, q, r: torch.nn.functional.triplet_margin_with_distance_loss(
                         p, q, r, swap=swap),
                     lambda p, q, r: F.triplet_margin_with_distance_loss(p, q, r, swap=swap),
                     anchor, pos, neg)
    _grads_match(lambda p, q, r: torch.nn.functional.triplet_margin_with_distance_loss(
                     p, q, r, distance_function=lambda u, v: (u - v).abs().sum(-1)),
                 lambda p, q, r: F.triplet_margin_with_distance_loss(
                     p, q, r, distance_function=lambda u, v: (u - v).abs().sum(-1)),
                 anchor, pos, neg)


def test_rrelu_in_training_draws_slopes_in_range():
    x = -shrew.ones(1000)
    y = F.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert np.all((y <= -0.1) & (y >= -0.3)) and y.std() > 0.03


@pytest.mark.parametrize("output", [{"output_size": (4, 3)}, {"output_ratio": (0.5, 0.5)}])
def test_fractional_max_pool2d_matches_torch_given_the_samples(output):
    rng = np.random.default_rng(23)
    x, u = rng.standard_normal((2, 3, 8, 7)), rng.random((2, 3, 2))
    _grads_match(lambda a: torch.nn.functional.fractional_max_pool2d(
                     a, 2, return_indices=True, _random_samples=torch.tensor(u), **output),
                 lambda a: F.fractional_max_pool2d(
                     a, 2, return_indices=True, _random_samples=shrew.tensor(u), **output), x)


def test_multi_head_attention_forward_matches_torch():
    rng = np.random.default_rng(24)
    e, h = 4, 2
    q, k = rng.standard_normal((3, 2, e)), rng.standard_normal((5, 2, e))
    w_in, b_in = rng.standard_normal((3 * e, e)), rng.standard_normal(3 * e)
    w_out, b_out = rng.standard_normal((e, e)), rng.standard_normal(e)
    bias_k, bias_v = rng.standard_normal((1, 1, e)), rng.standard_normal((1, 1, e))
    mask = np.zeros((3, 5))
    mask[0, 1] = -np.inf

    def call(mod, *args):
        query, key, wi, bi, wo, bo, bk, bv = args
        return mod.multi_head_attention_forward(
            query, key, key, e, h, wi, bi, bk, bv, True, 0.0, wo, bo, training=False,
            attn_mask=(torch if mod is torch.nn.functional else shrew).tensor(mask))

    _grads_match(lambda *a: call(torch.nn.functional, *a), lambda *a: call(F, *a),
                 q, k, w_in, b_in, w_out, b_out, bias_k, bias_v)


# -- native norms, padding -------------------------------------------------------------------
def test_native_norms_and_constant_pad_match_torch():
    rng = np.random.default_rng(25)
    x, w, b = rng.standard_normal((2, 4, 3)), rng.standard_normal(4), rng.standard_normal(4)
    _grads_match(lambda a, c, d: torch.native_layer_norm(a, (4, 3), c[:3].repeat(4).view(4, 3),
                                                         None, 1e-5),
                 lambda a, c, d: shrew.native_layer_norm(a, (4, 3),
                                                         c[:3].repeat(4).reshape(4, 3), None,
                                                         1e-5), x, w, b)
    _grads_match(lambda a, c, d: torch.native_group_norm(a, c, d, 2, 4, 3, 2, 1e-5),
                 lambda a, c, d: shrew.native_group_norm(a, c, d, 2, 4, 3, 2, 1e-5), x, w, b)
    rm_t, rv_t = torch.zeros(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64)
    rm_s, rv_s = shrew.zeros(4, dtype="float64"), shrew.ones(4, dtype="float64")
    _grads_match(lambda a, c, d: torch.native_batch_norm(a, c, d, rm_t, rv_t, True, 0.1, 1e-5),
                 lambda a, c, d: shrew.native_batch_norm(a, c, d, rm_s, rv_s, True, 0.1, 1e-5),
                 x, w, b)
    _close(rm_s, rm_t)
    _close(rv_s, rv_t)
    _grads_match(lambda a: torch.constant_pad_nd(a, (1, 2, 0, -1), 2.5),
                 lambda a: shrew.constant_pad_nd(a, (1, 2, 0, -1), 2.5), x)


def test_linear_cross_entropy_and_upsample_aliases_match_torch():
    rng = np.random.default_rng(26)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((4, 2, 3))
    b = rng.standard_normal((4, 2))
    target = torch.tensor(rng.integers(0, 4, (5, 2)))
    for reduction in ("mean", "none"):
        _grads_match(lambda a, c, d: torch.nn.functional.linear_cross_entropy(
                         a, c, target, linear_bias=d, reduction=reduction),
                     lambda a, c, d: F.linear_cross_entropy(
                         a, c, shrew.tensor(target.numpy()), linear_bias=d, reduction=reduction),
                     x, w, b)
    img = rng.standard_normal((1, 2, 3, 3))
    _grads_match(lambda a: torch.nn.functional.upsample_bilinear(a, scale_factor=2),
                 lambda a: F.upsample_bilinear(a, scale_factor=2), img)
    _grads_match(lambda a: torch.nn.functional.upsample_nearest(a, size=(5, 4)),
                 lambda a: F.upsample_nearest(a, size=(5, 4)), img)


def test_nonzero_static_and_isreal_match_torch():
    x = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])
    for size, fill in ((2, -1), (5, 7), (0, -1)):
        assert np.array_equal(shrew.nonzero_static(shrew.tensor(x), size=size, fill_value=fill)
                              .numpy(),
                              torch.nonzero_static(torch.tensor(x), size=size,
                                                   fill_value=fill).numpy())
    y = np.array([np.nan, 1.0, -np.inf])
    assert np.array_equal(shrew.isreal(shrew.tensor(y)).numpy(), torch.isreal(torch.tensor(y)))
