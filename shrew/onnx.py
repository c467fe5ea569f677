"""``shrew.onnx``: importable, so that programs which import ``torch.onnx`` for an optional
export path run; shrew has no ONNX exporter (``shrew.export`` writes a training step as C)."""
from __future__ import annotations

import enum

from typing import Any

from .core.errors import ArgumentError

__all__ = ["export", "OperatorExportTypes", "TrainingMode"]


def export(*args: Any, **kwargs: Any) -> None:
    """Always raises: shrew cannot write ONNX files."""
    raise ArgumentError("onnx.export: shrew has no ONNX exporter; shrew.export.trace_training "
                        "writes a training step as one C file instead")


class OperatorExportTypes(enum.Enum):
    """torch.onnx's operator export modes (read by programs that build export options)."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TrainingMode(enum.Enum):
    """torch.onnx's training modes for export."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2
