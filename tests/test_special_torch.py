"""torch.special and the gamma family against PyTorch on every device: values over each
function's domain with its edges (0, -0, negatives, poles, large arguments, +-inf, NaN) in
float32 and float64, gradients against torch's and finite differences (gradcheck) where
PyTorch has them, no gradient recorded where it has none, errors; and the window functions.

The OpenCL runs exercise kernels/special.cl, the cpu runs scipy.special."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import shrew
from shrew.testing import gradcheck
from support import device_or_fail, each_device

DEVICES = ["cpu", *each_device("opencl")]
INF, NAN = math.inf, math.nan
EDGES = [0.0, -0.0, INF, -INF, NAN]
rng = np.random.default_rng(0)


def _values(domain: str) -> np.ndarray:
    """Points of a domain: random ones, the round and awkward ones, and the edges."""
    draws = {"line": np.concatenate([rng.uniform(-12, 12, 40), [-3.5, -2.5, -1, 1, 2.5, 30,
                                                                 -30, 80, 700, 1e-8]]),
             "positive": np.concatenate([rng.uniform(0.01, 30, 40), [1e-8, 0.5, 1, 2, 80]]),
             "moderate": np.concatenate([rng.uniform(-10, 10, 40), [-1, 1, 5.5, 9.9]]),
             "bessel": np.concatenate([rng.uniform(-40, 40, 40), [1e-6, 1, 2.4048, 24.9, 25.1,
                                                                  150.5, -3.8317]]),
             "unit": np.concatenate([rng.uniform(0.001, 0.999, 40), [1e-10, 0.5, 1 - 1e-7, 1,
                                                                     -0.5, 2]])}[domain]
    return np.concatenate([draws, EDGES])


def _pair(values, dtype: str, device: str, requires_grad: bool = False):
    ours = shrew.tensor(np.asarray(values, dtype=dtype), device=device,
                        requires_grad=requires_grad)
    theirs = torch.tensor(np.asarray(values, dtype=dtype), requires_grad=requires_grad)
    return ours, theirs


def _assert_close(ours: shrew.Tensor, theirs: torch.Tensor, rtol: float, atol: float,
                  what: str) -> None:
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), what
    assert tuple(ours.shape) == tuple(theirs.shape), what
    got = ours.detach().to("cpu").numpy().astype(np.float64)
    want = theirs.detach().numpy().astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


# name: (shrew function, torch function, domain, differentiable, float64 (rtol, atol))
# PyTorch's own Bessel J, Y and Airy kernels are accurate to about 1e-7 in float64 (shrew's
# agree with scipy and mpmath to 1e-12 there): those compare more loosely.
UNARY = {
    "lgamma": (shrew.lgamma, torch.lgamma, "line", True, (1e-10, 1e-10)),
    "digamma": (shrew.digamma, torch.digamma, "line", True, (1e-9, 1e-9)),
    "special.gammaln": (shrew.special.gammaln, torch.special.gammaln, "line", True,
                        (1e-10, 1e-10)),
    "special.psi": (shrew.special.psi, torch.special.psi, "line", True, (1e-9, 1e-9)),
    "special.erfcx": (shrew.special.erfcx, torch.special.erfcx, "line", True, (1e-10, 1e-300)),
    # PyTorch's ndtr is 1 + erf: its lower tail is exact only to 1e-16 absolute (shrew's,
    # through erfc, to the last bit, as scipy's)
    "special.ndtr": (shrew.special.ndtr, torch.special.ndtr, "line", True, (1e-10, 1e-16)),
    "special.ndtri": (shrew.special.ndtri, torch.special.ndtri, "unit", True, (1e-9, 1e-12)),
    "special.log_ndtr": (shrew.special.log_ndtr, torch.special.log_ndtr, "line", True,
                         (1e-10, 1e-300)),
    "i0": (shrew.i0, torch.i0, "line", True, (1e-10, 1e-300)),
    "special.i0e": (shrew.special.i0e, torch.special.i0e, "line", True, (1e-10, 1e-300)),
    "special.i1": (shrew.special.i1, torch.special.i1, "line", True, (1e-10, 1e-300)),
    "special.i1e": (shrew.special.i1e, torch.special.i1e, "line", True, (1e-10, 1e-300)),
    "special.modified_bessel_i0": (shrew.special.modified_bessel_i0,
                                   torch.special.modified_bessel_i0, "line", False,
                                   (1e-10, 1e-300)),
    "special.modified_bessel_i1": (shrew.special.modified_bessel_i1,
                                   torch.special.modified_bessel_i1, "line", False,
                                   (1e-10, 1e-300)),
    "special.modified_bessel_k0": (shrew.special.modified_bessel_k0,
                                   torch.special.modified_bessel_k0, "line", False,
                                   (1e-10, 1e-300)),
    "special.modified_bessel_k1": (shrew.special.modified_bessel_k1,
                                   torch.special.modified_bessel_k1, "line", False,
                                   (1e-10, 1e-300)),
    "special.scaled_modified_bessel_k0": (shrew.special.scaled_modified_bessel_k0,
                                          torch.special.scaled_modified_bessel_k0, "line",
                                          False, (1e-10, 1e-300)),
    "special.scaled_modified_bessel_k1": (shrew.special.scaled_modified_bessel_k1,
                                          torch.special.scaled_modified_bessel_k1, "line",
                                          False, (1e-10, 1e-300)),
    "special.bessel_j0": (shrew.special.bessel_j0, torch.special.bessel_j0, "bessel", False,
                          (1e-6, 1e-6)),
    "special.bessel_j1": (shrew.special.bessel_j1, torch.special.bessel_j1, "bessel", False,
                          (1e-6, 1e-6)),
    "special.bessel_y0": (shrew.special.bessel_y0, torch.special.bessel_y0, "bessel", False,
                          (1e-6, 1e-6)),
    "special.bessel_y1": (shrew.special.bessel_y1, torch.special.bessel_y1, "bessel", False,
                          (1e-6, 1e-6)),
    "special.airy_ai": (shrew.special.airy_ai, torch.special.airy_ai, "moderate", False,
                        (1e-5, 1e-6)),
    "special.spherical_bessel_j0": (shrew.special.spherical_bessel_j0,
                                    torch.special.spherical_bessel_j0, "bessel", False,
                                    (1e-10, 1e-12)),
    "special.entr": (shrew.special.entr, torch.special.entr, "line", True, (1e-10, 1e-300)),
    "sinc": (shrew.sinc, torch.sinc, "moderate", True, (1e-10, 1e-12)),
    "special.expit": (shrew.special.expit, torch.special.expit, "line", True, (1e-10, 1e-300)),
}
# Gradients at points where each function is smooth (away from poles, zeros of its argument,
# and the kinks of entr and sinc's 0)
GRAD_POINTS = {"line": [-3.3, -0.7, 0.4, 1.6, 7.5, 31.0], "positive": [0.3, 1.6, 7.5, 31.0],
               "moderate": [-3.3, -0.7, 0.4, 1.6, 7.5], "unit": [0.02, 0.3, 0.5, 0.77, 0.98]}
GRAD_DOMAIN = {"lgamma": "line", "digamma": "line", "special.gammaln": "line",
               "special.psi": "line", "special.entr": "positive", "special.ndtri": "unit"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_match_torch(device, dtype, name):
    device = device_or_fail(device)
    ours_fn, torch_fn, domain, _, tol64 = UNARY[name]
    values = _values(domain)
    if name in ("special.bessel_j0", "special.bessel_j1", "special.bessel_y0",
                "special.bessel_y1", "special.airy_ai") and dtype == "float32":
        tol = (2e-5, 2e-5)
    else:
        tol = tol64 if dtype == "float64" else (2e-5, 1e-6)
    if name in ("lgamma", "special.gammaln", "digamma", "special.psi") and dtype == "float32":
        tol = (1e-4, 1e-4)  # float32's lgamma and digamma near their zeros and poles
    x, tx = _pair(values, dtype, device)
    _assert_close(ours_fn(x), torch_fn(tx), *tol, f"{name} {dtype} on {device}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(n for n, spec in UNARY.items() if spec[3]))
def test_unary_gradients_match_torch_and_finite_differences(device, name):
    device = device_or_fail(device)
    ours_fn, torch_fn, domain, _, _ = UNARY[name]
    points = GRAD_POINTS[GRAD_DOMAIN.get(name, "unit" if domain == "unit" else "moderate")]
    x, tx = _pair(points, "float64", device, requires_grad=True)
    weights = np.linspace(0.5, 1.5, len(points))
    (ours_fn(x) * shrew.tensor(weights, device=device)).sum().backward()
    (torch_fn(tx) * torch.tensor(weights)).sum().backward()
    _assert_close(x.grad, tx.grad, 1e-7, 1e-9, f"gradient of {name} on {device}")
    assert gradcheck(ours_fn, (shrew.tensor(points, dtype=shrew.float64, device=device,
                                            requires_grad=True),))


@pytest.mark.parametrize("name", sorted(n for n, spec in UNARY.items() if not spec[3]))
def test_no_gradient_where_torch_has_none(name):
    ours_fn, torch_fn, *_ = UNARY[name]
    x, tx = _pair([0.5, 1.5], "float64", "cpu", requires_grad=True)
    assert torch_fn(tx).requires_grad is False
    assert ours_fn(x).requires_grad is False


def test_edges_where_scipy_and_torch_differ():
    """PyTorch's values, not scipy's: lgamma(-inf) = inf, zeta(s, inf) = NaN."""
    for device in DEVICES:
        device = device_or_fail(device)
        x = shrew.tensor([-INF], device=device)
        assert shrew.lgamma(x).item() == INF
        z = shrew.special.zeta(shrew.tensor([2.0], device=device), shrew.tensor([INF]).to(device))
        assert math.isnan(z.item())


# -- the gamma family with a second argument ----------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 6])
def test_polygamma(device, dtype, n):
    device = device_or_fail(device)
    # (PyTorch's trigamma gives 6.6e32 at -1 and NaN at -inf, not the pole's inf: left out)
    values = np.concatenate([rng.uniform(0.05, 20, 30), [-2.5, -0.5, -7.3, 1e-3, 1.0]]
                            + ([EDGES] if n == 0 else [[0.0, NAN]] if n == 1
                               else [[0.0, -1.0, NAN, -INF]]))
    x, tx = _pair(values, dtype, device)
    rtol, atol = (1e-9, 1e-9) if dtype == "float64" else (2e-4, 1e-4)
    _assert_close(shrew.polygamma(n, x), torch.polygamma(n, tx), rtol, atol, f"polygamma {n}")
    _assert_close(x.polygamma(n), tx.polygamma(n), rtol, atol, f"Tensor.polygamma {n}")
    _assert_close(shrew.special.polygamma(n, x), torch.special.polygamma(n, tx), rtol, atol,
                  f"special.polygamma {n}")
    # its gradient is polygamma(n + 1)
    g, tg = _pair([0.3, 1.7, 4.2, -2.5], "float64", device, requires_grad=True)
    shrew.polygamma(n, g).sum().backward()
    torch.polygamma(n, tg).sum().backward()
    _assert_close(g.grad, tg.grad, 1e-8, 1e-9, f"polygamma {n} gradient")
    assert gradcheck(lambda v: shrew.polygamma(n, v),
                     (shrew.tensor([0.3, 1.7, 4.2], dtype=shrew.float64, device=device,
                                   requires_grad=True),))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_mvlgamma(device, p):
    device = device_or_fail(device)
    values = rng.uniform((p - 1) / 2 + 0.01, 15, (4, 3))
    x, tx = _pair(values, "float64", device, requires_grad=True)
    _assert_close(shrew.mvlgamma(x, p), torch.mvlgamma(tx, p), 1e-10, 1e-10, "mvlgamma")
    _assert_close(shrew.special.multigammaln(x, p), torch.special.multigammaln(tx, p), 1e-10,
                  1e-10, "multigammaln")
    shrew.mvlgamma(x, p).sum().backward()
    torch.mvlgamma(tx, p).sum().backward()
    _assert_close(x.grad, tx.grad, 1e-9, 1e-9, "mvlgamma gradient")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma(device, dtype, name):
    device = device_or_fail(device)
    a = np.concatenate([rng.uniform(0.05, 40, 60), [0, 1, 2, INF, -1, 1, 0, NAN, 3, 1e-3]])
    x = np.concatenate([rng.uniform(0.0, 60, 60), [1, 0, 3, 2, 1, INF, 0, 1, -1, 1e-3]])
    (sa, ta), (sx, tx) = _pair(a, dtype, device), _pair(x, dtype, device)
    # PyTorch's own igamma is exact to about 2e-9 relative around a = 20 (scipy's, mpmath's
    # and shrew's agree to 1e-15 there)
    rtol, atol = (1e-8, 1e-12) if dtype == "float64" else (2e-4, 1e-6)
    _assert_close(getattr(shrew, name)(sa, sx), getattr(torch, name)(ta, tx), rtol, atol, name)
    alias = {"igamma": "gammainc", "igammac": "gammaincc"}[name]
    _assert_close(getattr(shrew.special, alias)(sa, sx), getattr(torch.special, alias)(ta, tx),
                  rtol, atol, alias)
    _assert_close(getattr(sa, name)(sx), getattr(ta, name)(tx), rtol, atol, "method")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_gradient(device, name):
    """Its gradient w.r.t. x (the gamma density, negated for igammac); PyTorch raises for a,
    and so does shrew."""
    device = device_or_fail(device)
    a = shrew.tensor([[0.5], [2.0], [7.5]], dtype=shrew.float64, device=device)
    x, tx = _pair([0.3, 1.7, 6.0, 11.0], "float64", device, requires_grad=True)
    fn = getattr(shrew, name)
    fn(a, x).sum().backward()
    getattr(torch, name)(torch.tensor([[0.5], [2.0], [7.5]], dtype=torch.float64), tx).sum() \
        .backward()
    _assert_close(x.grad, tx.grad, 1e-9, 1e-12, f"{name} gradient")
    assert gradcheck(lambda v: fn(a, v), (shrew.tensor([0.3, 1.7, 6.0], dtype=shrew.float64,
                                                       device=device, requires_grad=True),))
    a.requires_grad_(True)
    with pytest.raises(NotImplementedError, match="not implemented"):
        fn(a, x.detach()).sum().backward()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zeta(device, dtype):
    device = device_or_fail(device)
    s = np.concatenate([rng.uniform(1.01, 12, 40), [1, 2, INF, INF, 0.5, NAN, 3, 2, 2, 4]])
    q = np.concatenate([rng.uniform(-20, 30, 40), [1, 3, 1, 0.5, 2, 1, -2.5, INF, -3, 0]])
    (ss, ts), (sq, tq) = _pair(s, dtype, device), _pair(q, dtype, device)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (1e-4, 1e-6)
    _assert_close(shrew.special.zeta(ss, sq), torch.special.zeta(ts, tq), rtol, atol, "zeta")
    _assert_close(shrew.special.zeta(2.0, sq), torch.special.zeta(2.0, tq), rtol, atol,
                  "zeta of a number")
    q, tq = _pair([0.4, 1.5, 6.0], "float64", device, requires_grad=True)
    shrew.special.zeta(3.0, q).sum().backward()
    torch.special.zeta(3.0, tq).sum().backward()
    _assert_close(q.grad, tq.grad, 1e-9, 1e-12, "zeta gradient")
    s = shrew.tensor([3.0], dtype=shrew.float64, device=device, requires_grad=True)
    with pytest.raises(NotImplementedError, match="not implemented"):
        shrew.special.zeta(s, q.detach()).sum().backward()


# -- composed functions of two arguments, and the polynomials -----------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_xlog1py_and_xlogy(device):
    device = device_or_fail(device)
    x = [0.0, 0.0, 1.5, -2.0, 3.0, 0.0]
    y = [NAN, -1.0, 0.5, 2.0, -1.0, 3.0]
    for name in ("xlog1py", "xlogy"):
        (sx, tx), (sy, ty) = _pair(x, "float64", device), _pair(y, "float64", device)
        _assert_close(getattr(shrew.special, name)(sx, sy), getattr(torch.special, name)(tx, ty),
                      1e-12, 1e-12, name)
        _assert_close(getattr(shrew.special, name)(2.0, sy), getattr(torch.special, name)(2.0, ty),
                      1e-12, 1e-12, f"{name} of a number")
    a, ta = _pair([0.5, 1.5, 2.0], "float64", device, requires_grad=True)
    b, tb = _pair([0.2, 3.0, 0.7], "float64", device, requires_grad=True)
    shrew.special.xlog1py(a, b).sum().backward()
    torch.special.xlog1py(ta, tb).sum().backward()
    _assert_close(a.grad, ta.grad, 1e-12, 1e-12, "xlog1py d/dx")
    _assert_close(b.grad, tb.grad, 1e-12, 1e-12, "xlog1py d/dy")


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_orthogonal_polynomials(device, dtype, name):
    device = device_or_fail(device)
    # (no NaN x: PyTorch returns uninitialised memory for some of these polynomials there)
    x = np.array([[-1.0], [-0.6], [0.0], [0.3], [0.999], [1.0], [1.7], [-2.5]])
    n = np.array([-2.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.5])
    (sx, tx), (sn, tn) = _pair(x, dtype, device), _pair(n, dtype, device)
    ours, theirs = getattr(shrew.special, name), getattr(torch.special, name)
    rtol, atol = (1e-10, 1e-10) if dtype == "float64" else (1e-5, 1e-4)
    _assert_close(ours(sx, sn), theirs(tx, tn), rtol, atol, f"{name} {dtype}")
    _assert_close(ours(sx, 3), theirs(tx, 3), rtol, atol, f"{name} of an int degree")
    _assert_close(ours(0.25, sn), theirs(0.25, tn), rtol, atol, f"{name} at a number")
    g = shrew.tensor([0.5], dtype=shrew.float64, requires_grad=True)
    assert ours(g, 3).requires_grad is False  # no gradient, as PyTorch


def test_integers_promote_as_torch():
    ints, tints = shrew.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    for name in ("lgamma", "digamma", "i0", "sinc"):
        _assert_close(getattr(shrew, name)(ints), getattr(torch, name)(tints), 1e-6, 1e-6, name)
    _assert_close(shrew.special.chebyshev_polynomial_t(ints, ints),
                  torch.special.chebyshev_polynomial_t(tints, tints), 1e-6, 1e-6, "chebyshev")
    _assert_close(shrew.mvlgamma(ints + 2, 2), torch.mvlgamma(tints + 2, 2), 1e-6, 1e-6,
                  "mvlgamma")


def test_in_place_forms():
    for name, args in (("lgamma_", ()), ("digamma_", ()), ("polygamma_", (2,)), ("i0_", ()),
                       ("sinc_", ()), ("mvlgamma_", (2,)), ("erf_", ()), ("erfc_", ()),
                       ("exp2_", ()), ("expm1_", ()), ("log1p_", ())):
        x, tx = _pair([1.3, 2.5, 4.0], "float64", "cpu")
        assert getattr(x, name)(*args) is x
        getattr(tx, name)(*args)
        _assert_close(x, tx, 1e-12, 1e-12, name)
    for name, args in (("erfinv_", ()), ("logit_", ()), ("logit_", (0.3,))):
        x, tx = _pair([0.2, 0.5, 0.9], "float64", "cpu")
        getattr(x, name)(*args)
        getattr(tx, name)(*args)
        _assert_close(x, tx, 1e-12, 1e-12, name)
    for name in ("i0_", "sinc_"):  # torch's top-level in-place forms
        x, tx = _pair([1.3, 2.5, 4.0], "float64", "cpu")
        assert getattr(shrew, name)(x) is x
        getattr(torch, name)(tx)
        _assert_close(x, tx, 1e-12, 1e-12, f"torch.{name}")
    x, tx = _pair([1.3, 0.0, 4.0], "float64", "cpu")
    shrew.xlogy_(x, 3.0)
    torch.xlogy_(tx, 3.0)
    _assert_close(x, tx, 1e-12, 1e-12, "torch.xlogy_")
    a, ta = _pair([1.3, 2.5, 4.0], "float64", "cpu")
    b, tb = _pair([0.5, 2.0, 7.0], "float64", "cpu")
    for name in ("igamma_", "igammac_", "xlogy_"):
        x, tx = a.clone(), ta.clone()
        getattr(x, name)(b)
        getattr(tx, name)(tb)
        _assert_close(x, tx, 1e-12, 1e-12, name)


def test_special_aliases_take_out_and_torch_arguments():
    x, tx = _pair([0.2, 0.7, 0.9], "float32", "cpu")
    for name in ("erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "expit", "round", "i0",
                 "ndtr", "sinc", "entr", "erfcx"):
        out = shrew.empty(3)
        result = getattr(shrew.special, name)(x, out=out)
        assert result is out
        _assert_close(out, getattr(torch.special, name)(tx), 1e-6, 1e-6, name)
    _assert_close(shrew.special.logit(x, eps=0.25), torch.special.logit(tx, eps=0.25), 1e-6,
                  1e-6, "logit")
    _assert_close(shrew.special.logsumexp(x, 0), torch.special.logsumexp(tx, 0), 1e-6, 1e-6,
                  "logsumexp")
    _assert_close(shrew.special.softmax(x, 0), torch.special.softmax(tx, 0), 1e-6, 1e-6,
                  "softmax")
    _assert_close(shrew.special.log_softmax(x, 0), torch.special.log_softmax(tx, 0), 1e-6,
                  1e-6, "log_softmax")


def test_errors_as_torch():
    x = shrew.tensor([1.5, 2.5])
    with pytest.raises(RuntimeError, match="negative n"):
        shrew.polygamma(-1, x)
    with pytest.raises(TypeError, match="int"):
        shrew.polygamma(1.5, x)
    with pytest.raises(RuntimeError, match="greater than or equal to 1"):
        shrew.mvlgamma(x, 0)
    with pytest.raises(TypeError):
        shrew.lgamma([1.0, 2.0])
    with pytest.raises(RuntimeError, match="broadcast|shape"):
        shrew.igamma(shrew.ones(3), shrew.ones(4))


# -- window functions ------------------------------------------------------------------------
WINDOWS = {"bartlett": {}, "blackman": {}, "cosine": {}, "hamming": {}, "hann": {},
           "nuttall": {}, "exponential": {"tau": 2.5}, "gaussian": {"std": 1.7},
           "kaiser": {"beta": 4.0}, "general_hamming": {"alpha": 0.6},
           "general_cosine": {"a": [0.4, 0.3, 0.2, 0.1]}}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_signal_windows(device, name):
    device = device_or_fail(device)
    ours, theirs = getattr(shrew.signal.windows, name), getattr(torch.signal.windows, name)
    for M in (0, 1, 2, 5, 16):
        for sym in (True, False):
            for dtype in ("float32", "float64"):
                w = ours(M, sym=sym, dtype=getattr(shrew, dtype), device=device,
                         **WINDOWS[name])
                tw = theirs(M, sym=sym, dtype=getattr(torch, dtype), **WINDOWS[name])
                _assert_close(w, tw, 1e-6, 1e-7, f"{name}({M}, sym={sym}) {dtype}")
                assert w.device == shrew.device(device)
    assert ours(4, requires_grad=True, **WINDOWS[name]).requires_grad
    with pytest.raises(ValueError, match="non-negative"):
        ours(-1, **WINDOWS[name])
    with pytest.raises(ValueError, match="float32 or float64"):
        ours(4, dtype=shrew.int64, **WINDOWS[name])


def test_signal_window_errors_as_torch():
    windows = shrew.signal.windows
    with pytest.raises(ValueError, match="Center must be None"):
        windows.exponential(4, center=1.0)
    with pytest.raises(ValueError, match="Tau must be positive"):
        windows.exponential(4, tau=0.0)
    with pytest.raises(ValueError, match="Standard deviation"):
        windows.gaussian(4, std=0.0)
    with pytest.raises(ValueError, match="beta must be non-negative"):
        windows.kaiser(4, beta=-1.0)
    with pytest.raises(TypeError, match="list/tuple"):
        windows.general_cosine(4, a=1.0)
    _assert_close(windows.exponential(6, center=1.0, sym=False),
                  torch.signal.windows.exponential(6, center=1.0, sym=False), 1e-6, 1e-7,
                  "exponential with a center")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
def test_torch_window_functions(device, name):
    device = device_or_fail(device)
    for n in (0, 1, 2, 7, 10):
        for periodic in (True, False):
            w = getattr(shrew, name)(n, periodic, dtype=shrew.float64, device=device)
            _assert_close(w, getattr(torch, name)(n, periodic, dtype=torch.float64), 1e-12,
                          1e-12, f"{name}({n}, {periodic})")
    _assert_close(getattr(shrew, name)(8), getattr(torch, name)(8), 1e-6, 1e-7, "defaults")
    with pytest.raises(RuntimeError, match="non-negative"):
        getattr(shrew, name)(-1)
    with pytest.raises(RuntimeError, match="dtypes"):
        getattr(shrew, name)(4, dtype=shrew.int64)
    _assert_close(shrew.hamming_window(9, False, 0.6, 0.4),
                  torch.hamming_window(9, False, 0.6, 0.4), 1e-6, 1e-7, "hamming alpha beta")
    _assert_close(shrew.kaiser_window(9, True, 3.0), torch.kaiser_window(9, True, 3.0), 1e-6,
                  1e-7, "kaiser beta")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma", "igamma", "i0", "i1e",
                                  "erfcx", "log_ndtr", "ndtri", "zeta"])
def test_second_derivatives_match_torch(device, name):
    """The gradient rules are recorded Tensor code: differentiated again, they give
    PyTorch's second derivatives."""
    device = device_or_fail(device)
    calls = {"lgamma": (shrew.lgamma, torch.lgamma),
             "digamma": (shrew.digamma, torch.digamma),
             "polygamma": (lambda v: shrew.polygamma(2, v), lambda v: torch.polygamma(2, v)),
             "igamma": (lambda v: shrew.igamma(shrew.full_like(v, 2.5), v),
                        lambda v: torch.igamma(torch.full_like(v, 2.5), v)),
             "i0": (shrew.i0, torch.i0), "i1e": (shrew.special.i1e, torch.special.i1e),
             "erfcx": (shrew.special.erfcx, torch.special.erfcx),
             "log_ndtr": (shrew.special.log_ndtr, torch.special.log_ndtr),
             "ndtri": (shrew.special.ndtri, torch.special.ndtri),
             "zeta": (lambda v: shrew.special.zeta(3.0, v),
                      lambda v: torch.special.zeta(3.0, v))}
    ours, theirs = calls[name]
    points = [0.15, 0.4, 0.85] if name == "ndtri" else [0.4, 1.3, 3.7]
    x, tx = _pair(points, "float64", device, requires_grad=True)
    (g,) = shrew.autograd.grad(ours(x).sum(), x, create_graph=True)
    (g2,) = shrew.autograd.grad(g.sum(), x)
    (tg,) = torch.autograd.grad(theirs(tx).sum(), tx, create_graph=True)
    (tg2,) = torch.autograd.grad(tg.sum(), tx)
    _assert_close(g2, tg2, 1e-7, 1e-9, f"second derivative of {name}")
