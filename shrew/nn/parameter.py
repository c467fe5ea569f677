"""Parameter: a learnable leaf tensor."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.fields import adopt
from .._tensor import Tensor

if TYPE_CHECKING:
    from ..typing import TensorData


class Parameter(Tensor):
    """A learnable leaf tensor.  Modules register every Parameter attribute they hold.

    It owns a private copy of `data`, so the in-place updates of optimizers never write
    into the caller's array."""

    __slots__ = ()

    def __init__(self, data: TensorData, requires_grad: bool = True) -> None:
        own = (data if isinstance(data, Tensor) else Tensor(data)).detach().contiguous()
        adopt(self, own, False)
        self.requires_grad_(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

