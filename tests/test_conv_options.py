"""Convolution options against PyTorch: groups, dilation, padding='same'/'valid',
padding_mode, and the transposed convolutions (values and gradients, hypothesis for the
geometry, float64 finite differences)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given
from hypothesis import strategies as st

import shrew
import shrew.nn.functional as F
from shrew.testing import gradcheck


def _pair(a, b):
    return [shrew.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)], \
        [shrew.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)]


def _compare(ours_fn, theirs_fn, *arrays, tol=1e-9):
    """Forward values and the gradients of every input (float64) against PyTorch."""
    ours = [shrew.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, t = ours_fn(*ours), theirs_fn(*theirs)
    assert y.shape == tuple(t.shape)
    np.testing.assert_allclose(y.numpy(), t.detach().numpy(), atol=tol, rtol=tol)
    seed = np.random.default_rng(1).standard_normal(tuple(t.shape))
    grads = (y * shrew.tensor(seed)).sum().backward()
    (t * torch.tensor(seed)).sum().backward()
    for o, th in zip(ours, theirs):
        np.testing.assert_allclose(grads[o].numpy(), th.grad.numpy(), atol=tol, rtol=tol)


@st.composite
def conv_geometry(draw, dims):
    groups = draw(st.integers(1, 3))
    c_in, c_out = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    dilation = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(dims))
    size = tuple(draw(st.integers(d * (k - 1) + 1, d * (k - 1) + 5))
                 for k, d in zip(kernel, dilation))
    return groups, c_in, c_out, kernel, dilation, stride, padding, size


@given(conv_geometry(2), st.booleans())
def test_conv2d_groups_dilation_stride_padding_match_torch(geometry, bias):
    groups, c_in, c_out, kernel, dilation, stride, padding, size = geometry
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, c_in, *size)),
              rng.standard_normal((c_out, c_in // groups, *kernel))]
    if bias:
        arrays.append(rng.standard_normal(c_out))
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    _compare(lambda *t: F.conv2d(*t, **kw), lambda *t: TF.conv2d(*t, **kw), *arrays)


@given(conv_geometry(1))
def test_conv1d_groups_dilation_match_torch(geometry):
    groups, c_in, c_out, kernel, dilation, stride, padding, size = geometry
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, c_in, *size)),
              rng.standard_normal((c_out, c_in // groups, *kernel))]
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    _compare(lambda *t: F.conv1d(*t, **kw), lambda *t: TF.conv1d(*t, **kw), *arrays)


@given(conv_geometry(2), st.data())
def test_conv_transpose2d_matches_torch(geometry, data):
    groups, c_in, c_out, kernel, dilation, stride, padding, size = geometry
    output_padding = tuple(data.draw(st.integers(0, max(s, d) - 1))
                           for s, d in zip(stride, dilation))
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, c_in, *size)),
              rng.standard_normal((c_in, c_out // groups, *kernel)),
              rng.standard_normal(c_out)]
    kw = dict(stride=stride, padding=padding, output_padding=output_padding, groups=groups,
              dilation=dilation)
    out = [(size[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1)
           + output_padding[i] + 1 for i in range(2)]
    if min(out) < 1:
        with pytest.raises(shrew.ShapeError):
            F.conv_transpose2d(*(shrew.tensor(a) for a in arrays), **kw)
        return
    _compare(lambda *t: F.conv_transpose2d(*t, **kw),
             lambda *t: TF.conv_transpose2d(*t, **kw), *arrays)


@given(conv_geometry(1), st.data())
def test_conv_transpose1d_matches_torch(geometry, data):
    groups, c_in, c_out, kernel, dilation, stride, padding, size = geometry
    output_padding = data.draw(st.integers(0, max(stride[0], dilation[0]) - 1))
    out = ((size[0] - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kernel[0] - 1)
           + output_padding + 1)
    if out < 1:
        return
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, c_in, *size)),
              rng.standard_normal((c_in, c_out // groups, *kernel))]
    kw = dict(stride=stride, padding=padding, output_padding=output_padding, groups=groups,
              dilation=dilation)
    _compare(lambda *t: F.conv_transpose1d(*t, **kw),
             lambda *t: TF.conv_transpose1d(*t, **kw), *arrays)


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("kernel,dilation", [((3, 4), (1, 1)), ((2, 3), (3, 2)), ((1, 2), 1)])
def test_string_padding_matches_torch(padding, kernel, dilation):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((1, 2, 7, 8)), rng.standard_normal((3, 2, *kernel))]
    kw = dict(padding=padding, dilation=dilation)
    _compare(lambda *t: F.conv2d(*t, **kw), lambda *t: TF.conv2d(*t, **kw), *arrays)
    arrays1 = [arrays[0][:, :, 0], arrays[1][:, :, 0]]
    kw1 = dict(padding=padding, dilation=kw["dilation"] if isinstance(dilation, int)
               else dilation[1])
    _compare(lambda *t: F.conv1d(*t, **kw1), lambda *t: TF.conv1d(*t, **kw1), *arrays1)


def test_gradcheck_float64():
    rng = np.random.default_rng(2)
    x = shrew.tensor(rng.standard_normal((1, 4, 5, 6)), requires_grad=True)
    w = shrew.tensor(rng.standard_normal((4, 2, 2, 3)), requires_grad=True)
    assert gradcheck(lambda a, b: F.conv2d(a, b, stride=2, padding=1, dilation=(2, 1),
                                           groups=2), [x, w])
    assert gradcheck(lambda a, b: F.conv_transpose2d(a, b, stride=(2, 1), padding=1,
                                                     output_padding=(1, 0), groups=2,
                                                     dilation=(1, 2)), [x, w])


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (2, 1), "same", "valid"])
def test_conv_layers_padding_modes_match_torch(mode, padding):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 6, 7)).astype(np.float32)
    for ours_cls, theirs_cls, xin in [(shrew.nn.Conv2d, torch.nn.Conv2d, x),
                                      (shrew.nn.Conv1d, torch.nn.Conv1d, x[:, :, 0])]:
        pad = padding[0] if isinstance(padding, tuple) and xin.ndim == 3 else padding
        kw = dict(kernel_size=3, padding=pad, dilation=2, groups=2, padding_mode=mode)
        ours, theirs = ours_cls(4, 6, **kw), theirs_cls(4, 6, **kw)
        ours.load_state_dict({k: shrew.tensor(v.detach().numpy())
                              for k, v in theirs.state_dict().items()})
        np.testing.assert_allclose(ours(shrew.tensor(xin)).numpy(),
                                   theirs(torch.tensor(xin)).detach().numpy(),
                                   atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("dims", [1, 2])
def test_conv_transpose_layers_match_torch(dims):
    ours_cls = shrew.nn.ConvTranspose1d if dims == 1 else shrew.nn.ConvTranspose2d
    theirs_cls = torch.nn.ConvTranspose1d if dims == 1 else torch.nn.ConvTranspose2d
    kw = dict(kernel_size=3, stride=2, padding=1, output_padding=1, groups=2, dilation=1)
    shrew.manual_seed(0)
    ours, theirs = ours_cls(4, 6, **kw), theirs_cls(4, 6, **kw)
    assert ours.weight.shape == tuple(theirs.weight.shape) == (4, 3, *(3,) * dims)
    ours.load_state_dict({k: shrew.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 4, *(5,) * dims)).astype(np.float32)
    np.testing.assert_allclose(ours(shrew.tensor(x)).numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), atol=1e-5, rtol=1e-5)


def test_conv_option_errors():
    x, w = shrew.ones(1, 4, 5, 5), shrew.ones(6, 2, 3, 3)
    with pytest.raises(shrew.ShapeError, match="groups=3"):
        F.conv2d(x, w, groups=3)
    with pytest.raises(shrew.ShapeError, match="groups"):
        F.conv2d(x, w, groups=0)
    with pytest.raises(shrew.ShrewError, match="stride 1"):
        F.conv2d(x, shrew.ones(6, 4, 3, 3), stride=2, padding="same")
    with pytest.raises(shrew.ShrewError, match="padding"):
        F.conv2d(x, shrew.ones(6, 4, 3, 3), padding="full")
    with pytest.raises(shrew.ShapeError, match="output_padding"):
        F.conv_transpose2d(x, shrew.ones(4, 2, 3, 3), stride=2, output_padding=2)
    with pytest.raises(shrew.ShrewError, match="divisible"):
        shrew.nn.Conv2d(4, 6, 3, groups=4)
    with pytest.raises(shrew.ShrewError, match="padding_mode"):
        shrew.nn.Conv2d(4, 6, 3, padding_mode="mirror")
    with pytest.raises(shrew.ShrewError, match="padding_mode"):
        shrew.nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect")


def test_unbatched_inputs_match_torch():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((4, 6, 5)), rng.standard_normal((4, 2, 3, 2))
    kw = dict(stride=2, padding=1, groups=2)
    _compare(lambda *t: F.conv2d(*t, **kw), lambda *t: TF.conv2d(*t, **kw), x, w)
    _compare(lambda *t: F.conv_transpose2d(*t, **kw), lambda *t: TF.conv_transpose2d(*t, **kw),
             x, w)
    _compare(lambda *t: F.conv1d(*t, **kw), lambda *t: TF.conv1d(*t, **kw), x[:, 0], w[:, :, 0])
    _compare(lambda *t: F.conv_transpose1d(*t, **kw),
             lambda *t: TF.conv_transpose1d(*t, **kw), x[:, 0], w[:, :, 0])
