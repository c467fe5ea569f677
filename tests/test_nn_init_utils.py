"""shrew.nn.init (against torch.nn.init: exact where deterministic, statistics where
random) and shrew.nn.utils' gradient clipping and vector conversion (against torch)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import shrew
from shrew import nn
from shrew.nn import init
from shrew.nn.utils import (clip_grad_norm_, clip_grad_value_, parameters_to_vector,
                            vector_to_parameters)

torch = pytest.importorskip("torch")
tinit = torch.nn.init


@pytest.mark.parametrize("name, param", [
    ("linear", None), ("conv2d", None), ("conv_transpose3d", None), ("sigmoid", None),
    ("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
    ("leaky_relu", 3), ("selu", None)])
def test_calculate_gain_matches_torch(name, param):
    assert init.calculate_gain(name, param) == pytest.approx(tinit.calculate_gain(name, param),
                                                             rel=1e-15)


def test_calculate_gain_refuses_unknown_names():
    with pytest.raises(shrew.ShrewError, match="unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")
    with pytest.raises(shrew.ShrewError, match="not a valid number"):
        init.calculate_gain("leaky_relu", True)


@pytest.mark.parametrize("shape", [(2, 3), (4, 3, 5), (6, 2, 3, 3), (2, 3, 1, 1, 2), (0, 3)])
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(shrew.zeros(*shape)) == \
        tinit._calculate_fan_in_and_fan_out(torch.zeros(*shape))


def test_fans_need_two_dims():
    with pytest.raises(shrew.ShapeError, match=r"at least 2 dims, got shape \[5\]"):
        init._calculate_fan_in_and_fan_out(shrew.zeros(5))
    with pytest.raises(shrew.ShrewError, match="mode 'fan_avg' not supported"):
        init.kaiming_uniform_(shrew.zeros(2, 2), mode="fan_avg")


@pytest.mark.parametrize("fill, shape", [
    (lambda lib, t: lib.nn.init.constant_(t, 0.25), (3, 4)),
    (lambda lib, t: lib.nn.init.ones_(t), (2, 5)),
    (lambda lib, t: lib.nn.init.zeros_(t), (4,)),
    (lambda lib, t: lib.nn.init.eye_(t), (3, 5)),
    (lambda lib, t: lib.nn.init.eye_(t), (4, 2)),
    (lambda lib, t: lib.nn.init.dirac_(t), (4, 3, 3)),
    (lambda lib, t: lib.nn.init.dirac_(t), (2, 5, 3, 4)),
    (lambda lib, t: lib.nn.init.dirac_(t, groups=2), (6, 2, 3, 3)),
    (lambda lib, t: lib.nn.init.dirac_(t, groups=3), (6, 4, 1, 3, 3)),
])
def test_deterministic_fills_match_torch(fill, shape):
    ours = nn.Parameter(shrew.randn(*shape))
    theirs = torch.randn(*shape)
    out = fill(shrew, ours)
    fill(torch, theirs)
    assert out is ours and ours.requires_grad and ours.is_leaf
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("call, message", [
    (lambda: init.eye_(shrew.zeros(2, 2, 2)), "only tensors with 2 dimensions"),
    (lambda: init.dirac_(shrew.zeros(2, 2)), "3, 4 or 5 dimensions"),
    (lambda: init.dirac_(shrew.zeros(3, 2, 3), groups=2), "divisible by groups"),
    (lambda: init.orthogonal_(shrew.zeros(3)), "2 or more dimensions"),
    (lambda: init.sparse_(shrew.zeros(3, 3, 3), 0.5), "only tensors with 2 dimensions"),
    (lambda: init.trunc_normal_(shrew.zeros(3), a=1.0, b=0.0), "needs a < b"),
])
def test_bad_shapes_raise(call, message):
    with pytest.raises(shrew.ShrewError, match=message):
        call()


@pytest.mark.parametrize("shape, gain", [((3, 5), 1.0), ((5, 3), 2.0), ((4, 2, 3), 0.5),
                                         ((6, 6), 1.0)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape, gain):
    t = init.orthogonal_(shrew.zeros(*shape, dtype=shrew.float64), gain=gain)
    q = t.numpy().reshape(shape[0], -1) / gain
    small = min(q.shape)
    gram = q @ q.T if q.shape[0] == small else q.T @ q
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-12)


def _torch_sample(name, shape, **kw):
    t = torch.empty(*shape, dtype=torch.float64)
    getattr(tinit, name)(t, **kw)
    return t.numpy()


UNIFORM = [("uniform_", {"a": -0.3, "b": 0.7}), ("xavier_uniform_", {"gain": 2.0}),
           ("kaiming_uniform_", {}), ("kaiming_uniform_", {"a": math.sqrt(5)}),
           ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"})]
NORMAL = [("normal_", {"mean": 0.5, "std": 2.0}), ("xavier_normal_", {}),
          ("kaiming_normal_", {"nonlinearity": "tanh", "mode": "fan_out"}),
          ("kaiming_normal_", {"a": 0.1})]


@pytest.mark.parametrize("name, kw", UNIFORM)
def test_uniform_initialisers_use_torchs_bounds(name, kw):
    shape = (200, 50, 3)
    ours = getattr(init, name)(shrew.zeros(*shape, dtype=shrew.float64), **kw).numpy()
    theirs = _torch_sample(name, shape, **kw)
    low, high = theirs.min(), theirs.max()
    width = high - low
    # both are uniform on the same interval: the extremes of 30000 draws agree closely
    assert ours.min() >= low - 1e-3 * width and ours.max() <= high + 1e-3 * width
    assert ours.min() <= low + 1e-3 * width and ours.max() >= high - 1e-3 * width
    assert abs(ours.mean() - theirs.mean()) < 0.03 * width
    assert ours.std() == pytest.approx(width / math.sqrt(12), rel=0.03)


@pytest.mark.parametrize("name, kw", NORMAL)
def test_normal_initialisers_use_torchs_std(name, kw):
    shape = (200, 50, 3)
    ours = getattr(init, name)(shrew.zeros(*shape, dtype=shrew.float64), **kw).numpy()
    theirs = _torch_sample(name, shape, **kw)
    assert ours.std() == pytest.approx(theirs.std(), rel=0.03)
    assert abs(ours.mean() - theirs.mean()) < 0.05 * theirs.std()


@pytest.mark.filterwarnings("ignore:mean is more than 2 std")
@pytest.mark.parametrize("mean, std, a, b", [(0.0, 1.0, -2.0, 2.0), (1.0, 0.5, 0.0, 3.0),
                                             (0.0, 1.0, 2.5, 3.0), (0.0, 0.02, -0.04, 0.04)])
def test_trunc_normal_has_the_truncated_moments(mean, std, a, b):
    x = init.trunc_normal_(shrew.zeros(40000, dtype=shrew.float64), mean, std, a, b).numpy()
    assert x.min() >= a and x.max() <= b
    unit = __import__("statistics").NormalDist()
    alpha, beta = (a - mean) / std, (b - mean) / std
    z = unit.cdf(beta) - unit.cdf(alpha)
    expected_mean = mean + std * (unit.pdf(alpha) - unit.pdf(beta)) / z
    expected_var = std ** 2 * (1 + (alpha * unit.pdf(alpha) - beta * unit.pdf(beta)) / z
                               - ((unit.pdf(alpha) - unit.pdf(beta)) / z) ** 2)
    assert x.mean() == pytest.approx(expected_mean, abs=5 * math.sqrt(expected_var / 40000))
    assert x.var() == pytest.approx(expected_var, rel=0.05)
    torch_x = torch.empty(40000, dtype=torch.float64)
    tinit.trunc_normal_(torch_x, mean, std, a, b)
    assert x.mean() == pytest.approx(torch_x.mean().item(), abs=6 * math.sqrt(expected_var / 40000))


def test_sparse_zeroes_the_right_count_in_every_column():
    t = init.sparse_(shrew.zeros(20, 300, dtype=shrew.float64), sparsity=0.33, std=0.5).numpy()
    assert ((t == 0).sum(axis=0) == math.ceil(0.33 * 20)).all()
    assert t[t != 0].std() == pytest.approx(0.5, rel=0.05)


def test_generators_and_manual_seed_make_draws_reproducible():
    for name in ("uniform_", "normal_", "trunc_normal_", "orthogonal_", "sparse_",
                 "xavier_normal_", "kaiming_uniform_"):
        args = (0.5,) if name == "sparse_" else ()
        a = getattr(init, name)(shrew.zeros(6, 4), *args,
                                generator=shrew.Generator().manual_seed(3)).numpy()
        b = getattr(init, name)(shrew.zeros(6, 4), *args,
                                generator=shrew.Generator().manual_seed(3)).numpy()
        shrew.manual_seed(5)
        c = getattr(init, name)(shrew.zeros(6, 4), *args).numpy()
        shrew.manual_seed(5)
        d = getattr(init, name)(shrew.zeros(6, 4), *args).numpy()
        np.testing.assert_array_equal(a, b, err_msg=name)
        np.testing.assert_array_equal(c, d, err_msg=name)
        assert not np.array_equal(a, c), name


def test_kaiming_on_an_empty_tensor_warns_and_does_nothing():
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(shrew.zeros(0, 3))


# -- nn.utils ---------------------------------------------------------------------------------
def _with_grads(rng, shapes=((3, 4), (5,), (2, 2, 2)), scale=1.0):
    values = [rng.standard_normal(s) for s in shapes]
    grads = [scale * rng.standard_normal(s) for s in shapes]
    ours = [nn.Parameter(shrew.tensor(v)) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    for p, tp, g in zip(ours, theirs, grads):
        p.grad, tp.grad = shrew.tensor(g), torch.tensor(g)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, "inf", math.inf, -math.inf, 3.5, 0.5, 0])
@pytest.mark.parametrize("max_norm", [0.1, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    ours, theirs = _with_grads(np.random.default_rng(0))
    extra = nn.Parameter(shrew.ones(2))  # no gradient: left out, as in torch
    total = clip_grad_norm_(ours + [extra], max_norm, norm_type=norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=1e-12)
    for p, tp in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert extra.grad is None


def test_clip_grad_norm_of_a_single_tensor_and_of_nothing():
    p = nn.Parameter(shrew.ones(4))
    assert clip_grad_norm_(p, 1.0).item() == 0.0
    p.grad = shrew.full((4,), 2.0)
    assert clip_grad_norm_(p, 1.0).item() == pytest.approx(4.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.5] * 4, rtol=1e-6)


def test_clip_grad_norm_and_non_finite_gradients():
    p = nn.Parameter(shrew.ones(3))
    p.grad = shrew.tensor([1.0, float("nan"), 2.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    with pytest.raises(shrew.ShrewError, match="non-finite"):
        clip_grad_norm_([p], 1.0, norm_type=math.inf, error_if_nonfinite=True)
    assert math.isnan(clip_grad_norm_([p], 1.0).item())  # torch too clips to nan silently
    with pytest.raises(shrew.ShrewError, match="norm_type must be >= 0"):
        clip_grad_norm_([p], 1.0, norm_type=-1)


def test_clip_grad_value_matches_torch():
    ours, theirs = _with_grads(np.random.default_rng(1))
    assert clip_grad_value_(ours, 0.5) is None
    torch.nn.utils.clip_grad_value_(theirs, 0.5)
    for p, tp in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad.numpy(), tp.grad.numpy())


def test_parameters_to_vector_and_back_match_torch():
    ours, theirs = _with_grads(np.random.default_rng(2))
    vec = parameters_to_vector(ours)
    np.testing.assert_array_equal(vec.numpy(),
                                  torch.nn.utils.parameters_to_vector(theirs).detach().numpy())
    grads = (vec * shrew.arange(vec.shape[0]).to_dtype(shrew.float64)).sum().backward()
    assert grads[ours[1]].tolist() == list(range(12, 17))  # it is differentiable
    new = np.linspace(-1, 1, vec.shape[0])
    vector_to_parameters(shrew.tensor(new), ours)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), theirs)
    for p, tp in zip(ours, theirs):
        np.testing.assert_array_equal(p.numpy(), tp.detach().numpy())
        assert p.is_leaf and p.requires_grad
    with pytest.raises(shrew.ShapeError, match=r"must have shape \[25\] .*got \[19\]"):
        vector_to_parameters(shrew.zeros(19, dtype=shrew.float64), ours)
    with pytest.raises(TypeError, match="expected a Tensor, but got ndarray"):
        vector_to_parameters(new, ours)
