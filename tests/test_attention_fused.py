"""Fused attention (base.FastAttention, backends/cpu/backend.py and cpu/attention.py,
ops/attention.py): one call each way on the cpu backend's MKL and oneDNN, against PyTorch
and against the core's composition of the same attention."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import shrew
from shrew import nn
from shrew.backends import cpu
from shrew.backends.cpu import mkl, onednn
from shrew.backends.registry import get_backend
from shrew.nn import functional as F
from support import needs_loadable

needs_fast = needs_loadable(onednn, mkl)

N, T, H, D = 2, 128, 4, 16   # 2 * 4 * 128 * 128 scores: large enough to be fused
E = H * D


@pytest.fixture(autouse=True)
def libraries_on():
    with cpu.use_onednn(True), cpu.use_mkl(True):
        yield


@pytest.fixture
def composed():
    """A context manager hiding the cpu backend's fused attention (the core composes)."""
    backend_type = type(get_backend("cpu"))

    class Hidden:
        def __enter__(self):
            self.saved = backend_type.attention, backend_type.attention_backward
            del backend_type.attention, backend_type.attention_backward

        def __exit__(self, *exc):
            backend_type.attention, backend_type.attention_backward = self.saved
    return Hidden()


def _packed(seed=0, length=T):
    return np.random.default_rng(seed).standard_normal((N, length, 3 * E)).astype(np.float32)


def _heads(lib, x, length=T):
    """q, k, v [N, H, T, D] as views of one [N, T, 3E] projection, heads interleaved."""
    return [x.narrow(-1, i * E, E).reshape(N, length, H, D).transpose(1, 2) for i in range(3)]


def _run(lib, packed, cotangent, **kwargs):
    x = lib.tensor(packed, requires_grad=True)
    q, k, v = _heads(lib, x)
    sdpa = F.scaled_dot_product_attention if lib is shrew else \
        torch.nn.functional.scaled_dot_product_attention
    out = sdpa(q, k, v, **kwargs)
    merged = out.transpose(1, 2).reshape(N, T, E)
    (merged * lib.tensor(cotangent)).sum().backward()
    return out, merged.detach().numpy(), x.grad.numpy()


def _close(got, want, terms=T * D):
    tol = 2e-7 * terms
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


@needs_fast
@pytest.mark.parametrize("on_onednn", [False, True])
def test_the_products_run_on_the_library_chosen_for_the_cpu_vendor(monkeypatch, on_onednn):
    """attention.py's six products (scores and weighted values; the weights' gradient, dq,
    dk and dv) run on oneDNN's matmul where vendor.py says so (CPUs not Intel's), the
    scale on the three that carry it and the results written where the heads interleave;
    else on MKL's batched GEMMs.  PyTorch's values either way."""
    from shrew.backends.cpu import vendor
    monkeypatch.setattr(vendor, "f32_products_on_onednn", on_onednn)
    scales = []
    real = onednn.matmul.matmul
    monkeypatch.setattr(onednn.matmul, "matmul", lambda *a: scales.append(a[4]) or real(*a))
    packed, cot = _packed(), _packed(1)[..., :E]
    _, value, grad = _run(shrew, packed, cot, is_causal=True, scale=0.3)
    assert sorted(scales) == ([0.3] * 3 + [1.0] * 3 if on_onednn else [])
    _, t_value, t_grad = _run(torch, packed, cot, is_causal=True, scale=0.3)
    _close(value, t_value)
    _close(grad, t_grad)


@needs_fast
@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"scale": 0.3}], ids=str)
def test_fused_matches_torch_and_the_composition(kwargs, composed):
    packed, cot = _packed(), _packed(1)[..., :E]
    out, value, grad = _run(shrew, packed, cot, **kwargs)
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    _, t_value, t_grad = _run(torch, packed, cot, **kwargs)
    _close(value, t_value)
    _close(grad, t_grad)
    with composed:
        plain, c_value, c_grad = _run(shrew, packed, cot, **kwargs)
    assert plain.grad_fn.name() != out.grad_fn.name()
    _close(value, c_value)
    _close(grad, c_grad)


@needs_fast
def test_a_batch_of_one_packed_projection():
    """One sequence's heads, [1, T, H*D] seen as [1, H, T, D], are evenly spaced D apart,
    closer than MKL's strided batch takes its results: they go through its list of
    matrices (this gave garbage gradients before)."""
    packed = _packed()[:1]
    results = []
    for lib in (shrew, torch):
        x = lib.tensor(packed, requires_grad=True)
        q, k, v = (x.narrow(-1, i * E, E).reshape(1, T, H, D).transpose(1, 2)
                   for i in range(3))
        sdpa = F.scaled_dot_product_attention if lib is shrew else \
            torch.nn.functional.scaled_dot_product_attention
        out = sdpa(q, k, v, is_causal=True)
        out.square().sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy()))
    for got, want in zip(*results):
        _close(got, want)


@needs_fast
def test_results_keep_the_heads_interleaved():
    """The output and the gradients lie as [N, T, H, D], so merging the heads (and the
    projection's gradient) is a view, not a copy."""
    x = shrew.tensor(_packed(), requires_grad=True)
    q, k, v = _heads(shrew, x)
    out = F.scaled_dot_product_attention(q, k, v)
    assert out.transpose(1, 2).is_contiguous()
    grads = shrew.autograd.grad(out.sum(), (q, k, v))
    assert all(g.transpose(1, 2).is_contiguous() for g in grads)
    contiguous = [t.contiguous() for t in (q, k, v)]
    assert F.scaled_dot_product_attention(*contiguous).is_contiguous()


@needs_fast
def test_float_mask_and_partial_gradients():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((N, H, T, D)).astype(np.float32) for _ in range(3))
    mask = np.where(rng.random((T, T)) < 0.2, -np.inf, rng.standard_normal((T, T)))
    mask[:, 0] = 0.0   # no row masked whole
    mask = mask.astype(np.float32)
    results = []
    for lib in (shrew, torch):
        qt, kt, vt = (lib.tensor(a, requires_grad=grad) for a, grad in
                      ((q, False), (k, True), (v, True)))
        sdpa = F.scaled_dot_product_attention if lib is shrew else \
            torch.nn.functional.scaled_dot_product_attention
        out = sdpa(qt, kt, vt, attn_mask=lib.tensor(mask))
        (out * out).sum().backward()
        assert qt.grad is None
        results.append([out.detach().numpy(), kt.grad.numpy(), vt.grad.numpy()])
    for got, want in zip(*results):
        _close(got, want)


@needs_fast
def test_double_backward_matches_torch():
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((1, 2, 128, 8)) .astype(np.float32) for _ in range(3))
    results = []
    for lib in (shrew, torch):
        qt, kt, vt = (lib.tensor(a, requires_grad=True) for a in (q, k, v))
        if lib is shrew:
            out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True)
        else:   # PyTorch's fused CPU kernel has no double backward; its composition has
            with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
                out = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt,
                                                                       is_causal=True)
        gq, = lib.autograd.grad((out * out).sum(), qt, create_graph=True)
        (gq * gq).sum().backward()
        results.append([kt.grad.numpy(), vt.grad.numpy()])
    for got, want in zip(*results):
        _close(got, want, terms=4 * T * 8)


@needs_fast
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_a_row_masked_whole_is_composed(composed):
    """softmax over nothing but -inf is NaN along the row, as in the composition: the fused
    call declines it."""
    x = _packed()
    mask = np.zeros((T, T), bool)
    mask[5] = True   # True: may not attend (MultiheadAttention's convention is the other)
    q, k, v = _heads(shrew, shrew.tensor(x))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=shrew.tensor(~mask))
    with composed:
        want = F.scaled_dot_product_attention(q, k, v, attn_mask=shrew.tensor(~mask))
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    assert np.isnan(out.numpy()[:, :, 5]).all()


@needs_fast
def test_fused_is_deterministic():
    packed, cot = _packed(), _packed(1)[..., :E]
    first, second = _run(shrew, packed, cot, is_causal=True), _run(shrew, packed, cot,
                                                                   is_causal=True)
    for a, b in zip(first[1:], second[1:]):
        assert np.array_equal(a, b)


@needs_fast
def test_in_place_change_of_an_input_before_backward_raises():
    rng = np.random.default_rng(5)
    q, k, v = (shrew.tensor(rng.standard_normal((N, H, T, D)).astype(np.float32),
                            requires_grad=True) * 1.0 for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v)
    k.mul_(2.0)
    with pytest.raises(shrew.ShrewError, match="modified by an inplace operation"):
        out.sum().backward()


def _module_pair(seed, batch_first):
    """PyTorch's MultiheadAttention and shrew's with the same parameters."""
    torch.manual_seed(seed)
    reference = torch.nn.MultiheadAttention(E, H, batch_first=batch_first)
    module = nn.MultiheadAttention(E, H, batch_first=batch_first)
    module.load_state_dict({k: shrew.tensor(v.detach().numpy())
                            for k, v in reference.state_dict().items()})
    return reference, module


@needs_fast
def test_multihead_attention_matches_torch():
    """TransformerBlock's call: self-attention, causal, no weights returned."""
    reference, module = _module_pair(0, batch_first=True)
    x = np.random.default_rng(6).standard_normal((N, T, E)).astype(np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(T)
    results = []
    for lib, mod in ((shrew, module), (torch, reference)):
        xt = lib.tensor(x, requires_grad=True)
        out, weights = mod(xt, xt, xt, need_weights=False, is_causal=True,
                           attn_mask=None if lib is shrew else mask)
        assert weights is None
        (out * out).sum().backward()
        results.append([out.detach().numpy(), xt.grad.numpy(),
                        mod.in_proj_weight.grad.numpy()])
    for got, want in zip(*results):
        _close(got, want, terms=T * E)


@needs_fast
def test_dropout_and_returned_weights_are_composed():
    x = shrew.tensor(_packed(), requires_grad=True)
    q, k, v = _heads(shrew, x)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert out.grad_fn.name() != "ScaledDotProductFlashAttentionForCpuBackward0"
    mha = nn.MultiheadAttention(E, H, batch_first=True)
    y = shrew.tensor(_packed()[..., :E])
    out, weights = mha(y, y, y)
    assert weights.shape == (N, T, T)
    assert math.isclose(float(weights.sum()), N * T, rel_tol=1e-4)


def _ops(out) -> list:
    """The ops of out's graph."""
    seen, stack, found = set(), [out], []
    while stack:
        t = stack.pop()
        if t.op is not None and t.id not in seen:
            seen.add(t.id)
            found.append(t.op)
            stack.extend(t.op.inputs())
    return found


def _mha_grads(module, x, create_graph=False):
    xt = shrew.tensor(x, requires_grad=True)
    out, _ = module(xt, xt, xt, need_weights=False, is_causal=True)
    ops = _ops(out)
    if create_graph:
        gx, = shrew.autograd.grad((out * out).sum(), xt, create_graph=True)
        (gx * gx).sum().backward()
    else:
        (out * out).sum().backward()
    grads = [xt.grad.numpy(), module.in_proj_weight.grad.numpy()]
    module.zero_grad()
    return ops, grads


@needs_fast
@pytest.mark.parametrize("create_graph", [False, True])
def test_self_attention_is_one_packed_node(create_graph, composed):
    """MultiheadAttention's self-attention records one Attention node over the packed
    q/k/v projection, whose gradient is the projection's whole gradient (no narrows
    padded and summed); against the composition, double backward included."""
    module = nn.MultiheadAttention(E, H, batch_first=True)
    x = np.random.default_rng(7).standard_normal((N, T, E)).astype(np.float32)
    ops, fused = _mha_grads(module, x, create_graph)
    packed = [op for op in ops if isinstance(op, shrew.core.op.Attention)]
    assert len(packed) == 1 and packed[0].heads == H and packed[0].q is packed[0].k
    assert not any(isinstance(op, shrew.core.op.Narrow) for op in ops)
    with composed:
        ops, plain = _mha_grads(module, x, create_graph)
    assert not any(isinstance(op, shrew.core.op.Attention) for op in ops)
    for got, want in zip(fused, plain):
        _close(got, want, terms=4 * T * E)


@needs_fast
@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_with_a_padding_mask_matches_torch(batch_first):
    """The packed node with a key-padding mask added to the causal one, batch-first or
    not, against PyTorch."""
    reference, module = _module_pair(1, batch_first)
    x = np.random.default_rng(9).standard_normal((N, T, E)).astype(np.float32)
    if not batch_first:
        x = np.ascontiguousarray(x.transpose(1, 0, 2))
    padding = np.zeros((N, T), bool)
    padding[1, -7:] = True
    causal = np.triu(np.ones((T, T), bool), 1)
    results = []
    for lib, mod in ((shrew, module), (torch, reference)):
        xt = lib.tensor(x, requires_grad=True)
        out, _ = mod(xt, xt, xt, need_weights=False, key_padding_mask=lib.tensor(padding),
                     attn_mask=lib.tensor(causal))
        (out * out).sum().backward()
        results.append([out.detach().numpy(), xt.grad.numpy(),
                        mod.in_proj_weight.grad.numpy(), mod.in_proj_bias.grad.numpy()])
    for got, want in zip(*results):
        _close(got, want, terms=T * E)


def test_the_exporter_records_the_composition():
    """The C exporter hides base.FastAttention: a traced step sees products and a softmax."""
    from shrew.export.trace import recording
    x = shrew.tensor(_packed())
    q, k, v = _heads(shrew, x)
    with recording(x._backend, {"x": x._data}) as rec:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    names = [call.name for call in rec.calls]
    assert "attention" not in names and "softmax" in names and names.count("matmul") == 2
    np.testing.assert_allclose(out.numpy(), F.scaled_dot_product_attention(
        q, k, v, is_causal=True).numpy(), rtol=1e-5, atol=1e-5)


def test_the_protocol_lists_its_methods_and_the_cpu_backend_has_them():
    from shrew.backends.base import FAST_ATTENTION, FastAttention
    from shrew.export.trace import FAST_PATHS
    assert set(FAST_ATTENTION) == {n for n in vars(FastAttention) if not n.startswith("_")}
    assert all(callable(getattr(get_backend("cpu"), n)) for n in FAST_ATTENTION)
    assert set(FAST_ATTENTION) <= set(FAST_PATHS)
