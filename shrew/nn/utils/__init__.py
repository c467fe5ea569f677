"""Helpers as torch.nn.utils: rnn (padding and packing variable-length sequences)."""
from . import rnn

__all__ = ["rnn"]
