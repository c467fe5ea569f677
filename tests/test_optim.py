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
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.05, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.01, "amsgrad": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.5, "centered": True,
                 "weight_decay": 0.1, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1,
                 "initial_accumulator_value": 0.5, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "momentum_decay": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.5, 0.6), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
]


@pytest.fixture(autouse=True)
def torch_float64():
    """torch keeps some optimizer scalars (NAdam's mu_product, the step counts) in the
    default dtype: float64 so the comparisons can be tight."""
    torch = pytest.importorskip("torch")
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(before)


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
    for step in range(8):
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
    before = weight.numpy().copy()  # numpy() shares the weight's memory, as PyTorch's
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
    (lambda p: optim.SGD([p], lr=0.1, nesterov=True), "nesterov momentum needs momentum > 0"),
    (lambda p: optim.SGD({p}, lr=0.1), "not a set"),
    (lambda p: optim.Adadelta([p], rho=1.5), r"rho must be in \[0, 1\]"),
    (lambda p: optim.RMSprop([p], alpha=-1), "alpha must be >= 0"),
])
def test_bad_arguments_raise(call, message):
    with pytest.raises(shrew.ShrewError, match=message):
        call(nn.Parameter(shrew.ones(2)))


def _pair(torch, rng, device="cpu", shapes=((3, 4), (4,), (2,))):
    init = [rng.standard_normal(s) for s in shapes]
    ours = [nn.Parameter(shrew.tensor(a, device=device)) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    return ours, theirs


def _feed(rng, ours, theirs, torch):
    for p, tp in zip(ours, theirs):
        g = rng.standard_normal(p.shape)
        p.grad, tp.grad = shrew.tensor(g), torch.tensor(g)


def _assert_same(ours, theirs, **tol):
    for p, tp in zip(ours, theirs):
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), **(tol or {"rtol": 1e-12,
                                                                              "atol": 1e-14}))


@pytest.mark.parametrize("name, options", CONFIGS)
def test_per_group_options_match_torch(torch_float64, name, options):
    torch = torch_float64
    rng = np.random.default_rng(1)
    ours, theirs = _pair(torch, rng)
    groups = [{"params": ours[:2]}, {"params": ours[2:], "lr": 0.003, "weight_decay": 0.2}]
    tgroups = [{"params": theirs[:2]}, {"params": theirs[2:], "lr": 0.003, "weight_decay": 0.2}]
    opt, ref = getattr(optim, name)(groups, **options), getattr(torch.optim, name)(tgroups,
                                                                                  **options)
    for _ in range(4):
        _feed(rng, ours, theirs, torch)
        opt.step()
        ref.step()
    _assert_same(ours, theirs)


@pytest.mark.parametrize("name, options", CONFIGS)
def test_state_dict_layout_and_resuming_match_torch(torch_float64, name, options):
    torch = torch_float64
    rng = np.random.default_rng(2)
    ours, theirs = _pair(torch, rng)
    opt, ref = getattr(optim, name)(ours, **options), getattr(torch.optim, name)(theirs,
                                                                                 **options)
    for _ in range(3):
        _feed(rng, ours, theirs, torch)
        opt.step()
        ref.step()
    mine, its = opt.state_dict(), ref.state_dict()
    assert mine["param_groups"][0]["params"] == its["param_groups"][0]["params"] == [0, 1, 2]
    assert {k: v for k, v in mine["param_groups"][0].items() if k != "params"}.items() <= {
        **its["param_groups"][0], "betas": tuple(its["param_groups"][0].get("betas", ()))}.items()
    assert set(mine["state"]) == set(its["state"])
    for i, s in its["state"].items():
        assert set(mine["state"][i]) == set(s), (name, set(mine["state"][i]), set(s))
        for key, value in s.items():
            np.testing.assert_allclose(np.asarray(mine["state"][i][key]), value.numpy(),
                                       rtol=1e-12, atol=1e-14, err_msg=key)
    # A fresh optimizer loading torch's state dict (tensors converted) carries on as torch.
    fresh = getattr(optim, name)(ours, **options)
    fresh.load_state_dict({"state": {i: {k: shrew.tensor(v.numpy()) for k, v in s.items()}
                                     for i, s in its["state"].items()},
                           "param_groups": its["param_groups"]})
    again = getattr(optim, name)(ours, **options)
    again.load_state_dict(opt.state_dict())
    for _ in range(3):
        _feed(rng, ours, theirs, torch)
        ref.step()
        saved = [p.numpy().copy() for p in ours]  # numpy() shares memory: keep a copy
        fresh.step()
        _assert_same(ours, theirs)
        with shrew.no_grad():  # the reloaded copy of our own state gives the same
            for p, a in zip(ours, saved):
                p.copy_(shrew.tensor(a))
        again.step()
        _assert_same(ours, theirs)


def test_load_state_dict_rejects_a_mismatch():
    a, b = nn.Parameter(shrew.ones(2)), nn.Parameter(shrew.ones(3))
    state = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(shrew.ShrewError, match="group 0 has 1 parameters, the state dict's 2"):
        optim.SGD([a], lr=0.1).load_state_dict(state)
    with pytest.raises(shrew.ShrewError, match="2 parameter groups, the optimizer 1"):
        optim.SGD([a, b], lr=0.1).load_state_dict(
            {"state": {}, "param_groups": state["param_groups"] * 2})


def test_add_param_group_and_zero_grad_keep_to_torch(torch_float64):
    torch = torch_float64
    rng = np.random.default_rng(3)
    ours, theirs = _pair(torch, rng)
    opt = optim.SGD(ours[:1], lr=0.1, momentum=0.9)
    ref = torch.optim.SGD(theirs[:1], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": ours[1:], "lr": 0.01})
    ref.add_param_group({"params": theirs[1:], "lr": 0.01})
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["lr"] == 0.01
    for _ in range(3):
        _feed(rng, ours, theirs, torch)
        opt.step()
        ref.step()
    _assert_same(ours, theirs)
    grad = ours[0].grad
    grad.fill_(float("nan"))
    opt.zero_grad(set_to_none=False)
    assert ours[0].grad is grad and not grad.numpy().any()  # zeros, even from NaN
    opt.zero_grad()
    assert all(p.grad is None for p in ours)
    with pytest.raises(shrew.ShrewError, match="more than one place"):
        opt.add_param_group({"params": ours[:1]})


def test_step_takes_a_closure_and_returns_its_loss():
    w = nn.Parameter(shrew.tensor([1.0, 2.0]))
    opt = optim.SGD([w], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 5.0
    np.testing.assert_allclose(w.numpy(), [0.0, 0.0])
    assert opt.step(closure=closure).item() == 0.0


@pytest.mark.parametrize("history_size, max_iter, lr, line_search", [
    (100, 20, 1.0, None), (3, 7, 0.5, None), (100, 20, 1.0, "strong_wolfe"),
    (4, 10, 0.8, "strong_wolfe"), (100, 30, 1.0, "strong_wolfe")])
def test_lbfgs_matches_torch_on_a_rosenbrock_valley(torch_float64, history_size, max_iter, lr,
                                                    line_search):
    torch = torch_float64
    start = np.array([-1.2, 1.0, 0.3, -0.5])
    ours, theirs = nn.Parameter(shrew.tensor(start)), torch.tensor(start, requires_grad=True)

    def rosenbrock(x, lib):
        a, b = x[:-1], x[1:]
        return ((b - a * a) ** 2 * 100.0 + (a * -1.0 + 1.0) ** 2).sum()

    def make_closure(opt, x, lib):
        def closure():
            opt.zero_grad()
            loss = rosenbrock(x, lib)
            loss.backward()
            return loss
        return closure

    options = {"lr": lr, "history_size": history_size, "max_iter": max_iter,
               "line_search_fn": line_search}
    opt, ref = optim.LBFGS([ours], **options), torch.optim.LBFGS([theirs], **options)
    for _ in range(3):
        loss = opt.step(make_closure(opt, ours, shrew))
        tloss = ref.step(make_closure(ref, theirs, torch))
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-9)
        np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-12)
    assert opt.state[ours]["func_evals"] == ref.state[theirs]["func_evals"]
    assert opt.state[ours.id]["n_iter"] == ref.state[theirs]["n_iter"]
    assert ours in opt.state and opt.state.get(nn.Parameter(shrew.ones(1))) is None


def test_lbfgs_refuses_what_it_does_not_do():
    p = nn.Parameter(shrew.ones(2))
    with pytest.raises(shrew.ShrewError, match="line_search_fn must be None or 'strong_wolfe'"):
        optim.LBFGS([p], line_search_fn="backtracking")
    with pytest.raises(shrew.ShrewError, match="needs a closure"):
        optim.LBFGS([p]).step()
    with pytest.raises(shrew.ShrewError, match="exactly one parameter group"):
        optim.LBFGS([{"params": [p]}, {"params": [nn.Parameter(shrew.ones(1))]}])


def test_state_reads_as_torchs_defaultdict_of_dicts() -> None:
    """Optimizers written against PyTorch's base (KellerJordan's Muon) read
    `self.state[p]` for a parameter with no state yet and fill the dict they get."""
    p = nn.Parameter(shrew.ones(2))
    opt = optim.SGD([p], lr=0.1)
    state = opt.state[p]
    assert state == {} and p in opt.state
    state["momentum_buffer"] = shrew.zeros(2)
    assert opt.state[p.id] is state
    opt.state[p] = {"step": 3}
    assert opt.state[p.id] == {"step": 3} and list(opt.state) == [p.id]
    del opt.state[p]
    assert p not in opt.state
