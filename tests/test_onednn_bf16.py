"""bfloat16 and float16 matrix products on oneDNN's matmul primitive (backends/cpu/onednn/
matmul.py): float32 accumulation, one rounding, as PyTorch's CPU mm, matmul and linear (and
their gradients under autocast).  Against PyTorch on the same 16-bit inputs, against the
float32 product, against the widened path that runs with oneDNN switched off, and that
the cpu backend takes the oneDNN path where it serves."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import shrew
from shrew.backends import cpu
from shrew.backends.cpu import onednn, thresholds, vendor
from shrew.backends.cpu.backend import CPUBackend
from support import broadcast_pairs, needs_loadable, switched_on

pytestmark = needs_loadable(onednn)
onednn_on = switched_on(cpu.use_onednn)

BF16, F16 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
TORCH = {BF16: torch.bfloat16, F16: torch.float16}
SHREW = {BF16: shrew.bfloat16, F16: shrew.float16}
# One rounding of the dtype, relative to the float32 result's largest element: a product
# whose float32 sums cancel may keep less than that relative to its own element.
TOLERANCE = {BF16: 1e-2, F16: 1e-3}


def _ordered(x: np.ndarray) -> np.ndarray:
    """x's 16-bit patterns as integers in the order of the values (adjacent values differ
    by 1: a difference counts units in the last place)."""
    bits = x.view(np.int16).astype(np.int32)
    return np.where(bits < 0, -(bits & 0x7FFF), bits)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(_ordered(got) - _ordered(want))


def _assert_one_rounding(got: np.ndarray, want: np.ndarray, exact: np.ndarray) -> None:
    """got and want (16-bit results of one product summed in another order) within one
    rounding of each other almost everywhere, and both within the dtype's rounding of the
    float64 product `exact`."""
    assert got.dtype == want.dtype and got.shape == want.shape == exact.shape
    ulps = _ulps(got, want)
    assert np.mean(ulps > 1) <= 1e-3, ulps.max()
    scale = TOLERANCE[got.dtype] * max(float(np.abs(exact).max()), 1e-30)
    for result in (got, want):
        np.testing.assert_allclose(result.astype(np.float64), exact, rtol=TOLERANCE[got.dtype],
                                   atol=scale)


def _inputs(shape: tuple, dtype: np.dtype, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _torch(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(x.astype(np.float32)).to(TORCH[x.dtype])


def _numpy(t: torch.Tensor, dtype: np.dtype) -> np.ndarray:
    return t.detach().float().numpy().astype(dtype)


def _layout(x: np.ndarray, how: str) -> np.ndarray:
    """x itself, or a view of the same values laid out otherwise: column-major (a
    transposed buffer), a row leading dimension longer than the row, or elements two
    apart (which oneDNN cannot address: copied first)."""
    if how == "transposed":
        return np.ascontiguousarray(x.T).T
    if how == "padded":
        wide = np.zeros(x.shape[:-1] + (x.shape[-1] + 3,), x.dtype)
        wide[..., :x.shape[-1]] = x
        return wide[..., :x.shape[-1]]
    if how == "strided":
        wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        wide[..., ::2] = x
        return wide[..., ::2]
    return x


def _count(monkeypatch) -> list:
    """Whether each call of onednn.matmul.matmul served (True) or declined (False), the
    float32 products of the widened paths kept on MKL (vendor.py routes them here on CPUs
    not Intel's: test_linear_fused.py)."""
    monkeypatch.setattr(vendor, "f32_products_on_onednn", False)
    served = []
    real = onednn.matmul.matmul

    def counting(*args):
        out = real(*args)
        served.append(out is not NotImplemented)
        return out
    monkeypatch.setattr(onednn.matmul, "matmul", counting)
    return served


SHAPES = [(64, 32, 48), (256, 4096, 96), (1, 4096, 64), (64, 4096, 1), (512, 1, 256),
          (1024, 256, 1024)]
LAYOUTS = [("plain", "plain"), ("transposed", "plain"), ("plain", "transposed"),
           ("transposed", "transposed"), ("padded", "strided")]


@pytest.mark.parametrize("m, k, n", SHAPES)
@pytest.mark.parametrize("layout_a, layout_b", LAYOUTS)
def test_bfloat16_products_match_torch_and_the_widened_path(monkeypatch, m, k, n, layout_a,
                                                            layout_b):
    a = _layout(_inputs((m, k), BF16, m), layout_a)
    b = _layout(_inputs((k, n), BF16, n), layout_b)
    served = _count(monkeypatch)
    got = shrew.mm(shrew.tensor(a), shrew.tensor(b)).numpy()
    assert served == [m * n * k >= thresholds.MATMUL_MIN_WORK]
    with cpu.use_onednn(False):
        widened = shrew.mm(shrew.tensor(a), shrew.tensor(b)).numpy()
    assert served[1:] and not any(served[1:])   # switched off: every call declined
    want = _numpy(torch.mm(_torch(a), _torch(b)), BF16)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    _assert_one_rounding(got, want, exact)
    _assert_one_rounding(got, widened, exact)


@pytest.mark.parametrize("a_shape, b_shape, transpose_b", [
    ((4, 64, 96), (96, 80), False), ((3, 1, 64, 96), (5, 96, 80), False),
    ((2, 4, 128, 32), (2, 4, 128, 32), True), ((1, 64, 96), (6, 96, 80), False)])
def test_batched_bfloat16_products_broadcast_as_torch(monkeypatch, a_shape, b_shape,
                                                     transpose_b):
    a, b = _inputs(a_shape, BF16, 1), _inputs(b_shape, BF16, 2)
    served = _count(monkeypatch)
    sa, sb = shrew.tensor(a), shrew.tensor(b)
    got = (sa @ (sb.transpose(-1, -2) if transpose_b else sb)).numpy()
    assert served == [True]
    tb = _torch(b).transpose(-1, -2) if transpose_b else _torch(b)
    want = _numpy(torch.matmul(_torch(a), tb), BF16)
    b64 = b.astype(np.float64)
    exact = a.astype(np.float64) @ (np.swapaxes(b64, -1, -2) if transpose_b else b64)
    _assert_one_rounding(got, want, exact)


@given(batches=broadcast_pairs(0, 3), m=st.integers(1, 24), k=st.integers(1, 40),
       n=st.integers(1, 24), transposed=st.tuples(st.booleans(), st.booleans()),
       seed=st.integers(0, 2**16))
def test_any_broadcast_and_layout_matches_torch(batches, m, k, n, transposed, seed):
    """Every size (the threshold lowered to 0, so that oneDNN takes small products too),
    batch dims broadcast either way, either operand transposed."""
    a_batch, b_batch = batches
    a, b = _inputs(a_batch + (m, k), BF16, seed), _inputs(b_batch + (k, n), BF16, seed + 1)
    a, b = (_layout(x, "transposed") if t else x for x, t in zip((a, b), transposed))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(thresholds, "MATMUL_MIN_WORK", 0)
        got = onednn.matmul.matmul(a, b)
    assert got is not NotImplemented or not onednn.matmul.serves(BF16)
    if got is not NotImplemented:
        want = _numpy(torch.matmul(_torch(a), _torch(b)), BF16)
        _assert_one_rounding(got, want, a.astype(np.float64) @ b.astype(np.float64))


def _linear_step(lib, x: np.ndarray, w: np.ndarray, b: np.ndarray, g: np.ndarray) -> list:
    """F.linear's output under bfloat16 autocast and the float32 gradients of its float32
    leaves given the output's gradient g, on torch or shrew."""
    tx, tw, tb = (lib.tensor(v, requires_grad=True) for v in (x, w, b))
    with lib.autocast("cpu", dtype=lib.bfloat16):
        y = lib.nn.functional.linear(tx, tw, tb)
    assert y.dtype == lib.bfloat16
    (y.float() * lib.tensor(g)).sum().backward()
    return [y.detach().float().numpy()] + [t.grad.numpy() for t in (tx, tw, tb)]


@pytest.mark.parametrize("m, k, n", [(256, 128, 96), (8, 4096, 64), (1, 512, 256),
                                     (300, 64, 1)])
def test_linear_and_its_gradients_under_autocast_match_torch(monkeypatch, m, k, n):
    rng = np.random.default_rng(k)
    # float32 values a bfloat16 holds exactly: autocast's casts change none of them
    x, w, b, g = (rng.standard_normal(s).astype(BF16).astype(np.float32)
                  for s in ((m, k), (n, k), (n,), (m, n)))
    served = _count(monkeypatch)
    got = _linear_step(shrew, x, w, b, g)
    work = m * n * k >= thresholds.MATMUL_MIN_WORK
    assert served == [work] * 3          # the forward with its bias, dx = g w, dw = g^T x
    with cpu.use_onednn(False):
        widened = _linear_step(shrew, x, w, b, g)
    want = _linear_step(torch, x, w, b, g)
    g16 = g.astype(np.float64)
    exact = [x.astype(np.float64) @ w.T.astype(np.float64) + b, g16 @ w, g16.T @ x,
             g16.sum(0)]
    for got_, widened_, want_, exact_ in zip(got, widened, want, exact):
        # (the gradients are float32 leaves' of 16-bit products: compare them as such)
        for other in (widened_, want_):
            _assert_one_rounding(got_.astype(BF16), other.astype(BF16), exact_)


@pytest.mark.parametrize("on", [True, False])
def test_the_bias_is_added_before_the_one_rounding(on):
    """linear's bias joins the float32 sums (PyTorch's addmm): y rounds once, where the
    product rounded and then added to the bias would round twice; on oneDNN and on the
    widened float32 path alike."""
    be = CPUBackend()
    rng = np.random.default_rng(7)
    x, w = _inputs((64, 256), BF16, 1), _inputs((128, 256), BF16, 2)
    b = (rng.standard_normal(128) * 64).astype(BF16)
    with cpu.use_onednn(on):
        got = be.linear(x, w, b)
    exact = x.astype(np.float64) @ w.T.astype(np.float64) + b.astype(np.float64)
    # the float32 sum differs from float64 by far less than a bfloat16 ulp: nearly every
    # element is the float64 value correctly rounded
    assert np.mean(got != exact.astype(np.float32).astype(BF16)) < 1e-3
    want = torch.nn.functional.linear(_torch(x), _torch(w), _torch(b))
    assert np.mean(_ulps(got, _numpy(want, BF16)) > 0) < 1e-2


@pytest.mark.parametrize("shape", [(256, 512, 128), (1, 4096, 64)])
def test_float16_products_match_torch(monkeypatch, shape):
    """float16 runs on oneDNN where the CPU has a float16 kernel (AVX512-FP16, AMX-FP16);
    elsewhere it declines, and the widened float32 GEMM gives the same bits as with
    oneDNN switched off."""
    m, k, n = shape
    a, b = _inputs((m, k), F16, 3), _layout(_inputs((k, n), F16, 4), "transposed")
    served = _count(monkeypatch)
    got = shrew.mm(shrew.tensor(a), shrew.tensor(b)).numpy()
    assert served == [onednn.matmul.serves(F16)]
    with cpu.use_onednn(False):
        widened = shrew.mm(shrew.tensor(a), shrew.tensor(b)).numpy()
    exact = a.astype(np.float64) @ b.astype(np.float64)
    _assert_one_rounding(got, _numpy(torch.mm(_torch(a), _torch(b)), F16), exact)
    if served[0]:
        _assert_one_rounding(got, widened, exact)
    else:
        assert np.array_equal(got, widened)


def test_what_declines():
    """Other dtypes, 1-d operands, empty dims, products below MATMUL_MIN_WORK, a bias of
    another dtype, the switch off: NotImplemented, and the caller's own path runs."""
    matmul = onednn.matmul.matmul
    a, b = _inputs((128, 64), BF16, 0), _inputs((64, 128), BF16, 1)
    assert matmul(a, b) is not NotImplemented
    # float32 below F32_MATMUL_MIN_WORK (128 * 64 * 128 is); float64 always
    assert matmul(a.astype(np.float32), b.astype(np.float32)) is NotImplemented
    assert matmul(a.astype(np.float64), b.astype(np.float64)) is NotImplemented
    assert matmul(a, b.astype(F16)) is NotImplemented
    assert matmul(a[0], b) is NotImplemented
    assert matmul(a[:0], b) is NotImplemented
    assert matmul(a[:4, :4], b[:4, :4]) is NotImplemented
    assert matmul(a, b, np.zeros(128, np.float32)) is NotImplemented
    assert matmul(a, b, np.zeros(64, BF16)) is NotImplemented
    assert not onednn.matmul.serves(np.dtype(np.float64))
    with cpu.use_onednn(False):
        assert matmul(a, b) is NotImplemented
        assert not onednn.matmul.serves(BF16)
    # (a CPU without oneDNN bfloat16 kernels declines the same way)
    if onednn.matmul.serves(BF16):
        assert matmul(a, b).dtype == BF16


def test_operands_it_cannot_address_are_copied_first():
    """Negative strides, elements apart, a broadcast (0-stride) batch dim and matrices
    that overlap are read from a contiguous copy; the attention heads interleaved in the
    rows of a [N, T, H*D] buffer are read in place; the values are numpy's float32 product,
    rounded once."""
    a, b = _inputs((96, 128), BF16, 5), _inputs((128, 80), BF16, 6)
    rows = _inputs((2, 64, 4 * 32), BF16, 7)
    heads = rows.reshape(2, 64, 4, 32).transpose(0, 2, 1, 3)
    overlapping = np.lib.stride_tricks.as_strided(a, (3, 64, 128), (a.strides[0] * 8,
                                                                   *a.strides))
    cases = [(a[::-1], b), (a, b[:, ::-1]), (np.broadcast_to(a, (3, 96, 128)), b),
             (overlapping, b), (heads, heads.swapaxes(-1, -2)), (heads, b[:32])]
    in_place = [onednn.matmul._addressable(x)[0] is x for x, _ in cases]
    assert in_place == [False, True, False, False, True, True]
    reversed_b = cases[1][1]
    assert onednn.matmul._addressable(reversed_b)[0] is not reversed_b
    for x, y in cases:
        got = onednn.matmul.matmul(x, y)
        assert got is not NotImplemented or not onednn.matmul.serves(BF16)
        if got is not NotImplemented:
            exact = x.astype(np.float64) @ y.astype(np.float64)
            widened = np.matmul(x.astype(np.float32), y.astype(np.float32)).astype(BF16)
            _assert_one_rounding(got, widened, exact)


def test_repeated_products_give_the_same_bits():
    a, b = _inputs((200, 700), BF16, 8), _inputs((700, 300), BF16, 9)
    first = onednn.matmul.matmul(a, b.T.copy().T)
    for _ in range(3):
        assert np.array_equal(first, onednn.matmul.matmul(a, b.T.copy().T))


# -- convolutions ----------------------------------------------------------------------------
CONVS = [((4, 16, 14, 14), (32, 16, 5, 5), 1, 2, 1, 1), ((8, 3, 20, 20), (16, 3, 3, 3), 1, 1, 1, 1),
         ((2, 32, 16, 16), (64, 32, 3, 3), 2, 1, 1, 1), ((2, 8, 15, 17), (12, 4, 3, 2), 1, 2, 2, 2),
         ((3, 6, 12, 12), (6, 1, 3, 3), 2, 1, 1, 6)]


def _conv_step(lib, x: np.ndarray, w: np.ndarray, g: np.ndarray, args: tuple) -> list:
    """conv2d's output under bfloat16 autocast and the float32 gradients of its float32
    leaves given the output's gradient g, on torch or shrew."""
    tx, tw = (lib.tensor(v, requires_grad=True) for v in (x, w))
    with lib.autocast("cpu", dtype=lib.bfloat16):
        y = lib.nn.functional.conv2d(tx, tw, None, *args)
    assert y.dtype == lib.bfloat16
    (y.float() * lib.tensor(g)).sum().backward()
    return [y.detach().float().numpy(), tx.grad.numpy(), tw.grad.numpy()]


@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation, groups", CONVS)
def test_bfloat16_convolutions_under_autocast_match_torch(monkeypatch, x_shape, w_shape,
                                                          stride, padding, dilation, groups):
    """oneDNN's bfloat16 convolution (as PyTorch's: float32 accumulation, one rounding) each
    way, against torch under autocast and against the path with oneDNN switched off."""
    rng = np.random.default_rng(x_shape[1])
    x, w = (rng.standard_normal(s).astype(BF16).astype(np.float32) for s in (x_shape, w_shape))
    args = (stride, padding, dilation, groups)
    y_shape = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), None, *args).shape
    g = rng.standard_normal(y_shape).astype(BF16).astype(np.float32)
    calls = []   # (name, the result's dtype, or None where it declined)
    for name in ("conv2d", "conv2d_backward_data", "conv2d_backward_weights"):
        real = getattr(onednn.conv, name)

        def counting(*a, real=real, name=name):
            out = real(*a)
            calls.append((name, None if out is NotImplemented else out.dtype))
            return out
        monkeypatch.setattr(onednn.conv, name, counting)
    got = _conv_step(shrew, x, w, g, args)
    if onednn.matmul.serves(BF16):
        assert [c for c in calls if c[0] == "conv2d"] == [("conv2d", BF16)]
        # (with MKL off, a shallow input's weight gradient takes the core's lowering:
        # backend.py's conv2d_backward)
        assert all(served == BF16 for _, served in calls)
    with cpu.use_onednn(False):
        widened = _conv_step(shrew, x, w, g, args)
    want = _conv_step(torch, x, w, g, args)
    x64, w64 = torch.tensor(x, dtype=torch.float64), torch.tensor(w, dtype=torch.float64)
    x64.requires_grad_(), w64.requires_grad_()
    y64 = torch.nn.functional.conv2d(x64, w64, None, *args)
    (y64 * torch.tensor(g, dtype=torch.float64)).sum().backward()
    assert x64.grad is not None and w64.grad is not None
    exact = [y64.detach().numpy(), x64.grad.numpy(), w64.grad.numpy()]
    for got_, widened_, want_, exact_ in zip(got, widened, want, exact):
        _assert_one_rounding(got_.astype(BF16), want_.astype(BF16), exact_)
        # Switched off, the core's lowering adds its im2col columns back in bfloat16
        # (col2im), and a grouped or dilated one is composed of plain ones: a few
        # roundings more, where oneDNN's and PyTorch's gradients round once.
        np.testing.assert_allclose(widened_, exact_, rtol=0,
                                   atol=TOLERANCE[BF16] * np.abs(exact_).max())


def test_float16_convolutions_stay_off_onednn():
    """oneDNN has no float16 convolution kernels on most CPUs: float16 declines before
    its cache sees the geometry."""
    before = onednn.cache_info()["entries"]
    x, w = _inputs((2, 8, 10, 10), F16, 1), _inputs((4, 8, 3, 3), F16, 2)
    assert onednn.conv2d(x, w) is NotImplemented
    assert onednn.cache_info()["entries"] == before


@pytest.mark.parametrize("special", [None, "inf", "subnormal", "nan", "zero", "negative zero"])
def test_rounding_float32_to_bfloat16_gives_torchs_bits(monkeypatch, special):
    """A large float32 array's cast to bfloat16 runs on oneDNN's reorder where the array
    holds no NaN and its smallest magnitude is a normal number (MKL's asum and iamin tell),
    else on numpy's (ml_dtypes') conversion, which rounds a subnormal where the reorder
    flushes it and keeps a NaN's payload: PyTorch's bits either way (to nearest, ties to
    even, overflowing to inf), but for a NaN's (PyTorch's vector code gives 0xffff,
    ml_dtypes 0x7fc0: NaN both)."""
    if cpu.mkl.load_error() is not None:
        pytest.skip("MKL is not loadable")
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(thresholds.MIN_ELEMENTWISE_SIZE + 5) * 1e3).astype(np.float32)
    # rounding up to inf; ties to even (down, then up); a large magnitude below the top
    x[:5] = [3.3961776e38, -3.4e38, 1.00390625, 1.01171875, 3.38e38]
    placed = {"inf": np.inf, "subnormal": 1e-40, "nan": np.nan, "zero": 0.0,
              "negative zero": -0.0}
    if special is not None:
        x[len(x) // 2] = placed[special]
    reorders = []
    real = onednn.elementwise.to_bfloat16
    monkeypatch.setattr(onednn.elementwise, "to_bfloat16",
                        lambda a: reorders.append(a.size) or real(a))
    with cpu.use_mkl(True):
        got = CPUBackend().cast(x, BF16)
    want = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy()
    nan = np.isnan(x)
    assert got.dtype == BF16 and np.array_equal(np.isnan(got.astype(np.float32)), nan)
    assert np.array_equal(got.view(np.int16)[~nan], want[~nan])
    assert reorders == ([x.size] if special in (None, "inf") else [])
    small = x[:100]   # below MIN_ELEMENTWISE_SIZE: numpy's conversion
    assert np.array_equal(CPUBackend().cast(small, BF16).view(np.int16), want[:100])
    assert len(reorders) == (1 if special in (None, "inf") else 0)


def test_autocast_casts_weights_on_the_reorder_with_torchs_values():
    """Under bfloat16 autocast a linear layer's weight and input reach the product through
    the fast cast: the step's loss and gradients are PyTorch's."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((256, 512)).astype(np.float32)
    w = (rng.standard_normal((256, 512)) * 0.05).astype(np.float32)
    losses, grads = [], []
    for lib in (shrew, torch):
        tw = lib.tensor(w, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            loss = lib.nn.functional.linear(lib.tensor(x), tw).float().square().mean()
        loss.backward()
        losses.append(loss.item())
        grads.append(tw.grad.float().numpy())
    assert losses[0] == pytest.approx(losses[1], rel=1e-3)
    np.testing.assert_allclose(grads[0], grads[1], rtol=2e-2, atol=2e-4)
