"""The OpenCL backend (pyopencl).  ``opencl:N`` is the N-th device over all platforms."""
from __future__ import annotations


def _devices() -> list:
    """Every OpenCL device, platform by platform; empty without pyopencl or a platform."""
    try:
        import pyopencl as cl
    except ImportError:
        return []
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        return []
    devices = []
    for platform in platforms:
        try:
            devices.extend(platform.get_devices())
        except cl.Error:  # a platform with no device
            pass
    return devices


def factory(index: int = 0):
    """The backend for device ``opencl:index``; RuntimeError says why there is none."""
    try:
        import pyopencl  # noqa: F401
    except ImportError as e:
        raise RuntimeError("the OpenCL backend needs pyopencl (pip install pyopencl; "
                           "pocl-binary-distribution adds a CPU device)") from e
    devices = _devices()
    if not 0 <= index < len(devices):
        raise RuntimeError(f"no OpenCL device opencl:{index}: "
                           f"{len(devices)} device(s) found over all platforms")
    from .backend import OpenCLBackend
    return OpenCLBackend(devices[index], index)


factory.device_count = lambda: len(_devices())  # type: ignore[attr-defined]


def __getattr__(name):
    # OpenCLBackend imports pyopencl, so it loads on first use, not with this package.
    if name == "OpenCLBackend":
        from .backend import OpenCLBackend
        return OpenCLBackend
    raise AttributeError(name)
