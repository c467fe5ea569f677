"""``torch._functorch.config`` (shrew.compiler.settings.Settings)."""
from __future__ import annotations

import sys

from ..compiler.settings import Settings

sys.modules[__name__] = Settings(  # type: ignore[assignment]
    "torch._functorch.config", {"enable_autograd_cache": True},
    doc="""`enable_autograd_cache` is accepted and changes nothing: shrew keeps each
compiled function's programs in memory, and its fused kernels in a cache on disk
(docs/compiling.md).""")
