"""Module: the container of parameters, buffers and sub-modules (the containers of
several modules are in container.py)."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ...core.dtype import DType, as_dtype, bfloat16, float16, float32, float64
from ...core.errors import ArgumentError, ShrewError, ShrewTypeError, type_name
from ...core.fields import replace_storage
from ...core.grad_mode import no_grad
from ...core.shape import fmt
from ..._tensor import Tensor
from ...ops.cast import _is_dtype as is_dtype, _legacy_type
from ..parameter import Parameter
from .backward_hooks import call_with_backward_hooks

if TYPE_CHECKING:
    from ...typing import DTypeLike


__all__ = ["Module"]


_M = TypeVar("_M", bound="Module")


class SubmoduleError(ShrewError, AttributeError):
    """A dotted module path names no sub-module (PyTorch raises AttributeError)."""


class NameClashError(ShrewError, KeyError):
    """A parameter, buffer or module name is empty, dotted or already an attribute
    (PyTorch raises KeyError)."""


class RemovableHandle:
    """What register_forward_hook / register_forward_pre_hook return: remove() takes the
    hook out again; usable as a context manager that removes it on exit."""

    _next_id = 0

    def __init__(self, hooks: dict[int, Callable[..., Any]]) -> None:
        self._hooks = hooks
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Module:
    """Base class of layers and models.

    Parameters and sub-modules are found among the attributes (a Parameter or a Module
    assigned to `self`), in the order they were assigned; buffers are tensors named with
    register_buffer.  Subclasses call super().__init__() first and define forward()."""

    def __init__(self) -> None:
        self.training = True
        self._buffer_names: list[str] = []
        self._non_persistent: set[str] = set()
        self._forward_pre_hooks: dict[int, Callable[..., Any]] = {}
        self._forward_hooks: dict[int, Callable[..., Any]] = {}
        self._backward_hooks: dict[int, Callable[..., Any]] = {}
        self._backward_pre_hooks: dict[int, Callable[..., Any]] = {}
        self._load_state_dict_pre_hooks: dict[int, Callable[..., Any]] = {}

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation; `module(...)` calls it.  Subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self.__dict__.get("_compiled_call")
        if compiled is not None:  # Module.compile()
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's calls in place (torch.nn.Module.compile): `shrew.compile`'s
        arguments; the module stays itself (no OptimizedModule, no "_orig_mod." keys)."""
        from ...compiler import compile as compile_

        compiled = compile_(self._call_impl, *args, **kwargs)
        if hasattr(compiled, "modules"):  # their training flags are guarded
            compiled.modules.extend(self.modules())
        self._compiled_call = compiled

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        # getattr: a subclass that skipped Module.__init__ still runs (without hooks).
        pre, post = getattr(self, "_forward_pre_hooks", None), getattr(self, "_forward_hooks", None)
        forward: Callable[..., Any] = self.forward
        if getattr(self, "_backward_hooks", None) or getattr(self, "_backward_pre_hooks", None):
            forward = partial(call_with_backward_hooks, self, self.forward)
        if not pre and not post:
            return forward(*args, **kwargs)
        for hook in list((pre or {}).values()):
            changed = hook(self, args)
            if changed is not None:
                args = changed if isinstance(changed, tuple) else (changed,)
        out = forward(*args, **kwargs)
        for hook in list((post or {}).values()):
            changed = hook(self, args, out)
            if changed is not None:
                out = changed
        return out

    def register_forward_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(module, args) runs before forward; a non-None result replaces args (a
        single value is wrapped in a tuple)."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(module, args, output) runs after forward; a non-None result replaces the
        output."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any],
                                        prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_output) runs when the gradients of this module's outputs are
        known; a tuple returned replaces grad_output (backward_hooks.py)."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any],
                                    prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_input, grad_output) runs when the gradients of the module's
        positional inputs are known; a tuple returned replaces grad_input."""
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) runs as load_state_dict reaches this module, before
        any key is checked: it may rewrite the entries under `prefix` (a copy of the
        state_dict given), add to the key lists, or add an error message, which fails the
        load."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., Any],
                                           with_module: bool = False) -> RemovableHandle:
        """The older form (gpt-fast, torchtune): hook(state_dict, prefix, ...) without the
        module unless with_module."""
        return _add_hook(self.__dict__.setdefault("_load_state_dict_pre_hooks", {}),
                         partial(hook, self) if with_module else hook, prepend=False)

    def _check_new_name(self, what: str, name: object) -> str:
        if not isinstance(name, str):
            raise NameClashError(f"{what}: the name must be a str, got {type(name).__name__}")
        if not name or "." in name:
            raise NameClashError(f"{what}: the name must be non-empty and contain no '.', "
                                 f"got {name!r}")
        if hasattr(self, name) and name not in vars(self):
            raise NameClashError(f"{what}: {name!r} is already an attribute of "
                                 f"{type(self).__name__}")
        return name

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that is state but not learned (BatchNorm's running statistics): it is
        moved by to() and optimizers never see it; state_dict saves it unless
        persistent=False."""
        self._check_new_name("register_buffer", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise ShrewTypeError(f"register_buffer: {name!r} must be a Tensor or None, got "
                                 f"{type_name(tensor)}")
        setattr(self, name, tensor)
        if name not in self._buffer_names:
            self._buffer_names.append(name)
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter under `name` (None keeps the name with no parameter, as a
        layer built with bias=False)."""
        self._check_new_name("register_parameter", name)
        if param is not None and not isinstance(param, Parameter):
            raise ShrewTypeError(f"register_parameter: {name!r} must be a Parameter or None, got "
                                 f"{type(param).__name__}")
        setattr(self, name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a sub-module under `name` (as assigning it to an attribute does)."""
        self._check_new_name("add_module", name)
        if module is not None and not isinstance(module, Module):
            raise ShrewTypeError(f"add_module: {name!r} must be a Module or None, got "
                                 f"{type(module).__name__}")
        setattr(self, name, module)

    def register_module(self, name: str, module: Module | None) -> None:
        """add_module under PyTorch's other name."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The sub-module at dotted path `target` ("" is this module)."""
        module: Module = self
        for part in target.split(".") if target else ():
            child = vars(module).get(part)
            if not isinstance(child, Module):
                raise SubmoduleError(f"get_submodule: {type(module).__name__} has no "
                                     f"sub-module {part!r} (path {target!r})")
            module = child
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target` ("block.0.weight")."""
        return self._get_state(target, "get_parameter", "parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target` ("bn.running_mean")."""
        return self._get_state(target, "get_buffer", "buffer")

    def _get_state(self, target: str, op: str, kind: str) -> Any:
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        value = vars(module).get(name)
        found = isinstance(value, Parameter) if kind == "parameter" else \
            name in module._buffer_names and value is not None
        if not found:
            raise SubmoduleError(f"{op}: {type(module).__name__} has no {kind} {name!r} "
                                 f"(path {target!r})")
        return value

    def apply(self: _M, fn: Callable[[Module], Any]) -> _M:
        """Call fn on every sub-module, children before parents, then on self (the usual
        way to run a custom weight initialisation); returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- walking the tree ----------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(attribute name, module) of each direct sub-module, in assignment order."""
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value

    def children(self) -> Iterator[Module]:
        """The direct sub-modules, in assignment order."""
        return (m for _, m in self.named_children())

    def named_modules(self, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every descendant, parents before children; a module reachable
        by several paths comes once, or under each path with remove_duplicate=False."""
        seen = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate and id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            kids = [(f"{name}.{n}" if name else n, m) for n, m in module.named_children()]
            stack.extend(reversed(kids))

    def modules(self) -> Iterator[Module]:
        """This module and every descendant, each once, parents first."""
        return (m for _, m in self.named_modules())

    def _named_state(self, persistent_only: bool = False,
                     recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        """(name, tensor) of every parameter and buffer, shared ones under each name;
        persistent_only leaves out the buffers registered with persistent=False."""
        tree = self.named_modules(remove_duplicate=False) if recurse else iter([("", self)])
        for prefix, module in tree:
            buffers = module._buffer_names
            skipped = getattr(module, "_non_persistent", ()) if persistent_only else ()
            for name, value in vars(module).items():
                if isinstance(value, Parameter) or (name in buffers and value is not None
                                                    and name not in skipped):
                    yield (f"{prefix}.{name}" if prefix else name), value

    def named_parameters(self, prefix: str = "",
                         recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) of every parameter in the tree (only this module's
        with recurse=False), each once."""
        seen = set()
        for name, t in self._named_state(recurse=recurse):
            if isinstance(t, Parameter) and t.id not in seen:
                seen.add(t.id)
                yield (f"{prefix}.{name}" if prefix else name), t

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter in the tree, each once (what an optimizer takes)."""
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix: str = "",
                      recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, tensor) of every registered buffer in the tree."""
        return ((f"{prefix}.{n}" if prefix else n, t)
                for n, t in self._named_state(recurse=recurse) if not isinstance(t, Parameter))

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every registered buffer in the tree."""
        return (t for _, t in self.named_buffers(recurse=recurse))

    # -- state ---------------------------------------------------------------------------
    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> dict[str, Tensor]:
        """Parameters and persistent buffers by dotted name, in an OrderedDict, detached
        unless keep_vars (they share memory with the module's tensors)."""
        return OrderedDict((prefix + name, t if keep_vars else t.detach())
                           for name, t in self._named_state(persistent_only=True))

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy values into this module's tensors in place.  Missing or unexpected keys
        (when strict) and wrong shapes raise a ShrewError naming each of them, before
        anything is written.  Returns PyTorch's named tuple (missing_keys, unexpected_keys).
        assign=True is accepted: the values are copied either way.  Each module's
        load-state-dict pre-hooks run first, on a copy of `state_dict`."""
        state_dict, hooked_missing, hooked_unexpected = self._run_load_pre_hooks(state_dict,
                                                                                 strict)
        own = dict(self._named_state(persistent_only=True))
        # Buffers a module lists in `optional_state` may be absent (BatchNorm's
        # num_batches_tracked, which older checkpoints lack): they keep their value.
        optional = {f"{prefix}.{name}" if prefix else name
                    for prefix, m in self.named_modules()
                    for name in getattr(m, "optional_state", ())}
        missing = [k for k in own if k not in state_dict and k not in optional]
        missing += [k for k in hooked_missing if k not in missing]
        unexpected = [k for k in state_dict if k not in own]
        unexpected += [k for k in hooked_unexpected if k not in unexpected]
        values = {k: v if isinstance(v, Tensor) else Tensor(v) for k, v in state_dict.items()
                  if k in own}
        wrong = [f"{k} (expected {fmt(own[k].shape)}, got {fmt(v.shape)})"
                 for k, v in values.items() if v.shape != own[k].shape]
        problems = []
        if strict and missing:
            problems.append("missing keys: " + ", ".join(missing))
        if strict and unexpected:
            problems.append("unexpected keys: " + ", ".join(unexpected))
        if wrong:
            problems.append("wrong shapes: " + ", ".join(wrong))
        if problems:
            raise ArgumentError(f"load_state_dict into {type(self).__name__}: " + "; "
                                "".join(problems))
        with no_grad():
            for k, v in values.items():
                own[k].copy_(v)
        return _IncompatibleKeys(missing, unexpected)

    def _run_load_pre_hooks(self, state_dict: Mapping[str, Any], strict: bool
                            ) -> tuple[Mapping[str, Any], list[str], list[str]]:
        """(the state_dict the hooks made, the missing and unexpected keys they named)."""
        hooked = [(prefix, m) for prefix, m in self.named_modules()
                  if getattr(m, "_load_state_dict_pre_hooks", None)]
        if not hooked:
            return state_dict, [], []
        state_dict = OrderedDict(state_dict)
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        for prefix, m in hooked:
            for hook in list(m._load_state_dict_pre_hooks.values()):
                hook(state_dict, f"{prefix}." if prefix else "", {}, strict, missing,
                     unexpected, errors)
        if errors:
            raise ArgumentError(f"load_state_dict into {type(self).__name__}: "
                                + "; ".join(errors))
        return state_dict, missing, unexpected

    def train(self: _M, mode: bool = True) -> _M:
        """Set training mode (dropout active, BatchNorm on batch statistics) on the whole
        tree; returns self."""
        for m in self.modules():
            m.training = bool(mode)
        return self

    def eval(self: _M) -> _M:
        """train(False); returns self."""
        return self.train(False)

    def to(self: _M, *args: Any, **kwargs: Any) -> _M:
        """Move parameters and buffers to a device and floating ones to a floating dtype,
        in place: the same Parameter objects keep working in optimizers built before the
        move.  PyTorch's forms: to(device=None, dtype=None, non_blocking=False),
        to(dtype), to(tensor) (its device and dtype), memory_format= accepted."""
        device, dtype = _to_args(args, kwargs)
        if dtype is not None and not as_dtype(dtype).is_floating_point:
            raise ShrewTypeError(f"Module.to only accepts floating point dtypes, but got "
                                 f"desired dtype={as_dtype(dtype)}")
        return self._convert(device, dtype, floating_only=True)

    def _convert(self: _M, device: Any, dtype: DTypeLike | None, floating_only: bool) -> _M:
        seen = set()
        for _, t in self._named_state():
            if t.id not in seen:
                seen.add(t.id)
                cast = dtype if t.dtype.is_floating_point or not floating_only else None
                _move(t, device, cast)
        return self

    def type(self: _M, dst_type: DTypeLike | str) -> _M:
        """Cast every parameter and buffer, integer ones too, to dst_type (a dtype or a
        name such as "torch.DoubleTensor")."""
        legacy = _legacy_type(dst_type)
        if legacy is not None:  # shrew.FloatTensor, "torch.cuda.FloatTensor": also a device
            dtype, on_cuda = legacy
            return self._convert("cuda" if on_cuda else "cpu", dtype, floating_only=False)
        return self._convert(None, as_dtype(dst_type), floating_only=False)

    def float(self: _M) -> _M:
        """to(float32)."""
        return self.to(float32)

    def double(self: _M) -> _M:
        """to(float64)."""
        return self.to(float64)

    def half(self: _M) -> _M:
        """to(float16)."""
        return self.to(float16)

    def bfloat16(self: _M) -> _M:
        """to(bfloat16)."""
        return self.to(bfloat16)

    def cpu(self: _M) -> _M:
        """to("cpu")."""
        return self.to("cpu")

    def cuda(self: _M, device: Any = None) -> _M:
        """to the CUDA device `device` (an index or "cuda:N"; None: the current one); a
        DeviceError saying why when no CUDA device is usable."""
        from ...cuda import _cuda
        return self.to(_cuda.device_string(device, "Module.cuda"))

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's .grad: to None, or to zeros with set_to_none=False."""
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = p.grad * 0.0

    def requires_grad_(self: _M, requires_grad: bool = True) -> _M:
        """Switch gradient tracking of every parameter on or off (freezing); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    # -- display -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The arguments shown in repr(module); layers override it."""
        return ""

    def __repr__(self) -> str:
        # As PyTorch prints it: one line for a leaf, else the extra_repr lines and then
        # "(name): child" lines indented inside the parentheses.
        extra = self.extra_repr()
        kids = [f"({n}): " + repr(m).replace("\n", "\n  ") for n, m in self.named_children()]
        if not kids and "\n" not in extra:
            return f"{type(self).__name__}({extra})"
        lines = (extra.split("\n") if extra else []) + kids
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class _IncompatibleKeys(NamedTuple):
    """What load_state_dict returns, as PyTorch's: the keys it did not find and the keys
    it did not use."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


def _add_hook(hooks: dict[int, Callable[..., Any]], hook: Callable[..., Any],
              prepend: bool) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        for key in [k for k in hooks if k != handle.id]:
            hooks[key] = hooks.pop(key)  # move the others behind the new one
    return handle


def place(module: Module, device: Any, dtype: DTypeLike | None) -> None:
    """PyTorch's factory kwargs (nn.Linear(..., device=, dtype=)): the parameters and buffers
    a layer's __init__ made move to device, the floating ones to dtype."""
    if device is not None or dtype is not None:
        module.to(device=device, dtype=dtype)


def _to_args(args: tuple, kwargs: dict[str, Any]) -> tuple[Any, DTypeLike | None]:
    """(device, dtype) from Module.to's arguments, in any of PyTorch's forms."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)  # transfers complete before to() returns
    kwargs.pop("memory_format", None)  # shrew's tensors are always row-major
    if kwargs:
        raise ShrewTypeError(f"Module.to: unexpected keyword argument {next(iter(kwargs))!r}")
    for arg in args:
        if isinstance(arg, bool):
            continue  # non_blocking, positionally
        if isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif is_dtype(arg):
            dtype = arg
        elif arg is not None:
            device = arg
    if device is not None and not isinstance(device, str):
        device = f"cuda:{device}" if isinstance(device, int) else str(device)
    return device, dtype


def _move(t: Tensor, device: str | DType | None, dtype: DTypeLike | None) -> None:
    """Rebind t's storage to a converted copy: a move changes where the memory lives, so
    it cannot be a copy into the old storage."""
    if t.dtype.is_complex:  # its real pairs move (a module's dtype casts leave complex alone)
        from ...ops.complex.pair import view_as_real
        pair = view_as_real(t)
        _move(pair, device, None)
        t._backend = pair._backend
        return
    moved = t.detach().to(device=device, dtype=dtype)
    if moved._data is t._data:
        return
    replace_storage(t, moved)
    if t.grad is not None:
        t.grad = t.grad.to(device=device, dtype=dtype)
