"""Module.register_full_backward_hook / register_full_backward_pre_hook, as PyTorch runs
them: identity Functions around a call's tensor inputs and outputs see the gradients
flowing through them.

- pre hooks: hook(module, grad_output) when the gradients of the outputs are known; a
  tuple returned replaces grad_output.
- hooks: hook(module, grad_input, grad_output) when the gradients of the positional
  inputs are known (None for arguments that are not tensors or need no gradient; all None,
  at grad_output time, when no input needs one); a tuple returned replaces grad_input."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...autograd.function import Function, FunctionCtx
from ...core.errors import ArgumentError
from ...core.grad_mode import is_grad_enabled
from ..._tensor import Tensor

if TYPE_CHECKING:
    from .module import Module

Hook = Callable[..., Any]


class _Call:
    """One call of a module with backward hooks: its inputs, and grad_output once known."""

    def __init__(self, module: Module, n_args: int, inputs_need_grad: bool) -> None:
        self.module = module
        self.n_args = n_args
        self.inputs_need_grad = inputs_need_grad
        self.grad_output: tuple = ()

    def run_pre_hooks(self, grads: tuple) -> tuple:
        for hook in list(self.module._backward_pre_hooks.values()):
            changed = hook(self.module, grads)
            if changed is not None:
                grads = _checked("backward pre hook", changed, len(grads))
        self.grad_output = grads
        if not self.inputs_need_grad:
            self.run_hooks((None,) * self.n_args)
        return grads

    def run_hooks(self, grads: tuple) -> tuple:
        for hook in list(self.module._backward_hooks.values()):
            changed = hook(self.module, grads, self.grad_output)
            if changed is not None:
                grads = _checked("backward hook", changed, len(grads))
        return grads


def _checked(what: str, changed: Any, n: int) -> tuple:
    changed = changed if isinstance(changed, tuple) else (changed,)
    if len(changed) != n:
        raise ArgumentError(f"{what} returned {len(changed)} gradients where {n} were "
                            f"expected")
    return changed


class _InputIdentity(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, call: _Call, *args: Any) -> tuple:
        ctx.call = call  # type: ignore[attr-defined]
        return args

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> tuple:
        needs = ctx.needs_input_grad[1:]
        grads = tuple(g if need else None for g, need in zip(grads, needs))
        return (None, *ctx.call.run_hooks(grads))  # type: ignore[attr-defined]


class _OutputIdentity(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, call: _Call, *outputs: Any) -> tuple:
        ctx.call = call  # type: ignore[attr-defined]
        return outputs

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> tuple:
        return (None, *ctx.call.run_pre_hooks(grads))  # type: ignore[attr-defined]


def call_with_backward_hooks(module: Module, forward: Callable[..., Any], *args: Any,
                             **kwargs: Any) -> Any:
    """forward(*args, **kwargs) with the module's backward hooks around it."""
    if not is_grad_enabled():
        return forward(*args, **kwargs)
    need = any(isinstance(a, Tensor) and a.requires_grad for a in args)
    call = _Call(module, len(args), need)
    if need:
        args = _InputIdentity.apply(call, *args)
    out = forward(*args, **kwargs)
    outputs = out if isinstance(out, (tuple, list)) else (out,)
    if not any(isinstance(o, Tensor) and o.requires_grad for o in outputs):
        return out
    wrapped = _OutputIdentity.apply(call, *outputs)
    if isinstance(out, Tensor):
        return wrapped[0]
    return type(out)(wrapped)
