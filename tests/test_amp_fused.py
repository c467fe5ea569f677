"""The cpu backend's fused paths in float16 and bfloat16 (backends/cpu/widened.py): attention,
its gradient, and the softmax and GELU gradients run their float32 kernels on widened
inputs and round once, as PyTorch's CPU kernels compute those dtypes.  Against PyTorch in
the same dtype, against the float32 path, and the memory they save in a bfloat16
autocast transformer step."""
from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import torch

import shrew
from shrew.backends import cpu
from shrew.backends.cpu import mkl, onednn, widened
from shrew.nn import functional as F
from support import needs_loadable

pytestmark = needs_loadable(onednn, mkl)

N, T, H, D = 2, 128, 4, 16   # 2 * 4 * 128 * 128 scores: large enough to be fused
E = H * D
# Within a few roundings of the 16-bit dtype (PyTorch's own tolerances for them).
TOLERANCE = {"bfloat16": dict(rtol=1.6e-2, atol=1e-2), "float16": dict(rtol=1e-3, atol=1e-3)}
DTYPES = ["bfloat16", "float16"]


@pytest.fixture(autouse=True)
def libraries_on():
    with cpu.use_onednn(True), cpu.use_mkl(True):
        yield


def _close(got, want, dtype, atol=None):
    assert str(got.dtype).endswith(dtype), got.dtype
    tolerance = dict(TOLERANCE[dtype], **({} if atol is None else {"atol": atol}))
    np.testing.assert_allclose(got.float().detach().numpy(),
                               want.float().detach().numpy(), **tolerance)


def _attention(lib, packed, cotangent, dtype):
    """Causal self-attention of q, k, v viewed from one packed [N, T, 3E] tensor (heads
    interleaved, as a projection's output); (output, packed's gradient, the name of the
    node that made the output)."""
    x = lib.tensor(packed).to(getattr(lib, dtype)).requires_grad_()
    q, k, v = (x.narrow(-1, i * E, E).reshape(N, T, H, D).transpose(1, 2) for i in range(3))
    sdpa = F.scaled_dot_product_attention if lib is shrew else \
        torch.nn.functional.scaled_dot_product_attention
    out = sdpa(q, k, v, is_causal=True)
    node = type(getattr(out, "_op", None)).__name__
    out.backward(lib.tensor(cotangent).to(getattr(lib, dtype)))
    return out, x.grad, node


@pytest.mark.parametrize("dtype", DTYPES)
def test_low_precision_attention_is_fused_and_matches_pytorch(dtype):
    rng = np.random.default_rng(0)
    packed = rng.standard_normal((N, T, 3 * E)).astype(np.float32)
    cotangent = rng.standard_normal((N, H, T, D)).astype(np.float32)
    out, grad, node = _attention(shrew, packed, cotangent, dtype)
    assert node == "Attention"   # one fused node, not the composition
    want_out, want_grad, _ = _attention(torch, packed, cotangent, dtype)
    _close(out, want_out, dtype)
    _close(grad, want_grad, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_low_precision_attention_rounds_the_float32_paths_result_once(dtype):
    rng = np.random.default_rng(1)
    low = shrew.tensor(rng.standard_normal((N, H, T, D)).astype(np.float32)
                       ).to(getattr(shrew, dtype))
    q, k, v = low, low.flip(2), low * 0.5
    got = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    wide = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    assert np.array_equal(got.float().numpy(), wide.to(getattr(shrew, dtype)).float().numpy())


def _apply(fns, fn, x):
    if fn == "gelu_tanh":
        return fns.gelu(x, approximate="tanh")
    return fns.gelu(x) if fn == "gelu" else getattr(fns, fn)(x, dim=-1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", ["gelu_tanh", "gelu", "softmax", "log_softmax"])
def test_low_precision_gradients_match_pytorch(dtype, fn):
    rng = np.random.default_rng(2)
    data = rng.standard_normal((64, 1024)).astype(np.float32)   # oneDNN's size and up
    cotangent = rng.standard_normal((64, 1024)).astype(np.float32)
    results = []
    for lib, fns in ((shrew, F), (torch, torch.nn.functional)):
        x = lib.tensor(data).to(getattr(lib, dtype)).requires_grad_()
        y = _apply(fns, fn, x)
        y.backward(lib.tensor(cotangent).to(getattr(lib, dtype)))
        results.append(x.grad)
    # log_softmax's gradient, g - exp(y) sum(g), cancels: its error is relative to its
    # largest term (a couple of roundings of g's), not to each result.
    atol = None
    if fn == "log_softmax":
        atol = 2 * float(torch.finfo(getattr(torch, dtype)).eps) * np.abs(cotangent).max()
    _close(*results, dtype, atol)


def test_pieces_give_the_bits_of_one_whole_call(monkeypatch):
    # [8, 4, 256, 256] attention weights and [512, 1024] GELU inputs: several pieces each
    rng = np.random.default_rng(3)
    packed = rng.standard_normal((8, 256, 3 * E)).astype(np.float32)
    hidden = rng.standard_normal((512, 1024)).astype(np.float32)

    def run():
        x = shrew.tensor(packed).bfloat16().requires_grad_()
        q, k, v = (x.narrow(-1, i * E, E).reshape(8, 256, H, D).transpose(1, 2)
                   for i in range(3))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = shrew.tensor(hidden).bfloat16().requires_grad_()
        y = F.gelu(h, approximate="tanh")
        (out.float().square().sum() + F.log_softmax(y, dim=-1).float().sum()).backward()
        return [t.float().detach().numpy() for t in (out, x.grad, y, h.grad)]

    pieces = run()
    assert widened._pieces((hidden,), hidden.shape) != [slice(None)]
    monkeypatch.setattr(widened, "PIECE_ELEMENTS", 1 << 40)
    for got, whole in zip(pieces, run()):
        assert np.array_equal(got, whole), (np.abs(got - whole).max(), got.shape)


def _step_peak(amp: bool) -> float:
    """Peak traced bytes of one transformer_step (benchmarks' workload), after warm-up."""
    benchmarks = str(Path(__file__).resolve().parents[1] / "benchmarks")
    sys.path.insert(0, benchmarks)
    try:
        import shrew_steps
        import workloads
    finally:
        sys.path.remove(benchmarks)
    problem = workloads.WORKLOADS["transformer_step"].make(1.0)
    step = shrew_steps.build("transformer_step", problem, "cpu", amp=amp)
    step()
    step()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        step()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_bfloat16_autocast_step_peaks_below_float32():
    # Issue 32's goal, 0.65x.  Measured 0.62x (48.5 against 78.6 MiB): 0.75x before the
    # weight casts were recast in backward and backward let each activation go once its
    # gradient was through; 1.16x before the fused 16-bit paths.
    assert _step_peak(True) < 0.65 * _step_peak(False)
