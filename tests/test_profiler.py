"""shrew.profiler: PyTorch's profiler API; per-op times, shapes and memory; the table in
PyTorch's layout; Chrome traces; schedules; every backend."""
from __future__ import annotations

import json

import numpy as np
import pytest

import shrew
from shrew.backends.registry import get_backend
from shrew.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                            schedule, tensorboard_trace_handler)

from support import device_or_fail, each_device

torch = pytest.importorskip("torch")


def _step(x, w):
    return (x @ w).tanh().sum()


def test_per_op_times_shapes_and_memory():
    x, w = shrew.randn(8, 16), shrew.randn(16, 4, requires_grad=True)
    with profile(record_shapes=True, profile_memory=True) as prof:
        with record_function("forward"):
            loss = _step(x, w)
        loss.backward()
    events = prof.events()
    forward = next(e for e in events if e.name == "forward")
    assert forward.is_user_annotation and forward.cpu_children
    names = {e.name for e in events}
    assert {"shrew::matmul", "shrew::tanh", "shrew::sum"} <= names
    tanh = next(e for e in events if e.name == "shrew::tanh")
    assert tanh.input_shapes == [[8, 4]] and tanh.cpu_parent is forward
    assert tanh.self_cpu_memory_usage == 8 * 4 * 4  # one float32 [8, 4] output
    for e in events:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-9
    top = [e for e in events if e.cpu_parent is None]
    assert sum(e.self_cpu_time_total for e in events) == pytest.approx(
        sum(e.cpu_time_total for e in top))
    assert forward.cpu_memory_usage >= tanh.cpu_memory_usage
    assert w.grad is not None  # backward's ops ran under the profiler too


def test_key_averages_group_by_input_shape():
    with profile(record_shapes=True) as prof:
        for n in (2, 2, 3):
            shrew.ones(n, 5).tanh()
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["shrew::tanh"].count == 3
    by_shape = [e for e in prof.key_averages(group_by_input_shape=True)
                if e.key == "shrew::tanh"]
    assert sorted((str(e.input_shapes), e.count) for e in by_shape) == [
        ("[[2, 5]]", 2), ("[[3, 5]]", 1)]
    total = sum(e.cpu_time_total for e in prof.events() if e.name == "shrew::tanh")
    assert avg["shrew::tanh"].cpu_time_total == pytest.approx(total)


def _layout(table):
    """The header row's column titles and the separator's column widths past the name."""
    lines = table.splitlines()
    titles = [t for t in lines[1].split("  ") if t.strip()]
    return [t.strip() for t in titles], [len(c) for c in lines[0].split("  ")[1:]]


@pytest.mark.parametrize("shapes,memory", [(False, False), (True, True)])
def test_table_has_torch_layout(shapes, memory):
    xs = shrew.randn(16, 16)
    xt = torch.randn(16, 16)
    with profile(record_shapes=shapes, profile_memory=memory) as ours:
        with record_function("block"):
            (xs @ xs).tanh().sum()
    with torch.profiler.profile(record_shapes=shapes, profile_memory=memory) as theirs:
        with torch.profiler.record_function("block"):
            (xt @ xt).tanh().sum()
    table = ours.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    reference = theirs.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    ours_titles, ours_widths = _layout(table)
    theirs_titles, theirs_widths = _layout(reference)
    assert ours_titles == theirs_titles
    assert ours_widths[:-1 if shapes else None] == theirs_widths[:-1 if shapes else None]
    lines = table.splitlines()
    assert len(lines) == 3 + 3 + 2  # separator, header, separator, 3 rows, separator, total
    assert lines[3].split()[0] == "block"  # the largest total first
    assert lines[-1].startswith("Self CPU time total: ")
    assert table.endswith("\n")


def test_chrome_trace_is_valid_json(tmp_path):
    with profile(record_shapes=True) as prof:
        with record_function("outer"):
            shrew.ones(4, 4).exp()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    outer = next(e for e in events if e["name"] == "outer")
    exp = next(e for e in events if e["name"] == "shrew::exp")
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    assert outer["cat"] == "user_annotation" and exp["cat"] == "cpu_op"
    assert outer["ts"] <= exp["ts"] and exp["ts"] + exp["dur"] <= outer["ts"] + outer["dur"]
    assert exp["args"]["Input Dims"] == [[4, 4]]


@pytest.mark.filterwarnings("ignore:Profiler won't be using warmup")
@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2),
                                dict(wait=0, warmup=1, active=1, repeat=2, skip_first=3),
                                dict(wait=2, warmup=0, active=1, skip_first_wait=1)])
def test_schedule_matches_torch(kw):
    ours = schedule(**kw)
    theirs = torch.profiler.schedule(**kw)
    assert [ours(s).name for s in range(14)] == [theirs(s).name for s in range(14)]


def test_schedule_steps_and_trace_handler(tmp_path):
    ready = []

    def on_ready(prof):
        ready.append((prof.step_num, sorted({e.name for e in prof.events()})))
        tensorboard_trace_handler(str(tmp_path), worker_name="w0")(prof)

    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=on_ready) as prof:
        for step in range(6):
            shrew.ones(2).add(shrew.ones(2)) if step != 2 else shrew.ones(2).exp()
            prof.step()
    assert prof.current_action is ProfilerAction.NONE
    assert ready == [(4, ["shrew::add", "shrew::exp", "shrew::full"])]  # steps 2 and 3
    files = list(tmp_path.glob("w0.*.pt.trace.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["traceEvents"]


def test_record_function_as_decorator_and_no_profiler_cost():
    @record_function("helper")
    def helper(x):
        return x * x

    backend = get_backend("cpu")
    assert helper(shrew.full((1,), 3.0)).item() == 9.0  # no profile: a plain call
    with profile() as prof:
        helper(shrew.ones(1))
        assert "binary" in vars(backend)  # wrapped while recording
    assert not [n for n in vars(backend) if callable(vars(backend)[n])]
    helper_event = next(e for e in prof.events() if e.name == "helper")
    assert [c.name for c in helper_event.cpu_children] == ["shrew::mul"]


def test_with_stack_names_this_file():
    with profile(with_stack=True) as prof:
        shrew.ones(3).sin()
    sin = next(e for e in prof.events() if e.name == "shrew::sin")
    assert any("test_profiler.py" in frame for frame in sin.stack)


@pytest.mark.parametrize("name", ["cpu", *each_device("opencl")])
def test_every_backend_with_device_time(name):
    device = device_or_fail(name)
    x = shrew.randn(32, 32, device=device)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 profile_memory=True) as prof:
        y = (x @ x).relu()
    np.testing.assert_allclose(y.numpy(), np.maximum(x.numpy() @ x.numpy(), 0), rtol=1e-4,
                               atol=1e-4)
    averages = {e.key: e for e in prof.key_averages()}
    relu = averages["shrew::relu"]
    assert relu.count == 1
    table = prof.key_averages().table(sort_by="cuda_time_total")
    if device == "cpu":
        assert relu.self_device_time_total == 0 and "Self CUDA" not in table
        assert relu.self_cpu_memory_usage == 32 * 32 * 4
    else:
        assert relu.self_device_time_total > 0 and "Self CUDA" in table
        assert relu.self_device_memory_usage == 32 * 32 * 4 and "CUDA Mem" in table


def test_schedule_errors_like_torch():
    with pytest.raises(shrew.ArgumentError, match="active=0"):
        schedule(wait=0, warmup=0, active=0)
    with pytest.raises(AssertionError):
        torch.profiler.schedule(wait=0, warmup=0, active=0)
