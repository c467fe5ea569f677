"""Reverse-mode differentiation: GradStore and backward(), one `match` over the Op variants.

Gradient rules are written with Tensor operations, so they run on the tensor's own device;
with create_graph=True they are recorded and can be differentiated again.  The match calls
the rules of autograd/rules/<family>.py; the hooks backward runs live in autograd/hooks.py.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

from ..core import op as O
from ..backends.base import fast_path
from .checkpoint import checkpoint_grads
from .diagnostics import NAMED_BY_FN, anomaly_enabled, check_gradients, op_name
from .function import custom_grads
from .hooks import hooked_leaves_by_last_consumer, leaf_hooks, run_tensor_hooks, tensor_hooks
from ..core.errors import type_name
from ..core.errors import DeviceError, StateError
from ..core import fields as _fields
from ..core.shape import LargeSize
from ..core.fields import accumulate_grad, graph_only, release, stood_for
from .rules.attention import attention_grads
from .rules.common import InputGrads, cast_like, sum_to_shape
from .rules.conv import conv1d_grads, conv_grads
from .rules.elementwise import binary_grads, unary_grad
from .rules.index import scatter_grads
from .rules.linalg import decomposition_grad, linear_grads, matmul_rhs_grad, solve_grads
from .rules.norm import layer_norm_grads, softmax_grad, standardize_grad
from .rules.pool import avg_pool2d_grad, max_pool2d_grad
from .rules.reduce import reduce_grad, vector_norm_grad
from .rules.rnn import recurrent_grads, recurrent_layer_grads
from .rules.scan import cumprod_grad, cumsum_grad, logcumsumexp_grad, products_of_others
from ..ops.conv import col2im, im2col
from ..ops.spectral import fft_pairs
from ..ops.complex.pair import view_as_complex
from ..ops.creation import ones_like, zeros_like
from ..ops.elementwise.recorded import where
from ..ops import inplace as _inplace
from ..ops.index.recorded import scatter_add_unchecked
from ..ops.shape.strided import strided_grad
from ..core import autocast as _autocast
from ..core.grad_mode import enable_grad, no_grad
from ..core.shape import fmt, numel
from .._tensor import Tensor


class GradStore:
    """The gradients of one backward call, keyed by tensor id."""

    __slots__ = ("_grads",)

    def __init__(self) -> None:
        self._grads: dict[int, tuple[Tensor, Tensor]] = {}

    def __getitem__(self, t: Tensor) -> Tensor:
        try:
            return _as_type_of(t, self._grads[t.id][1])
        except KeyError:
            raise KeyError(f"no gradient reached tensor {t.id} (shape {fmt(t.shape)})") from None

    def get(self, t: Tensor, default: Tensor | None = None) -> Tensor | None:
        entry = self._grads.get(t.id)
        return default if entry is None else _as_type_of(t, entry[1])

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


def _as_type_of(t: Tensor, grad: Tensor) -> Tensor:
    """A complex tensor's gradient is its pair's (ops/complex/), read as complex numbers."""
    return view_as_complex(grad) if t.dtype.is_complex and not grad.dtype.is_complex else grad


def topological_order(root: Tensor, *more: Tensor, stop: frozenset[int] = frozenset()
                      ) -> list[Tensor]:
    """Every tensor that needs grad and leads to `root`, consumers before producers; the
    walk does not go past the tensors whose ids are in `stop`.

    An iterative walk (no recursion, so any depth works) collects the nodes; sorting them
    by creation id, newest first, is a valid topological order that depends only on the
    order in which operations ran.  Gradients therefore accumulate in the same order when a
    checkpointed segment is recomputed, which keeps checkpointing bit-exact."""
    seen = {t.id: t for t in (root, *more)}
    stack = list(seen.values())
    rebased, released = _inplace.rebased, O.Released  # locals: this loop runs per node
    while stack:
        node = stack.pop()
        op = node._op
        if op is None or (stop and node.id in stop):
            continue
        if type(op) is released:
            raise StateError(
                f"backward: the graph through {op.variant} was freed by an earlier backward(); "
                f"pass retain_graph=True to the first backward() to backpropagate twice")
        if rebased:  # inputs as they were when op was recorded
            op = _inplace.as_recorded(op, node.id)
        for x in op.inputs():
            if x.requires_grad and x.id not in seen:
                if x._data is None:  # core.fields.graph_only: the tensor itself if alive
                    x = stood_for(x)
                seen[x.id] = x
                stack.append(x)
    return [seen[i] for i in sorted(seen, reverse=True)]


_RELEASED: dict[type, O.Released | dict[str, O.Released]] = {}
"""The stand-ins by variant; for a variant named by its function (Unary, Binary, Reduce),
a dict of them by function."""


def released(op: O.Op) -> O.Released:
    """The stand-in for `op` once backward freed it: one shared instance per name, since
    every node of a step is released and the name is all a Released holds (looked up by
    type first: this runs for every node of every backward)."""
    entry = _RELEASED.get(type(op))
    if entry is None:
        entry = _RELEASED[type(op)] = {} if isinstance(op, NAMED_BY_FN) else O.Released(
            op_name(op))
    if type(entry) is not dict:
        return cast(O.Released, entry)
    fn = op.fn  # type: ignore[attr-defined]
    stand_in = entry.get(fn)
    if stand_in is None:
        stand_in = entry[fn] = O.Released(op_name(op))
    return stand_in


def backward(root: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Tensor | Sequence[Tensor] | None = None,
             ) -> GradStore:
    """Backpropagate from `root`; return the GradStore and accumulate leaves' .grad (only
    the given `inputs`' .grad when they are given, leaves or not)."""
    if not isinstance(root, Tensor) or not root.requires_grad:
        raise StateError("backward: the tensor does not require grad (no input of its graph "
                         "has requires_grad=True, or it was computed under no_grad)")
    gradient = root_gradient("backward", root, gradient)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        return run_backward(root, gradient, retain_graph, create_graph, accumulate=True)
    targets = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if not targets or not all(isinstance(t, Tensor) and t.requires_grad for t in targets):
        raise StateError("backward: inputs must be a non-empty sequence of tensors that "
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
            raise StateError(f"{op}: needs a single-element tensor (grad can be implicitly "
                             f"created only for scalar outputs), got shape {fmt(root.shape)}; "
                             f"reduce it first (e.g. .sum()) or pass its gradient")
        return ones_like(root)
    if not isinstance(gradient, Tensor) or gradient.shape != root.shape:
        got = fmt(gradient.shape) if isinstance(gradient, Tensor) else type_name(gradient)
        raise StateError(f"{op}: gradient must be a tensor of shape {fmt(root.shape)}, got "
                         f"{got}")
    if gradient.device != root.device:
        raise DeviceError(f"{op}: gradient is on {gradient.device} but the tensor is on "
                          f"{root.device}")
    return gradient.to_dtype(root.dtype)  # so every gradient has its tensor's dtype


def run_backward(root: Tensor, gradient: Tensor, retain_graph: bool, create_graph: bool,
                 accumulate: bool, more: Sequence[tuple[Tensor, Tensor]] = (),
                 capture: frozenset[int] = frozenset(), stop: frozenset[int] = frozenset()
                 ) -> GradStore:
    """The engine.  With accumulate=False leaves' .grad is left alone (checkpoint uses it).
    `more`: further (root, gradient) pairs; `capture`: ids of non-leaf tensors whose
    gradient goes into the store too (autograd.grad's inputs); `stop`: ids of tensors
    treated as leaves, their gradients stored, their graphs not entered (a sub-graph's
    backward: autograd/rules/rnn.py's)."""
    order = topological_order(root, *(t for t, _ in more), stop=stop)
    capture |= stop
    store = GradStore()
    grads = {root.id: gradient}
    for t, t_grad in more:
        grads[t.id] = t_grad if t.id not in grads else grads[t.id] + t_grad
    mode = enable_grad() if create_graph else no_grad()
    anomaly = anomaly_enabled()
    # Leaves with a post-accumulate hook land as soon as their last consumer has run
    # (DistributedDataParallel starts communication then), not at the end of the order.
    early = hooked_leaves_by_last_consumer(order) if accumulate and leaf_hooks else {}
    # Gradients that this run made and alone holds (its sums, narrow's padded copies): a
    # later narrow of the same tensor adds into their slice in place rather than padding
    # a full-size copy to sum (chunk and split: attention's q/k/v, an LSTM's gates).
    owned: set[int] = set()
    # Gradients already stored as some tensor's .grad in this run (and the caller's root
    # gradient): a rule may hand one tensor to several inputs (add's), and a .grad shared
    # by two parameters would be scaled twice by an in-place clip (PyTorch's AccumulateGrad
    # copies a gradient that something else still holds).
    landed: set[int] = {gradient.id}
    in_place = not create_graph and not anomaly  # (in-place adds record no graph)
    free_early = not retain_graph
    # (locals: these are read for every node)
    recasting, holds_recasts = _fields.recasting, _fields.HOLDS_RECASTS
    with mode, _autocast.suspended():  # gradients in their tensors' own dtypes
        for i in range(len(order)):   # (not enumerate: its tuple would hold the node)
            node = order[i]
            grad = grads.pop(node.id, None)
            if grad is None:
                continue
            if tensor_hooks:
                grad = run_tensor_hooks(node, grad)
            op = node._op
            if op is None or node._retains_grad or node.id in capture:
                _land(node, grad, store, accumulate, landed)
            if op is None or (stop and node.id in stop):
                continue
            if _inplace.rebased:
                op = _inplace.as_recorded(op, node.id)
            if node.id < _inplace.last_write:  # written since: were saved tensors?
                _inplace.check_versions(node, op)
            standing_in = False
            if free_early and type(node.shape) is LargeSize and type(node) is Tensor:
                # The order is the last holder of an activation once its consumers' records
                # are released: off it, the activation goes as soon as its gradient is
                # through, not at the end of backward (a deep step's peak); and its values,
                # where its own rule does not read them, go before that gradient is made
                # (a GELU's output by its gradient's side), as PyTorch's do.  The stand-in
                # keeps what the rule reads of it.  (Large ones only, told by their shape's
                # type: freeing each small one here cost a chain of 16x16 tensors 4% of
                # its step, and reading its array's size as much again.)
                cast(list, order)[i] = None
                stand_in = graph_only(node)
                standing_in, node = stand_in is not node, stand_in
            if recasting and type(op) in holds_recasts:
                _autocast.recast(op)
            narrow = type(op) is O.Narrow
            if narrow and in_place and _add_into_slice(cast(O.Narrow, op), grad, grads, owned):
                pairs: InputGrads = ()
            else:
                pairs = input_grads(node, op, grad)
            if anomaly:
                check_gradients(node, op, pairs)
            for x, g in pairs:
                if g is None or not x.requires_grad:
                    continue
                prev = grads.get(x.id)
                if prev is not None:
                    grads[x.id] = g = prev + g
                    owned.add(g.id)
                else:
                    grads[x.id] = g
                    if narrow and g is not grad:  # padded: a new tensor
                        owned.add(g.id)
            if not retain_graph:
                release(stood_for(node) if standing_in else node, released(op))
            if early:
                for leaf in early.get(node.id, ()):
                    leaf_grad = grads.pop(leaf.id, None)
                    if leaf_grad is not None:
                        _land(leaf, leaf_grad, store, accumulate, landed)
    return store


def _add_into_slice(op: O.Narrow, g: Tensor, grads: dict[int, Tensor], owned: set[int]
                    ) -> bool:
    """Add narrow's gradient g into the slice of its input's gradient where this run made
    that gradient and holds it alone (base.FastAccumulate); False (the rule then pads g)
    where it did not or the backend has no such method."""
    prev = grads.get(op.x.id)
    if prev is None or prev.id not in owned or not prev.dtype.is_floating_point:
        return False
    # On the storage: nothing saved or sees this gradient, so no version to count.
    done = fast_path(prev._backend, "add_narrow_", prev._data, g._data, op.dim, op.start)
    return done is not NotImplemented


def _land(node: Tensor, grad: Tensor, store: GradStore, accumulate: bool,
          landed: set[int]) -> None:
    """A leaf's (or retained tensor's) final gradient of this backward: into the store and
    .grad (a copy where another .grad of this run, or the caller, holds that tensor, and
    a contiguous one for an expanded gradient, as PyTorch's AccumulateGrad), then the
    tensor's post-accumulate hooks."""
    if accumulate and node._grad is None:  # .grad: writable memory of its own (clip_grad_)
        if grad.id in landed:
            grad = grad.clone()
        elif any(step == 0 and size > 1
                 for step, size in zip(grad.stride(), grad.shape)):  # type: ignore[arg-type]
            grad = grad.contiguous()  # an expanded gradient (of a sum): one element, many
    store.insert(node, grad)
    if accumulate:
        landed.add(grad.id)
        accumulate_grad(node, grad)
        for hook in leaf_hooks.get(node.id, ()):
            hook(node, store)


def input_grads(y: Tensor, op: O.Op, g: Tensor) -> InputGrads:
    """(input, gradient) pairs for one node: the gradient rule of each Op variant."""
    match op:  # by op family, as shrew/ops; within a family the most frequent first
        # -- elementwise (ops/elementwise/recorded.py)
        case O.Affine(x, mul, _):
            return ((x, g if mul == 1 else g * float(mul)),)  # x + c passes g through
        case O.Unary(fn, x):
            return ((x, unary_grad(fn, x, y, g)),)
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
            ga, gb = binary_grads(fn, a, b, y, g)
            return ((a, sum_to_shape(ga, a.shape) if a.requires_grad and ga is not None else None),
                    (b, sum_to_shape(gb, b.shape) if b.requires_grad and gb is not None else None))
        case O.Powf(x, 0.0):
            return ((x, zeros_like(x)),)  # not 0 * x**-1, which is nan at x = 0
        case O.Powf(x, e):
            return ((x, g * x.powf(e - 1.0) * e),)
        case O.Clamp(x, lo, hi):
            # As torch: g only where lo <= x <= hi holds, so none at a NaN x or bound
            kept = g
            if lo is not None:
                kept = where(x >= lo, kept, 0.0)
            if hi is not None:
                kept = where(x <= hi, kept, 0.0)
            return ((x, kept),)
        case O.WhereCond(cond, a, b):
            return ((a, sum_to_shape(where(cond, g, 0.0), a.shape) if a.requires_grad else None),
                    (b, sum_to_shape(where(cond, 0.0, g), b.shape) if b.requires_grad else None))
        # -- shape (ops/shape/recorded.py) and cast (ops/cast.py): the gradient passes through
        case O.Contiguous(x) | O.Reshape(x) | O.ToDtype(x) | O.ToDevice(x):
            return ((x, cast_like(g, x)),)
        case O.Transpose(x, d0, d1):
            return ((x, g.transpose(d0, d1)),)
        case O.FFT(x, dims, inverse):  # the adjoint of a DFT is the unnormalised inverse
            return ((x, fft_pairs(g, dims, not inverse)),)
        case O.Narrow(x, dim, start, length):
            pads = [0, 0] * (x.ndim - dim - 1) + [start, x.shape[dim] - start - length]
            return ((x, g.pad(pads)),)
        case O.AsStrided(x):
            return ((x, strided_grad(op, g)),)
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
        case O.Reduce(fn, x, dims, keepdim):
            return ((x, reduce_grad(fn, x, dims, y, g, keepdim)),)
        case O.Prod(x, dim, keepdim):
            if x.numel() == 0:
                return ((x, zeros_like(x)),)
            return ((x, (g if keepdim else g.unsqueeze(dim)) * products_of_others(x, dim)),)
        case O.VectorNorm(x, p, dims, _):
            return ((x, vector_norm_grad(x, y, g, p, dims)),)
        # -- scan (ops/scan.py)
        case O.Scan("sum", x, dim):
            return ((x, cumsum_grad(g, dim)),)
        case O.Scan("prod", x, dim):
            return ((x, cumprod_grad(x, g, dim)),)
        case O.Scan("logsumexp", x, dim):
            return ((x, logcumsumexp_grad(x, y, g, dim)),)
        # -- linalg (ops/linalg/matmul.py)
        case O.Linear(x, w, b):
            return linear_grads(x, w, b, g)
        case O.Matmul(a, b):
            return ((a, sum_to_shape(g @ b.transpose(-1, -2), a.shape)
                     if a.requires_grad else None),
                    (b, matmul_rhs_grad(a, b, g) if b.requires_grad else None))
        # -- decompositions and solvers (ops/linalg/decompositions.py)
        case O.Solve(a, b):
            return solve_grads(a, b, y, g)
        case O.Decomposition(x=x):
            return ((x, decomposition_grad(op, y, g)),)
        # -- index (ops/index/recorded.py)
        case O.Gather(x, dim, index):
            return ((x, scatter_add_unchecked(x.shape, dim, index, g)),)
        case O.ScatterAdd(src, dim, index):
            return ((src, g.gather(dim, index)),)
        case O.Scatter(dst, dim, index, src, reduce):
            return scatter_grads(dst, dim, index, src, reduce, y, g)
        # -- conv (ops/conv.py)
        case O.Im2Col(x, kernel, stride, padding):
            return ((x, col2im(g, x.shape, kernel, stride, padding)),)
        case O.Col2Im(cols, _, kernel, stride, padding):
            return ((cols, im2col(g, kernel, stride, padding)),)
        case O.Conv2d(x, w, stride, padding, dilation, groups):
            return conv_grads(x, w, g, stride, padding, x.requires_grad, w.requires_grad,
                              dilation, groups)
        case O.Conv1d(x, w, stride, padding):
            return conv1d_grads(x, w, g, stride, padding)
        # -- pool (ops/pool.py)
        case O.MaxPool2d(x, kernel, stride, dilation, index):
            return ((x, max_pool2d_grad(x, kernel, stride, dilation, index, g)),)
        case O.AvgPool2d(x, kernel, stride, padding, ceil_mode, include_pad, divisor):
            return ((x, avg_pool2d_grad(x, kernel, stride, padding, ceil_mode, include_pad,
                                        divisor, g)),)
        # -- norm (ops/norm.py)
        case O.Softmax(x, dim, log):
            return ((x, softmax_grad(x, dim, log, y, g)),)
        case O.Attention():
            return attention_grads(op, g)
        case O.Standardize(x, dims, eps, rstd):
            return ((x, standardize_grad(x, dims, eps, rstd, y, g)),)
        case O.LayerNorm(x, weight, bias, dims, eps, mean, rstd):
            return layer_norm_grads(x, weight, bias, dims, eps, mean, rstd, g)
        # -- rnn (ops/rnn.py)
        case O.Recurrent():
            return recurrent_grads(op, g, run_backward)
        case O.RecurrentLayer():
            return recurrent_layer_grads(y, op, g, run_backward)
        # -- checkpoint (autograd/checkpoint.py)
        case O.Checkpoint():
            return checkpoint_grads(y, op, g, run_backward)
        # -- custom functions (autograd/function.py)
        case O.CustomFunction():
            return custom_grads(y, op, g)
    raise StateError(f"backward: no gradient rule for {type(op).__name__}")
