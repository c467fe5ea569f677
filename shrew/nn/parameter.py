"""Parameter: a learnable leaf tensor."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.fields import adopt
from .._tensor import Tensor
from ..ops.complex.pair import ComplexTensor, view_as_real

if TYPE_CHECKING:
    from ..typing import TensorData


class Parameter(Tensor):
    """A learnable leaf tensor.  Modules register every Parameter attribute they hold.

    It owns a private copy of `data`, so the in-place updates of optimizers never write
    into the caller's array."""

    __slots__ = ()

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Any:
        if cls is Parameter and isinstance(data, ComplexTensor):
            return ComplexParameter.of(data, requires_grad)
        return super().__new__(cls)

    def __init__(self, data: TensorData, requires_grad: bool = True) -> None:
        own = (data if isinstance(data, Tensor) else Tensor(data)).detach().contiguous()
        adopt(self, own, False)
        self.requires_grad_(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()



class ComplexParameter(ComplexTensor, Parameter):
    """A learnable complex leaf (Parameter(complex_tensor)): its pair is a private leaf
    copy, which the optimizers update as PyTorch's do, through view_as_real."""

    __slots__ = ()

    @staticmethod
    def of(data: ComplexTensor, requires_grad: bool) -> ComplexParameter:
        p = object.__new__(ComplexParameter)
        pair = view_as_real(data).detach().contiguous()
        p._pair, p._backend, p.shape, p.dtype = pair, pair._backend, data.shape, data.dtype
        pair.requires_grad_(requires_grad)
        return p

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        pass  # made by of(), which __new__ called

    def __repr__(self) -> str:
        return "Parameter containing:\n" + ComplexTensor.__repr__(self)
