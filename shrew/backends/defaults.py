"""PyTorch's process-wide switches: the default device, determinism, and the global seed.

shrew's kernels are deterministic (the same inputs give the same bits on a device), so
use_deterministic_algorithms records the mode for programs that read it back and never
raises for an op, as PyTorch does for its nondeterministic CUDA kernels."""
from __future__ import annotations

import secrets

from .._device import device as _device
from . import registry
from ..core.errors import ShrewTypeError

_deterministic = {"mode": False, "warn_only": False}


def set_default_device(device: object) -> None:
    """Where creation functions (zeros, rand, tensor, ... and the parameters of layers
    built afterwards) put tensors given no device=; None restores "cpu".  Checked now:
    an unusable device raises here, not at the first tensor."""
    name = "cpu" if device is None else str(_device(device))
    registry.get_backend(name)
    registry._default_device[0] = name


def get_default_device() -> _device:
    """The device set by set_default_device ("cpu" at first)."""
    return _device(registry._default_device[0])


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Recorded for are_deterministic_algorithms_enabled: every shrew kernel is
    deterministic already."""
    if not isinstance(mode, bool):
        raise ShrewTypeError(f"use_deterministic_algorithms: mode must be a bool, got "
                             f"{type(mode).__name__}")
    _deterministic.update(mode=mode, warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _deterministic["warn_only"]


def seed() -> int:
    """Seed every device's generator with a fresh random 63-bit number and return it."""
    value = secrets.randbits(63)
    registry.manual_seed(value)
    return value


def initial_seed() -> int:
    """The seed of the last manual_seed or seed().  Never seeded, shrew's generators start
    from random state, as PyTorch's; this picks that random seed now (with seed()) so that
    the answer is one that manual_seed can repeat."""
    return registry._seed[0] if registry._seed else seed()
