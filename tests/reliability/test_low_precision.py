"""float16 and bfloat16 reductions, scans, norms and products accumulate in float32, as
PyTorch's do, and round once: compared with PyTorch (on the CPU, in the same dtype) on every
device that has the dtype.  Rows are long (1000-4000 elements), where accumulating in the
element type drifts far outside the dtype's tolerance (a thousand bfloat16 0.1s once summed
to 32.0)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import shrew
import shrew.nn.functional as F
from support import device_or_fail, each_device

DEVICES = ["cpu", *each_device("opencl")]
LOW = ["float16", "bfloat16"]
EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def _device(name: str, dtype: str) -> str:
    """The device, or a skip naming why it lacks the dtype (POCL has no float16,
    cl_khr_fp16; bfloat16 is on every device)."""
    device = device_or_fail(name)
    backend = shrew.backends.registry.get_backend(device)
    if np.dtype(getattr(shrew, dtype).np) not in backend.dtypes:
        pytest.skip(f"{device} ({backend.description}) has no {dtype}")
    return device


def _pair(values: np.ndarray, dtype: str, device: str) -> tuple:
    """The same low-precision tensor in shrew (on device) and in PyTorch (CPU)."""
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    return shrew.tensor(t.float().numpy(), device=device).to(getattr(shrew, dtype)), t


def _check(got: shrew.Tensor, want: torch.Tensor, dtype: str, what: str) -> None:
    """got has want's dtype and shape, and its values within two ulps of the dtype."""
    assert got.dtype is getattr(shrew, dtype), f"{what}: dtype {got.dtype}, PyTorch {want.dtype}"
    got_values = got.to(shrew.float32).cpu().numpy().astype(np.float64)
    want_values = want.float().numpy().astype(np.float64)
    tol = 2 * EPS[dtype]
    np.testing.assert_allclose(got_values, want_values, rtol=tol, atol=tol, equal_nan=True,
                               err_msg=f"{what} in {dtype}")


def _rows(seed: int = 0, n: int = 4000) -> np.ndarray:
    """[3, n] of positive values around 0.1: sums far beyond the element's precision."""
    return np.random.default_rng(seed).uniform(0.05, 0.15, (3, n))


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", DEVICES)
def test_the_issue_case_sums_to_pytorchs_100(name, dtype):
    device = _device(name, dtype)
    x = shrew.full((1000,), 0.1, dtype=getattr(shrew, dtype), device=device)
    t = torch.full((1000,), 0.1, dtype=getattr(torch, dtype))
    assert float(x.sum()) == float(t.sum()) == 100.0
    assert float(x.mean()) == float(t.mean())
    assert float(x.cumsum(0)[-1]) == float(t.cumsum(0)[-1]) == 100.0


REDUCTIONS = {
    "sum": (lambda x: x.sum(), lambda x: x.sum(1, keepdim=True)),
    "mean": (lambda x: x.mean(), lambda x: x.mean(1)),
    "nansum": (lambda x: x.nansum(), lambda x: x.nansum(1)),
    "var": (lambda x: x.var(), lambda x: x.var(1)),
    "std": (lambda x: x.std(), lambda x: x.std(1, correction=0)),
    "norm": (lambda x: x.norm(), lambda x: x.norm(dim=1)),
    "norm3": (lambda x: x.norm(3), lambda x: x.norm(p=3, dim=1)),
}


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", DEVICES)
def test_reductions_accumulate_in_float32(name, dtype, op):
    device = _device(name, dtype)
    values = _rows()
    if op == "nansum":
        values[:, ::7] = np.nan
    if op in ("var", "std"):  # a spread over a large mean: its deviations are small
        values = 300 + 30 * values
    x, t = _pair(values, dtype, device)
    for fn in REDUCTIONS[op]:
        _check(fn(x), fn(t), dtype, f"{op} on {device}")


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", DEVICES)
def test_prod_accumulates_in_float32(name, dtype):
    device = _device(name, dtype)
    # factors near 1, whose running product drifts when each step rounds
    x, t = _pair(1 + np.random.default_rng(1).uniform(-0.01, 0.012, (3, 1000)), dtype, device)
    # PyTorch's CPU prod (not its cumprod) of 16-bit floats rounds each step: 2.59 for a
    # product of 2.79 in float16, 1.32 for 2.21 in bfloat16; the exact product is the
    # reference, as its CUDA prod and cumprod's last element give it.
    _check(x.prod(1), t.double().prod(1).to(t.dtype), dtype, f"prod on {device}")
    _check(x.cumprod(1), t.cumprod(1), dtype, f"cumprod on {device}")


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", DEVICES)
def test_scans_accumulate_in_float32(name, dtype):
    device = _device(name, dtype)
    x, t = _pair(_rows(2), dtype, device)
    _check(x.cumsum(1), t.cumsum(1), dtype, f"cumsum on {device}")
    _check(x.cumsum(0), t.cumsum(0), dtype, f"cumsum dim 0 on {device}")
    _check(x.logcumsumexp(1), t.logcumsumexp(1), dtype, f"logcumsumexp on {device}")


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", DEVICES)
def test_squares_beyond_float16_do_not_overflow_a_norm_or_std(name, dtype):
    """A thousand 10s: their squares sum to 1e5, beyond float16's 65504, yet the norm is
    316.2 (PyTorch's); a spread of +-300 has a std of 300."""
    device = _device(name, dtype)
    x, t = _pair(np.full(1000, 10.0), dtype, device)
    _check(x.norm(), t.norm(), dtype, f"norm on {device}")
    x, t = _pair(np.tile([-300.0, 300.0], 500), dtype, device)
    _check(x.std(), t.std(), dtype, f"std on {device}")
    _check(shrew.std_mean(x)[0], torch.std_mean(t)[0], dtype, f"std_mean on {device}")


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", DEVICES)
def test_softmax_and_layer_norm_accumulate_in_float32(name, dtype):
    device = _device(name, dtype)
    x, t = _pair(np.random.default_rng(3).standard_normal((4, 3000)), dtype, device)
    _check(x.softmax(1), t.softmax(1), dtype, f"softmax on {device}")
    _check(x.log_softmax(1), t.log_softmax(1), dtype, f"log_softmax on {device}")
    _check(x.softmax(0), t.softmax(0), dtype, f"softmax dim 0 on {device}")
    # rounded once, as PyTorch's: its very bits but for a few near-ties (rounding each exp
    # to the dtype before the division changed a quarter of them)
    same = x.softmax(1).to(shrew.float32).cpu().numpy() == t.softmax(1).float().numpy()
    assert same.mean() > 0.99, f"softmax on {device}: {same.mean():.1%} as PyTorch's"
    # a large common offset: the mean must be exact for the deviations to be
    shifted = 100 + x, 100 + t
    w, tw = _pair(np.linspace(0.5, 1.5, 3000), dtype, device)
    b, tb = _pair(np.linspace(-1, 1, 3000), dtype, device)
    _check(F.layer_norm(shifted[0], (3000,)),
           torch.nn.functional.layer_norm(shifted[1], (3000,)), dtype, f"layer_norm on {device}")
    _check(F.layer_norm(shifted[0], (3000,), w, b),
           torch.nn.functional.layer_norm(shifted[1], (3000,), tw, tb), dtype,
           f"layer_norm affine on {device}")


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", DEVICES)
def test_products_keep_the_dtype_and_accumulate_in_float32(name, dtype):
    device = _device(name, dtype)
    rng = np.random.default_rng(4)
    a, ta = _pair(rng.uniform(0, 1, (2, 5, 2000)), dtype, device)
    b, tb = _pair(rng.uniform(0, 1, (2, 2000, 6)), dtype, device)
    _check(a @ b, ta @ tb, dtype, f"matmul on {device}")
    _check(shrew.bmm(a, b), torch.bmm(ta, tb), dtype, f"bmm on {device}")
    _check(a[0] @ b[0, :, 0], ta[0] @ tb[0, :, 0], dtype, f"matrix @ vector on {device}")
    w, tw = _pair(rng.uniform(0, 1, (6, 2000)), dtype, device)
    bias, tbias = _pair(rng.uniform(0, 1, 6), dtype, device)
    _check(F.linear(a[0], w, bias), torch.nn.functional.linear(ta[0], tw, tbias), dtype,
           f"linear on {device}")
    _check(F.linear(a, w), torch.nn.functional.linear(ta, tw), dtype, f"linear 3-d on {device}")


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", DEVICES)
def test_gradients_keep_the_dtype_and_match_pytorch(name, dtype):
    device = _device(name, dtype)
    rng = np.random.default_rng(5)
    a, ta = _pair(rng.uniform(0, 1, (4, 1000)), dtype, device)
    b, tb = _pair(rng.uniform(0, 1, (1000, 3)), dtype, device)
    for leaf in (a, b, ta, tb):
        leaf.requires_grad_(True)
    ((a @ b).sum() + a.var(1).sum() + a.softmax(1)[:, 0].sum()).backward()
    ((ta @ tb).sum() + ta.var(1).sum() + ta.softmax(1)[:, 0].sum()).backward()
    _check(a.grad, ta.grad, dtype, f"the gradient of a on {device}")
    _check(b.grad, tb.grad, dtype, f"the gradient of b on {device}")


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", DEVICES)
def test_average_pooling_over_large_windows_accumulates_in_float32(name, dtype):
    device = _device(name, dtype)
    x, t = _pair(_rows(6, 3200).reshape(2, 3, 40, 40), dtype, device)
    _check(F.avg_pool2d(x, 40), torch.nn.functional.avg_pool2d(t, 40), dtype,
           f"avg_pool2d on {device}")
    _check(F.avg_pool2d(x, 20, padding=10, count_include_pad=False),
           torch.nn.functional.avg_pool2d(t, 20, padding=10, count_include_pad=False), dtype,
           f"avg_pool2d without padding counted on {device}")
    _check(F.adaptive_avg_pool2d(x, 1), torch.nn.functional.adaptive_avg_pool2d(t, 1), dtype,
           f"adaptive_avg_pool2d on {device}")
