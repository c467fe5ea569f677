"""Elementwise ops against PyTorch: values, dtypes (type promotion included) and gradients
on hypothesis-drawn shapes, broadcasting and dtypes; gradcheck in float64, second order
where the rule is non-trivial; errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shrew
from support import broadcast_pairs, check_grad, Input, shapes

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
INTS = ("int64", "int32", "int16", "int8", "uint8")


def draw_values(rng, shape, dtype, domain="normal"):
    """numpy values of `dtype` in `domain` (floats drawn in float64, then rounded)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        low = 1 if domain in ("positive", "nonzero") else (0 if dtype == "uint8" else -6)
        v = rng.integers(low, 7, shape)
        return np.asarray(v, dtype=dtype)
    v = {"normal": lambda: rng.standard_normal(shape) * 2,
         "positive": lambda: rng.uniform(0.3, 3.0, shape),
         "nonzero": lambda: rng.uniform(0.3, 3.0, shape) * rng.choice((-1, 1), shape),
         "unit": lambda: rng.uniform(-0.95, 0.95, shape),
         "above_one": lambda: rng.uniform(1.1, 4.0, shape)}[domain]()
    return np.asarray(v).astype(np.float64)


def pair(values, dtype, requires_grad=False):
    """The same values as a shrew and a torch tensor of `dtype`."""
    ours = shrew.tensor(values, dtype=dtype, requires_grad=requires_grad)
    theirs = torch.tensor(np.asarray(values), dtype=getattr(torch, dtype),
                          requires_grad=requires_grad)
    return ours, theirs


def assert_same(ours, theirs, rtol=1e-5, atol=1e-6):
    assert isinstance(ours, shrew.Tensor)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), \
        (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    got, want = ours.numpy(), theirs.detach().numpy()
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True)


# -- unary functions ----------------------------------------------------------------------
UNARY = {  # name: (domain, takes integers)
    "abs": ("normal", True), "neg": ("normal", True), "exp": ("normal", True),
    "exp2": ("normal", True), "expm1": ("normal", True), "log": ("positive", True),
    "log1p": ("positive", True), "log2": ("positive", True), "log10": ("positive", True),
    "sqrt": ("positive", True), "rsqrt": ("positive", True), "reciprocal": ("nonzero", True),
    "sin": ("normal", True), "cos": ("normal", True), "tan": ("unit", True),
    "asin": ("unit", False), "acos": ("unit", False), "atan": ("normal", True),
    "sinh": ("normal", True), "cosh": ("normal", True), "asinh": ("normal", True),
    "acosh": ("above_one", False), "atanh": ("unit", False), "erf": ("normal", True),
    "erfc": ("normal", True), "erfinv": ("unit", False), "sigmoid": ("normal", True),
    "tanh": ("normal", True), "trunc": ("normal", True), "frac": ("normal", False),
    "sign": ("normal", True), "sgn": ("normal", True), "square": ("normal", True),
    "floor": ("normal", True), "ceil": ("normal", True), "round": ("normal", True),
    "arcsin": ("unit", False), "arctan": ("normal", True), "fix": ("normal", True),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(shape=shapes(0, 3), seed=st.integers(0, 2**16),
       dtype=st.sampled_from(("float32", "float64", "int64", "int16", "uint8")))
def test_unary_values_and_dtypes(name, shape, seed, dtype):
    domain, ints = UNARY[name]
    if dtype not in ("float32", "float64") and (not ints or domain in ("unit", "above_one")):
        dtype = "float64"
    x, tx = pair(draw_values(np.random.default_rng(seed), shape, dtype, domain), dtype)
    assert_same(getattr(x, name)(), getattr(tx, name)())
    assert_same(getattr(shrew, name)(x), getattr(torch, name)(tx))


DIFFERENTIABLE = sorted(n for n in UNARY if n not in ("sign", "sgn", "trunc", "fix", "floor",
                                                       "ceil", "round"))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_unary_gradients_match_torch(name):
    values = draw_values(np.random.default_rng(1), (3, 4), "float64", UNARY[name][0])
    x, tx = pair(values, "float64", requires_grad=True)
    weights = np.random.default_rng(2).standard_normal((3, 4))
    (getattr(x, name)() * shrew.tensor(weights)).sum().backward()
    (getattr(tx, name)() * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["rsqrt", "reciprocal", "tan", "asin", "acosh", "atanh",
                                  "erfinv", "erfc", "log1p", "expm1", "log10", "exp2"])
def test_unary_second_order(name):
    domain = UNARY[name][0]
    x = Input((2, 3), 5, "transpose", positive=domain in ("positive", "above_one"))
    if domain == "unit":
        fn = lambda t: getattr(t.tanh() * 0.9, name)()  # noqa: E731
    elif domain == "above_one":
        fn = lambda t: getattr(t + 1.0, name)()  # noqa: E731
    else:
        fn = lambda t: getattr(t, name)()  # noqa: E731
    check_grad(lambda t: second_derivative_of(fn, t), x)


def second_derivative_of(fn, t):
    """d/dt of sum(fn(t)), itself recorded (create_graph) so that it can be checked."""
    with shrew.enable_grad():
        t = t if t.requires_grad else t.detach().requires_grad_()
        t.retain_grad()  # a view of the checked leaf is not a leaf itself
        return fn(t).sum().backward(create_graph=True)[t]


# -- binary functions ---------------------------------------------------------------------
BINARY = {  # name: (domain of a, of b, dtypes)
    "add": ("normal", "normal", "all"), "sub": ("normal", "normal", "numeric"),
    "mul": ("normal", "normal", "all"), "div": ("normal", "nonzero", "numeric"),
    "true_divide": ("normal", "nonzero", "numeric"),
    "floor_divide": ("normal", "nonzero", "numeric"),
    "remainder": ("normal", "nonzero", "numeric"), "fmod": ("normal", "nonzero", "numeric"),
    "pow": ("positive", "normal", "numeric"), "atan2": ("normal", "nonzero", "numeric"),
    "maximum": ("normal", "normal", "all"), "minimum": ("normal", "normal", "all"),
    "fmax": ("normal", "normal", "numeric"), "fmin": ("normal", "normal", "numeric"),
    "copysign": ("normal", "nonzero", "numeric"), "hypot": ("normal", "normal", "float"),
    "xlogy": ("normal", "positive", "numeric"), "bitwise_and": ("normal", "normal", "integral"),
    "bitwise_or": ("normal", "normal", "integral"), "bitwise_xor": ("normal", "normal",
                                                                    "integral"),
    "logical_and": ("normal", "normal", "all"), "logical_or": ("normal", "normal", "all"),
    "logical_xor": ("normal", "normal", "all"),
}
GROUPS = {"float": ("float32", "float64"),
          "numeric": ("float32", "float64", "int64", "int32", "int16", "int8", "uint8"),
          "integral": ("int64", "int32", "int16", "int8", "uint8", "bool")}
GROUPS["all"] = GROUPS["numeric"] + ("bool",)


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(shapes_=broadcast_pairs(), seed=st.integers(0, 2**16), data=st.data())
def test_binary_broadcasting_and_promotion(name, shapes_, seed, data):
    da, db, group = BINARY[name]
    dtype_a = data.draw(st.sampled_from(GROUPS[group]))
    dtype_b = data.draw(st.sampled_from(GROUPS[group]))
    if name == "pow" and dtype_b in INTS:  # integers to negative powers: see the int test
        db = "positive"
    rng = np.random.default_rng(seed)
    a, ta = pair(draw_values(rng, shapes_[0], dtype_a, da), dtype_a)
    b, tb = pair(draw_values(rng, shapes_[1], dtype_b, db), dtype_b)
    try:
        expected = getattr(torch, name)(ta, tb)
    except RuntimeError:  # torch refuses this dtype pair: shrew must refuse it too
        with pytest.raises(shrew.ShrewError):
            getattr(shrew, name)(a, b)
        return
    assert_same(getattr(shrew, name)(a, b), expected, rtol=1e-4)
    if hasattr(ta, name):
        assert_same(getattr(a, name)(b), getattr(ta, name)(tb), rtol=1e-4)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "floor_divide", "remainder",
                                  "fmod", "pow", "copysign", "xlogy"])
@pytest.mark.parametrize("scalar", [3, -2.5, True])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "int8", "uint8"])
def test_binary_with_python_numbers(name, scalar, dtype):
    if isinstance(scalar, bool) and name in ("sub", "floor_divide", "remainder", "fmod"):
        scalar = 2
    if name == "pow" and dtype != "float32" and scalar == -2.5:
        scalar = 2
    domain = "positive" if name in ("pow", "xlogy") else "normal"
    a, ta = pair(draw_values(np.random.default_rng(0), (2, 3), dtype, domain), dtype)
    assert_same(getattr(shrew, name)(a, scalar), getattr(torch, name)(ta, scalar), rtol=2e-3,
                atol=1e-3)


@pytest.mark.parametrize("op", ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
                                "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__",
                                "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "int32"])
@pytest.mark.parametrize("number", [3, -2, 1.5, -2.0])
def test_operators_with_numbers(op, dtype, number):
    values = np.array([[-7, -3, -1], [1, 4, 9]])
    a, ta = pair(values, dtype)
    if op == "__pow__" and dtype != "float32" and number == -2 and isinstance(number, int):
        with pytest.raises(shrew.ShrewError, match="negative"):
            getattr(a, op)(number)
        return
    assert_same(getattr(a, op)(number), getattr(ta, op)(number), rtol=1e-6)


def test_float_squares_and_cubes_are_torchs_to_the_bit():
    # PyTorch multiplies x ** 2 and x ** 3 out; a general power can differ by an ulp
    values = np.random.default_rng(0).standard_normal(4096).astype(np.float32)
    for exponent in (2, 3):
        np.testing.assert_array_equal((shrew.tensor(values) ** exponent).numpy(),
                                      (torch.tensor(values) ** exponent).numpy())


def test_integer_arithmetic_follows_torch():
    a, ta = pair(np.array([-7, -6, -1, 0, 5, 7]), "int64")
    b, tb = pair(np.array([2, -4, 3, 5, -2, 7]), "int64")
    for fn in (lambda x, y: x // y, lambda x, y: x % y, lambda x, y: x / y,
               lambda x, y: x ** y.abs(), lambda x, y: x.fmod(y),
               lambda x, y: x.div(y, rounding_mode="trunc"),
               lambda x, y: x.div(y, rounding_mode="floor")):
        assert_same(fn(a, b), fn(ta, tb))
    # integer ** negative integer tensor: 1 for 1, +-1 for -1, 0 otherwise, as torch
    base, tbase = pair(np.array([1, -1, -1, 2, -3]), "int64")
    exps, texps = pair(np.array([-3, -3, -2, -1, -5]), "int64")
    assert_same(base ** exps, tbase ** texps)
    # negative float bases with integer-valued exponents
    fb, tfb = pair(np.array([-2.0, -0.5, -3.0]), "float32")
    for e in (3, 2.0, -1):
        assert_same(fb ** e, tfb ** e)
        assert_same(e ** fb.abs(), e ** tfb.abs())
    assert_same((-2) ** shrew.tensor([2.0, 3.0]), (-2) ** torch.tensor([2.0, 3.0]))


def test_float_division_modes_on_signs():
    values = np.array([-7.5, -3.0, -0.5, 0.0, 2.5, 7.0])
    a, ta = pair(values, "float64")
    for d in (2.0, -2.0, 0.75):
        for mode in (None, "trunc", "floor"):
            assert_same(a.div(d, rounding_mode=mode), ta.div(d, rounding_mode=mode))
        assert_same(a % d, ta % d)
        assert_same(a // d, ta // d)
        assert_same(a.fmod(d), ta.fmod(d))


BINARY_GRADS = ["add", "sub", "mul", "div", "pow", "atan2", "maximum", "minimum", "fmod",
                "remainder", "copysign", "hypot", "xlogy", "fmax", "fmin"]


@pytest.mark.parametrize("name", BINARY_GRADS)
@given(shapes_=broadcast_pairs(), seed=st.integers(0, 2**16))
@SETTINGS
def test_binary_gradients_match_torch(name, shapes_, seed):
    da, db, _ = BINARY[name]
    rng = np.random.default_rng(seed)
    a, ta = pair(draw_values(rng, shapes_[0], "float64", da), "float64", True)
    b, tb = pair(draw_values(rng, shapes_[1], "float64", db), "float64", True)
    out, tout = getattr(shrew, name)(a, b), getattr(torch, name)(ta, tb)
    weights = rng.standard_normal(tuple(tout.shape))
    (out * shrew.tensor(weights)).sum().backward()
    (tout * torch.tensor(weights)).sum().backward()
    for ours, theirs in ((a, ta), (b, tb)):
        want = np.zeros(theirs.shape) if theirs.grad is None else theirs.grad.numpy()
        got = np.zeros(ours.shape) if ours.grad is None else ours.grad.numpy()
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["pow", "atan2", "hypot", "xlogy", "fmod", "remainder",
                                  "copysign", "maximum"])
def test_binary_gradcheck_and_second_order(name):
    da, db, _ = BINARY[name]
    a = Input((2, 3), 1, positive=da == "positive", away_from_zero=True)
    b = Input((3,), 2, positive=db == "positive", away_from_zero=db == "nonzero")
    fn = getattr(shrew, name)
    check_grad(fn, a, b)
    if name in ("pow", "atan2", "hypot", "xlogy"):  # the others' gradients are piecewise constant
        check_grad(lambda x, y: second_derivative_of(lambda t: fn(t, y), x), a, b)


@pytest.mark.parametrize("weight", [0.3, 0.8, "tensor"])
def test_lerp_addcmul_addcdiv(weight):
    rng = np.random.default_rng(3)
    s, ts = pair(rng.standard_normal((2, 3)), "float64", True)
    e, te = pair(rng.standard_normal((3,)), "float64", True)
    if weight == "tensor":
        w, tw = pair(rng.uniform(-0.2, 1.2, (2, 1)), "float64", True)
    else:
        w, tw = weight, weight
    out, tout = s.lerp(e, w), ts.lerp(te, tw)
    assert_same(out, tout, rtol=1e-12)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy())
    np.testing.assert_allclose(e.grad.numpy(), te.grad.numpy())
    assert_same(shrew.addcmul(s, s, e, value=0.5), torch.addcmul(ts, ts, te, value=0.5))
    assert_same(s.addcdiv(s, e, value=-2), ts.addcdiv(ts, te, value=-2))
    assert_same(shrew.add(s, e, alpha=3), torch.add(ts, te, alpha=3))
    assert_same(s.sub(e, alpha=0.5), ts.sub(te, alpha=0.5))
    check_grad(lambda a, b: a.lerp(b, 0.7), Input((2, 3), 1), Input((3,), 2))


# -- clamp, rounding, tests of values, logical ops ----------------------------------------
@SETTINGS
@given(shapes_=broadcast_pairs(), seed=st.integers(0, 2**16))
def test_clamp_with_tensor_bounds(shapes_, seed):
    rng = np.random.default_rng(seed)
    x, tx = pair(rng.standard_normal(shapes_[0]), "float64")
    lo, tlo = pair(rng.standard_normal(shapes_[1]) - 0.5, "float64")
    hi, thi = pair(rng.standard_normal(shapes_[1]) + 0.5, "float64")
    assert_same(x.clamp(lo, hi), tx.clamp(tlo, thi))
    assert_same(shrew.clamp(x, min=lo), torch.clamp(tx, min=tlo))
    assert_same(x.clamp_min(lo), tx.clamp_min(tlo))
    assert_same(x.clamp_max(0.25), tx.clamp_max(0.25))
    assert_same(shrew.clip(x, lo, hi), torch.clip(tx, tlo, thi))


def test_clamp_gradient_with_tensor_bounds():
    check_grad(lambda x, lo, hi: x.clamp(lo, hi), Input((3, 4), 1), Input((4,), 2),
               Input((3, 1), 3, positive=True))


@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
def test_round_decimals(decimals):
    values = np.array([1234.5678, -0.125, 0.0051, -987.25, 2.5, 15.0])
    for dtype in ("float32", "float64"):
        x, tx = pair(values, dtype)
        assert_same(x.round(decimals=decimals), tx.round(decimals=decimals), rtol=1e-6)
        assert_same(shrew.round(x, decimals=decimals), torch.round(tx, decimals=decimals),
                    rtol=1e-6)


def test_value_tests_and_nan_to_num():
    values = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, 1e300])
    for dtype in ("float16", "float32", "float64", "int64", "uint8"):
        finite = values[np.isfinite(values)][:-1] if dtype in INTS else values
        x, tx = pair(finite, dtype)
        for name in ("isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit",
                     "nan_to_num", "logical_not"):
            assert_same(getattr(x, name)(), getattr(tx, name)())
            assert_same(getattr(shrew, name)(x), getattr(torch, name)(tx))
        assert_same(x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0),
                    tx.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0))


def test_logical_and_bitwise_operators():
    a, ta = pair(np.array([0, 3, -2, 5]), "int32")
    b, tb = pair(np.array([1, 0, -2, 6]), "int64")
    m, tm = pair(np.array([True, False, True, False]), "bool")
    for fn in (lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y, lambda x, y: ~x,
               lambda x, y: x & 6, lambda x, y: 6 | x, lambda x, y: x.logical_and(y),
               lambda x, y: x.logical_xor(y), lambda x, y: x.logical_or(y)):
        assert_same(fn(a, b), fn(ta, tb))
        assert_same(fn(m, m), fn(tm, tm))
        assert_same(fn(m, a), fn(tm, ta))


def test_where_with_numbers_and_logit():
    x, tx = pair(np.array([0.1, 0.5, 0.97, 0.0]), "float64", requires_grad=True)
    assert_same(shrew.where(x > 0.3, 1.0, 0), torch.where(tx > 0.3, 1.0, 0))
    assert_same(x.where(x > 0.3, -1.0), tx.where(tx > 0.3, -1.0))
    for eps in (None, 0.05):
        assert_same(x.logit(eps), tx.logit(eps))
    x.logit(0.05).sum().backward()
    tx.logit(0.05).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_errors_name_the_op_and_dtypes():
    f, i = shrew.ones(3), shrew.ones(3, dtype=shrew.int64)
    with pytest.raises(shrew.DTypeError, match="bitwise_and.*float32"):
        f & i  # noqa: B018
    with pytest.raises(shrew.DTypeError, match="bitwise_not"):
        ~f  # noqa: B018
    with pytest.raises(shrew.DTypeError, match="hypot"):
        shrew.hypot(i, i)
    with pytest.raises(shrew.ShrewError, match="rounding_mode"):
        f.div(f, rounding_mode="round")
    with pytest.raises(shrew.ShrewError, match="negative integer powers"):
        i ** -1
    with pytest.raises(shrew.ShapeError, match="maximum"):
        shrew.maximum(shrew.ones(3), shrew.ones(4))
    with pytest.raises(shrew.DTypeError, match="remainder.*bool"):
        shrew.remainder(shrew.ones(2, dtype=shrew.bool), shrew.ones(2, dtype=shrew.bool))
    with pytest.raises(shrew.DTypeError, match="addcdiv"):
        shrew.addcdiv(f, i, i)
    with pytest.raises(shrew.ShapeError, match="clamp|maximum"):
        f.clamp(shrew.zeros(2), None)


# -- tanh's and sigmoid's gradients: one fused binary kernel each ----------------------------
@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_backward_is_torchs_kernel(name, dtype):
    """binary("tanh_backward", g, y) is torch.ops.aten.tanh_backward(g, y), and likewise
    for sigmoid, to the last bit or two (torch's vectorised kernel fuses a multiply-add)."""
    from shrew.ops.elementwise.recorded import binary
    rng = np.random.default_rng(11)
    g = rng.standard_normal((4, 5)).astype(dtype)
    y = getattr(torch, name)(torch.tensor(rng.standard_normal((4, 5)).astype(dtype))).numpy()
    ours = binary(f"{name}_backward", shrew.tensor(g), shrew.tensor(y))
    theirs = getattr(torch.ops.aten, f"{name}_backward")(torch.tensor(g), torch.tensor(y))
    assert ours.dtype.name == dtype
    ulp = np.finfo(dtype).eps
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2 * ulp, atol=ulp)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_fused_backward_higher_orders_match_torch(name):
    """The first three derivatives of sum(tanh(x)) and sum(sigmoid(x)), each recorded
    through the one before (create_graph), and the nodes' names, as PyTorch's."""
    x = np.random.default_rng(5).standard_normal((3, 4))
    ours, theirs = shrew.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_s, out_t = getattr(ours, name)().sum(), getattr(theirs, name)().sum()
    for order in range(3):
        (out_s,) = shrew.autograd.grad(out_s, ours, create_graph=True)
        (out_t,) = torch.autograd.grad(out_t, theirs, create_graph=True)
        np.testing.assert_allclose(out_s.detach().numpy(), out_t.detach().numpy(),
                                   rtol=1e-12, atol=1e-14, err_msg=f"derivative {order + 1}")
        if order == 0:
            assert out_s.grad_fn.name() == out_t.grad_fn.name()  # e.g. TanhBackwardBackward0
        out_s, out_t = out_s.sum(), out_t.sum()


@pytest.mark.parametrize("name", ["tanh_backward", "sigmoid_backward"])
def test_fused_backward_gradcheck(name):
    from shrew.ops.elementwise.recorded import binary
    g = Input((2, 3), 1)
    y = Input((3,), 2)  # broadcast against g
    check_grad(lambda a, b: binary(name, a, b), g, y)
    check_grad(lambda a, b: second_derivative_of(lambda t: binary(name, t, b), a), g, y)
