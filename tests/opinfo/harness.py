"""Run PyTorch's OpInfo samples (torch's own operator database) against shrew.

For every entry of `op_db` whose name resolves in shrew (`shrew.<name>`, `shrew.nn.functional.x`
for "nn.functional.x", `shrew.linalg.x`, ... or else a Tensor method), each sample input is
converted to shrew tensors and run through both frameworks; the outputs must agree in shape,
dtype and value. In float64 the gradients of a random weighted sum of the outputs must agree
too. The result is one `EntryResult` per entry: how many samples passed, failed, and why.

torch is a test dependency only; nothing here is imported by the package.
"""
from __future__ import annotations

import dataclasses
import traceback
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

import shrew

DTYPES = (torch.float32, torch.float64)
# tried only for entries that take none of DTYPES (view_as_real, imag, istft): complex inputs
COMPLEX_DTYPES = (torch.complex64, torch.complex128)
MAX_SAMPLES = 12  # samples tried per entry and dtype: enough to see keywords and shapes


@dataclasses.dataclass
class EntryResult:
    entry: str                       # "name" or "name.variant"
    found: bool                      # a shrew counterpart exists
    passed: int = 0
    failed: int = 0
    reasons: list[str] = dataclasses.field(default_factory=list)

    @property
    def all_pass(self) -> bool:
        return self.found and self.passed > 0 and self.failed == 0


def entry_name(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _resolve_dotted(root: Any, dotted: str) -> Any:
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _rebound_lambda(fn: Any) -> Callable[..., Any] | None:
    """An OpInfo whose `op` is a lambda over torch (e.g. where's `lambda self, condition,
    other: torch.where(condition, self, other)`) is run with `torch` meaning shrew."""
    if not isinstance(fn, types.FunctionType) or fn.__name__ != "<lambda>":
        return None
    names = set(fn.__code__.co_names)
    for const in fn.__code__.co_consts:  # a lambda inside it (wrapper_set_seed(lambda ...))
        if isinstance(const, types.CodeType):
            names |= set(const.co_names)
    if not names & {"torch", "F"}:
        return None
    scope = {**fn.__globals__, "torch": shrew, "F": shrew.nn.functional}
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)


def counterpart(op: Any) -> tuple[Callable[..., Any] | None, str]:
    """shrew's callable for OpInfo `op` and how it is called ("function" or "method")."""
    fn = _resolve_dotted(shrew, op.name)
    kind = ""
    if callable(fn) and not isinstance(fn, type(shrew)):
        kind = "function"
    elif "." not in op.name and callable(getattr(shrew.Tensor, op.name, None)):
        fn, kind = getattr(shrew.Tensor, op.name), "method"
    elif "." not in op.name and isinstance(getattr(shrew.Tensor, op.name, None), property):
        return op.op, "property"  # T, H, mT, mH: op.op reads the attribute of its input
    else:
        return None, ""
    rebound = _rebound_lambda(op.op)
    return (rebound, "lambda") if rebound is not None else (fn, kind)


# -- conversion --------------------------------------------------------------------------
def _dtype(dt: torch.dtype) -> Any:
    name = str(dt).removeprefix("torch.")
    return getattr(shrew, name, dt)


def to_shrew(value: Any, requires_grad: bool = False) -> Any:
    if isinstance(value, torch.Tensor):
        arr = _numpy(value).copy()
        t = shrew.tensor(arr)
        if requires_grad and value.requires_grad:
            t.requires_grad_()
        return t
    if isinstance(value, torch.dtype):
        return _dtype(value)
    if isinstance(value, torch.device):
        return value.type
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, tuple):
        return tuple(to_shrew(v, requires_grad) for v in value)
    if isinstance(value, list):
        return [to_shrew(v, requires_grad) for v in value]
    if isinstance(value, dict):
        return {k: to_shrew(v, requires_grad) for k, v in value.items()}
    return value


def _numpy(t: torch.Tensor) -> np.ndarray:
    """t's values on the host (force: a conjugate view or a ZeroTensor resolved, which
    numpy() refuses)."""
    return t.detach().cpu().numpy(force=True)


def _weighted(o: Any, w: np.ndarray, lib: Any) -> Any:
    """sum(o * w), a real number: a complex output is weighted by its real pairs (w has
    the output's shape plus a last dim of 2), as PyTorch's gradients of complex numbers are
    those of a real function of the real and imaginary parts."""
    if o.dtype.is_complex:
        o = lib.view_as_real(o.resolve_conj())
    return (o * (torch.from_numpy(w) if lib is torch else shrew.tensor(w))).sum()


def _flat_outputs(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        out: list[Any] = []
        for v in value:
            out.extend(_flat_outputs(v))
        return out
    return [value]


def _densified(value: Any) -> Any:
    """Sparse outputs (torch's and shrew's COO) as their dense form, which compares and
    differentiates like any output."""
    if isinstance(value, (tuple, list)):
        items = [_densified(v) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value  # as it was (a named tuple keeps its type)
        return list(items) if isinstance(value, list) else tuple(items)
    if isinstance(value, torch.Tensor) and value.layout == torch.sparse_coo:
        return value.to_dense()
    if isinstance(value, shrew.sparse.SparseTensor):
        return value.to_dense()
    return value


def _leaves(value: Any) -> Iterator[Any]:
    """The tensors inside a (nested) sample input that require grad, in order."""
    if isinstance(value, (torch.Tensor, shrew.Tensor)):
        if value.requires_grad:
            yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)


DRAWN = frozenset((
    "rand_like", "randn_like", "randint_like", "randint", "randn", "rand", "normal",
    "normal.number_mean", "normal.in_place", "bernoulli", "multinomial", "nn.functional.dropout",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.rrelu", "empty", "empty_like", "empty_strided", "empty_permuted",
    "new_empty", "new_empty_strided"))
"""Entries whose outputs are random draws (from another generator than torch's) or
uninitialised memory: no value of torch's can be matched, so their samples are judged by
the outputs' number, shapes and dtypes, without values or gradients (shrew's draws are
tested by their statistics in the tests of each op)."""


def _tolerance(dtype: torch.dtype) -> tuple[float, float]:
    return (1e-4, 1e-5) if dtype in (torch.float32, torch.complex64) else (1e-7, 1e-9)


def _compare(ours: Any, ref: Any, dtype: torch.dtype, values: bool = True) -> str | None:
    """None when `ours` (shrew) matches `ref` (torch), else the reason; values=False
    compares the outputs' number, shapes and dtypes only."""
    ours_l, ref_l = _flat_outputs(ours), _flat_outputs(ref)
    if len(ours_l) != len(ref_l):
        return f"{len(ours_l)} outputs, torch gives {len(ref_l)}"
    rtol, atol = _tolerance(dtype)
    for i, (a, b) in enumerate(zip(ours_l, ref_l)):
        if isinstance(b, torch.Tensor):
            if not isinstance(a, shrew.Tensor):
                return f"output {i} is {type(a).__name__}, torch gives a tensor"
            if tuple(a.shape) != tuple(b.shape):
                return f"output {i} shape {tuple(a.shape)}, torch {tuple(b.shape)}"
            want = str(b.dtype).removeprefix("torch.")
            if a.dtype.name != want:
                return f"output {i} dtype {a.dtype.name}, torch {want}"
            if not values:
                continue
            if b.dtype == torch.bfloat16:  # numpy has no bfloat16 of its own: compare in float32
                a, b = a.float(), b.float()
            got, exp = np.asarray(a.numpy()), _numpy(b)
            if got.dtype == np.bool_ or np.issubdtype(got.dtype, np.integer):
                if not np.array_equal(got, exp):
                    return f"output {i} values differ"
            elif not np.allclose(got, exp, rtol=rtol, atol=atol, equal_nan=True):
                return f"output {i} values differ (max |diff| " \
                       f"{np.nanmax(np.abs(got - exp)) if got.size else 0:.3g})"
        elif isinstance(a, shrew.Tensor):
            if a.shape != ():
                return f"output {i} is a tensor of shape {tuple(a.shape)}, torch gives " \
                       f"{type(b).__name__}"
            if not np.allclose(a.item(), b, rtol=rtol, atol=atol, equal_nan=True):
                return f"output {i}: {a.item()} != {b}"
        elif a != b and not (isinstance(b, float) and np.isnan(b) and np.isnan(a)):
            return f"output {i}: {a!r} != {b!r}"
    return None


def _check_sample(op: Any, fn: Callable[..., Any], sample: Any, dtype: torch.dtype,
                  grads: bool) -> str | None:
    ref = _densified(op(sample.input, *sample.args, **sample.kwargs))
    x = to_shrew(sample.input, grads)
    args = to_shrew(sample.args, grads)
    kwargs = to_shrew(sample.kwargs, grads)
    ours = _densified(fn(x, *args, **kwargs))
    drawn = entry_name(op) in DRAWN
    reason = _compare(ours, ref, dtype, values=not drawn)
    if reason or not grads or drawn:
        return reason
    ref_outs = [o for o in _flat_outputs(ref)
                if isinstance(o, torch.Tensor) and o.requires_grad]
    if not ref_outs:
        return None
    our_outs = [o for o in _flat_outputs(ours) if isinstance(o, shrew.Tensor) and o.requires_grad]
    if len(our_outs) != len(ref_outs):
        return "shrew output does not require grad where torch's does"
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(tuple(o.shape) + ((2,) if o.dtype.is_complex else ()))
               for o in ref_outs]
    ref_loss = sum(_weighted(o, w, torch) for o, w in zip(ref_outs, weights))
    ref_leaves = list(_leaves((sample.input, sample.args, sample.kwargs)))
    ref_grads = torch.autograd.grad(ref_loss, ref_leaves, allow_unused=True)
    our_loss = sum(_weighted(o, w, shrew) for o, w in zip(our_outs, weights))
    our_leaves = list(_leaves((x, args, kwargs)))
    store = our_loss.backward()
    rtol, atol = _tolerance(dtype)
    for i, (leaf, g_ref) in enumerate(zip(our_leaves, ref_grads)):
        g = store.get(leaf)
        if g_ref is None:
            continue
        if g is None:
            if torch.count_nonzero(g_ref):
                return f"no gradient for input {i}"
            continue
        if not np.allclose(g.numpy(), _numpy(g_ref), rtol=rtol, atol=atol, equal_nan=True):
            return f"gradient of input {i} differs"
    return None


def run_entry(op: Any) -> EntryResult:
    result = EntryResult(entry_name(op), found=False)
    fn, _ = counterpart(op)
    if fn is None:
        return result
    result.found = True
    supported = op.supported_dtypes("cpu")
    dtypes = DTYPES if any(d in supported for d in DTYPES) else COMPLEX_DTYPES
    for dtype in dtypes:
        if dtype not in supported:
            continue
        grads = dtype in (torch.float64, torch.complex128) and op.supports_autograd
        try:
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=grads))[:MAX_SAMPLES]
        except Exception as exc:  # torch's own sample generator failing is not our failure
            result.reasons.append(f"torch samples: {type(exc).__name__}")
            continue
        for sample in samples:
            try:
                with torch.random.fork_rng():
                    torch.manual_seed(0)
                    reason = _check_sample(op, fn, sample, dtype, grads)
            except Exception as exc:
                last = traceback.extract_tb(exc.__traceback__)[-1]
                reason = f"{type(exc).__name__}: {str(exc)[:120]} ({last.name})"
            if reason is None:
                result.passed += 1
            else:
                result.failed += 1
                result.reasons.append(f"{dtype}: {reason}")
    return result


def op_db_entries() -> list[Any]:
    from torch.testing._internal.common_methods_invocations import op_db
    return list(op_db)


def run_all(names: set[str] | None = None) -> list[EntryResult]:
    """Results for every op_db entry (or those whose entry name is in `names`)."""
    results = []
    for op in op_db_entries():
        if names is not None and entry_name(op) not in names:
            continue
        results.append(run_entry(op))
    return results
