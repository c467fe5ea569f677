"""The backend registry: device names, "name:index" strings, entry points, devices()."""
from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from importlib import metadata
from typing import TYPE_CHECKING, cast

from ..core.errors import DeviceError

if TYPE_CHECKING:
    from .base import Backend

BackendFactory = Callable[[int], "Backend"]
"""``factory(index)`` returns the backend of device ``name:index``.  It may carry a
``device_count()`` attribute (default 1) so that ``devices()`` can list its devices."""

ENTRY_POINT_GROUP = "shrew.backends"

_factories: dict[str, BackendFactory] = {}
_instances: dict[tuple[str, int], Backend] = {}
_lock = threading.Lock()
_entry_points_loaded = False
_seed: list[int] = []  # the last manual_seed, applied to backends created after it
_default_device = ["cpu"]  # where creation functions put tensors without device=


def _lazy(module: str) -> BackendFactory:
    """A factory that imports its backend module only when first used."""
    def factory(index: int = 0) -> Backend:
        return importlib.import_module(module).factory(index)

    def device_count() -> int:
        try:
            mod = importlib.import_module(module)
        except Exception:
            return 0
        return mod.factory.device_count()

    factory.device_count = device_count  # type: ignore[attr-defined]
    factory.module = module  # type: ignore[attr-defined]
    return factory


def register_backend(name: str, factory: BackendFactory) -> None:
    """Make `name` (and "name:N") a device.  `factory(index)` returns a Backend; it may
    carry `factory.device_count()` (default 1) so that devices() can list its devices."""
    if not isinstance(name, str) or not name.isidentifier():
        raise DeviceError(f"register_backend: name must be an identifier, got {name!r}")
    if not callable(factory):
        raise DeviceError(f"register_backend: factory for {name!r} is not callable")
    with _lock:
        _factories[name] = factory
        for key in [k for k in _instances if k[0] == name]:
            del _instances[key]


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _factories:
            try:
                register_backend(ep.name, ep.load())
            except Exception as exc:  # a broken plugin must not break shrew
                _factories.setdefault(ep.name, _broken(ep.name, exc))


def _broken(name: str, exc: Exception) -> BackendFactory:
    def factory(index: int = 0) -> Backend:
        raise DeviceError(f"device {name!r}: its entry point failed to load: {exc}")
    factory.device_count = lambda: 0  # type: ignore[attr-defined]
    return factory


def _count(factory: BackendFactory) -> int:
    counter = getattr(factory, "device_count", None)
    if counter is None:
        return 1
    try:
        return int(counter())
    except Exception:
        return 0


def backend_names() -> list[str]:
    """The registered device types ("cpu", "opencl", "cuda" and any added backend),
    usable here or not."""
    _load_entry_points()
    return list(_factories)


def devices() -> list[str]:
    """Names of the devices usable on this machine: "cpu", then e.g. "opencl:0"."""
    _load_entry_points()
    names = []
    for name, factory in list(_factories.items()):
        count = _count(factory)
        if name == "cpu":
            names.append("cpu")
        else:
            names.extend(f"{name}:{i}" for i in range(count))
    return names


def parse(device: object) -> tuple[str, int]:
    """"name" or "name:N" -> (name, N)."""
    if not isinstance(device, str):
        raise DeviceError(f"device must be a string such as 'cpu' or 'opencl:0', got {device!r}")
    name, _, index = device.partition(":")
    if index:
        if not index.isdigit():
            raise DeviceError(f"device {device!r}: the index after ':' must be a number")
        return name, int(index)
    return name, 0


def get_backend(device: object) -> Backend:
    """The (cached) backend instance for a device string; None is the default device
    (shrew.set_default_device)."""
    if device is None:
        device = _default_device[0]
    if not isinstance(device, str) and hasattr(device, "device"):
        return cast("Backend", device)  # already a backend
    key = parse(device)
    backend = _instances.get(key)
    if backend is not None:
        return backend
    _load_entry_points()
    name, index = key
    factory = _factories.get(name)
    if factory is None:
        raise DeviceError(f"unknown device {device!r}; available devices: {', '.join(devices())}")
    with _lock:
        backend = _instances.get(key)
        if backend is None:
            try:
                backend = factory(index)
            except DeviceError:
                raise
            except Exception as exc:
                raise DeviceError(f"device {device!r} is not usable: {exc}") from exc
            if _seed:
                backend.manual_seed(_seed[0])
            _instances[key] = backend
    return backend


def manual_seed(seed: int) -> None:
    """Seed every backend, now and when it is first created."""
    seed = int(seed)
    _seed[:] = [seed]
    for backend in list(_instances.values()):
        backend.manual_seed(seed)


def live_backends() -> list[Backend]:
    return list(_instances.values())


register_backend("cpu", _lazy("shrew.backends.cpu"))
register_backend("opencl", _lazy("shrew.backends.opencl"))
register_backend("cuda", _lazy("shrew.backends.cuda"))
