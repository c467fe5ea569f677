"""torch.nn.utils.parametrize: a tensor of a module computed from other tensors on each
access.

As in PyTorch, register_parametrization moves the tensor `name` into
`module.parametrizations[name]` (a ParametrizationList holding `original`, or `original0`,
`original1`, ... when the parametrization's right_inverse returns several tensors) and
changes the module's class to a subclass "Parametrized<Class>" with a property `name`
that runs the parametrizations; so the state_dict keys are PyTorch's
(`parametrizations.weight.original0`) and PyTorch's state dicts load."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ...core.errors import ShrewTypeError, ShrewValueError, StateError
from ...core.fields import replace_storage
from ...core.grad_mode import no_grad
from ..._tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

# cached(): while it is active each parametrized tensor is computed once per module.
_cache_depth = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside this context a parametrized tensor is computed at its first access and
    reused (a weight used at every step of a recurrent loop)."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _set(original: Tensor, value: Tensor) -> None:
    """original takes value's contents, keeping its identity (optimizers hold it); torch's
    set_, which may change the shape."""
    with no_grad():
        if original.shape == value.shape and original.dtype == value.dtype:
            original.copy_(value)
        else:
            replace_storage(original, value.detach().clone())
            original.shape = value.shape


def _register(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _has_tensor(module: Module, name: str) -> bool:
    """name is a parameter or a (non-None) buffer of module itself."""
    value = vars(module).get(name)
    return isinstance(value, Parameter) or (
        isinstance(value, Tensor) and name in module._buffer_names)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original tensor(s) they
    start from (`original`, or `original0`, ... ).  Built by register_parametrization."""

    original: Tensor

    def __init__(self, modules: Sequence[Module], original: Tensor,
                 unsafe: bool = False) -> None:
        if not modules:
            raise ShrewValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        new: Any = original
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        if not isinstance(new, (Tensor, Sequence)):
            raise ShrewValueError("'right_inverse' must return a Tensor or a Sequence of "
                                  f"tensors (list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if isinstance(new, Tensor):
            if not unsafe and new.dtype != original.dtype:
                raise ShrewValueError(f"When `right_inverse` outputs one tensor, it may not "
                                      f"change the dtype.\noriginal.dtype: {original.dtype}\n"
                                      f"right_inverse(original).dtype: {new.dtype}")
            _set(original, new)
            _register(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ShrewValueError("'right_inverse' must return a Tensor or a Sequence "
                                          "of tensors (list, tuple...). Got element "
                                          f"{i} of type {type(part).__name__}")
                part = part.detach()
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                _register(self, f"original{i}", part)
        if not unsafe:
            _check_output("registering a parametrization", self(), original)

    def right_inverse(self, value: Tensor) -> None:
        """Set the original tensor(s) so that the parametrized tensor becomes value (an
        assignment `module.weight = value`)."""
        new: Any = value
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise StateError(f"parametrization {type(module).__name__} does not "
                                     f"implement right_inverse.")
                new = module.right_inverse(new)
            if self.is_tensor:
                if not isinstance(new, Tensor):
                    raise ShrewValueError(f"`right_inverse` should return a tensor. Got "
                                          f"{type(new).__name__}")
                _set(self.original, new)
                return
            if not isinstance(new, Sequence) or len(new) != self.ntensors:
                raise ShrewValueError(f"'right_inverse' must return a sequence of "
                                      f"{self.ntensors} tensors")
            for i, part in enumerate(new):
                _set(getattr(self, f"original{i}"), part)

    def forward(self) -> Tensor:
        first, *rest = list(self)
        if self.is_tensor:
            x = first(self.original)
        else:
            x = first(*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in rest:
            x = module(x)
        return x


def _check_output(what: str, out: object, original: Tensor) -> None:
    """Without unsafe=True a parametrization must keep the tensor's shape and dtype."""
    if not isinstance(out, Tensor):
        raise ShrewValueError(f"{what}: a parametrization must return a tensor. Got "
                              f"{type(out).__name__}.")
    if out.shape != original.shape or out.dtype != original.dtype:
        raise ShrewValueError(
            f"{what}: the parametrization may not change the shape or dtype of the tensor, "
            f"unless `unsafe` flag is enabled.\nunparametrized dtype: {original.dtype}\n"
            f"parametrized dtype: {out.dtype}\nunparametrized shape: {tuple(original.shape)}"
            f"\nparametrized shape: {tuple(out.shape)}")


def _inject_new_class(module: Module) -> None:
    """Give module a class of its own, "Parametrized<Class>", to hold the properties."""
    cls = type(module)
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})


def _inject_property(module: Module, name: str) -> None:
    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[name]  # type: ignore[attr-defined]
        if not _cache_depth:
            return parametrization()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = parametrization()
        return _cache[key]

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)  # type: ignore[attr-defined]

    setattr(type(module), name, property(get_parametrized, set_original))


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether module has a parametrization (on tensor_name, when given)."""
    parametrizations = vars(module).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    """The module's class before register_parametrization changed it."""
    cls = type(module)
    return cls.__bases__[0] if is_parametrized(module) else cls


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make module.tensor_name the output of parametrization (after those already there)
    on the original tensor; see the module's docstring for where things go."""
    if not isinstance(parametrization, Module):
        raise ShrewTypeError(f"register_parametrization: the parametrization must be a Module, "
                             f"got {type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]  # type: ignore[attr-defined]
        if not unsafe:
            current = getattr(module, tensor_name)
            out = parametrization(current)
            _check_output("register_parametrization", out, current)
            if hasattr(parametrization, "right_inverse"):
                _check_output("register_parametrization (right_inverse)",
                              parametrization.right_inverse(out), current)
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if not _has_tensor(module, tensor_name):
        raise ShrewValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                              f"parametrized element with name '{tensor_name}'")
    original = vars(module)[tensor_name]
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if tensor_name in module._buffer_names:
        module._buffer_names.remove(tensor_name)
    if not is_parametrized(module):
        _inject_new_class(module)
        module.parametrizations = ModuleDict()  # type: ignore[attr-defined]
    module.parametrizations[tensor_name] = plist  # type: ignore[attr-defined]
    _inject_property(module, tensor_name)
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo register_parametrization on tensor_name: the tensor becomes a plain parameter
    (or buffer) again, holding its parametrized value (leave_parametrized) or the original."""
    if not is_parametrized(module, tensor_name):
        raise ShrewValueError(f"Module {module} does not have a parametrization on "
                              f"{tensor_name}")
    plist = module.parametrizations[tensor_name]  # type: ignore[attr-defined]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            _set(original, value)
    else:
        if not leave_parametrized:
            raise ShrewValueError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                                  "tensor that is parametrized in terms of a sequence of "
                                  "tensors.")
        with no_grad():
            value = getattr(module, tensor_name)
        first = plist.original0
        original = (Parameter(value.detach(), first.requires_grad)
                    if isinstance(first, Parameter) else value.detach())
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]  # type: ignore[attr-defined]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module
