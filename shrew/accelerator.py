"""``shrew.accelerator``: PyTorch's device-agnostic ``torch.accelerator`` functions.

PyTorch calls a device other than the CPU "the accelerator"; for shrew that is CUDA
(CuPy), where a GPU is usable.  OpenCL devices are not chosen here, because pip's OpenCL
devices run on the CPU itself: a program that asks for the accelerator on a machine
without a GPU gets None and stays on the CPU, as under PyTorch.  Ask for OpenCL by name
(``device="opencl"``).
"""
from __future__ import annotations

from . import cuda
from ._device import device
from .core.errors import DeviceError

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "synchronize"]


def is_available() -> bool:
    """Whether an accelerator (a usable CUDA GPU) is present."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> device | None:
    """``device("cuda")`` where CUDA is usable, else None (as PyTorch without one)."""
    return device("cuda") if cuda.is_available() else None


def device_count() -> int:
    """How many accelerator devices this machine has (0 without a GPU)."""
    return cuda.device_count()


def current_device_index() -> int:
    """The accelerator device used when none is named: always 0 (shrew keeps no current
    device; "cuda" means "cuda:0")."""
    return cuda.current_device()


current_device_idx = current_device_index


def set_device_index(index: object) -> None:
    """Accepted for device 0 only: shrew keeps no current-device state (name "cuda:N"
    instead)."""
    number = index if isinstance(index, int) else device(str(index)).index or 0
    if number != 0:
        raise DeviceError(f"accelerator.set_device_index({index!r}): shrew keeps no current "
                          f"device; name the device instead (device='cuda:{number}')")


set_device_idx = set_device_index


def synchronize(which: object = None) -> None:
    """Wait for the accelerator's queued work (nothing to wait for without one)."""
    if cuda.is_available():
        cuda.synchronize(which)
