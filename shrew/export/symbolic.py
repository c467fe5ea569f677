"""Sizes that depend on the batch: polynomials in the run-time batch `n`, fitted from
recordings of the same step at several batch sizes."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .trace import Ref


class Mismatch(Exception):
    """Two recordings of the step differ in more than sizes that follow the batch."""


@dataclass(frozen=True)
class Sym:
    """sum(coeff * n**power): never a constant (those stay Python ints)."""

    terms: tuple[tuple[int, int], ...]  # (power, coeff), powers ascending, coeffs non-zero

    @staticmethod
    def make(terms: dict[int, int]) -> Size:
        kept = tuple(sorted((p, c) for p, c in terms.items() if c))
        if not kept:
            return 0
        if len(kept) == 1 and kept[0][0] == 0:
            return kept[0][1]
        return Sym(kept)

    def _dict(self) -> dict[int, int]:
        return dict(self.terms)

    def __add__(self, other: Size) -> Size:
        terms = self._dict()
        for p, c in _terms(other).items():
            terms[p] = terms.get(p, 0) + c
        return Sym.make(terms)

    __radd__ = __add__

    def __mul__(self, other: Size) -> Size:
        terms: dict[int, int] = {}
        for p1, c1 in self.terms:
            for p2, c2 in _terms(other).items():
                terms[p1 + p2] = terms.get(p1 + p2, 0) + c1 * c2
        return Sym.make(terms)

    __rmul__ = __mul__

    def __sub__(self, other: Size) -> Size:
        return self + (-1) * other

    def at(self, n: int) -> int:
        return sum(c * n ** p for p, c in self.terms)

    def c(self) -> str:
        parts = [str(c) if p == 0 else f"{c}*" + "*".join(["shrew_n"] * p) for p, c in self.terms]
        return "(" + " + ".join(parts) + ")"


Size = int | Sym


def _terms(x: Size) -> dict[int, int]:
    return x._dict() if isinstance(x, Sym) else {0: x}


def at(x: Size, n: int) -> int:
    """A size's value at batch n."""
    return x.at(n) if isinstance(x, Sym) else x


def c_int(x: Size) -> str:
    """A size as a C expression of the run-time batch `shrew_n`."""
    return x.c() if isinstance(x, Sym) else str(x)


@dataclass(frozen=True)
class FloatOfBatch:
    """A float parameter that follows the batch: 1/count (a mean's gradient) or
    count/(count-1) (an unbiased variance), count linear in n."""

    form: str  # "recip" or "unbiased"
    count: Sym

    def c(self) -> str:
        count = f"(double){self.count.c()}"
        if self.form == "recip":
            return f"(1.0 / {count})"
        return f"({count} / ({count} - 1.0))"


def c_float(x: Any) -> str:
    """A float parameter as a C expression (float32 precision, as numpy applies it)."""
    if isinstance(x, FloatOfBatch):
        return f"(float){x.c()}"
    value = float(x)
    if value != value:
        return "(float)NAN"
    if value in (float("inf"), float("-inf")):
        return "INFINITY" if value > 0 else "-INFINITY"
    return f"(float){value!r}"


def generalize(objs: list[Any], sizes: list[int]) -> Any:
    """One object that is each of `objs` (the same argument in recordings at batch
    `sizes`): equal leaves stay, differing ints become Syms, differing floats a
    FloatOfBatch.  Raises Mismatch when they differ otherwise."""
    first = objs[0]
    if isinstance(first, (tuple, list)):
        if any(not isinstance(o, (tuple, list)) or len(o) != len(first) for o in objs):
            raise Mismatch(f"{objs[0]!r} vs {objs[1]!r}")
        return tuple(generalize([o[i] for o in objs], sizes) for i in range(len(first)))
    if isinstance(first, np.ndarray):
        if any(not isinstance(o, np.ndarray) or o.shape != first.shape or
               not np.array_equal(o, first) for o in objs):
            raise Mismatch("constant data differs")
        return first
    if isinstance(first, (bool, str, Ref, np.dtype)) or first is None:
        if any(type(o) is not type(first) or o != first for o in objs):
            raise Mismatch(f"{objs[0]!r} vs {objs[1]!r}")
        return first
    if isinstance(first, (int, np.integer)):
        values = [int(o) for o in objs]
        return values[0] if len(set(values)) == 1 else _fit_linear(values, sizes)
    if isinstance(first, float):
        floats = [float(o) for o in objs]
        return floats[0] if len(set(floats)) == 1 else _fit_float(floats, sizes)
    raise Mismatch(f"an argument of type {type(first).__name__}")


def _fit_linear(values: Sequence[float], sizes: list[int]) -> Sym:
    """a * n + c with integer a >= 0 and c through every (size, value), else Mismatch."""
    if len(values) < 3 or len(set(sizes)) < len(sizes):
        raise Mismatch(f"sizes {values} at batch {sizes}")
    slope = (values[0] - values[1]) / (sizes[0] - sizes[1])
    a = round(slope)
    c = round(values[0] - a * sizes[0])
    if a <= 0 or any(abs(a * s + c - v) > 1e-6 * max(1.0, abs(v)) for s, v in zip(sizes, values)):
        raise Mismatch(f"sizes {values} at batch {sizes} are not a * batch + c")
    fitted = Sym.make({1: a, 0: c})
    assert isinstance(fitted, Sym)
    return fitted


def _fit_float(values: Sequence[float], sizes: list[int]) -> FloatOfBatch:
    for form, count in (("recip", [1.0 / v for v in values]),
                        ("unbiased", [v / (v - 1.0) for v in values])):
        try:
            return FloatOfBatch(form, _fit_linear(count, sizes))
        except Mismatch:
            continue
    raise Mismatch(f"floats {values} at batch {sizes} follow no known form")
