"""Automatic mixed precision against PyTorch (issue 32): autocast's result dtypes and
values for every op of the cpu lists, nesting, the decorator, the cast cache, gradient
dtypes, a small GPT trained under bf16 autocast, GradScaler step for step, and float32
accumulation of low-precision sums on every device."""
from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import shrew
import shrew.nn.functional as SF
from shrew.core import autocast as core_autocast
from shrew.core import op as core_op
from tests.support import device_or_fail, each_device

rng = np.random.default_rng(32)
X = rng.standard_normal((4, 4)).astype(np.float32)
V = rng.standard_normal(4).astype(np.float32)
IMG = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
W = (rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)
P = (1 / (1 + np.exp(-X))).astype(np.float32)
LABELS = np.array([0, 1, 2, 3])
SPD = (X @ X.T + 4 * np.eye(4)).astype(np.float32)

# name -> fn(lib, F, t) where t(array) makes a floating tensor of the case's dtype and
# lib.tensor(...) the integer ones: the same code runs on torch and on shrew.
CASES = {
    "matmul": lambda m, F, t: m.matmul(t(X), t(X)),
    "@": lambda m, F, t: t(X) @ t(X),
    "mm": lambda m, F, t: m.mm(t(X), t(X)),
    "bmm": lambda m, F, t: m.bmm(t(X[None]), t(X[None])),
    "baddbmm": lambda m, F, t: m.baddbmm(t(X[None]), t(X[None]), t(X[None])),
    "addmm": lambda m, F, t: m.addmm(t(X), t(X), t(X)),
    "addbmm": lambda m, F, t: m.addbmm(t(X), t(X[None]), t(X[None])),
    "linear": lambda m, F, t: F.linear(t(X), t(X), t(V)),
    "einsum": lambda m, F, t: m.einsum("ij,jk->ik", t(X), t(X)),
    "inner": lambda m, F, t: m.inner(t(X), t(X)),
    "multi_dot": lambda m, F, t: m.linalg.multi_dot([t(X), t(X), t(X)]),
    "chain_matmul": lambda m, F, t: m.linalg.multi_dot([t(X), t(P)]) if m is torch
    else m.chain_matmul(t(X), t(P)),
    "linalg_vecdot": lambda m, F, t: m.linalg.vecdot(t(X), t(X)),
    "conv1d": lambda m, F, t: F.conv1d(t(IMG[:, :, 0]), t(W[:, :, 0])),
    "conv2d": lambda m, F, t: F.conv2d(t(IMG), t(W), t(V), padding=1),
    "conv_transpose1d": lambda m, F, t: F.conv_transpose1d(t(IMG[:, :, 0]),
                                                           t(W[:, :, 0].transpose(1, 0, 2))),
    "conv_transpose2d": lambda m, F, t: F.conv_transpose2d(t(IMG), t(W.transpose(1, 0, 2, 3))),
    "scaled_dot_product_attention_mask": lambda m, F, t: F.scaled_dot_product_attention(
        t(X[None]), t(X[None]), t(X[None]), attn_mask=m.tensor(P[None] > 0.5)),
    "prelu": lambda m, F, t: F.prelu(t(X), t(np.array([0.2], np.float32))),
    "scaled_dot_product_attention": lambda m, F, t: F.scaled_dot_product_attention(
        t(X[None]), t(X[None]), t(X[None]), is_causal=True),
    # float32 on cpu
    "prod": lambda m, F, t: m.prod(t(X)),
    "cdist": lambda m, F, t: m.cdist(t(X), t(X)),
    "trace": lambda m, F, t: m.trace(t(X)),
    "inverse": lambda m, F, t: m.inverse(t(SPD)),
    "pinverse": lambda m, F, t: m.pinverse(t(SPD)),
    "cholesky": lambda m, F, t: m.linalg.cholesky(t(SPD)),
    "linalg_inv": lambda m, F, t: m.linalg.inv(t(SPD)),
    "linalg_solve": lambda m, F, t: m.linalg.solve(t(SPD), t(X)),
    "linalg_eigvalsh": lambda m, F, t: m.linalg.eigvalsh(t(SPD)),
    "linalg_svdvals": lambda m, F, t: m.linalg.svdvals(t(SPD)),
    "max_unpool2d": lambda m, F, t: F.max_unpool2d(*F.max_pool2d(t(IMG), 2,
                                                                return_indices=True), 2),
    "mse_loss": lambda m, F, t: F.mse_loss(t(X), t(P)),
    "l1_loss": lambda m, F, t: F.l1_loss(t(X), t(P)),
    "smooth_l1_loss": lambda m, F, t: F.smooth_l1_loss(t(X), t(P)),
    "huber_loss": lambda m, F, t: F.huber_loss(t(X), t(P)),
    "cross_entropy": lambda m, F, t: F.cross_entropy(t(X), m.tensor(LABELS)),
    "nll_loss": lambda m, F, t: F.nll_loss(t(X), m.tensor(LABELS)),
    "binary_cross_entropy": lambda m, F, t: F.binary_cross_entropy(t(P), t(P[::-1].copy())),
    "binary_cross_entropy_with_logits": lambda m, F, t: F.binary_cross_entropy_with_logits(
        t(X), t(P)),
    "kl_div": lambda m, F, t: F.kl_div(t(X), t(P), reduction="batchmean"),
    "soft_margin_loss": lambda m, F, t: F.soft_margin_loss(t(X), t(np.sign(X))),
    "poisson_nll_loss": lambda m, F, t: F.poisson_nll_loss(t(X), t(P)),
    "multi_margin_loss": lambda m, F, t: F.multi_margin_loss(t(X), m.tensor(LABELS)),
    "margin_ranking_loss": lambda m, F, t: F.margin_ranking_loss(t(X[0]), t(X[1]),
                                                                 t(np.sign(X[2]))),
    "hinge_embedding_loss": lambda m, F, t: F.hinge_embedding_loss(t(X), t(np.sign(X))),
    "cosine_embedding_loss": lambda m, F, t: F.cosine_embedding_loss(
        t(X), t(P), t(np.ones(4, np.float32))),
    "triplet_margin_loss": lambda m, F, t: F.triplet_margin_loss(t(X), t(P), t(X[::-1].copy())),
    "reflect_pad": lambda m, F, t: F.pad(t(IMG), (1, 1, 1, 1), mode="reflect"),
    "replicate_pad": lambda m, F, t: F.pad(t(IMG), (1, 1, 1, 1), mode="replicate"),
    # promoted to the widest input
    "cat": lambda m, F, t: m.cat([t(X), m.tensor(X).to(m.float32)]),
    "stack": lambda m, F, t: m.stack([t(X), m.tensor(X).to(m.float32)]),
    "index_copy": lambda m, F, t: m.index_copy(t(X), 0, m.tensor([0]),
                                               m.tensor(X[:1]).to(m.float32)),
    # in no list: they keep their inputs' dtypes (PyTorch's cpu lists leave these out)
    "mv": lambda m, F, t: m.mv(t(X), t(V)),
    "dot": lambda m, F, t: m.dot(t(V), t(V)),
    "addmv": lambda m, F, t: m.addmv(t(V), t(X), t(V)),
    "addr": lambda m, F, t: m.addr(t(X), t(V), t(V)),
    "outer": lambda m, F, t: m.outer(t(V), t(V)),
    "tensordot": lambda m, F, t: m.tensordot(t(X), t(X)),
    "kron": lambda m, F, t: m.kron(t(X), t(X)),
    "cross": lambda m, F, t: m.linalg.cross(t(X[:, :3]), t(P[:, :3])),
    "matrix_power": lambda m, F, t: m.matrix_power(t(X), 3),
    "softmax": lambda m, F, t: F.softmax(t(X), -1),
    "log_softmax": lambda m, F, t: F.log_softmax(t(X), -1),
    "layer_norm": lambda m, F, t: F.layer_norm(t(X), (4,)),
    "group_norm": lambda m, F, t: F.group_norm(t(IMG), 3),
    "exp": lambda m, F, t: m.exp(t(X)),
    "log": lambda m, F, t: m.log(t(np.abs(X) + 0.5)),
    "pow": lambda m, F, t: m.pow(t(X), 2),
    "sum": lambda m, F, t: t(X).sum(),
    "cumsum": lambda m, F, t: t(X).cumsum(0),
    "norm": lambda m, F, t: t(X).norm(),
    "logsumexp": lambda m, F, t: m.logsumexp(t(X), 0),
    "gelu": lambda m, F, t: F.gelu(t(X)),
    "softplus": lambda m, F, t: F.softplus(t(X)),
    "cosine_similarity": lambda m, F, t: F.cosine_similarity(t(X), t(P)),
    "avg_pool2d": lambda m, F, t: F.avg_pool2d(t(IMG), 2),
    "addcmul": lambda m, F, t: m.addcmul(t(X), t(X), m.tensor(X).to(m.float32)),
    "add": lambda m, F, t: t(X) + m.tensor(X).to(m.float32),
    "matmul_float64": lambda m, F, t: m.matmul(m.tensor(X).double(), m.tensor(X).double()),
}
# PyTorch composes these of listed ops; shrew lists them: the dtypes agree.
_LOW = {"float16": (torch.float16, shrew.float16, 2e-3), "bfloat16": (torch.bfloat16,
                                                                      shrew.bfloat16, 2e-2)}
_INPUTS = {"float32": (torch.float32, shrew.float32), "low": None}


def _run(lib: str, case: str, autocast_dtype: str, input_dtype: str):
    torch_low, shrew_low, _ = _LOW[autocast_dtype]
    if lib == "torch":
        m, F, low = torch, TF, torch_low
        given = torch.float32 if input_dtype == "float32" else low

        def t(a):
            return torch.tensor(np.ascontiguousarray(a)).to(given)
    else:
        m, F, low = shrew, SF, shrew_low
        given = shrew.float32 if input_dtype == "float32" else low

        def t(a):
            return shrew.tensor(np.ascontiguousarray(a)).to(given)
    with m.autocast("cpu", dtype=low):
        out = CASES[case](m, F, t)
    return out


def _values(out) -> np.ndarray:
    if isinstance(out, torch.Tensor):
        return out.detach().float().double().numpy()
    return out.detach().to(shrew.float64).numpy()


def _dtype_name(out) -> str:
    return str(out.dtype).split(".")[-1]


@pytest.mark.parametrize("autocast_dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("input_dtype", ["float32", "low"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_autocast_dtypes_and_values_match_pytorch(case, input_dtype, autocast_dtype):
    expected = _run("torch", case, autocast_dtype, input_dtype)
    got = _run("shrew", case, autocast_dtype, input_dtype)
    if isinstance(expected, tuple):
        expected, got = expected[0], got[0]
    assert _dtype_name(got) == _dtype_name(expected), case
    tol = _LOW[autocast_dtype][2] * 2 if (input_dtype == "low" or "16" in _dtype_name(expected)) \
        else 1e-4
    e, g = _values(expected), _values(got)
    scale = max(1.0, float(np.abs(e).max()))
    np.testing.assert_allclose(g, e, rtol=tol, atol=tol * scale, err_msg=case)


def test_every_cast_of_the_cpu_lists_is_checked_above():
    """Each op the cpu table casts to the low dtype or promotes has a case, except the
    3-d convolutions, which shrew does not have."""
    table = core_autocast.POLICIES["cpu"]
    casting = {n for n, p in table.items() if p in (core_autocast.LOWER, core_autocast.PROMOTE)}
    assert casting - set(CASES) == {"conv3d", "conv_transpose3d"}


def test_nesting_disabled_regions_and_the_decorator():
    x = shrew.randn(3, 3)
    assert not shrew.is_autocast_enabled("cpu")
    with shrew.autocast("cpu"):
        assert shrew.is_autocast_enabled("cpu") and shrew.is_autocast_cpu_enabled()
        assert (x @ x).dtype == shrew.bfloat16
        with shrew.autocast("cpu", enabled=False):
            assert not shrew.is_autocast_enabled("cpu")
            assert (x @ x).dtype == shrew.float32
            with shrew.autocast("cpu", dtype=shrew.float16):
                assert (x @ x).dtype == shrew.float16
                assert shrew.get_autocast_dtype("cpu") == shrew.float16
            assert (x @ x).dtype == shrew.float32
        assert (x @ x).dtype == shrew.bfloat16
        assert shrew.get_autocast_dtype("cpu") == shrew.bfloat16
    assert (x @ x).dtype == shrew.float32 and not shrew.is_autocast_enabled("cpu")

    @shrew.autocast("cpu")
    def product(a):
        return a @ a
    assert product(x).dtype == shrew.bfloat16 and (x @ x).dtype == shrew.float32

    @shrew.amp.autocast(device_type="cpu", dtype=shrew.float16)
    def product16(a):
        return a @ a
    assert product16(x).dtype == shrew.float16
    # a region for another device type leaves cpu tensors alone, as PyTorch's
    with shrew.autocast("cuda"):
        assert (x @ x).dtype == shrew.float32
    assert shrew.get_autocast_dtype("cuda") == torch_dtype_name(torch.get_autocast_dtype("cuda"))
    assert shrew.get_autocast_cpu_dtype() == shrew.bfloat16
    assert shrew.get_autocast_gpu_dtype() == shrew.float16
    assert not shrew.is_autocast_enabled()  # cuda's, as torch.is_autocast_enabled()


def torch_dtype_name(dtype):
    return getattr(shrew, str(dtype).split(".")[-1])


def test_torch_state_functions_and_older_spellings():
    shrew.set_autocast_enabled("cpu", True)
    try:
        assert shrew.is_autocast_enabled("cpu")
        assert (shrew.ones(2, 2) @ shrew.ones(2, 2)).dtype == shrew.bfloat16
    finally:
        shrew.set_autocast_enabled("cpu", False)
    assert (shrew.ones(2, 2) @ shrew.ones(2, 2)).dtype == shrew.float32
    with pytest.warns(FutureWarning, match="torch.amp.autocast"):
        region = shrew.cpu.amp.autocast()
    with region:
        assert (shrew.ones(2, 2) @ shrew.ones(2, 2)).dtype == shrew.bfloat16
    assert importlib.import_module("shrew.cuda.amp") is shrew.cuda.amp  # as torch.cuda.amp
    with pytest.warns(FutureWarning):
        assert shrew.cuda.amp.autocast().fast_dtype == shrew.float16
    with pytest.warns(UserWarning, match="not supported"):
        with shrew.autocast("cpu", dtype=shrew.float64):
            assert not shrew.is_autocast_enabled("cpu")
    with pytest.raises(ValueError, match="device_type"):
        shrew.autocast(3)
    with pytest.raises(RuntimeError, match="device type"):
        shrew.autocast("nowhere")


def test_an_explicit_dtype_is_not_autocast():
    x = shrew.randn(3, 3)
    with shrew.autocast("cpu", dtype=shrew.float16):
        assert shrew.cumsum(x.half(), 0, dtype=shrew.float64).dtype == shrew.float64
        assert shrew.matmul(x, x).dtype == shrew.float16
        assert shrew.prod(x.half(), 0, dtype=shrew.float16).dtype == shrew.float16


def test_the_cast_cache_keeps_one_cast_of_a_weight_per_region():
    w = shrew.randn(4, 4, requires_grad=True)
    x = shrew.randn(2, 4)

    def weight_cast(y):  # the bfloat16 tensor the product read for w
        stack = [y]
        while stack:
            t = stack.pop()
            if isinstance(t.op, core_op.ToDtype) and t.op.inputs()[0] is w:
                return t
            stack.extend(i for i in t.op.inputs() if i.op is not None)
        raise AssertionError("no cast of w")
    with shrew.autocast("cpu"):
        a, b = SF.linear(x, w), x @ w
        assert weight_cast(a) is weight_cast(b) and weight_cast(a).dtype == shrew.bfloat16
        h = x * 1.0  # an activation (no leaf) is cast at each use
        assert (h @ w).op.inputs()[0] is not (h @ w).op.inputs()[0]
    with shrew.autocast("cpu"):
        c = SF.linear(x, w)
    assert weight_cast(c) is not weight_cast(a)  # leaving the outermost region cleared it
    with shrew.autocast("cpu", cache_enabled=False):
        assert weight_cast(x @ w) is not weight_cast(x @ w)
    assert not core_autocast._state.cache


def test_gradients_come_back_in_each_tensors_own_dtype():
    np_w = rng.standard_normal((4, 4)).astype(np.float32)
    np_x = rng.standard_normal((3, 4)).astype(np.float32)
    results = {}
    for lib, m, F in (("torch", torch, TF), ("shrew", shrew, SF)):
        w = m.tensor(np_w, requires_grad=True)
        x16 = m.tensor(np_x).to(m.bfloat16).requires_grad_()
        b = m.tensor(np_w[0], requires_grad=True)
        with m.autocast("cpu"):
            h = F.linear(x16, w, b)
            y = F.layer_norm(h, (4,))
            loss = F.mse_loss(y, m.zeros(3, 4))
            loss.backward()
        results[lib] = {n: (_dtype_name(t.grad), _values(t.grad)) for n, t in
                        (("w", w), ("x", x16), ("b", b))}
        results[lib]["dtypes"] = [_dtype_name(t) for t in (h, y, loss)]
    assert results["shrew"]["dtypes"] == results["torch"]["dtypes"]
    for n in "wxb":
        assert results["shrew"][n][0] == results["torch"][n][0], n
        np.testing.assert_allclose(results["shrew"][n][1], results["torch"][n][1], rtol=5e-2,
                                   atol=5e-2)
    assert results["shrew"]["w"][0] == "float32" and results["shrew"]["x"][0] == "bfloat16"


def test_checkpoint_recomputes_in_the_forwards_dtypes():
    lin = shrew.nn.Linear(4, 4)
    x = shrew.randn(2, 4)
    with shrew.autocast("cpu"):
        y = shrew.utils.checkpoint.checkpoint(lin, x, use_reentrant=False)
        assert y.dtype == shrew.bfloat16
    y.float().sum().backward()
    assert lin.weight.grad.dtype == shrew.float32
    ref = shrew.nn.Linear(4, 4)
    ref.load_state_dict(lin.state_dict())
    with shrew.autocast("cpu"):
        ref(x).float().sum().backward()
    np.testing.assert_array_equal(lin.weight.grad.numpy(), ref.weight.grad.numpy())


def test_custom_fwd_and_custom_bwd():
    seen = {}

    class Square(shrew.autograd.Function):
        @staticmethod
        @shrew.amp.custom_fwd(device_type="cpu", cast_inputs=shrew.float32)
        def forward(ctx, a, b):
            seen["forward"] = (a.dtype, (a @ b).dtype)
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        @shrew.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            seen["backward"] = shrew.is_autocast_enabled("cpu")
            return g @ b.T, a.T @ g

    a = shrew.randn(3, 3, dtype=shrew.bfloat16, requires_grad=True)
    b = shrew.randn(3, 3, requires_grad=True)
    with shrew.autocast("cpu"):
        out = Square.apply(a, b)
    assert seen["forward"] == (shrew.float32, shrew.float32) and out.dtype == shrew.float32
    out.sum().backward()
    assert seen["backward"] is False  # the forward ran with autocast off (cast_inputs)
    assert a.grad.dtype == shrew.bfloat16 and b.grad.dtype == shrew.float32


@pytest.mark.parametrize("device", ["cpu", *each_device("opencl")])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_sums_accumulate_in_float32(device, dtype):
    device = device_or_fail(device)
    low = getattr(shrew, dtype)
    if low.np not in shrew.zeros(1, device=device)._backend.dtypes:
        pytest.skip(f"{device} has no {dtype}")
    x = shrew.full((1000,), 0.1, dtype=low, device=device)
    step = float(np.asarray(0.1, dtype=ml_dtypes.bfloat16 if dtype == "bfloat16"
                            else np.float16).astype(np.float64))
    for total in (x.sum(), x.cumsum(0)[-1], x.mean() * 1000):
        assert total.dtype == low
        assert abs(float(total.item()) - 1000 * step) <= 1000 * step * 2 ** -7


# -- a small GPT trained under autocast ---------------------------------------------------
VOCAB, DIM, HEADS, LAYERS, SEQ, BATCH = 32, 64, 4, 2, 32, 4


def _gpt(m):
    nn, F = m.nn, m.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
            self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
            self.fc, self.out = nn.Linear(DIM, 4 * DIM), nn.Linear(4 * DIM, DIM)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, HEADS, C // HEADS).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, DIM), nn.Embedding(SEQ, DIM)
            self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f, self.head = nn.LayerNorm(DIM), nn.Linear(DIM, VOCAB, bias=False)

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(m.arange(idx.shape[1]))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))
    return GPT()


def _batches(steps):
    data_rng = np.random.default_rng(0)
    # sequences that count up by a random stride: learnable, so the loss falls far
    for _ in range(steps):
        start = data_rng.integers(0, VOCAB, (BATCH, 1))
        stride = data_rng.integers(1, 4, (BATCH, 1))
        seq = (start + stride * np.arange(SEQ + 1)) % VOCAB
        yield seq[:, :-1], seq[:, 1:]


def _train(lib, amp, weights, steps=200):
    m = torch if lib == "torch" else shrew
    m.manual_seed(0)
    model = _gpt(m)
    model.load_state_dict({k: m.tensor(v) for k, v in weights.items()})
    opt = m.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    losses = []
    for x, y in _batches(steps):
        with m.autocast("cpu", dtype=m.bfloat16, enabled=amp):
            loss = model(m.tensor(x), m.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return float(np.mean(losses[-20:])), losses[0]


@pytest.fixture
def one_thread():
    """Small products on 2 shared cores: threads only contend (torch's step took 10x)."""
    before = torch.get_num_threads(), shrew.get_num_threads()
    torch.set_num_threads(1)
    shrew.set_num_threads(1)
    yield
    torch.set_num_threads(before[0])
    shrew.set_num_threads(before[1])


@pytest.mark.timeout(300)
def test_a_small_gpt_trains_under_bf16_autocast_as_in_float32_and_as_pytorch(one_thread):
    torch.manual_seed(0)
    weights = {k: v.detach().numpy().copy() for k, v in _gpt(torch).state_dict().items()}
    amp_loss, first = _train("shrew", True, weights)
    fp32_loss, _ = _train("shrew", False, weights)
    torch_loss, torch_first = _train("torch", True, weights)
    assert first == pytest.approx(torch_first, rel=2e-2)
    assert amp_loss < 0.5 * first  # it learned
    assert amp_loss == pytest.approx(fp32_loss, rel=2e-2)
    assert amp_loss == pytest.approx(torch_loss, rel=2e-2)


# -- GradScaler -----------------------------------------------------------------------------
def _scaled_run(lib, overflow_at, steps=8, clip=None, init_scale=2.0 ** 10):
    m = torch if lib == "torch" else shrew
    w_rng = np.random.default_rng(5)
    first = m.nn.Linear(6, 8)
    second = m.nn.Linear(8, 1)
    with m.no_grad():
        for p in (*first.parameters(), *second.parameters()):
            p.copy_(m.tensor(w_rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    params = [*first.parameters(), *second.parameters()]
    opt = m.optim.SGD(params, lr=0.05)
    scaler = m.amp.GradScaler("cpu", init_scale=init_scale, growth_interval=3)
    x = m.tensor(w_rng.standard_normal((16, 6)).astype(np.float32))
    y = m.tensor(w_rng.standard_normal((16, 1)).astype(np.float32))
    scales, skipped = [], []
    for step in range(steps):
        before = [p.detach().clone() for p in params]
        with m.autocast("cpu", dtype=m.float16):
            loss = m.nn.functional.mse_loss(second(m.relu(first(x))), y)
        opt.zero_grad()
        scaler.scale(loss).backward()
        if step in overflow_at:
            with m.no_grad():
                first.weight.grad[0, 0] = float("inf") if step % 2 else float("nan")
        if clip is not None:
            scaler.unscale_(opt)
            m.nn.utils.clip_grad_norm_(params, clip)
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        skipped.append(all(bool((p == q).all()) for p, q in zip(params, before)))
    values = [p.detach().double().numpy() if lib == "torch" else p.detach().numpy()
              for p in params]
    return scales, skipped, values, scaler.state_dict()


@pytest.mark.parametrize("clip", [None, 0.5])
def test_gradscaler_skips_the_overflowing_steps_and_scales_as_pytorch(clip):
    got = _scaled_run("shrew", overflow_at={3, 6}, clip=clip)
    expected = _scaled_run("torch", overflow_at={3, 6}, clip=clip)
    assert got[0] == expected[0]  # the same scales after each update
    assert got[1] == expected[1] == [i in (3, 6) for i in range(8)]
    for g, e in zip(got[2], expected[2]):
        np.testing.assert_allclose(g, e, rtol=2e-3, atol=2e-3)
    assert got[3] == expected[3]


def test_gradscaler_growth_stops_where_the_scale_would_overflow():
    got = _scaled_run("shrew", overflow_at=set(), init_scale=2.0 ** 127, steps=4)
    expected = _scaled_run("torch", overflow_at=set(), init_scale=2.0 ** 127, steps=4)
    assert got[0] == expected[0] and got[1] == expected[1]


def test_gradscaler_state_dict_per_optimizer_state_and_misuse():
    scaler = shrew.amp.GradScaler("cpu", init_scale=8.0, growth_interval=5)
    assert scaler.is_enabled() and scaler.get_scale() == 8.0
    a, b = shrew.nn.Linear(2, 1), shrew.nn.Linear(2, 1)
    opt_a = shrew.optim.SGD(a.parameters(), lr=0.1)
    opt_b = shrew.optim.SGD(b.parameters(), lr=0.1)
    loss = a(shrew.ones(1, 2)).sum() + b(shrew.ones(1, 2)).sum()
    scaler.scale(loss).backward()
    with shrew.no_grad():
        b.weight.grad.fill_(float("inf"))
    scaler.unscale_(opt_a)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt_a)
    wa, wb = a.weight.detach().clone(), b.weight.detach().clone()
    scaler.step(opt_a)
    scaler.step(opt_b)  # b overflowed: only b's step is skipped
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.step(opt_a)
    assert not bool((a.weight == wa).all()) and bool((b.weight == wb).all())
    scaler.update()
    assert scaler.get_scale() == 4.0
    state = scaler.state_dict()
    assert state == {"scale": 4.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                     "growth_interval": 5, "_growth_tracker": 0}
    fresh = shrew.amp.GradScaler("cpu")
    fresh.load_state_dict(state)
    assert fresh.get_scale() == 4.0 and fresh.state_dict() == state
    with pytest.raises(RuntimeError, match="empty"):
        fresh.load_state_dict({})
    scaler.update(16.0)
    assert scaler.get_scale() == 16.0
    with pytest.raises(ValueError, match="FP16"):
        half = shrew.nn.Linear(2, 1).half()
        opt_h = shrew.optim.SGD(half.parameters(), lr=0.1)
        scaler.scale(half(shrew.ones(1, 2, dtype=shrew.float16)).sum()).backward()
        scaler.unscale_(opt_h)
    off = shrew.amp.GradScaler("cpu", enabled=False)
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.warns(FutureWarning):
        assert shrew.cpu.amp.GradScaler().is_enabled()


@pytest.mark.parametrize("device", each_device("opencl"))
def test_opencl_regions_follow_pytorchs_cuda_lists(device):
    device = device_or_fail(device)
    dtypes = shrew.zeros(1, device=device)._backend.dtypes
    low = shrew.float16 if shrew.float16.np in dtypes else shrew.bfloat16
    x = shrew.randn(4, 4, device=device)
    w = shrew.randn(4, 4, device=device, requires_grad=True)
    with shrew.autocast("opencl", dtype=low):
        h = SF.linear(x, w)
        assert h.dtype == low and (x @ x).dtype == low
        # the CUDA lists keep these in float32, where the cpu ones leave them alone
        assert SF.softmax(h, -1).dtype == shrew.float32
        assert h.exp().dtype == shrew.float32 and shrew.log(h.abs()).dtype == shrew.float32
        assert SF.layer_norm(h, (4,)).dtype == shrew.float32 and h.sum().dtype == shrew.float32
        assert (h * 2).dtype == low  # not listed: runs as given
        with shrew.autocast("cpu"):  # another device type's region changes nothing here
            assert (x @ x).dtype == low
    loss = SF.softmax(h, -1).sum()
    loss.backward()
    assert w.grad.dtype == shrew.float32 and w.grad.device == x.device
    with shrew.autocast("cpu"):
        assert (x @ x).dtype == shrew.float32  # a cpu region leaves opencl tensors alone


def test_gradscaler_on_opencl():
    device = device_or_fail(each_device("opencl")[0])
    lin = shrew.nn.Linear(3, 1).to(device)
    opt = shrew.optim.SGD(lin.parameters(), lr=0.1)
    scaler = shrew.amp.GradScaler("opencl", init_scale=4.0, growth_interval=1)
    before = lin.weight.detach().cpu().numpy().copy()
    scaler.scale(lin(shrew.ones(2, 3, device=device)).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 8.0
    assert not np.array_equal(before, lin.weight.detach().cpu().numpy())
    with shrew.no_grad():
        lin.weight.fill_(1.0)
    scaler.scale(lin(shrew.ones(2, 3, device=device)).sum() * float("inf")).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 4.0
    assert np.all(lin.weight.detach().cpu().numpy() == 1.0)  # the step was skipped
