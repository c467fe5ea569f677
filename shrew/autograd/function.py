"""torch.autograd.Function: a differentiable function whose backward the user writes.

``apply`` runs ``forward`` without recording, then gives each differentiable output one
Op, ``O.CustomFunction``, holding the class, the ctx and the tensor arguments; its rule in
autograd/engine.py calls ``backward(ctx, *grads)``.  A function with several outputs has one
CustomFunction per output; each calls backward with its own gradient and zeros (None
with set_materialize_grads(False)) for the others, which is the same sum for the linear
backward functions autograd expects.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import op as O
from ..core.errors import ShrewError, ShrewTypeError, StateError
from ..core.fields import Alias, wrap
from ..core.grad_mode import is_grad_enabled, no_grad
from ..ops import inplace
from ..ops.creation import zeros_like
from .._tensor import Tensor
from .rules.common import sum_to_shape

if TYPE_CHECKING:
    from collections.abc import Sequence


class FunctionCtx:
    """The `ctx` that forward (or setup_context) fills and backward reads."""

    def __init__(self) -> None:
        self.needs_input_grad: tuple[bool, ...] = ()
        self.materialize_grads = True
        self._saved: tuple[tuple[Tensor | None, int], ...] = ()
        self._non_differentiable: set[int] = set()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for backward; their versions are checked when it reads them."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise ShrewTypeError(f"save_for_backward: can only save tensors (or None), got "
                                     f"{type(t).__name__}")
        self._saved = tuple((t, 0 if t is None else inplace.version(t)) for t in tensors)

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        for i, (t, v) in enumerate(self._saved):
            if t is not None and inplace.version(t) != v:
                raise StateError(
                    f"backward: one of the variables needed for gradient computation has "
                    f"been modified by an inplace operation: saved tensor {i} (shape "
                    f"{list(t.shape)}) is at version {inplace.version(t)}; expected version "
                    f"{v} instead")
        return tuple(t for t, _ in self._saved)

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """These outputs do not require grad (e.g. indices); backward gets zeros for them."""
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors: Tensor) -> None:
        raise StateError("mark_dirty: in-place custom Functions are not supported; return a "
                         "new tensor from forward")

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward gets None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class Function:
    """Subclass with static ``forward(ctx, *args)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grads)``, which returns
    one gradient (or None) per forward argument; call it as ``MyFn.apply(*args)``."""

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("a Function subclass must define forward")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> Any:
        return _NO_SETUP

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("a Function subclass must define backward to be "
                                  "differentiated")

    vjp = backward

    @classmethod
    def apply(cls, *args: Any) -> Any:
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        separate = cls.setup_context is not Function.setup_context
        with no_grad():
            output = cls.forward(*args) if separate else cls.forward(ctx, *args)
        if separate:
            cls.setup_context(ctx, args, output)
        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        tensors = tuple(a for a in args if isinstance(a, Tensor))
        record = is_grad_enabled() and any(ctx.needs_input_grad)
        n_out = sum(isinstance(o, Tensor) for o in outputs)
        ctx._outputs = tuple(o for o in outputs if isinstance(o, Tensor))  # type: ignore[attr-defined]
        results = []
        index = 0
        for o in outputs:
            if not isinstance(o, Tensor):
                results.append(o)
                continue
            if record and id(o) not in ctx._non_differentiable and o.dtype.is_floating_point:
                out = wrap(o._data, o._backend, O.CustomFunction(cls, ctx, args, tensors,
                                                                 index, n_out))
            else:
                out = wrap(o._data, o._backend)
            out._view = Alias(o)  # its memory is o's: a write is seen by saved tensors
            results.append(out)
            index += 1
        return results[0] if single else tuple(results)


_NO_SETUP = object()


def custom_grads(y: Tensor, op: O.CustomFunction, g: Tensor
                 ) -> Sequence[tuple[Tensor, Tensor | None]]:
    """The rule of O.CustomFunction (autograd/engine.py): call backward with g in this output's
    place, then match the returned gradients to the tensor arguments."""
    ctx = op.ctx
    grads: list[Any] = []
    for i, o in enumerate(ctx._outputs):
        if i == op.output_index:
            grads.append(g)
        else:
            grads.append(zeros_like(o) if ctx.materialize_grads else None)
    returned = op.function.backward(ctx, *grads)
    returned = returned if isinstance(returned, tuple) else (returned,)
    name = op.function.__name__
    if len(returned) != len(op.args):
        raise StateError(f"{name}.backward returned an incorrect number of gradients "
                         f"(expected {len(op.args)}, got {len(returned)})")
    pairs = []
    for i, (arg, gi) in enumerate(zip(op.args, returned)):
        if not isinstance(arg, Tensor):
            if gi is not None:
                raise StateError(f"{name}.backward returned a gradient for argument {i}, "
                                 f"which is not a tensor")
            continue
        if gi is not None:
            if not isinstance(gi, Tensor):
                raise ShrewTypeError(f"{name}.backward: gradient {i} must be a tensor or None, "
                                     f"got {type(gi).__name__}")
            if gi.shape != arg.shape:
                try:
                    gi = sum_to_shape(gi, arg.shape)
                except ShrewError:
                    raise StateError(f"{name}.backward returned an invalid gradient at index "
                                     f"{i}: got shape {list(gi.shape)} but expected shape "
                                     f"compatible with {list(arg.shape)}") from None
            gi = gi.to_dtype(arg.dtype)
        pairs.append((arg, gi))
    return pairs
