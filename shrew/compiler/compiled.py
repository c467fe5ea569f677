"""A compiled function: guards, captures, and replays.

Each call is keyed by its guards: every tensor argument's shape, dtype, device and
requires_grad, every other argument's value (numbers, strings) or identity (objects), grad
mode, the training flags of the modules the call was seen to use, and the hyperparameters
of the optimizers whose parameters it writes other than through their step().  For a new
key the call is captured while it runs eagerly (capture.py); when two consecutive captures
of a key record the same program on the same storage, later calls replay it (program.py).
A capture that meets a graph break, or a key whose captures never settle (a Python value
that changes every call, such as Adam's step count), runs eagerly from then on, its reason
kept for `explain`.

A function whose results require grad (a model's forward) is captured with its backward as
AOTAutograd does: the capture also runs the backward from placeholder gradients, and each
replay returns results whose backward replays that recorded backward.
"""
from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from contextlib import ExitStack
from types import MethodType
from dataclasses import dataclass, field
from typing import Any


from ..autograd import engine
from ..autograd.function import Function
from ..core import op as O
from ..core.errors import UnsupportedError
from ..core import autocast, fields
from ..core.fields import wrap
from ..core.grad_mode import is_grad_enabled
from .._tensor import Tensor
from . import capture as C
from .arena import new_arena
from .device_arena import DeviceArena
from .fuse import fuse
from .program import Step, difference, run, steps

RECOMPILE_LIMIT = 8
"""Guard sets kept per compiled function that names no limit of its own: read at each new
guard set, and set by torch._dynamo.config.recompile_limit (shrew._dynamo.config)."""
CAPTURE_LIMIT = 4
"""Captures of one guard set that may differ before it runs eagerly for good."""

_active = [False]  # a capture is running: a compiled function inside it runs eagerly


def capturing() -> bool:
    return _active[0]


# -- flattening arguments and results ------------------------------------------------
def flatten(value: Any, leaves: list[Any]) -> Any:
    """The structure of `value` with its leaves replaced by their index in `leaves`."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value), tuple(flatten(v, leaves) for v in value)
    if isinstance(value, tuple):  # a named tuple
        return type(value), tuple(flatten(v, leaves) for v in value)
    if isinstance(value, dict):
        return dict, tuple((k, flatten(v, leaves)) for k, v in value.items())
    leaves.append(value)
    return len(leaves) - 1


def unflatten(spec: Any, leaves: list[Any]) -> Any:
    if isinstance(spec, int):
        return leaves[spec]
    kind, items = spec
    if kind is dict:
        return {k: unflatten(v, leaves) for k, v in items}
    values = [unflatten(v, leaves) for v in items]
    return kind(*values) if hasattr(kind, "_fields") else kind(values)


def _leaf_guard(value: Any) -> Any:
    if isinstance(value, Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype), str(value.device),
                value.requires_grad, tuple(getattr(value._data, "strides", ())))
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return (type(value), value)
    return (type(value), id(value))


# -- what a capture found ------------------------------------------------------------
@dataclass
class Program:
    """A settled capture, ready to replay."""

    slots: int
    forward: list[Step]
    backward: list[Step] | None
    inputs: list[tuple[int, int]]                 # (slot, input index)
    lives: list[tuple[int, Any, list[Tensor]]]    # (slot, storage, the tensors holding it)
    results: list[tuple[str, Any]]   # per result leaf: ("slot", s), ("input", k), ("object",
    spec: Any                        # a tensor from before the call), ("const", value)
    write_backs: list[tuple[Tensor, tuple[str, Any]]]   # .grad set: ("slot", s), ("none", _)..
    backend_of: dict[int, Any]
    targets: list[tuple[Any, int | None]] = field(default_factory=list)  # (input k or
    grad_outputs: list[int] = field(default_factory=list)  # tensor, its grad slot); the
    grad_positions: list[int] = field(default_factory=list)  # placeholders, which result
    grad_layouts: list[tuple] = field(default_factory=list)  # each stands for, its layout
    plan: list[tuple[list[C.Call], set[int]]] = field(default_factory=list)  # until finish()
    layouts: list[C.Layout] = field(default_factory=list)
    # the forward's arenas and the backward's: numpy's arrays' and each device's
    arenas: tuple[tuple[Any, ...], tuple[Any, ...]] = ((), ())
    read_in_place: set[int] = field(default_factory=set)  # ids of the arrays of lives

    def finish(self, options: Options) -> None:
        """Make the replay's steps from the plan: the forward's (and the backward's), with
        their elementwise runs fused and their memory from an arena as `options` say."""
        made = [steps(fuse(calls, self.layouts, keep) if options.fuse else calls, keep)
                for calls, keep in self.plan]
        self.forward, self.backward = made[0], (made[1] if len(made) > 1 else None)
        if options.arena:  # for the memory of the backends each part's calls run on
            made_on = [_arenas({call.backend for call in calls} - {None})
                       for calls, _ in self.plan]
            self.arenas = (made_on[0], made_on[1] if len(made_on) > 1 else ())
        self.plan, self.layouts = [], []
        self.read_in_place = {id(array) for _, array, _ in self.lives}

    def _run(self, part: int, program: list[Step], env: list[Any]) -> None:
        arenas = self.arenas[part]
        if not arenas:
            run(program, env)
        elif len(arenas) == 1:
            with arenas[0].serving():
                run(program, env)
        else:
            with ExitStack() as stack:
                for arena in arenas:
                    stack.enter_context(arena.serving())
                run(program, env)

    def valid(self) -> str | None:
        """Why the storage this program reads in place is no longer where it was, or None."""
        for _, array, owners in self.lives:
            for t in owners:
                if t._data is not array:
                    return "a tensor's storage was replaced (.data =, load_state_dict, set_)"
        return None

    def replay(self, inputs: list[Tensor]) -> Any:
        env: list[Any] = [None] * self.slots
        for slot, k in self.inputs:
            env[slot] = inputs[k]._data
        for slot, array, _ in self.lives:
            env[slot] = array
        for t, _ in self.write_backs:
            # A .grad the call replaces without reading it (a zero_grad() dropped it, as
            # eagerly) goes now rather than when its successor is set, or a replay would
            # hold both generations of gradients through the backward.
            if t._grad is not None and id(t._grad._data) not in self.read_in_place:
                t._grad = None
        self._run(0, self.forward, env)
        for t, (kind, where) in self.write_backs:
            t._grad = None if kind == "none" else where if kind == "object" else wrap(
                env[where], self.backend_of[where])
        leaves = [wrap(env[where], self.backend_of[where]) if kind == "slot"
                  else inputs[where] if kind == "input" else where
                  for kind, where in self.results]
        if self.backward is not None:
            leaves = self._differentiable(leaves, env, inputs)
        return unflatten(self.spec, leaves)

    def _differentiable(self, leaves: list[Any], env: list[Any], inputs: list[Tensor]
                        ) -> list[Any]:
        """The tensor results, attached to the graph through one Function whose backward
        replays the recorded backward on this call's saved values."""
        args = [inputs[t] if isinstance(t, int) else t for t, _ in self.targets]
        positions = [i for i, (kind, _) in enumerate(self.results) if kind == "slot"]
        made = tuple(leaves[i] for i in positions)
        out = _Replayed.apply(self, env, made, *args)
        result = list(leaves)
        for i, t in zip(positions, out if isinstance(out, tuple) else (out,)):
            result[i] = t
        return result

    def run_backward(self, saved: list[Any], grads: tuple) -> tuple:
        env = list(saved)
        for slot, position, (shape, dtype) in zip(self.grad_outputs, self.grad_positions,
                                                  self.grad_layouts):
            g = grads[position]
            env[slot] = g._data if g is not None else self.backend_of[slot].full(
                shape, 0.0, dtype)
        assert self.backward is not None
        self._run(1, self.backward, env)
        return tuple(None if slot is None else wrap(env[slot], self.backend_of[slot])
                     for _, slot in self.targets)


class _Replayed(Function):
    """A replay's results on the graph: backward replays the program's recorded backward on
    this replay's values.  (One class for every replay: a class made per replay would hold
    them in a reference cycle, and so keep them past the backward, until a collection.)"""

    @staticmethod
    def forward(ctx: Any, program: Program, env: list[Any], made: tuple, *tensors: Any
                ) -> Any:
        ctx.program, ctx.env = program, env
        return made if len(made) != 1 else made[0]

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None, None, None, *ctx.program.run_backward(ctx.env, grads))


MADE: weakref.WeakSet[CompiledFunction] = weakref.WeakSet()
"""Every compiled function compile() made (an OptimizedModule's too), while it lives: for
shrew.compiler.reset() and arena_bytes()."""


def made(function: CompiledFunction) -> CompiledFunction:
    MADE.add(function)
    return function


def _arenas(backends: set[Any]) -> tuple[Any, ...]:
    """The arenas a replay whose calls run on `backends` allocates from: numpy's, for the
    cpu backend's arrays, and one per device backend whose buffers an arena can serve
    (backends.base.ReplayArena: OpenCL's)."""
    arenas: list[Any] = []
    if any(type(b).__name__ == "CPUBackend" for b in backends):
        arenas.append(new_arena())
    arenas += [DeviceArena(b) for b in sorted(backends, key=lambda b: str(b.device))
               if hasattr(b, "arena_part")]
    return tuple(a for a in arenas if a is not None)


@dataclass(frozen=True)
class Options:
    """How settled programs replay (compile's `options`)."""

    fuse: bool = True    # elementwise runs as one generated kernel each
    arena: bool = True   # arrays and buffers from one planned arena per step list


@dataclass
class Entry:
    """One guard set: its last capture, its program once settled, or why it runs eagerly."""

    last: C.Recording | None = None
    program: Program | None = None
    eager: str | None = None
    captures: int = 0
    change: str = ""  # what differed between the last two captures


class CompiledFunction:
    """`shrew.compile(fn)`: calls fn through captured programs (see the module's doc)."""

    def __init__(self, fn: Callable[..., Any], fullgraph: bool = False,
                 recompile_limit: int | None = None, options: Options | None = None) -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        self.options = options or Options()
        self._limit = recompile_limit
        self.entries: dict[Any, Entry] = {}
        self.modules: list[Any] = []
        self.optimizers: list[Any] = []
        self.breaks: list[str] = []
        self.recompiles: list[str] = []
        self.replays = 0
        self._bound: weakref.WeakKeyDictionary[Any, CompiledFunction] = \
            weakref.WeakKeyDictionary()
        self.__wrapped__ = fn
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        """A compiled function in a class body (`@torch.compile def forward(self, x)`) is
        a method: each instance gets its own compiled function of the bound method, with
        its own guard sets (its parameters are other storage, so other programs)."""
        if obj is None:
            return self
        try:
            bound = self._bound.get(obj)
        except TypeError:  # not weakly referable: one compiled function, self a guard
            return MethodType(self, obj)
        if bound is None:
            bound = CompiledFunction(MethodType(self.fn, obj), self.fullgraph, self._limit,
                                     self.options)
            self._bound[obj] = bound
        return bound

    def reset(self) -> None:
        """Forget every captured program, the bound methods' too."""
        self.entries.clear()
        for bound in list(self._bound.values()):
            bound.reset()

    @property
    def recompile_limit(self) -> int:
        return RECOMPILE_LIMIT if self._limit is None else self._limit

    def arena_bytes(self) -> int:
        """The bytes of the replay arenas its settled programs hold (its bound methods'
        too)."""
        return sum(arena.stats()["capacity"] for entry in self.entries.values()
                   if entry.program is not None
                   for arenas in entry.program.arenas for arena in arenas) + sum(
            bound.arena_bytes() for bound in list(self._bound.values()))

    def _key(self, leaves: list[Any]) -> Any:
        state = (is_grad_enabled(), _autocast_state(), tuple(m.training for m in self.modules),
                 tuple(_hyperparameters(o) for o in self.optimizers))
        return state, tuple(_leaf_guard(v) for v in leaves)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _active[0]:
            return self.fn(*args, **kwargs)
        leaves: list[Any] = []
        flatten((args, kwargs), leaves)
        key = self._key(leaves)
        entry = self.entries.get(key)
        if entry is None:
            if len(self.entries) >= self.recompile_limit:
                if not self.recompiles or "limit" not in self.recompiles[-1]:
                    self.recompiles.append(f"recompile_limit ({self.recompile_limit}) reached: "
                                           f"new guard sets run eagerly")
                    warnings.warn(f"shrew.compile: {self.__name__} hit recompile_limit "
                                  f"({self.recompile_limit}); later new guard sets run eagerly",
                                  stacklevel=2)
                return self.fn(*args, **kwargs)
            if self.entries:
                self.recompiles.append(_why_new(self.entries, key))
            entry = self.entries[key] = Entry()
        if entry.eager is not None:
            return self.fn(*args, **kwargs)
        if entry.program is not None:
            why = entry.program.valid()
            if why is None:
                self.replays += 1
                inputs = [v for v in leaves if isinstance(v, Tensor)]
                return entry.program.replay(inputs)
            self.recompiles.append(why)
            entry.program, entry.last = None, None
        return self._capture(entry, args, kwargs, leaves)

    def _capture(self, entry: Entry, args: tuple, kwargs: dict, leaves: list[Any]) -> Any:
        inputs = [v for v in leaves if isinstance(v, Tensor)]
        rec = C.Recording(start_id=next(fields._ids))
        input_slots = []
        for k, t in enumerate(inputs):
            slot = rec.by_id.get(id(t._data))
            if slot is None:
                slot = rec.add(t._data, ("input", k))
            input_slots.append((slot, k))
        _active[0] = True
        try:
            with C.recording(rec, self.fullgraph):
                result = self.fn(*args, **kwargs)
                split = len(rec.calls)
                found = None if rec.breaks else _capture_backward(rec, result, inputs)
        finally:
            _active[0] = False
        entry.captures += 1
        try:
            if rec.breaks:
                raise C.GraphBreak(rec.breaks[0])
            program = _program(rec, result, inputs, input_slots, split, found)
        except C.GraphBreak as exc:
            return self._give_up(entry, f"graph break: {exc}", result)
        finally:
            holders, rec.existing, rec.holders = rec.holders, None, []  # (not to be kept)
        if self._watch(program, holders, rec.stepped):  # the guards grew: re-key the entry
            for key, known in list(self.entries.items()):
                if known is entry:
                    del self.entries[key]
            self.entries[self._key(leaves)] = entry
        change = "first capture" if entry.last is None else difference(entry.last, rec)
        if change is None:  # settled: replay from the next call
            program.finish(self.options)
            entry.program, entry.last = program, None
        elif entry.captures >= CAPTURE_LIMIT:
            return self._give_up(entry, f"the captures keep changing: {change}", result)
        else:
            entry.last, entry.change = rec, change
        return result  # this call ran eagerly: its result and graph are eager's

    def _give_up(self, entry: Entry, reason: str, result: Any) -> Any:
        if self.fullgraph:
            raise UnsupportedError(f"compile(fullgraph=True): {self.__name__}: {reason}")
        entry.eager = reason
        self.breaks.append(reason)
        return result

    def _watch(self, program: Program, holders: list[Any], stepped: set[int]) -> bool:
        """Guard the training flags of the modules (among `holders`, found by the capture)
        that hold storage the call read, and the hyperparameters of the optimizers whose
        parameters or state the call writes in place other than through their step() (an
        update written in the function, which may read `group["lr"]` as a number; a stepped
        optimizer's step runs eagerly, and a call that only reads the parameters, a compiled
        model, leaves its optimizer's schedule free to change); whether any was new."""
        count = len(self.modules) + len(self.optimizers)
        held = {id(t) for _, _, owners in program.lives for t in owners}
        written_slots = {call.args[0].slot for calls, _ in program.plan for call in calls
                         if call.name in C.IN_PLACE and isinstance(call.args[0], C.Ref)}
        written = {id(t) for slot, _, owners in program.lives if slot in written_slots
                   for t in owners}
        from ..nn.modules.module import Module
        for obj in holders:
            if isinstance(obj, Module):
                if obj not in self.modules and any(
                        id(t) in held for t in (*obj.parameters(), *obj.buffers())):
                    self.modules.extend(m for m in obj.modules() if m not in self.modules)
            elif obj not in self.optimizers and id(obj) not in stepped and any(
                    id(t) in written for t in _optimizer_tensors(obj)):
                self.optimizers.append(obj)
        return len(self.modules) + len(self.optimizers) > count


def _optimizer_tensors(optimizer: Any) -> list[Any]:
    """The parameters an optimizer updates and the tensors of its state."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    state = [v for per in optimizer.state.values() for v in per.values()
             if isinstance(v, Tensor)]
    return params + state


def _autocast_state() -> Any:
    """Which device types autocast is on for, and to which dtype (None: off everywhere)."""
    if not autocast.armed:
        return None
    enabled, dtypes, cache, suspended = autocast.snapshot()
    return (tuple(sorted(k for k, on in enabled.items() if on)),
            tuple(sorted((k, str(v)) for k, v in dtypes.items())), suspended)


def _hyperparameters(optimizer: Any) -> tuple:
    return tuple(tuple((k, v) for k, v in group.items() if k != "params"
                       and isinstance(v, (int, float, bool, str, tuple, type(None))))
                 for group in optimizer.param_groups)


def _why_new(entries: dict[Any, Entry], key: Any) -> str:
    old = next(reversed(entries))
    if old[0] != key[0]:
        return ("grad mode, autocast, a module's training flag or an optimizer's "
                "hyperparameter changed")
    for i, (a, b) in enumerate(zip(old[1], key[1])):
        if a != b:
            return f"argument {i}: {a[1:]} -> {b[1:]}"
    return f"{len(old[1])} arguments, then {len(key[1])}"


# -- building a program from a capture ----------------------------------------------
def _capture_backward(rec: C.Recording, result: Any, inputs: list[Tensor]
                      ) -> tuple[list[Tensor], list[int], list[Any]] | None:
    """For results that require grad: run their backward from placeholder gradients
    inside the recording, stopping at the inputs; (roots, placeholder slots, targets)."""
    leaves: list[Any] = []
    flatten(result, leaves)
    roots = [t for t in leaves if isinstance(t, Tensor) and t._op is not None
             and not isinstance(t._op, O.Released)]  # (a loss already backpropagated)
    if not roots or not is_grad_enabled():
        return None
    cut = [(t, t._op) for t in inputs if t.requires_grad and t._op is not None]
    for t, _ in cut:
        t._op = None  # the graph stops at the inputs: the caller's graph continues there
    try:
        order = engine.topological_order(*roots)
        targets: list[Any] = [k for k, t in enumerate(inputs) if t.requires_grad]
        known = {id(t) for t in inputs}
        targets += [t for t in order if t._op is None and t.requires_grad and id(t) not in known
                    and t.id < rec.start_id]
        placeholders: list[int] = []
        pairs = []
        for t in roots:
            g = t._backend.full(t.shape, 1.0, t._data.dtype)
            placeholders.append(rec.add(g, ("grad_out", len(placeholders))))
            pairs.append((t, wrap(g, t._backend)))
        tensors = [inputs[k] if isinstance(k, int) else k for k in targets]
        store = engine.run_backward(pairs[0][0], pairs[0][1], retain_graph=True,
                                    create_graph=False, accumulate=False, more=pairs[1:],
                                    capture=frozenset(t.id for t in tensors))
        grads = [store.get(t) for t in tensors]
    finally:
        for t, op in cut:
            t._op = op
    return roots, placeholders, list(zip(targets, grads))


def _program(rec: C.Recording, result: Any, inputs: list[Tensor],
             input_slots: list[tuple[int, int]], split: int, found: tuple | None) -> Program:
    """The Program of a capture; a GraphBreak where its results or side effects reach
    storage the recording does not know."""
    input_index = {id(t): k for k, t in enumerate(inputs)}

    def place(t: Tensor, what: str) -> tuple[str, Any]:
        if id(t) in input_index:
            return "input", input_index[id(t)]
        if t.id < rec.start_id:  # a tensor from before the call
            return "object", t
        slot = rec.by_id.get(id(t._data))
        if slot is None:
            raise C.GraphBreak(f"{what} was made outside the backend protocol")
        return "slot", slot

    leaves: list[Any] = []
    spec = flatten(result, leaves)
    results = [place(v, "a result") if isinstance(v, Tensor) else ("const", v) for v in leaves]
    write_backs = []
    for t, before in rec.grads_set.values():
        if C.grad_replaced(t, before):
            write_backs.append((t, ("none", None) if t._grad is None
                                else place(t._grad, "a .grad it set")))
    rec.signature = [*results, *((id(t), w) for t, w in write_backs)]
    backend_of = {}
    for call in rec.calls:
        for slot in call.outputs:
            backend_of[slot] = call.backend
    for slot, k in input_slots:
        backend_of[slot] = inputs[k]._backend
    lives = []
    for slot, (kind, owners) in enumerate(rec.origin):
        if kind == "live":
            backend_of[slot] = owners[0]._backend
            lives.append((slot, rec.held[slot], owners))
    keep = {w for kind, w in results if kind == "slot"}
    keep |= {w for _, (kind, w) in write_backs if kind == "slot"}
    program = Program(len(rec.layouts), [], None, input_slots, lives, results, spec, write_backs,
                      backend_of, layouts=rec.layouts)
    if found is None:
        program.plan = [(rec.calls, keep)]
        return program
    roots, placeholders, targets = found
    made = [i for i, (kind, _) in enumerate(results) if kind == "slot"]
    root_slots = [rec.by_id[id(t._data)] for t in roots]
    program.grad_outputs = placeholders
    program.grad_positions = [made.index(results.index(("slot", s))) for s in root_slots]
    program.grad_layouts = [(rec.layouts[s].shape, rec.layouts[s].dtype) for s in placeholders]
    for t, s in zip(roots, placeholders):
        backend_of[s] = t._backend
    grad_slots: list[tuple[Any, int | None]] = []
    for target, g in targets:
        found_slot = None if g is None else rec.by_id.get(id(g._data))
        if g is not None and found_slot is None:
            raise C.GraphBreak("a gradient was made outside the backend protocol")
        grad_slots.append((target, found_slot))
    program.targets = grad_slots
    backward_calls = rec.calls[split:]
    born = {s for call in backward_calls for s in call.outputs} | set(placeholders)
    saved = {s for call in backward_calls for s in call.reads()} - born
    program.plan = [(rec.calls[:split], keep | saved),
                    (backward_calls, {s for _, s in grad_slots if s is not None})]
    return program

