"""torch._foreach_*: every one of PyTorch's 91, against torch on lists of tensors of
different shapes, with each form of the second operand (a number, a list of numbers, a
0-d tensor, a list of tensors); the in-place forms write into the given tensors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import shrew

TORCH_NAMES = sorted(n for n in dir(torch) if n.startswith("_foreach_"))
SHAPES = [(3,), (2, 4), (1,)]
UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
         "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
         "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]
# positive values inside (0, 1) keep every unary function finite (acos, log, rsqrt, ...)
_INSIDE = {"acos", "asin", "log", "log10", "log1p", "log2", "rsqrt", "sqrt", "lgamma",
           "reciprocal"}


def _lists(seed: int, inside: bool = False) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    arrays = [(rng.uniform(0.1, 0.9, s) if inside else rng.uniform(-2, 2, s)).astype(
        np.float32) for s in SHAPES]
    return [shrew.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


def _same(ours, theirs) -> None:
    assert type(ours) is type(theirs) or isinstance(ours, (list, tuple))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-6, atol=1e-6)


def test_every_name_torch_has() -> None:
    assert len(TORCH_NAMES) == 91
    assert [n for n in TORCH_NAMES if not callable(getattr(shrew, n, None))] == []


@pytest.mark.parametrize("name", UNARY)
def test_unary(name: str) -> None:
    ours, theirs = _lists(0, inside=name in _INSIDE)
    _same(getattr(shrew, f"_foreach_{name}")(ours), getattr(torch, f"_foreach_{name}")(theirs))
    assert getattr(shrew, f"_foreach_{name}_")(ours) is ours
    getattr(torch, f"_foreach_{name}_")(theirs)
    _same(ours, theirs)


def _operands(lib, seed: int) -> list:
    other = _lists(seed)[0 if lib is shrew else 1]
    return [1.5, [0.5, -2.0, 3.0], lib.tensor(0.75), other]


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum",
                                  "clamp_min", "clamp_max", "pow"])
def test_binary_with_each_form_of_operand(name: str) -> None:
    for k in range(4):
        if name in ("maximum", "minimum") and k == 2:
            continue  # (torch takes no 0-d tensor there)
        ours, theirs = _lists(1, inside=name == "pow")
        a, b = _operands(shrew, 2)[k], _operands(torch, 2)[k]
        _same(getattr(shrew, f"_foreach_{name}")(ours, a),
              getattr(torch, f"_foreach_{name}")(theirs, b))
        getattr(shrew, f"_foreach_{name}_")(ours, a)
        getattr(torch, f"_foreach_{name}_")(theirs, b)
        _same(ours, theirs)
    ours, theirs = _lists(3)
    other, other_t = _lists(4)
    _same(shrew._foreach_add(ours, other, alpha=2), torch._foreach_add(theirs, other_t, alpha=2))
    _same(shrew._foreach_sub(ours, other, alpha=0.5),
          torch._foreach_sub(theirs, other_t, alpha=0.5))


def test_the_rest() -> None:
    (a, at), (b, bt), (c, ct) = _lists(5), _lists(6), _lists(7, inside=True)
    for value, value_t in ((2.0, 2.0), ([1.0, 0.5, -1.0], [1.0, 0.5, -1.0]),
                           (shrew.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0]))):
        _same(shrew._foreach_addcmul(a, b, c, value), torch._foreach_addcmul(at, bt, ct, value_t))
        _same(shrew._foreach_addcdiv(a, b, c, value), torch._foreach_addcdiv(at, bt, ct, value_t))
    _same(shrew._foreach_addcdiv(a, b, c), torch._foreach_addcdiv(at, bt, ct))
    _same(shrew._foreach_lerp(a, b, 0.3), torch._foreach_lerp(at, bt, 0.3))
    _same(shrew._foreach_lerp(a, b, c), torch._foreach_lerp(at, bt, ct))
    _same(shrew._foreach_pow(2.0, a), torch._foreach_pow(2.0, at))
    for ord_ in (2, 1, float("inf")):
        _same(shrew._foreach_norm(a, ord_), torch._foreach_norm(at, ord_))
    _same(shrew._foreach_powsum(a, 3), torch._foreach_powsum(at, 3))
    _same(shrew._foreach_max(a), torch._foreach_max(at))
    _same(shrew._foreach_mm([shrew.ones(2, 3)], [shrew.ones(3, 2)]),
          torch._foreach_mm([torch.ones(2, 3)], [torch.ones(3, 2)]))
    clones = shrew._foreach_clone(a)
    assert all(x is not y and np.array_equal(x.numpy(), y.numpy()) for x, y in zip(clones, a))
    shrew._foreach_copy_(a, b)
    torch._foreach_copy_(at, bt)
    _same(a, at)
    shrew._foreach_lerp_(a, c, 0.25)
    torch._foreach_lerp_(at, ct, 0.25)
    _same(a, at)
    shrew._foreach_addcmul_(a, b, c, value=0.5)
    torch._foreach_addcmul_(at, bt, ct, value=0.5)
    _same(a, at)
    shrew._foreach_zero_(a)
    assert all(not x.any() for x in a)


def test_a_list_of_another_length_is_refused_as_torch_does() -> None:
    ours, theirs = _lists(8)
    with pytest.raises(RuntimeError):
        torch._foreach_add(theirs, [1.0])
    with pytest.raises(shrew.ShapeError, match="_foreach_add: 3 tensors, but 1 operands"):
        shrew._foreach_add(ours, [1.0])


def test_an_optimizer_step_written_with_them_trains_as_torch() -> None:
    """A Lion step as lion-pytorch's foreach version writes it, on both frameworks."""
    def step(lib, params, grads, moments, lr=0.01, beta1=0.9, beta2=0.99, wd=0.1):
        lib._foreach_mul_(params, 1 - lr * wd)
        update = lib._foreach_clone(moments)
        lib._foreach_lerp_(update, grads, 1 - beta1)
        lib._foreach_sign_(update)
        lib._foreach_add_(params, update, alpha=-lr)
        lib._foreach_lerp_(moments, grads, 1 - beta2)
    (p, pt), (g, gt) = _lists(9), _lists(10)
    m, mt = [shrew.zeros(*s) for s in SHAPES], [torch.zeros(*s) for s in SHAPES]
    for _ in range(3):
        step(shrew, p, g, m)
        step(torch, pt, gt, mt)
    _same(p, pt)
    _same(m, mt)
