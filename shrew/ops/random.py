"""Random numbers from each device's seeded generator (random.cl on OpenCL and CUDA)."""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from ..backends import registry
from ..core.dtype import as_dtype, check_float, float64, get_default_dtype, int64
from ..core.errors import type_name
from ..core.errors import ArgumentError, ShapeError, UnsupportedError
from ..core.fields import AnyTensor
from ..core.shape import fmt
from .creation import arange, new, shape_arg, tensor
from .elementwise.recorded import where
from .elementwise.composed import minimum
from .sort import searchsorted

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ..typing import DeviceLike, DTypeLike, ShapeLike


def _random(draw: str, shape: tuple, dtype: DTypeLike | None, device: DeviceLike | None,
            requires_grad: bool) -> Tensor:
    """A floating-point tensor from the device generator's primitive `draw` (rand, randn)."""
    shape = shape_arg(draw, shape)
    dtype = get_default_dtype() if dtype is None else as_dtype(dtype)
    if not dtype.is_complex:  # (a complex draw: both parts, ops/creation.py)
        check_float(dtype, draw, UnsupportedError)  # PyTorch: NotImplementedError
    return new(draw, lambda be, dt: getattr(be, draw)(shape, dt), shape, dtype, device,
               requires_grad)


def rand(*size: ShapeLike, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform in [0, 1) from the device's seeded generator."""
    return _random("rand", size, dtype, device, requires_grad)


def randn(*size: ShapeLike, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal from the device's seeded generator."""
    return _random("randn", size, dtype, device, requires_grad)


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


def randint(*args: Any, size: ShapeLike | None = None, dtype: DTypeLike | None = None,
            device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """randint(high, size) or randint(low, high, size): integers uniform in [low, high),
    int64 unless a dtype is given."""
    if size is None and args and not isinstance(args[-1], numbers.Integral):
        *args, size = args  # type: ignore[assignment]
    if size is None or len(args) not in (1, 2):
        raise ArgumentError("randint: expected randint(high, size) or randint(low, high, size)")
    low, high = (0, args[0]) if len(args) == 1 else (args[0], args[1])
    if not (isinstance(low, numbers.Integral) and isinstance(high, numbers.Integral)) or \
            high <= low:
        raise ArgumentError(f"randint: needs integers low < high, got low={low!r}, high={high!r}")
    shape = shape_arg("randint", (size,))
    draws = _uniform_wide(shape, device)
    values = (draws * (int(high) - int(low))).floor() + int(low)
    return values.to_dtype(int64 if dtype is None else dtype).requires_grad_(requires_grad)


def randperm(n: int, *, dtype: DTypeLike = int64, device: DeviceLike | None = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1: the order that sorts n uniform draws from the
    device's generator (sorted on the host: shrew has no device sort yet)."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
        raise ArgumentError(f"randperm: n must be a non-negative int, got {n!r}")
    keys = _uniform_wide((int(n),), device).numpy()
    order = np.argsort(keys, kind="stable")
    return new("randperm", lambda be, dt: be.from_numpy(order.astype(dt)), order.shape, dtype,
               device, requires_grad)


def normal(mean: Tensor | float = 0.0, std: Tensor | float = 1.0, size: ShapeLike | None = None,
           *, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
           requires_grad: bool = False) -> Tensor:
    """Normal draws: normal(mean, std) with a tensor mean and/or std (their broadcast
    shape), or normal(mean, std, size) with numbers."""
    tensors = [t for t in (mean, std) if isinstance(t, AnyTensor)]
    if tensors:
        if size is not None:
            raise ArgumentError("normal: give size only when mean and std are numbers")
        like = tensors[0]
        shape = np.broadcast_shapes(*(t.shape for t in tensors))
        noise = randn(shape, dtype=like.dtype if dtype is None else dtype, device=like.device)
        return noise * std + mean
    if size is None:
        raise ArgumentError("normal: with numbers for mean and std, give size")
    if not std >= 0:
        raise ArgumentError(f"normal: std must be non-negative, got {std!r}")
    noise = randn(size, dtype=dtype, device=device)
    return (noise * std + mean).detach().requires_grad_(requires_grad)


def manual_seed(seed: int) -> None:
    """Make rand, randn and dropout reproducible on every backend."""
    registry.manual_seed(seed)


# -- sampling from given probabilities and rates --------------------------------------------
def _uniform_like(p: Tensor, shape: tuple, generator: Any) -> Tensor:
    """Uniform [0, 1) draws of `shape` in p's dtype on p's device: from `generator` (a
    shrew.Generator, drawn on the host) if given, else from the device's generator."""
    if generator is None:
        return rand(shape, dtype=p.dtype, device=p.device)
    return tensor(generator.numpy().random(shape), dtype=p.dtype, device=p.device)


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
