"""In-place operations (shrew/ops/inplace.py) against PyTorch on the same programs: values,
gradients through rebased history and view writes, version counters and their errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from support import device_or_fail

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4)).astype(np.float32)
POS = (np.abs(A) + 0.5).astype(np.float32)
ROW = RNG.standard_normal(4).astype(np.float32)


def both(fn, *arrays, **kw):
    """fn on shrew and torch tensors made from the arrays."""
    s = fn(*(shrew.tensor(a, **kw) for a in arrays))
    t = fn(*(torch.tensor(a, **kw) for a in arrays))
    return s, t


# (name, program on x (and y), input arrays): each program writes x in place.
PROGRAMS = [
    ("add_", lambda x, y: x.add_(y, alpha=0.5), (A, B)),
    ("add_ row", lambda x, y: x.add_(y), (A, ROW)),
    ("add_ scalar", lambda x, y: x.add_(2.5), (A, B)),
    ("sub_", lambda x, y: x.sub_(y, alpha=2), (A, B)),
    ("mul_", lambda x, y: x.mul_(y), (A, B)),
    ("div_", lambda x, y: x.div_(y), (A, POS)),
    ("div_ floor", lambda x, y: x.div_(y, rounding_mode="floor"), (A, POS)),
    ("div_ trunc", lambda x, y: x.div_(y, rounding_mode="trunc"), (A, POS)),
    ("pow_", lambda x, y: x.pow_(2), (POS, B)),
    ("clamp_", lambda x, y: x.clamp_(-0.5, 0.5), (A, B)),
    ("clamp_min_", lambda x, y: x.clamp_min_(0.1), (A, B)),
    ("clamp_max_", lambda x, y: x.clamp_max_(0.1), (A, B)),
    ("zero_", lambda x, y: x.zero_(), (A, B)),
    ("fill_", lambda x, y: x.fill_(1.25), (A, B)),
    ("copy_", lambda x, y: x.copy_(y), (A, B)),
    ("copy_ broadcast", lambda x, y: x.copy_(y), (A, ROW)),
    ("relu_", lambda x, y: x.relu_(), (A, B)),
    ("exp_", lambda x, y: x.exp_(), (A, B)),
    ("log_", lambda x, y: x.log_(), (POS, B)),
    ("sqrt_", lambda x, y: x.sqrt_(), (POS, B)),
    ("neg_", lambda x, y: x.neg_(), (A, B)),
    ("abs_", lambda x, y: x.abs_(), (A, B)),
    ("sigmoid_", lambda x, y: x.sigmoid_(), (A, B)),
    ("tanh_", lambda x, y: x.tanh_(), (A, B)),
    ("floor_", lambda x, y: x.floor_(), (A, B)),
    ("round_", lambda x, y: x.round_(), (A, B)),
    ("addcmul_", lambda x, y: x.addcmul_(y, y, value=0.5), (A, B)),
    ("addcdiv_", lambda x, y: x.addcdiv_(y, y.abs() + 1, value=2), (A, B)),
    ("lerp_", lambda x, y: x.lerp_(y, 0.3), (A, B)),
    ("+=", lambda x, y: x.__iadd__(y), (A, B)),
    ("-=", lambda x, y: x.__isub__(y), (A, B)),
    ("*=", lambda x, y: x.__imul__(y), (A, B)),
    ("/=", lambda x, y: x.__itruediv__(y), (A, POS)),
    ("**=", lambda x, y: x.__ipow__(3), (A, B)),
    ("//=", lambda x, y: x.__ifloordiv__(y), (A, POS)),
    ("%=", lambda x, y: x.__imod__(y), (A, POS)),
]


@pytest.mark.parametrize("name,program,arrays", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_values_match_torch_and_the_tensor_is_written(name, program, arrays):
    s, t = both(lambda x, y: (x, program(x, y)), *arrays)
    assert s[1] is s[0] and t[1] is t[0]  # returns the tensor itself
    np.testing.assert_allclose(s[0].numpy(), t[0].numpy(), rtol=1e-5, atol=1e-6)
    assert s[0]._version == t[0]._version == 1


DIFFERENTIABLE = [p for p in PROGRAMS if p[0] != "//="]  # torch: no floor_divide_ derivative


@pytest.mark.parametrize("name,program,arrays", DIFFERENTIABLE, ids=[p[0] for p in DIFFERENTIABLE])
def test_gradients_through_rebased_history_match_torch(name, program, arrays):
    """y = x * w (a non-leaf), then y written in place: grads of x and of the other
    operand as PyTorch's (which rebases y's history onto the in-place op)."""
    w = RNG.standard_normal(arrays[0].shape).astype(np.float32)

    def run(lib):
        x = lib.tensor(arrays[0], requires_grad=True)
        other = lib.tensor(arrays[1], requires_grad=True)
        y = x * lib.tensor(w)
        program(y, other)
        (y * y).sum().backward()
        return x.grad, other.grad, y

    sx, so, sy = run(shrew)
    tx, to, ty = run(torch)
    # copy_ cuts x off: torch's x.grad is zeros, shrew's None (no path reaches x)
    got = np.zeros(arrays[0].shape) if sx is None and name.startswith("copy_") else sx.numpy()
    np.testing.assert_allclose(got, tx.numpy(), rtol=1e-4, atol=1e-5)
    if to is None:
        assert so is None or not np.any(so.numpy())
    else:
        np.testing.assert_allclose(so.numpy(), to.numpy(), rtol=1e-4, atol=1e-5)
    assert not sy.is_leaf and sy.requires_grad


def test_rebase_names_the_in_place_op_and_earlier_consumers_keep_their_gradient():
    def run(lib):
        x = lib.tensor(A, requires_grad=True)
        y = x.sin()
        s = y.sum()          # recorded before the write: its gradient is sin's
        y.mul_(lib.tensor(B))
        assert y._version == 1
        (s + y.sum()).backward()
        return x.grad, y.grad_fn.name()

    (sg, sname), (tg, tname) = run(shrew), run(torch)
    np.testing.assert_allclose(sg.numpy(), tg.numpy(), rtol=1e-5)
    assert sname == tname == "MulBackward0"


def test_leaf_that_requires_grad_cannot_be_written_outside_no_grad():
    x = shrew.tensor(A, requires_grad=True)
    for write in (lambda: x.add_(1.0), lambda: x.mul_(2), lambda: x.zero_(),
                  lambda: x.__iadd__(1.0)):
        with pytest.raises(shrew.ShrewError, match="leaf tensor that requires grad"):
            write()
    with pytest.raises(shrew.ShrewError, match="view of a leaf"):
        x[0].mul_(2)
    np.testing.assert_array_equal(x.numpy(), A)  # unchanged
    with torch.no_grad():
        xt = torch.tensor(A, requires_grad=True)
        xt.mul_(2)
    with shrew.no_grad():
        x.mul_(2)
    np.testing.assert_allclose(x.numpy(), xt.detach().numpy())
    assert x.is_leaf and x.requires_grad


def test_write_through_views_is_seen_by_the_base_with_torch_gradients():
    def run(lib):
        x = lib.tensor(A, requires_grad=True)
        base = x * 2
        base[1:].mul_(3)                        # narrow (slicing)
        base.transpose(0, 1)[0].add_(1.0)       # transpose, then narrow
        v = base[0]
        v.mul_(2.0)                             # a view kept: its own grad_fn is rebased
        base.reshape(12)[5:7].exp_()            # reshape view, then a narrow of it
        (base * base).sum().backward()
        return x.grad, base, v

    (sg, sb, sv), (tg, tb, tv) = run(shrew), run(torch)
    np.testing.assert_allclose(sb.detach().numpy(), tb.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(sv.detach().numpy(), tv.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(sg.numpy(), tg.numpy(), rtol=1e-4, atol=1e-6)
    assert sb._version == tb._version == sv._version == tv._version


def test_views_share_memory_and_version_counter():
    for lib in (shrew, torch):
        base = lib.zeros(3, 4)
        views = [base[1], base.transpose(0, 1), base.reshape(12), base.narrow(1, 1, 2),
                 base.unsqueeze(0).squeeze(0), base.detach(), base.T, base.permute(1, 0)]
        views[0].fill_(5.0)
        views[5][2].add_(1.0)
        assert [v._version for v in views] == [2] * len(views)
        assert base._version == 2
        np.testing.assert_array_equal(base[1].numpy(), [5, 5, 5, 5])
        assert base[2].numpy().tolist() == [1, 1, 1, 1]


def test_reshape_that_copies_is_not_a_view():
    base = shrew.zeros(3, 4)
    copy = base.transpose(0, 1).reshape(12)  # not expressible as a view: a copy
    copy.fill_(1.0)
    assert not base.numpy().any() and base._version == 0 and copy._version == 1


def test_modifying_a_saved_tensor_is_a_version_error_naming_op_and_versions():
    w = shrew.tensor(A, requires_grad=True)
    c = shrew.tensor(B)
    loss = (c * w).sum()
    c.add_(1.0)
    with pytest.raises(shrew.ShrewError, match=r"modified by an inplace operation.*MulBackward0"
                       r".*version 1; expected version 0.*add_"):
        loss.backward()
    wt = torch.tensor(A, requires_grad=True)
    ct = torch.tensor(B)
    loss_t = (ct * wt).sum()
    ct.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss_t.backward()


@pytest.mark.parametrize("input_requires_grad", [False, True])
def test_optimizer_step_between_forward_and_backward_as_torch(input_requires_grad):
    """The weight is saved (for the input's gradient) only when the input requires grad:
    then a step before backward is a version error, otherwise backward runs, as torch's."""
    outcomes = []
    for lib in (shrew, torch):
        lin = lib.nn.Linear(3, 2)
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)
        x = lib.tensor(A[:, :3], requires_grad=input_requires_grad)
        out = lin(x).relu().sum()
        for p in lin.parameters():
            p.grad = lib.ones_like(p)
        opt.step()
        try:
            out.backward()
            outcomes.append("ran")
        except (shrew.ShrewError, RuntimeError) as e:
            assert "modified by an inplace operation" in str(e)
            outcomes.append("refused")
    assert outcomes == ["refused", "refused"] if input_requires_grad else ["ran", "ran"]


def test_a_write_through_detach_is_seen_and_counted():
    x = shrew.tensor(A, requires_grad=True)
    y = x.exp()
    y.detach().zero_()
    assert not y.numpy().any()
    with pytest.raises(shrew.ShrewError, match="output of ExpBackward0"):
        y.sum().backward()


def test_unsaved_tensors_may_be_written():
    """Ops whose gradient does not read an input (add, sum) do not mind a later write."""
    def run(lib):
        x = lib.tensor(A, requires_grad=True)
        c = lib.tensor(B)
        loss = (x + c).sum()
        c.mul_(3)
        loss.backward()
        return x.grad
    np.testing.assert_allclose(run(shrew).numpy(), run(torch).numpy())


def test_copy_broadcasts_casts_and_moves():
    dst = shrew.zeros(2, 3, dtype=shrew.float64)
    dst.copy_(shrew.tensor([1, 2, 3]))
    np.testing.assert_array_equal(dst.numpy(), [[1, 2, 3], [1, 2, 3]])
    assert dst.dtype is shrew.float64
    ints = shrew.zeros(3, dtype=shrew.int64)
    ints.copy_(shrew.tensor([1.7, -2.2, 3.0]))
    assert ints.tolist() == torch.zeros(3, dtype=torch.int64).copy_(
        torch.tensor([1.7, -2.2, 3.0])).tolist()
    with pytest.raises(shrew.ShapeError, match=r"copy_.*\[2, 3\].*broadcast"):
        dst.copy_(shrew.ones(4))
    np.testing.assert_array_equal(dst.numpy(), [[1, 2, 3], [1, 2, 3]])  # unchanged


def test_bad_writes_are_refused_before_anything_is_written():
    x = shrew.tensor(A)
    with pytest.raises(shrew.ShapeError, match=r"add_: output with shape \[3, 4\]"):
        x.add_(shrew.ones(2, 3, 4))
    ints = shrew.tensor([1, 2, 3])
    with pytest.raises(shrew.DTypeError, match="can't be cast"):
        ints += 1.5
    with pytest.raises(shrew.ShrewError, match="single memory location"):
        shrew.tensor(ROW).expand(3, 4).add_(1.0)
    with pytest.raises(TypeError):
        x *= "a"
    np.testing.assert_array_equal(x.numpy(), A)
    assert ints.tolist() == [1, 2, 3] and x._version == 0


def test_integer_and_bool_augmented_assignment():
    for lib in (shrew, torch):
        i = lib.tensor([7, -7, 5])
        i //= 2
        assert i.tolist() == [3, -4, 2]
        i %= 3
        assert i.tolist() == [0, 2, 2]
        m = lib.tensor([True, False, True])
        m &= lib.tensor([True, True, False])
        assert m.tolist() == [True, False, False]
        m |= lib.tensor([False, True, False])
        assert m.tolist() == [True, True, False]


def test_random_fills():
    shrew.manual_seed(0)
    x = shrew.empty_like(shrew.zeros(20000)) if hasattr(shrew, "empty_like") \
        else shrew.zeros(20000)
    assert 1.0 <= x.uniform_(1.0, 3.0).numpy().min() and x.numpy().max() < 3.0
    assert abs(x.numpy().mean() - 2.0) < 0.05
    x.normal_(5.0, 2.0)
    assert abs(x.numpy().mean() - 5) < 0.1 and abs(x.numpy().std() - 2) < 0.1
    x.bernoulli_(0.25)
    assert set(np.unique(x.numpy())) <= {0.0, 1.0} and abs(x.numpy().mean() - 0.25) < 0.02
    x.exponential_(4.0)
    assert x.numpy().min() >= 0 and abs(x.numpy().mean() - 0.25) < 0.02
    assert x._version == 4
    with pytest.raises(shrew.DTypeError, match="uniform_"):
        shrew.zeros(3, dtype=shrew.int64).uniform_()


def test_optimizer_hot_path_counts_versions_like_torch():
    for lib in (shrew, torch):
        p = lib.nn.Parameter(lib.ones(3))
        with lib.no_grad():
            p.add_(lib.ones(3), alpha=-0.5)
            p.copy_(p * 2)
        assert p._version == 2 and p.tolist() == [1.0, 1.0, 1.0]


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), data=st.data())
def test_narrow_write_matches_torch(rows, cols, data):
    start = data.draw(st.integers(0, cols - 1))
    length = data.draw(st.integers(1, cols - start))
    arr = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) / 7

    def run(lib):
        x = lib.tensor(arr, requires_grad=True)
        y = x * 1.0
        y.narrow(1, start, length).mul_(lib.tensor(arr[:, :length] - 1))
        y.narrow(1, start, length).sigmoid_()
        (y * lib.tensor(arr + 1)).sum().backward()
        return y, x.grad

    (sy, sg), (ty, tg) = run(shrew), run(torch)
    np.testing.assert_allclose(sy.detach().numpy(), ty.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(sg.numpy(), tg.numpy(), rtol=1e-5)


def test_in_place_on_opencl_matches_cpu():
    device = device_or_fail("opencl")
    out = {}
    for dev in ("cpu", device):
        x = shrew.tensor(A, device=dev, requires_grad=True)
        base = x * 2
        base[1:].mul_(3)
        base.transpose(0, 1)[0].add_(1.0)
        base += shrew.tensor(B, device=dev)
        (base * base).sum().backward()
        out[dev] = (base.detach().numpy(), x.grad.numpy(), base._version)
    np.testing.assert_allclose(out["cpu"][0], out[device][0], rtol=1e-5)
    np.testing.assert_allclose(out["cpu"][1], out[device][1], rtol=1e-5)
    assert out["cpu"][2] == out[device][2] == 3


@pytest.mark.parametrize("weight", [0.05, 0.5, 0.95, 1.0])
def test_lerp_in_place_is_lerp(weight):
    """lerp_ takes lerp's formula (from the nearer end: weight 1 gives exactly `end`), as
    PyTorch's two do."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(
        np.float32) * 1e4
    written = shrew.tensor(a).lerp_(shrew.tensor(b), weight).numpy()
    np.testing.assert_array_equal(written, shrew.lerp(shrew.tensor(a), shrew.tensor(b),
                                                      weight).numpy())
    np.testing.assert_allclose(written, torch.tensor(a).lerp_(torch.tensor(b), weight).numpy(),
                               rtol=1e-6, atol=1e-6)
    if weight == 1.0:
        np.testing.assert_array_equal(written, b)
