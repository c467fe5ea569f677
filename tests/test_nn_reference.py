"""Agreement with PyTorch: shrew.nn.functional and shrew.nn modules (weights copied across)
give the same values and gradients, in float64, on every device."""
from __future__ import annotations

import numpy as np
import pytest

import shrew
from shrew import nn
from shrew.nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DEVICES = ["cpu"] + (["opencl"] if "opencl" in " ".join(shrew.devices()) else [])
device_param = pytest.mark.parametrize("device", DEVICES)


def make(shape, device="cpu", seed=0):
    """A float64 shrew leaf and the torch leaf holding the same values."""
    data = np.random.default_rng(seed).standard_normal(shape)
    return (shrew.tensor(data, device=device, requires_grad=True),
            torch.tensor(data, requires_grad=True))


def check(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def check_backward(out, ref, pairs, tol=1e-10):
    """Forward values agree, and so do the gradients of sum(out * w) for a random w."""
    check(out, ref, tol)
    w = np.random.default_rng(99).standard_normal(out.shape)
    grads = (out * shrew.tensor(w, device=out.device)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for ours, theirs in pairs:
        check(grads[ours], theirs.grad, tol)


# -- agreement with PyTorch (values and gradients) -------------------------------------------
@device_param
def test_linear_matches_torch(device):
    (x, tx), (w, tw), (b, tb) = (make((2, 3, 5), device), make((4, 5), device, 1),
                                 make((4,), device, 2))
    check_backward(F.linear(x, w, b), TF.linear(tx, tw, tb), [(x, tx), (w, tw), (b, tb)])
    check(F.linear(x, w), TF.linear(tx, tw))


@device_param
@pytest.mark.parametrize("stride,padding", [(1, 0), (2, 1)])
def test_conv_matches_torch(device, stride, padding):
    (x, tx), (w, tw), (b, tb) = (make((2, 3, 7, 6), device), make((4, 3, 3, 2), device, 1),
                                 make((4,), device, 2))
    check_backward(F.conv2d(x, w, b, stride, padding),
                   TF.conv2d(tx, tw, tb, stride, padding), [(x, tx), (w, tw), (b, tb)])
    (x, tx), (w, tw), (b, tb) = (make((2, 3, 9), device, 3), make((5, 3, 3), device, 4),
                                 make((5,), device, 5))
    check_backward(F.conv1d(x, w, b, stride, padding), TF.conv1d(tx, tw, tb, stride, padding),
                   [(x, tx), (w, tw), (b, tb)])


@device_param
def test_pooling_matches_torch(device):
    x, tx = make((2, 3, 7, 7), device)
    check_backward(F.max_pool2d(x, 3, 2, 1), TF.max_pool2d(tx, 3, 2, 1), [(x, tx)])
    tx.grad = None
    check_backward(F.avg_pool2d(x, (2, 3), 2, 1), TF.avg_pool2d(tx, (2, 3), 2, 1), [(x, tx)])


@device_param
@pytest.mark.parametrize("fn", ["relu", "sigmoid", "tanh", "gelu", "gelu_tanh"])
def test_activations_match_torch(device, fn):
    x, tx = make((4, 5), device)
    if fn == "gelu_tanh":
        out, ref = F.gelu(x, approximate="tanh"), TF.gelu(tx, approximate="tanh")
    else:
        out, ref = getattr(F, fn)(x), getattr(TF, fn)(tx)
    check_backward(out, ref, [(x, tx)])


@device_param
@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_and_log_softmax_match_torch(device, dim):
    x, tx = make((3, 4, 5), device)
    check_backward(F.softmax(x, dim), TF.softmax(tx, dim), [(x, tx)])
    tx.grad = None
    check_backward(F.log_softmax(x, dim), TF.log_softmax(tx, dim), [(x, tx)])


@device_param
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(6, 5), (3, 5, 4), (5,)])
def test_cross_entropy_and_nll_match_torch(device, reduction, shape):
    x, tx = make(shape, device)
    classes = shape[1] if len(shape) > 1 else shape[0]
    tshape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    target = np.random.default_rng(5).integers(0, classes, size=tshape)
    y, ty = shrew.tensor(target, device=device), torch.tensor(target)
    check_backward(F.cross_entropy(x, y, reduction), TF.cross_entropy(tx, ty, reduction=reduction),
                   [(x, tx)])
    dim = 1 if len(shape) > 1 else 0
    logp, tlogp = F.log_softmax(x, dim), TF.log_softmax(tx, dim)
    check(F.nll_loss(logp, y, reduction), TF.nll_loss(tlogp, ty, reduction=reduction))


@device_param
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_and_bce_match_torch(device, reduction):
    (a, ta), (b, tb) = make((4, 3), device), make((4, 3), device, 1)
    check_backward(F.mse_loss(a, b, reduction), TF.mse_loss(ta, tb, reduction=reduction),
                   [(a, ta), (b, tb)])
    p_np = np.random.default_rng(2).uniform(0.05, 0.95, size=(4, 3))
    y_np = np.random.default_rng(3).uniform(size=(4, 3))
    p = shrew.tensor(p_np, device=device, requires_grad=True)
    tp = torch.tensor(p_np, requires_grad=True)
    y, ty = shrew.tensor(y_np, device=device), torch.tensor(y_np)
    check_backward(F.binary_cross_entropy(p, y, reduction),
                   TF.binary_cross_entropy(tp, ty, reduction=reduction), [(p, tp)])


def test_bce_clamps_the_log_at_minus_100_like_torch():
    p_np, y_np = np.array([0.0, 1.0, 0.0, 1.0, 1e-50]), np.array([1.0, 0.0, 0.0, 1.0, 1.0])
    p = shrew.tensor(p_np, requires_grad=True)
    out = F.binary_cross_entropy(p, shrew.tensor(y_np), "none")
    check(out, TF.binary_cross_entropy(torch.tensor(p_np), torch.tensor(y_np), reduction="none"))
    grad = out.sum().backward()[p].numpy()
    assert np.isfinite(grad).all()


@device_param
def test_layer_norm_matches_torch(device):
    (x, tx), (w, tw), (b, tb) = (make((2, 3, 4, 5), device), make((4, 5), device, 1),
                                 make((4, 5), device, 2))
    check_backward(F.layer_norm(x, (4, 5), w, b), TF.layer_norm(tx, (4, 5), tw, tb),
                   [(x, tx), (w, tw), (b, tb)])
    check(F.layer_norm(x, 5, eps=1e-3), TF.layer_norm(tx, (5,), eps=1e-3))


@device_param
@pytest.mark.parametrize("shape", [(4, 3, 5, 2), (6, 3)])
def test_batch_norm_matches_torch_and_updates_running_stats(device, shape):
    (x, tx), (w, tw), (b, tb) = make(shape, device), make((3,), device, 1), make((3,), device, 2)
    mean_np, var_np = np.linspace(-1, 1, 3), np.linspace(0.5, 2, 3)
    rm, rv = shrew.tensor(mean_np, device=device), shrew.tensor(var_np, device=device)
    trm, trv = torch.tensor(mean_np), torch.tensor(var_np)
    check_backward(F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3),
                   TF.batch_norm(tx, trm, trv, tw, tb, training=True, momentum=0.3),
                   [(x, tx), (w, tw), (b, tb)])
    check(rm, trm)
    check(rv, trv)
    check(F.batch_norm(x, rm, rv, w, b), TF.batch_norm(tx, trm, trv, tw, tb))


@device_param
def test_embedding_matches_torch_and_scatters_its_gradient(device):
    w, tw = make((7, 4), device)
    idx_np = np.array([[0, 3, 3], [6, 0, 3]])
    check_backward(F.embedding(shrew.tensor(idx_np, device=device), w),
                   TF.embedding(torch.tensor(idx_np), tw), [(w, tw)])


@device_param
@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_matches_torch(device, causal):
    (q, tq), (k, tk), (v, tv) = (make((2, 3, 5, 4), device), make((2, 3, 5, 4), device, 1),
                                 make((2, 3, 5, 6), device, 2))
    check_backward(F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                   TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal),
                   [(q, tq), (k, tk), (v, tv)])


# -- agreement with torch.nn -------------------------------------------------------------------

def copy_weights(ours: nn.Module, theirs) -> None:
    """Load a torch module's weights into ours (the names are the same)."""
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)


class TorchBlock(torch.nn.Module):
    """The pre-LayerNorm block TransformerBlock documents, from torch.nn parts."""

    def __init__(self, dim, heads):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.attn = torch.nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim),
                                       torch.nn.GELU(approximate="tanh"),
                                       torch.nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.ln1(x)
        mask = torch.nn.Transformer.generate_square_subsequent_mask(x.shape[1], dtype=x.dtype)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TorchMHA(torch.nn.MultiheadAttention):
    def forward(self, x):
        return super().forward(x, x, x, need_weights=False)[0]


class ShrewMHA(nn.MultiheadAttention):
    def forward(self, x):
        return super().forward(x, x, x, need_weights=False)[0]


CASES = {
    "linear": (lambda: nn.Linear(5, 4), lambda: torch.nn.Linear(5, 4), (3, 5)),
    "conv1d": (lambda: nn.Conv1d(3, 4, 3, 2, 1), lambda: torch.nn.Conv1d(3, 4, 3, 2, 1), (2, 3, 7)),
    "conv2d": (lambda: nn.Conv2d(3, 4, (3, 2), 2, 1), lambda: torch.nn.Conv2d(3, 4, (3, 2), 2, 1),
               (2, 3, 6, 5)),
    "maxpool": (lambda: nn.MaxPool2d(2), lambda: torch.nn.MaxPool2d(2), (2, 3, 6, 4)),
    "avgpool": (lambda: nn.AvgPool2d(3, 2, 1), lambda: torch.nn.AvgPool2d(3, 2, 1), (2, 3, 6, 5)),
    "layernorm": (lambda: nn.LayerNorm((3, 4)), lambda: torch.nn.LayerNorm((3, 4)), (2, 3, 4)),
    "batchnorm": (lambda: nn.BatchNorm2d(3), lambda: torch.nn.BatchNorm2d(3), (4, 3, 2, 2)),
    "gelu": (lambda: nn.GELU(), lambda: torch.nn.GELU(), (3, 4)),
    "relu": (lambda: nn.ReLU(), lambda: torch.nn.ReLU(), (3, 4)),
    "mha": (lambda: ShrewMHA(8, 2, batch_first=True), lambda: TorchMHA(8, 2, batch_first=True),
            (2, 5, 8)),
    "transformer_block": (lambda: nn.TransformerBlock(8, 2, causal=True),
                          lambda: TorchBlock(8, 2), (2, 5, 8)),
}


@device_param
@pytest.mark.parametrize("name", sorted(CASES))
def test_modules_match_torch(device, name):
    make_ours, make_theirs, shape = CASES[name]
    theirs = make_theirs().double()
    ours = make_ours()
    copy_weights(ours, theirs)
    ours.to(device).to(shrew.float64)
    data = np.random.default_rng(0).standard_normal(shape)
    x = shrew.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    for _ in range(2):  # twice: BatchNorm's running statistics must follow along
        out, ref = ours(x), theirs(tx)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-9, atol=1e-10)
    grads = out.square().sum().backward()
    ref.square().sum().backward()
    np.testing.assert_allclose(grads[x].numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-10)
    ours_state, theirs_state = ours.state_dict(), dict(theirs.named_parameters())
    for k, p in ours.named_parameters():
        tp = theirs_state[k]
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-10,
                                   err_msg=k)
    for k, v in theirs.named_buffers():
        np.testing.assert_allclose(ours_state[k].numpy(), v.numpy(), rtol=1e-12, err_msg=k)
    ours.eval(), theirs.eval()
    np.testing.assert_allclose(ours(x).numpy(), theirs(tx).detach().numpy(), rtol=1e-9, atol=1e-10)


def test_embedding_matches_torch():
    theirs, ours = torch.nn.Embedding(6, 3), nn.Embedding(6, 3)
    copy_weights(ours, theirs)
    idx = np.array([[1, 5, 1], [0, 2, 5]])
    out = ours(shrew.tensor(idx))
    ref = theirs(torch.tensor(idx))
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy())
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy())
