"""The CPU backend: numpy.  The reference every other backend is tested against."""
from ..host_memory import keep_freed_memory
from .array_module import ArrayModuleBackend


class CPUBackend(ArrayModuleBackend):
    """numpy arrays as storage; float64 here is the ground truth of every test."""

    def __init__(self, index: int = 0):
        super().__init__("cpu")
        keep_freed_memory()


def factory(index: int = 0) -> CPUBackend:
    if index != 0:
        raise RuntimeError("there is one CPU device; call it 'cpu'")
    return CPUBackend(index)


factory.device_count = lambda: 1  # type: ignore[attr-defined]
