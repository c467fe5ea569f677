"""The CUDA backend (CuPy).  ``cuda:N`` is the N-th CUDA device that CuPy sees.

CuPy is imported only when a CUDA device is counted or asked for, so ``import shrew``
never needs it.  Without a usable GPU, ``factory.device_count()`` is 0 (``shrew.devices()``
leaves cuda out) and ``factory`` raises RuntimeError saying why, which the registry
reports as a DeviceError.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backend import CUDABackend

_INSTALL = "pip install 'shrew[cuda]' (CuPy for CUDA 12; shrew[cuda13] for CUDA 13)"


def _cupy() -> tuple:
    """(cupy, number of devices); RuntimeError says why there is no usable GPU."""
    try:
        import cupy
    except Exception as exc:  # not installed, or an install that fails to load
        raise RuntimeError(f"the CUDA backend needs CuPy, which did not import ({exc}); "
                           f"{_INSTALL}") from exc
    runtime = cupy.cuda.runtime
    try:
        count = runtime.getDeviceCount()
    except runtime.CUDARuntimeError as exc:
        raise RuntimeError(_reason(runtime, exc)) from exc
    if count == 0:
        raise RuntimeError("CUDA reports no device")
    return cupy, count


def _version(v: int) -> str:
    return f"{v // 1000}.{v % 1000 // 10}"


def _reason(runtime: Any, exc: Exception) -> str:
    """Why CUDA is unusable: CuPy's message, and whether the driver is missing or too old."""
    driver, built_for = runtime.driverGetVersion(), runtime.runtimeGetVersion()
    if driver == 0:
        return f"no NVIDIA driver found ({exc})"
    if driver < built_for:
        return (f"the NVIDIA driver supports CUDA {_version(driver)} but this CuPy needs "
                f"{_version(built_for)}: update the driver or install CuPy for CUDA "
                f"{driver // 1000} ({exc})")
    return f"no usable CUDA device ({exc})"


def factory(index: int = 0) -> CUDABackend:
    """The backend for device ``cuda:index``; RuntimeError says why there is none."""
    cupy, count = _cupy()
    if not 0 <= index < count:
        raise RuntimeError(f"no CUDA device cuda:{index}: CuPy sees {count} device(s)")
    import cupyx.scipy.special

    from .backend import CUDABackend
    from .launch import Launcher
    name = cupy.cuda.runtime.getDeviceProperties(index)["name"].decode()
    return CUDABackend(index, cupy, cupyx.scipy.special, Launcher(cupy),
                       description=f"{name}, CuPy {cupy.__version__}")


def device_count() -> int:
    try:
        return _cupy()[1]
    except Exception:  # counting never fails: an unusable CUDA just has no devices
        return 0


factory.device_count = device_count  # type: ignore[attr-defined]


from ..cuda_flags import is_built, matmul, sdp_kernel  # noqa: E402,F401  (torch.backends.cuda's switches)
