"""torch.nn.modules.module: PyTorch's module path of shrew.nn's the base class."""
from .. import (Module)

__all__ = ["Module"]
