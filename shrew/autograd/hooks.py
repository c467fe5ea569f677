"""Gradient hooks: Tensor.register_hook (see, and may replace, a tensor's gradient) and
the post-accumulate hooks that run once a leaf's gradient is final (DistributedDataParallel
builds on them).  The engine (autograd/engine.py) calls them during backward."""
from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from ..core.errors import ShrewTypeError, StateError
from ..core.shape import fmt
from ..ops import inplace as _inplace
from .._tensor import Tensor

if TYPE_CHECKING:
    from .engine import GradStore


# -- Tensor.register_hook: hooks that see (and may replace) a tensor's gradient ------------

TensorHook: TypeAlias = Callable[[Tensor], "Tensor | None"]
tensor_hooks: dict[int, list[TensorHook]] = {}


def run_tensor_hooks(node: Tensor, grad: Tensor) -> Tensor:
    for hook in tensor_hooks.get(node.id, ()):
        out = hook(grad)
        if out is not None:
            if not isinstance(out, Tensor) or out.shape != grad.shape:
                raise StateError(f"register_hook: a hook must return None or a tensor of "
                                 f"shape {fmt(grad.shape)}, got {out!r}")
            grad = out
    return grad


def register_hook(t: Tensor, hook: TensorHook) -> HookHandle:
    """Call hook(grad) each time t's gradient is computed; a tensor it returns replaces
    the gradient (for a leaf: before it is accumulated into .grad)."""
    if not isinstance(t, Tensor) or not t.requires_grad:
        raise StateError("register_hook: cannot register a hook on a tensor that doesn't "
                         "require gradient")
    if not callable(hook):
        raise ShrewTypeError(f"register_hook: hook must be callable, got {type(hook).__name__}")
    tensor_hooks.setdefault(t.id, []).append(hook)
    handle = HookHandle(tensor_hooks, t.id, hook)
    weakref.finalize(t, handle.remove)
    return handle


# -- "this leaf's gradient is final": post-accumulate hooks ------------------------------

PostAccumulateHook: TypeAlias = Callable[[Tensor, "GradStore"], None]
"""Called as hook(leaf, grads) once leaf.grad holds this backward's gradient; `grads` is
the GradStore backward() will return (the hook may replace the leaf's entry)."""

leaf_hooks: dict[int, list[PostAccumulateHook]] = {}


class HookHandle:
    """Returned by register_hook and register_post_accumulate_grad_hook; `remove()`
    unregisters the hook."""

    __slots__ = ("_table", "_key", "_hook")

    def __init__(self, table: dict[int, list], key: int, hook: Callable) -> None:
        self._table, self._key, self._hook = table, key, hook

    def remove(self) -> None:
        hooks = self._table.get(self._key, [])
        if self._hook in hooks:
            hooks.remove(self._hook)
        if not hooks:
            self._table.pop(self._key, None)


def register_post_accumulate_grad_hook(leaf: Tensor, hook: PostAccumulateHook) -> HookHandle:
    """Call hook(leaf, grads) in every backward(), right after leaf's gradient is final and
    accumulated into leaf.grad -- as soon as the last operation that used leaf has run its
    gradient rule, while the rest of backward goes on (like PyTorch's
    Tensor.register_post_accumulate_grad_hook, which DistributedDataParallel builds on).
    Hooks run in registration order; gradients computed inside a checkpoint's recomputation
    do not trigger them (the outer backward does, once)."""
    if not isinstance(leaf, Tensor) or not leaf.is_leaf or not leaf.requires_grad:
        raise StateError("register_post_accumulate_grad_hook: needs a leaf tensor that "
                         "requires grad")
    if not callable(hook):
        raise ShrewTypeError(f"register_post_accumulate_grad_hook: hook must be callable, got "
                             f"{type(hook).__name__}")
    leaf_hooks.setdefault(leaf.id, []).append(hook)
    handle = HookHandle(leaf_hooks, leaf.id, hook)
    weakref.finalize(leaf, handle.remove)  # a dead tensor's hooks go with it
    return handle


def hooked_leaves_by_last_consumer(order: list[Tensor]) -> dict[int, list[Tensor]]:
    """For each node, the hooked leaves whose gradient is complete once it has been
    processed: the leaf's consumer latest in `order` (consumers come before producers)."""
    last: dict[int, tuple[int, Tensor]] = {}
    for node in order:
        op = node._op
        if op is None:
            continue
        if _inplace.rebased:
            op = _inplace.as_recorded(op, node.id)
        for x in op.inputs():
            if x._op is None and x.id in leaf_hooks:
                last[x.id] = (node.id, x)
    early: dict[int, list[Tensor]] = {}
    for consumer, leaf in last.values():
        early.setdefault(consumer, []).append(leaf)
    return early
