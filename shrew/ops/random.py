"""Random numbers from each device's seeded generator (random.cl on OpenCL and CUDA)."""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from ..backends import registry
from ..dtype import as_dtype, check_float, float64, get_default_dtype, int64
from ..errors import ShrewError
from ..factory import AnyTensor
from .creation import new, shape_arg

if TYPE_CHECKING:
    from ..tensor import Tensor
    from ..typing import DeviceLike, DTypeLike, ShapeLike


def _random(draw: str, shape: tuple, dtype: DTypeLike | None, device: DeviceLike,
            requires_grad: bool) -> Tensor:
    """A floating-point tensor from the device generator's primitive `draw` (rand, randn)."""
    shape = shape_arg(draw, shape)
    dtype = get_default_dtype() if dtype is None else as_dtype(dtype)
    check_float(dtype, draw)
    return new(draw, lambda be, dt: getattr(be, draw)(shape, dt), shape, dtype, device,
               requires_grad)


def rand(*size: ShapeLike, dtype: DTypeLike | None = None, device: DeviceLike = "cpu",
         requires_grad: bool = False) -> Tensor:
    """Uniform in [0, 1) from the device's seeded generator."""
    return _random("rand", size, dtype, device, requires_grad)


def randn(*size: ShapeLike, dtype: DTypeLike | None = None, device: DeviceLike = "cpu",
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


def _uniform_wide(shape: tuple, device: DeviceLike) -> Tensor:
    """Uniform [0, 1) draws in float64 where the device has it (enough bits for integer
    ranges), else float32."""
    backend = registry.get_backend(device)
    dtype = float64 if float64.np in backend.dtypes else get_default_dtype()
    return rand(shape, dtype=dtype, device=device)


def randint(*args: Any, size: ShapeLike | None = None, dtype: DTypeLike | None = None,
            device: DeviceLike = "cpu", requires_grad: bool = False) -> Tensor:
    """randint(high, size) or randint(low, high, size): integers uniform in [low, high),
    int64 unless a dtype is given."""
    if size is None and args and not isinstance(args[-1], numbers.Integral):
        *args, size = args  # type: ignore[assignment]
    if size is None or len(args) not in (1, 2):
        raise ShrewError("randint: expected randint(high, size) or randint(low, high, size)")
    low, high = (0, args[0]) if len(args) == 1 else (args[0], args[1])
    if not (isinstance(low, numbers.Integral) and isinstance(high, numbers.Integral)) or \
            high <= low:
        raise ShrewError(f"randint: needs integers low < high, got low={low!r}, high={high!r}")
    shape = shape_arg("randint", (size,))
    draws = _uniform_wide(shape, device)
    values = (draws * (int(high) - int(low))).floor() + int(low)
    return values.to_dtype(int64 if dtype is None else dtype).requires_grad_(requires_grad)


def randperm(n: int, *, dtype: DTypeLike = int64, device: DeviceLike = "cpu",
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1: the order that sorts n uniform draws from the
    device's generator (sorted on the host: shrew has no device sort yet)."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
        raise ShrewError(f"randperm: n must be a non-negative int, got {n!r}")
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
            raise ShrewError("normal: give size only when mean and std are numbers")
        like = tensors[0]
        shape = np.broadcast_shapes(*(t.shape for t in tensors))
        noise = randn(shape, dtype=like.dtype if dtype is None else dtype, device=like.device)
        return noise * std + mean
    if size is None:
        raise ShrewError("normal: with numbers for mean and std, give size")
    if not std >= 0:
        raise ShrewError(f"normal: std must be non-negative, got {std!r}")
    noise = randn(size, dtype=dtype, device="cpu" if device is None else device)
    return (noise * std + mean).detach().requires_grad_(requires_grad)


def manual_seed(seed: int) -> None:
    """Make rand, randn and dropout reproducible on every backend."""
    registry.manual_seed(seed)
