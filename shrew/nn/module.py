"""Module: the container of parameters, buffers and sub-modules; and Sequential."""
from __future__ import annotations

from ..dtype import DType
from ..errors import ShrewError
from ..grad_mode import no_grad
from ..shape import fmt
from ..tensor import Tensor
from .parameter import Parameter, assign_


class Module:
    """Base class of layers and models.

    Parameters and sub-modules are found among the attributes (a Parameter or a Module
    assigned to `self`), in the order they were assigned; buffers are tensors named with
    register_buffer.  Subclasses call super().__init__() first and define forward()."""

    def __init__(self):
        self.training = True
        self._buffer_names = []

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def register_buffer(self, name: str, tensor) -> None:
        """A tensor that is state but not learned (BatchNorm's running statistics): it is
        saved in state_dict and moved by to(), and optimizers never see it."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise ShrewError(f"register_buffer: {name!r} must be a Tensor or None, got "
                             f"{type(tensor).__name__}")
        setattr(self, name, tensor)
        if name not in self._buffer_names:
            self._buffer_names.append(name)

    # -- walking the tree ----------------------------------------------------------------
    def named_children(self):
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value

    def children(self):
        return (m for _, m in self.named_children())

    def named_modules(self, prefix: str = "", remove_duplicate: bool = True):
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

    def modules(self):
        return (m for _, m in self.named_modules())

    def _named_state(self):
        """(name, tensor) of every parameter and buffer, shared ones under each name."""
        for prefix, module in self.named_modules(remove_duplicate=False):
            buffers = module._buffer_names
            for name, value in vars(module).items():
                if isinstance(value, Parameter) or (name in buffers and value is not None):
                    yield (f"{prefix}.{name}" if prefix else name), value

    def named_parameters(self):
        seen = set()
        for name, t in self._named_state():
            if isinstance(t, Parameter) and t.id not in seen:
                seen.add(t.id)
                yield name, t

    def parameters(self):
        return (p for _, p in self.named_parameters())

    def named_buffers(self):
        return ((n, t) for n, t in self._named_state() if not isinstance(t, Parameter))

    def buffers(self):
        return (t for _, t in self.named_buffers())

    # -- state ---------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Parameters and buffers by dotted name, detached (they share memory with the
        module's tensors)."""
        return {name: t.detach() for name, t in self._named_state()}

    def load_state_dict(self, state_dict, strict: bool = True):
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

    def train(self, mode: bool = True):
        for m in self.modules():
            m.training = bool(mode)
        return self

    def eval(self):
        return self.train(False)

    def to(self, device=None, dtype=None):
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
        for p in self.parameters():
            p.grad = None

    # -- display -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        head = f"{type(self).__name__}({self.extra_repr()}"
        kids = [f"({n}): " + repr(m).replace("\n", "\n  ") for n, m in self.named_children()]
        if not kids:
            return head + ")"
        return head + "\n  " + "\n  ".join(kids) + "\n)"


def _move(t: Tensor, device, dtype) -> None:
    """Rebind t's storage to a converted copy: a move changes where the memory lives, so
    it cannot be a copy into the old storage."""
    moved = t.detach().to(device=device, dtype=dtype)
    if moved._data is t._data:
        return
    t._data, t._backend, t.dtype = moved._data, moved._backend, moved.dtype
    if t.grad is not None:
        t.grad = t.grad.to(device=device, dtype=dtype)


class Sequential(Module):
    """Modules applied in order; indexable (a slice gives a Sequential) and iterable."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise ShrewError(f"Sequential: item {i} is a {type(m).__name__}, not a Module")
            setattr(self, str(i), m)

    def __getitem__(self, index):
        items = list(self.children())
        if isinstance(index, slice):
            return Sequential(*items[index])
        return items[index]

    def __len__(self) -> int:
        return sum(1 for _ in self.children())

    def __iter__(self):
        return self.children()

    def forward(self, x):
        for m in self.children():
            x = m(x)
        return x
