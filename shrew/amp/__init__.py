"""``shrew.amp``: automatic mixed precision, as ``torch.amp``.

``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`` runs PyTorch's
autocast lists in a lower-precision dtype (bfloat16 on cpu by default, float16 on cuda
and opencl) or in float32 (autocast_mode.py; the table is shrew/core/autocast.py), and
``GradScaler`` scales float16 losses dynamically (grad_scaler.py).  See
docs/mixed-precision.md."""
from __future__ import annotations

from . import autocast_mode, grad_scaler
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "GradScaler",
           "autocast_mode", "grad_scaler"]
