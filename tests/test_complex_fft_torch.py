"""Complex tensors and shrew.fft against PyTorch, values and gradients, on cpu and OpenCL.

Gradients go through real losses (abs, view_as_real, real parts), as PyTorch's do: for a
complex input z, z.grad is dL/dRe + i dL/dIm.  float64 gradients are also checked against
finite differences (shrew.testing.gradcheck)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import shrew
from shrew.testing import gradcheck
from tests.support import device_or_fail

DEVICES = ["cpu", "opencl"]


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _complex_array(shape: tuple, seed: int = 0, dtype=np.complex128) -> np.ndarray:
    r = _rng(seed)
    return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)


def _pair(a: np.ndarray, device: str, grad: bool = True):
    """(shrew tensor, torch tensor) leaves holding a's values."""
    return (shrew.tensor(a, device=device, requires_grad=grad),
            torch.tensor(a, requires_grad=grad))


def _close(ours, ref, tol=1e-9) -> None:
    got = ours.numpy() if isinstance(ours, shrew.Tensor) else np.asarray(ours)
    exp = ref.detach().numpy(force=True) if isinstance(ref, torch.Tensor) else np.asarray(ref)
    assert got.shape == exp.shape, (got.shape, exp.shape)
    np.testing.assert_allclose(got, exp, rtol=tol, atol=tol)


@pytest.fixture(params=DEVICES)
def device(request) -> str:
    return device_or_fail(request.param)


# -- dtypes, construction, host ------------------------------------------------------------
def test_dtypes_and_promotion_follow_pytorch():
    assert shrew.cfloat is shrew.complex64 and shrew.cdouble is shrew.complex128
    assert shrew.complex64.is_complex and not shrew.complex64.is_floating_point
    assert shrew.complex64.to_real() is shrew.float32
    assert shrew.float64.to_complex() is shrew.complex128
    for a, b in [("float32", "complex64"), ("float64", "complex64"), ("int64", "complex128"),
                 ("float16", "complex64"), ("complex64", "complex128")]:
        want = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert shrew.promote_types(getattr(shrew, a), getattr(shrew, b)).name == \
            str(want).removeprefix("torch.")
    assert (shrew.ones(3) * 1j).dtype is shrew.complex64
    assert (shrew.ones(3, dtype=shrew.float64) * 1j).dtype is shrew.complex128
    assert (shrew.ones(3) * shrew.tensor(1j, dtype=shrew.complex128)).dtype is shrew.complex64
    z = shrew.tensor([1 + 2j])
    assert (z * shrew.ones(1, dtype=shrew.float64)).dtype is shrew.complex128
    assert (z * shrew.tensor(2.0, dtype=shrew.float64)).dtype is shrew.complex64


def test_tensor_item_numpy_print_and_casts(device):
    z = shrew.tensor([[1 + 2j, 3.5 - 1j]], device=device)
    t = torch.tensor([[1 + 2j, 3.5 - 1j]])
    assert z.dtype is shrew.complex64 and z.shape == (1, 2) and z.is_complex()
    assert shrew.is_complex(z) and not shrew.is_complex(shrew.ones(1))
    assert z[0, 1].item() == t[0, 1].item() and isinstance(z[0, 1].item(), complex)
    assert z.numpy().dtype == np.complex64
    _close(z, t)
    assert repr(z.cpu()) == repr(t).replace("torch", "shrew")
    assert z.tolist() == t.tolist()
    _close(z.to(shrew.complex128), t.to(torch.complex128))
    _close(z.cdouble(), t.cdouble())
    _close(shrew.tensor([1.0, -2.0], device=device).cfloat(), torch.tensor([1.0, -2.0]).cfloat())
    _close(z.cpu().to(device), t)
    _close(shrew.zeros(2, 3, dtype=shrew.cfloat, device=device),
           torch.zeros(2, 3, dtype=torch.cfloat))
    _close(shrew.ones(2, dtype=shrew.cdouble), torch.ones(2, dtype=torch.cdouble))
    a = _complex_array((3,), dtype=np.complex64)
    shared = shrew.from_numpy(a)
    a[0] = 7 + 7j
    assert shared[0].item() == 7 + 7j  # from_numpy shares memory, as PyTorch's


def test_random_complex_draws(device):
    shrew.manual_seed(0)
    z = shrew.randn(20000, dtype=shrew.cfloat, device=device)
    assert z.dtype is shrew.complex64
    assert abs(z.real.var().item() - 0.5) < 0.03 and abs(z.imag.var().item() - 0.5) < 0.03
    u = shrew.rand(2000, dtype=shrew.cdouble, device=device, requires_grad=True)
    assert u.requires_grad and u.is_leaf and 0 <= u.real.min().item() < u.real.max().item() < 1
    assert 0 <= u.imag.min().item() and u.imag.max().item() < 1


def test_save_and_load_round_trip(tmp_path):
    z64 = shrew.tensor(_complex_array((2, 3), dtype=np.complex64))  # (safetensors: C64 only)
    shrew.save({"z": z64}, tmp_path / "z.safetensors")
    _close(shrew.load(tmp_path / "z.safetensors")["z"], z64.numpy())
    z = shrew.tensor(_complex_array((2, 3)))
    shrew.save({"z": z}, tmp_path / "z.pt")
    back = torch.load(tmp_path / "z.pt", weights_only=True)["z"]
    _close(z, back)
    _close(shrew.load(tmp_path / "z.pt")["z"], back)


# -- views -------------------------------------------------------------------------------------
def test_view_as_real_and_complex_share_memory_and_gradient(device):
    x, xt = _pair(_rng(1).standard_normal((4, 2)), device)
    z, zt = shrew.view_as_complex(x), torch.view_as_complex(xt)
    assert shrew.view_as_real(z) is x  # zero copy: the same storage
    w = shrew.view_as_real(z * z)
    wt = torch.view_as_real(zt * zt)
    _close(w, wt)
    (w * w).sum().backward()
    (wt * wt).sum().backward()
    _close(x.grad, xt.grad)
    # a write through .real / .imag is seen through the complex tensor, as PyTorch's views
    c = shrew.tensor([1 + 1j, 2 + 2j], device=device)
    c.real[0] = 5.0
    c.imag.mul_(3)
    assert c.cpu().tolist() == [5 + 3j, 2 + 6j]
    c.real = shrew.tensor([0.5, 0.25], device=device)
    assert c.cpu().tolist() == [0.5 + 3j, 0.25 + 6j]


def test_view_errors_are_clear():
    with pytest.raises(shrew.DTypeError, match="view_as_real"):
        shrew.view_as_real(shrew.ones(2))
    with pytest.raises(shrew.ShapeError, match="last dimension of size 2"):
        shrew.view_as_complex(shrew.ones(3))
    with pytest.raises(shrew.DTypeError, match="imag"):
        shrew.ones(2).imag  # noqa: B018  (the access is what raises)


def test_ops_pytorch_refuses_raise_dtype_errors():
    z = shrew.tensor([1 + 1j, 2j])
    for call in (lambda: z < z, lambda: z.max(), lambda: z.relu(), lambda: shrew.relu(z),
                 lambda: z.clamp(0, 1), lambda: shrew.maximum(z, z), lambda: z.argmax()):
        with pytest.raises(shrew.DTypeError, match="complex"):
            call()
    with pytest.raises(shrew.DTypeError, match="real scalar"):
        z.sum().backward()


def test_ops_without_a_complex_form_refuse_rather_than_drop_imaginary_parts():
    z = shrew.tensor([1 + 1j, 2j])
    for call in (lambda: z.cumsum(0), lambda: z.prod(), lambda: z.softmax(0),
                 lambda: z.sort(), lambda: z.floor(), lambda: z.logsumexp(0),
                 lambda: shrew.nn.functional.dropout(z, 0.5), lambda: z.var()):
        with pytest.raises(shrew.DTypeError):
            call()
    assert z.to(shrew.float32).tolist() == z.float().tolist() == [1.0, 0.0]  # as torch's


# -- arithmetic and functions ------------------------------------------------------------------
UNARY = {
    "abs": lambda m, z: m.abs(z), "angle": lambda m, z: m.angle(z),
    "exp": lambda m, z: m.exp(z), "log": lambda m, z: m.log(z), "sqrt": lambda m, z: m.sqrt(z),
    "conj": lambda m, z: m.conj(z), "neg": lambda m, z: -z, "square": lambda m, z: z.square(),
    "reciprocal": lambda m, z: z.reciprocal(), "sgn": lambda m, z: z.sgn(),
    "real": lambda m, z: m.real(z), "imag": lambda m, z: m.imag(z),
    **{fn: (lambda f: lambda m, z: getattr(m, f)(z))(fn)
       for fn in ("sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "rsqrt", "log2",
                  "log10", "exp2")},
    "sum": lambda m, z: z.sum(0), "mean": lambda m, z: z.mean((0, 1)),
}


def _loss(lib, y):
    """A real loss of a real or complex output."""
    if y.dtype.is_complex:
        y = lib.view_as_real(y.resolve_conj() if lib is torch else y)
    return (y * y).sum() + y.sum()


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_and_gradients(device, name):
    z, zt = _pair(_complex_array((3, 4), seed=2), device)
    y, yt = UNARY[name](shrew, z), UNARY[name](torch, zt)
    _close(y, yt)
    _loss(shrew, y).backward()
    _loss(torch, yt).backward()
    _close(z.grad, zt.grad)


BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b, "rsub": lambda a, b: b - a, "rdiv": lambda a, b: b / a}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("other", ["complex", "real", "complex_number", "real_number"])
def test_binary_with_real_and_complex_operands(device, name, other):
    z, zt = _pair(_complex_array((2, 3), seed=3), device)
    if other == "complex":
        o, ot = _pair(_complex_array((3,), seed=4), device)
    elif other == "real":
        o, ot = _pair(_rng(5).standard_normal((2, 1)) + 3, device)
    else:
        o = ot = (0.5 - 2j) if other == "complex_number" else 1.5
    y, yt = BINARY[name](z, o), BINARY[name](zt, ot)
    assert y.dtype.name == str(yt.dtype).removeprefix("torch.")
    _close(y, yt)
    _loss(shrew, y).backward()
    _loss(torch, yt).backward()
    _close(z.grad, zt.grad)
    if isinstance(o, shrew.Tensor):
        _close(o.grad, ot.grad)


def test_matmul_einsum_polar_complex_isreal(device):
    a, at = _pair(_complex_array((2, 3, 4), seed=6), device)
    b, bt = _pair(_complex_array((4, 5), seed=7), device)
    y, yt = a @ b, at @ bt
    _close(y, yt)
    e, et = shrew.einsum("bij,jk->bik", a, b), torch.einsum("bij,jk->bik", at, bt)
    _close(e, et)
    (_loss(shrew, y) + _loss(shrew, e)).backward()
    (_loss(torch, yt) + _loss(torch, et)).backward()
    _close(a.grad, at.grad)
    _close(b.grad, bt.grad)
    r, rt = _pair(_rng(8).random((3,)) + 0.5, device)
    t, tt = _pair(_rng(9).standard_normal((3,)), device)
    p, pt = shrew.polar(r, t), torch.polar(rt, tt)
    c, ct = shrew.complex(t, r), torch.complex(tt, rt)
    _close(p, pt)
    _close(c, ct)
    (_loss(shrew, p) + _loss(shrew, c)).backward()
    (_loss(torch, pt) + _loss(torch, ct)).backward()
    _close(r.grad, rt.grad)
    _close(t.grad, tt.grad)
    q = shrew.tensor([1 + 0j, 2j, 3], device=device)
    assert shrew.isreal(q).cpu().tolist() == [True, False, True]
    assert shrew.isreal(shrew.ones(2)).tolist() == [True, True]


def test_shape_ops_on_complex_tensors(device):
    a = _complex_array((2, 3, 4), seed=10)
    z, t = shrew.tensor(a, device=device), torch.tensor(a)
    _close(z.transpose(0, -1), t.transpose(0, -1))
    _close(z.permute(2, 0, 1), t.permute(2, 0, 1))
    _close(z.reshape(6, -1), t.reshape(6, -1))
    _close(z[:, 1:, ::2], t[:, 1:, ::2])
    _close(z[..., 0], t[..., 0])
    _close(z.unsqueeze(-1).squeeze(-1), t)
    _close(z.flatten(1), t.flatten(1))
    _close(z.narrow(-1, 1, 2), t.narrow(-1, 1, 2))
    _close(z.mT, t.mT)


# -- shrew.fft ---------------------------------------------------------------------------------
ONE_DIM = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
MULTI_DIM = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn",
             "irfftn", "hfftn", "ihfftn"]
REAL_INPUT = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


def _input(name: str, shape: tuple, device: str, seed: int = 11, dtype=np.float64):
    if name in REAL_INPUT:
        a = _rng(seed).standard_normal(shape).astype(dtype)
    else:
        a = _complex_array(shape, seed, np.complex128 if dtype == np.float64 else np.complex64)
    return _pair(a, device)


@pytest.mark.parametrize("name", ONE_DIM)
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 5, 12])
def test_one_dim_transforms(device, name, norm, n):
    x, xt = _input(name, (3, 8), device)
    for dim in (-1, 0):
        if dim == 0 and n is not None:
            continue
        y = getattr(shrew.fft, name)(x, n=n, dim=dim, norm=norm)
        yt = getattr(torch.fft, name)(xt, n=n, dim=dim, norm=norm)
        _close(y, yt)
        _loss(shrew, y).backward()
        _loss(torch, yt).backward()
        _close(x.grad, xt.grad)


@pytest.mark.parametrize("name", MULTI_DIM)
@pytest.mark.parametrize("s, dim", [(None, None), ((4, 6), None), (None, (0, 2)),
                                    ((3, 5), (2, 0))])
def test_multi_dim_transforms(device, name, s, dim):
    x, xt = _input(name, (4, 3, 6), device)
    kwargs = {"s": s} if dim is None else {"s": s, "dim": dim}
    if name.endswith("2") and dim is None:
        kwargs = {"s": s}
    y = getattr(shrew.fft, name)(x, norm="ortho", **kwargs)
    yt = getattr(torch.fft, name)(xt, norm="ortho", **kwargs)
    _close(y, yt)
    _loss(shrew, y).backward()
    _loss(torch, yt).backward()
    _close(x.grad, xt.grad)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "rfft2", "irfftn"])
def test_float32_transforms(device, name):
    x, xt = _input(name, (4, 10), device, dtype=np.float32)
    y, yt = getattr(shrew.fft, name)(x), getattr(torch.fft, name)(xt)
    assert y.dtype.name == str(yt.dtype).removeprefix("torch.")
    _close(y, yt, tol=2e-5)
    y.abs().sum().backward()
    yt.abs().sum().backward()
    _close(x.grad, xt.grad, tol=2e-5)


def test_transforms_through_abs_match_finite_differences(device):
    x = shrew.tensor(_rng(12).standard_normal((3, 6)), device=device, requires_grad=True)
    assert gradcheck(lambda v: shrew.fft.fft(v).abs().sum(), [x])
    assert gradcheck(lambda v: shrew.fft.irfft(shrew.fft.rfft(v) * 1j + v[:, :4], n=7), [x])
    pairs = shrew.tensor(_rng(13).standard_normal((4, 3, 2)), device=device,
                         requires_grad=True)
    assert gradcheck(lambda p: shrew.fft.hfft2(shrew.view_as_complex(p), s=(4, 4)), [pairs])
    assert gradcheck(lambda p: shrew.view_as_real(
        shrew.fft.ifft2(shrew.view_as_complex(p), s=(3, 5)).exp()), [pairs])


def test_round_trips(device):
    a = _rng(14).standard_normal((2, 6, 5))
    x = shrew.tensor(a, device=device)
    _close(shrew.fft.ifft(shrew.fft.fft(x)).real, a)
    _close(shrew.fft.irfftn(shrew.fft.rfftn(x), s=(2, 6, 5)), a)
    _close(shrew.fft.irfft2(shrew.fft.rfft2(x), s=(6, 5)), a)
    _close(shrew.fft.hfft(shrew.fft.ihfft(x), n=5), a)
    z = shrew.tensor(_complex_array((4, 4), 15), device=device)
    _close(shrew.fft.ifftn(shrew.fft.fftn(z, norm="ortho"), norm="ortho"), z.cpu().numpy())


def test_helpers_freq_and_shift(device):
    for n, d in [(8, 1.0), (7, 0.5)]:
        _close(shrew.fft.fftfreq(n, d, device=device), torch.fft.fftfreq(n, d))
        _close(shrew.fft.rfftfreq(n, d, dtype=shrew.float64), torch.fft.rfftfreq(
            n, d, dtype=torch.float64))
    x, xt = _pair(_rng(16).standard_normal((5, 4)), device)
    for dim in (None, 0, (0, 1)):
        _close(shrew.fft.fftshift(x, dim), torch.fft.fftshift(xt, dim))
        _close(shrew.fft.ifftshift(x, dim), torch.fft.ifftshift(xt, dim))
    z = shrew.tensor(_complex_array((3, 5), 17), device=device)
    _close(shrew.fft.fftshift(z), torch.fft.fftshift(torch.tensor(z.cpu().numpy())))


def test_fft_argument_errors():
    x = shrew.ones(4)
    with pytest.raises(shrew.DTypeError, match="real input"):
        shrew.fft.rfft(shrew.ones(4, dtype=shrew.cfloat))
    with pytest.raises(RuntimeError, match="normalization"):
        shrew.fft.fft(x, norm="none")
    with pytest.raises(RuntimeError, match="number of data points"):
        shrew.fft.fft(x, n=0)
    with pytest.raises(IndexError):
        shrew.fft.fft(x, dim=1)
    with pytest.raises(RuntimeError, match="same length"):
        shrew.fft.fftn(shrew.ones(2, 2), s=(2,), dim=(0, 1))


# -- a spectral layer (FNO's SpectralConv2d) ----------------------------------------------------
class _SpectralConv:
    """rfft2, a complex weight on the lowest modes (einsum over a slice, plus a mul over
    the other corner), irfft2: the layer of a Fourier neural operator."""

    def __init__(self, lib, w1, w2, modes):
        self.lib, self.w1, self.w2, self.modes = lib, w1, w2, modes

    def __call__(self, x):
        lib, m = self.lib, self.modes
        ft = lib.fft.rfft2(x)
        w1, w2 = lib.view_as_complex(self.w1), lib.view_as_complex(self.w2)
        low = lib.einsum("bixy,ioxy->boxy", ft[:, :, :m, :m], w1)
        high = (ft[:, :, -m:, :m].unsqueeze(2) * w2).sum(1)
        out = lib.zeros(x.shape[0], w1.shape[1], x.shape[-2], x.shape[-1] // 2 + 1,
                        dtype=ft.dtype, device=x.device)
        out[:, :, :m, :m] = low
        out[:, :, -m:, :m] = high
        return lib.fft.irfft2(out, s=(x.shape[-2], x.shape[-1]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_spectral_conv_layer_matches_torch(device, dtype):
    r = _rng(18)
    xa = r.standard_normal((2, 3, 8, 8)).astype(dtype)
    w1a = (r.standard_normal((3, 4, 3, 3, 2)) / 6).astype(dtype)
    w2a = (r.standard_normal((3, 4, 3, 3, 2)) / 6).astype(dtype)
    x, xt = _pair(xa, device)
    w1, w1t = _pair(w1a, device)
    w2, w2t = _pair(w2a, device)
    y = _SpectralConv(shrew, w1, w2, 3)(x)
    yt = _SpectralConv(torch, w1t, w2t, 3)(xt)
    tol = 1e-9 if dtype == np.float64 else 3e-5
    _close(y, yt, tol)
    (y.tanh() * y).sum().backward()
    (yt.tanh() * yt).sum().backward()
    for ours, ref in [(x, xt), (w1, w1t), (w2, w2t)]:
        _close(ours.grad, ref.grad, tol)


# -- stft / istft ------------------------------------------------------------------------------
@pytest.mark.parametrize("center, onesided, normalized", [(True, None, False),
                                                         (False, True, True),
                                                         (True, False, False)])
def test_stft_istft_values_and_gradients(device, center, onesided, normalized):
    x, xt = _pair(_rng(19).standard_normal((2, 40)), device)
    win_length = 12 if center else 16  # (without centring, the window must not vanish at 0)
    win, wint = _pair(np.hanning(win_length) + 0.1, device, grad=False)
    kwargs = dict(n_fft=16, hop_length=4, win_length=win_length, center=center,
                  onesided=onesided, normalized=normalized, return_complex=True)
    s = shrew.stft(x, window=win, **kwargs)
    st = torch.stft(xt, window=wint, **kwargs)
    _close(s, st)
    _close(x.stft(window=win, **kwargs), st)
    ikwargs = {k: v for k, v in kwargs.items() if k != "return_complex"}
    back = shrew.istft(s, window=win, length=40 if center else None, **ikwargs)
    backt = torch.istft(st, window=wint, length=40 if center else None, **ikwargs)
    _close(back, backt)
    if center:
        _close(back, x.detach().cpu().numpy())
    (_loss(shrew, s) + (back * back).sum()).backward()
    (_loss(torch, st) + (backt * backt).sum()).backward()
    _close(x.grad, xt.grad)


def test_stft_asks_for_return_complex():
    with pytest.raises(RuntimeError, match="return_complex"):
        shrew.stft(shrew.ones(32), 8)
    pairs = shrew.stft(shrew.ones(32), 8, return_complex=False)
    assert pairs.shape == torch.stft(torch.ones(32), 8, return_complex=False).shape


def test_pow_compare_cat_full_and_in_place(device):
    a = _complex_array((2, 3), seed=20)
    z, zt = _pair(a, device)
    for e in (0, 1, 3, 0.5, 2.5):
        y, yt = z ** e, zt ** e
        _close(y, yt)
        _loss(shrew, y).backward()
        _loss(torch, yt).backward()
        _close(z.grad, zt.grad)
        z.grad = zt.grad = None
    c = shrew.tensor(a, device=device)
    assert (c == c).all().item() and not (c != c).any().item()
    r_np = shrew.ones(2, device=device) * np.complex64(2j)  # a numpy complex scalar
    assert r_np.dtype is shrew.complex64 and r_np.cpu().tolist() == [2j, 2j]
    assert (c == shrew.tensor(a.real, device=device)).sum().item() == 0
    r = shrew.ones(2, 3, device=device)
    _close(shrew.cat([c, r], 1), torch.cat([torch.tensor(a), torch.ones(2, 3)], 1))
    _close(shrew.stack([c, c], -1), torch.stack([torch.tensor(a)] * 2, -1))
    _close(shrew.full((2,), 1 - 2j, device=device), torch.full((2,), 1 - 2j))
    w, wt = shrew.zeros(2, 3, dtype=shrew.cfloat, device=device), torch.zeros(2, 3,
                                                                             dtype=torch.cfloat)
    w += c
    w *= 1j
    w.sub_(r, alpha=2)
    wt += torch.tensor(a)
    wt *= 1j
    wt.sub_(torch.ones(2, 3), alpha=2)
    _close(w, wt, tol=1e-6)
    assert [row.shape for row in c] == [(3,), (3,)]
    mask = _rng(25).random((2, 3)) > 0.5
    y = shrew.where(shrew.tensor(mask, device=device), z, 2j)
    yt = torch.where(torch.tensor(mask), zt, 2j)
    _close(y, yt)
    _loss(shrew, y).backward()
    _loss(torch, yt).backward()
    _close(z.grad, zt.grad)


class _FNOLayer:
    """FNO's SpectralConv2d as published: complex nn.Parameters, out_ft written by slices."""

    @staticmethod
    def make(lib, w1, w2, modes):
        class SpectralConv2d(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.modes = modes
                self.weights1 = lib.nn.Parameter(lib.tensor(w1))
                self.weights2 = lib.nn.Parameter(lib.tensor(w2))

            def forward(self, x):
                m = self.modes
                x_ft = lib.fft.rfft2(x)
                out_ft = lib.zeros(x.shape[0], self.weights1.shape[1], x.size(-2),
                                   x.size(-1) // 2 + 1, dtype=lib.cfloat, device=x.device)
                out_ft[:, :, :m, :m] = lib.einsum("bixy,ioxy->boxy", x_ft[:, :, :m, :m],
                                                  self.weights1)
                out_ft[:, :, -m:, :m] = lib.einsum("bixy,ioxy->boxy", x_ft[:, :, -m:, :m],
                                                   self.weights2)
                return lib.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))
        return SpectralConv2d()


def test_fno_layer_with_complex_parameters_trains_as_torch(device):
    w1, w2 = (_complex_array((3, 2, 3, 3), seed, np.complex64) / 6 for seed in (21, 22))
    xa = _rng(23).standard_normal((2, 3, 8, 8)).astype(np.float32)
    ours, ref = _FNOLayer.make(shrew, w1, w2, 3), _FNOLayer.make(torch, w1, w2, 3)
    ours.to(device)
    assert isinstance(ours.weights1, shrew.nn.Parameter) and ours.weights1.is_leaf
    assert [n for n, _ in ours.named_parameters()] == ["weights1", "weights2"]
    opt = shrew.optim.Adam(ours.parameters(), lr=0.05)
    opt_t = torch.optim.Adam(ref.parameters(), lr=0.05)
    x, xt = shrew.tensor(xa, device=device), torch.tensor(xa)
    for _ in range(3):
        loss, loss_t = ours(x).square().mean(), ref(xt).square().mean()
        _close(loss, loss_t, tol=2e-5)
        opt.zero_grad()
        opt_t.zero_grad()
        loss.backward()
        loss_t.backward()
        _close(ours.weights1.grad, ref.weights1.grad, tol=2e-5)
        opt.step()
        opt_t.step()
    _close(ours.weights2, ref.weights2, tol=2e-5)
    state = {k: v.cpu() for k, v in ours.state_dict().items()}
    assert state["weights1"].dtype is shrew.complex64
    _close(state["weights1"], ref.state_dict()["weights1"], tol=2e-5)


def test_testing_helpers_read_complex_values():
    z = shrew.tensor([1 + 2j, -3j])
    shrew.testing.assert_close(z, z * (1 + 1e-9))
    with pytest.raises(AssertionError, match="not close"):
        shrew.testing.assert_close(z, z + 1e-3j)
    x = shrew.tensor(_rng(24).standard_normal((2, 5)), requires_grad=True)
    assert gradcheck(lambda v: shrew.fft.rfft(v) * (1 - 2j), [x])  # a complex output


def test_compiled_fno_layer_equals_eager():
    w1, w2 = (_complex_array((3, 2, 3, 3), seed, np.complex64) / 6 for seed in (26, 27))
    layer = _FNOLayer.make(shrew, w1, w2, 3)
    x = shrew.tensor(_rng(28).standard_normal((2, 3, 8, 8)).astype(np.float32))
    eager = layer(x)
    eager.sum().backward()
    grad = layer.weights1.grad.clone()
    layer.weights1.grad = None
    compiled = shrew.compile(layer)
    for _ in range(3):  # captured, settled, replayed
        y = compiled(x)
    assert np.array_equal(y.numpy(), eager.numpy())
    y.sum().backward()
    assert np.array_equal(layer.weights1.grad.numpy(), grad.numpy())
