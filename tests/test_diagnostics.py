"""detect_anomaly, graph_summary and to_dot (shrew.autograd.diagnostics)."""
from __future__ import annotations

import re
import sys
import threading
import warnings

import numpy as np
import pytest

import shrew
from shrew import nn
from shrew.autograd import diagnostics
from shrew.autograd.diagnostics import creation_site, detect_anomaly, graph_summary, to_dot
from shrew.nn import functional as F
from support import device_or_fail

HERE = __file__


def line() -> int:
    """The caller's line number."""
    return sys._getframe(1).f_lineno


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy on 1/0 and 0*inf
        yield


def anomaly(op: str, at: int):
    """pytest.raises for the anomaly error naming `op` created at line `at` of this file."""
    return pytest.raises(shrew.ShrewError, match=re.escape(f"{op} produced NaN or inf") +
                         ".*" + re.escape(f"created at {HERE}:{at} in "))


# -- detect_anomaly -----------------------------------------------------------------------------
def test_the_first_op_with_a_bad_gradient_is_named_with_its_line():
    x = shrew.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        y = x.sqrt(); at = line()  # noqa: E702  (d sqrt / dx is inf at 0)
        loss = (y * 2.0).sum()
        with anomaly("Unary.sqrt", at):
            loss.backward()


def test_the_newest_bad_op_is_reported_not_its_inputs():
    x = shrew.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        y = x.sqrt()
        z = y.log(); at = line()  # noqa: E702  (y = 0: d log is inf, found before sqrt's)
        with anomaly("Unary.log", at):
            z.sum().backward()


def test_binary_ops_and_the_input_are_named():
    a = shrew.tensor([1.0, 2.0], requires_grad=True)
    b = shrew.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        q = a / b; at = line()  # noqa: E702
        with anomaly("Binary.div", at) as info:
            q.sum().backward()
    assert "gradient of its input 0 (shape [2], float32)" in str(info.value)


def test_ops_inside_modules_point_at_the_user_call():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    x = shrew.tensor([[1.0, 2.0]])
    with detect_anomaly():
        h = model(x); at = line()  # noqa: E702
        loss = F.mse_loss(h, shrew.zeros(1, 2))
    assert creation_site(h) == f"{HERE}:{at} in test_ops_inside_modules_point_at_the_user_call"
    assert creation_site(loss).startswith(f"{HERE}:{at + 1} ")


def test_every_creation_path_records_its_site():
    """Ops made by each path of the core (fast scalar paths, views, functions, checkpoint)."""
    x = shrew.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
    idx = shrew.tensor([[0, 1], [1, 0]])
    made = {}
    with detect_anomaly():
        made[line()] = x * 1.5
        made[line()] = x + 2
        made[line()] = x * x
        made[line()] = x.exp()
        made[line()] = x @ x
        made[line()] = x.sum(0)
        made[line()] = x.transpose(0, 1)
        made[line()] = x.reshape(4)
        made[line()] = x[0]
        made[line()] = x.to(shrew.float64)
        made[line()] = x.clamp(0.0, 1.0)
        made[line()] = x.gather(1, idx)
        made[line()] = shrew.cat([x, x])
        made[line()] = shrew.where(x > 0, x, 0.0)
        made[line()] = shrew.conv2d(x.reshape(1, 1, 2, 2), x.reshape(1, 1, 2, 2))
        made[line()] = shrew.checkpoint(lambda a: a.tanh(), x)
    for at, t in made.items():
        assert t.requires_grad and creation_site(t) is not None, at
        assert creation_site(t).startswith(f"{HERE}:{at} "), (at, creation_site(t))


def test_an_anomaly_inside_a_checkpoint_names_the_line_in_the_function():
    x = shrew.tensor([0.0, 4.0], requires_grad=True)
    at = line() + 1
    segment = lambda a: (a * 1.0).sqrt()  # noqa: E731
    with detect_anomaly():
        out = shrew.checkpoint(segment, x)
        with anomaly("Unary.sqrt", at):
            out.sum().backward()


def test_outside_anomaly_mode_nothing_is_recorded_or_checked(monkeypatch):
    def fail(t):
        raise AssertionError("record_site ran outside detect_anomaly")

    monkeypatch.setattr(diagnostics, "record_site", fail)
    x = shrew.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt()
    y.sum().backward()  # inf in the gradient: a value, not an error
    assert np.isinf(x.grad.numpy()[0]) and creation_site(y) is None


def test_ops_made_before_anomaly_mode_are_reported_without_a_site():
    x = shrew.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt()
    with detect_anomaly(), pytest.raises(shrew.ShrewError,
                                         match="Unary.sqrt.*outside detect_anomaly"):
        y.sum().backward()


def test_finite_gradients_pass_and_second_order_still_works():
    x = shrew.tensor([0.5, 2.0], requires_grad=True, dtype=shrew.float64)
    with detect_anomaly():
        y = (x * x * x).sum()
        g = y.backward(create_graph=True)[x]
        x.grad = None
        g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy())


def test_anomaly_mode_is_per_thread_and_nests():
    entered, checked = threading.Event(), threading.Event()
    seen = {}

    def other_thread():
        entered.wait()
        x = shrew.tensor([0.0], requires_grad=True)
        y = x.sqrt()
        y.sum().backward()  # no error here: anomaly mode is on in the main thread only
        seen["site"], seen["grad"] = creation_site(y), x.grad.item()
        checked.set()

    worker = threading.Thread(target=other_thread)
    worker.start()
    with detect_anomaly():
        with detect_anomaly():
            entered.set()
            checked.wait()
        assert diagnostics.anomaly_enabled()  # still on after the inner block
    worker.join()
    assert seen == {"site": None, "grad": float("inf")}
    assert not diagnostics.anomaly_enabled() and diagnostics.active == 0


def test_sites_are_forgotten_with_their_tensors():
    x = shrew.ones(3, requires_grad=True)
    before = len(diagnostics._sites)
    with detect_anomaly():
        for _ in range(50):
            (x * x).sum()
    assert len(diagnostics._sites) == before


# -- graph_summary and to_dot ---------------------------------------------------------------
def _mlp_graph(device="cpu"):
    x = shrew.ones(4, 3, device=device)                          # constant input
    w = shrew.ones(3, 2, device=device, requires_grad=True)
    b = shrew.zeros(2, device=device, requires_grad=True)
    h = (x @ w + b).relu()
    return x, w, b, h, h.sum()


def test_summary_lists_every_tensor_with_op_shape_dtype_device_and_bytes():
    x, w, b, h, loss = _mlp_graph()
    text = graph_summary(loss)
    lines = text.splitlines()
    assert lines[0].split() == ["id", "op", "shape", "dtype", "device", "bytes", "saved"]
    rows = {int(r.split()[0]): r for r in lines[1:-1]}
    assert set(rows) == {t.id for t in (x, w, b, h, loss)} | {h.op.x.id, h.op.x.op.lhs.id}
    assert re.fullmatch(rf" *{loss.id}  Reduce\.sum +\[\] +float32 +cpu +4  {h.id}", rows[loss.id])
    assert re.fullmatch(rf" *{h.id}  Unary\.relu +\[4, 2\] +float32 +cpu +32  \d+", rows[h.id])
    assert re.fullmatch(rf" *{x.id}  constant +\[4, 3\] +float32 +cpu +48", rows[x.id])
    assert re.fullmatch(rf" *{w.id}  leaf +\[3, 2\] +float32 +cpu +24", rows[w.id])
    assert "Matmul" in text and "Binary.add" in text
    # Saved: x 48 + w 24 + b 8 + x@w 32 + (x@w + b) 32 + h 32 bytes; the root is not saved.
    assert lines[-1] == ("7 tensors (ops: 4, leaves requiring grad: 2, constants: 1); "
                         "176 B saved for backward on cpu")
    assert [int(r.split()[0]) for r in lines[1:-1]] == sorted(rows, reverse=True)


def test_summary_counts_tensors_an_op_saves_besides_its_inputs():
    x = shrew.ones(2, 8, requires_grad=True)
    index = shrew.zeros(2, 1000, dtype=shrew.int64)
    out = x.gather(1, index).sum()
    text = graph_summary(out)
    assert re.search(rf"\n *{index.id}  constant +\[2, 1000\] +int64 +cpu +16000\n", text)
    # Saved: x 64 + index 16000 + the gathered float32 values 8000 bytes = 23.5 KiB.
    assert text.splitlines()[-1] == ("4 tensors (ops: 2, leaves requiring grad: 1, "
                                     "constants: 1); 23.5 KiB saved for backward on cpu")


def test_summary_of_a_released_graph_and_of_a_leaf():
    *_, loss = _mlp_graph()
    loss.backward()
    text = graph_summary(loss)
    assert "Reduce" in text and text.splitlines()[-1].startswith("1 tensors (ops: 1")
    leaf = shrew.ones(2, requires_grad=True)
    assert graph_summary(leaf).splitlines()[-1] == (
        "1 tensors (ops: 0, leaves requiring grad: 1, constants: 0); 0 B saved for backward on cpu")
    with pytest.raises(shrew.ShrewError, match="graph: expected a shrew.Tensor, got list"):
        graph_summary([leaf])


def test_summary_walks_deep_graphs_without_recursion():
    x = shrew.ones(1, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    assert graph_summary(y).splitlines()[-1].startswith("5001 tensors (ops: 5000")


def test_summary_on_a_device_names_it():
    device = device_or_fail("opencl")
    *_, loss = _mlp_graph(device)
    assert graph_summary(loss).endswith(f"saved for backward on {device}")


def test_dot_declares_every_node_before_its_edges():
    x, w, b, h, loss = _mlp_graph()
    dot = to_dot(loss)
    assert dot.startswith("digraph shrew {\n") and dot.endswith("\n}")
    nodes = re.findall(r'^  t(\d+) \[label="([^"]*)"', dot, re.M)
    edges = re.findall(r"^  t(\d+) -> t(\d+);$", dot, re.M)
    declared = {int(i) for i, _ in nodes}
    assert declared == {t.id for t in (x, w, b, h, loss)} | {h.op.x.id, h.op.x.op.lhs.id}
    assert all(int(a) in declared and int(b) in declared for a, b in edges)
    assert (str(h.id), str(loss.id)) in edges and (str(x.id), str(h.op.x.op.lhs.id)) in edges
    assert len(edges) == 6  # x, w -> matmul -> add <- b; add -> relu -> sum
    assert dot.index(" -> ") > dot.rindex("[label=")
    labels = dict(nodes)
    assert labels[str(loss.id)] == f"Reduce.sum #{loss.id}\\n[] float32 cpu"
    assert f't{w.id} [label="leaf #{w.id}\\n[3, 2] float32 cpu", style=filled' in dot
    assert f't{x.id} [label="constant #{x.id}\\n[4, 3] float32 cpu", shape=ellipse];' in dot
