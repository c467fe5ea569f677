"""``shrew.onnx``: importable, so that programs which import ``torch.onnx`` for an optional
export path run; shrew has no ONNX exporter (``shrew.export`` writes a training step as C)."""
from __future__ import annotations

from typing import Any

from .core.errors import ArgumentError

__all__ = ["export"]


def export(*args: Any, **kwargs: Any) -> None:
    """Always raises: shrew cannot write ONNX files."""
    raise ArgumentError("onnx.export: shrew has no ONNX exporter; shrew.export.trace_training "
                        "writes a training step as one C file instead")
