"""The conformance table: one entry per user-visible operation.

Every test of the suite is generated from CASES, so adding an operation here adds its
value, gradient, dtype, determinism and error cases.  An entry names the Op variants it
records and the Backend primitives it is there to exercise; tests/test_conformance_meta.py
checks that together they cover every variant and primitive, and that the claims are true.
"""
from __future__ import annotations

import math
import functools
import operator
from collections.abc import Callable

import numpy as np

import shrew
import shrew.nn.functional as Fn
from shrew.core import op as O
from shrew.backends.base import (BINARY_FNS, COMPARE_FNS, SPECIAL_BINARY_FNS,
                                 SPECIAL_UNARY_FNS, UNARY_FNS)
from shrew.ops.elementwise.recorded import binary, unary

from . import strategies as gen
from .calls import (reduced, normalised, inner, svd_terms, window, kernel, uniform, normal,
                    well_conditioned, distinct_spectrum, spd, all_true, rng_replay, copy_into,
                    add_into, sdpa, checkpointed, recurrent, recurrent_layer,
                    SinTimes)
from .spec import ALL, FLOAT, INTEGRAL, NUMERIC, Case, F, Fixed, I, M, S, Sample

LINALG = ("float32", "float64")  # LAPACK's real dtypes


# -- the table -----------------------------------------------------------------------------
# Where each unary function's input is drawn (strategies.py's domains); the fuzzed graphs of
# tests/reliability map their operands into the same domains.
UNARY_DOMAIN = {"log": "positive", "sqrt": "positive", "round": "halves", "floor": "wide",
                "ceil": "wide", "trunc": "wide", "rsqrt": "positive", "log1p": "positive",
                "log2": "positive", "log10": "positive", "reciprocal": "nonzero",
                "asin": "unit", "acos": "unit", "atanh": "unit", "erfinv": "unit",
                "acosh": "above_one",
                # special functions: their poles and branch cuts left out
                "lgamma": "positive", "digamma": "positive", "ndtri": "probability",
                "bessel_y0": "positive", "bessel_y1": "positive",
                "modified_bessel_k0": "positive", "modified_bessel_k1": "positive",
                "scaled_modified_bessel_k0": "positive", "scaled_modified_bessel_k1": "positive"}
# Special functions without a gradient in PyTorch (ops/special.py records none)
_UNARY_NO_GRAD = ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
                  "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                  "airy_ai")
_INT_UNARY = ("neg", "abs", "square", "relu", "sign", "floor", "ceil", "round", "trunc")
_UNARY_JACOBIAN = ("gelu", "sigmoid", "erfinv")


def _unary(fn: str) -> Case:
    if fn == "bitwise_not":  # integers and bool only: no gradient
        return Case(fn, operator.invert, (S(F(5, 7)),), (), ("unary",), dtypes=INTEGRAL,
                    grad=False, shapes=gen.elementwise(), raises=(S(F(3)),))
    if fn == "gelu_tanh":
        call = lambda x: x.gelu(approximate="tanh")  # noqa: E731
    elif fn.endswith("_derivative") or fn in SPECIAL_UNARY_FNS:  # no Tensor method (or
        call = functools.partial(unary, fn)            # ops/special.py's names differ)
    else:
        call = operator.methodcaller(fn)
    domain = UNARY_DOMAIN.get(fn, "normal")
    differentiable = fn not in _UNARY_NO_GRAD
    return Case(fn, call, (S(F(5, 7, domain=domain)),), (O.Unary,) if differentiable else (),
                ("unary",), dtypes=NUMERIC if fn in _INT_UNARY else FLOAT,
                grad=differentiable, jacobian=fn in _UNARY_JACOBIAN,
                shapes=gen.elementwise(domain=domain))


# Binary fns: (domain of the left operand, of the right one, dtypes).  maximum and minimum
# and the division remainders sit on kinks where operands tie or divide evenly; the random
# draws avoid them.
_BINARY = {"add": ("normal", "normal", NUMERIC), "sub": ("normal", "normal", NUMERIC),
           "mul": ("normal", "normal", NUMERIC), "div": ("normal", "nonzero", FLOAT),
           "pow": ("positive", "normal", FLOAT), "atan2": ("normal", "nonzero", FLOAT),
           "maximum": ("normal", "normal", NUMERIC), "minimum": ("normal", "normal", NUMERIC),
           "fmod": ("wide", "nonzero", NUMERIC), "remainder": ("wide", "nonzero", NUMERIC),
           "floor_divide": ("wide", "nonzero", NUMERIC),
           "copysign": ("nonzero", "normal", FLOAT), "bitwise_and": ("normal", "normal", INTEGRAL),
           "bitwise_or": ("normal", "normal", INTEGRAL),
           "bitwise_xor": ("normal", "normal", INTEGRAL),
           "tanh_backward": ("normal", "normal", FLOAT),
           "sigmoid_backward": ("normal", "normal", FLOAT)}
_BINARY_CALLS: dict[str, Callable] = {"div": operator.truediv, "floor_divide": operator.floordiv,
                 "remainder": operator.mod, "bitwise_and": operator.and_,
                 "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
                 # the gradients of tanh and sigmoid from their output: no method of their own
                 "tanh_backward": functools.partial(binary, "tanh_backward"),
                 "sigmoid_backward": functools.partial(binary, "sigmoid_backward")}


def _binary(fn: str) -> Case:
    left, right, dtypes = _BINARY[fn]
    call = _BINARY_CALLS.get(fn) or getattr(operator, fn, None) or \
        (lambda a, b, _fn=fn: getattr(a, _fn)(b))
    differentiable = dtypes is not INTEGRAL
    return Case(fn, call,
                (S(F(4, 1, 5, domain=left), F(3, 5, domain=right)),
                 S(F(2, 3, domain=left), F(domain=right))),
                (O.Binary,) if differentiable else (), ("binary",), dtypes=dtypes,
                grad=differentiable,
                jacobian=fn in ("div", "pow", "atan2"),
                shapes=gen.elementwise(2, domain=right),
                raises=(S(F(3, 4), F(5, domain=right)),))


def _special_binary(fn: str) -> Case:
    """igamma, igammac and zeta: differentiable in their second argument only (as PyTorch's),
    so the first is made on the device from the second's shape alone, 1.1 to about 3 (a of
    the incomplete gamma functions, and zeta's s > 1): finite differences leave it alone.
    The orthogonal polynomials (no gradient): x drawn in (-0.9, 0.9), its degrees n 0 to 3
    made alike (higher degrees cancel to float32's precision near their roots)."""
    polynomial = "_polynomial_" in fn

    def call(x):
        n = x.numel()
        made = shrew.arange(n, dtype=x.dtype, device=x.device).reshape(x.shape)
        if polynomial:
            return binary(fn, x, made.remainder(4.0))
        return binary(fn, made * (2.0 / max(n, 1)) + 1.1, x)
    domain = "unit" if polynomial else "positive"
    return Case(fn, call, (S(F(3, 5, domain=domain)), S(F(4, 1, 5, domain=domain))),
                () if polynomial else (O.Binary,), ("binary",), dtypes=FLOAT,
                grad=not polynomial, shapes=gen.elementwise(domain=domain))


def _compare(fn: str) -> Case:
    return Case(fn, lambda a, b=None, _op=getattr(operator, fn): _op(a, b),  # noqa: B008
                (S(F(4, 1, 5, domain="ties"), F(3, 5, domain="ties")),
                 S(F(4, 5, domain="ties"), b=0)),
                (), ("compare", "full"), dtypes=ALL, grad=False,
                shapes=gen.elementwise(2, domain="ties"), raises=(S(F(3, 4), F(5)),))


def _reduce(fn: str) -> Case:
    samples = [S(F(3, 4, 5)), S(F(3, 4, 5), dim=-1, keepdim=True), S(F(3, 4, 5), dim=(0, 2)),
               S(F(2, 4099), dim=1)]
    raises = [S(F(3, 4), dim=2), S(F(3, 4), dim=(0, -2))]
    if fn in ("max", "min"):
        samples.append(S(F(4, 6, domain="ties"), dim=1))  # ties share the gradient
        raises.append(S(F(0, 3), dim=0))
    method = {"max": "amax", "min": "amin"}.get(fn, fn)  # max(dim) gives (values, indices)
    return Case(fn, lambda x, dim=None, keepdim=False, _fn=method: getattr(x, _fn)(dim, keepdim),
                tuple(samples), (O.Reduce,), ("reduce",),
                dtypes={"sum": ALL, "mean": FLOAT}.get(fn, NUMERIC), jacobian=fn == "max",
                terms=normalised if fn == "mean" else reduced, shapes=gen.reductions(),
                raises=tuple(raises))


def _arg_reduce(fn: str) -> Case:
    return Case(fn, lambda x, dim=None, keepdim=False, _fn=fn: getattr(x, _fn)(dim, keepdim),
                (S(F(3, 4, 5), dim=1), S(F(3, 4, 5)),
                 S(F(5, 300, domain="ties"), dim=-1, keepdim=True)),  # first of equal values
                (), ("arg_reduce",), dtypes=NUMERIC, grad=False, shapes=gen.arg_reductions(),
                raises=(S(F(0, 3), dim=0), S(F(3, 4), dim=-3)))


def _line(sample: Sample) -> int:
    """The length of the line a scan or product runs along."""
    shape = sample.args[0].shape
    return shape[sample.kwargs.get("dim", -1)] if shape else 1


def _scan_case(name: str, call, variants: tuple, primitives: tuple, dtypes: tuple,
               long: int = 3000, domain: str = "normal", grad: bool = True,
               reduces: bool = False) -> Case:
    """An op along one dim: short and long lines, a 0-d input, an empty dim (which a
    reduction refuses), and an out-of-range dim."""
    empty = S(F(4, 0, 3, domain=domain), dim=1)
    return Case(name, call, (S(F(3, 4, 5, domain=domain), dim=1),
                             S(F(2, long, domain=domain), dim=-1), S(F(domain=domain), dim=0),
                             *(() if reduces else (empty,))),
                variants, primitives, dtypes=dtypes, grad=grad, terms=_line,
                raises=(S(F(3, 4), dim=2), *((empty,) if reduces else ())))


def _to_dtype(name: str) -> Sample:
    return Sample((F(4, 6, domain="wide"),), {"to": name}, needs=(name,))


CASES: tuple = (
    # creation and host transfer
    Case("full", lambda x, value=3: shrew.full(x.shape, value, dtype=x.dtype, device=x.device),
         (S(F(3, 300)), S(F(2, 0, 3), value=0)), (), ("full",), dtypes=ALL, grad=False,
         raises=(S(F(2), value="3"),)),
    Case("arange", lambda x: shrew.arange(x.shape[-1], dtype=x.dtype, device=x.device),
         (S(F(1000)), S(F(0))), (), ("arange",), dtypes=NUMERIC, grad=False),
    Case("to_numpy", lambda x: x, (S(F(3, 5)), S(F(2, 0))), (), ("to_numpy",), dtypes=ALL,
         grad=False),
    Case("from_numpy", lambda x: shrew.tensor(np.asfortranarray(x.numpy()), device=x.device),
         (S(F(3, 5, 2)),), (), ("from_numpy",), dtypes=ALL, grad=False),
    Case("copy_", copy_into, (S(F(4, 6), F(4, 6)),), (), ("copy_",), dtypes=ALL, grad=False),
    Case("add_", add_into, (S(F(4, 6), F(4, 6)), S(F(3, 300), F(3, 300), alpha=1.0),
                             S(F(5, 7), F(5, 7), itself=True)), (), ("add_",), grad=False),
    Case("rand", lambda x: shrew.rand(*x.shape, dtype=x.dtype, device=x.device),
         (S(F(64, 300)),), (), ("manual_seed", "rand"), grad=False, check=uniform),
    Case("randn", lambda x: shrew.randn(*x.shape, dtype=x.dtype, device=x.device),
         (S(F(64, 300)),), (), ("manual_seed", "randn"), grad=False, check=normal),
    Case("rng_state", rng_replay, (S(F(8, 33)),), (), ("get_rng_state", "set_rng_state"),
         grad=False, check=all_true),
    # elementwise
    *(_unary(fn) for fn in UNARY_FNS),
    *(_binary(fn) for fn in BINARY_FNS if fn not in SPECIAL_BINARY_FNS),
    *(_special_binary(fn) for fn in SPECIAL_BINARY_FNS),
    Case("affine", lambda x, mul, add: x.affine(mul, add),
         (S(F(4, 5), mul=3, add=-2), S(F(4, 5), mul=-0.5, add=0.25)), (O.Affine,), ("affine",),
         dtypes=NUMERIC, shapes=gen.elementwise(mul=1.5, add=-0.5)),
    Case("scalar_arith", lambda x: (2 - x) * 3 + x / 4.0 - 1.0 / x,
         (S(F(4, 5, domain="nonzero")),), (O.Affine, O.Binary), ("affine", "binary", "full")),
    Case("powf", lambda x, e: x ** e,
         (S(F(4, 5, domain="positive"), e=2.5), S(F(4, 5, domain="positive"), e=-1.5),
          S(F(4, 5), e=3.0)), (O.Powf,), ("powf",), jacobian=True,
         shapes=gen.elementwise(domain="positive", e=0.5), raises=(S(F(3), e="2"),)),
    Case("clamp", lambda x, lo=None, hi=None: x.clamp(lo, hi),
         (S(F(4, 5), lo=-0.5, hi=0.7), S(F(4, 5), lo=0.2), S(F(4, 5), hi=-0.1)),
         (O.Clamp,), ("clamp",), dtypes=NUMERIC, jacobian=True,
         shapes=gen.elementwise(lo=-0.3, hi=0.4), raises=(S(F(3)),)),
    *(_compare(fn) for fn in COMPARE_FNS),
    Case("where", lambda c, a, b=0.0: shrew.where(c, a, b),
         (S(M(4, 1, 5), F(3, 5), F(4, 3, 1)), S(M(3, 5), F(3, 5))), (O.WhereCond,),
         ("where",), dtypes=NUMERIC, jacobian=True, shapes=gen.elementwise(2, mask=True),
         raises=(S(F(3, 4), F(3, 4), F(3, 4)), S(M(3, 4), F(2, 4), F(3, 4)))),
    # reductions
    *(_reduce(fn) for fn in ("sum", "mean", "max", "min")),
    *(_arg_reduce(fn) for fn in ("argmax", "argmin")),
    Case("prod", lambda x, dim=None, keepdim=False: x.prod(dim, keepdim),
         (S(F(3, 4, 5), dim=1), S(F(2, 3)), S(F(3, 70), dim=1, keepdim=True), S(F(3, 0), dim=1)),
         (O.Prod,), ("scan",), dtypes=NUMERIC, terms=_line, raises=(S(F(3, 4), dim=(0, 1)),)),
    Case("vector_norm", lambda x, ord=2, dim=None: shrew.linalg.vector_norm(x, ord, dim),
         (S(F(3, 4, 5), dim=1), S(F(3, 4), ord=3), S(F(5, 6), ord=1, dim=(0, 1))),
         (O.VectorNorm,), ("reduce",), terms=reduced, raises=(S(F(3), ord="x"),)),
    Case("var", lambda x, dim=None, correction=1: x.var(dim, correction=correction),
         (S(F(3, 4, 5), dim=1), S(F(2, 300)), S(F(4, 5), dim=(0, 1), correction=0)),
         (O.Reduce, O.Binary), ("reduce", "binary"), terms=reduced),
    Case("logsumexp", lambda x, dim: x.logsumexp(dim), (S(F(3, 4, 5), dim=1), S(F(2, 300), dim=-1)),
         (O.Reduce, O.Unary), ("reduce", "unary"), terms=reduced),
    # scans, sorting and selection
    _scan_case("cumsum", lambda x, dim: x.cumsum(dim), (O.Scan,), ("scan",), ALL),
    _scan_case("cumprod", lambda x, dim: x.cumprod(dim), (O.Scan,), ("scan",), NUMERIC, long=40),
    _scan_case("logcumsumexp", lambda x, dim: x.logcumsumexp(dim), (O.Scan,), ("scan",), FLOAT,
               domain="wide"),
    _scan_case("cummax", lambda x, dim: x.cummax(dim).values, (O.Gather,),
               ("arg_scan", "gather"), NUMERIC, domain="ties"),
    _scan_case("cummin_indices", lambda x, dim: x.cummin(dim).indices, (), ("arg_scan",), ALL,
               domain="ties", grad=False),
    _scan_case("sort", lambda x, dim: x.sort(dim, descending=True).values, (O.Gather,),
               ("argsort", "gather"), NUMERIC, long=300, domain="ties"),
    _scan_case("argsort", lambda x, dim: x.argsort(dim), (), ("argsort",), ALL, long=300,
               domain="ties", grad=False),
    _scan_case("topk", lambda x, dim: x.topk(1, dim).values, (O.Gather,), ("argsort", "gather"),
               NUMERIC, long=300, reduces=True),
    _scan_case("median", lambda x, dim: x.median(dim).values, (O.Gather,),
               ("argsort", "gather"), NUMERIC, long=300, domain="ties", reduces=True),
    # linear algebra, convolution, pooling
    Case("matmul", operator.matmul,
         (S(F(7, 13), F(13, 5)), S(F(2, 1, 4, 6), F(3, 6, 5)), S(F(6), F(6, 4)),
          S(F(3, 5, 7), F(7)), S(F(9, 300), F(300, 17)), S(F(3, 0), F(0, 4))),
         (O.Matmul,), ("matmul",), jacobian=True, terms=inner, shapes=gen.matmuls(),
         raises=(S(F(3, 4), F(5, 2)), S(F(), F(3)), S(F(2, 3, 4), F(3, 4, 5)))),
    # Fourier transforms: the fft primitive over complex pairs (ops/spectral.py); their
    # outputs compared as real pairs, their gradients through them
    Case("fft.fft", lambda x, dim=-1, norm=None: shrew.view_as_real(
        shrew.fft.fft(x, dim=dim, norm=norm)),
         (S(F(3, 8)), S(F(5, 4, 3), dim=1, norm="ortho"), S(F(17), norm="forward")),
         (O.FFT,), ("fft",), dtypes=LINALG, jacobian=True, terms=_line,
         raises=(S(F(4), dim=2), S(F(4), norm="none"))),
    Case("fft.irfft2", lambda x, s=None: shrew.fft.irfft2(
        shrew.view_as_complex(x), s=s), (S(F(4, 3, 2)), S(F(2, 5, 4, 2), s=(6, 7))),
         (O.FFT,), ("fft",), dtypes=LINALG, terms=_line, raises=(S(F(4, 3, 2), s=(0, 4)),)),
    # decompositions and solvers: the linalg primitive (the host's LAPACK on opencl).  The
    # values compared do not depend on the sign choices of singular and eigenvectors.
    Case("linalg.solve", lambda a, b: shrew.linalg.solve(well_conditioned(a), b),
         (S(F(4, 4), F(4, 2)), S(F(2, 3, 3), F(3)), S(F(2, 5, 5), F(2, 5, 3))),
         (O.Solve,), ("linalg",), dtypes=LINALG, jacobian=True, terms=inner,
         raises=(S(F(3, 4), F(3, 1)), S(F(3, 3), F(4, 1)), S(I(3, 3, high=3), F(3, 1)))),
    Case("linalg.inv", lambda a: shrew.linalg.inv(well_conditioned(a)),
         (S(F(4, 4)), S(F(3, 2, 2))), (O.Solve,), ("linalg",), dtypes=LINALG, jacobian=True,
         terms=inner, raises=(S(F(2, 3)), S(I(2, 2, high=3)))),
    Case("linalg.det", lambda a: shrew.linalg.det(well_conditioned(a)),  # grad: an SVD
         (S(F(4, 4)), S(F(2, 3, 3))), (O.Decomposition,), ("linalg",), dtypes=LINALG,
         terms=svd_terms, normwise=True, raises=(S(F(3)),)),
    # Well conditioned: the "expanded" layout repeats a row, and the log of a singular
    # matrix's determinant is -inf or a large negative number depending on rounding.
    Case("linalg.slogdet", lambda a: shrew.linalg.slogdet(well_conditioned(a)).logabsdet,
         (S(F(4, 4)), S(F(2, 3, 3))), (O.Decomposition,), ("linalg",), dtypes=LINALG,
         terms=inner),
    Case("linalg.cholesky", lambda a: shrew.linalg.cholesky(spd(a)),
         (S(F(4, 4)), S(F(2, 3, 3))), (O.Decomposition,), ("linalg",), dtypes=LINALG,
         terms=inner, raises=(S(F(3, 2)),)),
    Case("linalg.qr", lambda a: shrew.linalg.qr(a).R.abs(),
         (S(F(5, 3)), S(F(2, 3, 4))), (O.Decomposition,), ("linalg",), dtypes=LINALG,
         terms=inner, raises=(S(F(3)),)),
    Case("linalg.svdvals", lambda a: shrew.linalg.svdvals(a),
         (S(F(5, 3)), S(F(2, 3, 4))), (O.Decomposition,), ("linalg",), dtypes=LINALG,
         terms=inner),
    Case("linalg.svd", lambda a: shrew.linalg.svd(a, full_matrices=False).U.square(),
         (S(F(5, 3)), S(F(2, 4, 4))), (O.Decomposition,), ("linalg",), dtypes=LINALG,
         terms=svd_terms, normwise=True),
    Case("linalg.eigh", lambda a: shrew.linalg.eigh(distinct_spectrum(a)).eigenvectors.square(),
         (S(F(4, 4)), S(F(2, 3, 3))), (O.Decomposition,), ("linalg",), dtypes=LINALG,
         terms=inner),
    Case("linalg.pinv", lambda a: shrew.linalg.pinv(a), (S(F(5, 3)), S(F(2, 3, 4))),
         (O.Decomposition,), ("linalg",), dtypes=LINALG, terms=inner),
    Case("conv2d", lambda x, w, stride=1, padding=0, dilation=1, groups=1: shrew.conv2d(
            x, w, stride, padding, dilation, groups),
         (S(F(2, 3, 5, 4), F(2, 3, 3, 2)), S(F(1, 2, 9, 8), F(3, 2, 3, 2), stride=2, padding=1),
          # Dilated and grouped: one call where the backend takes them (oneDNN on cpu),
          # else a composition of plain convolutions.
          S(F(2, 4, 9, 8), F(6, 2, 3, 2), padding=(1, 2), dilation=(2, 3), groups=2),
          S(F(1, 6, 7, 7), F(6, 1, 3, 3), stride=2, padding=1, groups=6),
          S(F(1, 3, 20, 20), F(2, 3, 3, 3), padding=1),
          # Enough input channels (C*kw >= 32) for the cpu and cuda backends' conv2d to
          # fold the batch into its GEMMs (backends/array_module/folded_conv.py).
          S(F(1, 8, 7, 9), F(3, 8, 3, 4), stride=(2, 1), padding=(1, 2)),
          S(F(3, 16, 6, 5), F(4, 16, 2, 3), stride=(1, 2), padding=(0, 1)),
          S(F(2, 12, 6, 7), F(5, 12, 3, 3), padding=1)),
         (O.Conv2d,), ("im2col", "matmul", "col2im"), jacobian=True, terms=window,
         shapes=gen.convs(),
         raises=(S(F(1, 2, 5, 5), F(3, 3, 3, 3)), S(F(1, 2, 2, 2), F(3, 2, 3, 3)),
                 S(F(2, 5, 5), F(3, 2, 3, 3)))),
    Case("conv1d", lambda x, w, stride=1, padding=0, dilation=1, groups=1: shrew.conv1d(
            x, w, stride, padding, dilation, groups),
         (S(F(2, 3, 7), F(2, 3, 3)), S(F(1, 2, 300), F(3, 2, 5), stride=2, padding=1),
          S(F(2, 4, 15), F(6, 2, 3), padding=2, dilation=3, groups=2),
          S(F(2, 16, 11), F(3, 16, 3), stride=2, padding=1),
          S(F(1, 12, 9), F(2, 12, 4), padding=2)),
         (O.Conv1d,), ("im2col", "matmul", "col2im"), jacobian=True, terms=window,
         raises=(S(F(1, 2, 5), F(3, 3, 3)), S(F(1, 2, 5), F(3, 2, 3), stride=0))),
    Case("im2col", lambda x, k, stride=1, padding=0: shrew.im2col(x, k, stride, padding),
         (S(F(2, 3, 5, 6), k=(2, 3)), S(F(1, 2, 7, 7), k=3, stride=2, padding=1)),
         (O.Im2Col,), ("im2col",), jacobian=True, raises=(S(F(1, 2, 2, 2), k=3),)),
    Case("col2im", lambda c, shape, k, stride=1, padding=0: shrew.col2im(c, shape, k, stride,
                                                                         padding),
         (S(F(2, 18, 16), shape=(2, 3, 5, 6), k=(2, 3)),
          S(F(1, 18, 16), shape=(1, 2, 7, 7), k=3, stride=2, padding=1)),
         (O.Col2Im,), ("col2im",), jacobian=True, terms=kernel,
         raises=(S(F(1, 18, 15), shape=(1, 2, 7, 7), k=3, stride=2, padding=1),)),
    Case("max_pool2d", lambda x, k=2, s=None, p=0, d=1, ceil=False:
         shrew.max_pool2d(x, k, s, p, d, ceil),
         (S(F(2, 3, 6, 7)), S(F(1, 2, 9, 8), k=3, s=2, p=1), S(F(1, 2, 17, 19), k=(3, 2), s=1),
          # windows of -inf that overlap the padding: the gradient lands inside the input
          S(F(1, 2, 5, 4, domain="lowest"), k=3, s=2, p=1),
          # dilated taps, and ceil_mode's last windows reaching past the input
          S(F(1, 2, 9, 8), k=3, s=2, p=1, d=(2, 3)), S(F(2, 1, 8, 7), k=2, s=3, p=1, ceil=True),
          S(F(1, 2, 4, 5, domain="lowest"), k=(2, 3), s=2, p=1, d=(1, 2), ceil=True)),
         (O.MaxPool2d,), ("max_pool2d", "scatter_add"), jacobian=True, shapes=gen.max_pools(),
         raises=(S(F(1, 1, 2, 2), k=3), S(F(1, 1, 5, 5), k=2, p=2), S(F(1, 1, 4, 4), k=3, d=2),
                 S(F(1, 1, 5, 5), k=2, d=0))),
    Case("avg_pool2d", lambda x, k=2, s=None, p=0, ceil=False, include=True, divisor=None:
         shrew.avg_pool2d(x, k, s, p, ceil, include, divisor),
         (S(F(2, 3, 6, 7)), S(F(1, 2, 9, 8), k=3, s=2, p=1), S(F(1, 2, 17, 19), k=(3, 2), s=1),
          # ceil_mode, padding left out of the divisor, a divisor given
          S(F(1, 2, 9, 8), k=3, s=2, p=1, ceil=True, include=False),
          S(F(2, 1, 7, 6), k=(2, 3), s=(3, 2), p=1, ceil=True),
          S(F(1, 2, 6, 7), k=2, p=1, divisor=3)),
         (O.AvgPool2d,), ("avg_pool2d", "col2im"), jacobian=True, terms=kernel,
         shapes=gen.avg_pools(), raises=(S(F(1, 1, 2, 2), k=3), S(F(1, 1, 5, 5), k=2, p=2),
                                         S(F(1, 1, 5, 5), k=2, divisor=0))),
    # indexing
    Case("gather", lambda x, index, dim=0: x.gather(dim, index),
         (S(F(4, 5), I(3, 5, high=4)), S(F(3, 6), I(3, 4, high=6), dim=-1),
          S(F(5, 3, 4), I(2, 3, 7, high=4), dim=2)),
         (O.Gather,), ("gather", "scatter_add"), dtypes=ALL, jacobian=True, shapes=gen.gathers(),
         raises=(S(F(3, 4), Fixed([[0, 3, 1, 2]])), S(F(3, 4), Fixed([[0, -1, 1, 2]])),
                 S(F(3, 4), Fixed([[0, 1, 2, 1000]]), dim=1), S(F(3, 4), I(4, high=3)),
                 S(F(3, 4), I(2, 5, high=3)), S(F(3, 4), F(2, 4)))),
    Case("scatter_add", lambda src, index, shape, dim: shrew.scatter_add(shape, dim, index, src),
         (S(F(6, 4), I(6, 4, high=3), shape=(3, 4), dim=0),
          S(F(2, 500), I(2, 500, high=5), shape=(2, 5), dim=1)),
         (O.ScatterAdd,), ("scatter_add", "gather"), dtypes=NUMERIC, jacobian=True,
         terms=lambda s: s.args[0].shape[s.kwargs["dim"]], shapes=gen.scatters(),
         raises=(S(F(1, 4), Fixed([[0, 3, 1, 2]]), shape=(3, 4), dim=0),
                 S(F(1, 4), Fixed([[0, -1, 1, 2]]), shape=(3, 4), dim=0),
                 S(F(2, 4), I(2, 3, high=3), shape=(3, 4), dim=0))),
    Case("scatter_reduce", lambda x, index, src, dim, reduce, include_self=True:
         x.scatter_reduce(dim, index, src, reduce, include_self=include_self),
         (S(F(4, 5), I(6, 5, high=4), F(6, 5), dim=0, reduce="sum"),
          S(F(4, 5), I(4, 3, high=5), F(4, 6), dim=1, reduce="prod"),
          S(F(3, 300), I(3, 400, high=300), F(3, 400), dim=-1, reduce="amax"),
          S(F(4, 5), I(6, 5, high=4), F(6, 5), dim=0, reduce="amin", include_self=False),
          S(F(4, 5), I(6, 5, high=4), F(6, 5), dim=0, reduce="mean")),
         (O.Scatter,), ("scatter", "gather"), dtypes=NUMERIC, jacobian=True,
         terms=lambda s: s.args[1].shape[s.kwargs["dim"]],
         raises=(S(F(3, 4), Fixed([[0, 3, 1, 2]]), F(1, 4), dim=0, reduce="sum"),
                 S(F(3, 4), I(2, 5, high=3), F(2, 5), dim=0, reduce="sum"),
                 S(F(3, 4), I(1, 4, high=3), F(1, 4), dim=0, reduce="max"))),
    Case("index_put", lambda x, index, v, accumulate: x.index_put((index,), v, accumulate),
         (S(F(5, 3), I(7, high=5), F(7, 3), accumulate=True),
          S(F(5, 300), I(2, 4, high=5), F(300), accumulate=True),
          S(F(5, 3), Fixed([4, 0, 2]), F(3, 1), accumulate=False)),
         (O.Scatter,), ("scatter", "gather"), dtypes=NUMERIC, jacobian=True,
         terms=lambda s: s.args[1].shape[0],
         raises=(S(F(5, 3), Fixed([5]), F(1, 3), accumulate=False),
                 S(F(5, 3), I(2, high=5), F(3, 3), accumulate=False))),
    Case("getitem_tensor", lambda x, index: x[index, ::2, None],
         (S(F(5, 3), I(7, high=5)), S(F(4, 300), I(2, 3, high=4))),
         (O.Gather,), ("gather", "scatter_add"), dtypes=ALL, jacobian=True,
         raises=(S(F(5, 3), Fixed([0, 5])),)),
    Case("embedding", lambda w, idx: Fn.embedding(idx, w),
         (S(F(5, 8), I(40, high=5)), S(F(7, 300), I(3, 200, high=7))),
         (O.Gather,), ("gather", "scatter_add", "expand"), jacobian=True,
         terms=lambda s: math.prod(s.args[1].shape),
         raises=(S(F(5, 8), Fixed([0, 5, 1])), S(F(5, 8), Fixed([[2, -1]])))),
    # layout
    Case("contiguous", lambda x: x.contiguous(), (S(F(4, 6)), S(F(2, 3, 300))), (O.Contiguous,),
         ("contiguous",), dtypes=ALL),
    Case("reshape", lambda x, shape: x.reshape(*shape),
         (S(F(4, 6, 5), shape=(6, -1)), S(F(3, 4), shape=(12,))), (O.Reshape,), ("reshape",),
         dtypes=ALL, shapes=gen.reshapes(),
         raises=(S(F(3, 4), shape=(5, -1)), S(F(3, 4), shape=(-1, -1)))),
    Case("unsqueeze", lambda x, d: x.unsqueeze(d), (S(F(3, 4), d=-1), S(F(3, 4), d=0)),
         (O.Reshape,), ("reshape",), dtypes=ALL, raises=(S(F(3, 4), d=4),)),
    Case("squeeze", lambda x, d=None: x.squeeze(d), (S(F(3, 1, 4), d=1), S(F(1, 3, 1))),
         (O.Reshape,), ("reshape",), dtypes=ALL, raises=(S(F(3, 4), d=-3),)),
    Case("flatten", lambda x, start=0: x.flatten(start), (S(F(2, 3, 4), start=1), S(F(2, 3))),
         (O.Reshape,), ("reshape",), dtypes=ALL, raises=(S(F(2, 3), start=2),)),
    Case("transpose", lambda x, d0, d1: x.transpose(d0, d1), (S(F(2, 3, 4), d0=0, d1=-1),),
         (O.Transpose,), ("transpose",), dtypes=ALL, shapes=gen.transposes(),
         raises=(S(F(2, 3), d0=0, d1=2),)),
    Case("permute", lambda x, dims: x.permute(*dims), (S(F(2, 3, 4), dims=(2, 0, 1)),),
         (O.Transpose,), ("transpose",), dtypes=ALL, raises=(S(F(2, 3, 4), dims=(0, 0, 1)),)),
    Case("narrow", lambda x, dim, start, length: x.narrow(dim, start, length),
         (S(F(5, 6), dim=1, start=2, length=3), S(F(5, 6), dim=0, start=-3, length=2)),
         (O.Narrow,), ("narrow",), dtypes=ALL, jacobian=True, shapes=gen.narrows(),
         raises=(S(F(5, 6), dim=1, start=4, length=3),)),
    # Several narrows of one tensor (chunk, then two overlapping slices): backward pads
    # the first slice's gradient and adds the others into it (base.FastAccumulate).
    Case("chunk", lambda x, dim: shrew.cat(
        [c * float(i + 1) for i, c in enumerate(x.chunk(3, dim))] +
        [x.narrow(dim, 1, 3).sin(), x.narrow(dim, 2, 3)], dim),
         (S(F(4, 6), dim=1), S(F(6, 2, 3), dim=0)), (O.Narrow, O.Cat), ("narrow", "pad", "cat"),
         jacobian=True),
    Case("getitem", lambda x, key: x[key],
         (S(F(4, 3, 5), key=(slice(1, None), None, Ellipsis, 2)), S(F(4, 3), key=-1)),
         (O.Narrow, O.Reshape), ("narrow", "reshape"), dtypes=ALL,
         raises=(S(F(4, 3), key=(5,)), S(F(4, 3), key=slice(None, None, -1)))),
    Case("expand", lambda x, shape: x.expand(*shape), (S(F(3, 1, 5), shape=(2, 3, 4, 5)),),
         (O.AsStrided,), ("expand",), dtypes=ALL,
         raises=(S(F(3, 2), shape=(3, 4)),)),
    # Strided views (views of the input's memory, as PyTorch's): the step slice, diagonal,
    # unfold and as_strided itself, read through a transpose so strides are not C order.
    Case("strided_view", lambda x, key: x.transpose(0, 1)[key],
         (S(F(5, 7), key=(slice(1, None, 2), slice(None, None, 3))), S(F(4, 6, 2), key=(
             Ellipsis, slice(0, 5, 2)))), (O.AsStrided, O.Transpose), ("as_strided",),
         dtypes=ALL, jacobian=True, raises=(S(F(4, 3), key=slice(None, None, -2)),)),
    Case("diagonal", lambda x, offset, d1, d2: x.diagonal(offset, d1, d2),
         (S(F(4, 5), offset=1, d1=0, d2=1), S(F(3, 4, 5), offset=-2, d1=2, d2=0)),
         (O.AsStrided,), ("as_strided",), dtypes=ALL, jacobian=True,
         raises=(S(F(4, 5), offset=0, d1=1, d2=1),)),
    Case("unfold", lambda x, dim, size, step: x.unfold(dim, size, step),
         (S(F(4, 7), dim=1, size=3, step=2), S(F(6, 2), dim=0, size=2, step=1)),
         (O.AsStrided,), ("as_strided",), dtypes=ALL, jacobian=True,
         raises=(S(F(4, 3), dim=1, size=4, step=1), S(F(4, 3), dim=1, size=2, step=0))),
    Case("as_strided", lambda x, size, stride, offset: x.as_strided(size, stride, offset),
         (S(F(4, 6), size=(3, 3), stride=(1, 6), offset=2), S(F(10), size=(4, 3), stride=(2, 1),
                                                              offset=1)),
         (O.AsStrided,), ("as_strided",), dtypes=ALL, jacobian=True,
         raises=(S(F(4, 3), size=(4, 4), stride=(3, 1), offset=0),)),
    Case("cat", lambda *xs, dim=0: shrew.cat(xs, dim),
         (S(F(2, 3, 4), F(2, 1, 4), F(2, 5, 4), dim=1), S(F(3, 2), F(0, 2)),
          S(F(2, 200), F(2, 100), dim=-1)),
         (O.Cat,), ("cat",), dtypes=ALL, jacobian=True, shapes=gen.cats(),
         raises=(S(F(2, 3), F(3, 3), dim=1), S(dim=0), S(F(2, 3), F(2, 3), dim=2))),
    Case("stack", lambda *xs, dim=0: shrew.stack(xs, dim), (S(F(3, 4), F(3, 4), dim=1),),
         (O.Reshape, O.Cat), ("cat",), dtypes=ALL, raises=(S(F(3, 4), F(3, 5)),)),
    Case("pad", lambda x, pads, value=0.0: x.pad(pads, value),
         (S(F(3, 4, 5), pads=(1, 2, 0, 3), value=0.5), S(F(4, 6), pads=(-1, 2, 2, -2))),
         (O.Pad, O.Narrow), ("pad", "narrow"), dtypes=NUMERIC, jacobian=True, shapes=gen.pads(),
         raises=(S(F(3, 4), pads=(1,)), S(F(3, 4), pads=(-5, 0)))),
    Case("to_dtype", lambda x, to: x.to_dtype(to),
         tuple(_to_dtype(name) for name in ALL), (O.ToDtype,), ("cast",), dtypes=ALL,
         gradcheck=False, raises=(S(F(3), to="complex64"),)),
    Case("to_device", lambda x: x.to("cpu").square().to(x.device), (S(F(3, 4)),),
         (O.ToDevice,), ("to_numpy", "from_numpy"), dtypes=NUMERIC),
    # composites: nn.functional and checkpointing
    # Its bias is added into the product where the backend has add_into_ (FastAccumulate),
    # with `binary` where it has not.
    # With a bias, one Linear node where the backend has base.FastLinear (the cpu
    # backend); elsewhere, and without a bias, a product and a sum.
    Case("linear", Fn.linear, (S(F(5, 7), F(3, 7), F(3)), S(F(2, 4, 300), F(6, 300)),
                               S(F(2, 3, 40), F(5, 40), F(5))),
         (O.Matmul, O.Binary, O.Linear), ("matmul",), terms=inner,
         raises=(S(F(5, 7), F(3, 6)),)),
    Case("softmax", lambda x, dim: Fn.softmax(x, dim),
         (S(F(4, 7), dim=-1), S(F(3, 300, domain="wide"), dim=1),
          S(F(2, 5, 3, 4), dim=1), S(F(2, 300, 3), dim=1)),
         (O.Softmax,), ("softmax",), jacobian=True, terms=normalised,
         shapes=gen.softmaxes(), raises=(S(F(3, 4), dim=2),)),
    # The last two samples are large enough for a fused attention call (base.FastAttention;
    # the cpu backend's needs 2^15 scores); the others compose it.
    Case("scaled_dot_product_attention", sdpa,
         (S(F(2, 3, 5, 4), F(2, 3, 6, 4), F(2, 3, 6, 3)), S(F(4, 5, 4), F(4, 5, 4), F(4, 5, 2),
                                                           is_causal=True),
          S(F(2, 2, 128, 16), F(2, 2, 128, 16), F(2, 2, 128, 8), is_causal=True),
          S(F(2, 2, 96, 16), F(2, 2, 128, 16), F(2, 2, 128, 8), mask=True)),
         (O.Matmul, O.Softmax, O.Binary, O.Attention), ("matmul", "softmax"),
         terms=lambda s: s.args[1].shape[-2] * s.args[0].shape[-1],
         raises=(S(F(2, 5, 4), F(2, 6, 3), F(2, 6, 3)), S(F(2, 5, 4), F(2, 6, 4), F(2, 5, 4)))),
    Case("log_softmax", lambda x, dim: Fn.log_softmax(x, dim),
         (S(F(4, 7), dim=-1), S(F(3, 300, domain="wide"), dim=0), S(F(2, 5, 3, 4), dim=2)),
         (O.Softmax,), ("softmax",), jacobian=True, terms=normalised,
         shapes=gen.softmaxes(), raises=(S(F(3, 4), dim=-3),)),
    Case("cross_entropy", lambda x, t, reduction="mean": Fn.cross_entropy(x, t, reduction),
         (S(F(6, 5), I(6, high=5)), S(F(300, 3), I(300, high=3), reduction="sum")),
         (O.Softmax, O.Gather), ("softmax", "gather"),
         terms=lambda s: math.prod(s.args[0].shape),
         raises=(S(F(6, 5), Fixed([0, 1, 5, 0, 0, 0])), S(F(6, 5), I(5, high=5)))),
    # The samples of 32768 elements are large enough for the cpu backend's oneDNN path
    # (base.FastNorm: one LayerNorm node); elsewhere standardize, a product and a sum.
    Case("layer_norm",
         lambda x, w, b, ndims=1: Fn.layer_norm(x, x.shape[x.ndim - ndims:], w, b),
         (S(F(4, 6), F(6), F(6)), S(F(2, 300), F(300), F(300)),
          S(F(2, 64, 256), F(256), F(256)), S(F(64, 8, 64), F(8, 64), F(8, 64), ndims=2)),
         (O.Standardize, O.Binary, O.LayerNorm), ("standardize", "binary"),
         terms=lambda s: math.isqrt(math.prod(s.args[0].shape[-s.kwargs.get("ndims", 1):])),
         raises=(S(F(4, 6), F(5), F(6)),)),
    Case("standardize", lambda x, ndims: shrew.standardize(x, ndims),
         (S(F(4, 6), ndims=1), S(F(3, 4, 5), ndims=2), S(F(2, 3, 300), ndims=1)),
         (O.Standardize,), ("standardize",), jacobian=True,
         terms=lambda s: math.isqrt(math.prod(s.args[0].shape[-s.kwargs["ndims"]:])),
         shapes=gen.standardizes(), raises=(S(F(4, 6), ndims=3), S(F(4, 6), ndims=0))),
    # A recurrent layer's time loop, one Recurrent node on rnn_cell (ops/rnn.py); packed
    # steps of 3, 3, 2 and 1 rows, forwards and backwards in time.
    *(Case(f"rnn_{mode}", functools.partial(recurrent, mode=mode),
           (S(F(9, 3), F(3, 4), F(gates * 4, 3), F(gates * 4, 4), F(gates * 4), F(gates * 4),
              *((F(3, 4),) if mode == "lstm" else ()), sizes=(3, 3, 2, 1)),
            S(F(8, 5), F(2, 6), F(gates * 6, 5), F(gates * 6, 6), F(gates * 6), F(gates * 6),
              *((F(2, 6),) if mode == "lstm" else ()), sizes=(2, 2, 2, 2), reverse=True)),
           (O.Linear, O.Binary, O.Matmul, O.Transpose, O.Recurrent),
           ("rnn_cell", "rnn_cell_backward"), terms=lambda s: 24)
      for mode, gates in (("rnn_tanh", 1), ("rnn_relu", 1), ("lstm", 4), ("gru", 3))),
    # The same over a whole unpacked sequence: one backend call where it has
    # base.FastRecurrent (oneDNN's RNN primitive on the cpu, float32), else the loop above.
    *(Case(f"{mode}_layer", functools.partial(recurrent_layer, mode=mode),
           (S(F(5, 3, 4), F(3, 6), F(gates * 6, 4), F(gates * 6, 6), F(gates * 6),
              F(gates * 6), *((F(3, 6),) if mode == "lstm" else ())),
            S(F(4, 2, 3), F(2, 5), F(gates * 5, 3), F(gates * 5, 5), F(gates * 5),
              F(gates * 5), *((F(2, 5),) if mode == "lstm" else ()), reverse=True)),
           (O.Binary, O.Matmul, O.Transpose, O.Reshape, O.Recurrent, O.RecurrentLayer),
           ("rnn_cell", "rnn_cell_backward"), terms=lambda s: 24)
      for mode, gates in (("rnn_tanh", 1), ("lstm", 4), ("gru", 3))),
    Case("mse_loss", lambda a, b: Fn.mse_loss(a, b), (S(F(4, 6), F(4, 6)),),
         (O.Reduce, O.Binary), ("reduce", "binary"), terms=lambda s: math.prod(s.args[0].shape),
         raises=(S(F(4, 6), F(4, 5)),)),
    Case("checkpoint", checkpointed, (S(F(4, 6), F(6, 3)),), (O.Checkpoint,),
         ("get_rng_state", "set_rng_state", "matmul"), jacobian=True, terms=inner),
    Case("custom_function", SinTimes.apply, (S(F(4, 6)),), (O.CustomFunction,),
         ("unary", "binary"), jacobian=True),
)
