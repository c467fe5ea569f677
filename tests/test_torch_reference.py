"""Optional: forward values, gradients and dtype promotion against PyTorch (CPU, float64)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import shrew

torch = pytest.importorskip("torch")
F = torch.nn.functional

DTYPES = {shrew.float16: torch.float16, shrew.float32: torch.float32,
          shrew.float64: torch.float64, shrew.int32: torch.int32, shrew.int64: torch.int64,
          shrew.bool: torch.bool}


def both(*arrays, grad=True):
    """Each numpy array as a (shrew, torch) pair of float64 leaves."""
    out = []
    for a in arrays:
        a = np.asarray(a)
        out.append((shrew.tensor(a, requires_grad=grad and a.dtype.kind == "f"),
                    torch.tensor(a, requires_grad=grad and a.dtype.kind == "f")))
    return out


def compare(fn_shrew, fn_torch, *arrays, rtol=1e-10, atol=1e-12, seed=0):
    """Forward values and the gradients of sum(out * c) agree."""
    pairs = both(*arrays)
    s_out = fn_shrew(*[p[0] for p in pairs])
    t_out = fn_torch(*[p[1] for p in pairs])
    assert s_out.shape == tuple(t_out.shape)
    np.testing.assert_allclose(s_out.numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol)
    if not t_out.requires_grad:
        return
    c = np.random.default_rng(seed).standard_normal(s_out.shape)
    store = (s_out * shrew.tensor(c)).sum().backward()
    (t_out * torch.tensor(c)).sum().backward()
    for (s, t) in pairs:
        if t.requires_grad:
            np.testing.assert_allclose(store[s].numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4)) * 2
POS = np.abs(X) + 0.1

UNARY = [
    ("neg", lambda x: -x, lambda x: -x), ("abs", lambda x: x.abs(), torch.abs),
    ("exp", lambda x: x.exp(), torch.exp), ("log", lambda x: x.log(), torch.log),
    ("sqrt", lambda x: x.sqrt(), torch.sqrt), ("square", lambda x: x.square(), torch.square),
    ("relu", lambda x: x.relu(), torch.relu), ("sigmoid", lambda x: x.sigmoid(), torch.sigmoid),
    ("tanh", lambda x: x.tanh(), torch.tanh), ("gelu", lambda x: x.gelu(), F.gelu),
    ("gelu_tanh", lambda x: x.gelu(approximate="tanh"), lambda x: F.gelu(x, approximate="tanh")),
    ("silu", lambda x: x.silu(), F.silu), ("sin", lambda x: x.sin(), torch.sin),
    ("cos", lambda x: x.cos(), torch.cos), ("floor", lambda x: x.floor(), torch.floor),
    ("ceil", lambda x: x.ceil(), torch.ceil), ("round", lambda x: x.round(), torch.round),
    ("erf", lambda x: x.erf(), torch.erf), ("sign", lambda x: x.sign(), torch.sign),
]


@pytest.mark.parametrize("name, fs, ft", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, fs, ft):
    compare(fs, ft, POS if name in ("log", "sqrt") else X)


def test_round_half_to_even_like_torch():
    v = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5])
    np.testing.assert_array_equal(shrew.tensor(v).round().numpy(), torch.tensor(v).round().numpy())


@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, False), (-1, True), ((0, 1), False),
                                          ((-1, 0), True)])
def test_reductions(dim, keepdim):
    v = rng.standard_normal((3, 4, 2))
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    compare(lambda x: x.sum(dim, keepdim), lambda x: x.sum(**kw), v)
    compare(lambda x: x.mean(dim, keepdim), lambda x: x.mean(**kw), v)
    full = () if dim is None else dim  # amax/amin reduce everything over dim=()
    compare(lambda x: x.amax(dim, keepdim), lambda x: torch.amax(x, full, keepdim), v)
    compare(lambda x: x.amin(dim, keepdim), lambda x: torch.amin(x, full, keepdim), v)


def test_max_min_ties_like_torch_amax():
    v = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    compare(lambda x: x.amax(1), lambda x: torch.amax(x, 1), v)
    compare(lambda x: x.min(), lambda x: torch.amin(x), v)
    compare(lambda x: x.max(), lambda x: torch.amax(x), np.ones((2, 2)))


def test_argmax_argmin_like_torch():
    v = np.array([[1, 5, 5, 0], [7, 0, 7, -1], [2, 2, 2, 2]], dtype=np.float64)
    for dim in (0, 1, -1):
        assert shrew.tensor(v).argmax(dim).tolist() == torch.tensor(v).argmax(dim).tolist()
        assert shrew.tensor(v).argmin(dim).tolist() == torch.tensor(v).argmin(dim).tolist()
    assert shrew.tensor(v).argmax().item() == torch.tensor(v).argmax().item()


@pytest.mark.parametrize("sa, sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                    ((5, 2, 3), (3, 4)), ((2, 1, 2, 3), (4, 3, 2)),
                                    ((3,), (2, 3, 4)), ((4, 2, 3), (3,))])
def test_matmul(sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    compare(lambda x, y: x @ y, lambda x, y: x @ y, a, b)


@pytest.mark.parametrize("stride, padding", [(1, 0), (2, 1), ((1, 2), (2, 0)), ((2, 3), (1, 1))])
def test_conv2d(stride, padding):
    x, w = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 2))
    compare(lambda a, b: shrew.conv2d(a, b, stride, padding),
            lambda a, b: F.conv2d(a, b, stride=stride, padding=padding), x, w)


@pytest.mark.parametrize("stride, padding", [(1, 0), (2, 1), (3, 2)])
def test_conv1d(stride, padding):
    x, w = rng.standard_normal((2, 3, 9)), rng.standard_normal((4, 3, 3))
    compare(lambda a, b: shrew.conv1d(a, b, stride, padding),
            lambda a, b: F.conv1d(a, b, stride=stride, padding=padding), x, w)


@pytest.mark.parametrize("kernel, stride, padding", [(2, None, 0), (3, 1, 1),
                                                     ((3, 2), (2, 1), (1, 0)), ((2, 3), 2, (1, 1))])
def test_pools(kernel, stride, padding):
    x = rng.standard_normal((2, 2, 6, 5))
    compare(lambda a: shrew.max_pool2d(a, kernel, stride, padding),
            lambda a: F.max_pool2d(a, kernel, stride, padding), x)
    compare(lambda a: shrew.avg_pool2d(a, kernel, stride, padding),
            lambda a: F.avg_pool2d(a, kernel, stride, padding, count_include_pad=True), x)


@pytest.mark.parametrize("kernel, stride, padding", [(3, 2, 1), ((2, 3), 1, (1, 1))])
def test_max_pool_over_minus_infinity_names_an_element_inside(kernel, stride, padding):
    """A window of -inf values that overlaps the padding: torch gives its gradient to the
    window's first element inside the input, never to the padding."""
    x = np.full((2, 2, 5, 4), -np.inf)
    x[0, 0, 2, 2] = 1.5
    compare(lambda a: shrew.max_pool2d(a, kernel, stride, padding),
            lambda a: F.max_pool2d(a, kernel, stride, padding), x)


def test_gather_scatter():
    x = rng.standard_normal((3, 4))
    idx = np.array([[0, 3, 3], [1, 1, 0], [2, 0, 1]])
    compare(lambda a: a.gather(1, shrew.tensor(idx)),
            lambda a: a.gather(1, torch.tensor(idx)), x)
    rows = np.array([[2, 0, 0, 1], [1, 1, 2, 0]])
    compare(lambda a: a.gather(0, shrew.tensor(rows)),
            lambda a: a.gather(0, torch.tensor(rows)), x)
    src = rng.standard_normal((3, 3))
    compare(lambda s: shrew.scatter_add((3, 4), 1, shrew.tensor(idx), s),
            lambda s: torch.zeros(3, 4, dtype=torch.float64).scatter_add(1, torch.tensor(idx), s),
            src)


@pytest.mark.parametrize("pads", [(1, 2), (0, 0, 1, 0), (-1, 1), (1, -2, -1, 2),
                                  (2, 1, 0, 1, 1, 1)])
def test_pad(pads):
    x = rng.standard_normal((2, 3, 4))
    compare(lambda a: a.pad(pads, 0.5), lambda a: F.pad(a, pads, value=0.5), x)


def test_cat_where_clamp():
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 1))
    compare(lambda x, y: shrew.cat([x, y], -1), lambda x, y: torch.cat([x, y], -1), a, b)
    cond = rng.random((2, 3)) > 0.5
    compare(lambda x, y: shrew.where(shrew.tensor(cond), x, y),
            lambda x, y: torch.where(torch.tensor(cond), x, y), a, b)
    v = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0])   # includes the bounds themselves
    compare(lambda x: x.clamp(-1.0, 1.0), lambda x: x.clamp(-1.0, 1.0), v)
    compare(lambda x: x.clamp(min=0.0), lambda x: x.clamp(min=0.0), v)


def test_powf_affine_div():
    compare(lambda x: x ** 2.5, lambda x: x ** 2.5, POS)
    compare(lambda x: x ** 0.0, lambda x: x ** 0.0, np.array([0.0, 1.0, -2.0]))
    compare(lambda x: x.affine(1.5, -2.0), lambda x: x * 1.5 - 2.0, X)
    compare(lambda a, b: a / b, lambda a, b: a / b, X, POS[:, :1])
    compare(lambda x: 2.0 / x, lambda x: 2.0 / x, POS)


def test_comparisons():
    a, b = rng.integers(0, 3, (3, 4)).astype(float), rng.integers(0, 3, (4,)).astype(float)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        np.testing.assert_array_equal(getattr(shrew.tensor(a), name)(shrew.tensor(b)).numpy(),
                                      getattr(torch.tensor(a), name)(torch.tensor(b)).numpy())


def test_hessian_vector_product_like_torch():
    w1, w2, x0, v = (rng.standard_normal(s) for s in ((5, 3), (5,), (3,), (3,)))

    def f_shrew(x):
        return (shrew.tensor(w2) * (shrew.tensor(w1) @ x).tanh()).sum()

    def f_torch(x):
        return (torch.tensor(w2) * torch.tanh(torch.tensor(w1) @ x)).sum()

    x = shrew.tensor(x0, requires_grad=True)
    g = f_shrew(x).backward(create_graph=True)[x]
    hv = (g * shrew.tensor(v)).sum().backward()[x]
    _, expect = torch.autograd.functional.hvp(f_torch, torch.tensor(x0), torch.tensor(v))
    np.testing.assert_allclose(hv.numpy(), expect.numpy(), rtol=1e-10, atol=1e-12)


# -- dtype promotion -----------------------------------------------------------------------
def _operand(kind, dtype):
    if kind == "tensor":
        return np.ones(2, dtype=dtype.np)
    if kind == "0d":
        return np.array(1, dtype=dtype.np)
    return {"float": 1.5, "int": 2, "bool": True}[dtype]


OPERANDS = ([("tensor", d) for d in DTYPES] + [("0d", d) for d in DTYPES] +
            [("scalar", "float"), ("scalar", "int"), ("scalar", "bool")])


def _make(kind, dtype, lib):
    v = _operand(kind, dtype)
    if kind == "scalar":
        return v
    return shrew.tensor(v) if lib == "shrew" else torch.tensor(v)


@pytest.mark.parametrize("op", ["add", "mul", "div", "lt"])
def test_binary_promotion_matches_torch(op):
    import operator
    fn = {"add": operator.add, "mul": operator.mul, "div": operator.truediv, "lt": operator.lt}[op]
    mismatches = []
    for (ka, da), (kb, db) in itertools.product(OPERANDS, repeat=2):
        if ka == "scalar" and kb == "scalar":
            continue
        try:
            expect = fn(_make(ka, da, "torch"), _make(kb, db, "torch"))
        except RuntimeError:
            continue  # torch refuses (e.g. bool - bool); shrew may too
        got = fn(_make(ka, da, "shrew"), _make(kb, db, "shrew"))
        if DTYPES[got.dtype] != expect.dtype or \
                not np.allclose(got.numpy().astype(float), expect.numpy().astype(float)):
            mismatches.append(f"{ka} {da} {op} {kb} {db}: shrew {got.dtype}, torch {expect.dtype}")
    assert not mismatches, "\n".join(mismatches)
