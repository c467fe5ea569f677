"""Export a whole training step (forward, backward, optimizer update) to one C file.

    program = shrew.export.trace_training(model, F.cross_entropy, (x, y), optimizer)
    program.write_c("train.c")     # cc -O2 -std=c99 train.c -lm

See docs/export.md for the trace, the memory plan, the C layout and the limits.
"""
from __future__ import annotations
from ..core.errors import ArgumentError, UnsupportedError

import contextlib
import copy
import inspect
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

# Public names only (and the autograd engine's entry point), so that the core can move
# around this package; get_backend is the one registry function it needs.
from .. import (DeviceError, DTypeError, ShapeError, Tensor, float32, from_numpy,
               ones_like)
from ..autograd.engine import run_backward
from ..backends.registry import get_backend
from ..optim import SGD, Adam, AdamW
from .fuse import fuse_log_softmax_backward
from .graph import Buffer, Graph, Value, build, contiguous_strides
from .plan import make_plan
from .program import OptimizerSpec, Program
from .symbolic import Mismatch, generalize
from .trace import Recording, recording

__all__ = ["Program", "trace_training"]


def trace_training(model: Any, loss_fn: Callable[[Tensor, Tensor], Tensor],
                   example_inputs: tuple[Tensor, Tensor], optimizer: Any,
                   measure_eager: bool = True) -> Program:
    """Trace `loss_fn(model(x), y)`, its backward and `optimizer`'s update into a static
    graph for `(x, y) = example_inputs` (x float32 [B, ...], y int64 [B]).  The batch may be
    anything from 1 to B when run, where the graph's sizes follow the batch (found by
    tracing at B, B-1 and B-2); else exactly B.  Python control flow is taken as traced.
    With measure_eager, eager shrew's peak memory for the same step is measured too.
    Integer buffers (BatchNorm's num_batches_tracked step counter) are not part of the C
    step: they are set aside while tracing, and the C step leaves them as they were."""
    x, y = _check_inputs(example_inputs)
    with _step_counters_set_aside(model):
        return _trace(model, loss_fn, x, y, optimizer, measure_eager)


@contextlib.contextmanager
def _step_counters_set_aside(model: Any) -> Iterator[None]:
    """Each module's integer buffers (step counters) are None during the trace, so the
    traced step neither reads nor counts them; a module whose step uses its counter
    (BatchNorm with momentum=None: a cumulative average) is refused."""
    aside = []
    for name, module in model.named_modules():
        for buffer_name, t in list(module.named_buffers(recurse=False)):
            if t.dtype.is_floating_point:
                continue
            if getattr(module, "momentum", 0.1) is None:
                raise ArgumentError(f"export: {name or type(module).__name__} averages over "
                                    f"its step counter (momentum=None), which a static step "
                                    f"cannot follow; give it a momentum")
            aside.append((module, buffer_name, t))
    for module, buffer_name, _ in aside:
        setattr(module, buffer_name, None)
    try:
        yield
    finally:
        for module, buffer_name, t in aside:
            setattr(module, buffer_name, t)


def _trace(model: Any, loss_fn: Callable[[Tensor, Tensor], Tensor], x: Tensor, y: Tensor,
           optimizer: Any, measure_eager: bool) -> Program:
    named = list(model.named_parameters())
    buffers = list(model.named_buffers())
    for name, t in named + buffers:
        if t.device != "cpu":
            raise DeviceError(f"export: {name} is on {t.device}; the C step runs on cpu "
                              f"tensors only (move the model with .to('cpu'))")
        if t.dtype is not float32:
            raise DTypeError(f"export: {name} is {t.dtype}; the C step supports float32 only")
    spec, trainable_ids = _optimizer_spec(optimizer, named)
    backend = get_backend("cpu")
    batch = x.shape[0]
    xs, ys = x._host(), y._host()
    rolled = (np.roll(xs, 1, axis=0), np.roll(ys, 1, axis=0))

    def record(rows: slice, data: tuple[np.ndarray, np.ndarray] = (xs, ys)) -> tuple:
        return _record(model, loss_fn, data[0][rows], data[1][rows], named, buffers, backend)

    first = record(slice(None))
    try:
        _generalize([first, record(slice(None), rolled)], [batch, batch])
    except Mismatch as exc:
        raise ArgumentError(f"export: the step's graph depends on the data (two batches of the "
                            f"same size traced differently: {exc}); data-dependent shapes and "
                            f"control flow cannot be exported") from None
    reason = None
    sizes = [batch, batch - 1, batch - 2]
    try:
        if batch < 4:
            raise Mismatch(f"the traced batch {batch} is below 4")
        recs = [first, record(slice(0, batch - 1)), record(slice(2, None))]
        calls, shapes = _generalize(recs, sizes)
    except Mismatch as exc:
        reason = str(exc)
        calls, shapes = _generalize([first], [batch])
    rec, loss_index, grad_index = first
    leaves = _leaf_values(rec, shapes, named, buffers)
    graph, values = build(rec, calls, shapes, leaves, batch)
    trainable = []
    for name, p in named:
        g_index = grad_index.get(name)
        grad = None
        if id(p) in trainable_ids and g_index is not None:
            grad = graph.contiguous(values[g_index])
        trainable.append((name, leaves["param:" + name], grad))
    opt_state = _optimizer_state(graph, spec, trainable)
    loss = values[loss_index]
    _prune(graph, [loss] + [g for _, _, g in trainable if g is not None])
    live = [loss] + [g for _, _, g in trainable if g is not None]
    fuse_log_softmax_backward(graph, live)
    plan = make_plan(graph, live, batch)
    state = {name: t._host().copy() for name, t in named + buffers}
    program = Program(graph, plan,
                      [(n, leaves["param:" + n]) for n, _ in named] +
                      [(n, leaves["buffer:" + n]) for n, _ in buffers],
                      trainable, opt_state, spec, leaves["input:x"], leaves["input:y"], loss,
                      batch, batch if reason else 1, reason, state, backend.get_rng_state())
    program.emit_step()
    if measure_eager:
        program.eager_peak_bytes = eager_peak_bytes(model, loss_fn, (x, y), optimizer)
    return program


def _check_inputs(example_inputs: Any) -> tuple[Tensor, Tensor]:
    if not isinstance(example_inputs, (tuple, list)) or len(example_inputs) != 2 or \
            not all(isinstance(t, Tensor) for t in example_inputs):
        raise ArgumentError("export: example_inputs must be (x, y), two tensors")
    x, y = example_inputs
    for name, t in (("x", x), ("y", y)):
        if t.device != "cpu":
            raise DeviceError(f"export: {name} is on {t.device}; the C step runs on cpu "
                              f"tensors only")
    if x.dtype is not float32 or y.dtype.name != "int64":
        raise DTypeError(f"export: x must be float32 and y int64, got {x.dtype} and {y.dtype}")
    if x.ndim < 1 or y.ndim != 1 or x.shape[0] != y.shape[0] or x.shape[0] < 1:
        raise ShapeError(f"export: x must be [B, ...] and y [B], got x {x.shape} and y "
                         f"{y.shape}")
    return x, y


def _optimizer_spec(optimizer: Any, named: list) -> tuple[OptimizerSpec, set[int]]:
    kinds = ((AdamW, "adamw"), (Adam, "adam"), (SGD, "sgd"))
    kind = next((k for cls, k in kinds if type(optimizer) is cls), None)
    if kind is None:
        raise UnsupportedError(f"export: optimizer {type(optimizer).__name__} has no C emitter "
                               f"(supported: SGD, Adam, AdamW)")
    if optimizer.state:
        raise ArgumentError("export: the optimizer has already stepped; export before the first "
                            "step (its state starts at zero in C)")
    group_of = {id(p): g for g in optimizer.param_groups for p in g["params"]}
    ids = {id(p) for _, p in named}
    stray = [p for p in group_of if p not in ids]
    if stray:
        raise ArgumentError("export: the optimizer holds tensors that are not the model's "
                            "parameters")
    groups = [group_of.get(id(p)) for _, p in named]  # None: not optimized
    return OptimizerSpec(kind, groups), set(group_of)


def _record(model: Any, loss_fn: Callable, xs: np.ndarray, ys: np.ndarray, named: list,
            buffers: list, backend: Any) -> tuple[Recording, int, dict[str, int]]:
    """One recorded step on (xs, ys); model buffers and the generator are restored."""
    xb, yb = from_numpy(np.ascontiguousarray(xs)), from_numpy(np.ascontiguousarray(ys))
    saved = [(t, t._host().copy()) for _, t in named + buffers]  # to restore
    rng = backend.get_rng_state()
    leaves = {"input:x": xb._data, "input:y": yb._data}
    leaves.update({"param:" + n: p._data for n, p in named})
    leaves.update({"buffer:" + n: b._data for n, b in buffers})
    try:
        with recording(backend, leaves) as rec:
            loss = loss_fn(model(xb), yb)
            if not isinstance(loss, Tensor) or loss.numel() != 1 or not loss.requires_grad:
                raise ArgumentError("export: loss_fn must return a one-element tensor that "
                                    "requires grad")
            store = run_backward(loss, ones_like(loss), retain_graph=False, create_graph=False,
                                 accumulate=False)
        grads = {n: rec.by_id[id(store[p]._data)] for n, p in named if p in store}
        return rec, rec.by_id[id(loss._data)], grads
    finally:
        for t, data in saved:
            np.copyto(t._data, data)
        backend.set_rng_state(rng)


def _generalize(recs: list[tuple], sizes: list[int]) -> tuple[list, list]:
    """The calls and value shapes of several recordings of the step as one, sizes that
    follow the batch made symbolic; Mismatch where they differ otherwise."""
    recordings = [r[0] for r in recs]
    first = recordings[0]
    for other in recordings[1:]:
        if len(other.calls) != len(first.calls) or len(other.arrays) != len(first.arrays):
            raise Mismatch(f"{len(first.calls)} vs {len(other.calls)} primitive calls")
    if any(r[1:] != recs[0][1:] for r in recs[1:]):
        raise Mismatch("the loss or gradients come from different values")
    calls = []
    for i, call in enumerate(first.calls):
        peers = [r.calls[i] for r in recordings]
        if any(p.name != call.name or p.outputs != call.outputs or p.args.keys() != call.args.keys()
               for p in peers):
            raise Mismatch(f"call {i}: {call.name} vs {[p.name for p in peers]}")
        args = {k: generalize([p.args[k] for p in peers], sizes) for k in call.args}
        calls.append(type(call)(call.name, args, call.outputs))
    shapes = []
    for v in range(len(first.arrays)):
        kinds = {r.origin[v][0] for r in recordings}
        if len(kinds) != 1:
            raise Mismatch(f"value {v} is made differently")
        shapes.append(generalize([tuple(r.arrays[v].shape) for r in recordings], sizes))
    return calls, shapes


def _leaf_values(rec: Recording, shapes: list, named: list, buffers: list
                 ) -> dict[str, Value]:
    leaves = {}
    for index, (kind, name) in enumerate(rec.origin):
        if kind != "leaf":
            continue
        role = name.split(":", 1)[0]
        array = rec.arrays[index]
        shape = shapes[index]
        nbytes: Any = array.dtype.itemsize
        for s in shape:
            nbytes = nbytes * s
        buf = Buffer(nbytes, {"param": "param", "buffer": "buffer", "input": "input"}[role],
                     name.split(":", 1)[1])
        leaves[name] = Value(buf, array.dtype, shape, contiguous_strides(shape))
    return leaves


def _optimizer_state(graph: Graph, spec: OptimizerSpec, trainable: list
                     ) -> dict[str, list[Value]]:
    """Zeroed state buffers per parameter: momentum (SGD with momentum), or Adam's two
    moments."""
    state = {}
    for (name, p, grad), hyper in zip(trainable, spec.groups):
        if grad is None or hyper is None:
            continue
        count = 2 if spec.kind != "sgd" else (1 if hyper["momentum"] else 0)
        values = []
        for k in range(count):
            buf = Buffer(p.buffer.nbytes, "state", f"{name}.state{k}")
            graph.buffers.append(buf)
            values.append(Value(buf, p.dtype, p.shape, p.strides))
        state[name] = values
    return state


def _prune(graph: Graph, outputs: list[Value]) -> None:
    """Drop nodes nothing needed reads (host-side checks, say).  In-place updates and
    random draws stay: they change state (the generator's stream position)."""
    needed = {id(v.buffer) for v in outputs}
    kept = []
    for node in reversed(graph.nodes):
        if node.kind in ("copy_", "add_", "rand") or any(id(v.buffer) in needed
                                                          for v in node.outputs):
            kept.append(node)
            needed.update(id(v.buffer) for v in node.inputs)
    graph.nodes = kept[::-1]
    used = needed | {id(v.buffer) for n in graph.nodes for v in n.outputs}
    graph.buffers = [b for b in graph.buffers if b.kind != "temp" or id(b) in used]


def eager_peak_bytes(model: Any, loss_fn: Callable, example_inputs: tuple[Tensor, Tensor],
                     optimizer: Any) -> int:
    """Peak bytes eager shrew allocates for one step (forward, backward, update) on copies
    of the model and optimizer, above what they hold before it (tracemalloc sees numpy's
    allocations).  The generator is restored afterwards."""
    backend = get_backend("cpu")
    rng = backend.get_rng_state()
    twin = copy.deepcopy(model)
    accepted = inspect.signature(type(optimizer)).parameters  # AdamW fixes some defaults
    opt = type(optimizer)(list(twin.parameters()), **{
        k: v for k, v in optimizer.defaults.items() if k in accepted})
    x, y = example_inputs
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        loss = loss_fn(twin(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        del loss
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        backend.set_rng_state(rng)
    return peak - base



