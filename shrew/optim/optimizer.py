"""The Optimizer base: parameter groups, gradient lookup and the no-grad update loop."""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

from ..errors import ShrewError
from ..grad_mode import no_grad
from ..shape import fmt
from ..tensor import Tensor

if TYPE_CHECKING:
    from ..backprop import GradStore

Params: TypeAlias = Tensor | Iterable[Tensor] | Iterable[dict[str, Any]]
"""What optimizers take: tensors, or parameter groups (dicts with "params" and options)."""

Step: TypeAlias = tuple[Tensor, float] | Tensor
"""What `Optimizer.update` returns: (direction, scale) for p += scale * direction, or p's
new value."""


class Optimizer:
    """Holds `param_groups` (dicts with "params" and per-group options, as PyTorch's) and
    per-parameter `state`; subclasses define `update(p, grad, group, state)`, which returns
    the parameter's step as (direction, scale): p += scale * direction, in one in-place
    pass (`add_`), or the parameter's new value as a tensor.  Updates are tensor operations
    on the parameter's device."""

    def __init__(self, params: Params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[int, dict[str, Any]] = {}  # parameter id -> that parameter's state
        groups: list[Any] = [params] if isinstance(params, Tensor) else list(params)
        if not groups:
            raise ShrewError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group: a dict with "params" and options that override the defaults."""
        name = type(self).__name__
        if not isinstance(group, dict) or "params" not in group:
            raise ShrewError(f"{name}: a parameter group must be a dict with a 'params' entry")
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        taken = {p.id for g in self.param_groups for p in g["params"]}
        for p in params:
            if not isinstance(p, Tensor) or not p.requires_grad or not p.is_leaf:
                got = (f"a tensor of shape {fmt(p.shape)} (requires_grad={p.requires_grad}, "
                       f"leaf={p.is_leaf})" if isinstance(p, Tensor) else type(p).__name__)
                raise ShrewError(f"{name}: parameters must be leaf tensors that require grad, "
                                 f"got {got}")
            if p.id in taken:
                raise ShrewError(f"{name}: a parameter (shape {fmt(p.shape)}) appears in more than "
                                 f"one place")
            taken.add(p.id)
        group = {**self.defaults, **group, "params": params}
        self.check(group)
        self.param_groups.append(group)

    def check(self, group: dict[str, Any]) -> None:
        """Validate a group's options (each optimizer names its own)."""
        for key in ("lr", "weight_decay"):
            if not group[key] >= 0:
                raise ShrewError(f"{type(self).__name__}: {key} must be >= 0, got {group[key]!r}")

    def zero_grad(self) -> None:
        """Reset the .grad of every parameter to None."""
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    def step(self, grads: GradStore | None = None) -> None:
        """Update every parameter that has a gradient: from `grads` (a GradStore) if given,
        else from its .grad."""
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad if grads is None else grads.get(p)
                    if g is not None:
                        step = self.update(p, g, group, self.state.setdefault(p.id, {}))
                        if isinstance(step, tuple):
                            p.add_(step[0], alpha=step[1])
                        else:
                            p.copy_(step)

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        """Parameter p's step, (direction, scale), or its new value, given its gradient, its
        group's options and its state dict (which the method may update).  Subclasses
        define it."""
        raise NotImplementedError
