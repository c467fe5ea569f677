"""Complex arithmetic as compositions of real ops on pairs (see ops/complex/__init__.py).

Each function takes complex tensors (and real tensors or Python numbers where PyTorch
does), works on their pairs [..., 2] with recorded real ops, and returns a complex (or, for
abs, angle and isreal, a real) tensor.  The gradients follow from the real ops: PyTorch's
convention for complex inputs (conjugate Wirtinger) with no rule of its own.
"""
from __future__ import annotations

import builtins
import math
import numbers
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...core.dtype import DType, as_dtype, result_type
from ...core.errors import DTypeError, ShrewTypeError
from ...core.fields import AnyTensor
from ...core.shape import broadcast_shapes, fmt
from ..shape.recorded import stack
from .pair import ComplexTensor, make, view_as_real

if TYPE_CHECKING:
    from ..._tensor import Tensor


def re(p: Tensor) -> Tensor:
    return p.select(-1, 0)


def im(p: Tensor) -> Tensor:
    return p.select(-1, 1)


def pack(real: Tensor, imag: Tensor) -> Tensor:
    """The complex tensor with these parts (one float dtype, broadcast to one shape)."""
    if real.shape != imag.shape:
        shape = tuple(broadcast_shapes("complex", real.shape, imag.shape))
        real, imag = real.expand(*shape), imag.expand(*shape)
    return make(stack([real, imag], -1))


def as_pair(value: Any, dtype: DType, like: Tensor) -> Tensor:
    """`value` (a complex or real tensor, or a number) as pairs in dtype's parts, on like's
    device: a number's pair has shape (2,), which broadcasts against any pair."""
    part = dtype.to_real()
    if isinstance(value, ComplexTensor):
        return value._pair.to_dtype(part)
    if isinstance(value, AnyTensor):
        real = value.to_dtype(part)
        return stack([real, _zeros(real)], -1)
    if isinstance(value, numbers.Number):
        c = builtins.complex(cast(builtins.complex, value))
        from ..creation import tensor
        return tensor([c.real, c.imag], dtype=part, device=like.device)
    raise ShrewTypeError(f"complex: expected a tensor or a number, got {type(value).__name__}")


def is_complex_operand(value: Any) -> bool:
    return isinstance(value, (ComplexTensor, builtins.complex, np.complexfloating))


def binary(fn: str, a: Any, b: Any) -> Tensor:
    """a fn b with at least one complex operand: add, sub, mul, div (PyTorch's promotion)."""
    dtype = result_type(a, b)
    like = a if isinstance(a, AnyTensor) else b
    if fn in ("add", "sub"):
        pa, pb = as_pair(a, dtype, like), as_pair(b, dtype, like)
        return make(pa + pb if fn == "add" else pa - pb)
    if fn == "mul":
        if not is_complex_operand(a):
            a, b = b, a
        if not is_complex_operand(b):  # complex times real: both parts scaled
            return make(as_pair(a, dtype, like) * _real_factor(b, dtype))
        return _mul(as_pair(a, dtype, like), as_pair(b, dtype, like))
    if fn == "div":
        pa = as_pair(a, dtype, like)
        if not is_complex_operand(b):
            return make(pa / _real_factor(b, dtype))
        pb = as_pair(b, dtype, like)
        br, bi = re(pb), im(pb)
        scale = br * br + bi * bi
        ar, ai = re(pa), im(pa)
        return pack((ar * br + ai * bi) / scale, (ai * br - ar * bi) / scale)
    raise DTypeError(f"{fn}: not supported for complex tensors "
                     f"({_dtype_name(a)} and {_dtype_name(b)})")


def _dtype_name(v: Any) -> str:
    return str(v.dtype) if isinstance(v, AnyTensor) else type(v).__name__


def _real_factor(b: Any, dtype: DType) -> Any:
    if isinstance(b, AnyTensor):
        return b.to_dtype(dtype.to_real()).unsqueeze(-1)
    return float(b)


def _mul(pa: Tensor, pb: Tensor) -> Tensor:
    ar, ai, br, bi = re(pa), im(pa), re(pb), im(pb)
    return pack(ar * br - ai * bi, ar * bi + ai * br)


# fn(z) as (inner, factor, outer): outer(z * factor) when outer is given, else
# inner(z) * factor
_SCALED = {"log2": ("log", 1 / math.log(2), ""), "log10": ("log", 1 / math.log(10), ""),
           "exp2": ("", math.log(2), "exp")}


def unary(fn: str, z: Tensor) -> Tensor:
    """The elementwise functions PyTorch defines on complex numbers that shrew has."""
    p = view_as_real(z)
    if fn == "neg":
        return make(-p)
    if fn == "abs":
        return abs_(z)
    if fn == "exp":
        mag = re(p).exp()
        return pack(mag * im(p).cos(), mag * im(p).sin())
    if fn == "log":
        return pack(abs_(z).log(), angle(z))
    if fn == "sqrt":  # the principal root: sqrt|z| at half the angle
        root, half = abs_(z).sqrt(), angle(z) * 0.5
        return pack(root * half.cos(), root * half.sin())
    if fn == "square":
        return _mul(p, p)
    if fn == "reciprocal":
        return binary("div", 1.0, z)
    if fn == "rsqrt":
        return binary("div", 1.0, unary("sqrt", z))
    if fn == "sign":  # sgn: z / |z|, 0 at 0
        mag = abs_(z)
        safe = mag + (mag == 0).to_dtype(mag.dtype)
        return make(p / safe.unsqueeze(-1))
    if fn in _SCALED:  # log2, log10, exp2, rsqrt: a known function and a factor
        inner, factor, outer = _SCALED[fn]
        return unary(outer, binary("mul", z, factor)) if outer else \
            binary("mul", unary(inner, z), factor)
    if fn in ("sin", "cos", "sinh", "cosh"):
        a, b = re(p), im(p)
        if fn == "sin":  # sin(a + ib) = sin a cosh b + i cos a sinh b
            return pack(a.sin() * b.cosh(), a.cos() * b.sinh())
        if fn == "cos":  # cos a cosh b - i sin a sinh b
            return pack(a.cos() * b.cosh(), -(a.sin() * b.sinh()))
        if fn == "sinh":  # sinh a cos b + i cosh a sin b
            return pack(a.sinh() * b.cos(), a.cosh() * b.sin())
        return pack(a.cosh() * b.cos(), a.sinh() * b.sin())
    if fn == "tan":
        return binary("div", unary("sin", z), unary("cos", z))
    if fn == "tanh":
        return binary("div", unary("sinh", z), unary("cosh", z))
    if fn == "sigmoid":
        return binary("div", 1.0, binary("add", unary("exp", unary("neg", z)), 1.0))
    raise DTypeError(f"{fn}: not supported for complex tensors ({z.dtype} of shape "
                     f"{fmt(z.shape)})")


def abs_(z: Tensor) -> Tensor:
    """|z| (a real tensor); its gradient at 0 is 0, as PyTorch's."""
    p = view_as_real(z)
    square = re(p) * re(p) + im(p) * im(p)
    zero = square == 0
    mag = (square + zero.to_dtype(square.dtype)).sqrt()  # sqrt(1) where 0: a finite gradient
    from ..elementwise.recorded import where
    return where(zero, 0.0, mag)


def angle(input: Tensor) -> Tensor:  # noqa: A002
    """The argument atan2(imag, real) (torch.angle); of a real tensor pi where negative,
    0 elsewhere (NaN kept), with a zero gradient."""
    from ..elementwise.recorded import binary as real_binary, where
    if isinstance(input, ComplexTensor):
        p = view_as_real(input)
        return real_binary("atan2", im(p), re(p))
    if not isinstance(input, AnyTensor):
        raise ShrewTypeError(f"angle: expected a Tensor, got {type(input).__name__}")
    x = input if input.dtype.is_floating_point else input.to_dtype(result_type(input, 1.0))
    return where(x != x, x, where(x < 0, math.pi, 0.0) + x * 0.0)


def conj(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate (torch.conj, conj_physical); a real tensor itself."""
    if not isinstance(input, ComplexTensor):
        if not isinstance(input, AnyTensor):
            raise ShrewTypeError(f"conj: expected a Tensor, got {type(input).__name__}")
        return input
    p = input._pair
    return pack(re(p), -im(p))


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002
    """abs * (cos(angle) + i sin(angle)) (torch.polar): float tensors of one dtype."""
    _check_parts("polar", abs, angle)
    return pack(abs * angle.cos(), abs * angle.sin())


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001  (torch's name)
    """real + i imag (torch.complex): float32 or float64 tensors of one dtype."""
    _check_parts("complex", real, imag)
    return pack(real, imag)


def _check_parts(op: str, a: Any, b: Any) -> None:
    if not (isinstance(a, AnyTensor) and isinstance(b, AnyTensor)):
        raise ShrewTypeError(f"{op}: expected two tensors, got {type(a).__name__} and "
                             f"{type(b).__name__}")
    if a.dtype is not b.dtype or a.dtype.name not in ("float32", "float64"):
        raise DTypeError(f"{op}: expected both inputs to be float32 or float64 tensors of "
                         f"one dtype, got {a.dtype} and {b.dtype}")
    if a._backend is not b._backend:
        from ..common import same_device
        same_device(op, a, b)


def isreal(input: Tensor) -> Tensor:  # noqa: A002
    """Whether each element is real: its imaginary part is 0 (every element of a real
    tensor)."""
    if isinstance(input, ComplexTensor):
        return im(input._pair) == 0
    if not isinstance(input, AnyTensor):
        raise ShrewTypeError(f"isreal: expected a Tensor, got {type(input).__name__}")
    from ..creation import ones
    return ones(input.shape, dtype="bool", device=input.device)


def reduce(fn: str, z: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """sum and mean of a complex tensor over dims (of its own shape) of its pair."""
    from ...core.shape import normalize_dims
    if fn not in ("sum", "mean"):
        raise DTypeError(f"{fn}: not supported for complex tensors ({z.dtype})")
    every = dim is None or (isinstance(dim, (tuple, list)) and not dim)
    dims = normalize_dims(None if every else dim, z.ndim, fn)
    p = view_as_real(z)
    out = p.sum(dims, keepdim) if fn == "sum" else p.mean(dims, keepdim)
    return make(out)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """a @ b with a complex operand: four real products (or two with a real one)."""
    if not (isinstance(a, AnyTensor) and isinstance(b, AnyTensor)):
        raise ShrewTypeError("matmul: both operands must be tensors")
    if a.dtype is not b.dtype:
        raise DTypeError(f"matmul: operands must share a dtype, got {a.dtype} @ {b.dtype}")
    pa, pb = view_as_real(a), view_as_real(b)
    ar, ai, br, bi = re(pa), im(pa), re(pb), im(pb)
    return pack(ar @ br - ai @ bi, ar @ bi + ai @ br)


def einsum(equation: str, operands: list) -> Tensor:
    """einsum with complex operands: each operand split into parts, the products summed
    by the rule i * i = -1 (2^k real einsums for k complex operands)."""
    from ..linalg.einsum import einsum as real_einsum
    dtype = result_type(*operands)
    parts = [(re(as_pair(o, dtype, o)), im(as_pair(o, dtype, o))) if is_complex_operand(o)
             else ((o.to_dtype(dtype.to_real()),),) for o in operands]
    real: Any = None
    imag: Any = None
    for choice in _choices([len(p) for p in parts]):
        factors = [parts[i][c] for i, c in enumerate(choice)]
        term = real_einsum(equation, *factors)
        i_count = sum(choice)
        sign = -1.0 if i_count % 4 >= 2 else 1.0
        if sign < 0:
            term = -term
        if i_count % 2 == 0:
            real = term if real is None else real + term
        else:
            imag = term if imag is None else imag + term
    return pack(real, _zeros(real) if imag is None else imag)


def _choices(counts: list) -> list:
    out: list = [()]
    for n in counts:
        out = [c + (k,) for c in out for k in range(n)]
    return out


def where(cond: Tensor, a: Any, b: Any, dtype: DType) -> Tensor:
    """torch.where with a complex result: each pair chosen whole."""
    from ..elementwise.recorded import where as real_where
    like = a if isinstance(a, AnyTensor) else b
    return make(real_where(cond.unsqueeze(-1), as_pair(a, dtype, like), as_pair(b, dtype, like)))


def cat(tensors: tuple, dim: int, dtype: DType) -> Tensor:
    """torch.cat with a complex result: the operands' pairs joined along dim."""
    from ...core.shape import normalize_dim
    from ..shape.recorded import cat as real_cat
    d = normalize_dim(dim, max(t.ndim for t in tensors), "cat")
    return make(real_cat([as_pair(t, dtype, t) for t in tensors], d))


def power(z: Tensor, exponent: Any) -> Tensor:
    """z ** exponent: repeated products for a small integer exponent (exact, and defined
    at 0), else exp(exponent * log z) (PyTorch's principal branch)."""
    if isinstance(exponent, int) and not isinstance(exponent, bool) and 0 <= exponent <= 64:
        result: Any = None
        base, e = view_as_real(z), exponent
        while e:
            if e & 1:
                result = base if result is None else view_as_real(_mul(result, base))
            e >>= 1
            if e:
                base = view_as_real(_mul(base, base))
        if result is None:  # z ** 0: ones, still a function of z (a zero gradient)
            result = view_as_real(z) * 0.0 + as_pair(1.0, z.dtype, z)
        return make(result)
    if isinstance(exponent, (numbers.Number, AnyTensor)):
        return unary("exp", binary("mul", unary("log", z), exponent))
    raise ShrewTypeError(f"pow: unsupported exponent {type(exponent).__name__}")


def equal_elements(a: Any, b: Any, negate: bool) -> Tensor:
    """a == b (a != b when negate) with a complex operand: both parts compared."""
    dtype = result_type(a, b)
    like = a if isinstance(a, AnyTensor) else b
    same = (as_pair(a, dtype, like) == as_pair(b, dtype, like)).all(-1)
    return ~same if negate else same


def to_dtype(x: Tensor, dtype: Any) -> Tensor:
    """x in dtype, where x or dtype is complex: a real tensor gains a zero imaginary part;
    a complex tensor cast to a real type keeps its real part (PyTorch warns so)."""
    dtype = as_dtype(dtype)
    if isinstance(x, ComplexTensor):
        if dtype.is_complex:
            return x if dtype is x.dtype else make(x._pair.to_dtype(dtype.to_real()))
        return re(x._pair).to_dtype(dtype)
    real = x.to_dtype(dtype.to_real())
    return pack(real, _zeros(real))


def _zeros(like: Tensor) -> Tensor:
    from ..creation import zeros
    return zeros(like.shape, dtype=like.dtype, device=like.device)
