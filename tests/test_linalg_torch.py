"""shrew.linalg's decompositions and solvers (ops/linalg/decompositions.py, ops/linalg/composed.py)
against PyTorch: values, gradients (against torch.autograd and float64 finite differences),
second derivatives, and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew.testing import gradcheck


def _spd(m, x):
    """A symmetric positive-definite batch from any square x."""
    return x @ x.mT + x.shape[-1] * m.eye(x.shape[-1], dtype=x.dtype)


def _sym(x):
    return x + x.mT


# Every case maps (module, square batch A [2, 4, 4], tall B [3, 5, 3], right-hand side C
# [2, 4, 2]) to a tensor whose value does not depend on the sign (gauge) choices of
# singular vectors and eigenvectors, so both libraries must agree on it.
CASES = {
    "inv": lambda m, a, b, c: m.linalg.inv(a),
    "inverse": lambda m, a, b, c: m.inverse(a),
    "inv_ex": lambda m, a, b, c: m.linalg.inv_ex(a).inverse,
    "det": lambda m, a, b, c: m.linalg.det(a),
    "Tensor.det": lambda m, a, b, c: a.det(),
    "slogdet": lambda m, a, b, c: m.linalg.slogdet(a).logabsdet,
    "slogdet_sign": lambda m, a, b, c: m.linalg.slogdet(a).sign,
    "logdet": lambda m, a, b, c: m.logdet(_spd(m, a)),
    "solve": lambda m, a, b, c: m.linalg.solve(a, c),
    "solve_vector": lambda m, a, b, c: m.linalg.solve(a, c[..., 0]),
    "solve_right": lambda m, a, b, c: m.linalg.solve(a, c.mT, left=False),
    "solve_broadcast": lambda m, a, b, c: m.linalg.solve(a[0], c),
    "cholesky": lambda m, a, b, c: m.linalg.cholesky(_spd(m, a)),
    "cholesky_upper": lambda m, a, b, c: m.linalg.cholesky(_spd(m, a), upper=True),
    "torch.cholesky": lambda m, a, b, c: m.cholesky(_spd(m, a)),
    "cholesky_solve": lambda m, a, b, c: m.cholesky_solve(c, m.linalg.cholesky(_spd(m, a))),
    # B [4, 4] beside L [2, 4, 4]: a matrix broadcast over L's batch, never vectors
    "cholesky_solve_square_b": lambda m, a, b, c: m.cholesky_solve(
        a[0], m.linalg.cholesky(_spd(m, a), upper=True), upper=True),
    "cholesky_solve_batched_b": lambda m, a, b, c: m.cholesky_solve(
        c.unsqueeze(1), m.linalg.cholesky(_spd(m, a[0]))),
    "cholesky_inverse": lambda m, a, b, c: m.cholesky_inverse(m.linalg.cholesky(_spd(m, a))),
    "qr_q": lambda m, a, b, c: m.linalg.qr(b).Q,
    "qr_r": lambda m, a, b, c: m.linalg.qr(b).R,
    "qr_wide": lambda m, a, b, c: m.linalg.qr(b.mT).Q.abs() + m.linalg.qr(b.mT).R.sum(),
    "qr_complete_wide": lambda m, a, b, c: m.linalg.qr(b.mT, mode="complete").R,
    "svdvals": lambda m, a, b, c: m.linalg.svdvals(b),
    "svd_s": lambda m, a, b, c: m.linalg.svd(b, full_matrices=False).S,
    "svd_u": lambda m, a, b, c: m.linalg.svd(b, full_matrices=False).U.square(),
    "svd_vh": lambda m, a, b, c: m.linalg.svd(b, full_matrices=False).Vh.square(),
    "svd_wide_u": lambda m, a, b, c: m.linalg.svd(b.mT, full_matrices=False).U.square(),
    "svd_wide_vh": lambda m, a, b, c: m.linalg.svd(b.mT, full_matrices=False).Vh.square(),
    "svd_product": lambda m, a, b, c: (lambda u, s, vh: (u[..., :1] * vh[..., :1, :]))(
        *m.linalg.svd(b, full_matrices=True)),
    "eigh_values": lambda m, a, b, c: m.linalg.eigh(_sym(a)).eigenvalues,
    "eigh_vectors": lambda m, a, b, c: m.linalg.eigh(_sym(a)).eigenvectors.square(),
    "eigh_upper": lambda m, a, b, c: m.linalg.eigh(_sym(a), UPLO="U").eigenvectors.square(),
    "eigvalsh": lambda m, a, b, c: m.linalg.eigvalsh(_sym(a)),
    "pinv": lambda m, a, b, c: m.linalg.pinv(b),
    "pinv_wide": lambda m, a, b, c: m.linalg.pinv(b.mT),
    "pinv_hermitian": lambda m, a, b, c: m.linalg.pinv(_sym(a), hermitian=True),
    "pinverse": lambda m, a, b, c: m.pinverse(a),
    "lstsq": lambda m, a, b, c: m.linalg.lstsq(b, b[..., :2] + 1).solution,
    "matrix_norm_fro": lambda m, a, b, c: m.linalg.matrix_norm(b),
    "matrix_norm_nuc": lambda m, a, b, c: m.linalg.matrix_norm(b, "nuc"),
    "matrix_norm_2": lambda m, a, b, c: m.linalg.matrix_norm(b, 2, keepdim=True),
    "matrix_norm_-2": lambda m, a, b, c: m.linalg.matrix_norm(b, -2),
    "matrix_norm_1": lambda m, a, b, c: m.linalg.matrix_norm(b, 1),
    "matrix_norm_-1": lambda m, a, b, c: m.linalg.matrix_norm(b, -1),
    "matrix_norm_inf": lambda m, a, b, c: m.linalg.matrix_norm(b, math.inf, dim=(0, 2)),
    "matrix_norm_-inf": lambda m, a, b, c: m.linalg.matrix_norm(b, -math.inf, keepdim=True),
    "matrix_norm_nuc_dims": lambda m, a, b, c: m.linalg.matrix_norm(b, "nuc", dim=(2, 0)),
    "norm_2": lambda m, a, b, c: m.linalg.norm(a[0], 2),
    "norm_nuc_dims": lambda m, a, b, c: m.linalg.norm(b, "nuc", dim=(-2, -1)),
    "cond": lambda m, a, b, c: m.linalg.cond(b),
    "cond_1": lambda m, a, b, c: m.linalg.cond(a, 1),
    "matrix_power_-3": lambda m, a, b, c: m.linalg.matrix_power(a, -3),
    "Tensor.matrix_power_-1": lambda m, a, b, c: a.matrix_power(-1),
    "solve_triangular": lambda m, a, b, c: m.linalg.solve_triangular(
        a + 4 * m.eye(4, dtype=a.dtype), c, upper=True),
    "solve_triangular_unit_right": lambda m, a, b, c: m.linalg.solve_triangular(
        a, c.mT, upper=False, left=False, unitriangular=True),
    "vecdot": lambda m, a, b, c: m.linalg.vecdot(a, c[..., :1].mT, dim=-1),
    "linalg.diagonal": lambda m, a, b, c: m.linalg.diagonal(b, offset=-1),
    "vander": lambda m, a, b, c: m.linalg.vander(c, N=4),
    "tensorinv": lambda m, a, b, c: m.linalg.tensorinv(a[0].reshape(2, 2, 2, 2), ind=2),
    "tensorsolve": lambda m, a, b, c: m.linalg.tensorsolve(a[0].reshape(2, 2, 4),
                                                           c[0, :, 0].reshape(2, 2)),
    "cdist": lambda m, a, b, c: m.cdist(b, b[:, :2] + 1),
    "cdist_p1": lambda m, a, b, c: m.cdist(a, c.mT @ a, p=1.0),
    "cdist_inf": lambda m, a, b, c: m.cdist(a, a[:, 1:] * 2, p=math.inf),
    "cdist_p3_mm": lambda m, a, b, c: m.cdist(b, b, p=3.0, compute_mode="use_mm_for_euclid_dist"),
    "cdist_zero_distance": lambda m, a, b, c: m.cdist(b, b),
}
# torch's own backward of cond(p=1) fails (it writes in place into inv_ex's saved output):
# gradients checked against finite differences alone.
NO_TORCH_GRADIENT = {"cond_1"}


def _inputs(lib, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((2, 4, 4)) + 2 * np.eye(4)  # well away from singular
    b = rng.standard_normal((3, 5, 3))
    c = rng.standard_normal((2, 4, 2))
    if lib is torch:
        return [torch.tensor(v, requires_grad=True) for v in (a, b, c)]
    return [shrew.tensor(v, requires_grad=True) for v in (a, b, c)]


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_match_torch(name):
    fn = CASES[name]
    ours, theirs = _inputs(shrew), _inputs(torch)
    out, ref = fn(shrew, *ours), fn(torch, *theirs)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-7,
                               atol=1e-9)
    if name in NO_TORCH_GRADIENT:
        return
    weights = np.random.default_rng(1).standard_normal(ref.shape)
    (out * shrew.tensor(weights)).sum().backward()
    (ref * torch.tensor(weights)).sum().backward()
    for x, t in zip(ours, theirs):
        if t.grad is None:
            assert x.grad is None or not x.grad.numpy().any()
            continue
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-8,
                                   err_msg=name)


@pytest.mark.parametrize("name", CASES)
def test_gradients_match_finite_differences(name):
    fn = CASES[name]
    assert gradcheck(lambda *xs: fn(shrew, *xs), _inputs(shrew, seed=2), atol=1e-6,
                     rtol=1e-4, directions=6)


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "solve", "cholesky", "qr_r",
                                  "svd_s", "svd_u", "eigh_vectors", "pinv"])
def test_second_derivatives_match_torch(name):
    """The gradient of a gradient's norm: the rules are recorded Tensor code."""
    fn = CASES[name]

    def grad_norm(lib, inputs):
        out = fn(lib, *inputs)
        weights = torch.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
        w = weights if lib is torch else shrew.tensor(weights.numpy())
        used = [x for x in inputs if x.requires_grad]
        if lib is torch:
            grads = torch.autograd.grad((out * w).sum(), used, create_graph=True,
                                        allow_unused=True)
        else:
            grads = shrew.autograd.grad((out * w).sum(), used, create_graph=True,
                                        allow_unused=True)
        total = sum((g.square().sum() for g in grads if g is not None), start=0 * out.sum())
        total.backward()
        return [None if x.grad is None else x.grad.numpy() for x in inputs]

    for ours, theirs in zip(grad_norm(shrew, _inputs(shrew)), grad_norm(torch, _inputs(torch))):
        if theirs is None or not theirs.any():
            assert ours is None or not ours.any()
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-8, err_msg=name)


@settings(max_examples=15, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), n=st.integers(1, 5),
       k=st.integers(1, 3), dtype=st.sampled_from(["float32", "float64"]))
def test_batched_solve_and_inverse_any_shape(batch, n, k, dtype):
    rng = np.random.default_rng(len(batch) * 10 + n)
    a = (rng.standard_normal((*batch, n, n)) + 3 * np.eye(n)).astype(dtype)
    b = rng.standard_normal((*batch, n, k)).astype(dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    x = shrew.linalg.solve(shrew.tensor(a), shrew.tensor(b))
    assert x.dtype.name == dtype and tuple(x.shape) == (*batch, n, k)
    np.testing.assert_allclose(x.numpy(), torch.linalg.solve(torch.tensor(a), torch.tensor(b)),
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(shrew.linalg.inv(shrew.tensor(a)).numpy(),
                               torch.linalg.inv(torch.tensor(a)), rtol=tol, atol=tol)


def test_svd_shapes_and_full_matrices():
    b = np.random.default_rng(0).standard_normal((2, 5, 3))
    for full in (True, False):
        u, s, vh = shrew.linalg.svd(shrew.tensor(b), full_matrices=full)
        tu, ts, tvh = torch.linalg.svd(torch.tensor(b), full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (tu.shape, ts.shape, tvh.shape)
        np.testing.assert_allclose((u[..., :3] * s[..., None, :] @ vh[..., :3, :]).numpy(), b,
                                   atol=1e-12)
    old = shrew.svd(shrew.tensor(b))
    np.testing.assert_allclose((old.U * old.S[..., None, :] @ old.V.mT).numpy(), b, atol=1e-12)
    no_uv, torch_no_uv = shrew.svd(shrew.tensor(b), compute_uv=False), \
        torch.svd(torch.tensor(b), compute_uv=False)
    for got, want in zip(no_uv, torch_no_uv):
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)
    q = shrew.linalg.qr(shrew.tensor(b), mode="complete").Q
    assert tuple(q.shape) == (2, 5, 5)
    r_only = shrew.linalg.qr(shrew.tensor(b), mode="r")
    assert r_only.Q.numel() == 0
    np.testing.assert_allclose(np.abs(r_only.R.numpy()),
                               np.abs(torch.linalg.qr(torch.tensor(b)).R.numpy()), atol=1e-12)


def test_lstsq_matches_torch_drivers():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 2))
    for driver in (None, "gels", "gelsd", "gelss"):
        ours = shrew.linalg.lstsq(shrew.tensor(a), shrew.tensor(b), driver=driver)
        theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        for field in ("solution", "residuals", "rank", "singular_values"):
            got, want = getattr(ours, field), getattr(theirs, field)
            assert tuple(got.shape) == tuple(want.shape), (driver, field)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-8, atol=1e-10)


def test_rank_and_pinv_of_rank_deficient_matrices():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 6, 2)) @ rng.standard_normal((3, 2, 5))  # rank 2
    for kwargs in ({}, {"atol": 1e-3}, {"rtol": 0.5}, {"hermitian": False}):
        np.testing.assert_array_equal(
            shrew.linalg.matrix_rank(shrew.tensor(x), **kwargs).numpy(),
            torch.linalg.matrix_rank(torch.tensor(x), **kwargs).numpy())
    np.testing.assert_allclose(shrew.linalg.pinv(shrew.tensor(x)).numpy(),
                               torch.linalg.pinv(torch.tensor(x)).numpy(), atol=1e-10)
    sym = x @ np.swapaxes(x, -1, -2)
    np.testing.assert_array_equal(
        shrew.linalg.matrix_rank(shrew.tensor(sym), hermitian=True).numpy(),
        torch.linalg.matrix_rank(torch.tensor(sym), hermitian=True).numpy())
    np.testing.assert_allclose(shrew.linalg.pinv(shrew.tensor(sym), hermitian=True).numpy(),
                               torch.linalg.pinv(torch.tensor(sym), hermitian=True).numpy(),
                               atol=1e-10)


def test_determinant_gradient_of_a_singular_matrix_is_its_cofactor_matrix():
    """det's gradient is the cofactor matrix, which a singular matrix of rank n - 1 has too
    (here PyTorch 2.x answers zeros, which finite differences contradict)."""
    x = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    ours = shrew.tensor(x, requires_grad=True)
    shrew.linalg.det(ours).backward()
    cofactors = [[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(x, i, 0), j, 1))
                  for j in range(3)] for i in range(3)]
    np.testing.assert_allclose(ours.grad.numpy(), cofactors, atol=1e-12)
    assert gradcheck(shrew.linalg.det, [shrew.tensor(x, requires_grad=True)])


def test_float32_results_stay_float32():
    a = shrew.randn(3, 3) + 3 * shrew.eye(3)
    for out in (shrew.linalg.inv(a), shrew.linalg.det(a), shrew.linalg.svdvals(a),
                shrew.linalg.eigh(a + a.mT).eigenvectors, shrew.linalg.qr(a).R,
                shrew.linalg.cholesky(a @ a.mT)):
        assert out.dtype is shrew.float32


ERRORS = [
    (lambda: shrew.linalg.inv(shrew.ones(3, 4)), shrew.ShapeError, "square"),
    (lambda: shrew.linalg.det(shrew.ones(3)), shrew.ShapeError, "at least 2"),
    (lambda: shrew.linalg.inv(shrew.ones(3, 3, dtype=shrew.int64)), shrew.DTypeError, "int64"),
    (lambda: shrew.linalg.svd(shrew.ones(3, 3, dtype=shrew.float16)), shrew.DTypeError,
     "float16"),
    (lambda: shrew.linalg.inv(shrew.ones(3, 3)), shrew.linalg.LinAlgError, "singular"),
    (lambda: shrew.linalg.solve(shrew.zeros(2, 3, 3), shrew.ones(2, 3)),
     shrew.linalg.LinAlgError, "singular"),
    (lambda: shrew.linalg.solve(shrew.eye(3), shrew.ones(4, 2)), shrew.ShapeError, "rows"),
    (lambda: shrew.linalg.solve(shrew.eye(3).expand(2, 3, 3), shrew.ones(3, 3, 1)),
     shrew.ShapeError, "broadcast"),
    (lambda: shrew.linalg.solve(shrew.eye(3), shrew.ones(3, 1, dtype=shrew.float64)),
     shrew.DTypeError, "dtype"),
    (lambda: shrew.linalg.cholesky(-shrew.eye(3)), shrew.linalg.LinAlgError,
     "positive-definite"),
    (lambda: shrew.linalg.qr(shrew.ones(3, 2), mode="full"), shrew.ShrewError, "mode"),
    (lambda: shrew.linalg.eigh(shrew.eye(2), UPLO="X"), shrew.ShrewError, "UPLO"),
    (lambda: shrew.linalg.matrix_norm(shrew.ones(3, 3), 3), shrew.ShrewError, "ord"),
    (lambda: shrew.linalg.matrix_norm(shrew.ones(3, 3), dim=(1, 1)), shrew.ShrewError, "twice"),
    (lambda: shrew.cdist(shrew.ones(3, 2), shrew.ones(3, 4)), shrew.ShapeError, "last dim"),
    (lambda: shrew.cdist(shrew.ones(3, 2), shrew.ones(3, 2), p=-1), shrew.ShrewError, "p must"),
    (lambda: shrew.cdist(shrew.ones(3, 2), shrew.ones(3, 2), compute_mode="x"),
     shrew.ShrewError, "compute_mode"),
    (lambda: shrew.linalg.lstsq(shrew.ones(3, 2), shrew.ones(4, 1)), shrew.ShapeError, "rows"),
    (lambda: shrew.cholesky_solve(shrew.ones(3), shrew.eye(3)), shrew.ShapeError,
     "cholesky_solve: B should have at least 2 dimensions"),
    (lambda: shrew.cholesky_solve(shrew.ones(2, 3, 1), shrew.eye(3).expand(3, 3, 3)),
     shrew.ShapeError, "broadcast"),
    (lambda: shrew.linalg.matrix_power(shrew.zeros(2, 2), -1), shrew.linalg.LinAlgError,
     "singular"),
]


@pytest.mark.parametrize("make, error, words", ERRORS)
def test_bad_input_raises_naming_the_op(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_singular_matrices_raise_like_torch():
    """Both libraries refuse exactly singular matrices (a zero pivot) for inv and solve, and
    inv_ex reports them in info instead."""
    x = np.zeros((2, 3, 3))
    x[0] = np.eye(3)
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.inv(torch.tensor(x))
    with pytest.raises(shrew.linalg.LinAlgError, match=r"linalg.inv.*\(1,\)"):
        shrew.linalg.inv(shrew.tensor(x))
    info = shrew.linalg.inv_ex(shrew.tensor(x)).info.numpy()
    assert info[0] == 0 and info[1] != 0
    result, info = shrew.linalg.solve_ex(shrew.tensor(x), shrew.ones(2, 3, 1, dtype=shrew.float64))
    assert info.numpy().tolist() == [0, 1]
    np.testing.assert_allclose(result[0].numpy(), np.ones((3, 1)))
    assert not shrew.linalg.cholesky_ex(-shrew.eye(2)).info.numpy() == 0


def test_complete_qr_of_a_tall_matrix_is_not_differentiable():
    x = shrew.randn(4, 2, dtype=shrew.float64, requires_grad=True)
    q, _ = shrew.linalg.qr(x, mode="complete")
    with pytest.raises(shrew.ShrewError, match="not differentiable"):
        q.sum().backward()
