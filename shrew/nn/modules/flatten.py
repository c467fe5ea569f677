"""torch.nn.modules.flatten: PyTorch's module path of shrew.nn's flattening."""
from .. import (Flatten, Unflatten)

__all__ = ["Flatten", "Unflatten"]
