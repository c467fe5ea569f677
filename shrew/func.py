"""torch.func for shrew: grad, grad_and_value, vjp, jvp, jacrev, jacfwd and hessian of
functions of tensors, whose arguments may be pytrees (tuples, lists, dicts) of tensors.

All are built on reverse mode (shrew.autograd): ``jvp`` is the vjp of a vjp and
``jacfwd`` is ``jacrev`` (same values; one backward per output element).  Transforms
nest (``hessian`` is ``jacfwd(jacrev(f))``): outside no_grad they differentiate with
create_graph=True, so a result stays differentiable for an outer transform or for
backward through tensors the function closes over (torch.func's composability); it may
therefore require grad where torch.func's would not.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .autograd.functional import jacobian_rows, track, vjps
from .core.errors import ShrewTypeError, StateError
from .core.grad_mode import enable_grad, is_grad_enabled
from .core.shape import numel
from ._tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


# -- pytrees ----------------------------------------------------------------------------------
def tree_flatten(tree: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """The leaves of a tuple/list/dict tree, and a function rebuilding it from new ones."""
    if isinstance(tree, (tuple, list)):
        parts = [tree_flatten(x) for x in tree]
        kind = type(tree)

        def rebuild_seq(leaves: list[Any]) -> Any:
            out, at = [], 0
            for (sub, fn) in parts:
                out.append(fn(leaves[at:at + len(sub)]))
                at += len(sub)
            return kind(out) if kind in (tuple, list) else kind(*out)
        return [leaf for sub, _ in parts for leaf in sub], rebuild_seq
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, rebuild = tree_flatten([tree[k] for k in keys])
        return leaves, lambda new: dict(zip(keys, rebuild(new)))
    return [tree], lambda new: new[0]


def _argnums(op: str, argnums: int | tuple[int, ...], n: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums or any(not isinstance(i, int) or not -n <= i < n for i in nums):
        raise StateError(f"{op}: argnums {argnums!r} out of range for {n} positional "
                         f"arguments")
    return tuple(i % n for i in nums)


class _Call:
    """One call of func with the differentiated arguments swapped for tracked tensors."""

    def __init__(self, op: str, func: Callable[..., Any], argnums: int | tuple[int, ...],
                 args: tuple, kwargs: dict, has_aux: bool) -> None:
        self.nums = _argnums(op, argnums, len(args))
        self.single = isinstance(argnums, int)
        leaves_per_arg = []
        self.rebuilds = []
        for i in self.nums:
            leaves, rebuild = tree_flatten(args[i])
            if not all(isinstance(x, Tensor) and x.dtype.is_floating_point for x in leaves):
                raise StateError(f"{op}: argument {i} must be a floating-point tensor or a "
                                 f"tuple/list/dict of them")
            leaves_per_arg.append(leaves)
            self.rebuilds.append(rebuild)
        # Differentiated with create_graph whenever recording is on, so that the result
        # stays differentiable for an outer transform, or through tensors func closes over.
        self.nested = is_grad_enabled()
        with enable_grad():
            self.tracked = [[track(x, self.nested) for x in ls] for ls in leaves_per_arg]
            new_args = list(args)
            for i, rebuild, ls in zip(self.nums, self.rebuilds, self.tracked):
                new_args[i] = rebuild(ls)
            out = func(*new_args, **kwargs)
        if has_aux:
            if not isinstance(out, tuple) or len(out) != 2:
                raise StateError(f"{op}: with has_aux=True the function must return "
                                 f"(output, aux)")
            out, self.aux = out
        self.out = out

    @property
    def inputs(self) -> list[Tensor]:
        return [x for ls in self.tracked for x in ls]

    def per_arg(self, flat: list[Any]) -> Any:
        """Values per tracked tensor, back in the shape of the differentiated arguments."""
        out, at = [], 0
        for ls, rebuild in zip(self.tracked, self.rebuilds):
            out.append(rebuild(flat[at:at + len(ls)]))
            at += len(ls)
        return out[0] if self.single else tuple(out)


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """A function returning (gradient of func's single-element output with respect to
    the argnums arguments, func's output)."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        call = _Call("grad", func, argnums, args, kwargs, has_aux)
        out = call.out
        if not isinstance(out, Tensor) or numel(out.shape) != 1:
            raise ShrewTypeError("grad: the function must return a single-element tensor, got "
                             f"{getattr(out, 'shape', type(out).__name__)}")
        with enable_grad():
            grads = vjps([out], call.inputs, [None], call.nested)
        value = out
        g = call.per_arg(list(grads))
        return (g, (value, call.aux)) if has_aux else (g, value)
    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """A function returning the gradient of func (with its aux when has_aux)."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """(func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) gives a tuple with one
    gradient (tree) per primal."""
    call = _Call("vjp", func, tuple(range(len(primals))), primals, {}, has_aux)
    outs, _ = tree_flatten(call.out)

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        cts, _ = tree_flatten(cotangents)
        if len(cts) != len(outs) or any(c.shape != o.shape for c, o in zip(cts, outs)):
            raise StateError("vjp: the cotangents must have the structure and shapes of "
                             "the function's output")
        with enable_grad():
            grads = vjps(outs, call.inputs, cts, call.nested)
        return call.per_arg(list(grads))

    value = call.out
    return (value, vjp_fn, call.aux) if has_aux else (value, vjp_fn)


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> Any:
    """(func(*primals), J tangents[, aux]), as the vjp of a vjp."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise StateError("jvp: primals and tangents must be tuples")
    call = _Call("jvp", func, tuple(range(len(primals))), primals, {}, has_aux)
    vs, _ = tree_flatten(tangents)
    if len(vs) != len(call.inputs) or any(v.shape != x.shape
                                          for v, x in zip(vs, call.inputs)):
        raise StateError("jvp: tangents must have the structure and shapes of primals")
    outs, rebuild = tree_flatten(call.out)
    with enable_grad():
        dummies = [o.detach() * 0 for o in outs]
        for d in dummies:
            d.requires_grad_(True)
        back = vjps(outs, call.inputs, dummies, True)  # linear in the dummies
        result = vjps(back, dummies, vs, call.nested)
    value, tangent_out = call.out, rebuild(list(result))
    return (value, tangent_out, call.aux) if has_aux else (value, tangent_out)


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *,
           has_aux: bool = False, chunk_size: int | None = None) -> Callable[..., Any]:
    """A function returning the Jacobian of func: for each output (tree) and each
    differentiated argument (tree), a tensor of shape output.shape + input.shape."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        call = _Call("jacrev", func, argnums, args, kwargs, has_aux)
        outs, rebuild = tree_flatten(call.out)
        with enable_grad():
            table = jacobian_rows(outs, call.inputs, call.nested)
        jac = rebuild([call.per_arg(row) for row in table])
        return (jac, call.aux) if has_aux else jac
    return wrapper


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
           has_aux: bool = False, *, randomness: str = "error") -> Callable[..., Any]:
    """torch.func.jacfwd's signature and values, computed by jacrev (reverse mode)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Hessian of func's single-element output: jacfwd(jacrev(func))."""
    return jacfwd(jacrev(func, argnums), argnums)
