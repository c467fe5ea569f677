"""Gradient checkpointing with real modules: bit-exact gradients (dropout included),
side effects once, nesting, captured parameters, non-tensor arguments, the create_graph
refusal, and the memory it saves."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import shrew
from shrew import nn

DEVICES = ["cpu"] + (["opencl"] if "opencl" in " ".join(shrew.devices()) else [])


def run(model, x, forward):
    """Seeded forward + backward: (output, {name: grad} with the input's as "input")."""
    shrew.manual_seed(7)
    out = forward(model, x)
    grads = (out * out).sum().backward()
    found = {name: p.grad.numpy() for name, p in model.named_parameters()}
    found["input"] = grads[x].numpy()
    model.zero_grad()
    return out.numpy(), found


def assert_bitwise_equal(a, b):
    (out_a, grads_a), (out_b, grads_b) = a, b
    np.testing.assert_array_equal(out_a, out_b)
    assert grads_a.keys() == grads_b.keys()
    for name in grads_a:
        np.testing.assert_array_equal(grads_a[name], grads_b[name], err_msg=name)


def transformer(device, dropout, blocks=4, checkpoint=False):
    shrew.manual_seed(0)
    return nn.Sequential(*[nn.TransformerBlock(8, 2, mlp_ratio=2, dropout=dropout,
                                               checkpoint=checkpoint, causal=True)
                           for _ in range(blocks)]).to(device)


def plain(model, x):
    return model(x)


def segmented(segments):
    return lambda model, x: shrew.checkpoint_sequential(model, segments, x)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dropout", [0.0, 0.25])
def test_checkpointed_transformer_gradients_are_bit_exact(device, dropout):
    x = shrew.randn(2, 5, 8, device=device, requires_grad=True)
    reference = run(transformer(device, dropout), x, plain)
    for segments in (1, 2, 4):
        assert_bitwise_equal(reference, run(transformer(device, dropout), x, segmented(segments)))
    # checkpoint=True on every block, and that nested inside checkpoint_sequential.
    assert_bitwise_equal(reference, run(transformer(device, dropout, checkpoint=True), x, plain))
    assert_bitwise_equal(reference, run(transformer(device, dropout, checkpoint=True), x,
                                        segmented(2)))


def test_dropout_masks_really_differ_between_blocks_and_steps():
    """The bit-exact test above means something only if dropout is active."""
    model = transformer("cpu", 0.25)
    x = shrew.randn(2, 5, 8)
    shrew.manual_seed(7)
    first = model(x).numpy()
    assert not np.array_equal(first, model(x).numpy())
    assert not np.array_equal(first, model.eval()(x).numpy())


def test_batchnorm_running_stats_update_once_under_checkpoint():
    def net():
        shrew.manual_seed(0)
        return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(),
                             nn.Conv2d(3, 3, 3, padding=1), nn.BatchNorm2d(3))
    x = shrew.randn(4, 2, 5, 5, requires_grad=True)
    a, b = net(), net()
    assert_bitwise_equal(run(a, x, plain), run(b, x, segmented(2)))
    for (name, ta), tb in zip(a.named_buffers(), b.buffers()):
        np.testing.assert_array_equal(ta.numpy(), tb.numpy(), err_msg=name)
    assert not np.allclose(a[1].running_mean.numpy(), 0)


def test_recomputation_is_flagged_for_modules():
    seen = []

    def fn(x):
        seen.append(shrew.in_recomputation())
        return x * 2
    shrew.checkpoint(fn, shrew.ones(2, requires_grad=True)).sum().backward()
    assert seen == [False, True] and not shrew.in_recomputation()


def test_parameters_used_inside_receive_gradients_and_non_tensors_pass_through():
    lin = nn.Linear(3, 3)
    x = shrew.randn(4, 3, requires_grad=True)

    def fn(x, scale, mode, extra):
        assert (scale, mode, extra) == (2.5, "relu", None)
        return lin(x).relu() * scale

    expected = (fn(x, 2.5, "relu", None).sum()).backward()
    lin.zero_grad()
    grads = shrew.checkpoint(fn, x, 2.5, "relu", None).sum().backward()
    for t in (x, lin.weight, lin.bias):
        np.testing.assert_array_equal(grads[t].numpy(), expected[t].numpy())
    np.testing.assert_array_equal(lin.weight.grad.numpy(), expected[lin.weight].numpy())


def test_create_graph_through_checkpoint_is_refused():
    x = shrew.randn(3, requires_grad=True)
    y = shrew.checkpoint(lambda t: (t * t).sum(), x)
    with pytest.raises(shrew.ShrewError, match="create_graph=True.* not supported"):
        y.backward(create_graph=True)


def test_benchmark_checkpointing_halves_peak_memory(capsys):
    path = Path(__file__).parents[1] / "benchmarks" / "checkpoint_memory.py"
    spec = importlib.util.spec_from_file_location("checkpoint_memory", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.main(["--batch", "4", "--length", "32", "--dim", "32"])
    assert result["ratio"] <= 0.5
    assert "ratio:" in capsys.readouterr().out
