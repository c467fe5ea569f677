"""einops on shrew tensors: its functions and layers give PyTorch's values and gradients
(einops on torch tensors is the reference), with the backend einops finds by itself."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

einops = pytest.importorskip("einops")
torch = pytest.importorskip("torch")

import shrew  # noqa: E402
from shrew.utils.einops.layers import EinMix, Rearrange, Reduce  # noqa: E402

X = np.random.default_rng(0).standard_normal((2, 3, 4, 6)).astype(np.float32)

CASES = [  # (function, pattern, keyword lengths)
    ("rearrange", "b c h w -> b (h w) c", {}),
    ("rearrange", "b c h (w two) -> (b two) c w h", {"two": 2}),
    ("reduce", "b c h w -> b c", {"reduction": "mean"}),
    ("reduce", "b c h w -> c", {"reduction": "sum"}),
    ("reduce", "b c h w -> b h", {"reduction": "max"}),
    ("reduce", "b c h w -> w", {"reduction": "min"}),
    ("reduce", "b c h w -> b c", {"reduction": "prod"}),
    ("reduce", "b c (h h2) (w w2) -> b c h w", {"reduction": "mean", "h2": 2, "w2": 2}),
    ("repeat", "b c h w -> b c h w r", {"r": 3}),
    ("repeat", "b c h w -> (r b) c h w", {"r": 2}),
]


def _both(fn, pattern, lengths):
    """The value and input gradient of one einops call on shrew and on torch."""
    xs = shrew.tensor(X, requires_grad=True)
    xt = torch.tensor(X, requires_grad=True)
    ys = getattr(einops, fn)(xs, pattern, **lengths)
    yt = getattr(einops, fn)(xt, pattern, **lengths)
    w = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(np.float32)
    (ys * shrew.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    return ys, yt, xs.grad, xt.grad


@pytest.mark.parametrize("fn,pattern,lengths", CASES)
def test_functions_match_torch(fn, pattern, lengths):
    ys, yt, gs, gt = _both(fn, pattern, lengths)
    assert isinstance(ys, shrew.Tensor) and tuple(ys.shape) == tuple(yt.shape)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(gs.numpy(), gt.numpy(), rtol=1e-5, atol=1e-6)


def test_einsum_pack_unpack_match_torch():
    a, b = X[0, 0], X[1, 0, :, :5]  # [4, 6], [4, 5]
    ss = [shrew.tensor(v, requires_grad=True) for v in (a, b)]
    tt = [torch.tensor(v, requires_grad=True) for v in (a, b)]
    es, et = (einops.einsum(p, q, "i j, i k -> j k") for p, q in (ss, tt))
    np.testing.assert_allclose(es.detach().numpy(), et.detach().numpy(), rtol=1e-5)
    packed_s, shapes_s = einops.pack(ss, "i *")
    packed_t, shapes_t = einops.pack(tt, "i *")
    assert tuple(packed_s.shape) == tuple(packed_t.shape)
    assert [tuple(s) for s in shapes_s] == [tuple(s) for s in shapes_t]
    parts_s = einops.unpack(packed_s * 2, shapes_s, "i *")
    parts_t = einops.unpack(packed_t * 2, shapes_t, "i *")
    (es.sum() + parts_s[1].square().sum()).backward()
    (et.sum() + parts_t[1].square().sum()).backward()
    for s, t in zip(ss, tt):
        np.testing.assert_allclose(s.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_backend_found_on_import_alone():
    """A fresh process: importing shrew is enough, no shrew.utils.einops import."""
    code = ("import shrew, einops; x = shrew.ones(2, 3);"
            "print(type(einops.rearrange(x, 'a b -> b a')).__module__,"
            " einops._backends.get_backend(x).framework_name)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["shrew._tensor", "shrew"]


def test_layers_in_sequential_match_torch():
    from einops.layers import torch as tl
    layers = dict(pre="b c h w -> b (c h w)", hidden=72, out=5)
    ms = shrew.nn.Sequential(Rearrange("b c h w -> b h w c"), Reduce("b h w c -> b c w", "max"),
                             Rearrange("b c w -> b (c w)"),
                             EinMix("b k -> b d", weight_shape="k d", bias_shape="d",
                                    k=18, d=layers["out"]))
    mt = torch.nn.Sequential(tl.Rearrange("b c h w -> b h w c"),
                             tl.Reduce("b h w c -> b c w", "max"),
                             tl.Rearrange("b c w -> b (c w)"),
                             tl.EinMix("b k -> b d", weight_shape="k d", bias_shape="d",
                                       k=18, d=layers["out"]))
    mt.load_state_dict({k: torch.tensor(v.detach().numpy())
                        for k, v in ms.state_dict().items()})
    xs, xt = shrew.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    ys, yt = ms(xs), mt(xt)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    ys.square().sum().backward()
    yt.square().sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-6)
    weight_s, weight_t = ms[3].weight.grad.numpy(), mt[3].weight.grad.numpy()
    np.testing.assert_allclose(weight_s, weight_t, rtol=1e-4, atol=1e-6)
    assert [n for n, _ in ms.named_parameters()] == [n for n, _ in mt.named_parameters()]
    assert repr(ms[1]) == repr(mt[1])


def test_layers_importable_as_einops_layers_shrew():
    from einops.layers.shrew import Rearrange as R
    assert R is Rearrange
    assert einops._backends.get_backend(shrew.ones(1)).layers().Reduce is Reduce


def test_einops_errors_stay_einops_errors():
    """A bad pattern is einops' own EinopsError, as on torch."""
    with pytest.raises(einops.EinopsError):
        einops.rearrange(shrew.ones(2, 3), "a b -> a b c")
    with pytest.raises(einops.EinopsError):
        einops.rearrange(torch.ones(2, 3), "a b -> a b c")
