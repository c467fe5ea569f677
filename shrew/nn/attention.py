"""torch.nn.attention: SDPBackend and sdpa_kernel.  shrew has one implementation of
scaled_dot_product_attention per device, so the choice is recorded (sdpa_kernel's backends,
readable with current_backends()) and changes nothing."""
from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any

from ..core.errors import ShrewTypeError


class SDPBackend(enum.IntEnum):
    """PyTorch's attention kernels, by its values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALL = tuple(b for b in SDPBackend if b is not SDPBackend.ERROR)
_chosen: list[tuple[SDPBackend, ...]] = [_ALL]


def current_backends() -> tuple[SDPBackend, ...]:
    """The backends the innermost sdpa_kernel allows (all of them outside one)."""
    return _chosen[-1]


@contextlib.contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False) -> Iterator[None]:
    """Within the block, attention may use `backends` (one SDPBackend or a list)."""
    chosen = (backends,) if isinstance(backends, SDPBackend) else tuple(backends)
    if not all(isinstance(b, SDPBackend) for b in chosen):
        raise ShrewTypeError(f"sdpa_kernel: backends must be SDPBackend values, got {backends!r}")
    _chosen.append(chosen)
    try:
        yield
    finally:
        _chosen.pop()


__all__ = ["SDPBackend", "sdpa_kernel"]
