"""torch.nn.modules.pooling: PyTorch's module path of shrew.nn's pooling."""
from .. import (MaxPool2d, AvgPool2d)

__all__ = ["MaxPool2d", "AvgPool2d"]
