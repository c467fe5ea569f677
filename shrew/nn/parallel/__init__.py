"""Parallel training wrappers, as torch.nn.parallel: DistributedDataParallel on MPI."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
