"""shrew.optim.lr_scheduler against torch.optim.lr_scheduler, step by step."""
from __future__ import annotations

import math

import numpy as np
import pytest

import shrew
from shrew import nn, optim
from shrew.optim import lr_scheduler

torch = pytest.importorskip("torch")
# torch warns about the order of step calls and about step(epoch); the tests mean both
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _optimizers(name="SGD", **options):
    """The same two-group optimizer in shrew and in torch."""
    options = {"lr": 0.1, "momentum": 0.9, **options} if name == "SGD" else {"lr": 0.1, **options}
    ours = [nn.Parameter(shrew.ones(2)), nn.Parameter(shrew.ones(3))]
    theirs = [torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)]
    opt = getattr(optim, name)([{"params": ours[:1]}, {"params": ours[1:], "lr": 0.05}], **options)
    ref = getattr(torch.optim, name)([{"params": theirs[:1]}, {"params": theirs[1:], "lr": 0.05}],
                                     **options)
    return opt, ref


SCHEDULES = [
    ("StepLR", {"step_size": 3}),
    ("StepLR", {"step_size": 2, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 9], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 7}),
    ("CosineAnnealingLR", {"T_max": 5, "eta_min": 0.01}),
    ("CosineAnnealingWarmRestarts", {"T_0": 4}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.001}),
    ("LambdaLR", {"lr_lambda": lambda e: 0.95 ** e + 0.1 * (e % 3)}),
    ("MultiplicativeLR", {"lr_lambda": lambda e: 0.9 if e % 2 else 0.99}),
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 0.5, "end_factor": 0.1, "total_iters": 8}),
    ("ConstantLR", {}),
    ("ConstantLR", {"factor": 0.25, "total_iters": 3}),
    ("PolynomialLR", {}),
    ("PolynomialLR", {"total_iters": 12, "power": 2.0}),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 31}),
    ("OneCycleLR", {"max_lr": [1.0, 0.5], "epochs": 3, "steps_per_epoch": 10,
                    "anneal_strategy": "linear", "three_phase": True, "pct_start": 0.25}),
    ("OneCycleLR", {"max_lr": 0.3, "total_steps": 30, "cycle_momentum": False}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 4}),
    ("CyclicLR", {"base_lr": [0.01, 0.02], "max_lr": 0.2, "step_size_up": 3,
                  "step_size_down": 5, "mode": "triangular2"}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "mode": "exp_range",
                  "gamma": 0.9}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3,
                  "scale_fn": lambda x: 1 / (1 + x), "scale_mode": "iterations"}),
]


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


def _same(sched, ref, opt, topt):
    np.testing.assert_allclose(sched.get_last_lr(), ref.get_last_lr(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose([g["lr"] for g in opt.param_groups],
                               [g["lr"] for g in topt.param_groups], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(_momenta(opt), _momenta(topt), rtol=1e-12)
    assert getattr(sched, "last_epoch", None) == getattr(ref, "last_epoch", None)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("name, options", SCHEDULES)
def test_schedules_match_torch(name, options, optimizer):
    opt, topt = _optimizers(optimizer)
    sched = getattr(lr_scheduler, name)(opt, **options)
    ref = getattr(torch.optim.lr_scheduler, name)(topt, **options)
    steps = 30 if name == "OneCycleLR" else 40
    _same(sched, ref, opt, topt)
    for _ in range(steps):
        opt.step()
        topt.step()
        sched.step()
        ref.step()
        _same(sched, ref, opt, topt)


@pytest.mark.parametrize("name, options", SCHEDULES)
def test_state_dict_resumes_the_schedule(name, options):
    opt, topt = _optimizers()
    sched = getattr(lr_scheduler, name)(opt, **options)
    ref = getattr(torch.optim.lr_scheduler, name)(topt, **options)
    for _ in range(7):
        sched.step()
        ref.step()
    saved_opt, saved = opt.state_dict(), sched.state_dict()
    assert "optimizer" not in saved
    # rebuild from the saved state as a resumed training run does: optimizer and scheduler
    # first, then their states
    opt2, _ = _optimizers()
    resumed = getattr(lr_scheduler, name)(opt2, **options)
    opt2.load_state_dict(saved_opt)
    resumed.load_state_dict(saved)
    for _ in range(10):
        resumed.step()
        ref.step()
        _same(resumed, ref, opt2, topt)


def test_step_with_an_epoch_uses_the_closed_form():
    for name, options in [("StepLR", {"step_size": 3}), ("ExponentialLR", {"gamma": 0.8}),
                          ("MultiStepLR", {"milestones": [2, 4]}), ("LinearLR", {}),
                          ("CosineAnnealingLR", {"T_max": 6}), ("PolynomialLR", {})]:
        opt, topt = _optimizers()
        sched = getattr(lr_scheduler, name)(opt, **options)
        ref = getattr(torch.optim.lr_scheduler, name)(topt, **options)
        for epoch in (3, 1, 5, 4):
            sched.step(epoch)
            ref.step(epoch)
            _same(sched, ref, opt, topt)
    opt, topt = _optimizers()
    sched = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
    ref = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(topt, T_0=3, T_mult=2)
    for epoch in (0.5, 4.25, 10, 2):
        sched.step(epoch)
        ref.step(epoch)
        _same(sched, ref, opt, topt)


def _combine(lib, opt, kind):
    s = lib.optim.lr_scheduler
    parts = [s.ConstantLR(opt, factor=0.5, total_iters=3), s.ExponentialLR(opt, gamma=0.9),
             s.CosineAnnealingLR(opt, T_max=6)]
    if kind == "chained":
        return s.ChainedScheduler(parts)
    inner = s.SequentialLR(opt, parts[:2], milestones=[4])
    return s.SequentialLR(opt, [inner, s.StepLR(opt, step_size=2)], milestones=[9]) \
        if kind == "nested" else s.SequentialLR(opt, parts, milestones=[4, 8])


@pytest.mark.parametrize("kind", ["chained", "sequential", "nested"])
def test_combined_schedules_match_torch(kind):
    opt, topt = _optimizers()
    sched, ref = _combine(shrew, opt, kind), _combine(torch, topt, kind)
    _same(sched, ref, opt, topt)
    for step in range(20):
        opt.step()
        topt.step()
        sched.step()
        ref.step()
        _same(sched, ref, opt, topt)
        if step == 10:  # a round trip through state_dict changes nothing
            sched.load_state_dict(sched.state_dict())


@pytest.mark.parametrize("options", [
    {}, {"mode": "max", "factor": 0.5, "patience": 2, "threshold": 0.1, "cooldown": 2},
    {"threshold_mode": "abs", "patience": 1, "min_lr": [0.02, 0.001], "factor": 0.3},
])
def test_reduce_on_plateau_matches_torch(options):
    opt, topt = _optimizers()
    sched = lr_scheduler.ReduceLROnPlateau(opt, **options)
    ref = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **options)
    rng = np.random.default_rng(0)
    metrics = np.concatenate([np.linspace(1, 0.5, 5), 0.5 + 0.01 * rng.standard_normal(40)])
    for i, m in enumerate(metrics):
        sched.step(shrew.tensor(m) if i % 2 else m)
        ref.step(m)
        _same(sched, ref, opt, topt)
        assert (sched.num_bad_epochs, sched.cooldown_counter) == (ref.num_bad_epochs,
                                                                  ref.cooldown_counter)
    assert sched.get_last_lr()[0] < 0.1  # it did reduce


@pytest.mark.parametrize("call, message", [
    (lambda o: lr_scheduler.StepLR(o, step_size=0), "step_size must be a positive int"),
    (lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0), "give total_steps"),
    (lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=2.0),
     "pct_start"),
    (lambda o: lr_scheduler.CyclicLR(o, 0.1, 1.0, mode="zigzag"), "mode must be"),
    (lambda o: lr_scheduler.LambdaLR(o, [lambda e: 1.0]), "expected 2 values for lr_lambda"),
    (lambda o: lr_scheduler.ReduceLROnPlateau(o, factor=1.0), "factor must be < 1"),
    (lambda o: lr_scheduler.ExponentialLR(o, 0.9, last_epoch=3), "no 'initial_lr'"),
    (lambda o: lr_scheduler.StepLR(object(), 1), "is not a shrew Optimizer"),
    (lambda o: lr_scheduler.ChainedScheduler([lr_scheduler.ReduceLROnPlateau(o)]),
     "not ReduceLROnPlateau"),
])
def test_bad_arguments_raise(call, message):
    opt, _ = _optimizers()
    with pytest.raises(shrew.ShrewError, match=message):
        call(opt)


def test_one_cycle_refuses_to_step_past_its_end():
    opt, _ = _optimizers()
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    sched.step()
    sched.step()  # the last of the 3 steps (epochs 0, 1, 2) ends at the minimum
    assert math.isclose(opt.param_groups[0]["lr"], 1.0 / 25 / 1e4)
    sched.step()  # one more is allowed, as in PyTorch
    with pytest.raises(shrew.ShrewError, match="stepped 4 times, more than total_steps=3"):
        sched.step()
