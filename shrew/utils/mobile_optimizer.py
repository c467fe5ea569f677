"""``shrew.utils.mobile_optimizer``: PyTorch's rewriting of TorchScript modules for mobile
runtimes, which shrew (no TorchScript) cannot do."""
from __future__ import annotations

from typing import Any

from ..core.errors import UnsupportedError

__all__ = ["optimize_for_mobile"]


def optimize_for_mobile(script_module: Any, optimization_blocklist: Any = None,
                        preserved_methods: Any = None, backend: str = "CPU") -> Any:
    """Always raises UnsupportedError: it rewrites TorchScript modules, which shrew has not."""
    raise UnsupportedError("optimize_for_mobile: shrew has no TorchScript modules to optimise "
                           "for PyTorch Mobile; run the module as it is, or write a training "
                           "step as C with shrew.export")
