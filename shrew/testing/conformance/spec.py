"""The vocabulary of the conformance table: inputs, samples and entries."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FLOAT = ("float32", "float64", "float16", "bfloat16")
NUMERIC = FLOAT + ("int32", "int64", "int16", "int8", "uint8")
INTEGRAL = ("int32", "int64", "int16", "int8", "uint8", "bool")  # integer-only ops
ALL = NUMERIC + ("bool",)

# Domains whose values sit on kinks or jumps on purpose (ties, exact halves): finite
# differences are meaningless there, so no gradcheck runs on samples that use them.
KINKS = frozenset(("ties", "halves", "lowest"))


@dataclass(frozen=True)
class Arg:
    """One input tensor.  kind "data" takes the dtype under test and values from `domain`;
    "index" is int64 in [0, high); "mask" is bool.  `value` fixes exact values instead."""

    shape: tuple
    kind: str = "data"
    # normal | wide | positive | nonzero | unit (-0.9, 0.9) | probability (0.05, 0.95)
    # | above_one | halves | ties | lowest
    domain: str = "normal"
    high: int = 0
    value: Any = None

    def __repr__(self) -> str:
        shape = "[" + ", ".join(map(str, self.shape)) + "]"
        if self.value is not None:
            return f"{self.kind}{shape}={self.value!r}"
        if self.kind == "index":
            return f"index{shape}<{self.high}"
        if self.kind == "mask":
            return f"mask{shape}"
        return f"{shape}" if self.domain == "normal" else f"{shape} {self.domain}"


def F(*shape, domain="normal") -> Arg:
    """A data input of `shape`."""
    return Arg(tuple(shape), domain=domain)


def I(*shape, high) -> Arg:  # noqa: E743 (reads as the table's "index")
    """An int64 index input with values in [0, high)."""
    return Arg(tuple(shape), "index", high=high)


def M(*shape) -> Arg:
    """A bool mask input."""
    return Arg(tuple(shape), "mask")


def Fixed(value, kind="index") -> Arg:
    """An input with exactly these values (e.g. an out-of-range index)."""
    return Arg(np.shape(value), kind, value=value)


class _Brief:
    """Hypothesis prints a dataclass field by field; print the short repr instead."""

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(repr(self))


@dataclass(frozen=True)
class Sample(_Brief):
    """The inputs of one call: tensors from `args`, plus keyword arguments.  `needs` names
    dtypes the device must declare for the sample to apply."""

    args: tuple
    kwargs: Mapping = field(default_factory=dict)
    needs: tuple = ()

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


def S(*args, **kwargs) -> Sample:
    return Sample(args, kwargs)


@dataclass(frozen=True)
class Case(_Brief):
    """One user-visible operation.  The tests call `fn(*tensors, **sample.kwargs)` on the
    device and on the CPU reference for every sample and compare."""

    name: str
    fn: Callable
    samples: tuple
    variants: tuple = ()          # the Op variants a differentiable run records
    primitives: tuple = ()        # the Backend primitives the case is there to exercise
    dtypes: tuple = FLOAT         # dtypes of the "data" inputs it accepts
    grad: bool = True             # differentiable: gradients are checked
    gradcheck: bool = True        # also finite differences in float64 (needs a float64 output)
    jacobian: bool = False        # also the full Jacobian gradcheck on samples[0]
    terms: Callable = lambda sample: 1  # summed terms per output element: scales tolerances
    # Gradients compared normwise: each element within rtol of the largest one, as a
    # backward-stable decomposition (an SVD) bounds the error of the whole, not each element.
    normwise: bool = False
    shapes: Any = None            # a hypothesis strategy drawing more samples
    raises: tuple = ()            # samples that must raise ShrewError, as on the CPU
    check: Callable | None = None  # values -> problem or None, instead of the CPU reference
    known: Mapping = field(default_factory=dict)  # "backend" or "backend/dtype" -> reason it fails

    def __repr__(self) -> str:
        return self.name

    def describe(self) -> str:
        variants = ", ".join(v.__name__ for v in self.variants) or "no Op"
        return f"{self.name} [{variants}; primitives {', '.join(self.primitives)}]"
