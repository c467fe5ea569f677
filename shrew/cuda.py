"""``shrew.cuda``: PyTorch's ``torch.cuda`` functions for the CUDA devices (CuPy).

The memory functions read CuPy's memory pool (``cupy.get_default_memory_pool()``), which
holds every CUDA tensor's memory: "allocated" is what tensors use, "reserved" what the pool
holds.  Without a usable GPU they answer as PyTorch's do without CUDA: the counters are 0
and empty_cache does nothing, while what needs a device (set_device, properties,
mem_get_info, synchronize, Event) raises a DeviceError saying why there is none."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .amp.device_modules import cuda_amp as amp
from ._device import DeviceModule
from .backends import registry
from .core.dtype import bfloat16
from .ops.legacy import legacy_types

_cuda = DeviceModule("cuda")
# torch.cuda.FloatTensor & co: constructing one needs a usable CUDA device (DeviceError)
globals().update(legacy_types(cuda=True))
is_available = _cuda.is_available
device_count = _cuda.device_count
current_device = _cuda.current_device
set_device = _cuda.set_device
get_device_name = _cuda.get_device_name
synchronize = _cuda.synchronize
manual_seed = _cuda.manual_seed
manual_seed_all = _cuda.manual_seed_all


def _cupy(which: object, op: str) -> tuple[Any, int]:
    """(CuPy, device index) of a usable device; DeviceError when there is none."""
    name = _cuda.device_string(which, op)
    backend: Any = registry.get_backend(name)  # a CUDABackend: its xp is CuPy
    return backend.xp, int(name.partition(":")[2])


class _PeakTracker:
    """CuPy's pool counts the bytes in use but not their peak: this allocator (installed
    by the first memory function called) asks the pool and records each device's peak."""

    def __init__(self, cupy: Any) -> None:
        self.pool = cupy.get_default_memory_pool()
        self.device = cupy.cuda.runtime.getDevice
        self.peaks: dict[int, int] = {}
        cupy.cuda.set_allocator(self.malloc)

    def malloc(self, size: int) -> Any:
        memory = self.pool.malloc(size)
        index = self.device()
        self.peaks[index] = max(self.peaks.get(index, 0), self.pool.used_bytes())
        return memory


_tracker: list[_PeakTracker] = []


def _pool(which: object, op: str) -> tuple[Any, int, _PeakTracker]:
    """(the device context, its index, the peak tracker) for `which`."""
    cupy, index = _cupy(which, op)
    if not _tracker:
        _tracker.append(_PeakTracker(cupy))
    return cupy.cuda.Device(index), index, _tracker[0]


def memory_allocated(device: object = None) -> int:
    """Bytes that tensors on the device use now (0 without a GPU)."""
    if not is_available():
        return 0
    context, _, tracker = _pool(device, "memory_allocated")
    with context:
        return int(tracker.pool.used_bytes())


def max_memory_allocated(device: object = None) -> int:
    """The most bytes tensors used at once since reset_peak_memory_stats (or since the
    first shrew.cuda memory function was called: CuPy keeps no peak of its own)."""
    if not is_available():
        return 0
    context, index, tracker = _pool(device, "max_memory_allocated")
    with context:
        return max(tracker.peaks.get(index, 0), int(tracker.pool.used_bytes()))


def memory_reserved(device: object = None) -> int:
    """Bytes the memory pool holds from the device (in use or cached for reuse)."""
    if not is_available():
        return 0
    context, _, tracker = _pool(device, "memory_reserved")
    with context:
        return int(tracker.pool.total_bytes())


def max_memory_reserved(device: object = None) -> int:
    """The pool's size now: CuPy does not record its peak, and the pool only grows until
    empty_cache, so this is the peak since the last empty_cache."""
    return memory_reserved(device)


def reset_peak_memory_stats(device: object = None) -> None:
    """Start max_memory_allocated again from the bytes in use now."""
    if not is_available():
        return
    context, index, tracker = _pool(device, "reset_peak_memory_stats")
    with context:
        tracker.peaks[index] = int(tracker.pool.used_bytes())


def empty_cache() -> None:
    """Give the pool's unused blocks back to the driver (nothing without a GPU)."""
    if is_available():
        _pool(None, "empty_cache")[2].pool.free_all_blocks()


def mem_get_info(device: object = None) -> tuple[int, int]:
    """(free, total) bytes of the device's memory, as the driver reports them."""
    cupy, index = _cupy(device, "mem_get_info")
    with cupy.cuda.Device(index):
        free, total = cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)


@dataclass(frozen=True)
class _CudaDeviceProperties:
    """What get_device_properties returns: PyTorch's field names."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int


def get_device_properties(device: object = None) -> _CudaDeviceProperties:
    cupy, index = _cupy(device, "get_device_properties")
    props = cupy.cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    return _CudaDeviceProperties(name.decode() if isinstance(name, bytes) else str(name),
                                 int(props["major"]), int(props["minor"]),
                                 int(props["totalGlobalMem"]),
                                 int(props["multiProcessorCount"]))


def get_device_capability(device: object = None) -> tuple[int, int]:
    """(major, minor) compute capability."""
    props = get_device_properties(device)
    return props.major, props.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: shrew's CUDA backend has no bfloat16 kernels (use float16 there)."""
    if not is_available():
        return False
    backend = registry.get_backend(_cuda.device_string(None, "is_bf16_supported"))
    return bfloat16.np in backend.dtypes


class Event:
    """A CUDA event (CuPy's) for timing GPU work: record(), synchronize(), query(),
    elapsed_time(end) in milliseconds.  Without a GPU, a DeviceError."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        cupy, _ = _cupy(None, "cuda.Event")
        self._cupy = cupy
        self._event = cupy.cuda.Event(block=blocking, disable_timing=not enable_timing,
                                      interprocess=interprocess)

    def record(self, stream: Any = None) -> None:
        self._event.record(stream._stream if isinstance(stream, Stream) else stream)

    def synchronize(self) -> None:
        self._event.synchronize()

    def query(self) -> bool:
        return bool(self._event.done)

    def wait(self, stream: Any = None) -> None:
        """Work queued after this on `stream` waits for the event: shrew queues all of a
        device's work on one stream, in order, so there is nothing to wait for."""

    def elapsed_time(self, end_event: Event) -> float:
        return float(self._cupy.cuda.get_elapsed_time(self._event, end_event._event))


class Stream:
    """A CUDA stream (CuPy's): work that shrew queues while it is current (`with
    shrew.cuda.stream(s):`) runs on it in order.  Without a GPU, a DeviceError (PyTorch
    built without CUDA refuses it too)."""

    def __init__(self, device: object = None, priority: int = 0, **kwargs: Any) -> None:
        cupy, index = _cupy(device, "cuda.Stream")
        with cupy.cuda.Device(index):
            self._stream = kwargs.get("_wrap") or cupy.cuda.Stream(priority=priority or None)
        self.device = f"cuda:{index}"

    @property
    def cuda_stream(self) -> int:
        """The raw cudaStream_t, as an int."""
        return int(self._stream.ptr)

    def synchronize(self) -> None:
        """Wait for the work queued on this stream."""
        self._stream.synchronize()

    def query(self) -> bool:
        """Whether all the work queued on this stream has finished."""
        return bool(self._stream.done)

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        """Work queued on this stream from now on waits for `event`."""
        self._stream.wait_event(event._event)

    def wait_stream(self, stream: Stream) -> None:
        """Work queued on this stream from now on waits for what `stream` has queued."""
        self.wait_event(stream.record_event())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self) -> int:
        return hash(self.cuda_stream)


def current_stream(device: object = None) -> Stream:
    """The stream shrew's CUDA work goes to now on `device` (CuPy's current stream)."""
    cupy, index = _cupy(device, "current_stream")
    with cupy.cuda.Device(index):
        return Stream(index, _wrap=cupy.cuda.get_current_stream())


def default_stream(device: object = None) -> Stream:
    """The device's default (null) stream."""
    cupy, index = _cupy(device, "default_stream")
    return Stream(index, _wrap=cupy.cuda.Stream.null)


@contextlib.contextmanager
def stream(stream: Stream | None) -> Iterator[None]:
    """Make `stream` current inside the block (None: change nothing)."""
    if stream is None:
        yield
        return
    with stream._stream:
        yield


def set_stream(stream: Stream) -> None:
    """Make `stream` current from now on."""
    stream._stream.use()


__all__ = ["is_available", "device_count", "current_device", "set_device", "get_device_name",
           "synchronize", "manual_seed", "manual_seed_all", "amp", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "empty_cache", "mem_get_info", "get_device_properties",
           "get_device_capability", "is_bf16_supported", "Event", "Stream",
           "current_stream", "default_stream", "stream", "set_stream"]
