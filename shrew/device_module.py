"""PyTorch's per-device-type modules (``shrew.cuda``, ``shrew.backends.opencl``):
is_available, device_count, seeding, synchronize and names, for one backend name.

shrew has no "current device" state: "cuda" means "cuda:0", so current_device() is 0.
"""
from __future__ import annotations

import numpy as np

from .backends import registry
from .device_name import device
from .errors import DeviceError


class DeviceModule:
    """The functions of ``torch.cuda`` for the devices named ``name:N``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def device_count(self) -> int:
        """How many ``name:N`` devices work on this machine (0 without the backend)."""
        registry._load_entry_points()
        factory = registry._factories.get(self.name)
        return 0 if factory is None else registry._count(factory)

    def is_available(self) -> bool:
        return self.device_count() > 0

    def current_device(self) -> int:
        """Always 0: a device string without an index means index 0."""
        return 0

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

    def get_device_name(self, which: object = None) -> str:
        """The device's own description (vendor and model)."""
        backend = self._backend(which, "get_device_name")
        return str(getattr(backend, "description", "") or backend.device)

    def synchronize(self, which: object = None) -> None:
        """Wait until the device has finished the work queued on it: a read-back waits
        for all of it, since each device runs its work in order."""
        backend = self._backend(which, "synchronize")
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
