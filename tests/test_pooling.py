"""Pooling and patches against PyTorch: max/avg pooling (1-d, 2-d, unbatched) with every
window argument, adaptive pooling, unpooling, unfold and fold; values, indices and
gradients (ties included), float64 gradchecks, second order, and the errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew import nn
from shrew.nn import functional as F
from shrew.testing import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DEVICES = ["cpu"] + (["opencl"] if "opencl" in " ".join(shrew.devices()) else [])
device_param = pytest.mark.parametrize("device", DEVICES)


def leaves(data, device="cpu"):
    return (shrew.tensor(data, device=device, requires_grad=True),
            torch.tensor(data, requires_grad=True))


def agree(fn, tfn, data, device="cpu", tol=1e-10):
    """fn on shrew and tfn on torch give the same outputs (indices exactly) and the same
    gradient of a random contraction of the first output."""
    x, tx = leaves(data, device)
    out, tout = fn(x), tfn(tx)
    outs, touts = (out, tout) if isinstance(out, tuple) else ((out,), (tout,))
    for o, t in zip(outs, touts):
        assert tuple(o.shape) == tuple(t.shape)
        if t.dtype == torch.int64:
            np.testing.assert_array_equal(o.numpy(), t.numpy())
        else:
            np.testing.assert_allclose(o.numpy(), t.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(1).standard_normal(tuple(touts[0].shape))
    grad = (outs[0] * shrew.tensor(g, device=device)).sum().backward()[x]
    (touts[0] * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


@st.composite
def windows(draw, dilate=True):
    """A 2-d pooling geometry PyTorch accepts: padding at most half the kernel, an input
    the (dilated) window fits, ceil_mode either way."""
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    dilation = (draw(st.integers(1, 3)), draw(st.integers(1, 3))) if dilate else (1, 1)
    hw = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p, d), 9))
               for k, p, d in zip(kernel, padding, dilation))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *hw)
    return shape, kernel, stride, padding, dilation, draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(geo=windows(), seed=st.integers(0, 2**16), ties=st.booleans())
def test_max_pool2d_matches_torch(geo, seed, ties):
    shape, kernel, stride, padding, dilation, ceil_mode = geo
    rng = np.random.default_rng(seed)
    data = rng.integers(-2, 3, shape).astype(float) if ties else rng.standard_normal(shape)
    agree(lambda x: F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, True),
          lambda x: TF.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, True), data)


@settings(max_examples=60, deadline=None)
@given(geo=windows(dilate=False), seed=st.integers(0, 2**16), include=st.booleans(),
       divisor=st.sampled_from([None, 1, 3]))
def test_avg_pool2d_matches_torch(geo, seed, include, divisor):
    shape, kernel, stride, padding, _, ceil_mode = geo
    data = np.random.default_rng(seed).standard_normal(shape)
    agree(lambda x: F.avg_pool2d(x, kernel, stride, padding, ceil_mode, include, divisor),
          lambda x: TF.avg_pool2d(x, kernel, stride, padding, ceil_mode, include, divisor),
          data)


@device_param
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_1d_and_unbatched_pools(device, ceil_mode):
    data = np.random.default_rng(2).standard_normal((2, 3, 11))
    agree(lambda x: F.max_pool1d(x, 3, 2, 1, 2, ceil_mode, True),
          lambda x: TF.max_pool1d(x, 3, 2, 1, 2, ceil_mode, True), data, device)
    agree(lambda x: F.avg_pool1d(x, 4, 3, 2, ceil_mode, False),
          lambda x: TF.avg_pool1d(x, 4, 3, 2, ceil_mode, False), data, device)
    agree(lambda x: F.max_pool1d(x, 2), lambda x: TF.max_pool1d(x, 2), data[0], device)
    agree(lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=ceil_mode, return_indices=True),
          lambda x: TF.max_pool2d(x, 3, 2, 1, ceil_mode=ceil_mode, return_indices=True),
          data[:, :, :8].reshape(3, 4, 4), device)
    agree(lambda x: F.avg_pool2d(x, 2, ceil_mode=ceil_mode, divisor_override=3),
          lambda x: TF.avg_pool2d(x, 2, ceil_mode=ceil_mode, divisor_override=3),
          data.reshape(3, 2, 11), device)


@device_param
@pytest.mark.parametrize("size", [1, 3, (4, 5), (None, 2), (7, 13), (9, 11), (2, None)])
def test_adaptive_pools(device, size):
    data = np.random.default_rng(3).standard_normal((2, 3, 9, 11))
    data[0, 0, :3, :3] = 1.5   # ties: the first maximum wins
    agree(lambda x: F.adaptive_avg_pool2d(x, size), lambda x: TF.adaptive_avg_pool2d(x, size),
          data, device)
    agree(lambda x: F.adaptive_max_pool2d(x, size, True),
          lambda x: TF.adaptive_max_pool2d(x, size, True), data, device)
    if isinstance(size, int):
        agree(lambda x: F.adaptive_avg_pool1d(x, size),
              lambda x: TF.adaptive_avg_pool1d(x, size), data[0], device)
        agree(lambda x: F.adaptive_max_pool1d(x, size, True),
              lambda x: TF.adaptive_max_pool1d(x, size, True), data[:, 0], device)


@settings(max_examples=30, deadline=None)
@given(h=st.integers(1, 12), w=st.integers(1, 12), oh=st.integers(1, 6), ow=st.integers(1, 6),
       seed=st.integers(0, 2**16))
def test_adaptive_windows_match_torch(h, w, oh, ow, seed):
    data = np.random.default_rng(seed).standard_normal((1, 2, h, w))
    agree(lambda x: F.adaptive_max_pool2d(x, (oh, ow), True),
          lambda x: TF.adaptive_max_pool2d(x, (oh, ow), True), data)
    agree(lambda x: F.adaptive_avg_pool2d(x, (oh, ow)),
          lambda x: TF.adaptive_avg_pool2d(x, (oh, ow)), data)


@device_param
@pytest.mark.parametrize("output_size", [None, (9, 11), (1, 2, 10, 10)])
def test_max_unpool(device, output_size):
    data = np.random.default_rng(4).standard_normal((1, 2, 9, 11))
    x = shrew.tensor(data, device=device)
    y, index = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    ty, tindex = TF.max_pool2d(torch.tensor(data), 3, 2, 1, return_indices=True)
    agree(lambda v: F.max_unpool2d(v, index, 3, 2, 1, output_size),
          lambda v: TF.max_unpool2d(v, tindex, 3, 2, 1, output_size), ty.numpy(), device)
    module = nn.MaxUnpool2d(3, 2, 1)
    np.testing.assert_array_equal(module(y, index, output_size).numpy(),
                                  torch.nn.MaxUnpool2d(3, 2, 1)(ty, tindex, output_size))
    y1, index1 = F.max_pool1d(x[0], 2, return_indices=True)
    ty1, tindex1 = TF.max_pool1d(torch.tensor(data[0]), 2, return_indices=True)
    agree(lambda v: F.max_unpool1d(v, index1, 2, output_size=[11]),
          lambda v: TF.max_unpool1d(v, tindex1, 2, output_size=[11]), ty1.numpy(), device)


@device_param
@pytest.mark.parametrize("args", [dict(kernel_size=3), dict(kernel_size=(2, 3), stride=2),
                                  dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=2),
                                  dict(kernel_size=2, dilation=3, padding=(0, 1))])
def test_unfold_and_fold(device, args):
    data = np.random.default_rng(5).standard_normal((2, 3, 8, 9))
    agree(lambda x: F.unfold(x, **args), lambda x: TF.unfold(x, **args), data, device)
    cols = TF.unfold(torch.tensor(data), **args).numpy()
    agree(lambda c: F.fold(c, (8, 9), **args), lambda c: TF.fold(c, (8, 9), **args), cols, device)
    agree(lambda c: nn.Fold((8, 9), **args)(c), lambda c: torch.nn.Fold((8, 9), **args)(c),
          cols[0], device)
    agree(lambda x: nn.Unfold(**args)(x), lambda x: torch.nn.Unfold(**args)(x), data[0], device)


@device_param
def test_modules_match_torch(device):
    data = np.random.default_rng(6).standard_normal((2, 3, 10, 9))
    pairs = [(nn.MaxPool2d(3, 2, 1, 2, ceil_mode=True),
              torch.nn.MaxPool2d(3, 2, 1, 2, ceil_mode=True)),
             (nn.MaxPool2d(2, return_indices=True), torch.nn.MaxPool2d(2, return_indices=True)),
             (nn.AvgPool2d(3, 2, 1, True, False), torch.nn.AvgPool2d(3, 2, 1, True, False)),
             (nn.AvgPool2d(2, divisor_override=3), torch.nn.AvgPool2d(2, divisor_override=3)),
             (nn.AdaptiveAvgPool2d((3, None)), torch.nn.AdaptiveAvgPool2d((3, None))),
             (nn.AdaptiveMaxPool2d(4, True), torch.nn.AdaptiveMaxPool2d(4, True))]
    for ours, theirs in pairs:
        agree(ours, theirs, data, device)
    line = data[:, :, 0]
    for ours, theirs in [(nn.MaxPool1d(3, 2, 1), torch.nn.MaxPool1d(3, 2, 1)),
                         (nn.AvgPool1d(3, 2, 1, True), torch.nn.AvgPool1d(3, 2, 1, True)),
                         (nn.AdaptiveAvgPool1d(4), torch.nn.AdaptiveAvgPool1d(4)),
                         (nn.AdaptiveMaxPool1d(4), torch.nn.AdaptiveMaxPool1d(4))]:
        agree(ours, theirs, line, device)
    assert repr(nn.MaxPool2d(2)) == repr(torch.nn.MaxPool2d(2))


@device_param
@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 3, 2, 1, 2, True),
    lambda x: F.avg_pool2d(x, 3, 2, 1, True, False),
    lambda x: F.avg_pool2d(x, (2, 3), (3, 2), 1, True, True, 5),
    lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
    lambda x: F.adaptive_max_pool2d(x, (3, 4)),
    lambda x: F.fold(F.unfold(x, 2, dilation=2, padding=1), (6, 7), 2, dilation=2, padding=1),
])
def test_gradcheck_float64(device, fn):
    x = shrew.tensor(np.random.default_rng(7).standard_normal((1, 2, 6, 7)), device=device,
                     requires_grad=True)
    assert gradcheck(fn, [x])


@device_param
def test_second_order_of_avg_pool(device):
    """avg_pool2d's gradient rule is Tensor code: differentiable again, as torch's."""
    data = np.random.default_rng(8).standard_normal((1, 2, 7, 6))
    x, tx = leaves(data, device)
    gx = (F.avg_pool2d(x, 3, 2, 1, True, False) ** 2.0).sum().backward(create_graph=True)[x]
    tgx, = torch.autograd.grad((TF.avg_pool2d(tx, 3, 2, 1, True, False) ** 2).sum(), tx,
                               create_graph=True)
    hx = gx.square().sum().backward()[x]
    thx, = torch.autograd.grad(tgx.square().sum(), tx)
    np.testing.assert_allclose(hx.numpy(), thx.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda x: F.max_pool2d(x, 5), "larger than|spans more"),
    (lambda x: F.max_pool2d(x, 2, padding=2), "at most half"),
    (lambda x: F.max_pool2d(x, 2, stride=0), "stride"),
    (lambda x: F.max_pool2d(x, 2, dilation=0), "dilation"),
    (lambda x: F.max_pool2d(x, 3, dilation=2), "spans more"),
    (lambda x: F.max_pool2d(x[0, 0], 2), "input must be"),
    (lambda x: F.avg_pool2d(x, 2, divisor_override=0), "divisor_override"),
    (lambda x: F.avg_pool2d(x, 2, ceil_mode=1), "ceil_mode"),
    (lambda x: F.max_pool1d(x, 2), "input must be"),
    (lambda x: F.adaptive_avg_pool2d(x, (2, 0)), "output_size"),
    (lambda x: F.adaptive_max_pool2d(x, (1, 2, 3)), "output_size"),
    (lambda x: F.max_unpool2d(x, shrew.zeros(1, 1, 2, 2, dtype=shrew.int64), 2), "indices"),
    (lambda x: F.max_unpool2d(x, shrew.full((1, 1, 4, 4), 64, dtype=shrew.int64), 2),
     "scatter|index"),
    (lambda x: F.max_unpool2d(x, shrew.zeros(1, 1, 4, 4, dtype=shrew.int64), 2,
                              output_size=(12, 8)), "output_size"),
    (lambda x: F.fold(x.reshape(1, 16, 1), (4, 4), 3), "fold"),
    (lambda x: F.unfold(x[0, 0], 2), "input must be"),
])
def test_errors_name_the_op_before_running(call, message):
    x = shrew.tensor(np.ones((1, 1, 4, 4)))
    with pytest.raises(shrew.ShrewError, match=message):
        call(x)
