"""torch.nn.utils.prune: masks on a module's tensors, as PyTorch keeps them.

Pruning `weight` moves the parameter to `weight_orig`, adds the buffer `weight_mask`, and
makes `weight` a plain attribute (`weight_orig * weight_mask`) that a forward pre-hook (the
pruning method itself) recomputes before each forward; pruning again combines the masks in a
PruningContainer, and remove() makes the pruned values the parameter again.  Masks are
computed on the host (they are not differentiated) and then moved to the tensor's device;
ties between equal magnitudes may pick other entries than PyTorch's topk."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ...core.errors import ShrewTypeError, ShrewValueError
from ...core.grad_mode import no_grad
from ...ops.random import rand
from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured",
           "LnStructured", "PruningContainer", "RandomStructured", "RandomUnstructured",
           "custom_from_mask", "global_unstructured", "identity", "is_pruned", "l1_unstructured",
           "ln_structured", "random_structured", "random_unstructured", "remove"]


def _check_amount(amount: Any) -> None:
    if not isinstance(amount, (int, float)) or isinstance(amount, bool):
        raise ShrewTypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, int) and amount < 0) or (
            isinstance(amount, float) and not 0.0 <= amount <= 1.0):
        raise ShrewValueError(f"amount={amount} should either be a float in the range [0, 1] "
                              "or a non-negative integer")


def _count(amount: int | float, size: int) -> int:
    """How many of `size` entries to prune (torch's _compute_nparams_toprune)."""
    if isinstance(amount, int):
        if amount > size:
            raise ShrewValueError(f"amount={amount} should be smaller than the number of "
                                  f"parameters to prune={size}")
        return amount
    return round(amount * size)


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy())


class BasePruningMethod:
    """A pruning method: compute_mask(t, default_mask) gives the new mask; an instance is
    also the forward pre-hook that reapplies it."""

    PRUNING_TYPE = "unstructured"
    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        mask = self._mask(_host(t), _host(default_mask))
        return Tensor(mask, dtype=default_mask.dtype, device=default_mask.device)

    def _mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def apply_mask(self, module: Module) -> Tensor:
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any,
              importance_scores: Tensor | None = None, **kwargs: Any) -> BasePruningMethod:
        """Prune module.<name> with cls(*args, **kwargs), combined with earlier pruning."""
        old = [(k, h) for k, h in module._forward_pre_hooks.items()
               if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        orig = getattr(module, name)
        scores = orig if importance_scores is None else importance_scores
        if scores.shape != orig.shape:
            raise ShrewValueError(f"importance_scores should have the same shape as parameter "
                                  f"{name} of {module}")
        method: BasePruningMethod = cls(*args, **kwargs)
        method._tensor_name = name
        if old:
            container = PruningContainer(old[0][1])
            container.add_pruning_method(method)
            method = container
            default = _host(getattr(module, name + "_mask"))
        else:
            module.register_parameter(name + "_orig", orig)
            delattr(module, name)
            default = np.ones(orig.shape)
        mask = method.compute_mask(scores, Tensor(default, dtype=orig.dtype,
                                                  device=orig.device))
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        if old:
            del module._forward_pre_hooks[old[0][0]]
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """t with this method's mask applied (no module involved)."""
        scores = t if importance_scores is None else importance_scores
        default = Tensor(np.ones(t.shape), dtype=t.dtype, device=t.device) \
            if default_mask is None else default_mask
        return t * self.compute_mask(scores, default)

    def remove(self, module: Module) -> None:
        """Make the pruned values module.<name> again: the original Parameter object,
        without the _orig parameter, the _mask buffer and the hook."""
        weight = self.apply_mask(module)
        if self._tensor_name in vars(module):
            delattr(module, self._tensor_name)
        orig = getattr(module, self._tensor_name + "_orig")
        with no_grad():
            orig.copy_(weight)
        delattr(module, self._tensor_name + "_orig")
        delattr(module, self._tensor_name + "_mask")
        module._buffer_names.remove(self._tensor_name + "_mask")
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Successive pruning of one tensor: each new method prunes among the entries (or
    channels) the earlier ones kept."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod):
            raise ShrewTypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if self._pruning_methods and method._tensor_name != self._tensor_name:
            raise ShrewValueError(f"Can only add pruning methods acting on the parameter named "
                                  f"'{self._tensor_name}' to PruningContainer {self}. Found "
                                  f"'{method._tensor_name}'")
        self._tensor_name = method._tensor_name
        self._pruning_methods += (method,)

    def _mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        method = self._pruning_methods[-1]
        new_mask = default_mask.copy()
        if method.PRUNING_TYPE == "unstructured":
            keep = default_mask == 1
            new_mask[keep] = method._mask(t[keep], default_mask[keep])
            return new_mask
        index: list[Any] = [slice(None)] * t.ndim
        if method.PRUNING_TYPE == "structured":
            dim = method.dim % t.ndim  # type: ignore[attr-defined]
            others = tuple(d for d in range(t.ndim) if d != dim)
            index[dim] = default_mask.sum(axis=others) != 0
        part = tuple(index)
        new_mask[part] = method._mask(t[part], default_mask[part])
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones)."""

    def _mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    def __init__(self, amount: int | float) -> None:
        _check_amount(amount)
        self.amount = amount

    def _scores(self, t: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        k = _count(self.amount, t.size)
        mask = default_mask.copy()
        if k:
            flat = mask.reshape(-1)
            flat[np.argsort(self._scores(t).reshape(-1), kind="stable")[:k]] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes `amount` entries chosen at random (shrew's generator)."""

    def _scores(self, t: np.ndarray) -> np.ndarray:
        return -_host(rand(*t.shape))  # the k largest random draws, as torch's topk


class L1Unstructured(_Unstructured):
    """Prunes the `amount` entries of smallest magnitude."""

    def _scores(self, t: np.ndarray) -> np.ndarray:
        return np.abs(t)


class _Structured(BasePruningMethod):
    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def _channel_scores(self, t: np.ndarray, dim: int) -> np.ndarray:
        raise NotImplementedError

    def _mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        dim = self.dim % t.ndim
        size = t.shape[dim]
        k = _count(self.amount, size)
        if not k:
            return default_mask
        keep = np.argsort(-self._channel_scores(t, dim), kind="stable")[:size - k]
        index: list[Any] = [slice(None)] * t.ndim
        index[dim] = keep
        mask = np.zeros_like(default_mask)
        mask[tuple(index)] = 1
        return mask * default_mask


class RandomStructured(_Structured):
    """Prunes `amount` channels along dim at random."""

    def _channel_scores(self, t: np.ndarray, dim: int) -> np.ndarray:
        return _host(rand(t.shape[dim]))


class LnStructured(_Structured):
    """Prunes the `amount` channels along dim of smallest L`n` norm."""

    def __init__(self, amount: int | float, n: int | float | str, dim: int = -1) -> None:
        super().__init__(amount, dim)
        self.n = n

    def _channel_scores(self, t: np.ndarray, dim: int) -> np.ndarray:
        rows = np.moveaxis(t, dim, 0).reshape(t.shape[dim], -1)
        named = {"fro": 2.0, "inf": np.inf, "-inf": -np.inf}
        order = named[self.n] if isinstance(self.n, str) else float(self.n)
        return np.linalg.norm(rows, ord=order, axis=1)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (combined with the current one)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def _mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        return default_mask * _host(self.mask).reshape(default_mask.shape)


def identity(module: Module, name: str) -> Module:
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: int | float,
                    importance_scores: Tensor | None = None) -> Module:
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: int | float, n: int | float | str,
                  dim: int, importance_scores: Tensor | None = None) -> Module:
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type,
                        importance_scores: dict[tuple[Module, str], Tensor] | None = None,
                        **kwargs: Any) -> None:
    """Prune the tensors of `parameters` (module, name) pairs together, as one vector: the
    method (unstructured) picks among all their entries."""
    pairs = list(parameters)
    scores = importance_scores or {}
    flat = np.concatenate([_host(scores.get((m, n), getattr(m, n))).reshape(-1)
                           for m, n in pairs])
    default = np.concatenate([
        _host(getattr(m, n + "_mask")).reshape(-1) if hasattr(m, n + "_mask")
        else np.ones(getattr(m, n).numel()) for m, n in pairs])
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise ShrewTypeError(f'Only "unstructured" PRUNING_TYPE supported for the '
                             f'`pruning_method`. Found method {pruning_method} of type '
                             f'{method.PRUNING_TYPE}')
    method._tensor_name = "temp"
    container = PruningContainer(method)
    final = container._mask(flat, default)
    at = 0
    for module, name in pairs:
        param = getattr(module, name)
        part = final[at:at + param.numel()].reshape(param.shape)
        custom_from_mask(module, name, Tensor(part, dtype=param.dtype, device=param.device))
        at += param.numel()


def remove(module: Module, name: str) -> Module:
    """Make the pruning of module.<name> permanent and drop its mask and hook."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ShrewValueError(f"Parameter '{name}' of module {module} has to be pruned before "
                          f"pruning can be removed")


def is_pruned(module: Module) -> bool:
    """Whether module or one of its sub-modules has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, m in module.named_modules() for hook in m._forward_pre_hooks.values())
