"""L-BFGS (PyTorch's algorithm): quasi-Newton steps from a short history of gradient
differences, with a closure that re-evaluates the loss."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.errors import ShrewValueError
from ..ops.creation import zeros
from ..ops.shape.recorded import cat
from ..core.grad_mode import enable_grad, no_grad
from .._tensor import Tensor
from .line_search import strong_wolfe
from .optimizer import Optimizer

if TYPE_CHECKING:
    from ..autograd.engine import GradStore
    from .optimizer import Params


def _dot(a: Tensor, b: Tensor) -> float:
    return float((a * b).sum().item())


class LBFGS(Optimizer):
    """Full-batch L-BFGS over one parameter group.  `step(closure)` calls the closure
    (which zeroes the gradients, computes the loss, calls backward and returns the loss)
    up to max_eval times and returns its first result.

    line_search_fn: None takes a fixed step of lr; "strong_wolfe" searches along each
    direction for a step meeting the strong Wolfe conditions (as PyTorch's)."""

    def __init__(self, params: Params, lr: float = 1.0, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ShrewValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                                  f"{line_search_fn!r}")
        super().__init__(params, {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                                  "tolerance_grad": tolerance_grad,
                                  "tolerance_change": tolerance_change,
                                  "history_size": history_size,
                                  "line_search_fn": line_search_fn})
        if len(self.param_groups) != 1:
            raise ShrewValueError("LBFGS: supports exactly one parameter group")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if self.param_groups:
            raise ShrewValueError("LBFGS: supports exactly one parameter group")
        super().add_param_group(param_group)

    def _flat_grad(self) -> Tensor:
        return cat([(p.grad if p.grad is not None else zeros(p.shape, dtype=p.dtype,
                                                            device=p.device)).reshape(-1)
                    for p in self._params])

    def _move(self, t: float, d: Tensor) -> None:
        """p += t * d, each parameter taking its slice of the flat direction."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d.narrow(0, offset, n).reshape(p.shape), alpha=t)
            offset += n

    def step(self, grads: GradStore | Callable[[], Any] | None = None,
             closure: Callable[[], Any] | None = None) -> Any:
        """One L-BFGS step of up to max_iter iterations; needs the closure."""
        if callable(grads):
            closure = grads
        if closure is None:
            raise ShrewValueError("LBFGS.step: needs a closure that re-evaluates the loss")
        with no_grad():
            return self._iterate(closure)

    def _evaluate(self, closure: Callable[[], Any]) -> tuple[Any, float]:
        with enable_grad():
            loss = closure()
        return loss, float(loss.item() if isinstance(loss, Tensor) else loss)

    def _line_search(self, closure: Callable[[], Any], t: float, d: Tensor, loss: float,
                     g: Tensor, max_ls: int) -> tuple[float, Tensor, float, int]:
        """strong_wolfe from the current parameters along d; they are left unchanged."""
        start = [p * 1.0 for p in self._params]  # copies: the parameters move in place

        def evaluate(step: float) -> tuple[float, Tensor]:
            self._move(step, d)
            _, value = self._evaluate(closure)
            grad = self._flat_grad()
            for p, x in zip(self._params, start):
                p.copy_(x)
            return value, grad

        return strong_wolfe(evaluate, t, d, loss, g, _dot(g, d), max_ls=max_ls)

    def _iterate(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr, history_size = group["lr"], group["history_size"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state.setdefault(self._params[0].id, {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss, loss = self._evaluate(closure)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if g.abs().max().item() <= tol_grad:
            return orig_loss

        # the memory of earlier steps (the defaults are replaced on the first iteration)
        d: Tensor = state.get("d", g)
        t: float = state.get("t", lr)
        old_dirs: list[Tensor] = state.get("old_dirs", [])
        old_stps: list[Tensor] = state.get("old_stps", [])
        ro: list[float] = state.get("ro", [])
        h_diag: float = state.get("H_diag", 1.0)
        prev_g: Tensor = state.get("prev_flat_grad", g)
        prev_loss: float = state.get("prev_loss", loss)
        n_iter = 0
        while n_iter < group["max_iter"]:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -g, [], [], [], 1.0
            else:
                y, s = g - prev_g, d * t
                ys = _dot(y, s)
                if ys > 1e-10:  # keep the pair only when the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / _dot(y, y)
                # the two-loop recursion: d = -H g
                al = [0.0] * len(old_dirs)
                q = -g
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q = q - old_dirs[i] * al[i]
                d = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = _dot(old_dirs[i], d) * ro[i]
                    d = d + old_stps[i] * (al[i] - be_i)
            prev_g, prev_loss = g, loss
            t = min(1.0, 1.0 / g.abs().sum().item()) * lr if state["n_iter"] == 1 else lr
            if _dot(g, d) > -tol_change:  # not a descent direction
                break
            if group["line_search_fn"] == "strong_wolfe":
                loss, g, t, searched = self._line_search(closure, t, d, loss, g, group["max_eval"]
                                                         - evals)
                self._move(t, d)
                done = g.abs().max().item() <= tol_grad
                evals += searched
                state["func_evals"] += searched
            else:
                self._move(t, d)
                done = False
                if n_iter != group["max_iter"]:
                    _, loss = self._evaluate(closure)
                    g = self._flat_grad()
                    done = g.abs().max().item() <= tol_grad
                    evals += 1
                    state["func_evals"] += 1
            if (n_iter == group["max_iter"] or evals >= group["max_eval"] or done
                    or (d * t).abs().max().item() <= tol_change
                    or abs(loss - prev_loss) < tol_change):
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_g, prev_loss=prev_loss)
        return orig_loss
