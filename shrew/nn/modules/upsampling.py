"""torch.nn.modules.upsampling: PyTorch's module path of shrew.nn's upsampling."""
from .. import (Upsample)

__all__ = ["Upsample"]
