"""Reverse-mode differentiation: GradStore and backward(), one `match` over the Op variants.

Gradient rules are written with Tensor operations, so they run on the tensor's own device;
with create_graph=True they are recorded and can be differentiated again.
"""
from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TypeAlias

from . import op as O
from .backends.base import fast_path
from .checkpoint import checkpoint_grads
from .diagnostics import anomaly_enabled, check_gradients, op_name
from .errors import DeviceError, ShrewError
from .factory import accumulate_grad, release, wrap
from .ops.conv import col2im, im2col
from .ops.creation import ones_like, zeros_like
from .ops.elementwise import unary, where
from .ops import inplace as _inplace
from .ops.index import scatter_add_unchecked
from .ops.scan import cumprod_grad, products_of_others, reverse, scan
from .grads.scan import logcumsumexp_grad
from .ops.index import scatter_unchecked as scatter
from .grad_mode import enable_grad, is_grad_enabled, no_grad
from .shape import broadcast_dims, fmt, numel, reduced_shape
from .tensor import Tensor

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_LN2, _LN10 = math.log(2.0), math.log(10.0)
_GELU_A = 0.044715

InputGrads: TypeAlias = Sequence[tuple[Tensor, Tensor | None]]
"""What a gradient rule returns: (input, its gradient or None) per input."""


class GradStore:
    """The gradients of one backward call, keyed by tensor id."""

    __slots__ = ("_grads",)

    def __init__(self) -> None:
        self._grads: dict[int, tuple[Tensor, Tensor]] = {}

    def __getitem__(self, t: Tensor) -> Tensor:
        try:
            return self._grads[t.id][1]
        except KeyError:
            raise KeyError(f"no gradient reached tensor {t.id} (shape {fmt(t.shape)})") from None

    def get(self, t: Tensor, default: Tensor | None = None) -> Tensor | None:
        entry = self._grads.get(t.id)
        return default if entry is None else entry[1]

    def __contains__(self, t: Tensor) -> bool:
        return t.id in self._grads

    def __len__(self) -> int:
        return len(self._grads)

    def __iter__(self) -> Iterator[Tensor]:
        return iter(t for t, _ in self._grads.values())

    def items(self) -> list[tuple[Tensor, Tensor]]:
        return list(self._grads.values())

    def insert(self, t: Tensor, grad: Tensor) -> None:
        self._grads[t.id] = (t, grad)

    def __repr__(self) -> str:
        return f"GradStore({len(self)} gradients)"


def sum_to_shape(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum a gradient over the dims that broadcasting added or stretched, back to `shape`."""
    if grad.shape == shape:
        return grad
    dims = broadcast_dims(grad.shape, shape)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(*shape)


def topological_order(root: Tensor, *more: Tensor) -> list[Tensor]:
    """Every tensor that needs grad and leads to `root`, consumers before producers.

    An iterative walk (no recursion, so any depth works) collects the nodes; sorting them
    by creation id, newest first, is a valid topological order that depends only on the
    order in which operations ran.  Gradients therefore accumulate in the same order when a
    checkpointed segment is recomputed, which keeps checkpointing bit-exact."""
    seen = {t.id: t for t in (root, *more)}
    stack = list(seen.values())
    while stack:
        node = stack.pop()
        op = node._op
        if op is None:
            continue
        if type(op) is O.Released:
            raise ShrewError(
                f"backward: the graph through {op.variant} was freed by an earlier backward(); "
                f"pass retain_graph=True to the first backward() to backpropagate twice")
        if _inplace.rebased:  # inputs as they were when op was recorded
            op = _inplace.as_recorded(op, node.id)
        for x in op.inputs():
            if x.requires_grad and x.id not in seen:
                seen[x.id] = x
                stack.append(x)
    return [seen[i] for i in sorted(seen, reverse=True)]


def backward(root: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Tensor | Sequence[Tensor] | None = None,
             ) -> GradStore:
    """Backpropagate from `root`; return the GradStore and accumulate leaves' .grad (only
    the given `inputs`' .grad when they are given, leaves or not)."""
    if not isinstance(root, Tensor) or not root.requires_grad:
        raise ShrewError("backward: the tensor does not require grad (no input of its graph "
                         "has requires_grad=True, or it was computed under no_grad)")
    gradient = root_gradient("backward", root, gradient)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        return run_backward(root, gradient, retain_graph, create_graph, accumulate=True)
    targets = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if not targets or not all(isinstance(t, Tensor) and t.requires_grad for t in targets):
        raise ShrewError("backward: inputs must be a non-empty sequence of tensors that "
                         "require grad")
    store = run_backward(root, gradient, retain_graph, create_graph, accumulate=False,
                         capture=frozenset(t.id for t in targets))
    for t in targets:
        g = store.get(t)
        if g is not None:
            accumulate_grad(t, g)
    return store


def root_gradient(op: str, root: Tensor, gradient: Tensor | None) -> Tensor:
    """The gradient backpropagation starts from: ones for a one-element root, else the
    given tensor, checked against the root and cast to its dtype."""
    if gradient is None:
        if numel(root.shape) != 1:
            raise ShrewError(f"{op}: needs a single-element tensor (grad can be implicitly "
                             f"created only for scalar outputs), got shape {fmt(root.shape)}; "
                             f"reduce it first (e.g. .sum()) or pass its gradient")
        return ones_like(root)
    if not isinstance(gradient, Tensor) or gradient.shape != root.shape:
        got = fmt(gradient.shape) if isinstance(gradient, Tensor) else type(gradient).__name__
        raise ShrewError(f"{op}: gradient must be a tensor of shape {fmt(root.shape)}, got "
                         f"{got}")
    if gradient.device != root.device:
        raise DeviceError(f"{op}: gradient is on {gradient.device} but the tensor is on "
                          f"{root.device}")
    return gradient.to_dtype(root.dtype)  # so every gradient has its tensor's dtype


def run_backward(root: Tensor, gradient: Tensor, retain_graph: bool, create_graph: bool,
                 accumulate: bool, more: Sequence[tuple[Tensor, Tensor]] = (),
                 capture: frozenset[int] = frozenset()) -> GradStore:
    """The engine.  With accumulate=False leaves' .grad is left alone (checkpoint uses it).
    `more`: further (root, gradient) pairs; `capture`: ids of non-leaf tensors whose
    gradient goes into the store too (autograd.grad's inputs)."""
    order = topological_order(root, *(t for t, _ in more))
    store = GradStore()
    grads = {root.id: gradient}
    for t, t_grad in more:
        grads[t.id] = t_grad if t.id not in grads else grads[t.id] + t_grad
    mode = enable_grad() if create_graph else no_grad()
    anomaly = anomaly_enabled()
    # Leaves with a post-accumulate hook land as soon as their last consumer has run
    # (DistributedDataParallel starts communication then), not at the end of the order.
    early = _hooked_leaves_by_last_consumer(order) if accumulate and _leaf_hooks else {}
    with mode:
        for node in order:
            grad = grads.pop(node.id, None)
            if grad is None:
                continue
            if tensor_hooks:
                grad = run_tensor_hooks(node, grad)
            op = node._op
            if op is None or node._retains_grad or node.id in capture:
                _land(node, grad, store, accumulate)
            if op is None:
                continue
            if _inplace.rebased:
                op = _inplace.as_recorded(op, node.id)
            if node.id < _inplace.last_write:  # written since: were saved tensors?
                _inplace.check_versions(node, op)
            pairs = input_grads(node, op, grad)
            if anomaly:
                check_gradients(node, op, pairs)
            for x, g in pairs:
                if g is None or not x.requires_grad:
                    continue
                prev = grads.get(x.id)
                grads[x.id] = g if prev is None else prev + g
            if not retain_graph:
                release(node, O.Released(op_name(op)))
            for leaf in early.get(node.id, ()):
                leaf_grad = grads.pop(leaf.id, None)
                if leaf_grad is not None:
                    _land(leaf, leaf_grad, store, accumulate)
    return store


# -- Tensor.register_hook: hooks that see (and may replace) a tensor's gradient ------------

TensorHook: TypeAlias = Callable[[Tensor], "Tensor | None"]
tensor_hooks: dict[int, list[TensorHook]] = {}


def run_tensor_hooks(node: Tensor, grad: Tensor) -> Tensor:
    for hook in tensor_hooks.get(node.id, ()):
        out = hook(grad)
        if out is not None:
            if not isinstance(out, Tensor) or out.shape != grad.shape:
                raise ShrewError(f"register_hook: a hook must return None or a tensor of "
                                 f"shape {fmt(grad.shape)}, got {out!r}")
            grad = out
    return grad


def register_hook(t: Tensor, hook: TensorHook) -> HookHandle:
    """Call hook(grad) each time t's gradient is computed; a tensor it returns replaces
    the gradient (for a leaf: before it is accumulated into .grad)."""
    if not isinstance(t, Tensor) or not t.requires_grad:
        raise ShrewError("register_hook: cannot register a hook on a tensor that doesn't "
                         "require gradient")
    if not callable(hook):
        raise ShrewError(f"register_hook: hook must be callable, got {type(hook).__name__}")
    tensor_hooks.setdefault(t.id, []).append(hook)
    handle = HookHandle(tensor_hooks, t.id, hook)
    weakref.finalize(t, handle.remove)
    return handle


def _land(node: Tensor, grad: Tensor, store: GradStore, accumulate: bool) -> None:
    """A leaf's (or retained tensor's) final gradient of this backward: into the store and
    .grad, then the tensor's post-accumulate hooks."""
    store.insert(node, grad)
    if accumulate:
        accumulate_grad(node, grad)
        for hook in _leaf_hooks.get(node.id, ()):
            hook(node, store)


# -- "this leaf's gradient is final": post-accumulate hooks ------------------------------

PostAccumulateHook: TypeAlias = Callable[[Tensor, GradStore], None]
"""Called as hook(leaf, grads) once leaf.grad holds this backward's gradient; `grads` is
the GradStore backward() will return (the hook may replace the leaf's entry)."""

_leaf_hooks: dict[int, list[PostAccumulateHook]] = {}


class HookHandle:
    """Returned by register_hook and register_post_accumulate_grad_hook; `remove()`
    unregisters the hook."""

    __slots__ = ("_table", "_key", "_hook")

    def __init__(self, table: dict[int, list], key: int, hook: Callable) -> None:
        self._table, self._key, self._hook = table, key, hook

    def remove(self) -> None:
        hooks = self._table.get(self._key, [])
        if self._hook in hooks:
            hooks.remove(self._hook)
        if not hooks:
            self._table.pop(self._key, None)


def register_post_accumulate_grad_hook(leaf: Tensor, hook: PostAccumulateHook) -> HookHandle:
    """Call hook(leaf, grads) in every backward(), right after leaf's gradient is final and
    accumulated into leaf.grad -- as soon as the last operation that used leaf has run its
    gradient rule, while the rest of backward goes on (like PyTorch's
    Tensor.register_post_accumulate_grad_hook, which DistributedDataParallel builds on).
    Hooks run in registration order; gradients computed inside a checkpoint's recomputation
    do not trigger them (the outer backward does, once)."""
    if not isinstance(leaf, Tensor) or not leaf.is_leaf or not leaf.requires_grad:
        raise ShrewError("register_post_accumulate_grad_hook: needs a leaf tensor that "
                         "requires grad")
    if not callable(hook):
        raise ShrewError(f"register_post_accumulate_grad_hook: hook must be callable, got "
                         f"{type(hook).__name__}")
    _leaf_hooks.setdefault(leaf.id, []).append(hook)
    handle = HookHandle(_leaf_hooks, leaf.id, hook)
    weakref.finalize(leaf, handle.remove)  # a dead tensor's hooks go with it
    return handle


def _hooked_leaves_by_last_consumer(order: list[Tensor]) -> dict[int, list[Tensor]]:
    """For each node, the hooked leaves whose gradient is complete once it has been
    processed: the leaf's consumer latest in `order` (consumers come before producers)."""
    last: dict[int, tuple[int, Tensor]] = {}
    for node in order:
        op = node._op
        if op is None:
            continue
        if _inplace.rebased:
            op = _inplace.as_recorded(op, node.id)
        for x in op.inputs():
            if x._op is None and x.id in _leaf_hooks:
                last[x.id] = (node.id, x)
    early: dict[int, list[Tensor]] = {}
    for consumer, leaf in last.values():
        early.setdefault(consumer, []).append(leaf)
    return early


def _scatter_grads(dst: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, y: Tensor,
                   g: Tensor) -> InputGrads:
    """Scatter's rules, as torch defines them: a store passes g to the entries it kept and
    to every src entry; prod divides the result by each factor (a lone zero factor gets
    the product of the others instead); amax/amin split g evenly among tied maxima."""
    if reduce == "none":
        return ((dst, scatter(g, dim, index, zeros_like(src), "none")), (src, g.gather(dim, index)))
    if reduce == "sum":
        return ((dst, g), (src, g.gather(dim, index)))
    if reduce == "prod":
        dst_nonzero = where(dst == 0, 1.0, dst)
        without_dst = scatter(dst_nonzero, dim, index, src, "prod") / dst_nonzero
        src_zero = src == 0
        zeros_at = scatter(zeros_like(dst), dim, index, src_zero.to_dtype(dst.dtype), "sum")
        lone_zero = where(src_zero, zeros_at.gather(dim, index) == 1, False)
        others = scatter(dst, dim, index, where(lone_zero, 1.0, src), "prod")
        grad_src = where(lone_zero, (g * others).gather(dim, index),
                         (g * y).gather(dim, index) / where(src_zero, 1.0, src))
        return ((dst, g * without_dst), (src, grad_src))
    dst_is = (dst == y).to_dtype(g.dtype)  # amax, amin: the entries equal to the result
    src_is = (src == y.gather(dim, index)).to_dtype(g.dtype)
    share = g / scatter(dst_is, dim, index, src_is, "sum")
    return ((dst, dst_is * share), (src, src_is * share.gather(dim, index)))


def _expand(grad: Tensor, keep_shape: tuple[int, ...], shape: tuple[int, ...]) -> Tensor:
    """A reduced gradient (with keepdim dims restored) broadcast back to `shape`."""
    return grad.reshape(*keep_shape).expand(*shape)


def _vector_norm_grad(x: Tensor, y: Tensor, g: Tensor, p: float, dims: tuple) -> Tensor:
    """d ||x||_p / dx = sign(x) |x|^(p-1) / ||x||^(p-1), and 0 where the norm is 0 (the
    subgradient PyTorch picks)."""
    keep = reduced_shape(x.shape, dims, True)
    norm, g = y.reshape(*keep), g.reshape(*keep)
    if p == 0:  # a count of nonzeros
        return zeros_like(x)
    if p == 1:
        return g * x.sign()
    zero = norm == 0
    scale = where(zero, 0.0, g / where(zero, 1.0, norm if p == 2 else norm.powf(p - 1)))
    if p == 2:
        return scale * x
    # |x|^(p-1) from 1 where x is 0 (then sign(x) = 0 gives 0, not 0 * inf for p < 1)
    return scale * x.sign() * where(x == 0, 1.0, x.abs()).powf(p - 1)


def input_grads(y: Tensor, op: O.Op, g: Tensor) -> InputGrads:
    """(input, gradient) pairs for one node: the gradient rule of each Op variant."""
    match op:  # by op family, as shrew/ops; within a family the most frequent first
        # -- elementwise (ops/elementwise.py)
        case O.Binary("add", a, b):
            return ((a, sum_to_shape(g, a.shape) if a.requires_grad else None),
                    (b, sum_to_shape(g, b.shape) if b.requires_grad else None))
        case O.Binary("sub", a, b):
            return ((a, sum_to_shape(g, a.shape) if a.requires_grad else None),
                    (b, sum_to_shape(-g, b.shape) if b.requires_grad else None))
        case O.Binary("mul", a, b):
            return ((a, sum_to_shape(g * b, a.shape) if a.requires_grad else None),
                    (b, sum_to_shape(g * a, b.shape) if b.requires_grad else None))
        case O.Binary("div", a, b):
            return ((a, sum_to_shape(g / b, a.shape) if a.requires_grad else None),
                    (b, sum_to_shape(-(g * y) / b, b.shape) if b.requires_grad else None))
        case O.Binary(fn, a, b):
            ga, gb = _binary_grads(fn, a, b, y, g)
            return ((a, sum_to_shape(ga, a.shape) if a.requires_grad and ga is not None else None),
                    (b, sum_to_shape(gb, b.shape) if b.requires_grad and gb is not None else None))
        case O.Unary(fn, x):
            return ((x, _unary_grad(fn, x, y, g)),)
        case O.Affine(x, mul, _):
            return ((x, g if mul == 1 else g * float(mul)),)  # x + c passes g through
        case O.Powf(x, 0.0):
            return ((x, zeros_like(x)),)  # not 0 * x**-1, which is nan at x = 0
        case O.Powf(x, e):
            return ((x, g * x.powf(e - 1.0) * e),)
        case O.Clamp(x, lo, hi):
            kept = g
            if lo is not None:
                kept = where(x < lo, 0.0, kept)
            if hi is not None:
                kept = where(x > hi, 0.0, kept)
            return ((x, kept),)
        case O.WhereCond(cond, a, b):
            return ((a, sum_to_shape(where(cond, g, 0.0), a.shape) if a.requires_grad else None),
                    (b, sum_to_shape(where(cond, 0.0, g), b.shape) if b.requires_grad else None))
        # -- shape (ops/shape.py) and cast (ops/cast.py): the gradient passes through
        case O.Contiguous(x) | O.Reshape(x) | O.ToDtype(x) | O.ToDevice(x):
            return ((x, _cast_like(g, x)),)
        case O.Transpose(x, d0, d1):
            return ((x, g.transpose(d0, d1)),)
        case O.Narrow(x, dim, start, length):
            pads = [0, 0] * (x.ndim - dim - 1) + [start, x.shape[dim] - start - length]
            return ((x, g.pad(pads)),)
        case O.Pad(x, pads):
            for d, (lo, _) in enumerate(pads):
                g = g.narrow(d, lo, x.shape[d])
            return ((x, g),)
        case O.Cat(xs, dim):
            out, start = [], 0
            for x in xs:
                out.append((x, g.narrow(dim, start, x.shape[dim])))
                start += x.shape[dim]
            return out
        # -- reduce (ops/reduce.py)
        case O.Reduce(fn, x, dims, _):
            keep = tuple(1 if i in dims else s for i, s in enumerate(x.shape))
            if fn == "sum":
                return ((x, _expand(g, keep, x.shape)),)
            if fn == "mean":
                count = max(numel(x.shape[d] for d in dims), 1)  # empty x: empty gradient
                return ((x, _expand(g, keep, x.shape) * (1.0 / count)),)
            # max / min: ties share the gradient equally.
            hit = x == y.reshape(*keep)
            share = hit.to_dtype(x.dtype).sum(dims, keepdim=True)
            return ((x, where(hit, g.reshape(*keep) / share, 0.0)),)
        case O.Prod(x, dim, keepdim):
            if x.numel() == 0:
                return ((x, zeros_like(x)),)
            return ((x, (g if keepdim else g.unsqueeze(dim)) * products_of_others(x, dim)),)
        case O.VectorNorm(x, p, dims, _):
            return ((x, _vector_norm_grad(x, y, g, p, dims)),)
        # -- scan (ops/scan.py)
        case O.Scan("sum", x, dim):
            return ((x, reverse(scan("sum", reverse(g, dim), dim), dim)),)
        case O.Scan("prod", x, dim):
            return ((x, cumprod_grad(x, g, dim)),)
        case O.Scan("logsumexp", x, dim):
            return ((x, logcumsumexp_grad(x, y, g, dim)),)
        # -- linalg (ops/linalg.py)
        case O.Matmul(a, b):
            return ((a, sum_to_shape(g @ b.transpose(-1, -2), a.shape)
                     if a.requires_grad else None),
                    (b, _matmul_rhs_grad(a, b, g) if b.requires_grad else None))
        # -- index (ops/index.py)
        case O.Gather(x, dim, index):
            return ((x, scatter_add_unchecked(x.shape, dim, index, g)),)
        case O.ScatterAdd(src, dim, index):
            return ((src, g.gather(dim, index)),)
        case O.Scatter(dst, dim, index, src, reduce):
            return _scatter_grads(dst, dim, index, src, reduce, y, g)
        # -- conv (ops/conv.py)
        case O.Im2Col(x, kernel, stride, padding):
            return ((x, col2im(g, x.shape, kernel, stride, padding)),)
        case O.Col2Im(cols, _, kernel, stride, padding):
            return ((cols, im2col(g, kernel, stride, padding)),)
        case O.Conv2d(x, w, stride, padding):
            return _conv_grads(x, w, g, w.shape[2:], stride, padding, x.requires_grad,
                               w.requires_grad)
        case O.Conv1d(x, w, stride, padding):
            n, c, length = x.shape
            x4 = x.reshape(n, c, 1, length)
            w4 = w.reshape(w.shape[0], w.shape[1], 1, w.shape[2])
            g4 = g.reshape(g.shape[0], g.shape[1], 1, g.shape[2])
            (_, gx), (_, gw) = _conv_grads(x4, w4, g4, (1, w.shape[2]), (1, stride),
                                           (0, padding), x.requires_grad, w.requires_grad)
            return ((x, gx.reshape(*x.shape) if gx is not None else None),
                    (w, gw.reshape(*w.shape) if gw is not None else None))
        # -- pool (ops/pool.py)
        case O.MaxPool2d(x, kernel, stride, _, index):
            if not is_grad_enabled():   # a plain backward: the backend's FastPool, if any
                data = fast_path(x._backend, "max_pool2d_backward", g._data, index._data,
                                 x.shape, kernel, stride)
                if data is not NotImplemented:
                    return ((x, wrap(data, x._backend)),)
            n, c, h, w = x.shape
            # Explicit sizes, not -1, which is ambiguous for an empty batch.
            flat_g = g.reshape(n, c, g.shape[2] * g.shape[3])
            flat_idx = index.reshape(n, c, g.shape[2] * g.shape[3])
            grad = scatter_add_unchecked((n, c, h * w), 2, flat_idx, flat_g)
            return ((x, grad.reshape(n, c, h, w)),)
        case O.AvgPool2d(x, kernel, stride, padding):
            n, c = x.shape[:2]
            k = kernel[0] * kernel[1]
            length = g.shape[2] * g.shape[3]
            spread = (g * (1.0 / k)).reshape(n, c, 1, length).expand(n, c, k, length)
            cols = spread.reshape(n, c * k, length)
            return ((x, col2im(cols, x.shape, kernel, stride, padding)),)
        # -- norm (ops/norm.py)
        case O.Softmax(x, dim, False):
            return ((x, y * (g - (g * y).sum(dim, keepdim=True))),)
        case O.Softmax(x, dim, True):
            return ((x, g - y.exp() * g.sum(dim, keepdim=True)),)
        case O.Standardize(x, dims, eps, rstd):
            if is_grad_enabled():  # create_graph: rstd's own dependence on x counts too
                centred = x - x.mean(dims, keepdim=True)
                rstd = (centred.square().mean(dims, keepdim=True) + eps).powf(-0.5)
            mean_g = g.mean(dims, keepdim=True)
            mean_gy = (g * y).mean(dims, keepdim=True)
            return ((x, (g - mean_g - y * mean_gy) * rstd),)
        # -- checkpoint (checkpoint.py)
        case O.Checkpoint():
            return checkpoint_grads(y, op, g, run_backward)
        # -- custom functions (autograd/function.py, which builds on this module)
        case O.CustomFunction():
            from .autograd.function import custom_grads
            return custom_grads(y, op, g)
    raise ShrewError(f"backward: no gradient rule for {type(op).__name__}")


def _matmul_rhs_grad(a: Tensor, b: Tensor, g: Tensor) -> Tensor:
    """a^T @ g summed to b's shape.  A plain matrix b shared by a batch of a's gets one
    GEMM over the folded batch, not a batch of products summed afterwards."""
    if b.ndim == 2:
        k, n = b.shape
        rows = numel(a.shape[:-1])  # explicit: -1 is ambiguous for an empty a
        a2, g2 = a.reshape(rows, k), g.reshape(rows, n)
        if type(b._op) is O.Transpose:
            # b = w.T (as in linear): compute (g^T a)^T, so that the Transpose rule hands
            # w a C-contiguous gradient; a transposed one makes every later elementwise
            # pass over it (optimizer step, accumulation) walk memory against its grain.
            return (g2.transpose(0, 1) @ a2).transpose(0, 1)
        return a2.transpose(0, 1) @ g2
    return sum_to_shape(a.transpose(-1, -2) @ g, b.shape)


def _cast_like(g: Tensor, x: Tensor) -> Tensor:
    """The gradient in x's dtype and on x's device (for ToDtype / ToDevice / views)."""
    if g.dtype is not x.dtype:
        g = g.to_dtype(x.dtype)
    if g._backend is not x._backend:
        g = g.to(x.device)
    return g.reshape(*x.shape) if g.shape != x.shape else g


def _conv_grads(x: Tensor, w: Tensor, g: Tensor, kernel: tuple[int, ...],
                stride: tuple[int, ...], padding: tuple[int, ...], need_x: bool,
                need_w: bool) -> tuple[tuple[Tensor, Tensor | None], tuple[Tensor, Tensor | None]]:
    """The backend's conv2d_backward where it has one and takes this geometry
    (base.FastConv) and no graph is being built; else conv as im2col + GEMM, differentiated
    with recorded operations (so that create_graph=True works): dW = g . cols^T,
    dX = col2im(W^T . g)."""
    be = x._backend
    if not is_grad_enabled():
        grads = fast_path(be, "conv2d_backward", x._data, w._data, g._data, stride, padding,
                          need_x, need_w)
        if grads is not NotImplemented:
            gx_data, gw_data = grads
            return ((x, None if gx_data is None else wrap(gx_data, be)),
                    (w, None if gw_data is None else wrap(gw_data, be)))
    n, o = g.shape[:2]
    g_mat = g.reshape(n, o, numel(g.shape[2:]))       # [N, O, L]
    w_mat = w.reshape(o, numel(w.shape[1:]))          # [O, C*kh*kw]
    gw = gx = None
    if need_w:
        cols = im2col(x, kernel, stride, padding)    # [N, CKK, L]
        # As (cols . g^T)^T: the big cols is then BLAS's plain left operand, not a
        # transposed right one that each batch's GEMM repacks (~30% faster on OpenBLAS).
        gw = (cols @ g_mat.transpose(1, 2)).sum(0).transpose(0, 1).reshape(*w.shape)
    if need_x:
        gx = col2im(w_mat.transpose(0, 1) @ g_mat, x.shape, kernel, stride, padding)
    return (x, gx), (w, gw)


def _binary_grads(fn: str, a: Tensor, b: Tensor, y: Tensor,
                  g: Tensor) -> tuple[Tensor | None, Tensor | None]:
    """d/da and d/db of the Binary functions beyond the four arithmetic ones, times g."""
    match fn:
        case "pow":  # b a^(b-1), and y log(a), taken as 0 where a = 0 and b >= 0 (as torch)
            ga = where(b == 0, 0.0, g * b * a.pow(b - 1.0)) if a.requires_grad else None
            gb = None
            if b.requires_grad:
                gb = where((a == 0) & (b >= 0), 0.0, g * y * a.log())
            return ga, gb
        case "atan2":
            r = a * a + b * b
            return g * b / r, -(g * a) / r
        case "maximum" | "minimum":  # ties share the gradient equally
            wins = a > b if fn == "maximum" else a < b
            tie = a == b
            half = g * 0.5
            return (where(tie, half, where(wins, g, 0.0)),
                    where(tie, half, where(wins, 0.0, g)))
        case "fmod":
            return g, -g * (a / b).trunc()
        case "remainder":
            return g, -g * a.floor_divide(b)
        case "floor_divide":  # piecewise constant
            return zeros_like(a), zeros_like(b)
        case "copysign":  # y / a is +-1 (0 where a = 0); b gets none
            return where(a == 0, 0.0, g * (y / a)), zeros_like(b)
    raise ShrewError(f"backward: no gradient rule for binary {fn!r}")


def _unary_grad(fn: str, x: Tensor, y: Tensor, g: Tensor) -> Tensor:
    """d/dx of each Unary function, times g."""
    match fn:
        case "neg":
            return -g
        case "abs":
            return g * x.sign()
        case "exp":
            return g * y
        case "log":
            return g / x
        case "sqrt":
            return g / (y * 2.0)
        case "square":
            return g * x * 2.0
        case "relu":
            return where(x > 0, g, 0.0)
        case "sigmoid":
            return g * y * (1.0 - y)
        case "tanh":
            return g * (1.0 - y * y)
        case "gelu" | "gelu_tanh":
            return g * unary(fn + "_derivative", x)
        case "gelu_derivative":  # d/dx (Phi + x phi) = phi (2 - x^2)
            pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
            return g * pdf * (2.0 - x * x)
        case "gelu_tanh_derivative":
            # With t = tanh(u), u = c (x + a x^3): (1 - t^2) (u' - x t u'^2 + 3 a c x^2).
            # 1 - t^2 as 4 / (e^u + e^-u)^2: no cancellation where t is near +-1.
            u = (x + x * x * x * _GELU_A) * _SQRT_2_OVER_PI
            sech2 = 4.0 / (u.exp() + (-u).exp()).square()
            du = (x * x * (3 * _GELU_A) + 1.0) * _SQRT_2_OVER_PI
            inner = du - x * u.tanh() * du * du + x * x * (3 * _GELU_A * _SQRT_2_OVER_PI)
            return g * sech2 * inner
        case "silu":
            s = x.sigmoid()
            return g * s * (x * (1.0 - s) + 1.0)
        case "sin":
            return g * x.cos()
        case "cos":
            return -(g * x.sin())
        case "erf":
            return g * (x * x * -1.0).exp() * _TWO_OVER_SQRT_PI
        case "erfc":
            return g * (x * x * -1.0).exp() * -_TWO_OVER_SQRT_PI
        case "erfinv":  # 1 / erf'(y) = sqrt(pi) / 2 exp(y^2)
            return g * (y * y).exp() * (1.0 / _TWO_OVER_SQRT_PI)
        case "rsqrt":  # -x^(-3/2) / 2 = -y^3 / 2
            return g * y * y * y * -0.5
        case "reciprocal":
            return -(g * y * y)
        case "log1p":
            return g / (x + 1.0)
        case "expm1":
            return g * (y + 1.0)
        case "log2":
            return g / (x * _LN2)
        case "log10":
            return g / (x * _LN10)
        case "exp2":
            return g * y * _LN2
        case "tan":
            return g * (y * y + 1.0)
        case "asin":
            return g * (1.0 - x * x).rsqrt()
        case "acos":
            return -(g * (1.0 - x * x).rsqrt())
        case "atan":
            return g / (x * x + 1.0)
        case "sinh":
            return g * x.cosh()
        case "cosh":
            return g * x.sinh()
        case "asinh":
            return g * (x * x + 1.0).rsqrt()
        case "acosh":
            return g * (x * x - 1.0).rsqrt()
        case "atanh":
            return g / (1.0 - x * x)
        case "floor" | "ceil" | "round" | "sign" | "trunc":
            return zeros_like(x)
    raise ShrewError(f"backward: no gradient rule for unary {fn!r}")
