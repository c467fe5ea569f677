"""shrew.nn modules: the Module API, state dicts, devices, default initialisation and
gradients through every layer (gradcheck, float64).  Agreement with torch.nn is in
test_nn_reference.py."""
from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest

import shrew
from shrew import nn, optim
import torch
from shrew.testing import gradcheck
from support import device_or_fail

DEVICES = ["cpu"] + (["opencl"] if "opencl" in " ".join(shrew.devices()) else [])
device_param = pytest.mark.parametrize("device", DEVICES)


# -- the Module API ---------------------------------------------------------------------------
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.bn = nn.BatchNorm2d(2)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * 2 * 2, 3), nn.ReLU())
        self.scale = nn.Parameter(shrew.ones(1))

    def forward(self, x):
        return self.head(self.bn(self.conv(x))) * self.scale


def test_parameters_buffers_and_children_are_found_in_assignment_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "conv.weight", "conv.bias", "bn.weight", "bn.bias", "head.1.weight", "head.1.bias"]
    assert [n for n, _ in net.named_buffers()] == ["bn.running_mean", "bn.running_var",
                                                   "bn.num_batches_tracked"]
    assert list(net.state_dict()) == [
        "scale", "conv.weight", "conv.bias", "bn.weight", "bn.bias", "bn.running_mean",
        "bn.running_var", "bn.num_batches_tracked", "head.1.weight", "head.1.bias"]
    assert [type(m).__name__ for m in net.children()] == ["Conv2d", "BatchNorm2d", "Sequential"]
    assert [n for n, _ in net.named_modules()] == ["", "conv", "bn", "head", "head.0", "head.1",
                                                  "head.2"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    assert "(head): Sequential(" in repr(net)
    assert "Linear(in_features=8, out_features=3, bias=True)" in repr(net)


def test_shared_modules_count_their_parameters_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_train_eval_and_zero_grad_reach_every_module():
    net = Net()
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net(shrew.randn(3, 1, 4, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_sequential_is_indexable_and_iterable():
    layers = [nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)]
    seq = nn.Sequential(*layers)
    assert len(seq) == 3 and list(seq) == layers and seq[-1] is layers[2]
    tail = seq[1:]
    assert isinstance(tail, nn.Sequential) and list(tail) == layers[1:]
    assert seq(shrew.randn(5, 3)).shape == (5, 2)
    with pytest.raises(shrew.ShrewError, match="Sequential: item 1 is a int"):
        nn.Sequential(nn.ReLU(), 3)


def test_parameter_owns_its_memory_and_requires_floats():
    data = np.zeros(3, dtype=np.float32)
    p = nn.Parameter(shrew.from_numpy(data))
    with shrew.no_grad():
        p.copy_(shrew.ones(3))
    assert data.sum() == 0 and p.numpy().sum() == 3 and p.is_leaf and p.requires_grad
    assert p._version == 1  # the write is counted, as every in-place write
    assert not nn.Parameter(shrew.ones(2), requires_grad=False).requires_grad
    with pytest.raises(shrew.DTypeError):
        nn.Parameter(shrew.tensor([1, 2]))
    with pytest.raises(shrew.ShapeError, match=r"copy_: shapes \[2\] and \[3\]"), \
            shrew.no_grad():
        p.copy_(shrew.ones(2))
    assert p._version == 1


@pytest.mark.parametrize("device", ["cpu", "opencl"])
@pytest.mark.parametrize("dtype", [shrew.float32, shrew.float64])
def test_add_updates_in_place(device, dtype):
    """An optimizer's update (p.add_ under no_grad) writes into p's own memory and counts
    a version, as torch's."""
    device = device_or_fail(device)
    big = np.random.default_rng(0).standard_normal((300, 40))  # past BLAS's axpy threshold
    p = nn.Parameter(shrew.tensor(big, dtype=dtype, device=device))
    q = torch.nn.Parameter(torch.tensor(big, dtype=getattr(torch, str(dtype).split(".")[-1])))
    view = np.asarray(p) if device == "cpu" else None
    with shrew.no_grad(), torch.no_grad():
        for ours, theirs in ((p, q), (p.T, q.T)):
            ones = shrew.ones(*ours.shape, device=device)
            ours.add_(ones, alpha=-0.5)
            theirs.add_(torch.ones(*theirs.shape), alpha=-0.5)
            ours.add_(ours, alpha=1.0)  # the update may be the parameter itself
            theirs.add_(theirs, alpha=1.0)
            ours.add_(shrew.ones(ours.shape[1], ours.shape[0], dtype=dtype,
                                 device=device).transpose(0, 1), alpha=2.0)  # strided
            theirs.add_(torch.ones(theirs.shape[1], theirs.shape[0],
                                   dtype=q.dtype).transpose(0, 1), alpha=2.0)
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-6, atol=1e-5)
        assert p._version == q._version == 6
        with pytest.raises(shrew.ShapeError, match=r"\[300, 40\] and \[2\]"):
            p.add_(shrew.ones(2, device=device))
    if view is not None:
        np.testing.assert_array_equal(view, p.numpy())  # it wrote into p's own memory


# -- state dicts -------------------------------------------------------------------------------
def test_load_state_dict_copies_values_in_place():
    a, b = Net(), Net()
    params = list(b.parameters())
    b.load_state_dict(a.state_dict())
    assert list(b.parameters()) == params  # the same objects, so optimizers keep working
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(x.numpy(), y.numpy(), err_msg=name)
    b.load_state_dict({k: v.numpy() for k, v in a.state_dict().items()})  # arrays work too


def test_load_state_dict_names_every_bad_key_and_writes_nothing():
    net = Net()
    before = {k: v.numpy().copy() for k, v in net.state_dict().items()}
    state = {k: shrew.zeros(*v.shape) for k, v in net.state_dict().items()}
    del state["conv.bias"], state["bn.running_var"]
    state["extra.weight"] = shrew.zeros(1)
    state["head.1.weight"] = shrew.zeros(8, 3)
    with pytest.raises(shrew.ShrewError) as info:
        net.load_state_dict(state)
    message = str(info.value)
    assert "missing keys: conv.bias, bn.running_var" in message
    assert "unexpected keys: extra.weight" in message
    assert "wrong shapes: head.1.weight (expected [3, 8], got [8, 3])" in message
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])
    state["head.1.weight"] = shrew.zeros(3, 8)
    missing, unexpected = net.load_state_dict(state, strict=False)
    assert missing == ["conv.bias", "bn.running_var"] and unexpected == ["extra.weight"]
    assert net.conv.weight.numpy().sum() == 0


# -- devices and dtypes ------------------------------------------------------------------------
@device_param
def test_to_moves_parameters_and_buffers_in_place(device):
    net = Net()
    opt = optim.SGD(net.parameters(), lr=0.1)
    params = list(net.parameters())
    assert net.to(device).to(shrew.float64) is net
    assert list(net.parameters()) == params
    assert all(t.dtype is (shrew.float64 if t.dtype.is_floating_point else shrew.int64)
               and t.device.startswith(device) for t in net.state_dict().values())
    x = shrew.randn(4, 1, 4, 4, dtype=shrew.float64, device=device)
    before = net.conv.weight.numpy().copy()
    net(x).sum().backward()
    opt.step()
    assert not np.array_equal(before, net.conv.weight.numpy())


# -- default initialisation (PyTorch's) --------------------------------------------------------
def test_default_initialisation_follows_pytorch():
    shrew.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w = lin.weight.numpy()
    assert np.abs(w).max() <= bound and abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert np.abs(lin.bias.numpy()).max() <= bound and lin.bias.numpy().std() > bound / 2
    conv = nn.Conv2d(8, 16, 3)
    assert np.abs(conv.weight.numpy()).max() <= 1 / math.sqrt(8 * 9)
    assert abs(nn.Embedding(500, 40).weight.numpy().std() - 1) < 0.02
    mha = nn.MultiheadAttention(32, 4)
    assert np.abs(mha.in_proj_weight.numpy()).max() <= math.sqrt(6 / (32 + 96))
    assert not mha.in_proj_bias.numpy().any() and not mha.out_proj.bias.numpy().any()
    ln, bn = nn.LayerNorm(5), nn.BatchNorm2d(3)
    assert (ln.weight.numpy() == 1).all() and not ln.bias.numpy().any()
    assert not bn.running_mean.numpy().any() and (bn.running_var.numpy() == 1).all()
    shrew.manual_seed(0)
    np.testing.assert_array_equal(nn.Linear(400, 300).weight.numpy(), w)


# -- gradients through every layer ---------------------------------------------------------------
@contextlib.contextmanager
def swapped(module: nn.Module, names, tensors):
    """Temporarily put `tensors` where the named parameters are, so gradcheck's perturbed
    copies flow through the module."""
    saved = []
    for name, t in zip(names, tensors):
        *path, attr = name.split(".")
        owner = module
        for part in path:
            owner = getattr(owner, part)
        saved.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, t)
    try:
        yield
    finally:
        for owner, attr, old in reversed(saved):
            setattr(owner, attr, old)


def check_module(module, x, directions=None, **call):
    module.to(shrew.float64)
    names, params = zip(*module.named_parameters()) if list(module.parameters()) else ((), ())

    def fn(x, *ps):
        with swapped(module, names, ps):
            return module(x, **call)

    assert gradcheck(fn, [x, *params], directions=directions)


class SelfAttention(nn.Module):
    """Batch-first self-attention returning only the output: one input, for check_module."""

    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x, causal=False):
        return self.attn(x, x, x, need_weights=False, is_causal=causal)[0]


def x64(*shape):
    return shrew.tensor(np.random.default_rng(len(shape)).standard_normal(shape),
                        requires_grad=True)


@pytest.mark.parametrize("make, shape, directions", [
    (lambda: nn.Linear(3, 2), (2, 3), None),
    (lambda: nn.Conv1d(2, 2, 3, padding=1), (1, 2, 4), None),
    (lambda: nn.Conv2d(2, 2, 2, stride=2, padding=1), (1, 2, 3, 3), None),
    (lambda: nn.MaxPool2d(2, 1), (1, 1, 3, 3), None),
    (lambda: nn.AvgPool2d(2, 1, 1), (1, 1, 3, 3), None),
    (lambda: nn.LayerNorm(4), (2, 4), None),
    (lambda: nn.BatchNorm2d(2), (3, 2, 2, 1), None),
    (lambda: nn.GELU("tanh"), (2, 3), None),
    (lambda: nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Dropout(0.0), nn.Linear(4, 1)),
     (2, 3), None),
    (lambda: SelfAttention(4, 2), (2, 3, 4), 6),
    (lambda: nn.TransformerBlock(4, 2, mlp_ratio=2, causal=True), (2, 3, 4), 6),
])
def test_gradcheck_through_layer(make, shape, directions):
    shrew.manual_seed(0)
    check_module(make(), x64(*shape), directions)


def test_gradcheck_through_embedding_and_causal_attention():
    shrew.manual_seed(0)
    check_module(nn.Embedding(5, 3), shrew.tensor([[0, 4], [4, 1]]))
    check_module(SelfAttention(4, 2), x64(1, 3, 4), directions=6, causal=True)


# -- module-specific behaviour -------------------------------------------------------------------
def test_dropout_module_is_the_identity_in_eval():
    drop, x = nn.Dropout(0.5), shrew.ones(1000)
    assert 0.4 < (drop(x).numpy() == 0).mean() < 0.6
    assert drop.eval()(x) is x
    with pytest.raises(shrew.ShrewError, match="Dropout: p must lie in"):
        nn.Dropout(-0.1)


def test_attention_cross_inputs_and_errors():
    mha = nn.MultiheadAttention(8, 4, batch_first=True)
    memory = shrew.randn(2, 5, 8)
    out, weights = mha(shrew.randn(2, 3, 8), memory, memory)
    assert out.shape == (2, 3, 8) and weights.shape == (2, 3, 5)
    with pytest.raises(shrew.ShrewError, match="embed_dim 8 must be divisible by num_heads 3"):
        nn.MultiheadAttention(8, 3)
    with pytest.raises(shrew.ShapeError, match=r"MultiheadAttention: query, key and value must "
                                               r"be \[N, L, E\]"):
        mha(shrew.randn(3, 8), memory, memory)


def test_layers_reject_bad_sizes_and_inputs():
    with pytest.raises(shrew.ShrewError, match="Linear: in_features must be a positive int"):
        nn.Linear(0, 3)
    with pytest.raises(shrew.ShapeError, match=r"BatchNorm2d: input must be \[N, C, H, W\]"):
        nn.BatchNorm2d(3)(shrew.randn(4, 3))
    with pytest.raises(shrew.ShapeError, match="conv2d: input has 2 channels"):
        nn.Conv2d(3, 4, 3)(shrew.randn(1, 2, 5, 5))
