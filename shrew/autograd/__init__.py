"""torch.autograd for shrew: grad, backward, custom Functions, gradcheck and
gradgradcheck, and the functional API (shrew.autograd.functional)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .engine import GradStore, root_gradient, run_backward
from ..core.errors import StateError, UnsupportedError
from ..core.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                         is_inference_mode_enabled, no_grad, set_grad_enabled)
from ..ops.creation import zeros_like
from ..ops.random import randn
from ..testing.gradcheck import gradcheck as run_gradcheck
from .._tensor import Tensor
from .function import Function, FunctionCtx
from .variable import Variable
from .graph import AccumulateGrad, Node
from . import functional

__all__ = ["grad", "backward", "Function", "FunctionCtx", "Node", "AccumulateGrad",
           "gradcheck", "gradgradcheck", "functional", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "Variable"]


def _tensors(op: str, what: str, value: Tensor | Sequence[Tensor]) -> tuple[Tensor, ...]:
    out = (value,) if isinstance(value, Tensor) else tuple(value)
    if not all(isinstance(t, Tensor) for t in out):
        raise StateError(f"{op}: {what} must be a tensor or a sequence of tensors")
    return out


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False,
         ) -> tuple[Tensor | None, ...]:
    """The gradients of sum(outputs * grad_outputs) with respect to each input, as a
    tuple; nothing is accumulated into .grad.  An input the outputs do not depend on is an
    error unless allow_unused (its gradient is then None) or materialize_grads (zeros)."""
    if is_grads_batched:
        raise UnsupportedError("grad: is_grads_batched=True is not supported")
    outs = _tensors("grad", "outputs", outputs)
    ins = _tensors("grad", "inputs", inputs)
    if grad_outputs is None:
        gos: Sequence[Tensor | None] = [None] * len(outs)
    else:
        gos = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    if len(gos) != len(outs):
        raise StateError(f"grad: grad_outputs has {len(gos)} entries for {len(outs)} outputs")
    for i, o in enumerate(outs):
        if not o.requires_grad:
            raise StateError(f"grad: element {i} of outputs does not require grad and does "
                             f"not have a grad_fn")
    for i, t in enumerate(ins):
        if not t.requires_grad:
            raise StateError(f"grad: input {i} does not require grad (one of the "
                             f"differentiated tensors does not require grad)")
    roots = [(o, root_gradient("grad", o, g)) for o, g in zip(outs, gos)]
    if retain_graph is None:
        retain_graph = create_graph
    store = run_backward(*roots[0], retain_graph, create_graph, accumulate=False,
                         more=roots[1:], capture=frozenset(t.id for t in ins))
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    result: list[Tensor | None] = []
    for i, t in enumerate(ins):
        g = store.get(t)
        if g is None:
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise StateError(f"grad: input {i} (shape {list(t.shape)}) appears to not "
                                 f"have been used in the graph; set allow_unused=True if "
                                 f"this is the desired behavior")
        result.append(g)
    return tuple(result)


def backward(tensors: Tensor | Sequence[Tensor],
             grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
             retain_graph: bool | None = None, create_graph: bool = False,
             inputs: Tensor | Sequence[Tensor] | None = None) -> GradStore:
    """Accumulate the gradients of sum(tensors * grad_tensors) into the leaves' .grad (or
    the given inputs'); returns the GradStore, as Tensor.backward."""
    outs = _tensors("backward", "tensors", tensors)
    if grad_tensors is None:
        gts: Sequence[Tensor | None] = [None] * len(outs)
    else:
        gts = (grad_tensors,) if isinstance(grad_tensors, Tensor) else tuple(grad_tensors)
    if len(outs) == 1:
        return outs[0].backward(gts[0], retain_graph, create_graph, inputs)
    total: Any = None
    for o, g in zip(outs, gts):  # one root: sum of <o, g>, whose gradient is g for each o
        term = (o * root_gradient("backward", o, g)).sum()
        total = term if total is None else total + term
    return total.backward(None, retain_graph, create_graph, inputs)


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
              nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False,
              masked: bool | None = None) -> bool:
    """torch.autograd.gradcheck: backward's gradients of func against float64 central
    differences, for every input that requires grad (shrew.testing.gradcheck does the
    work; fast_mode compares random directional derivatives).  The batched and
    forward-mode checks are not available."""
    if check_batched_grad or check_batched_forward_grad or check_forward_ad:
        raise StateError("gradcheck: shrew has no batched or forward-mode AD to check "
                         "(check_batched_grad, check_batched_forward_grad, check_forward_ad)")
    args = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if not check_backward_ad:
        return True
    return run_gradcheck(func, args, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                 directions=4 if fast_mode else None)


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """torch.autograd.gradgradcheck: gradcheck of the gradient of func (with respect to
    its inputs and the output gradients), which needs create_graph=True to work."""
    if check_batched_grad or check_fwd_over_rev:
        raise StateError("gradgradcheck: shrew has no batched or forward-mode AD to check")
    args = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    diff = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
    with enable_grad():
        outs = func(*args)
    outs = (outs,) if isinstance(outs, Tensor) else tuple(outs)
    if grad_outputs is None:
        grad_outputs = tuple(randn(*o.shape, dtype=o.dtype, device=o.device,
                                   requires_grad=True) for o in outs)
    else:
        grad_outputs = (grad_outputs,) if isinstance(grad_outputs, Tensor) else \
            tuple(grad_outputs)
    n = len(args)
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]

    def first_grads(*all_args: Any) -> tuple[Tensor, ...]:
        """The gradients of <func(inputs), grad_outputs>; the finite differences call it
        under no_grad with fresh tensors, which are tracked here."""
        with enable_grad():
            ins = list(all_args[:n])
            for i in positions:
                ins[i] = functional.track(ins[i], True)
            outs = func(*ins)
            outs = (outs,) if isinstance(outs, Tensor) else tuple(outs)
            wrt = [ins[i] for i in positions]
            gs = grad(outs, wrt, all_args[n:], create_graph=True, allow_unused=True)
        return tuple(g if g is not None else zeros_like(w) for g, w in zip(gs, wrt))

    if not diff or not check_rev_over_rev:
        return True
    return gradcheck(first_grads, (*args, *grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode)
