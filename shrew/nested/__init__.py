"""``shrew.nested``: PyTorch's nested (ragged) tensors, which shrew does not have.  Batch
sequences of different lengths by padding them (shrew.nn.utils.rnn.pad_sequence) and
passing a mask: key_padding_mask to MultiheadAttention, attn_mask to
scaled_dot_product_attention, or pack_padded_sequence to the RNNs."""
from __future__ import annotations

from typing import Any

from ..core.errors import UnsupportedError

__all__ = ["nested_tensor", "as_nested_tensor", "to_padded_tensor"]

_INSTEAD = ("shrew has no nested tensors; pad the sequences to one length with "
            "shrew.nn.utils.rnn.pad_sequence and pass a mask (key_padding_mask, attn_mask) "
            "or pack_padded_sequence instead")


def nested_tensor(tensor_list: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Any:
    """Always raises UnsupportedError (see the module's docstring for what to use)."""
    raise UnsupportedError(f"nested.nested_tensor: {_INSTEAD}")


def as_nested_tensor(ts: Any, dtype: Any = None, device: Any = None,
                     layout: Any = None) -> Any:
    """Always raises UnsupportedError (see the module's docstring for what to use)."""
    raise UnsupportedError(f"nested.as_nested_tensor: {_INSTEAD}")


def to_padded_tensor(input: Any, padding: float, output_size: Any = None) -> Any:  # noqa: A002
    """Always raises UnsupportedError: there are no nested tensors to pad."""
    raise UnsupportedError(f"nested.to_padded_tensor: {_INSTEAD}")
