"""Finding the OpenCL devices that work: every device of every platform, each proven by a
tiny probe program built and run once per process, numbered ``opencl:N`` in a stable order.

A device whose compiler fails the probe (POCL's LLVM 14 on a CPU newer than it, for one) is
kept in ``describe()`` with the compiler's message but gets no ``opencl:N``, so a run never
reaches its first op on a device that cannot build kernels.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from ..kernels import KERNEL_DIR, dtype_defines
from . import icd

INSTALL_HINT = ("for a working OpenCL device on an x86-64 Linux CPU, pip install "
                "'shrew[opencl]' (POCL and Intel's OpenCL CPU runtime, intel-opencl-rt); "
                "otherwise install the OpenCL driver of the device's vendor")
# shrew's own prelude and macros, so the probe also proves they compile on the device
PROBE_KERNEL = """
KERNEL void probe(GLOBAL T* x) { const i64 i = GID0; x[i] = TO_T(LOAD(x, i) * 2 + 1); }
"""
_PROBE_INPUT = np.arange(8, dtype=np.float32)
_MAX_MESSAGE_LINES = 12


@dataclass(frozen=True)
class DeviceInfo:
    """One OpenCL device as its platform reports it, and whether shrew can use it."""

    device: str | None          # "opencl:N", or None for a device left out
    platform: str
    name: str
    version: str                # the device's OpenCL version string
    driver: str
    kind: str                   # "CPU", "GPU" or "accelerator"
    float64: bool               # cl_khr_fp64
    float16: bool               # cl_khr_fp16
    max_work_group_size: int
    max_work_item_sizes: tuple[int, ...]
    local_mem_size: int         # bytes of work-group memory
    preferred_vector_width: dict[str, int]  # per C type: half, float, double, int, long
    error: str | None = None    # why the probe failed (the compiler's message), else None
    cl_device: Any = field(default=None, repr=False, compare=False)  # a pyopencl.Device

    @property
    def works(self) -> bool:
        return self.error is None

    def title(self) -> str:
        return f"{self.platform} / {self.name} ({self.version})"

    def line(self) -> str:
        """One line for a listing: name, platform, device and what it supports."""
        if not self.works:
            return f"left out: {self.title()}: the probe kernel failed: {self.error}"
        widths = ", ".join(f"{t} {w}" for t, w in self.preferred_vector_width.items())
        return (f"{self.device}: {self.title()}, {self.kind}, "
                f"float64 {'yes' if self.float64 else 'no'}, "
                f"float16 {'yes' if self.float16 else 'no'}, "
                f"bfloat16 yes (16-bit storage, float arithmetic), "
                f"work-group <= {self.max_work_group_size}, preferred vector widths: {widths}")


def _kind(cl: Any, cl_device: Any) -> str:
    if cl_device.type & cl.device_type.GPU:
        return "GPU"
    return "CPU" if cl_device.type & cl.device_type.CPU else "accelerator"


def _vector_width(cl: Any, cl_device: Any, ctype: str) -> int:
    try:
        return int(getattr(cl_device, f"preferred_vector_width_{ctype}"))
    except cl.Error:  # "half" is a query of OpenCL 1.1 on
        return 0


def _read(cl: Any, cl_device: Any, device: str | None, error: str | None) -> DeviceInfo:
    extensions = cl_device.extensions.split()
    return DeviceInfo(
        device=device, platform=cl_device.platform.name.strip(), name=cl_device.name.strip(),
        version=cl_device.version.strip(), driver=cl_device.driver_version.strip(),
        kind=_kind(cl, cl_device), float64="cl_khr_fp64" in extensions,
        float16="cl_khr_fp16" in extensions,
        max_work_group_size=int(cl_device.max_work_group_size),
        max_work_item_sizes=tuple(int(n) for n in cl_device.max_work_item_sizes),
        local_mem_size=int(cl_device.local_mem_size),
        preferred_vector_width={t: _vector_width(cl, cl_device, t)
                                for t in ("half", "float", "double", "int", "long")},
        error=error, cl_device=cl_device)


def compiler_message(error: Exception) -> str:
    """The compiler's own words from a failed build (pyopencl wraps its build log)."""
    text = str(error)
    if "Build on" in text:  # "clBuildProgram failed ... Build on <device>:\n\n<log>\n\n(options"
        text = text.split("Build on", 1)[1].split(":\n", 1)[-1]
        text = text.split("\n(options:", 1)[0]
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[:_MAX_MESSAGE_LINES]) or f"{type(error).__name__}"


@cache
def _probe_source() -> str:
    return "\n".join((KERNEL_DIR / name).read_text()
                     for name in ("prelude_opencl.h", "common.h")) + PROBE_KERNEL


def _build(cl: Any, cl_device: Any) -> tuple[Any, Any]:
    """The probe program built for `cl_device` (pyopencl caches the binary on disk), and
    its context."""
    from .programs import quiet_compiler  # imports pyopencl, which discover() found
    context = cl.Context([cl_device])
    defines = {**dtype_defines(np.dtype(np.float32)), "HAS_F64": 0, "HAS_F16": 0, "HAS_BF16": 0,
               "WG_SIZE": 1, "TILE": 1}
    with quiet_compiler():
        program = cl.Program(context, _probe_source()).build(
            options=[f"-D{k}={v}" for k, v in defines.items()])
    return context, program


def probe(cl: Any, cl_device: Any) -> str | None:
    """None if `cl_device` builds and runs the probe kernel correctly, else why not."""
    try:
        context, program = _build(cl, cl_device)
        queue = cl.CommandQueue(context)
        host = _PROBE_INPUT.copy()
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
        buffer = cl.Buffer(context, flags, hostbuf=host)
        program.probe(queue, host.shape, None, buffer)
        cl.enqueue_copy(queue, host, buffer, is_blocking=True)
    except Exception as e:  # whatever a broken platform raises, it only leaves it out
        return compiler_message(e)
    if not np.array_equal(host, _PROBE_INPUT * 2 + 1):
        return f"the probe kernel computed {host.tolist()}, not {(_PROBE_INPUT * 2 + 1).tolist()}"
    return None


def _platform_devices(cl: Any) -> list:
    """Every device of every platform, in the order of a stable key (the ICD loader's order
    of platforms depends on where it found them): GPUs and accelerators before CPUs, the
    fallback runtimes (icd.FALLBACK_PLATFORMS) after the others, then by platform name,
    then as the platform lists its devices."""
    try:
        with icd.vendors_environment():
            platforms = cl.get_platforms()
    except cl.Error:  # no platform at all
        return []
    found: list[tuple] = []
    for platform in platforms:
        try:
            devices = platform.get_devices()
        except cl.Error:  # a platform with no device
            continue
        name = platform.name.strip()
        found.extend((not cl_device.type & (cl.device_type.GPU | cl.device_type.ACCELERATOR),
                      name in icd.FALLBACK_PLATFORMS, name, position, cl_device)
                     for position, cl_device in enumerate(devices))
    return [entry[-1] for entry in sorted(found, key=lambda entry: entry[:4])]


_lock = threading.Lock()
_found: list[DeviceInfo] | None = None


def discover() -> list[DeviceInfo]:
    """Every OpenCL device, probed once per process: the working ones numbered
    ``opencl:0``, ``opencl:1``, ... first, then those left out.  Empty without pyopencl."""
    global _found
    with _lock:
        if _found is None:
            try:
                import pyopencl as cl
            except ImportError:
                return []
            working: list[DeviceInfo] = []
            left_out: list[DeviceInfo] = []
            for cl_device in _platform_devices(cl):
                error = probe(cl, cl_device)
                if error is None:
                    working.append(_read(cl, cl_device, f"opencl:{len(working)}", None))
                else:
                    left_out.append(_read(cl, cl_device, None, error))
            _found = working + left_out
        return _found


def forget() -> None:
    """Discover again on next use (for tests that change what the platforms report)."""
    global _found
    with _lock:
        _found = None
