"""torch.special's functions and their top-level names (lgamma, digamma, polygamma, mvlgamma,
igamma, igammac, i0, sinc, ...).  The common ones are one Unary or Binary kernel each
(backends/base.py: SPECIAL_UNARY_FNS, SPECIAL_BINARY_FNS; scipy.special on the cpu,
kernels/special.cl on OpenCL and CUDA); the rest are composed of elementwise ops.  The
kernels' gradients are in autograd/rules/elementwise.py; a composition's follow from its
parts."""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from ..core.dtype import get_default_dtype
from ..core.errors import ArgumentError, ShrewTypeError, type_name
from .creation import arange
from .out import write_out
from . import reduce as _reduce
from .elementwise import composed as _pointwise
from .elementwise.composed import _operands, _tensor
from .elementwise.recorded import binary, unary, where

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import Dims, Scalar

    Operand: TypeAlias = Tensor | Scalar


_INV_SQRT2 = 1.0 / math.sqrt(2.0)


def _float(x: Tensor) -> Tensor:
    """x, an integer or bool tensor promoted to the default float dtype (as PyTorch's
    special functions promote)."""
    return x if x.dtype.is_floating_point else x.to_dtype(get_default_dtype())


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


# -- one kernel each -----------------------------------------------------------------------
def _kernel(fn: str, name: str, differentiable: bool = True) -> Callable[..., Tensor]:
    """torch.special.<name>(input, *, out=None): the Unary kernel `fn`.  Where PyTorch has
    no gradient (the Bessel functions J, Y, K, Airy's Ai), none is recorded: the result
    does not require grad, as PyTorch's does not."""
    def function(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        x = _tensor(input, name)
        return write_out(name, unary(fn, x if differentiable else x.detach()), out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise {fn} of `input` (torch.special.{name})."
    return function


erfcx = _kernel("erfcx", "erfcx")
ndtri = _kernel("ndtri", "ndtri")
log_ndtr = _kernel("log_ndtr", "log_ndtr")
i0 = _kernel("i0", "i0")
i0e = _kernel("i0e", "i0e")
i1 = _kernel("i1", "i1")
i1e = _kernel("i1e", "i1e")
modified_bessel_i0 = _kernel("i0", "modified_bessel_i0", differentiable=False)
modified_bessel_i1 = _kernel("i1", "modified_bessel_i1", differentiable=False)
bessel_j0 = _kernel("bessel_j0", "bessel_j0", differentiable=False)
bessel_j1 = _kernel("bessel_j1", "bessel_j1", differentiable=False)
bessel_y0 = _kernel("bessel_y0", "bessel_y0", differentiable=False)
bessel_y1 = _kernel("bessel_y1", "bessel_y1", differentiable=False)
modified_bessel_k0 = _kernel("modified_bessel_k0", "modified_bessel_k0", differentiable=False)
modified_bessel_k1 = _kernel("modified_bessel_k1", "modified_bessel_k1", differentiable=False)
scaled_modified_bessel_k0 = _kernel("scaled_modified_bessel_k0", "scaled_modified_bessel_k0",
                                    differentiable=False)
scaled_modified_bessel_k1 = _kernel("scaled_modified_bessel_k1", "scaled_modified_bessel_k1",
                                    differentiable=False)
airy_ai = _kernel("airy_ai", "airy_ai", differentiable=False)


# -- composed of elementwise ops -----------------------------------------------------------
def ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The standard normal's cdf, erfc(-x / sqrt(2)) / 2."""
    x = _float(_tensor(input, "ndtr"))
    return write_out("ndtr", unary("erfc", x * -_INV_SQRT2) * 0.5, out)


def sinc(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The normalised sinc, sin(pi x) / (pi x), and 1 at 0 (its gradient there 0)."""
    x = _float(_tensor(input, "sinc"))
    zero = x == 0
    px = where(zero, 1.0, x) * math.pi
    return write_out("sinc", where(zero, 1.0, unary("sin", px) / px), out)


def entr(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """-x log x for x > 0, 0 at 0, -inf below (NaN stays NaN); the gradient -(1 + log x),
    NaN below 0."""
    x = _float(_tensor(input, "entr"))
    value = where(x == 0, 0.0, -x * unary("log", x))
    return write_out("entr", where(x < 0, -math.inf, value), out)


def spherical_bessel_j0(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """sin(x) / x, 1 at 0 and 0 at +-inf; no gradient (as PyTorch)."""
    x = _float(_tensor(input, "spherical_bessel_j0")).detach()
    safe = where((x == 0) | unary("abs", x).isinf(), 1.0, x)
    value = where(x == 0, 1.0, unary("sin", safe) / safe)
    return write_out("spherical_bessel_j0", where(unary("abs", x).isinf(), 0.0, value), out)


def xlog1py(input: Operand, other: Operand, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """input * log1p(other), and 0 where input is 0 (unless other is NaN)."""
    x, y = _operands("xlog1py", input, other)
    safe = where((x == 0) & (y == y), 0.0, y)  # y == y: not NaN
    return write_out("xlog1py", x * unary("log1p", safe), out)


# -- the orthogonal polynomials: one Binary kernel each, no gradient (as PyTorch) -------------
def _polynomial(fn: str, shift: bool = False) -> Callable[..., Tensor]:
    """torch.special.<fn>(input, n, *, out=None): P_n(input) for degrees n (a tensor or a
    number, truncated to an integer; 0 where negative).  The shifted Chebyshev polynomials
    are the plain ones at 2 x - 1."""
    name = "shifted_" + fn if shift else fn

    def function(input: Operand, n: Operand, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        x, degree = _operands(name, input, n)
        x, degree = x.detach(), degree.detach()
        if shift:
            x = _float(x) * 2.0 - 1.0
        return write_out(name, binary(fn, x, degree), out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"The polynomial {name}(input, n) (torch.special.{name})."
    return function


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", shift=True)
shifted_chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", shift=True)
shifted_chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", shift=True)
shifted_chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", shift=True)
hermite_polynomial_h = _polynomial("hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p")


# -- torch.special's names of other ops, with their out= ------------------------------------
def erf(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    return write_out("erf", unary("erf", _tensor(input, "erf")), out)


def erfc(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    return write_out("erfc", unary("erfc", _tensor(input, "erfc")), out)


def erfinv(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    return write_out("erfinv", unary("erfinv", _tensor(input, "erfinv")), out)


def exp2(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    return write_out("exp2", unary("exp2", _tensor(input, "exp2")), out)


def expm1(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    return write_out("expm1", unary("expm1", _tensor(input, "expm1")), out)


def log1p(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    return write_out("log1p", unary("log1p", _tensor(input, "log1p")), out)


def expit(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The logistic sigmoid, 1 / (1 + e^-x)."""
    return write_out("expit", unary("sigmoid", _tensor(input, "expit")), out)


def logit(input: Tensor, eps: float | None = None, *,  # noqa: A002
          out: Tensor | None = None) -> Tensor:
    return write_out("logit", _pointwise.logit(input, eps), out)


def xlogy(input: Operand, other: Operand, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    return write_out("xlogy", _pointwise.xlogy(input, other), out)


def logsumexp(input: Tensor, dim: Dims, keepdim: bool = False, *,  # noqa: A002
              out: Tensor | None = None) -> Tensor:
    return write_out("logsumexp", _reduce.logsumexp(input, dim, keepdim), out)


# -- torch's top-level in-place forms --------------------------------------------------------
def i0_(input: Tensor) -> Tensor:  # noqa: A002
    return _tensor(input, "i0_").i0_()


def sinc_(input: Tensor) -> Tensor:  # noqa: A002
    return _tensor(input, "sinc_").sinc_()


def xlogy_(input: Tensor, other: Operand) -> Tensor:  # noqa: A002
    return _tensor(input, "xlogy_").xlogy_(other)
