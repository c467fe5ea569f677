"""The OpenCL backend (pyopencl).  ``opencl:N`` is the N-th working device over all
platforms (see discovery.py for the order); ``describe()`` lists every device found."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._device import DeviceModule
from ...core.errors import DeviceError
from .discovery import INSTALL_HINT, DeviceInfo, discover

if TYPE_CHECKING:
    from .backend import OpenCLBackend


def describe() -> list[DeviceInfo]:
    """Every OpenCL device on this machine: platform, device, OpenCL version, float64 and
    float16 support, work-group limits and preferred vector widths, as the device reports
    them.  The working ones come first, as ``opencl:0``, ``opencl:1``, ...; a device whose
    compiler failed shrew's probe kernel follows with ``device=None`` and the compiler's
    message in ``error``.  ``python -m shrew.backends.opencl`` prints it."""
    return list(discover())


def _working() -> list[DeviceInfo]:
    return [info for info in discover() if info.works]


def _unavailable(index: int) -> DeviceError:
    """Why there is no opencl:index: how many devices work, and each one left out."""
    working = _working()
    left_out = [info for info in discover() if not info.works]
    if not working and not left_out:
        found = "pyopencl found no OpenCL platform"
    else:
        found = f"{len(working)} working OpenCL device(s)" + "".join(
            f"; {info.device}: {info.title()}" for info in working)
    why = "".join(f"\n  left out, {info.title()}: its compiler failed shrew's probe kernel:"
                  f"\n    " + info.error.replace("\n", "\n    ")
                  for info in left_out if info.error)
    hint = f"\n{INSTALL_HINT}" if why or not working else ""
    return DeviceError(f"no OpenCL device opencl:{index}: {found}{why}{hint}")


def factory(index: int = 0) -> OpenCLBackend:
    """The backend for device ``opencl:index``; DeviceError says why there is none."""
    try:
        import pyopencl  # noqa: F401
    except ImportError as e:
        raise DeviceError(f"the OpenCL backend needs pyopencl: {INSTALL_HINT}") from e
    working = _working()
    if not 0 <= index < len(working):
        raise _unavailable(index)
    from .backend import OpenCLBackend
    return OpenCLBackend(working[index])


factory.device_count = lambda: len(_working())  # type: ignore[attr-defined]


def __getattr__(name: str) -> Any:
    # OpenCLBackend imports pyopencl, so it loads on first use, not with this package.
    if name == "OpenCLBackend":
        from .backend import OpenCLBackend
        return OpenCLBackend
    raise AttributeError(name)


# torch.cuda's functions for the OpenCL devices (shrew.backends.opencl.is_available(), ...)
_module = DeviceModule("opencl")
is_available = _module.is_available
device_count = _module.device_count
current_device = _module.current_device
get_device_name = _module.get_device_name
synchronize = _module.synchronize
manual_seed = _module.manual_seed
manual_seed_all = _module.manual_seed_all
