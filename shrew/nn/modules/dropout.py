"""torch.nn.modules.dropout: PyTorch's module path of shrew.nn's dropouts."""
from .. import (Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout)

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
