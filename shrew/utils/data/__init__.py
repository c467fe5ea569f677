"""Datasets, samplers and the DataLoader, as in `torch.utils.data`."""
from .distributed import DistributedSampler  # noqa: F401  (as torch.utils.data exports it)
