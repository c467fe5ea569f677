"""``shrew.amp``: PyTorch's automatic mixed precision entry points, for programs that
switch them off where no GPU is present (as nanoGPT's ``GradScaler(enabled=dtype ==
"float16")``).  shrew computes in the dtypes it is given: ``autocast`` changes no dtype,
and ``GradScaler`` scales nothing (with ``enabled=True`` it warns and turns itself off,
as PyTorch's does without CUDA).  Mixed precision is done by hand in shrew (``.half()``,
``.bfloat16()``)."""
from __future__ import annotations

import warnings
from types import TracebackType
from typing import Any

from ._tensor import Tensor

__all__ = ["autocast", "GradScaler"]


class autocast:  # noqa: N801  (PyTorch's name)
    """A context manager (and decorator) that leaves every dtype as it is."""

    def __init__(self, device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device_type, self.dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None

    def __call__(self, fn: Any) -> Any:
        return fn


class GradScaler:
    """Loss scaling for float16 training: disabled in shrew (scale() returns the loss,
    step() steps the optimizer)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if enabled:
            warnings.warn("GradScaler: shrew does not scale losses (no automatic mixed "
                          "precision); it is disabled", stacklevel=2)
        self._enabled = False

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs: Tensor) -> Tensor:
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | None = None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        return None
