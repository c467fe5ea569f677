"""The 3-d layers against PyTorch: conv3d and conv_transpose3d, every 3-d pool (max with
its indices, average with each divisor choice, adaptive, unpooling), their modules, and a
small 3-d network trained from PyTorch's weights.

Each runs on three routes: the cpu backend with oneDNN (float32 convolutions and pools on
its 5-d primitives), the cpu backend on numpy alone, and OpenCL (conv.cl's im2col3d and
col2im3d, pool.cl's max_pool3d and avg_pool3d)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import shrew
import shrew.nn as nn
import shrew.nn.functional as F
from shrew.backends.cpu import use_onednn
from shrew.backends.cpu.onednn import binding as onednn_binding
from shrew.backends.cpu.onednn import conv as onednn_conv
from shrew.backends.cpu.onednn import pool as onednn_pool

from support import check_grad, device_or_fail, needs_loadable

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")

ROUTES = ("cpu-onednn", "cpu-numpy", "opencl")
HYPOTHESIS = settings(max_examples=20, deadline=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(params=ROUTES)
def device(request):
    """The device a test runs on, with oneDNN switched as its route says."""
    if request.param == "opencl":
        name = device_or_fail("opencl")
        with use_onednn(False):
            yield name
        return
    with use_onednn(request.param == "cpu-onednn"):
        yield "cpu"


def _tolerance(dtype) -> dict:
    return {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-9,
                                                                      "atol": 1e-11}


def _compare(device, shrew_fn, torch_fn, arrays, seed, dtype, grads=True):
    """shrew_fn and torch_fn on the same inputs: values (and indices, where a pair comes
    back) and the gradients of sum(out * g) for every float input."""
    xs = [shrew.tensor(a, device=device, requires_grad=grads and a.dtype.kind == "f")
          for a in arrays]
    ts = [torch.tensor(a, requires_grad=grads and a.dtype.kind == "f") for a in arrays]
    got, want = shrew_fn(*xs), torch_fn(*ts)
    if isinstance(want, tuple):
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
        got, want = got[0], want[0]
    assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == str(want.dtype)[6:]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(),
                               **_tolerance(dtype))
    if not grads:
        return
    g = np.random.default_rng(seed).standard_normal(tuple(want.shape)).astype(dtype)
    (got * shrew.tensor(g, device=device)).sum().backward()
    (want * torch.tensor(g)).sum().backward()
    for x, t in zip(xs, ts):
        if t.grad is not None:
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), **_tolerance(dtype))


def _distinct(rng, shape, dtype):
    """Values without ties (so that every maximum, and its index, is one element)."""
    return (rng.permutation(int(np.prod(shape))).reshape(shape) / 7.0 - 3.0).astype(dtype)


dtypes = st.sampled_from([np.float32, np.float64])


# -- convolutions --------------------------------------------------------------------------
@st.composite
def convs(draw):
    """conv3d's geometry: sizes per dim, padding as sizes, 'same' or 'valid', groups."""
    groups = draw(st.integers(1, 2))
    c_in, c_out = groups * draw(st.integers(1, 3)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(3))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(3))
    form = draw(st.sampled_from(["sizes", "same", "valid"]))
    stride = (1, 1, 1) if form == "same" else tuple(draw(st.integers(1, 2)) for _ in range(3))
    padding = (tuple(draw(st.integers(0, 2)) for _ in range(3)) if form == "sizes"
               else form)
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    sizes = tuple(draw(st.integers(max(1, s - (0 if isinstance(padding, str) else 2 * p)),
                                   s + 3))
                  for s, p in zip(spans, padding if not isinstance(padding, str)
                                  else (0, 0, 0)))
    x = (draw(st.integers(1, 2)), c_in, *sizes)
    w = (c_out, c_in // groups, *kernel)
    return x, w, {"stride": stride, "padding": padding, "dilation": dilation,
                  "groups": groups}


@HYPOTHESIS
@given(geometry=convs(), bias=st.booleans(), dtype=dtypes, seed=st.integers(0, 2**16))
def test_conv3d_matches_torch(device, geometry, bias, dtype, seed):
    x_shape, w_shape, kwargs = geometry
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(x_shape).astype(dtype),
              rng.standard_normal(w_shape).astype(dtype)]
    if bias:
        arrays.append(rng.standard_normal(w_shape[0]).astype(dtype))
    _compare(device, lambda *a: F.conv3d(*a, **kwargs), lambda *a: TF.conv3d(*a, **kwargs),
             arrays, seed, dtype)


@st.composite
def transposed_convs(draw):
    groups = draw(st.integers(1, 2))
    c_in, c_out = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 3))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(3))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(3))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(3))
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1))
                           for s, d in zip(stride, dilation))
    sizes = tuple(draw(st.integers(1, 4)) for _ in range(3))
    # padding that leaves at least one output element per dim
    padding = tuple(draw(st.integers(0, max(0, ((n - 1) * s + d * (k - 1) + op) // 2)))
                    for n, s, d, k, op in zip(sizes, stride, dilation, kernel, output_padding))
    x = (draw(st.integers(1, 2)), c_in, *sizes)
    w = (c_in, c_out // groups, *kernel)
    return x, w, {"stride": stride, "padding": padding, "output_padding": output_padding,
                  "groups": groups, "dilation": dilation}


@HYPOTHESIS
@given(geometry=transposed_convs(), bias=st.booleans(), dtype=dtypes,
       seed=st.integers(0, 2**16))
def test_conv_transpose3d_matches_torch(device, geometry, bias, dtype, seed):
    x_shape, w_shape, kwargs = geometry
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(x_shape).astype(dtype),
              rng.standard_normal(w_shape).astype(dtype)]
    if bias:
        arrays.append(rng.standard_normal(w_shape[1] * kwargs["groups"]).astype(dtype))
    _compare(device, lambda *a: F.conv_transpose3d(*a, **kwargs),
             lambda *a: TF.conv_transpose3d(*a, **kwargs), arrays, seed, dtype)


def test_conv3d_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    x = shrew.tensor(rng.standard_normal((1, 2, 4, 3, 4)), requires_grad=True)
    w = shrew.tensor(rng.standard_normal((2, 1, 2, 2, 2)), requires_grad=True)
    b = shrew.tensor(rng.standard_normal(2), requires_grad=True)
    check_grad(lambda x, w, b: F.conv3d(x, w, b, stride=(2, 1, 1), padding=1,
                                        dilation=(1, 2, 1), groups=2), x, w, b)
    wt = shrew.tensor(rng.standard_normal((2, 1, 2, 2, 2)), requires_grad=True)
    check_grad(lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=(1, 0, 1),
                                               output_padding=(1, 0, 0), groups=2), x, wt)


def test_conv3d_unbatched_and_errors():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((3, 4, 5, 4)), rng.standard_normal((2, 3, 2, 2, 2))
    got = F.conv3d(shrew.tensor(x), shrew.tensor(w), padding=1).numpy()
    np.testing.assert_allclose(got, TF.conv3d(torch.tensor(x), torch.tensor(w),
                                              padding=1).numpy(), rtol=1e-12)
    with pytest.raises(shrew.ShapeError, match="conv3d"):
        F.conv3d(shrew.zeros(1, 2, 4, 4, 4), shrew.zeros(3, 3, 2, 2, 2))   # channels
    with pytest.raises(shrew.ShapeError, match="conv3d"):
        F.conv3d(shrew.zeros(1, 2, 4, 4, 4), shrew.zeros(3, 2, 2, 2))      # 4-d weight
    with pytest.raises(shrew.ShapeError, match="conv3d"):
        F.conv3d(shrew.zeros(1, 2, 4, 4, 4), shrew.zeros(3, 2, 2, 2, 2), stride=(1, 1))
    with pytest.raises(shrew.ShapeError, match="conv3d"):
        F.conv3d(shrew.zeros(1, 2, 1, 4, 4), shrew.zeros(3, 2, 2, 2, 2))   # kernel > input
    with pytest.raises(RuntimeError, match="conv_transpose3d"):
        F.conv_transpose3d(shrew.zeros(1, 2, 3, 3, 3), shrew.zeros(2, 2, 2, 2, 2),
                           output_padding=1)


def test_torch_level_names_take_torchs_arguments():
    """torch.conv3d, torch.conv_transpose3d and torch.max_pool3d: the bias third, as
    torch's (they are nn.functional's)."""
    rng = np.random.default_rng(10)
    x, w, b = (rng.standard_normal(s) for s in ((1, 2, 4, 5, 4), (2, 2, 2, 2, 2), (2,)))
    np.testing.assert_allclose(
        shrew.conv3d(*map(shrew.tensor, (x, w, b)), 1, 1).numpy(),
        torch.conv3d(*map(torch.tensor, (x, w, b)), 1, 1).numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        shrew.conv_transpose3d(*map(shrew.tensor, (x, w, b)), 2).numpy(),
        torch.conv_transpose3d(*map(torch.tensor, (x, w, b)), 2).numpy(), rtol=1e-12)
    np.testing.assert_array_equal(shrew.max_pool3d(shrew.tensor(x), 2, 1).numpy(),
                                  torch.max_pool3d(torch.tensor(x), 2, 1).numpy())


def test_grad_fn_names_are_torchs():
    x = shrew.randn(1, 1, 4, 4, 4, requires_grad=True)
    t = torch.randn(1, 1, 4, 4, 4, requires_grad=True)
    w = shrew.randn(1, 1, 2, 2, 2)
    for got, want in ((F.max_pool3d(x, 2), TF.max_pool3d(t, 2)),
                      (F.avg_pool3d(x, 2), TF.avg_pool3d(t, 2)),
                      (F.conv3d(x, w), TF.conv3d(t, torch.randn(1, 1, 2, 2, 2)))):
        assert got.grad_fn.name() == want.grad_fn.name()


# -- pooling -------------------------------------------------------------------------------
@st.composite
def pools(draw, dilated=True):
    """A 3-d pool's window: kernel, stride, padding (at most half the kernel), dilation,
    ceil_mode, over an input at least one dilated window across (and, undilated, at
    least one kernel: PyTorch's avg_pool3d wants that even where padding would hold it)."""
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(3))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(3))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(3)) if dilated else (1, 1, 1)
    sizes = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p, d) if dilated else k, 6))
                  for k, p, d in zip(kernel, padding, dilation))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *sizes)
    return shape, kernel, stride, padding, dilation, draw(st.booleans())


@HYPOTHESIS
@given(geometry=pools(), dtype=dtypes, seed=st.integers(0, 2**16))
def test_max_pool3d_values_indices_and_gradients_match_torch(device, geometry, dtype, seed):
    shape, kernel, stride, padding, dilation, ceil_mode = geometry
    x = _distinct(np.random.default_rng(seed), shape, dtype)
    kwargs = {"kernel_size": kernel, "stride": stride, "padding": padding,
              "dilation": dilation, "ceil_mode": ceil_mode, "return_indices": True}
    _compare(device, lambda x: F.max_pool3d(x, **kwargs), lambda x: TF.max_pool3d(x, **kwargs),
             [x], seed, dtype)


@HYPOTHESIS
@given(geometry=pools(dilated=False), include=st.booleans(),
       divisor=st.sampled_from([None, 1, 5]), dtype=dtypes, seed=st.integers(0, 2**16))
def test_avg_pool3d_matches_torch(device, geometry, include, divisor, dtype, seed):
    shape, kernel, stride, padding, _, ceil_mode = geometry
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    kwargs = {"kernel_size": kernel, "stride": stride, "padding": padding,
              "ceil_mode": ceil_mode, "count_include_pad": include,
              "divisor_override": divisor}
    _compare(device, lambda x: F.avg_pool3d(x, **kwargs), lambda x: TF.avg_pool3d(x, **kwargs),
             [x], seed, dtype)


@st.composite
def adaptive(draw):
    sizes = tuple(draw(st.integers(1, 7)) for _ in range(3))
    out = tuple(draw(st.one_of(st.none(), st.integers(1, 5))) for _ in range(3))
    batched = draw(st.booleans())
    shape = ((draw(st.integers(1, 2)),) if batched else ()) + (draw(st.integers(1, 3)), *sizes)
    return shape, out


@HYPOTHESIS
@given(geometry=adaptive(), dtype=dtypes, seed=st.integers(0, 2**16))
def test_adaptive_pools_3d_match_torch(device, geometry, dtype, seed):
    shape, out = geometry
    x = _distinct(np.random.default_rng(seed), shape, dtype)
    _compare(device, lambda x: F.adaptive_avg_pool3d(x, out),
             lambda x: TF.adaptive_avg_pool3d(x, out), [x], seed, dtype)
    _compare(device, lambda x: F.adaptive_max_pool3d(x, out, True),
             lambda x: TF.adaptive_max_pool3d(x, out, True), [x], seed, dtype)


@HYPOTHESIS
@given(geometry=pools(dilated=False), sized=st.booleans(), dtype=dtypes,
       seed=st.integers(0, 2**16))
def test_max_unpool3d_inverts_max_pool3d_as_torch(device, geometry, sized, dtype, seed):
    shape, kernel, stride, padding, _, _ = geometry
    x = _distinct(np.random.default_rng(seed), shape, dtype)
    pooled, index = TF.max_pool3d(torch.tensor(x), kernel, stride, padding,
                                  return_indices=True)
    default = [(n - 1) * s - 2 * p + k for n, s, p, k
               in zip(pooled.shape[2:], stride, padding, kernel)]
    # Indices name places in x: the unpooled size must hold them, as the default size does
    # where it covers x, and output_size (x's own size) where it is within a stride of it.
    fits = (all(n - s < d < n + s for n, d, s in zip(shape[2:], default, stride)) if sized
            else all(d >= n for n, d in zip(shape[2:], default)))
    assume(fits)
    kwargs = {"kernel_size": kernel, "stride": stride, "padding": padding,
              "output_size": shape[2:] if sized else None}
    _compare(device, lambda v, i: F.max_unpool3d(v, i, **kwargs),
             lambda v, i: TF.max_unpool3d(v, i, **kwargs),
             [pooled.numpy(), index.numpy()], seed, dtype)


def test_pool3d_gradients_match_finite_differences():
    rng = np.random.default_rng(2)
    x = shrew.tensor(_distinct(rng, (1, 2, 4, 5, 4), np.float64), requires_grad=True)
    check_grad(lambda x: F.max_pool3d(x, (2, 3, 2), (1, 2, 2), 1, (2, 1, 1), True), x)
    check_grad(lambda x: F.avg_pool3d(x, (3, 2, 3), 2, 1, True, False), x)
    check_grad(lambda x: F.adaptive_avg_pool3d(x, (3, 2, 3)), x)
    check_grad(lambda x: F.adaptive_max_pool3d(x, (3, 2, 3)), x)
    values, index = F.max_pool3d(x.detach(), 2, return_indices=True)
    check_grad(lambda v: F.max_unpool3d(v, index, 2, output_size=x.shape[2:]),
               values.requires_grad_())


def test_pool3d_errors_name_the_op():
    x = shrew.zeros(1, 1, 4, 4, 4)
    with pytest.raises(shrew.ShapeError, match="max_pool3d"):
        F.max_pool3d(x, 2, padding=2)                          # padding > half the kernel
    with pytest.raises(shrew.ShapeError, match="max_pool3d"):
        F.max_pool3d(shrew.zeros(4, 4), 2)                     # too few dims
    with pytest.raises(shrew.ShapeError, match="avg_pool3d"):
        F.avg_pool3d(x, (2, 2))                                # a pair for three dims
    with pytest.raises(shrew.ShapeError, match="avg_pool3d"):
        F.avg_pool3d(shrew.zeros(1, 1, 1, 4, 4), 2, padding=1)  # as PyTorch: input < kernel
    with pytest.raises(shrew.ShapeError, match="adaptive_avg_pool3d"):
        F.adaptive_avg_pool3d(x, (2, 2))
    with pytest.raises(shrew.ShapeError, match="max_unpool3d"):
        F.max_unpool3d(x, shrew.zeros(1, 1, 4, 4, 4), 2)       # float indices


# -- oneDNN serves the 5-d calls itself ----------------------------------------------------
@needs_loadable(onednn_binding)
def test_onednn_runs_3d_convolution_and_pooling():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 5, 6, 7)).astype(np.float32)
    w = rng.standard_normal((6, 2, 2, 3, 2)).astype(np.float32)
    args = ((1, 2, 1), (1, 0, 1), (2, 1, 1), 2)
    with use_onednn(True):
        y = onednn_conv.conv2d(x, w, *args)
        dx = onednn_conv.conv2d_backward_data(np.ones_like(y), w, x.shape, *args)
        dw = onednn_conv.conv2d_backward_weights(x, np.ones_like(y), w.shape, *args)
        pooled = onednn_pool.pool2d(x, onednn_binding.POOL_AVG_INCLUDE, (2, 2, 3), (1, 2, 2),
                                    (1, 1, 0))
    assert not any(got is NotImplemented for got in (y, dx, dw, pooled))
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    want = TF.conv3d(tx, tw, None, *args)
    want.sum().backward()
    np.testing.assert_allclose(y, want.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, tw.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(pooled[0], TF.avg_pool3d(torch.tensor(x), (2, 2, 3), (1, 2, 2),
                                                        (1, 1, 0)).numpy(), rtol=1e-5,
                               atol=1e-6)


@needs_loadable(onednn_binding)
def test_onednn_max_pool3d_forward_and_backward_through_its_workspace(monkeypatch):
    """A large float32 max_pool3d runs on oneDNN both ways: its workspace's window offsets
    become shrew's flat index (as PyTorch's), and the backward routes through it."""
    calls = []
    for name in ("pool2d", "pool2d_backward"):
        real = getattr(onednn_pool, name)
        monkeypatch.setattr(onednn_pool, name,
                            lambda *a, real=real, name=name, **k: calls.append(name)
                            or real(*a, **k))
    x = _distinct(np.random.default_rng(9), (2, 4, 16, 18, 20), np.float32)
    with use_onednn(True):
        _compare("cpu", lambda x: F.max_pool3d(x, (2, 3, 2), (2, 3, 2), (1, 1, 0),
                                               return_indices=True),
                 lambda x: TF.max_pool3d(x, (2, 3, 2), (2, 3, 2), (1, 1, 0),
                                         return_indices=True), [x], 9, np.float32)
    assert calls == ["pool2d", "pool2d_backward"]


# -- modules -------------------------------------------------------------------------------
def _from_torch(module, reference, device):
    module.load_state_dict({k: shrew.tensor(v.detach().numpy())
                            for k, v in reference.state_dict().items()})
    return module.to(device)


@pytest.mark.parametrize("args, kwargs", [
    ((4, 6, 3), {"padding": 1, "padding_mode": "reflect"}),
    ((4, 6, (2, 3, 1)), {"padding": "same", "padding_mode": "replicate", "groups": 2}),
    ((4, 2, 3), {"padding": (1, 0, 2), "padding_mode": "circular", "stride": 2}),
    ((4, 6, 2), {"padding": "valid", "dilation": 2, "bias": False}),
    ((4, 6, 3), {"padding": (0, 1, 1), "padding_mode": "zeros"}),
])
def test_conv3d_module_matches_torch(device, args, kwargs):
    torch.manual_seed(0)
    reference = torch.nn.Conv3d(*args, **kwargs).double()
    layer = _from_torch(nn.Conv3d(*args, **kwargs, dtype=shrew.float64), reference, device)
    assert repr(layer) == repr(reference)
    assert [n for n, _ in layer.named_parameters()] == \
        [n for n, _ in reference.named_parameters()]
    x = np.random.default_rng(4).standard_normal((2, 4, 5, 6, 5))
    _compare(device, layer, reference, [x], 4, np.float64)


def test_conv_transpose3d_module_matches_torch(device):
    torch.manual_seed(1)
    reference = torch.nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=(1, 0, 1),
                                         groups=2).double()
    layer = _from_torch(nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1,
                                           output_padding=(1, 0, 1), groups=2,
                                           dtype=shrew.float64), reference, device)
    assert repr(layer) == repr(reference)
    x = np.random.default_rng(5).standard_normal((2, 4, 3, 4, 3))
    _compare(device, layer, reference, [x], 5, np.float64)


def test_conv3d_init_device_and_dtype_as_torch():
    layer = nn.Conv3d(4, 6, (2, 3, 4), groups=2, dtype=shrew.float64)
    assert layer.weight.shape == (6, 2, 2, 3, 4) and layer.weight.dtype is shrew.float64
    bound = 1 / np.sqrt(2 * 2 * 3 * 4)   # kaiming_uniform(a=sqrt(5)): 1/sqrt(fan_in)
    assert np.abs(layer.weight.numpy()).max() <= bound
    assert np.abs(layer.bias.numpy()).max() <= bound
    assert np.abs(layer.weight.numpy()).max() > bound / 2
    transposed = nn.ConvTranspose3d(4, 6, 3, groups=2, bias=False)
    assert transposed.weight.shape == (4, 3, 3, 3, 3) and transposed.bias is None


@pytest.mark.parametrize("make", [
    lambda m: m.MaxPool3d(2), lambda m: m.MaxPool3d((2, 3, 2), (1, 2, 1), 1, ceil_mode=True),
    lambda m: m.AvgPool3d(3, 2, 1), lambda m: m.AvgPool3d(2, ceil_mode=True,
                                                          count_include_pad=False),
    lambda m: m.AdaptiveAvgPool3d((2, None, 3)), lambda m: m.AdaptiveMaxPool3d(2),
    lambda m: m.BatchNorm3d(3), lambda m: m.InstanceNorm3d(3, affine=True),
    lambda m: m.Dropout3d(0.0), lambda m: m.ReflectionPad3d(1),
    lambda m: m.ReplicationPad3d((1, 0, 2, 1, 0, 1)), lambda m: m.ConstantPad3d(1, 2.5),
    lambda m: m.ZeroPad3d(1), lambda m: m.CircularPad3d(1),
    lambda m: m.Upsample(scale_factor=2, mode="nearest"),
], ids=lambda make: repr(make(torch.nn)))
def test_3d_modules_match_torch(device, make):
    reference = make(torch.nn).double()
    layer = _from_torch(make(nn), reference, device)
    assert repr(layer) == repr(reference)
    x = np.random.default_rng(6).standard_normal((2, 3, 4, 5, 6))
    _compare(device, layer, reference, [x], 6, np.float64)


def test_max_unpool3d_module_matches_torch(device):
    pool, unpool = torch.nn.MaxPool3d(2, return_indices=True), torch.nn.MaxUnpool3d(2)
    x = _distinct(np.random.default_rng(7), (1, 2, 4, 4, 6), np.float64)
    values, index = pool(torch.tensor(x))
    assert repr(nn.MaxUnpool3d(2)) == repr(unpool)
    _compare(device, nn.MaxUnpool3d(2), unpool, [values.numpy(), index.numpy()], 7,
             np.float64)


# -- a small 3-d network trained from PyTorch's weights ------------------------------------
def _net(m):
    return m.Sequential(m.Conv3d(2, 4, 3, padding=1), m.BatchNorm3d(4), m.ReLU(),
                        m.MaxPool3d(2), m.Conv3d(4, 6, (2, 3, 3), stride=(1, 2, 1)),
                        m.AdaptiveAvgPool3d(1), m.Flatten(), m.Linear(6, 3))


def test_a_3d_conv_net_trains_as_torch(device):
    torch.manual_seed(2)
    reference = _net(torch.nn)
    model = _from_torch(_net(nn), reference, device)
    opt_t = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    opt = shrew.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 2, 6, 8, 6)).astype(np.float32)
    y = rng.integers(0, 3, 4)
    for _ in range(3):
        opt_t.zero_grad()
        loss_t = TF.cross_entropy(reference(torch.tensor(x)), torch.tensor(y))
        loss_t.backward()
        opt_t.step()
        opt.zero_grad()
        loss = F.cross_entropy(model(shrew.tensor(x, device=device)),
                               shrew.tensor(y, device=device))
        loss.backward()
        opt.step()
        assert loss.item() == pytest.approx(loss_t.item(), rel=1e-5)
    for (name, p), q in zip(model.state_dict().items(), reference.state_dict().values()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


def test_a_compiled_3d_step_replays_eagers_bits(device):
    """shrew.compile's replay of the 3-d primitives (5-d arrays, triples) gives eager's
    losses bit for bit."""
    rng = np.random.default_rng(11)
    x = shrew.tensor(rng.standard_normal((2, 2, 4, 6, 4)).astype(np.float32), device=device)
    y = shrew.tensor(rng.integers(0, 3, 2), device=device)
    losses = []
    for compiled in (False, True):
        shrew.manual_seed(0)
        model = nn.Sequential(nn.Conv3d(2, 4, 3, padding=1), nn.MaxPool3d(2),
                              nn.ConvTranspose3d(4, 3, 2, stride=2), nn.AvgPool3d(2),
                              nn.AdaptiveMaxPool3d(1), nn.Flatten(), nn.Linear(3, 3)).to(device)
        opt = shrew.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y, model=model, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        run = shrew.compile(step) if compiled else step
        losses.append([run(x, y).item() for _ in range(3)])
    assert losses[0] == losses[1]
