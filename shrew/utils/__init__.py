"""Utilities in PyTorch's `torch.utils` layout (`shrew.utils.data`)."""
from . import data

__all__ = ["data"]
