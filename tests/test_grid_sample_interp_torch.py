"""grid_sample, affine_grid and interpolate's resampling modes agree with PyTorch: values
and the gradients of input, grid and theta, in 2-d and 3-d, for every mode and padding
mode, with grids reaching well outside [-1, 1]; on cpu and on OpenCL."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew import nn
from shrew.nn import functional as F
from shrew.testing import gradcheck
from tests.support import device_or_fail

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DEVICES = ["cpu", "opencl"]


def run_both(ours_fn, theirs_fn, arrays, device, tol=1e-9):
    """ours_fn and theirs_fn on the same float64 arrays (each a leaf that requires grad):
    the outputs, and the gradients of a random weighting of them, must agree."""
    dev = device_or_fail(device)
    ours = [shrew.tensor(a, device=dev, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, ref = ours_fn(*ours), theirs_fn(*theirs)
    assert tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=tol, atol=tol)
    w = np.random.default_rng(7).standard_normal(tuple(ref.shape))
    (out * shrew.tensor(w, device=dev)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for mine, reference in zip(ours, theirs):
        want = reference.grad.numpy() if reference.grad is not None else 0.0
        got = mine.grad.numpy() if mine.grad is not None else np.zeros_like(want)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def grid_points(rng, shape, reach=1.7):
    """Grid coordinates spread over [-reach, reach], so that every padding mode's outside
    is sampled (and the reflection folds more than once)."""
    return rng.uniform(-reach, reach, shape)


# -- grid_sample -------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d_matches_torch(device, mode, padding_mode, align_corners):
    rng = np.random.default_rng(len(mode) + len(padding_mode) + align_corners)
    x, g = rng.standard_normal((2, 3, 5, 6)), grid_points(rng, (2, 4, 7, 2))
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    run_both(lambda a, b: F.grid_sample(a, b, **kw), lambda a, b: TF.grid_sample(a, b, **kw),
             [x, g], device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d_matches_torch(device, mode, padding_mode, align_corners):
    rng = np.random.default_rng(3 + len(mode) + len(padding_mode) + align_corners)
    x, g = rng.standard_normal((2, 2, 3, 4, 5)), grid_points(rng, (2, 3, 2, 4, 3))
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    run_both(lambda a, b: F.grid_sample(a, b, **kw), lambda a, b: TF.grid_sample(a, b, **kw),
             [x, g], device)


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_grid_sample_shapes_and_modes_hypothesis(data):
    dims = data.draw(st.sampled_from([2, 3]))
    mode = data.draw(st.sampled_from(["bilinear", "nearest"] + (["bicubic"] if dims == 2
                                                                else [])))
    padding = data.draw(st.sampled_from(["zeros", "border", "reflection"]))
    align = data.draw(st.booleans())
    n, c = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3))
    spatial = [data.draw(st.integers(1, 5)) for _ in range(dims)]
    out = [data.draw(st.integers(1, 4)) for _ in range(dims)]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, c, *spatial))
    g = grid_points(rng, (n, *out, dims), reach=data.draw(st.sampled_from([1.0, 2.5, 4.0])))
    kw = dict(mode=mode, padding_mode=padding, align_corners=align)
    run_both(lambda a, b: F.grid_sample(a, b, **kw), lambda a, b: TF.grid_sample(a, b, **kw),
             [x, g], "cpu")


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sample_gradcheck(mode, padding_mode):
    rng = np.random.default_rng(5)
    x = shrew.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    # kept off the pixel lattice and the reflection edges, where the derivative jumps
    g = shrew.tensor(rng.uniform(-1.4, 1.4, (1, 2, 3, 2)) + 0.013, requires_grad=True)
    assert gradcheck(lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=padding_mode,
                                                align_corners=False), [x, g])


def test_grid_sampler_numbered_modes_and_errors():
    rng = np.random.default_rng(9)
    x, g = rng.standard_normal((1, 2, 4, 4)), grid_points(rng, (1, 3, 3, 2))
    for interp, pad in [(0, 0), (1, 1), (2, 2)]:
        run_both(lambda a, b, i=interp, p=pad: shrew.grid_sampler_2d(a, b, i, p, False),
                 lambda a, b, i=interp, p=pad: torch.grid_sampler_2d(a, b, i, p, False),
                 [x, g], "cpu")
    x3, g3 = rng.standard_normal((1, 1, 2, 3, 4)), grid_points(rng, (1, 2, 2, 2, 3))
    run_both(lambda a, b: shrew.grid_sampler_3d(a, b, 0, 2, True),
             lambda a, b: torch.grid_sampler_3d(a, b, 0, 2, True), [x3, g3], "cpu")
    with pytest.raises(shrew.ShapeError, match="grid_sample: grid must be"):
        F.grid_sample(shrew.zeros(1, 1, 3, 3), shrew.zeros(1, 2, 2, 3))
    with pytest.raises(shrew.ShapeError, match="bicubic' needs a 4-d input"):
        F.grid_sample(shrew.zeros(1, 1, 2, 3, 3), shrew.zeros(1, 2, 2, 2, 3), mode="bicubic")
    with pytest.raises(shrew.ArgumentError, match="padding_mode must be one of"):
        F.grid_sample(shrew.zeros(1, 1, 3, 3), shrew.zeros(1, 2, 2, 2), padding_mode="wrap")
    with pytest.raises(shrew.DTypeError, match="one dtype"):
        F.grid_sample(shrew.zeros(1, 1, 3, 3), shrew.zeros(1, 2, 2, 2, dtype=shrew.float64))


# -- affine_grid and a spatial transformer -------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 4, 5), (1, 1, 1, 3)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch(device, size, align_corners):
    k = len(size) - 2
    theta = np.random.default_rng(len(size)).standard_normal((size[0], k, k + 1))
    with np.errstate(all="ignore"), pytest.warns() if (align_corners and 1 in size[2:]) \
            else _nothing():
        run_both(lambda t: F.affine_grid(t, size, align_corners=align_corners),
                 lambda t: TF.affine_grid(t, size, align_corners=align_corners), [theta], device)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_affine_grid_errors():
    with pytest.raises(shrew.ShapeError, match=r"theta must be \[2, 2, 3\]"):
        F.affine_grid(shrew.zeros(2, 3, 4), (2, 1, 4, 4))
    with pytest.raises(shrew.ShapeError, match="size must be"):
        F.affine_grid(shrew.zeros(2, 2, 3), (2, 4, 4))


def _localisation(torch_like, nn_like):
    """A spatial transformer's pieces: a localisation net predicting theta, then sampling."""
    class STN(nn_like.Module):
        def __init__(self):
            super().__init__()
            self.loc = nn_like.Sequential(nn_like.Conv2d(1, 4, 3), nn_like.ReLU(),
                                          nn_like.Flatten(), nn_like.Linear(4 * 6 * 6, 6))

        def forward(self, x):
            theta = self.loc(x).reshape(-1, 2, 3) + torch_like.tensor(
                [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=x.dtype, device=x.device)
            grid = torch_like.nn.functional.affine_grid(theta, list(x.shape),
                                                        align_corners=False)
            return torch_like.nn.functional.grid_sample(x, grid, padding_mode="border",
                                                        align_corners=False)
    return STN()


@pytest.mark.parametrize("device", DEVICES)
def test_spatial_transformer_matches_torch(device):
    dev = device_or_fail(device)
    torch.manual_seed(0)
    ref = _localisation(torch, torch.nn).double()
    ours = _localisation(shrew, nn).double()
    ours.load_state_dict({k: shrew.tensor(v.detach().numpy()) for k, v in
                          ref.state_dict().items()})
    ours.to(dev)
    x = np.random.default_rng(1).standard_normal((3, 1, 8, 8))
    xs, xt = shrew.tensor(x, device=dev, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, want = ours(xs), ref(xt)
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-9, atol=1e-9)
    (out ** 2).sum().backward()
    (want ** 2).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-9)
    for (name, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-8, atol=1e-9,
                                   err_msg=name)


# -- interpolate's modes -----------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("how", [{"size": (4, 3)}, {"scale_factor": (0.4, 0.7)},
                                 {"scale_factor": (2.5, 1.3)},
                                 {"scale_factor": 0.45, "recompute_scale_factor": True}])
def test_interpolate_antialias_matches_torch(device, mode, align_corners, how):
    x = np.random.default_rng(2).standard_normal((2, 2, 9, 7))
    kw = dict(mode=mode, align_corners=align_corners, antialias=True, **how)
    run_both(lambda a: F.interpolate(a, **kw), lambda a: TF.interpolate(a, **kw), [x], device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 7, 5), (1, 2, 5, 6, 7)])
@pytest.mark.parametrize("how", [{"scale_factor": 1.7}, {"scale_factor": 0.6},
                                 {"size": 3}])
def test_interpolate_area_matches_torch(device, shape, how):
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    run_both(lambda a: F.interpolate(a, mode="area", **how),
             lambda a: TF.interpolate(a, mode="area", **how), [x], device)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_interpolate_modes_hypothesis(data):
    mode = data.draw(st.sampled_from(["nearest", "nearest-exact", "area", "linear",
                                      "bilinear", "bicubic", "trilinear"]))
    dims = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(
        mode, data.draw(st.integers(1, 3)))
    shape = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)),
             *[data.draw(st.integers(1, 6)) for _ in range(dims)])
    kw: dict = {"mode": mode}
    if mode in ("linear", "bilinear", "bicubic", "trilinear"):
        kw["align_corners"] = data.draw(st.booleans())
    if mode in ("bilinear", "bicubic"):
        kw["antialias"] = data.draw(st.booleans())
    if data.draw(st.booleans()):
        kw["size"] = tuple(data.draw(st.integers(1, 8)) for _ in range(dims))
    else:
        kw["scale_factor"] = tuple(data.draw(st.sampled_from([0.5, 0.75, 1.0, 1.5, 2.0, 2.6]))
                                   for _ in range(dims))
        if any(int(s * f) < 1 for s, f in zip(shape[2:], kw["scale_factor"])):
            kw["scale_factor"] = tuple(max(f, 1.0) for f in kw["scale_factor"])
        kw["recompute_scale_factor"] = data.draw(st.sampled_from([None, True]))
    x = np.random.default_rng(data.draw(st.integers(0, 2**16))).standard_normal(shape)
    run_both(lambda a: F.interpolate(a, **kw), lambda a: TF.interpolate(a, **kw), [x], "cpu")


def test_interpolate_antialias_gradcheck():
    x = shrew.tensor(np.random.default_rng(3).standard_normal((1, 1, 6, 5)), requires_grad=True)
    assert gradcheck(lambda a: F.interpolate(a, size=(3, 2), mode="bicubic", antialias=True),
                     [x])


def test_upsample_names_match_torch():
    x = np.random.default_rng(4).standard_normal((1, 2, 3, 4))
    run_both(lambda a: F.upsample_bilinear(a, scale_factor=2),
             lambda a: TF.interpolate(a, scale_factor=2, mode="bilinear", align_corners=True),
             [x], "cpu")
    run_both(lambda a: F.upsample_nearest(a, size=(5, 7)),
             lambda a: TF.interpolate(a, size=(5, 7), mode="nearest"), [x], "cpu")
    run_both(lambda a: F.upsample(a, scale_factor=1.5, mode="bicubic"),
             lambda a: TF.interpolate(a, scale_factor=1.5, mode="bicubic"), [x], "cpu")
    run_both(nn.UpsamplingBilinear2d(scale_factor=2), torch.nn.UpsamplingBilinear2d(
        scale_factor=2), [x], "cpu")
    run_both(nn.UpsamplingNearest2d(size=(4, 6)), torch.nn.UpsamplingNearest2d(size=(4, 6)),
             [x], "cpu")
    run_both(lambda a: shrew._upsample_bilinear2d_aa(a, (2, 3), False),
             lambda a: torch._C._nn._upsample_bilinear2d_aa(a, (2, 3), False), [x], "cpu")


def test_interpolate_errors():
    with pytest.raises(shrew.ArgumentError, match="antialias=True is for modes"):
        F.interpolate(shrew.zeros(1, 1, 4, 4), size=2, mode="nearest", antialias=True)
    with pytest.raises(shrew.ArgumentError, match="recompute_scale_factor is not meaningful"):
        F.interpolate(shrew.zeros(1, 1, 4), size=2, recompute_scale_factor=True)
    with pytest.raises(shrew.ArgumentError, match="align_corners is only for"):
        F.interpolate(shrew.zeros(1, 1, 4), size=2, mode="area", align_corners=True)
