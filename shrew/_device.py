"""PyTorch's device objects and per-device-type modules.

``device`` is a ``str`` subclass ("cpu", "opencl:0", "cuda:1") with PyTorch's ``.type`` and
``.index``.  Being a string, it is accepted wherever a device string is (creation functions,
``Tensor.to``, ``Module.to``, ``device=`` keywords), compares equal to its string and hashes
like it; ``Tensor.device`` returns one, so both ``x.device == "cpu"`` and
``x.device.type == "cpu"`` hold.

``DeviceModule`` is what ``shrew.cuda`` and ``shrew.backends.opencl`` are built on:
is_available, device_count, seeding, synchronize and names, for one backend name.  shrew has
one process-wide current device, set_device's (0 at first), which .cuda() and these functions
use when given none; a device string without an index ("cuda") means index 0.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .backends import registry
from .core.errors import DeviceError


class device(str):  # noqa: N801  (PyTorch's name)
    """``device("cuda:0")``, ``device("opencl", 1)``, ``device("cpu")`` or
    ``device(other_device)``.  ``index`` is None when the string names no index."""

    __slots__ = ()

    def __new__(cls, type: object, index: int | None = None) -> device:  # noqa: A002
        if isinstance(type, device) and index is None:
            return type
        if not isinstance(type, str):
            raise DeviceError(f"device: expected a string such as 'cpu', 'opencl:0' or "
                              f"'cuda', got {type!r}")
        name, colon, number = type.partition(":")
        if not name.isidentifier() or (colon and not number.isdigit()):
            raise DeviceError(f"device: {type!r} is not a device string such as 'cpu', "
                              f"'opencl:0' or 'cuda'")
        if index is not None:
            if colon:
                raise DeviceError(f"device: {type!r} already has an index; got index={index}")
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise DeviceError(f"device: index must be an int >= 0, got {index!r}")
            return super().__new__(cls, f"{name}:{index}")
        return super().__new__(cls, type)

    @property
    def type(self) -> str:
        """The backend name: "cpu", "opencl", "cuda"."""
        return str.partition(self, ":")[0]

    @property  # PyTorch's attribute, in place of str.index (use str.index(d, ...) for that)
    def index(self) -> int | None:  # type: ignore[override]
        """The device number, or None for a string without one (such as "cpu")."""
        number = str.partition(self, ":")[2]
        return int(number) if number else None

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (device, (str.__str__(self),))

    def __enter__(self) -> device:
        """`with torch.device("opencl"):` creation functions given no device= (and the
        layers built inside) put tensors here until the block ends, as
        set_default_device does; blocks nest."""
        from .backends.defaults import set_default_device
        _outer_defaults.append(registry._default_device[0])
        try:
            set_default_device(self)
        except BaseException:
            _outer_defaults.pop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        registry._default_device[0] = _outer_defaults.pop()


_outer_defaults: list[str] = []  # the default device outside each `with device(...)` block


class DeviceModule:
    """The functions of ``torch.cuda`` for the devices named ``name:N``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._current = 0

    def device_count(self) -> int:
        """How many ``name:N`` devices work on this machine (0 without the backend)."""
        registry._load_entry_points()
        factory = registry._factories.get(self.name)
        return 0 if factory is None else registry._count(factory)

    def is_available(self) -> bool:
        return self.device_count() > 0

    def current_device(self) -> int:
        """The index set_device chose (0 at first): where .cuda() puts tensors."""
        return self._current

    def set_device(self, device: object) -> None:
        """Make `device` (an index, "cuda:N" or a device) the device that .cuda() and
        these functions use when given none.  A device string without an index still
        means index 0 elsewhere (shrew keeps no per-thread current device)."""
        index = self._index(device, "set_device")
        self.device_string(index, "set_device")
        self._current = index

    def device_string(self, which: object, op: str) -> str:
        """"name:N" for `which` (None: the current device), checked to be usable: the
        DeviceError says why not and what to use instead."""
        index = self._index(which, op)
        count = self.device_count()
        if count == 0:
            try:
                registry.get_backend(f"{self.name}:{index}")
            except DeviceError as exc:
                raise DeviceError(f"{op}: no {self.name.upper()} device is usable ({exc}); "
                                  f"keep the tensors on 'cpu' or use an OpenCL device "
                                  f"(shrew.devices() lists the usable ones)") from None
        if not 0 <= index < count:
            raise DeviceError(f"{op}: there is no device {self.name}:{index} "
                              f"({count} {self.name} device(s) on this machine)")
        return f"{self.name}:{index}"

    def _index(self, which: object, op: str) -> int:
        """The index of `which`: None (the current device), an int, or a device string."""
        if which is None:
            return self.current_device()
        if isinstance(which, int) and not isinstance(which, bool):
            return which
        dev = device(which)
        if dev.type != self.name:
            raise DeviceError(f"{self.name}.{op}: {dev!s} is not a {self.name} device")
        return dev.index or 0

    def _backend(self, which: object, op: str) -> registry.Backend:
        return registry.get_backend(f"{self.name}:{self._index(which, op)}")

    def get_device_name(self, device: object = None) -> str:
        """The device's own description (vendor and model)."""
        backend = self._backend(device, "get_device_name")
        return str(getattr(backend, "description", "") or backend.device)

    def synchronize(self, device: object = None) -> None:
        """Wait until the device has finished the work queued on it: a read-back waits
        for all of it, since each device runs its work in order."""
        backend = self._backend(device, "synchronize")
        backend.to_numpy(backend.full((1,), 0.0, np.dtype(np.float32)))

    def manual_seed(self, seed: int) -> None:
        """Seed the current device's generator (nothing when there is no device, as
        PyTorch, which seeds lazily)."""
        if self.is_available():
            self._backend(None, "manual_seed").manual_seed(int(seed))

    def manual_seed_all(self, seed: int) -> None:
        """Seed the generator of every ``name:N`` device."""
        for index in range(self.device_count()):
            registry.get_backend(f"{self.name}:{index}").manual_seed(int(seed))
