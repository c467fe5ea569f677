"""nn.DataParallel as PyTorch's behaves with no GPUs to split over: it runs the wrapped
module as it is (shrew has no multi-GPU scatter; for several processes use
DistributedDataParallel)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..modules.module import Module


class DataParallel(Module):
    """Wraps `module` (reachable as .module, so its state dict keys gain "module."); forward
    calls it unchanged.  device_ids, output_device and dim are accepted and recorded."""

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
