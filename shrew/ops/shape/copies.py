"""torch's *_copy functions (a view op's result in memory of its own) and the *_scatter
functions (input with a view of it replaced by src, out of place).  Both are compositions of
the view ops: a copy is view(...).clone(); a scatter clones input and writes src through the
same view of the clone, so its gradients (src's: the view of g; input's: g with that region
zeroed) come from the write's own rules."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...core.errors import ShapeError
from ...core.fields import AnyTensor
from ...core.shape import fmt, normalize_dim
from ..inplace import copy_
from .strided import as_strided, diagonal, unfold

if TYPE_CHECKING:
    from ..._tensor import Tensor


def _copy_of(name: str, view: Callable[..., Any]) -> Callable[..., Any]:
    """torch.<name>_copy: view(input, ...) as a new tensor (each result cloned, for the
    views that give several)."""
    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        out = view(input, *args, **kwargs)
        if isinstance(out, AnyTensor):
            return out.clone()
        return type(out)(o.clone() for o in out) if isinstance(out, tuple) else \
            [o.clone() for o in out]
    function.__name__ = function.__qualname__ = f"{name}_copy"
    function.__doc__ = f"input.{name}(...) as a new tensor, not a view (torch.{name}_copy)."
    return function


expand_copy = _copy_of("expand", lambda x, size, implicit=False: x.expand(*size))
diagonal_copy = _copy_of("diagonal", diagonal)
alias_copy = _copy_of("alias", lambda x: x)
as_strided_copy = _copy_of("as_strided", as_strided)
narrow_copy = _copy_of("narrow", lambda x, dim, start, length: x.narrow(dim, start, length))
view_copy = _copy_of("view", lambda x, size: x.view(size))
permute_copy = _copy_of("permute", lambda x, dims: x.permute(*dims))
squeeze_copy = _copy_of("squeeze", lambda x, dim=None: x.squeeze() if dim is None
                        else x.squeeze(dim))
unsqueeze_copy = _copy_of("unsqueeze", lambda x, dim: x.unsqueeze(dim))
transpose_copy = _copy_of("transpose", lambda x, dim0, dim1: x.transpose(dim0, dim1))
t_copy = _copy_of("t", lambda x: x.t())
unbind_copy = _copy_of("unbind", lambda x, dim=0: x.unbind(dim))
unfold_copy = _copy_of("unfold", unfold)
split_with_sizes_copy = _copy_of("split_with_sizes",
                                 lambda x, split_sizes, dim=0: x.split(list(split_sizes), dim))


def _scatter(op: str, input: Tensor, src: Tensor, view: Callable[[Tensor], Tensor]) -> Tensor:  # noqa: A002
    out = input.clone()
    region = view(out)
    if tuple(region.shape) != tuple(src.shape):
        raise ShapeError(f"{op}: src {fmt(src.shape)} must have the shape of the embedded "
                         f"view {fmt(region.shape)} of input {fmt(input.shape)}")
    copy_(region, src)
    return out


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,  # noqa: A002
                     dim2: int = 1) -> Tensor:
    """input with its diagonal (offset, dim1, dim2) replaced by src."""
    return _scatter("diagonal_scatter", input, src, lambda t: diagonal(t, offset, dim1, dim2))


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """input with input.select(dim, index) replaced by src."""
    return _scatter("select_scatter", input, src, lambda t: t.select(dim, index))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,  # noqa: A002
                  end: int | None = None, step: int = 1) -> Tensor:
    """input with the slice start:end:step of dim replaced by src."""
    d = normalize_dim(dim, input.ndim, "slice_scatter")
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scatter("slice_scatter", input, src, lambda t: t[key])


def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int],  # noqa: A002
                       stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """input with as_strided(input, size, stride, storage_offset) replaced by src."""
    return _scatter("as_strided_scatter", input, src,
                    lambda t: as_strided(t, size, stride, storage_offset))
