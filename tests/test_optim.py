"""shrew.optim: PyTorch-equal updates, parameter groups, GradStore input and validation."""
from __future__ import annotations

import numpy as np
import pytest

import shrew
from shrew import nn, optim

DEVICES = ["cpu"] + (["opencl"] if "opencl" in " ".join(shrew.devices()) else [])
device_param = pytest.mark.parametrize("device", DEVICES)

CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.1}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.02, "weight_decay": 0.3}),
]


@device_param
@pytest.mark.parametrize("name, options", CONFIGS)
def test_updates_match_torch(device, name, options):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((3, 4)), rng.standard_normal(4)]
    ours = [nn.Parameter(shrew.tensor(a, device=device)) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    opt = getattr(optim, name)(ours, **options)
    ref = getattr(torch.optim, name)(theirs, **options)
    for step in range(5):
        for p, tp in zip(ours, theirs):
            g = rng.standard_normal(p.shape)
            p.grad = shrew.tensor(g, device=device)
            tp.grad = torch.tensor(g)
        opt.step()
        ref.step()
        for p, tp in zip(ours, theirs):
            np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-12, atol=1e-14,
                                       err_msg=f"step {step}")


@device_param
def test_step_updates_in_place_from_a_gradstore(device):
    lin = nn.Linear(3, 2).to(device)
    weight, data = lin.weight, lin.weight._data
    opt = optim.SGD(lin.parameters(), lr=1.0)
    before = weight.numpy()
    grads = lin(shrew.ones(1, 3, device=device)).sum().backward()
    lin.zero_grad()  # .grad cleared: the GradStore is what step reads
    opt.step(grads)
    assert lin.weight is weight and weight._data is data and weight.is_leaf
    np.testing.assert_allclose(weight.numpy(), before - 1.0, rtol=1e-6)
    assert weight.grad is None


def test_parameters_without_gradients_are_left_alone():
    a, b = nn.Parameter(shrew.ones(2)), nn.Parameter(shrew.ones(2))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = shrew.ones(2)
    opt.step()
    assert (b.numpy() == 1).all() and (a.numpy() < 1).all()
    assert b.id not in opt.state


def test_param_groups_take_their_own_options_and_schedules_change_lr():
    a, b = nn.Parameter(shrew.zeros(1)), nn.Parameter(shrew.zeros(1))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.0)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.0
    for p in (a, b):
        p.grad = shrew.ones(1)
    opt.step()
    np.testing.assert_allclose([a.item(), b.item()], [-0.1, -0.5], rtol=1e-6)
    opt.param_groups[0]["lr"] = 1.0
    opt.step()
    np.testing.assert_allclose(a.item(), -1.1, rtol=1e-6)
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_training_a_linear_model_reduces_the_loss():
    shrew.manual_seed(0)
    x = shrew.randn(64, 3)
    y = x @ shrew.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    for opt_cls in (optim.SGD, optim.Adam, optim.AdamW):
        model = nn.Linear(3, 1)
        opt = opt_cls(model.parameters(), lr=0.05)
        losses = []
        for _ in range(100):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[-1] < 0.05 * losses[0], opt_cls.__name__


@pytest.mark.parametrize("call, message", [
    (lambda p: optim.SGD([], lr=0.1), "SGD: got an empty parameter list"),
    (lambda p: optim.SGD([p], lr=-1), "SGD: lr must be >= 0"),
    (lambda p: optim.SGD([p], lr=0.1, momentum=-0.5), "SGD: momentum must be >= 0"),
    (lambda p: optim.Adam([p], betas=(0.9, 1.0)), r"Adam: betas must be two numbers in \[0, 1\)"),
    (lambda p: optim.AdamW([p], eps=-1.0), "AdamW: eps must be >= 0"),
    (lambda p: optim.Adam([p, p]), "Adam: a parameter .* appears in more than one place"),
    (lambda p: optim.Adam([p * 2]), "Adam: parameters must be leaf tensors that require grad"),
    (lambda p: optim.Adam([shrew.ones(2)]), "requires_grad=False"),
    (lambda p: optim.Adam([{"lr": 0.1}]), "'params' entry"),
])
def test_bad_arguments_raise(call, message):
    with pytest.raises(shrew.ShrewError, match=message):
        call(nn.Parameter(shrew.ones(2)))
