"""The Optimizer base: parameter groups, gradient lookup, the no-grad update loop and
PyTorch-layout state dicts."""
from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any, TypeAlias

from ..autograd.engine import GradStore
from ..core.errors import type_name
from ..core.errors import ShrewTypeError, ShrewValueError, UnsupportedError
from ..core.grad_mode import enable_grad, no_grad
from ..ops.complex.pair import view_as_real
from ..ops.creation import zeros_like
from ..core.shape import fmt
from .._tensor import Tensor

Params: TypeAlias = Tensor | Iterable[Tensor] | Iterable[dict[str, Any]]
"""What optimizers take: tensors, or parameter groups (dicts with "params" and options)."""
ParamsT: TypeAlias = Params  # torch.optim.optimizer's name for it


class _RequiredParameter:
    """torch.optim.optimizer.required: the default of an option that must be given (old
    optimizers written against PyTorch's base use it as `lr=required`)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

Step: TypeAlias = tuple[Tensor, float] | Tensor | None
"""What `Optimizer.update` returns: (direction, scale) for p += scale * direction, p's new
value, or None when the update already wrote p."""


class ParamState(dict[int, dict[str, Any]]):
    """Per-parameter state keyed by the parameter's id; indexing with the parameter
    itself works too (`opt.state[p]`, as in PyTorch), and, as PyTorch's defaultdict(dict),
    reading the state of a parameter that has none gives it an empty dict."""

    @staticmethod
    def _key(key: Any) -> Any:
        return key.id if isinstance(key, Tensor) else key

    def __getitem__(self, key: Any) -> dict[str, Any]:
        return super().__getitem__(self._key(key))

    def __missing__(self, key: Any) -> dict[str, Any]:
        fresh: dict[str, Any] = {}
        super().__setitem__(key, fresh)
        return fresh

    def __setitem__(self, key: Any, value: dict[str, Any]) -> None:
        super().__setitem__(self._key(key), value)

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(self._key(key))

    def pop(self, key: Any, *default: Any) -> Any:
        return super().pop(self._key(key), *default)

    def __contains__(self, key: object) -> bool:
        return super().__contains__(self._key(key))

    def get(self, key: Any, default: Any = None) -> Any:
        return super().get(self._key(key), default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        return super().setdefault(self._key(key), default)


class Optimizer:
    """Holds `param_groups` (dicts with "params" and per-group options, as PyTorch's) and
    per-parameter `state` (keyed by the parameter's id, or the parameter); subclasses define
    `update(p, grad, group, state)`, which returns the parameter's step as
    (direction, scale): p += scale * direction, in one in-place pass, or the parameter's
    new value as a tensor.  Updates are tensor operations on the parameter's device.

    Every optimizer takes `maximize` (ascend instead of descend) and `weight_decay`; the
    base applies both to the gradient before `update` sees it: L2 decay adds
    weight_decay * p to the gradient, decoupled decay (AdamW, `decoupled_weight_decay=True`)
    shrinks p by lr * weight_decay first."""

    decoupled = False  # weight decay shrinks p (AdamW) instead of adding to the gradient

    def __init__(self, params: Params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = []
        self.state = ParamState()  # parameter id -> that parameter's state
        _refuse_a_set(type(self).__name__, params)
        groups: list[Any] = [params] if isinstance(params, Tensor) else list(params)
        if not groups:
            raise ShrewValueError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines + [")"])

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group: a dict with "params" and options that override the defaults."""
        name = type(self).__name__
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise ShrewTypeError(f"{name}: a parameter group must be a dict with a 'params' entry")
        params = param_group["params"]
        _refuse_a_set(name, params)
        params = [params] if isinstance(params, Tensor) else list(params)
        taken = {p.id for g in self.param_groups for p in g["params"]}
        for p in params:
            if not isinstance(p, Tensor) or not p.requires_grad or not p.is_leaf:
                got = (f"a tensor of shape {fmt(p.shape)} (requires_grad={p.requires_grad}, "
                       f"leaf={p.is_leaf})" if isinstance(p, Tensor) else type_name(p))
                raise ShrewValueError(f"{name}: parameters must be leaf tensors that require grad, "
                                      f"got {got}")
            if p.id in taken:
                raise ShrewValueError(f"{name}: a parameter (shape {fmt(p.shape)}) appears in "
                                      "more than "
                                      f"one place")
            taken.add(p.id)
        group = {**self.defaults, **param_group, "params": params}
        self.check(group)
        self.param_groups.append(group)

    def check(self, group: dict[str, Any]) -> None:
        """Validate a group's options (each optimizer checks its own on top)."""
        for key in ("lr", "weight_decay", "eps"):
            if key in group and not group[key] >= 0:
                raise ShrewValueError(f"{type(self).__name__}: {key} must be >= 0, "
                                      f"got {group[key]!r}")

    def check_betas(self, group: dict[str, Any]) -> None:
        """The (beta1, beta2) pair of the Adam family: two numbers in [0, 1)."""
        betas = group["betas"] = tuple(group["betas"])
        if len(betas) != 2 or not all(0.0 <= b < 1.0 for b in betas):
            raise ShrewValueError(f"{type(self).__name__}: betas must be two numbers in [0, 1), "
                                  f"got {betas!r}")

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's .grad: to None (the default, as PyTorch's), or to zeros
        in place with set_to_none=False."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad.copy_(zeros_like(p.grad))

    def step(self, grads: GradStore | Callable[[], Any] | None = None,
             closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient: from `grads` (a GradStore) if given,
        else from its .grad.  A `closure` (also accepted in the first place, as in
        `opt.step(closure)`) is called first with gradients enabled; its result is returned."""
        if callable(grads) and not isinstance(grads, GradStore):
            grads, closure = None, grads
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad if grads is None else grads.get(p)
                    if g is not None:
                        if p.dtype.is_complex:  # as PyTorch's: the real pairs are updated
                            p, g = view_as_real(p), view_as_real(g)
                        self._step_one(p, g, group)
        return loss

    def _step_one(self, p: Tensor, grad: Tensor, group: dict[str, Any]) -> None:
        if group.get("maximize"):
            grad = -grad
        wd = group.get("weight_decay", 0.0)
        if wd and (self.decoupled or group.get("decoupled_weight_decay")):
            p.add_(p, alpha=-group["lr"] * wd)  # p *= 1 - lr * wd, in place
        elif wd:
            grad = grad + p * wd
        step = self.update(p, grad, group, self.state.setdefault(p.id, {}))
        if isinstance(step, tuple):
            p.add_(step[0], alpha=step[1])
        elif step is not None:
            p.copy_(step)

    def update(self, p: Tensor, grad: Tensor, group: dict[str, Any],
               state: dict[str, Any]) -> Step:
        """Parameter p's step, (direction, scale), or its new value, given its gradient
        (maximize and weight decay already applied), its group's options and its state dict
        (which the method may update).  Subclasses define it."""
        raise NotImplementedError

    # -- state dicts, in PyTorch's layout -------------------------------------------------
    def _all_params(self) -> list[Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: that parameter's state}, "param_groups": [options with
        "params" as indices]}, indices counting the parameters of all groups in order, as
        torch.optim's; tensors in it are the optimizer's own (save or clone them)."""
        index = {p.id: i for i, p in enumerate(self._all_params())}
        groups = [{**{k: v for k, v in g.items() if k != "params"},
                   "params": [index[p.id] for p in g["params"]]} for g in self.param_groups]
        state = {index[pid]: dict(s) for pid, s in self.state.items() if pid in index and s}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state_dict() of an optimizer built over the same parameters (one of
        torch.optim's loads too: its tensor steps become numbers).  State tensors move to
        their parameter's device and dtype."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ShrewTypeError(f"{name}.load_state_dict: expected a dict with 'state' and "
                                 f"'param_groups', got {type(state_dict).__name__}")
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ShrewValueError(f"{name}.load_state_dict: the state dict has {len(saved)} "
                                  f"parameter groups, the optimizer {len(self.param_groups)}")
        for i, (ours, theirs) in enumerate(zip(self.param_groups, saved)):
            if len(ours["params"]) != len(theirs["params"]):
                raise ShrewValueError(f"{name}.load_state_dict: group {i} has "
                                      f"{len(ours['params'])} parameters, the state dict's "
                                      f"{len(theirs['params'])}")
        by_index = {i: p for g_ours, g_theirs in zip(self.param_groups, saved)
                    for i, p in zip(g_theirs["params"], g_ours["params"])}
        state = ParamState()
        for i, s in state_dict["state"].items():
            p = by_index.get(int(i))
            if p is None:
                raise ShrewValueError(f"{name}.load_state_dict: state for parameter index {i}, "
                                      f"which no group lists")
            state[p.id] = {k: _restore(k, v, p) for k, v in s.items()}
        self.state = state
        self.param_groups = [{**copy.deepcopy({k: v for k, v in theirs.items() if k != "params"}),
                              "params": ours["params"]}
                             for ours, theirs in zip(self.param_groups, saved)]


def refuse_differentiable(name: str, differentiable: bool) -> None:
    """foreach / fused / capturable pick PyTorch kernels and are accepted by every optimizer;
    a step that is itself differentiable is not supported."""
    if differentiable:
        raise UnsupportedError(f"{name}: differentiable=True is not supported")


def _refuse_a_set(name: str, params: Any) -> None:
    if isinstance(params, (set, frozenset)):
        raise ShrewTypeError(f"{name}: parameters must be an ordered collection, not a set "
                             f"(a set's order changes between runs)")


def _restore(key: str, value: Any, p: Tensor) -> Any:
    """One state entry as the optimizer keeps it: counters as numbers, buffers as tensors
    on p's device in p's dtype."""
    if isinstance(value, Tensor):
        if key in ("step", "mu_product") and value.ndim == 0:  # torch's 0-d tensor scalars
            number = value.item()
            return int(number) if key == "step" and float(number).is_integer() else number
        return value.to(device=p.device, dtype=p.dtype)
    return copy.deepcopy(value)
