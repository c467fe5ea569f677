"""Gradient checkpointing: keep a function's inputs, drop its intermediates, recompute in
backward with the random-number state replayed."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..core import autocast as _autocast
from ..core import op as O
from ..backends.registry import live_backends
from ..core.errors import ShrewTypeError, StateError
from ..core.fields import AnyTensor, wrap
from ..core.grad_mode import enable_grad, is_grad_enabled

if TYPE_CHECKING:
    from .engine import GradStore
    from ..nn.modules.module import Module
    from .._tensor import Tensor

    RunBackward = Callable[..., GradStore]

_T = TypeVar("_T")
_state = threading.local()


def in_recomputation() -> bool:
    """True while a checkpointed function is being re-run in backward.  Modules with side
    effects (BatchNorm's running statistics) skip them then, so they happen once."""
    return getattr(_state, "depth", 0) > 0


def _outputs(result: object) -> tuple[Tensor, ...]:
    if isinstance(result, AnyTensor):
        return (result,)
    if isinstance(result, (tuple, list)) and all(isinstance(r, AnyTensor) for r in result):
        return tuple(result)
    raise ShrewTypeError(f"checkpoint: the function must return a tensor or a tuple of tensors, "
                         f"got {type(result).__name__}")


def _captured(outputs: Sequence[Tensor], args: Sequence[object]) -> tuple[Tensor, ...]:
    """Tensors needing grad that the recorded run read from outside: its tensor arguments
    and any parameter (leaf) it used.  The walk stops at both."""
    boundary = {a.id for a in args if isinstance(a, AnyTensor)}
    seen: set[int] = set()
    found: dict[int, Tensor] = {}
    stack = [o for o in outputs if o.requires_grad]
    while stack:
        t = stack.pop()
        if t.id in seen:
            continue
        seen.add(t.id)
        if t.id in boundary or t._op is None:
            found[t.id] = t
            continue
        stack.extend(x for x in t._op.inputs() if x.requires_grad)
    return tuple(found[i] for i in sorted(found))


def checkpoint(fn: Callable[..., _T], *args: Any) -> _T:
    """Run fn(*args) keeping only its inputs; its graph is rebuilt during backward."""
    if not callable(fn):
        raise ShrewTypeError(f"checkpoint: fn must be callable, got {type(fn).__name__}")
    if not is_grad_enabled():
        return fn(*args)
    rng_states = tuple((be, be.get_rng_state()) for be in live_backends())
    autocast_settings = _autocast.snapshot()
    with enable_grad():
        result: Any = fn(*args)
    outputs = _outputs(result)
    captured = _captured(outputs, args)
    if not captured:
        return result
    wrapped = []
    for i, out in enumerate(outputs):
        if out.requires_grad:
            out = wrap(out._data, out._backend, O.Checkpoint(fn, args, captured, rng_states, i,
                                                            autocast_settings))
        wrapped.append(out)
    return cast(_T, wrapped[0] if isinstance(result, AnyTensor) else type(result)(wrapped))


def checkpoint_grads(y: Tensor, op: O.Checkpoint, g: Tensor, run_backward: RunBackward,
                     ) -> list[tuple[Tensor, Tensor | None]]:
    """Backward of a Checkpoint node: replay the RNG, re-run fn, backpropagate through it
    with `run_backward` (backprop's, passed in so that this module need not import it)."""
    if is_grad_enabled():
        raise StateError("checkpoint: backward(create_graph=True) through a checkpoint is not "
                         "supported; run the function without checkpoint for higher-order "
                         "gradients")
    saved = [(be, be.get_rng_state()) for be, _ in op.rng_states]
    # Tensor arguments become fresh leaves so their gradients land in the local store.
    args = tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, AnyTensor) else a
                 for a in op.args)
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        for be, state in op.rng_states:
            be.set_rng_state(state)
        # recomputed in the dtypes the forward ran in: its autocast settings are back
        with enable_grad(), _autocast.restored(op.autocast):
            outputs = _outputs(op.fn(*args))
    finally:
        _state.depth -= 1
        for be, state in saved:
            be.set_rng_state(state)
    out = outputs[op.output_index]
    if out.shape != y.shape or not out.requires_grad:
        raise StateError("checkpoint: recomputation gave a different result "
                         f"(shape {out.shape} vs {y.shape}); the function must be deterministic")
    # retain_graph: a non-leaf tensor that fn read from outside (a closure) is walked
    # here too, and the outer backward may still need its graph.
    store = run_backward(out, g, retain_graph=True, create_graph=False, accumulate=False)
    result = []
    for t in op.captured:
        # t may be passed as several arguments and also read directly (a closure): its
        # gradient is the sum over every copy the recomputation used.
        sources = [new for orig, new in zip(op.args, args) if orig is t] + [t]
        grad = None
        for part in (store.get(s) for s in sources):
            if part is not None:
                grad = part if grad is None else grad + part
        result.append((t, grad))
    return result


def checkpoint_sequential(functions: Module | Iterable[Callable[[Tensor], Tensor]],
                          segments: int, input: Tensor) -> Tensor:
    """Split a sequence of functions into `segments` runs and checkpoint each one."""
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if not functions:
        raise StateError("checkpoint_sequential: needs at least one function")
    if not isinstance(segments, int) or segments < 1:
        raise StateError(f"checkpoint_sequential: segments must be an int >= 1, got {segments!r}")
    segments = min(segments, len(functions))
    size, extra = divmod(len(functions), segments)
    start = 0
    for s in range(segments):
        end = start + size + (1 if s < extra else 0)
        chunk = functions[start:end]
        input = checkpoint(_run_chain(chunk), input)
        start = end
    return input


def _run_chain(chunk: Sequence[Callable[[Tensor], Tensor]]) -> Callable[[Tensor], Tensor]:
    def run(x: Tensor) -> Tensor:
        for f in chunk:
            x = f(x)
        return x
    return run
