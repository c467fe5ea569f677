"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict.

Each keeps its items as attributes named by index ("0", "1", ...) or by key, so that
Module's walk over attributes finds them and state_dict names them as PyTorch does."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ...core.errors import ShrewError, ShrewTypeError
from ..._tensor import Tensor
from .module import Module
from ..parameter import Parameter


__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


class ContainerIndexError(ShrewError, IndexError):
    """An index outside a container (PyTorch raises IndexError)."""


class ContainerKeyError(ShrewError, KeyError):
    """A key missing from a ModuleDict or ParameterDict (PyTorch raises KeyError)."""


def _position(owner: str, index: int, length: int) -> int:
    if not -length <= index < length:
        raise ContainerIndexError(f"{owner}: index {index} is out of range for length {length}")
    return index % length


class _Indexed(Module):
    """The items of a list-like container, stored under "0", "1", ... in order."""

    def __init__(self, items: Iterable[Any] | None = None) -> None:
        super().__init__()
        self.extend(items or ())

    def _items(self) -> list[Any]:
        return [vars(self)[str(i)] for i in range(len(self))]

    def __len__(self) -> int:
        n = 0
        while str(n) in vars(self):
            n += 1
        return n

    def _store(self, items: Iterable[Any]) -> None:
        """Replace the items by `items`, renumbered from 0."""
        for i in range(len(self)):
            delattr(self, str(i))
        for i, item in enumerate(items):
            setattr(self, str(i), self._checked(item, i))

    def _checked(self, item: Any, index: int) -> Any:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items())

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(self._items()[index])
        return vars(self)[str(_position(type(self).__name__, index, len(self)))]

    def __setitem__(self, index: int, item: Any) -> None:
        i = _position(type(self).__name__, index, len(self))
        setattr(self, str(i), self._checked(item, i))

    def __delitem__(self, index: int | slice) -> None:
        items = self._items()
        if isinstance(index, slice):
            del items[index]
        else:
            del items[_position(type(self).__name__, index, len(items))]
        self._store(items)

    def append(self, item: Any) -> Any:
        """Add item at the end; returns self."""
        n = len(self)
        setattr(self, str(n), self._checked(item, n))
        return self

    def extend(self, items: Iterable[Any]) -> Any:
        """append each of items; returns self."""
        for item in items:
            self.append(item)
        return self

    def insert(self, index: int, item: Any) -> None:
        """Put item before position index."""
        items = self._items()
        items.insert(index, item)
        self._store(items)


class ModuleList(_Indexed):
    """A list of modules whose parameters belong to the owner; it has no forward."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__(modules)

    def _checked(self, item: Any, index: int) -> Module:
        if not isinstance(item, Module):
            raise ShrewTypeError(f"{type(self).__name__}: item {index} is a {type(item).__name__}, "
                                 f"not a Module")
        return item

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])


class Sequential(ModuleList):
    """Modules applied in order.  Built from modules, or from an OrderedDict of named ones;
    indexable (a slice gives a Sequential), iterable, and growable with append."""

    def __init__(self, *modules: Any) -> None:
        Module.__init__(self)
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, self._checked(m, name))
        else:
            self.extend(modules)

    # An OrderedDict-built Sequential names its modules freely, so these work on the
    # children rather than on "0", "1", ... attribute names.
    def _items(self) -> list[Any]:
        return list(self.children())

    def __len__(self) -> int:
        return sum(1 for _ in self.children())

    def _store(self, items: Iterable[Any]) -> None:
        for name, _ in list(self.named_children()):
            delattr(self, name)
        for i, item in enumerate(items):
            setattr(self, str(i), self._checked(item, i))

    def __getitem__(self, index: int | slice) -> Any:
        named = list(self.named_children())
        if isinstance(index, slice):
            return Sequential(OrderedDict(named[index]))
        return named[_position("Sequential", index, len(named))][1]

    def __setitem__(self, index: int, item: Any) -> None:
        named = list(self.named_children())
        name = named[_position("Sequential", index, len(named))][0]
        setattr(self, name, self._checked(item, index))

    def append(self, item: Any) -> Sequential:
        n = len(self)
        setattr(self, str(n), self._checked(item, n))
        return self

    def forward(self, x: Any) -> Any:
        for m in self.children():
            x = m(x)
        return x


class _Keyed(Module):
    """The items of a dict-like container: attributes named by key, in insertion order."""

    def __init__(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None
                 ) -> None:
        super().__init__()
        self._keys: list[str] = []
        self.update(items or {})

    def _put(self, key: str, value: Any) -> None:
        raise NotImplementedError

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise ContainerKeyError(f"{type(self).__name__}: no key {key!r} (keys: "
                                    f"{self._keys})")
        return vars(self)[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._put(key, value)
        if key not in self._keys:
            self._keys.append(key)

    def __delitem__(self, key: str) -> None:
        self.pop(key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> list[str]:
        return list(self._keys)

    def values(self) -> list[Any]:
        return [vars(self)[k] for k in self._keys]

    def items(self) -> list[tuple[str, Any]]:
        return [(k, vars(self)[k]) for k in self._keys]

    def pop(self, key: str) -> Any:
        value = self[key]
        delattr(self, key)
        self._keys.remove(key)
        return value

    def clear(self) -> None:
        for key in list(self._keys):
            self.pop(key)

    def update(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        for key, value in pairs:
            self[key] = value


class ModuleDict(_Keyed):
    """Modules by string key, in insertion order; their parameters belong to the owner."""

    def _put(self, key: str, value: Any) -> None:
        if not isinstance(value, Module):
            raise ShrewTypeError(f"ModuleDict: {key!r} must be a Module, got "
                                 f"{type(value).__name__}")
        self.add_module(key, value)


def _as_parameter(owner: str, value: Any) -> Parameter:
    """PyTorch wraps a plain tensor put into a ParameterList/Dict in a Parameter."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value, requires_grad=value.dtype.is_floating_point)
    raise ShrewTypeError(f"{owner}: items must be Parameters or Tensors, got "
                         f"{type(value).__name__}")


class ParameterList(_Indexed):
    """A list of parameters that belong to the owner (tensors are wrapped in Parameters)."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__(values)

    def _checked(self, item: Any, index: int) -> Parameter:
        return _as_parameter("ParameterList", item)

    def extra_repr(self) -> str:
        return "\n".join(f"({i}): Parameter containing: [{p.dtype} of size {tuple(p.shape)}]"
                         for i, p in enumerate(self))


class ParameterDict(_Keyed):
    """Parameters by string key, in insertion order (tensors are wrapped in Parameters)."""

    def _put(self, key: str, value: Any) -> None:
        self.register_parameter(key, _as_parameter("ParameterDict", value))

    def extra_repr(self) -> str:
        return "\n".join(f"({k}): Parameter containing: [{p.dtype} of size {tuple(p.shape)}]"
                         for k, p in self.items())
