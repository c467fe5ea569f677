"""Check backward against float64 central differences."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..core.errors import ArgumentError
from ..core.grad_mode import no_grad
from .._tensor import Tensor
from ..ops.complex.pair import view_as_real


def _as_outputs(result: Tensor | Iterable[Tensor]) -> tuple[Tensor, ...]:
    """The outputs, a complex one as its real pairs (PyTorch's gradients of complex
    outputs are those of their real and imaginary parts)."""
    outs = (result,) if isinstance(result, Tensor) else tuple(result)
    return tuple(view_as_real(o) if o.dtype.is_complex else o for o in outs)


def gradcheck(fn: Callable[..., Tensor | Sequence[Tensor]], inputs: Iterable[Any],
              eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, directions: int | None = None,
              seed: int = 0) -> bool:
    """Compare the gradients backward() gives with float64 central differences.

    fn maps the inputs (tensors, float64 ones that require grad are checked) to a tensor
    or tuple of tensors.  Each output is contracted with a fixed random cotangent, so one
    backward per check covers every output element.  With `directions=None` the full
    Jacobian is compared entry by entry; with `directions=k` only k random directional
    derivatives are (the fast mode: two forward runs per direction).
    """
    inputs = tuple(inputs)
    checked = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ArgumentError("gradcheck: no input requires grad")
    for t in checked:
        if t.dtype.name != "float64":
            raise ArgumentError("gradcheck: inputs that require grad must be float64, got "
                                f"{t.dtype}")
    rng = np.random.default_rng(seed)
    outs = _as_outputs(fn(*inputs))
    cotangents = [rng.standard_normal(o.shape) for o in outs]

    def scalar(values: Sequence[np.ndarray]) -> float:
        with no_grad():
            args = _replace(inputs, checked, values)
            outs = _as_outputs(fn(*args))
        return float(sum((o.detach().numpy().astype(np.float64) * c).sum()
                         for o, c in zip(outs, cotangents)))

    # Analytic: backward of sum(out * cotangent).
    loss: Any = None  # a Tensor after the loop
    for o, c in zip(outs, cotangents):
        term = (o * Tensor(c, dtype=o.dtype, device=o.device)).sum()
        loss = term if loss is None else loss + term
    store = loss.backward(retain_graph=False)
    analytic = []
    for t in checked:
        g = store.get(t)
        analytic.append(np.zeros(t.shape) if g is None else g.detach().numpy().astype(np.float64))
    base = [t.detach().numpy().astype(np.float64) for t in checked]

    if directions is None:
        for k, (t, a) in enumerate(zip(checked, analytic)):
            numeric = np.zeros(t.shape)
            flat = numeric.reshape(-1)
            for i in range(flat.size):
                plus = [b.copy() for b in base]
                minus = [b.copy() for b in base]
                plus[k].reshape(-1)[i] += eps
                minus[k].reshape(-1)[i] -= eps
                flat[i] = (scalar(plus) - scalar(minus)) / (2 * eps)
            if not np.allclose(a, numeric, atol=atol, rtol=rtol):
                return _fail(raise_exception, f"gradcheck: gradient of input {k} (shape "
                             f"{t.shape}) differs: max abs error "
                             f"{np.max(np.abs(a - numeric)):.3g}\nanalytic:\n{a}\n"
                             f"numeric:\n{numeric}")
        return True
    for _ in range(int(directions)):
        dirs = [rng.standard_normal(b.shape) for b in base]
        plus = [b + eps * d for b, d in zip(base, dirs)]
        minus = [b - eps * d for b, d in zip(base, dirs)]
        estimate = (scalar(plus) - scalar(minus)) / (2 * eps)
        predicted = float(sum((a * d).sum() for a, d in zip(analytic, dirs)))
        if not np.isclose(predicted, estimate, atol=atol, rtol=rtol):
            return _fail(raise_exception, f"gradcheck: directional derivative differs: "
                         f"backward gives {predicted!r}, finite differences {estimate!r}")
    return True


def _replace(inputs: Sequence[Any], checked: Sequence[Tensor],
             values: Sequence[np.ndarray]) -> tuple[Any, ...]:
    swap = {t.id: v for t, v in zip(checked, values)}
    return tuple(Tensor(swap[t.id], dtype=t.dtype, device=t.device)
                 if isinstance(t, Tensor) and t.id in swap else t for t in inputs)


def _fail(raise_exception: bool, message: str) -> bool:
    if raise_exception:
        raise ArgumentError(message)
    return False
