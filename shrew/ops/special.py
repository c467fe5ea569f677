"""torch.special's functions and their top-level names (lgamma, digamma, polygamma, mvlgamma,
igamma, igammac, i0, sinc, ...).  The common ones are one Unary or Binary kernel each
(backends/base.py: SPECIAL_UNARY_FNS, SPECIAL_BINARY_FNS; scipy.special on the array-module
backends, kernels/special.cl on OpenCL); the rest are composed of elementwise ops.  The
kernels' gradients are in autograd/rules/elementwise.py; a composition's follow from its
parts."""
from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, TypeAlias

from ..core.dtype import get_default_dtype
from ..core.errors import ArgumentError, ShrewTypeError, type_name
from ..core.fields import AnyTensor
from .common import scalar_like
from .creation import arange
from .out import write_out
from .elementwise.recorded import binary, unary

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import Scalar

    Operand: TypeAlias = Tensor | Scalar


def _tensor(value: object, op: str) -> Tensor:
    if not isinstance(value, AnyTensor):
        raise ShrewTypeError(f"{op}: input must be a shrew.Tensor, got {type_name(value)}")
    return value


def _float(x: Tensor) -> Tensor:
    """x, an integer or bool tensor promoted to the default float dtype (as PyTorch's
    special functions promote)."""
    return x if x.dtype.is_floating_point else x.to_dtype(get_default_dtype())


def _operands(op: str, a: Operand, b: Operand) -> tuple[Tensor, Tensor]:
    """Two operands of which one may be a Python number (made a tensor like the other)."""
    if isinstance(a, AnyTensor):
        if isinstance(b, AnyTensor):
            return a, b
        if isinstance(b, numbers.Number):
            return a, scalar_like(b, a)
    elif isinstance(b, AnyTensor) and isinstance(a, numbers.Number):
        return scalar_like(a, b), b
    raise ShrewTypeError(f"{op}: needs a tensor and a tensor or number, got {type_name(a)} "
                         f"and {type_name(b)}")


# -- the gamma family ----------------------------------------------------------------------
def lgamma(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """log |Gamma(input)|."""
    return write_out("lgamma", unary("lgamma", _tensor(input, "lgamma")), out)


def digamma(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The logarithmic derivative of Gamma, psi(input) = Gamma'(input) / Gamma(input)."""
    return write_out("digamma", unary("digamma", _tensor(input, "digamma")), out)


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The n-th derivative of digamma: digamma itself for n = 0, else
    (-1)^(n+1) n! zeta(n + 1, input), the Hurwitz zeta function."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise ShrewTypeError(f"polygamma: n must be an int, got {type_name(n)}")
    if n < 0:
        raise ArgumentError(f"polygamma: polygamma(n, x) does not support negative n "
                            f"(got n={n})")
    x = _float(_tensor(input, "polygamma"))
    if n == 0:
        return write_out("polygamma", unary("digamma", x), out)
    sign = 1.0 if n % 2 else -1.0
    result = binary("zeta", x, float(n + 1), reflected=True) * (sign * math.factorial(n))
    return write_out("polygamma", result, out)


def mvlgamma(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The log of the multivariate gamma function of dimension p:
    p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(input - j / 2)."""
    if not isinstance(p, numbers.Integral) or isinstance(p, bool):
        raise ShrewTypeError(f"mvlgamma: p must be an int, got {type_name(p)}")
    if p < 1:
        raise ArgumentError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    x = _float(_tensor(input, "mvlgamma"))
    halves = arange(p, dtype=x.dtype, device=x.device) * -0.5
    terms = unary("lgamma", x.unsqueeze(-1) + halves)
    result = terms.sum(-1) + p * (p - 1) / 4 * math.log(math.pi)
    return write_out("mvlgamma", result, out)


def igamma(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma function P(input, other), broadcast."""
    a, x = _tensor(input, "igamma"), _tensor(other, "igamma")
    return write_out("igamma", binary("igamma", a, x), out)


def igammac(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P."""
    a, x = _tensor(input, "igammac"), _tensor(other, "igammac")
    return write_out("igammac", binary("igammac", a, x), out)


def zeta(input: Operand, other: Operand, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The Hurwitz zeta function sum_k (other + k)^-input (torch.special.zeta)."""
    s, q = _operands("zeta", input, other)
    return write_out("zeta", binary("zeta", s, q), out)
