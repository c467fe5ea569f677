"""Parameter, and the one way this package writes new values into an existing tensor."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ShapeError, ShrewError
from ..shape import fmt
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
        for name in ("_data", "_backend", "shape", "dtype", "id"):
            setattr(self, name, getattr(own, name))
        self._op = None
        self.grad = None
        self._retains_grad = False
        self.requires_grad = False
        self.requires_grad_(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


def add_(dst: Tensor, src: Tensor, alpha: float = 1.0) -> None:
    """dst += alpha * src in dst's own memory: an optimizer step in one pass.  src is
    moved to dst's device and dtype first; it may be dst itself."""
    if not isinstance(src, Tensor):
        raise ShrewError(f"add_: the update must be a Tensor, got {type(src).__name__}")
    if src.shape != dst.shape:
        raise ShapeError(f"add_: cannot add a tensor of shape {fmt(src.shape)} into one of "
                         f"shape {fmt(dst.shape)}")
    if not dst.dtype.is_floating_point:
        raise ShrewError(f"add_: the destination must be a float tensor, got {dst.dtype}")
    src = src.detach().to(device=dst.device, dtype=dst.dtype)
    dst._backend.add_(dst._data, src._data, float(alpha))


def assign_(dst: Tensor, src: Tensor) -> None:
    """Write src's values into dst's own memory (on dst's device, in dst's dtype).

    Optimizers, load_state_dict, init and BatchNorm's running statistics all update
    tensors through this, so anything holding dst sees the new values."""
    if not isinstance(src, Tensor):
        raise ShrewError(f"assign_: the new value must be a Tensor, got {type(src).__name__}")
    if src.shape != dst.shape:
        raise ShapeError(f"assign_: cannot write a tensor of shape {fmt(src.shape)} into one "
                         f"of shape {fmt(dst.shape)}")
    src = src.detach().to(device=dst.device, dtype=dst.dtype)
    dst._backend.copy_(dst._data, src._data)
