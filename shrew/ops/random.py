"""Random numbers from each device's seeded generator (random.cl on OpenCL and CUDA)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..backends import registry
from ..dtype import as_dtype, check_float, float32
from .creation import shape_arg, new

if TYPE_CHECKING:
    from ..tensor import Tensor
    from ..typing import DTypeLike, ShapeLike


def _random(draw: str, shape: tuple, dtype: DTypeLike | None, device: str,
            requires_grad: bool) -> Tensor:
    """A floating-point tensor from the device generator's primitive `draw` (rand, randn)."""
    shape = shape_arg(draw, shape)
    dtype = float32 if dtype is None else as_dtype(dtype)
    check_float(dtype, draw)
    return new(draw, lambda be, dt: getattr(be, draw)(shape, dt), shape, dtype, device,
               requires_grad)


def rand(*shape: ShapeLike, dtype: DTypeLike | None = None, device: str = "cpu",
         requires_grad: bool = False) -> Tensor:
    """Uniform in [0, 1) from the device's seeded generator."""
    return _random("rand", shape, dtype, device, requires_grad)


def randn(*shape: ShapeLike, dtype: DTypeLike | None = None, device: str = "cpu",
          requires_grad: bool = False) -> Tensor:
    """Standard normal from the device's seeded generator."""
    return _random("randn", shape, dtype, device, requires_grad)


def manual_seed(seed: int) -> None:
    """Make rand, randn and dropout reproducible on every backend."""
    registry.manual_seed(seed)
