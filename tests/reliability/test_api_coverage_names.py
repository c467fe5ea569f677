"""The most used PyTorch names that scripts/api_coverage.py found missing, against torch:
torch.jit's scriptability helpers, torch.compile, torch.autograd.Variable, torch.dtype, the
math constants and torch.autocast."""
import inspect

import numpy as np
import pytest

import shrew

torch = pytest.importorskip("torch")


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()
            if not p.name.startswith("_")]


@pytest.mark.parametrize("name", ["ignore", "unused", "export", "script", "trace", "save",
                                  "load", "is_scripting", "is_tracing"])
def test_jit_signatures_are_torchs(name):
    ours, theirs = _params(getattr(shrew.jit, name)), _params(getattr(torch.jit, name))
    assert [p[:2] for p in ours] == [p[:2] for p in theirs]


def test_jit_helpers_let_scriptable_code_run_as_python():
    assert shrew.jit.is_scripting() is torch.jit.is_scripting() is False
    assert shrew.jit.is_tracing() is torch.jit.is_tracing() is False
    assert shrew.jit.Final is torch.jit.Final

    class Block(shrew.nn.Module):
        scale: shrew.jit.Final[float]

        def __init__(self):
            super().__init__()
            self.scale = 2.0

        @shrew.jit.ignore
        def extra(self, x):
            return x + 1

        @shrew.jit.ignore(drop=True)
        def dropped(self, x):
            return x * 3

        @shrew.jit.unused
        def forward(self, x):
            return self.dropped(self.extra(x)) * self.scale

    out = Block()(shrew.tensor([1.0, 2.0]))
    assert out.tolist() == [12.0, 18.0]


@pytest.mark.parametrize("call", [lambda j, m: j.script(m), lambda j, m: j.trace(m, None),
                                  lambda j, m: j.save(m, "m.pt"), lambda j, m: j.load("m.pt")])
def test_torchscript_itself_is_refused_with_what_to_use(call):
    with pytest.raises(shrew.UnsupportedError, match="TorchScript") as info:
        call(shrew.jit, shrew.nn.Linear(2, 2))
    assert isinstance(info.value, NotImplementedError)


def test_compile_returns_a_callable_computing_the_same():
    assert _params(shrew.compile) == _params(torch.compile)
    model = shrew.nn.Linear(3, 2)
    compiled = shrew.compile(model, mode="max-autotune", backend="inductor", fullgraph=True)
    x = shrew.randn(4, 3)
    assert np.array_equal(compiled(x).numpy(), model(x).numpy())

    @shrew.compile(dynamic=True)
    def double(t):
        return t * 2

    assert double(x).tolist() == (x * 2).tolist()
    assert shrew.compiler.is_compiling() is torch.compiler.is_compiling() is False
    assert shrew.compiler.disable(double) is double


def test_variable_is_a_detached_alias_as_in_torch():
    data = np.arange(3.0, dtype=np.float32)
    for lib in (torch, shrew):
        t = lib.tensor(data)
        v = lib.autograd.Variable(t, requires_grad=True)
        assert v is not t and v.requires_grad and v.is_leaf and not t.requires_grad
        assert isinstance(t, lib.autograd.Variable)
        (v * v).sum().backward()
        assert v.grad.tolist() == [0.0, 2.0, 4.0] and t.grad is None
        with lib.no_grad():
            v.mul_(2)  # the memory is shared
        assert t.tolist() == [0.0, 2.0, 4.0]
        assert lib.autograd.Variable(t).requires_grad is False
    assert not isinstance(3, shrew.autograd.Variable)
    with pytest.raises(TypeError, match="has to be a tensor"):
        torch.autograd.Variable(3)
    with pytest.raises(shrew.ShrewTypeError, match="has to be a tensor, but got int"):
        shrew.autograd.Variable(3)


def test_dtype_constants_and_autocast():
    assert isinstance(shrew.float32, shrew.dtype) and isinstance(torch.float32, torch.dtype)
    for name in ("pi", "e", "inf"):
        assert getattr(shrew, name) == getattr(torch, name)
    assert np.isnan(shrew.nan) and np.isnan(torch.nan)
    assert shrew.autocast is shrew.amp.autocast
    with shrew.autocast("cpu", dtype=shrew.bfloat16), torch.autocast("cpu", dtype=torch.bfloat16):
        assert (shrew.ones(2) @ shrew.ones(2)).dtype == shrew.bfloat16  # as PyTorch's:
        assert (torch.ones(2) @ torch.ones(2)).dtype == torch.bfloat16  # autocast casts
