"""shrew.nn.functional: gradients (gradcheck, float64), numerical stability, dropout and
input validation.  Agreement with PyTorch is in test_nn_reference.py."""
from __future__ import annotations

import numpy as np
import pytest

import shrew
from shrew.nn import functional as F
from shrew.testing import gradcheck

DEVICES = ["cpu"] + (["opencl"] if "opencl" in " ".join(shrew.devices()) else [])
device_param = pytest.mark.parametrize("device", DEVICES)


# -- gradcheck (float64 central differences) ---------------------------------------------------
def leaf(shape, seed=0):
    return shrew.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


GRADCHECKS = {
    "linear": (lambda x, w, b: F.linear(x, w, b), [(2, 3), (4, 3), (4,)]),
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, 2, 1), [(1, 2, 5), (3, 2, 3), (3,)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, 1, 1), [(1, 2, 4, 3), (2, 2, 2, 2), (2,)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2, 1, 1), [(1, 2, 3, 4)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 2, 1, 1), [(1, 2, 3, 4)]),
    "softmax": (lambda x: F.softmax(x, 1), [(3, 4)]),
    "log_softmax": (lambda x: F.log_softmax(x, 0), [(3, 4)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, 4, w, b), [(3, 4), (4,), (4,)]),
    "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                   [(3, 2, 2, 2), (2,), (2,)]),
    "gelu": (lambda x: F.gelu(x), [(3, 4)]),
    "gelu_tanh": (lambda x: F.gelu(x, "tanh"), [(3, 4)]),
    "sigmoid_tanh_relu": (lambda x: F.sigmoid(x) + F.tanh(x) + F.relu(x), [(3, 4)]),
    "mse_loss": (lambda a, b: F.mse_loss(a, b), [(3, 4), (3, 4)]),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                  [(2, 3, 2), (2, 3, 2), (2, 3, 2)]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, shapes = GRADCHECKS[name]
    assert gradcheck(fn, [leaf(s, i) for i, s in enumerate(shapes)])


def test_gradcheck_losses_with_targets():
    target = shrew.tensor([1, 0, 3])
    assert gradcheck(lambda x: F.cross_entropy(x, target), [leaf((3, 4))])
    assert gradcheck(lambda x: F.nll_loss(x, target, "sum"), [leaf((3, 4))])
    y = shrew.tensor(np.random.default_rng(1).uniform(size=(3, 4)))
    p = shrew.tensor(np.random.default_rng(2).uniform(0.1, 0.9, size=(3, 4)), requires_grad=True)
    assert gradcheck(lambda p: F.binary_cross_entropy(p, y), [p])
    assert gradcheck(lambda w: F.embedding(shrew.tensor([[0, 2], [2, 2]]), w), [leaf((3, 2))])


# -- stability ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [shrew.float32, shrew.float64])
def test_large_logits_give_no_inf_or_nan(dtype):
    x = shrew.tensor([[1e4, -1e4, 0.0], [3e30, 3e30, -3e30]], dtype=dtype, requires_grad=True)
    target = shrew.tensor([2, 1])
    for out in (F.softmax(x, 1), F.log_softmax(x, 1)[:, :2]):
        assert np.isfinite(out.numpy()).all()
    loss = F.cross_entropy(x, target)
    grads = loss.backward()
    assert np.isfinite(loss.item()) and np.isfinite(grads[x].numpy()).all()
    np.testing.assert_allclose(F.softmax(x, 1).numpy()[0], [1, 0, 0])


def test_causal_attention_ignores_the_future():
    q = shrew.randn(1, 4, 3)
    v = shrew.randn(1, 4, 3)
    changed = v.numpy().copy()
    changed[0, 3] += 100.0
    a = F.scaled_dot_product_attention(q, q, v, is_causal=True).numpy()
    b = F.scaled_dot_product_attention(q, q, shrew.tensor(changed), is_causal=True).numpy()
    np.testing.assert_array_equal(a[0, :3], b[0, :3])
    assert not np.allclose(a[0, 3], b[0, 3])


# -- dropout ----------------------------------------------------------------------------------
@device_param
def test_dropout_zeroes_a_fraction_p_scales_the_rest_and_replays_with_the_seed(device):
    x = shrew.ones(200, 100, device=device, requires_grad=True)
    shrew.manual_seed(3)
    out = F.dropout(x, 0.3)
    values = out.numpy()
    assert abs((values == 0).mean() - 0.3) < 0.02
    np.testing.assert_allclose(values[values != 0], 1 / 0.7, rtol=1e-6)
    np.testing.assert_array_equal(out.backward(gradient=shrew.ones(200, 100, device=device))[x]
                                  .numpy(), values)
    shrew.manual_seed(3)
    np.testing.assert_array_equal(F.dropout(x, 0.3).numpy(), values)
    assert F.dropout(x, 0.3, training=False) is x
    assert (F.dropout(x, 1.0).numpy() == 0).all()


# -- validation ---------------------------------------------------------------------------------
def test_class_targets_are_validated():
    logits = shrew.randn(3, 4)
    with pytest.raises(shrew.DTypeError, match="cross_entropy: target must hold int64"):
        F.cross_entropy(logits, shrew.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(shrew.ShapeError,
                       match=r"cross_entropy: target \[2\] does not fit input \[3, 4\]"):
        F.cross_entropy(logits, shrew.tensor([0, 1]))
    with pytest.raises(IndexError,  # as torch: "Target 4 is out of bounds."
                       match=r"cross_entropy: target holds a class index outside \[0, 4\)"):
        F.cross_entropy(logits, shrew.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match="nll_loss: target holds a class index"):
        F.nll_loss(logits, shrew.tensor([0, -1, 1]))
    with pytest.raises(shrew.ShrewError, match="cross_entropy: reduction must be"):
        F.cross_entropy(logits, shrew.tensor([0, 1, 2]), reduction="avg")


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.linear(shrew.randn(2, 3), shrew.randn(4, 5)), shrew.ShapeError,
     r"linear: input \[2, 3\] must end in 5 features"),
    (lambda: F.conv2d(shrew.randn(1, 2, 3, 3), shrew.randn(4, 2, 2, 2), shrew.randn(3)),
     shrew.ShapeError, r"conv2d: bias must have shape \[4\], got \[3\]"),
    (lambda: F.mse_loss(shrew.randn(2, 3), shrew.randn(3, 2)), shrew.ShapeError,
     r"mse_loss: input \[2, 3\] and target \[3, 2\]"),
    (lambda: F.binary_cross_entropy(shrew.rand(3), shrew.rand(4)), shrew.ShapeError,
     "binary_cross_entropy: input"),
    (lambda: F.layer_norm(shrew.randn(2, 3), (2,)), shrew.ShapeError,
     r"layer_norm: input \[2, 3\] does not end in normalized_shape \[2\]"),
    (lambda: F.batch_norm(shrew.randn(1, 3), None, None, training=True), shrew.ShapeError,
     "batch_norm: training needs more than one value per channel"),
    (lambda: F.batch_norm(shrew.randn(4, 3), shrew.zeros(2), shrew.ones(2)), shrew.ShapeError,
     r"batch_norm: running_mean must have shape \[3\]"),
    (lambda: F.batch_norm(shrew.randn(4, 3), None, None), shrew.ShrewError,
     "batch_norm: evaluation"),
    (lambda: F.embedding(shrew.tensor([0, 5]), shrew.randn(5, 2)), shrew.ShrewIndexError,
     r"embedding: an index is outside \[0, 5\)"),
    (lambda: F.embedding(shrew.tensor([0.0]), shrew.randn(5, 2)), shrew.DTypeError,
     "embedding: indices must be an integer tensor"),
    (lambda: F.dropout(shrew.randn(2), 1.5), shrew.ShrewError, "dropout: p must lie in"),
    (lambda: F.scaled_dot_product_attention(shrew.randn(2, 3), shrew.randn(2, 4),
                                            shrew.randn(2, 4)),
     shrew.ShapeError, "scaled_dot_product_attention: query"),
])
def test_bad_inputs_raise_errors_naming_the_op(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_batch_norm_needs_both_running_statistics():
    x = shrew.randn(4, 3, 2, 2)
    with pytest.raises(shrew.ShrewError, match="running_mean and running_var"):
        F.batch_norm(x, shrew.zeros(3), None, training=True)
