"""A linear layer as one call each way (base.FastLinear on the cpu backend): its values and
gradients against PyTorch's and, bit for bit, against the composition it replaces (with
MKL and without), the node it records, double backward, the saved tensors, and what it
leaves to the composition."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import shrew
from shrew.core import op as O
from shrew.backends import cpu
from shrew.backends.cpu import CPUBackend, use_mkl, vendor

F = shrew.nn.functional


def _arrays(dtype, m=64, k=48, n=40, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(dtype),
            (rng.standard_normal((n, k)) / np.sqrt(k)).astype(dtype),
            rng.standard_normal(n).astype(dtype), rng.standard_normal((m, n)).astype(dtype))


def _shrew_step(x, w, b, g, fast=True):
    """y, the three gradients and the variant that made y; fast=False hides
    base.FastLinear (the composition)."""
    sx, sw, sb = (shrew.tensor(a, requires_grad=True) for a in (x, w, b))
    with pytest.MonkeyPatch.context() as patch:
        if not fast:
            patch.setattr(CPUBackend, "linear", None)
        y = F.linear(sx, sw, sb)
        variant = type(y.op)
        y.backward(shrew.tensor(g))
    return y.numpy(), sx.grad.numpy(), sw.grad.numpy(), sb.grad.numpy(), variant


def _torch_step(x, w, b, g):
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    y = torch.nn.functional.linear(tx, tw, tb)
    y.backward(torch.tensor(g))
    return y.detach().numpy(), tx.grad.numpy(), tw.grad.numpy(), tb.grad.numpy()


@pytest.mark.parametrize("mkl", [True, False])
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("shape", [(64, 48, 40), (1, 7, 3), (256, 784, 10), (5, 1, 9)])
def test_values_and_gradients_are_the_compositions_and_match_torch(mkl, dtype, tol, shape):
    """One Linear node (PyTorch's AddmmBackward0) whose gradients are the composition's
    bit for bit (the same calls, made on the arrays), with MKL serving the products or
    numpy; its value too without MKL, and with MKL PyTorch's addmm (the bias joins the
    GEMM's sums: the composition's to rounding); all PyTorch's to rounding."""
    x, w, b, g = _arrays(dtype, *shape)
    with use_mkl(mkl):
        *fused, variant = _shrew_step(x, w, b, g)
        *composed, composed_variant = _shrew_step(x, w, b, g, fast=False)
    assert variant is O.Linear and composed_variant is O.Binary
    for i, (got, expected, want) in enumerate(zip(fused, composed, _torch_step(x, w, b, g))):
        assert got.dtype == dtype
        if i == 0 and mkl:
            np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
        else:
            assert np.array_equal(got, expected)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_with_mkl_the_value_is_one_gemm_onto_the_bias(monkeypatch):
    """With MKL, linear fills its result with the bias and adds the product into it in
    the GEMM (beta = 1), as PyTorch's addmm does."""
    from shrew.backends.cpu.mkl import gemm
    monkeypatch.setattr(vendor, "f32_products_on_onednn", False)   # (MKL's path: Intel's)
    calls = []
    real = gemm.matmul
    monkeypatch.setattr(gemm, "matmul", lambda *a, **k: calls.append(a[3:]) or real(*a, **k))
    x, w, b, _ = _arrays(np.float32, 256, 784, 64)
    with use_mkl(True):
        y = CPUBackend().linear(x, w, b)
    assert calls == [(1.0, 1.0)]   # (alpha, beta), with out= the bias
    np.testing.assert_allclose(y, x @ w.T + b, rtol=2e-5, atol=2e-5)


def test_the_node_and_its_inputs_as_pytorch_names_them():
    x, w, b = (shrew.ones(*s, requires_grad=True) for s in ((4, 3), (2, 3), (2,)))
    y = F.linear(x, w, b)
    assert y.grad_fn.name() == "AddmmBackward0"
    assert [f.variable for f, _ in y.grad_fn.next_functions] == [b, x, w]
    folded = F.linear(x.reshape(2, 2, 3), w, b)
    assert folded.shape == (2, 2, 2) and folded.grad_fn.name() == "ViewBackward0"
    assert folded.grad_fn.next_functions[0][0].name() == "AddmmBackward0"
    assert F.linear(x, w).grad_fn.name() == "MmBackward0"     # no bias: the product


def test_layouts_and_folded_inputs():
    """Transposed views and sliced operands are read in place or copied; a 3-d input is
    folded into one product and its gradient unfolded."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 16)).astype(np.float32)
    wt = rng.standard_normal((16, 12)).astype(np.float32)   # w = wt.T: a transposed view
    b = rng.standard_normal(24).astype(np.float32)[::2]     # a strided bias
    sx, swt, sb = (shrew.tensor(a, requires_grad=True) for a in (x, wt, b.copy()))
    tx, twt, tb = (torch.tensor(a, requires_grad=True) for a in (x, wt, b.copy()))
    y = F.linear(sx, swt.transpose(0, 1), sb[:])
    t = torch.nn.functional.linear(tx, twt.T, tb)
    np.testing.assert_allclose(y.numpy(), t.detach().numpy(), rtol=2e-5, atol=2e-5)
    (y * y).sum().backward()
    (t * t).sum().backward()
    for s, tt in ((sx, tx), (swt, twt), (sb, tb)):
        np.testing.assert_allclose(s.grad.numpy(), tt.grad.numpy(), rtol=2e-4, atol=2e-4)


def test_double_backward_is_recorded_operations():
    """Under create_graph the rule is Tensor operations, so a gradient penalty
    differentiates it again, as PyTorch does."""
    x, w, b, _ = _arrays(np.float64, 6, 5, 4)
    results = []
    for lib in (shrew, torch):
        tx, tw, tb = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.nn.functional.linear(tx, tw, tb).tanh().sum()
        gx, gw = lib.autograd.grad(y, [tx, tw], create_graph=True)
        ((gx * gx).sum() + (gw * gw).sum()).backward()
        results.append([t.grad.numpy() for t in (tx, tw, tb)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_gradients_asked_for_only_where_needed(monkeypatch):
    asked = []
    real = CPUBackend.linear_backward
    monkeypatch.setattr(CPUBackend, "linear_backward",
                        lambda self, *a: asked.append(a[3:]) or real(self, *a))
    x, w, b, _ = _arrays(np.float32, 8, 6, 4)
    sx, sw = shrew.tensor(x), shrew.tensor(w, requires_grad=True)
    sb = shrew.tensor(b)
    F.linear(sx, sw, sb).sum().backward()
    assert asked == [(False, True, False)]
    assert sw.grad.shape == (4, 6) and sx.grad is None and sb.grad is None


def test_an_input_written_in_place_after_the_product_is_caught():
    """The node saves x and w (addmm's mat1 and mat2), not the bias."""
    x, w, b, _ = _arrays(np.float32, 4, 3, 2)
    sx, sw, sb = (shrew.tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.linear(sx * 1.0, sw, sb)
    with shrew.no_grad():
        sb.add_(1.0)
    y.sum().backward()                      # the bias is not needed
    h = sx * 1.0
    y = F.linear(h, sw, sb)
    with shrew.no_grad():
        h.add_(1.0)
    with pytest.raises(shrew.ShrewError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("shape", [(0, 3, 2), (4, 0, 2), (4, 3, 0)])
def test_empty_dims_compose_as_pytorch(shape):
    """An empty dim leaves the product to the composition: with no columns to sum, y is
    the bias in every row, as PyTorch's."""
    x, w, b, g = _arrays(np.float32, *shape)
    *got, _ = _shrew_step(x, w, b, g)
    for one, expected in zip(got, _torch_step(x, w, b, g)):
        np.testing.assert_array_equal(one, expected)


@pytest.mark.parametrize("case", ["mixed dtypes", "no bias", "1-d input", "half"])
def test_what_linear_leaves_to_the_composition(case):
    x, w, b, _ = _arrays(np.float32, 4, 3, 2)
    if case == "mixed dtypes":
        b = b.astype(np.float64)
    elif case == "1-d input":
        x = x[0]
    elif case == "half":
        x, w, b = (a.astype(np.float16) for a in (x, w, b))
    sx, sw = shrew.tensor(x, requires_grad=True), shrew.tensor(w, requires_grad=True)
    sb = None if case == "no bias" else shrew.tensor(b, requires_grad=True)
    y = F.linear(sx, sw, sb)
    assert (type(y.op) is O.Linear) == (case == "half")   # any float dtype, one dtype
    tx, tw = torch.tensor(x), torch.tensor(w)
    tb = None if sb is None else torch.tensor(b)
    if case == "mixed dtypes":   # PyTorch refuses; shrew promotes, as its add does
        assert y.dtype == shrew.float64
        return
    np.testing.assert_allclose(y.numpy(), torch.nn.functional.linear(tx, tw, tb).numpy(),
                               rtol=2e-3 if case == "half" else 2e-6, atol=1e-3)


def test_the_same_inputs_give_the_same_bits():
    x, w, b, g = _arrays(np.float32, 256, 784, 1024)
    first = _shrew_step(x, w, b, g)[:4]
    second = _shrew_step(x, w, b, g)[:4]
    for one, two in zip(first, second):
        assert np.array_equal(one, two)


@pytest.mark.parametrize("on_onednn", [False, True])
def test_float32_products_go_to_the_library_chosen_for_the_cpu_vendor(monkeypatch,
                                                                      on_onednn):
    """vendor.py: float32 linear layers and products from F32_MATMUL_MIN_WORK run on
    oneDNN where the switch says so (CPUs not Intel's), else on MKL; the same values
    either way, the bias inside the product's one rounding."""
    from shrew.backends.cpu import onednn as onednn_package
    monkeypatch.setattr(vendor, "f32_products_on_onednn", on_onednn)
    asked = []
    real = onednn_package.matmul.matmul
    monkeypatch.setattr(onednn_package.matmul, "matmul",
                        lambda *a: asked.append(a[0].dtype) or real(*a))
    x, w, b, g = _arrays(np.float32, 256, 784, 64)
    backend = CPUBackend()
    with use_mkl(True), cpu.use_onednn(True):
        y = backend.linear(x, w, b)
        dx = backend.matmul(g, w)
        small = backend.matmul(x[:4, :8], w[:8, :4])   # below the size: MKL
    assert asked == ([np.float32] * 3 if on_onednn else [])
    want = (x.astype(np.float64) @ w.T.astype(np.float64) + b).astype(np.float32)
    np.testing.assert_allclose(y, want, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(dx, g @ w, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(small, x[:4, :8] @ w[:8, :4], rtol=1e-6, atol=1e-6)


def test_the_vendor_is_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n")
    assert vendor.vendor(info) == "AuthenticAMD"
    assert vendor.vendor(tmp_path / "missing") == ""
