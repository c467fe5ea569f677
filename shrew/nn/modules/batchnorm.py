"""torch.nn.modules.batchnorm: PyTorch's module path of shrew.nn's batch normalisation."""
from .. import (BatchNorm1d, BatchNorm2d)

__all__ = ["BatchNorm1d", "BatchNorm2d"]
