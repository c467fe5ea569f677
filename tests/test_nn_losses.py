"""Losses agree with PyTorch (functions and modules, every reduction): values and
gradients in float64; bad input raises errors naming the loss and the shapes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew import nn
from shrew.nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
REDUCTIONS = ["mean", "sum", "none"]


def pair(data, grad=True):
    data = np.asarray(data)
    return (shrew.tensor(data, requires_grad=grad and data.dtype.kind == "f"),
            torch.tensor(data, requires_grad=grad and data.dtype.kind == "f"))


def rng(seed):
    return np.random.default_rng(seed)


def agree(ours_fn, theirs_fn, ours_in, theirs_in, rtol=1e-10):
    """Same value, and the same gradients of sum(out * w) for every float input that
    requires grad."""
    out, ref = ours_fn(*ours_in), theirs_fn(*theirs_in)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=rtol, atol=1e-12)
    w = rng(5).standard_normal(out.shape)
    grads = (out * shrew.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for o, t in zip(ours_in, theirs_in):
        if isinstance(o, shrew.Tensor) and o.requires_grad:
            np.testing.assert_allclose(grads[o].numpy(), t.grad.numpy(), rtol=rtol, atol=1e-12)


# -- cross_entropy / nll_loss ------------------------------------------------------------------
class_shapes = st.tuples(st.integers(1, 4), st.integers(2, 5),
                         st.lists(st.integers(1, 3), max_size=2))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@settings(max_examples=12, deadline=None)
@given(shape=class_shapes, seed=st.integers(0, 2**16), weighted=st.booleans(),
       ignore=st.sampled_from([None, -100, 1]), smoothing=st.sampled_from([0.0, 0.25]))
def test_cross_entropy_with_indices_matches_torch(reduction, shape, seed, weighted, ignore,
                                                  smoothing):
    n, c, extra = shape
    r = rng(seed)
    x = r.standard_normal((n, c, *extra))
    y = r.integers(0, c, (n, *extra))
    kw = {"reduction": reduction, "label_smoothing": smoothing}
    if ignore is not None:
        kw["ignore_index"] = ignore
        y.reshape(-1)[0] = ignore  # at least one ignored target
        if (y == ignore).all() and reduction == "mean":
            y.reshape(-1)[-1] = 0 if ignore != 0 else 1
    (sx, tx), (sy, ty) = pair(x), pair(y)
    (sw, tw) = pair(r.uniform(0.5, 2.0, c), grad=False) if weighted else (None, None)
    agree(lambda a: F.cross_entropy(a, sy, weight=sw, **kw),
          lambda a: TF.cross_entropy(a, ty, weight=tw, **kw), [sx], [tx])
    if not smoothing:
        lx, tlx = pair(x)
        agree(lambda a: F.nll_loss(a.log_softmax(1), sy, weight=sw, **{
                  k: v for k, v in kw.items() if k != "label_smoothing"}),
              lambda a: TF.nll_loss(a.log_softmax(1), ty, weight=tw, **{
                  k: v for k, v in kw.items() if k != "label_smoothing"}), [lx], [tlx])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 2, 2), (5,)])
def test_cross_entropy_with_probabilities_matches_torch(reduction, smoothing, shape):
    r = rng(1)
    (sx, tx) = pair(r.standard_normal(shape))
    (sp, tp) = pair(r.dirichlet(np.ones(shape[1 if len(shape) > 1 else 0]),
                                shape[:1] + shape[2:] if len(shape) > 1 else ())
                    .reshape(shape[:1] + shape[2:] + shape[1:2] if len(shape) > 1 else shape)
                    .transpose(*((0, len(shape) - 1, *range(1, len(shape) - 1))
                                 if len(shape) > 1 else (0,))).copy())
    (sw, tw) = pair(r.uniform(0.5, 2.0, shape[1 if len(shape) > 1 else 0]), grad=False)
    agree(lambda a, p: F.cross_entropy(a, p, weight=sw, reduction=reduction,
                                       label_smoothing=smoothing),
          lambda a, p: TF.cross_entropy(a, p, weight=tw, reduction=reduction,
                                        label_smoothing=smoothing), [sx, sp], [tx, tp])


def test_cross_entropy_positional_reduction_and_module_forms():
    r = rng(2)
    (sx, tx), (sy, ty) = pair(r.standard_normal((4, 3))), pair(r.integers(0, 3, 4))
    np.testing.assert_allclose(F.cross_entropy(sx, sy, "sum").numpy(),
                               TF.cross_entropy(tx, ty, reduction="sum").detach().numpy())
    np.testing.assert_allclose(F.nll_loss(sx, sy, "none").numpy(),
                               TF.nll_loss(tx, ty, reduction="none").detach().numpy())
    w = r.uniform(0.5, 2, 3)
    ours = nn.CrossEntropyLoss(weight=shrew.tensor(w), ignore_index=2, label_smoothing=0.1)
    theirs = torch.nn.CrossEntropyLoss(weight=torch.tensor(w), ignore_index=2,
                                       label_smoothing=0.1)
    np.testing.assert_allclose(ours(sx, sy).numpy(), theirs(tx, ty).detach().numpy())
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert nn.NLLLoss(size_average=False).reduction == "sum"
    assert nn.NLLLoss(reduce=False).reduction == "none"


def test_class_target_errors_name_the_loss_and_shapes():
    x = shrew.randn(3, 4)
    with pytest.raises(shrew.ShapeError, match=r"cross_entropy: weight must have shape \[4\]"):
        F.cross_entropy(x, shrew.tensor([0, 1, 2]), weight=shrew.ones(3))
    with pytest.raises(shrew.ShapeError, match=r"nll_loss: target \[3, 1\] does not fit input "
                                               r"\[3, 4\]"):
        F.nll_loss(x, shrew.tensor([[0], [1], [2]]))
    with pytest.raises(IndexError, match=r"cross_entropy: target holds a class index "
                                               r"outside \[0, 4\)"):
        F.cross_entropy(x, shrew.tensor([0, -100, 7]))
    with pytest.raises(shrew.ShrewError, match="label_smoothing must lie in"):
        F.cross_entropy(x, shrew.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(shrew.DTypeError, match=r"cross_entropy: target must hold int64"):
        F.cross_entropy(x, shrew.randn(3, 5))
    with pytest.raises(shrew.ShrewError, match="kl_div: reduction must be one of"):
        F.kl_div(x, x, reduction="avg")


def test_ignored_targets_computed_on_a_device_are_left_out():
    """Targets computed on a device (their range unknown on the host: checked with the next
    read back) that hold ignore_index take the masked path; they were once gathered at
    -100 and raised with the next read."""
    from support import device_or_fail
    device = device_or_fail("opencl")
    x = shrew.randn(6, 5)
    target = shrew.tensor([0, 1, -100, 4, -100, 2])
    expected = F.cross_entropy(x, target).item()
    computed = target.to(device) * 1  # made on the device
    assert abs(F.cross_entropy(x.to(device), computed).item() - expected) < 1e-6
    with pytest.raises(shrew.ShrewError):  # a class outside [0, C) that is not ignored
        F.cross_entropy(x.to(device), shrew.tensor([0, 9, -100, 1, 2, 3], device=device) * 1
                        ).item()


# -- the other losses ----------------------------------------------------------------------------
def _binary(r, shape):
    return r.integers(0, 2, shape).astype(float)


def _signs(r, shape):
    return r.choice([-1.0, 1.0], shape)


CASES = {
    # name: (make inputs from rng, keyword arguments)
    "mse_loss": (lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4))], {}),
    "l1_loss": (lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4))], {}),
    "smooth_l1_loss": (lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4))],
                       {"beta": 0.5}),
    "huber_loss": (lambda r: [r.standard_normal((3, 4)) * 2, r.standard_normal((3, 4))],
                   {"delta": 0.7}),
    "binary_cross_entropy": (lambda r: [r.uniform(0.05, 0.95, (3, 4)), r.uniform(0, 1, (3, 4))],
                             {}),
    "binary_cross_entropy_with_logits": (
        lambda r: [r.standard_normal((3, 4)) * 5, _binary(r, (3, 4))], {}),
    "kl_div": (lambda r: [np.log(r.dirichlet(np.ones(4), 3)), r.dirichlet(np.ones(4), 3)], {}),
    "poisson_nll_loss": (lambda r: [r.standard_normal((3, 4)), r.poisson(2.0, (3, 4)) * 1.0],
                         {}),
    "soft_margin_loss": (lambda r: [r.standard_normal((3, 4)), _signs(r, (3, 4))], {}),
    "multilabel_soft_margin_loss": (lambda r: [r.standard_normal((3, 4)), _binary(r, (3, 4))],
                                    {}),
    "margin_ranking_loss": (lambda r: [r.standard_normal(5), r.standard_normal(5),
                                       _signs(r, 5)], {"margin": 0.3}),
    "hinge_embedding_loss": (lambda r: [r.standard_normal((3, 4)), _signs(r, (3, 4))],
                             {"margin": 0.5}),
    "cosine_embedding_loss": (lambda r: [r.standard_normal((4, 3)), r.standard_normal((4, 3)),
                                         _signs(r, 4)], {"margin": 0.1}),
    "triplet_margin_loss": (lambda r: [r.standard_normal((4, 3)), r.standard_normal((4, 3)),
                                       r.standard_normal((4, 3))], {"margin": 2.0}),
    "gaussian_nll_loss": (lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4)),
                                     r.uniform(0.1, 2.0, (3, 4))], {}),
}
VARIANTS = [
    ("smooth_l1_loss", {"beta": 0.0}), ("kl_div", {"log_target": True}),
    ("poisson_nll_loss", {"log_input": False, "full": True}),
    ("triplet_margin_loss", {"swap": True, "p": 1}), ("triplet_margin_loss", {"p": 3}),
    ("gaussian_nll_loss", {"full": True}),
]


def _pairs(name, data):
    """shrew and torch inputs; the target (the last input, the second for
    gaussian_nll_loss; none for triplet_margin_loss) does not require grad, as PyTorch
    refuses that for several losses."""
    target = {"gaussian_nll_loss": 1, "triplet_margin_loss": None}.get(name, len(data) - 1)
    return zip(*(pair(d, grad=i != target) for i, d in enumerate(data)))


@pytest.mark.filterwarnings("ignore:reduction. 'mean'")
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,extra", [(n, {}) for n in CASES] + VARIANTS)
def test_losses_match_torch(name, extra, reduction):
    make, kw = CASES[name]
    data = make(rng(len(name)))
    if name == "poisson_nll_loss" and extra.get("log_input") is False:
        data[0] = np.abs(data[0]) + 0.1
    if name == "kl_div" and extra.get("log_target"):
        data[1] = np.log(data[1])
    ours, theirs = _pairs(name, data)
    kw = {**kw, **extra, "reduction": reduction}
    agree(lambda *a: getattr(F, name)(*a, **kw), lambda *a: getattr(TF, name)(*a, **kw),
          list(ours), list(theirs))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,weighted", [(1, False), (2, True), (1, True)])
def test_multi_margin_loss_matches_torch(reduction, p, weighted):
    r = rng(3)
    (sx, tx), (sy, ty) = pair(r.standard_normal((5, 4))), pair(r.integers(0, 4, 5))
    (sw, tw) = pair(r.uniform(0.5, 2, 4), grad=False) if weighted else (None, None)
    agree(lambda a: F.multi_margin_loss(a, sy, p=p, margin=0.8, weight=sw, reduction=reduction),
          lambda a: TF.multi_margin_loss(a, ty, p=p, margin=0.8, weight=tw,
                                         reduction=reduction), [sx], [tx])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weighted_binary_losses_match_torch(reduction):
    r = rng(4)
    (sx, tx), (sy, ty) = pair(r.standard_normal((3, 4)) * 4), pair(_binary(r, (3, 4)))
    (sw, tw), (spw, tpw) = pair(r.uniform(0.5, 2, 4), False), pair(r.uniform(0.5, 3, 4), False)
    agree(lambda a: F.binary_cross_entropy_with_logits(a, sy, weight=sw, pos_weight=spw,
                                                       reduction=reduction),
          lambda a: TF.binary_cross_entropy_with_logits(a, ty, weight=tw, pos_weight=tpw,
                                                        reduction=reduction), [sx], [tx])
    (sp, tp) = pair(r.uniform(0.05, 0.95, (3, 4)))
    agree(lambda a: F.binary_cross_entropy(a, sy, weight=sw, reduction=reduction),
          lambda a: TF.binary_cross_entropy(a, ty, weight=tw, reduction=reduction), [sp], [tp])
    big = shrew.tensor([-800.0, 800.0], dtype=shrew.float64, requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(big, shrew.tensor([1.0, 0.0], dtype=shrew.float64))
    assert np.isfinite(loss.item()) and loss.item() == pytest.approx(800.0)
    assert np.isfinite(loss.backward()[big].numpy()).all()


def test_kl_div_batchmean_and_gaussian_var_shapes():
    r = rng(6)
    (sx, tx), (st_, tt) = pair(np.log(r.dirichlet(np.ones(3), 4))), pair(r.dirichlet(np.ones(3), 4))
    agree(lambda a: F.kl_div(a, st_, reduction="batchmean"),
          lambda a: TF.kl_div(a, tt, reduction="batchmean"), [sx], [tx])
    assert nn.KLDivLoss(reduction="batchmean").reduction == "batchmean"
    x, (sg, tg) = r.standard_normal((4, 3)), pair(r.standard_normal((4, 3)))
    for var_shape in [(4,), (4, 1)]:
        (si, ti), (sv, tv) = pair(x), pair(r.uniform(0.1, 1, var_shape))
        agree(lambda a, v: F.gaussian_nll_loss(a, sg, v), lambda a, v: TF.gaussian_nll_loss(
            a, tg, v), [si, sv], [ti, tv])
    (si, ti), (sv, tv) = pair(x), pair(np.array([[1e-9], [0.5], [1.0], [2.0]]))
    agree(lambda v: F.gaussian_nll_loss(si, sg, v), lambda v: TF.gaussian_nll_loss(ti, tg, v),
          [sv], [tv])
    with pytest.raises(shrew.ShapeError, match=r"gaussian_nll_loss: var \[3\]"):
        F.gaussian_nll_loss(si, sg, shrew.ones(3))


MODULES = [
    ("L1Loss", {}, "l1_loss"), ("MSELoss", {"reduction": "sum"}, "mse_loss"),
    ("SmoothL1Loss", {"beta": 0.5}, "smooth_l1_loss"), ("HuberLoss", {"delta": 2.0},
                                                         "huber_loss"),
    ("BCELoss", {}, "binary_cross_entropy"),
    ("BCEWithLogitsLoss", {}, "binary_cross_entropy_with_logits"),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": False}, "kl_div"),
    ("PoissonNLLLoss", {"full": True}, "poisson_nll_loss"),
    ("GaussianNLLLoss", {"eps": 1e-3}, "gaussian_nll_loss"),
    ("SoftMarginLoss", {}, "soft_margin_loss"),
    ("MultiLabelSoftMarginLoss", {}, "multilabel_soft_margin_loss"),
    ("MarginRankingLoss", {"margin": 0.2}, "margin_ranking_loss"),
    ("HingeEmbeddingLoss", {"margin": 2.0}, "hinge_embedding_loss"),
    ("CosineEmbeddingLoss", {"margin": 0.5}, "cosine_embedding_loss"),
    ("TripletMarginLoss", {"swap": True}, "triplet_margin_loss"),
]


@pytest.mark.parametrize("name,kw,function", MODULES)
def test_loss_modules_match_torch(name, kw, function):
    data = CASES[function][0](rng(7))
    ours, theirs = _pairs(function, data)
    agree(getattr(nn, name)(**kw), getattr(torch.nn, name)(**kw), list(ours), list(theirs))


def test_multi_margin_module_and_shape_errors():
    r = rng(8)
    (sx, tx), (sy, ty) = pair(r.standard_normal((5, 4))), pair(r.integers(0, 4, 5))
    agree(nn.MultiMarginLoss(p=2), torch.nn.MultiMarginLoss(p=2), [sx, sy], [tx, ty])
    with pytest.raises(shrew.ShapeError, match=r"mse_loss: input \[2, 3\] and target \[3\]"):
        nn.MSELoss()(shrew.randn(2, 3), shrew.randn(3))
    with pytest.raises(shrew.ShapeError, match=r"binary_cross_entropy_with_logits: shapes "
                                               r"\[2, 3\] and \[5\] do not broadcast"):
        F.binary_cross_entropy_with_logits(shrew.randn(2, 3), shrew.rand(2, 3),
                                           pos_weight=shrew.ones(5))


# -- CTC ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("concatenated", [False, True])
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_ctc_loss_matches_torch(reduction, concatenated, seed):
    r = rng(seed)
    steps, batch, classes = 6, 3, 4
    in_len = r.integers(1, steps + 1, batch)
    # Feasible alignments only (a target of S labels fits in 2 S steps): PyTorch's gradient
    # of an infinite loss is NaN, shrew's zero (see test_ctc_loss_module_...).
    tg_len = np.minimum(r.integers(0, 4, batch), in_len // 2)
    targets = r.integers(1, classes, (batch, 3))
    if concatenated:
        targets = np.concatenate([targets[n, :tg_len[n]] for n in range(batch)])
    (sx, tx) = pair(r.standard_normal((steps, batch, classes)))
    # Compared through log_softmax: PyTorch's ctc backward assumes its input came from it.
    agree(lambda a: F.ctc_loss(a.log_softmax(2), shrew.tensor(targets), shrew.tensor(in_len),
                               shrew.tensor(tg_len), reduction=reduction),
          lambda a: TF.ctc_loss(a.log_softmax(2), torch.tensor(targets), torch.tensor(in_len),
                                torch.tensor(tg_len), reduction=reduction), [sx], [tx])


def test_ctc_loss_module_impossible_alignments_and_errors():
    r = rng(9)
    (sx, tx) = pair(r.standard_normal((2, 2, 4)))
    targets, lengths = np.array([[1, 2, 3], [1, 1, 0]]), (3, 2)
    ours = nn.CTCLoss(blank=0, reduction="none", zero_infinity=False)
    out = ours(sx.log_softmax(2), shrew.tensor(targets), (2, 2), lengths)
    assert np.isinf(out.numpy()).all()  # 3 labels, and 1 1 (needs a blank between), in 2 steps
    grads = out.sum().backward()
    assert not grads[sx].numpy().any()  # finite: zero (PyTorch's is NaN)
    agree(lambda a: nn.CTCLoss(zero_infinity=True, reduction="sum")(
              a.log_softmax(2), shrew.tensor(targets), (2, 2), lengths),
          lambda a: torch.nn.CTCLoss(zero_infinity=True, reduction="sum")(
              a.log_softmax(2), torch.tensor(targets), (2, 2), lengths), [sx], [tx])
    (u, tu) = pair(r.standard_normal((5, 4)))  # unbatched
    agree(lambda a: F.ctc_loss(a.log_softmax(1), shrew.tensor([1, 2]), shrew.tensor(5),
                               shrew.tensor(2)),
          lambda a: TF.ctc_loss(a.log_softmax(1), torch.tensor([1, 2]), torch.tensor(5),
                                torch.tensor(2)), [u], [tu])
    with pytest.raises(shrew.ShrewError, match="other than the blank 0"):
        F.ctc_loss(sx, shrew.tensor([[0, 1], [1, 1]]), (2, 2), (2, 1))
    with pytest.raises(shrew.ShapeError, match="input_lengths must hold 2 lengths"):
        F.ctc_loss(sx, shrew.tensor([[1, 1], [1, 1]]), (2,), (2, 1))


def test_loss_gradients_pass_gradcheck():
    from shrew.testing import gradcheck
    r = rng(12)
    x = shrew.tensor(r.standard_normal((3, 4, 2)), requires_grad=True)
    y = shrew.tensor(np.array([[0, 3], [-100, 1], [2, 2]]))
    w = shrew.tensor(r.uniform(0.5, 2, 4))
    assert gradcheck(lambda a: F.cross_entropy(a, y, weight=w, label_smoothing=0.2), [x])
    logits = shrew.tensor(r.standard_normal((3, 4)), requires_grad=True)
    target = shrew.tensor(r.integers(0, 2, (3, 4)).astype(float))
    pos_weight = shrew.tensor(r.uniform(0.5, 2, 4))
    assert gradcheck(lambda a: F.binary_cross_entropy_with_logits(a, target,
                                                                  pos_weight=pos_weight),
                     [logits])
    lp = shrew.tensor(r.standard_normal((5, 2, 3)), requires_grad=True)
    assert gradcheck(lambda a: F.ctc_loss(a.log_softmax(2), shrew.tensor([[1, 2], [2, 0]]),
                                          (5, 4), (2, 1)), [lp])
    a, b = (shrew.tensor(r.standard_normal((3, 4)), requires_grad=True) for _ in range(2))
    assert gradcheck(lambda u, v: F.triplet_margin_loss(u, v, v * 0.5 + 1.0, margin=3.0),
                     [a, b])
