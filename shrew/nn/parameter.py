"""Parameter, and the in-place writes that nn and its callers use."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..factory import adopt
from ..ops import elementwise
from ..tensor import Tensor

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


def add_(dst: Tensor, src: Tensor, alpha: float = 1.0) -> None:
    """dst += alpha * src in dst's own memory (``dst.add_(src, alpha=alpha)``)."""
    elementwise.add_(dst, src, alpha)


def assign_(dst: Tensor, src: Tensor) -> None:
    """Write src's values into dst's own memory (``dst.copy_(src)``, its errors naming
    assign_).  load_state_dict, init and BatchNorm's running statistics update tensors
    through this, so anything holding dst sees the new values."""
    elementwise.copy_(dst, src, "assign_")
