"""``shrew.compile`` and ``shrew.compiler``: PyTorch's graph compiler entry points.

``compile(model)`` returns an ``OptimizedModule`` (``compile(fn)`` a ``CompiledFunction``)
that captures each call at the level of the backend's primitives, checks that the capture
settles, and then replays it without building tensors or autograd records per op; a model's
forward is captured with its backward.  docs/compiling.md says what is captured, what
breaks a graph and what is guarded.  ``explain(fn, *args)`` reports on one call.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .compiled import MADE, CompiledFunction, Options, capturing, made
from .module import OptimizedModule

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "allow_in_graph",
           "cudagraph_mark_step_begin", "reset", "explain", "arena_bytes", "CompiledFunction",
           "OptimizedModule", "ExplainOutput"]



def compile(model: Callable[..., Any] | None = None, *,  # noqa: A001  (torch's name)
            fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable[..., Any] | None = None, mode: str | None = None,
            options: dict[str, Any] | None = None, name: str | None = None,
            disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None) -> Any:
    """A compiled `model` (an nn.Module: an OptimizedModule around it) or function; without
    `model`, a decorator.  `disable=True` returns `model` itself.  `options={"fuse": False}`
    replays without fusing elementwise runs, `options={"arena": False}` takes the arrays
    and buffers from their allocator (numpy's, a device's pool) rather than a planned
    arena.  `dynamic`, `mode` and `backend` are
    accepted: shrew specialises every shape (each new shape is a recompile) and has one
    way to compile."""
    given = dict(options or {})
    replay = Options(fuse=bool(given.pop("fuse", True)), arena=bool(given.pop("arena", True)))

    def build(target: Callable[..., Any]) -> Any:
        if disable:
            return target
        from ..nn.modules.module import Module
        if isinstance(target, Module):
            return OptimizedModule(target, fullgraph, recompile_limit, replay)
        return made(CompiledFunction(target, fullgraph, recompile_limit, replay))
    return build if model is None else build(model)


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """`fn` itself: a plain function always runs eagerly (inside a compiled one its
    primitives are captured with the rest); without `fn`, a decorator."""
    return (lambda f: f) if fn is None else fn


def is_compiling() -> bool:
    """True while a compiled function's call is being captured."""
    return capturing()


is_dynamo_compiling = is_compiling


def allow_in_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` itself: a capture records the primitives of every function a call runs."""
    return fn


def cudagraph_mark_step_begin() -> None:
    """Nothing to mark: replays do not run through CUDA graphs, so no replay's outputs
    are overwritten by the next (PyTorch's reason to mark a new step)."""


def arena_bytes() -> int:
    """The bytes held by the replay arenas of every compiled function's programs (their
    static memory plans, on the cpu and OpenCL; docs/compiling.md)."""
    return sum(function.arena_bytes() for function in list(MADE))


def reset() -> None:
    """Forget every captured program: the next call of each compiled function captures
    afresh."""
    for function in list(MADE):
        function.reset()


@dataclass
class ExplainOutput:
    """What `explain` found (the fields of torch._dynamo's ExplainOutput that apply)."""

    graph_count: int
    graph_break_count: int
    break_reasons: list[str]
    op_count: int
    ops: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        lines += [f"  {i + 1}. {r}" for i, r in enumerate(self.break_reasons)]
        return "\n".join(lines)


def explain(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run `fn(*args, **kwargs)` once, captured, and report its graph and breaks (the call
    runs, with its side effects, as torch._dynamo.explain's does).  Without arguments, as
    torch._dynamo.explain(fn)(*args) is written: a function that does so when called."""
    if not args and not kwargs:
        return lambda *args, **kwargs: _explain(fn, args, kwargs)
    return _explain(fn, args, kwargs)


def _explain(fn: Callable[..., Any], args: tuple, kwargs: dict) -> ExplainOutput:
    probe = CompiledFunction(fn, fullgraph=False)
    probe(*args, **kwargs)
    entry = next(iter(probe.entries.values()), None)
    calls = entry.last.calls if entry is not None and entry.last is not None else []
    breaks = list(probe.breaks)
    return ExplainOutput(graph_count=0 if breaks else 1, graph_break_count=len(breaks),
                         break_reasons=breaks, op_count=len(calls),
                         ops=[c.name for c in calls])
