"""torch.utils.checkpoint over shrew's checkpointing (shrew.autograd.checkpoint).

Both of PyTorch's variants give the same gradients here, so use_reentrant only changes
what PyTorch's checks: keyword arguments for the function need use_reentrant=False, and
leaving it out warns as PyTorch 2.13 does (then acts as use_reentrant=True).  The random
state is always replayed in the recomputation (preserve_rng_state=False is accepted: the
gradients are those of the forward that ran)."""
from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ..autograd import checkpoint as _ckpt
from ..core.errors import ShrewValueError, UnsupportedError
from .._tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]

_T = TypeVar("_T")
_ADVICE = ("use_reentrant=False is recommended, but if you need to preserve the current "
           "default behavior, you can pass use_reentrant=True. Refer to docs for more details "
           "on the differences between the two variants.")


def noop_context_fn() -> tuple[Any, Any]:
    """The default context_fn: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def _reentrant(op: str, use_reentrant: bool | None, warning: str) -> bool:
    if use_reentrant is None:
        warnings.warn(f"{op}: {warning} {_ADVICE}", UserWarning, stacklevel=3)
        return True
    return bool(use_reentrant)


def checkpoint(function: Callable[..., _T], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs: Any) -> _T:
    """function(*args, **kwargs) without keeping its intermediates: they are recomputed in
    backward (see shrew.checkpoint)."""
    reentrant = _reentrant(
        "torch.utils.checkpoint", use_reentrant,
        "the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
        "calling checkpoint without use_reentrant will raise an exception.")
    kwargs.pop("preserve_rng_state", True)
    if kwargs and reentrant:
        raise ShrewValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if reentrant and (context_fn is not noop_context_fn or debug):
        raise ShrewValueError("Passing `context_fn` or `debug` is only supported when "
                              "use_reentrant=False.")
    if context_fn is not noop_context_fn:
        raise UnsupportedError("checkpoint: context_fn (selective activation checkpointing) "
                               "is not supported; checkpoint the parts to recompute instead")
    if determinism_check not in ("default", "none"):
        raise ShrewValueError(f"determinism_check should be one of ['default', 'none'], but "
                              f"got {determinism_check}")
    fn = functools.partial(function, **kwargs) if kwargs else function
    return _ckpt.checkpoint(fn, *args)


def checkpoint_sequential(functions: Any, segments: int, input: Tensor,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Tensor:
    """Run a Sequential (or a list of functions) in `segments` checkpointed parts."""
    _reentrant("torch.utils.checkpoint.checkpoint_sequential", use_reentrant,
               "the use_reentrant parameter should be passed explicitly. In version 2.9 we "
               "will raise an exception if use_reentrant is not passed.")
    kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ShrewValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    chain: Iterable[Callable[[Tensor], Tensor]] = functions
    return _ckpt.checkpoint_sequential(chain, segments, input)
