"""layer_norm with a weight and a bias as one call each way (base.FastNorm; the cpu
backend's oneDNN layer norm with scale and shift) and its LayerNorm node: values and
gradients against PyTorch with oneDNN on and off, on small (numpy) and large (oneDNN)
inputs, gradients of some inputs only, double backward, NaN and infinity in a row,
determinism, and the core's composition where the fast path is hidden or declines."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import shrew
from shrew.core import op as O
from shrew.backends import cpu
from shrew.backends.base import FAST_NORM, FastNorm
from shrew.backends.cpu import CPUBackend, onednn
from shrew.export.trace import FAST_PATHS, recording
from shrew.testing import gradcheck
from support import needs_loadable, numpy_layer_norm

F = shrew.nn.functional
TF = torch.nn.functional

needs_onednn = needs_loadable(onednn)

LARGE = (8, 64, 96)    # 49152 elements: past cpu.thresholds.MIN_ELEMENTWISE_SIZE
SMALL = (2, 3, 5)
SHAPES = [(LARGE, 1), (LARGE, 2), (SMALL, 1), (SMALL, 2)]


def _inputs(shape, ndims, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    w = rng.standard_normal(shape[-ndims:]).astype(np.float32)
    b = rng.standard_normal(shape[-ndims:]).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    return x, w, b, g


def _fused(shape) -> bool:
    """Whether the cpu backend runs layer_norm on oneDNN now for float32 of `shape`."""
    return cpu.onednn_active() and np.prod(shape) >= cpu.thresholds.MIN_ELEMENTWISE_SIZE


def _torch(x, w, b, g, ndims, needs=(True, True, True)):
    tx, tw, tb = (torch.tensor(a, requires_grad=n) for a, n in zip((x, w, b), needs))
    ty = TF.layer_norm(tx, x.shape[-ndims:], tw, tb, 1e-5)
    ty.backward(torch.tensor(g))
    return [ty.detach().numpy()] + [None if t.grad is None else t.grad.numpy()
                                    for t in (tx, tw, tb)]


def _shrew(x, w, b, g, ndims, needs=(True, True, True)):
    sx, sw, sb = (shrew.tensor(a, requires_grad=n) for a, n in zip((x, w, b), needs))
    y = F.layer_norm(sx, x.shape[-ndims:], sw, sb, 1e-5)
    node = type(y.op)
    y.backward(shrew.tensor(g))
    return [y.numpy()] + [None if t.grad is None else t.grad.numpy()
                          for t in (sx, sw, sb)], node


def _close(got, want, label, same_nans=True):
    """Within float32 tolerance where PyTorch's values are finite, non-finite where they
    are not (NaN where they are NaN, unless not same_nans)."""
    for name, a, e in zip(("y", "dx", "dweight", "dbias"), got, want):
        what = f"{label}: {name}"
        if e is None:
            assert a is None, f"{what} should be None"
            continue
        finite = np.isfinite(e)
        np.testing.assert_array_equal(np.isfinite(a), finite, err_msg=what)
        if same_nans:
            np.testing.assert_array_equal(np.isnan(a), np.isnan(e), err_msg=what)
        scale = max(1.0, float(np.abs(e[finite]).max(initial=0)))
        np.testing.assert_allclose(a[finite], e[finite], rtol=1e-4, atol=2e-5 * scale,
                                   err_msg=what)


def test_the_protocol_lists_its_methods_and_the_cpu_backend_has_them():
    assert set(FAST_NORM) == {n for n in vars(FastNorm) if not n.startswith("_")}
    assert all(callable(getattr(CPUBackend, name)) for name in FAST_NORM)
    assert set(FAST_NORM) <= set(FAST_PATHS)   # the exporter hides them


@pytest.mark.parametrize("onednn_on", [True, False], ids=["onednn", "numpy"])
@pytest.mark.parametrize("shape, ndims", SHAPES)
def test_values_and_gradients_match_torch(shape, ndims, onednn_on):
    """One LayerNorm node where oneDNN serves (float32, large), the composition of
    standardize, a product and a sum elsewhere: the same values and gradients."""
    x, w, b, g = _inputs(shape, ndims)
    want = _torch(x, w, b, g, ndims)
    with cpu.use_onednn(onednn_on):
        got, node = _shrew(x, w, b, g, ndims)
        assert (node is O.LayerNorm) == _fused(shape)
    _close(got, want, f"{shape} over {ndims}")


@pytest.mark.parametrize("onednn_on", [True, False], ids=["onednn", "numpy"])
@pytest.mark.parametrize("shape", [LARGE, SMALL])
@pytest.mark.parametrize("needs", [(True, False, False), (False, True, True),
                                   (True, False, True), (False, False, True),
                                   (False, True, False)])
def test_only_the_inputs_that_need_grad_get_one(shape, needs, onednn_on):
    x, w, b, g = _inputs(shape, 1, seed=1)
    want = _torch(x, w, b, g, 1, needs)
    with cpu.use_onednn(onednn_on):
        got, _ = _shrew(x, w, b, g, 1, needs)
    _close(got, want, f"{shape}, requires_grad {needs}")


@pytest.mark.parametrize("onednn_on", [True, False], ids=["onednn", "numpy"])
@pytest.mark.parametrize("shape, ndims", [(LARGE, 1), (LARGE, 2), (SMALL, 2)])
def test_double_backward_matches_torch(shape, ndims, onednn_on):
    """create_graph=True: the node's rule is recorded operations (standardize recomputed),
    so second derivatives through x, weight and bias hold."""
    x, w, b, g = _inputs(shape, ndims, seed=2)
    v = [np.random.default_rng(3).standard_normal(a.shape).astype(np.float32)
         for a in (x, w)]

    def second(lib, tensor, layer_norm):
        leaves = [tensor(a, requires_grad=True) for a in (x, w, b)]
        y = layer_norm(leaves[0], x.shape[-ndims:], *leaves[1:], 1e-5)
        gx, gw = (torch.autograd.grad if lib is torch else shrew.autograd.grad)(
            y, leaves[:2], tensor(g), create_graph=True)
        ((gx * tensor(v[0])).sum() + (gw * tensor(v[1])).sum()).backward()
        return ([np.zeros(t.shape) if t.grad is None else t.grad.numpy() for t in leaves],
                type(getattr(y, "op", None)))

    want, _ = second(torch, torch.tensor, TF.layer_norm)
    with cpu.use_onednn(onednn_on):
        got, node = second(shrew, shrew.tensor, F.layer_norm)
        assert (node is O.LayerNorm) == _fused(shape)
    for name, a, e in zip(("x", "weight", "bias"), got, want):
        scale = max(1.0, float(np.abs(e).max()))
        np.testing.assert_allclose(a, e, rtol=1e-3, atol=1e-4 * scale, err_msg=name)


@pytest.fixture
def layer_norm_nodes_in_float64(monkeypatch):
    """A numpy FastNorm layer_norm for every float dtype, so that float64 (gradcheck) makes
    LayerNorm nodes; their rule is then the core's composition."""
    monkeypatch.setattr(CPUBackend, "layer_norm", numpy_layer_norm)


@pytest.mark.parametrize("shape, ndims", [((3, 4), 1), ((2, 3, 4), 2), ((5,), 1)])
def test_the_rule_passes_gradcheck_first_and_second_order(layer_norm_nodes_in_float64,
                                                           shape, ndims):
    rng = np.random.default_rng(4)
    leaves = [shrew.tensor(rng.standard_normal(s), requires_grad=True)
              for s in (shape, shape[-ndims:], shape[-ndims:])]

    def fn(x, w, b):
        y = F.layer_norm(x, shape[-ndims:], w, b, eps=0.1)
        assert not y.requires_grad or type(y.op) is O.LayerNorm   # (none under no_grad)
        return y

    assert gradcheck(fn, leaves)

    def grads(*leaves):   # gradcheck's finite differences run it under no_grad
        with shrew.enable_grad():
            xs = [t if t.requires_grad else t.detach().requires_grad_() for t in leaves]
            cot = shrew.tensor(np.random.default_rng(5).standard_normal(shape))
            return shrew.autograd.grad(fn(*xs), xs, cot, create_graph=True)

    assert gradcheck(grads, leaves)


@needs_onednn
@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # NaN inputs, on purpose
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["x", "g"])
def test_a_nan_or_infinity_spreads_as_in_torch(bad, where):
    """oneDNN makes a row with a NaN or an infinity NaN throughout, forward and backward,
    as PyTorch does; the weight's gradient is NaN where a NaN row meets it, the bias's
    stays finite unless g holds the NaN.  An infinite g makes x's gradient non-finite
    across its row, as PyTorch's, but +-inf at some places where PyTorch has NaN: so does
    the core's composition (numpy), as before the fused path."""
    x, w, b, g = _inputs(LARGE, 1, seed=6)
    (x if where == "x" else g)[1, 2, 3] = bad
    want = _torch(x, w, b, g, 1)
    runs = []
    for onednn_on in (True, False):
        with cpu.use_onednn(onednn_on):
            got, node = _shrew(x, w, b, g, 1)
        assert (node is O.LayerNorm) == onednn_on
        _close(got, want, f"{bad} in {where}, oneDNN {onednn_on}",
               same_nans=not (where == "g" and np.isinf(bad)))
        runs.append(got)
    for a, e in zip(*runs):   # the same NaNs and infinities either way
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
        np.testing.assert_array_equal(np.isinf(a), np.isinf(e))


@needs_onednn
@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # 0 * inf, on purpose
@pytest.mark.parametrize("eps", [1e-5, 0.0])
def test_constant_rows_match_torch(eps):
    """Variance 0: rstd is 1/sqrt(eps), or infinite with eps 0 (NaN rows, as PyTorch's;
    the backward then leaves them to the core's rule)."""
    x, w, b, g = _inputs(LARGE, 1, seed=12)
    x[0, :3] = 2.5
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = TF.layer_norm(tx, x.shape[-1:], tw, tb, eps)
    ty.backward(torch.tensor(g))
    sx, sw, sb = (shrew.tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.layer_norm(sx, x.shape[-1:], sw, sb, eps)
    assert type(y.op) is O.LayerNorm
    y.backward(shrew.tensor(g))
    _close([t.numpy() for t in (y, sx.grad, sw.grad, sb.grad)],
           [t.numpy() for t in (ty.detach(), tx.grad, tw.grad, tb.grad)], f"eps {eps}")


@needs_onednn
def test_the_same_inputs_give_the_same_bits():
    x, w, b, g = _inputs(LARGE, 1, seed=7)
    runs = [_shrew(x, w, b, g, 1) for _ in range(3)]
    assert all(node is O.LayerNorm for _, node in runs)
    for got, _ in runs[1:]:
        assert all(np.array_equal(a, e) for a, e in zip(got, runs[0][0]))


def test_a_backend_without_the_fast_path_gets_the_composition(monkeypatch):
    """Hidden (as the exporter hides it), or declined: standardize, a product and a sum,
    with the same values and gradients."""
    x, w, b, g = _inputs(LARGE, 1, seed=8)
    want = _torch(x, w, b, g, 1)
    monkeypatch.setattr(CPUBackend, "layer_norm", None)
    got, node = _shrew(x, w, b, g, 1)
    assert node is O.Binary   # add_bias's add
    _close(got, want, "hidden")
    monkeypatch.setattr(CPUBackend, "layer_norm", lambda *args: NotImplemented)
    got, node = _shrew(x, w, b, g, 1)
    assert node is O.Binary
    _close(got, want, "declined")


@needs_onednn
def test_a_declined_backward_runs_the_rules_composition(monkeypatch):
    calls = []
    monkeypatch.setattr(CPUBackend, "layer_norm_backward",
                        lambda *args: calls.append(1) or NotImplemented)
    x, w, b, g = _inputs(LARGE, 2, seed=9)
    got, node = _shrew(x, w, b, g, 2)
    assert node is O.LayerNorm and calls
    _close(got, _torch(x, w, b, g, 2), "declined backward")


def test_the_exporter_records_the_composition():
    x, w, b, _ = _inputs(LARGE, 1, seed=10)
    sx, sw, sb = shrew.tensor(x), shrew.tensor(w), shrew.tensor(b)
    with recording(sx._backend, {"x": sx._data, "w": sw._data, "b": sb._data}) as rec:
        y = F.layer_norm(sx, (x.shape[-1],), sw, sb)
    names = [call.name for call in rec.calls]   # standardize, * weight, + bias
    assert names[0] == "standardize" and names.count("binary") == 2, names
    with cpu.use_onednn(False):
        want = F.layer_norm(sx, (x.shape[-1],), sw, sb).numpy()
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)


@needs_onednn
def test_the_node_has_torchs_name_and_inputs():
    x, w, b, _ = _inputs(LARGE, 1)
    sx, sw, sb = (shrew.tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.layer_norm(sx, (x.shape[-1],), sw, sb)
    assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0"
    assert [fn.variable for fn, _ in y.grad_fn.next_functions] == [sx, sw, sb]


# -- the binding ---------------------------------------------------------------------------
@needs_onednn
@pytest.mark.parametrize("rows, cols", [(128, 256), (1024, 96), (64, 4096)])
def test_the_binding_matches_torch(rows, cols):
    x, w, b, g = _inputs((rows, cols), 1, seed=11)
    y, mean, var = onednn.layer_norm_affine(x, w, b, 1e-5)
    tx = torch.tensor(x)
    np.testing.assert_allclose(mean, tx.mean(-1).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(var, tx.var(-1, unbiased=False).numpy(), rtol=1e-4, atol=1e-5)
    dx, dw, db = onednn.layer_norm_affine_backward(g, x, mean, var, w, 1e-5)
    _close([y, dx, dw, db], _torch(x, w, b, g, 1), f"[{rows}, {cols}]")


@needs_onednn
def test_the_binding_declines_what_it_does_not_take():
    x, w, b, g = _inputs((128, 256), 1)
    mean = var = np.ones(128, np.float32)
    assert onednn.layer_norm_affine(x[:4], w, b, 1e-5) is NotImplemented      # small
    assert onednn.layer_norm_affine(x.astype(np.float64), w, b, 1e-5) is NotImplemented
    assert onednn.layer_norm_affine(x, w[:8], b[:8], 1e-5) is NotImplemented   # shapes
    assert onednn.layer_norm_affine(x.reshape(2, 64, 256), w, b, 1e-5) is NotImplemented
    assert onednn.layer_norm_affine_backward(g[:64], x, mean, var, w, 0.0) is NotImplemented
    assert onednn.layer_norm_affine_backward(g, x, mean[:8], var, w, 0.0) is NotImplemented
    with cpu.use_onednn(False):
        assert onednn.layer_norm_affine(x, w, b, 1e-5) is NotImplemented
        be = CPUBackend()
        assert be.layer_norm(x, w, b, 1, 1e-5) is NotImplemented
