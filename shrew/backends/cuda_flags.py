"""``torch.backends.cuda``'s switches and the float32 matmul precision they share.

Programs set them for speed on NVIDIA GPUs; shrew accepts them so that such programs run,
and keeps PyTorch's link between them (``matmul.allow_tf32 = True`` is
``set_float32_matmul_precision("high")``), but computes float32 products in float32
whatever they say.  They live here, not in the CUDA backend's package, so that reading
them never needs CuPy."""
from __future__ import annotations

import contextlib

from ..core.errors import ShrewValueError

_PRECISIONS = ("highest", "high", "medium")
_precision = ["highest"]  # PyTorch's default: float32 products in full float32


def set_float32_matmul_precision(precision: str) -> None:
    """PyTorch's "highest", "high" or "medium" (TF32 or bfloat16 products on GPUs that have
    them); remembered and reported, while shrew keeps computing in float32."""
    if precision not in _PRECISIONS:  # PyTorch only warns; a typo should not pass silently
        raise ShrewValueError(f"set_float32_matmul_precision: {precision!r} is not one of "
                              f"'highest', 'high' or 'medium'")
    _precision[0] = precision


def get_float32_matmul_precision() -> str:
    """What set_float32_matmul_precision (or matmul.allow_tf32) last set: "highest" at
    first."""
    return _precision[0]


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: allow_tf32 reads and sets the float32 matmul
    precision as PyTorch's does; the reduced-precision reductions are remembered."""

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return _precision[0] != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _precision[0] = "high" if value else "highest"


matmul = _MatmulFlags()


def is_built() -> bool:
    """Whether shrew can use CUDA at all: its CUDA backend is always there (it needs CuPy
    and a GPU to run: shrew.cuda.is_available() says whether it can)."""
    return True


def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True,
               enable_cudnn: bool = True) -> contextlib.AbstractContextManager[None]:
    """PyTorch's older form of torch.nn.attention.sdpa_kernel: the attention kernels the
    block may use, by switches.  shrew has one implementation per device, so the choice is
    recorded (nn.attention.current_backends()) and changes nothing."""
    from ..nn.attention import SDPBackend, sdpa_kernel  # nn is above the backends
    chosen = [backend for backend, on in ((SDPBackend.FLASH_ATTENTION, enable_flash),
                                          (SDPBackend.MATH, enable_math),
                                          (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
                                          (SDPBackend.CUDNN_ATTENTION, enable_cudnn)) if on]
    return sdpa_kernel(chosen)
