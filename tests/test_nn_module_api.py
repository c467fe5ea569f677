"""Module machinery and containers behave as PyTorch's: names, order, state_dict keys,
hooks, repr, and the same errors (as ShrewError subclasses of PyTorch's error types)."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import shrew
from shrew import nn

torch = pytest.importorskip("torch")


def build(lib):
    """The same small model in either library."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = lib.nn.ModuleList([lib.nn.Linear(3, 4), lib.nn.Linear(4, 4)])
            self.heads = lib.nn.ModuleDict({"a": lib.nn.Linear(4, 2), "b": lib.nn.Identity()})
            self.scales = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2))])
            self.extra = lib.nn.ParameterDict({"shift": lib.nn.Parameter(lib.zeros(2))})
            self.seq = lib.nn.Sequential(OrderedDict([("act", lib.nn.ReLU()),
                                                      ("flat", lib.nn.Flatten())]))
            self.register_buffer("steps", lib.zeros(1))
            self.register_buffer("cache", lib.zeros(2), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return self.heads["a"](self.seq(x)) * self.scales[0] + self.extra["shift"]
    return Net()


def test_names_and_order_match_torch():
    ours, theirs = build(shrew), build(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert ([type(m).__name__ for m in ours.modules()]
            == [type(m).__name__ for m in theirs.modules()])
    assert [n for n, _ in ours.named_parameters(recurse=False)] == []
    assert ours.get_submodule("heads.a") is ours.heads["a"]
    assert ours.get_submodule("") is ours
    with pytest.raises(AttributeError, match="no sub-module 'c'"):
        ours.get_submodule("heads.c")


def test_a_torch_state_dict_loads_and_gives_the_same_output():
    ours, theirs = build(shrew), build(torch)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(shrew.tensor(x)).numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert "cache" not in ours.state_dict()
    assert ours.to(shrew.float64).cache.dtype == shrew.float64  # non-persistent still moves


def test_repr_matches_torch():
    for make in (lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.GELU(),
                                               lib.nn.Dropout(0.1), lib.nn.Flatten(0)),
                 lambda lib: lib.nn.ModuleList([lib.nn.Identity(), lib.nn.Tanh()]),
                 lambda lib: lib.nn.ModuleDict({"x": lib.nn.Sigmoid()}),
                 lambda lib: lib.nn.Unflatten(1, (2, 3))):
        assert repr(make(shrew)) == repr(make(torch))


def test_apply_hooks_and_handles():
    net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 3), nn.ReLU()))
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Linear", "ReLU", "Sequential", "Sequential"]

    calls = []
    pre = net[0].register_forward_pre_hook(lambda m, args: (args[0] * 2.0,))
    post = net.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1.0)
    x = shrew.ones(4, 2)
    with_hooks = net(x).numpy()
    pre.remove()
    post.remove()
    plain = net(x * 2.0).numpy() + 1.0
    np.testing.assert_allclose(with_hooks, plain, rtol=1e-6)
    assert calls == [(4, 3)]
    before = net(x).numpy().copy()  # (the ReLU may give all zeros: compare, not test != 0)
    with net.register_forward_hook(lambda m, a, o: o * 0.0 + 7.0):
        assert (net(x).numpy() == 7.0).all()
    np.testing.assert_array_equal(net(x).numpy(), before)  # the handle's exit removed it


def test_zero_grad_requires_grad_and_dtype_moves():
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm2d(2))
    net[0](shrew.ones(1, 2)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any()
               for p in net[0].parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.double()
    assert {p.dtype for p in net.parameters()} == {shrew.float64}
    assert net[1].running_mean.dtype == shrew.float64
    net.float()
    assert {t.dtype for t in net.state_dict().values()} == {shrew.float32, shrew.int64}
    net.half()
    assert {p.dtype for p in net.parameters()} == {shrew.float16}


def test_list_like_containers():
    layers = [nn.Linear(1, 1) for _ in range(4)]
    ml = nn.ModuleList(layers[:2])
    ml.append(layers[2]).extend([layers[3]])
    assert len(ml) == 4 and ml[-1] is layers[3] and list(ml) == layers
    assert isinstance(ml[1:3], nn.ModuleList) and list(ml[1:3]) == layers[1:3]
    del ml[0]
    assert list(ml) == layers[1:] and [n for n, _ in ml.named_children()] == ["0", "1", "2"]
    ml.insert(0, layers[0])
    assert list(ml) == layers
    with pytest.raises(IndexError, match="ModuleList: index 4 is out of range"):
        ml[4]
    with pytest.raises(shrew.ShrewError, match="item 0 is a int, not a Module"):
        nn.ModuleList([3])

    seq = nn.Sequential(*layers[:2])
    seq.append(layers[2])
    assert len(seq) == 3 and isinstance(seq[:2], nn.Sequential) and seq[-1] is layers[2]
    named = nn.Sequential(OrderedDict([("first", layers[0]), ("second", layers[1])]))
    assert [n for n, _ in named[1:].named_children()] == ["second"]
    assert list(named.state_dict()) == ["first.weight", "first.bias", "second.weight",
                                        "second.bias"]

    pl = nn.ParameterList([shrew.ones(2), nn.Parameter(shrew.zeros(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(list(pl.parameters())) == 2


def test_dict_like_containers():
    md = nn.ModuleDict([("a", nn.ReLU())])
    md["b"] = nn.Tanh()
    md.update({"c": nn.Identity()})
    assert md.keys() == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert isinstance(md.pop("b"), nn.Tanh) and md.keys() == ["a", "c"]
    with pytest.raises(KeyError, match="ModuleDict: no key 'z'"):
        md["z"]
    with pytest.raises(KeyError, match="'keys' is already an attribute"):
        md["keys"] = nn.ReLU()
    pd = nn.ParameterDict({"w": shrew.ones(2)})
    assert isinstance(pd["w"], nn.Parameter) and [n for n, _ in pd.named_parameters()] == ["w"]
    m = nn.Module()
    with pytest.raises(KeyError, match="contain no '.'"):
        m.register_buffer("a.b", shrew.ones(1))
    with pytest.raises(shrew.ShrewError, match="must be a Parameter or None"):
        m.register_parameter("w", shrew.ones(1))
    m.add_module("child", nn.ReLU())
    assert m.get_submodule("child") is m.child


def test_shape_layers_match_torch():
    x = np.arange(24.0).reshape(2, 3, 4)
    for ours, theirs in [(nn.Flatten(), torch.nn.Flatten()),
                         (nn.Flatten(0, 1), torch.nn.Flatten(0, 1)),
                         (nn.Unflatten(2, (2, 2)), torch.nn.Unflatten(2, (2, 2))),
                         (nn.Unflatten(-1, (-1, 2)), torch.nn.Unflatten(-1, (-1, 2))),
                         (nn.Identity(54, unused=1), torch.nn.Identity(54, unused=1))]:
        np.testing.assert_array_equal(ours(shrew.tensor(x)).numpy(),
                                      theirs(torch.tensor(x)).numpy())


def _fused_attention(lib, hooks: str):
    """gpt-fast's Attention: one wqkv weight, loaded from checkpoints that hold wq, wk, wv
    by a load-state-dict pre-hook (its private form, or the public one with the module)."""
    class Attention(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.wqkv = lib.nn.Linear(4, 12, bias=False)
            if hooks == "private":
                self._register_load_state_dict_pre_hook(self.load_hook)
            else:
                self.register_load_state_dict_pre_hook(
                    lambda module, *args: module.load_hook(*args))

        def load_hook(self, state_dict, prefix, *args):
            if prefix + "wq.weight" in state_dict:
                parts = [state_dict.pop(prefix + f"w{n}.weight") for n in "qkv"]
                state_dict[prefix + "wqkv.weight"] = lib.cat(parts)
    return lib.nn.Sequential(Attention(), lib.nn.Linear(12, 2))


@pytest.mark.parametrize("hooks", ["private", "public"])
def test_load_state_dict_pre_hooks_rewrite_the_checkpoint_as_torchs(hooks):
    rng = np.random.default_rng(0)
    checkpoint = {f"0.w{n}.weight": rng.standard_normal((4, 4)).astype(np.float32)
                  for n in "qkv"}
    checkpoint["1.weight"] = rng.standard_normal((2, 12)).astype(np.float32)
    checkpoint["1.bias"] = rng.standard_normal(2).astype(np.float32)
    ours, theirs = _fused_attention(shrew, hooks), _fused_attention(torch, hooks)
    given = {k: shrew.tensor(v) for k, v in checkpoint.items()}
    result = ours.load_state_dict(given)
    expected = theirs.load_state_dict({k: torch.tensor(v) for k, v in checkpoint.items()})
    assert tuple(result) == tuple(expected) == ([], [])
    assert "0.wq.weight" in given  # the hooks rewrote a copy
    for (name, a), (name_t, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert name == name_t
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_load_state_dict_pre_hook_can_fail_the_load_or_be_removed():
    model = nn.Linear(2, 2)
    handle = model._register_load_state_dict_pre_hook(
        lambda state_dict, prefix, meta, strict, missing, unexpected, errors:
        errors.append("checkpoint from another model"))
    before = model.weight.numpy().copy()
    with pytest.raises(shrew.ShrewError, match="another model"):
        model.load_state_dict({"weight": shrew.zeros(2, 2), "bias": shrew.zeros(2)})
    np.testing.assert_array_equal(model.weight.numpy(), before)  # nothing was written
    handle.remove()
    model.load_state_dict({"weight": shrew.zeros(2, 2), "bias": shrew.zeros(2)})
    assert model.weight.abs().sum().item() == 0
