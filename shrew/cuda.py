"""``shrew.cuda``: PyTorch's ``torch.cuda`` functions for the CUDA devices (CuPy)."""
from . import amp
from ._device import DeviceModule

_cuda = DeviceModule("cuda")
is_available = _cuda.is_available
device_count = _cuda.device_count
current_device = _cuda.current_device
get_device_name = _cuda.get_device_name
synchronize = _cuda.synchronize
manual_seed = _cuda.manual_seed
manual_seed_all = _cuda.manual_seed_all

__all__ = ["is_available", "device_count", "current_device", "get_device_name", "synchronize",
           "manual_seed", "manual_seed_all", "amp"]
