"""Utilities in PyTorch's `torch.utils` layout (`shrew.utils.data`, `shrew.utils.checkpoint`)."""
from . import checkpoint, data

__all__ = ["checkpoint", "data"]
