"""Normalisation, dropout, embedding, padding and resampling layers agree with PyTorch
(values and gradients in float64, state_dict names, running statistics)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew import nn
from shrew.nn import functional as F
from shrew.testing import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def pair(data, grad=True):
    data = np.asarray(data)
    grad = grad and data.dtype.kind == "f"
    return shrew.tensor(data, requires_grad=grad), torch.tensor(data, requires_grad=grad)


def close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def agree(out, ref, pairs, tol=1e-9):
    close(out, ref)
    w = np.random.default_rng(11).standard_normal(out.shape)
    grads = (out * shrew.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for ours, theirs in pairs:
        close(grads[ours], theirs.grad, tol)


def load(ours, theirs):
    state = theirs.state_dict()
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: v.detach().numpy() for k, v in state.items()})
    return ours.double()


MODULES = [
    ("GroupNorm", (2, 4), {}, (3, 4, 5)), ("GroupNorm", (1, 4), {"affine": False}, (2, 4, 2, 3)),
    ("InstanceNorm1d", (4,), {}, (3, 4, 5)),
    ("InstanceNorm1d", (4,), {"affine": True, "track_running_stats": True}, (3, 4, 5)),
    ("InstanceNorm2d", (4,), {"affine": True}, (2, 4, 3, 3)),
    ("InstanceNorm2d", (4,), {"track_running_stats": True}, (4, 3, 3)),
    ("RMSNorm", ((3, 5),), {}, (2, 3, 5)), ("RMSNorm", (5,), {"eps": 1e-3}, (4, 5)),
    ("LocalResponseNorm", (3,), {}, (2, 5, 4)), ("LocalResponseNorm", (2,), {"k": 2.0},
                                                 (2, 6, 3, 3)),
    ("BatchNorm1d", (4,), {}, (5, 4)), ("BatchNorm1d", (4,), {"momentum": None}, (5, 4, 3)),
    ("BatchNorm1d", (4,), {"track_running_stats": False}, (5, 4)),
    ("BatchNorm2d", (4,), {"affine": False}, (3, 4, 2, 2)),
    ("LayerNorm", (5,), {"bias": False}, (2, 3, 5)),
    ("LayerNorm", ((3, 5),), {"elementwise_affine": False}, (2, 3, 5)),
    ("PixelShuffle", (2,), {}, (2, 8, 3, 3)), ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)),
    ("Upsample", (), {"scale_factor": 2, "mode": "bilinear"}, (1, 2, 3, 4)),
    ("Upsample", (), {"size": (5, 3), "mode": "bicubic", "align_corners": True}, (1, 2, 3, 4)),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "nearest"}, (1, 2, 4)),
    ("Dropout2d", (0.3,), {}, (2, 3, 4, 4)), ("AlphaDropout", (0.2,), {}, (3, 4)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", MODULES)
def test_modules_match_torch(name, args, kwargs, shape):
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = load(getattr(nn, name)(*args, **kwargs), theirs)
    assert repr(ours) == repr(theirs)
    r = np.random.default_rng(len(shape))
    for _ in range(2):  # twice: running statistics must follow along
        (x, tx) = pair(r.standard_normal(shape) + 0.5)
        if name in ("Dropout2d", "AlphaDropout"):
            ours.eval(), theirs.eval()  # random masks differ; eval is the identity
        theirs.zero_grad()  # torch accumulates .grad; each GradStore holds one backward
        agree(ours(x), theirs(tx), [(x, tx)] + list(zip(ours.parameters(),
                                                         theirs.parameters())))
    for (k, v), tv in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-12, err_msg=k)
    ours.eval(), theirs.eval()
    (x, tx) = pair(r.standard_normal(shape))
    close(ours(x), theirs(tx))


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_channel_and_alpha_dropout_statistics(p):
    shrew.manual_seed(0)
    x = shrew.randn(200, 50, 8, dtype=shrew.float64)
    y = F.dropout1d(x, p).numpy()
    zeroed = (y == 0).all(axis=2)
    assert abs(zeroed.mean() - p) < 0.03  # whole channels are dropped
    np.testing.assert_allclose(y[~zeroed], x.numpy()[~zeroed] / (1 - p), rtol=1e-12)
    z = F.alpha_dropout(x, p, training=True).numpy()
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02  # self-normalising
    assert F.alpha_dropout(x, p) is x  # training=False by default, as PyTorch
    with pytest.raises(shrew.ShapeError, match=r"dropout2d: input must be \[N, C, ...\]"):
        F.dropout2d(shrew.randn(2, 3, 4, 5, 6), 0.5)


def test_dropout2d_of_a_matrix_drops_elements_with_pytorchs_warning():
    x = shrew.ones(400, 50)
    with pytest.warns(UserWarning, match="dropout2d: a 2-D input is deprecated"):
        y = F.dropout2d(x, 0.25).numpy()
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input"):
        ref = torch.nn.functional.dropout2d(torch.ones(400, 50), 0.25).numpy()
    for out in (y, ref):  # elements, not rows, dropped; the rest scaled by 1 / (1 - p)
        assert set(np.unique(out)) == {0.0, np.float32(1 / 0.75)}
        assert abs((out == 0).mean() - 0.25) < 0.02 and (out == 0).all(axis=1).sum() == 0


def test_normalisation_gradients_pass_gradcheck():
    x = shrew.tensor(np.random.default_rng(0).standard_normal((2, 4, 3)), requires_grad=True)
    assert gradcheck(lambda t: F.group_norm(t, 2), [x])
    assert gradcheck(lambda t: F.instance_norm(t), [x])
    assert gradcheck(lambda t: F.rms_norm(t, (3,)), [x])
    assert gradcheck(lambda t: F.local_response_norm(t, 3), [x])
    assert gradcheck(lambda t: F.normalize(t, dim=-1), [x])


# -- functional forms ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_pad_modes_match_torch(mode, data):
    dims = data.draw(st.integers(1, 3))
    shape = (2, 2) + tuple(data.draw(st.integers(2, 5)) for _ in range(dims))
    limit = [s - 1 if mode == "reflect" else s for s in shape[2:]][::-1]
    pads = []
    for lim in limit:
        pads += [data.draw(st.integers(0, lim)), data.draw(st.integers(0, lim))]
    (x, tx) = pair(np.random.default_rng(dims).standard_normal(shape))
    agree(F.pad(x, pads, mode), TF.pad(tx, pads, mode), [(x, tx)])


@pytest.mark.parametrize("mode,align", [("nearest", None), ("nearest-exact", None),
                                        ("bilinear", False), ("bilinear", True),
                                        ("bicubic", False), ("bicubic", True)])
@pytest.mark.parametrize("how", [{"size": (5, 7)}, {"scale_factor": 2},
                                 {"scale_factor": (0.6, 1.5)}])
def test_interpolate_matches_torch(mode, align, how):
    (x, tx) = pair(np.random.default_rng(1).standard_normal((2, 3, 4, 5)))
    agree(F.interpolate(x, mode=mode, align_corners=align, **how),
          TF.interpolate(tx, mode=mode, align_corners=align, **how), [(x, tx)])


def test_interpolate_1d_3d_and_errors():
    for mode, shape in [("linear", (1, 2, 5)), ("nearest", (1, 2, 5)),
                        ("trilinear", (1, 1, 3, 4, 2))]:
        (x, tx) = pair(np.random.default_rng(2).standard_normal(shape))
        agree(F.interpolate(x, scale_factor=1.7, mode=mode),
              TF.interpolate(tx, scale_factor=1.7, mode=mode), [(x, tx)])
    with pytest.raises(shrew.ShrewError, match="give exactly one of size and scale_factor"):
        F.interpolate(shrew.randn(1, 1, 4))
    with pytest.raises(shrew.ShapeError, match="mode 'bilinear' does not fit input"):
        F.interpolate(shrew.randn(1, 1, 4), scale_factor=2, mode="bilinear")
    with pytest.raises(shrew.ShapeError, match=r"reflect padding \(4, 0\) of dim 2 must be at "
                                               r"most 3"):
        F.pad(shrew.randn(1, 1, 4), (4, 0), mode="reflect")


def test_distances_and_one_hot_match_torch():
    r = np.random.default_rng(3)
    (a, ta), (b, tb) = pair(r.standard_normal((4, 5))), pair(r.standard_normal((1, 5)))
    agree(F.cosine_similarity(a, b), TF.cosine_similarity(ta, tb), [(a, ta), (b, tb)])
    for p in (1, 2, 3):
        (a, ta), (b, tb) = pair(r.standard_normal((4, 5))), pair(r.standard_normal((4, 5)))
        agree(F.pairwise_distance(a, b, p), TF.pairwise_distance(ta, tb, p),
              [(a, ta), (b, tb)])
        (a, ta) = pair(r.standard_normal((3, 4)))
        agree(F.normalize(a, p, dim=0), TF.normalize(ta, p, dim=0), [(a, ta)])
    idx = np.array([[0, 3], [2, 1]])
    np.testing.assert_array_equal(F.one_hot(shrew.tensor(idx)).numpy(),
                                  TF.one_hot(torch.tensor(idx)).numpy())
    assert F.one_hot(shrew.tensor(idx), 6).shape == (2, 2, 6)
    with pytest.raises(shrew.ShapeError, match=r"one_hot: class values must lie in \[0, 3\)"):
        F.one_hot(shrew.tensor(idx), 3)


@pytest.mark.parametrize("p", [1, 2, 3, float("inf")])
def test_norms_of_zero_vectors_give_torchs_gradient(p):
    # A zero row: the norm's subgradient there is 0, as torch.linalg.vector_norm's (a
    # composed sqrt(sum x^2) would give NaN).  normalize and cosine_similarity use it.
    data = np.random.default_rng(5).standard_normal((3, 4))
    data[1] = 0.0
    (a, ta) = pair(data)
    agree(F.normalize(a, p, dim=1), TF.normalize(ta, p, dim=1), [(a, ta)])
    (a, ta) = pair(data)
    agree(shrew.linalg.vector_norm(a, p, 1), torch.linalg.vector_norm(ta, p, 1), [(a, ta)])
    if p == 2:
        (a, ta), (b, tb) = pair(data), pair(data[::-1].copy())
        agree(F.cosine_similarity(a, b), TF.cosine_similarity(ta, tb), [(a, ta), (b, tb)])
    x = shrew.tensor(data, requires_grad=True)
    assert np.isfinite(F.normalize(x, p, dim=1).sum().backward()[x].numpy()).all()


# -- embeddings ---------------------------------------------------------------------------------
def test_embedding_options_match_torch():
    r = np.random.default_rng(4)
    idx = np.array([[1, 2, 2], [0, 3, 1]])
    for kwargs in [{"padding_idx": 2}, {"max_norm": 1.0}, {"scale_grad_by_freq": True},
                   {"padding_idx": -1, "max_norm": 0.5, "norm_type": 1.0}]:
        theirs = torch.nn.Embedding(4, 3, **kwargs).double()
        ours = load(nn.Embedding(4, 3, **kwargs), theirs)
        assert repr(ours) == repr(theirs)
        out, ref = ours(shrew.tensor(idx)), theirs(torch.tensor(idx))
        agree(out, ref, [(ours.weight, theirs.weight)])
        close(ours.weight, theirs.weight)  # max_norm renormalised the same rows in place
    shrew.manual_seed(0)
    assert not nn.Embedding(5, 3, padding_idx=1).weight.numpy()[1].any()
    pretrained = nn.Embedding.from_pretrained(shrew.tensor(r.standard_normal((3, 2))))
    assert not pretrained.weight.requires_grad and pretrained.weight.shape == (3, 2)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_torch(mode):
    theirs = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=2).double()
    ours = load(nn.EmbeddingBag(10, 3, mode=mode, padding_idx=2), theirs)
    idx, offsets = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 4, 4, 6])
    agree(ours(shrew.tensor(idx), shrew.tensor(offsets)),
          theirs(torch.tensor(idx), torch.tensor(offsets)), [(ours.weight, theirs.weight)])
    rows = idx.reshape(2, 4)
    ours.weight.grad = None
    agree(ours(shrew.tensor(rows)), theirs(torch.tensor(rows)), [])
    if mode == "sum":
        (w, tw) = pair(np.random.default_rng(5).random(8))
        agree(F.embedding_bag(shrew.tensor(idx), ours.weight, shrew.tensor(offsets), mode="sum",
                              per_sample_weights=w),
              TF.embedding_bag(torch.tensor(idx), theirs.weight, torch.tensor(offsets),
                               mode="sum", per_sample_weights=tw), [(w, tw)])
        last = np.array([0, 4, 4, 6, 8])
        agree(F.embedding_bag(shrew.tensor(idx), ours.weight, shrew.tensor(last), mode="sum",
                              include_last_offset=True),
              TF.embedding_bag(torch.tensor(idx), theirs.weight, torch.tensor(last),
                               mode="sum", include_last_offset=True), [])
    with pytest.raises(shrew.ShrewError, match="per_sample_weights needs mode='sum'"):
        F.embedding_bag(shrew.tensor(rows), ours.weight, mode="max",
                        per_sample_weights=shrew.ones(2, 4))


def test_resampling_gradients_pass_gradcheck():
    x = shrew.tensor(np.random.default_rng(6).standard_normal((1, 2, 3, 3)), requires_grad=True)
    assert gradcheck(lambda t: F.interpolate(t, scale_factor=1.5, mode="bicubic"), [x])
    assert gradcheck(lambda t: F.pad(t, (2, 1, 1, 2), mode="reflect"), [x])
    y = shrew.tensor(np.random.default_rng(7).standard_normal((1, 4, 2, 2)), requires_grad=True)
    assert gradcheck(lambda t: F.pixel_shuffle(t, 2), [y])


def test_batchnorm_loads_a_state_dict_without_num_batches_tracked():
    bn = nn.BatchNorm2d(3)
    old = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    assert bn.load_state_dict(old) == ([], [])  # checkpoints saved before the buffer existed
    with pytest.raises(shrew.ShrewError, match="missing keys: running_var"):
        bn.load_state_dict({k: v for k, v in old.items() if k != "running_var"})
