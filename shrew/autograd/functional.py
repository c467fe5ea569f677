"""torch.autograd.functional: vjp, jvp, jacobian, hessian, hvp and vhp of a function of
tensors, all from reverse mode (jvp as the vjp of a vjp, which is linear in its
cotangent)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core.errors import StateError
from ..core.grad_mode import enable_grad
from ..ops.creation import tensor, zeros, zeros_like
from ..ops.shape.recorded import stack
from ..core.shape import numel
from .._tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(op: str, what: str, value: Any) -> tuple[bool, tuple[Tensor, ...]]:
    single = isinstance(value, Tensor)
    out = (value,) if single else tuple(value)
    if not all(isinstance(t, Tensor) for t in out):
        raise StateError(f"{op}: {what} must be a tensor or a tuple of tensors")
    return single, out


def track(x: Tensor, create_graph: bool) -> Tensor:
    """x as a tensor to differentiate with respect to: a fresh leaf, or (create_graph,
    nested in an outer transform) a node still connected to x's graph."""
    if create_graph and x.requires_grad:
        return x + 0.0 if x.dtype.is_floating_point else x
    return x.detach().requires_grad_(x.dtype.is_floating_point)


def vjps(outs: Sequence[Tensor], ins: Sequence[Tensor], vs: Sequence[Tensor | None],
         create_graph: bool) -> tuple[Tensor, ...]:
    """The gradients of sum(out * v) with respect to each input (zeros where unused)."""
    from . import grad  # the autograd package imports this module
    live = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
    if not live:
        return tuple(zeros_like(x) for x in ins)
    gs = grad([o for o, _ in live], list(ins), [v for _, v in live], retain_graph=True,
              create_graph=create_graph, allow_unused=True)
    return tuple(zeros_like(x) if g is None else g for g, x in zip(gs, ins))


def _cotangents(op: str, outs: tuple[Tensor, ...], v: Any) -> tuple[Tensor | None, ...]:
    if v is None:
        if any(numel(o.shape) != 1 for o in outs):
            raise StateError(f"{op}: v can only be None if the function's output has a "
                             f"single element")
        return tuple(None for _ in outs)
    _, vs = _as_tuple(op, "v", v)
    if len(vs) != len(outs) or any(a.shape != o.shape for a, o in zip(vs, outs)):
        raise StateError(f"{op}: v must have the shapes of the function's outputs, "
                         f"{[list(o.shape) for o in outs]}")
    return vs


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T J): the vector-Jacobian product."""
    single_in, ins = _as_tuple("vjp", "inputs", inputs)
    with enable_grad():
        tracked = tuple(track(x, create_graph) for x in ins)
        out = func(*tracked)
        single_out, outs = _as_tuple("vjp", "the function's output", out)
        result = vjps(outs, tracked, _cotangents("vjp", outs, v), create_graph)
    return _detached(out, create_graph), result[0] if single_in else result


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), J v): the Jacobian-vector product, as the vjp of a vjp."""
    single_in, ins = _as_tuple("jvp", "inputs", inputs)
    if v is None:
        if any(numel(x.shape) != 1 for x in ins):
            raise StateError("jvp: v can only be None if the input has a single element")
        vs: tuple[Tensor, ...] = tuple(zeros_like(x) + 1 for x in ins)
    else:
        _, vs = _as_tuple("jvp", "v", v)
        if len(vs) != len(ins) or any(a.shape != x.shape for a, x in zip(vs, ins)):
            raise StateError("jvp: v must have the shapes of the inputs")
    with enable_grad():
        tracked = tuple(track(x, create_graph) for x in ins)
        out = func(*tracked)
        single_out, outs = _as_tuple("jvp", "the function's output", out)
        dummies = tuple(zeros_like(o).requires_grad_(o.dtype.is_floating_point) for o in outs)
        back = vjps(outs, tracked, dummies, True)  # linear in the dummies
        result = vjps(back, dummies, vs, create_graph)
    return _detached(out, create_graph), result[0] if single_out else result


def _detached(out: Any, create_graph: bool) -> Any:
    if create_graph:
        return out
    return out.detach() if isinstance(out, Tensor) else tuple(o.detach() for o in out)


def jacobian_rows(outs: Sequence[Tensor], ins: Sequence[Tensor], create_graph: bool
                  ) -> list[list[Tensor]]:
    """For each output o and input x, d o / d x, of shape o.shape + x.shape (one reverse
    pass per output element)."""
    table = []
    for o in outs:
        rows: list[list[Tensor]] = [[] for _ in ins]
        flat = numel(o.shape)
        for k in range(flat):
            unit = _onehot(flat, k, o).reshape(*o.shape)
            for j, g in enumerate(vjps([o], ins, [unit], create_graph)):
                rows[j].append(g)
        table.append([stack(r).reshape(*o.shape, *x.shape) if r else
                      zeros(*o.shape, *x.shape, dtype=x.dtype, device=x.device)
                      for r, x in zip(rows, ins)])
    return table


def _onehot(n: int, k: int, like: Tensor) -> Tensor:
    values = [0.0] * n
    values[k] = 1.0
    return tensor(values, dtype=like.dtype, device=like.device)


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian: a tensor of shape output.shape + input.shape, nested in tuples as
    torch's (per output, then per input) when either is a tuple."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise StateError(f"jacobian: strategy must be 'reverse-mode' or 'forward-mode', got "
                         f"{strategy!r}")
    single_in, ins = _as_tuple("jacobian", "inputs", inputs)
    with enable_grad():
        tracked = tuple(track(x, create_graph) for x in ins)
        single_out, outs = _as_tuple("jacobian", "the function's output", func(*tracked))
        table = jacobian_rows(outs, tracked, create_graph)
    per_out = [row[0] if single_in else tuple(row) for row in table]
    return per_out[0] if single_out else tuple(per_out)


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a function with a single-element output: the jacobian of its
    gradient."""
    single_in, ins = _as_tuple("hessian", "inputs", inputs)

    def gradient(*xs: Tensor) -> Any:
        out = func(*xs)
        if not isinstance(out, Tensor) or numel(out.shape) != 1:
            raise StateError("hessian: the function must return a single-element tensor")
        gs = vjps([out.reshape(())], xs, [None], True)
        return gs[0] if single_in else gs

    return jacobian(gradient, inputs, create_graph=create_graph)


def _second(op: str, func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool
            ) -> tuple[Any, Any]:
    single_in, ins = _as_tuple(op, "inputs", inputs)
    _, vs = _as_tuple(op, "v", v)
    with enable_grad():
        tracked = tuple(track(x, create_graph) for x in ins)
        out = func(*tracked)
        if not isinstance(out, Tensor) or numel(out.shape) != 1:
            raise StateError(f"{op}: the function must return a single-element tensor")
        gs = vjps([out], tracked, [None], True)
        result = vjps(gs, tracked, vs, create_graph)
    return _detached(out, create_graph), result[0] if single_in else result


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T H)."""
    return _second("vhp", func, inputs, v, create_graph)


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), H v); equal to vhp, the Hessian of a twice-differentiable function
    being symmetric."""
    return _second("hvp", func, inputs, v, create_graph)
