"""A captured call as a program of primitive calls over numbered slots, and its replay.

Replaying runs the recorded primitives on the arrays themselves: no Tensor, no Op record,
no shape or dtype check per op (the guards checked them once for the whole call).  Each
slot is dropped after its last reader, so a replay holds no more memory than eager did.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .capture import Call, Recording, Ref

CONST, SLOT, SLOTS = 0, 1, 2


@dataclass
class Step:
    method: Callable[..., Any]
    spec: tuple[tuple[int, Any], ...]  # per argument: (CONST, value), (SLOT, i), (SLOTS, (i..))
    outputs: tuple[int, ...]
    returns_tuple: bool
    frees: tuple[int, ...]


def _spec(arg: Any) -> tuple[int, Any]:
    if isinstance(arg, Ref):
        return SLOT, arg.slot
    if isinstance(arg, tuple) and arg and all(isinstance(a, Ref) for a in arg):
        return SLOTS, tuple(a.slot for a in arg)
    return CONST, arg


def steps(calls: Sequence[Call], keep: set[int]) -> list[Step]:
    """The calls as Steps, each freeing the slots it reads last (except those in keep)."""
    last: dict[int, int] = {}
    for i, call in enumerate(calls):
        for slot in call.reads():
            last[slot] = i
        for slot in call.outputs:
            last.setdefault(slot, i)  # never read: dropped at once
    frees: dict[int, list[int]] = {}
    for slot, i in last.items():
        if slot not in keep:
            frees.setdefault(i, []).append(slot)
    return [Step(call.method, tuple(_spec(a) for a in call.args), call.outputs,
                 call.returns_tuple, tuple(frees.get(i, ()))) for i, call in enumerate(calls)]


def run(program: Sequence[Step], env: list[Any]) -> None:
    """Replay `program` on `env` (the slots), in place."""
    for step in program:
        args = [value if kind == CONST else env[value] if kind == SLOT
                else tuple(env[i] for i in value) for kind, value in step.spec]
        out = step.method(*args)
        if step.outputs:
            if step.returns_tuple:
                for slot, value in zip(step.outputs, out):
                    env[slot] = value
            else:
                env[step.outputs[0]] = out
        for slot in step.frees:
            env[slot] = None


# -- comparing two captures of the same guards ----------------------------------------
def same_constant(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b)))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(same_constant(x, y) for x, y in zip(a, b)))
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # an object whose == is not a bool
        return a is b


def difference(old: Recording, new: Recording) -> str | None:
    """None when the two recordings run the same program on the same live storage, else
    what differs (a Python value that changes between calls, a step count say)."""
    if len(old.calls) != len(new.calls):
        return f"{len(old.calls)} primitive calls, then {len(new.calls)}"
    for i, (a, b) in enumerate(zip(old.calls, new.calls)):
        if a.name != b.name or a.outputs != b.outputs or len(a.args) != len(b.args):
            return f"call {i}: {a.name}, then {b.name}"
        if getattr(a.method, "__self__", None) is not getattr(b.method, "__self__", None):
            return f"call {i} ({a.name}): another backend"
        for x, y in zip(a.args, b.args):
            if isinstance(x, Ref) or isinstance(y, Ref) or _is_refs(x) or _is_refs(y):
                if x != y:
                    return f"call {i} ({a.name}): other values"
            elif not same_constant(x, y):
                return f"call {i} ({a.name}): an argument changed from {_short(x)} to {_short(y)}"
    if len(old.signature) != len(new.signature):
        return "another number of results or .grad assignments"
    for (kind, a), (kind_b, b) in zip(old.signature, new.signature):
        plain = not (hasattr(a, "_data") or hasattr(b, "_data"))  # tensors: by identity
        if kind != kind_b or (a is not b and not (plain and same_constant(a, b))):
            return f"a result or .grad assignment changed ({kind}, then {kind_b})"
    for slot, (was, now) in enumerate(zip(old.origin, new.origin)):
        if was[0] != now[0]:
            return f"value {slot}: {was[0]}, then {now[0]}"
        if was[0] == "live" and old.held[slot] is not new.held[slot]:
            return f"value {slot}: other storage outside the call (state replaced each call)"
        if was[0] == "input" and was[1] != now[1]:
            return f"value {slot}: input {was[1]}, then input {now[1]}"
    return None


def _is_refs(x: Any) -> bool:
    return isinstance(x, tuple) and bool(x) and all(isinstance(a, Ref) for a in x)


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."
