"""torch.nn.modules.pixelshuffle: PyTorch's module path of shrew.nn's pixel shuffles."""
from .. import (PixelShuffle, PixelUnshuffle)

__all__ = ["PixelShuffle", "PixelUnshuffle"]
