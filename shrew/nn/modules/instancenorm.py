"""torch.nn.modules.instancenorm: PyTorch's module path of shrew.nn's instance normalisation."""
from .. import (InstanceNorm1d, InstanceNorm2d)

__all__ = ["InstanceNorm1d", "InstanceNorm2d"]
