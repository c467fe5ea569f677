"""torch.nn.modules.conv: PyTorch's module path of shrew.nn's convolutions."""
from .. import (Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d)

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]
