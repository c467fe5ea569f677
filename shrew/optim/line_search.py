"""The strong-Wolfe line search of LBFGS(line_search_fn="strong_wolfe"): bracket a step
length that decreases the loss enough (Armijo, c1) and flattens the slope enough
(curvature, c2), then shrink the bracket by safeguarded cubic interpolation (Nocedal &
Wright, Numerical Optimization, algorithms 3.5 and 3.6), making the same choices as
PyTorch's so that the iterates match."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .._tensor import Tensor


@dataclass
class Point:
    """A trial step length t with the loss f, the flat gradient g and the slope g . d there."""
    t: float
    f: float
    g: Tensor
    gtd: float


def cubic_minimum(a: Point, b: Point, bounds: tuple[float, float] | None = None) -> float:
    """The minimiser of the cubic through (a.t, a.f) and (b.t, b.f) with slopes a.gtd and
    b.gtd, clamped into `bounds` (default: between the two points); the middle of the
    bounds when the cubic has no minimum."""
    low, high = bounds if bounds is not None else (min(a.t, b.t), max(a.t, b.t))
    d1 = a.gtd + b.gtd - 3 * (a.f - b.f) / (a.t - b.t)
    square = d1 ** 2 - a.gtd * b.gtd
    if square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(square)
    left, right = (a, b) if a.t <= b.t else (b, a)
    t = right.t - (right.t - left.t) * ((right.gtd + d2 - d1) / (right.gtd - left.gtd + 2 * d2))
    return min(max(t, low), high)


def strong_wolfe(evaluate: Callable[[float], tuple[float, Tensor]], t: float, d: Tensor,
                 f: float, g: Tensor, gtd: float, c1: float = 1e-4, c2: float = 0.9,
                 tolerance_change: float = 1e-9, max_ls: int = 25
                 ) -> tuple[float, Tensor, float, int]:
    """(loss, flat gradient, step length, evaluations) of a step along d satisfying the
    strong Wolfe conditions, starting from the trial step t; `evaluate(t)` gives the loss
    and flat gradient at x + t * d."""
    d_norm = d.abs().max().item()
    start = Point(0.0, f, g, gtd)
    armijo = lambda p: p.f > f + c1 * p.t * gtd  # noqa: E731  (not enough decrease)
    flat = lambda p: abs(p.gtd) <= -c2 * gtd  # noqa: E731  (the curvature condition)

    def at(step: float) -> Point:
        loss, grad = evaluate(step)
        return Point(step, loss, grad, float((grad * d).sum().item()))

    new, prev, evals, iters = at(t), start, 1, 0
    # Phase 1: grow the step until an interval [prev, new] must contain a good step.
    bracket: list[Point] | None = None
    while iters < max_ls:
        if armijo(new) or (iters > 1 and new.f >= prev.f):
            bracket = [prev, new]
            break
        if flat(new):
            return new.f, new.g, new.t, evals
        if new.gtd >= 0:
            bracket = [prev, new]
            break
        step = cubic_minimum(prev, new, bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10))
        prev, new = new, at(step)
        evals += 1
        iters += 1
    if bracket is None:  # out of evaluations while growing
        best = start if f <= new.f else new
        return best.f, best.g, best.t, evals

    # Phase 2 (zoom): shrink the bracket, keeping its lower-loss end as `low`.
    low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
    stuck = False
    while iters < max_ls:
        ends = (min(p.t for p in bracket), max(p.t for p in bracket))
        if (ends[1] - ends[0]) * d_norm < tolerance_change:
            break
        step = cubic_minimum(bracket[0], bracket[1])
        # Keep the trial away from the ends: after two trials close to one, step 10% in.
        margin = 0.1 * (ends[1] - ends[0])
        if min(ends[1] - step, step - ends[0]) < margin:
            if stuck or step >= ends[1] or step <= ends[0]:
                step = ends[1] - margin if abs(step - ends[1]) < abs(step - ends[0]) \
                    else ends[0] + margin
                stuck = False
            else:
                stuck = True
        else:
            stuck = False
        trial = at(step)
        evals += 1
        iters += 1
        if armijo(trial) or trial.f >= bracket[low].f:
            bracket[high] = trial
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
            continue
        if flat(trial):
            return trial.f, trial.g, trial.t, evals
        if trial.gtd * (bracket[high].t - bracket[low].t) >= 0:
            bracket[high] = bracket[low]
        bracket[low] = trial
    best = bracket[low]
    return best.f, best.g, best.t, evals
