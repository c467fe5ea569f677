"""Module: the container of parameters, buffers and sub-modules; and Sequential."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..dtype import DType
from ..errors import ShrewError
from ..factory import replace_storage
from ..grad_mode import no_grad
from ..shape import fmt
from ..tensor import Tensor
from .parameter import Parameter, assign_

if TYPE_CHECKING:
    from ..typing import DTypeLike

_M = TypeVar("_M", bound="Module")


class Module:
    """Base class of layers and models.

    Parameters and sub-modules are found among the attributes (a Parameter or a Module
    assigned to `self`), in the order they were assigned; buffers are tensors named with
    register_buffer.  Subclasses call super().__init__() first and define forward()."""

    def __init__(self) -> None:
        self.training = True
        self._buffer_names: list[str] = []

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation; `module(...)` calls it.  Subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def register_buffer(self, name: str, tensor: Tensor | None) -> None:
        """A tensor that is state but not learned (BatchNorm's running statistics): it is
        saved in state_dict and moved by to(), and optimizers never see it."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise ShrewError(f"register_buffer: {name!r} must be a Tensor or None, got "
                             f"{type(tensor).__name__}")
        setattr(self, name, tensor)
        if name not in self._buffer_names:
            self._buffer_names.append(name)

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

    def _named_state(self) -> Iterator[tuple[str, Tensor]]:
        """(name, tensor) of every parameter and buffer, shared ones under each name."""
        for prefix, module in self.named_modules(remove_duplicate=False):
            buffers = module._buffer_names
            for name, value in vars(module).items():
                if isinstance(value, Parameter) or (name in buffers and value is not None):
                    yield (f"{prefix}.{name}" if prefix else name), value

    def named_parameters(self) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) of every parameter in the tree, each once."""
        seen = set()
        for name, t in self._named_state():
            if isinstance(t, Parameter) and t.id not in seen:
                seen.add(t.id)
                yield name, t

    def parameters(self) -> Iterator[Parameter]:
        """Every parameter in the tree, each once (what an optimizer takes)."""
        return (p for _, p in self.named_parameters())

    def named_buffers(self) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, tensor) of every registered buffer in the tree."""
        return ((n, t) for n, t in self._named_state() if not isinstance(t, Parameter))

    def buffers(self) -> Iterator[Tensor]:
        """Every registered buffer in the tree."""
        return (t for _, t in self.named_buffers())

    # -- state ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Tensor]:
        """Parameters and buffers by dotted name, detached (they share memory with the
        module's tensors)."""
        return {name: t.detach() for name, t in self._named_state()}

    def load_state_dict(self, state_dict: Mapping[str, Any],
                        strict: bool = True) -> tuple[list[str], list[str]]:
        """Copy values into this module's tensors in place.  Missing or unexpected keys
        (when strict) and wrong shapes raise a ShrewError naming each of them, before
        anything is written.  Returns (missing, unexpected) key lists."""
        own = dict(self._named_state())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
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
            raise ShrewError(f"load_state_dict into {type(self).__name__}: " + "; ".join(problems))
        with no_grad():
            for k, v in values.items():
                assign_(own[k], v)
        return missing, unexpected

    def train(self: _M, mode: bool = True) -> _M:
        """Set training mode (dropout active, BatchNorm on batch statistics) on the whole
        tree; returns self."""
        for m in self.modules():
            m.training = bool(mode)
        return self

    def eval(self: _M) -> _M:
        """train(False); returns self."""
        return self.train(False)

    def to(self: _M, device: str | DType | None = None, dtype: DTypeLike | None = None) -> _M:
        """Move parameters and buffers to `device` and floating ones to `dtype`, in place:
        the same Parameter objects keep working in optimizers built before the move."""
        if isinstance(device, DType):
            device, dtype = None, device
        seen = set()
        for _, t in self._named_state():
            if t.id not in seen:
                seen.add(t.id)
                _move(t, device, dtype if t.dtype.is_floating_point else None)
        return self

    def zero_grad(self) -> None:
        """Reset every parameter's .grad to None."""
        for p in self.parameters():
            p.grad = None

    # -- display -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The arguments shown in repr(module); layers override it."""
        return ""

    def __repr__(self) -> str:
        head = f"{type(self).__name__}({self.extra_repr()}"
        kids = [f"({n}): " + repr(m).replace("\n", "\n  ") for n, m in self.named_children()]
        if not kids:
            return head + ")"
        return head + "\n  " + "\n  ".join(kids) + "\n)"


def _move(t: Tensor, device: str | DType | None, dtype: DTypeLike | None) -> None:
    """Rebind t's storage to a converted copy: a move changes where the memory lives, so
    it cannot be a copy into the old storage."""
    moved = t.detach().to(device=device, dtype=dtype)
    if moved._data is t._data:
        return
    replace_storage(t, moved)
    if t.grad is not None:
        t.grad = t.grad.to(device=device, dtype=dtype)


class Sequential(Module):
    """Modules applied in order; indexable (a slice gives a Sequential) and iterable."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise ShrewError(f"Sequential: item {i} is a {type(m).__name__}, not a Module")
            setattr(self, str(i), m)

    def __getitem__(self, index: int | slice) -> Module:
        items = list(self.children())
        if isinstance(index, slice):
            return Sequential(*items[index])
        return items[index]

    def __len__(self) -> int:
        return sum(1 for _ in self.children())

    def __iter__(self) -> Iterator[Module]:
        return self.children()

    def forward(self, x: Any) -> Any:
        for m in self.children():
            x = m(x)
        return x
