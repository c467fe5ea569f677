"""``shrew.cpu``: PyTorch's ``torch.cpu`` (the one CPU device, always available) and its
``amp`` (autocast with bfloat16 by default; GradScaler("cpu"))."""
from __future__ import annotations

from .amp.device_modules import cpu_amp as amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device: object = None) -> None:
    """CPU work is done when its call returns: nothing to wait for."""
