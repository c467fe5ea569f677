"""The one place optimizers, nn.init and nn.utils write into an existing tensor's memory.

Kept as two tiny functions so that the in-place primitives they delegate to can be
switched in one place (they are to become the public Tensor methods `add_` / `copy_`)."""
from __future__ import annotations

from .nn.parameter import add_, assign_
from .tensor import Tensor


def add_in_place(dst: Tensor, src: Tensor, alpha: float = 1.0) -> None:
    """dst += alpha * src in dst's own memory (src may be dst itself)."""
    add_(dst, src, alpha)


def copy_in_place(dst: Tensor, src: Tensor) -> None:
    """Write src's values into dst's own memory, on dst's device and in dst's dtype."""
    assign_(dst, src)
