"""The autograd API (shrew.autograd, Tensor's autograd methods, grad modes, custom Functions,
shrew.autograd.functional, shrew.func) against PyTorch on the same programs."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.func

import shrew
import shrew.func

RNG = np.random.default_rng(1)
X = RNG.standard_normal((2, 3))
W = RNG.standard_normal((3, 3))


def close(s, t, rtol=1e-6):
    if isinstance(t, (tuple, list)):
        assert isinstance(s, type(t)) and len(s) == len(t)
        for a, b in zip(s, t):
            close(a, b, rtol)
    elif isinstance(t, dict):
        assert s.keys() == t.keys()
        for k in t:
            close(s[k], t[k], rtol)
    elif t is None:
        assert s is None
    else:
        np.testing.assert_allclose(s.detach().numpy(), t.detach().numpy(), rtol=rtol,
                                   atol=1e-9)


def model(lib, x, w):
    return ((x @ w).tanh() * x).sum(1)


def leaves(lib):
    return (lib.tensor(X, requires_grad=True), lib.tensor(W, requires_grad=True))


def test_autograd_grad_values_and_no_accumulation():
    out = {}
    for lib in (shrew, torch):
        x, w = leaves(lib)
        y = model(lib, x, w)
        gy = lib.tensor([1.0, -2.0], dtype=lib.float64)
        out[lib] = lib.autograd.grad(y, (x, w), grad_outputs=gy)
        assert x.grad is None and w.grad is None
    close(out[shrew], out[torch])


def test_autograd_grad_of_several_outputs_non_leaf_inputs_and_create_graph():
    out = {}
    for lib in (shrew, torch):
        x, w = leaves(lib)
        h = x @ w
        a, b = h.sin().sum(), (h * h).mean()
        gh, = lib.autograd.grad([a, b], [h], create_graph=True)
        (g2,) = lib.autograd.grad(gh.sum(), x)
        out[lib] = (gh, g2)
    close(out[shrew], out[torch])


def test_autograd_grad_unused_inputs():
    for lib in (shrew, torch):
        x, w = leaves(lib)
        y = (x * 2).sum()
        with pytest.raises((shrew.ShrewError, RuntimeError), match="not have been used"):
            lib.autograd.grad(y, (x, w), retain_graph=True)
        gx, gw = lib.autograd.grad(y, (x, w), allow_unused=True, retain_graph=True)
        assert gw is None
        gx, gw = lib.autograd.grad(y, (x, w), materialize_grads=True)
        assert not gw.detach().numpy().any()


def test_backward_with_inputs_accumulates_only_those():
    out = {}
    for lib in (shrew, torch):
        x, w = leaves(lib)
        y = model(lib, x, w).sum()
        y.backward(inputs=[w])
        assert x.grad is None
        out[lib] = w.grad
    close(out[shrew], out[torch])


def test_register_hook_replaces_gradient_and_handle_removes_it():
    out = {}
    for lib in (shrew, torch):
        x, w = leaves(lib)
        h = x @ w
        seen = []
        handle = h.register_hook(lambda g: g * 10)
        x.register_hook(lambda g, seen=seen: seen.append(g.shape))
        h.sin().sum().backward()
        first = x.grad.clone()
        handle.remove()
        x.grad = None
        (x @ w).sin().sum().backward()
        out[lib] = (first, x.grad)
        assert [tuple(s) for s in seen] == [(2, 3), (2, 3)]  # x's hook stayed
    close(out[shrew], out[torch])
    with pytest.raises(shrew.ShrewError, match="doesn't require gradient"):
        shrew.tensor([1.0]).register_hook(lambda g: g)


def test_retain_grad_and_post_accumulate_hook():
    for lib in (shrew, torch):
        x, w = leaves(lib)
        h = x @ w
        assert not h.retains_grad
        h.retain_grad()
        assert h.retains_grad
        fired = []
        w.register_post_accumulate_grad_hook(
            lambda p, fired=fired: fired.append(p.grad is not None))
        h.sum().backward()
        assert h.grad.shape == (2, 3) and fired == [True]


def test_grad_fn_names_and_next_functions():
    for lib in (shrew, torch):
        x, w = leaves(lib)
        y = (x @ w).exp()
        assert y.grad_fn.name() == "ExpBackward0"
        (nxt, _), = y.grad_fn.next_functions
        assert nxt.name() in ("MatmulBackward0", "MmBackward0")
        kinds = [type(f).__name__ if f is not None else None for f, _ in nxt.next_functions]
        assert kinds == ["AccumulateGrad", "AccumulateGrad"]
        assert nxt.next_functions[0][0].variable is x
        assert x.grad_fn is None and x.is_leaf and not y.is_leaf


def test_grad_is_assignable_and_checked_as_torch():
    for lib in (shrew, torch):
        x = lib.ones(3, requires_grad=True)
        x.grad = lib.full((3,), 2.0)
        (x * 3).sum().backward()
        assert x.grad.tolist() == [5.0, 5.0, 5.0]
        bad = [(lib.ones(2), "size"), (lib.ones(3, dtype=lib.float64), "dtype"),
               ([1.0, 2.0, 3.0], "Tensor")]
        for value, words in bad:
            with pytest.raises((RuntimeError, TypeError, shrew.ShrewError), match=words):
                x.grad = value
        assert x.grad.tolist() == [5.0, 5.0, 5.0]
        x.grad = None
        assert x.grad is None
    with pytest.raises(TypeError):
        shrew.ones(1).grad = 1.0


def test_data_detach_and_requires_grad():
    for lib in (shrew, torch):
        x, _ = leaves(lib)
        d = x.data
        assert not d.requires_grad
        x.data = lib.zeros(4, dtype=lib.float64)
        assert x.shape == (4,) and x.requires_grad and x.is_leaf
        y = x * 2
        y.detach_()
        assert y.is_leaf and not y.requires_grad and y.grad_fn is None
        z = lib.ones(2).requires_grad_()
        assert z.requires_grad


def _check_mode(lib, mode):
    x = lib.ones(2, requires_grad=True)
    make = {"no_grad": lambda: lib.no_grad(), "enable_grad": lambda: lib.enable_grad(),
            "inference_mode": lambda: lib.inference_mode(),
            "set_grad": lambda: lib.set_grad_enabled(False)}[mode]
    expect = mode == "enable_grad"
    with make():
        assert (x * 2).requires_grad is expect
        assert lib.is_inference_mode_enabled() is (mode == "inference_mode")
    assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()

    @make()
    def f():
        return (x * 2).requires_grad, lib.is_grad_enabled()
    assert lib.is_grad_enabled()  # decorating changed nothing
    assert f() == (expect, expect)
    assert lib.is_grad_enabled()


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode", "set_grad"])
def test_grad_modes_as_context_managers_and_decorators(mode):
    _check_mode(shrew, mode)
    _check_mode(torch, mode)
    for lib in (shrew, torch):  # bare decorators, as torch allows
        @lib.no_grad
        def g(t):
            return t * 2
        assert not g(lib.ones(1, requires_grad=True)).requires_grad

        @lib.inference_mode
        def h(t):
            return t * 2
        assert not h(lib.ones(1, requires_grad=True)).requires_grad
    for lib in (shrew, torch):  # the function form sets the mode at once
        lib.set_grad_enabled(False)
        assert not lib.is_grad_enabled()
        lib.set_grad_enabled(True)
        with lib.no_grad():
            with lib.inference_mode(False):  # as torch: recording on, not inference
                assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()


# -- custom Function ------------------------------------------------------------------------
def _cube_classes(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x ** 3 * scale, (x > 0)

        @staticmethod
        def backward(ctx, g, _g_mask):
            x, = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return g * 3 * x * x * ctx.scale, None

    class Exp(lib.autograd.Function):  # the setup_context style
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.set_materialize_grads(False)

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y

    return Cube, Exp


def test_custom_function_matches_torch():
    out = {}
    for lib in (shrew, torch):
        Cube, Exp = _cube_classes(lib)
        x = lib.tensor(X, requires_grad=True)
        y, mask = Cube.apply(x, 2.0)
        z = Exp.apply(y * 0.1)
        assert not mask.requires_grad and y.requires_grad
        (z.sum() + y.sum()).backward()
        out[lib] = (y, z, x.grad)
    close(out[shrew], out[torch])


def test_custom_function_gradcheck_and_gradgradcheck():
    Cube, Exp = _cube_classes(shrew)
    x = shrew.tensor(X, requires_grad=True)
    assert shrew.autograd.gradcheck(lambda t: Cube.apply(t, 2.0)[0], (x,))
    assert shrew.autograd.gradcheck(Exp.apply, x, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert shrew.autograd.gradgradcheck(lambda t: (t.sin() * t).sum(0), (x,))

    class Wrong(shrew.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    assert not shrew.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(shrew.ShrewError, match="differs"):
        shrew.autograd.gradcheck(Wrong.apply, (x,))


def test_custom_function_errors():
    class TooMany(shrew.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = shrew.tensor(X, requires_grad=True)
    with pytest.raises(shrew.ShrewError, match="incorrect number of gradients"):
        TooMany.apply(x).sum().backward()

    class Saves(shrew.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * 2

        @staticmethod
        def backward(ctx, g):
            t, = ctx.saved_tensors
            return g * t

    c = shrew.tensor(X)
    w = shrew.tensor(X, requires_grad=True)
    y = Saves.apply(c) * w + Saves.apply(w)
    with shrew.no_grad():
        w.mul_(2)
    with pytest.raises(shrew.ShrewError, match="modified by an inplace operation"):
        y.sum().backward()


# -- autograd.functional -------------------------------------------------------------------
def _f(lib):
    return lambda x, w: ((x @ w).sin() * x).sum(0)


def _scalar(lib):
    return lambda x, w: ((x @ w).sin() * x).sum()


def _functional_case(lib, name, v_out, vi):
    F = lib.autograd.functional
    x, w = lib.tensor(X), lib.tensor(W)
    v_out, vi = lib.tensor(v_out), tuple(lib.tensor(a) for a in vi)
    cases = {
        "jacobian": lambda: F.jacobian(_f(lib), (x, w)),
        "hessian": lambda: F.hessian(_scalar(lib), (x, w)),
        "vjp": lambda: F.vjp(_f(lib), (x, w), v_out),
        "jvp": lambda: F.jvp(_f(lib), (x, w), vi),
        "hvp": lambda: F.hvp(_scalar(lib), (x, w), vi),
        "vhp": lambda: F.vhp(_scalar(lib), (x, w), vi),
    }
    return cases[name]()


@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"])
def test_autograd_functional_matches_torch(name):
    v_out = RNG.standard_normal(3)
    vi = (RNG.standard_normal(X.shape), RNG.standard_normal(W.shape))
    close(_functional_case(shrew, name, v_out, vi), _functional_case(torch, name, v_out, vi),
          rtol=1e-5)


# -- shrew.func ----------------------------------------------------------------------------
def _tree_loss(params, x):
    h = (x @ params["w"]).tanh()
    return (h * params["b"][0]).sum() + (params["b"][1] ** 2).sum()


def _func_case(lib, fn, name):
    params = {"w": lib.tensor(W), "b": [lib.tensor(X[0]), lib.tensor(X[1])]}
    x = lib.tensor(X)

    def f(t):
        return (t.sin() * t).sum(0)

    def with_aux(p, t):
        return _tree_loss(p, t), t * 2

    cases = {
        "grad": lambda: fn.grad(_tree_loss)(params, x),
        "grad_argnums": lambda: fn.grad(_tree_loss, argnums=(0, 1))(params, x),
        "grad_and_value": lambda: fn.grad_and_value(_tree_loss)(params, x),
        "grad_aux": lambda: fn.grad(with_aux, has_aux=True)(params, x),
        "vjp": lambda: fn.vjp(f, x)[1](lib.tensor(W[0])),
        "jvp": lambda: fn.jvp(f, (x,), (lib.tensor(X[::-1].copy()),)),
        "jacrev": lambda: fn.jacrev(_tree_loss)(params, x),
        "jacfwd": lambda: fn.jacfwd(f)(x),
        "hessian": lambda: fn.hessian(lambda t: (t.sin() * t).sum())(x),
    }
    return cases[name]()


@pytest.mark.parametrize("name", ["grad", "grad_argnums", "grad_and_value", "grad_aux",
                                  "vjp", "jvp", "jacrev", "jacfwd", "hessian"])
def test_func_transforms_match_torch_func(name):
    close(_func_case(shrew, shrew.func, name), _func_case(torch, torch.func, name), rtol=1e-5)


def _grad_through_closure(lib, fn):
    w = lib.tensor(W, requires_grad=True)

    def f(t):
        return (t @ w).sin().sum()

    g = fn.grad(f)(lib.tensor(X))
    (g ** 2).sum().backward()
    return g, w.grad


def test_func_grad_composes_with_backward():
    close(_grad_through_closure(shrew, shrew.func), _grad_through_closure(torch, torch.func),
          rtol=1e-5)
