"""Random numbers from each device's seeded generator (random.cl on OpenCL and CUDA)."""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from ..backends import registry
from ..core.dtype import as_dtype, check_float, float64, get_default_dtype, int64
from ..core.errors import type_name
from ..core.errors import ArgumentError, ShapeError, ShrewTypeError, UnsupportedError
from ..core.fields import AnyTensor
from ..core.shape import fmt
from .creation import arange, new, shape_arg, tensor
from .elementwise.recorded import where
from .elementwise.composed import minimum
from .sort import searchsorted

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import DeviceLike, DTypeLike, ShapeLike


# A shrew.Generator (generator=) is a host-side numpy stream: its draws are made on the host
# and copied to the device; without one, the device's own generator draws in place.
_HOST_DRAWS = {"rand": lambda rng, shape: rng.random(shape),
               "randn": lambda rng, shape: rng.standard_normal(shape)}


def check_generator(op: str, generator: Any) -> None:
    from .generator import Generator  # generator -> random (its rand)
    if generator is not None and not isinstance(generator, Generator):
        raise ShrewTypeError(f"{op}: generator must be a shrew.Generator, got "
                             f"{type_name(generator)}")


def _random(draw: str, shape: tuple, dtype: DTypeLike | None, device: DeviceLike | None,
            requires_grad: bool, generator: Any = None) -> Tensor:
    """A floating-point tensor from the device generator's primitive `draw` (rand, randn),
    or from `generator`'s host stream."""
    shape = shape_arg(draw, shape)
    dtype = get_default_dtype() if dtype is None else as_dtype(dtype)
    if not dtype.is_complex:  # (a complex draw: both parts, ops/creation.py)
        check_float(dtype, draw, UnsupportedError)  # PyTorch: NotImplementedError
    check_generator(draw, generator)
    if generator is not None:
        if dtype.is_complex:
            raise UnsupportedError(f"{draw}: generator= with a complex dtype is not supported; "
                                   f"draw the real and imaginary parts and combine them")
        values = _HOST_DRAWS[draw](generator.numpy(), shape)
        return new(draw, lambda be, dt: be.from_numpy(np.asarray(values, dtype=dt)), shape,
                   dtype, device, requires_grad)
    return new(draw, lambda be, dt: getattr(be, draw)(shape, dt), shape, dtype, device,
               requires_grad)


def rand(*size: ShapeLike, generator: Any = None, dtype: DTypeLike | None = None,
         device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """Uniform in [0, 1) from the device's seeded generator (or `generator`'s stream)."""
    return _random("rand", size, dtype, device, requires_grad, generator)


def randn(*size: ShapeLike, generator: Any = None, dtype: DTypeLike | None = None,
          device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """Standard normal from the device's seeded generator (or `generator`'s stream)."""
    return _random("randn", size, dtype, device, requires_grad, generator)


def rand_like(input: Tensor, *, dtype: DTypeLike | None = None,  # noqa: A002
              device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return rand(input.shape, dtype=input.dtype if dtype is None else dtype,
                device=input.device if device is None else device, requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype: DTypeLike | None = None,  # noqa: A002
               device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return randn(input.shape, dtype=input.dtype if dtype is None else dtype,
                 device=input.device if device is None else device, requires_grad=requires_grad)


def _uniform_wide(shape: tuple, device: DeviceLike | None) -> Tensor:
    """Uniform [0, 1) draws in float64 where the device has it (enough bits for integer
    ranges), else float32."""
    backend = registry.get_backend(device)
    dtype = float64 if float64.np in backend.dtypes else get_default_dtype()
    return rand(shape, dtype=dtype, device=device)


def _randint_bounds(args: tuple, low: Any, high: Any, size: Any) -> tuple[Any, Any, Any]:
    """(low, high, size) from torch's forms: randint(high, size), randint(low, high, size),
    any of them given by keyword (randint(high=10, size=(3,)), randint(0, high=4, size=...))."""
    args = tuple(args)
    if size is None and args and not isinstance(args[-1], numbers.Integral):
        *rest, size = args
        args = tuple(rest)
    if high is None:
        if not args or len(args) > 2:
            raise ArgumentError("randint: expected randint(high, size) or "
                                "randint(low, high, size)")
        *lows, high = args
        if lows:
            if low is not None:
                raise ArgumentError("randint: low given twice")
            low = lows[0]
    elif args:
        if len(args) > 1 or low is not None:
            raise ArgumentError("randint: expected randint(low, high=..., size=...)")
        low = args[0]
    if size is None:
        raise ArgumentError("randint: missing the size argument")
    return 0 if low is None else low, high, size


def randint(*args: Any, low: int | None = None, high: int | None = None,
            size: ShapeLike | None = None, generator: Any = None,
            dtype: DTypeLike | None = None, device: DeviceLike | None = None,
            requires_grad: bool = False) -> Tensor:
    """randint(high, size) or randint(low, high, size): integers uniform in [low, high),
    int64 unless a dtype is given; from `generator`'s host stream if one is given."""
    low, high, size = _randint_bounds(args, low, high, size)
    if not (isinstance(low, numbers.Integral) and isinstance(high, numbers.Integral)) or \
            high <= low:
        raise ArgumentError(f"randint: needs integers low < high, got low={low!r}, high={high!r}")
    check_generator("randint", generator)
    shape = shape_arg("randint", (size,))
    dtype = int64 if dtype is None else as_dtype(dtype)
    if generator is not None:
        values = generator.numpy().integers(int(low), int(high), size=shape)
        return new("randint", lambda be, dt: be.from_numpy(values.astype(dt)), shape, dtype,
                   device, requires_grad)
    draws = _uniform_wide(shape, device)
    values = (draws * (int(high) - int(low))).floor() + int(low)
    return values.to_dtype(dtype).requires_grad_(requires_grad)


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *,  # noqa: A002
                 dtype: DTypeLike | None = None, device: DeviceLike | None = None,
                 requires_grad: bool = False, generator: Any = None) -> Tensor:
    """randint_like(input, high) or randint_like(input, low, high): integers uniform in
    [low, high) in input's shape, dtype and device unless others are given."""
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, generator=generator,
                   dtype=input.dtype if dtype is None else dtype,
                   device=input.device if device is None else device,
                   requires_grad=requires_grad)


def randperm(n: int, *, generator: Any = None, dtype: DTypeLike = int64,
             device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1: the order that sorts n uniform draws from the
    device's generator (sorted on the host: shrew has no device sort yet), or
    `generator`'s host permutation."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
        raise ArgumentError(f"randperm: n must be a non-negative int, got {n!r}")
    check_generator("randperm", generator)
    if generator is not None:
        order = generator.numpy().permutation(int(n))
    else:
        order = np.argsort(_uniform_wide((int(n),), device).numpy(), kind="stable")
    return new("randperm", lambda be, dt: be.from_numpy(order.astype(dt)), order.shape, dtype,
               device, requires_grad)


def normal(mean: Tensor | float = 0.0, std: Tensor | float = 1.0, size: ShapeLike | None = None,
           *, generator: Any = None, dtype: DTypeLike | None = None,
           device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """Normal draws: normal(mean, std) with a tensor mean and/or std (their broadcast
    shape), or normal(mean, std, size) with numbers."""
    tensors = [t for t in (mean, std) if isinstance(t, AnyTensor)]
    if tensors:
        if size is not None:
            raise ArgumentError("normal: give size only when mean and std are numbers")
        like = tensors[0]
        shape = np.broadcast_shapes(*(t.shape for t in tensors))
        noise = randn(shape, generator=generator, dtype=like.dtype if dtype is None else dtype,
                      device=like.device)
        return noise * std + mean
    if size is None:
        raise ArgumentError("normal: with numbers for mean and std, give size")
    if not std >= 0:
        raise ArgumentError(f"normal: std must be non-negative, got {std!r}")
    noise = randn(size, generator=generator, dtype=dtype, device=device)
    return (noise * std + mean).detach().requires_grad_(requires_grad)


def manual_seed(seed: int) -> None:
    """Make rand, randn and dropout reproducible on every backend."""
    registry.manual_seed(seed)


# -- sampling from given probabilities and rates --------------------------------------------
def _uniform_like(p: Tensor, shape: tuple, generator: Any) -> Tensor:
    """Uniform [0, 1) draws of `shape` in p's dtype on p's device: from `generator` (a
    shrew.Generator, drawn on the host) if given, else from the device's generator."""
    return rand(shape, generator=generator, dtype=p.dtype, device=p.device)


def _check_probabilities(op: str, p: Tensor, upper: float | None = None) -> None:
    """Probabilities must be finite and >= 0 (and <= upper): one read-back of the verdict,
    as PyTorch checks them."""
    check_float(p.dtype, op)
    bad = ~p.isfinite() | (p < 0)
    if upper is not None:
        bad = bad | (p > upper)
    if p.numel() and bool(bad.any()):
        bound = f"outside [0, {upper}]" if upper is not None else "inf, nan or < 0"
        raise ArgumentError(f"{op}: the probability tensor {fmt(p.shape)} has elements {bound}")


def multinomial(input: Tensor, num_samples: int, replacement: bool = False,  # noqa: A002
                *, generator: Any = None) -> Tensor:
    """num_samples category indices per row of (unnormalised) probabilities: with
    replacement by inverting each row's running sum at uniform draws; without, as an
    exponential race (the num_samples smallest Exp(1) / p, in order, which is sequential
    sampling without replacement; categories of probability 0 come last)."""
    p = input
    if not isinstance(p, AnyTensor) or p.ndim not in (1, 2):
        shown = fmt(p.shape) if isinstance(p, AnyTensor) else type_name(p)
        raise ShapeError(f"multinomial: input must be a 1-D or 2-D tensor, got {shown}")
    n = p.shape[-1]
    if isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral) or \
            num_samples <= 0:
        raise ArgumentError(f"multinomial: num_samples must be a positive int, got {num_samples!r}")
    if not replacement and num_samples > n:
        raise ArgumentError(f"multinomial: cannot draw {num_samples} samples without replacement "
                            f"from {n} categories (input {fmt(p.shape)})")
    _check_probabilities("multinomial", p)
    rows = p.detach().reshape(-1, n)
    if n == 0 or bool((rows.sum(-1) <= 0).any()):
        raise ArgumentError(f"multinomial: a row of the input {fmt(p.shape)} sums to 0; each "
                            "needs a positive probability")
    if replacement:
        draws = _uniform_like(rows, (rows.shape[0], int(num_samples)), generator)
        running = rows.cumsum(-1)
        picked = searchsorted(running, draws * running.narrow(-1, n - 1, 1), right=True)
        # rounding may carry a draw past the last category of non-zero probability
        last = where(rows > 0, arange(n, device=p.device), 0).amax(-1, keepdim=True)
        picked = minimum(picked, last)
    else:
        waits = -(-_uniform_like(rows, rows.shape, generator)).log1p()  # Exp(1) draws
        positive = rows > 0
        race = where(positive, waits / where(positive, rows, 1.0), float("inf"))
        picked = race.topk(int(num_samples), -1, largest=False).indices
    return picked.reshape(int(num_samples)) if p.ndim == 1 else picked


def bernoulli(input: Tensor, p: float | None = None, *,  # noqa: A002
              generator: Any = None) -> Tensor:
    """0 or 1 in input's dtype and shape, 1 with probability input (or the number p)."""
    if p is None:
        _check_probabilities("bernoulli", input, upper=1)
        probability: Tensor | float = input.detach()
    elif not 0 <= p <= 1:
        raise ArgumentError(f"bernoulli: p must be in [0, 1], got {p!r}")
    else:
        check_float(input.dtype, "bernoulli")
        probability = p
    draws = _uniform_like(input, input.shape, generator)
    return (draws < probability).to_dtype(input.dtype)


def poisson(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """Poisson draws with the rates in input, in its dtype.  Drawn on the host by numpy,
    from a stream seeded by the device's generator (so manual_seed repeats them) or by
    `generator`, then moved to input's device."""
    _check_probabilities("poisson", input)
    if generator is None:
        seed = int(randint(2 ** 62, (1,), device=input.device).item())
        rng = np.random.default_rng(seed)
    else:
        rng = generator.numpy()
    counts = rng.poisson(input.detach().to(device="cpu").numpy().astype(np.float64))
    return tensor(counts, dtype=input.dtype, device=input.device)
