"""torch.nn.modules.normalization: PyTorch's module path of shrew.nn's layer, group,
local-response and RMS normalisations."""
from .. import (LayerNorm, GroupNorm, LocalResponseNorm, RMSNorm)

__all__ = ["LayerNorm", "GroupNorm", "LocalResponseNorm", "RMSNorm"]
