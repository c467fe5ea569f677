"""Padding layers, gumbel_softmax, parametrizations, prune, swa_utils, utils.checkpoint,
func.vmap and func.functional_call, each compared with PyTorch (values, gradients,
state_dict keys, error classes)."""
import warnings

import numpy as np
import pytest

import shrew
import shrew.nn.functional as F
from shrew import func as SF
from shrew.nn.utils import parametrizations as SPar, parametrize, prune as SP
from shrew.optim import swa_utils as SS
from shrew.utils import checkpoint as SC
from support import device_or_fail, each_device

torch = pytest.importorskip("torch")
TF = pytest.importorskip("torch.func")
TPar = pytest.importorskip("torch.nn.utils.parametrizations")
TP = pytest.importorskip("torch.nn.utils.prune")
TS = pytest.importorskip("torch.optim.swa_utils")


def sh(t, device="cpu"):
    return shrew.tensor(t.detach().numpy(), device=device)


def same_weights(torch_module, shrew_module):
    shrew_module.load_state_dict({k: sh(v) for k, v in torch_module.state_dict().items()})
    return torch_module, shrew_module


def close(a, b, atol=1e-5):
    a = a.detach().numpy() if hasattr(a, "detach") else a
    b = b.detach().numpy() if hasattr(b, "detach") else b
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                               atol=atol, rtol=1e-5)


# -- padding ----------------------------------------------------------------------------------
PAD_CASES = [("ReflectionPad1d", (2, 1), (2, 3, 5)), ("ReflectionPad1d", 2, (3, 5)),
             ("ReflectionPad2d", (1, 2, 3, 0), (2, 3, 5, 6)), ("ReflectionPad2d", 1, (3, 4, 4)),
             ("ReflectionPad3d", 1, (1, 2, 3, 4, 5)), ("ReplicationPad1d", (3, 0), (2, 2, 4)),
             ("ReplicationPad2d", (2, -1, 0, 3), (2, 3, 4, 5)),
             ("ReplicationPad3d", (1, 2, 0, 1, 2, 0), (2, 3, 3, 4)),
             ("CircularPad1d", (1, -1), (2, 3, 5)), ("CircularPad2d", (2, 1, -2, 3), (1, 2, 5, 6)),
             ("CircularPad3d", 1, (1, 2, 3, 3, 3)), ("ZeroPad1d", (1, 2), (2, 3)),
             ("ZeroPad2d", (1, 0, 2, 1), (2, 3, 4)), ("ZeroPad3d", 1, (2, 2, 2, 2)),
             ("ReflectionPad1d", (-2, 3), (2, 3, 4))]


@pytest.mark.parametrize("name,padding,shape", PAD_CASES)
def test_padding_layers_match_torch(name, padding, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    t_layer, s_layer = getattr(torch.nn, name)(padding), getattr(shrew.nn, name)(padding)
    assert repr(s_layer) == repr(t_layer)
    tx, sx = torch.tensor(x, requires_grad=True), shrew.tensor(x, requires_grad=True)
    ty, sy = t_layer(tx), s_layer(sx)
    close(sy, ty)
    w = np.random.default_rng(1).standard_normal(ty.shape).astype(np.float32)
    (ty * torch.tensor(w)).sum().backward()
    (sy * shrew.tensor(w)).sum().backward()
    close(sx.grad, tx.grad)


def test_constant_pad_layers_take_the_value():
    x = np.ones((2, 3, 4), np.float32)
    for name, pad in [("ConstantPad1d", (1, 2)), ("ConstantPad2d", 1), ("ConstantPad3d", 1)]:
        t_layer, s_layer = getattr(torch.nn, name)(pad, 3.5), getattr(shrew.nn, name)(pad, 3.5)
        assert repr(s_layer) == repr(t_layer)
        close(s_layer(shrew.tensor(x)), t_layer(torch.tensor(x)))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_rejects_what_torch_rejects(mode):
    for shape, pads in [((2, 3, 4, 5), (1, 1)), ((4,), (1, 1)), ((2, 3), (1,) * 6)]:
        with pytest.raises(Exception) as theirs:
            torch.nn.functional.pad(torch.zeros(shape), pads, mode=mode)
        with pytest.raises(shrew.ShrewError) as ours:
            F.pad(shrew.zeros(*shape), pads, mode=mode)
        assert isinstance(ours.value, type(theirs.value)), (shape, pads, theirs.value)
    with pytest.raises(ValueError):
        shrew.nn.CircularPad2d(1)(shrew.zeros(2, 3))


@pytest.mark.parametrize("device", each_device("opencl"))
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes_differentiate_on_opencl(device, mode):
    device = device_or_fail(device)
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 5)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    sx = shrew.tensor(x, device=device, requires_grad=True)
    ty = torch.nn.functional.pad(tx, (2, 1, -1, 3), mode=mode)
    sy = F.pad(sx, (2, 1, -1, 3), mode=mode)
    close(sy.cpu(), ty)
    (ty * ty).sum().backward()
    (sy * sy).sum().backward()
    close(sx.grad.cpu(), tx.grad)


# -- gumbel_softmax ---------------------------------------------------------------------------
def test_gumbel_softmax_soft_and_straight_through():
    logits = shrew.randn(6, 5, requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5, dim=-1)
    close(soft.sum(-1), np.ones(6))
    hard = F.gumbel_softmax(logits, hard=True, dim=0)
    assert sorted(np.unique(hard.detach().numpy()).tolist()) == [0.0, 1.0]
    close(hard.sum(0), np.ones(5))
    # straight-through: the gradient is that of the soft sample drawn with the same noise
    shrew.manual_seed(3)
    hard = F.gumbel_softmax(logits, tau=2.0, hard=True)
    (hard * shrew.arange(5.0)).sum().backward()
    g_hard = logits.grad.numpy().copy()
    logits.grad = None
    shrew.manual_seed(3)
    (F.gumbel_softmax(logits, tau=2.0) * shrew.arange(5.0)).sum().backward()
    close(logits.grad, g_hard)
    with pytest.warns(UserWarning, match="deprecated"):
        F.gumbel_softmax(logits, eps=1e-5)


# -- parametrizations -------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch_and_loads_its_state_dict(dim):
    t, s = TPar.weight_norm(torch.nn.Linear(3, 4), dim=dim), SPar.weight_norm(
        shrew.nn.Linear(3, 4), dim=dim)
    assert type(s).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert list(s.state_dict()) == list(t.state_dict())
    s.load_state_dict({k: sh(v) for k, v in t.state_dict().items()})
    x = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    ty, sy = t(torch.tensor(x)), s(shrew.tensor(x))
    close(sy, ty)
    (ty ** 2).sum().backward()
    (sy ** 2).sum().backward()
    for key in ("original0", "original1"):
        close(getattr(s.parametrizations.weight, key).grad,
              getattr(t.parametrizations.weight, key).grad)


def test_spectral_norm_matches_torch():
    t, s = TPar.spectral_norm(torch.nn.Conv2d(2, 3, 3)), SPar.spectral_norm(
        shrew.nn.Conv2d(2, 3, 3))
    assert list(s.state_dict()) == list(t.state_dict())
    assert "parametrizations.weight.0._u" in s.state_dict()
    s.load_state_dict({k: sh(v) for k, v in t.state_dict().items()})
    x = np.random.default_rng(5).standard_normal((1, 2, 5, 5)).astype(np.float32)
    ty, sy = t(torch.tensor(x)), s(shrew.tensor(x))  # training: one power step each
    close(sy, ty)
    close(s.parametrizations.weight[0]._v, t.parametrizations.weight[0]._v)
    ty.sum().backward()
    sy.sum().backward()
    close(s.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad,
          atol=1e-4)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("orth_map", [None, "matrix_exp", "cayley", "householder"])
def test_orthogonal_matches_torch(shape, orth_map):
    t = torch.nn.Linear(shape[1], shape[0])
    t, s = same_weights(t, shrew.nn.Linear(shape[1], shape[0]))
    TPar.orthogonal(t, orthogonal_map=orth_map)
    SPar.orthogonal(s, orthogonal_map=orth_map)
    assert list(s.state_dict()) == list(t.state_dict())
    w = s.weight.detach().numpy()
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    close(gram, np.eye(min(shape)))
    if shape[0] == shape[1]:  # no random completion: the same orthogonalised weight
        close(s.weight, t.weight)
    # from the same base and a general X, the same weight and gradient
    x0 = np.random.default_rng(6).standard_normal(shape).astype(np.float32) * 0.3
    s.load_state_dict({k: sh(v) for k, v in t.state_dict().items()})
    with torch.no_grad():
        t.parametrizations.weight.original.copy_(torch.tensor(x0))
    with shrew.no_grad():
        s.parametrizations.weight.original.copy_(shrew.tensor(x0))
    close(s.weight, t.weight, atol=1e-4)
    (t.weight ** 3).sum().backward()
    (s.weight ** 3).sum().backward()
    close(s.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad,
          atol=1e-4)


def test_parametrize_register_remove_and_cached():
    class Symmetric(shrew.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

        def right_inverse(self, a):
            return a.triu()

    m = shrew.nn.Linear(3, 3)
    weight = m.weight
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert parametrize.type_before_parametrizations(m) is shrew.nn.Linear
    assert m.parametrizations.weight.original is weight  # the same Parameter object
    close(m.weight, m.weight.mT)
    with parametrize.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    target = shrew.tensor(np.arange(9.0, dtype=np.float32).reshape(3, 3))
    m.weight = target + target.mT  # assignment goes through right_inverse
    close(m.weight, (target + target.mT))
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is shrew.nn.Linear and m.weight is weight
    assert list(m.state_dict()) == ["bias", "weight"]  # re-registered last, as in torch
    close(m.weight, (target + target.mT))
    with pytest.raises(ValueError):
        parametrize.remove_parametrizations(m, "weight")
    with pytest.raises(ValueError):
        parametrize.register_parametrization(m, "nothing", Symmetric())
    with pytest.raises(ValueError):  # a change of shape needs unsafe=True
        parametrize.register_parametrization(m, "bias", _Doubled())


class _Doubled(shrew.nn.Module):
    def forward(self, x):
        return shrew.cat([x, x])


def test_remove_weight_norm_keeps_the_value():
    m = SPar.weight_norm(shrew.nn.Linear(3, 4))
    before = m.weight.detach().numpy()
    parametrize.remove_parametrizations(m, "weight")
    assert list(m.state_dict()) == ["bias", "weight"]
    close(m.weight, before)
    with pytest.raises(ValueError):
        parametrize.remove_parametrizations(SPar.weight_norm(shrew.nn.Linear(2, 2)), "weight",
                                            leave_parametrized=False)


# -- prune ------------------------------------------------------------------------------------
def test_prune_matches_torch_masks_buffers_and_grads():
    t, s = same_weights(torch.nn.Conv2d(3, 6, 3), shrew.nn.Conv2d(3, 6, 3))
    for mod, lib in ((t, TP), (s, SP)):
        lib.l1_unstructured(mod, "weight", amount=0.3)
        lib.ln_structured(mod, "weight", amount=2, n=2, dim=0)
        lib.l1_unstructured(mod, "weight", amount=5)
    assert list(s.state_dict()) == list(t.state_dict()) == ["bias", "weight_orig",
                                                            "weight_mask"]
    close(s.weight_mask, t.weight_mask)
    x = np.random.default_rng(7).standard_normal((2, 3, 5, 5)).astype(np.float32)
    ty, sy = t(torch.tensor(x)), s(shrew.tensor(x))
    close(sy, ty)
    ty.sum().backward()
    sy.sum().backward()
    close(s.weight_orig.grad, t.weight_orig.grad)
    assert SP.is_pruned(s)
    orig = s.weight_orig
    SP.remove(s, "weight")
    TP.remove(t, "weight")
    assert list(s.state_dict()) == list(t.state_dict()) and s.weight is orig
    assert not SP.is_pruned(s)
    close(s.weight, t.weight)
    with pytest.raises(ValueError):
        SP.remove(s, "weight")


def test_global_unstructured_and_errors_match_torch():
    ts = [torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)]
    ss = [same_weights(a, shrew.nn.Linear(a.in_features, a.out_features))[1] for a in ts]
    TP.global_unstructured([(m, "weight") for m in ts], TP.L1Unstructured, amount=0.5)
    SP.global_unstructured([(m, "weight") for m in ss], SP.L1Unstructured, amount=0.5)
    for a, b in zip(ts, ss):
        close(b.weight_mask, a.weight_mask)
    m = shrew.nn.Linear(4, 3)
    SP.random_unstructured(m, "weight", amount=0.5)
    assert m.weight_mask.sum().item() == 6
    SP.identity(m, "bias")
    assert list(m.state_dict()) == ["weight_orig", "weight_mask", "bias_orig", "bias_mask"]
    for amount, kind in ((1.5, ValueError), (-1, ValueError), ("a", TypeError), (99, ValueError)):
        with pytest.raises(kind):
            TP.l1_unstructured(torch.nn.Linear(2, 2), "bias", amount=amount)
        with pytest.raises(kind):
            SP.l1_unstructured(shrew.nn.Linear(2, 2), "bias", amount=amount)


# -- swa_utils --------------------------------------------------------------------------------
def _bn_net(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("how", ["swa", "ema_multi", "ema_avg"])
def test_averaged_model_matches_torch(use_buffers, how):
    t, s = same_weights(_bn_net(torch), _bn_net(shrew))
    kw = {"swa": lambda m: {}, "ema_multi": lambda m: {"multi_avg_fn": m.get_ema_multi_avg_fn(0.9)},
          "ema_avg": lambda m: {"avg_fn": m.get_ema_avg_fn(0.8)}}[how]
    ta = TS.AveragedModel(t, use_buffers=use_buffers, **kw(TS))
    sa = SS.AveragedModel(s, use_buffers=use_buffers, **kw(SS))
    assert list(sa.state_dict()) == list(ta.state_dict())
    for _ in range(3):
        with torch.no_grad():
            for p in t.parameters():
                p.mul_(1.1).add_(0.05)
        t(torch.randn(5, 3))
        s.load_state_dict({k: sh(v) for k, v in t.state_dict().items()})
        ta.update_parameters(t)
        sa.update_parameters(s)
    for key, value in ta.state_dict().items():
        close(sa.state_dict()[key], value.double())


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 3])
def test_swalr_matches_torch(strategy, anneal_epochs):
    to = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.5)
    so = shrew.optim.SGD([shrew.nn.Parameter(shrew.zeros(1))], lr=0.5)
    ts = TS.SWALR(to, swa_lr=0.05, anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    ss = SS.SWALR(so, swa_lr=0.05, anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    for _ in range(6):
        assert so.param_groups[0]["lr"] == pytest.approx(to.param_groups[0]["lr"])
        to.step()
        so.step()
        ts.step()
        ss.step()
    with pytest.raises(ValueError):
        SS.SWALR(so, swa_lr=0.1, anneal_strategy="step")


def test_update_bn_matches_torch():
    t, s = same_weights(_bn_net(torch), _bn_net(shrew))
    data = [torch.randn(4, 3) for _ in range(3)]
    TS.update_bn([(d, 0) for d in data], t)
    SS.update_bn([(sh(d), 0) for d in data], s)
    close(s[1].running_mean, t[1].running_mean)
    close(s[1].running_var, t[1].running_var)
    assert s[1].momentum == t[1].momentum == 0.1 and s.training


# -- utils.checkpoint -------------------------------------------------------------------------
def test_utils_checkpoint_variants_and_warnings():
    x = shrew.randn(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = SC.checkpoint(lambda a, k=1.0: (a * k).sin(), x, k=2.0, use_reentrant=False)
    y.sum().backward()
    close(x.grad, (2 * x).cos().detach() * 2)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        SC.checkpoint(shrew.sin, x)
    with pytest.raises(ValueError):
        SC.checkpoint(lambda a, k: a, x, k=1, use_reentrant=True)
    with pytest.raises(ValueError):
        torch.utils.checkpoint.checkpoint(lambda a, k: a, torch.zeros(1), k=1,
                                          use_reentrant=True)
    net = shrew.nn.Sequential(shrew.nn.Linear(3, 3), shrew.nn.ReLU(), shrew.nn.Linear(3, 2))
    inp = shrew.randn(2, 3)
    with pytest.warns(UserWarning, match="checkpoint_sequential"):
        out = SC.checkpoint_sequential(net, 2, inp)
    close(out, net(inp))


# -- func.vmap / functional_call --------------------------------------------------------------
def test_per_sample_gradients_match_torch():
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    t, s = same_weights(t, shrew.nn.Sequential(shrew.nn.Linear(3, 4), shrew.nn.Tanh(),
                                               shrew.nn.Linear(4, 1)))

    def loss_of(func, model):
        def loss(params, x, y):
            out = func.functional_call(model, params, (x.unsqueeze(0),))
            return ((out - y.unsqueeze(0)) ** 2).mean()
        return loss

    xs, ys = torch.randn(5, 3), torch.randn(5, 1)
    tg = TF.vmap(TF.grad(loss_of(TF, t)), in_dims=(None, 0, 0))(
        {k: v.detach() for k, v in t.named_parameters()}, xs, ys)
    sg = SF.vmap(SF.grad(loss_of(SF, s)), in_dims=(None, 0, 0))(
        {k: v.detach() for k, v in s.named_parameters()}, sh(xs), sh(ys))
    assert set(sg) == set(tg)
    for key in tg:
        close(sg[key], tg[key])


def test_vmap_dims_nesting_randomness_and_errors():
    a = torch.randn(2, 3, 4)
    close(SF.vmap(SF.vmap(lambda x: x.sum(0)))(sh(a)), TF.vmap(TF.vmap(lambda x: x.sum(0)))(a))
    f = lambda x, y: (x * y, x.sum())  # noqa: E731
    theirs = TF.vmap(f, in_dims=(1, None), out_dims=(1, 0))(a[0], a[1, :, 0])
    ours = SF.vmap(f, in_dims=(1, None), out_dims=(1, 0))(sh(a[0]), sh(a[1, :, 0]))
    close(ours[0], theirs[0])
    close(ours[1], theirs[1])
    with pytest.raises(RuntimeError, match="randomness error mode"):
        SF.vmap(lambda x: x + shrew.rand(4))(shrew.zeros(2, 4))
    same = SF.vmap(lambda x: x + shrew.rand(4), randomness="same")(shrew.zeros(2, 4))
    close(same[0], same[1])
    for call in (lambda v, z: v.vmap(v_add)(z(2, 3), z(3, 3)),
                 lambda v, z: v.vmap(v_add, in_dims=None)(z(2, 3), z(2, 3)),
                 lambda v, z: v.vmap(lambda x: 1.0)(z(2, 3))):
        with pytest.raises(ValueError):
            call(TF, torch.zeros)
        with pytest.raises(ValueError):
            call(SF, shrew.zeros)


def v_add(x, y):
    return x + y


def test_functional_call_ties_strict_and_restores():
    t = torch.nn.Linear(2, 2)
    t, s = same_weights(t, shrew.nn.Linear(2, 2))
    x = np.ones((1, 2), np.float32)
    w = np.full((2, 2), 0.5, np.float32)
    close(SF.functional_call(s, {"weight": shrew.tensor(w)}, shrew.tensor(x)),
          TF.functional_call(t, {"weight": torch.tensor(w)}, torch.tensor(x)))
    assert s.weight is not None and isinstance(s.weight, shrew.nn.Parameter)
    with pytest.raises(RuntimeError, match="Missing key"):
        SF.functional_call(s, {"weight": shrew.tensor(w)}, shrew.tensor(x), strict=True)
    with pytest.raises(ValueError):
        SF.functional_call(s, ({"weight": shrew.tensor(w)}, {"weight": shrew.tensor(w)}),
                           shrew.tensor(x))

    class Tied(shrew.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = shrew.nn.Linear(2, 2, bias=False)
            self.b = shrew.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, z):
            return self.b(self.a(z))

    tied = Tied()
    out = SF.functional_call(tied, {"a.weight": shrew.tensor(w)}, shrew.tensor(x))
    close(out, x @ w.T @ w.T)
    out = SF.functional_call(tied, {"a.weight": shrew.tensor(w)}, shrew.tensor(x),
                             tie_weights=False)
    close(out, x @ w.T @ tied.b.weight.detach().numpy().T)
