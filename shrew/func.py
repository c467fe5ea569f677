"""torch.func for shrew: grad, grad_and_value, vjp, jvp, jacrev, jacfwd and hessian of
functions of tensors, whose arguments may be pytrees (tuples, lists, dicts) of tensors;
vmap (per slice, then stacked) and functional_call.

All are built on reverse mode (shrew.autograd): ``jvp`` is the vjp of a vjp and
``jacfwd`` is ``jacrev`` (same values; one backward per output element).  Transforms
nest (``hessian`` is ``jacfwd(jacrev(f))``): outside no_grad they differentiate with
create_graph=True, so a result stays differentiable for an outer transform or for
backward through tensors the function closes over (torch.func's composability); it may
therefore require grad where torch.func's would not.
"""
from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .autograd.functional import jacobian_rows, track, vjps
from .backends.registry import live_backends
from .core.errors import (ShrewIndexError, ShrewTypeError, ShrewValueError, StateError,
                          UnsupportedError)
from .core.grad_mode import enable_grad, is_grad_enabled
from .core.shape import numel
from .ops.shape.recorded import stack
from ._tensor import Tensor

if TYPE_CHECKING:
    from .nn.modules.module import Module

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call"]


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


# -- vmap -------------------------------------------------------------------------------------
_RANDOMNESS = ("error", "different", "same")


def _rng_snapshot() -> list[tuple[Any, bytes]]:
    """Every live backend's generator state (pickled, to compare and to restore)."""
    return [(be, pickle.dumps(be.get_rng_state())) for be in live_backends()]


def _dims_per_leaf(op: str, in_dims: Any, args: tuple) -> list[tuple[Any, int | None]]:
    """(leaf, its mapped dim or None) for every leaf of args, in_dims broadcast over them."""
    if isinstance(in_dims, int):
        in_dims = (in_dims,) * len(args)
    if not isinstance(in_dims, tuple) or len(in_dims) != len(args):
        raise ShrewValueError(f"{op}: expected `in_dims` to be int or a (potentially nested) "
                              f"tuple matching the structure of inputs, got: "
                              f"{type(in_dims)}.")
    pairs: list[tuple[Any, int | None]] = []
    for arg, dims in zip(args, in_dims):
        leaves, _ = tree_flatten(arg)
        dim_leaves = [dims] * len(leaves) if dims is None or isinstance(dims, int) else (
            tree_flatten(dims)[0])
        if len(dim_leaves) != len(leaves):
            raise ShrewValueError(f"{op}: in_dims {dims!r} does not match the structure of "
                                  f"its input")
        for leaf, d in zip(leaves, dim_leaves):
            if d is not None and not isinstance(leaf, Tensor):
                raise ShrewValueError(f"{op}: Got in_dim={d} for an input but the input is of "
                                      f"type {type(leaf)}. We cannot vmap over non-Tensor "
                                      f"arguments, please use None as the respective in_dim")
            if d is not None and not -leaf.ndim <= d < leaf.ndim:
                raise ShrewIndexError(f"{op}: Got in_dim={d} for an input but the input is of "
                                      f"dimension {leaf.ndim}")
            pairs.append((leaf, d))
    return pairs


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: int | None = None) -> Callable[..., Any]:
    """torch.func.vmap: func mapped over a dim of its inputs (in_dims: an int for every
    positional argument, or a tuple with an int / None / tree of them per argument), the
    results stacked at out_dims.  Computed by running func once per slice and stacking
    (chunk_size is accepted and changes nothing), so it nests, composes with grad
    (vmap(grad(f), in_dims=(None, 0, 0)): per-sample gradients) and gives the per-slice
    values; randomness: "error" (random ops inside raise), "different", "same" (each slice
    replays the same random numbers).  A batch of size 0 is refused."""
    if randomness not in _RANDOMNESS:
        raise ShrewValueError(f"Only allowed values for randomness are 'error', 'different', "
                              f"or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ShrewValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                              f"{chunk_size})")
    name = getattr(func, "__name__", type(func).__name__)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        op = f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>)"
        pairs = _dims_per_leaf(op, in_dims, args)
        sizes = [leaf.shape[d] for leaf, d in pairs if d is not None]
        if not sizes:
            raise ShrewValueError(f"{op}: at least one input must be batched (in_dims all "
                                  f"None)")
        if len(set(sizes)) != 1:
            raise ShrewValueError(f"vmap: Expected all tensors to have the same size in the "
                                  f"mapped dimension, got sizes {sizes} for the mapped "
                                  f"dimension")
        if not sizes[0]:
            raise UnsupportedError(f"{op}: a batch of size 0 cannot be mapped here (vmap runs "
                                   f"func per slice); handle the empty case outside vmap")
        rebuilds = [tree_flatten(a)[1] for a in args]
        counts = [len(tree_flatten(a)[0]) for a in args]
        start = _rng_snapshot()
        results = []
        for i in range(sizes[0]):
            leaves = [leaf.select(d, i) if d is not None else leaf for leaf, d in pairs]
            new_args, at = [], 0
            for rebuild, n in zip(rebuilds, counts):
                new_args.append(rebuild(leaves[at:at + n]))
                at += n
            if randomness == "same":
                for be, state in start:
                    be.set_rng_state(pickle.loads(state))
            results.append(func(*new_args, **kwargs))
            if randomness == "error" and _rng_snapshot() != start:
                raise StateError("vmap: called random operation while in randomness error "
                                 "mode. Please either use the 'same' or 'different' "
                                 "randomness flags on vmap or perform the randomness "
                                 "operation out of vmap")
        return _stack_outputs(name, results, out_dims)
    return wrapper


def _stack_outputs(name: str, results: list[Any], out_dims: Any) -> Any:
    flat, rebuild = tree_flatten(results[0])
    dims = [out_dims] * len(flat) if isinstance(out_dims, int) or out_dims is None else (
        tree_flatten(out_dims)[0])
    if len(dims) != len(flat):
        raise ShrewValueError(f"vmap({name}, ...): out_dims is not compatible with the "
                              f"structure of `outputs`. out_dims has structure "
                              f"{out_dims!r} but outputs has {len(flat)} leaves")
    per_slice = [tree_flatten(r)[0] for r in results]
    stacked = []
    for j, d in enumerate(dims):
        if d is None:
            stacked.append(flat[j])
            continue
        if not all(isinstance(p[j], Tensor) for p in per_slice):
            raise ShrewValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                  f"type {type(flat[j])}. Did you mean to set out_dims= to "
                                  f"None for output?")
        stacked.append(stack([p[j] for p in per_slice], d % (flat[j].ndim + 1)))
    return rebuild(stacked)


# -- functional_call --------------------------------------------------------------------------
def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """module(*args, **kwargs) with its parameters and buffers named in the dict(s)
    replaced by the given tensors for this call only (gradients flow to those).  A tensor
    the module holds under several names (tied weights) is replaced under all of them when
    tie_weights; strict requires every name and no other; unknown names are ignored."""
    dicts = (parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, (tuple, list))
             else (parameter_and_buffer_dicts,))
    given: dict[str, Any] = {}
    for d in dicts:
        for key, value in d.items():
            if key in given:
                raise ShrewValueError(f"{key} appeared in multiple dictionaries; behavior of "
                                      f"functional call is ambiguous")
            given[key] = value
    own = list(module._named_state())
    _check_keys(module, own, given, strict)
    replace = {k: v for k, v in given.items() if k in dict(own)}
    if tie_weights:
        by_tensor: dict[int, str] = {id(t): k for k, t in own if k in replace}
        for key, t in own:
            if key not in replace and id(t) in by_tensor:
                replace[key] = replace[by_tensor[id(t)]]
    saved = []
    try:
        for key, value in replace.items():
            owner_path, _, attr = key.rpartition(".")
            owner = module.get_submodule(owner_path)
            saved.append((owner, attr, vars(owner)[attr]))
            vars(owner)[attr] = value
        call_args = args if isinstance(args, tuple) else () if args is None else (args,)
        return module(*call_args, **(kwargs or {}))
    finally:
        for owner, attr, old in reversed(saved):
            vars(owner)[attr] = old


def _check_keys(module: Module, own: list[tuple[str, Tensor]], given: dict[str, Any],
                strict: bool) -> None:
    names = [k for k, _ in own]
    if strict:
        missing = [k for k in names if k not in given]
        unexpected = [k for k in given if k not in names]
        errors = ([f"Unexpected key(s): {', '.join(map(repr, unexpected))}."] if unexpected
                  else []) + ([f"Missing key(s): {', '.join(map(repr, missing))}."] if missing
                              else [])
        if errors:
            raise StateError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                             + "\n\t".join(errors))
    tied: dict[int, str] = {}
    for key, t in own:
        if key in given and id(t) in tied and given[tied[id(t)]] is not given[key]:
            raise ShrewValueError(f"functional_call got multiple values for keys "
                                  f"['{tied[id(t)]}', '{key}'], which are tied. Consider using "
                                  f"tie_weights=False")
        tied.setdefault(id(t), key)
