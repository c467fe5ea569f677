"""Parallel training wrappers, as torch.nn.parallel: DistributedDataParallel on MPI, and
DataParallel (runs the module: no multi-GPU scatter)."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
